"""Regularised multiple-kernel-learning master problem of the SIQCLP exchange method.

Chen & Ye (2008) show that the QCLP (13) of paper 004 is a regularised MKL problem (Lanckriet et
al. 2004), and paper 004 (Sect. 3.4 step 3 and Sect. 5.3) proposes solving it with "a regularized
version of an efficient MKL solver (e.g. SimpleMKL, Rakotomamonjy et al. 2008)" instead of a conic
solver. By minimax duality (the constraint functions are concave in ``a``, linear in the weights)

    (13) = min_{lambda in simplex} J(lambda),
    J(lambda) = max_{a in A} l(a) - 1/2 u' K_lambda u + sum_i lambda_i c_i,

with ``u = u_coef * a``, ``K_lambda = sum_i lambda_i K_i`` and ``c_i = rho ||K_i - K0||_F^2``.
Evaluating ``J`` is one SVM-type quadratic program with the fixed kernel ``K_lambda``; by
Danskin's theorem ``dJ/dlambda_i = -1/2 u*' K_i u* + c_i``. Writing
``L_i(a) = l(a) - 1/2 u' K_i u + c_i`` (the value of constraint i), ``J = sum_i lambda_i L_i(a*)``
and ``min_i L_i(a*)`` is a feasible value of the max-min problem, so

    J(lambda) - min_i L_i(a*(lambda))  >=  J(lambda) - (13)  >= 0

is a computable optimality gap of the master; at the optimum the multipliers ``lambda_i`` are
those of the QCLP's constraints (what pruning needs).

The inner QP is solved by sequential minimal optimisation with LIBSVM's second-order working-set
selection (Fan, Chen & Lin 2005), compiled with Numba and warm-started from the previous inner
solution: the feasible set ``A`` does not depend on ``lambda``, so every earlier solution is a
feasible start. (LIBSVM itself cannot be warm-started nor given the general linear term that the
proximal variant needs; it is the independent reference in the tests.) An l1 term (SVR) is
handled as LIBSVM does, by splitting ``a = a+ - a-``.

Two steps on the simplex (``step``):

``"newton"`` (default)
    The Hessian of ``J`` on the current free set of the inner QP (implicit differentiation of its
    KKT system: ``H = G' Z G`` with ``G`` the columns ``(Q_i x)_F`` and ``Z`` the inverse of the
    free block on ``{eq_F' d = 0}``), the exact Newton step on the simplex (a QP in ``m``
    variables, solved by an active-set method) and Armijo backtracking on ``J``. ``J`` is
    smooth while the free set does not change, so the steps converge quadratically near the
    solution, which the certified gap of the exchange method needs (relative 1e-5 and below).
``"reduced_gradient"``
    SimpleMKL (Rakotomamonjy et al. 2008, Algorithm 1): the reduced gradient with respect to the
    largest weight, steps to the boundary of the simplex while ``J`` decreases, then a line
    search on the last segment (golden section here).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from numpy.typing import NDArray

logger = logging.getLogger(__name__)

MKL_STEPS = ("newton", "reduced_gradient")


@njit(cache=True, nogil=True, error_model="numpy")
def _smo(P, q, lo, hi, w, tol, max_iter):  # pragma: no cover - compiled
    """Minimise ``1/2 w'Pw - q'w`` s.t. ``sum(w) = sum(w0)``, ``lo <= w <= hi`` from feasible ``w``.

    SMO with the second-order working-set selection of Fan, Chen & Lin (2005) (LIBSVM's WSS 2)
    in the variables whose equality coefficients are all +1: a step moves ``w_i += d``,
    ``w_j -= d``. Stops when ``max_{w_j > lo_j} G_j - min_{w_i < hi_i} G_i <= tol`` (the maximal
    violating pair, LIBSVM's rule) with ``G = Pw - q``. Returns ``(w, G, iterations, violation)``.
    """
    n = w.shape[0]
    # A variable within 1e-13 of its range from a bound sits on it (rounding in a Newton step
    # or a sum correction must not leave a variable "free" with no room: SMO would pick it with
    # a zero step forever).
    room = 1e-13 * (hi - lo)
    for t in range(n):
        if hi[t] - w[t] <= room[t]:
            w[t] = hi[t]
        elif w[t] - lo[t] <= room[t]:
            w[t] = lo[t]
    G = P @ w - q
    it = 0
    viol = np.inf
    while it < max_iter:
        # i: steepest increase among those that can increase
        gi = np.inf
        i = -1
        for t in range(n):
            if w[t] < hi[t] and G[t] < gi:
                gi = G[t]
                i = t
        gmax_low = -np.inf
        j = -1
        best = -np.inf
        for t in range(n):
            if w[t] > lo[t]:
                if G[t] > gmax_low:
                    gmax_low = G[t]
                b = G[t] - gi
                if b > 0.0 and i >= 0:
                    a = P[i, i] + P[t, t] - 2.0 * P[i, t]
                    if a <= 1e-12:
                        a = 1e-12
                    score = b * b / a
                    if score > best:
                        best = score
                        j = t
        viol = gmax_low - gi if i >= 0 else 0.0
        if i < 0 or j < 0 or viol <= tol:
            break
        a = P[i, i] + P[j, j] - 2.0 * P[i, j]
        if a <= 1e-12:
            a = 1e-12
        d = (G[j] - G[i]) / a
        cap_i = hi[i] - w[i]
        cap_j = w[j] - lo[j]
        if d >= cap_i:
            d = cap_i
        if d >= cap_j:
            d = cap_j
        if d <= 0.0:
            break
        w[i] += d
        w[j] -= d
        if d == cap_i or hi[i] - w[i] <= room[i]:
            w[i] = hi[i]
        if d == cap_j or w[j] - lo[j] <= room[j]:
            w[j] = lo[j]
        for t in range(n):
            G[t] += d * (P[t, i] - P[t, j])
        it += 1
    return w, G, it, viol


def _simplex_qp(H: NDArray[np.float64], c: NDArray[np.float64], start: NDArray[np.float64]):
    """``argmin 1/2 x'Hx + c'x`` over the simplex (primal active-set method, ``H`` PSD).

    ``start`` is a feasible point. Equality-constrained subproblems on the free set are solved
    by least squares (``H`` may be singular); a face on which the QP has no minimiser (``H``
    singular there and the linear term not in its range) is left along the null-space
    direction of decrease until a weight reaches zero. For ``m`` of a few tens this is exact
    and cheap.
    """
    m = c.size
    x = start.copy()
    free = x > 0
    for _ in range(4 * m + 20):
        F = np.flatnonzero(free)
        k = F.size
        kkt = np.zeros((k + 1, k + 1))
        kkt[:k, :k] = H[np.ix_(F, F)]
        kkt[:k, k] = 1.0
        kkt[k, :k] = 1.0
        rhs = np.concatenate([-c[F], [1.0]])
        sol = np.linalg.lstsq(kkt, rhs, rcond=None)[0]
        target = sol[:k]
        d = target - x[F]
        resid = float(np.linalg.norm(kkt @ sol - rhs))
        if resid > 1e-9 * (float(np.linalg.norm(kkt)) * float(np.linalg.norm(sol)) + 1.0):
            # No minimiser on this face (H_FF singular and the linear term not in its range on
            # {sum = 0}): the least-squares "solution" is not a stationary point. Follow the
            # direction of linear decrease in the null space of H_FF until a weight hits zero.
            Z = np.linalg.qr(np.ones((k, 1)), mode="complete")[0][:, 1:]
            HF = H[np.ix_(F, F)]
            R = Z.T @ HF @ Z
            ev, V = np.linalg.eigh(0.5 * (R + R.T))
            flat = ev <= 1e-10 * max(float(ev.max(initial=0.0)), 1e-300)
            g = V[:, flat].T @ (Z.T @ (HF @ x[F] + c[F]))
            d = -(Z @ (V[:, flat] @ g))
            if not np.any(d < 0):  # pragma: no cover - a nonzero d with sum 0 has one
                return x
        elif np.all(target >= 0):
            x[F] = target
            x[~free] = 0.0
            # multiplier of the sum constraint: stationarity on the free set
            grad = H @ x + c
            nu = float(np.mean(grad[F]))
            reduced = grad - nu
            reduced[free] = 0.0
            j = int(np.argmin(reduced))
            if reduced[j] >= -1e-12 * max(1.0, float(np.max(np.abs(grad)))):
                return x
            free[j] = True
            continue
        # step towards the free-set optimum (or along the direction of decrease) until a
        # weight hits zero; drop it
        neg = d < 0
        steps = np.where(neg, -x[F] / np.where(neg, d, -1.0), np.inf)
        s = float(np.min(steps))
        x[F] = x[F] + s * d
        drop = F[int(np.argmin(steps))]
        x[drop] = 0.0
        free[drop] = False
        x = np.maximum(x, 0.0)
        x /= x.sum()
    return x


@dataclass
class MKLStats:
    """Work done by the MKL master over a whole solve."""

    svm_solves: int = 0
    smo_iterations: int = 0
    master_iterations: int = 0
    time_svm: float = 0.0
    time_master: float = 0.0
    time_bound_svm: float = 0.0
    unconverged_svms: int = 0
    gaps: list = field(default_factory=list)


class MKLMaster:
    """Solve the QCLP (13) as ``min_{lambda in simplex} J(lambda)`` (module docstring).

    Parameters
    ----------
    problem : DenseProblem
        Supplies the feasible set, ``l`` and ``u_coef`` (working coordinates).
    step : {"newton", "reduced_gradient"}
        Step on the simplex.
    svm_tol : float
        Inner SMO stopping tolerance on the maximal KKT violation, relative to
        ``max(1, max |l's coefficients|)``.
    max_steps : int
        Simplex steps per master solve before giving up (the result is then still feasible; the
        exchange method's certified gap does not depend on the master's accuracy).
    """

    def __init__(
        self,
        problem,
        *,
        step: str = "newton",
        svm_tol: float = 1e-11,
        max_steps: int = 100,
    ) -> None:
        if step not in MKL_STEPS:
            raise ValueError(f"mkl_step must be one of {MKL_STEPS}; got {step!r}.")
        if not (np.isfinite(svm_tol) and svm_tol > 0):
            raise ValueError(f"svm_tol must be a finite number > 0; got {svm_tol!r}.")
        if int(max_steps) != max_steps or max_steps < 1:
            raise ValueError(f"mkl_max_steps must be a positive integer; got {max_steps!r}.")
        self.problem = problem
        self.step = step
        self.max_steps = int(max_steps)
        self.stats = MKLStats()
        #: Absolute ``time.perf_counter()`` deadline of the solve (None: no limit).
        self.deadline: float | None = None
        n = problem.n
        eq = np.asarray(problem.eq_coef, dtype=np.float64)
        if np.any(eq == 0):
            raise ValueError("the MKL master needs non-zero equality coefficients.")
        lower = np.asarray(problem.lower, dtype=np.float64)
        upper = np.asarray(problem.upper, dtype=np.float64)
        lin = np.asarray(problem.linear_coef, dtype=np.float64)
        l1 = float(problem.l1_weight)
        if l1 > 0:
            if np.any(lower > 0) or np.any(upper < 0):
                raise ValueError(
                    "the MKL master splits a = a+ - a- for an l1 term: needs lower <= 0 <= upper."
                )
            # a = a+ - a-, a+ in [0, upper], a- in [0, -lower] (LIBSVM's SVR form)
            self.idx = np.concatenate([np.arange(n), np.arange(n)])
            self.sgn = np.concatenate([np.ones(n), -np.ones(n)])
            x_lo = np.zeros(2 * n)
            x_hi = np.concatenate([upper, -lower])
            x_lin = np.concatenate([lin - l1, -lin - l1])
        else:
            self.idx = np.arange(n)
            self.sgn = np.ones(n)
            x_lo, x_hi, x_lin = lower, upper, lin
        x_eq = self.sgn * eq[self.idx]
        # w = x_eq * x: every equality coefficient becomes +1 (SMO moves pairs along sum w = r)
        self.scale = x_eq
        self.w_lo = np.where(x_eq > 0, x_lo * x_eq, x_hi * x_eq)
        self.w_hi = np.where(x_eq > 0, x_hi * x_eq, x_lo * x_eq)
        self.w_lin = x_lin / x_eq
        # combined factor: x-space variable v maps to u index idx[v] with coefficient
        self.coef = self.sgn * np.asarray(problem.u_coef, dtype=np.float64)[self.idx] / x_eq
        self.tol = svm_tol * max(1.0, float(np.max(np.abs(self.w_lin))))
        # a = A w with A_{i,v} = [idx_v == i] sgn_v / scale_v: for the proximal term
        self.acoef = self.sgn / self.scale
        same = self.idx[:, None] == self.idx[None, :]
        self.E = np.where(same, self.acoef[:, None] * self.acoef[None, :], 0.0)
        #: proximal term ``mu/2 ||a - center||^2`` subtracted from every constraint (None: off)
        self.prox: tuple[float, NDArray[np.float64]] | None = None
        a0 = problem.initial_point()
        self.w = self._to_w(a0)
        self.lam: dict[int, float] = {}

    # -- coordinates --------------------------------------------------------------------------
    def _to_w(self, a: NDArray[np.float64]) -> NDArray[np.float64]:
        n = self.problem.n
        if self.idx.size == n:
            x = a.copy()
        else:
            x = np.concatenate([np.maximum(a, 0.0), np.maximum(-a, 0.0)])
        return np.clip(x * self.scale, self.w_lo, self.w_hi)

    def _alpha(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        x = w / self.scale
        n = self.problem.n
        return x if self.idx.size == n else x[:n] - x[n:]

    def _P(self, K: NDArray[np.float64]) -> NDArray[np.float64]:
        """Quadratic form of the inner QP in ``w``: ``u = sum_v coef_v w_v e_{idx_v}``."""
        Kx = K[np.ix_(self.idx, self.idx)] if self.idx.size != K.shape[0] else K
        return (self.coef[:, None] * Kx) * self.coef[None, :]

    def _out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    # -- the inner QP ---------------------------------------------------------------------------
    def _qp(
        self,
        P: NDArray[np.float64],
        q: NDArray[np.float64],
        w0: NDArray[np.float64],
        max_smo: int | None = None,
        rounds: int = 30,
    ):
        """``argmin 1/2 w'Pw - q'w`` on the feasible set, to the KKT tolerance ``self.tol``.

        SMO to a loose tolerance finds the free set; a Newton step on it (the equality-constrained
        QP of the free variables, solved exactly) then usually lands on the solution, which SMO
        alone approaches slowly when ``P`` is (nearly) singular on the free set (low-rank proxy
        kernels). The step is kept only if it stays feasible and lowers the KKT violation; SMO
        continues from the best point otherwise. Returns ``(w, smo_iterations, violation)``.
        """
        lo, hi = self.w_lo, self.w_hi
        n = P.shape[0]
        w = w0.copy()
        total = 0
        loose = max(self.tol, 1e-6 * max(1.0, float(np.max(np.abs(q)))))
        for _ in range(rounds):
            w, G, iters, viol = _smo(P, q, lo, hi, w, loose, 50 * n)
            total += int(iters)
            if viol <= self.tol:
                return w, total, viol
            w = self._newton_polish(P, q, w, G)
            loose = max(self.tol, 0.01 * loose)
        w, G, iters, viol = _smo(
            P, q, lo, hi, w, self.tol, 100000 * n if max_smo is None else max_smo
        )
        return w, total + int(iters), viol

    def _newton_polish(self, P, q, w, G):
        """Primal active-set steps on the free variables, for singular ``P`` too.

        On the free set ``F`` (with ``sum_F d = 0``, basis ``Z``) the reduced gradient is split
        along the eigenvectors of ``Z' P_FF Z``: a component in its null space (proxy kernels
        have low rank, so ``P_FF`` is often singular) is a direction of linear decrease, followed
        to the first bound; otherwise the Newton step is taken, cut at the first bound. A
        variable reaching a bound is fixed; at a full Newton step the bound variable whose
        multiplier has the wrong sign is released (if any). The point stays feasible and the
        objective never increases.
        """
        lo, hi = self.w_lo, self.w_hi
        span = hi - lo
        free = (w > lo + 1e-12 * span) & (w < hi - 1e-12 * span)
        w = w.copy()
        G = G.copy()
        total = float(np.sum(w))
        gscale = max(1.0, float(np.max(np.abs(q))))
        for _ in range(min(80, 2 * w.size)):
            F = np.flatnonzero(free)
            d = None
            if F.size >= 2:
                Z = np.linalg.qr(np.ones((F.size, 1)), mode="complete")[0][:, 1:]
                R = Z.T @ P[np.ix_(F, F)] @ Z
                ev, V = np.linalg.eigh(0.5 * (R + R.T))
                g = V.T @ (Z.T @ G[F])
                flat = ev <= 1e-10 * max(float(ev.max(initial=0.0)), 1e-300)
                if np.linalg.norm(g[flat]) > 1e-12 * gscale:
                    d = -(Z @ (V[:, flat] @ g[flat]))  # zero curvature: go to a bound
                    newton = False
                elif np.linalg.norm(g) > 1e-15 * gscale:
                    d = -(Z @ (V[:, ~flat] @ (g[~flat] / ev[~flat])))
                    newton = True
            if d is not None and float(G[F] @ d) < 0:
                with np.errstate(divide="ignore", invalid="ignore"):
                    up = np.where(d > 0, (hi[F] - w[F]) / d, np.inf)
                    down = np.where(d < 0, (lo[F] - w[F]) / d, np.inf)
                ratios = np.minimum(up, down)
                k = int(np.argmin(ratios))
                step = float(ratios[k]) if not newton else min(1.0, float(ratios[k]))
                if not np.isfinite(step):
                    break
                w[F] = np.clip(w[F] + step * d, lo[F], hi[F])
                G += P[:, F] @ (step * d)
                if not newton or step < 1.0:
                    j = F[k]
                    w[j] = hi[j] if d[k] > 0 else lo[j]
                    free[j] = False
                    continue
            # stationary on F: release the bound variable with the worst multiplier
            g_star = float(np.mean(G[F])) if F.size else None
            bound = np.flatnonzero(~free)
            if g_star is None or bound.size == 0:
                break
            at_lo = w[bound] <= lo[bound]
            # at lo: optimal if G_j >= g*; at hi: optimal if G_j <= g*
            wrong = np.where(at_lo, g_star - G[bound], G[bound] - g_star)
            k = int(np.argmax(wrong))
            if wrong[k] <= 1e-13 * gscale:
                break
            free[bound[k]] = True
        # rounding in the steps may move sum(w) by ulps: restore it on the most interior variable
        inner = np.minimum(w - lo, hi - w)
        j = int(np.argmax(inner))
        w[j] += total - float(np.sum(w))
        w[j] = min(max(w[j], lo[j]), hi[j])
        return w

    def kernel_svm(
        self, K: NDArray[np.float64], alpha0: NDArray[np.float64], *, full: bool = False
    ) -> NDArray[np.float64]:
        """The SVM-type QP on one kernel (no proximal term), warm-started from ``alpha0``.

        Its solution ``a`` gives the tightest certified bound from ``K``:
        ``problem.bound_for_kernel(K, a)`` is the primal value of ``a``'s hyperplane, which
        equals ``omega(K)`` at the exact solution and bounds it from above at any ``a``. Any
        ``a`` gives a valid bound, so unless ``full`` the work is capped (4 SMO/Newton rounds).
        """
        t0 = time.perf_counter()
        n = K.shape[0]
        w, iters, _ = self._qp(
            self._P(K),
            self.w_lin,
            self._to_w(alpha0),
            max_smo=None if full else 20 * n,
            rounds=30 if full else 4,
        )
        self.stats.smo_iterations += int(iters)
        self.stats.time_bound_svm += time.perf_counter() - t0
        return self._alpha(w)

    # -- one J evaluation -----------------------------------------------------------------------
    def _evaluate(self, lam: NDArray[np.float64], kernels: list, w0: NDArray[np.float64]):
        t0 = time.perf_counter()
        K = np.zeros_like(kernels[0].gram)
        for weight, k in zip(lam, kernels, strict=True):
            if weight > 0:
                K += weight * k.gram
        P = self._P(K)
        q = self.w_lin
        if self.prox is not None:
            mu, center = self.prox
            P = P + mu * self.E
            q = q + mu * self.acoef * center[self.idx]
        w, iters, viol = self._qp(P, q, w0)
        self.stats.svm_solves += 1
        self.stats.smo_iterations += int(iters)
        if viol > self.tol:
            self.stats.unconverged_svms += 1
        alpha = self._alpha(w)
        u = self.problem.u_coef * alpha
        lin = float(self.problem.linear_coef @ alpha) - self.problem.l1_weight * float(
            np.sum(np.abs(alpha))
        )
        values = np.array([lin - 0.5 * float(u @ (k.gram @ u)) + k.constant for k in kernels])
        if self.prox is not None:
            mu, center = self.prox
            values = values - 0.5 * mu * float(np.sum((alpha - center) ** 2))
        J = float(lam @ values)
        self.stats.time_svm += time.perf_counter() - t0
        return J, values, w, P, None

    def _hessian(self, kernels: list, w: NDArray[np.float64], P: NDArray[np.float64]):
        """Hessian of ``J`` from the free variables of the inner QP (module docstring)."""
        span = np.maximum(self.w_hi - self.w_lo, 1e-300)
        free = np.flatnonzero((w > self.w_lo + 1e-9 * span) & (w < self.w_hi - 1e-9 * span))
        m = len(kernels)
        if free.size < 2:
            return np.zeros((m, m))
        # columns (P_i w)_F of each kernel's quadratic form
        Gm = np.empty((free.size, m))
        wc = self.coef * w
        for i, k in enumerate(kernels):
            Kx = k.gram[np.ix_(self.idx[free], self.idx)]
            Gm[:, i] = self.coef[free] * (Kx @ wc)
        PF = P[np.ix_(free, free)]
        # null space of the equality constraint sum_F d = 0
        f = free.size
        Nq = np.linalg.qr(np.ones((f, 1)), mode="complete")[0][:, 1:]
        R = Nq.T @ PF @ Nq
        ev, V = np.linalg.eigh(0.5 * (R + R.T))
        keep = ev > 1e-10 * max(float(ev.max(initial=0.0)), 1e-300)
        B = Nq @ (V[:, keep] / np.sqrt(ev[keep]))
        X = B.T @ Gm
        return X.T @ X

    # -- the solve -----------------------------------------------------------------------------
    def solve(self, kernels: list, gap_tol: float, prox=None):
        """Minimise ``J`` over the simplex until ``J - min_i L_i <= gap_tol`` (or ``max_steps``).

        Returns ``(t, alpha, lambda, gap)`` with ``t = J(lambda)`` (the master's upper value),
        ``alpha`` the inner solution at the final weights and ``gap`` the master's own gap.
        """
        t_start = time.perf_counter()
        self.prox = prox
        m = len(kernels)
        lam = np.array([self.lam.get(k.origin, 0.0) for k in kernels])
        if lam.sum() <= 0:
            lam = np.full(m, 1.0 / m)
        lam = np.maximum(lam, 0.0)
        lam /= lam.sum()
        J, values, w, P, _ = self._evaluate(lam, kernels, self.w)
        steps = 0
        gap = J - float(values.min())
        while gap > gap_tol and steps < self.max_steps:
            if self._out_of_time():
                break
            steps += 1
            if self.step == "newton":
                new = self._newton_step(lam, J, values, w, P, kernels)
            else:
                new = self._simplemkl_step(lam, J, values, w, kernels)
            if new is None:
                break
            lam, J, values, w, P = new
            gap = J - float(values.min())
        self.stats.master_iterations += steps
        self.w = w
        self.last_values = values
        if self.prox is not None:
            mu, center = self.prox
            self.last_values = values + 0.5 * mu * float(np.sum((self._alpha(w) - center) ** 2))
        self.lam = {k.origin: float(v) for k, v in zip(kernels, lam, strict=True)}
        self.stats.time_master += time.perf_counter() - t_start
        self.stats.gaps.append(gap)
        return J, self._alpha(w), lam, gap

    def _newton_step(self, lam, J, values, w, P, kernels):
        # dJ/dlambda_i = L_i - (terms common to all i): a common shift does not change steps on
        # the simplex
        grad = values - float(np.mean(values))
        H = self._hessian(kernels, w, P)
        m = lam.size
        ridge = 1e-12 * max(float(np.trace(H)) / m, 1e-300)
        Hr = H + ridge * np.eye(m)
        target = _simplex_qp(Hr, grad - Hr @ lam, lam)
        d = target - lam
        slope = float(grad @ d)
        if not slope < 0:
            # no descent direction by the model: fall back to the best vertex
            target = np.zeros(m)
            target[int(np.argmin(values))] = 1.0
            d = target - lam
            slope = float(grad @ d)
            if not slope < 0:
                return None
        s = 1.0
        for _ in range(40):
            if self._out_of_time():
                return None
            trial = np.maximum(lam + s * d, 0.0)
            trial /= trial.sum()
            J2, values2, w2, P2, _ = self._evaluate(trial, kernels, w)
            if J2 <= J + 1e-4 * s * slope:
                return trial, J2, values2, w2, P2
            s *= 0.5
        logger.debug(
            "mkl newton: no decrease along d (slope %.3e, J %.12g, last trial %.12g, lam %s, d %s)",
            slope,
            J,
            J2,
            lam,
            d,
        )
        return None

    def _simplemkl_step(self, lam, J, values, w, kernels):
        """One outer iteration of SimpleMKL (Rakotomamonjy et al. 2008, Algorithm 1)."""
        grad = values - float(np.mean(values))
        mu = int(np.argmax(lam))
        D = np.zeros_like(lam)
        for k in range(lam.size):
            if k == mu:
                continue
            if lam[k] > 0 or grad[k] - grad[mu] < 0:
                D[k] = -(grad[k] - grad[mu])
        D[mu] = -float(np.sum(D))
        if float(grad @ D) >= 0 or not np.any(D):
            return None
        cur = (lam, J, values, w)
        # descend to the boundary of the simplex while J decreases (SimpleMKL's inner loop)
        for _ in range(lam.size):
            neg = D < 0
            if not np.any(neg) or self._out_of_time():
                break
            ratios = np.where(neg, -cur[0] / np.where(neg, D, -1.0), np.inf)
            nu = int(np.argmin(ratios))
            gmax = float(ratios[nu])
            trial = np.maximum(cur[0] + gmax * D, 0.0)
            trial[nu] = 0.0
            trial /= trial.sum()
            J2, values2, w2, _, _ = self._evaluate(trial, kernels, cur[3])
            if J2 >= cur[1]:
                break
            cur = (trial, J2, values2, w2)
            D = D.copy()
            # Keep sum(D) = 0, a direction on the simplex: D_mu = -(sum of the others), as the
            # authors' SimpleMKL code recomputes it (desc(coord) = -sum of the rest). The printed
            # Algorithm 1's "D_mu - D_nu" leaves the simplex (the renormalised trial hid that).
            D[mu] += D[nu]
            D[nu] = 0.0
        lam0, J0, _, w0 = cur
        neg = D < 0
        if not np.any(neg):
            return lam0, J0, cur[2], w0, None
        gmax = float(np.min(np.where(neg, -lam0 / np.where(neg, D, -1.0), np.inf)))
        # golden-section line search on [0, gmax] (SimpleMKL's last step)
        ratio = 0.5 * (np.sqrt(5.0) - 1.0)
        a, b = 0.0, gmax
        best = (lam0, J0, cur[2], w0)
        for _ in range(12):
            if self._out_of_time():
                break
            s = b - ratio * (b - a)
            t = a + ratio * (b - a)
            res = []
            for step in (s, t):
                trial = np.maximum(lam0 + step * D, 0.0)
                trial /= trial.sum()
                J2, values2, w2, _, _ = self._evaluate(trial, kernels, best[3])
                res.append((trial, J2, values2, w2))
                if J2 < best[1]:
                    best = (trial, J2, values2, w2)
            if res[0][1] <= res[1][1]:
                b = t
            else:
                a = s
        lam1, J1, values1, w1 = best
        return lam1, J1, values1, w1, None
