"""Extensions of paper 004 Sect. 4: SVR, one-class, PerturbSVM, componentwise penalties.

Each variant is checked against an independent formulation: the kernel-side min-max written as
one SDP in cvxpy (tests/reference.py), or eq. (22) written directly as a convex program.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import sigmoid_problem
from reference import (
    oneclass_sdp,
    perturb_direct,
    psd_part,
    svc_sdp,
    svr_sdp,
)
from sklearn.exceptions import ConvergenceWarning

import indefsvm
from indefsvm.proxy.problems import make_problem


def regression_data(n, seed):
    K0, _ = sigmoid_problem(n, seed)
    rng = np.random.default_rng(seed + 100)
    y = np.sin(np.arange(n) / 3.0) + 0.1 * rng.normal(size=n)
    return K0, y


@pytest.mark.parametrize("C,eps,rho", [(1.0, 0.1, 1.0), (3.0, 0.3, 0.1)])
def test_svr_matches_sdp(C, eps, rho):
    K0, y = regression_data(12, 0)
    opt, K_sdp = svr_sdp(K0, y, C, eps, rho)
    res = indefsvm.solve(K0, y, problem="svr", C=C, epsilon=eps, rho=rho, tol=1e-9)
    assert res.status == "converged" and res.problem == "svr"
    assert abs(res.objective - opt) <= 1e-6 * max(1.0, abs(opt))
    assert np.allclose(res.kernel, K_sdp, atol=1e-4 * np.abs(K_sdp).max())
    assert abs(res.alpha.sum()) < 1e-10 and np.abs(res.alpha).max() <= C + 1e-12
    # eq. (17) literally, with a dense eigendecomposition
    a = res.alpha
    Ks = psd_part(K0 + np.outer(a, a) / (4 * rho))
    f = y @ a - eps * np.abs(a).sum() - 0.5 * a @ Ks @ a + rho * np.sum((Ks - K0) ** 2)
    assert res.objective == pytest.approx(f, rel=1e-10)


@pytest.mark.parametrize("nu,rho", [(0.5, 1.0), (0.2, 0.05)])
def test_oneclass_matches_sdp(nu, rho):
    K0, _ = sigmoid_problem(12, 1)
    opt, K_sdp = oneclass_sdp(K0, nu, rho)
    res = indefsvm.solve(K0, problem="oneclass", nu=nu, rho=rho, tol=1e-9)
    assert res.status == "converged" and res.problem == "oneclass"
    assert abs(res.objective - opt) <= 1e-6 * max(1.0, abs(opt))
    assert np.allclose(res.kernel, K_sdp, atol=1e-4 * np.abs(K_sdp).max())
    assert res.alpha.sum() == pytest.approx(1.0, abs=1e-12)
    assert res.alpha.max() <= 1 / (nu * 12) + 1e-12


def test_componentwise_rho_matches_sdp_and_constant_vector_matches_scalar():
    K0, y = sigmoid_problem(12, 2)
    rng = np.random.default_rng(0)
    rho = rng.uniform(0.2, 3.0, size=12)
    H_sqrt = np.outer(rho, rho) ** 0.25  # sqrt(H_ij) with H_ij = sqrt(rho_i rho_j)
    opt, K_sdp = svc_sdp(K0, y, 1.0, None, H_sqrt=H_sqrt)
    res = indefsvm.solve(K0, y, C=1.0, rho=rho, tol=1e-9)
    assert abs(res.objective - opt) <= 1e-6 * max(1.0, abs(opt))
    assert np.allclose(res.kernel, K_sdp, atol=1e-4 * np.abs(K_sdp).max())
    # eq. (24) for the returned alpha, independently
    W = np.sqrt(rho)
    u = y * res.alpha
    Mw = np.sqrt(W)[:, None] * (K0 + np.outer(u / W, u / W) / 4) * np.sqrt(W)[None, :]
    K24 = psd_part(Mw) / np.sqrt(W)[:, None] / np.sqrt(W)[None, :]
    assert np.allclose(res.kernel, K24, atol=1e-10)
    for kind, extra in [("svc", {}), ("svr", {"epsilon": 0.2}), ("oneclass", {"nu": 0.4})]:
        target = None if kind == "oneclass" else (y if kind == "svc" else K0[0])
        scalar = indefsvm.solve(K0, target, problem=kind, rho=0.7, tol=1e-10, **extra)
        vector = indefsvm.solve(K0, target, problem=kind, rho=np.full(12, 0.7), tol=1e-10, **extra)
        assert vector.objective == pytest.approx(scalar.objective, rel=1e-9)
        assert np.allclose(vector.kernel, scalar.kernel, atol=1e-7)


def test_componentwise_svr_and_oneclass_match_sdp():
    K0, y = regression_data(10, 3)
    rho = np.linspace(0.3, 2.0, 10)
    H_sqrt = np.outer(rho, rho) ** 0.25
    opt, _ = svr_sdp(K0, y, 1.0, 0.1, None, H_sqrt=H_sqrt)
    res = indefsvm.solve(K0, y, problem="svr", C=1.0, epsilon=0.1, rho=rho, tol=1e-9)
    assert abs(res.objective - opt) <= 1e-6 * max(1.0, abs(opt))
    opt, _ = oneclass_sdp(K0, 0.5, None, H_sqrt=H_sqrt)
    res = indefsvm.solve(K0, problem="oneclass", nu=0.5, rho=rho, tol=1e-9)
    assert abs(res.objective - opt) <= 1e-6 * max(1.0, abs(opt))


def test_perturb_matches_direct_eq22_and_refuses_indefinite():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(25, 4))
    K0 = X @ X.T
    y = np.where(X[:, 1] + 0.5 * rng.normal(size=25) > 0, 1.0, -1.0)
    opt, _ = perturb_direct(K0, y, 1.0, 0.3)
    res = indefsvm.solve(K0, y, problem="perturb", C=1.0, rho=0.3, tol=1e-9)
    assert res.problem == "perturb" and res.status == "converged"
    assert abs(res.objective - opt) <= 1e-6 * max(1.0, abs(opt))
    u = y * res.alpha
    assert np.allclose(res.kernel, K0 + np.outer(u, u) / 1.2, atol=1e-12)  # eq. (21)
    # same optimum as the general problem (K0 PSD: eq. 7 reduces to eq. 22)
    general = indefsvm.solve(K0, y, C=1.0, rho=0.3, tol=1e-9)
    assert general.objective == pytest.approx(res.objective, rel=1e-7)
    Kind, yind = sigmoid_problem(10, 5)
    with pytest.raises(ValueError, match="needs a PSD kernel"):
        indefsvm.solve(Kind, yind, problem="perturb")
    # rounding-level negative eigenvalues are accepted
    Q, _ = np.linalg.qr(rng.normal(size=(10, 10)))
    d = np.linspace(0, 5, 10)
    d[0] = -1e-13
    indefsvm.solve((Q * d) @ Q.T, yind, problem="perturb")


@pytest.mark.parametrize("kind", ["svr", "oneclass"])
def test_gap_never_below_true_suboptimality(kind):
    K0, y = regression_data(12, 6)
    if kind == "svr":
        opt, _ = svr_sdp(K0, y, 2.0, 0.1, 0.5)
        kwargs = {"problem": "svr", "C": 2.0, "epsilon": 0.1}
        target = y
    else:
        opt, _ = oneclass_sdp(K0, 0.3, 0.5)
        kwargs = {"problem": "oneclass", "nu": 0.3}
        target = None
    slack = 1e-6 * max(1.0, abs(opt))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = indefsvm.solve(
            K0, target, rho=0.5, tol=1e-10, max_iter=200, **kwargs, options={"libsvm_every": 9}
        )
    h = res.history
    assert np.all(h["upper_bound"] >= opt - slack)
    assert np.all(h["best_objective"] <= opt + slack)
    lib = h["libsvm_upper_bound"][np.isfinite(h["libsvm_upper_bound"])]
    assert lib.size >= 1 and np.all(lib >= opt - slack)


def test_large_rho_gives_clipped_kernel_libsvm_solutions():
    """rho -> inf: SVR / one-class on (K0)_+ (paper 004 Sect. 2.3), compared with LIBSVM.

    The objective carries the constant-like term rho ||(K0)_-||^2, so the dual values of the
    clipped-kernel problems (eq. 14 and 18) are compared, not the objectives.
    """
    # scikit-learn's own LIBSVM build: a reference independent of indefsvm's LIBSVM wrapper
    from sklearn.svm import SVR, OneClassSVM

    K0, y = regression_data(30, 7)
    Kp = psd_part(K0)
    res = indefsvm.solve(
        K0, y, problem="svr", C=1.0, epsilon=0.1, rho=1e6, tol=1e-14, max_iter=50000
    )
    fit = SVR(kernel="precomputed", C=1.0, epsilon=0.1, tol=1e-12).fit(Kp, y)
    lib_coef = np.zeros(len(y))
    lib_coef[fit.support_] = fit.dual_coef_.ravel()  # alpha - alpha*

    def svr_dual(a):
        return y @ a - 0.1 * np.abs(a).sum() - 0.5 * a @ Kp @ a

    assert svr_dual(res.alpha) == pytest.approx(svr_dual(lib_coef), rel=1e-5)
    assert np.allclose(Kp @ res.alpha, Kp @ lib_coef, atol=5e-3)
    # one-class on a noisy Gaussian kernel, so that the clipped kernel has no null space
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 2))
    noise = rng.normal(size=(30, 30)) * 0.05
    K0 = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, axis=-1)) + (noise + noise.T) / 2
    Kp = psd_part(K0)
    assert np.linalg.eigvalsh(K0)[0] < -0.05
    res = indefsvm.solve(K0, problem="oneclass", nu=0.3, rho=1e6, tol=1e-14, max_iter=50000)
    fit = OneClassSVM(kernel="precomputed", nu=0.3, tol=1e-12).fit(Kp)
    lib_alpha = np.zeros(30)
    # LIBSVM's one-class alphas sum to nu*n
    lib_alpha[fit.support_] = fit.dual_coef_.ravel() / (0.3 * 30)
    assert lib_alpha.sum() == pytest.approx(1.0)
    assert res.alpha @ Kp @ res.alpha == pytest.approx(lib_alpha @ Kp @ lib_alpha, rel=1e-5)


def test_svr_and_oneclass_gradients_match_finite_differences():
    K0, y = regression_data(10, 8)
    rng = np.random.default_rng(1)
    for kind, kw in [("svr", {"epsilon": 0.0}), ("oneclass", {})]:
        target = y if kind == "svr" else None
        prob = make_problem(kind, K0, target, rho=0.4, **kw)
        a = rng.normal(size=10) * 0.1
        g = prob.gradient(a)
        h = 1e-6
        fd = [(prob.objective(a + h * e) - prob.objective(a - h * e)) / (2 * h) for e in np.eye(10)]
        assert np.allclose(g, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        ((None,), {"problem": "svc"}, "needs y"),
        ((None,), {"problem": "oneclass", "nu": 0.0}, "nu must be in"),
        ((None,), {"problem": "oneclass", "nu": 1.5}, "nu must be in"),
        (("y",), {"problem": "svr", "epsilon": -1.0}, "epsilon must be"),
        (("y",), {"problem": "svr", "class_weight": "balanced"}, "class_weight does not apply"),
        (("y",), {"problem": "lasso"}, "problem must be one of"),
        (("y",), {"rho": np.ones(3)}, "vector of length n"),
        (("y",), {"rho": -np.ones(10)}, "rho must be finite and > 0"),
        (("y",), {"problem": "svc", "epsilon": 0.3}, "epsilon does not apply"),
        ((None,), {"problem": "oneclass", "class_weight": "balanced"}, "class_weight"),
    ],
)
def test_extension_input_errors(args, kwargs, match):
    K0, y = sigmoid_problem(10, 9)
    target = y if args[0] == "y" else None
    with pytest.raises(ValueError, match=match):
        indefsvm.solve(K0, target, **kwargs)
