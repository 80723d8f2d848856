"""``sample_weight`` in ``fit``: LIBSVM's instance weights, ``C_i = C * w_i``.

References: scikit-learn's ``SVC``/``SVR``/``OneClassSVM`` (its LIBSVM takes instance weights)
on a PSD kernel with ``rho -> inf``, where the proxy kernel is the kernel itself; each
one-vs-one pair against a binary fit on its rows and weights. Before: ``fit(..., sample_weight=w)``
was a bare ``TypeError`` from an internal mix-in.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC, SVR, OneClassSVM

from indefsvm import (
    DirectSVC,
    IndefiniteOneClassSVM,
    IndefiniteSVC,
    IndefiniteSVR,
    ModSVC,
    PerturbSVC,
    SpectrumSVC,
)
from indefsvm.krein import (
    KreinClassifier,
    KreinKernelRidge,
    KreinRegressor,
    KreinSquaredHingeSVC,
    KreinSVC,
    OngSubspaceRegressor,
    SimilarityRidge,
)


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=n) > 0, 1, -1)
    Xt = rng.normal(size=(25, 2))
    w = rng.uniform(0.2, 3.0, size=n)
    return X, y, Xt, w


def test_svc_large_rho_is_libsvm_with_instance_weights():
    X, y, Xt, w = _data()
    K, Kt = rbf_kernel(X, gamma=0.5), rbf_kernel(Xt, X, gamma=0.5)
    ours = IndefiniteSVC(C=1.0, rho=1e9, tol=1e-10, max_iter=50000).fit(K, y, sample_weight=w)
    ref = SVC(kernel="precomputed", C=1.0, tol=1e-12).fit(K, y, sample_weight=w)
    d_ref = ref.decision_function(Kt)
    np.testing.assert_allclose(ours.decision_function(Kt), d_ref, atol=1e-4 * np.abs(d_ref).max())
    # and the weights matter: the unweighted fit differs by far more
    plain = IndefiniteSVC(C=1.0, rho=1e9, tol=1e-10, max_iter=50000).fit(K, y)
    assert np.max(np.abs(plain.decision_function(Kt) - d_ref)) > 1e-2 * np.abs(d_ref).max()


def test_svr_and_oneclass_large_rho_match_libsvm_with_instance_weights():
    X, _, Xt, w = _data(seed=1)
    K, Kt = rbf_kernel(X, gamma=0.5), rbf_kernel(Xt, X, gamma=0.5)
    t = np.sin(X[:, 0])
    ours = IndefiniteSVR(C=1.0, epsilon=0.05, rho=1e9, tol=1e-10, max_iter=50000)
    ours.fit(K, t, sample_weight=w)
    ref = SVR(kernel="precomputed", C=1.0, epsilon=0.05, tol=1e-12).fit(K, t, sample_weight=w)
    p_ref = ref.predict(Kt)
    np.testing.assert_allclose(ours.predict(Kt), p_ref, atol=1e-4 * np.abs(p_ref).max())
    nu = 0.3
    oc = IndefiniteOneClassSVM(nu=nu, rho=1e9, tol=1e-10, max_iter=50000)
    oc.fit(K, sample_weight=w)
    ref = OneClassSVM(kernel="precomputed", nu=nu, tol=1e-12).fit(K, sample_weight=w)
    # LIBSVM's weighted one-class alphas sum to nu * sum(w); ours to 1.
    d_ref = ref.decision_function(Kt) / (nu * w.sum())
    np.testing.assert_allclose(oc.decision_function(Kt), d_ref, atol=1e-4 * np.abs(d_ref).max())


@pytest.mark.parametrize("make", [SpectrumSVC, ModSVC, DirectSVC, KreinSVC])
def test_libsvm_baselines_pass_the_weights_to_libsvm(make):
    X, y, Xt, w = _data(seed=2)
    K, Kt = rbf_kernel(X, gamma=0.5), rbf_kernel(Xt, X, gamma=0.5)
    weighted = make().fit(K, y, sample_weight=w).decision_function(Kt)
    again = make().fit(K, y, sample_weight=2 * w).decision_function(Kt)  # C doubled
    plain = make().fit(K, y).decision_function(Kt)
    assert np.max(np.abs(weighted - plain)) > 1e-3
    assert np.max(np.abs(weighted - again)) > 1e-6
    if make is SpectrumSVC:  # on a PSD kernel clip does nothing: it is LIBSVM itself
        ref = SVC(kernel="precomputed", tol=1e-3).fit(K, y, sample_weight=w)
        np.testing.assert_allclose(weighted, ref.decision_function(Kt), atol=1e-3)


def test_one_vs_one_pairs_take_their_rows_of_the_weights():
    rng = np.random.default_rng(3)
    centres = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    y = np.repeat([0, 1, 2], 20)
    X = centres[y] + rng.normal(scale=0.9, size=(60, 2))
    Xt = rng.normal(size=(10, 2))
    w = rng.uniform(0.2, 3.0, size=60)
    K, Kt = np.tanh(0.4 * X @ X.T - 0.2), np.tanh(0.4 * Xt @ X.T - 0.2)
    clf = IndefiniteSVC(rho=0.5, tol=1e-9, decision_function_shape="ovo")
    D = clf.fit(K, y, sample_weight=w).decision_function(Kt)
    for col, (i, j) in enumerate([(0, 1), (0, 2), (1, 2)]):
        idx = np.flatnonzero((y == i) | (y == j))
        pair = IndefiniteSVC(rho=0.5, tol=1e-9).fit(K[np.ix_(idx, idx)], y[idx], w[idx])
        np.testing.assert_allclose(D[:, col], pair.decision_function(Kt[:, idx]), atol=1e-9)


def test_weights_with_probability_low_rank_and_perturb():
    X, y, Xt, w = _data(80, seed=4)
    clf = IndefiniteSVC(
        kernel="sigmoid", gamma=0.5, coef0=-0.3, n_components=20, probability=True,
        random_state=0,
    ).fit(X, y, sample_weight=w)  # fmt: skip
    P = clf.predict_proba(Xt)
    assert P.shape == (25, 2) and np.all(np.isfinite(P))
    K = rbf_kernel(X, gamma=0.5)
    a = PerturbSVC(rho=1e9, tol=1e-10, max_iter=50000).fit(K, y, sample_weight=w)
    ref = SVC(kernel="precomputed", tol=1e-12).fit(K, y, sample_weight=w)
    Kt = rbf_kernel(Xt, X, gamma=0.5)
    d = ref.decision_function(Kt)
    np.testing.assert_allclose(a.decision_function(Kt), d, atol=1e-4 * np.abs(d).max())


def test_similarity_ridge_is_sklearn_ridge_with_weights():
    from sklearn.linear_model import Ridge

    X, _, Xt, w = _data(seed=5)
    t = np.sin(X[:, 0])
    K, Kt = np.tanh(0.5 * X @ X.T), np.tanh(0.5 * Xt @ X.T)
    ours = SimilarityRidge(lam=0.01).fit(K, t, sample_weight=w).predict(Kt)
    ref = Ridge(alpha=0.01 * 60).fit(K, t, sample_weight=w).predict(Kt)
    np.testing.assert_allclose(ours, ref, atol=1e-10)


def test_gridsearch_passes_weights_with_and_without_metadata_routing():
    X, y, _, w = _data(seed=6)
    K = rbf_kernel(X, gamma=0.5)
    grid = {"C": [0.1, 10.0]}
    plain = GridSearchCV(IndefiniteSVC(), grid, cv=3).fit(K, y, sample_weight=w)
    with sklearn.config_context(enable_metadata_routing=True):
        # scikit-learn weights the default score too when it is given sample_weight
        est = (
            IndefiniteSVC()
            .set_fit_request(sample_weight=True)
            .set_score_request(sample_weight=True)
        )
        routed = GridSearchCV(est, grid, cv=3).fit(K, y, sample_weight=w)
    np.testing.assert_allclose(
        plain.cv_results_["mean_test_score"], routed.cv_results_["mean_test_score"]
    )
    # the weights reach the fits: a fit with them differs from one without
    np.testing.assert_allclose(
        plain.best_estimator_.alpha_,
        IndefiniteSVC(C=plain.best_params_["C"]).fit(K, y, sample_weight=w).alpha_,
    )


@pytest.mark.parametrize(
    "make, target",
    [
        (KreinRegressor, "r"),
        (KreinClassifier, "c"),
        (KreinKernelRidge, "r"),
        (KreinSquaredHingeSVC, "c"),
        (OngSubspaceRegressor, "r"),
    ],
)
def test_estimators_without_weights_refuse_them_by_name(make, target):
    X, y, _, w = _data(seed=7)
    K = np.tanh(0.5 * X @ X.T)
    t = y if target == "c" else np.sin(X[:, 0])
    with pytest.raises(TypeError, match=rf"{make.__name__} does not support sample_weight: "):
        make().fit(K, t, sample_weight=w)


@pytest.mark.parametrize(
    "w, message",
    [
        (-np.ones(60), "finite and >= 0"),
        (np.ones(59), r"length n = 60\); got shape \(59,\)"),
        (np.zeros(60), "zero for every point"),
    ],
)
def test_bad_weights_say_what_is_wrong(w, message):
    X, y, _, _ = _data(seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(ValueError, match=message):
            IndefiniteSVC(kernel="rbf").fit(X, y, sample_weight=w)
    zero_class = np.where(y > 0, 1.0, 0.0)
    with pytest.raises(ValueError, match=r"but those of class \[1\]; a classifier needs"):
        IndefiniteSVC(kernel="rbf").fit(X, y, sample_weight=zero_class)
    from indefsvm.proxy.problems import make_problem

    with pytest.raises(ValueError, match="each class needs a positive weight"):
        make_problem("svc", rbf_kernel(X), y, sample_weight=zero_class)
