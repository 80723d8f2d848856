"""Contract of ``indefsvm.solvers.pg`` that the solver-level tests do not pin down.

The fast first file of the ``solvers_pg`` mutation run (tools/mutation.py, docs/mutation.md):
every input check with its anchored message, the status, message and ``info`` of the
numerical-error exits (a problem whose objective is not finite), the arguments the paper's
policy passes to the problem (smoothing, step ``t / k``) and the ``info`` of both policies.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from conftest import sigmoid_problem

from indefsvm.problems import make_problem
from indefsvm.solvers import SolverMonitor, projected_gradient


def _problem(n=12, seed=3):
    K0, y = sigmoid_problem(n, seed)
    return make_problem("svc", K0, y, C=1.0, rho=0.5)


def _monitor(problem, **kw):
    return SolverMonitor(
        problem, method="pg", tol=kw.pop("tol", 1e-8), max_iter=kw.pop("max_iter", 50), **kw
    )


class _Spy:
    """The problem, recording the keyword arguments of evaluate and the arguments of prox."""

    def __init__(self, problem, nan_after=None):
        self._problem = problem
        self.evaluate_kwargs = []
        self.prox_args = []
        self.nan_after = nan_after

    def evaluate(self, alpha, **kwargs):
        self.evaluate_kwargs.append(kwargs)
        ev = self._problem.evaluate(alpha, **kwargs)
        if self.nan_after is not None and len(self.evaluate_kwargs) > self.nan_after:
            ev.smooth_objective = float("nan")
            ev.objective = float("nan")
        return ev

    def prox(self, v, step, metric=None):
        self.prox_args.append((step, metric))
        return self._problem.prox(v, step, metric)

    def __getattr__(self, name):
        return getattr(self._problem, name)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"restart": "never"},
            "restart must be True, False, 'both', 'gradient' or 'function'; got 'never'.",
        ),
        ({"step": "fista"}, "step must be one of ('accelerated', 'paper'); got 'fista'."),
        ({"step_size": 0.0}, "step_size must be a finite number > 0; got 0.0."),
        ({"step_size": np.inf}, "step_size must be a finite number > 0; got inf."),
        ({"smoothing": -1.0}, "smoothing must be a finite number >= 0; got -1.0."),
        ({"smoothing": np.nan}, "smoothing must be a finite number >= 0; got nan."),
        ({"smoothing": "a"}, "smoothing must be a finite number >= 0; got 'a'."),
        (
            {"smoothing": 0.1},
            "smoothing is the paper's gradient approximation; use it with step='paper'.",
        ),
        (
            {"lipschitz0": 0.0},
            "lipschitz0 must be None (estimated from K0) or a finite number > 0; got 0.0.",
        ),
        (
            {"lipschitz0": -1.0},
            "lipschitz0 must be None (estimated from K0) or a finite number > 0; got -1.0.",
        ),
        (
            {"lipschitz0": "a"},
            "lipschitz0 must be None (estimated from K0) or a finite number > 0; got 'a'.",
        ),
        ({"backtrack_factor": 1.0}, "backtrack_factor must be a finite number > 1; got 1.0."),
        ({"lipschitz_decrease": 0.0}, "lipschitz_decrease must be in (0, 1]; got 0.0."),
        ({"lipschitz_decrease": 1.5}, "lipschitz_decrease must be in (0, 1]; got 1.5."),
        ({"alpha0": np.zeros(3)}, "alpha0 must be a finite vector of length 12."),
    ],
)
def test_input_checks(kwargs, message):
    problem = _problem()
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        projected_gradient(problem, _monitor(problem), **kwargs)


def test_edges_of_the_input_checks_are_accepted():
    problem = _problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem, max_iter=3), lipschitz_decrease=1.0)
        assert res.n_iter == 3
        res = projected_gradient(
            problem, _monitor(problem, max_iter=3), step="paper", smoothing=0.0, step_size=5.0
        )
        assert res.info == {"step": "paper", "step_size": 5.0, "smoothing": 0.0}
        # an integer starting point is converted
        res = projected_gradient(problem, _monitor(problem, max_iter=2), alpha0=[0] * 12)
        assert res.n_iter == 2


def test_non_finite_start_is_a_numerical_error():
    problem = _Spy(_problem(), nan_after=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem))
    assert res.status == "numerical_error"
    assert "the objective at the starting point is not finite" in res.message
    assert res.info == {"step": "accelerated"}
    assert len(problem.evaluate_kwargs) == 1


def test_paper_policy_passes_smoothing_and_the_step_t_over_k():
    problem = _Spy(_problem())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(
            problem, _monitor(problem, max_iter=4), step="paper", step_size=2.0, smoothing=0.3
        )
    assert res.n_iter == 4
    assert all(kw == {"smoothing": 0.3} for kw in problem.evaluate_kwargs)
    steps = [s for s, _ in problem.prox_args]
    assert steps == [2.0 / k for k in range(1, len(steps) + 1)] and len(steps) >= 3
    assert res.info == {"step": "paper", "step_size": 2.0, "smoothing": 0.3}
    assert res.history["objective"].size == res.n_iter


def test_paper_policy_stops_on_a_non_finite_objective():
    problem = _Spy(_problem(), nan_after=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem), step="paper")
    assert res.status == "numerical_error"
    assert "the objective or gradient is not finite" in res.message
    assert len(problem.evaluate_kwargs) == 3  # stopped at the first non-finite evaluation


def test_accelerated_policy_steps_and_info():
    """Every prox step is 1/L in the problem's metric; info reports the counters and the final
    Lipschitz estimate."""
    K0, y = sigmoid_problem(12, 3)
    problem = _Spy(make_problem("svc", K0, y, C=1.0, rho=np.linspace(0.3, 3.0, 12)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem, max_iter=20), lipschitz0=50.0)
    assert set(res.info) == {
        "step",
        "evaluations",
        "n_objective_evaluations",
        "n_backtracks",
        "n_restarts",
        "lipschitz_estimate",
    }
    assert res.info["step"] == "accelerated" and res.info["evaluations"] == "lean"
    # objective-only evaluations are counted among the evaluations, never more of them
    assert 0 <= res.info["n_objective_evaluations"] <= res.n_evaluations
    metric = problem.metric
    assert all(m is not None and np.array_equal(m, metric) for _, m in problem.prox_args)
    # L starts at lipschitz0 and is multiplied by 0.9 after each accepted step: the first step
    # is 1/50, and the reported estimate is that of the last step times 0.9
    assert problem.prox_args[0][0] == pytest.approx(1.0 / 50.0, rel=1e-15)
    last = problem.prox_args[-1][0]
    assert res.info["lipschitz_estimate"] == pytest.approx(0.9 / last, rel=1e-12)
    assert res.info["n_backtracks"] >= 0 and res.info["n_restarts"] >= 0


def test_backtracking_doubles_and_accepted_steps_relax_the_lipschitz_estimate():
    """From a tiny ``lipschitz0`` every rejected step halves the next one (backtrack_factor 2 by
    default) and every accepted step lets the next one grow by 1 / 0.9 (lipschitz_decrease);
    ``n_backtracks`` counts the halvings."""
    problem = _Spy(_problem())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem, max_iter=15), lipschitz0=1e-3)
    steps = np.array([s for s, _ in problem.prox_args])
    ratios = steps[1:] / steps[:-1]
    halved = np.isclose(ratios, 0.5, rtol=1e-12)
    grown = np.isclose(ratios, 1 / 0.9, rtol=1e-12)
    assert np.all(halved | grown)
    assert res.info["n_backtracks"] == int(halved.sum()) >= 5
    assert steps[0] == 1e3


def test_exit_messages_are_exact():
    problem = _Spy(_problem(), nan_after=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem))
    assert re.search(r"(^|\W)the objective at the starting point is not finite($|\W)", res.message)
    problem = _Spy(_problem(), nan_after=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem), step="paper")
    assert re.search(r"(^|\W)the objective or gradient is not finite($|\W)", res.message)
