"""Multi-class classification (one-vs-one, as SVC) for every classifier of the package."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import indefsvm
from indefsvm.kernels import sigmoid_kernel

CLASSIFIERS = {
    "IndefiniteSVC": lambda: indefsvm.IndefiniteSVC(C=1.0, rho=1.0),
    "PerturbSVC": None,  # needs a PSD kernel: checked separately
    "SpectrumSVC": lambda: indefsvm.SpectrumSVC("clip"),
    "ModSVC": lambda: indefsvm.ModSVC(),
    "DirectSVC": lambda: indefsvm.DirectSVC(),
    "KreinClassifier": lambda: indefsvm.krein.KreinClassifier(),
    "KreinSVC": lambda: indefsvm.krein.KreinSVC(),
    "KreinSquaredHingeSVC": lambda: indefsvm.krein.KreinSquaredHingeSVC(),
    "KreinKernelRidgeClassifier": lambda: indefsvm.krein.KreinKernelRidgeClassifier(),
    "SimilarityRidgeClassifier": lambda: indefsvm.krein.SimilarityRidgeClassifier(),
}


def _digits(per_class=12, seed=0):
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    idx = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in range(10)]
    )
    return X[idx] / 16.0, y[idx]


def _kernel(X, Y=None):
    return sigmoid_kernel(X, Y, gamma=0.02, coef0=-0.3)


@pytest.mark.parametrize("name", [n for n, f in CLASSIFIERS.items() if f is not None])
def test_one_vs_one_equals_hand_made_pairwise_votes(name):
    X, y = _digits(8)
    y = y % 4  # four classes, unbalanced by construction of digits mod 4
    K = _kernel(X)
    train = np.arange(len(y)) % 4 != 0
    test = ~train
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = CLASSIFIERS[name]().fit(K[np.ix_(train, train)], y[train])
        predicted = clf.predict(K[np.ix_(test, train)])
        # Independent reference: binary fits on each pair's sub-kernel, majority vote (ties:
        # the smaller class, scikit-learn's rule when confidences tie is summed confidence).
        classes = np.unique(y[train])
        votes = np.zeros((test.sum(), classes.size))
        pair_decisions = []
        itr = np.flatnonzero(train)
        for i in range(classes.size):
            for j in range(i + 1, classes.size):
                sel = np.isin(y[train], [classes[i], classes[j]])
                rows = itr[sel]
                binary = CLASSIFIERS[name]().fit(K[np.ix_(rows, rows)], y[rows])
                d = binary.decision_function(K[np.ix_(test, rows)])
                pair_decisions.append(d)
                votes[:, j] += d > 0
                votes[:, i] += d <= 0
    assert clf.classes_.tolist() == classes.tolist()
    assert len(clf.estimators_) == classes.size * (classes.size - 1) // 2
    clear = np.sort(votes, axis=1)[:, -1] > np.sort(votes, axis=1)[:, -2]
    assert np.array_equal(predicted[clear], classes[np.argmax(votes[clear], axis=1)])
    ovr = clf.decision_function(K[np.ix_(test, train)])
    assert ovr.shape == (test.sum(), classes.size)
    if "decision_function_shape" in clf.get_params():
        clf.set_params(decision_function_shape="ovo")
        ovo = clf.decision_function(K[np.ix_(test, train)])
        assert np.allclose(ovo, np.column_stack(pair_decisions), rtol=1e-6, atol=1e-8)


def test_all_ten_digits_through_grid_search():
    X, y = _digits(12)
    K = _kernel(X)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(
            indefsvm.IndefiniteSVC(tol=1e-4), {"C": [1.0, 10.0], "rho": [1.0]}, cv=cv
        ).fit(K, y)
    assert search.best_estimator_.classes_.tolist() == list(range(10))
    assert search.best_score_ > 0.7  # chance is 0.1
    assert search.predict(K).shape == (120,)


def test_probabilities_through_calibrated_classifier():
    # CalibratedClassifierCV splits rows only, so it needs features and a kernel function
    # (kernel="precomputed" would need the pairwise split it does not make).
    X, y = _digits(10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = indefsvm.IndefiniteSVC(tol=1e-4, kernel=_kernel)
        model = CalibratedClassifierCV(base, method="sigmoid", cv=3)
        model.fit(X, y)
        proba = model.predict_proba(X)
    assert proba.shape == (100, 10)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert np.mean(model.classes_[np.argmax(proba, axis=1)] == y) > 0.7


def test_perturb_svc_multiclass_on_psd_kernel():
    X, y = _digits(6)
    K = X @ X.T
    clf = indefsvm.PerturbSVC(C=1.0, rho=1.0).fit(K, y)
    assert clf.classes_.tolist() == list(range(10))
    assert np.mean(clf.predict(K) == y) > 0.9
