"""One Nystroem map shared by the one-vs-one pairs of a low-rank multi-class model (issue 24).

The reference is built by hand, independently of :mod:`indefsvm.multiclass`: one
:class:`~indefsvm.approximation.nystrom.IndefiniteNystroem` fitted on all training rows with the
estimator's parameters, the pair's rows of its factor ``Phi``, and the binary problem of each
pair solved directly -- the proxy SVM by :func:`indefsvm.proxy.api.solve_problem` on
``LowRankKernel(Phi[pair], signature)``, the Krein models on a dense eigendecomposition of the
pair's kernel ``Phi[pair] S Phi[pair]'`` (the KREIN LSM by its closed form with numpy, the SH-SVM
by :func:`indefsvm.krein.lowrank.squared_hinge_svm`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import sigmoid_kernel

from indefsvm import IndefiniteSVC, make_problem
from indefsvm.approximation.nystrom import IndefiniteNystroem
from indefsvm.krein.lowrank import squared_hinge_svm
from indefsvm.krein.models import KreinKernelRidgeClassifier, KreinSquaredHingeSVC
from indefsvm.linalg.factor import LowRankKernel
from indefsvm.multiclass import ovo_vote_scores
from indefsvm.proxy.api import solve_problem

SIG = {"gamma": 0.3, "coef0": -0.4}
M = 15


def _data(seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=1.5, size=(4, 3))
    y = np.repeat([0, 1, 2, 3], 25)
    X = centres[y] + rng.normal(size=(100, 3))
    yt = np.repeat([0, 1, 2, 3], 6)
    Xt = centres[yt] + rng.normal(size=(24, 3))
    return X, y, Xt


def _pairs(y):
    classes = np.unique(y)
    for i in range(classes.size):
        for j in range(i + 1, classes.size):
            idx = np.flatnonzero((y == classes[i]) | (y == classes[j]))
            yield idx, np.where(y[idx] == classes[j], 1.0, -1.0)


def _shared_factor(X, Xt, landmarks, precomputed, factorization):
    """The hand-made map: fitted once on every training row, its features of train and test
    (the estimator family's factorisation: plain for the proxy SVM, one-shot for Krein)."""
    if precomputed:
        K, Kt = sigmoid_kernel(X, **SIG), sigmoid_kernel(Xt, X, **SIG)

        def rows(A, B):  # the "points" are row indices of the given kernel
            return K[np.ix_(A.ravel().astype(int), B.ravel().astype(int))]

        nys = IndefiniteNystroem(
            rows, n_components=M, landmarks=landmarks, random_state=4, factorization=factorization
        )
        Phi = nys.fit_transform(np.arange(len(X), dtype=float)[:, None])
        return nys, Phi, Kt[:, nys.landmarks_] @ nys.components_, (K, Kt)
    nys = IndefiniteNystroem(
        "sigmoid", **SIG, n_components=M, landmarks=landmarks, random_state=4,
        factorization=factorization,
    )  # fmt: skip
    Phi = nys.fit_transform(X)
    return nys, Phi, nys.transform(Xt), (X, Xt)


def _pair_eigenbasis(P, Pt, s):
    """Dense eigendecomposition of the pair kernel ``P S P'``: factor, test factor, signature."""
    lam, V = np.linalg.eigh((P * s) @ P.T)
    keep = np.abs(lam) > 1e-10 * np.max(np.abs(lam))
    lam, V = lam[keep], V[:, keep]
    Psi = V * np.sqrt(np.abs(lam))
    sig = np.sign(lam)
    Psi_t = ((Pt * s) @ P.T) @ V / np.sqrt(np.abs(lam)) * sig  # Psi_t sig Psi' = Pt S P'
    return Psi, Psi_t, sig


def _reference_svc(P, Pt, s, t):
    problem = make_problem("svc", LowRankKernel(P, s), t, C=1.0, rho=1.0)
    res = solve_problem(problem, method="lowrank_newton", tol=1e-10, max_iter=5000)
    return Pt @ problem.feature_coef(res.alpha) + res.intercept


def _reference_lsm(P, Pt, s, t):
    Psi, Psi_t, sig = _pair_eigenbasis(P, Pt, s)
    F = Psi * sig
    reg = np.where(sig > 0, 1e-2, 5e-2)
    z = np.linalg.solve(F.T @ F + len(t) * np.diag(reg), F.T @ t)
    return (Psi_t * sig) @ z


def _reference_shsvm(P, Pt, s, t):
    Psi, Psi_t, sig = _pair_eigenbasis(P, Pt, s)
    sol = squared_hinge_svm(Psi * sig, t, np.where(sig > 0, 1e-2, 5e-2), fit_intercept=True)
    return (Psi_t * sig) @ sol.z + sol.intercept


def _ovo(clf, test, columns):
    """The pairs' decisions ``(n_test, n_pairs)``, positive for the pair's second class, in public
    terms: scikit-learn's ``decision_function_shape="ovo"`` where the classifier has it; else (the
    Krein classifiers) each pair model of ``estimators_`` on the landmark columns ``columns``,
    checked first against the classifier's own decision (their one-vs-one vote scores)."""
    if "decision_function_shape" in clf.get_params():
        return clf.set_params(decision_function_shape="ovo").decision_function(test)
    D = np.column_stack([e.decision_function(columns) for e in clf.estimators_])
    votes = ovo_vote_scores(D, len(clf.classes_))
    assert np.allclose(clf.decision_function(test), votes, rtol=1e-10, atol=1e-10)
    return D


CASES = {
    "IndefiniteSVC": (
        lambda **k: IndefiniteSVC(C=1.0, rho=1.0, tol=1e-10, solver="lowrank_newton", **k),
        _reference_svc,
        1e-6,
    ),
    "KreinKernelRidgeClassifier": (
        lambda **k: KreinKernelRidgeClassifier(lambda_minus=5e-2, **k),
        _reference_lsm,
        1e-8,
    ),
    "KreinSquaredHingeSVC": (
        lambda **k: KreinSquaredHingeSVC(lambda_minus=5e-2, **k),
        _reference_shsvm,
        1e-8,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("landmarks", ["uniform", "kmeans++", "explicit"])
@pytest.mark.parametrize("precomputed", [True, False], ids=["precomputed", "sigmoid"])
def test_pairs_are_binary_fits_on_rows_of_one_shared_factor(name, landmarks, precomputed):
    make, reference, rtol = CASES[name]
    X, y, Xt = _data()
    scheme = np.arange(2, 100, 6)[:M] if landmarks == "explicit" else landmarks
    factorization = "plain" if name == "IndefiniteSVC" else "one-shot"
    nys, Phi, Phi_t, (train, test) = _shared_factor(X, Xt, scheme, precomputed, factorization)
    kernel = {"kernel": "precomputed"} if precomputed else {"kernel": "sigmoid", **SIG}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = make(
            **kernel, n_components=M, random_state=4, nystroem_params={"landmarks": scheme}
        ).fit(train, y)
        C = (
            test[:, clf.landmarks_]
            if precomputed
            else sigmoid_kernel(test, clf.landmark_points_, **SIG)
        )
        ovo = _ovo(clf, test, C)
    assert np.array_equal(clf.landmarks_, nys.landmarks_)  # landmarks from all classes, once
    # one map object for every pair, with the factorisation of the map fitted on all rows
    first = clf.estimators_[0].nystroem_
    assert all(e.nystroem_ is first for e in clf.estimators_)
    assert np.allclose(first.components_, nys.components_, rtol=0, atol=1e-12)
    s = nys.signature_
    for k, (idx, t) in enumerate(_pairs(y)):
        expected = reference(Phi[idx], Phi_t, s, t)
        scale = max(1.0, float(np.max(np.abs(expected))))
        assert np.max(np.abs(ovo[:, k] - expected)) <= rtol * scale, (k, name)


@pytest.mark.parametrize("name", list(CASES))
def test_shared_test_features_equal_each_pairs_own_map(name):
    """Prediction computes the shared test features once; each pair's own decision on the
    landmark columns (its map applied by itself) gives the same values."""
    make, _, _ = CASES[name]
    X, y, Xt = _data(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = make(kernel="sigmoid", **SIG, n_components=M, random_state=0).fit(X, y)
        C = sigmoid_kernel(Xt, clf.landmark_points_, **SIG)
        own = np.column_stack([e.decision_function(C) for e in clf.estimators_])
        # the classifier's votes are those of the pairs' own decisions
        votes = ovo_vote_scores(own, len(clf.classes_))
        assert np.allclose(clf.decision_function(Xt), votes, rtol=1e-12, atol=1e-12)
        if "decision_function_shape" in clf.get_params():
            ovo = clf.set_params(decision_function_shape="ovo").decision_function(Xt)
            assert np.allclose(ovo, own, rtol=1e-12, atol=1e-12)
    assert clf.predict(Xt).shape == (len(Xt),)
