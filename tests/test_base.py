"""The shared estimator contract (indefsvm.base): every estimator of both paradigms takes the
same kernel inputs, declares its parameter constraints and passes scikit-learn's checks."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_classifier, is_outlier_detector

from indefsvm.kernels import gaussian_kernel, sigmoid_kernel
from indefsvm.krein.models import (
    KreinClassifier,
    KreinKernelRidge,
    KreinKernelRidgeClassifier,
    KreinRegressor,
    KreinSquaredHingeSVC,
    KreinSVC,
    OngSubspaceRegressor,
    SimilarityRidge,
    SimilarityRidgeClassifier,
)
from indefsvm.proxy.baselines import DirectSVC, ModSVC, SpectrumSVC
from indefsvm.proxy.estimators import (
    IndefiniteOneClassSVM,
    IndefiniteSVC,
    IndefiniteSVR,
    PerturbSVC,
)
from indefsvm.utils.constraints import InvalidParameterError

ALL_ESTIMATORS = (
    IndefiniteSVC,
    PerturbSVC,
    IndefiniteSVR,
    IndefiniteOneClassSVM,
    SpectrumSVC,
    ModSVC,
    DirectSVC,
    KreinRegressor,
    KreinClassifier,
    KreinKernelRidge,
    KreinKernelRidgeClassifier,
    KreinSVC,
    KreinSquaredHingeSVC,
    SimilarityRidge,
    SimilarityRidgeClassifier,
    OngSubspaceRegressor,
)
# PerturbSVC refuses indefinite kernels: it gets a PSD one by name.
KERNELS = {
    PerturbSVC: ("gaussian", gaussian_kernel, {"gamma": 0.3}),
}
DEFAULT_KERNEL = ("sigmoid", sigmoid_kernel, {"gamma": 0.3, "coef0": -0.5})


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(36, 3))
    Xt = rng.normal(size=(7, 3))
    return X, Xt, X[:, 0] + 0.3 * X[:, 1] ** 2


def _outputs(est, X_test):
    for name in ("decision_function", "score_samples", "predict"):
        if hasattr(est, name):
            return np.asarray(getattr(est, name)(X_test), dtype=float)
    raise AssertionError(type(est))


def _fit(est, X, target):
    if is_outlier_detector(est):
        return est.fit(X)
    if is_classifier(est):
        return est.fit(X, np.where(target > np.median(target), "pos", "neg"))
    return est.fit(X, target)


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_every_estimator_takes_the_same_kernel_inputs(cls):
    """kernel="precomputed", a kernel name with gamma/coef0, and a callable give one model."""
    name, function, params = KERNELS.get(cls, DEFAULT_KERNEL)
    X, Xt, target = _data()
    outputs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DirectSVC warns on the indefinite kernel
        pre = _fit(cls(kernel="precomputed"), function(X, None, **params), target)
        outputs["precomputed"] = _outputs(pre, function(Xt, X, **params))
        named = _fit(cls(kernel=name, **params), X, target)
        outputs["name"] = _outputs(named, Xt)

        def kernel(A, B=None):
            return function(A, B, **params)

        called = _fit(cls(kernel=kernel), X, target)
        outputs["callable"] = _outputs(called, Xt)
    assert np.ptp(outputs["precomputed"]) > 0  # a model, not a constant
    np.testing.assert_allclose(outputs["name"], outputs["precomputed"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(outputs["callable"], outputs["precomputed"], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_constraints_are_declared_for_every_parameter(cls):
    est = cls()
    assert set(est._parameter_constraints) == set(est.get_params()), cls
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize("cls", ALL_ESTIMATORS, ids=lambda c: c.__name__)
def test_bad_parameters_fail_in_fit_with_the_parameter_named(cls):
    X, _, target = _data()
    # __init__ stores without checking (scikit-learn's rule); fit validates.
    est = cls(kernel="no-such-kernel")
    with pytest.raises(InvalidParameterError, match="'kernel' parameter"):
        _fit(est, X, target)
    with pytest.raises(ValueError, match="kernel='precomputed'"):
        _fit(cls(kernel="precomputed", gamma=0.5), X @ X.T, target)


def test_krein_regressor_takes_a_kernel_name_like_indefinite_svc():
    X, Xt, target = _data()
    reg = KreinRegressor(kernel="sigmoid", gamma=0.3, coef0=-0.5).fit(X, target)
    ref = KreinRegressor(kernel="precomputed").fit(sigmoid_kernel(X, gamma=0.3, coef0=-0.5), target)
    np.testing.assert_allclose(
        reg.predict(Xt), ref.predict(sigmoid_kernel(Xt, X, gamma=0.3, coef0=-0.5)), atol=1e-10
    )


def test_precomputed_kernel_with_n_components_reads_landmark_columns():
    """Krein estimators take n_components with a precomputed kernel, as the proxy SVMs do;
    with every point a landmark the model is the full-rank one."""
    X, Xt, target = _data()
    K, Kt = sigmoid_kernel(X, gamma=0.3, coef0=-0.5), sigmoid_kernel(Xt, X, gamma=0.3, coef0=-0.5)
    for cls in (KreinRegressor, KreinKernelRidge, SimilarityRidge):
        full = cls().fit(K, target)
        low = cls(n_components=len(X)).fit(K, target)
        np.testing.assert_allclose(low.predict(Kt), full.predict(Kt), atol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize(
    "estimator, not_applicable",
    [
        (KreinRegressor(), set()),
        (KreinRegressor(kernel="rbf", gamma=0.1), set()),
        (KreinClassifier(), set()),
        (KreinKernelRidge(), set()),
        (KreinKernelRidgeClassifier(), set()),
        (KreinSVC(), set()),
        (KreinSquaredHingeSVC(), set()),
        # weights are not repetitions here: a repeated point adds a similarity feature
        (SimilarityRidge(), {"check_sample_weight_equivalence_on_dense_data"}),
        (SimilarityRidge(kernel="rbf"), {"check_sample_weight_equivalence_on_dense_data"}),
        (SimilarityRidgeClassifier(), set()),
        (OngSubspaceRegressor(solver="tsf"), set()),
        (OngSubspaceRegressor(), set()),
    ],
    ids=lambda v: repr(v) if not isinstance(v, set) else "",
)
def test_check_estimator_krein(estimator, not_applicable):
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    assert failed <= not_applicable, failed
    assert len(results) > 40
