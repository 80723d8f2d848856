"""A 60-digit reference of objective (7) and its certified bound (mpmath), for issue 22 item 1.

Independent of the package: the closed form of theory.md §1 with the eigenvalues of
``M = K0 + u u' / (4 rho)`` from ``mpmath.eigsy``, and the bound of theory.md §3 (hinge primal of
``w = sum u_j phi(x_j)`` in the space of ``K* = M_+`` with the best intercept, plus
``rho ||K* - K0||_F^2``), both less ``f(0) = rho ||(K0)_-||_F^2``.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np

DPS = 60


def mp_kernel(K: np.ndarray | None = None, *, factor: tuple | None = None):
    """``K0`` as an mpmath matrix: the float64 entries, or ``Phi diag(s) Phi'`` exactly."""
    if factor is None:
        return mp.matrix(np.asarray(K).tolist())
    Phi, s = factor
    P = mp.matrix(np.asarray(Phi, dtype=np.float64).tolist())
    S = mp.diag([mp.mpf(float(v)) for v in s])
    return P * S * P.T


def mp_excess(K, y: np.ndarray, alpha: np.ndarray, rho: float, C: float = 1.0):
    """``f(alpha) - f(0)`` and ``UB(alpha) - f(0)`` of the SVC problem to 60 digits.

    Objective (7) by its closed form (theory.md §1) with the eigenvalues of
    ``M = K0 + u u'/(4 rho)``,
    and the certified bound of theory.md §3: the hinge primal of ``w = sum u_j phi(x_j)`` in the
    space of ``K* = M_+`` with the best intercept plus ``rho ||K* - K0||_F^2``. Everything from
    the float64 inputs, exactly, then in 60-digit arithmetic.
    """
    with mp.workdps(DPS):
        n = len(y)
        Km = K if isinstance(K, mp.matrix) else mp.matrix(np.asarray(K).tolist())
        a = [mp.mpf(float(v)) for v in alpha]
        u = mp.matrix([int(y[i]) * a[i] for i in range(n)])
        r = mp.mpf(rho)
        M = Km + (u * u.T) / (4 * r)
        lam, Q = mp.eigsy(M)
        d0, _ = mp.eigsy(Km)
        f0 = r * sum(min(0, v) ** 2 for v in d0)
        u_sq = sum(v**2 for v in u)
        f = sum(a) - (u.T * Km * u)[0] / 2 - u_sq**2 / (16 * r)
        f += r * sum(min(0, v) ** 2 for v in lam)
        Kstar = mp.matrix(n, n)
        for k in range(n):
            if lam[k] > 0:
                Kstar += lam[k] * Q[:, k] * Q[:, k].T
        g = Kstar * u
        # the hinge sum is convex piecewise linear in b: its minimum is at a breakpoint
        hinge = min(
            sum(C * max(0, 1 - int(y[j]) * (g[j] + int(y[i]) - g[i])) for j in range(n))
            for i in range(n)
        )
        D = Kstar - Km
        penalty = r * sum(D[i, j] ** 2 for i in range(n) for j in range(n))
        ub = (u.T * g)[0] / 2 + hinge + penalty
        return f - f0, ub - f0
