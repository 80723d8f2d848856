"""The proxy kernel of paper 004, Theorem 1 (eq. 5), against dense ``numpy.linalg.eigh``.

``ProxyKernelOperator`` never forms ``M = K0 + sigma u u'`` or ``K* = M_+``; every quantity of
a :class:`~indefsvm.proxy.operators.ProxyState` is compared here with the same quantity computed
from the
dense eigendecomposition of ``M`` (``tests/reference.py``: ``psd_part``). The operator's fast
paths (warm start, ``V'u`` by linearity, engines) are in ``test_proxy_engine.py``; the states of
the paper's smoothing and block sizes in ``test_proxy_contract.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import psd_part

from indefsvm.proxy.operators import ProxyKernelOperator


def _random_case(seed: int, n: int, n_negative: int, sigma: float):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    d = np.concatenate([-rng.uniform(0.1, 2.0, n_negative), rng.uniform(0.0, 2.0, n - n_negative)])
    K0 = (Q * d) @ Q.T
    K0 = (K0 + K0.T) / 2
    u = rng.normal(size=n)
    return K0, u, sigma


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 25),
    frac_negative=st.floats(0.0, 1.0),
    log_sigma=st.floats(-3.0, 2.0),
)
def test_state_matches_dense_eigh_of_the_rank_one_update(seed, n, frac_negative, log_sigma):
    """Every field of the state equals its definition evaluated with dense eigh of M."""
    K0, u, sigma = _random_case(seed, n, int(round(frac_negative * n)), 10.0**log_sigma)
    op = ProxyKernelOperator(K0, sigma)
    st_ = op.state(u)
    M = K0 + sigma * np.outer(u, u)
    lam = np.linalg.eigvalsh(M)
    K_star = psd_part(M)  # Theorem 1: the nearest PSD matrix to M in Frobenius norm
    scale = max(1.0, np.abs(lam).max()) * max(1.0, u @ u)
    np.testing.assert_allclose(st_.kstar_u, K_star @ u, atol=1e-9 * scale)
    assert st_.u_kstar_u == pytest.approx(u @ K_star @ u, abs=1e-9 * scale)
    assert st_.u_k0_u == pytest.approx(u @ K0 @ u, abs=1e-9 * scale)
    assert st_.u_norm_sq == pytest.approx(u @ u, rel=1e-12)
    # u' M_- u and ||M - K*||_F^2 = sum of squared negative eigenvalues
    assert st_.u_mneg_u == pytest.approx(u @ (M - K_star) @ u, abs=1e-9 * scale)
    assert st_.neg_sq_sum == pytest.approx(np.sum(np.minimum(lam, 0) ** 2), abs=1e-9 * scale)
    assert np.all(st_.low_values < 0)
    if not np.any(np.abs(lam) < 1e-8 * scale):  # no eigenvalue ambiguous about its sign
        np.testing.assert_allclose(np.sort(st_.low_values), lam[lam < 0], atol=1e-9 * scale)
    # products and the dense kernel
    v = np.random.default_rng(seed + 1).normal(size=n)
    np.testing.assert_allclose(op.matvec(st_, v), K_star @ v, atol=1e-9 * scale * max(1, v @ v))
    K = op.kernel(st_)
    np.testing.assert_allclose(K, K_star, atol=1e-9 * scale)
    assert np.array_equal(K, K.T)
    # K* = P_+ M (notes §8): projecting the rows of M onto M's non-negative eigenspace
    np.testing.assert_allclose(op.project_rows(st_, M), K_star, atol=1e-9 * scale)


def test_spectral_scale_and_psd_flag_match_eigh():
    K0, u, sigma = _random_case(1, 12, 4, 0.3)
    op = ProxyKernelOperator(K0, sigma)
    assert op.spectral_scale() == pytest.approx(np.abs(np.linalg.eigvalsh(K0)).max(), rel=1e-12)
    assert not op.is_psd and op.n_negative_k0 == 4
    K_psd = psd_part(K0) + 1e-3 * np.eye(12)
    op_psd = ProxyKernelOperator(K_psd, sigma)
    assert op_psd.is_psd
    st_ = op_psd.state(u)
    # PSD K0: M is PSD for every u, so K* = M and no eigenpair is dropped (paper 004 eq. 22)
    assert st_.low_values.size == 0
    np.testing.assert_allclose(op_psd.kernel(st_), K_psd + sigma * np.outer(u, u), atol=1e-12)


def test_assume_psd_skips_the_eigendecomposition_and_uses_a_gershgorin_scale():
    K0, u, sigma = _random_case(2, 10, 0, 0.5)
    op = ProxyKernelOperator(K0, sigma, assume_psd=True)
    assert op.eigenvalues is None and op.eigenvectors is None
    assert op.spectral_scale() == pytest.approx(np.abs(K0).sum(axis=1).max())
    st_ = op.state(u)
    np.testing.assert_allclose(op.kernel(st_), K0 + sigma * np.outer(u, u), atol=1e-12)


def test_zero_update_gives_the_clipped_kernel():
    """u = 0: K* = (K0)_+, the rho -> infinity kernel (paper 004, Sect. 2.3)."""
    K0, _, sigma = _random_case(3, 15, 6, 1.0)
    op = ProxyKernelOperator(K0, sigma)
    st_ = op.state(np.zeros(15))
    np.testing.assert_allclose(op.kernel(st_), psd_part(K0), atol=1e-12)
    assert st_.neg_sq_sum == pytest.approx(np.sum(np.minimum(np.linalg.eigvalsh(K0), 0) ** 2))


@pytest.mark.parametrize("seed", [0, 1])
def test_objective_state_matches_dense_eigh_and_the_full_state(seed):
    """``objective_state`` (negative eigenvalues only) vs dense eigh of M and the full state."""
    K0, u, sigma = _random_case(seed, 40, 18, 0.25)
    op = ProxyKernelOperator(K0, sigma)
    part = op.objective_state(u)
    lam = np.linalg.eigvalsh(K0 + sigma * np.outer(u, u))
    assert part.low_vectors is None and part.kstar_u is None
    np.testing.assert_allclose(part.neg_sq_sum, np.sum(np.minimum(lam, 0) ** 2), rtol=1e-11)
    np.testing.assert_allclose(part.u_k0_u, u @ K0 @ u, rtol=1e-11, atol=1e-11)
    full = op.state(u)
    np.testing.assert_allclose(part.low_values, full.low_values[full.low_values < 0], atol=1e-12)
    assert part.neg_sq_sum == pytest.approx(full.neg_sq_sum, rel=1e-13)
