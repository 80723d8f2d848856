"""rho -> infinity on a real table (issue 24): the low-rank proxy SVM becomes the hinge-loss SVM
on the clip-spectrum features of the same Nystroem map.

For every feasible alpha, ``0 <= D_+(alpha) - (f(alpha) - f(0)) <= ||Y alpha||^4 / (16 rho)``
(``D_+`` the SVM dual on ``(K0)_+``; benchmarks/bench_lowrank.py ``--check-clip`` derives it and
the choice of rho). The reference is LIBSVM through scikit-learn's ``SVC`` (free intercept, same
C) on the precomputed linear kernel of the features ``Phi[:, signature_ > 0]``, i.e. ``(K0)_+``:
independent of our solvers.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from indefsvm import IndefiniteSVC
from indefsvm.approximation.nystrom import factor_eigenvalues

C = 0.1


@pytest.fixture(scope="module")
def table():
    X, y = load_breast_cancer(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    mean, std = X[:400].mean(axis=0), X[:400].std(axis=0)
    X = (X - mean) / std
    return X[:400], y[:400], X[400:], y[400:]


#: The estimator of both tests (sigmoid kernel, 60 landmarks, tight certified gap).
PARAMS = {"C": C, "kernel": "sigmoid", "gamma": 0.05, "coef0": -1.0, "n_components": 60}


def _model(rho: float, solver: str) -> IndefiniteSVC:
    return IndefiniteSVC(**PARAMS, rho=rho, random_state=0, solver=solver, tol=1e-8, max_iter=20000)


def _clip_reference(clf, X, y, Xt):
    """LIBSVM on the clip-spectrum features of the fitted map: ``(F, +-1 labels, fit, test
    decision values, positive for classes_[1])``."""
    from indefsvm import IndefiniteNystroem

    # The estimator's map is the plain factor; the clip spectrum needs eigen-features: the
    # one-shot map of the same landmarks has the same K0 (checked) and orthonormal directions.
    fitted = clf.nystroem_
    nys = IndefiniteNystroem(
        kernel="sigmoid",
        gamma=PARAMS["gamma"],
        coef0=PARAMS["coef0"],
        landmarks=fitted.landmarks_,
        factorization="one-shot",
    ).fit(X)
    P, P1 = fitted.transform(X), nys.transform(X)
    np.testing.assert_allclose(
        (P * fitted.signature_) @ P.T, (P1 * nys.signature_) @ P1.T, atol=1e-9
    )
    keep = nys.signature_ > 0
    F, Ft = nys.transform(X)[:, keep], nys.transform(Xt)[:, keep]
    ypm = np.where(y == clf.classes_[1], 1.0, -1.0)
    # scikit-learn's LIBSVM on the clipped features: its classes_ are (-1, 1), so dual_coef_ is
    # y_i alpha_i and a positive decision is the class +1.
    svc = SVC(kernel="precomputed", C=C, tol=1e-10).fit(F @ F.T, ypm)
    coef = np.zeros(len(ypm))
    coef[svc.support_] = svc.dual_coef_[0]
    return F, ypm, coef, (Ft @ F.T) @ coef + svc.intercept_[0]


@pytest.mark.parametrize("solver", ["lowrank_newton", "pg"])
def test_large_rho_is_the_hinge_svm_on_clip_features(table, solver):
    X, y, Xt, yt = table
    n = len(y)
    bound = n * C * C  # B = max ||Y alpha||^2 over the box
    # A Nystroem map with the estimator's parameters (same seed: the same map) for ||(K0)_-||_F.
    probe = _model(1.0, solver).fit(X, y).nystroem_
    lam = factor_eigenvalues(probe.transform(X), probe.signature_)  # those of K0
    negative = float(np.linalg.norm(np.minimum(lam, 0.0)))
    assert negative > 0  # the sigmoid kernel is indefinite here: the limit is not trivial
    rho = bound / (4.0 * np.sqrt(np.finfo(float).eps) * negative)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = _model(rho, solver).fit(X, y)
    assert np.array_equal(clf.nystroem_.eigenvalues_, probe.eigenvalues_)
    F, ypm, coef, ref_decision = _clip_reference(clf, X, y, Xt)
    ours = clf.decision_function(Xt)
    # Same classifier: decision values to the solvers' tolerances, hence the same accuracy.
    scale = float(np.max(np.abs(ref_decision)))
    assert np.max(np.abs(ours - ref_decision)) <= 2e-5 * scale
    acc_ref = np.mean(np.where(ref_decision > 0, clf.classes_[1], clf.classes_[0]) == yt)
    assert abs(np.mean(clf.predict(Xt) == yt) - acc_ref) <= 0.005
    # Dual objectives: ours (f - f(0)) below D_+ by at most the bias bound + our certified gap.
    alpha = np.abs(coef)
    dual_ref = float(alpha.sum() - 0.5 * coef @ (F @ (F.T @ coef)))
    res = clf.result_
    # f(alpha) - f(0) as the solver formed it, without f(0) (about 1.8e10 here, whose ulp of
    # 3.8e-6 exceeded the slack when the test subtracted it: red on a fresh install).
    ours_dual = res.objective_excess
    slack = bound**2 / (16.0 * rho) + res.gap + 1e-9 * dual_ref
    assert dual_ref - slack <= ours_dual <= dual_ref + 1e-7 * dual_ref
    # The multipliers are the LIBSVM ones (the SVM dual is strictly concave along F' Y alpha
    # only, so compare what is unique: the weight vector).
    w_ours = F.T @ (ypm * res.alpha)
    w_ref = F.T @ coef
    assert np.linalg.norm(w_ours - w_ref) <= 2e-5 * np.linalg.norm(w_ref)


def test_moderate_rho_is_not_the_clip_limit(table):
    """The check above can fail: at rho = 1e-2 the proxy kernel is far from (K0)_+ (the
    decision values differ by 100 times the tolerance used above)."""
    X, y, Xt, yt = table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = _model(1e-2, "lowrank_newton").fit(X, y)
    ref_decision = _clip_reference(clf, X, y, Xt)[-1]
    diff = np.max(np.abs(clf.decision_function(Xt) - ref_decision))
    assert diff > 2e-3 * float(np.max(np.abs(ref_decision)))
