"""The one-shot eigendecomposition from given Nystroem factors (paper 003, Sect. 2.2).

References are independent of the code under test: the exact Nystroem matrix
``K_nm K_mm^{-1} K_mn`` formed densely (``numpy.linalg.solve``) and its ``numpy.linalg.eigh``.
"""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.approximation import IndefiniteNystroem, one_shot_eigendecomposition
from indefsvm.kernels import sigmoid_kernel


def _factors(n: int, m: int, seed: int):
    """Seeded indefinite kernel blocks: a sigmoid kernel with a mixed-sign spectrum."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Z = X[rng.choice(n, size=m, replace=False)]
    params = {"gamma": 0.5, "coef0": 0.3}
    return X, Z, sigmoid_kernel(X, Z, **params), sigmoid_kernel(Z, **params), params


def _dense_reference(K_nm, K_mm, r):
    K = K_nm @ np.linalg.solve(K_mm, K_nm.T)
    K = 0.5 * (K + K.T)
    w, V = np.linalg.eigh(K)
    top = np.argsort(-np.abs(w), kind="stable")[:r]
    return K, w, V, top


@pytest.mark.parametrize("n, m, seed", [(150, 20, 0), (200, 40, 1), (90, 60, 2)])
def test_matches_dense_eigh_of_the_nystroem_matrix(n, m, seed):
    _, _, K_nm, K_mm, _ = _factors(n, m, seed)
    lam, U = one_shot_eigendecomposition(K_nm, K_mm)
    r = lam.size
    K, w, V, top = _dense_reference(K_nm, K_mm, r)
    assert r == m  # K_mm of a sigmoid kernel on distinct points is non-singular here
    assert np.sum(lam < 0) > 0 and np.sum(lam > 0) > 0  # genuinely indefinite
    scale = np.abs(w).max()
    np.testing.assert_allclose(lam, w[top], rtol=0, atol=1e-10 * scale)
    # The rest of the dense spectrum is zero: K has rank r.
    rest = np.setdiff1d(np.arange(n), top)
    assert np.max(np.abs(w[rest]), initial=0.0) < 1e-10 * scale
    np.testing.assert_allclose(U.T @ U, np.eye(r), rtol=0, atol=1e-12)
    np.testing.assert_allclose((U * lam) @ U.T, K, rtol=0, atol=1e-10 * scale)
    # Eigenvector by eigenvector (up to sign) where the eigenvalue is well separated.
    gaps = np.array([np.min(np.abs(np.delete(w, top[j]) - w[top[j]])) for j in range(r)])
    for j in np.flatnonzero(gaps > 1e-6 * scale):
        assert abs(abs(U[:, j] @ V[:, top[j]]) - 1.0) < 1e-8


def test_agrees_with_the_transformer_features():
    X, Z, K_nm, K_mm, params = _factors(160, 30, 3)
    lam, U = one_shot_eigendecomposition(K_nm, K_mm)
    idx = np.flatnonzero((X[:, None, :] == Z[None, :, :]).all(axis=2).any(axis=1))
    ny = IndefiniteNystroem(
        "sigmoid", **params, landmarks=np.sort(idx), factorization="one-shot"
    ).fit(X)
    # The transformer sorts Z by index; the decomposition is invariant to that order.
    np.testing.assert_allclose(ny.eigenvalues_, lam, rtol=1e-10, atol=1e-12)
    Phi = ny.transform(X)
    np.testing.assert_allclose(
        (Phi * ny.signature_) @ Phi.T, (U * lam) @ U.T, rtol=0, atol=1e-10 * np.abs(lam).max()
    )


def test_fewer_points_than_landmarks_and_singular_block():
    _, _, K_nm, K_mm, _ = _factors(120, 30, 4)
    # Few rows: rank <= n.
    lam, U = one_shot_eigendecomposition(K_nm[:10], K_mm)
    K, w, _, top = _dense_reference(K_nm[:10], K_mm, lam.size)
    assert lam.size <= 10
    np.testing.assert_allclose((U * lam) @ U.T, K, rtol=0, atol=1e-9 * np.abs(w).max())
    np.testing.assert_allclose(U.T @ U, np.eye(lam.size), atol=1e-12)
    # Repeated landmark: K_mm singular, pseudo-inverse over the kept eigenvalues.
    K_nm2 = np.hstack([K_nm, K_nm[:, :1]])
    K_mm2 = np.block([[K_mm, K_mm[:, :1]], [K_mm[:1, :], K_mm[:1, :1]]])
    lam2, U2 = one_shot_eigendecomposition(K_nm2, K_mm2)
    assert lam2.size == 30
    np.testing.assert_allclose(
        (U2 * lam2) @ U2.T,
        K_nm2 @ np.linalg.pinv(K_mm2, rcond=1e-10, hermitian=True) @ K_nm2.T,
        rtol=0,
        atol=1e-9 * np.abs(lam2).max(),
    )


def test_bad_input_is_refused_with_a_clear_error():
    _, _, K_nm, K_mm, _ = _factors(50, 10, 5)
    with pytest.raises(ValueError, match=r"K_mm must be the \(10, 10\) landmark block"):
        one_shot_eigendecomposition(K_nm, K_mm[:9, :9])
    with pytest.raises(ValueError, match="K_mm is not symmetric"):
        bad = K_mm.copy()
        bad[0, 1] += 1.0
        one_shot_eigendecomposition(K_nm, bad)
    with pytest.raises(ValueError, match="K_nm must be 2-dimensional"):
        one_shot_eigendecomposition(K_nm[0], K_mm)
    with pytest.raises(ValueError, match="K_nm contains NaN"):
        nan = K_nm.copy()
        nan[3, 3] = np.nan
        one_shot_eigendecomposition(nan, K_mm)
    with pytest.raises(ValueError, match=r"rcond must be a real number in \(0, 1\)"):
        one_shot_eigendecomposition(K_nm, K_mm, rcond=0.0)
    with pytest.raises(ValueError, match="at least one row"):
        one_shot_eigendecomposition(K_nm[:0], K_mm)
