"""The pieces both ACCPM variants share: line search, Armijo test, the start of ``L_0``.

Each is checked against numbers written out by hand (the step sequence, the Armijo margin) or
against the problem's own arrays, not against the code that the variants run.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from indefsvm.proxy.solvers.accpm import (
    _backtracking_steps,
    _EpigraphLocalization,
    _initial_localization,
    _Localization,
    _sufficient_decrease,
)


def test_backtracking_halves_down_to_the_damped_step_then_below_it():
    # lambda^2 = 100: damped step 1/(1 + 10) = 1/11; from the full step: 1, 1/2, 1/4, 1/8,
    # then the floor 1/11 (not 1/16), then halving from it.
    steps = list(_backtracking_steps(100.0, 10.0))
    assert steps[:6] == [1.0, 0.5, 0.25, 0.125, 1.0 / 11.0, 0.5 / 11.0]
    tail = steps[4:]
    assert all(b == 0.5 * a for a, b in zip(tail, tail[1:], strict=False))
    assert steps[-1] > 1e-14 >= 0.5 * steps[-1]


def test_backtracking_starts_inside_the_largest_feasible_step():
    # 0.99 * step_max below the floor 1/(1 + 0.1): plain halving from 0.99 * 0.5.
    steps = list(_backtracking_steps(0.01, 0.5))
    assert steps[:3] == [0.495, 0.2475, 0.12375]


@pytest.mark.parametrize(
    "phi_new, decrement_sq, accepted",
    [
        (10.0 - 0.011 * 0.5 * 4.0, 4.0, True),  # more than 1% of the predicted decrease
        (10.0 - 0.009 * 0.5 * 4.0, 4.0, False),  # less
        (10.0, 4.0, False),
        (10.0, 1e-7, True),  # at the centre: no increase is enough
        (10.0 + 1e-12, 1e-7, False),
        (np.inf, 1e-7, False),
        (np.nan, 1e-7, False),
    ],
)
def test_sufficient_decrease_is_armijo_with_one_percent(phi_new, decrement_sq, accepted):
    assert _sufficient_decrease(phi_new, 10.0, 0.5, decrement_sq) is accepted


def _box_problem(n: int = 5) -> SimpleNamespace:
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])[:n]
    return SimpleNamespace(
        lower=np.zeros(n, dtype=np.float32), upper=np.full(n, 2.0), eq_coef=y, eq_rhs=0.0
    )


def test_initial_localization_is_the_feasible_set_with_room_for_the_cuts():
    problem = _box_problem()
    x, loc = _initial_localization(problem, _Localization, 7)
    assert isinstance(loc, _Localization)
    assert loc.A.shape == (7, 5) and loc.b.shape == (7,) and loc.m == 0
    assert loc.lower.dtype == np.float64 and np.array_equal(loc.lower, problem.lower)
    assert np.array_equal(loc.upper, problem.upper) and np.array_equal(loc.c, problem.eq_coef)
    assert loc.d == 0.0
    assert np.all(x > 0) and np.all(x < 2) and abs(float(problem.eq_coef @ x)) < 1e-12


def test_initial_localization_passes_the_barrier_weights():
    x, loc = _initial_localization(
        _box_problem(), _EpigraphLocalization, 4, box_weight=0.03, objective_weight=2.5
    )
    assert isinstance(loc, _EpigraphLocalization)
    assert loc.G.shape == (4, 5) and (loc.mu, loc.w) == (0.03, 2.5)


def test_initial_localization_without_interior_is_none():
    problem = _box_problem()
    problem.eq_rhs = 11.0  # beyond y'x <= 3 * 2 on the box: no interior point
    assert _initial_localization(problem, _Localization, 3) is None
