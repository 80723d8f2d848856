"""OngSubspaceRegressor (Ong et al. 2004, Sect. 5) against independent dense computations.

The references use only numpy: the eigendecomposition of the Gram matrix for TSF and the
Landweber filter factors, a least-squares problem over an explicit Krylov basis for MR-II, a dense
solve of ``K alpha = y`` for the unregularised limit, and the centring matrix ``H = I - 11'/n``
written out.
"""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.krein import OngSubspaceRegressor


def _sigmoid(A, B=None, a=0.7, b=-0.2):
    return np.tanh(a * A @ (A if B is None else B).T + b)


def _data(seed=0, n=25, m=9):
    rng = np.random.default_rng(seed)
    X, Xt = rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 1.5  # non-zero mean: centring matters
    K, Kt = _sigmoid(X), _sigmoid(Xt, X)
    assert np.linalg.eigvalsh(K)[0] < -1e-3  # indefinite
    return X, Xt, y, K, Kt


def _center(K, Kt):
    n = K.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    # test rows: subtract the mean over training columns of the row, the training column
    # means, add the grand mean; in matrix form (Kt - 1 1'K/n) H
    Kt_c = (Kt - np.ones((Kt.shape[0], n)) @ K / n) @ H
    return H @ K @ H, Kt_c


def _tsf_ref(K, y, k):
    mu, U = np.linalg.eigh(K)
    keep = np.argsort(-np.abs(mu))[:k]
    return U[:, keep] @ ((U[:, keep].T @ y) / mu[keep])


def _krylov_ref(K, y, k):
    """argmin ||y - K alpha|| over alpha in span{K y, ..., K^k y} (MR-II, alpha_0 = 0)."""
    B = np.column_stack([np.linalg.matrix_power(K, i) @ y for i in range(1, k + 1)])
    Q, _ = np.linalg.qr(B)
    c, *_ = np.linalg.lstsq(K @ Q, y, rcond=None)
    return Q @ c


def _landweber_ref(K, y, k, omega):
    mu, U = np.linalg.eigh(K)
    return U @ ((1 - (1 - omega * mu**2) ** k) / mu * (U.T @ y))


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("k", [3, 8])
def test_tsf_matches_dense_truncated_eigensolution(center, k):
    X, Xt, y, K, Kt = _data()
    Kf, Ktf, b = K, Kt, 0.0
    if center:
        Kf, Ktf = _center(K, Kt)
        b = y.mean()
    alpha = _tsf_ref(Kf, y - b, k)
    est = OngSubspaceRegressor(solver="tsf", n_components=k, center=center).fit(K, y)
    assert np.allclose(est.alpha_, alpha, atol=1e-9 * np.abs(alpha).max())
    assert est.intercept_ == pytest.approx(b)
    assert np.allclose(est.predict(Kt), Ktf @ alpha + b, atol=1e-8)
    # a callable kernel gives the same model as the precomputed one
    est_x = OngSubspaceRegressor(_sigmoid, solver="tsf", n_components=k, center=center)
    assert np.allclose(est_x.fit(X, y).predict(Xt), Ktf @ alpha + b, atol=1e-8)


def test_tsf_default_threshold_interpolates_like_a_dense_solve():
    _, _, y, K, Kt = _data(1)
    est = OngSubspaceRegressor(solver="tsf").fit(K, y)
    exact = np.linalg.solve(K, y)
    assert np.allclose(est.alpha_, exact, rtol=1e-6, atol=1e-8 * np.abs(exact).max())
    assert np.allclose(est.predict(K), y, atol=1e-7)
    assert np.allclose(est.predict(Kt), Kt @ exact, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("k", [1, 4, 7])
def test_mr2_matches_least_squares_over_krylov_basis(center, k):
    _, _, y, K, Kt = _data(2)
    Kf, Ktf, b = K, Kt, 0.0
    if center:
        Kf, Ktf = _center(K, Kt)
        b = y.mean()
    alpha = _krylov_ref(Kf, y - b, k)
    est = OngSubspaceRegressor(solver="mr2", n_iter=k, center=center).fit(K, y)
    assert est.n_iter_ == k
    res_est = np.linalg.norm(Kf @ est.alpha_ - (y - b))
    res_ref = np.linalg.norm(Kf @ alpha - (y - b))
    assert res_est == pytest.approx(res_ref, rel=1e-6)
    assert np.allclose(est.alpha_, alpha, rtol=1e-5, atol=1e-6 * np.abs(alpha).max())
    assert np.allclose(est.predict(Kt), Ktf @ alpha + b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("k", [5, 40])
def test_landweber_matches_filter_factors(k):
    _, _, y, K, Kt = _data(3)
    omega = 0.7 / np.max(np.linalg.eigvalsh(K) ** 2)
    alpha = _landweber_ref(K, y, k, omega)
    # the normal-equation variant (Hanke & Hansen), whose filter factors _landweber_ref writes out
    est = OngSubspaceRegressor(
        solver="landweber", variant="normal", n_iter=k, step_size=omega
    ).fit(K, y)
    assert est.n_iter_ == k
    assert np.allclose(est.alpha_, alpha, atol=1e-10 * max(1.0, np.abs(alpha).max()))
    assert np.allclose(est.predict(Kt), Kt @ alpha, atol=1e-9)
    # default step 1/||K||^2
    default = OngSubspaceRegressor(solver="landweber", variant="normal", n_iter=k).fit(K, y)
    omega0 = 1.0 / np.max(np.abs(np.linalg.eigvalsh(K))) ** 2
    assert np.allclose(default.alpha_, _landweber_ref(K, y, k, omega0), rtol=1e-6, atol=1e-9)


def test_more_iterations_fit_the_training_targets_better():
    _, _, y, K, _ = _data(4)
    res = [
        np.linalg.norm(OngSubspaceRegressor(solver="mr2", n_iter=k).fit(K, y).predict(K) - y)
        for k in (1, 3, 6, 12)
    ]
    assert all(a > b for a, b in zip(res, res[1:], strict=False))
