"""Issue 22 (hardening 2), estimator semantics: one-class nu (item 6), feature_coef_ (item 22)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import OneClassSVM

from indefsvm.proxy.estimators import IndefiniteOneClassSVM, IndefiniteSVC


def _blob(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, 2))


# ------------------------------------------------------------ item 6: one-class nu-property


@pytest.mark.parametrize("nu", [0.1, 0.25, 0.5])
def test_oneclass_nu_property_on_its_own_training_points(nu):
    """Schoelkopf et al. (2001), Prop. 4: outliers <= nu n <= support vectors. Before: at
    nu = 0.1 and rho = 1 predict flagged about 23 % of the training points (every margin support
    vector lost the rank-one term the certified offset was computed with)."""
    X = _blob(200, 0)
    K = rbf_kernel(X, X, gamma=0.5)
    clf = IndefiniteOneClassSVM(nu=nu, rho=1.0, tol=1e-8).fit(K)
    outliers = np.mean(clf.predict(K) == -1)
    assert outliers <= nu
    assert clf.support_.shape[0] / K.shape[0] >= nu - 1e-12
    # predict and decision_function agree (sign rule)
    assert np.array_equal(clf.predict(K) == -1, clf.decision_function(K) < 0)


def test_oneclass_nu_property_indefinite_kernel_and_low_rank():
    X = _blob(150, 1)
    K = np.tanh(0.8 * X @ X.T - 0.5)
    assert np.linalg.eigvalsh(K).min() < -1e-3  # really indefinite
    nu = 0.15
    dense = IndefiniteOneClassSVM(nu=nu, rho=1.0, tol=1e-8).fit(K)
    assert np.mean(dense.predict(K) == -1) <= nu
    low = IndefiniteOneClassSVM(
        nu=nu, rho=1.0, kernel="sigmoid", gamma=0.8, coef0=-0.5, n_components=40, random_state=0
    ).fit(X)
    assert np.mean(low.predict(X) == -1) <= nu
    assert low.support_.shape[0] / X.shape[0] >= nu - 1e-12


def test_oneclass_offset_is_the_nu_optimal_offset_of_the_inductive_scores():
    """Independent reference: brute-force minimum of -r + 1/(nu n) sum max(0, r - g_i) over the
    breakpoints r = g_j, with g the scores decision_function gives (before: the certified
    offset on K*, which is not optimal for these scores)."""
    X = _blob(120, 2)
    K = rbf_kernel(X, X, gamma=1.0)
    nu = 0.2
    clf = IndefiniteOneClassSVM(nu=nu, rho=0.5, tol=1e-8, keep_training_state=True).fit(K)
    g = clf.score_samples(K)
    n = g.shape[0]

    def primal(r: float) -> float:
        return -r + np.maximum(0.0, r - g).sum() / (nu * n)

    best = min(primal(r) for r in g)
    assert primal(clf.offset_) <= best + 1e-12
    # The rank-one term: K* rows exceed the inductive scores by alpha_i alpha'P+ alpha / (4 rho)
    # (dense eigh as the reference for P+).
    a = clf.alpha_
    lam, V = np.linalg.eigh(K + np.outer(a, a) / (4 * 0.5))
    P = (V[:, lam >= 0]) @ V[:, lam >= 0].T
    assert np.allclose(clf.proxy_kernel_ @ a - g, a * (a @ P @ a) / 2.0, atol=1e-10)


def test_oneclass_large_rho_psd_kernel_is_libsvm_one_class():
    """rho -> inf on a PSD kernel: the plain one-class SVM. LIBSVM's coefficients sum to nu n,
    so its decision values are nu n times ours."""
    X, Xt = _blob(100, 3), _blob(400, 4)
    K, Kt = rbf_kernel(X, X, gamma=0.5), rbf_kernel(Xt, X, gamma=0.5)
    nu = 0.105  # nu n not an integer: the optimal offset is unique
    ours = IndefiniteOneClassSVM(nu=nu, rho=1e9, tol=1e-9, max_iter=50000).fit(K)
    ref = OneClassSVM(kernel="precomputed", nu=nu, tol=1e-10).fit(K)
    scale = nu * K.shape[0]
    np.testing.assert_allclose(
        scale * ours.decision_function(Kt), ref.decision_function(Kt), atol=2e-4
    )
    assert np.mean(ours.predict(Kt) == ref.predict(Kt)) >= 0.99


def test_oneclass_transductive_keeps_the_certified_offset():
    X = _blob(60, 5)
    K = rbf_kernel(X, X, gamma=0.5)
    clf = IndefiniteOneClassSVM(nu=0.2, out_of_sample="transductive").fit(K)
    assert clf.intercept_ == clf.result_.intercept


# ------------------------------------------------------- item 22: what feature_coef_ computes


def test_feature_coef_gives_p_plus_k0_u_not_k_star_u_on_training_points():
    """The docs said phi_i . feature_coef_ = (K* u)_i; it is (P_+ k_i)'u = (K0 P_+ u)_i (dense
    eigh of M = K0 + u u'/(4 rho) as the reference, K0 = the Nystroem kernel Phi S Phi')."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=80) > 0, 1, -1)
    rho = 0.5
    clf = IndefiniteSVC(
        C=1.0,
        rho=rho,
        kernel="sigmoid",
        gamma=0.5,
        coef0=-0.3,
        n_components=25,
        random_state=0,
        tol=1e-8,
    ).fit(X, y)
    Phi = clf.nystroem_.transform(X)
    K0 = (Phi * clf.nystroem_.signature_) @ Phi.T
    u = np.where(y == clf.classes_[1], 1.0, -1.0) * clf.alpha_
    lam, V = np.linalg.eigh(K0 + np.outer(u, u) / (4 * rho))
    Vp, Vn = V[:, lam > 0], V[:, lam < 0]
    # Projector on the NON-NEGATIVE eigenspace: the null space of the low-rank M included.
    P = np.eye(len(u)) - Vn @ Vn.T
    K_star = (Vp * lam[lam > 0]) @ Vp.T
    got = Phi @ clf.feature_coef_
    np.testing.assert_allclose(got, K0 @ P @ u, atol=1e-8 * np.abs(K0).max())
    # ... and not the K* row: they differ by (u'P u / (4 rho)) u_i on the support vectors
    diff = K_star @ u - got
    np.testing.assert_allclose(diff, (u @ P @ u) / (4 * rho) * u, atol=1e-8 * np.abs(K0).max())
    assert np.abs(diff[clf.support_]).min() > 0


def test_feature_coef_docstring_no_longer_claims_the_k_star_row():
    from indefsvm.proxy.lowrank import LowRankProxyOperator

    doc = " ".join(LowRankProxyOperator.feature_coef.__doc__.split())
    assert "On a training point it is ``(K* u)_i``" not in doc
    assert "(K0 P_+ u)_i" in doc
