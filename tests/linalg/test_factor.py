"""The factor backends of :mod:`indefsvm.linalg.factor` against explicit dense products.

Every pass of :class:`NumpyFactor` (float64 and float32 storage, several row blocks) and of
:class:`DaskFactor` (uneven row chunks 600, 600, 600, 200, Dask's local scheduler) is compared
with the same product formed from the whole float64 matrix.
"""

from __future__ import annotations

import numpy as np
import pytest

import indefsvm.utils.blocks as blocks_module
from indefsvm.linalg import factor as factor_module
from indefsvm.linalg.factor import DaskFactor, LowRankKernel, NumpyFactor, as_factor

N, CHUNK, M = 2000, 600, 30


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    Phi = rng.normal(size=(N, M)) * np.logspace(0, -2, M)
    s = np.where(rng.uniform(size=M) < 0.4, -1.0, 1.0)
    return Phi, s


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / max(
        1e-300, float(np.max(np.abs(b)))
    )


def test_compiled_float32_products_equal_the_block_fallback(monkeypatch):
    """The compiled float32 products (Numba) and the numpy block fallback agree."""
    rng = np.random.default_rng(8)
    Phi = rng.normal(size=(300, 6)).astype(np.float32)
    F = Phi.astype(np.float64)
    monkeypatch.setattr(blocks_module, "BLOCK_BYTES", 8 * 6 * 64)  # several row blocks
    v, w = rng.normal(size=300), rng.normal(size=6)
    backend = NumpyFactor(Phi)
    fast = backend.rmat(v), backend.mat(w)
    monkeypatch.setattr(factor_module, "_float32_kernels", lambda: None)
    slow = backend.rmat(v), backend.mat(w)
    assert rel(fast[0], slow[0]) < 1e-13 and rel(fast[1], slow[1]) < 1e-13
    assert rel(slow[0], F.T @ v) < 1e-13 and rel(slow[1], F @ w) < 1e-13


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_passes_equal_dense_products(monkeypatch, data, dtype):
    monkeypatch.setattr(blocks_module, "BLOCK_BYTES", 8 * M * 128)  # several row blocks
    Phi = data[0].astype(dtype)
    F = Phi.astype(np.float64)
    backend = LowRankKernel(Phi, data[1]).backend
    assert isinstance(backend, NumpyFactor) and backend.Phi is Phi
    rng = np.random.default_rng(1)
    v, V = rng.normal(size=N), rng.normal(size=(N, 3))
    w, scale = rng.normal(size=M), rng.uniform(0.5, 2.0, size=N)
    T = rng.normal(size=(M, 4))
    B = scale[:, None] * F
    tol = {"rtol": 1e-12, "atol": 1e-10}
    np.testing.assert_allclose(backend.rmat(v), F.T @ v, **tol)
    np.testing.assert_allclose(backend.rmat(V), F.T @ V, **tol)
    np.testing.assert_allclose(backend.mat(w), F @ w, **tol)
    np.testing.assert_allclose(backend.gram(T, scale), (B @ T).T @ (B @ T), **tol)
    np.testing.assert_allclose(backend.gram(None, None), F.T @ F, **tol)
    idx = np.array([0, 5, 127, 128, 1799, 1999])
    np.testing.assert_allclose(backend.rows_gram(idx, scale), B[idx].T @ B[idx], **tol)
    np.testing.assert_allclose(
        backend.rows_gram(idx, None, T), (F[idx] @ T).T @ (F[idx] @ T), **tol
    )
    assert backend.peak(scale) == pytest.approx(np.max(np.abs(B)), rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dask_passes_equal_numpy_products(data, dtype):
    da = pytest.importorskip("dask.array")
    """Each pass of the dask backend (local scheduler) against the numpy product."""
    Phi = data[0].astype(dtype)
    F = Phi.astype(np.float64)
    backend = LowRankKernel(da.from_array(Phi, chunks=(CHUNK, -1)), data[1]).backend
    assert isinstance(backend, DaskFactor) and backend.Phi.dtype == dtype
    rng = np.random.default_rng(0)
    v, V = rng.normal(size=N), rng.normal(size=(N, 3))
    w, scale = rng.normal(size=M), rng.uniform(0.5, 2.0, size=N)
    T = rng.normal(size=(M, 4))
    tol = {"rtol": 1e-12, "atol": 1e-10}
    np.testing.assert_allclose(backend.rmat(v), F.T @ v, **tol)
    np.testing.assert_allclose(backend.rmat(V), F.T @ V, **tol)
    np.testing.assert_allclose(backend.mat(w), F @ w, **tol)
    np.testing.assert_allclose(backend.mat_abs(np.abs(w)), np.abs(F) @ np.abs(w), **tol)
    B = scale[:, None] * F
    np.testing.assert_allclose(backend.gram(T, scale), (B @ T).T @ (B @ T), **tol)
    np.testing.assert_allclose(backend.gram(None, None), F.T @ F, **tol)
    # Rows in every chunk, at both ends of a chunk, and a chunk with no row selected.
    idx = np.array([0, 5, 599, 600, 1799, 1800, 1999])
    np.testing.assert_allclose(backend.rows_gram(idx, scale), B[idx].T @ B[idx], **tol)
    first = F[idx[:2]]
    np.testing.assert_allclose(backend.rows_gram(idx[:2], None), first.T @ first, **tol)
    assert np.all(backend.rows_gram(idx[:0], None) == 0)
    # B_I'W, the update of the masked products (both backends against the product of the rows).
    W = rng.normal(size=(idx.size, 3))
    in_memory = LowRankKernel(Phi, data[1]).backend
    for factor in (backend, in_memory):
        np.testing.assert_allclose(factor.rows_rmat(idx, W, scale), B[idx].T @ W, **tol)
        np.testing.assert_allclose(factor.rows_rmat(idx[:0], W[:0], None), np.zeros((M, 3)))
    assert backend.peak(scale) == pytest.approx(np.max(np.abs(B)), rel=1e-12)
    assert backend.peak(None) == pytest.approx(np.max(np.abs(F)), rel=1e-12)


def test_dask_factor_is_persisted_and_merges_column_chunks(data):
    da = pytest.importorskip("dask.array")
    Phi = da.from_array(data[0], chunks=(CHUNK, 7))
    K = LowRankKernel(Phi, data[1])
    assert K.features.chunks == ((600, 600, 600, 200), (M,))
    assert "dask workers" in repr(K)
    np.testing.assert_allclose(K.matvec(np.ones(N)), LowRankKernel(data[0], data[1]).matvec(
        np.ones(N)), rtol=1e-12, atol=1e-9)  # fmt: skip


def test_dense_refusal_names_the_limit():
    with pytest.raises(ValueError, match="only up to n = 10"):
        factor_module.check_dense(11, 10, "the thing")
    factor_module.check_dense(10, 10, "the thing")


# -- the generic passes (block functions of the caller's) -------------------------------------
def _gram_and_sum(B, v):
    B = np.asarray(B, dtype=np.float64)
    return B.T @ B, float(v.sum())


def _affine(B, z, b):
    return np.asarray(B, dtype=np.float64) @ z + b


def _backends(Phi):
    """The numpy backend with several row blocks and the dask one (uneven chunks)."""
    out = [as_factor(Phi)]
    da = pytest.importorskip("dask.array")
    out.append(as_factor(da.from_array(Phi, chunks=(CHUNK, -1))))
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_generic_passes_equal_dense_products(monkeypatch, data, dtype):
    monkeypatch.setattr(blocks_module, "BLOCK_BYTES", 8 * M * 300)  # 7 row blocks in memory
    Phi = data[0].astype(dtype)
    F = Phi.astype(np.float64)
    rng = np.random.default_rng(2)
    v, z, w = rng.normal(size=N), rng.normal(size=M), rng.normal(size=N)
    tol = {"rtol": 1e-12, "atol": 1e-10}
    for backend in _backends(Phi):
        assert backend.shape == (N, M)
        vr, wr = backend.rows(v), backend.rows(w, "w")
        G, total = backend.reduce(_gram_and_sum, vr)
        np.testing.assert_allclose(G, F.T @ F, **tol)
        assert total == pytest.approx(v.sum(), rel=1e-12)
        out = backend.map(_affine, args=(z, 0.5))
        np.testing.assert_allclose(np.asarray(out), F @ z + 0.5, **tol)
        dot = backend.reduce(lambda a, b: float(a @ b), vr, wr, factor=False)
        assert dot == pytest.approx(v @ w, rel=1e-12)
        kept = backend.persist(backend.map(_affine, args=(z, 0.0)))
        np.testing.assert_allclose(np.asarray(kept), F @ z, **tol)
        # A combine other than the sum: the largest row norm.
        peak = backend.reduce(
            lambda B: float(np.max(np.abs(B))), args=(), combine=lambda a, b: max(a, b)
        )
        assert peak == pytest.approx(np.max(np.abs(F)), rel=1e-12)


def test_rows_checks_length_and_finiteness(data):
    backend = as_factor(data[0])
    with pytest.raises(ValueError, match="y has 3 entries but Phi has 2000 rows"):
        backend.rows(np.ones(3))
    with pytest.raises(ValueError, match="y contains NaN or inf"):
        backend.rows(np.full(N, np.nan))
    with pytest.raises(ValueError, match="must be 2-D; got shape"):
        as_factor(np.ones(5))


def test_compact_columns_in_place():
    A = np.arange(7 * 5, dtype=float).reshape(7, 5)
    ref = A[:, :3].copy()
    B = factor_module.compact_columns(A, 3)
    np.testing.assert_array_equal(B, ref)
    assert B.flags.c_contiguous and np.shares_memory(A, B)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_right_multiply_inplace_equals_the_product(monkeypatch, dtype):
    monkeypatch.setattr(blocks_module, "BLOCK_BYTES", 8 * 6 * 5)  # 5-row blocks
    rng = np.random.default_rng(4)
    A = rng.normal(size=(23, 6)).astype(dtype)
    T = rng.normal(size=(6, 4))
    ref = A @ T.astype(dtype)
    B = factor_module.right_multiply_inplace(A, T)
    assert B.shape == (23, 4) and B.dtype == dtype and np.shares_memory(A, B)
    np.testing.assert_allclose(B, ref, rtol=1e-5 if dtype == np.float32 else 1e-13)
    da = pytest.importorskip("dask.array")
    A = rng.normal(size=(23, 6))
    got = factor_module.right_multiply_inplace(da.from_array(A, chunks=(7, 6)), T)
    np.testing.assert_allclose(got.compute(), A @ T, rtol=1e-13)
