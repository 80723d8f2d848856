"""Proximal ACCPM (``variant="proximal"``, the default of ``method="accpm"``).

Its pieces against independent references: the Woodbury Newton solve against a dense KKT solve,
the proximal analytic centre against cvxpy (exponential cones), the infeasible-start warm centre
against a feasible start, the relevance measure (12) against a dense inverse; the solver against
the SDP of problem (3) for SVC, SVR (l1 term: supergradient cuts), one-class and a vector rho,
with the certified gap checked at every iteration; and against the paper's Algorithm 2.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from helpers import sigmoid_problem
from reference import oneclass_sdp, sdp_optimum, svc_sdp, svr_sdp
from sklearn.exceptions import ConvergenceWarning

import indefsvm
from indefsvm.proxy.solvers.accpm import LocalizationSetEmpty, _EpigraphLocalization


def random_epigraph(n: int, m: int, seed: int, *, mu: float = 0.1, w: float = 1.5):
    """{y'a = 0, 0 < a < C, t > 0, t < h_j + g_j'(a - a_bar)} with a known interior point."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    y[0], y[1] = 1.0, -1.0
    C = rng.uniform(0.5, 2.0, size=n)
    loc = _EpigraphLocalization(np.zeros(n), C, y, 0.0, m + 1, box_weight=mu, objective_weight=w)
    a0 = np.full(n, 0.25)
    a0 *= np.where(y > 0, 1.0, (y > 0).sum() / (y < 0).sum())
    a_bar = a0 + 0.05 * rng.uniform(-1, 1, size=n) * (rng.uniform(size=n) < 0.5)
    a_bar -= y * (y @ a_bar) / n  # on the hyperplane
    loc.move(a_bar, 0.0)
    loc.rho = 3.0
    t0 = 0.1
    for _ in range(m):
        g = rng.normal(size=n)
        # a cut through (a0, t0 + margin): (a0, t0) is strictly inside
        f_at_a0 = t0 + rng.uniform(0.05, 0.5)
        loc.G[loc.m] = g
        loc.h[loc.m] = f_at_a0 + g @ (a_bar - a0)
        loc.m += 1
    return loc, a0, t0


def dense_hessian(loc, a, t, s):
    n = loc.n
    sl, su = a - loc.lower, loc.upper - a
    E = np.hstack([loc.G[: loc.m], -np.ones((loc.m, 1))]) / s[:, None]
    D = np.concatenate([loc.rho + loc.mu * (1 / sl**2 + 1 / su**2), [loc.w / t**2]])
    return np.diag(D) + E.T @ E, np.concatenate([loc.c, [0.0]]), n


@pytest.mark.parametrize("n,m,seed", [(5, 0, 0), (8, 3, 1), (12, 20, 2)])
def test_woodbury_reduced_solve_matches_dense_kkt(n, m, seed):
    loc, a, t = random_epigraph(n, m, seed)
    s = loc.cut_slacks(a, t)
    assert np.all(s > 0)
    loc._factor(a, t, s)
    rng = np.random.default_rng(seed + 10)
    ra, rt = rng.normal(size=n), float(rng.normal())
    da, dt = loc.reduced_solve(ra, rt)
    H, c, _ = dense_hessian(loc, a, t, s)
    kkt = np.block([[H, c[:, None]], [c[None, :], np.zeros((1, 1))]])
    sol = np.linalg.solve(kkt, np.concatenate([ra, [rt], [0.0]]))
    assert np.allclose(np.concatenate([da, [dt]]), sol[:-1], rtol=1e-9, atol=1e-12)


def test_relevance_matches_dense_inverse():
    loc, a, t = random_epigraph(10, 12, 3)
    s = loc.cut_slacks(a, t)
    rel = loc.relevance(a, t, s)
    H, _, _ = dense_hessian(loc, a, t, s)
    E = np.hstack([loc.G[: loc.m], -np.ones((loc.m, 1))]) / s[:, None]
    expected = np.einsum("ij,jk,ik->i", E, np.linalg.inv(H), E)
    assert np.allclose(rel, expected, rtol=1e-9)


def proximal_center_cvxpy(loc):
    n = loc.n
    a = cp.Variable(n)
    t = cp.Variable()
    G, h = loc.G[: loc.m], loc.h[: loc.m]
    obj = (
        0.5 * loc.rho * cp.sum_squares(a - loc.center_a)
        - loc.mu * (cp.sum(cp.log(a - loc.lower)) + cp.sum(cp.log(loc.upper - a)))
        - loc.w * cp.log(t)
        - cp.sum(cp.log(h + G @ (a - loc.center_a) - t))
    )
    cp.Problem(cp.Minimize(obj), [loc.c @ a == loc.d]).solve(solver="CLARABEL")
    return a.value, float(t.value)


@pytest.mark.parametrize("n,m,seed", [(6, 2, 4), (10, 8, 5)])
def test_proximal_center_matches_cvxpy_from_feasible_and_infeasible_starts(n, m, seed):
    loc, a0, t0 = random_epigraph(n, m, seed)
    a_ref, t_ref = proximal_center_cvxpy(loc)
    a1, t1, steps1 = loc.center(a0, t0, loc.cut_slacks(a0, t0), tol=1e-14, max_steps=200)
    assert abs(loc.c @ a1) < 1e-12
    assert np.allclose(a1, a_ref, atol=1e-5) and abs(t1 - t_ref) < 1e-5 * max(1, abs(t_ref))
    # ours is at least as central as the conic solution (barrier value)
    s1 = loc.cut_slacks(a1, t1)
    a_in = a_ref - loc.c * (loc.c @ a_ref) / (loc.c @ loc.c)
    assert loc._phi(a1, t1, s1) <= loc._phi(a_in, t_ref, loc.cut_slacks(a_in, t_ref)) + 1e-9
    # infeasible start: a point whose cut slacks are violated (t far above every cut), with
    # artificial positive slacks; the infeasible-start Newton steps reach the same centre
    t_bad = t0 + 10.0
    assert np.any(loc.cut_slacks(a0, t_bad) <= 0) or m == 0
    a2, t2, _ = loc.center(a0, t_bad, np.full(m, 0.3), tol=1e-14, max_steps=200)
    assert np.allclose(a2, a1, atol=1e-8) and abs(t2 - t1) < 1e-8 * max(1, abs(t1))
    assert 1 <= steps1 <= 200


def test_center_refuses_a_start_outside_the_box():
    loc, a0, t0 = random_epigraph(6, 2, 6)
    a_bad = a0.copy()
    a_bad[0] = loc.upper[0]
    with pytest.raises(LocalizationSetEmpty):
        loc.center(a_bad, t0, loc.cut_slacks(a0, t0), tol=1e-10, max_steps=10)


def test_added_cut_is_the_tangent_plane():
    loc, a0, t0 = random_epigraph(7, 2, 8)
    rng = np.random.default_rng(9)
    g, p, f = rng.normal(size=7), a0 + 0.01 * rng.normal(size=7), 0.3
    loc.add_cut(g, f, p)
    for a in (a0, p, a0 + 0.1 * rng.normal(size=7)):
        # slack at t = 0 is the cut's value minus theta: f + g'(a - p) - theta
        assert loc.cut_slacks(a, 0.0)[-1] == pytest.approx(f + g @ (a - p) - loc.theta, abs=1e-13)


def test_cut_values_survive_a_move_of_the_proximal_centre():
    # cuts are stored relative to (a_bar, theta): moving them must not change any cut's value
    loc, a0, t0 = random_epigraph(7, 5, 7)
    before = loc.cut_slacks(a0, t0) + t0 + loc.theta  # absolute values of the cuts at a0
    loc.move(a0.copy(), 0.37)
    after = loc.cut_slacks(a0, t0) + t0 + loc.theta
    assert np.allclose(before, after, rtol=1e-13, atol=1e-13)


def check_history(res, opt):
    h = res.history
    scale = max(1.0, abs(opt))
    assert np.all(h["upper_bound"] >= opt - 1e-6 * scale)
    assert np.all(h["gap"] >= (opt - h["best_objective"]) - 1e-6 * scale)


@pytest.mark.parametrize("n,seed,C,rho", [(14, 0, 1.0, 1.0), (18, 2, 10.0, 0.1)])
def test_proximal_svc_matches_the_sdp_and_the_paper_variant(n, seed, C, rho):
    K0, y = sigmoid_problem(n, seed)
    opt, K_sdp = sdp_optimum(K0, y, C, rho)
    res = indefsvm.solve(K0, y, C=C, rho=rho, method="accpm", tol=1e-8)
    assert res.converged and res.info["variant"] == "proximal"
    assert abs(res.objective - opt) <= 1e-6 * max(1.0, abs(opt))
    assert res.objective <= res.upper_bound
    assert np.allclose(res.kernel, K_sdp, atol=1e-4 * max(1.0, np.abs(K_sdp).max()))
    assert abs(y @ res.alpha) < 1e-10 and res.alpha.min() >= 0 and res.alpha.max() <= C
    check_history(res, opt)
    assert res.info["n_cuts"] <= res.info["max_cuts"] == min(3 * n, 100)
    paper = indefsvm.solve(
        K0, y, C=C, rho=rho, method="accpm", options={"variant": "paper"}, tol=1e-7
    )
    assert paper.converged and "variant" not in paper.info
    assert abs(paper.objective - res.objective) <= 1e-6 * max(1.0, abs(opt))


def vector_rho(n, seed):
    return np.random.default_rng(seed).uniform(0.3, 3.0, size=n)


@pytest.mark.parametrize("rho_kind", ["scalar", "vector"])
@pytest.mark.parametrize("kind", ["svr", "oneclass"])
def test_proximal_svr_and_oneclass_match_the_sdp(kind, rho_kind):
    rng = np.random.default_rng(11)
    n = 12
    X = rng.normal(size=(n, 3))
    K0 = np.tanh(0.8 * X @ X.T - 0.3)
    rho = vector_rho(n, 12) if rho_kind == "vector" else 1.0
    H_sqrt = np.outer(rho**0.25, rho**0.25) if rho_kind == "vector" else None
    if kind == "svr":
        y = X[:, 0] + 0.1 * rng.normal(size=n)
        opt, _ = svr_sdp(K0, y, 1.0, 0.1, 1.0 if H_sqrt is not None else rho, H_sqrt=H_sqrt)
        res = indefsvm.solve(
            K0, y, problem="svr", C=1.0, epsilon=0.1, rho=rho, method="accpm", tol=1e-7
        )
    else:
        opt, _ = oneclass_sdp(K0, 0.3, 1.0 if H_sqrt is not None else rho, H_sqrt=H_sqrt)
        res = indefsvm.solve(K0, problem="oneclass", nu=0.3, rho=rho, method="accpm", tol=1e-7)
    assert res.converged and res.info["variant"] == "proximal"
    assert abs(res.objective - opt) <= 1e-5 * max(1.0, abs(opt))
    check_history(res, opt)
    if rho_kind == "scalar":
        # the cutting planes alone (before any proximal-gradient polish) certify 1e-4: this
        # fails if the cuts are wrong (e.g. the l1 supergradient of SVR with the wrong sign)
        first = res.info["first_polish_iteration"]
        if first is not None:
            h = res.history
            assert first > 1
            rel = h["gap"][first - 2] / max(
                1.0, h["best_objective"][first - 2] - (res.baseline_objective)
            )
            assert rel <= 1e-4, (first, rel)


def test_proximal_vector_rho_svc_matches_the_sdp():
    K0, y = sigmoid_problem(12, 3)
    rho = vector_rho(12, 4)
    opt, _ = svc_sdp(K0, y, 1.0, 1.0, H_sqrt=np.outer(rho**0.25, rho**0.25))
    res = indefsvm.solve(K0, y, C=1.0, rho=rho, method="accpm", tol=1e-7)
    assert res.converged
    assert abs(res.objective - opt) <= 1e-5 * max(1.0, abs(opt))
    check_history(res, opt)


def test_proximal_limits_warn_and_never_claim_convergence():
    K0, y = sigmoid_problem(20, 8)
    with pytest.warns(ConvergenceWarning, match="NOT certified"):
        res = indefsvm.solve(K0, y, method="accpm", tol=1e-14, max_iter=5)
    assert res.status == "max_iter" and res.n_iter == 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = indefsvm.solve(K0, y, method="accpm", tol=0.0, max_iter=3000)
    # tol = 0 cannot be certified: the gap's rounding error bound is positive (issue 22), so the
    # run ends on a limit, on the working-precision rule, or says that precision is the limit.
    assert res.status != "converged"
    if res.status == "precision_limit":
        assert res.gap_error > 0 and res.gap <= 0.5 * res.gap_error + 1e-12 * abs(res.objective)
    else:
        assert res.status in ("stalled", "max_iter") and res.relative_gap > 0
    assert res.relative_gap < 1e-8


def test_proximal_cut_limit_is_respected():
    K0, y = sigmoid_problem(16, 5)
    res = indefsvm.solve(K0, y, C=2.0, rho=0.5, method="accpm", tol=1e-7, options={"max_cuts": 6})
    assert res.converged and res.info["n_cuts"] <= 6


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"variant": "simplex"}, "variant must be one of"),
        ({"box_weight": 0.0}, "box_weight"),
        ({"objective_weight": np.inf}, "objective_weight"),
        ({"prox_update": 0.5}, "prox_update"),
        ({"null_update": 0.5}, "null_update"),
        ({"stop": "ellipsoid"}, "variant='paper'"),
        ({"max_cuts": 0}, "max_cuts"),
    ],
)
def test_bad_proximal_options_get_clear_errors(kwargs, match):
    K0, y = sigmoid_problem(8, 10)
    with pytest.raises(ValueError, match=match):
        indefsvm.solve(K0, y, method="accpm", options=kwargs)


@pytest.mark.parametrize("kind", ["svr", "svc-vector-rho"])
def test_paper_variant_stays_available_and_certified(kind):
    # the default changed to the proximal variant: Algorithm 2 must still reach the SDP optimum
    rng = np.random.default_rng(13)
    n = 12
    X = rng.normal(size=(n, 3))
    K0 = np.tanh(0.8 * X @ X.T - 0.3)
    if kind == "svr":
        y = X[:, 0] + 0.1 * rng.normal(size=n)
        opt, _ = svr_sdp(K0, y, 1.0, 0.1, 1.0)
        kw = {"problem": "svr", "C": 1.0, "epsilon": 0.1}
    else:
        y = np.where(X[:, 0] > 0, 1.0, -1.0)
        rho = vector_rho(n, 14)
        opt, _ = svc_sdp(K0, y, 1.0, 1.0, H_sqrt=np.outer(rho**0.25, rho**0.25))
        kw = {"rho": rho}
    res = indefsvm.solve(K0, y, method="accpm", options={"variant": "paper"}, tol=1e-6, **kw)
    assert res.converged and "ellipsoid_bound" in res.info and "variant" not in res.info
    assert abs(res.objective - opt) <= 1e-5 * max(1.0, abs(opt))
    check_history(res, opt)
