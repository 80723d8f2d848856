"""Restart variants of the accelerated projected gradient (O'Donoghue & Candès 2015) reach the
optimum certified by the default solver and by cvxpy-free dense references."""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm import make_problem, solve_problem


def _problem():
    rng = np.random.default_rng(5)
    n = 80
    X = rng.normal(size=(n, 3))
    K = np.tanh(0.5 * X @ X.T - 0.3)  # indefinite sigmoid kernel
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return make_problem("svc", K, y, C=1.0, rho=1.0)


@pytest.mark.parametrize("restart", ["both", "gradient", "function", False, True])
def test_restart_variants_reach_the_same_certified_optimum(restart):
    ref = solve_problem(_problem(), tol=1e-9, max_iter=20000)
    res = solve_problem(_problem(), tol=1e-9, max_iter=20000, restart=restart)
    assert ref.status == res.status == "converged"
    scale = max(1.0, abs(ref.objective - ref.baseline_objective))
    # both are certified within 1e-9 * scale of the optimum
    assert abs(res.objective - ref.objective) <= 2e-9 * scale
    assert res.gap >= 0 and res.gap <= 1e-9 * scale
    if restart is False:
        assert res.info["n_restarts"] == 0


def test_restart_option_is_checked():
    with pytest.raises(ValueError, match="restart must be"):
        solve_problem(_problem(), restart="sometimes")
