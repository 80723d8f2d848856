"""The second-order solver of the low-rank proxy-kernel SVM (issue 24, ``method="lowrank_newton"``).

References are independent of the solver: central differences of the operator's ``K*(u) u`` for
the derivative, explicit products for the Gram matrices, the DENSE problem (n x n ``K0``, its
own eigendecomposition) solved by projected gradient for the optimum, and a cvxpy SDP on a tiny
problem.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from reference import sdp_optimum
from sklearn.exceptions import ConvergenceWarning

from indefsvm.linalg.factor import LowRankKernel
from indefsvm.proxy.api import solve_problem
from indefsvm.proxy.problems import make_problem


def factor_data(n: int, m: int, seed: int, *, negative: int | None = None):
    """An exactly rank-m indefinite kernel ``Phi diag(s) Phi'`` with labels learnable from it."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    Phi = np.tanh(X @ rng.normal(size=(6, m)) / 2.0) / np.sqrt(m)
    s = np.where(np.arange(m) < (m // 3 if negative is None else negative), -1.0, 1.0)
    y = np.where(X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return Phi, s, y


def lowrank_problem(Phi, s, y, **kw):
    return make_problem("svc", LowRankKernel(Phi, s), y, **kw)


def solve_quiet(problem, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solve_problem(problem, **kw)


def solve_quiet_fit(estimator, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X)


def excess(result):
    """``f(alpha) - f(0)`` as the solver formed it, without the constant ``f(0)`` (subtracting
    two large numbers here lost their rounding on another machine)."""
    return result.objective_excess


# -- the operator's second-order information ---------------------------------------------------


@pytest.mark.parametrize("rho", [1e-2, 1.0, 1e3])
def test_kstar_u_jacobian_matches_central_differences(rho):
    Phi, s, y = factor_data(60, 6, 0)
    problem = lowrank_problem(Phi, s, y, C=1.0, rho=rho)
    op = problem.operator
    rng = np.random.default_rng(1)
    state = problem.state(problem.project(rng.uniform(0, 1, 60)))
    gamma, H = op.kstar_u_jacobian(state)
    E = op.apply_basis(state, np.eye(op.rank + 1))  # [U q], orthonormal columns
    J = gamma * (np.eye(60) - E @ E.T) + E @ H @ E.T
    h = 1e-6 * np.linalg.norm(state.u)
    fd = np.empty((60, 60))
    for i in range(60):
        e = np.zeros(60)
        e[i] = h
        fd[:, i] = (op.state(state.u + e).kstar_u - op.state(state.u - e).kstar_u) / (2 * h)
    assert np.abs(J - fd).max() <= 1e-6 * np.abs(fd).max()
    # gamma is the coefficient of u in K* u = U w + gamma u (theory.md §12): K* u - gamma u lies in
    # range(Phi).
    rest = state.kstar_u - gamma * state.u
    coef, *_ = np.linalg.lstsq(Phi, rest, rcond=None)
    assert np.linalg.norm(Phi @ coef - rest) <= 1e-9 * np.linalg.norm(state.kstar_u)


def test_basis_gram_rows_equals_explicit_products_and_updates():
    Phi, s, y = factor_data(300, 12, 2)
    for dtype in (np.float64, np.float32):
        problem = lowrank_problem(Phi.astype(dtype), s, y, C=1.0, rho=1.0)
        op = problem.operator
        rng = np.random.default_rng(3)
        state = problem.state(problem.project(rng.uniform(0, 1, 300)))
        E = op.apply_basis(state, np.eye(op.rank + 1))
        mask = rng.uniform(size=300) < 0.5
        for _ in range(4):  # the first call builds the row Gram, the others update it
            got = op.basis_gram_rows(state, mask)
            want = E[mask].T @ E[mask]
            assert np.abs(got - want).max() <= 1e-10 * np.abs(want).max()
            flip = rng.choice(300, 10, replace=False)
            mask = mask.copy()
            mask[flip] = ~mask[flip]
    assert op.n_gram_passes > 0


# -- the solver against the dense problem ---------------------------------------------------------


@pytest.mark.parametrize("C", [0.1, 10.0])
@pytest.mark.parametrize("rho", [1e-2, 1.0, 1e3])
@pytest.mark.parametrize(("n", "m", "seed"), [(80, 5, 4), (150, 20, 5)])
def test_same_optimum_as_dense_problem(n, m, seed, C, rho):
    Phi, s, y = factor_data(n, m, seed)
    tol = 1e-8
    newton = solve_quiet(lowrank_problem(Phi, s, y, C=C, rho=rho), method="lowrank_newton", tol=tol)
    assert newton.status == "converged", newton.message
    assert newton.relative_gap <= tol
    assert newton.n_iter <= 15  # second order: a few iterations, not hundreds
    K0 = (Phi * s) @ Phi.T
    dense = solve_quiet(
        make_problem("svc", 0.5 * (K0 + K0.T), y, C=C, rho=rho),
        method="pg",
        tol=1e-9,
        max_iter=20000,
    )
    # (the dense reference may stop at the precision limit: its f(0) rounds at 1e-10)
    assert dense.status in ("converged", "precision_limit"), dense.message
    # same f - f(0) (f(0) is rho ||(K0)_-||^2 of each problem's own eigenvalues)
    assert excess(newton) == pytest.approx(excess(dense), rel=1e-7)
    # its certified bound holds for the dense optimum too
    assert excess(newton) + newton.gap >= excess(dense) - 1e-9 * max(1.0, excess(dense))


@pytest.mark.parametrize("rho", [1e-2, 1.0, 1e3])
@pytest.mark.parametrize("nu", [0.1, 0.5, 0.9])
def test_one_class_same_optimum_as_dense_problem(nu, rho):
    """The one-class SVM (``y = 1``, ``1'a = 1``, box ``1/(nu n)``, no linear term) has the
    form the model assumes: the same certified optimum as the projected gradient on the dense
    ``K0``, in a few iterations; ``auto`` picks it on a factor."""
    import indefsvm

    Phi, s, _ = factor_data(150, 20, 12)  # (its labels are not used)
    tol = 1e-8
    problem = make_problem("oneclass", LowRankKernel(Phi, s), None, nu=nu, rho=rho)
    newton = solve_quiet(problem, method="lowrank_newton", tol=tol)
    assert newton.status == "converged", newton.message
    assert newton.relative_gap <= tol and newton.n_iter <= 100, newton.n_iter
    assert abs(newton.alpha.sum() - 1.0) <= 1e-12 and newton.alpha.max() <= 1 / (nu * 150) + 1e-15
    K0 = (Phi * s) @ Phi.T
    dense = solve_quiet(
        make_problem("oneclass", 0.5 * (K0 + K0.T), None, nu=nu, rho=rho),
        method="pg",
        tol=tol,
        max_iter=5000,
    )
    assert dense.relative_gap <= 10 * tol, dense.message
    # each certified upper bound holds for the other's point (f - f(0) is tiny here: the
    # one-class objective is -1/2 a'K*a with 1'a = 1, so compare through the certificates)
    slack = 1e-9 * max(abs(newton.objective), abs(dense.objective))
    assert excess(newton) + newton.gap >= excess(dense) - slack
    assert excess(dense) + dense.gap >= excess(newton) - slack
    assert abs(excess(newton) - excess(dense)) <= newton.gap + dense.gap + slack
    auto = solve_quiet(problem, tol=tol)
    assert auto.method == "lowrank_newton" and "oneclass" in auto.info["auto"]
    # the estimator at its defaults, low rank: the same choice
    X = np.random.default_rng(1).normal(size=(300, 4))
    est = indefsvm.IndefiniteOneClassSVM(kernel="sigmoid", nu=nu, rho=rho, n_components=30)
    model = solve_quiet_fit(est, X)
    assert model.result_.method == "lowrank_newton"
    assert model.result_.status == "converged"


@pytest.mark.parametrize("max_inner", [50, 2])
@pytest.mark.parametrize("kind", ["svc", "oneclass"])
@pytest.mark.parametrize("spread", [2.0, 100.0])
def test_vector_rho_same_optimum_as_dense_problem(kind, spread, max_inner):
    """A componentwise rho (paper 004 Sect. 4.4): the model works in ``a' = a / Ds`` where the
    Hessian keeps its +-1 signs (theory.md §7); the same certified optimum as the projected
    gradient on the dense ``K0`` with the same rho, in a few iterations; ``auto`` picks it.
    ``max_inner=2`` sends the models through their dual (constraint ``(e Ds)'a' = r``)."""
    Phi, s, y = factor_data(150, 20, 5)
    rho = np.geomspace(1.0 / spread, spread, 150)[np.random.default_rng(3).permutation(150)]
    kw = {"rho": rho, **({"nu": 0.3} if kind == "oneclass" else {"C": 1.0})}
    labels = None if kind == "oneclass" else y
    tol = 1e-8
    problem = make_problem(kind, LowRankKernel(Phi, s), labels, **kw)
    newton = solve_quiet(
        problem, method="lowrank_newton", tol=tol, options={"max_inner": max_inner}
    )
    assert newton.status == "converged", newton.message
    assert newton.relative_gap <= tol and newton.n_iter <= (15 if max_inner > 2 else 40)
    assert newton.info["n_gradient"] == 0 and "fallback" not in newton.info
    if max_inner == 2:
        assert newton.info["n_model"] > 0
    K0 = (Phi * s) @ Phi.T
    dense = solve_quiet(
        make_problem(kind, 0.5 * (K0 + K0.T), labels, **kw), method="pg", tol=tol, max_iter=5000
    )
    assert dense.relative_gap <= 10 * tol, dense.message
    slack = 1e-9 * max(abs(newton.objective), abs(dense.objective))
    assert excess(newton) + newton.gap >= excess(dense) - slack
    assert excess(dense) + dense.gap >= excess(newton) - slack
    assert solve_quiet(problem, tol=tol).method == "lowrank_newton"


def test_optimum_matches_sdp_reference():
    Phi, s, y = factor_data(24, 4, 6)
    K0 = (Phi * s) @ Phi.T
    K0 = 0.5 * (K0 + K0.T)
    value, _ = sdp_optimum(K0, y, 1.0, 0.5)
    result = solve_quiet(
        lowrank_problem(Phi, s, y, C=1.0, rho=0.5), method="lowrank_newton", tol=1e-9
    )
    assert result.status == "converged"
    # the SDP's value is the minimum over K: the same optimum as the concave problem's maximum
    assert result.objective == pytest.approx(value, rel=1e-6, abs=1e-6)


def test_class_weights_float32_and_perturb():
    Phi, s, y = factor_data(200, 10, 7)
    ref = solve_quiet(
        lowrank_problem(Phi, s, y, C=1.0, rho=1.0, class_weight="balanced"), method="pg", tol=1e-9
    )
    res = solve_quiet(
        lowrank_problem(Phi, s, y, C=1.0, rho=1.0, class_weight="balanced"),
        method="lowrank_newton",
        tol=1e-9,
    )
    assert res.status == "converged"
    assert excess(res) == pytest.approx(excess(ref), rel=1e-7)
    # float32 storage: the kernel of the stored values, certified the same way
    res32 = solve_quiet(
        lowrank_problem(Phi.astype(np.float32), s, y, C=1.0, rho=1.0),
        method="lowrank_newton",
        tol=1e-8,
    )
    assert res32.status == "converged"
    psd = np.abs(s)
    ref_p = solve_quiet(
        make_problem("perturb", LowRankKernel(Phi, psd), y, C=1.0, rho=1.0), method="pg", tol=1e-9
    )
    res_p = solve_quiet(
        make_problem("perturb", LowRankKernel(Phi, psd), y, C=1.0, rho=1.0),
        method="lowrank_newton",
        tol=1e-9,
    )
    assert res_p.status == "converged"
    assert excess(res_p) == pytest.approx(excess(ref_p), rel=1e-7)


def test_medium_problem_against_projected_gradient_and_passes():
    """Same certified optimum as PG at n = 5000, m = 60, with fewer passes over the factor."""
    Phi, s, y = factor_data(5000, 60, 8)
    report = {}
    for method in ("pg", "lowrank_newton"):
        problem = lowrank_problem(Phi, s, y, C=1.0, rho=1.0)
        before = problem.operator.n_passes
        start = time.perf_counter()
        result = solve_quiet(problem, method=method, tol=1e-6, max_iter=5000)
        report[method] = (
            result,
            problem.operator.n_passes - before,
            problem.operator.n_gram_passes,
            time.perf_counter() - start,
        )
        assert result.status == "converged", result.message
    (pg, pg_passes, _, pg_time), (nt, nt_passes, nt_gram, nt_time) = (
        report["pg"],
        report["lowrank_newton"],
    )
    print(
        f"\nn=5000 m=60: pg {pg.n_iter} it, {pg_passes} passes, {pg_time:.2f}s; newton "
        f"{nt.n_iter} it, {nt_passes} passes + {nt_gram:.2f} Gram passes, {nt_time:.2f}s"
    )
    scale = max(1.0, excess(pg))
    assert abs(excess(nt) - excess(pg)) <= 2e-6 * scale
    assert nt.info["n_passes"] == nt_passes
    assert nt.n_iter <= 15
    assert nt_passes + nt_gram < pg_passes


# -- refusals and limits ------------------------------------------------------------------------


def test_refuses_what_it_does_not_solve():
    Phi, s, y = factor_data(60, 5, 9)
    K0 = (Phi * s) @ Phi.T
    with pytest.raises(ValueError, match="newton.*factor"):
        solve_problem(
            make_problem("svc", 0.5 * (K0 + K0.T), y, C=1.0, rho=1.0), method="lowrank_newton"
        )
    reg = make_problem("svr", LowRankKernel(Phi, s), Phi[:, 0], C=1.0, rho=1.0)
    with pytest.raises(ValueError, match="newton.*problem in.*'svr'"):
        solve_problem(reg, method="lowrank_newton")
    with pytest.raises(ValueError, match="max_inner"):
        solve_problem(
            lowrank_problem(Phi, s, y, C=1.0, rho=1.0),
            method="lowrank_newton",
            options={"max_inner": 0},
        )


def test_iteration_limit_is_reported_and_warns():
    Phi, s, y = factor_data(150, 10, 10)
    problem = lowrank_problem(Phi, s, y, C=10.0, rho=1e3)
    with pytest.warns(ConvergenceWarning, match="newton.*NOT certified"):
        result = solve_problem(problem, method="lowrank_newton", tol=1e-12, max_iter=1)
    assert result.status == "max_iter"
    assert result.relative_gap > 1e-12


def test_time_limit_is_reported_and_warns():
    Phi, s, y = factor_data(150, 10, 10)
    problem = lowrank_problem(Phi, s, y, C=10.0, rho=1e3)
    with pytest.warns(ConvergenceWarning, match="newton.*time limit"):
        result = solve_problem(problem, method="lowrank_newton", tol=1e-12, max_time=1e-9)
    assert result.status == "max_time"


@pytest.mark.parametrize("max_inner", [1, 2])
def test_fallbacks_reach_the_same_optimum(max_inner):
    """Too few active-set steps: the model's dual, then a projected gradient step take over."""
    Phi, s, y = factor_data(150, 20, 5)
    ref = solve_quiet(
        lowrank_problem(Phi, s, y, C=10.0, rho=1e3), method="pg", tol=1e-9, max_iter=20000
    )
    res = solve_quiet(
        lowrank_problem(Phi, s, y, C=10.0, rho=1e3),
        method="lowrank_newton",
        tol=1e-8,
        options={"max_inner": max_inner},
    )
    assert res.status == "converged", res.message
    assert res.info["n_model"] > 0
    assert excess(res) == pytest.approx(excess(ref), rel=1e-7)


def test_warm_start_from_the_optimum_stops_at_once():
    Phi, s, y = factor_data(150, 20, 5)
    first = solve_quiet(
        lowrank_problem(Phi, s, y, C=1.0, rho=1.0), method="lowrank_newton", tol=1e-8
    )
    again = solve_quiet(
        lowrank_problem(Phi, s, y, C=1.0, rho=1.0),
        method="lowrank_newton",
        tol=1e-6,
        options={"alpha0": first.alpha},
    )
    assert again.status == "converged"
    assert again.n_iter == 1
    with pytest.raises(ValueError, match="alpha0 must be a finite vector of length 150"):
        solve_problem(
            lowrank_problem(Phi, s, y, C=1.0, rho=1.0),
            method="lowrank_newton",
            options={"alpha0": [1.0]},
        )


def test_factor_only_solvers_are_declared_and_left_out_of_the_cli_default():
    from indefsvm.cli import build_parser
    from indefsvm.proxy.api import FACTOR_ONLY, SOLVERS, get_solver

    for method in SOLVERS:
        needs = getattr(get_solver(method), "needs", frozenset())
        assert ("factor" in needs) == (method in FACTOR_ONLY)
    args = build_parser().parse_args(["compare", "K.npy", "y.txt"])
    assert "lowrank_newton" in SOLVERS and "lowrank_newton" not in args.methods


def test_rank_deficient_factor():
    """A repeated column: the operator's basis has m' < m directions; same optimum as PG."""
    Phi, s, y = factor_data(120, 8, 11)
    Phi = np.column_stack([Phi, Phi[:, 0], Phi[:, 5]])
    s = np.append(s, [s[0], s[5]])
    problem = lowrank_problem(Phi, s, y, C=1.0, rho=1.0)
    assert problem.operator.rank < Phi.shape[1]
    res = solve_quiet(problem, method="lowrank_newton", tol=1e-8)
    ref = solve_quiet(lowrank_problem(Phi, s, y, C=1.0, rho=1.0), method="pg", tol=1e-9)
    assert res.status == "converged"
    assert excess(res) == pytest.approx(excess(ref), rel=1e-7)


def test_a_stalled_newton_falls_back_warm_started_to_the_projected_gradient():
    """Kernel x 1e5 and rho = 1e8: no Newton direction ascends at the start (the solve stopped
    'stalled' at iteration 0 with f - f(0) = 2e-3 against ~80). The projected gradient takes
    over from the best point with the same monitor, and ends where PG alone ends."""
    import indefsvm
    from indefsvm import IndefiniteNystroem

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = np.where(np.sin(X[:, 0]) + X[:, 1] * X[:, 2] > 0, 1, -1)
    nys = IndefiniteNystroem(
        "sigmoid", gamma=0.2, coef0=-0.5, n_components=30, random_state=0, factorization="one-shot"
    )
    Phi = nys.fit_transform(X) * np.sqrt(1e5)
    K0 = LowRankKernel(Phi, nys.signature_)
    kw = {"C": 1.0, "rho": 1e8, "tol": 1e-6, "max_iter": 1500}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        alone = indefsvm.solve(K0, y, method="lowrank_newton", options={"fallback": False}, **kw)
        chained = indefsvm.solve(K0, y, method="lowrank_newton", options={"fallback": True}, **kw)
        pg = indefsvm.solve(K0, y, method="pg", **kw)
    assert alone.status == "stalled" and alone.n_iter <= 1
    assert chained.info["fallback"] == "pg" and chained.info["newton_iterations"] == alone.n_iter
    assert chained.method == "lowrank_newton" and chained.n_iter == 1500
    assert alone.objective_excess < 1e-3 * pg.objective_excess
    # both stop at the iteration limit far from the optimum (relative gap ~6) on this hostile
    # scale, where the two trajectories' rounding differs: "where PG ends" to 2 % (the defect
    # was a factor of 10^4 below it)
    assert chained.objective_excess >= (1 - 2e-2) * pg.objective_excess
    np.testing.assert_array_equal(chained.history["iteration"], np.arange(1, 1501))


def test_gradient_start_is_the_first_iteration_and_ends_a_solve_it_certifies():
    """With a small ``C`` the projected gradient's first step puts every row at its bound and
    certifies the gap; the Newton method asks the monitor after that step (its first
    iteration) and builds no model. Its point is the projected gradient's first iterate, and
    its value is the dense problem's optimum to the tolerance."""
    Phi, s, y = factor_data(1000, 50, 1)
    # The first iterate's relative gap here is 1.8e-6: certified at 1e-5 with room to spare.
    newton = solve_quiet(lowrank_problem(Phi, s, y, C=1e-4), method="lowrank_newton", tol=1e-5)
    pg = solve_quiet(lowrank_problem(Phi, s, y, C=1e-4), method="pg", tol=1e-5)
    assert newton.status == pg.status == "converged"
    assert newton.n_iter == pg.n_iter == 1
    assert newton.info["n_model"] == newton.info["n_inner"] == 0
    np.testing.assert_array_equal(newton.alpha, pg.alpha)
    K0 = (Phi * s) @ Phi.T
    dense = solve_quiet(
        make_problem("svc", 0.5 * (K0 + K0.T), y, C=1e-4), method="pg", tol=1e-10, max_iter=20000
    )
    # The certified bounds of each bracket the other's optimum (slack: the rounding of f);
    # the objective is within the tolerance of the dense optimum.
    slack = 1e-12 * abs(dense.objective)
    assert newton.objective <= dense.upper_bound + slack
    assert newton.upper_bound >= dense.objective - slack
    assert dense.objective - newton.objective <= 1e-5 * abs(dense.objective)


@pytest.mark.parametrize("C", [1e-4, 1e-2, 1.0])
def test_gradient_start_leaves_the_singular_origin_and_reaches_the_same_optimum(C):
    """At ``alpha = 0`` the model's ``J`` is singular; the first step is the projected
    gradient's. Small ``C``: that step puts the rows at their bound, and the first model is
    solved by the active-set iteration (no dual model), where the origin's model needs one."""
    Phi, s, y = factor_data(1000, 50, 1)
    tol = 1e-8
    runs = {
        start: solve_quiet(
            lowrank_problem(Phi, s, y, C=C),
            method="lowrank_newton",
            tol=tol,
            options={"gradient_start": start},
        )
        for start in (True, False)
    }
    K0 = (Phi * s) @ Phi.T
    dense = solve_quiet(
        make_problem("svc", 0.5 * (K0 + K0.T), y, C=C), method="pg", tol=1e-10, max_iter=20000
    )
    for result in runs.values():
        assert result.status == "converged", result.message
        assert excess(result) == pytest.approx(excess(dense), rel=1e-7)
    if C == 1e-4:
        assert runs[True].info["n_model"] == 0 < runs[False].info["n_model"]
        assert runs[True].info["n_passes"] < runs[False].info["n_passes"]
