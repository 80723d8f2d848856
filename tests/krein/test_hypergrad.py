"""Hyperparameter gradients of paper 000, Sect. 3.3, against central finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.kernels import gaussian_combination_kernel
from indefsvm.krein import (
    KreinRegressor,
    center_kernel_test,
    center_kernel_train,
    tune_variance_constrained,
    validation_hypergradient,
)


def _affine_problem(seed, n=12, m=7):
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    K0, K1 = (A + A.T) / 2, (B + B.T) / 2
    V0, V1 = rng.normal(size=(m, n)), rng.normal(size=(m, n))
    return K0, K1, V0, V1, rng.normal(size=n), rng.normal(size=m)


def _loss(K0, K1, V0, V1, y, yv, method, theta, **kw):
    eta = theta["eta"]
    return validation_hypergradient(
        K0 + eta * K1,
        y,
        V0 + eta * V1,
        yv,
        formulation=method,
        intercept=0.3,
        lambda_plus=theta.get("lambda_plus"),
        lambda_minus=theta.get("lambda_minus"),
        lam=theta.get("lam"),
        r=theta["r"],
        dK={"eta": K1},
        dK_val={"eta": V1},
        **kw,
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["krein", "omcs"])
def test_gradient_matches_finite_differences(seed, method):
    K0, K1, V0, V1, y, yv = _affine_problem(seed)
    rng = np.random.default_rng(100 + seed)
    theta = {"r": float(rng.uniform(0.3, 1.5)), "eta": float(rng.uniform(-0.5, 0.5))}
    if method == "krein":
        theta.update(
            lambda_plus=float(rng.uniform(0.01, 0.3)), lambda_minus=float(rng.uniform(0.01, 0.3))
        )
    else:
        theta["lam"] = float(rng.uniform(0.01, 0.3))
    hg = _loss(K0, K1, V0, V1, y, yv, method, theta)
    for name in theta:
        h = 1e-6 * max(1.0, abs(theta[name]))
        up, down = dict(theta), dict(theta)
        up[name] += h
        down[name] -= h
        fd = (
            _loss(K0, K1, V0, V1, y, yv, method, up).loss
            - _loss(K0, K1, V0, V1, y, yv, method, down).loss
        ) / (2 * h)
        assert hg.grad[name] == pytest.approx(fd, rel=1e-5, abs=1e-6 * max(1.0, hg.loss)), name


def test_dmu_matches_finite_differences():
    K0, K1, V0, V1, y, yv = _affine_problem(9)
    theta = {"lambda_plus": 0.1, "lambda_minus": 0.05, "r": 0.9, "eta": 0.2}
    hg = _loss(K0, K1, V0, V1, y, yv, "krein", theta)
    for name in theta:
        h = 1e-6
        up, down = dict(theta), dict(theta)
        up[name] += h
        down[name] -= h
        fd = (
            _loss(K0, K1, V0, V1, y, yv, "krein", up).mu
            - _loss(K0, K1, V0, V1, y, yv, "krein", down).mu
        ) / (2 * h)
        assert hg.dmu[name] == pytest.approx(fd, rel=1e-5, abs=1e-7)


def test_paper_kernel_gradient_omits_projector_derivative():
    """Paper 000's kernel-parameter formula treats P_+- as constant; the exact one does not."""
    K0, K1, V0, V1, y, yv = _affine_problem(3)
    theta = {"lambda_plus": 0.05, "lambda_minus": 0.2, "r": 0.8, "eta": 0.3}
    exact = _loss(K0, K1, V0, V1, y, yv, "krein", theta).grad["eta"]
    paper = _loss(K0, K1, V0, V1, y, yv, "krein", theta, projector_derivative=False).grad["eta"]
    h = 1e-6
    up, down = dict(theta, eta=0.3 + h), dict(theta, eta=0.3 - h)
    fd = (
        _loss(K0, K1, V0, V1, y, yv, "krein", up).loss
        - _loss(K0, K1, V0, V1, y, yv, "krein", down).loss
    ) / (2 * h)
    assert exact == pytest.approx(fd, rel=1e-6)
    assert abs(paper - fd) > 0.05 * abs(fd)


def test_gradient_of_a_real_kernel_parameter_with_centering():
    rng = np.random.default_rng(5)
    X, Xv = rng.normal(size=(30, 2)), rng.normal(size=(10, 2))
    y, yv = np.sin(X[:, 0]), np.sin(Xv[:, 0])

    def pieces(s1):
        K = gaussian_combination_kernel(X, sigma1=s1, sigma2=3.0, sigma3=1.5)
        Kv = gaussian_combination_kernel(Xv, X, sigma1=s1, sigma2=3.0, sigma3=1.5)
        Kc, col, grand = center_kernel_train(K)
        return Kc, center_kernel_test(Kv, col, grand)

    def dpieces(s1):
        # Analytic derivative of exp(-d^2/s1) in s1: (d^2/s1^2) exp(-d^2/s1).
        d2 = ((X[:, None] - X[None]) ** 2).sum(-1)
        d2v = ((Xv[:, None] - X[None]) ** 2).sum(-1)
        dK, dKv = d2 / s1**2 * np.exp(-d2 / s1), d2v / s1**2 * np.exp(-d2v / s1)
        dKc, dcol, dgrand = center_kernel_train(dK)
        return dKc, center_kernel_test(dKv, dcol, dgrand)

    def run(s1):
        Kc, Kvc = pieces(s1)
        dK, dKv = dpieces(s1)
        return validation_hypergradient(
            Kc,
            y - y.mean(),
            Kvc,
            yv,
            lambda_plus=1e-3,
            lambda_minus=1e-2,
            r=0.5,
            intercept=y.mean(),
            dK={"s1": dK},
            dK_val={"s1": dKv},
        )

    s1, h = 0.8, 1e-6
    fd = (run(s1 + h).loss - run(s1 - h).loss) / (2 * h)
    assert run(s1).grad["s1"] == pytest.approx(fd, rel=1e-5)
    # The validation loss equals that of the estimator with the same hyperparameters.
    est = KreinRegressor(
        lambda kA, kB=None: gaussian_combination_kernel(kA, kB, sigma1=s1, sigma2=3.0, sigma3=1.5),
        lambda_plus=1e-3,
        lambda_minus=1e-2,
        r=0.5,
    ).fit(X, y)
    assert run(s1).loss == pytest.approx(np.mean((est.predict(Xv) - yv) ** 2), rel=1e-10)


def test_hard_case_is_reported():
    K = np.diag([2.0, 1.0, -1.0])
    y = np.array([0.0, 1e-3, 1e-3])  # vanishes on the bottom of D = n lambda / |sigma|
    with pytest.raises(ValueError, match="hard case"):
        validation_hypergradient(
            K, y, np.ones((2, 3)), np.ones(2), lambda_plus=1.0, lambda_minus=1.0, r=1.0
        )


def test_tuner_decreases_inner_validation_loss_and_is_seeded():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=60)

    def gc(A, B=None, sigma1=1.0):
        return gaussian_combination_kernel(A, B, sigma1=sigma1, sigma2=3.0, sigma3=1.5)

    res = tune_variance_constrained(
        X,
        y,
        kernel=gc,
        kernel_params={"sigma1": 1.0},
        tune_kernel_params=["sigma1"],
        random_state=1,
        max_iter=15,
    )
    assert res.loss <= res.history[0]
    assert set(res.params) == {"lambda_plus", "lambda_minus", "r", "sigma1"}
    again = tune_variance_constrained(
        X,
        y,
        kernel=gc,
        kernel_params={"sigma1": 1.0},
        tune_kernel_params=["sigma1"],
        random_state=1,
        max_iter=15,
    )
    assert again.params == res.params
    pre = tune_variance_constrained(gc(X), y, formulation="omcs", random_state=1, max_iter=10)
    assert set(pre.params) == {"lam", "r"} and pre.loss <= pre.history[0]
    with pytest.raises(ValueError, match="callable kernel"):
        tune_variance_constrained(gc(X), y, tune_kernel_params=["sigma1"])


@pytest.mark.parametrize(("method", "transform"), [("krein", None), ("omcs", "clip")])
def test_tuner_objective_equals_estimator_cross_validation(method, transform):
    """The tuner's inner loss is the CV error of KreinRegressor on the same folds."""
    from sklearn.model_selection import KFold

    rng = np.random.default_rng(2)
    X = rng.normal(size=(45, 2))
    y = np.cos(X[:, 0]) + 0.1 * rng.normal(size=45)
    K = gaussian_combination_kernel(X, sigma1=0.5, sigma2=3.0, sigma3=1.5)
    res = tune_variance_constrained(
        K,
        y,
        formulation=method,
        transform=transform,
        lambda_plus=0.02,
        lambda_minus=0.03,
        lam=0.02,
        r=0.4,
        random_state=3,
        max_iter=1,
    )
    est = KreinRegressor(
        formulation=transform or method, lambda_plus=0.02, lambda_minus=0.03, lam=0.02, r=0.4
    )
    errs = []
    for tr, va in KFold(3, shuffle=True, random_state=3).split(y):
        est.fit(K[np.ix_(tr, tr)], y[tr])
        errs.append(np.mean((est.predict(K[np.ix_(va, tr)]) - y[va]) ** 2))
    assert res.history[0] == pytest.approx(np.mean(errs), rel=1e-9)


def test_old_keyword_method_still_works_with_a_future_warning():
    """``method=`` was renamed ``formulation=`` (the estimators' name, issue 23)."""
    from indefsvm.krein.hypergrad import validation_hypergradient

    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 2))
    K = np.tanh(X @ X.T - 0.3)
    y = X[:, 0] - X[:, 0].mean()
    Kv, yv = K[:4], y[:4]
    new = validation_hypergradient(K, y, Kv, yv, formulation="omcs", lam=0.1, r=0.5)
    with pytest.warns(FutureWarning, match="method= is now formulation="):
        old = validation_hypergradient(K, y, Kv, yv, method="omcs", lam=0.1, r=0.5)
    assert old.loss == new.loss
