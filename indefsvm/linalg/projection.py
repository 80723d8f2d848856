"""Exact Euclidean projections onto the feasible sets of the SVM duals.

The feasible sets of every problem in paper 004 (eq. 4/7, 15/17, 19/20) are of the form

    A = {x : a'x = t, lower <= x <= upper}

and the projection of ``v`` is ``x(tau) = clip(v - tau * a, lower, upper)`` for the unique ``tau``
with ``a'x(tau) = t`` (KKT conditions of the projection). ``h(tau) = a'x(tau)`` is non-increasing
and piecewise linear with at most ``2n`` breakpoints, so sorting the breakpoints and bisecting on
their *indices* locates the linear piece that contains the root; the root is then exact, not the
result of a numerical bisection (theory.md §6). Cost: one sort plus O(log n) evaluations of ``h``,
i.e. O(n log n) (``method="sort"``).

``method="newton"`` (the default) finds the same root in O(n) per step: Newton's method on the
current linear piece of ``h`` with a bisection safeguard, warm-started from a guess ``tau0`` (a
solver passes the previous projection's multiplier, which changes little between iterations).
Once an iterate lies on the root's linear piece, the Newton step lands on the root of that piece,
which is the sorting method's interpolated root (to rounding). It usually settles in 2-6 fused
passes; if it does not within a fixed number of steps the sorting method is used.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

#: Projection methods: ``"newton"`` (O(n) per step, warm-startable) and ``"sort"`` (the
#: breakpoint sort of theory.md §6, O(n log n)).
PROJECTION_METHODS = ("newton", "sort")


def _clip_shift(v, a, tau, lower, upper, soft):
    w = v - tau * a
    if soft is not None:
        w = np.sign(w) * np.maximum(np.abs(w) - soft, 0.0)
    return np.clip(w, lower, upper)


def project_hyperplane_box(
    v: NDArray[np.float64],
    a: NDArray[np.float64],
    t: float,
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    *,
    l1: float | NDArray[np.float64] | None = None,
    method: str = "newton",
    tau0: float | None = None,
    return_tau: bool = False,
) -> NDArray[np.float64] | tuple[NDArray[np.float64], float]:
    """Project ``v`` onto ``{x : a'x = t, lower <= x <= upper}`` (optionally with an l1 prox).

    Solves ``min_x 1/2 ||x - v||^2 (+ sum_i l1_i |x_i|)`` subject to ``a'x = t`` and
    ``lower <= x <= upper``. With ``l1`` the solution is
    ``clip(soft(v - tau * a, l1), lower, upper)`` (theory.md §6), the proximal step of the
    epsilon-insensitive SVR objective (paper 004 eq. 17) including its constraints.

    Parameters
    ----------
    v : ndarray of shape (n,)
        Point to project.
    a : ndarray of shape (n,)
        Normal of the hyperplane; entries must be non-zero (±1 for labels, 1 for ``e``).
    t : float
        Right-hand side of the hyperplane.
    lower, upper : ndarray of shape (n,)
        Box bounds with ``lower <= upper``.
    l1 : float or ndarray of shape (n,), optional
        Weights of the l1 term (non-negative). Requires ``lower <= 0 <= upper``.
    method : {"newton", "sort"}
        How the multiplier is found (module docstring); both return the exact projection.
    tau0 : float, optional
        Starting guess of the multiplier for ``method="newton"`` (e.g. the previous call's).
    return_tau : bool
        Also return the multiplier ``tau`` (to warm-start the next call).

    Returns
    -------
    x : ndarray of shape (n,)
        The projection (proximal point).
    tau : float
        The multiplier (only with ``return_tau=True``).

    Raises
    ------
    ValueError
        If the set is empty (``t`` outside ``[min a'x, max a'x]`` over the box).
    """
    v = np.asarray(v, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    lower = np.broadcast_to(np.asarray(lower, dtype=np.float64), v.shape)
    upper = np.broadcast_to(np.asarray(upper, dtype=np.float64), v.shape)
    from indefsvm.linalg import _linear_time as lt

    if method not in PROJECTION_METHODS:
        raise ValueError(f"method must be one of {PROJECTION_METHODS}; got {method!r}.")
    a = np.ascontiguousarray(a)
    lower = np.ascontiguousarray(lower)
    upper = np.ascontiguousarray(upper)
    if lt.range_check(a):
        raise ValueError("the hyperplane normal a must have non-zero entries.")
    # One pass each, no n-sized temporaries (at n = 10^6 these checks cost as much as the
    # projection itself in numpy).
    hi_val, lo_val = lt.h_ends(a, lower, upper)
    scale = max(1.0, abs(lo_val), abs(hi_val))
    if t < lo_val - 1e-12 * scale or t > hi_val + 1e-12 * scale:
        raise ValueError(
            f"the feasible set {{a'x = {t:g}, lower <= x <= upper}} is empty: a'x ranges over "
            f"[{lo_val:g}, {hi_val:g}] on the box."
        )
    soft = None
    if l1 is not None:
        soft = np.broadcast_to(np.asarray(l1, dtype=np.float64), v.shape)
        if np.any(soft < 0) or np.any(lower > 0) or np.any(upper < 0):
            raise ValueError("the l1 prox needs non-negative weights and lower <= 0 <= upper.")

    if method == "newton":
        guess = np.nan if tau0 is None else float(tau0)
        # Contiguous float64 inputs for the compiled loops (broadcast bounds are expanded).
        args = (
            np.ascontiguousarray(v),
            a,
            float(t),
            lower,
            upper,
            np.ascontiguousarray(soft) if soft is not None else a[:1],
            soft is not None,
        )
        ok, tau = lt.newton_multiplier(*args, guess, hi_val, lo_val)
        if ok:
            x = lt.clip_shift(args[0], args[1], tau, *args[3:7])
            return (x, float(tau)) if return_tau else x
    x, tau = _sort_projection(v, a, t, lower, upper, soft)
    return (x, tau) if return_tau else x


def _sort_projection(v, a, t, lower, upper, soft):
    """The breakpoint-sorting method (theory.md §6); returns ``(x, tau)``."""
    # x_i(tau) is constant outside [(v_i - s_i - upper_i)/a_i, (v_i + s_i - lower_i)/a_i]
    # (for a_i > 0; mirrored for a_i < 0); inside, it is piecewise linear with kinks where it
    # crosses a bound or the soft-threshold dead zone.
    pts = [(v - upper) / a, (v - lower) / a]
    if soft is not None:
        pts += [(v - soft) / a, (v + soft) / a, (v - soft - upper) / a, (v + soft - lower) / a]
    breaks = np.unique(np.concatenate(pts))

    def h(tau: float) -> float:
        return float(a @ _clip_shift(v, a, tau, lower, upper, soft))

    # h is non-increasing in tau. Bisection over breakpoint indices: find k with
    # h(breaks[k]) >= t >= h(breaks[k + 1]).
    lo, hi = 0, breaks.shape[0] - 1
    h_lo, h_hi = h(breaks[lo]), h(breaks[hi])
    if t >= h_lo:
        return _clip_shift(v, a, breaks[lo], lower, upper, soft), float(breaks[lo])
    if t <= h_hi:
        return _clip_shift(v, a, breaks[hi], lower, upper, soft), float(breaks[hi])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        h_mid = h(breaks[mid])
        if h_mid >= t:
            lo, h_lo = mid, h_mid
        else:
            hi, h_hi = mid, h_mid
    # h is linear on [breaks[lo], breaks[hi]]: interpolate exactly.
    if h_lo == h_hi:
        tau = breaks[lo]
    else:
        tau = breaks[lo] + (h_lo - t) * (breaks[hi] - breaks[lo]) / (h_lo - h_hi)
    return _clip_shift(v, a, tau, lower, upper, soft), float(tau)


def weighted_breakpoint_argmin(
    c0: float, w: NDArray[np.float64], a: NDArray[np.float64], r: NDArray[np.float64]
) -> tuple[int, float, float]:
    """``(status, b, value)`` of ``min_b c0 b + sum_i w_i max(0, a_i b + r_i)`` in expected O(n).

    The compiled weighted quickselect (``_linear_time.weighted_select``) finds the
    breakpoint ``-r_i / a_i`` where the cumulative slope first becomes non-negative. ``status``
    0: ``b`` minimises and ``value`` is the minimum; 1: unbounded below; 2: no breakpoint (every
    ``a_i`` is 0). The arrays must be contiguous float64. Used for the best intercept of the
    certified primal bound (theory.md §3).
    """
    from indefsvm.linalg import _linear_time as lt

    status, b, value = lt.piecewise_linear_argmin(float(c0), w, a, r)
    return int(status), float(b), float(value)
