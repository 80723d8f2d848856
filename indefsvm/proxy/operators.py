"""The proxy kernel ``K*(u) = (K0 + sigma u u')_+`` in the eigenbasis of ``K0``.

Paper 004, Theorem 1 (eq. 5) and Corollary 2 (eq. 16): the inner minimisation over kernels has the
closed form ``K* = (K0 + u u' / (4 rho))_+`` with ``u = Y alpha`` (classification) or ``u = alpha``
(SVR, one-class). ``K0 = V D V'`` is eigendecomposed once; afterwards
``M = K0 + sigma u u' = V (D + sigma z z') V'`` with ``z = V'u`` and only the eigenpairs of the
diagonal-plus-rank-one matrix that lie below zero are needed (theory.md §1, §5): every evaluation
costs
two products with ``V`` plus the secular-equation work of :mod:`indefsvm.linalg.rank_one`, instead
of the
paper's n x n matrix product or a full eigendecomposition.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from indefsvm.linalg.rank_one import (
    RankOneEigen,
    SecularWarmStart,
    rank_one_eigh,
    rank_one_eigvals_below,
)
from indefsvm.threads import blas_threads_inside, engine_threads, usable_cores


def _default_engine_threads() -> int:
    """The most threads the secular-root loop may use: the cores this process may use.

    ``OMP_NUM_THREADS`` and ``NUMBA_NUM_THREADS`` lower it (as they lower OpenBLAS's and Numba's
    own pools); :func:`indefsvm.threads.usable_cores`. How many of them an operator uses
    depends on its size and on the machine's load (:func:`indefsvm.threads.threads_for`).
    """
    return usable_cores()


#: BLAS threads for the matrix-vector products of an evaluation (None: leave BLAS alone). The
#: products are memory-bound, so a second thread gains little on an idle machine, while on a
#: loaded one OpenBLAS's threads wait for each other: at n = 2000 under load a product with
#: ``V`` took 52 ms with 2 threads and 1.6 ms with one (docs/benchmarks.md).
GEMV_BLAS_THREADS: int | None = 1
#: Recent products ``V'u`` kept for forming a new one by linearity.
_Z_HISTORY = 6
#: Largest error bound of a ``V'u`` formed by linearity, in units of the rounding error of the
#: product formed directly (:meth:`ProxyKernelOperator._z_by_linearity`).
_Z_ERROR_LIMIT = 4.0
_EPS = float(np.finfo(np.float64).eps)
_TINY = float(np.finfo(np.float64).tiny)


@functools.lru_cache(maxsize=1)
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _gemv_threads() -> contextlib.AbstractContextManager:
    """Limit BLAS to :data:`GEMV_BLAS_THREADS` threads for the products of one evaluation."""
    if GEMV_BLAS_THREADS is None:
        return contextlib.nullcontext()
    inside = blas_threads_inside()
    if inside is not None and inside <= GEMV_BLAS_THREADS:
        # The fit already runs BLAS with that few threads: no limiter per evaluation (~35 us).
        return contextlib.nullcontext()
    return _blas_controller().limit(limits=GEMV_BLAS_THREADS, user_api="blas")


@dataclass
class ProxyState:
    """Everything one evaluation of ``K*(u)`` produces (all in O(n^2) + O(n k)).

    Attributes
    ----------
    u : ndarray of shape (n,)
        The vector of the rank-one update (``Y alpha`` or ``alpha``).
    z : ndarray of shape (n,) or None
        ``V'u`` (None on the PSD path, where no eigenbasis is used).
    low_values : ndarray of shape (k,)
        Eigenvalues of ``M`` below the threshold requested (the negative ones, plus those in
        ``[0, smoothing)`` when a smoothing parameter is used).
    low : ndarray of shape (n, k), RankOneEigen or None
        Their eigenvectors in the eigenbasis of ``K0`` (multiply by ``V`` for the true vectors),
        or the :class:`~indefsvm.linalg.rank_one.RankOneEigen` that forms them: an evaluation
        needs only two products with them, which the compiled secular engine forms without
        the ``n x k`` array. Read them as :attr:`low_vectors`. None in a partial state.
    kstar_u : ndarray of shape (n,)
        ``K*(u) u``.
    u_kstar_u, u_k0_u, u_norm_sq : float
        ``u'K*u``, ``u'K0u`` and ``||u||^2``.
    u_mneg_u : float
        ``u' M_- u = sum_{lambda_i < 0} lambda_i (w_i'z)^2`` (non-positive), computed directly so
        the penalty ``rho ||K* - K0||_F^2`` has no cancellation.
    neg_sq_sum : float
        ``sum_i min(0, lambda_i(M))^2``, i.e. ``||M - K*||_F^2``.
    neg_sq_change : float
        ``sum_i min(0, lambda_i(M))^2 - sum_i min(0, d_i)^2`` (non-positive), formed term by term
        from each negative root and its pole (:func:`negative_square_change`): the
        alpha-dependent part of ``neg_sq_sum``, which the constant ``||(K0)_-||_F^2`` would
        swamp in a difference (theory.md §10).
    neg_sq_change_error : float
        A bound on the rounding error of ``neg_sq_change``.
    """

    u: NDArray[np.float64]
    z: NDArray[np.float64] | None
    low_values: NDArray[np.float64]
    low: NDArray[np.float64] | RankOneEigen | None
    kstar_u: NDArray[np.float64]
    u_kstar_u: float
    u_k0_u: float
    u_norm_sq: float
    u_mneg_u: float
    neg_sq_sum: float
    neg_sq_change: float = 0.0
    neg_sq_change_error: float = 0.0

    @property
    def low_vectors(self) -> NDArray[np.float64] | None:
        """The eigenvectors of ``low``, formed on first read and kept (out-of-sample rows,
        ``K*``, products with other vectors need the array; an evaluation does not)."""
        if isinstance(self.low, RankOneEigen):
            self.low = self.low.eigenvectors
        return self.low


#: Absolute accuracy of a computed eigenvalue of ``diag(d) + sigma z z'`` in units of
#: ``sqrt(n) eps ||M||`` (deflation tolerance 8 eps ||M||, LAPACK's p(n) for a dense ``eigh``).
_ROOT_ERROR_FACTOR = 8.0

#: Bisection/Newton steps at most per root in :func:`negative_square_change` (each step at least
#: halves the bracket, which starts a few ulps of the pole scale wide).
_REFINE_STEPS = 80


def negative_square_change(
    d: NDArray[np.float64],
    z: NDArray[np.float64],
    sigma: float,
    lam: NDArray[np.float64],
    *,
    scale: float = 1.0,
) -> tuple[float, float]:
    """``sum min(0, lambda_i)^2 - sum min(0, d_i)^2`` of ``diag(d) + sigma z z'``, no cancellation.

    Objective (7) holds ``rho sum min(0, lambda_i(M))^2``, whose value at ``alpha = 0`` is the
    constant ``f(0) = rho ||(K0)_-||_F^2`` (theory.md §10). For a large kernel or rho that constant
    dwarfs the alpha-dependent part, and ``f(alpha) - f(0)`` formed from the two sums loses every
    digit the certified gap needs (measured: a gap of exactly 0 with a true suboptimality of
    5.7e-6). With ``sigma > 0`` the eigenvalues interlace, ``d_i <= lambda_i <= d_{i+1}``, so
    pairing each negative root with the pole just below it gives

        sum_i min(0, lambda_i)^2 - min(0, d_i)^2
            = sum_{lambda_i < 0} delta_i (2 d_i + delta_i) - sum_{d_i < 0 <= lambda_i} d_i^2,

    with ``delta_i = lambda_i - d_i in [0, d_{i+1} - d_i]``: every term is <= 0 (no cancellation
    in the sum), and each ``delta_i`` is computed to high RELATIVE accuracy by solving the secular
    equation in the shifted variable ``t = lambda - d_o`` around the nearer pole ``d_o``
    (as LAPACK ``dlaed4`` does): ``1 + sigma sum_j z_j^2 / ((d_j - d_o) - t) = 0``, by Newton
    steps safeguarded by bisection inside a bracket around the computed root that the secular
    function must confirm (a sign change); a root without such a bracket keeps its plain
    difference, whose error is then counted in the bound.

    A computed root is accurate only to ``p eps ||M||`` ABSOLUTE (deflation, or the backward
    error of a dense ``eigh``; ``p = 8 sqrt(n)`` here), so its plain term ``lambda_i^2 - d_i^2``
    is off by up to ``2 |lambda_i| p eps ||M||``. Only the roots whose plain term could matter
    are refined: those with the largest such errors until the rest sum below ``64 eps scale``
    (``scale`` is the size of the alpha-dependent terms the result is combined with), so a
    problem whose ``||(K0)_-||_F^2`` is small is not slowed down. The unrefined roots keep that
    bound in the returned error.

    Parameters
    ----------
    d : ndarray of shape (n,)
        Poles, ascending.
    z : ndarray of shape (n,)
        Update vector.
    sigma : float
        Positive weight of the update.
    lam : ndarray of shape (k,)
        The negative eigenvalues of ``diag(d) + sigma z z'``, ascending (as computed).
    scale : float
        Magnitude of the alpha-dependent terms the result is combined with (see above).

    Returns
    -------
    change, error : float
        The difference (<= 0 up to rounding) and a bound on its rounding error (first order).
    """
    lam = np.asarray(lam, dtype=np.float64)
    lam = lam[lam < 0]
    z_sq = float(z @ z)
    if sigma * z_sq == 0.0:
        return 0.0, 0.0  # no update (alpha = 0): the roots are the poles
    m = int(np.searchsorted(d, 0.0))  # poles d_i < 0
    k = min(lam.shape[0], m)
    n = d.shape[0]
    dneg = d[:m]
    sq = dneg * dneg
    # Poles whose root crossed zero: their whole square leaves the sum (exact up to rounding).
    crossed = float(np.sum(sq[k:]))
    change_error = 2.0 * _EPS * crossed
    if k == 0:
        return -crossed, change_error
    dk = d[:k]
    lk = lam[:k]
    delta = lk - dk
    # A computed eigenvalue is accurate to a few eps ||M|| ABSOLUTE (deflation drops parts of
    # norm 8 eps ||M||; a dense eigh has a backward error of p(n) eps ||M||), not to eps |d_i|:
    # the plain term lambda_i^2 - d_i^2 is then off by up to 2 |lambda_i| root_error.
    d_norm = max(-float(d[0]), float(d[-1]))  # d ascends
    root_error = _ROOT_ERROR_FACTOR * np.sqrt(n) * _EPS * (d_norm + sigma * z_sq)
    naive_error = 2.0 * np.abs(lk) * root_error + root_error * root_error + 4.0 * _EPS * sq[:k]
    # Which roots to refine: the rest must leave an error small next to ``scale``. d ascends,
    # so the errors of the plain terms descend: refine the prefix of the largest until the
    # rest sums below 64 eps scale.
    tail = np.cumsum(naive_error[::-1])[::-1]  # tail[i] = sum_{j >= i} over paired roots
    refine = tail > 64.0 * _EPS * max(float(scale), _TINY)
    error_terms = naive_error.copy()
    idx = np.flatnonzero(refine)
    if idx.size:
        refined, refined_error, ok = _refine_offsets(d, z, sigma, idx, lk[idx])
        delta[idx[ok]] = refined[ok]
        error_terms[idx[ok]] = refined_error[ok] * 2.0 * np.abs(lk[idx[ok]])
    # Interlacing: 0 <= delta_i <= d_{i+1} - d_i (a repeated pole keeps its root exactly).
    upper = d[1 : k + 1] - d[:k] if k < n else np.append(np.diff(d), np.inf)
    delta = np.clip(delta, 0.0, upper)
    terms = delta * (2.0 * dk + delta)
    terms = np.minimum(terms, 0.0)
    change = float(np.sum(terms)) - crossed
    change_error += float(np.sum(error_terms)) + 2.0 * k * _EPS * float(np.sum(np.abs(terms)))
    # A root within root_error of zero may have been counted on the wrong side of it.
    change_error += (m - k + 1) * root_error * root_error
    return change, change_error


def neg_sq_change_fields(
    d: NDArray[np.float64],
    z: NDArray[np.float64],
    sigma: float,
    lam: NDArray[np.float64],
    u_norm_sq: float,
    accuracy: float = 0.0,
) -> dict[str, float]:
    """``neg_sq_change`` and its error bound for a :class:`ProxyState` (dense and low-rank).

    The refinement threshold of :func:`negative_square_change` is the size of the other
    alpha-dependent terms of objective (7), ``1 + |u'K0u|/2 + sigma ||u||^4 / 4``, in units of
    the penalty sum (divided by rho, i.e. multiplied by ``4 sigma``), times
    ``max(1, accuracy / (64 eps))``: with ``accuracy = 0`` every root whose plain difference is
    off by more than ``64 eps`` of that size is refined; the monitor asks for ``1e-3 tol``
    (``ProxyKernelProblem.set_excess_accuracy``), which leaves the plain differences alone
    wherever their rounding cannot matter for the certificate (a 30 % slower solve at rho = 1e3
    otherwise, where ``f(0)`` is large but far from swamping tol).
    """
    size = 1.0 + 0.5 * float(np.abs(d) @ (z * z)) + 0.25 * sigma * u_norm_sq**2
    factor = max(1.0, float(accuracy) / (64.0 * _EPS))
    change, error = negative_square_change(d, z, sigma, lam, scale=4.0 * sigma * size * factor)
    return {"neg_sq_change": change, "neg_sq_change_error": error}


@functools.lru_cache(maxsize=1)
def _compiled_refinement() -> Any:
    """The compiled refinement kernel (:mod:`indefsvm.proxy._penalty_numba`), or None without
    Numba."""
    try:
        from indefsvm.proxy import _penalty_numba
    except ImportError:  # numba missing or broken: the NumPy path below is complete
        return None
    return _penalty_numba


def _refine_offsets(
    d: NDArray[np.float64],
    z: NDArray[np.float64],
    sigma: float,
    idx: NDArray[np.intp],
    lam: NDArray[np.float64],
    *,
    compiled: bool = True,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """``lambda_i - d_i`` to high relative accuracy for the roots ``lam`` in ``(d_i, d_{i+1})``.

    See :func:`negative_square_change`. Returns the offsets, bounds on their errors and a mask
    of the roots whose bracket the secular function confirmed (the others are left alone).
    ``compiled`` uses the Numba kernel when available (same algorithm, one root at a time).
    """
    n = d.shape[0]
    scale = max(float(np.max(np.abs(d))), sigma * float(z @ z), _TINY)
    width = 64.0 * n * _EPS * scale
    kernel = _compiled_refinement() if compiled else None
    if kernel is not None:
        k = idx.shape[0]
        offset, error = np.empty(k), np.empty(k)
        ok = np.empty(k, dtype=np.bool_)
        kernel.refine_offsets(
            np.ascontiguousarray(d, dtype=np.float64),
            np.ascontiguousarray(sigma * z * z, dtype=np.float64),
            np.ascontiguousarray(idx, dtype=np.int64),
            np.ascontiguousarray(lam, dtype=np.float64),
            float(width), offset, error, ok,
        )  # fmt: skip
        return offset, error, ok
    k = idx.shape[0]
    lo_pole = d[idx]
    nxt = np.minimum(idx + 1, n - 1)
    hi_pole = np.where(idx + 1 < n, d[nxt], np.inf)
    half = 0.5 * (hi_pole - lo_pole)
    upper_origin = (lam - lo_pole) > half
    origin = np.where(upper_origin, nxt, idx)
    d_o = d[origin]
    # Interval of t = lambda - d_o between the two poles, and a bracket of a few ulps of the
    # scale around the computed root (the accuracy of any secular solver).
    lo = np.where(upper_origin, lo_pole - d_o, 0.0)
    hi = np.where(upper_origin, 0.0, hi_pole - d_o)
    t0 = lam - d_o
    a = np.maximum(t0 - width, lo)
    b = np.minimum(t0 + width, hi)
    z2 = sigma * z * z
    S = d[None, :] - d_o[:, None]  # shifted poles: exact at the origin, rel. error eps elsewhere
    S[np.arange(k), origin] = 0.0

    def secular(t: NDArray[np.float64], rows: NDArray[np.intp]) -> tuple[Any, Any, Any]:
        with np.errstate(divide="ignore", invalid="ignore"):
            diff = S[rows] - t[:, None]
            ratio = z2[None, :] / diff
            g = 1.0 + np.sum(ratio, axis=1)
            dg = np.sum(ratio / diff, axis=1)
            mag = 1.0 + np.sum(np.abs(ratio) * (1.0 + np.abs(S[rows]) / np.abs(diff)), axis=1)
        return g, dg, mag

    all_rows = np.arange(k)
    ga, _, _ = secular(a, all_rows)
    gb, _, _ = secular(b, all_rows)
    # g increases from -inf to +inf on each pole interval (sigma > 0); at a pole itself the
    # division gives the wrong infinity (1/+0), so the limits are set, not evaluated.
    ga[a <= lo] = -np.inf
    gb[b >= hi] = np.inf
    ok = (ga <= 0) & (gb >= 0) & (a < b) & np.isfinite(a) & np.isfinite(b)
    t = np.clip(t0, a, b)
    at_pole = (t <= lo) | (t >= hi)
    t[at_pole] = 0.5 * (a[at_pole] + b[at_pole])
    # Newton on F(t) = t (1 + psi(t)) - sigma z_o^2 = t g(t), psi the sum without the origin
    # pole: F is smooth at the origin pole, so Newton converges fast however close the root is
    # to it (g itself is dominated there by its pole and Newton on g crawls).
    z2_origin = z2[origin]
    S_other = S.copy()
    S_other[np.arange(k), origin] = np.inf  # drops the origin term from psi
    active = np.flatnonzero(ok)
    for _ in range(_REFINE_STEPS):
        if active.size == 0:
            break
        ta = t[active]
        with np.errstate(divide="ignore", invalid="ignore"):
            diff = S_other[active] - ta[:, None]
            ratio = z2[None, :] / diff
            psi = np.sum(ratio, axis=1)
            dpsi = np.sum(ratio / diff, axis=1)
        F = ta * (1.0 + psi) - z2_origin[active]
        dF = 1.0 + psi + ta * dpsi
        # sign of g = F / t decides the side of the root (g increases through it)
        g_neg = np.where(ta > 0, F < 0, F > 0)
        a[active[g_neg]] = ta[g_neg]
        b[active[~g_neg & (F != 0)]] = ta[~g_neg & (F != 0)]
        with np.errstate(divide="ignore", invalid="ignore"):
            step = ta - F / dF
        lo_a, hi_a = a[active], b[active]
        inside = np.isfinite(step) & (step > lo_a) & (step < hi_a)
        new = np.where(inside, step, 0.5 * (lo_a + hi_a))
        done = (F == 0) | (np.abs(new - ta) <= 2.0 * _EPS * np.abs(new))
        done |= (hi_a - lo_a) <= 2.0 * _EPS * np.maximum(np.abs(lo_a), np.abs(hi_a))
        t[active] = np.where(F == 0, ta, new)
        active = active[~done]
    g, dg, mag = secular(t, all_rows)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_error = 4.0 * _EPS * (np.abs(g) + mag) / np.abs(dg) + 2.0 * _EPS * np.abs(t)
    ok &= np.isfinite(t_error)
    offset = np.where(upper_origin, (hi_pole - lo_pole) + t, t)
    t_error = t_error + np.where(upper_origin, 2.0 * _EPS * (hi_pole - lo_pole), 0.0)
    return offset, t_error, ok


def unscale_kernel(
    K: NDArray[np.float64], row_scale: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """A working-coordinate kernel ``Ds K Ds`` back in the original coordinates, in place.

    ``row_scale`` is ``Ds = diag(rho_i^(1/4))`` of a componentwise rho (theory.md §7), None for a
    scalar rho. One division per entry by ``s_i s_j``, which equals ``s_j s_i`` bitwise, so a
    symmetric ``K`` stays exactly symmetric.
    """
    if row_scale is not None:
        K /= np.multiply.outer(row_scale, row_scale)
    return K


def eigen_state_fields(
    d: NDArray[np.float64],
    z: NDArray[np.float64],
    sigma: float,
    low: RankOneEigen,
    u_norm_sq: float,
    excess_accuracy: float,
) -> tuple[NDArray[np.float64], dict[str, Any]]:
    """``K* u`` in the basis where ``K0 = diag(d)``, and the :class:`ProxyState` fields
    (theory.md §1).

    ``z`` are the coordinates of ``u`` in that basis (``V'u`` for a dense ``K0``, ``(U'u, ||r||)``
    for a factored one, theory.md §11) and ``low`` the eigenpairs ``(lam, W)`` of
    ``diag(d) + sigma z z'`` below a threshold (ascending). Shared by the dense and the low-rank
    operators, which differ only in the basis. Returns ``(s, fields)`` with ``s = (diag(d) +
    sigma z z') z - W_- diag(lam_-) W_-' z``, the basis coordinates of ``K* u``. The two products
    with ``W_-`` come from ``low`` without forming ``W`` where it can (the compiled secular
    engine); ``fields["low"]`` is ``low`` itself, formed into the array when read.
    """
    lam = low.eigenvalues
    # Eigenvalues ascend, so the negative ones are a prefix.
    kneg = int(np.searchsorted(lam, 0.0))
    wz = low.rmatvec(z, kneg)
    s = d * z + (sigma * float(z @ z)) * z - low.matvec(lam[:kneg] * wz)
    fields = dict(
        z=z,
        low_values=lam,
        low=low,
        u_kstar_u=float(z @ s),
        u_k0_u=float(z @ (d * z)),
        u_norm_sq=u_norm_sq,
        u_mneg_u=float(np.sum(lam[:kneg] * wz**2)),
        neg_sq_sum=float(np.sum(lam[:kneg] ** 2)),
        **neg_sq_change_fields(d, z, sigma, lam[:kneg], u_norm_sq, excess_accuracy),
    )
    return s, fields


def smoothing_correction(state: ProxyState, smoothing: float) -> NDArray[np.float64] | None:
    """``K* u - K_eps u`` in the operator's eigenbasis (None when it is zero), paper 004 Sect. 3.

    Only eigenvalues in ``[0, eps)`` change: the smoothed positive part weights them by
    ``lambda / eps`` instead of 1. Shared by the dense and the low-rank operator, which differ in
    how they map basis coordinates to R^n.
    """
    lam = state.low_values
    mid = (lam >= 0) & (lam < smoothing)
    if not np.any(mid):
        return None
    W = state.low_vectors[:, mid]
    weight = (1.0 - lam[mid] / smoothing) * lam[mid]
    return W @ (weight * (W.T @ state.z))


class ProxyKernelOperator:
    """Evaluate ``K*(u) = (K0 + sigma u u')_+`` and products with it without forming it.

    Parameters
    ----------
    K0 : ndarray of shape (n, n)
        Symmetric (validated) kernel matrix; it is kept by reference, not copied.
    sigma : float
        Weight of the rank-one update, ``1 / (4 rho)``.
    eigh : tuple of (ndarray, ndarray), optional
        A precomputed eigendecomposition ``(d, V)`` of ``K0`` (ascending ``d``), e.g. shared
        between problems on the same kernel.
    assume_psd : bool
        Treat ``K0`` as PSD without checking (the caller has checked): no eigendecomposition is
        computed and ``K* = K0 + sigma u u'`` (paper 004 eq. 21).

    Notes
    -----
    When ``K0`` has no negative eigenvalue, ``M`` is PSD for every ``u`` (``sigma > 0``), so
    ``K* = M`` and no eigenvalue work is done per evaluation (paper 004 eq. 22, PerturbSVM).
    """

    #: The operator protocol (:class:`indefsvm.proxy.protocols.KernelOperator`): this operator
    #: holds ``K0`` as an n x n array, so it provides every capability a solver may need.
    low_rank = False
    provides = frozenset({"n_by_n", "eigenbasis", "objective_only"})

    def __init__(
        self,
        K0: NDArray[np.float64],
        sigma: float,
        *,
        eigh: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
        assume_psd: bool = False,
        row_scale: NDArray[np.float64] | None = None,
    ) -> None:
        self.K0 = K0
        #: ``Ds`` of a componentwise rho (``K0`` is then the working kernel ``Ds K0 Ds``); only
        #: :meth:`result_kernel` uses it, to return ``K*`` in the original coordinates.
        self.row_scale = row_scale
        self.n = K0.shape[0]
        self.sigma = float(sigma)
        self.assume_psd = assume_psd
        # Threads of the secular root loop (Numba threads over chunks of roots with the
        # compiled engine; dlaed4 calls split over Python threads with the LAPACK one): by size
        # and load, or config_context(n_threads={"engine": k}) (docs/benchmarks.md, "Threads",
        # has the measurements that chose the cross-over). The result does not depend on it
        # (the threaded engine is bitwise identical).
        self.engine_threads = engine_threads(self.n)
        #: Secular engine of :func:`~indefsvm.linalg.rank_one.rank_one_eigh` ("auto": compiled Numba
        #: kernel when available, LAPACK dlaed4 otherwise).
        self.engine = "auto"
        #: Roots of the previous evaluation: the next one starts its secular iteration there
        #: (the solvers move u a little per step); accuracy is unchanged (same convergence test).
        self.warm_start = SecularWarmStart()
        #: Recent ``(u, V'u, error bound)`` triples (:meth:`_z_by_linearity`) and how many
        #: ``V'u`` were formed from them in O(n).
        self._z_history: list[tuple[NDArray[np.float64], NDArray[np.float64], float]] = []
        self.n_linear_z = 0
        if assume_psd:
            # PerturbSVM (eq. 21-22): K* = K0 + sigma u u', no eigendecomposition at all.
            self.eigenvalues = None
            self.eigenvectors = None
            self.n_negative_k0 = 0
            return
        if eigh is None:
            d, V = np.linalg.eigh(K0)
        else:
            d, V = eigh
        self.eigenvalues = d
        self.eigenvectors = V
        self.n_negative_k0 = int(np.count_nonzero(d < 0))

    def reset_warm_start(self) -> None:
        """Forget the stored secular roots and ``V'u`` products (next evaluation starts cold).

        Solvers call this when they start, so a solve does not depend on what was evaluated
        before it and repeated solves are bitwise identical.
        """
        self.warm_start.reset()
        self._z_history.clear()

    def spectral_scale(self) -> float:
        """``max |lambda(K0)|`` (or its Gershgorin bound when no eigenbasis was computed)."""
        if self.eigenvalues is not None:
            return float(np.max(np.abs(self.eigenvalues)))
        return float(np.max(np.sum(np.abs(self.K0), axis=1)))

    @property
    def is_psd(self) -> bool:
        """True when ``K0`` has no negative eigenvalue (computed), so ``K*(u) = M(u)``."""
        return self.n_negative_k0 == 0

    def dense_eigh(self) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """``(eigenvalues, eigenvectors)`` of the working ``K0`` (None on the PSD-only path)."""
        if self.eigenvalues is None:
            return None
        return self.eigenvalues, self.eigenvectors

    def k0_eigenvalues(self) -> NDArray[np.float64]:
        """The eigenvalues of the working ``K0`` (computed once on the PSD-only path)."""
        if self.eigenvalues is not None:
            return self.eigenvalues
        cached = getattr(self, "_k0_eigenvalues", None)
        if cached is None:
            cached = self._k0_eigenvalues = np.linalg.eigvalsh(self.K0)
        return cached

    def result_kernel(self, state: ProxyState) -> NDArray[np.float64]:
        """``K*`` of ``state`` as results carry it: dense, in the original coordinates."""
        return unscale_kernel(self.kernel(state), self.row_scale)

    def feature_coef(self, state: ProxyState, u: NDArray[np.float64]) -> NDArray[np.float64]:
        """Refused: decision weights in factor coordinates need a factored ``K0``."""
        raise TypeError(
            "feature_coef needs a factored kernel K0 = Phi diag(s) Phi' (a LowRankKernel, e.g. "
            "from IndefiniteNystroem); this problem was built on a dense n x n K0. Use "
            "out_of_sample_rows with the new points' kernel rows instead."
        )

    def state(self, u: NDArray[np.float64], *, smoothing: float = 0.0) -> ProxyState:
        """Evaluate the proxy kernel quantities at ``u``.

        Parameters
        ----------
        u : ndarray of shape (n,)
        smoothing : float
            If positive, also return the eigenpairs of ``M`` in ``[0, smoothing)`` (needed by the
            paper's Moreau-Yosida smoothed gradient, Sect. 3).
        """
        with _gemv_threads():
            return self._state(u, smoothing=smoothing)

    def _state(self, u: NDArray[np.float64], *, smoothing: float = 0.0) -> ProxyState:
        sigma = self.sigma
        u_norm_sq = float(u @ u)
        if self.assume_psd and smoothing > 0:
            raise ValueError("smoothing needs the eigenbasis; it is not used with a PSD kernel.")
        if self.is_psd and smoothing <= 0:
            k0u = self.K0 @ u
            u_k0_u = float(u @ k0u)
            kstar_u = k0u + (sigma * u_norm_sq) * u
            return ProxyState(
                u=u,
                z=None,
                low_values=np.empty(0),
                low=np.empty((self.n, 0)),
                kstar_u=kstar_u,
                u_kstar_u=u_k0_u + sigma * u_norm_sq**2,
                u_k0_u=u_k0_u,
                u_norm_sq=u_norm_sq,
                u_mneg_u=0.0,
                neg_sq_sum=0.0,
            )
        d, V = self.eigenvalues, self.eigenvectors
        z = self._z_lookup(u)
        low = rank_one_eigh(
            d,
            z,
            sigma,
            which="below",
            upper=float(smoothing),
            n_threads=self.engine_threads,
            engine=self.engine,
            warm_start=self.warm_start,
        )
        s, fields = eigen_state_fields(
            d, z, sigma, low, u_norm_sq, getattr(self, "excess_accuracy", 0.0)
        )
        return ProxyState(u=u, kstar_u=V @ s, **fields)

    def objective_state(self, u: NDArray[np.float64]) -> ProxyState:
        """What the objective needs at ``u``, and nothing else (theory.md §1).

        ``f`` needs ``||u||^2``, ``u'K0u = z'Dz`` and the NEGATIVE eigenvalues of ``M``
        (:func:`~indefsvm.linalg.rank_one.rank_one_eigvals_below`: the roots of the first
        ``#{d_j < 0}`` pole intervals, no Löwner products, no eigenvectors), so this costs one
        product ``V'u`` (none when ``u`` is a combination of recent ones) and about half the
        secular work of :meth:`state`. The returned state is PARTIAL: ``low_vectors`` and
        ``kstar_u`` are None and ``u_kstar_u``/``u_mneg_u`` NaN (no gradient, no certified
        bound); :meth:`state` at the same ``u`` completes it (its ``V'u`` is then reused).
        """
        with _gemv_threads():
            u_norm_sq = float(u @ u)
            if self.is_psd:
                u_k0_u = float(u @ (self.K0 @ u))
                lam = np.empty(0)
                z = None
            else:
                d = self.eigenvalues
                z = self._z_lookup(u)
                lam = rank_one_eigvals_below(
                    d, z, self.sigma, upper=0.0, n_threads=self.engine_threads,
                    engine=self.engine, warm_start=self.warm_start,
                )  # fmt: skip
                u_k0_u = float(z @ (d * z))
        return ProxyState(
            u=u,
            z=z,
            low_values=lam,
            low=None,
            kstar_u=None,
            u_kstar_u=np.nan,
            u_k0_u=u_k0_u,
            u_norm_sq=u_norm_sq,
            u_mneg_u=np.nan,
            neg_sq_sum=float(np.sum(lam**2)),
            **(
                {}
                if z is None
                else neg_sq_change_fields(
                    d, z, self.sigma, lam, u_norm_sq, getattr(self, "excess_accuracy", 0.0)
                )
            ),
        )

    def _z_lookup(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        """``V'u``: reused if ``u`` was seen last, by linearity if possible, else one product."""
        history = self._z_history
        if history and (history[-1][0] is u or np.array_equal(history[-1][0], u)):
            return history[-1][1]
        found = self._z_by_linearity(u)
        if found is None:
            z, error = self.eigenvectors.T @ u, 1.0
        else:
            z, error = found
        history.append((u, z, error))
        del history[:-_Z_HISTORY]
        return z

    def _z_by_linearity(self, u: NDArray[np.float64]) -> tuple[NDArray[np.float64], float] | None:
        """``V'u`` in O(n) when ``u`` is (to rounding) a combination of two recent ``u``.

        ``z = V'u`` is linear in ``u``: accelerated gradient evaluates the extrapolated point
        ``y = x_k + beta (x_k - x_{k-1})`` right after ``x_k``, so ``V'u_y`` is the same
        combination ``a z_1 + b z_2`` of two stored products and one of the two n x n passes over
        ``V`` of that evaluation is saved. Returns the product and its error bound (below).

        The coefficients are the least-squares fit of ``u - u_1`` on ``u_1`` and ``u_1 - u_2``:
        consecutive iterates are nearly parallel, and a fit on ``u_1, u_2`` themselves is so
        ill-conditioned that its coefficients carried errors of 1e-13 and the extrapolated points
        of a real solve were refused (1 of 45 accepted at n = 2000). Every stored product
        carries a bound ``E`` on its error in units of ``gamma ||u||``, the rounding error of
        ``V'u`` formed directly (``E = 1`` for those); the combination is accepted when

        * the residual ``r = u - a u_1 - b u_2`` has ``||r|| <= 8 eps (|a| ||u_1|| + |b| ||u_2||)``
          (``V`` is orthogonal, so ``V'r`` is that small), and
        * its own bound ``E = (|a| ||u_1|| E_1 + |b| ||u_2|| E_2) / ||u||`` is at most 4: the
          errors of ``z_1`` and ``z_2`` enter multiplied by ``a`` and ``b``, so two nearly
          equal ``u_1, u_2`` with a tiny difference (huge coefficients; ACCPM's points gave
          errors of 1e-6) or a chain of combinations of combinations is formed directly.

        Accelerated gradient's extrapolations of direct products have ``a = 1 + beta``,
        ``b = -beta`` with ``beta < 1``: ``E <= 3``.
        """
        history = self._z_history
        if len(history) < 2:
            return None
        u1, z1, e1 = history[-1]
        g11 = float(u1 @ u1)
        norm1 = math.sqrt(g11)
        norm_u = math.sqrt(float(u @ u))
        if not norm_u > 0:
            return None  # u = 0: the direct product is exact
        r0 = u - u1
        r01 = float(u1 @ r0)
        for u2, z2, e2 in reversed(history[:-1]):
            step = u1 - u2
            g12 = float(u1 @ step)
            g22 = float(step @ step)
            det = g11 * g22 - g12 * g12
            if not det > 1e-8 * g11 * g22:
                continue  # (nearly) parallel: the coefficients are ill-determined
            r02 = float(step @ r0)
            c1 = (r01 * g22 - r02 * g12) / det
            c2 = (r02 * g11 - r01 * g12) / det
            a = 1.0 + c1 + c2
            b = -c2
            weight1 = abs(a) * norm1
            weight2 = abs(b) * math.sqrt(float(u2 @ u2))
            error = weight1 * e1 + weight2 * e2
            if not error <= _Z_ERROR_LIMIT * norm_u:
                continue
            residual = u - a * u1 - b * u2
            if math.sqrt(float(residual @ residual)) <= (8.0 * _EPS) * (weight1 + weight2):
                self.n_linear_z += 1
                return a * z1 + b * z2, error / norm_u
        return None

    def matvec(self, state: ProxyState, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``K*(u) v`` for the ``u`` of ``state`` (O(n^2 + n k), K* is never formed)."""
        with _gemv_threads():
            return self._matvec(state, v)

    def _matvec(self, state: ProxyState, v: NDArray[np.float64]) -> NDArray[np.float64]:
        u = state.u
        out = self.K0 @ v + (self.sigma * float(u @ v)) * u
        neg = state.low_values < 0
        if np.any(neg):
            W = state.low_vectors[:, neg]
            wv = W.T @ (self.eigenvectors.T @ v)
            out -= self.eigenvectors @ (W @ (state.low_values[neg] * wv))
        return out

    def smoothed_kstar_u(self, state: ProxyState, smoothing: float) -> NDArray[np.float64]:
        """``K_eps u`` of the paper's smoothed gradient (Sect. 3, Moreau-Yosida).

        The smoothed positive part replaces ``1[lambda > 0]`` in ``K* = sum 1[lambda>0] lambda
        v v'`` by ``u*(lambda) = clip(lambda / eps, 0, 1)``, the maximiser of
        ``phi_eps(lambda) = max_{0<=t<=1} t lambda - eps t^2 / 2``.
        """
        c = smoothing_correction(state, smoothing)
        return state.kstar_u if c is None else state.kstar_u - self.eigenvectors @ c

    def project_rows(self, state: ProxyState, R: NDArray[np.float64]) -> NDArray[np.float64]:
        """Apply ``P_+``, the projector on M's non-negative eigenspace, to the rows of ``R``.

        ``K* = P_+ M`` (theory.md §8), so ``project_rows(state, M)`` gives K*; for a new point whose
        row of M is its similarity row ``k_x`` (it carries no rank-one term) this is the
        inductive out-of-sample map ``k_x -> P_+ k_x``.
        """
        neg = state.low_values < 0
        if not np.any(neg):
            return np.array(R, dtype=np.float64, copy=True)
        Q = self.eigenvectors @ state.low_vectors[:, neg]
        return R - (R @ Q) @ Q.T

    def kernel(self, state: ProxyState) -> NDArray[np.float64]:
        """The dense proxy kernel ``K*(u)`` (n x n), exactly symmetric.

        ``K* = M - Q diag(lam_-) Q' = K0 + sigma u u' + A A'`` with ``Q = V W_-`` and
        ``A = Q |lam_-|^(1/2)``: one ``V W_-`` product and one BLAS ``dsyrk`` (one triangle,
        half the flops of a general product), built in one n x n array (plus n x k factors and
        row blocks) so that forming K* at the end of a solve or for a LIBSVM check does not
        multiply the memory footprint. The lower triangle is computed and mirrored: exact symmetry
        (neither ``sigma u_i u_j`` nor a product of factors is bitwise symmetric by itself).
        """
        from scipy.linalg.blas import dsyrk

        u = state.u
        n = u.shape[0]
        neg = state.low_values < 0
        if np.any(neg):
            Q = self.eigenvectors @ state.low_vectors[:, neg]
            Q *= np.sqrt(-state.low_values[neg])
            # dsyrk fills the upper triangle of a Fortran array: its transpose (C order) holds
            # the lower triangle, i.e. row i has columns 0..i.
            K = dsyrk(1.0, Q, lower=0).T
            del Q
        else:
            K = np.zeros((n, n))
        su = self.sigma * u
        block = 512
        for i in range(0, n, block):
            stop = min(i + block, n)
            rows = slice(i, stop)
            K[rows, :stop] += self.K0[rows, :stop]
            K[rows, :stop] += np.multiply.outer(su[rows], u[:stop])
        for i in range(0, n, block):
            stop = min(i + block, n)
            rows = slice(i, stop)
            D = K[rows, rows]
            K[rows, rows] = np.tril(D) + np.tril(D, -1).T
            K[rows, stop:] = K[stop:, rows].T
        return K
