"""Compiled refinement of root offsets for :func:`indefsvm.proxy.operators.negative_square_change`.

The same algorithm as the NumPy path of :func:`indefsvm.proxy.operators._refine_offsets`, one root
at a
time in scalar loops: Newton steps on ``F(t) = t (1 + psi(t)) - sigma z_o^2`` in the variable
``t = lambda - d_o`` shifted to the nearer pole ``d_o`` (``psi`` the secular sum without that
pole), safeguarded by bisection inside a bracket around the computed root that the secular
function must confirm. O(n) per step and root, a few steps, no n x k temporaries (the NumPy path
allocates them at every step, which made it slower than the evaluation it refines).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_EPS = float(np.finfo(np.float64).eps)
#: Newton/bisection steps at most per root (each at least halves the bracket).
MAX_STEPS = 80


#: Reassociation lets LLVM vectorise the sums over the poles (as in :mod:`_secular_numba`): the
#: error bound below is for any summation order.
_FAST = {"reassoc", "contract"}


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def refine_offsets(d, z2, idx, lam, width, offset, error, ok):  # pragma: no cover - compiled
    """Offsets ``lambda_r - d_idx[r]`` (see the module docstring), their error bounds, and ok.

    The bracket is the whole pole interval (where ``g`` runs from -inf to +inf); the result is
    accepted (``ok``) only if it lies within ``width`` of the computed root and its error bound
    is finite, so a deflated pole (no sign change) leaves the root to the caller's plain value.
    """
    n = d.shape[0]
    for r in range(idx.shape[0]):
        ok[r] = False
        offset[r] = 0.0
        error[r] = np.inf
        i = idx[r]
        lo_pole = d[i]
        hi_pole = d[i + 1] if i + 1 < n else np.inf
        if not (hi_pole > lo_pole):
            continue  # a repeated pole keeps its root exactly
        upper = (lam[r] - lo_pole) > 0.5 * (hi_pole - lo_pole)
        o = i + 1 if upper else i
        d_o = d[o]
        a = lo_pole - d_o if upper else 0.0
        b = 0.0 if upper else hi_pole - d_o
        t0 = lam[r] - d_o
        t = min(max(t0, a), b)
        if t <= a or t >= b:
            t = 0.5 * (a + b) if np.isfinite(b - a) else t0
        z2o = z2[o]
        psi = 0.0
        dpsi = 0.0
        mag = 0.0
        converged = False
        for _ in range(MAX_STEPS):
            psi = 0.0
            dpsi = 0.0
            mag = 0.0
            for j in range(n):
                if j != o:
                    s = d[j] - d_o
                    inv = 1.0 / (s - t)
                    ratio = z2[j] * inv
                    psi += ratio
                    dpsi += ratio * inv
                    mag += abs(ratio) * (1.0 + abs(s * inv))
            F = t * (1.0 + psi) - z2o
            if F == 0.0:
                converged = True
                break
            dF = 1.0 + psi + t * dpsi
            # the sign of g = F / t says on which side of the root t lies (g increases)
            if (F < 0.0) if t > 0.0 else (F > 0.0):
                a = t
            else:
                b = t
            step = t - F / dF
            new = step if (step > a and step < b) else 0.5 * (a + b)
            # Newton converges quadratically here (F is smooth between the other poles): after
            # a correction below 1e-9 |t| the next one would be below rounding, so it is the last.
            done = (new == step) and abs(new - t) <= 1e-9 * abs(new)
            done = done or (b - a) <= 2.0 * _EPS * max(abs(a), abs(b))
            t = new
            if done:
                converged = True
                break
        if not converged or abs(t - t0) > width:
            continue
        # g = 1 + psi - z2o / t and its derivative at (to rounding) the root
        g_prime = dpsi + z2o / (t * t)
        scale = 2.0 + mag + abs(z2o / t)
        t_error = 4.0 * _EPS * scale / abs(g_prime) + 2.0 * _EPS * abs(t)
        if upper:
            offset[r] = (hi_pole - lo_pole) + t
            t_error += 2.0 * _EPS * (hi_pole - lo_pole)
        else:
            offset[r] = t
        if np.isfinite(t_error):
            error[r] = t_error
            ok[r] = True
