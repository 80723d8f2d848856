"""Eigenpairs of a diagonal matrix plus a rank-one term, ``diag(d) + sigma z z'``.

This is the inner step of the indefinite SVM solver (Luss & d'Aspremont, 2009, Sect. 3.1): with
``K0 = V diag(d) V'`` computed once, the matrix ``M(alpha) = K0 + sigma u u'`` of eq. (5) is
``V (diag(d) + sigma z z') V'`` with ``z = V'u``, so each iteration only needs the eigenpairs of a
diagonal-plus-rank-one matrix, and in fact only its negative ones (theory.md §5).

The algorithm is the divide-and-conquer merge step of LAPACK ``dstedc``:

1. **Deflation** (LAPACK ``dlaed2``). A component with ``rho |z_j|`` below ``8 eps`` times the
   scale of the matrix is dropped: ``(d_j, e_j)`` is an eigenpair to working accuracy. Two nearly
   equal poles ``d_i ~ d_j`` are merged by a Givens rotation that zeroes one component of ``z``;
   the rotated unit vector is then an eigenvector. The rotations are undone at the end.
2. **Secular equation** (Bunch, Nielsen & Sorensen, 1978). The remaining eigenvalues are the
   roots ``lambda`` of ``1 + rho sum_j z_j^2 / (d_j - lambda) = 0``, one in each interval
   ``(d_j, d_{j+1})`` and one in ``(d_K, d_K + rho)``. They are found by LAPACK ``dlaed4``, which
   also returns ``delta_j = d_j - lambda`` to high relative accuracy (no cancellation).
3. **Stable eigenvectors** (Gu & Eisenstat, 1994; LAPACK ``dlaed3``). The computed roots are the
   exact eigenvalues of ``diag(d) + rho zhat zhat'`` for the vector given by Löwner's formula

       zhat_i^2 = prod_j (lambda_j - d_i) / (rho prod_{j != i} (d_j - d_i)),

   evaluated as a product of ratios of the accurate ``delta`` values, and the eigenvectors
   ``zhat / (d - lambda_k)`` (normalised) of that nearby matrix are numerically orthogonal even for
   clustered eigenvalues, which the naive ``z / (d - lambda_k)`` is not.

Two engines find the roots (``engine=``): the compiled kernel of
:mod:`indefsvm.linalg._secular_numba`
(all roots in one Numba pass with ``dlaed4``'s iteration and convergence test, warm-started from
the previous call's roots through :class:`SecularWarmStart`, Löwner products fused; the default
when Numba is importable) and LAPACK ``dlaed4`` one root per call (the reference path, and the
fallback when a compiled root fails its test).

References
----------
.. [BNS78] J. R. Bunch, C. P. Nielsen and D. C. Sorensen, "Rank-one modification of the symmetric
   eigenproblem", Numerische Mathematik 31 (1978) 31-48.
.. [GE94] M. Gu and S. C. Eisenstat, "A stable and efficient algorithm for the rank-one
   modification of the symmetric eigenproblem", SIAM J. Matrix Anal. Appl. 15(4) (1994)
   1266-1276.
.. [LAPACK] E. Anderson et al., LAPACK Users' Guide, 3rd ed., SIAM 1999: routines ``dlaed2``
   (deflation), ``dlaed3`` (stable eigenvectors), ``dlaed4`` (one secular root).
.. [LdA09] R. Luss and A. d'Aspremont, "Support vector machine classification with indefinite
   kernels", Math. Prog. Comp. 1 (2009) 97-118, Sect. 3.1 (paper 004).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg.blas import drot

from indefsvm.utils.validation import _as_finite_real

__all__ = [
    "ENGINES",
    "RankOneEigen",
    "SecularWarmStart",
    "rank_one_eigh",
    "rank_one_eigvals_below",
    "secular_root",
]

logger = logging.getLogger(__name__)

_EPS = float(np.finfo(np.float64).eps)
#: Deflation tolerance factor of LAPACK ``dlaed2``: ``tol = 8 eps * scale``.
_DEFLATION_FACTOR = 8.0
_WHICH = ("all", "below")
#: Entries per block of secular roots (rows x k) processed while in cache (256 KiB of float64).
_BLOCK_ELEMENTS = 32768
#: Secular-equation engines: compiled (Numba) with LAPACK fallback, or LAPACK ``dlaed4`` only.
ENGINES = ("auto", "numba", "lapack")


@functools.lru_cache(maxsize=1)
def _numba_kernel() -> Any:
    """The compiled kernel module, or None when Numba is not importable."""
    try:
        from indefsvm.linalg import _secular_numba
    except ImportError:  # numba missing or broken: the LAPACK path is complete on its own
        logger.info("numba is not available; secular roots use LAPACK dlaed4")
        return None
    return _secular_numba


def numba_available() -> bool:
    """True when the compiled secular kernel can be used."""
    return _numba_kernel() is not None


class SecularWarmStart:
    """Roots of the previous call, kept for warm-starting the compiled secular solver.

    Each root is stored under the (pre-deflation) index of the pole just below it; the next call
    uses it as the initial guess of the root in the same interval when that pole is kept again
    and the guess lies inside the new interval (otherwise that root is cold-started). Only the
    initial guess is reused: every root still passes ``dlaed4``'s convergence test, so results
    agree with a cold start to working accuracy. Used by
    :class:`~indefsvm.proxy.operators.ProxyKernelOperator`, whose ``u`` moves little between
    iterations.

    Attributes
    ----------
    n_calls, n_sweeps, n_roots : int
        Diagnostics: calls served, sweeps over the poles and roots computed (sweeps per root is
        the iteration count of the secular solver, including the final test).
    """

    def __init__(self) -> None:
        self._n = -1
        self._sign = 0
        self._origin: NDArray[np.int64] | None = None  # pre-deflation index of the origin pole
        self._tau: NDArray[np.float64] | None = None
        self.n_calls = 0
        self.n_sweeps = 0
        self.n_roots = 0
        self.last_root_state: tuple[NDArray[np.int64], NDArray[np.float64]] | None = None

    def _record_call(self, status: NDArray[np.int64]) -> None:
        """Count one call of the compiled roots and its sweeps (``status`` of the roots found)."""
        self.n_calls += 1
        self.n_roots += status.shape[0]
        self.n_sweeps += int(np.sum(np.abs(status)))

    def reset(self) -> None:
        """Forget the stored roots (next call is a cold start)."""
        self._origin = None
        self._tau = None

    @property
    def offsets(self) -> NDArray[np.float64] | None:
        """The stored roots as offsets ``tau`` from their poles (None before the first store).

        The array itself, not a copy: perturbing it in place tests that any guess, inside its
        interval or not, still gives the right roots (the guesses are only starting points).
        """
        return self._tau

    def guesses(
        self, n: int, sign: int, kept: NDArray[np.intp]
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]] | None:
        """``(side, tau)`` per root of the kept poles: ``-1`` where no guess applies."""
        if self._origin is None or self._tau is None or n != self._n or sign != self._sign:
            return None
        origin = self._origin[kept]
        tau = self._tau[kept]
        side = np.full(kept.shape[0], -1, dtype=np.int64)
        side[origin == kept] = 0
        upper = np.empty_like(kept)
        upper[:-1] = kept[1:]
        upper[-1:] = -1
        side[(origin == upper) & (origin >= 0)] = 1
        return side, tau

    def store(
        self,
        n: int,
        sign: int,
        kept: NDArray[np.intp],
        origin: NDArray[np.int64],
        tau: NDArray[np.float64],
    ) -> None:
        """Keep root ``j`` (``= d[kept[origin[j]]] + tau[j]``) under its lower pole ``kept[j]``."""
        self._prepare(n, sign)
        self._origin.fill(-1)  # type: ignore[union-attr]
        self._write(kept, origin, tau, kept.shape[0])

    def store_prefix(
        self,
        n: int,
        sign: int,
        kept: NDArray[np.intp],
        origin: NDArray[np.int64],
        tau: NDArray[np.float64],
        m: int,
    ) -> None:
        """As :meth:`store` for the first ``m`` roots only (an eigenvalues-only call).

        The other stored roots (e.g. the positive ones of the previous full call) are kept: they
        are still the best guesses available for the next full call.
        """
        self._prepare(n, sign)
        self._write(kept, origin, tau, m)

    def _prepare(self, n: int, sign: int) -> None:
        """Empty storage (no root stored) unless roots of the same size and sign are kept."""
        if self._origin is None or self._tau is None or n != self._n or sign != self._sign:
            self._origin = np.full(n, -1, dtype=np.int64)
            self._tau = np.zeros(n, dtype=np.float64)
            self._n, self._sign = n, sign

    def _write(
        self,
        kept: NDArray[np.intp],
        origin: NDArray[np.int64],
        tau: NDArray[np.float64],
        m: int,
    ) -> None:
        self._origin[kept[:m]] = kept[origin[:m]]  # type: ignore[index]
        self._tau[kept[:m]] = tau[:m]  # type: ignore[index]


@functools.lru_cache(maxsize=1)
def _dlaed4() -> Any:
    """Return LAPACK ``dlaed4`` from SciPy's ``cython_lapack`` as a ctypes function.

    All eight arguments are pointers; they are declared ``void *`` so that the caller can pass
    plain integer addresses computed once per problem (no per-call ctypes object creation).
    """
    from scipy.linalg import cython_lapack

    capsule = cython_lapack.__pyx_capi__["dlaed4"]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get_pointer(capsule, get_name(capsule))
    if not address:
        raise RuntimeError("could not obtain the address of LAPACK dlaed4 from SciPy.")
    prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * 8))
    return prototype(address)


def _secular_eigenpairs(
    d: NDArray[np.float64],
    z_unit: NDArray[np.float64],
    rho: float,
    window: tuple[float, float],
    n_threads: int = 1,
) -> tuple[NDArray[np.float64], slice | NDArray[np.intp], NDArray[np.float64]]:
    """Roots by ``dlaed4`` and Gu-Eisenstat eigenvectors of the selected ones (``dlaed3``).

    Parameters
    ----------
    d : ndarray of shape (k,)
        Strictly increasing poles (C-contiguous float64), i.e. the non-deflated diagonal.
    z_unit : ndarray of shape (k,)
        Unit-norm weights with no negligible entry (C-contiguous float64).
    rho : float
        Positive weight of the rank-one term.
    window : (float, float)
        Eigenvectors are formed for the roots with ``window[0] < lam < window[1]``.
    n_threads : int
        Threads sharing the root loop (ctypes releases the GIL during each ``dlaed4`` call).

    Returns
    -------
    lam : ndarray of shape (k,)
        All roots of ``1 + rho sum_j z_j^2 / (d_j - lambda) = 0``, ascending.
    selected : slice or ndarray of int
        The roots inside ``window`` (a slice: they are contiguous since ``lam`` ascends).
    vectors_t : ndarray of shape (m, k)
        Row ``r`` is the unit eigenvector for ``lam[selected][r]``.

    Notes
    -----
    Löwner's formula (Gu & Eisenstat 1994, Theorem 2.1) for the vector ``zhat`` whose matrix
    ``diag(d) + rho zhat zhat'`` has the computed roots as EXACT eigenvalues reads, up to the
    factor ``1/rho`` that normalisation removes, as in ``dlaed3``:

        zhat_i^2 = -delta_i(i) prod_{j != i} delta_i(j) / (d_i - d_j),   delta_i(j) = d_i - lam_j,

    with the sign of ``z_i``. Every ``delta`` comes from ``dlaed4`` (no cancellation) and each
    ratio is bounded by interlacing, so the running product neither overflows nor cancels. The
    eigenvector of root ``j`` is ``zhat_i / delta_i(j)``, normalised.

    Roots are processed in blocks of rows that stay in cache: the ``k x k`` table of ``delta`` is
    never formed, only the rows of the selected roots are kept, and ``dlaed4`` is called through
    ctypes with every argument address prepared once (the loop body is one foreign call). Each
    block's partial product is stored and the blocks are multiplied in a fixed order, so the
    result does not depend on ``n_threads``.
    """
    k = d.shape[0]
    func = _dlaed4()
    lo, hi = window
    lam = np.empty(k, dtype=np.float64)
    info = np.zeros(k, dtype=np.intc)
    n_arr = np.array([k], dtype=np.intc)
    index = np.arange(1, k + 1, dtype=np.intc)
    rho_arr = np.array([rho], dtype=np.float64)
    rows = max(8, min(k, _BLOCK_ELEMENTS // k))
    n_blocks = -(-k // rows)
    block_products = np.empty((n_blocks, k), dtype=np.float64)
    # Row j receives delta of root j if that root is selected. Pages of an untouched np.empty
    # are never faulted in, so reserving k rows costs nothing beyond the rows written.
    kept_rows = np.empty((k, k), dtype=np.float64)
    addresses = (n_arr.ctypes.data, d.ctypes.data, z_unit.ctypes.data, rho_arr.ctypes.data)
    p_n, p_d, p_z, p_rho = addresses
    p_index, p_lam, p_info = index.ctypes.data, lam.ctypes.data, info.ctypes.data
    size_int, size_dbl = index.itemsize, lam.itemsize

    def solve_blocks(next_block: Callable[[], int | None]) -> None:
        block = np.empty((rows, k), dtype=np.float64)
        ratio_buffer = np.empty((rows, k), dtype=np.float64)
        p_block, row_bytes = block.ctypes.data, block.strides[0]
        while (b := next_block()) is not None:
            start, stop = b * rows, min((b + 1) * rows, k)
            for j in range(start, stop):
                func(
                    p_n,
                    p_index + j * size_int,
                    p_d,
                    p_z,
                    p_block + (j - start) * row_bytes,
                    p_rho,
                    p_lam + j * size_dbl,
                    p_info + j * size_int,
                )
            # INFO is checked once for all roots after the loop (a failure raises there).
            delta = block[: stop - start]
            if k <= 2:
                # For k <= 2 dlaed4 returns 1 (k = 1) or a normalised eigenvector (k = 2, via
                # dlaed5) in DELTA instead of d - lambda; dlaed3 special-cases them, we recompute.
                for j in range(start, stop):
                    delta[j - start] = _small_deltas(d, z_unit, rho, j)
            # ratio[r, i] = delta_i(j) / (d_j - d_i), minus the Löwner factor; the sign is fixed
            # once at the end. The diagonal (i = j) takes -delta_j(j) itself.
            local = np.arange(stop - start)
            ratio = ratio_buffer[: stop - start]
            np.subtract(d[start:stop, None], d[None, :], out=ratio)
            ratio[local, start + local] = -1.0
            np.divide(delta, ratio, out=ratio)
            ratio[local, start + local] = -delta[local, start + local]
            np.multiply.reduce(ratio, axis=0, out=block_products[b])
            # The same test as the final selection below, so every selected row is written.
            inside = (lam[start:stop] > lo) & (lam[start:stop] < hi)
            if inside.any():
                kept_rows[start:stop][inside] = delta[inside]

    if n_threads <= 1 or n_blocks < 2:
        blocks = iter(range(n_blocks))
        solve_blocks(lambda: next(blocks, None))
    else:
        shared = iter(range(n_blocks))
        lock = threading.Lock()
        failures: list[BaseException] = []

        def next_shared() -> int | None:
            with lock:
                return None if failures else next(shared, None)

        def worker_main() -> None:
            try:
                solve_blocks(next_shared)
            except BaseException as exc:  # re-raised in the calling thread below
                with lock:
                    failures.append(exc)

        workers = [
            threading.Thread(target=worker_main, daemon=True)
            for _ in range(min(n_threads, n_blocks))
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        if failures:
            raise failures[0]
    if np.any(info != 0):
        bad = int(np.flatnonzero(info)[0])
        raise RuntimeError(
            f"LAPACK dlaed4 failed to converge for secular root {bad} of {k} "
            f"(info = {int(info[bad])})."
        )
    products = np.prod(block_products, axis=0)
    if k % 2:
        products = -products
    zhat = np.copysign(np.sqrt(np.maximum(-products, 0.0)), z_unit)
    chosen = np.flatnonzero((lam > lo) & (lam < hi))
    if chosen.size == 0 or chosen[-1] - chosen[0] + 1 == chosen.size:
        # Roots ascend, so the window is a contiguous range: a view, no copy.
        first = int(chosen[0]) if chosen.size else 0
        selected: slice | NDArray[np.intp] = slice(first, first + chosen.size)
    else:
        selected = chosen
    vectors_t = kept_rows[selected]
    for start in range(0, vectors_t.shape[0], rows):
        chunk = vectors_t[start : start + rows]
        np.divide(zhat, chunk, out=chunk)
        chunk /= np.sqrt(np.einsum("ij,ij->i", chunk, chunk))[:, None]
    return lam, selected, vectors_t


def _initial_guess(
    k: int, guess: tuple[NDArray[np.int64], NDArray[np.float64]] | None
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """``(side, tau)`` for the compiled kernels: side ``-1`` (cold start) for every root."""
    if guess is None:
        return np.full(k, -1, dtype=np.int64), np.zeros(k)
    return guess


def _use_threads(n_threads: int) -> bool:
    """Set Numba's thread count for a threaded kernel; False: use the serial build."""
    import numba

    threads = max(1, min(n_threads, numba.config.NUMBA_NUM_THREADS))
    if threads > 1:
        numba.set_num_threads(threads)
    return threads > 1


def _restoring_numba_threads(func: Callable[..., Any]) -> Callable[..., Any]:
    """Restore the caller's Numba thread count after ``func`` (``_use_threads`` changes it).

    Numba's count is per calling thread and persists; a solver must not leave it changed for
    the user's own Numba code.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import numba

        before = numba.get_num_threads()
        try:
            return func(*args, **kwargs)
        finally:
            if numba.get_num_threads() != before:
                numba.set_num_threads(before)

    return wrapper


@_restoring_numba_threads
def _secular_eigenpairs_numba(
    d: NDArray[np.float64],
    z_unit: NDArray[np.float64],
    rho: float,
    window: tuple[float, float],
    n_threads: int = 1,
    guess: tuple[NDArray[np.int64], NDArray[np.float64]] | None = None,
    warm: SecularWarmStart | None = None,
) -> tuple[NDArray[np.float64], slice, SecularRows] | None:
    """As :func:`_secular_eigenpairs`, by the compiled kernel
    (:mod:`indefsvm.linalg._secular_numba`).

    Returns None when a root failed ``dlaed4``'s convergence test within the iteration limit (the
    caller then uses the LAPACK path for the whole problem). ``k >= 3`` is required.
    """

    kernel = _numba_kernel()
    k = d.shape[0]
    side, guess_tau, origin, tau, status = _root_buffers(k, guess)
    partial = np.empty((kernel.N_CHUNKS, k), dtype=np.float64)
    # Two Löwner ratios per division when their products cannot over/underflow.
    scale = max(float(np.max(np.abs(d))), rho)
    pair = 1e-100 <= scale <= 1e100
    # The serial build when one thread: no OpenMP pool whose idle threads spin after each
    # parallel region (on a shared machine they take the CPU from the BLAS products).
    roots = kernel.secular_roots if _use_threads(n_threads) else kernel.secular_roots_serial
    roots(d, z_unit, float(rho), side, guess_tau, pair, origin, tau, status, partial)
    if warm is not None:
        warm._record_call(status)
        warm.last_root_state = (origin, tau)
    if np.any(status < 0):
        bad = int(np.flatnonzero(status < 0)[0])
        logger.debug(
            "compiled secular solver: root %d of %d failed the convergence test; using dlaed4",
            bad,
            k,
        )
        return None
    lam = d[origin] + tau
    # Chunks are multiplied in a fixed order: the result does not depend on n_threads.
    products = np.prod(partial, axis=0)
    if k % 2:
        products = -products
    zhat = np.copysign(np.sqrt(np.maximum(-products, 0.0)), z_unit)
    lo, hi = window
    chosen = np.flatnonzero((lam > lo) & (lam < hi))
    # Every root lies in its own interval, so the roots ascend and the window is contiguous.
    first = int(chosen[0]) if chosen.size else 0
    selected = slice(first, first + chosen.size)
    # The vectors are formed when read (SecularRows): a solver's evaluation needs only W'z and
    # W c, which the fused kernels compute without the n x m array.
    return lam, selected, SecularRows(d, zhat, origin, tau, first, chosen.size, n_threads)


def _small_deltas(
    d: NDArray[np.float64], z: NDArray[np.float64], rho: float, i: int
) -> NDArray[np.float64]:
    """``d - lambda_i`` without cancellation for ``n <= 2`` (the ``tau`` of LAPACK ``dlaed5``)."""
    if d.shape[0] == 1:
        return np.array([-rho * z[0] * z[0]])
    gap = d[1] - d[0]
    z1sq, z2sq = z[0] * z[0], z[1] * z[1]
    if i == 0 and 1.0 + 2.0 * rho * (z2sq - z1sq) / gap > 0.0:
        # Root nearer to d_1: lambda = d_1 + tau.
        b = gap + rho * (z1sq + z2sq)
        c = rho * z1sq * gap
        tau = 2.0 * c / (b + np.sqrt(abs(b * b - 4.0 * c)))
        return np.array([-tau, gap - tau])
    # Root nearer to d_2 (the first root in the other branch, or the second root): d_2 + tau.
    b = -gap + rho * (z1sq + z2sq)
    c = rho * z2sq * gap
    disc = np.sqrt(b * b + 4.0 * c)
    if i == 0:
        tau = -2.0 * c / (b + disc) if b > 0 else (b - disc) / 2.0
    else:
        tau = (b + disc) / 2.0 if b > 0 else 2.0 * c / (-b + disc)
    return np.array([-gap - tau, -tau])


def secular_root(
    d: ArrayLike, z_unit: ArrayLike, rho: float, i: int
) -> tuple[float, NDArray[np.float64]]:
    """One eigenvalue of ``diag(d) + rho z z'`` by LAPACK ``dlaed4`` (thin wrapper).

    Solves the secular equation ``1 + rho sum_j z_j^2 / (d_j - lambda) = 0`` of Bunch, Nielsen &
    Sorensen (1978) for its ``i``-th root, as in LAPACK ``dlaed4`` (Li's "middle way" iteration).

    Parameters
    ----------
    d : array_like of shape (n,)
        Strictly increasing diagonal.
    z_unit : array_like of shape (n,)
        Weights of unit Euclidean norm.
    rho : float
        Positive multiplier of the rank-one term.
    i : int
        Which root, 0-based (``0 <= i < n``); roots are ascending.

    Returns
    -------
    lam : float
        The ``i``-th eigenvalue, ``d_i <= lam <= d_{i+1}`` (``d_n <= lam <= d_n + rho`` for the
        last one).
    delta : ndarray of shape (n,)
        ``delta_j = d_j - lam``, computed by ``dlaed4`` without cancellation.

    Raises
    ------
    ValueError
        On inputs outside ``dlaed4``'s contract (shape, order, norm, sign of ``rho``, index).
    RuntimeError
        If ``dlaed4`` reports failure (``info != 0``).
    """
    d = _as_vector(d, "d")
    z_unit = _as_vector(z_unit, "z_unit")
    n = d.shape[0]
    if n == 0:
        raise ValueError("d must have at least one entry; got an empty array.")
    if z_unit.shape != d.shape:
        raise ValueError(f"z_unit must have the shape of d {d.shape}; got {z_unit.shape}.")
    if n > 1 and not np.all(np.diff(d) > 0):
        raise ValueError("d must be strictly increasing for dlaed4; deflate equal entries first.")
    if np.any(z_unit == 0):
        raise ValueError("z_unit must have no zero entries (they are deflated pairs (d_j, e_j)).")
    norm = float(np.linalg.norm(z_unit))
    if abs(norm - 1.0) > 1e-12 * max(1, n):
        raise ValueError(f"z_unit must have unit Euclidean norm; got ||z_unit|| = {norm!r}.")
    rho = float(rho)
    if not (np.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be finite and > 0; got {rho!r}.")
    if isinstance(i, bool) or not isinstance(i, int | np.integer) or not 0 <= int(i) < n:
        raise ValueError(f"i must be an integer in [0, {n - 1}]; got {i!r}.")
    func = _dlaed4()
    n_arr = np.array([n], dtype=np.intc)
    i_arr = np.array([int(i) + 1], dtype=np.intc)
    rho_arr = np.array([rho], dtype=np.float64)
    lam = np.zeros(1, dtype=np.float64)
    info = np.zeros(1, dtype=np.intc)
    delta = np.empty(n, dtype=np.float64)
    func(
        n_arr.ctypes.data,
        i_arr.ctypes.data,
        d.ctypes.data,
        z_unit.ctypes.data,
        delta.ctypes.data,
        rho_arr.ctypes.data,
        lam.ctypes.data,
        info.ctypes.data,
    )
    if info[0] != 0:
        raise RuntimeError(f"LAPACK dlaed4 failed for root {i} of {n}: info = {int(info[0])}.")
    if n <= 2:
        delta = _small_deltas(d, z_unit, rho, int(i))
    return float(lam[0]), delta


class SecularRows:
    """Eigenvectors of the secular roots ``first .. first + m - 1``, as rows, formed on demand.

    Row ``r`` is ``zhat / delta / ||zhat / delta||`` with ``delta = (d - d[origin[j]]) -
    tau[j]``, ``j = first + r`` (Gu & Eisenstat 1994; :func:`_secular_eigenpairs_numba`).
    :meth:`form` writes the m x k array; :meth:`rows_dot` and :meth:`combine` give ``W'x`` and
    ``W c`` (``W`` the eigenvectors as columns) from the same expression without it (one pass
    of divisions each, no array written or read: at k = 3000 and m = 1500 that array is 36 MB,
    formed and read twice per evaluation of the proxy kernel otherwise).
    """

    def __init__(
        self,
        d: NDArray[np.float64],
        zhat: NDArray[np.float64],
        origin: NDArray[np.int64],
        tau: NDArray[np.float64],
        first: int,
        m: int,
        n_threads: int,
    ) -> None:
        self.d, self.zhat, self.origin, self.tau = d, zhat, origin, tau
        self.first, self.m, self.n_threads = first, m, n_threads
        rows = slice(first, first + m)
        self._dorg = np.ascontiguousarray(d[origin[rows]])
        self._tau = np.ascontiguousarray(tau[rows])
        self._inv_norm: NDArray[np.float64] | None = None

    @_restoring_numba_threads
    def form(self) -> NDArray[np.float64]:
        """The rows as an (m, k) array."""
        kernel = _numba_kernel()
        out = np.empty((self.m, self.d.shape[0]), dtype=np.float64)
        if self.m:
            threaded = _use_threads(self.n_threads)
            vectors = kernel.secular_vectors if threaded else kernel.secular_vectors_serial
            vectors(self.d, self.zhat, self.origin, self.tau, self.first, out)
        return out

    @_restoring_numba_threads
    def rows_dot(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """``R x`` (shape (m,)) for the rows ``R`` (the eigenvectors' products with ``x``)."""
        kernel = _numba_kernel()
        out = np.empty(self.m, dtype=np.float64)
        inv_norm = np.empty(self.m, dtype=np.float64)
        if self.m:
            threaded = _use_threads(self.n_threads)
            run = (
                kernel.secular_vectors_rmatvec
                if threaded
                else kernel.secular_vectors_rmatvec_serial
            )
            run(self.d, self.zhat, self._dorg, self._tau, np.ascontiguousarray(x), out, inv_norm)
        self._inv_norm = inv_norm
        return out

    @_restoring_numba_threads
    def combine(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """``R' c`` (shape (k,)): the rows combined with the weights ``c``."""
        if self._inv_norm is None:
            self.rows_dot(np.zeros(self.d.shape[0]))  # the norms (one pass)
        kernel = _numba_kernel()
        out = np.zeros(self.d.shape[0], dtype=np.float64)
        if self.m:
            coef = np.ascontiguousarray(c * self._inv_norm)
            threaded = _use_threads(self.n_threads)
            run = (
                kernel.secular_vectors_matvec if threaded else kernel.secular_vectors_matvec_serial
            )
            run(self.d, self.zhat, self._dorg, self._tau, coef, out)
        return out


class _Assembly:
    """How the secular rows and the deflated unit vectors make the eigenvectors in the
    coordinates of ``d`` (:func:`_rank_one_positive`): rows at ``kept``, columns ordered by
    ``rank``, then the deflation's Givens rotations undone."""

    def __init__(self, rows, n, kept, deflated_rows, rank, rotations, n_deflated):
        self.rows = rows  # SecularRows, or an (m, k) array (the LAPACK path)
        self.n, self.kept, self.deflated_rows = n, kept, deflated_rows
        self.rank, self.rotations, self.n_deflated = rank, rotations, n_deflated

    @property
    def m_secular(self) -> int:
        return self.rows.m if isinstance(self.rows, SecularRows) else self.rows.shape[0]

    def form(self) -> NDArray[np.float64]:
        rows = self.rows.form() if isinstance(self.rows, SecularRows) else self.rows
        m = rows.shape[0]
        if self.n_deflated == 0:
            # No deflation: columns already ascending and in the coordinates of d.
            return rows.T
        # Row-major (n, m) so that undoing a rotation touches two contiguous rows.
        vectors = np.zeros((self.n, self.rank.size))
        vectors[np.ix_(self.kept, self.rank[:m])] = rows.T
        vectors[self.deflated_rows, self.rank[m:]] = 1.0
        # Undo the Givens rotations: the basis is Q = G_1 G_2 ... G_r, so apply G_r first.
        # BLAS drot works in place on the two rows: (p, q) <- (c p - s q, s p + c q).
        for p, q, c, s in reversed(self.rotations) if self.rank.size else ():
            drot(vectors[p], vectors[q], c, -s, overwrite_x=True, overwrite_y=True)
        return vectors

    def rmatvec(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """``W'x`` for all columns, from the rows without forming ``W``."""
        x = np.array(x, dtype=np.float64)
        # W = G_1 ... G_r W0, so W'x = W0' G_r' ... G_1' x: G_1' first.
        for p, q, c, s in self.rotations:
            x[p], x[q] = c * x[p] + s * x[q], c * x[q] - s * x[p]
        m = self.m_secular
        out = np.empty(self.rank.size)
        out[self.rank[:m]] = self.rows.rows_dot(x[self.kept])
        out[self.rank[m:]] = x[self.deflated_rows]
        return out

    def matvec(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """``W c`` for the first ``len(c)`` columns, from the rows without forming ``W``."""
        full = np.zeros(self.rank.size)
        full[: c.shape[0]] = c
        m = self.m_secular
        out = np.zeros(self.n)
        out[self.kept] = self.rows.combine(full[self.rank[:m]])
        out[self.deflated_rows] += full[self.rank[m:]]
        for p, q, cc, s in reversed(self.rotations):
            out[p], out[q] = cc * out[p] - s * out[q], s * out[p] + cc * out[q]
        return out


class RankOneEigen:
    """Selected eigenpairs of ``diag(d) + sigma z z'``.

    Attributes
    ----------
    eigenvalues : ndarray of shape (k,)
        Ascending.
    eigenvectors : ndarray of shape (n, k)
        Orthonormal columns in the coordinates of ``d`` (column ``j`` belongs to
        ``eigenvalues[j]``). Multiply by ``V`` to get eigenvectors of ``K0 + sigma u u'``.
        Often Fortran-ordered (or a reversed view for ``sigma < 0``): it is built column by
        column and not copied into C order. With the compiled engine it is formed when first
        read; :meth:`rmatvec` and :meth:`matvec` do not need it.
    n_deflated : int
        Number of eigenpairs removed by deflation (tiny ``z_j`` or merged nearly-equal ``d_j``),
        a diagnostic of how clustered the problem is.
    """

    def __init__(
        self,
        eigenvalues: NDArray[np.float64],
        eigenvectors: NDArray[np.float64] | None = None,
        n_deflated: int = 0,
        *,
        assembly: _Assembly | None = None,
    ) -> None:
        if eigenvectors is None and assembly is None:
            raise ValueError("RankOneEigen needs the eigenvectors or their assembly.")
        self.eigenvalues = eigenvalues
        self.n_deflated = n_deflated
        self._eigenvectors = eigenvectors
        self._assembly = assembly

    @property
    def eigenvectors(self) -> NDArray[np.float64]:
        if self._eigenvectors is None:
            self._eigenvectors = self._assembly.form()
            self._assembly = None
        return self._eigenvectors

    @property
    def formed(self) -> bool:
        """Whether the eigenvector array exists (else it is formed when read)."""
        return self._eigenvectors is not None

    def rmatvec(self, x: NDArray[np.float64], count: int | None = None) -> NDArray[np.float64]:
        """``W[:, :count]' x`` (``count`` None: every column)."""
        count = self.eigenvalues.shape[0] if count is None else count
        if self._eigenvectors is not None:
            return self._eigenvectors[:, :count].T @ x
        return self._assembly.rmatvec(x)[:count]

    def matvec(self, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """``W[:, :len(c)] c``."""
        if self._eigenvectors is not None:
            return self._eigenvectors[:, : c.shape[0]] @ c
        return self._assembly.matvec(c)

    def __repr__(self) -> str:
        return (
            f"RankOneEigen(eigenvalues={self.eigenvalues!r}, n_deflated={self.n_deflated}, "
            f"eigenvectors={'formed' if self.formed else 'formed when read'})"
        )


def _as_vector(x: ArrayLike, name: str) -> NDArray[np.float64]:
    # Contiguous: the compiled kernels and the ctypes calls to dlaed4 read raw memory.
    arr = _as_finite_real(x, name, ndim=1, what="a numeric vector", dims="a 1-D vector")
    return np.ascontiguousarray(arr)


def _vector_norm(x: NDArray[np.float64]) -> float:
    """Euclidean norm without overflow or underflow of the squares (as BLAS ``dnrm2``)."""
    biggest = float(np.max(np.abs(x))) if x.size else 0.0
    if biggest == 0.0:
        return 0.0
    scaled = x / biggest
    return biggest * float(np.sqrt(scaled @ scaled))


@dataclass
class _Deflation:
    """Outcome of the ``dlaed2``-style deflation of ``diag(d) + rho z z'`` (``z`` unit norm)."""

    d: NDArray[np.float64]  # diagonal in the rotated basis
    z: NDArray[np.float64]  # z in the rotated basis (zero at deflated positions)
    kept: NDArray[np.intp]  # ascending positions entering the secular equation
    deflated: NDArray[np.intp]  # positions whose unit vector is an eigenvector
    rotations: list[tuple[int, int, float, float]]  # (p, q, c, s) in the order applied


def _secular_weight(z: NDArray[np.float64], sigma: float) -> tuple[float, float]:
    """``||z||`` and the weight ``rho = sigma ||z||^2`` of ``diag(d) + sigma z z'``.

    Shared by the eigenpair and the eigenvalue-only paths: ``z`` is then used with unit norm,
    and a weight that overflows is refused (it would make every root infinite).
    """
    z_norm = _vector_norm(z)
    rho = (sigma * z_norm) * z_norm
    if not np.isfinite(rho):
        raise ValueError(f"sigma * ||z||^2 overflows (sigma = {sigma!r}, ||z|| = {z_norm!r}).")
    return z_norm, rho


def _secular_problem(
    defl: _Deflation, rho: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """Poles, unit weights and ``rho`` of the secular equation left after deflation.

    The kept part of the deflated ``z`` has norm below one: renormalise it and fold its norm
    into ``rho``, as both the eigenpair and the eigenvalue-only paths do before the roots.
    """
    zk = defl.z[defl.kept]
    zk_norm = _vector_norm(zk)
    return defl.d[defl.kept], zk / zk_norm, rho * zk_norm * zk_norm


def _root_buffers(
    k: int, guess: tuple[NDArray[np.int64], NDArray[np.float64]] | None
) -> tuple[NDArray[Any], ...]:
    """Warm start ``(side, guess_tau)`` and zeroed outputs ``(origin, tau, status)`` of ``k`` roots.

    The inputs and outputs of the compiled root loops, for all roots or a prefix (whose
    unwritten entries stay 0).
    """
    side, guess_tau = _initial_guess(k, guess)
    origin = np.zeros(k, dtype=np.int64)
    tau = np.zeros(k, dtype=np.float64)
    status = np.zeros(k, dtype=np.int64)
    return side, guess_tau, origin, tau, status


def _deflate(d: NDArray[np.float64], z: NDArray[np.float64], rho: float) -> _Deflation:
    """Deflate as LAPACK ``dlaed2`` does (tiny ``z_j``; nearly equal ``d_j`` via Givens).

    ``d`` ascending, ``z`` of unit norm, ``rho > 0``. The tolerance is ``dlaed2``'s
    ``8 eps max(|d|_max, rho)`` (``dlaed2`` works on a matrix scaled to norm one). A component is
    dropped when ``rho |z_j| <= tol``: that bounds the norm of the discarded part of ``rho z z'``.
    Two kept neighbours ``p < q`` are merged when the off-diagonal entry ``c s (d_q - d_p)`` left by
    the rotation that zeroes ``z_p`` is below ``tol``, among neighbours at most ``2 tol`` apart
    (``dlaed2`` also tries wider pairs; see the comment in the body).
    """
    n = d.shape[0]
    d = d.copy()
    z = z.copy()
    tol = _DEFLATION_FACTOR * _EPS * max(float(np.max(np.abs(d))), rho)
    small = rho * np.abs(z) <= tol
    z[small] = 0.0
    candidates = np.flatnonzero(~small)
    merged = np.zeros(n, dtype=bool)
    rotations: list[tuple[int, int, float, float]] = []
    # Only neighbours whose ORIGINAL gap is at most 2 tol are tried (|c s| <= 1/2, and a
    # rotation only moves d_q towards d_p, so later gaps only grow). This is narrower than
    # dlaed2, which merges any pair with |(d_q - d_p) c s| <= tol: with very unequal weights
    # (|c s| small) a wider pair can qualify there and is kept here. Keeping it costs accuracy
    # nothing (the secular solver resolves such a pair; eigenvalues and orthogonality agree
    # with eigh to 1e-16 on d = (0, 5 tol, 1), z_p = 1e-14), only an uncounted deflation.
    close = np.flatnonzero(np.diff(d[candidates]) <= 2.0 * tol) if candidates.size > 1 else ()
    if len(close):
        # The chain of merges is sequential; plain Python floats keep the loop cheap.
        d_list, z_list = d.tolist(), z.tolist()
        for pos in close.tolist():
            p, q = int(candidates[pos]), int(candidates[pos + 1])
            z_p, z_q, d_p, d_q = z_list[p], z_list[q], d_list[p], d_list[q]
            tau = math.hypot(z_p, z_q)
            c, s = z_q / tau, -z_p / tau
            if abs((d_q - d_p) * c * s) <= tol:
                z_list[q], z_list[p] = tau, 0.0
                d_list[p] = d_p * c * c + d_q * s * s
                d_list[q] = d_p * s * s + d_q * c * c
                merged[p] = True
                rotations.append((p, q, c, s))
        d, z = np.array(d_list), np.array(z_list)
    is_deflated = small | merged
    return _Deflation(
        d=d,
        z=z,
        kept=np.flatnonzero(~is_deflated),
        deflated=np.flatnonzero(is_deflated),
        rotations=rotations,
    )


def _rank_one_positive(
    d: NDArray[np.float64],
    z: NDArray[np.float64],
    sigma: float,
    window: tuple[float, float],
    n_threads: int,
    engine: str = "lapack",
    warm: SecularWarmStart | None = None,
    sign: int = 1,
) -> RankOneEigen:
    """The eigenpairs of ``diag(d) + sigma z z'`` (``sigma >= 0``) inside an open window.

    Returns the pairs with ``window[0] < lambda < window[1]``. ``engine`` is ``"numba"`` or
    ``"lapack"`` (resolved by the caller); ``warm``/``sign`` key the warm start.
    """
    n = d.shape[0]
    z_norm, rho = _secular_weight(z, sigma)
    if n == 0 or rho == 0.0:
        cols = np.flatnonzero((d > window[0]) & (d < window[1]))
        vectors = np.zeros((n, cols.size))
        vectors[cols, np.arange(cols.size)] = 1.0
        return RankOneEigen(d[cols].copy(), vectors, n)
    defl = _deflate(d, z / z_norm, rho)
    kept, deflated = defl.kept, defl.deflated
    k = kept.size
    if k > 0:
        dk, zk_unit, rho_k = _secular_problem(defl, rho)
        found = None
        if engine == "numba" and k >= 3:
            guess = warm.guesses(n, sign, kept) if warm is not None else None
            found = _secular_eigenpairs_numba(dk, zk_unit, rho_k, window, n_threads, guess, warm)
            if found is not None and warm is not None:
                warm.store(n, sign, kept, *warm.last_root_state)
        if found is None:
            found = _secular_eigenpairs(dk, zk_unit, rho_k, window, n_threads)
            if warm is not None:
                warm.reset()
        lam_k, selected, rows = found
    else:
        lam_k = np.empty(0)
        selected = slice(0, 0)
        rows = np.empty((0, 0))
    lam_deflated = defl.d[deflated]
    chosen_deflated = np.flatnonzero((lam_deflated > window[0]) & (lam_deflated < window[1]))
    # Merge the two ascending lists of returned eigenvalues; rank = output column.
    sel_lam = np.concatenate([lam_k[selected], lam_deflated[chosen_deflated]])
    order = np.argsort(sel_lam, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    assembly = _Assembly(
        rows, n, kept, deflated[chosen_deflated], rank, defl.rotations, int(deflated.size)
    )
    if isinstance(rows, SecularRows):
        return RankOneEigen(sel_lam[order], None, int(deflated.size), assembly=assembly)
    return RankOneEigen(sel_lam[order], assembly.form(), int(deflated.size))


def _secular_values_lapack(
    d: NDArray[np.float64], z_unit: NDArray[np.float64], rho: float, m: int
) -> NDArray[np.float64]:
    """The ``m`` smallest roots by LAPACK ``dlaed4``, one call each (no eigenvectors)."""
    k = d.shape[0]
    func = _dlaed4()
    lam = np.empty(m, dtype=np.float64)
    info = np.zeros(max(m, 1), dtype=np.intc)
    n_arr = np.array([k], dtype=np.intc)
    index = np.arange(1, m + 1, dtype=np.intc)
    rho_arr = np.array([rho], dtype=np.float64)
    delta = np.empty(k, dtype=np.float64)
    size_int, size_dbl = index.itemsize, lam.itemsize
    p_n, p_d, p_z, p_rho = n_arr.ctypes.data, d.ctypes.data, z_unit.ctypes.data, rho_arr.ctypes.data
    p_index, p_lam, p_info, p_delta = (
        index.ctypes.data, lam.ctypes.data, info.ctypes.data, delta.ctypes.data,
    )  # fmt: skip
    for j in range(m):
        func(p_n, p_index + j * size_int, p_d, p_z, p_delta, p_rho, p_lam + j * size_dbl,
             p_info + j * size_int)  # fmt: skip
    if np.any(info[:m] != 0):
        bad = int(np.flatnonzero(info[:m])[0])
        raise RuntimeError(
            f"LAPACK dlaed4 failed to converge for secular root {bad} of {k} "
            f"(info = {int(info[bad])})."
        )
    return lam


@_restoring_numba_threads
def _secular_values_numba(
    d: NDArray[np.float64],
    z_unit: NDArray[np.float64],
    rho: float,
    m: int,
    n_threads: int,
    guess: tuple[NDArray[np.int64], NDArray[np.float64]] | None,
    warm: SecularWarmStart | None,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.float64]] | None:
    """The ``m`` smallest roots by the compiled kernel; None if one failed its test."""

    kernel = _numba_kernel()
    k = d.shape[0]
    side, guess_tau, origin, tau, status = _root_buffers(k, guess)
    if _use_threads(n_threads):
        roots = kernel.secular_roots_prefix
    else:
        roots = kernel.secular_roots_prefix_serial
    roots(d, z_unit, float(rho), side, guess_tau, m, origin, tau, status)
    if warm is not None:
        warm._record_call(status[:m])
    if np.any(status[:m] < 0):
        return None
    return d[origin[:m]] + tau[:m], origin, tau


def _rank_one_values_positive(
    d: NDArray[np.float64],
    z: NDArray[np.float64],
    sigma: float,
    upper: float,
    n_threads: int,
    engine: str,
    warm: SecularWarmStart | None,
) -> tuple[NDArray[np.float64], int]:
    """Eigenvalues of ``diag(d) + sigma z z'`` (``sigma >= 0``) below ``upper``, ascending.

    Same deflation and roots as :func:`_rank_one_positive`, but only the roots of the first
    ``m = #{d_j < upper}`` intervals (interlacing: root j lies in ``(d_j, d_{j+1})``), no
    Löwner products and no eigenvectors. Returns the eigenvalues and the number deflated.
    """
    n = d.shape[0]
    z_norm, rho = _secular_weight(z, sigma)
    if n == 0 or rho == 0.0:
        return d[d < upper].copy(), n
    defl = _deflate(d, z / z_norm, rho)
    kept, deflated = defl.kept, defl.deflated
    k = kept.size
    lam_k = np.empty(0)
    if k > 0:
        dk, zk_unit, rho_k = _secular_problem(defl, rho)
        m = int(np.searchsorted(dk, upper, side="left"))
        found = None
        if engine == "numba" and k >= 3:
            guess = warm.guesses(n, 1, kept) if warm is not None else None
            found = _secular_values_numba(dk, zk_unit, rho_k, m, n_threads, guess, warm)
            if found is not None and warm is not None:
                warm.store_prefix(n, 1, kept, found[1], found[2], m)
            if found is not None:
                lam_k = found[0]
        if found is None:
            if k >= 3:
                lam_k = _secular_values_lapack(dk, zk_unit, rho_k, m)
            else:  # dlaed4 returns other quantities in DELTA for k <= 2; roots are what we use
                lam_k = _secular_eigenpairs(dk, zk_unit, rho_k, (-np.inf, np.inf))[0][:m]
        lam_k = lam_k[lam_k < upper]
    lam_deflated = defl.d[deflated]
    lam = np.concatenate([lam_k, lam_deflated[lam_deflated < upper]])
    lam.sort(kind="stable")
    return lam, int(deflated.size)


def rank_one_eigvals_below(
    d: ArrayLike,
    z: ArrayLike,
    sigma: float,
    *,
    upper: float = 0.0,
    n_threads: int = 1,
    engine: str = "auto",
    warm_start: SecularWarmStart | None = None,
) -> NDArray[np.float64]:
    """Eigenvalues of ``diag(d) + sigma z z'`` below ``upper``, without eigenvectors.

    What the OBJECTIVE of paper 004 eq. (7) needs (theory.md §1: ``rho sum min(0, lambda_i(M))^2``):
    for ``sigma >= 0`` only the roots of the secular equation in the first
    ``#{d_j < upper}`` pole intervals are computed (interlacing), with no Löwner products and no
    eigenvectors, about half of :func:`rank_one_eigh`'s work on a kernel with half its
    eigenvalues negative. Deflation, roots and convergence test are those of
    :func:`rank_one_eigh` (LAPACK ``dlaed2``/``dlaed4``), so the values agree with its
    ``which="below"`` eigenvalues to working accuracy. ``sigma < 0`` is delegated to
    :func:`rank_one_eigh`.

    Parameters
    ----------
    d, z, sigma, n_threads, engine, warm_start
        As :func:`rank_one_eigh`. The warm start is shared with it: the roots found here update
        the stored guesses of the same intervals, and the others are kept.
    upper : float
        Threshold (eigenvalues ``< upper`` are returned).

    Returns
    -------
    ndarray of shape (m,)
        The eigenvalues below ``upper``, ascending (deflated ones included).
    """
    sigma = float(sigma)
    if not np.isfinite(sigma) or sigma < 0:
        return rank_one_eigh(
            d, z, sigma, which="below", upper=upper, n_threads=n_threads, engine=engine,
            warm_start=warm_start,
        ).eigenvalues  # fmt: skip
    d = _as_vector(d, "d")
    z = _as_vector(z, "z")
    if z.shape != d.shape:
        raise ValueError(f"z must have the shape of d {d.shape}; got shape {z.shape}.")
    if d.shape[0] > 1 and np.any(np.diff(d) < 0):
        raise ValueError("d must be sorted in ascending order (eigenvalues of numpy.linalg.eigh).")
    upper = float(upper)
    if np.isnan(upper):
        raise ValueError("upper must not be NaN.")
    if isinstance(n_threads, bool) or not isinstance(n_threads, int | np.integer) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer; got {n_threads!r}.")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}.")
    if engine == "numba" and not numba_available():
        raise ValueError("engine='numba' needs the numba package (pip install numba).")
    resolved = "numba" if engine != "lapack" and numba_available() else "lapack"
    lam, _ = _rank_one_values_positive(d, z, sigma, upper, int(n_threads), resolved, warm_start)
    return lam


def rank_one_eigh(
    d: ArrayLike,
    z: ArrayLike,
    sigma: float,
    *,
    which: str = "all",
    upper: float = 0.0,
    n_threads: int = 1,
    engine: str = "auto",
    warm_start: SecularWarmStart | None = None,
) -> RankOneEigen:
    """Eigenpairs of ``diag(d) + sigma z z'`` (rank-one update of a diagonalised matrix).

    Used for ``M(alpha) = K0 + sigma u u'`` in the eigenbasis of ``K0`` (Luss & d'Aspremont 2009,
    eq. (5) and Sect. 3.1; theory.md §5): only the negative eigenpairs of ``M`` enter the objective
    and the gradient, so ``which="below", upper=0.0`` is the solver's call.

    Deflation follows LAPACK ``dlaed2``, the roots of the secular equation (Bunch, Nielsen &
    Sorensen 1978) come from LAPACK ``dlaed4``, and the eigenvectors are the stable ones of
    Gu & Eisenstat (1994) as in LAPACK ``dlaed3``. All roots are always computed (the corrected
    vector ``zhat`` needs them); eigenvectors are formed only for the selected pairs.

    Parameters
    ----------
    d : array_like of shape (n,)
        Diagonal, ascending (ties allowed: repeated eigenvalues of ``K0``).
    z : array_like of shape (n,)
        Update direction (zeros allowed).
    sigma : float
        Weight of the update; any finite real (``sigma < 0`` is handled by negating the
        problem, ``sigma == 0`` returns the diagonal).
    which : {"all", "below"}
        ``"all"``: all ``n`` pairs. ``"below"``: only the pairs with eigenvalue ``< upper``.
    upper : float
        Threshold for ``which="below"``.
    n_threads : int
        Threads sharing the loop over secular roots (each ``dlaed4`` call releases the GIL, and
        the per-block numpy work mostly does too; with the compiled engine, Numba threads over
        chunks of roots). ``1`` (default) runs in the calling thread; the result is bitwise the
        same for any value.
    engine : {"auto", "numba", "lapack"}
        Secular solver. ``"numba"``: the compiled kernel of :mod:`indefsvm.linalg._secular_numba`
        (all roots in one pass, Löwner products fused, ``dlaed4``'s iteration and convergence
        test), falling back to ``dlaed4`` if a root fails its test. ``"lapack"``: LAPACK
        ``dlaed4`` one root per call (the reference path). ``"auto"``: ``"numba"`` when Numba is
        importable.
    warm_start : SecularWarmStart, optional
        Keeps the roots of this call to start the next call's iteration from (for a sequence of
        nearby ``z``, as in the solvers); used by the compiled engine only.

    Returns
    -------
    RankOneEigen
        Eigenvalues ascending, orthonormal eigenvectors ``(n, k)`` in the coordinates of ``d``,
        and the number of deflated pairs.

    Raises
    ------
    ValueError
        If ``d`` is not ascending, shapes differ, values are not finite, or ``which`` is unknown.
    """
    d = _as_vector(d, "d")
    z = _as_vector(z, "z")
    if z.shape != d.shape:
        raise ValueError(f"z must have the shape of d {d.shape}; got shape {z.shape}.")
    if d.shape[0] > 1 and np.any(np.diff(d) < 0):
        raise ValueError(
            "d must be sorted in ascending order (eigenvalues as returned by numpy.linalg.eigh); "
            "sort d and permute z (and the eigenvectors of K0) accordingly."
        )
    sigma = float(sigma)
    if not np.isfinite(sigma):
        raise ValueError(f"sigma must be finite; got {sigma!r}.")
    if which not in _WHICH:
        raise ValueError(f"which must be one of {_WHICH}; got {which!r}.")
    upper = float(upper)
    if which == "below" and np.isnan(upper):
        raise ValueError("upper must not be NaN.")
    if isinstance(n_threads, bool) or not isinstance(n_threads, int | np.integer) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer; got {n_threads!r}.")
    n_threads = int(n_threads)
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}; got {engine!r}.")
    if engine == "numba" and not numba_available():
        raise ValueError("engine='numba' needs the numba package (pip install numba).")
    resolved = "numba" if engine != "lapack" and numba_available() else "lapack"
    opts = {"engine": resolved, "warm": warm_start}
    if sigma >= 0:
        if which == "all":
            return _rank_one_positive(d, z, sigma, (-np.inf, np.inf), n_threads, **opts)
        return _rank_one_positive(d, z, sigma, (-np.inf, upper), n_threads, **opts)
    # diag(d) + sigma z z' = -(diag(-d) + |sigma| z z'); reversing the order keeps -d ascending,
    # and eigenvalue mu of the negated problem is -lambda, so lambda < upper <=> mu > -upper.
    if which == "all":
        neg = _rank_one_positive(
            -d[::-1], z[::-1], -sigma, (-np.inf, np.inf), n_threads, sign=-1, **opts
        )
    else:
        neg = _rank_one_positive(
            -d[::-1], z[::-1], -sigma, (-upper, np.inf), n_threads, sign=-1, **opts
        )
    return RankOneEigen(
        eigenvalues=-neg.eigenvalues[::-1],
        eigenvectors=neg.eigenvectors[::-1, ::-1],
        n_deflated=neg.n_deflated,
    )
