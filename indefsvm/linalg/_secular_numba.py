"""Compiled secular-equation kernel: all roots in one pass, warm-started, Löwner products fused.

The reference path of :mod:`indefsvm.linalg.rank_one` calls LAPACK ``dlaed4`` once per root through
ctypes (about 20 ns per root-pole pair at n = 2000, most of an evaluation of the proxy kernel).
This module does the same work in Numba-compiled loops:

* **Roots.** For each root the iteration of ``dlaed4`` for an interior root (Li's "middle way"
  between the fixed-weight and the two-pole rational models, Ren-Cang Li, LAPACK Working Note 89,
  1993), with the same origin shift (the nearer pole, so ``delta_j = (d_j - d_origin) - tau`` has
  no cancellation), the same bracketing safeguard (halve towards the bracket when a step leaves
  it) and the SAME convergence test ``|w| <= eps * erretm`` with ``dlaed4``'s bound ``erretm`` on
  the rounding error of ``w``. The three-pole variant of ``dlaed4`` (``dlaed6``, used when the root
  is far from the origin pole) is not ported: the two-pole models plus bisection converge there
  too, a little more slowly. A root that does not pass the test within ``MAX_ITER`` iterations
  is reported, and the caller falls back to ``dlaed4`` for the whole problem.
* **Warm start.** A guess per root (the previous iteration's root in the same interval) replaces
  the cold start's evaluation at the midpoint. The origin is the pole nearer to the guess; if the
  converged root lies in the other half of its interval the origin is switched and the test is
  repeated there, so the accuracy of ``delta`` is the cold start's. A guess outside its interval
  is ignored.
* **Löwner products** (Gu & Eisenstat 1994; ``dlaed3``) are accumulated as soon as a root has
  converged, from the same ``delta`` row, in one accumulator per chunk of roots; the chunks are
  multiplied in a fixed order so the result does not depend on the number of threads.
* **Eigenvectors** of the selected roots are formed in a second parallel pass from
  ``(origin, tau)`` (the ``delta`` rows are recomputed bit for bit, never stored), or not at
  all: ``W'x`` and ``W c`` (all a solver's evaluation needs) are one pass each of the same
  divisions, with nothing written (:func:`secular_vectors_rmatvec`,
  :func:`secular_vectors_matvec`).
* **Vectorised loops.** Every loop over the poles runs over array slices from index 0, which
  LLVM vectorises (the division, one per pole and sweep, is the bottleneck); the reassociated
  sums differ from ``dlaed4``'s sequential ones by rounding only, within the same error bound.

References
----------
.. [Li93] R.-C. Li, "Solving secular equations stably and efficiently", LAPACK Working Note 89
   (1993); LAPACK ``dlaed4``.
.. [GE94] M. Gu and S. C. Eisenstat, SIAM J. Matrix Anal. Appl. 15(4) (1994) 1266-1276.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: Iteration limit per root (``dlaed4``'s MAXIT).
MAX_ITER = 30
_EPS = float(np.finfo(np.float64).eps) / 2.0  # dlamch('Epsilon') is the unit roundoff
#: Roots are split into this many chunks (independent of the thread count: determinism).
N_CHUNKS = 16

# Reassociation lets LLVM vectorise the reductions (the rounding-error bound of dlaed4's test is
# for sequential summation; pairwise/vector summation has a smaller error, so it stays valid).
_FAST = {"reassoc", "contract"}


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy", inline="always")
def _pole_sums(d, z, dorg, tau, lo, hi, upwards):
    """``sum z_j^2/delta_j``, ``sum (z_j/delta_j)^2`` and dlaed4's running-sum error term.

    Terms ``j`` in ``[lo, hi)``. dlaed4 sums PSI upwards and PHI downwards and its error
    accumulator adds every partial sum, i.e. term ``j`` with weight ``hi - j`` (upwards) or
    ``j - lo + 1`` (downwards); one loop serves both, with the weight as an integer
    ``first + step * j`` so the values are those of the two written-out loops. Inlined into
    :func:`_lower_sums` and :func:`_upper_sums`, where ``upwards`` is a constant.
    """
    # The loops run over slices from index 0, not over ``range(lo, hi)``: with a start that
    # may be negative Numba keeps a wraparound branch per index and LLVM does not vectorise the
    # loop (4-9x slower per sweep at k = 2000: benchmarks/bench_secular_loops.py).
    ds_ = d[lo:hi]
    zs = z[lo:hi]
    m = ds_.shape[0]
    if upwards:
        first, step = m, -1
    else:
        first, step = 1, 1
    s = 0.0
    dsum = 0.0
    e = 0.0
    for j in range(m):
        delta = (ds_[j] - dorg) - tau
        temp = zs[j] / delta
        t = zs[j] * temp
        s += t
        dsum += temp * temp
        e += t * (first + step * j)
    return s, dsum, e


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _lower_sums(d, z, dorg, tau, lo, hi):
    """:func:`_pole_sums` for PSI (the poles below the origin), summed upwards."""
    return _pole_sums(d, z, dorg, tau, lo, hi, True)


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _upper_sums(d, z, dorg, tau, lo, hi):
    """:func:`_pole_sums` for PHI (the poles above the origin), summed downwards."""
    return _pole_sums(d, z, dorg, tau, lo, hi, False)


@njit(cache=True, nogil=True, inline="always")
def _shrink_bracket(w, tau, lb, ub):
    """The bracket ``(lb, ub)`` of the root after the secular function's value ``w`` at ``tau``.

    ``f`` increases between its poles, so ``w <= 0`` puts the root above ``tau`` and ``w > 0``
    below it (dlaed4's update); shared by :func:`_interior_root` and :func:`_last_root`.
    """
    if w <= 0.0:
        return max(lb, tau), ub
    return lb, min(ub, tau)


@njit(cache=True, nogil=True, error_model="numpy")
def _interior_root(i, d, z, rho, side, guess_tau):
    """Root ``i`` (``0 <= i < k-1``) in ``(d_i, d_{i+1})``; returns ``(origin, tau, status)``.

    ``side`` 0/1: warm start at ``d_{i+side} + guess_tau``; -1: cold start. ``status``: number
    of sweeps over the poles (> 0) on success, ``-1`` if the test was not passed.
    """
    k = d.shape[0]
    rhoinv = 1.0 / rho
    ip1 = i + 1
    gap = d[ip1] - d[i]
    sweeps = 0
    tau = 0.0
    org = i
    if side == 0 and 0.0 < guess_tau < gap:
        # Warm start relative to the lower pole; the bracket is the whole interval (the guess
        # may be on either side of the root).
        org, tau, lb, ub = i, guess_tau, 0.0, gap
    elif side == 1 and -gap < guess_tau < 0.0:
        org, tau, lb, ub = ip1, guess_tau, -gap, 0.0
    else:
        # Cold start as dlaed4: f at the midpoint picks the half (and the origin), then the
        # two poles plus a constant (the rest of f at the midpoint) give the initial tau.
        mid = 0.5 * gap
        psi, dpsi, ep = _lower_sums(d, z, d[i], mid, 0, i)
        phi, dphi, eq = _upper_sums(d, z, d[i], mid, i + 2, k)
        sweeps += 1
        c = rhoinv + psi + phi
        w = c + z[i] * z[i] / (-mid) + z[ip1] * z[ip1] / ((d[ip1] - d[i]) - mid)
        if w >= 0.0:
            org, lb, ub = i, 0.0, mid
            a = c * gap + z[i] * z[i] + z[ip1] * z[ip1]
            b = z[i] * z[i] * gap
        else:
            org, lb, ub = ip1, -mid, 0.0
            a = -c * gap + z[i] * z[i] + z[ip1] * z[ip1]
            b = -z[ip1] * z[ip1] * gap
        if a > 0.0:
            tau = 2.0 * b / (a + np.sqrt(abs(a * a - 4.0 * b * c)))
        elif c != 0.0:
            tau = (a - np.sqrt(abs(a * a - 4.0 * b * c))) / (2.0 * c)
        else:
            tau = 0.5 * (lb + ub)
        if not lb < tau < ub:
            tau = 0.5 * (lb + ub)
    swtch = False
    prew = 0.0
    first = True
    for _it in range(MAX_ITER + 2):
        dorg = d[org]
        # Sums with the origin term separate, as dlaed4 (PSI: j < org, PHI: j > org).
        psi, dpsi, ep = _lower_sums(d, z, dorg, tau, 0, org)
        phi, dphi, eq = _upper_sums(d, z, dorg, tau, org + 1, k)
        sweeps += 1
        delta_o = -tau
        temp = z[org] / delta_o
        torg = z[org] * temp
        dw = dpsi + dphi + temp * temp
        w = rhoinv + psi + phi + torg
        erretm = 8.0 * (phi - psi) + (abs(ep) + eq) + 2.0 * rhoinv + 3.0 * abs(torg)
        erretm += abs(tau) * dw
        if abs(w) <= _EPS * erretm:
            # Converged; is the origin the nearer pole of the root (accuracy of delta)?
            if org == i and tau > 0.5 * gap:
                org = ip1
                tau = tau - gap
                lb, ub = -gap, 0.0
                first = True
                continue
            if org == ip1 and tau < -0.5 * gap:
                org = i
                tau = tau + gap
                lb, ub = 0.0, gap
                first = True
                continue
            return org, tau, sweeps
        if _it >= MAX_ITER:
            break
        lb, ub = _shrink_bracket(w, tau, lb, ub)
        delta_i = (d[i] - dorg) - tau
        delta_ip1 = (d[ip1] - dorg) - tau
        if first:
            swtch = False
        elif w * prew > 0.0 and abs(w) > abs(prew) / 10.0:
            swtch = not swtch
        first = False
        if not swtch:
            # Fixed-weight model (dlaed4's first choice).
            if org == i:
                c = w - delta_ip1 * dw - (delta_i - delta_ip1) * (z[i] / delta_i) ** 2
            else:
                c = w - delta_i * dw - (delta_ip1 - delta_i) * (z[ip1] / delta_ip1) ** 2
        else:
            # Middle way: PSI side j <= i, PHI side j >= i+1 (the origin term on its side).
            if org == i:
                c = w - delta_i * (dpsi + temp * temp) - delta_ip1 * dphi
            else:
                c = w - delta_i * dpsi - delta_ip1 * (dphi + temp * temp)
        a = (delta_i + delta_ip1) * w - delta_i * delta_ip1 * dw
        b = delta_i * delta_ip1 * w
        if c == 0.0:
            if a == 0.0:
                if org == i:
                    a = z[i] * z[i] + delta_ip1 * delta_ip1 * (dpsi + dphi)
                else:
                    a = z[ip1] * z[ip1] + delta_i * delta_i * (dpsi + dphi)
            eta = b / a
        elif a <= 0.0:
            eta = (a - np.sqrt(abs(a * a - 4.0 * b * c))) / (2.0 * c)
        else:
            eta = 2.0 * b / (a + np.sqrt(abs(a * a - 4.0 * b * c)))
        # Roundoff can give the wrong sign: one Newton step instead (dlaed4).
        if w * eta >= 0.0:
            eta = -w / dw
        if not lb < tau + eta < ub:
            eta = 0.5 * (ub - tau) if w < 0.0 else 0.5 * (lb - tau)
        prew = w
        tau += eta
    return org, tau, -1


@njit(cache=True, nogil=True, error_model="numpy")
def _last_root(d, z, rho, side, guess_tau):
    """Root ``k-1`` in ``(d_{k-1}, d_{k-1} + rho)`` (origin ``d_{k-1}``, dlaed4's ``I = N``)."""
    k = d.shape[0]
    n1 = k - 1
    n2 = k - 2
    rhoinv = 1.0 / rho
    dorg = d[n1]
    lb, ub = 0.0, rho
    if side == 0 and 0.0 < guess_tau < rho:
        tau = guess_tau
    else:
        tau = 0.5 * rho
    sweeps = 0
    for _it in range(MAX_ITER + 1):
        psi, dpsi, ep = _lower_sums(d, z, dorg, tau, 0, n1)
        sweeps += 1
        delta_n = -tau
        temp = z[n1] / delta_n
        phi = z[n1] * temp
        dphi = temp * temp
        w = rhoinv + phi + psi
        erretm = 8.0 * (-phi - psi) + abs(ep) - phi + rhoinv + abs(tau) * (dpsi + dphi)
        if abs(w) <= _EPS * erretm:
            return n1, tau, sweeps
        if _it >= MAX_ITER:
            break
        lb, ub = _shrink_bracket(w, tau, lb, ub)
        delta_n1 = (d[n2] - dorg) - tau
        c = w - delta_n1 * dpsi - delta_n * dphi
        a = (delta_n1 + delta_n) * w - delta_n1 * delta_n * (dpsi + dphi)
        b = delta_n1 * delta_n * w
        if c < 0.0:
            c = abs(c)
        if c == 0.0:
            eta = ub - tau
        elif a >= 0.0:
            eta = (a + np.sqrt(abs(a * a - 4.0 * b * c))) / (2.0 * c)
        else:
            eta = 2.0 * b / (a - np.sqrt(abs(a * a - 4.0 * b * c)))
        if w * eta > 0.0:
            eta = -w / (dpsi + dphi)
        if not lb < tau + eta < ub:
            eta = 0.5 * (ub - tau) if w < 0.0 else 0.5 * (lb - tau)
        tau += eta
    return n1, tau, -1


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _accumulate_lowner(j, d, dorg, tau, acc):
    """``acc_i *= delta_i(j) / (d_j - d_i)`` (``i != j``) and ``acc_j *= -delta_j(j)``."""
    dj = d[j]
    # Loops over slices from 0, as in _lower_sums (vectorised).
    dl = d[:j]
    al = acc[:j]
    for i in range(dl.shape[0]):
        al[i] *= ((dl[i] - dorg) - tau) / (dj - dl[i])
    du = d[j + 1 :]
    au = acc[j + 1 :]
    for i in range(du.shape[0]):
        au[i] *= ((du[i] - dorg) - tau) / (dj - du[i])
    acc[j] *= -((dj - dorg) - tau)


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _accumulate_lowner_pair(j, d, dorg0, tau0, dorg1, tau1, acc):
    """:func:`_accumulate_lowner` for roots ``j`` and ``j+1`` with one division per entry.

    Numerators and denominators of the two ratios are multiplied first (each a product of two
    differences of eigenvalues, far from overflow for the scales allowed by the caller).
    """
    d0 = d[j]
    d1 = d[j + 1]
    dl = d[:j]
    al = acc[:j]
    for i in range(dl.shape[0]):
        di = dl[i]
        al[i] *= (((di - dorg0) - tau0) * ((di - dorg1) - tau1)) / ((d0 - di) * (d1 - di))
    du = d[j + 2 :]
    au = acc[j + 2 :]
    for i in range(du.shape[0]):
        di = du[i]
        au[i] *= (((di - dorg0) - tau0) * ((di - dorg1) - tau1)) / ((d0 - di) * (d1 - di))
    acc[j] *= -((d0 - dorg0) - tau0) * (((d0 - dorg1) - tau1) / (d1 - d0))
    acc[j + 1] *= -((d1 - dorg1) - tau1) * (((d1 - dorg0) - tau0) / (d0 - d1))


@njit(cache=True, nogil=True, error_model="numpy")
def _solve_root(j, d, z, rho, side, guess_tau, origin, tau, status):
    """Root ``j`` (interior or last) written to ``origin[j], tau[j], status[j]`` and returned.

    The one step of both root loops (:func:`_roots_chunk` with the Löwner products,
    :func:`_roots_prefix_range` without), so the two always solve a root the same way.
    """
    if j < d.shape[0] - 1:
        o, t, s = _interior_root(j, d, z, rho, side[j], guess_tau[j])
    else:
        o, t, s = _last_root(d, z, rho, side[j], guess_tau[j])
    origin[j] = o
    tau[j] = t
    status[j] = s
    return o, t, s


@njit(cache=True, nogil=True, error_model="numpy")
def _roots_chunk(c, d, z, rho, side, guess_tau, pair, origin, tau, status, partial):
    """Roots ``[c k / n_chunks, (c+1) k / n_chunks)`` and their Löwner product (one chunk)."""
    k = d.shape[0]
    n_chunks = partial.shape[0]
    start = (c * k) // n_chunks
    stop = ((c + 1) * k) // n_chunks
    acc = partial[c]
    acc[:] = 1.0
    pending = -1
    for j in range(start, stop):
        o, t, s = _solve_root(j, d, z, rho, side, guess_tau, origin, tau, status)
        if s < 0:
            continue
        if not pair:
            _accumulate_lowner(j, d, d[o], t, acc)
        elif pending < 0:
            pending = j
        elif pending == j - 1:
            _accumulate_lowner_pair(pending, d, d[origin[pending]], tau[pending], d[o], t, acc)
            pending = -1
        else:
            _accumulate_lowner(pending, d, d[origin[pending]], tau[pending], acc)
            pending = j
    if pending >= 0:
        _accumulate_lowner(pending, d, d[origin[pending]], tau[pending], acc)


@njit(cache=True, parallel=True, error_model="numpy")
def secular_roots(d, z, rho, side, guess_tau, pair, origin, tau, status, partial):
    """All roots of ``1 + rho sum z_j^2/(d_j - lam) = 0`` and the chunked Löwner products.

    Parameters
    ----------
    d, z : float64 arrays of shape (k,), ``k >= 3``
        Strictly increasing poles and unit-norm weights with no zero entry.
    rho : float
        Positive weight.
    side, guess_tau : arrays of shape (k,) (int64, float64)
        Warm start of root ``j`` at ``d[j + side[j]] + guess_tau[j]``; ``side[j] = -1`` (or a
        guess outside the root's interval) is a cold start.
    pair : bool
        Accumulate the Löwner ratios of two roots per division (safe when every difference of
        poles and roots is within ``1e-150 .. 1e150``; the caller checks the scale).
    origin, tau, status : output arrays of shape (k,)
        Root ``j`` is ``d[origin[j]] + tau[j]``; ``status[j]`` = sweeps used, -1 on failure.
    partial : output float64 array of shape (n_chunks, k)
        ``prod_j ratio`` over each chunk of roots (the caller multiplies the chunks in order).
    """
    for c in prange(partial.shape[0]):
        _roots_chunk(c, d, z, rho, side, guess_tau, pair, origin, tau, status, partial)


@njit(cache=True, nogil=True, error_model="numpy")
def secular_roots_serial(d, z, rho, side, guess_tau, pair, origin, tau, status, partial):
    """:func:`secular_roots` in the calling thread only (no OpenMP pool, nothing spinning)."""
    for c in range(partial.shape[0]):
        _roots_chunk(c, d, z, rho, side, guess_tau, pair, origin, tau, status, partial)


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _vector_row(r, d, zhat, origin, tau, first, out):
    k = d.shape[0]
    j = first + r
    dorg = d[origin[j]]
    t = tau[j]
    row = out[r]
    s = 0.0
    for i in range(k):
        v = zhat[i] / ((d[i] - dorg) - t)
        row[i] = v
        s += v * v
    scale = 1.0 / np.sqrt(s)
    for i in range(k):
        row[i] *= scale


@njit(cache=True, parallel=True, error_model="numpy")
def secular_vectors(d, zhat, origin, tau, first, out):
    """Row ``r`` of ``out``: unit eigenvector ``zhat / delta(first + r)`` (Gu-Eisenstat)."""
    for r in prange(out.shape[0]):
        _vector_row(r, d, zhat, origin, tau, first, out)


@njit(cache=True, nogil=True, error_model="numpy")
def secular_vectors_serial(d, zhat, origin, tau, first, out):
    """:func:`secular_vectors` in the calling thread only."""
    for r in range(out.shape[0]):
        _vector_row(r, d, zhat, origin, tau, first, out)


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _rmatvec_row(r, d, zhat, dorg, tau, x, out, inv_norm):
    k = d.shape[0]
    o = dorg[r]
    t = tau[r]
    s = 0.0
    acc = 0.0
    for i in range(k):
        v = zhat[i] / ((d[i] - o) - t)
        s += v * v
        acc += v * x[i]
    scale = 1.0 / np.sqrt(s)
    inv_norm[r] = scale
    out[r] = acc * scale


@njit(cache=True, parallel=True, error_model="numpy")
def secular_vectors_rmatvec(d, zhat, dorg, tau, x, out, inv_norm):
    """``out[r] = w_r'x`` for the unit eigenvectors ``w_r = zhat / delta_r / ||.||`` of
    :func:`secular_vectors`, without forming them; ``inv_norm[r] = 1 / ||zhat / delta_r||``.

    ``dorg[r], tau[r]`` are root ``r``'s origin pole and offset (``delta_r = (d - dorg[r]) -
    tau[r]``, the same expression as :func:`secular_vectors`): one pass over the k x m
    divisions, no n x m array written or read.
    """
    for r in prange(out.shape[0]):
        _rmatvec_row(r, d, zhat, dorg, tau, x, out, inv_norm)


@njit(cache=True, nogil=True, error_model="numpy")
def secular_vectors_rmatvec_serial(d, zhat, dorg, tau, x, out, inv_norm):
    """:func:`secular_vectors_rmatvec` in the calling thread only."""
    for r in range(out.shape[0]):
        _rmatvec_row(r, d, zhat, dorg, tau, x, out, inv_norm)


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _matvec_range(start, stop, d, zhat, dorg, tau, coef, out):
    m = coef.shape[0]
    for i in range(start, stop):
        di = d[i]
        acc = 0.0
        for r in range(m):
            acc += coef[r] / ((di - dorg[r]) - tau[r])
        out[i] = zhat[i] * acc


@njit(cache=True, parallel=True, error_model="numpy")
def secular_vectors_matvec(d, zhat, dorg, tau, coef, out):
    """``out = sum_r coef[r] zhat / delta_r`` (``W c`` for ``coef = c * inv_norm``), without
    forming the eigenvectors: rows of ``out`` in :data:`N_CHUNKS` chunks in parallel."""
    k = d.shape[0]
    for c in prange(N_CHUNKS):
        _matvec_range((c * k) // N_CHUNKS, ((c + 1) * k) // N_CHUNKS, d, zhat, dorg, tau, coef, out)


@njit(cache=True, nogil=True, error_model="numpy")
def secular_vectors_matvec_serial(d, zhat, dorg, tau, coef, out):
    """:func:`secular_vectors_matvec` in the calling thread only."""
    _matvec_range(0, d.shape[0], d, zhat, dorg, tau, coef, out)


@njit(cache=True, nogil=True, error_model="numpy")
def _roots_prefix_range(start, stop, d, z, rho, side, guess_tau, origin, tau, status):
    for j in range(start, stop):
        _solve_root(j, d, z, rho, side, guess_tau, origin, tau, status)


@njit(cache=True, nogil=True, error_model="numpy")
def secular_roots_prefix_serial(d, z, rho, side, guess_tau, m, origin, tau, status):
    """The ``m`` smallest roots only (``0 <= m <= k``), no Löwner products (eigenvalues only).

    What the objective needs (theory.md §1: only the negative eigenvalues of ``M``): root ``j`` lies
    in ``(d_j, d_{j+1})``, so the roots below a threshold ``t`` are among the first
    ``m = #{d_j < t}``. Same iteration, warm start and convergence test per root as
    :func:`secular_roots`; entries ``j >= m`` of the outputs are not written.
    """
    _roots_prefix_range(0, m, d, z, rho, side, guess_tau, origin, tau, status)


@njit(cache=True, parallel=True, error_model="numpy")
def secular_roots_prefix(d, z, rho, side, guess_tau, m, origin, tau, status):
    """:func:`secular_roots_prefix_serial` over :data:`N_CHUNKS` chunks in parallel."""
    for c in prange(N_CHUNKS):
        _roots_prefix_range(
            (c * m) // N_CHUNKS, ((c + 1) * m) // N_CHUNKS, d, z, rho, side, guess_tau,
            origin, tau, status,
        )  # fmt: skip
