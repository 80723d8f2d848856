"""Tests of indefsvm.kernels.dissimilarity: double centering, the exponential kernel, and kernels
from a precomputed dissimilarity matrix inside scikit-learn's model selection.

The references are explicit loops over the folds that slice ``D[train][:, train]`` and
``D[test][:, train]`` by hand (what the pairwise convention must make scikit-learn do).
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.utils import get_tags

import indefsvm
import indefsvm.krein
from indefsvm import IndefiniteSVC
from indefsvm.kernels import (
    DissimilarityKernel,
    DoubleCentering,
    double_centering,
    dtw_distances,
    exp_dissimilarity_kernel,
)
from indefsvm.linalg.spectrum import eigen_summary


def _series(n=40, T=20, seed=0):
    """Two classes of noisy shapes (sine vs. square wave) with random phase: DTW data."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 2 * np.pi, T)
    phase = rng.uniform(-1, 1, size=n)
    y = np.repeat([0, 1], n // 2)
    X = np.sin(t[None, :] - phase[:, None])
    X[y == 1] = np.sign(X[y == 1])
    return X + 0.3 * rng.normal(size=X.shape), y


def _manual_cv(make_transformer, D, y, cv, **svc):
    scores = []
    for tr, te in cv.split(D, y):
        tf = make_transformer().fit(D[np.ix_(tr, tr)])
        clf = IndefiniteSVC(**svc).fit(tf.transform(D[np.ix_(tr, tr)]), y[tr])
        scores.append(np.mean(clf.predict(tf.transform(D[np.ix_(te, tr)])) == y[te]))
    return np.array(scores)


def test_double_centering_in_cross_val_score_regression():
    """Issue 26, item 10: this failed with 'D must be a square (n, n) matrix; got (26, 40)'."""
    X, y = _series()
    D = dtw_distances(X)
    scores = cross_val_score(make_pipeline(DoubleCentering(), IndefiniteSVC()), D, y, cv=3)
    cv = StratifiedKFold(3)
    assert np.allclose(scores, _manual_cv(DoubleCentering, D, y, cv), atol=0)
    assert get_tags(DoubleCentering()).input_tags.pairwise is True


def test_dissimilarity_kernel_values_and_fitted_unit():
    X, y = _series(n=12, T=15, seed=1)
    D = dtw_distances(X)
    tr, te = np.arange(8), np.arange(8, 12)
    off = [D[i, j] for i in tr for j in tr if i < j]
    med = sorted(off)[len(off) // 2 - 1 : len(off) // 2 + 1]  # 28 entries: mean of the middle two
    unit = 0.5 * (med[0] + med[1])
    tf = DissimilarityKernel(gamma=2.0).fit(D[np.ix_(tr, tr)])
    assert tf.scale_ == pytest.approx(unit, rel=1e-14)
    for i in te:
        for j in tr:
            assert tf.transform(D[np.ix_(te, tr)])[i - 8, j] == pytest.approx(
                np.exp(-D[i, j] / (2.0 * unit)), rel=1e-14
            )
    neg = DissimilarityKernel(kernel="negative", scale=None).fit_transform(D)
    assert np.array_equal(neg, -D)
    mean_unit = DissimilarityKernel(scale="mean").fit(D).scale_
    assert mean_unit == pytest.approx(np.sum(D) / (12 * 11), rel=1e-13)
    assert DissimilarityKernel(scale=3.0).fit(D).scale_ == 3.0


def test_gamma_tuned_in_grid_search_on_precomputed_distances():
    X, y = _series(n=36, seed=2)
    D = dtw_distances(X)
    pipe = make_pipeline(DissimilarityKernel(), IndefiniteSVC(rho=1.0))
    assert get_tags(pipe).input_tags.pairwise is True
    gammas = [0.25, 1.0, 4.0]
    cv = StratifiedKFold(3)
    search = GridSearchCV(pipe, {"dissimilaritykernel__gamma": gammas}, cv=cv).fit(D, y)
    manual = [_manual_cv(lambda g=g: DissimilarityKernel(gamma=g), D, y, cv).mean() for g in gammas]
    assert np.allclose(search.cv_results_["mean_test_score"], manual, atol=0)
    assert search.best_params_["dissimilaritykernel__gamma"] == gammas[int(np.argmax(manual))]
    # predict on new objects: their distances to the training objects (the refit's columns)
    tf = DissimilarityKernel(gamma=search.best_params_["dissimilaritykernel__gamma"]).fit(D)
    ref = IndefiniteSVC(rho=1.0).fit(tf.transform(D), y).predict(tf.transform(D[:5]))
    assert np.array_equal(search.predict(D[:5]), ref)


def test_dissimilarity_kernel_refuses_bad_input():
    D = dtw_distances(_series(n=6, T=8)[0])
    with pytest.raises(ValueError, match="kernel must be one of"):
        DissimilarityKernel(kernel="gauss").fit(D)
    with pytest.raises(ValueError, match="scale must be one of"):
        DissimilarityKernel(scale="max").fit(D)
    with pytest.raises(ValueError, match="gamma"):
        DissimilarityKernel(gamma=0.0).fit(D)
    with pytest.raises(ValueError, match="scale"):
        DissimilarityKernel(scale=-1.0).fit(D)
    with pytest.raises(ValueError, match="not fitted"):
        DissimilarityKernel().transform(D)
    with pytest.raises(ValueError, match="one column per training object"):
        DissimilarityKernel().fit(D).transform(D[:, :3])
    with pytest.raises(ValueError, match="square"):
        DissimilarityKernel().fit(D[:4])
    with pytest.raises(ValueError, match="negative entries"):
        DissimilarityKernel().fit(-D)
    with pytest.raises(ValueError, match="must be > 0"):
        DissimilarityKernel().fit(np.zeros((4, 4)))


def _estimators_with_kernel():
    out = []
    for module in (indefsvm, indefsvm.krein):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and hasattr(obj, "fit") and hasattr(obj, "predict"):
                if "kernel" in obj().get_params():
                    out.append(obj)
    return out


@pytest.mark.parametrize("cls", _estimators_with_kernel(), ids=lambda c: c.__name__)
def test_estimators_declare_pairwise_exactly_when_precomputed(cls):
    assert get_tags(cls().set_params(kernel="precomputed")).input_tags.pairwise is True
    assert get_tags(cls().set_params(kernel="rbf")).input_tags.pairwise is False


# Double centering and the exponential dissimilarity kernel against their definitions.


def test_double_centering_recovers_centred_gram() -> None:
    rng = np.random.default_rng(6)
    X = rng.standard_normal((10, 3))
    Xt = rng.standard_normal((4, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    Dt = np.sqrt(((Xt[:, None] - X[None]) ** 2).sum(-1))
    mu = X.mean(axis=0)
    # Classical MDS of Euclidean distances is the Gram matrix of the centred points.
    dc = DoubleCentering().fit(D)
    np.testing.assert_allclose(dc.kernel_, (X - mu) @ (X - mu).T, atol=1e-12)
    np.testing.assert_allclose(dc.transform(Dt), (Xt - mu) @ (X - mu).T, atol=1e-12)
    np.testing.assert_allclose(dc.transform(D), dc.kernel_, atol=1e-13)
    J = np.eye(10) - 1.0 / 10
    np.testing.assert_allclose(double_centering(D), -0.5 * J @ (D**2) @ J, atol=1e-12)
    np.testing.assert_allclose(double_centering(D**2, squared=True), dc.kernel_, atol=1e-12)


def test_double_centering_of_non_euclidean_is_indefinite() -> None:
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 4))
    D_l1 = np.abs(X[:, None] - X[None]).sum(-1) ** 1.5  # not Euclidean-embeddable
    assert eigen_summary(double_centering(D_l1)).n_negative > 0


def test_exp_dissimilarity_and_errors() -> None:
    D = np.array([[0.0, 2.0], [2.0, 0.0]])
    np.testing.assert_allclose(
        exp_dissimilarity_kernel(D, gamma=0.5), [[1, math.exp(-1)], [math.exp(-1), 1]]
    )
    with pytest.raises(ValueError, match="negative"):
        exp_dissimilarity_kernel(-D)
    with pytest.raises(ValueError, match="not symmetric"):
        double_centering(np.array([[0.0, 1.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="not fitted"):
        DoubleCentering().transform(D)
    with pytest.raises(ValueError, match="one column per training point"):
        DoubleCentering().fit(D).transform(np.ones((1, 3)))


def test_non_symmetric_training_dissimilarities_get_advice_that_applies():
    """Before: 'Pass symmetrize=True', a parameter neither transformer has."""
    from indefsvm.kernels import DissimilarityKernel, DoubleCentering

    D = np.random.default_rng(0).uniform(size=(6, 6))
    np.fill_diagonal(D, 0.0)
    for transformer in (DissimilarityKernel(), DoubleCentering()):
        with pytest.raises(ValueError, match=r"symmetrise it first, e\.g\. D = \(D \+ D\.T\) / 2"):
            transformer.fit(D)
        with pytest.raises(ValueError) as refusal:
            transformer.fit(D)
        assert "symmetrize=True" not in str(refusal.value)
