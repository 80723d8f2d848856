"""The input map of a fit (indefsvm.inputs), case by case.

Each kind of input is checked against a reference computed without it: the kernel formula
written out (``tanh(gamma <x, y> + coef0)``), the Nystroem map's own ``transform``, or a model
fitted alone on the rows a one-vs-one pair (Krein or proxy) or a Platt fold is given.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from indefsvm.approximation.nystrom import IndefiniteNystroem
from indefsvm.inputs import (
    KernelFunction,
    NystroemFeatures,
    PairRows,
    PrecomputedKernel,
    fit_input,
    fitted_input,
)
from indefsvm.krein import models as km
from indefsvm.linalg.factor import LowRankKernel
from indefsvm.multiclass import ovo_vote_scores
from indefsvm.probability import platt_sigmoid
from indefsvm.proxy.estimators import IndefiniteSVC, IndefiniteSVR

SIG = {"gamma": 0.4, "coef0": -0.3}
M = 10


def _sigmoid(A, B):
    """The sigmoid kernel written out (the reference: not the package's kernel function)."""
    return np.tanh(SIG["gamma"] * np.asarray(A) @ np.asarray(B).T + SIG["coef0"])


def _train_kernel(X):
    K = _sigmoid(X, X)
    return 0.5 * (K + K.T)  # exactly symmetric, as a training kernel must be


def _data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] > 0, 1, -1)
    return X, y, rng.normal(size=(7, 3))


def _map(X, **params):
    return IndefiniteNystroem(
        kernel="sigmoid", **SIG, n_components=M, random_state=0, factorization="plain", **params
    ).fit(X)


def test_precomputed_kernel_is_the_given_kernel_and_its_test_rows():
    X, y, Xt = _data()
    K, Kt = _train_kernel(X), _sigmoid(Xt, X)
    est = IndefiniteSVC()
    inputs, labels = fit_input(est, K, y)
    assert type(inputs) is PrecomputedKernel and not inputs.low_rank
    assert np.array_equal(labels, y) and inputs.n_samples == X.shape[0]
    assert np.array_equal(inputs.training_operand(), K)
    assert np.array_equal(inputs.test_operand(Kt), Kt)
    assert np.array_equal(inputs.kernel_rows(Kt, K), Kt)
    with pytest.raises(ValueError, match=r"must be the \(m, 60\) kernel"):
        inputs.test_operand(Kt[:, :-1])


def test_kernel_function_computes_the_training_and_test_kernels():
    X, y, Xt = _data()
    est = IndefiniteSVC(kernel="sigmoid", **SIG)
    inputs, _ = fit_input(est, X, y)
    assert type(inputs) is KernelFunction and not inputs.low_rank
    np.testing.assert_allclose(inputs.training_operand(), _sigmoid(X, X), rtol=0, atol=1e-14)
    np.testing.assert_allclose(inputs.test_operand(Xt), _sigmoid(Xt, X), rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="features"):
        inputs.test_operand(Xt[:, :2])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nystroem_features_are_the_maps_transform(dtype):
    X, y, Xt = _data()
    est = IndefiniteSVC(kernel="sigmoid", **SIG, n_components=M, random_state=0,
                        nystroem_params={"dtype": dtype})  # fmt: skip
    inputs, _ = fit_input(est, X, y)
    assert type(inputs) is NystroemFeatures and inputs.low_rank
    reference = _map(X, dtype=dtype)
    factor = inputs.training_operand()
    assert isinstance(factor, LowRankKernel) and inputs.training_operand() is factor
    assert factor.features.dtype == np.dtype(dtype)
    assert np.array_equal(factor.features, reference.transform(X))
    assert np.array_equal(factor.signature, reference.signature_)
    F = reference.transform(Xt)
    assert np.array_equal(inputs.test_operand(Xt), F)
    # the training kernel's rows of new points: F diag(s) Phi'
    Phi = np.asarray(reference.transform(X), dtype=np.float64)
    expected = (np.asarray(F, dtype=np.float64) * reference.signature_) @ Phi.T
    np.testing.assert_allclose(inputs.kernel_rows(Xt, factor), expected, rtol=1e-12, atol=1e-12)


def test_nystroem_features_of_a_precomputed_kernel_read_its_landmark_columns():
    """With kernel="precomputed" the map reads the landmark columns of the given kernels: the
    features equal those of the map fitted on the points with the same landmarks."""
    X, y, Xt = _data()
    est = IndefiniteSVC(n_components=M, random_state=0)
    inputs, _ = fit_input(est, _train_kernel(X), y)
    assert inputs.low_rank
    on_points = _map(X, landmarks=inputs.nystroem.landmarks_)
    np.testing.assert_allclose(
        inputs.training_operand().features, on_points.transform(X), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        inputs.test_operand(_sigmoid(Xt, X)), on_points.transform(Xt), rtol=0, atol=1e-12
    )


def test_nystroem_features_of_a_dask_array_stay_a_dask_factor():
    da = pytest.importorskip("dask.array")
    X, y, _ = _data()
    est = IndefiniteSVR(kernel="sigmoid", **SIG, n_components=M, random_state=0)
    inputs, _ = fit_input(est, da.from_array(X, chunks=20), y.astype(float), y_numeric=True)
    assert inputs.low_rank
    factor = inputs.training_operand()
    assert factor.backend.distributed
    np.testing.assert_allclose(
        np.asarray(factor.features), inputs.nystroem.transform(X), rtol=0, atol=1e-12
    )


def test_pair_rows_are_rows_of_the_shared_features():
    X, y, Xt = _data()
    shared = _map(X)
    Phi, Phi_t = shared.transform(X), shared.transform(Xt)
    rows = np.flatnonzero(y > 0)
    pair = PairRows(shared.column_input(), Phi[rows], test_features=Phi_t)
    assert pair.low_rank and pair.n_samples == rows.shape[0]
    factor = pair.training_operand()
    assert np.array_equal(factor.features, shared.transform(X[rows]))
    assert np.array_equal(factor.signature, shared.signature_)
    assert np.array_equal(pair.test_operand(Xt), shared.transform(Xt))
    with pytest.raises(ValueError, match="no test features"):
        PairRows(shared.column_input(), Phi[rows]).test_operand(Xt)


def test_pair_rows_fold_takes_the_folds_rows_of_the_shared_features():
    X, y, _ = _data()
    shared = _map(X)
    rows = np.flatnonzero(y > 0)
    train, test = np.arange(0, rows.shape[0], 2), np.arange(1, rows.shape[0], 2)
    fold = PairRows(shared.column_input(), shared.transform(X)[rows]).fold(train, test)
    assert type(fold) is PairRows and fold.low_rank
    assert np.array_equal(fold.training_operand().features, shared.transform(X[rows[train]]))
    assert np.array_equal(fold.test_operand(None), shared.transform(X[rows[test]]))
    with pytest.raises(ValueError, match="no training features"):
        PairRows(shared.column_input(), test_features=shared.transform(X)).fold(train, test)


@pytest.mark.parametrize(
    "cls",
    [km.KreinClassifier, km.KreinKernelRidgeClassifier, km.KreinSquaredHingeSVC,
     km.SimilarityRidgeClassifier],
)  # fmt: skip
def test_krein_pair_is_the_binary_model_of_its_rows_of_the_shared_map(cls):
    """A Krein pair of a multi-class low-rank model is given its rows of the one shared map: with
    the landmarks among the rows of its two classes, it is the binary model fitted alone on
    those rows with the same landmarks. And the model's decision through the features it forms
    once for all pairs equals each pair deciding from the landmark columns ``k(x, Z)`` itself."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.4, 0.4])
    Xt = rng.normal(size=(9, 3))
    first = np.flatnonzero(y < 2)  # the rows of the first pair, classes (0, 1)
    landmarks = np.sort(rng.choice(first, M, replace=False))
    clf = cls(kernel="sigmoid", **SIG, n_components=M,
              nystroem_params={"landmarks": landmarks}).fit(X, y)  # fmt: skip
    alone = cls(kernel="sigmoid", **SIG, n_components=M,
                nystroem_params={"landmarks": np.searchsorted(first, landmarks)}
                ).fit(X[first], y[first])  # fmt: skip
    assert np.array_equal(clf.ovo_["indices"][0], first)
    C = _sigmoid(Xt, X[landmarks])  # the pairs' input: landmark columns, by the formula
    np.testing.assert_allclose(
        clf.estimators_[0].decision_function(C), alone.decision_function(Xt), rtol=0, atol=1e-10
    )
    own = np.column_stack([e.decision_function(C) for e in clf.estimators_])
    np.testing.assert_allclose(
        clf.decision_function(Xt), ovo_vote_scores(own, 3), rtol=0, atol=1e-12
    )


def _platt_on_dense_folds(Phi, s, labels):
    """Platt's ``(A, B)`` from out-of-fold decisions of the dense SVM on each fold's Nystroem
    kernel ``Phi_train S Phi_train'`` (the reference of the low-rank fits' Platt folds)."""
    decision = np.empty(labels.shape[0])
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    for train, test in folds.split(np.zeros(labels.shape[0]), labels):
        K = (Phi[train] * s) @ Phi[train].T
        fold = IndefiniteSVC().fit(0.5 * (K + K.T), labels[train])
        decision[test] = fold.decision_function((Phi[test] * s) @ Phi[train].T)
    return platt_sigmoid(decision, labels)


def test_platt_folds_of_a_pair_fit_on_their_rows_of_the_shared_map():
    """Each one-vs-one pair of a low-rank ``IndefiniteSVC(probability=True)`` fits its sigmoid on
    out-of-fold decisions of models of the fold's rows of the shared map: the reference fits
    the dense SVM on the Nystroem kernel ``Phi_train S Phi_train'`` of each fold (the shared
    map's ``transform`` rows), on the same stratified folds."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.4, 0.4])
    clf = IndefiniteSVC(kernel="sigmoid", **SIG, n_components=M, random_state=0,
                        probability=True).fit(X, y)  # fmt: skip
    shared = _map(X)
    assert np.array_equal(shared.landmarks_, clf.landmarks_)
    s = shared.signature_
    for pair, idx in zip(clf.estimators_, clf.ovo_["indices"], strict=True):
        Phi = shared.transform(X[idx])
        labels = np.where(y[idx] == pair.classes_[1], 1.0, -1.0)
        A, B = _platt_on_dense_folds(Phi, s, labels)
        # the two solvers (low-rank Newton, dense PG) agree to their tolerance
        np.testing.assert_allclose([pair.probA_[0], pair.probB_[0]], [A, B], rtol=0, atol=1e-5)


def test_one_vs_one_pairs_decide_from_the_shared_features():
    """Each pair of a multi-class model decides ``phi(x) @ feature_coef_ + intercept_`` with
    the shared map's features ``k(x, Z) W`` of the test points."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.4, 0.4])
    Xt = rng.normal(size=(9, 3))
    clf = IndefiniteSVC(kernel="sigmoid", **SIG, n_components=M, random_state=0,
                        decision_function_shape="ovo").fit(X, y)  # fmt: skip
    W = clf.estimators_[0].nystroem_.components_
    F = _sigmoid(Xt, clf.landmark_points_) @ W
    expected = np.column_stack([F @ e.feature_coef_ + e.intercept_ for e in clf.estimators_])
    np.testing.assert_allclose(clf.decision_function(Xt), expected, rtol=1e-12, atol=1e-12)
    # every pair was fitted on its rows of the one shared factor (its own alpha per row)
    for e, idx in zip(clf.estimators_, clf.ovo_["indices"], strict=True):
        assert e.nystroem_ is clf.estimators_[0].nystroem_ and e.alpha_.shape == idx.shape


def test_fitted_input_follows_the_last_fit():
    """A dense refit of a low-rank model drops its map: it predicts as a fresh dense model."""
    X, y, Xt = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = IndefiniteSVC(kernel="sigmoid", **SIG, n_components=M, random_state=0).fit(X, y)
        assert type(fitted_input(est)) is NystroemFeatures
        est.set_params(n_components=None).fit(X, y)
        fresh = IndefiniteSVC(kernel="sigmoid", **SIG).fit(X, y)
    assert not hasattr(est, "nystroem_") and type(fitted_input(est)) is KernelFunction
    assert np.array_equal(est.decision_function(Xt), fresh.decision_function(Xt))
    assert type(fitted_input(IndefiniteSVC().fit(_train_kernel(X), y))) is PrecomputedKernel


def test_fitted_input_of_a_model_keeps_no_training_operand():
    X, y, _ = _data()
    est = IndefiniteSVC(kernel="sigmoid", **SIG).fit(X, y)
    with pytest.raises(ValueError, match="no training kernel"):
        fitted_input(est).training_operand()
    low = IndefiniteSVC(kernel="sigmoid", **SIG, n_components=M, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="no training features"):
        fitted_input(low).training_operand()


def test_nystroem_input_refuses_the_transductive_map():
    X, y, _ = _data()
    est = IndefiniteSVC(kernel="sigmoid", **SIG, n_components=M,
                        prediction_params={"out_of_sample": "transductive"})  # fmt: skip
    with pytest.raises(ValueError, match="transductive' needs the dense"):
        fit_input(est, X, y)


@pytest.mark.parametrize("landmarks", ["explicit", "uniform", "kmeans++"])
def test_platt_folds_of_a_binary_low_rank_fit_use_its_map(landmarks):
    """The Platt folds of a binary low-rank fit take their rows of the model's own Nystroem map
    (the model's kernel, kept fixed as a precomputed one is), whatever chose the landmarks;
    explicit landmarks, indices into the training set, could not be refitted on a fold anyway.
    Reference: the dense SVM on each fold's Nystroem kernel from the map's ``transform`` rows,
    on the same stratified folds."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=80) > 0, 1, -1)
    given = np.arange(0, 80, 4) if landmarks == "explicit" else landmarks
    clf = IndefiniteSVC(
        kernel="sigmoid",
        **SIG,
        n_components=20,
        random_state=0,
        probability=True,
        nystroem_params={"landmarks": given},
    ).fit(X, y)
    if landmarks == "explicit":
        assert np.array_equal(clf.nystroem_.landmarks_, given)
    Phi = clf.nystroem_.transform(X)
    s = clf.nystroem_.signature_
    labels = np.where(y == clf.classes_[1], 1.0, -1.0)
    A, B = _platt_on_dense_folds(Phi, s, labels)
    np.testing.assert_allclose([clf.probA_[0], clf.probB_[0]], [A, B], rtol=0, atol=1e-5)
    assert np.all(np.isfinite(clf.predict_proba(X[:5])))


def test_platt_folds_of_a_precomputed_low_rank_fit_equal_those_on_the_points():
    """``kernel="precomputed"`` with ``n_components``: the folds take rows of the given n x n
    kernel and of the model's map; Platt's A and B and the probabilities equal those of the
    same model fitted on the points with the kernel function (the same landmarks)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=80) > 0, 1, -1)
    Xt = rng.normal(size=(7, 3))
    common = {"n_components": 20, "random_state": 0, "probability": True}
    on_points = IndefiniteSVC(kernel="sigmoid", **SIG, **common).fit(X, y)
    given = IndefiniteSVC(kernel="precomputed", **common).fit(_sigmoid(X, X), y)
    assert np.array_equal(on_points.nystroem_.landmarks_, given.nystroem_.landmarks_)
    np.testing.assert_allclose(
        [given.probA_[0], given.probB_[0]], [on_points.probA_[0], on_points.probB_[0]], rtol=1e-9
    )
    np.testing.assert_allclose(
        given.predict_proba(_sigmoid(Xt, X)), on_points.predict_proba(Xt), rtol=0, atol=1e-10
    )
