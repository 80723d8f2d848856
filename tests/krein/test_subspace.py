"""Ong et al. (2004), Sect. 5: TSF, Landweber-Fridman and MR-II against dense references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indefsvm.krein import landweber_fridman, mr_ii, truncated_spectral_factorization


def _indefinite(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    return (A + A.T) / 2, rng.normal(size=n)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 25), st.integers(0, 2**31 - 1), st.integers(1, 8))
def test_mr_ii_minimises_residual_over_krylov_space(n, seed, k):
    K, y = _indefinite(n, seed)
    k = min(k, n)
    sol = mr_ii(K, y, n_iter=k)
    # Reference: least squares over span{K y, ..., K^j y} with j = iterations done (QR basis).
    j = sol.n_iter
    B = np.column_stack([np.linalg.matrix_power(K, i) @ y for i in range(1, j + 1)])
    Q, _ = np.linalg.qr(B)
    c, *_ = np.linalg.lstsq(K @ Q, y, rcond=None)
    ref = np.linalg.norm(y - K @ (Q @ c))
    assert np.linalg.norm(y - K @ sol.alpha) == pytest.approx(ref, rel=1e-6, abs=1e-9)
    assert np.all(np.diff(sol.residual_norms) <= 1e-9 * sol.residual_norms[0])


def test_mr_ii_with_clustered_and_repeated_eigenvalues_reaches_solution():
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    lam = np.array([-2.0, -2.0, -2.0, -1e-3, 1.0, 1.0, 1.0 + 1e-10, 3.0, 3.0, 5.0, -4.0, 2.0])
    K = (Q * lam) @ Q.T
    y = rng.normal(size=12)
    K = 0.5 * (K + K.T)
    exact = np.linalg.solve(K, y)
    # 7 clusters (one split by 1e-10): after 7 steps only the split is unresolved.
    assert np.linalg.norm(K @ mr_ii(K, y, n_iter=7).alpha - y) <= 1e-4 * np.linalg.norm(y)
    # Running far past exhaustion must not blow the iterate up (breakdown guard).
    sol = mr_ii(K, y, n_iter=50)
    assert np.linalg.norm(K @ sol.alpha - y) <= 1e-6 * np.linalg.norm(y)
    assert np.allclose(sol.alpha, exact, rtol=1e-4, atol=1e-6 * np.abs(exact).max())


def test_landweber_filter_factors():
    K, y = _indefinite(10, 1)
    mu, U = np.linalg.eigh(K)
    omega = 0.5 / np.max(mu**2)
    k = 17
    sol = landweber_fridman(K, y, n_iter=k, step_size=omega, variant="normal")
    ref = U @ ((1 - (1 - omega * mu**2) ** k) / mu * (U.T @ y))
    assert np.allclose(sol.alpha, ref, atol=1e-10)
    assert np.all(np.diff(sol.residual_norms) <= 1e-12)
    # The paper's Krein-adjoint reading: filter 1 - (1 - omega mu)^k, growing on mu < 0.
    omega_k = 0.1 / np.max(np.abs(mu))
    kre = landweber_fridman(K, y, n_iter=5, step_size=omega_k, variant="krein")
    ref_k = U @ ((1 - (1 - omega_k * mu) ** 5) / mu * (U.T @ y))
    assert np.allclose(kre.alpha, ref_k, atol=1e-10)
    with pytest.raises(ValueError, match="diverge"):
        landweber_fridman(K, y, n_iter=3, step_size=3.0 / np.max(mu**2), variant="normal")


def test_tsf_truncation():
    K, y = _indefinite(9, 2)
    full = truncated_spectral_factorization(K, y, n_components=9)
    assert np.allclose(K @ full, y, atol=1e-9)
    mu, U = np.linalg.eigh(K)
    keep = np.argsort(-np.abs(mu))[:3]
    ref = sum(U[:, i] * (U[:, i] @ y) / mu[i] for i in keep)
    assert np.allclose(truncated_spectral_factorization(K, y, n_components=3), ref)
    thr = np.sort(np.abs(mu))[-4]  # strictly above -> 3 components
    assert np.allclose(truncated_spectral_factorization(K, y, threshold=thr), ref)
    with pytest.raises(ValueError, match="exactly one"):
        truncated_spectral_factorization(K, y)
    with pytest.raises(ValueError, match="n_components"):
        truncated_spectral_factorization(K, y, n_components=0)


def test_iteration_bad_input():
    K, y = _indefinite(4, 0)
    with pytest.raises(ValueError, match="n_iter"):
        mr_ii(K, y, n_iter=-1)
    with pytest.raises(ValueError, match="one per row"):
        landweber_fridman(K, y[:3], n_iter=2)
    with pytest.raises(ValueError, match="variant"):
        landweber_fridman(K, y, n_iter=2, variant="x")


def test_mr_ii_stops_when_a_rank_deficient_kernel_exhausts_the_krylov_space():
    """Rank-3 kernel, targets outside its range: after 3 steps the Krylov space is exhausted
    and MR-II's iterate is the minimum-norm least-squares solution ``pinv(K) y`` (x_k lies in
    range(K)); continuing would normalise rounding noise of the null space (eigenvalues
    ~1e-15 ||K||) into a huge iterate (|alpha| ~ 1e14 before the breakdown test was scaled by
    ||K||)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 3)) * np.array([3.0, 1.0, 0.2])
    K = X @ X.T
    y = rng.normal(size=20) + 5.0
    sol = mr_ii(K, y, n_iter=10)
    reference = np.linalg.pinv(K, rcond=1e-10) @ y
    assert sol.n_iter <= 4
    np.testing.assert_allclose(sol.alpha, reference, rtol=1e-6, atol=1e-8 * np.abs(reference).max())
