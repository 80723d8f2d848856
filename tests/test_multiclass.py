"""Multi-class classification (one-vs-one, as SVC) for every classifier of the package."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from helpers import three_classes
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import indefsvm
from indefsvm.kernels import sigmoid_kernel
from indefsvm.krein import (
    KreinClassifier,
    KreinKernelRidge,
    KreinKernelRidgeClassifier,
    KreinRegressor,
    KreinSquaredHingeSVC,
    SimilarityRidge,
    SimilarityRidgeClassifier,
)
from indefsvm.multiclass import ovo_vote_scores

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


SIG = {"gamma": 0.3, "coef0": -0.4}


def _pairs(y):
    classes = np.unique(y)
    for i in range(classes.size):
        for j in range(i + 1, classes.size):
            yield np.flatnonzero((y == classes[i]) | (y == classes[j]))


def _ovo(clf, X, inputs=None):
    """The pairs' decisions ``(m, n_pairs)``, positive for the pair's second class, in public
    terms: scikit-learn's ``decision_function_shape="ovo"`` where the classifier has it; else (the
    Krein classifiers) each pair model of ``estimators_`` on ``inputs(k)`` (default ``X``), checked
    first against the classifier's own decision (the one-vs-one vote scores of those values)."""
    if "decision_function_shape" in clf.get_params():
        return clf.set_params(decision_function_shape="ovo").decision_function(X)
    D = np.column_stack(
        [
            e.decision_function(X if inputs is None else inputs(k))
            for k, e in enumerate(clf.estimators_)
        ]
    )
    votes = ovo_vote_scores(D, len(clf.classes_))
    assert np.allclose(clf.decision_function(X), votes, rtol=1e-10, atol=1e-10)
    return D


def _nystroem_kernel(K_AZ, K_ZZ, K_BZ):
    """``K_AZ K_ZZ^+ K_ZB`` with the Nystroem cut-off (|d| <= 1e-10 max|d| dropped)."""
    return K_AZ @ np.linalg.pinv(K_ZZ, rcond=1e-10, hermitian=True) @ K_BZ.T


LOW_RANK_CLASSIFIERS = {
    "IndefiniteSVC": (lambda **k: indefsvm.IndefiniteSVC(C=1.0, rho=1.0, tol=1e-10, **k), 1e-5),
    "KreinClassifier": (lambda **k: KreinClassifier(**k), 1e-6),
    "KreinSquaredHingeSVC": (lambda **k: KreinSquaredHingeSVC(**k), 1e-6),
}


@pytest.mark.parametrize("name", list(LOW_RANK_CLASSIFIERS))
@pytest.mark.parametrize("precomputed", [True, False], ids=["precomputed", "sigmoid"])
def test_multiclass_landmarks_are_rows_of_the_full_training_set(name, precomputed):
    """Item 4: explicit landmarks index the full training set for every pair (all of them in
    class 0 here, so pairs (1, 2) has none of its own). Each pair model equals a dense binary
    model on the pair's Nystroem kernel ``K_pZ K_ZZ^+ K_Zp`` with those landmark points."""
    make, rtol = LOW_RANK_CLASSIFIERS[name]
    X, y, Xt = three_classes()
    landmarks = np.arange(5, 25)
    K = sigmoid_kernel(X, **SIG)
    Kt = sigmoid_kernel(Xt, X, **SIG)
    kernel = {"kernel": "precomputed"} if precomputed else {"kernel": "sigmoid", **SIG}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = make(
            n_components=landmarks.size, **kernel, nystroem_params={"landmarks": landmarks}
        ).fit(K if precomputed else X, y)
        test = Kt if precomputed else Xt
        columns = Kt[:, landmarks] if precomputed else sigmoid_kernel(Xt, X[landmarks], **SIG)
        ovo = _ovo(clf, test, lambda k: columns)
        for k, idx in enumerate(_pairs(y)):
            K_ZZ = K[np.ix_(landmarks, landmarks)]
            K_pp = _nystroem_kernel(K[np.ix_(idx, landmarks)], K_ZZ, K[np.ix_(idx, landmarks)])
            K_tp = _nystroem_kernel(Kt[:, landmarks], K_ZZ, K[np.ix_(idx, landmarks)])
            reference = make(kernel="precomputed").fit(0.5 * (K_pp + K_pp.T), y[idx])
            expected = reference.decision_function(K_tp)
            scale = max(1.0, float(np.max(np.abs(expected))))
            assert np.max(np.abs(ovo[:, k] - expected)) <= rtol * scale, (k, name)
    assert np.array_equal(clf.landmarks_, landmarks)


@pytest.mark.parametrize("name", list(LOW_RANK_CLASSIFIERS))
def test_multiclass_landmark_errors_quote_the_full_training_size(name):
    make, _ = LOW_RANK_CLASSIFIERS[name]
    X, y, _ = three_classes()
    K = sigmoid_kernel(X, **SIG)
    with pytest.raises(ValueError, match=r"must lie in \[0, 90\)"):
        make(n_components=2, nystroem_params={"landmarks": np.array([0, 95])}).fit(K, y)


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: KreinKernelRidgeClassifier(**k),
        lambda **k: SimilarityRidgeClassifier(**k),
    ],
    ids=["KreinKernelRidgeClassifier", "SimilarityRidgeClassifier"],
)
def test_other_low_rank_classifiers_share_the_landmarks(make):
    """The pairs of the ridge classifiers use the same landmark points: each pair equals a
    binary low-rank fit whose landmarks (all of the pair's own rows here, in the pair's index
    space) are the shared ones."""
    X, y, Xt = three_classes()
    K = sigmoid_kernel(X, **SIG)
    Kt = sigmoid_kernel(Xt, X, **SIG)
    landmarks = np.arange(0, 90, 3)  # rows of every class
    clf = make(n_components=landmarks.size, nystroem_params={"landmarks": landmarks}).fit(K, y)
    ovo = _ovo(clf, Kt, lambda k: Kt[:, landmarks])
    for k, idx in enumerate(_pairs(y)):
        # The pair's landmarks are only some of the shared ones; the reference gets the pair's
        # rows plus every shared landmark as the kernel it sees, landmark columns k(., Z).
        if make().__class__ is SimilarityRidgeClassifier:
            from sklearn.linear_model import Ridge

            t = np.where(y[idx] == y[idx].max(), 1.0, -1.0)
            ridge = Ridge(alpha=idx.size * 1e-2).fit(K[np.ix_(idx, landmarks)], t)
            expected = ridge.predict(Kt[:, landmarks])
        else:
            K_ZZ = K[np.ix_(landmarks, landmarks)]
            K_pp = _nystroem_kernel(K[np.ix_(idx, landmarks)], K_ZZ, K[np.ix_(idx, landmarks)])
            K_tp = _nystroem_kernel(Kt[:, landmarks], K_ZZ, K[np.ix_(idx, landmarks)])
            reference = make(kernel="precomputed").fit(0.5 * (K_pp + K_pp.T), y[idx])
            expected = reference.decision_function(K_tp)
        assert np.allclose(ovo[:, k], expected, rtol=1e-6, atol=1e-8)


def test_binary_low_rank_with_landmarks_unchanged():
    """Two classes never go through the pairs: explicit landmarks index the training set."""
    X, y, Xt = three_classes()
    keep = y < 2
    clf = indefsvm.IndefiniteSVC(
        kernel="sigmoid",
        **SIG,
        n_components=10,
        tol=1e-9,
        nystroem_params={"landmarks": np.arange(40, 50)},
    ).fit(X[keep], y[keep])
    assert np.array_equal(clf.nystroem_.landmarks_, np.arange(40, 50))


@pytest.mark.parametrize("precomputed", [True, False], ids=["precomputed", "sigmoid"])
@pytest.mark.parametrize("low_rank", [False, True], ids=["dense", "n_components"])
def test_vector_rho_is_sliced_per_pair(precomputed, low_rank):
    """Item 15: a per-point rho (length n) gives each pair its rows' penalties; every pair model
    equals a binary fit on the pair's data with the sliced vector."""
    X, y, Xt = three_classes()
    rho = np.linspace(0.5, 3.0, y.size)
    K = sigmoid_kernel(X, **SIG)
    Kt = sigmoid_kernel(Xt, X, **SIG)
    kernel = {"kernel": "precomputed"} if precomputed else {"kernel": "sigmoid", **SIG}
    extra = (
        {"n_components": 90, "nystroem_params": {"landmarks": np.arange(90)}} if low_rank else {}
    )
    clf = indefsvm.IndefiniteSVC(rho=rho, tol=1e-10, **kernel, **extra).fit(
        K if precomputed else X, y
    )
    ovo = _ovo(clf, Kt if precomputed else Xt)
    for k, idx in enumerate(_pairs(y)):
        K_pp, K_tp = K[np.ix_(idx, idx)], Kt[:, idx]
        if low_rank:
            # Nystroem kernel of the pair with every training point as a landmark: K_pp up to
            # the rcond cut-off, but test rows are projections on the landmarks' span.
            K_pp = _nystroem_kernel(K[idx], K, K[idx])
            K_pp = 0.5 * (K_pp + K_pp.T)
            K_tp = _nystroem_kernel(Kt, K, K[idx])
        binary = indefsvm.IndefiniteSVC(rho=rho[idx], tol=1e-10).fit(K_pp, y[idx])
        expected = binary.decision_function(K_tp)
        assert np.max(np.abs(ovo[:, k] - expected)) <= 1e-5 * max(1.0, np.abs(expected).max())
        if not low_rank:
            assert np.allclose(clf.estimators_[k].alpha_, binary.alpha_, atol=1e-6)


def test_vector_rho_perturb_svc_and_wrong_length():
    X, y, _ = three_classes()
    K = X @ X.T + 0.1 * np.eye(y.size)  # PSD for PerturbSVC
    rho = np.linspace(0.5, 3.0, y.size)
    clf = indefsvm.PerturbSVC(rho=rho, tol=1e-10).fit(K, y)
    for est, idx in zip(clf.estimators_, _pairs(y), strict=True):
        binary = indefsvm.PerturbSVC(rho=rho[idx], tol=1e-10).fit(K[np.ix_(idx, idx)], y[idx])
        assert np.allclose(est.alpha_, binary.alpha_, atol=1e-6)
    with pytest.raises(ValueError, match=r"rho must be a scalar or a vector of length n = 90"):
        indefsvm.IndefiniteSVC(rho=np.ones(60)).fit(K, y)


@pytest.mark.parametrize("precomputed", [True, False], ids=["precomputed", "sigmoid"])
def test_multiclass_transductive_predicts(precomputed):
    """Item 20: with out_of_sample="transductive" every pair needs the test-vs-test block, the
    same for all pairs: the multi-class model passes it on (computed once from features)."""
    X, y, Xt = three_classes()
    K = sigmoid_kernel(X, **SIG)
    Kt = sigmoid_kernel(Xt, X, **SIG)
    Ktt = sigmoid_kernel(Xt, **SIG)
    kernel = {"kernel": "precomputed"} if precomputed else {"kernel": "sigmoid", **SIG}
    clf = indefsvm.IndefiniteSVC(
        tol=1e-10, **kernel, prediction_params={"out_of_sample": "transductive"}
    )
    clf.fit(K if precomputed else X, y)
    args = (Kt, Ktt) if precomputed else (Xt,)
    clf.set_params(decision_function_shape="ovo")
    ovo = clf.decision_function(*args)
    votes = np.zeros((Xt.shape[0], 3))
    for k, idx in enumerate(_pairs(y)):
        binary = indefsvm.IndefiniteSVC(
            tol=1e-10, prediction_params={"out_of_sample": "transductive"}
        )
        binary.fit(K[np.ix_(idx, idx)], y[idx])
        expected = binary.decision_function(Kt[:, idx], K_test_test=Ktt)
        assert np.allclose(ovo[:, k], expected, rtol=1e-6, atol=1e-8)
        a, b = np.unique(y[idx])
        votes[:, b] += expected > 0
        votes[:, a] += expected <= 0
    predicted = clf.predict(*args)
    clear = np.sort(votes, axis=1)[:, -1] > np.sort(votes, axis=1)[:, -2]
    assert np.array_equal(predicted[clear], np.argmax(votes[clear], axis=1))
    if precomputed:
        with pytest.raises(ValueError, match="K_test_test"):
            clf.predict(Kt)


LANDMARK_ESTIMATORS = [
    indefsvm.IndefiniteSVC,
    indefsvm.IndefiniteSVR,
    indefsvm.IndefiniteOneClassSVM,
    KreinRegressor,
    KreinClassifier,
    KreinKernelRidge,
    KreinSquaredHingeSVC,
    SimilarityRidge,
]


def _data_for(cls, n_classes=2):
    X, y, _ = three_classes()
    keep = y < n_classes
    X, y = X[keep], y[keep]
    if cls in (indefsvm.IndefiniteSVR, KreinRegressor, KreinKernelRidge, SimilarityRidge):
        return X, X[:, 0] + 0.1 * X[:, 1]
    if cls is indefsvm.IndefiniteOneClassSVM:
        return X, None
    return X, y


@pytest.mark.parametrize("cls", LANDMARK_ESTIMATORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"nystroem_params": {"landmarks": "kmeans++"}}, "nystroem_params configure the Nystroem"),
        ({"nystroem_params": {"landmarks": np.arange(5)}}, r"n_components=5 for the low-rank"),
        (
            {"n_components": 7, "nystroem_params": {"landmarks": np.arange(5)}},
            "n_components=7 but landmarks gives 5",
        ),
    ],
    ids=["scheme-without-n_components", "indices-without-n_components", "count-conflict"],
)
def test_ignored_landmark_parameters_are_refused(cls, params, match):
    """Item 21: landmark parameters that would be ignored (dense model) or contradict
    n_components are errors, in every estimator that takes them."""
    X, y = _data_for(cls)
    est = cls(kernel="sigmoid", **SIG, **params)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y)


@pytest.mark.parametrize("cls", [indefsvm.IndefiniteSVC, KreinClassifier], ids=lambda c: c.__name__)
def test_ignored_landmark_parameters_are_refused_multiclass(cls):
    X, y = _data_for(cls, n_classes=3)
    with pytest.raises(ValueError, match="nystroem_params configure the Nystroem map"):
        cls(kernel="sigmoid", **SIG, nystroem_params={"landmarks": np.arange(5)}).fit(X, y)
    with pytest.raises(ValueError, match="n_components=7 but landmarks gives 5"):
        cls(
            kernel="sigmoid", **SIG, n_components=7, nystroem_params={"landmarks": np.arange(5)}
        ).fit(X, y)


@pytest.mark.parametrize(
    "cls",
    [indefsvm.IndefiniteSVC, indefsvm.IndefiniteSVR, indefsvm.IndefiniteOneClassSVM],
    ids=lambda c: c.__name__,
)
def test_nystroem_params_checked(cls):
    X, y = _data_for(cls)
    with pytest.raises(ValueError, match="nystroem_params configure the Nystroem map"):
        cls(kernel="sigmoid", **SIG, nystroem_params={"rcond": 1e-6}).fit(X, y)
    with pytest.raises(ValueError, match="sketch_size must be a positive integer"):
        cls(kernel="sigmoid", **SIG, n_components=10, nystroem_params={"sketch_size": -3}).fit(X, y)
    with pytest.raises(ValueError, match=r"nystroem_params may not set \['n_components'\]"):
        cls(kernel="sigmoid", **SIG, n_components=10, nystroem_params={"n_components": 5}).fit(X, y)
    with pytest.warns(UserWarning, match="sketch_size = 20 is ignored"):
        cls(kernel="sigmoid", **SIG, n_components=10, nystroem_params={"sketch_size": 20}).fit(X, y)


DIGIT_KERNEL = {"gamma": 0.02, "coef0": -0.3}


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: indefsvm.IndefiniteSVC(tol=1e-4, **k),
        lambda **k: indefsvm.SpectrumSVC("clip", **k),
        lambda **k: KreinClassifier(**k),
    ],
    ids=["IndefiniteSVC", "SpectrumSVC", "KreinClassifier"],
)
def test_multiclass_model_stores_training_rows_once(make):
    """Item 26: 45 pair models no longer keep copies of their training rows. The pickle is
    within 1.5x of (training features + the precomputed model, i.e. the per-pair coefficients),
    and predictions equal those of the precomputed model and of hand-made pair fits."""
    X, y = _digits(30)
    X_test, _ = _digits(5, seed=1)
    K = sigmoid_kernel(X, **DIGIT_KERNEL)
    Kt = sigmoid_kernel(X_test, X, **DIGIT_KERNEL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        named = make(kernel="sigmoid", **DIGIT_KERNEL).fit(X, y)
        pre = make().fit(K, y)
    size = len(pickle.dumps(named))
    assert size <= 1.5 * (X.nbytes + len(pickle.dumps(pre))), (size, X.nbytes)
    assert all(not hasattr(est, "X_fit_") for est in named.estimators_)
    assert np.array_equal(named.predict(X_test), pre.predict(Kt))
    assert np.allclose(named.decision_function(X_test), pre.decision_function(Kt), atol=1e-8)
    # Reference: the pair (3, 8) fitted alone on its rows with the named kernel.
    k = named.pairwise_classes_.index((3, 8))
    rows = np.flatnonzero(np.isin(y, [3, 8]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = make(kernel="sigmoid", **DIGIT_KERNEL).fit(X[rows], y[rows])
    # the Krein pairs are precomputed models on their rows' kernel columns
    ovo = _ovo(
        named, X_test, lambda j: Kt[:, np.flatnonzero(np.isin(y, named.pairwise_classes_[j]))]
    )
    assert np.allclose(ovo[:, k], alone.decision_function(X_test), atol=1e-6)


def test_low_rank_multiclass_model_stores_neither_rows_nor_kernel():
    """With n_components the pairs keep only their (m, r) maps: no training rows, no n x n
    precomputed kernel (the landmark map is fitted once and not kept with the kernel), and
    the named-kernel model equals the precomputed one."""
    X, y = _digits(30)
    K = sigmoid_kernel(X, **DIGIT_KERNEL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pre = indefsvm.IndefiniteSVC(tol=1e-4, n_components=40, random_state=0).fit(K, y)
        named = indefsvm.IndefiniteSVC(
            tol=1e-4, kernel="sigmoid", **DIGIT_KERNEL, n_components=40, random_state=0
        ).fit(X, y)
    for model in (pre, named):
        assert b"PrecomputedColumns" not in pickle.dumps(model)
        assert all(not hasattr(est, "X_fit_") for est in model.estimators_)
    # The named-kernel model adds the landmark points only (not the training rows).
    assert len(pickle.dumps(named)) <= len(pickle.dumps(pre)) + 40 * X.shape[1] * 8 + 4096
    Kt = sigmoid_kernel(X[:20], X, **DIGIT_KERNEL)
    assert np.allclose(pre.decision_function(Kt), named.decision_function(X[:20]), atol=1e-6)


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: indefsvm.IndefiniteSVC(tol=1e-6, **k),
        lambda **k: KreinClassifier(**k),
        lambda **k: SimilarityRidgeClassifier(**k),
    ],
    ids=["IndefiniteSVC", "KreinClassifier", "SimilarityRidgeClassifier"],
)
def test_binary_low_rank_precomputed_model_does_not_keep_the_kernel(make):
    """A binary low-rank model on a precomputed kernel reads only landmark columns: the fitted
    (and pickled) model keeps no reference to the n x n training kernel, and predicts alike."""
    X, y, Xt = three_classes(n_per=100)
    keep = y < 2
    K = sigmoid_kernel(X[keep], **SIG)
    Kt = sigmoid_kernel(Xt, X[keep], **SIG)
    clf = make(n_components=20, random_state=0).fit(K, y[keep])
    blob = pickle.dumps(clf)
    assert len(blob) < 0.25 * K.nbytes, (len(blob), K.nbytes)
    again = pickle.loads(blob)
    assert np.array_equal(again.decision_function(Kt), clf.decision_function(Kt))


def test_pairs_keep_their_rows_when_the_test_map_needs_features():
    """KreinClassifier(formulation="square", square_test_map="wu") needs k(x, x) of test points:
    its pairs stay feature models (the documented exception), equal to hand-made pair fits."""
    X, y, Xt = three_classes()

    def kernel(A, B=None):
        return sigmoid_kernel(A, B, **SIG)

    params = {"formulation": "square", "square_test_map": "wu", "kernel": kernel}
    clf = KreinClassifier(**params).fit(X, y)
    ovo = _ovo(clf, Xt)
    for k, idx in enumerate(_pairs(y)):
        alone = KreinClassifier(**params).fit(X[idx], y[idx])
        assert np.allclose(ovo[:, k], alone.decision_function(Xt), rtol=1e-8, atol=1e-10)
        assert hasattr(clf.estimators_[k], "X_fit_")
