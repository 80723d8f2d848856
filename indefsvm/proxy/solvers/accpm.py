"""Analytic center cutting plane methods (ACCPM) for the proxy-kernel problems.

Two variants share the monitor (certified gap, statuses) and the cut pruning by relevance (12):

``variant="proximal"`` (default): proximal ACCPM in epigraph space
    (Babonneau, Beltran, Haurie, Tadonki & Vial, "Proximal-ACCPM"; du Merle, Goffin & Vial).
    The cuts ``t <= f(a_j) + g_j'(a - a_j)`` use what the paper's cuts throw away, the objective
    VALUES: with the objective cut ``t >= f_best`` they describe the set where the model promises
    an improvement, and the proximal term ``rho_p/2 ||a - a_best||^2`` keeps the centres near
    the best point, with ``rho_p`` adapted like a trust region (halved after an improving
    "serious" step, doubled after a "null" step). Numerical choices (why):

    * the Newton matrix is ``D + E'E`` with ``D`` diagonal and ``E`` the k cut rows: it is solved
      in the cut space by the Woodbury identity, ``O(n k^2)`` per step with a Cholesky factor of
      a k x k matrix whose eigenvalues are >= 1, instead of an n x n factorization (k <= 100
      cuts by default);
    * warm starts: the previous centre, with ``t`` lowered under every cut when the model still
      promises an improvement there, else with infeasible-start Newton steps (the cut slacks are
      variables tied to ``(a, t)`` by linear equations; a full step satisfies them exactly), so
      no re-centering step or phase I is needed after a cut;
    * cuts are stored as their value at the proximal centre minus ``f_best`` and ``t`` is the
      objective-cut slack: small differences, so the slacks keep their precision when ``f`` is
      dominated by the constant ``f(0) = rho ||(K0)_-||_F^2``;
    * the box barrier has a small weight (``box_weight``, 1e-2): at an SVM optimum many
      coordinates sit at their bounds, and a unit weight keeps the centres far from them;
    * once the model is exhausted at working precision (the objective is flat to rounding
      around the best point: suboptimality is quadratic in the distance, the certified gap
      linear), the bundle restarts from its newest cut, and accelerated proximal-gradient steps
      from the best point ("polish", counted in ``info["polish_steps"]``) put the coordinates
      that belong on the bounds exactly there; their evaluations go to the monitor and their
      cuts to the bundle. The run stops ("stalled", with a warning) after 5 restarts that do not
      shrink the certified gap.

    The known part of the objective is not modelled separately: ``l(a) - 1/2 u'K0 u`` (notes
    §1) is not concave for an indefinite ``K0``, and the only concave quadratic lower curvature
    available everywhere is ``S K*(a) S``, which changes with ``a``; a linear known part changes
    nothing (the analytic centre is invariant under the change of variables ``t -> t - l(a)``).

``variant="paper"``: Algorithm 2 as published, unchanged (below).

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
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from indefsvm.linalg.projection import project_hyperplane_box
from indefsvm.proxy.problems import Evaluation
from indefsvm.proxy.protocols import DenseProblem
from indefsvm.proxy.result import SolveResult
from indefsvm.proxy.solvers._monitor import SolverMonitor
from indefsvm.proxy.solvers.pg import proximal_step
from indefsvm.threads import solver_blas_threads
from indefsvm.utils.validation import blas_limit

#: Stopping rules of :func:`analytic_center_cutting_plane`.
STOP_RULES = ("certified", "ellipsoid")
#: Variants of :func:`analytic_center_cutting_plane`.
VARIANTS = ("paper", "proximal")
#: Default cap on the cuts of the proximal variant (its Newton systems cost O(n k^2)).
PROXIMAL_MAX_CUTS = 100


class LocalizationSetEmpty(RuntimeError):
    """Raised when the localization set has no interior left at working precision."""


def _backtracking_steps(decrement_sq: float, step_max: float) -> Iterator[float]:
    """Trial steps of the damped Newton line search of both analytic-centre methods.

    Backtracking from the full step (kept strictly inside: ``0.99 step_max``) by halving, but
    never below the self-concordant damped step ``1/(1 + lambda)`` (``lambda^2`` the Newton
    decrement) while above it: below that floor the Armijo test always passes. Ends under
    ``1e-14`` (no decrease at working precision).
    """
    step = min(1.0, 0.99 * step_max)
    floor = 1.0 / (1.0 + np.sqrt(max(decrement_sq, 0.0)))
    while step > 1e-14:
        yield step
        step = max(0.5 * step, floor) if step > floor else 0.5 * step


def _sufficient_decrease(phi_new: float, phi: float, step: float, decrement_sq: float) -> bool:
    """Armijo test of a trial step of :func:`_backtracking_steps` on the barrier ``phi``.

    Near the centre (decrement under 1e-6) any finite non-increase is accepted: the Armijo
    margin is then below the rounding of ``phi``.
    """
    return bool(
        phi_new <= phi - 0.01 * step * decrement_sq
        or (np.isfinite(phi_new) and phi_new <= phi and decrement_sq < 1e-6)
    )


def _step_to_boundary(rates_and_slacks: Iterable[tuple[NDArray, NDArray]]) -> float:
    """Largest ``t`` keeping every ``slack + t rate`` non-negative (inf if none decreases)."""
    t = np.inf
    for rate, slack in rates_and_slacks:
        dec = rate < 0
        if np.any(dec):
            t = min(t, float(np.min(slack[dec] / -rate[dec])))
    return t


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
        return _step_to_boundary(zip(rates, slacks, strict=True))

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
            for t in _backtracking_steps(decrement_sq, t_max):
                x_new = x + t * dx
                sl_new, su_new, s_new = self.slacks(x_new)
                phi_new = self.barrier(sl_new, su_new, s_new)
                if _sufficient_decrease(phi_new, phi, t, decrement_sq):
                    break
            else:
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


def _single_point(problem: DenseProblem, monitor: SolverMonitor) -> SolveResult:
    """The feasible set is a single point (e.g. one-class with nu = 1): nothing to cut."""
    p = problem.initial_point()
    ev = problem.evaluate(p)
    monitor.offer(ev)
    while not monitor.end_iteration(current_objective=ev.objective):
        pass
    return monitor.finish(info={"note": "the feasible set has no interior; single point"})


def _initial_localization(
    problem: DenseProblem, localization: type, capacity: int, **weights: float
) -> tuple[NDArray[np.float64], Any] | None:
    """Interior start and ``L_0 = {c'a = d, lower <= a <= upper}`` with room for ``capacity`` cuts.

    Both variants start the same way from the problem's feasible set (``localization`` is
    :class:`_Localization` or :class:`_EpigraphLocalization`, ``weights`` the latter's barrier
    weights). None when the set has no interior: the caller then returns :func:`_single_point`.
    """
    x = _interior_start(problem)
    if x is None:
        return None
    loc = localization(
        problem.lower.astype(np.float64),
        problem.upper.astype(np.float64),
        problem.eq_coef.astype(np.float64),
        problem.eq_rhs,
        capacity,
        **weights,
    )
    return x, loc


def _evaluate_with_supergradient(
    problem: DenseProblem, x: NDArray[np.float64]
) -> tuple[NDArray[np.float64], Evaluation, NDArray[np.float64]]:
    """The feasible point ``p`` at ``x``, its evaluation and the supergradient of the cut.

    ``p`` is the exact projection of ``x`` onto the feasible set; the cut's supergradient is
    the gradient minus the l1 term's ``l1_weight * sign(p)`` (SVR), as in both variants' cuts.
    """
    p = problem.project(x)
    ev = problem.evaluate(p)
    g = ev.gradient
    if problem.l1_weight:
        g = g - problem.l1_weight * np.sign(p)
    return p, ev, g


def _timing_info(times: dict[str, float], monitor: SolverMonitor) -> dict[str, float]:
    """``info`` entries of the time split: ``time_<phase>`` and the per-iteration means."""
    iters = max(monitor.n_iter, 1)
    info = {f"time_{phase}": seconds for phase, seconds in times.items()}
    info["time_center_per_iter"] = times["center"] / iters
    info["time_gradient_per_iter"] = times["gradient"] / iters
    return info


def _finish(monitor: SolverMonitor, status_note: str | None, info: dict[str, Any]) -> SolveResult:
    """End of both variants: report an early stop by the solver's own rule, then finish.

    The note goes to the monitor, which decides the status (:meth:`SolverMonitor.conclude`),
    and to ``info``.
    """
    if status_note is not None:
        monitor.conclude(f"ACCPM stopped early: {status_note}; loosen tol or use method='pg'")
        info["note"] = status_note
    return monitor.finish(info=info)


def analytic_center_cutting_plane(
    problem: DenseProblem,
    monitor: SolverMonitor,
    *,
    max_cuts: int | None = None,
    newton_tol: float = 1e-3,
    max_newton: int = 50,
    recenter_radius: float = 0.5,
    stop: str = "certified",
    variant: str = "proximal",
    box_weight: float = 1e-2,
    objective_weight: float = 1.0,
    prox_update: float = 2.0,
    null_update: float = 2.0,
) -> SolveResult:
    """Maximise a proxy-kernel problem by ACCPM (paper 004, Sect. 3.3, Algorithm 2).

    ``variant="paper"`` is Algorithm 2 as published (central cuts through each center, analytic
    center of the cut polyhedron, pruning by relevance (12)). ``variant="proximal"`` (default)
    is a proximal ACCPM in epigraph space (Babonneau, Beltran, Haurie, Tadonki & Vial;
    du Merle, Goffin & Vial): the cuts ``t <= f(a_j) + g_j'(a - a_j)`` model the objective
    from its values and supergradients, the objective cut ``t >= f_best`` and a proximal term
    ``rho_p/2 ||a - a_best||^2`` keep the centers near the best point, the centers are warm
    started by infeasible-start Newton steps and the Newton systems are solved in the space of
    the cuts (Woodbury); pruning by relevance (12) is kept. Both hand every evaluation to the
    monitor, whose certified gap is the only stopping rule that can report convergence.

    Parameters
    ----------
    problem : DenseProblem
        Problem of any kind (svc, svr, oneclass, perturb, scalar or vector rho).
    monitor : SolverMonitor
        Certified-gap stopping rule, history and LIBSVM checks.
    max_cuts : int, optional
        Largest number of cuts kept (step 3 of Algorithm 2). Default ``3 n``, the paper's rule of
        thumb, for ``variant="paper"``; ``min(3 n, 100)`` for ``"proximal"`` (its Newton systems
        cost ``O(n k^2)`` with k cuts). The box bounds of ``L_0`` are never dropped.
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
    variant : {"proximal", "paper"}
        Which ACCPM (see above). The options ``recenter_radius`` and ``stop="ellipsoid"`` belong
        to the paper's variant, ``box_weight``, ``objective_weight``, ``prox_update`` and
        ``null_update`` to the proximal one.
    box_weight : float
        Proximal variant: weight ``mu`` of the log barrier of the box bounds. Small, because at
        an SVM optimum many coordinates sit at their bounds and a unit weight keeps the centers
        ``mu / |g_i|`` times the model gap away from them (n = 500 benchmark: 1e-2 reaches a
        certified 1e-4 in about 2 s, 1 does not reach 1e-3 in 20 s).
    objective_weight : float
        Proximal variant: weight ``w`` of the objective cut's barrier ``-w log(t - f_best)``.
    prox_update, null_update : float
        Proximal variant: the proximal weight ``rho_p`` is divided by ``prox_update`` after a
        step that improves the best objective (a "serious" step) and multiplied by
        ``null_update`` after one that does not, like a trust-region radius. Its first value
        makes the first center a gradient step with the problem's Lipschitz scale.

    Returns
    -------
    SolveResult
        Best center found; ``info`` has the time split (analytic centers, gradients, cut
        management), Newton steps and the number of cuts.

    Notes
    -----
    BLAS runs with the count of ``indefsvm.threads.config_context(n_threads={"blas": k})``,
    else one thread. The Newton systems are n x n with up to 3n cuts: on an idle 2-core machine
    a second thread helps them somewhat, but on a shared one OpenBLAS's threads wait for each
    other and the centers become many times slower (n = 500, load ~19 on 2 cores: 19 centers
    in 60 s with 2 threads, 296 with one; docs/benchmarks.md), hence the default 1.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}; got {variant!r}.")
    if not 0 < recenter_radius < 1:
        raise ValueError(f"recenter_radius must be in (0, 1); got {recenter_radius!r}.")
    if stop not in STOP_RULES:
        raise ValueError(f"stop must be one of {STOP_RULES}; got {stop!r}.")
    if variant == "proximal":
        if stop != "certified":
            raise ValueError(
                f"stop={stop!r} is the paper's ellipsoid rule, defined for variant='paper' "
                "only; the proximal variant stops on the certified gap (stop='certified')."
            )
        n = problem.n
        if max_cuts is None:
            max_cuts = min(3 * n, PROXIMAL_MAX_CUTS)
        _check_options(max_cuts, newton_tol, max_newton)
        for name, value in (("box_weight", box_weight), ("objective_weight", objective_weight)):
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0; got {value!r}.")
        for name, value in (("prox_update", prox_update), ("null_update", null_update)):
            if not (np.isfinite(value) and value >= 1):
                raise ValueError(f"{name} must be a finite number >= 1; got {value!r}.")
        with blas_limit(solver_blas_threads()):
            return _proximal_accpm(
                problem,
                monitor,
                int(max_cuts),
                newton_tol,
                int(max_newton),
                float(box_weight),
                float(objective_weight),
                float(prox_update),
                float(null_update),
            )
    with blas_limit(solver_blas_threads()):
        return _accpm(problem, monitor, max_cuts, newton_tol, max_newton, recenter_radius, stop)


def _check_options(max_cuts: object, newton_tol: float, max_newton: object) -> None:
    if int(max_cuts) != max_cuts or max_cuts < 1:
        raise ValueError(f"max_cuts must be a positive integer; got {max_cuts!r}.")
    if not newton_tol > 0:
        raise ValueError(f"newton_tol must be > 0; got {newton_tol!r}.")
    if int(max_newton) != max_newton or max_newton < 1:
        raise ValueError(f"max_newton must be a positive integer; got {max_newton!r}.")


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
    _check_options(max_cuts, newton_tol, max_newton)
    max_cuts = int(max_cuts)
    if not 0 < recenter_radius < 1:
        raise ValueError(f"recenter_radius must be in (0, 1); got {recenter_radius!r}.")

    if stop not in STOP_RULES:
        raise ValueError(f"stop must be one of {STOP_RULES}; got {stop!r}.")
    times = {"center": 0.0, "gradient": 0.0, "cuts": 0.0}
    best_ellipsoid = np.inf
    newton_total = 0
    status_note = None
    start = _initial_localization(problem, _Localization, max_cuts + 1)
    if start is None:
        return _single_point(problem, monitor)
    x, loc = start
    t0 = time.perf_counter()
    x, steps = loc.center(x, tol=newton_tol, max_steps=max_newton)
    times["center"] += time.perf_counter() - t0
    newton_total += steps
    while True:
        t0 = time.perf_counter()
        # The center satisfies c'x = d up to rounding; the exact projection (a change of the
        # order of machine precision) makes the evaluated point feasible, so its objective is a
        # certified lower bound.
        p, ev, g = _evaluate_with_supergradient(problem, x)
        times["gradient"] += time.perf_counter() - t0
        if not np.all(np.isfinite(g)):
            # Checked before the ellipsoid bound: its solve with the Cholesky factor would
            # otherwise fail first with scipy's unrelated "array must not contain infs or NaNs".
            raise FloatingPointError("non-finite gradient at an analytic center")
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
        cut = _central_cut(loc, p, g)
        if cut is None:
            # The gradient is normal to the feasible hyperplane at an interior point: the center
            # maximises f over the feasible set, the certified bound says how well.
            status_note = "zero gradient on the hyperplane at an interior center"
            monitor.conclude(status_note)
            break
        a_new, b_new = cut
        x_moved = _move_into_cut(loc, x, a_new, b_new, max_cuts, recenter_radius)
        times["cuts"] += time.perf_counter() - t0
        if x_moved is None:
            status_note = "the localization set has no interior left at working precision"
            break
        x = x_moved
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

    info = {
        "max_cuts": max_cuts,
        "n_cuts": loc.m,
        "newton_steps": newton_total,
        **_timing_info(times, monitor),
        "ellipsoid_bound": best_ellipsoid,
    }
    return _finish(monitor, status_note, info)


def _central_cut(
    loc: _Localization, p: NDArray[np.float64], g: NDArray[np.float64]
) -> tuple[NDArray[np.float64], float] | None:
    """The cut ``a'x <= b`` (unit ``a``) of the supergradient ``g`` at ``p``; None if ``g`` is
    normal to the feasible hyperplane."""
    g_red = g - loc.c * (float(loc.c @ g) / float(loc.c @ loc.c))
    g_norm = float(np.linalg.norm(g_red))
    if not np.isfinite(g_norm):
        raise FloatingPointError("non-finite gradient at an analytic center")
    if g_norm <= 1e-300:
        return None
    # Cut g'(a - p) >= 0 written as a'x <= b with a unit normal (the equality part of g is
    # constant on the feasible set, so only the reduced gradient matters).
    a_new = -g_red / g_norm
    return a_new, float(a_new @ p)


def _move_into_cut(
    loc: _Localization,
    x: NDArray[np.float64],
    a_new: NDArray[np.float64],
    b_new: float,
    max_cuts: int,
    recenter_radius: float,
) -> NDArray[np.float64] | None:
    """Drop cuts beyond ``max_cuts - 1``, then move the center strictly into the new cut.

    None when no step in the Dikin ellipsoid gets inside (no interior left).
    """
    if loc.m >= max_cuts:
        rel = loc.relevance(x)
        keep = np.sort(np.argsort(rel)[::-1][: max_cuts - 1])
        loc.keep(keep)
    # Move the center into the new half-space: a step in the Dikin ellipsoid of the current
    # barrier along the direction that increases the new slack fastest.
    dx = loc.reduced_solve(-a_new)
    norm_h = float(-a_new @ dx)
    if norm_h > 0 and np.isfinite(norm_h):
        radius = recenter_radius
        sl, su, s = loc.slacks(x)
        t_max = loc.max_step(x, dx, sl, su, s)
        step = min(radius / np.sqrt(norm_h), 0.9 * t_max)
        x_try = x + step * dx
        if b_new - float(a_new @ x_try) > 0:
            return x_try
    return None


# ---------------------------------------------------------------------------------------------
# Proximal ACCPM in epigraph space (variant="proximal")
# ---------------------------------------------------------------------------------------------
class _EpigraphLocalization:
    """Proximal analytic centre of the localization set in epigraph space ``(a, t)``.

    The set is ``{c'a = d, lower < a < upper, t > theta, t < f_j + g_j'(a - a_j) for every cut}``
    (``theta``: best objective at a feasible point, the lower-bound "objective cut"). Its
    proximal analytic centre minimises

        rho_p/2 ||a - a_best||^2 - mu sum log(box slacks) - w log(t - theta) - sum_j log s_j,
        s_j = h_j + g_j'a - t,  h_j = f(a_j) - g_j'a_j,

    (Babonneau, Beltran, Haurie, Tadonki & Vial's Proximal-ACCPM; du Merle, Goffin & Vial). The
    cut slacks ``s_j`` are Newton variables tied to ``(a, t)`` by linear equations, so a warm start
    whose slacks are violated (the new cut always cuts off the old centre) is repaired by
    infeasible-start Newton steps (Boyd & Vandenberghe, Sect. 10.3): a full step makes the
    residual exactly zero. The Newton matrix is ``D + E'E`` with ``D`` diagonal (box, proximal and
    objective-cut terms) and ``E`` the k x (n+1) cut rows scaled by their slacks; it is solved by
    the Woodbury identity in the k-dimensional cut space (``O(n k^2)``, no n x n matrix).
    """

    def __init__(
        self,
        lower: NDArray[np.float64],
        upper: NDArray[np.float64],
        c: NDArray[np.float64],
        d: float,
        capacity: int,
        *,
        box_weight: float,
        objective_weight: float,
    ) -> None:
        n = lower.shape[0]
        self.n = n
        self.lower, self.upper, self.c, self.d = lower, upper, c, d
        self.G = np.empty((capacity, n))
        self.h = np.empty(capacity)
        self.m = 0
        self.mu = box_weight
        self.w = objective_weight
        self.theta = -np.inf
        self.center_a: NDArray[np.float64] = 0.5 * (lower + upper)
        self.rho = 1.0
        self._woodbury: tuple | None = None

    # -- cuts -------------------------------------------------------------------------------
    def add_cut(self, g: NDArray[np.float64], f: float, p: NDArray[np.float64]) -> None:
        """Cut ``t <= f + g'(a - p)`` (valid for concave f with supergradient g at p)."""
        self.G[self.m] = g
        self.h[self.m] = (f - self.theta) + float(g @ (self.center_a - p))
        self.m += 1

    def move(self, center_a: NDArray[np.float64], theta: float) -> None:
        """New proximal centre and objective cut; cut values are kept relative to them.

        Cuts are stored as their value at the proximal centre minus theta (``h_j``), and the
        variable ``t`` is the objective-cut slack ``f - theta``: every quantity is a small
        difference, so the slacks keep their precision when ``f`` itself is dominated by the
        constant ``f(0)`` (theory.md §10).
        """
        if self.m:
            k = self.m
            self.h[:k] += self.G[:k] @ (center_a - self.center_a) - (theta - self.theta)
        self.center_a = center_a
        self.theta = theta

    def cut_slacks(self, a: NDArray[np.float64], t: float) -> NDArray[np.float64]:
        return self.h[: self.m] + self.G[: self.m] @ (a - self.center_a) - t

    def keep(self, index: NDArray[np.intp]) -> None:
        k = index.size
        self.G[:k] = self.G[index]
        self.h[:k] = self.h[index]
        self.m = k

    # -- barrier pieces ---------------------------------------------------------------------
    def _phi(self, a: NDArray, t: float, s: NDArray) -> float:
        sl, su, st = a - self.lower, self.upper - a, t
        if sl.min() <= 0 or su.min() <= 0 or st <= 0 or (s.size and s.min() <= 0):
            return np.inf
        da = a - self.center_a
        return float(
            0.5 * self.rho * (da @ da)
            - self.mu * (np.sum(np.log(sl)) + np.sum(np.log(su)))
            - self.w * np.log(st)
            - np.sum(np.log(s))
        )

    def _factor(self, a: NDArray, t: float, s: NDArray) -> None:
        """Woodbury pieces of ``H = D + E'E`` (``E_j = (g_j, -1) / s_j``)."""
        sl, su = a - self.lower, self.upper - a
        dinv_a = 1.0 / (self.rho + self.mu * (1.0 / sl**2 + 1.0 / su**2))
        dinv_t = t**2 / self.w
        Ea = self.G[: self.m] / s[:, None]
        Et = -1.0 / s
        # M = I + E D^-1 E' has eigenvalues >= 1: its Cholesky factor always exists.
        M = (Ea * dinv_a[None, :]) @ Ea.T + dinv_t * np.outer(Et, Et)
        M[np.diag_indices_from(M)] += 1.0
        L = None
        if self.m:
            if not np.all(np.isfinite(M)):
                raise LocalizationSetEmpty("non-finite Newton matrix (slacks at rounding level)")
            try:
                L = scipy.linalg.cho_factor(M, lower=True)
            except np.linalg.LinAlgError as exc:
                # Exactly PD in exact arithmetic; fails only when slacks of 1e-15 make the
                # entries so large that the identity is lost to rounding.
                raise LocalizationSetEmpty(f"Newton matrix lost to rounding ({exc})") from exc
        self._woodbury = (dinv_a, dinv_t, Ea, Et, L)

    def _solve(self, ra: NDArray, rt: NDArray) -> tuple[NDArray, NDArray]:
        """``H^-1 r`` for the columns of ``r = (ra; rt)`` (ra: n x q, rt: q)."""
        assert self._woodbury is not None
        dinv_a, dinv_t, Ea, Et, L = self._woodbury
        xa = dinv_a[:, None] * ra
        xt = dinv_t * rt
        if L is None:
            return xa, xt
        v = scipy.linalg.cho_solve(L, Ea @ xa + np.outer(Et, xt))
        return xa - dinv_a[:, None] * (Ea.T @ v), xt - dinv_t * (Et @ v)

    def reduced_solve(self, ra: NDArray, rt: float) -> tuple[NDArray, float]:
        """``dz`` solving ``H dz + (c, 0) lam = r, c'dz_a = 0``."""
        xa, xt = self._solve(np.column_stack([ra, self.c]), np.array([rt, 0.0]))
        ratio = float(self.c @ xa[:, 0]) / float(self.c @ xa[:, 1])
        return xa[:, 0] - ratio * xa[:, 1], float(xt[0] - ratio * xt[1])

    def relevance(self, a: NDArray, t: float, s: NDArray) -> NDArray[np.float64]:
        """Relevance measure (12) of each cut, ``e_j' H^-1 e_j`` with ``e_j = (g_j, -1)/s_j``."""
        self._factor(a, t, s)
        _, _, Ea, Et, _ = self._woodbury
        xa, xt = self._solve(Ea.T, Et)
        return np.einsum("ij,ji->i", Ea, xa) + Et * xt

    # -- centring -----------------------------------------------------------------------------
    def center(
        self, a: NDArray, t: float, s: NDArray, *, tol: float, max_steps: int
    ) -> tuple[NDArray, float, int]:
        """Proximal analytic centre from ``(a, t)`` strictly inside the box and above theta.

        ``s`` (positive) are the starting cut slacks; where they differ from ``h + G a - t`` the
        first Newton steps are infeasible-start steps. Returns the centre and the steps taken.
        """
        if t <= 0 or np.any(a <= self.lower) or np.any(a >= self.upper):
            raise LocalizationSetEmpty("the starting point is not strictly inside")
        r = s - self.cut_slacks(a, t)
        feasible = not np.any(r)
        phi = self._phi(a, t, s) if feasible else np.inf
        steps = 0
        for steps in range(1, max_steps + 1):  # noqa: B007 - steps is returned
            sl, su = a - self.lower, self.upper - a
            inv_s = 1.0 / s
            Gm = self.G[: self.m]
            grad_a = self.rho * (a - self.center_a) - self.mu * (1.0 / sl - 1.0 / su)
            grad_a -= Gm.T @ inv_s
            grad_t = -self.w / t + float(np.sum(inv_s))
            # Infeasible start: the residual r = s - (h + G a - t) adds G'(r / s^2) to the
            # right-hand side (the slack block eliminated from the KKT system).
            ra, rt = -grad_a, -grad_t
            if not feasible:
                rs = r * inv_s**2
                ra = ra + Gm.T @ rs
                rt = rt - float(np.sum(rs))
            try:
                self._factor(a, t, s)
                with np.errstate(all="ignore"):
                    da, dt = self.reduced_solve(ra, rt)
            except (ValueError, FloatingPointError, ZeroDivisionError) as exc:
                # ZeroDivisionError: c'H^-1 c of the equality rounds to 0 when the cut slacks
                # are tiny (e.g. a reduced gradient of 0, where the model gap starts at 1e-14).
                raise LocalizationSetEmpty(f"Newton system lost to rounding ({exc})") from exc
            ds = -r + Gm @ da - dt
            if not (np.all(np.isfinite(da)) and np.isfinite(dt)):
                raise LocalizationSetEmpty("non-finite Newton step")
            decrement_sq = float(-(grad_a @ da) - grad_t * dt)
            if feasible and decrement_sq <= 2.0 * tol:
                break
            # Largest step keeping every slack positive.
            t_max = _step_to_boundary(((da, sl), (-da, su), (ds, s)))
            if dt < 0:
                t_max = min(t_max, t / -dt)
            if not feasible:
                step = min(1.0, 0.9 * t_max)
                a_new = a + step * da
                while step > 1e-14 and (np.any(a_new <= self.lower) or np.any(a_new >= self.upper)):
                    # Rounding can land a tiny box slack on the bound: shorten the step.
                    step *= 0.5
                    a_new = a + step * da
                if step <= 1e-14:
                    break
                a, t, s = a_new, t + step * dt, s + step * ds
                if step == 1.0:
                    # The slack equations are linear: a full step satisfies them exactly.
                    feasible = True
                    s = self.cut_slacks(a, t)
                    if s.size and s.min() <= 0:
                        raise LocalizationSetEmpty("no interior left at working precision")
                    phi = self._phi(a, t, s)
                    r = np.zeros_like(s)
                else:
                    r = (1.0 - step) * r
                continue
            for step in _backtracking_steps(decrement_sq, t_max):
                a_new, t_new = a + step * da, t + step * dt
                s_new = self.cut_slacks(a_new, t_new)
                phi_new = self._phi(a_new, t_new, s_new)
                if _sufficient_decrease(phi_new, phi, step, decrement_sq):
                    break
            else:
                break
            a, t, s, phi = a_new, t_new, s_new, phi_new
        if not feasible:
            raise LocalizationSetEmpty("the cuts leave no interior (infeasible start did not end)")
        return a, t, steps


def _polish(
    problem: DenseProblem,
    monitor: SolverMonitor,
    loc: _EpigraphLocalization,
    lip: float,
    steps: int,
    start: Evaluation,
) -> tuple[bool, float, Evaluation]:
    """Accelerated proximal-gradient steps from ``start`` (FISTA, as
    :mod:`indefsvm.proxy.solvers.pg`, with its step
    :func:`~indefsvm.proxy.solvers.pg.proximal_step`).

    Backtracking on ``lip`` by the curvature test and a gradient-based momentum restart
    (O'Donoghue & Candes), both immune to the cancellation that makes objective comparisons
    meaningless at this accuracy. Returns (the monitor says stop, the Lipschitz estimate, the
    last evaluation, from which the next polish continues).
    """
    w = problem.metric
    if w is None:
        w = np.ones(problem.n)
    x_prev = start.alpha
    ev_y = start
    ev_new = start
    momentum = 1.0
    for _ in range(steps):
        g, y = ev_y.gradient, ev_y.alpha
        for _ in range(30):
            x_new = proximal_step(problem, y, g, lip)
            ev_new = problem.evaluate(x_new)
            monitor.offer(ev_new)
            dx = x_new - y
            dd = float(dx @ (w * dx))
            # Curvature test (immune to cancellation when f is dominated by f(0)).
            if dd == 0.0 or float((g - ev_new.gradient) @ dx) <= lip * dd * (1 + 1e-12):
                break
            lip *= 2.0
        gs = ev_new.gradient
        if problem.l1_weight:
            gs = gs - problem.l1_weight * np.sign(ev_new.alpha)
        if loc.m < loc.G.shape[0] - 1:  # capacity is max_cuts + 1
            loc.add_cut(gs, ev_new.objective, ev_new.alpha)
        if monitor.end_iteration(current_objective=ev_new.objective, n_cuts=loc.m):
            return True, lip, ev_new
        if dd == 0.0:
            break
        if float((y - x_new) @ (x_new - x_prev)) > 0:
            momentum, y_next = 1.0, x_new  # the momentum points backwards: restart it
        else:
            m_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum**2))
            y_next = x_new + ((momentum - 1.0) / m_next) * (x_new - x_prev)
            momentum = m_next
        x_prev = x_new
        if y_next is x_new:
            ev_y = ev_new
        else:
            ev_y = problem.evaluate(problem.project(y_next))
            monitor.offer(ev_y)
    return False, lip, ev_new


def _proximal_accpm(
    problem: DenseProblem,
    monitor: SolverMonitor,
    max_cuts: int,
    newton_tol: float,
    max_newton: int,
    box_weight: float,
    objective_weight: float,
    prox_update: float,
    null_update: float = 1.0,
) -> SolveResult:
    """Body of the ``variant="proximal"`` solver (see :func:`analytic_center_cutting_plane`)."""
    times = {"center": 0.0, "gradient": 0.0, "cuts": 0.0, "polish": 0.0}
    newton_total = 0
    status_note = None
    start = _initial_localization(
        problem,
        _EpigraphLocalization,
        max_cuts + 1,
        box_weight=box_weight,
        objective_weight=objective_weight,
    )
    if start is None:
        return _single_point(problem, monitor)
    x, loc = start
    c = loc.c
    a, t = x, np.nan
    lip = max(float(problem.lipschitz_estimate()), 1e-12)
    failures = 0
    n_polish = 0
    polish_steps = 50
    polish_from: Evaluation | None = None
    first_polish: int | None = None
    restarts = 0
    stale_restarts = 0
    max_stale_restarts = 5
    gap_at_restart = np.inf
    max_restarts = 3
    steps = 0
    n_serious = 0
    while True:
        t0 = time.perf_counter()
        p, ev, g = _evaluate_with_supergradient(problem, a)
        f = ev.objective
        times["gradient"] += time.perf_counter() - t0
        monitor.offer(ev)
        if monitor.end_iteration(current_objective=f, n_cuts=loc.m, newton_steps=steps):
            break
        t0 = time.perf_counter()
        if not np.all(np.isfinite(g)):
            raise FloatingPointError("non-finite gradient at an analytic center")
        g_red = g - c * (float(c @ g) / float(c @ c))
        g_norm = float(np.linalg.norm(g_red))
        t, s, serious = _proximal_cut(
            loc, a, t, (p, f, g), g_norm, lip, max_cuts, objective_weight, prox_update, null_update
        )
        n_serious += serious
        times["cuts"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        try:
            a, t, steps = loc.center(a, t, s, tol=newton_tol, max_steps=max_newton)
            failures = 0
        except LocalizationSetEmpty as exc:
            failures += 1
            if failures > max_restarts:
                status_note = f"proximal centre failed: {exc}"
                times["center"] += time.perf_counter() - t0
                break
            # The model is exhausted at working precision: f is flat to rounding around the best
            # point (suboptimality ~ distance^2) while the certified gap is first order in the
            # distance. Proximal-gradient steps from the best point put the coordinates that
            # belong on the bounds exactly there; their evaluations go to the monitor and their
            # cuts to the bundle.
            t1 = time.perf_counter()
            if first_polish is None:
                first_polish = monitor.n_iter + 1
            stop_now, lip, polish_from = _polish_from_best(
                problem, monitor, loc, lip, polish_steps, polish_from
            )
            n_polish += polish_steps
            times["polish"] += time.perf_counter() - t1
            t0 += time.perf_counter() - t1  # the centre timer excludes the polish
            if stop_now:
                break
            # Restart the bundle from the newest cut with a fresh proximal weight: the proximal
            # weight grows geometrically on null steps and the old cuts may leave no interior at
            # working precision; the certified bound is the monitor's, so nothing is lost.
            restarts += 1
            if monitor.gap >= 0.9 * gap_at_restart:
                stale_restarts += 1
            else:
                stale_restarts = 0
            gap_at_restart = monitor.gap
            if stale_restarts >= max_stale_restarts:
                status_note = (
                    f"{max_stale_restarts} restarts of the bundle without a smaller gap: the "
                    f"cuts are at the working precision of the objective ({exc})"
                )
                times["center"] += time.perf_counter() - t0
                break
            a, t, steps = _restart_bundle(
                loc, a, x, g_norm, lip, objective_weight, steps, newton_tol, max_newton
            )
        times["center"] += time.perf_counter() - t0
        newton_total += steps

    info = {
        "variant": "proximal",
        "max_cuts": max_cuts,
        "n_cuts": loc.m,
        "newton_steps": newton_total,
        "serious_steps": n_serious,
        "restarts": restarts,
        "polish_steps": n_polish,
        "first_polish_iteration": first_polish,
        "proximal_weight": loc.rho,
        **_timing_info(times, monitor),
    }
    return _finish(monitor, status_note, info)


def _rho_initial(g_norm: float, lip: float, objective_weight: float) -> float:
    """Proximal weight of a first centre: a step as long as a gradient step (curvature ``lip``)."""
    step_len = g_norm / lip if g_norm > 0 else 1.0
    return (1.0 + objective_weight) / max(step_len, 1e-12) ** 2


def _t_initial(g_norm: float, loc: _EpigraphLocalization) -> float:
    """Model gap of a first centre."""
    # A model gap of 1% of what the gradient could gain across the box.
    return max(g_norm * float(np.linalg.norm(loc.upper - loc.lower)), 1e-12) * 1e-2


def _proximal_cut(
    loc: _EpigraphLocalization,
    a: NDArray[np.float64],
    t: float,
    point: tuple[NDArray[np.float64], float, NDArray[np.float64]],
    g_norm: float,
    lip: float,
    max_cuts: int,
    objective_weight: float,
    prox_update: float,
    null_update: float,
) -> tuple[float, NDArray[np.float64], bool]:
    """Steps 3-4 of Algorithm 2: add the cut of ``point = (p, f, g)`` and warm-start the centre.

    Returns the model gap ``t`` and the cut slacks to start the centring from, and whether the
    step was serious (``f`` above the proximal centre's value).
    """
    p, f, g = point
    if loc.m == 0:
        # Proximal weight of the first centre: with one cut the proximal centre is a step
        # of length sqrt((1 + w) / rho_p) along the reduced gradient; start at the length of
        # a gradient step with the problem's curvature scale.
        loc.rho = _rho_initial(g_norm, lip, objective_weight)
        t = _t_initial(g_norm, loc)
    elif loc.m >= max_cuts:
        # Step 3 of Algorithm 2: drop the least relevant cuts (measure (12) at the centre,
        # which is strictly inside, before the objective cut moves).
        rel = loc.relevance(a, t, loc.cut_slacks(a, t))
        loc.keep(np.sort(np.argsort(rel)[::-1][: max_cuts - 1]))
    gap_model = t
    serious = False
    if f > loc.theta:
        if np.isfinite(loc.theta):
            serious = True
            loc.rho /= prox_update
            t = max(t - (f - loc.theta), 0.5 * gap_model)
        loc.move(p.copy(), f)
    else:
        loc.rho *= null_update
    loc.add_cut(g, f, p)
    # Warm start from the previous centre (strictly inside the box). If the model still
    # promises an improvement there (every cut above theta by 1% of the last model gap),
    # lowering t below the lowest cut gives a strictly feasible start. Otherwise violated
    # cut slacks are replaced by half the previous model gap and infeasible-start Newton
    # steps restore the cut equations.
    model = loc.cut_slacks(a, 0.0)
    if model.min() > 1e-2 * gap_model:
        t = min(t, 0.5 * float(model.min()))
    s = loc.cut_slacks(a, t)
    s = np.where(s > 0, s, 0.5 * gap_model)
    return t, s, serious


def _polish_from_best(
    problem: DenseProblem,
    monitor: SolverMonitor,
    loc: _EpigraphLocalization,
    lip: float,
    polish_steps: int,
    polish_from: Evaluation | None,
) -> tuple[bool, float, Evaluation]:
    """Polish from the better of the monitor's best point and the last polish's end point."""
    assert monitor.best is not None
    if polish_from is None or monitor.best.objective > polish_from.objective:
        polish_from = monitor.best
    return _polish(problem, monitor, loc, lip, polish_steps, polish_from)


def _restart_bundle(
    loc: _EpigraphLocalization,
    a: NDArray[np.float64],
    x: NDArray[np.float64],
    g_norm: float,
    lip: float,
    objective_weight: float,
    steps: int,
    newton_tol: float,
    max_newton: int,
) -> tuple[NDArray[np.float64], float, int]:
    """Keep only the newest cut and centre again from halfway to the start point ``x``.

    Returns the centre, its model gap and the Newton steps taken (``steps`` unchanged and the
    restart point itself when the centring fails: the next evaluation is there).
    """
    loc.keep(np.array([loc.m - 1]))
    loc.rho = _rho_initial(g_norm, lip, objective_weight)
    # Start halfway to the interior start point (on the hyperplane, well inside the
    # box): centres pinned to the bounds at 1e-17 would block the infeasible-start steps.
    a = 0.5 * (a + x)
    t = _t_initial(g_norm, loc)
    s = loc.cut_slacks(a, t)
    s = np.where(s > 0, s, t)
    try:
        a, t, steps = loc.center(a, t, s, tol=newton_tol, max_steps=4 * max_newton)
    except LocalizationSetEmpty:
        # The next evaluation is at the (feasible, interior) restart point; its cut
        # starts the bundle again.
        pass
    return a, t, steps


#: What the solver needs from the problem's kernel operator
#: (:class:`indefsvm.proxy.protocols.KernelOperator`): the Newton systems of its analytic
#: centers are n x n, so a large low-rank problem refuses it before it starts.
analytic_center_cutting_plane.needs = frozenset({"n_by_n"})  # type: ignore[attr-defined]
