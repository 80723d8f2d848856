"""Compiled O(n) kernels for the projection and the certified intercept (problems of n = 10^6 rows).

Two pieces of every projected-gradient iteration were O(n log n) sorts: the projection onto
``{a'x = t, lower <= x <= upper}`` (sorted breakpoints of its multiplier, theory.md §6) and the best
intercept of the certified primal bound (a weighted median of the hinge breakpoints, theory.md §3).
At n = 10^6 each sort costs as much as a product with the 10^6 x 500 factor. Both answers are
kept exactly; only the way of finding them changes:

* :func:`weighted_select` finds the smallest breakpoint at which the cumulative slope of a convex
  piecewise-linear function becomes non-negative by three-way quickselect (Hoare's FIND) with
  weights carried along: expected O(n), the same breakpoint a full sort would pick (up to the
  summation order of the slopes). A deterministic median-of-three pivot keeps runs reproducible;
  after ``_SELECT_ROUNDS`` rounds the remaining range is sorted (introselect), so the worst case
  is O(n log n), never O(n^2).
* :func:`newton_multiplier` finds the root ``tau`` of the non-increasing piecewise-linear
  ``h(tau) = a'x(tau)`` of the projection by Newton's method on the current linear piece with a
  bisection safeguard, started from a warm guess (the previous projection's ``tau``). Once an
  iterate lies on the root's piece the next Newton step IS the root of that piece, i.e. the exact
  answer of the sorting method (to rounding); each step is one fused O(n) pass. When it does not
  settle within ``_NEWTON_ITERS`` steps the caller falls back to the sorting method.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Quickselect rounds before the remaining range is sorted (introselect safeguard).
_SELECT_ROUNDS = 64
#: Newton steps of the projection multiplier before falling back to the sort.
_NEWTON_ITERS = 60


@njit(cache=True)
def _swap(keys, weights, i, j):  # pragma: no cover - compiled
    k = keys[i]
    keys[i] = keys[j]
    keys[j] = k
    w = weights[i]
    weights[i] = weights[j]
    weights[j] = w


@njit(cache=True)
def weighted_select(keys, weights, target, total):  # pragma: no cover - compiled
    """Smallest ``k`` in ``keys`` with ``sum(weights[keys <= k]) >= target``.

    ``weights >= 0`` with sum ``total``; ``keys`` and ``weights`` are scratch arrays (permuted in
    place). Returns the largest key if the total weight stays below ``target`` (rounding).

    Large inputs first try Floyd & Rivest's sampling step (CACM 18(3), 1975, Algorithm 489): the
    weighted quantile of a deterministic strided sample of ``~n^(2/3)`` keys gives two keys that
    bracket the answer with high probability; one pass sums the weight below the bracket and
    gathers the keys inside it (a few percent of n), which are sorted and scanned. If the bracket
    misses, three-way quickselect on everything follows.
    """
    n = keys.shape[0]
    if n > 50000 and total > 0 and np.isfinite(total):
        size = int(n ** (2.0 / 3.0))
        step = n // size
        sk = keys[: step * size : step].copy()
        sw = weights[: step * size : step].copy()
        order = np.argsort(sk)
        sample_total = sw.sum()
        goal = target / total * sample_total
        acc = 0.0
        pos = size - 1
        for j in range(size):
            acc += sw[order[j]]
            if acc >= goal:
                pos = j
                break
        margin = int(3.0 * np.sqrt(size)) + 1
        p1 = -np.inf if pos - margin <= 0 else sk[order[pos - margin]]
        p2 = np.inf if pos + margin >= size - 1 else sk[order[pos + margin]]
        below = 0.0
        inside = 0.0
        count = 0
        buf_k = np.empty(n)
        buf_w = np.empty(n)
        for i in range(n):
            k = keys[i]
            if k < p1:
                below += weights[i]
            elif k <= p2:
                buf_k[count] = k
                buf_w[count] = weights[i]
                inside += weights[i]
                count += 1
        if below < target and below + inside >= target and count > 0:
            idx = np.argsort(buf_k[:count], kind="mergesort")
            acc = below
            for j in idx:
                acc += buf_w[j]
                if acc >= target:
                    return buf_k[j]
        # The bracket missed (or rounding at its edge): select on everything.
    return _quickselect(keys, weights, target)


@njit(cache=True)
def _quickselect(keys, weights, target):  # pragma: no cover - compiled
    """Three-way quickselect (Hoare's FIND) with weights: see :func:`weighted_select`."""
    n = keys.shape[0]
    lo = 0
    hi = n
    acc = 0.0
    rounds = 0
    while hi - lo > 0:
        rounds += 1
        if rounds > _SELECT_ROUNDS or hi - lo <= 16:
            # Sort what is left and scan (the order of ties does not change the key found).
            order = np.argsort(keys[lo:hi], kind="mergesort")
            for idx in order:
                acc += weights[lo + idx]
                if acc >= target:
                    return keys[lo + idx]
            return keys[lo + order[-1]]
        a = keys[lo]
        b = keys[(lo + hi) // 2]
        c = keys[hi - 1]
        pivot = max(min(a, b), min(max(a, b), c))  # median of three
        lt = lo
        i = lo
        gt = hi
        while i < gt:
            k = keys[i]
            if k < pivot:
                _swap(keys, weights, i, lt)
                lt += 1
                i += 1
            elif k > pivot:
                gt -= 1
                _swap(keys, weights, i, gt)
            else:
                i += 1
        w_less = 0.0
        for j in range(lo, lt):
            w_less += weights[j]
        w_eq = 0.0
        for j in range(lt, gt):
            w_eq += weights[j]
        if acc + w_less >= target and lt > lo:
            hi = lt
        elif acc + w_less + w_eq >= target:
            return pivot
        else:
            acc += w_less + w_eq
            lo = gt
    # Total weight below target (rounding): the largest key, as the sorting method.
    best = -np.inf
    for j in range(n):
        if keys[j] > best:
            best = keys[j]
    return best


@njit(cache=True)
def piecewise_linear_argmin(c0, w, a, r):  # pragma: no cover - compiled
    """``(status, b, value)`` for ``min_b c0 b + sum w_i max(0, a_i b + r_i)`` (see caller).

    status 0: ok; 1: unbounded; 2: no breakpoints.
    """
    n = a.shape[0]
    m = 0
    for i in range(n):
        if a[i] != 0.0:
            m += 1
    keys = np.empty(m)
    weights = np.empty(m)
    slope_left = c0
    slope_right = c0
    total = 0.0
    j = 0
    for i in range(n):
        ai = a[i]
        if ai != 0.0:
            keys[j] = -r[i] / ai
            weights[j] = w[i] * abs(ai)
            total += weights[j]
            if ai < 0:
                slope_left += w[i] * ai
            else:
                slope_right += w[i] * ai
            j += 1
    if m == 0:
        return 2, 0.0, 0.0
    # Slopes within rounding of zero are flat, not unbounded (one-class with nu = 1:
    # -1 + n * (1/n) is -1e-16 when summed in order).
    tol = 1e-12 * (abs(c0) + total)
    if slope_left > tol or slope_right < -tol:
        return 1, 0.0, 0.0
    b = weighted_select(keys, weights, -slope_left, total)
    value = 0.0
    for i in range(n):
        t = a[i] * b + r[i]
        if t > 0:
            value += w[i] * t
    return 0, b, c0 * b + value


@njit(cache=True, fastmath={"reassoc", "contract"})
def _h_slope(v, a, tau, lower, upper, soft, has_soft):  # pragma: no cover - compiled
    """``h(tau) = a'x(tau)``, its slope ``-sum a_i^2`` over the linear coordinates, and
    ``sum |a_i x_i|`` (the rounding scale of h). Branch-free so that LLVM vectorises it."""
    h = 0.0
    slope = 0.0
    scale = 0.0
    if has_soft:
        for i in range(v.shape[0]):
            ai = a[i]
            w = v[i] - tau * ai
            s = soft[i]
            x = max(w - s, 0.0) + min(w + s, 0.0)
            x = min(max(x, lower[i]), upper[i])
            free = (abs(w) > s) & (x > lower[i]) & (x < upper[i])
            h += ai * x
            scale += abs(ai * x)
            slope -= ai * ai * free
    else:
        for i in range(v.shape[0]):
            ai = a[i]
            x = min(max(v[i] - tau * ai, lower[i]), upper[i])
            free = (x > lower[i]) & (x < upper[i])
            h += ai * x
            scale += abs(ai * x)
            slope -= ai * ai * free
    return h, slope, scale


@njit(cache=True)
def range_check(a):  # pragma: no cover - compiled
    """Number of zero entries of ``a`` (one pass, no temporaries)."""
    zeros = 0
    for i in range(a.shape[0]):
        zeros += a[i] == 0.0
    return zeros


@njit(cache=True)
def h_ends(a, lower, upper):  # pragma: no cover - compiled
    """``(max h, min h)`` over the box: ``h`` at ``tau -> -inf`` and ``tau -> +inf``."""
    left = 0.0
    right = 0.0
    for i in range(a.shape[0]):
        ai = a[i]
        if ai > 0:
            left += ai * upper[i]
            right += ai * lower[i]
        else:
            left += ai * lower[i]
            right += ai * upper[i]
    return left, right


@njit(cache=True)
def _tau_range(v, a, lower, upper, soft, has_soft):  # pragma: no cover - compiled
    """Smallest and largest breakpoint of ``h`` (x is constant outside)."""
    lo = np.inf
    hi = -np.inf
    for i in range(v.shape[0]):
        s = soft[i] if has_soft else 0.0
        p = (v[i] - s - upper[i]) / a[i]
        q = (v[i] + s - lower[i]) / a[i]
        lo = min(lo, p, q)
        hi = max(hi, p, q)
        if has_soft:
            p = (v[i] - s) / a[i]
            q = (v[i] + s) / a[i]
            lo = min(lo, p, q)
            hi = max(hi, p, q)
    return lo, hi


@njit(cache=True)
def newton_multiplier(v, a, t, lower, upper, soft, has_soft, tau0, h_left, h_right):  # noqa
    """``(ok, tau)``: the root of ``h(tau) = t`` by safeguarded Newton from ``tau0``.

    ``h_left``/``h_right`` are the values of ``h`` far left/right (:func:`h_ends`). ``ok`` is 1
    for a root (``|h - t|`` at rounding level), 2 when ``t`` is at or beyond an end of the range
    of ``h`` (``tau`` is then the end breakpoint, as in the sorting method) and 0 when the
    iteration did not settle (the caller sorts). The breakpoint range (one more pass) is only
    computed when needed: for an end, a cold start or a bisection step.
    """  # pragma: no cover - compiled
    if t >= h_left:
        t_lo, _ = _tau_range(v, a, lower, upper, soft, has_soft)
        return 2, t_lo
    if t <= h_right:
        _, t_hi = _tau_range(v, a, lower, upper, soft, has_soft)
        return 2, t_hi
    # Invariant: h(t_lo) > t > h(t_hi); infinite ends until the range is needed.
    t_lo = -np.inf
    t_hi = np.inf
    have_range = False
    tau = tau0
    if not np.isfinite(tau):
        t_lo, t_hi = _tau_range(v, a, lower, upper, soft, has_soft)
        have_range = True
        tau = 0.5 * (t_lo + t_hi)
    for _ in range(_NEWTON_ITERS):
        h, slope, scale = _h_slope(v, a, tau, lower, upper, soft, has_soft)
        if abs(h - t) <= 1e-13 * max(1.0, scale, abs(t)):
            return 1, tau
        if h > t:
            t_lo = tau
        else:
            t_hi = tau
        cand = tau + (t - h) / slope if slope < 0 else np.nan
        if not (cand > t_lo and cand < t_hi):
            if not have_range:
                r_lo, r_hi = _tau_range(v, a, lower, upper, soft, has_soft)
                t_lo = max(t_lo, r_lo)
                t_hi = min(t_hi, r_hi)
                have_range = True
            cand = 0.5 * (t_lo + t_hi)
        if cand == tau or not (t_hi > t_lo):
            return 1, tau
        tau = cand
    return 0, tau


@njit(cache=True)
def clip_shift(v, a, tau, lower, upper, soft, has_soft):  # pragma: no cover - compiled
    """``clip(soft(v - tau a, soft), lower, upper)`` in one pass (same rounding as numpy)."""
    out = np.empty_like(v)
    for i in range(v.shape[0]):
        x = v[i] - tau * a[i]
        if has_soft:
            s = soft[i]
            if x > s:
                x -= s
            elif x < -s:
                x += s
            else:
                x = 0.0
        out[i] = min(max(x, lower[i]), upper[i])
    return out
