"""Low-rank proxy-kernel SVM (issue 12, item 3) against the dense problem on an exactly rank-m K0.

Reference: the dense problems of :mod:`indefsvm.proxy.problems` on ``K0 = Phi diag(s) Phi'`` formed
explicitly (their own O(n^3) eigendecomposition), finite differences, and the dense solver.
"""

from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import WARNING_STATUSES
from sklearn.exceptions import ConvergenceWarning

import indefsvm
import indefsvm.utils.blocks as blocks_module
from indefsvm.linalg.factor import LowRankKernel
from indefsvm.proxy import lowrank
from indefsvm.proxy.lowrank import LowRankProxyKernel
from indefsvm.proxy.problems import make_problem


def factor(n, m, seed, *, spread=2.0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    Phi = (rng.normal(size=(n, m)) * np.logspace(0, -spread, m)).astype(dtype)
    s = np.where(rng.uniform(size=m) < 0.4, -1.0, 1.0)
    s[0] = 1.0
    F = Phi.astype(np.float64)
    return Phi, s, (F * s) @ F.T, rng


def problem_args(kind, n, rng):
    if kind == "svc":
        y = np.where(rng.normal(size=n) > 0, 1.0, -1.0)
        y[:2] = [1.0, -1.0]
        return {"y": y}
    if kind == "svr":
        return {"y": rng.normal(size=n)}
    return {}


def pair(kind, Phi, s, K, rho, rng, **kw):
    args = problem_args(kind, K.shape[0], rng)
    low = make_problem(kind, LowRankKernel(Phi, s), rho=rho, **args, **kw)
    dense = make_problem(kind, K, rho=rho, **args, **kw)
    return low, dense


KINDS = ["svc", "svr", "oneclass"]


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / max(
        1e-300, float(np.max(np.abs(b)))
    )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("vector_rho", [False, True])
def test_evaluation_matches_dense(kind, vector_rho):
    Phi, s, K, rng = factor(50, 7, 1)
    rho = rng.uniform(0.3, 3.0, 50) if vector_rho else 0.7
    low, dense = pair(kind, Phi, s, K, rho, rng)
    assert low.low_rank and low.kind == dense.kind
    for _ in range(4):
        a = low.project(rng.uniform(-1.0, 1.0, 50))
        e1, e2 = low.evaluate(a), dense.evaluate(a)
        assert rel(e1.objective, e2.objective) < 1e-10
        assert rel(e1.gradient, e2.gradient) < 1e-10
        assert rel(e1.upper_bound, e2.upper_bound) < 1e-10
        assert e1.intercept == pytest.approx(e2.intercept, rel=1e-8, abs=1e-8)
    # The factored K*, its products and the out-of-sample map agree with the dense ones.
    Kstar = dense.kernel_from_state(e2.state)
    fac = low.kernel_from_state(e1.state)
    assert isinstance(fac, LowRankProxyKernel) and fac.shape == (50, 50)
    assert rel(fac.toarray(), Kstar) < 1e-10
    F = fac.features()
    assert rel(F @ F.T, Kstar) < 1e-10
    v = rng.normal(size=50)
    assert rel(fac.matvec(v), Kstar @ v) < 1e-10
    assert rel(fac.rows([3, 7]), Kstar[[3, 7]]) < 1e-10
    assert rel(low.proxy_kernel_matvec(a, v), dense.proxy_kernel_matvec(a, v)) < 1e-10
    R = rng.normal(size=(4, 7)) @ (s[:, None] * Phi.T)  # kernel rows of 4 new points
    assert rel(low.out_of_sample_rows(a, R), dense.out_of_sample_rows(a, R)) < 1e-10
    # f(0) = rho ||(K0)_-||_F^2 (theory.md §10)
    lam = np.linalg.eigvalsh(dense.operator.K0)
    assert low.baseline_objective == pytest.approx(
        dense.penalty_rho * np.sum(np.minimum(lam, 0) ** 2), rel=1e-10
    )


@pytest.mark.parametrize("kind", KINDS)
def test_feature_coef_gives_inductive_decision(kind):
    """``phi(x) @ c`` is the decision ``(P_+ k_x)'u`` of the dense estimator's map (theory.md
    §8)."""
    Phi, s, K, rng = factor(40, 6, 2)
    for rho in (1.3, rng.uniform(0.5, 2.0, 40)):
        low, dense = pair(kind, Phi, s, K, rho, rng)
        a = low.project(rng.uniform(-1.0, 1.0, 40))
        c = low.feature_coef(a)
        phi_new = rng.normal(size=(5, 6))
        R = phi_new @ (s[:, None] * Phi.T)
        u = dense.sign * a
        assert rel(phi_new @ c, dense.out_of_sample_rows(a, R) @ u) < 1e-10


@pytest.mark.parametrize("kind", KINDS)
def test_finite_difference_gradient(kind):
    Phi, s, K, rng = factor(30, 5, 3)
    low = make_problem(kind, LowRankKernel(Phi, s), rho=0.5, **problem_args(kind, 30, rng))
    a = low.project(rng.uniform(-0.5, 0.5, 30)) + 1e-3  # any point: f is smooth everywhere
    g = low.evaluate(a).gradient
    h = 1e-6
    for i in rng.choice(30, 6, replace=False):
        e = np.zeros(30)
        e[i] = h
        fd = (low.evaluate(a + e).smooth_objective - low.evaluate(a - e).smooth_objective) / (2 * h)
        assert fd == pytest.approx(g[i], rel=1e-5, abs=1e-6)


def test_solution_matches_dense_solver():
    Phi, s, K, rng = factor(60, 8, 4, spread=1.0)
    y = np.where(rng.normal(size=60) > 0, 1.0, -1.0)
    r_low = indefsvm.solve(LowRankKernel(Phi, s), y, C=1.0, rho=1.0, tol=1e-9, max_iter=20000)
    r_dense = indefsvm.solve(K, y, C=1.0, rho=1.0, tol=1e-9, max_iter=20000)
    assert r_low.converged and r_dense.converged
    assert isinstance(r_low.kernel, LowRankProxyKernel)
    f0 = make_problem("svc", K, y).operator.eigenvalues
    scale = max(1.0, r_dense.objective - np.sum(np.minimum(f0, 0) ** 2))
    assert abs(r_low.objective - r_dense.objective) <= 1e-6 * scale
    assert np.max(np.abs(r_low.alpha - r_dense.alpha)) < 1e-3
    assert r_low.intercept == pytest.approx(r_dense.intercept, abs=1e-3)
    # Certified: the gap is never negative and every bound covers the dense optimum.
    opt = r_dense.objective
    assert np.all(r_low.history["gap"] >= -1e-9 * max(1.0, abs(opt)))
    assert np.all(r_low.history["upper_bound"] >= opt - 1e-9 * abs(opt))
    assert np.all(r_low.history["best_objective"] <= r_dense.upper_bound + 1e-9 * abs(opt))


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 25),
    m=st.integers(1, 8),
    rho=st.floats(0.05, 20.0),
)
def test_property_certified_bound_and_objective(seed, n, m, rho):
    """For random factors (any rank, m >= n included) objective and bound equal the dense ones."""
    Phi, s, K, rng = factor(n, m, seed)
    low, dense = pair("svc", Phi, s, K, rho, rng)
    a = low.project(rng.uniform(0.0, 1.0, n))
    e1, e2 = low.evaluate(a), dense.evaluate(a)
    scale = max(1.0, abs(e2.objective))
    assert abs(e1.objective - e2.objective) <= 1e-9 * scale
    assert abs(e1.upper_bound - e2.upper_bound) <= 1e-9 * max(1.0, abs(e2.upper_bound))
    assert e1.gap >= -1e-9 * scale


def test_residual_nearly_in_range_uses_explicit_path():
    """u almost in range(Phi): ||u||^2 - ||U'u||^2 cancels, the explicit residual is used."""
    Phi, s, K, rng = factor(40, 6, 5, spread=0.5)
    low, dense = pair("svr", Phi, s, K, 1.0, rng)
    a = Phi @ rng.normal(size=6) + 1e-5 * rng.normal(size=40)
    st_ = low.state(a)
    assert st_.residual is not None and 0 < st_.residual_norm < 1e-3
    e1, e2 = low.evaluate(a), dense.evaluate(a)
    assert rel(e1.gradient, e2.gradient) < 1e-9
    assert rel(e1.objective, e2.objective) < 1e-10
    # exactly in range: residual 0, the extra pole decouples
    a0 = Phi @ rng.normal(size=6)
    assert rel(low.evaluate(a0).gradient, dense.evaluate(a0).gradient) < 1e-8


def test_rank_deficient_and_full_rank_factors():
    Phi, s, K, rng = factor(20, 5, 6)
    Phi2 = np.hstack([Phi, Phi[:, :2]])  # duplicated columns: rank 5 with m = 7
    s2 = np.concatenate([s, [1.0, -1.0]])
    F = Phi2
    K2 = (F * s2) @ F.T
    low, dense = pair("svc", Phi2, s2, K2, 1.0, rng)
    assert low.operator.rank <= 5
    a = low.project(rng.uniform(0, 1, 20))
    assert rel(low.evaluate(a).gradient, dense.evaluate(a).gradient) < 1e-9
    # m = n (every point a landmark): no residual direction at all
    Phi3, s3, K3, rng = factor(12, 12, 7, spread=1.0)
    low, dense = pair("oneclass", Phi3, s3, K3, 2.0, rng)
    a = low.project(rng.uniform(0, 1, 12))
    assert rel(low.evaluate(a).gradient, dense.evaluate(a).gradient) < 1e-9
    assert rel(low.evaluate(a).objective, dense.evaluate(a).objective) < 1e-10


def test_float32_storage_is_the_kernel_of_the_stored_values(monkeypatch):
    monkeypatch.setattr(blocks_module, "BLOCK_BYTES", 8 * 6 * 64)  # several row blocks
    Phi, s, K, rng = factor(300, 6, 8, dtype=np.float32)
    assert K.dtype == np.float64  # K is built from the float32 values in float64
    low, dense = pair("svc", Phi, s, K, 1.0, rng)
    assert low.operator.Phi.dtype == np.float32  # kept by reference, not converted
    a = low.project(rng.uniform(0, 1, 300))
    e1, e2 = low.evaluate(a), dense.evaluate(a)
    assert rel(e1.objective, e2.objective) < 1e-10
    assert rel(e1.gradient, e2.gradient) < 1e-9


def test_other_solvers_and_checks_within_dense_limit(monkeypatch):
    Phi, s, K, rng = factor(30, 4, 9)
    y = np.where(rng.normal(size=30) > 0, 1.0, -1.0)
    lk = LowRankKernel(Phi, s)
    res = indefsvm.solve(lk, y, tol=1e-7, options={"libsvm_every": 20})
    ref = indefsvm.solve(K, y, tol=1e-7)
    assert np.isfinite(res.libsvm_upper_bound)
    assert res.libsvm_upper_bound >= ref.objective - 1e-7 * abs(ref.objective)
    with warnings.catch_warnings():  # 60 centres may stop short of tol: only agreement matters
        warnings.simplefilter("ignore", ConvergenceWarning)
        acc = indefsvm.solve(lk, y, method="accpm", tol=1e-3, max_iter=60)
    assert ref.objective - 1e-2 * abs(ref.objective) <= acc.objective <= ref.upper_bound
    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 10)
    with pytest.raises(ValueError, match="method='accpm' needs n x n"):
        indefsvm.solve(lk, y, method="accpm")
    # Above the limit the check is a linear SVM (LIBLINEAR) on the factor of K*: still a bound.
    lin = indefsvm.solve(lk, y, tol=1e-7, options={"libsvm_every": 20})
    assert np.isfinite(lin.libsvm_upper_bound)
    assert lin.libsvm_upper_bound >= ref.objective - 1e-7 * abs(ref.objective)
    with pytest.raises(ValueError, match="one-class problem"):
        indefsvm.solve(lk, problem="oneclass", options={"libsvm_every": 5})
    res = indefsvm.solve(lk, y, tol=1e-6)  # pg never needs n x n arrays
    with pytest.raises(ValueError, match="dense proxy kernel"):
        res.kernel.toarray(max_n=lowrank.DENSE_LIMIT)
    assert res.kernel.matvec(np.ones(30)).shape == (30,)


def test_bad_input_messages():
    with pytest.raises(ValueError, match="signature must be a vector of length m = 3"):
        LowRankKernel(np.ones((5, 3)), [1.0, -1.0])
    with pytest.raises(ValueError, match="2-D array"):
        LowRankKernel(np.ones(5), [1.0])
    with pytest.raises(ValueError, match="NaN or inf"):
        LowRankKernel(np.full((4, 2), np.nan), [1.0, 1.0])
    with pytest.raises(TypeError, match="real numeric"):
        LowRankKernel(np.ones((4, 2), dtype=complex), [1.0, 1.0])
    with pytest.raises(ValueError, match="identically zero"):
        make_problem("svc", LowRankKernel(np.zeros((4, 2)), [1.0, 1.0]), [1, -1, 1, -1])
    Phi, s, _, _ = factor(6, 2, 0)
    with pytest.raises(ValueError, match="vector of length n = 6"):
        make_problem("svc", LowRankKernel(Phi, s), [1, -1, 1, -1, 1, -1], rho=np.ones(5))
    with pytest.raises(ValueError, match="needs a PSD kernel"):
        make_problem("perturb", LowRankKernel(Phi, [1.0, -1.0]), [1, -1, 1, -1, 1, -1])
    with pytest.raises(ValueError, match="problem must be one of"):
        make_problem("nope", LowRankKernel(Phi, s), [1, -1, 1, -1, 1, -1])


def _sigmoid_data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, "a", "b")
    return X, y


KERNEL = {"kernel": "sigmoid", "gamma": 0.2, "coef0": -0.5}


@pytest.mark.parametrize(
    "make, target",
    [
        (lambda **k: indefsvm.IndefiniteSVC(C=1.0, **k), "labels"),
        (lambda **k: indefsvm.IndefiniteSVR(C=1.0, epsilon=0.1, **k), "real"),
        (lambda **k: indefsvm.IndefiniteOneClassSVM(nu=0.3, **k), None),
    ],
)
def test_estimators_with_all_points_as_landmarks_reproduce_dense(make, target):
    """n_components = n: the Nystroem kernel is K itself, so fit and predictions agree."""
    X, labels = _sigmoid_data()
    y = {"labels": labels, "real": X[:, 0] - X[:, 1], None: None}[target]
    dense = make(**KERNEL, tol=1e-9, solver_options={"keep_training_state": True}).fit(X, y)
    low = make(
        **KERNEL,
        tol=1e-9,
        n_components=X.shape[0],
        random_state=0,
        solver_options={"keep_training_state": True},
    ).fit(X, y)
    assert isinstance(low.proxy_kernel_, LowRankProxyKernel)
    assert not hasattr(low, "X_fit_")  # predictions need only the Nystroem map
    assert low.result_.objective == pytest.approx(dense.result_.objective, rel=1e-7)
    Xt = np.random.default_rng(1).normal(size=(30, 4))
    d_dense, d_low = (
        dense.decision_function(Xt) if target != "real" else dense.predict(Xt),
        (low.decision_function(Xt) if target != "real" else low.predict(Xt)),
    )
    assert np.max(np.abs(d_low - d_dense)) < 1e-4 * max(1.0, np.max(np.abs(d_dense)))
    assert np.allclose(low.proxy_rows(Xt[:3]), dense.proxy_rows(Xt[:3]), atol=1e-6)


def test_low_rank_estimator_options_and_errors():
    X, y = _sigmoid_data(200)
    clf = indefsvm.IndefiniteSVC(
        **KERNEL,
        n_components=40,
        random_state=3,
        nystroem_params={"landmarks": "kmeans++"},
        prediction_params={"intercept": "paper"},
    ).fit(X, y)
    assert clf.nystroem_.n_components_ <= 40 and clf.feature_coef_.shape == (
        clf.nystroem_.n_components_,
    )
    assert set(clf.predict(X[:10])) <= {"a", "b"}
    assert clf.score(X, y) > 0.6
    again = indefsvm.IndefiniteSVC(
        **KERNEL,
        n_components=40,
        random_state=3,
        nystroem_params={"landmarks": "kmeans++"},
        prediction_params={"intercept": "paper"},
    ).fit(X, y)
    assert np.array_equal(again.alpha_, clf.alpha_)  # seeded landmarks: identical refits
    f32 = indefsvm.IndefiniteSVC(
        **KERNEL,
        n_components=40,
        random_state=3,
        nystroem_params={"dtype": "float32"},
        solver_options={"keep_training_state": True},
    ).fit(X, y)
    assert f32.problem_.operator.Phi.dtype == np.float32
    # precomputed: the Nystroem map reads the landmark columns; m = n reproduces the dense fit
    K = np.tanh(0.2 * X @ X.T - 0.5)
    Kt = np.tanh(0.2 * X[:7] @ X.T - 0.5)
    pre = indefsvm.IndefiniteSVC(n_components=200, random_state=0, tol=1e-9).fit(K, y)
    ref = indefsvm.IndefiniteSVC(tol=1e-9).fit(K, y)
    assert np.allclose(pre.decision_function(Kt), ref.decision_function(Kt), atol=1e-4)
    with pytest.raises(ValueError, match=r"'n_components' parameter .* range \[1, inf\)"):
        indefsvm.IndefiniteSVC(**KERNEL, n_components=0).fit(X, y)
    with pytest.raises(ValueError, match="transductive"):
        indefsvm.IndefiniteSVC(
            **KERNEL, n_components=10, prediction_params={"out_of_sample": "transductive"}
        ).fit(X, y)


# Low-rank problems: SIQCLP/ACCPM within DENSE_LIMIT, LIBSVM checks refused before solving,
# overflow and JSON of a factored kernel, and the certified gap when f(0) swamps the
# alpha-dependent part, on the factored operator.
#
# References are independent of the low-rank code: the dense kernel ``K0 = Phi diag(s) Phi'`` solved
# by the dense problem (itself checked against cvxpy elsewhere), and a 60-digit mpmath evaluation.


def _signed_factor(n: int = 50, m: int = 6, seed: int = 3):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(n, m)) / np.sqrt(m)
    s = np.array([1.0, 1.0, 1.0, -1.0, -1.0, 1.0])[:m]
    K = (Phi * s) @ Phi.T
    return Phi, s, 0.5 * (K + K.T), rng


def targets(kind: str, n: int, rng):
    if kind == "svc":
        return np.where(rng.normal(size=n) > 0, 1, -1)
    if kind == "svr":
        return np.sin(np.arange(n) / 3.0)
    return None


# -- item 9: SIQCLP (and ACCPM) on a low-rank problem within DENSE_LIMIT --------------------------
@functools.cache
def dense_reference(kind: str):
    """The dense kernel ``Phi diag(s) Phi'`` solved by PG to a tight certified gap."""
    Phi, s, K, rng = _signed_factor()
    return indefsvm.solve(
        K, targets(kind, K.shape[0], rng), problem=kind, method="pg", tol=1e-9, max_iter=50000
    )


@pytest.mark.parametrize("method", ["siqclp", "accpm"])
@pytest.mark.parametrize("kind", ["svc", "svr", "oneclass"])
def test_cutting_plane_solvers_on_low_rank_agree_with_the_dense_kernel(kind, method):
    Phi, s, K, rng = _signed_factor()
    y = targets(kind, K.shape[0], rng)
    # was: AttributeError: 'LowRankProxyOperator' object has no attribute 'eigenvectors'
    res = indefsvm.solve(LowRankKernel(Phi, s), y, problem=kind, method=method, tol=1e-6)
    ref = dense_reference(kind)
    assert ref.converged
    assert res.status == "converged", res.message
    scale = max(1.0, abs(ref.objective - ref.baseline_objective))
    # certified: 0 <= gap <= tol * scale, and the optimum lies in both results' brackets
    assert 0.0 <= res.gap <= 1e-6 * scale * (1 + 1e-6)
    assert res.objective <= ref.upper_bound + 1e-9 * scale
    assert ref.objective <= res.objective + res.gap + 1e-9 * scale
    assert res.baseline_objective == pytest.approx(ref.baseline_objective, rel=1e-10)


def test_siqclp_low_rank_uses_the_dense_view_once():
    Phi, s, K, rng = _signed_factor()
    problem = indefsvm.make_problem("svc", LowRankKernel(Phi, s), targets("svc", 50, rng))
    d, V = problem.working_eigh
    assert problem.working_eigh[1] is V  # computed once
    np.testing.assert_allclose(d, np.linalg.eigvalsh(K), atol=1e-12)
    np.testing.assert_allclose((V * d) @ V.T, K, atol=1e-12)


def test_dense_view_is_refused_above_the_limit(monkeypatch):
    Phi, s, K, rng = _signed_factor()
    problem = indefsvm.make_problem("svc", LowRankKernel(Phi, s), targets("svc", 50, rng))
    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 10)
    with pytest.raises(ValueError, match="eigendecomposition of K0"):
        problem.working_eigh  # noqa: B018


# -- item 14: a LIBSVM check that cannot run is refused before any iteration -----------------------
def test_low_rank_oneclass_libsvm_check_refused_before_solving(monkeypatch):
    Phi, s, K, rng = _signed_factor(n=30)
    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 10)
    calls = []
    from indefsvm.proxy.problems import OneClassProblem

    evaluate = OneClassProblem.evaluate

    def spy(self, *args, **kwargs):
        calls.append(1)
        return evaluate(self, *args, **kwargs)

    monkeypatch.setattr(OneClassProblem, "evaluate", spy)
    with pytest.raises(ValueError, match="libsvm_every .* one-class problem"):
        indefsvm.solve(LowRankKernel(Phi, s), problem="oneclass", options={"libsvm_every": 5})
    assert calls == []  # nothing was solved and thrown away
    # the other problem types have the linear (LIBLINEAR) check above the limit: they run
    for kind in ("svc", "svr", "perturb"):
        Phi_k, s_k = (np.abs(Phi), np.ones(6)) if kind == "perturb" else (Phi, s)
        y = targets("svc" if kind == "perturb" else kind, 30, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = indefsvm.solve(
                LowRankKernel(Phi_k, s_k),
                y,
                problem=kind,
                tol=1e-4,
                max_iter=20,
                options={"libsvm_every": 5},
            )
        assert np.isfinite(res.libsvm_upper_bound), kind
    # and one-class without the check runs above the limit (pg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        indefsvm.solve(LowRankKernel(Phi, s), problem="oneclass", max_iter=5)


# -- item 16: overflow, to_json ---------------------------------------------------------------
def test_overflowing_factor_gets_the_dense_paths_kind_of_message():
    Phi, s, K, rng = _signed_factor(n=30)
    y = targets("svc", 30, rng)
    with pytest.raises(ValueError, match="overflow double precision") as dense:
        indefsvm.solve(K * 1e160, y)
    with pytest.raises(ValueError, match="overflow double precision.*Rescale") as low:
        indefsvm.solve(LowRankKernel(Phi * 1e160, s), y)
    assert "Rescale" in str(dense.value)
    # the same for a factor that is finite but whose kernel is not
    with pytest.raises(ValueError, match="overflow"):
        indefsvm.solve(LowRankKernel(Phi * 1e75, s), y)
    assert "LinAlgError" not in type(low.value).__name__


def test_to_json_with_the_kernel_of_a_low_rank_result(tmp_path):
    Phi, s, K, rng = _signed_factor(n=30)
    y = targets("svc", 30, rng)
    res = indefsvm.solve(LowRankKernel(Phi, s), y, tol=1e-6)
    path = tmp_path / "res.json"
    res.to_json(path, include_kernel=True)  # was a raw TypeError
    kernel = json.loads(path.read_text())["kernel"]
    assert kernel["format"] == "factor"
    F = np.asarray(kernel["features"])
    assert F.shape[0] == 30 and F.shape[1] <= 7
    # the factor gives K* = (K0 + u u' / (4 rho))_+ (Theorem 1, rho = 1), by a dense eigh here
    u = y * res.alpha
    lam, V = np.linalg.eigh(K + np.outer(u, u) / 4.0)
    K_star = (V * np.maximum(lam, 0.0)) @ V.T
    np.testing.assert_allclose(F @ F.T, K_star, atol=1e-10)


# -- item 1 on the factored operator: f(0) must not swamp the certified gap ------------------------
@pytest.mark.parametrize("method", ["pg", "accpm", "siqclp", "lowrank_newton"])
def test_low_rank_certified_gap_is_confirmed_by_a_60_digit_reference(method):
    mp = pytest.importorskip("mpmath")  # noqa: F841
    from mp_reference import mp_excess, mp_kernel

    # the reproducer (kernel ~1e5, rho = 1) as an exact-rank factor of rank 8 < n = 12
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=12) > 0, 1, -1)
    K = 9e4 * np.tanh(0.8 * X @ X.T - 0.5)
    d, V = np.linalg.eigh(0.5 * (K + K.T))
    keep = np.argsort(-np.abs(d))[:8]
    Phi, s = V[:, keep] * np.sqrt(np.abs(d[keep])), np.sign(d[keep])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = indefsvm.solve(LowRankKernel(Phi, s), y, rho=1.0, method=method, tol=1e-6)
    K_mp = mp_kernel(factor=(Phi, s))
    excess, ub_excess = mp_excess(K_mp, y, res.alpha, 1.0)
    # a long dense-kernel PG run gives a point at least as good: OPT - f(0) >= its excess
    ref = indefsvm.solve((Phi * s) @ Phi.T, y, rho=1.0, tol=1e-9, max_iter=20000)
    best = max(excess, mp_excess(K_mp, y, ref.alpha, 1.0)[0])
    if res.status == "converged":
        assert res.gap >= 0.0
        assert float(best - excess) <= res.gap + res.gap_error
        assert res.gap <= float(ub_excess - excess) + res.gap_error + 1e-12
    else:
        assert res.status in WARNING_STATUSES
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)


def test_feature_coef_docstring_no_longer_claims_the_k_star_row():
    from indefsvm.proxy.lowrank import LowRankProxyOperator

    doc = " ".join(LowRankProxyOperator.feature_coef.__doc__.split())
    assert "On a training point it is ``(K* u)_i``" not in doc
    assert "(K0 P_+ u)_i" in doc
