"""Independent reference formulations (dense linear algebra and cvxpy) used by the tests.

Nothing here calls the package's solvers or its rank-one machinery.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

#: The statuses that end a run without a certificate, written out from the documentation (not
#: the package's own list): SolveResult.status says every status but "converged" and
#: "callback" warns.
WARNING_STATUSES = (
    "max_iter",
    "max_time",
    "stalled",
    "numerical_error",
    "solver_error",
    "precision_limit",
)


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


def solve_sdp_accurately(prob):
    """Clarabel first; if it reports an inaccurate solution, SCS at tight tolerance."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        prob.solve(solver="CLARABEL")
        if prob.status != "optimal":
            prob.solve(solver="SCS", eps=1e-10, max_iters=400000)
    assert prob.status == "optimal", f"reference SDP failed: {prob.status}"


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
    solve_sdp_accurately(prob)
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


def generic_minmax_sdp(K0, rho, c, B, G, h, A, b, *, H_sqrt=None):
    """Optimal value of ``min_{K >= 0} max_{Gx <= h, Ax = b} c'x - 1/2 x'B'KBx + penalty(K)``.

    The inner QP is replaced by its Lagrange dual ``h'lam + b'mu + 1/2 v'(B'KB)^+ v`` with
    ``v = c - G'lam - A'mu``, written as a Schur-complement LMI, so the whole min-max is one SDP
    (independent of the package). ``penalty(K) = rho ||K - K0||_F^2`` or, with ``H_sqrt``,
    ``||H_sqrt o (K - K0)||_F^2`` (componentwise penalties, paper 004 eq. 23).
    """
    n = K0.shape[0]
    m = B.shape[1]
    K = cp.Variable((n, n), PSD=True)
    t = cp.Variable()
    lam = cp.Variable(G.shape[0], nonneg=True)
    mu = cp.Variable(A.shape[0])
    v = c - G.T @ lam - A.T @ mu
    Q = B.T @ K @ B
    Z = cp.bmat(
        [
            [Q, cp.reshape(v, (m, 1), order="F")],
            [
                cp.reshape(v, (1, m), order="F"),
                cp.reshape(2 * (t - h @ lam - b @ mu), (1, 1), order="F"),
            ],
        ]
    )
    if H_sqrt is None:
        penalty = rho * cp.sum_squares(K - K0)
    else:
        penalty = cp.sum_squares(cp.multiply(H_sqrt, K - K0))
    prob = cp.Problem(cp.Minimize(t + penalty), [(Z + Z.T) / 2 >> 0])
    solve_sdp_accurately(prob)
    return prob.value, K.value


def box(n, lo, hi):
    G = np.vstack([-np.eye(n), np.eye(n)])
    h = np.concatenate([-np.broadcast_to(lo, (n,)), np.broadcast_to(hi, (n,))])
    return G, h


def svc_sdp(K0, y, C, rho, H_sqrt=None):
    n = len(y)
    G, h = box(n, 0.0, C)
    return generic_minmax_sdp(
        K0, rho, np.ones(n), np.diag(y), G, h, y[None, :], np.zeros(1), H_sqrt=H_sqrt
    )


def svr_sdp(K0, y, C, epsilon, rho, H_sqrt=None):
    """SVR (paper 004 eq. 15) with alpha = p - q, p, q in [0, C]."""
    n = len(y)
    G, h = box(2 * n, 0.0, C)
    c = np.concatenate([y - epsilon, -y - epsilon])
    B = np.hstack([np.eye(n), -np.eye(n)])
    A = np.concatenate([np.ones(n), -np.ones(n)])[None, :]
    return generic_minmax_sdp(K0, rho, c, B, G, h, A, np.zeros(1), H_sqrt=H_sqrt)


def oneclass_sdp(K0, nu, rho, H_sqrt=None):
    """One-class (paper 004 eq. 19) with e'alpha = 1, 0 <= alpha <= 1/(nu n)."""
    n = K0.shape[0]
    G, h = box(n, 0.0, 1.0 / (nu * n))
    return generic_minmax_sdp(
        K0, rho, np.zeros(n), np.eye(n), G, h, np.ones((1, n)), np.ones(1), H_sqrt=H_sqrt
    )


def perturb_direct(K0, y, C, rho):
    """PerturbSVM eq. (22) written directly as a convex program (K0 PSD)."""
    n = len(y)
    w, V = np.linalg.eigh(K0)
    L = V * np.sqrt(np.maximum(w, 0))
    a = cp.Variable(n)
    u = cp.multiply(y, a)
    obj = cp.sum(a) - 0.5 * cp.sum_squares(L.T @ u) - cp.power(cp.sum_squares(u), 2) / (16 * rho)
    prob = cp.Problem(cp.Maximize(obj), [y @ a == 0, a >= 0, a <= C])
    prob.solve(solver="CLARABEL")
    return prob.value, a.value
