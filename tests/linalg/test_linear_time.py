"""O(n) projection and intercept (indefsvm.linalg._linear_time) against the sorting methods (notes
§3, §6),
and the low-rank operator's U'u by linearity against the direct product."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indefsvm import make_problem, solve_problem
from indefsvm.linalg.factor import LowRankKernel
from indefsvm.linalg.projection import project_hyperplane_box
from indefsvm.proxy.problems import minimize_piecewise_linear


def _instance(rng, n, with_l1, label_normal):
    a = rng.choice([-1.0, 1.0], size=n) if label_normal else rng.uniform(0.2, 3.0, n)
    a *= rng.choice([-1.0, 1.0], size=n) if not label_normal else 1.0
    if with_l1:
        lower, upper = -rng.uniform(0.0, 2.0, n), rng.uniform(0.0, 2.0, n)
    else:
        lower = rng.uniform(-1.0, 0.5, n)
        upper = lower + rng.uniform(0.0, 2.0, n)
    box = np.sort(np.stack([a * lower, a * upper]), axis=0)
    t = float(rng.uniform(box[0].sum(), box[1].sum()))
    v = rng.normal(size=n) * rng.choice([1e-3, 1.0, 1e3])
    l1 = rng.uniform(0.0, 0.5, n) if with_l1 else None
    return v, a, t, lower, upper, l1


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 400),
    seed=st.integers(0, 2**31 - 1),
    with_l1=st.booleans(),
    label_normal=st.booleans(),
    warm=st.sampled_from([None, 0.0, 1e6, -3.0, "exact"]),
)
def test_newton_projection_equals_sorting_projection(n, seed, with_l1, label_normal, warm):
    rng = np.random.default_rng(seed)
    v, a, t, lower, upper, l1 = _instance(rng, n, with_l1, label_normal)
    ref, tau_ref = project_hyperplane_box(v, a, t, lower, upper, l1=l1, method="sort",
                                          return_tau=True)  # fmt: skip
    tau0 = tau_ref if warm == "exact" else warm
    x, tau = project_hyperplane_box(v, a, t, lower, upper, l1=l1, tau0=tau0, return_tau=True)
    scale = max(1.0, float(np.abs(v).max()), float(np.abs(upper).max()))
    assert np.all(x >= lower) and np.all(x <= upper)
    assert abs(a @ x - t) <= 1e-10 * scale * max(1.0, np.abs(a).sum())
    assert np.allclose(x, ref, rtol=0, atol=1e-9 * scale)


def test_newton_projection_large_warm_start_is_exact_and_reports_tau():
    rng = np.random.default_rng(0)
    n = 200_000
    y = rng.choice([-1.0, 1.0], size=n)
    box = np.where(y > 0, 0.1, 0.3)
    v = 0.1 * rng.normal(size=n)
    ref, tau_ref = project_hyperplane_box(v, y, 0.0, np.zeros(n), box, method="sort",
                                          return_tau=True)  # fmt: skip
    for tau0 in (None, tau_ref, tau_ref + 1e-3, -10.0):
        x, tau = project_hyperplane_box(v, y, 0.0, np.zeros(n), box, tau0=tau0, return_tau=True)
        assert np.max(np.abs(x - ref)) <= 1e-14
        assert abs(tau - tau_ref) <= 1e-12
    with pytest.raises(ValueError, match="method must be one of"):
        project_hyperplane_box(v, y, 0.0, np.zeros(n), box, method="bisect")


@pytest.mark.parametrize("n", [7, 3000, 120_001])
@pytest.mark.parametrize("kind", ["hinge", "epsilon", "oneclass", "clustered", "sorted"])
def test_selection_intercept_equals_sorting_intercept(n, kind):
    rng = np.random.default_rng(n)
    y = rng.choice([-1.0, 1.0], size=n)
    g = rng.normal(size=n)
    if kind == "clustered":  # many free support vectors on the margin: near-tied breakpoints
        free = rng.uniform(size=n) < 0.4
        g[free] = y[free] * (1 + 1e-9 * rng.normal(size=free.sum())) - 0.25
    if kind == "sorted":
        g = np.sort(g)
    if kind in ("hinge", "clustered", "sorted"):
        args = (0.0, np.where(y > 0, 0.1, 0.35), -y, 1.0 - y * g)
    elif kind == "epsilon":
        r = rng.normal(size=n) - g
        args = (0.0, np.full(2 * n, 0.5), np.r_[-np.ones(n), np.ones(n)], np.r_[r - 0.1, -r - 0.1])
    else:
        args = (-1.0, np.full(n, 1.0 / (0.3 * n)), np.ones(n), -g)
    b_sel, v_sel = minimize_piecewise_linear(*args)
    b_ref, v_ref = minimize_piecewise_linear(*args, method="sort")

    def value(b):
        c0, w, a, r = args
        return c0 * b + float(np.sum(w * np.maximum(0.0, a * b + r)))

    assert abs(v_sel - v_ref) <= 1e-12 * max(1.0, abs(v_ref))
    assert abs(value(b_sel) - v_sel) <= 1e-12 * max(1.0, abs(v_sel))
    # b is a breakpoint, and equal to the sort's unless the slope is exactly flat in between
    assert np.any(-args[3] / args[2] == b_sel)
    if kind in ("hinge", "epsilon", "oneclass", "sorted"):
        assert b_sel == b_ref


def test_selection_intercept_errors_like_the_sort():
    for method in ("select", "sort"):  # c0 b + sum max(0, b) -> -inf as b -> -inf
        with pytest.raises(ValueError, match="unbounded"):
            minimize_piecewise_linear(1.0, np.ones(3), np.ones(3), np.zeros(3), method=method)
    # every a_i == 0: the constant sum w_i max(0, r_i), whatever b
    for method in ("select", "sort"):
        assert minimize_piecewise_linear(
            0.0, np.ones(2), np.zeros(2), np.ones(2), method=method
        ) == (0.0, 2.0)
    # one-class with nu = 1: slope -1 + 10 * 0.1 is zero only up to the order of summation
    r = np.random.default_rng(0).normal(size=10)
    for method in ("select", "sort"):
        b, value = minimize_piecewise_linear(-1.0, np.full(10, 0.1), np.ones(10), r, method=method)
        assert b == -r.min() and np.isfinite(value)
    with pytest.raises(ValueError, match="method must be"):
        minimize_piecewise_linear(0.0, np.ones(2), np.ones(2), np.ones(2), method="median")


def _lowrank_problem(n=2500, m=40, seed=0, rho=1.0):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(n, m)) / np.sqrt(n)
    sig = np.where(rng.uniform(size=m) < 0.35, -1.0, 1.0)
    y = np.where(rng.normal(size=n) + Phi[:, 0] * 30 > 0, 1.0, -1.0)
    return make_problem("svc", LowRankKernel(Phi, sig), y, C=1.0, rho=rho)


@pytest.mark.parametrize("vector_rho", [False, True])
def test_lowrank_extrapolated_point_by_linearity_matches_direct_evaluation(vector_rho):
    rho = np.random.default_rng(1).uniform(0.5, 2.0, 2500) if vector_rho else 1.0
    problem = _lowrank_problem(rho=rho)
    rng = np.random.default_rng(2)
    x_old = problem.project(rng.uniform(0, 1, problem.n))
    x_new = problem.project(x_old + 0.05 * rng.normal(size=problem.n))
    y = x_new + 0.7 * (x_new - x_old)
    problem.evaluate(x_old)
    problem.evaluate(x_new)
    before = problem.operator.n_linear_z
    ev = problem.evaluate(y)
    assert problem.operator.n_linear_z == before + 1
    problem.reset_warm_start()
    direct = problem.evaluate(y)
    assert problem.operator.n_linear_z == before + 1
    scale = np.abs(direct.state.z).max()
    assert np.allclose(ev.state.z, direct.state.z, rtol=0, atol=1e-12 * scale)
    for key in ("objective", "upper_bound"):
        a, b = getattr(ev, key), getattr(direct, key)
        assert abs(a - b) <= 1e-10 * max(1.0, abs(b))
    assert np.allclose(ev.gradient, direct.gradient, rtol=0, atol=1e-10)
    # a point that is not a combination of the recent ones is computed directly
    problem.evaluate(rng.uniform(0, 1, problem.n))
    assert problem.operator.n_linear_z == before + 1


def test_lowrank_linearity_refuses_a_huge_coefficient():
    """u = u1 + c (u1 - u2) with u2 within 1e-9 of u1 and c = 1e6 fits to rounding, but the
    rounding errors of the stored products would be multiplied by c: formed directly."""
    problem = _lowrank_problem()
    op = problem.operator
    rng = np.random.default_rng(3)
    u1 = rng.uniform(-1, 1, problem.n)
    u2 = u1 + 1e-9 * rng.uniform(-1, 1, problem.n)
    op.state(u2)
    op.state(u1)
    before = op.n_linear_z
    op.state(u1 + 1e6 * (u1 - u2))
    assert op.n_linear_z == before
    op.state(u1 + 0.5 * (u1 - u2) + 0.1 * u1)  # not a combination along u1 - u2 either
    assert op.n_linear_z == before


def test_accelerated_lowrank_solve_uses_linearity_and_reaches_the_dense_optimum():
    problem = _lowrank_problem(n=600, m=30)
    res = solve_problem(problem, tol=1e-7, max_iter=5000)
    assert res.status == "converged"
    assert problem.operator.n_linear_z > 0.3 * res.n_iter
    dense = make_problem("svc", problem.operator.factor.toarray(), problem.y, C=1.0, rho=1.0)
    ref = solve_problem(dense, tol=1e-7, max_iter=5000)
    scale = max(1.0, abs(ref.objective - ref.baseline_objective))
    assert abs(res.objective - ref.objective) <= 2e-7 * scale
