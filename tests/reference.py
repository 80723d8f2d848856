"""Independent reference formulations (dense linear algebra and cvxpy) used by the tests.

Nothing here calls the package's solvers or its rank-one machinery.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np


def psd_part(M):
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    return (V * np.maximum(w, 0.0)) @ V.T


def dense_objective_eq7(K0, y, alpha, rho):
    """Paper 004 eq. (6)/(7) evaluated literally with a dense eigendecomposition."""
    u = y * alpha
    Ks = psd_part(K0 + np.outer(u, u) / (4 * rho))
    return alpha.sum() - 0.5 * u @ Ks @ u + rho * np.sum((Ks - K0) ** 2), Ks


def dense_objective_eigen_form(K0, y, alpha, rho):
    """The eigenvalue expression of eq. (7) term by term (paper 004, Sect. 2.2)."""
    u = y * alpha
    lam, V = np.linalg.eigh(K0 + np.outer(u, u) / (4 * rho))
    lp = np.maximum(lam, 0)
    proj = V.T @ u
    vkv = np.einsum("ij,jk,ki->i", V.T, K0, V)
    return (
        alpha.sum()
        - 0.5 * np.sum(lp * proj**2)
        + rho * np.sum(lp**2)
        - 2 * rho * np.sum(vkv * lp)
        + rho * np.sum(K0 * K0)
    )


def svm_dual_value(K, y, C):
    """omega_C(K) of eq. (1) by cvxpy (K PSD), with per-sample C."""
    n = len(y)
    G = (y[:, None] * K) * y[None, :]
    w, V = np.linalg.eigh(G)
    L = V * np.sqrt(np.maximum(w, 0))
    a = cp.Variable(n)
    C = np.broadcast_to(C, (n,))
    prob = cp.Problem(
        cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ a)), [y @ a == 0, a >= 0, a <= C]
    )
    prob.solve(solver="CLARABEL")
    return prob.value, a.value


def sdp_optimum(K0, y, C, rho):
    """Optimal value and kernel of problem (3) written as an SDP (n <= ~30).

    The inner SVM is replaced by its QP dual: omega_C(K) = min t s.t.
    [[Y K Y, v], [v', 2 (t - C'delta)]] >= 0 with v = e + nu - delta + lambda y, nu, delta >= 0.
    """
    n = len(y)
    Y = np.diag(y)
    K = cp.Variable((n, n), PSD=True)
    t = cp.Variable()
    nu = cp.Variable(n, nonneg=True)
    delta = cp.Variable(n, nonneg=True)
    lam = cp.Variable()
    v = np.ones(n) + nu - delta + lam * y
    Cv = np.broadcast_to(C, (n,))
    Z = cp.bmat(
        [
            [Y @ K @ Y, cp.reshape(v, (n, 1), order="F")],
            [cp.reshape(v, (1, n), order="F"), cp.reshape(2 * (t - Cv @ delta), (1, 1), order="F")],
        ]
    )
    prob = cp.Problem(cp.Minimize(t + rho * cp.sum_squares(K - K0)), [(Z + Z.T) / 2 >> 0])
    prob.solve(solver="CLARABEL")
    return prob.value, K.value


def random_feasible_alpha(y, C, rng):
    """A random point of {y'alpha = 0, 0 <= alpha <= C} (balanced mass on both classes)."""
    n = len(y)
    a = rng.uniform(0, 1, size=n) * C
    pos, neg = y > 0, y < 0
    sp, sn = a[pos].sum(), a[neg].sum()
    if sp > sn:
        a[pos] *= sn / sp
    else:
        a[neg] *= sp / sn
    return a
