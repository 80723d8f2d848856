"""Baselines against scikit-learn's LIBSVM on kernels transformed here with dense numpy, and
Mod SVM against cvxpy solving the Lin & Lin primal directly."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from conftest import sigmoid_problem
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC

from indefsvm.metrics import average_scorer
from indefsvm.proxy.baselines import DirectSVC, IndefiniteKernelWarning, ModSVC, SpectrumSVC


def split(n_train=50, n_test=20, seed=0):
    K, y = sigmoid_problem(n_train + n_test, seed)
    tr, te = np.arange(n_train), np.arange(n_train, n_train + n_test)
    return K[np.ix_(tr, tr)], y[tr], K[np.ix_(te, tr)], y[te]


def dense_transform(K, method):
    """Transformed training kernel and test-row map written out with numpy (no package code)."""
    lam, U = np.linalg.eigh(K)
    n = K.shape[0]
    if method == "clip":
        return (U * np.maximum(lam, 0)) @ U.T, U @ np.diag((lam > 0) * 1.0) @ U.T
    if method == "flip":
        return (U * np.abs(lam)) @ U.T, U @ np.diag(np.sign(lam)) @ U.T
    if method == "shift":
        return K - min(lam[0], 0.0) * np.eye(n), np.eye(n)
    return K @ K, K  # square: K^2, test row k -> K k


@pytest.mark.parametrize("method", ["clip", "flip", "shift", "square"])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_spectrum_svc_matches_libsvm_on_transformed_kernel(method, class_weight):
    K, y, Kte, yte = split(seed=1)
    Kt, T = dense_transform(K, method)
    ref = SVC(kernel="precomputed", C=2.0, tol=1e-10, class_weight=class_weight).fit(Kt, y)
    ours = SpectrumSVC(method, C=2.0, tol=1e-10, class_weight=class_weight).fit(K, y)
    d_ref = ref.decision_function(Kte @ T)
    assert np.allclose(ours.decision_function(Kte), d_ref, atol=1e-6 * max(1, abs(d_ref).max()))
    assert np.array_equal(ours.predict(Kte), ref.predict(Kte @ T))
    assert np.allclose(ours.transform_.kernel, Kt, atol=1e-9 * np.abs(Kt).max())


def test_spectrum_svc_custom_shift_and_bad_transform():
    K, y, Kte, _ = split(seed=2)
    ref = SVC(kernel="precomputed", C=1.0, tol=1e-10).fit(K + 5.0 * np.eye(len(y)), y)
    ours = SpectrumSVC("shift", shift=5.0, tol=1e-10).fit(K, y)
    assert np.allclose(ours.decision_function(Kte), ref.decision_function(Kte), atol=1e-6)
    with pytest.raises(ValueError, match="'spectrum' parameter of SpectrumSVC must be a str among"):
        SpectrumSVC("denoise").fit(K, y)


def test_direct_svc_matches_libsvm_on_raw_kernel_and_warns():
    K, y, Kte, _ = split(seed=3)
    ref = SVC(kernel="precomputed", C=1.5, tol=1e-10).fit(K, y)
    with pytest.warns(IndefiniteKernelWarning, match="stationary point"):
        ours = DirectSVC(C=1.5, tol=1e-10).fit(K, y)
    assert ours.lambda_min_ < 0
    assert np.allclose(ours.decision_function(Kte), ref.decision_function(Kte), atol=1e-6)
    psd = K @ K
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndefiniteKernelWarning)
        DirectSVC().fit(psd, y)


def test_mod_svc_solves_lin_lin_primal():
    K, y, Kte, _ = split(seed=4)
    C = 2.0
    ours = ModSVC(C=C, tol=1e-12).fit(K, y)
    n = len(y)
    a, b, xi = cp.Variable(n), cp.Variable(), cp.Variable(n)
    constraints = [cp.multiply(y, K @ cp.multiply(y, a) + b) >= 1 - xi, xi >= 0]
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(a) + C * cp.sum(xi)), constraints)
    prob.solve(solver="CLARABEL")
    expected = Kte @ (y * a.value) + b.value
    assert np.allclose(ours.decision_function(Kte), expected, atol=1e-4)
    assert np.allclose(ours.alpha_, a.value, atol=1e-4)
    primal = 0.5 * ours.alpha_ @ ours.alpha_ + C * np.sum(
        np.maximum(0, 1 - y * (K @ (y * ours.alpha_) + ours.intercept_))
    )
    assert primal == pytest.approx(prob.value, rel=1e-5)


def test_string_labels_and_class_weight_dict():
    K, y, Kte, _ = split(seed=5)
    names = np.where(y > 0, "yes", "no")
    ours = SpectrumSVC("clip", class_weight={"yes": 3.0}, tol=1e-10).fit(K, names)
    Kt, T = dense_transform(K, "clip")
    ref = SVC(kernel="precomputed", class_weight={"yes": 3.0}, tol=1e-10).fit(Kt, names)
    assert ours.classes_.tolist() == ["no", "yes"]
    assert np.array_equal(ours.predict(Kte), ref.predict(Kte @ T))


@pytest.mark.parametrize("estimator", [SpectrumSVC("flip"), ModSVC(), DirectSVC()])
def test_gridsearch_with_precomputed_kernel(estimator):
    K, y, Kte, yte = split(80, 30, seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IndefiniteKernelWarning)
        search = GridSearchCV(estimator, {"C": [0.1, 1.0, 10.0]}, cv=3, scoring=average_scorer)
        search.fit(K, y)
    assert search.best_score_ > 0.6
    assert search.predict(Kte).shape == (30,)


def test_kernel_from_features_equals_precomputed():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 1] > 0, 1, -1)
    K = np.tanh(0.5 * X @ X.T + 0.1)
    a = SpectrumSVC("clip", kernel="sigmoid", gamma=0.5, coef0=0.1).fit(X[:30], y[:30])
    b = SpectrumSVC("clip").fit(K[:30, :30], y[:30])
    assert np.allclose(a.decision_function(X[30:]), b.decision_function(K[30:, :30]))


def test_bad_input():
    K, y, _, _ = split(seed=8)
    with pytest.raises(ValueError, match="two classes"):
        ModSVC().fit(K, np.zeros(len(y)))
    with pytest.raises(ValueError, match="'C' parameter of ModSVC must be a float in the range"):
        ModSVC(C=-1).fit(K, y)
    with pytest.raises(ValueError, match="square"):
        ModSVC().fit(K[:, :10], y)


@pytest.mark.slow
@pytest.mark.parametrize("estimator", [SpectrumSVC(), ModSVC(), DirectSVC()])
def test_check_estimator(estimator):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert not failed, failed
