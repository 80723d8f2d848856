"""A training input passed to ``predict`` gets its row of the learned kernel: ``(K* u)_i + b``.

The reference is a dense eigendecomposition of ``M = K0 + u u'/(4 rho)`` (``K* = P_+ M``) at the
fitted ``alpha``, independent of the solvers' rank-one engine. Before: ``predict`` applied the
new-point map ``P_+ k_x`` to training inputs too, which drops the rank-one term; with
``K0 = -RBF`` it was 0 % accurate on its own training points while ``K* u + b`` was right.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from indefsvm import IndefiniteOneClassSVM, IndefiniteSVC, IndefiniteSVR, PerturbSVC
from indefsvm.krein import KreinSVC


def _kstar(K: np.ndarray, u: np.ndarray, rho: float) -> np.ndarray:
    M = K + np.outer(u, u) / (4.0 * rho)
    lam, V = np.linalg.eigh(M)
    keep = lam > 0
    return (V[:, keep] * lam[keep]) @ V[:, keep].T


def _data(n: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.2 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def test_negative_definite_kernel_classifies_its_training_points_by_k_star_and_warns():
    X, y = _data()
    K = -rbf_kernel(X, gamma=0.5)
    rho = 1.0
    with pytest.warns(UserWarning, match="no positive eigenvalue"):
        clf = IndefiniteSVC(C=1.0, rho=rho, tol=1e-8).fit(K, y)
    u = y * clf.alpha_
    reference = _kstar(K, u, rho) @ u + clf.intercept_
    d = clf.decision_function(K)
    scale = float(np.max(np.abs(reference)))
    np.testing.assert_allclose(d, reference, rtol=0, atol=1e-8 * scale)
    assert np.mean(clf.predict(K) == y) == np.mean(np.sign(reference) == y)
    assert np.mean(clf.predict(K) == y) >= 0.9  # 0 % before


def test_rank_one_negative_kernel_training_decisions():
    X, y = _data(seed=1)
    v = np.random.default_rng(2).normal(size=40)
    K = -np.outer(v, v)
    with pytest.warns(UserWarning, match="no positive eigenvalue"):
        clf = IndefiniteSVC(C=1.0, rho=0.5, tol=1e-8).fit(K, y)
    u = y * clf.alpha_
    reference = _kstar(K, u, 0.5) @ u + clf.intercept_
    np.testing.assert_allclose(
        clf.decision_function(K), reference, rtol=0, atol=1e-8 * np.max(np.abs(reference))
    )


@pytest.mark.parametrize("kernel", ["precomputed", "sigmoid"])
def test_indefinite_kernel_training_and_new_points(kernel):
    """Training inputs: rows of K*; new inputs: P_+ k_x (no rank-one term). Both map one way
    however the input comes (kernel rows or features)."""
    X, y = _data(60, 3)
    Xt = np.random.default_rng(4).normal(size=(15, 2))
    K, Kt = np.tanh(0.7 * X @ X.T - 0.3), np.tanh(0.7 * Xt @ X.T - 0.3)
    rho = 0.3
    params = {} if kernel == "precomputed" else {"kernel": "sigmoid", "gamma": 0.7, "coef0": -0.3}
    clf = IndefiniteSVC(C=2.0, rho=rho, tol=1e-9, **params)
    train, test = (K, Kt) if kernel == "precomputed" else (X, Xt)
    clf.fit(train, y)
    u = y * clf.alpha_
    M = K + np.outer(u, u) / (4 * rho)
    lam, V = np.linalg.eigh(M)
    P = V[:, lam >= 0] @ V[:, lam >= 0].T
    scale = float(np.max(np.abs(P @ M @ u)))
    np.testing.assert_allclose(
        clf.decision_function(train), P @ M @ u + clf.intercept_, rtol=0, atol=1e-8 * scale
    )
    np.testing.assert_allclose(
        clf.decision_function(test), Kt @ P @ u + clf.intercept_, rtol=0, atol=1e-8 * scale
    )
    # Mixed input: training rows among new ones, in any order.
    mixed = np.vstack([test[:5], train[[7, 3]], test[5:]])
    d = clf.decision_function(mixed)
    np.testing.assert_allclose(d[5:7], (P @ M @ u)[[7, 3]] + clf.intercept_, atol=1e-8 * scale)
    np.testing.assert_allclose(d[:5], (Kt @ P @ u)[:5] + clf.intercept_, atol=1e-8 * scale)


def test_duplicated_training_inputs_get_the_mean_of_their_k_star_rows():
    X, y = _data(30, 5)
    X[10] = X[3]  # the same point twice (labels may differ)
    K = np.tanh(0.6 * X @ X.T - 0.2)
    clf = IndefiniteSVC(C=1.0, rho=0.5, tol=1e-9, kernel="sigmoid", gamma=0.6, coef0=-0.2)
    clf.fit(X, y)
    u = y * clf.alpha_
    g = _kstar(K, u, 0.5) @ u
    d = clf.decision_function(X[[3]])
    assert abs(d[0] - ((g[3] + g[10]) / 2 + clf.intercept_)) <= 1e-8 * np.max(np.abs(g))


def test_low_rank_training_decisions_are_rows_of_the_low_rank_k_star():
    X, y = _data(80, 6)
    rho = 0.5
    clf = IndefiniteSVC(
        C=1.0, rho=rho, tol=1e-9, kernel="sigmoid", gamma=0.5, coef0=-0.4, n_components=20,
        random_state=0,
    ).fit(X, y)  # fmt: skip
    nys = clf.nystroem_
    Phi = nys.transform(X)
    K0 = (Phi * nys.signature_) @ Phi.T  # the Nystroem kernel the problem was built on
    u = y * clf.alpha_
    g = _kstar(K0, u, rho) @ u
    np.testing.assert_allclose(
        clf.decision_function(X), g + clf.intercept_, rtol=0, atol=1e-7 * np.max(np.abs(g))
    )


def test_multiclass_training_points_use_each_pairs_k_star_rows():
    rng = np.random.default_rng(8)
    centres = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    y = np.repeat(["a", "b", "c"], 15)
    X = centres[np.repeat([0, 1, 2], 15)] + rng.normal(scale=0.8, size=(45, 2))
    K = np.tanh(0.4 * X @ X.T - 0.2)
    rho = 0.5
    clf = IndefiniteSVC(C=1.0, rho=rho, tol=1e-9, decision_function_shape="ovo").fit(K, y)
    D = clf.decision_function(K)
    for col, (est, idx) in enumerate(zip(clf.estimators_, clf.ovo_["indices"], strict=True)):
        Kp = K[np.ix_(idx, idx)]
        ypm = np.where(y[idx] == est.classes_[1], 1.0, -1.0)
        u = ypm * est.alpha_
        g = _kstar(Kp, u, rho) @ u + est.intercept_
        np.testing.assert_allclose(D[idx, col], g, rtol=0, atol=1e-8 * np.max(np.abs(g)))
        # the points of the third class are new points for this pair
        other = np.setdiff1d(np.arange(45), idx)
        plain = est.decision_function(K[np.ix_(other, idx)])
        np.testing.assert_allclose(D[other, col], plain, rtol=0, atol=1e-12 * np.max(np.abs(g)))


def test_svr_training_predictions_are_rows_of_k_star():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(40, 2))
    t = np.sin(X[:, 0])
    K = np.tanh(0.5 * X @ X.T - 0.3)
    reg = IndefiniteSVR(C=1.0, rho=0.4, epsilon=0.05, tol=1e-9).fit(K, t)
    u = reg.alpha_
    g = _kstar(K, u, 0.4) @ u + reg.intercept_
    np.testing.assert_allclose(reg.predict(K), g, rtol=0, atol=1e-8 * np.max(np.abs(g)))


def test_perturb_training_decisions_include_the_perturbation():
    X, y = _data(40, 10)
    K = rbf_kernel(X, gamma=0.5)
    clf = PerturbSVC(C=1.0, rho=0.5, tol=1e-9).fit(K, y)
    u = y * clf.alpha_
    g = (K + np.outer(u, u) / 2.0) @ u + clf.intercept_
    np.testing.assert_allclose(clf.decision_function(K), g, rtol=0, atol=1e-8 * np.max(np.abs(g)))


def test_oneclass_nu_property_with_a_rank_one_heavy_kernel():
    X, _ = _data(60, 11)
    K = np.tanh(0.8 * X @ X.T - 0.5)
    nu = 0.2
    oc = IndefiniteOneClassSVM(nu=nu, rho=0.05, tol=1e-9).fit(K)
    assert np.mean(oc.predict(K) == -1) <= nu
    a = oc.alpha_
    np.testing.assert_allclose(
        oc.score_samples(K), _kstar(K, a, 0.05) @ a, rtol=0, atol=1e-8 * np.max(np.abs(K @ a))
    )


def _zero_kernel(A, B=None):
    return np.zeros((len(A), len(A if B is None else B)))


@pytest.mark.parametrize(
    "make",
    [
        lambda: IndefiniteSVC(),
        lambda: PerturbSVC(),
        lambda: IndefiniteSVR(),
        lambda: IndefiniteOneClassSVM(),
        lambda: IndefiniteSVC(n_components=5, kernel=_zero_kernel),
        lambda: KreinSVC(),
    ],
)
def test_zero_kernel_is_refused_by_every_estimator(make):
    X, y = _data(20, 12)
    est = make()
    data = X if getattr(est, "kernel", "precomputed") != "precomputed" else np.zeros((20, 20))
    target = None if isinstance(est, IndefiniteOneClassSVM) else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="zero"):
            est.fit(data, target)


def test_multiclass_duplicated_training_inputs_get_the_mean_of_each_pairs_rows():
    rng = np.random.default_rng(13)
    centres = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    y = np.repeat(["a", "b", "c"], 12)
    X = centres[np.repeat([0, 1, 2], 12)] + rng.normal(scale=0.8, size=(36, 2))
    X[20] = X[3]  # a point of class a repeated with label b
    K = np.tanh(0.4 * X @ X.T - 0.2)
    clf = IndefiniteSVC(rho=0.5, tol=1e-9, decision_function_shape="ovo").fit(K, y)
    D = clf.decision_function(K[[3, 20]])
    assert np.array_equal(D[0], D[1])  # the same input, the same decisions
    for col, (est, idx) in enumerate(zip(clf.estimators_, clf.ovo_["indices"], strict=True)):
        Kp = K[np.ix_(idx, idx)]
        ypm = np.where(y[idx] == est.classes_[1], 1.0, -1.0)
        u = ypm * est.alpha_
        g = _kstar(Kp, u, 0.5) @ u + est.intercept_
        inside = [int(np.flatnonzero(idx == i)[0]) for i in (3, 20) if i in idx]
        assert abs(D[0, col] - g[inside].mean()) <= 1e-8 * np.max(np.abs(g))
