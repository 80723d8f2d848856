"""Analytic center cutting plane method (ACCPM) for the proxy-kernel problems.

Paper 004, Sect. 3.3, Algorithm 2. The localization set starts as the feasible set
``L_0 = {c'a = d, lower <= a <= upper}`` (``{y'a = 0, 0 <= a <= C}`` for eq. 7). At each iteration

1. the analytic center ``a_k`` of ``L_k`` is computed by a damped Newton method on the log
   barrier of the box bounds and the cuts, with the equality constraint kept in the KKT system;
2. the exact gradient (a supergradient for the l1 term of SVR) ``g_k`` at ``a_k`` gives the cut
   ``g_k'(a - a_k) >= 0``, which keeps every maximiser because ``f`` is concave;
3. when there are more than ``max_cuts`` cuts (``3n`` by default, the paper's rule of thumb), the
   least relevant ones are dropped by the relevance measure (12),
   ``a_j' H^-1 a_j / (b_j - a_j'x)^2`` with ``H`` the barrier Hessian at the center;
4. the solver stops on the certified gap of the core (:class:`SolverMonitor`), which is valid at
   every center, and returns the best point seen. The paper's ellipsoid bound is computed too
   (``info["ellipsoid_bound"]``) and is the stopping rule with ``stop="ellipsoid"``.

Numerical choices (why): the Newton systems are solved after a symmetric Jacobi scaling, because
once the centers approach an optimum with many coordinates at their bounds (typical for SVMs)
the box terms of the Hessian span many orders of magnitude; cuts are stored with unit normals so
nearly parallel cuts do not dominate by scale; after a cut is added the previous center lies on
its boundary, so it is moved into the new half-space by a step inside the Dikin ellipsoid of the
old barrier (strictly feasible for every old constraint) before Newton resumes (warm start).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from indefsvm._validation import blas_limit
from indefsvm.projection import project_hyperplane_box
from indefsvm.protocols import DenseProblem
from indefsvm.result import SolveResult
from indefsvm.solvers._monitor import SolverMonitor

#: Stopping rules of :func:`analytic_center_cutting_plane`.
STOP_RULES = ("certified", "ellipsoid")


class LocalizationSetEmpty(RuntimeError):
    """Raised when the localization set has no interior left at working precision."""


class _Localization:
    """The polyhedron ``{c'x = d, lower <= x <= upper, A x <= b}`` and its analytic center."""

    def __init__(
        self,
        lower: NDArray[np.float64],
        upper: NDArray[np.float64],
        c: NDArray[np.float64],
        d: float,
        capacity: int,
    ) -> None:
        n = lower.shape[0]
        self.n = n
        self.lower = lower
        self.upper = upper
        self.c = c
        self.d = d
        self.A = np.empty((capacity, n))
        self.b = np.empty(capacity)
        self.m = 0
        self.chol: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None

    # -- barrier ------------------------------------------------------------------------------
    def slacks(self, x: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
        A, b = self.A[: self.m], self.b[: self.m]
        return x - self.lower, self.upper - x, b - A @ x

    @staticmethod
    def barrier(sl: NDArray, su: NDArray, s: NDArray) -> float:
        if sl.min() <= 0 or su.min() <= 0 or (s.size and s.min() <= 0):
            return np.inf
        return -float(np.sum(np.log(sl)) + np.sum(np.log(su)) + np.sum(np.log(s)))

    def factor(self, sl: NDArray, su: NDArray, s: NDArray) -> None:
        """Cholesky factor of the Jacobi-scaled barrier Hessian ``A'S^-2A + box terms``."""
        A = self.A[: self.m]
        As = A / s[:, None]
        H = As.T @ As
        H[np.diag_indices_from(H)] += 1.0 / sl**2 + 1.0 / su**2
        scale = 1.0 / np.sqrt(np.diag(H))
        Hs = (H * scale[:, None]) * scale[None, :]
        ridge = 0.0
        for _ in range(8):
            try:
                L = scipy.linalg.cho_factor(
                    Hs if ridge == 0.0 else Hs + ridge * np.eye(self.n), lower=True
                )
                break
            except np.linalg.LinAlgError:
                # Nearly parallel cuts can make the scaled Hessian numerically singular; a tiny
                # ridge keeps the step a descent direction of the barrier.
                ridge = 1e-14 if ridge == 0.0 else ridge * 100.0
        else:  # pragma: no cover - Hs has unit diagonal, so a ridge of 1e-2 always works
            raise LocalizationSetEmpty("the barrier Hessian could not be factored")
        self.chol = (L, scale)

    def solve(self, r: NDArray[np.float64]) -> NDArray[np.float64]:
        """``H^-1 r`` for one vector or the columns of a matrix."""
        assert self.chol is not None
        L, scale = self.chol
        if r.ndim == 1:
            return scale * scipy.linalg.cho_solve(L, scale * r)
        return scale[:, None] * scipy.linalg.cho_solve(L, scale[:, None] * r)

    def reduced_solve(self, r: NDArray[np.float64]) -> NDArray[np.float64]:
        """``dx`` solving ``H dx + c w = r, c'dx = 0`` (the KKT system of the equality)."""
        v1 = self.solve(r)
        v2 = self.solve(self.c)
        return v1 - v2 * (float(self.c @ v1) / float(self.c @ v2))

    def max_step(self, x: NDArray, dx: NDArray, sl: NDArray, su: NDArray, s: NDArray) -> float:
        """Largest ``t`` keeping every slack non-negative along ``x + t dx``."""
        rates = [dx, -dx]
        slacks = [sl, su]
        if self.m:
            rates.append(-(self.A[: self.m] @ dx))
            slacks.append(s)
        t = np.inf
        for rate, slack in zip(rates, slacks, strict=True):
            dec = rate < 0
            if np.any(dec):
                t = min(t, float(np.min(slack[dec] / -rate[dec])))
        return t

    def center(
        self, x: NDArray[np.float64], *, tol: float, max_steps: int
    ) -> tuple[NDArray[np.float64], int]:
        """Damped Newton on the barrier from the strictly feasible ``x`` (warm start).

        Returns the (approximate) analytic center and the number of Newton steps. The Hessian
        factor at the returned point's predecessor is kept for the relevance measure and the
        re-centering step.
        """
        sl, su, s = self.slacks(x)
        phi = self.barrier(sl, su, s)
        if not np.isfinite(phi):
            raise LocalizationSetEmpty("the starting point is not strictly inside")
        steps = 0
        for steps in range(1, max_steps + 1):  # noqa: B007 - steps is returned
            grad = -1.0 / sl + 1.0 / su
            if self.m:
                grad += self.A[: self.m].T @ (1.0 / s)
            self.factor(sl, su, s)
            dx = -self.reduced_solve(grad)
            decrement_sq = -float(grad @ dx)
            if not np.isfinite(decrement_sq):
                raise LocalizationSetEmpty("non-finite Newton step")
            if decrement_sq <= 2.0 * tol:
                break
            t_max = self.max_step(x, dx, sl, su, s)
            # Backtracking from the full step (kept strictly inside); the self-concordant damped
            # step 1/(1 + lambda) is the floor below which the Armijo test always passes.
            t = min(1.0, 0.99 * t_max)
            t_floor = 1.0 / (1.0 + np.sqrt(decrement_sq))
            accepted = False
            while t > 1e-14:
                x_new = x + t * dx
                sl_new, su_new, s_new = self.slacks(x_new)
                phi_new = self.barrier(sl_new, su_new, s_new)
                if phi_new <= phi - 0.01 * t * decrement_sq or (
                    np.isfinite(phi_new) and phi_new <= phi and decrement_sq < 1e-6
                ):
                    accepted = True
                    break
                t = max(0.5 * t, t_floor) if t > t_floor else 0.5 * t
            if not accepted:
                # No decrease at working precision: the point is as centered as it gets.
                break
            x, sl, su, s, phi = x_new, sl_new, su_new, s_new, phi_new
        return x, steps

    # -- cuts --------------------------------------------------------------------------------
    def add_cut(self, a: NDArray[np.float64], b: float) -> None:
        self.A[self.m] = a
        self.b[self.m] = b
        self.m += 1

    def relevance(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Relevance measure (12) of each cut at ``x``: ``a_j' H^-1 a_j / s_j^2``.

        ``H^-1`` is the inverse restricted to the hyperplane ``c'dx = 0`` (the localization set
        lies in it). A cut with a small value is far from ``x`` relative to the ellipsoid
        defined by the barrier Hessian, i.e. nearly redundant.
        """
        A = self.A[: self.m]
        s = self.b[: self.m] - A @ x
        HA = self.solve(A.T)
        v2 = self.solve(self.c)
        quad = np.einsum("ij,ji->i", A, HA) - (A @ v2) ** 2 / float(self.c @ v2)
        return np.maximum(quad, 0.0) / s**2

    def keep(self, index: NDArray[np.intp]) -> None:
        k = index.size
        self.A[:k] = self.A[index]
        self.b[:k] = self.b[index]
        self.m = k


def _interior_start(problem: DenseProblem) -> NDArray[np.float64] | None:
    """A point strictly inside the box on the hyperplane, or None if there is none."""
    lo, up = problem.lower, problem.upper
    mid = 0.5 * (lo + up)
    for frac in (0.25, 0.1, 0.01, 1e-4):
        margin = frac * (up - lo)
        try:
            x = project_hyperplane_box(
                mid, problem.eq_coef, problem.eq_rhs, lo + margin, up - margin
            )
        except ValueError:
            continue
        if np.all(x > lo) and np.all(x < up):
            return x
    return None


def analytic_center_cutting_plane(
    problem: DenseProblem,
    monitor: SolverMonitor,
    *,
    max_cuts: int | None = None,
    newton_tol: float = 1e-3,
    max_newton: int = 50,
    recenter_radius: float = 0.5,
    stop: str = "certified",
    blas_threads: int | None = 1,
) -> SolveResult:
    """Maximise a proxy-kernel problem by ACCPM (paper 004, Sect. 3.3, Algorithm 2).

    Parameters
    ----------
    problem : DenseProblem
        Problem of any kind (svc, svr, oneclass, perturb, scalar or vector rho).
    monitor : SolverMonitor
        Certified-gap stopping rule, history and LIBSVM checks.
    max_cuts : int, optional
        Largest number of cuts kept (step 3 of Algorithm 2). Default ``3 n``, the paper's rule of
        thumb; the box bounds of ``L_0`` are never dropped.
    newton_tol : float
        The analytic center is accepted when half the squared Newton decrement is below this.
    max_newton : int
        Newton steps per center at most.
    recenter_radius : float
        Radius, in the Dikin-ellipsoid metric of the previous barrier, of the step that moves the
        previous center strictly inside the new cut (in (0, 1): stays feasible for the old
        constraints).
    stop : {"certified", "ellipsoid"}
        ``"certified"``: stop on the core's certified gap only. ``"ellipsoid"``: also stop when
        the paper's ellipsoid bound ``f(x) + m sqrt(g' H^-1 g)`` (recorded in ``info`` and
        passed to the callback as ``ellipsoid_bound``) is within tol of the best objective; the
        status is then ``"converged"`` only if the certified gap agrees.
    blas_threads : int or None
        BLAS threads while the solver runs (threadpoolctl; None leaves BLAS alone). The Newton
        systems are n x n with up to 3n cuts: on an idle 2-core machine a second thread helps
        them somewhat, but on a shared one OpenBLAS's threads wait for each other and the
        centers become many times slower (n = 500, load ~19 on 2 cores: 19 centers in 60 s
        with 2 threads, 296 with one; docs/benchmarks.md), hence the default 1.

    Returns
    -------
    SolveResult
        Best center found; ``info`` has the time split (analytic centers, gradients, cut
        management), Newton steps and the number of cuts.
    """
    with blas_limit(blas_threads):
        return _accpm(problem, monitor, max_cuts, newton_tol, max_newton, recenter_radius, stop)


def _accpm(
    problem: DenseProblem,
    monitor: SolverMonitor,
    max_cuts: int | None,
    newton_tol: float,
    max_newton: int,
    recenter_radius: float,
    stop: str,
) -> SolveResult:
    """Body of :func:`analytic_center_cutting_plane` (run inside the BLAS thread limit)."""
    n = problem.n
    if max_cuts is None:
        max_cuts = 3 * n
    if int(max_cuts) != max_cuts or max_cuts < 1:
        raise ValueError(f"max_cuts must be a positive integer; got {max_cuts!r}.")
    max_cuts = int(max_cuts)
    if not newton_tol > 0:
        raise ValueError(f"newton_tol must be > 0; got {newton_tol!r}.")
    if int(max_newton) != max_newton or max_newton < 1:
        raise ValueError(f"max_newton must be a positive integer; got {max_newton!r}.")
    if not 0 < recenter_radius < 1:
        raise ValueError(f"recenter_radius must be in (0, 1); got {recenter_radius!r}.")

    if stop not in STOP_RULES:
        raise ValueError(f"stop must be one of {STOP_RULES}; got {stop!r}.")
    times = {"center": 0.0, "gradient": 0.0, "cuts": 0.0}
    best_ellipsoid = np.inf
    newton_total = 0
    status_note = None
    x = _interior_start(problem)
    if x is None:
        # The feasible set is a single point (e.g. one-class with nu = 1): nothing to cut.
        p = problem.initial_point()
        ev = problem.evaluate(p)
        monitor.offer(ev)
        while not monitor.end_iteration(current_objective=ev.objective):
            pass
        return monitor.finish(info={"note": "the feasible set has no interior; single point"})

    loc = _Localization(
        problem.lower.astype(np.float64),
        problem.upper.astype(np.float64),
        problem.eq_coef.astype(np.float64),
        problem.eq_rhs,
        max_cuts + 1,
    )
    t0 = time.perf_counter()
    x, steps = loc.center(x, tol=newton_tol, max_steps=max_newton)
    times["center"] += time.perf_counter() - t0
    newton_total += steps
    while True:
        t0 = time.perf_counter()
        # The center satisfies c'x = d up to rounding; the exact projection (a change of the
        # order of machine precision) makes the evaluated point feasible, so its objective is a
        # certified lower bound.
        p = problem.project(x)
        ev = problem.evaluate(p)
        g = ev.gradient
        if problem.l1_weight:
            g = g - problem.l1_weight * np.sign(p)
        times["gradient"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        # The paper's bound (Sect. 3.3, stopping criterion): the localization set lies in the
        # ellipsoid {(z - x)'H(z - x) <= m^2} around its analytic center (m inequalities), so
        # f <= f(x) + m sqrt(g' H^-1 g) there (first-order model of the concave f). It is exact
        # only at the exact center, so it is recorded, not offered as a certified bound.
        q = float(g @ loc.reduced_solve(g)) if loc.chol is not None else np.inf
        ellipsoid = ev.objective + (2 * n + loc.m) * np.sqrt(max(q, 0.0))
        best_ellipsoid = min(best_ellipsoid, ellipsoid)
        times["cuts"] += time.perf_counter() - t0
        monitor.offer(ev)
        if monitor.end_iteration(
            current_objective=ev.objective,
            n_cuts=loc.m,
            newton_steps=steps,
            ellipsoid_bound=ellipsoid,
        ):
            break
        if stop == "ellipsoid" and best_ellipsoid - monitor.objective <= monitor.tol * max(
            1.0, abs(monitor.objective)
        ):
            status_note = "the paper's ellipsoid stopping rule holds"
            break

        t0 = time.perf_counter()
        g_red = g - loc.c * (float(loc.c @ g) / float(loc.c @ loc.c))
        g_norm = float(np.linalg.norm(g_red))
        if not np.isfinite(g_norm):
            raise FloatingPointError("non-finite gradient at an analytic center")
        if g_norm <= 1e-300:
            # The gradient is normal to the feasible hyperplane at an interior point: the center
            # maximises f over the feasible set, the certified bound says how well.
            status_note = "zero gradient on the hyperplane at an interior center"
            monitor.conclude(status_note)
            break
        # Cut g'(a - p) >= 0 written as a'x <= b with a unit normal (the equality part of g is
        # constant on the feasible set, so only the reduced gradient matters).
        a_new = -g_red / g_norm
        b_new = float(a_new @ p)
        if loc.m >= max_cuts:
            rel = loc.relevance(x)
            keep = np.sort(np.argsort(rel)[::-1][: max_cuts - 1])
            loc.keep(keep)
        # Move the center into the new half-space: a step in the Dikin ellipsoid of the current
        # barrier along the direction that increases the new slack fastest.
        dx = loc.reduced_solve(-a_new)
        norm_h = float(-a_new @ dx)
        moved = False
        if norm_h > 0 and np.isfinite(norm_h):
            radius = recenter_radius
            sl, su, s = loc.slacks(x)
            t_max = loc.max_step(x, dx, sl, su, s)
            step = min(radius / np.sqrt(norm_h), 0.9 * t_max)
            x_try = x + step * dx
            if b_new - float(a_new @ x_try) > 0:
                x = x_try
                moved = True
        times["cuts"] += time.perf_counter() - t0
        if not moved:
            status_note = "the localization set has no interior left at working precision"
            break
        loc.add_cut(a_new, b_new)
        t0 = time.perf_counter()
        try:
            x, steps = loc.center(x, tol=newton_tol, max_steps=max_newton)
        except LocalizationSetEmpty as exc:
            status_note = f"analytic center failed: {exc}"
            times["center"] += time.perf_counter() - t0
            break
        times["center"] += time.perf_counter() - t0
        newton_total += steps

    if status_note is not None:
        monitor.conclude(f"ACCPM stopped early: {status_note}; loosen tol or use method='pg'")
    iters = max(monitor.n_iter, 1)
    info = {
        "max_cuts": max_cuts,
        "n_cuts": loc.m,
        "newton_steps": newton_total,
        "time_center": times["center"],
        "time_gradient": times["gradient"],
        "time_cuts": times["cuts"],
        "time_center_per_iter": times["center"] / iters,
        "time_gradient_per_iter": times["gradient"] / iters,
        "ellipsoid_bound": best_ellipsoid,
    }
    if status_note is not None:
        info["note"] = status_note
    return monitor.finish(info=info)
