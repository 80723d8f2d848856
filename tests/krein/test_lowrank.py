"""Low-rank Krein learners (paper 003, Sect. 2.4-2.5): full-rank reproduction at m = n,
independent references (dense solvers on the Nystroem matrix, cvxpy, finite differences)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from indefsvm.approximation.nystrom import IndefiniteNystroem
from indefsvm.kernels import sigmoid_kernel
from indefsvm.krein import (
    KreinClassifier,
    KreinKernelRidge,
    KreinRegressor,
    KreinSquaredHingeSVC,
    SimilarityRidge,
    krein_least_squares,
    lowrank_krein_ridge,
    lowrank_variance_constrained,
    omcs_krein_least_squares,
    rediagonalize,
    squared_hinge_hypergradient,
    squared_hinge_svm,
)
from indefsvm.krein.lowrank import exact_line_search

SIG = {"gamma": 0.4, "coef0": -0.5}


def _sig(X, Y=None):
    return sigmoid_kernel(X, Y, **SIG)


def _data(n=70, n_test=25, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + n_test, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n + n_test)
    return X[:n], y[:n], X[n:], y[n:]


def _all(n):
    return {"n_components": n, "nystroem_params": {"landmarks": np.arange(n)}}


@pytest.mark.parametrize("center", [False, True])
def test_krein_lsm_low_rank_reproduces_full_rank(center):
    X, y, Xt, _ = _data()
    kw = {"lambda_plus": 0.02, "lambda_minus": 0.1, "center": center}
    full = KreinKernelRidge(kernel=_sig, **kw).fit(X, y)
    low = KreinKernelRidge(kernel=_sig, **kw, **_all(len(X))).fit(X, y)
    np.testing.assert_allclose(low.predict(Xt), full.predict(Xt), atol=1e-7)
    np.testing.assert_allclose(low.predict(X), full.predict(X), atol=1e-7)


@pytest.mark.parametrize("method", ["krein", "omcs", "flip", "clip", "square"])
def test_vc_lsm_low_rank_reproduces_full_rank(method):
    X, y, Xt, _ = _data(seed=1)
    kw = {"formulation": method, "lambda_plus": 0.02, "lambda_minus": 0.1, "lam": 0.05, "r": 0.6}
    full = KreinRegressor(kernel=_sig, **kw).fit(X, y)
    low = KreinRegressor(kernel=_sig, **kw, **_all(len(X))).fit(X, y)
    assert low.mu_ == pytest.approx(full.mu_, rel=1e-6)
    np.testing.assert_allclose(low.predict(Xt), full.predict(Xt), atol=1e-6)
    np.testing.assert_allclose(low.predict(X), full.predict(X), atol=1e-6)


def test_vc_lsm_low_rank_equals_dense_solver_on_the_nystroem_matrix():
    """m < n: the m-dimensional secular solve equals the n-dimensional one on K_X|Z."""
    X, y, _, _ = _data(n=90, seed=2)
    yc = y - y.mean()
    ny = IndefiniteNystroem(_sig, n_components=15, random_state=0, factorization="one-shot")
    Phi = ny.fit_transform(X)
    s = ny.signature_
    K_nys = (Phi * s) @ Phi.T
    for lp, lm in [(0.02, 0.1), (0.3, 0.001)]:
        dense = krein_least_squares(K_nys, yc, lambda_plus=lp, lambda_minus=lm, r=0.5, rcond=1e-9)
        low = lowrank_variance_constrained(Phi * s, yc, np.where(s > 0, lp, lm), 0.5)
        assert low.mu == pytest.approx(dense.mu, rel=1e-8)
        np.testing.assert_allclose((Phi * s) @ low.z, dense.fitted, atol=1e-8)
        assert low.objective == pytest.approx(dense.objective, rel=1e-9)
        # Constraint holds: (1/n)||F z||^2 = r^2.
        assert np.mean(((Phi * s) @ low.z) ** 2) == pytest.approx(0.25, rel=1e-10)
    dense = omcs_krein_least_squares(K_nys, yc, lam=0.05, r=0.5, rcond=1e-9)
    low = lowrank_variance_constrained(Phi * s, yc, 0.05 * s, 0.5)
    np.testing.assert_allclose((Phi * s) @ low.z, dense.fitted, atol=1e-8)


def test_vc_lsm_on_a_non_orthogonal_factor():
    """The general path (SVD of F, rotation of the regulariser) on the plain factor L S."""
    X, y, _, _ = _data(n=80, seed=3)
    yc = y - y.mean()
    rng = np.random.default_rng(0)
    F = rng.normal(size=(80, 6))
    reg = rng.uniform(0.01, 0.2, size=6)
    low = lowrank_variance_constrained(F, yc, reg, 0.4)
    z = cp.Variable(6)
    # Independent check: the global minimiser beats a dense set of feasible points and satisfies
    # the KKT system (F'F + n diag(reg) - mu F'F) z = F'y with ||F z||^2 = n r^2 and
    # n diag(reg) - mu F'F positive semi-definite (Gander et al. global optimality).
    G = F.T @ F
    A = 80 * np.diag(reg) - low.mu * G
    np.testing.assert_allclose(A @ low.z, F.T @ yc, atol=1e-8)
    assert np.min(np.linalg.eigvalsh(A)) > -1e-8
    del z


@pytest.mark.parametrize("center", [False, True])
def test_sf_lsm_low_rank_reproduces_full(center):
    X, y, Xt, _ = _data(seed=4)
    full = SimilarityRidge(kernel=_sig, lam=0.01).fit(X, y)
    low = SimilarityRidge(kernel=_sig, lam=0.01, **_all(len(X))).fit(X, y)
    np.testing.assert_allclose(low.predict(Xt), full.predict(Xt), atol=1e-8)
    part = SimilarityRidge(kernel="sigmoid", kernel_params=SIG, lam=0.01, n_components=20)
    assert part.fit(X, y).predict(Xt).shape == (len(Xt),)
    assert part.ridge_.coef_.shape == (20,)


def _labels(y):
    return np.where(y > np.median(y), 1.0, -1.0)


def test_sh_svm_matches_cvxpy_primal():
    X, y, _, _ = _data(n=60, seed=5)
    yl = _labels(y)
    ny = IndefiniteNystroem(_sig, n_components=12, random_state=1, factorization="one-shot")
    Phi = ny.fit_transform(X)
    s = ny.signature_
    F = Phi * s
    reg = np.where(s > 0, 0.01, 0.2)
    sol = squared_hinge_svm(F, yl, reg)
    assert sol.converged
    z = cp.Variable(F.shape[1])
    b = cp.Variable()
    n = len(yl)
    obj = cp.sum_squares(cp.pos(1 - cp.multiply(yl, F @ z + b))) + n * cp.sum(
        cp.multiply(reg, cp.square(z))
    )
    cp.Problem(cp.Minimize(obj)).solve()
    assert sol.objective == pytest.approx(obj.value, rel=1e-6)
    np.testing.assert_allclose(sol.z, z.value, atol=1e-5)
    assert sol.intercept == pytest.approx(b.value, abs=1e-5)
    # No intercept variant.
    sol0 = squared_hinge_svm(F, yl, reg, fit_intercept=False)
    obj0 = cp.sum_squares(cp.pos(1 - cp.multiply(yl, F @ z))) + n * cp.sum(
        cp.multiply(reg, cp.square(z))
    )
    cp.Problem(cp.Minimize(obj0)).solve()
    assert sol0.objective == pytest.approx(obj0.value, rel=1e-6)


def test_exact_line_search_is_the_minimiser_of_the_piecewise_quadratic():
    rng = np.random.default_rng(0)
    for _ in range(50):
        a = rng.normal(size=40)
        c = rng.normal(size=40)
        c[rng.random(40) < 0.1] = 0.0
        q1 = abs(rng.normal())
        q0 = rng.normal()
        t = exact_line_search(a, c, q0, q1)
        grid = np.linspace(0, max(3.0, 2 * t), 20001)
        phi = np.array(
            [np.sum(np.maximum(a - g * c, 0) ** 2) + 2 * q0 * g + q1 * g**2 for g in grid]
        )
        phi_t = np.sum(np.maximum(a - t * c, 0) ** 2) + 2 * q0 * t + q1 * t**2
        assert phi_t <= phi.min() + 1e-9


@pytest.mark.parametrize("center", [False, True])
def test_sh_svm_low_rank_reproduces_full_rank(center):
    X, y, Xt, _ = _data(seed=6)
    yl = _labels(y)
    kw = {"lambda_plus": 0.01, "lambda_minus": 0.05, "center": center}
    full = KreinSquaredHingeSVC(kernel=_sig, **kw).fit(X, yl)
    low = KreinSquaredHingeSVC(kernel=_sig, **kw, **_all(len(X))).fit(X, yl)
    np.testing.assert_allclose(low.decision_function(Xt), full.decision_function(Xt), atol=1e-6)
    assert low.solution_.objective == pytest.approx(full.solution_.objective, rel=1e-8)
    # Precomputed kernel (full rank) gives the same model.
    pre = KreinSquaredHingeSVC(**kw).fit(_sig(X), yl)
    np.testing.assert_allclose(pre.decision_function(_sig(Xt, X)), full.decision_function(Xt))


@pytest.mark.parametrize("loss", ["squared_hinge", "squared_error"])
def test_sh_svm_hypergradient_matches_finite_differences(loss):
    X, y, Xv, yv = _data(n=70, n_test=40, seed=7)
    yl, yvl = _labels(y), np.where(yv > np.median(y), 1.0, -1.0)
    ny = IndefiniteNystroem(_sig, n_components=20, random_state=2, factorization="one-shot")
    Phi = ny.fit_transform(X)
    s = ny.signature_
    F, Fv = Phi * s, ny.transform(Xv) * s

    def val_loss(lp, lm):
        sol = squared_hinge_svm(F, yl, np.where(s > 0, lp, lm))
        out = Fv @ sol.z + sol.intercept
        if loss == "squared_hinge":
            return np.mean(np.maximum(1 - yvl * out, 0) ** 2), sol
        return np.mean((out - yvl) ** 2), sol

    lp, lm = 0.02, 0.07
    value, sol = val_loss(lp, lm)
    hg = squared_hinge_hypergradient(
        F, yl, s, sol, Fv, yvl, lambda_plus=lp, lambda_minus=lm, loss=loss
    )
    assert hg.loss == pytest.approx(value, rel=1e-12)
    h = 1e-7
    fd_p = (val_loss(lp + h, lm)[0] - val_loss(lp - h, lm)[0]) / (2 * h)
    fd_m = (val_loss(lp, lm + h)[0] - val_loss(lp, lm - h)[0]) / (2 * h)
    assert hg.grad["lambda_plus"] == pytest.approx(fd_p, rel=1e-5, abs=1e-8)
    assert hg.grad["lambda_minus"] == pytest.approx(fd_m, rel=1e-5, abs=1e-8)
    # Through the estimator.
    est = KreinSquaredHingeSVC(
        kernel=_sig, lambda_plus=lp, lambda_minus=lm, n_components=20, random_state=2
    ).fit(X, yl)
    hg2 = est.validation_hypergradient(Xv, yvl, X, yl, loss=loss)
    assert hg2.grad["lambda_plus"] == pytest.approx(fd_p, rel=1e-5, abs=1e-8)


def test_rediagonalize_and_lsm_on_factor():
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(50, 5))
    s = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    T, lam = rediagonalize(Phi, s)
    P = Phi @ T
    np.testing.assert_allclose(P.T @ P, np.diag(np.abs(lam)), atol=1e-10)
    np.testing.assert_allclose((P * np.sign(lam)) @ P.T, (Phi * s) @ Phi.T, atol=1e-10)
    assert np.sum(lam < 0) == 2  # Sylvester's law of inertia
    # LSM normal equations.
    y = rng.normal(size=50)
    z = lowrank_krein_ridge(P, np.sign(lam), y, lambda_plus=0.1, lambda_minus=0.3)
    F = P * np.sign(lam)
    reg = np.where(lam > 0, 0.1, 0.3)
    np.testing.assert_allclose((F.T @ F + 50 * np.diag(reg)) @ z, F.T @ y, atol=1e-10)


def test_low_rank_estimators_fit_with_names_and_landmark_schemes():
    X, y, Xt, yt = _data(n=200, n_test=100, seed=8)
    for scheme in ["uniform", "kmeans++", "leverage"]:
        reg = KreinRegressor(
            kernel="sigmoid",
            kernel_params=SIG,
            n_components=40,
            random_state=0,
            nystroem_params={"landmarks": scheme},
        ).fit(X, y)
        assert reg.coef_.shape[0] <= 40
        assert np.mean((reg.predict(Xt) - yt) ** 2) < np.var(yt)
    clf = KreinClassifier(kernel="sigmoid", kernel_params=SIG, n_components=30, random_state=0)
    yl = _labels(y)
    assert clf.fit(X, yl).score(Xt, np.where(yt > np.median(y), 1.0, -1.0)) > 0.6


def test_low_rank_errors():
    X, y, _, _ = _data(n=40)
    # kernel="precomputed" with n_components reads the landmark columns (as the proxy-kernel
    # SVMs do; tests/test_base.py compares it with the full-rank model).
    assert KreinRegressor(n_components=10).fit(_sig(X), y).predict(_sig(X[:3], X)).shape == (3,)
    with pytest.raises(ValueError, match="no low-rank variant"):
        KreinRegressor(kernel=_sig, formulation="shift", n_components=10).fit(X, y)
    with pytest.raises(ValueError, match="only -1.0 and"):
        squared_hinge_svm(np.ones((3, 2)), np.array([0.0, 1.0, 1.0]), np.ones(2))
    F = np.random.default_rng(0).normal(size=(60, 5))
    with pytest.warns(ConvergenceWarning, match="without a stable active set"):
        sol = squared_hinge_svm(F, np.sign(F[:, 0] + 0.3 * F[:, 1]), np.full(5, 1e-3), max_iter=1)
    assert not sol.converged


def test_readme_large_n_example_runs_at_small_n():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = text[text.index("## Large n") :]
    block = re.findall(r"```python\n(.*?)```", section, flags=re.S)[0]
    assert "n = 100_000" in block
    namespace: dict = {}
    small = block.replace("n = 100_000", "n = 1_500").replace("n_components=500", "n_components=80")
    exec(compile(small, "README", "exec"), namespace)  # noqa: S102
    assert namespace["clf"].score(namespace["X"], namespace["y"]) > 0.8
    assert namespace["Phi"].shape == (1500, namespace["ny"].n_components_)


def test_zero_factor_in_low_rank_solver_is_a_clear_error():
    y = np.arange(5.0)
    for F in (np.zeros((5, 0)), np.zeros((5, 2))):
        with pytest.raises(ValueError, match="numerically zero"):
            lowrank_variance_constrained(F, y, np.ones(F.shape[1]), 1.0)
