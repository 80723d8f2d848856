"""A kernel given by a factor, ``K0 = Phi diag(s) Phi'``, and the passes over ``Phi``.

Both paradigms learn on a Nystroem factor ``Phi`` (n x m, m << n) without forming n x n arrays:
the proxy-kernel SVM (:mod:`indefsvm.proxy.lowrank`) and the low-rank Krein learners
(:mod:`indefsvm.krein.lowrank`, :mod:`indefsvm.krein.models`). Each reads the factor only
through one backend object, which makes the row-block passes: in this process
(:class:`NumpyFactor`) or on the Dask workers that hold the rows (:class:`DaskFactor`).
:func:`factor_backend` and :func:`as_factor` pick it from the type of the array;
:class:`LowRankKernel` (the proxy wing's input type) holds one.

Passes. Named ones for the proxy operator (``Phi' V``, ``Phi W``, ``(Phi T)'(Phi T)``,
``Phi_I' Phi_I``, ``B_I' W``) and generic ones that take a block function of the caller's
(:meth:`NumpyFactor.reduce`, :meth:`~NumpyFactor.map`),
which the Krein learners use with their own block functions: the numerical meaning stays in the
module that owns it, the backend decides where and in which pieces the rows are read. In memory
the blocks are :func:`~indefsvm.utils.blocks.rows_per_block` rows (a float32 block is converted
to float64, so every product is the float64 product of the stored values); on the workers a
pass is a map-reduce over the row chunks whose partial results (m or m^2 numbers per chunk) are
tree-summed there.

Where the n-vectors live. The proxy solvers keep theirs (``alpha``, ``u``, gradients,
``Phi w``) in the client as numpy arrays: each pass ships ``v`` out in the factor's row chunks
and brings ``Phi w`` back, O(n) numbers of traffic, and the client holds O(n) numbers, m times
less than the factor. Keeping them on the workers instead (dask arrays, with the projection
onto ``{y'a = 0, 0 <= a <= C}`` -- a 1-D root in the multiplier --, the intercept's sort and
the step search rewritten as per-chunk reductions) would cut the traffic per pass to
O(m^2 + chunks) numbers but turn every O(n) operation of every solver into a distributed round
trip (the projection alone evaluates its piecewise-linear function in the multiplier several
times per iteration) and need a second implementation of each solver's vector work. At the
sizes the issue targets the O(n) traffic is cheap next to the pass itself (n = 3e5: 2.4 MB per
vector against a 720 MB factor), so the client-side vectors were chosen; ``docs/scale.md``
estimates where that stops being true (n = 1e8 on 32 machines). The Krein learners' vector work
is a few element-wise expressions per Newton step, so theirs stay on the workers as row-chunked
dask vectors (:meth:`DaskFactor.rows`, :meth:`DaskFactor.map`), read inside the passes.

Usage::

    K0 = LowRankKernel(Phi, signature)   # K0 = Phi diag(signature) Phi'
    K0.backend.rmat(v)                   # Phi' v, in memory or on the workers
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.utils.blocks import rows_per_block
from indefsvm.utils.dask_rows import (
    align_rows,
    check_dask_rows,
    is_dask_array,
    map_rows,
    persist_rows,
    reduce_rows,
)
from indefsvm.utils.validation import check_finite_matrix

__all__ = [
    "DENSE_LIMIT",
    "DaskFactor",
    "LowRankKernel",
    "NumpyFactor",
    "as_factor",
    "check_dense",
    "compact_columns",
    "factor_backend",
    "right_multiply_inplace",
]

#: Largest n for which a low-rank problem agrees to form n x n matrices (dense ``K0``/``K*``,
#: LIBSVM checks, ACCPM's Newton systems, SIQCLP): 5,000 x 5,000 float64 is 200 MB.
DENSE_LIMIT = 5000


# Partial results summed per task of a dask reduction: one level of tree for up to 32 chunks
# (Dask's default, 4, makes a 12-chunk pass three scheduler round trips deep instead of one).
_DASK_FAN_IN = 32


# Block-sized float64 temporaries of one pass: the converted block, the caller's selection or
# scaled copy of it, their products. Measured (one thread, float32 factor, Gram + scaled Gram +
# Phi'V): 4 is faster than 1 (the former Krein blocks, 2**22 / m rows) and than the proxy's former
# fixed 16384 rows at m = 200 (0.84 s vs 1.18 s and 0.95 s) and m = 500 (1.85 s vs 2.12 s and
# 2.45 s), 13 % slower than 16384 rows at m = 50; a float32 squared_hinge_svm at n = 3e5, m = 200
# takes 1.57 s instead of 2.2 s. Results move at rounding level only (5e-16 relative there).
_TEMPORARIES = 4


def _rows(m: int) -> int:
    """Rows of one block of an ``m``-column factor (:func:`~indefsvm.utils.blocks.rows_per_block`
    with :data:`_TEMPORARIES`)."""
    return rows_per_block(m, _TEMPORARIES)


def _scaled_rows(
    P: NDArray,
    sel: Any,
    scale: NDArray[np.float64] | None,
    transform: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """``diag(scale) P[sel] transform`` in float64, ``scale`` the selected rows' scale (None: 1).

    Scaled in place when the selection is already a copy (fancy indexing, a float32 block made
    float64): a Dask worker holds its share of the factor and no second temporary; a slice of a
    float64 factor is a view and is scaled into a new array.
    """
    B = P[sel].astype(np.float64, copy=False)
    if scale is not None:
        own = not np.may_share_memory(B, P)
        B = np.multiply(B, scale[:, None], out=B if own else None)
    if transform is not None:
        B = B @ transform
    return B


def _rows_gram_part(
    P: NDArray,
    sel: Any,
    scale: NDArray[np.float64] | None,
    transform: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """``B'B`` of ``B = diag(scale) P[sel] transform`` (``scale`` those rows' scale)."""
    B = _scaled_rows(P, sel, scale, transform)
    return B.T @ B


def _gram_of_rows(
    P: NDArray,
    pieces: Iterable[Any],
    scale: NDArray[np.float64] | None,
    transform: NDArray[np.float64] | None,
    k: int,
) -> NDArray[np.float64]:
    """``sum B'B`` over the row selections ``pieces`` of ``diag(scale) P transform``."""
    G = np.zeros((k, k))
    for sel in pieces:
        G += _rows_gram_part(P, sel, None if scale is None else scale[sel], transform)
    return G


def _blocks(Phi: Any) -> Iterator[slice]:
    """Row blocks of ``Phi`` whose float64 temporaries fit in
    :data:`~indefsvm.utils.blocks.BLOCK_BYTES` (a float32 factor is converted block by block)."""
    n, m = Phi.shape
    step = _rows(m)
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


class LowRankKernel:
    """A symmetric kernel given by a factor: ``K0 = features @ diag(signature) @ features.T``.

    The input type of :func:`indefsvm.solve` / :func:`indefsvm.make_problem` for the low-rank
    proxy-kernel SVM (e.g. the output of ``IndefiniteNystroem``: ``Phi = nys.transform(X)``,
    ``signature = nys.signature_``). Nothing n x n is formed unless :meth:`toarray` is called.

    Parameters
    ----------
    features : array_like of shape (n, m)
        The factor ``Phi``. float64 and float32 arrays are kept by reference (no copy); float32
        storage halves the memory, and every product converts row blocks to float64, so the
        kernel is exactly the one of the stored values and the certified bounds stay valid.
    signature : array_like of shape (m,)
        Diagonal weights, ``±1`` for a Nyström factor of an indefinite kernel (any finite real
        weights are accepted).
    """

    def __init__(self, features: ArrayLike, signature: ArrayLike) -> None:
        dask_input = is_dask_array(features)
        Phi = features if dask_input else np.asarray(features)
        if Phi.dtype not in (np.float64, np.float32):
            if not (np.issubdtype(Phi.dtype, np.number) and Phi.dtype.kind != "c"):
                raise TypeError(f"features must be a real numeric array; got dtype {Phi.dtype}.")
            Phi = Phi.astype(np.float64)
        if Phi.ndim != 2 or Phi.shape[0] < 2 or Phi.shape[1] < 1:
            raise ValueError(
                f"features must be a 2-D array (n, m) with n >= 2 and m >= 1; got {Phi.shape}."
            )
        s = np.asarray(signature, dtype=np.float64)
        if s.ndim != 1 or s.shape[0] != Phi.shape[1]:
            raise ValueError(
                f"signature must be a vector of length m = {Phi.shape[1]} (one weight per column "
                f"of features); got shape {s.shape}."
            )
        if not np.all(np.isfinite(s)):
            raise ValueError("signature contains NaN or inf.")
        #: Where the passes over the factor run: in this process (numpy) or on the Dask workers.
        self.backend: NumpyFactor | DaskFactor = factor_backend(Phi)
        if not self.backend.all_finite():
            raise ValueError("features contains NaN or inf.")
        self.features = self.backend.Phi
        self.signature = s

    @property
    def shape(self) -> tuple[int, int]:
        return (self.features.shape[0], self.features.shape[0])

    @property
    def n(self) -> int:
        return self.features.shape[0]

    @property
    def rank(self) -> int:
        """Number of columns ``m`` of the factor (an upper bound on the rank)."""
        return self.features.shape[1]

    def matvec(self, v: ArrayLike) -> NDArray[np.float64]:
        """``K0 @ v`` in O(nm)."""
        v = np.asarray(v, dtype=np.float64)
        return self.backend.mat(self.signature * self.backend.rmat(v))

    def cross(self, features: NDArray[np.floating]) -> NDArray[np.float64]:
        """Kernel rows ``F diag(signature) Phi'`` of new points (features ``F``) against the
        factor's rows ``Phi``.

        Parameters
        ----------
        features : ndarray of shape (k, m)
            The new points' features ``F`` in the factor's coordinates (e.g. the Nyström map's
            ``transform`` of them).

        Returns
        -------
        ndarray of shape (k, n)
            One pass over the factor (on the workers for a dask factor): ``k`` kernel rows.
        """
        return self.backend.mat((features * self.signature).T).T

    def toarray(self, *, max_n: int = DENSE_LIMIT) -> NDArray[np.float64]:
        """The dense ``n x n`` kernel (refused above ``max_n`` rows: it would need n^2 memory)."""
        check_dense(self.n, max_n, "the dense kernel K0")
        # float64 rows in this process (a dask factor is computed: at most DENSE_LIMIT rows)
        F = np.asarray(self.features, dtype=np.float64)
        K = (F * self.signature) @ F.T
        return 0.5 * (K + K.T)

    def __repr__(self) -> str:
        where = ", on dask workers" if self.backend.distributed else ""
        return f"LowRankKernel(n={self.n}, m={self.rank}, dtype={self.features.dtype}{where})"


def check_dense(n: int, max_n: int, what: str) -> None:
    """Refuse (ValueError, saying why) an n x n array above ``max_n`` rows."""
    if n > max_n:
        raise ValueError(
            f"{what} would be a dense {n} x {n} array ({8 * n * n / 1e9:.3g} GB); the low-rank "
            f"problem forms n x n arrays only up to n = {max_n}. Use method='pg' and the factored "
            "results (LowRankProxyKernel.matvec / rows) instead."
        )


@functools.lru_cache(maxsize=1)
def _float32_kernels() -> tuple[Any, Any] | None:
    """Compiled ``Phi' v`` and ``Phi w`` for float32 ``Phi`` and float64 vectors (Numba).

    Each product reads the float32 factor once and accumulates in float64 (a float32 value is
    exact in float64, so the result is the float64 product of the stored values). The numpy
    fallback converts row blocks to float64 first, which writes and reads twice the bytes:
    at n = 10^6, m = 500 a pass is memory bound. None when Numba is not installed.
    """
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is optional here
        return None

    @numba.njit(parallel=True, cache=True)
    def rmat(Phi, v, parts):  # pragma: no cover - compiled
        n, m = Phi.shape
        chunks = parts.shape[0]
        for c in numba.prange(chunks):
            start = c * n // chunks
            stop = (c + 1) * n // chunks
            for i in range(start, stop):
                vi = v[i]
                for j in range(m):
                    parts[c, j] += Phi[i, j] * vi
        return parts.sum(axis=0)

    # Reassociation lets LLVM vectorise the row dot products (a different summation order of
    # the same float64 terms; all values are finite).
    @numba.njit(parallel=True, cache=True, fastmath={"reassoc", "contract"})
    def mat(Phi, w, out):  # pragma: no cover - compiled
        n, m = Phi.shape
        for i in numba.prange(n):
            acc = 0.0
            for j in range(m):
                acc += Phi[i, j] * w[j]
            out[i] = acc
        return out

    return rmat, mat


def _use_compiled(Phi: NDArray, x: NDArray) -> bool:
    return (
        Phi.dtype == np.float32
        and x.ndim == 1
        and Phi.flags.c_contiguous
        and (_float32_kernels() is not None)
    )


def _rmat(Phi: NDArray, v: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Phi' v`` in float64 (float32 Phi: compiled kernel, or row blocks converted)."""
    if Phi.dtype == np.float64:
        return Phi.T @ v
    if _use_compiled(Phi, v):
        rmat, _ = _float32_kernels()  # type: ignore[misc]
        return rmat(Phi, np.ascontiguousarray(v, dtype=np.float64), np.zeros((16, Phi.shape[1])))
    out = np.zeros((Phi.shape[1],) + v.shape[1:])
    for sl in _blocks(Phi):
        out += Phi[sl].astype(np.float64).T @ v[sl]
    return out


def _mat(Phi: NDArray, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Phi w`` in float64 (float32 Phi: compiled kernel, or row blocks converted)."""
    if Phi.dtype == np.float64:
        return Phi @ w
    if _use_compiled(Phi, w):
        _, mat = _float32_kernels()  # type: ignore[misc]
        return mat(Phi, np.ascontiguousarray(w, dtype=np.float64), np.empty(Phi.shape[0]))
    out = np.empty((Phi.shape[0],) + w.shape[1:])
    for sl in _blocks(Phi):
        out[sl] = Phi[sl].astype(np.float64) @ w
    return out


def _add(a: Any, b: Any) -> Any:
    """The default combine of :meth:`NumpyFactor.reduce`: the sum (of arrays or of tuples)."""
    if isinstance(a, tuple):
        return tuple(x + y for x, y in zip(a, b, strict=True))
    return a + b


class _FactorPasses:
    """The passes both factor backends offer, documented once: each backend supplies how a
    block function runs over its rows (``_fold``, ``_map``) and how selected rows are read
    (``_rows_gram``); the arguments are checked and documented here."""

    Phi: Any

    def rows_gram(
        self,
        idx: NDArray[np.intp],
        scale: NDArray[np.float64] | None,
        transform: NDArray[np.float64] | None = None,
    ) -> NDArray[np.float64]:
        """``B'B`` with ``B`` the rows ``idx`` (sorted) of ``diag(scale) Phi`` (times
        ``transform``: ``T'(B'B)T`` formed from the rows, O(mk) per row read)."""
        k = self.Phi.shape[1] if transform is None else transform.shape[1]
        if idx.size == 0:
            return np.zeros((k, k))
        return self._rows_gram(idx, scale, transform, k)

    # -- generic passes: a block function of the caller's, run over the row blocks. The numerical
    # meaning stays with the caller (e.g. the Krein learners' normal equations); the backend only
    # decides where and in which pieces the rows are read (in memory: row blocks of
    # :func:`~indefsvm.utils.blocks.rows_per_block` rows; Dask: one task per row chunk, on the
    # worker that holds it).

    def reduce(
        self,
        func: Callable[..., Any],
        *rows: Any,
        args: Sequence[Any] = (),
        combine: Callable[[Any, Any], Any] = _add,
        factor: bool = True,
    ) -> Any:
        """``combine`` over the row blocks of ``func(Phi_b, rows_1[b], ..., *args)``.

        In memory the blocks are :func:`~indefsvm.utils.blocks.rows_per_block` rows of the
        factor (a float64 copy of a float32 block fits in the budget), combined left to right;
        on Dask one summary per row chunk is made on the workers and combined there
        (:func:`~indefsvm.utils.dask_rows.reduce_rows`): only the result reaches this process.

        Parameters
        ----------
        func : callable
            ``func(block, *row_blocks, *args)`` returning an array, a scalar or a tuple of them.
        *rows : ndarray of shape (n, ...)
            Arrays cut like the factor's rows (e.g. from :meth:`rows`).
        args : sequence
            Passed whole to every call.
        combine : callable, default the sum
        factor : bool, default True
            Whether ``func`` reads the factor's block (its first argument). False: ``func``
            takes only the row vectors' blocks, and the factor is not read (a pass over
            vectors that live where the factor's rows do, e.g. a line search).

        Returns
        -------
        The combined summary.
        """
        arrays = (self.Phi, *rows) if factor else rows
        return self._fold(func, arrays, args, combine)

    def map(
        self,
        func: Callable[..., Any],
        *rows: Any,
        args: Sequence[Any] = (),
        dtype: Any = np.float64,
    ) -> Any:
        """``func(Phi, *rows, *args)``: one value (or row) per row of the factor.

        In memory the function sees the whole factor at once (its result is n-sized anyway)
        and returns an ndarray; on Dask it runs per row chunk and the result is a row-chunked
        dask array kept on the workers (persisted: later passes read it, not recompute it).
        """
        return self._map(func, (self.Phi, *rows), args, dtype)

    def _fold(self, func: Any, arrays: tuple, args: Sequence[Any], combine: Any) -> Any:
        raise NotImplementedError

    def _map(self, func: Any, arrays: tuple, args: Sequence[Any], dtype: Any) -> Any:
        raise NotImplementedError

    def _rows_gram(
        self, idx: NDArray[np.intp], scale: Any, transform: Any, k: int
    ) -> NDArray[np.float64]:
        raise NotImplementedError


class NumpyFactor(_FactorPasses):
    """The passes over an in-memory factor ``Phi`` (numpy, float64 or float32).

    One of the two factor backends of :class:`LowRankProxyOperator` (the other is
    :class:`DaskFactor`); the operator calls only these methods to read the factor. ``scale``
    arguments are the operator's ``row_scale`` (``Phi_w = diag(scale) Phi``, or None).
    """

    distributed = False

    def __init__(self, Phi: NDArray) -> None:
        self.Phi = Phi

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, m)`` of the factor."""
        return self.Phi.shape

    def all_finite(self) -> bool:
        return all(bool(np.all(np.isfinite(self.Phi[sl]))) for sl in _blocks(self.Phi))

    def peak(self, scale: NDArray[np.float64] | None) -> float:
        """``max |diag(scale) Phi|``."""
        peak = 0.0
        for sl in _blocks(self.Phi):
            block = np.abs(np.asarray(self.Phi[sl], dtype=np.float64))
            if scale is not None:
                block = block * scale[sl, None]
            peak = max(peak, float(np.max(block)) if block.size else 0.0)
        return peak

    def rmat(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Phi' v`` for ``v`` of shape (n,) or (n, k)."""
        return _rmat(self.Phi, v)

    def mat(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Phi w`` for ``w`` of shape (m,) or (m, k)."""
        return _mat(self.Phi, w)

    def mat_abs(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """``|Phi| w`` (a rounding bound of ``Phi w``)."""
        return np.abs(self.Phi) @ w

    def columnwise(self, x: NDArray[np.float64]) -> bool:
        """Whether k products with single columns are cheaper than one with k columns (float32
        with the compiled kernels, see :meth:`LowRankProxyOperator._rmat_columns`)."""
        return _use_compiled(self.Phi, x)

    def gram(
        self, T: NDArray[np.float64] | None, scale: NDArray[np.float64] | None
    ) -> NDArray[np.float64]:
        """``(diag(scale) Phi T)'(diag(scale) Phi T)`` (T None: the identity), not symmetrised."""
        Phi = self.Phi
        if Phi.dtype == np.float64 and scale is None and T is None:
            return Phi.T @ Phi
        k = Phi.shape[1] if T is None else T.shape[1]
        return _gram_of_rows(Phi, _blocks(Phi), scale, T, k)

    def _rows_gram(
        self, idx: NDArray[np.intp], scale: Any, transform: Any, k: int
    ) -> NDArray[np.float64]:
        step = _rows(self.Phi.shape[1])
        pieces = (idx[start : start + step] for start in range(0, idx.shape[0], step))
        return _gram_of_rows(self.Phi, pieces, scale, transform, k)

    def rows_rmat(
        self, idx: NDArray[np.intp], W: NDArray[np.float64], scale: NDArray[np.float64] | None
    ) -> NDArray[np.float64]:
        """``B'W`` with ``B`` the rows ``idx`` of ``diag(scale) Phi`` (``W``: one row per index)."""
        return _scaled_rows(self.Phi, idx, None if scale is None else scale[idx]).T @ W

    # -- generic passes (see _FactorPasses): row blocks in this process.

    def rows(self, v: Any, name: str = "y") -> NDArray[np.float64]:
        """``v`` checked as a float64 vector with one entry per row of the factor.

        Parameters
        ----------
        v : array_like of shape (n,)
        name : str
            Its name in the error messages.

        Returns
        -------
        ndarray of shape (n,)
        """
        if is_dask_array(v):
            raise ValueError(
                f"{name} is a dask array but the factor is not: pass both as dask arrays."
            )
        v = check_finite_matrix(np.ravel(np.asarray(v)), name=name, ndim=1)
        if v.shape[0] != self.Phi.shape[0]:
            raise ValueError(
                f"{name} has {v.shape[0]} entries but Phi has {self.Phi.shape[0]} rows."
            )
        return v

    def _fold(self, func: Any, arrays: tuple, args: Sequence[Any], combine: Any) -> Any:
        result = None
        for sl in _blocks(self.Phi):
            part = func(*(a[sl] for a in arrays), *args)
            result = part if result is None else combine(result, part)
        return result

    def _map(self, func: Any, arrays: tuple, args: Sequence[Any], dtype: Any) -> NDArray:
        # In memory the function sees the whole factor at once (its result is n-sized anyway).
        return func(*arrays, *args)

    def persist(self, x: Any) -> Any:
        """``x`` kept where the rows are (in memory: ``x`` itself)."""
        return x


def _chunk_rmat(P: NDArray, v: NDArray[np.float64]) -> NDArray[np.float64]:
    """``P' v`` of one row chunk, with a leading axis of length 1 for the sum over chunks."""
    return (P.astype(np.float64, copy=False).T @ v)[None]


def _chunk_mat(P: NDArray, w: NDArray[np.float64]) -> NDArray[np.float64]:
    return P.astype(np.float64, copy=False) @ w


def _chunk_rows_gram(
    P: NDArray,
    local: NDArray[np.intp],
    scale: NDArray[np.float64] | None,
    transform: NDArray[np.float64] | None,
) -> NDArray[np.float64]:
    """``B'B`` of the rows ``local`` of one row chunk (``B = diag(scale) P[local] transform``,
    ``scale`` those rows' scale), with a leading axis of length 1 for the sum over chunks."""
    return _rows_gram_part(P, local, scale, transform)[None]


def _chunk_rows_rmat(
    P: NDArray, local: NDArray[np.intp], scale: NDArray[np.float64] | None, W: NDArray
) -> NDArray[np.float64]:
    """``B'W`` of the rows ``local`` of one row chunk (``B = diag(scale) P[local]``, ``scale``
    those rows' scale), with a leading axis of length 1 for the sum over chunks."""
    return (_scaled_rows(P, local, scale).T @ W)[None]


def _summed_on_workers(parts: Any) -> NDArray[np.float64]:
    """The sum over the leading (per-chunk) axis of a dask array, tree-summed on the workers with
    a flat tree (``_DASK_FAN_IN``); only the result comes to this process."""
    return np.asarray(parts.sum(axis=0, split_every=_DASK_FAN_IN).compute())


class DaskFactor(_FactorPasses):
    """The passes over a factor ``Phi`` held by Dask workers as a row-chunked ``dask.array``.

    Every pass is a map-reduce over the row chunks ``Phi_c`` that runs where the chunks are:
    ``Phi' v = sum_c Phi_c' v_c`` and ``Phi_I'Phi_I = sum_c Phi_c,I' Phi_c,I`` tree-summed on
    the workers (O(m) or O(m^2) numbers per chunk travel), ``Phi w`` row chunks computed on the
    workers. The factor is persisted once when the kernel is built (a lazy graph would be
    recomputed by every pass); column chunks are merged (a pass reads whole rows). float32
    chunks are converted to float64 chunk by chunk, as the numpy path does by row blocks, so
    both paths compute with the same stored values.

    The n-vectors stay in the client as numpy arrays (the module docstring says
    why): ``v`` is cut into the factor's row chunks and shipped with the task
    graph, ``Phi w`` comes back as n numbers. The solvers are unchanged. The computations go
    to the active ``distributed.Client`` if there is one, else to Dask's local scheduler; the
    persisted chunks belong to the scheduler that was active when the kernel was built, so the
    passes must run under the same one.
    """

    distributed = True

    def __init__(self, Phi: Any, *, persist: bool = True) -> None:
        if any(np.isnan(c) for c in Phi.chunks[0]):
            raise ValueError(
                "features is a dask array with unknown row chunk sizes (e.g. after boolean "
                "indexing); call features.compute_chunk_sizes() first: each pass aligns the "
                "n-vectors with the factor's row chunks."
            )
        if Phi.ndim == 2 and len(Phi.chunks[1]) > 1:
            Phi = Phi.rechunk({1: -1})  # a pass reads whole rows
        # A lazy factor would be recomputed by every pass; the Krein learners persist their final
        # factor themselves (persist=False keeps a lazy intermediate from being held twice).
        self.Phi = Phi.persist() if persist else Phi
        self.chunks = self.Phi.chunks[0]
        self.offsets = np.concatenate([[0], np.cumsum(self.chunks)]).astype(np.intp)

    @property
    def _float64(self) -> Any:
        Phi = self.Phi
        return Phi if Phi.dtype == np.float64 else Phi.astype(np.float64)

    def _rows_like(self, x: NDArray) -> Any:
        """``x`` (n,) or (n, k) cut into the factor's row chunks (shipped with the graph)."""
        import dask.array as da

        return da.from_array(x, chunks=(self.chunks,) + tuple((s,) for s in x.shape[1:]))

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, m)`` of the factor."""
        return self.Phi.shape

    def all_finite(self) -> bool:
        import dask.array as da

        return bool(da.isfinite(self.Phi).all().compute())

    def peak(self, scale: NDArray[np.float64] | None) -> float:
        import dask.array as da

        if scale is None:
            return float(da.absolute(self.Phi).max().compute()) if self.Phi.size else 0.0
        # Row maxima come back (n numbers), scaled here.
        rows = np.asarray(da.absolute(self.Phi).max(axis=1).compute(), dtype=np.float64)
        return float(np.max(rows * scale, initial=0.0))

    def _reduce(self) -> Any:
        """Graph construction with a flat reduction tree (``_DASK_FAN_IN``)."""
        import dask

        return dask.config.set(split_every=_DASK_FAN_IN)

    def _per_chunk(
        self,
        function: Any,
        args: list[tuple],
        tail: tuple[int, ...],
        rows: bool,
        chunks: list[int] | None = None,
        shared: tuple = (),
    ) -> Any:
        """``function(Phi_c, *args[i], *shared)`` for the row chunks ``c = chunks[i]`` (default:
        every chunk) as one dask array.

        Each task gets its own arguments inline (a slice of ``v``, the small ``w``, a chunk's row
        positions), so it depends only on its factor chunk and runs where that chunk is, with no
        data task to move first (that saved a quarter of a pass's round-trip time on the test
        machine; the fancy indexing of the dask array it replaced for row subsets built a graph
        per call that took 0.1-0.2 s of its own at n = 10^5 on two workers). ``shared`` are
        arguments every task takes (an m x k matrix): one graph key each, sent once per worker
        (inline, a 300 x 301 matrix in each of 24 tasks made a graph of 11 MB). Output: the
        chunks' rows (``rows``) or one leading entry per chunk.
        """
        import uuid

        import dask.array as da
        from dask.highlevelgraph import HighLevelGraph

        name = f"{function.__name__}-{uuid.uuid4().hex}"
        source = self.Phi.name
        pad = (0,) * len(tail)
        which = list(range(len(self.chunks))) if chunks is None else chunks
        keys = [(f"{name}-shared", j) for j in range(len(shared))]
        graph: dict = dict(zip(keys, shared, strict=True))
        graph.update(
            {
                (name, i, *pad): (function, (source, c, 0), *arg, *keys)
                for i, (c, arg) in enumerate(zip(which, args, strict=True))
            }
        )
        layer = HighLevelGraph.from_collections(name, graph, dependencies=[self.Phi])
        lead = tuple(self.chunks[c] for c in which) if rows else (1,) * len(which)
        shape = (lead, *((k,) for k in tail))
        return da.Array(layer, name, chunks=shape, dtype=np.float64)

    def rmat(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        v = np.asarray(v, dtype=np.float64)
        pieces = [v[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:], strict=True)]
        parts = self._per_chunk(
            _chunk_rmat, [(p,) for p in pieces], (self.Phi.shape[1], *v.shape[1:]), False
        )
        return _summed_on_workers(parts)

    def mat(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        w = np.asarray(w, dtype=np.float64)
        out = self._per_chunk(_chunk_mat, [(w,)] * len(self.chunks), w.shape[1:], True)
        return np.asarray(out.compute())

    def mat_abs(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        import dask.array as da

        return np.asarray((da.absolute(self._float64) @ np.asarray(w, dtype=np.float64)).compute())

    def columnwise(self, x: NDArray[np.float64]) -> bool:
        return False  # each pass costs a round trip to the workers: one pass for all columns

    def gram(
        self, T: NDArray[np.float64] | None, scale: NDArray[np.float64] | None
    ) -> NDArray[np.float64]:
        B = self._float64
        if scale is not None:
            B = B * self._rows_like(scale)[:, None]
        if T is not None:
            B = B @ T
        with self._reduce():
            return np.asarray((B.T @ B).compute())

    def _rows_gram(
        self, idx: NDArray[np.intp], scale: Any, transform: Any, k: int
    ) -> NDArray[np.float64]:
        which, args = self._local_rows(idx, scale)
        rows = [(local, part) for local, part, _ in args]
        parts = self._per_chunk(_chunk_rows_gram, rows, (k, k), False, which, shared=(transform,))
        return _summed_on_workers(parts)

    def _local_rows(
        self, idx: NDArray[np.intp], scale: NDArray[np.float64] | None
    ) -> tuple[list[int], list[tuple[NDArray[np.intp], NDArray[np.float64] | None, slice]]]:
        """The chunks holding some of the sorted rows ``idx`` and, per chunk, those rows'
        positions in it, their scale and their slice of ``idx`` (each chunk selects its own
        rows where it lives: no rows move between workers)."""
        cut = np.searchsorted(idx, self.offsets)
        which, args = [], []
        for c in range(len(self.chunks)):
            local = idx[cut[c] : cut[c + 1]]
            if local.size:
                which.append(c)
                part = None if scale is None else scale[local]
                args.append((local - self.offsets[c], part, slice(cut[c], cut[c + 1])))
        return which, args

    def rows_rmat(
        self, idx: NDArray[np.intp], W: NDArray[np.float64], scale: NDArray[np.float64] | None
    ) -> NDArray[np.float64]:
        """``B'W`` for the rows ``idx`` (sorted), each chunk's rows read where the chunk lives."""
        if idx.size == 0:
            return np.zeros((self.Phi.shape[1], W.shape[1]))
        which, args = self._local_rows(idx, scale)
        args = [(local, part, W[rows]) for local, part, rows in args]
        parts = self._per_chunk(
            _chunk_rows_rmat, args, (self.Phi.shape[1], W.shape[1]), False, which
        )
        return _summed_on_workers(parts)

    # -- generic passes (see _FactorPasses): the block function runs on the workers, once per row
    # chunk; row vectors are dask arrays with the factor's row chunks and stay there.

    def rows(self, v: Any, name: str = "y") -> Any:
        """``v`` (numpy or dask) as a float64 dask vector with the factor's row chunks."""
        return align_rows(v, self.Phi, name, dtype=np.float64)

    def _fold(self, func: Any, arrays: tuple, args: Sequence[Any], combine: Any) -> Any:
        # One map-reduce pass: ``func`` per row chunk on the workers, the summaries combined
        # pairwise there; only the result reaches this process.
        return reduce_rows(func, *arrays, args=args, combine=combine)

    def _map(self, func: Any, arrays: tuple, args: Sequence[Any], dtype: Any) -> Any:
        # Persisted: later passes read the result instead of recomputing it.
        return persist_rows(map_rows(func, *arrays, args=args, dtype=dtype))

    def persist(self, x: Any) -> Any:
        """``x`` (a row-chunked dask array) computed and kept on the workers: cuts its graph."""
        return persist_rows(x)


def factor_backend(Phi: Any, *, persist: bool = True) -> NumpyFactor | DaskFactor:
    """The backend that makes the passes over ``Phi``: :class:`DaskFactor` for a ``dask.array``
    (persisted on the workers), else :class:`NumpyFactor` (the array kept by reference).

    Parameters
    ----------
    Phi : ndarray or dask array of shape (n, m)
        The factor, already checked (2-D, real).
    persist : bool, default True
        Persist a dask factor on the workers now (else it is read as it is, e.g. lazily).

    Returns
    -------
    NumpyFactor or DaskFactor
    """
    return DaskFactor(Phi, persist=persist) if is_dask_array(Phi) else NumpyFactor(Phi)


def as_factor(
    F: ArrayLike, name: str = "F", *, what: str = "2-D", persist: bool = False
) -> NumpyFactor | DaskFactor:
    """The backend of a factor given as input: refused unless 2-D, its dtype kept.

    A dask array is checked as :func:`~indefsvm.utils.dask_rows.check_dask_rows` checks it
    (known chunk sizes, column chunks merged) and read as it is unless ``persist``; any other
    input becomes a numpy array (no copy of an array).

    Parameters
    ----------
    F : array_like or dask array of shape (n, r)
    name : str
        Its name in the error messages.
    what : str
        What it must be, in the message (``"2-D"``).
    persist : bool, default False
        Persist a dask factor on the workers now.

    Returns
    -------
    NumpyFactor or DaskFactor
    """
    dask = is_dask_array(F)
    F = F if dask else np.asarray(F)
    if F.ndim != 2:
        raise ValueError(f"{name} must be {what}; got shape {F.shape}.")
    if dask:
        return DaskFactor(check_dask_rows(F, name), persist=persist)
    return NumpyFactor(F)


def compact_columns(A: NDArray, k: int) -> NDArray:
    """The first ``k`` columns of the C-contiguous ``A`` as a contiguous array in ``A``'s memory.

    Rows are moved forward block by block (row ``i`` goes from offset ``i m`` to ``i k <= i m``),
    so no second ``n x k`` array is allocated; the result is a view on ``A``'s buffer.
    """
    n, m = A.shape
    if k == m:
        return A
    if not A.flags.c_contiguous:
        raise ValueError("compact_columns needs a C-contiguous array.")
    flat = A.reshape(-1)
    step = rows_per_block(m)
    for start in range(0, n, step):
        stop = min(n, start + step)
        # numpy copies through a temporary when source and destination overlap.
        flat[start * k : stop * k] = A[start:stop, :k].reshape(-1)
    return flat[: n * k].reshape(n, k)


def right_multiply_inplace(Phi: Any, T: NDArray[np.float64]) -> Any:
    """``Phi @ T`` (``T`` of shape ``(r, r')``, ``r' <= r``) stored in ``Phi``'s own memory.

    A numpy ``Phi`` (C-contiguous, owned by the caller) is overwritten by row blocks and its
    first ``r'`` columns compacted (:func:`compact_columns`): no second ``n x r`` array at any
    time. A dask ``Phi`` gives the lazy row-chunked product. ``T`` is cast to ``Phi``'s dtype
    (a float32 factor stays float32).

    Parameters
    ----------
    Phi : ndarray or dask array of shape (n, r)
    T : ndarray of shape (r, r')

    Returns
    -------
    ndarray (a view on ``Phi``'s buffer) or dask array of shape (n, r')
    """
    Tc = T.astype(Phi.dtype, copy=False)
    if is_dask_array(Phi):
        return Phi @ Tc
    r_new = T.shape[1]
    step = rows_per_block(Phi.shape[1])
    for start in range(0, Phi.shape[0], step):
        Phi[start : start + step, :r_new] = Phi[start : start + step] @ Tc
    return compact_columns(Phi, r_new)
