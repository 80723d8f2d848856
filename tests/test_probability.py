"""Issue 22, item 25: predict_proba of IndefiniteSVC (Platt scaling, pairwise coupling)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from indefsvm.probability import pairwise_coupling, platt_sigmoid, sigmoid_probability
from indefsvm.proxy.estimators import IndefiniteSVC, PerturbSVC


def _reference_platt(f: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Platt's regularised cross-entropy minimised by scipy (BFGS, own formula)."""
    n_pos, n_neg = int(np.sum(y > 0)), int(np.sum(y <= 0))
    t = np.where(y > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def nll(ab: np.ndarray) -> float:
        z = ab[0] * f + ab[1]
        # p = 1/(1+e^z): -log p = log(1+e^z), -log(1-p) = log(1+e^-z)
        return float(np.sum(t * np.logaddexp(0, z) + (1 - t) * np.logaddexp(0, -z)))

    res = scipy.optimize.minimize(nll, np.zeros(2), method="BFGS", options={"gtol": 1e-10})
    return res.x


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_platt_sigmoid_matches_an_independent_minimisation(seed):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(80) < 0.4, 1, -1)
    f = 1.5 * y + rng.normal(scale=1.2, size=80)
    A, B = platt_sigmoid(f, y)
    np.testing.assert_allclose([A, B], _reference_platt(f, y), atol=1e-5)
    assert A < 0  # f > 0 means +1 here, so the sigmoid decreases in A f + B


def test_platt_sigmoid_separable_data_stays_finite():
    """Regularised targets keep (A, B) finite on separable decision values (Platt 1999)."""
    f = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    y = np.array([-1, -1, -1, 1, 1, 1])
    A, B = platt_sigmoid(f, y)
    assert np.isfinite(A) and np.isfinite(B)
    np.testing.assert_allclose([A, B], _reference_platt(f, y), atol=1e-5)


def test_sigmoid_probability_has_no_overflow():
    p = sigmoid_probability(np.array([-1e6, 0.0, 1e6]), -1.0, 0.0)
    np.testing.assert_allclose(p, [0.0, 0.5, 1.0])


@pytest.mark.parametrize("k", [3, 4, 6])
def test_pairwise_coupling_solves_the_method_2_qp(k):
    """Wu, Lin & Weng (2004), method 2, against cvxpy with the bounds p >= 0 explicit."""
    rng = np.random.default_rng(k)
    for _ in range(5):
        upper = rng.uniform(0.02, 0.98, size=(k, k))
        R = np.triu(upper, 1) + np.tril(1 - upper.T, -1)
        p = pairwise_coupling(R)
        q = cp.Variable(k)
        terms = [
            cp.square(R[j, i] * q[i] - R[i, j] * q[j]) for i in range(k) for j in range(k) if i != j
        ]
        cp.Problem(cp.Minimize(cp.sum(terms)), [cp.sum(q) == 1, q >= 0]).solve()
        np.testing.assert_allclose(p, q.value, atol=1e-6)
        assert abs(p.sum() - 1) < 1e-12 and p.min() >= 0


def _binary_data(n: int = 90, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.6 * rng.normal(size=n) > 0, "pos", "neg")
    K = np.tanh(0.5 * X @ X.T - 0.2)
    return X, K, y


def test_binary_platt_parameters_are_those_of_the_cross_validated_decisions():
    """Rebuild the internal 5-fold stratified CV independently and fit the sigmoid with scipy."""
    _, K, y = _binary_data()
    clf = IndefiniteSVC(C=1.0, rho=1.0, probability=True, random_state=3).fit(K, y)
    labels = np.where(y == clf.classes_[1], 1, -1)
    decision = np.empty(y.shape[0])
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=3)
    for train, test in folds.split(K, labels):
        est = IndefiniteSVC(C=1.0, rho=1.0).fit(K[np.ix_(train, train)], y[train])
        decision[test] = est.decision_function(K[np.ix_(test, train)])
    np.testing.assert_allclose(
        [clf.probA_[0], clf.probB_[0]], _reference_platt(decision, labels), atol=1e-5
    )


def test_binary_probabilities_are_consistent():
    X, K, y = _binary_data()
    clf = IndefiniteSVC(probability=True, random_state=0).fit(K, y)
    P = clf.predict_proba(K)
    assert P.shape == (y.shape[0], 2)
    assert np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(clf.predict_log_proba(K), np.log(P))
    assert np.mean(clf.classes_[P.argmax(axis=1)] == clf.predict(K)) >= 0.9
    # P(classes_[1]) increases with the decision value
    d = clf.decision_function(K)
    order = np.argsort(d)
    assert np.all(np.diff(P[order, 1]) >= 0)
    # seeded: a refit gives the same probabilities
    again = IndefiniteSVC(probability=True, random_state=0).fit(K, y).predict_proba(K)
    np.testing.assert_array_equal(P, again)


def test_multiclass_probabilities_couple_the_pair_sigmoids():
    rng = np.random.default_rng(5)
    centres = np.array([[0.0, 2.0], [2.0, -1.0], [-2.0, -1.0]])
    y = np.repeat([0, 1, 2], 30)
    X = centres[y] + rng.normal(scale=0.9, size=(90, 2))
    K = np.tanh(0.4 * X @ X.T + 0.3)
    clf = IndefiniteSVC(probability=True, random_state=0).fit(K, y)
    P = clf.predict_proba(K)
    assert P.shape == (90, 3)
    # New points (not training inputs: their rows carry no rank-one term of any pair).
    Xt = centres[np.repeat([0, 1, 2], 10)] + rng.normal(scale=0.9, size=(30, 2))
    Kt = np.tanh(0.4 * Xt @ X.T + 0.3)
    Pt = clf.predict_proba(Kt)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(P.argmax(axis=1) == clf.predict(K)) >= 0.9
    assert clf.probA_.shape == (3,)
    # independent coupling of the pairwise sigmoids with cvxpy, for a few rows
    for row in range(0, 30, 7):
        R = np.zeros((3, 3))
        for est, (ci, cj) in zip(clf.estimators_, clf.pairwise_classes_, strict=True):
            idx = np.flatnonzero(np.isin(y, [ci, cj]))
            f = est.decision_function(Kt[row : row + 1, idx])[0]
            pj = np.clip(1 / (1 + np.exp(est.probA_[0] * f + est.probB_[0])), 1e-7, 1 - 1e-7)
            R[cj, ci], R[ci, cj] = pj, 1 - pj
        q = cp.Variable(3)
        terms = [
            cp.square(R[j, i] * q[i] - R[i, j] * q[j]) for i in range(3) for j in range(3) if i != j
        ]
        cp.Problem(cp.Minimize(cp.sum(terms)), [cp.sum(q) == 1, q >= 0]).solve()
        np.testing.assert_allclose(Pt[row], q.value, atol=1e-6)


def test_predict_proba_needs_probability_true_like_sklearn():
    _, K, y = _binary_data()
    clf = IndefiniteSVC().fit(K, y)
    assert hasattr(SVC(), "predict_proba") is False  # the behaviour we mirror
    assert not hasattr(clf, "predict_proba")
    with pytest.raises(AttributeError, match="predict_proba"):
        clf.predict_proba(K)
    with pytest.raises(AttributeError):
        clf.predict_log_proba(K)


def test_probability_needs_two_points_per_class():
    _, K, y = _binary_data(n=12)
    y = np.array(["a"] * 11 + ["b"])
    with pytest.raises(ValueError, match="at least 2 training points of each class"):
        IndefiniteSVC(probability=True).fit(K, y)


@pytest.mark.filterwarnings("ignore:The `probability` parameter:FutureWarning")
def test_large_rho_psd_kernel_is_close_to_sklearn_svc_probability():
    """rho -> inf on a PSD kernel is LIBSVM's C-SVM; its Platt probabilities come from other
    random folds, so only closeness is expected."""
    X, _, y = _binary_data(n=120, seed=4)
    K = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, axis=-1))
    ours = IndefiniteSVC(rho=1e8, probability=True, random_state=0, tol=1e-8).fit(K, y)
    ref = SVC(kernel="precomputed", probability=True, random_state=0).fit(K, y)
    diff = np.abs(ours.predict_proba(K) - ref.predict_proba(K))
    assert diff.mean() < 0.05


def test_perturb_svc_and_features_kernel_have_probabilities():
    X, K, y = _binary_data()
    P = IndefiniteSVC(kernel="sigmoid", gamma=0.5, coef0=-0.2, probability=True, random_state=0)
    assert P.fit(X, y).predict_proba(X[:5]).shape == (5, 2)
    psd = X @ X.T
    clf = PerturbSVC(probability=True, random_state=0).fit(psd, y)
    np.testing.assert_allclose(clf.predict_proba(psd).sum(axis=1), 1.0)


def test_spectrum_svc_probabilities():
    from indefsvm.proxy.baselines import DirectSVC, ModSVC, SpectrumSVC

    _, K, y = _binary_data()
    clf = SpectrumSVC("flip", probability=True, random_state=1).fit(K, y)
    labels = np.where(y == clf.classes_[1], 1, -1)
    decision = np.empty(y.shape[0])
    for train, test in StratifiedKFold(5, shuffle=True, random_state=1).split(K, labels):
        est = SpectrumSVC("flip").fit(K[np.ix_(train, train)], y[train])
        decision[test] = est.decision_function(K[np.ix_(test, train)])
    np.testing.assert_allclose(
        [clf.probA_[0], clf.probB_[0]], _reference_platt(decision, labels), atol=1e-5
    )
    np.testing.assert_allclose(clf.predict_proba(K).sum(axis=1), 1.0)
    assert not hasattr(SpectrumSVC().fit(K, y), "predict_proba")
    y3 = np.repeat(["a", "b", "c"], 30)
    for model in (SpectrumSVC("clip"), ModSVC(), DirectSVC()):
        model.set_params(probability=True, random_state=0)
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                P = model.fit(K, y3).predict_proba(K)
        assert P.shape == (90, 3)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)


def test_transductive_precomputed_probabilities_pass_the_test_block():
    X, K, y = _binary_data(n=60)
    pre = IndefiniteSVC(
        probability=True, random_state=0, prediction_params={"out_of_sample": "transductive"}
    )
    pre.fit(K, y)
    raw = IndefiniteSVC(
        kernel="sigmoid",
        gamma=0.5,
        coef0=-0.2,
        probability=True,
        random_state=0,
        prediction_params={"out_of_sample": "transductive"},
    ).fit(X, y)
    np.testing.assert_allclose(pre.probA_, raw.probA_, rtol=1e-8)
    np.testing.assert_allclose(
        pre.predict_proba(K[:4], K_test_test=K[:4, :4]), raw.predict_proba(X[:4]), atol=1e-10
    )


def _three_blobs(n_train: int = 180, n_test: int = 60, seed: int = 0):
    from sklearn.datasets import make_classification

    X, y = make_classification(
        n_samples=n_train + n_test, n_features=6, n_informative=4, n_classes=3,
        n_clusters_per_class=1, random_state=seed,
    )  # fmt: skip
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


@pytest.mark.parametrize("m", [30, 90, 200])
@pytest.mark.parametrize("kernel", ["precomputed", "sigmoid"])
def test_multiclass_low_rank_probabilities_fold_the_factor_rows(m, kernel):
    """Multi-class x n_components x probability: each pair's internal cross-validation folds
    the rows of the shared factor. Before: it sliced the pair's n_pair x m landmark columns as
    an n x n kernel (m >= pair size: probabilities whose argmax agreed with predict on 0 % of
    the points; m < pair size: IndexError; between: 'K_train is not symmetric')."""
    X, y, Xt, yt = _three_blobs()
    if kernel == "precomputed":
        A, At, params = np.tanh(0.1 * X @ X.T - 0.5), np.tanh(0.1 * Xt @ X.T - 0.5), {}
    else:
        A, At, params = X, Xt, {"kernel": "sigmoid", "gamma": 0.1, "coef0": -0.5}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        low = IndefiniteSVC(probability=True, n_components=m, random_state=0, **params).fit(A, y)
        dense = IndefiniteSVC(probability=True, random_state=0, **params).fit(A, y)
    P = low.predict_proba(At)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(low.classes_[P.argmax(axis=1)] == low.predict(At)) >= 0.9
    acc_low = np.mean(low.classes_[P.argmax(axis=1)] == yt)
    acc_dense = np.mean(dense.classes_[dense.predict_proba(At).argmax(axis=1)] == yt)
    assert acc_low >= acc_dense - 0.05


def test_vector_rho_with_probability_slices_rho_per_fold():
    """Vector rho x probability=True (binary and one-vs-one): the internal folds take their
    rows of rho. Before: 'rho must be ... a vector of length n = 72 ... got shape (90,)'."""
    X, y, Xt, _ = _three_blobs(120, 20, seed=1)
    rho = np.linspace(0.5, 2.0, X.shape[0])
    params = {"kernel": "sigmoid", "gamma": 0.1, "coef0": -0.5, "rho": rho, "random_state": 0}
    clf = IndefiniteSVC(probability=True, **params).fit(X, y)
    assert clf.predict_proba(Xt).shape == (20, 3)
    binary = y < 2
    two = IndefiniteSVC(probability=True, **{**params, "rho": rho[binary]})
    two.fit(X[binary], y[binary])
    P = two.predict_proba(Xt)
    assert P.shape == (20, 2) and np.all(np.isfinite(P))
