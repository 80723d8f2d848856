"""Projected (proximal) gradient ascent for the proxy-kernel problems.

Two step policies:

``"accelerated"`` (default)
    FISTA-type momentum (Beck & Teboulle, 2009) with backtracking on the exact objective and
    adaptive gradient restart (O'Donoghue & Candès, 2015). The objective of eq. (7) is C^1 with a
    Lipschitz gradient (theory.md §2), so no smoothing is needed.
``"paper"``
    Algorithm 1 of paper 004 (Sect. 3.2): ``alpha_{k+1} = P(alpha_k + (t / k) grad f(alpha_k))``
    with the paper's step ``t / k`` (``t = 5`` for IndefiniteSVM in its experiments) and,
    optionally, the Moreau-Yosida smoothed gradient with parameter ``smoothing`` (eps = 1e-4 in
    the published code), so the paper's behaviour can be reproduced.

Both stop on the certified relative gap of :class:`~indefsvm.proxy.solvers._monitor.SolverMonitor`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from indefsvm.proxy.problems import Evaluation, ProxyKernelProblem
from indefsvm.proxy.result import SolveResult
from indefsvm.proxy.solvers._monitor import SolverMonitor
from indefsvm.utils.validation import is_real

STEP_POLICIES = ("accelerated", "paper")

#: Backtracking doublings before a step is declared impossible (2^200 times the estimate:
#: far beyond any finite curvature, so reaching it means inf/NaN, not a hard problem).
MAX_BACKTRACKS = 200
#: Rounding allowance of one evaluation of f, in units of eps * |f| ("lean" evaluations): a
#: predicted gain or a decrease below it is noise (measured: 1-40 ulps at n = 1000).
NOISE_ULPS = 1024.0
_EPS = float(np.finfo(np.float64).eps)


def projected_gradient(
    problem: ProxyKernelProblem,
    monitor: SolverMonitor,
    *,
    step: str = "accelerated",
    step_size: float = 5.0,
    smoothing: float = 0.0,
    alpha0: NDArray[np.float64] | None = None,
    lipschitz0: float | None = None,
    backtrack_factor: float = 2.0,
    lipschitz_decrease: float = 0.9,
    restart: bool | str = True,
    evaluations: str = "lean",
) -> SolveResult:
    """Maximise a proxy-kernel problem by projected gradient.

    Parameters
    ----------
    problem : ProxyKernelProblem
        The problem (feasible set, objective, gradient, certified bound).
    monitor : SolverMonitor
        Stopping rule, history and LIBSVM checks.
    step : {"accelerated", "paper"}
        Step policy (see module docstring).
    step_size : float
        ``t`` of the paper's step ``t / k`` (``step="paper"`` only).
    smoothing : float
        Moreau-Yosida parameter of the paper's smoothed gradient (``step="paper"`` only;
        0 uses the exact gradient).
    alpha0 : ndarray of shape (n,), optional
        Starting point (projected onto the feasible set). Default: projection of 0.
    lipschitz0 : float, optional
        Initial estimate of the gradient's Lipschitz constant (accelerated policy), in the
        problem's metric (``problem.metric``). Default: ``problem.lipschitz_estimate()``, the
        largest absolute eigenvalue of the working kernel.
    backtrack_factor : float
        Multiplier of the Lipschitz estimate when the sufficient-ascent test fails (> 1).
    lipschitz_decrease : float
        Multiplier applied after every accepted step so the estimate can shrink (in (0, 1]).
    restart : bool or {"both", "gradient", "function"}
        Adaptive restart of the momentum (O'Donoghue & Candès 2015, Sect. 3.2): ``"gradient"``
        when the gradient-mapping step opposes the momentum, ``"function"`` when the objective
        decreases, ``"both"`` (= True, the default) on either; False never restarts.
    evaluations : {"lean", "full"}
        What the accelerated policy evaluates per iteration. ``"full"`` (the earlier behaviour,
        kept for reproducibility): objective, gradient and certified bound at every
        trial point ``x_{k+1}`` and at the extrapolated point ``y_{k+1}``, and backtracking
        also tests the curvature ``(g_y - g_x)'(x - y) <= L ||x - y||^2``. ``"lean"`` (default):
        the backtracking test of Beck & Teboulle (2009) needs only ``f(x_{k+1})``, so trial
        points get an objective-only evaluation
        (:meth:`~indefsvm.proxy.problems.ProxyKernelProblem.evaluate_objective`: negative
        eigenvalues
        of ``M`` only); the full evaluation (gradient and the certified bound, theory.md §3, valid
        at any point) is made where the gradient is needed, at ``y_{k+1}`` (or at ``x_{k+1}``
        after a restart). The monitor completes the returned point's evaluation at the end.
    """
    if restart is True:
        restart = "both"
    if restart not in (False, "both", "gradient", "function"):
        raise ValueError(
            f"restart must be True, False, 'both', 'gradient' or 'function'; got {restart!r}."
        )
    if evaluations not in ("lean", "full"):
        raise ValueError(f"evaluations must be 'lean' or 'full'; got {evaluations!r}.")
    if step not in STEP_POLICIES:
        raise ValueError(f"step must be one of {STEP_POLICIES}; got {step!r}.")
    if not (is_real(step_size) and np.isfinite(step_size) and step_size > 0):
        raise ValueError(f"step_size must be a finite number > 0; got {step_size!r}.")
    if not (is_real(smoothing) and np.isfinite(smoothing) and smoothing >= 0):
        raise ValueError(f"smoothing must be a finite number >= 0; got {smoothing!r}.")
    if smoothing > 0 and step != "paper":
        raise ValueError(
            "smoothing is the paper's gradient approximation; use it with step='paper'."
        )
    if lipschitz0 is not None and not (
        is_real(lipschitz0) and np.isfinite(lipschitz0) and lipschitz0 > 0
    ):
        raise ValueError(
            f"lipschitz0 must be None (estimated from K0) or a finite number > 0; "
            f"got {lipschitz0!r}."
        )
    if not (is_real(backtrack_factor) and np.isfinite(backtrack_factor) and backtrack_factor > 1):
        raise ValueError(f"backtrack_factor must be a finite number > 1; got {backtrack_factor!r}.")
    if not (is_real(lipschitz_decrease) and 0 < lipschitz_decrease <= 1):
        raise ValueError(f"lipschitz_decrease must be in (0, 1]; got {lipschitz_decrease!r}.")
    x = starting_point(problem, alpha0)

    if step == "paper":
        return _paper_policy(problem, monitor, x, step_size, smoothing)

    # Steps are measured in the problem's metric (None: Euclidean). With a vector rho the metric
    # makes the step policy see the well-scaled working kernel (Problem.metric).
    w = problem.metric
    if w is None:
        w = np.ones(problem.n)
    L = float(lipschitz0) if lipschitz0 is not None else max(problem.lipschitz_estimate(), 1e-12)
    ev_x = problem.evaluate(x)
    monitor.offer(ev_x)
    if not _finite(ev_x):
        monitor.stop("numerical_error", "the objective at the starting point is not finite")
        return monitor.finish(info={"step": step})
    lean = evaluations == "lean"

    def noise(f: float) -> float:
        return NOISE_ULPS * _EPS * max(1.0, abs(f))

    # Problems written before evaluate_objective existed get full evaluations (same steps).
    evaluate_trial = (lean and getattr(problem, "evaluate_objective", None)) or problem.evaluate
    ev_y = ev_x
    t = 1.0
    n_backtracks = 0
    n_restarts = 0
    n_partial = 0
    while True:
        g = ev_y.gradient
        y = ev_y.alpha
        backtracks_before = n_backtracks
        for _ in range(MAX_BACKTRACKS):
            x_new = proximal_step(problem, y, g, L)
            ev_new = evaluate_trial(x_new)
            monitor.offer(ev_new)
            n_partial += ev_new.partial
            dx = x_new - y
            dd = float(dx @ (w * dx))
            if dd == 0.0:
                break
            # Sufficient ascent (quadratic lower model of the concave smooth part) with a
            # rounding allowance; "full" adds the curvature test, which is immune to
            # cancellation when the step is tiny relative to the objective.
            gain = float(g @ dx) - 0.5 * L * dd
            model = ev_y.smooth_objective + gain
            slack = 1e-14 * max(1.0, abs(ev_y.smooth_objective))
            if lean and gain <= NOISE_ULPS * _EPS * max(1.0, abs(ev_y.smooth_objective)):
                # The predicted gain is within the rounding error of f itself (near the
                # optimum f is flat to working precision while the bound still improves):
                # the objective cannot decide, so the gradient at x_{k+1} and the curvature
                # test of "full" do.
                ev_new = _full(problem, monitor, ev_new)
            if _finite(ev_new) and ev_new.smooth_objective >= model - slack:
                if ev_new.partial or float((g - ev_new.gradient) @ dx) <= L * dd * (1 + 1e-12):
                    break
            L *= backtrack_factor
            n_backtracks += 1
            if monitor.out_of_time():
                break
        else:
            ev_new = None
        if ev_new is None or not _finite(ev_new):
            # Backtracking ends early when the step rounds to zero (dd == 0) or time runs out:
            # say how many steps were made, not MAX_BACKTRACKS.
            monitor.stop(
                "numerical_error",
                f"no ascent step found after {n_backtracks - backtracks_before} backtracking "
                f"steps (Lipschitz estimate {L:.3g}); the objective or gradient is not finite "
                "or not smooth here",
            )
            break
        if monitor.out_of_time() and monitor.status is None:
            monitor.stop("max_time")
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        if (
            restart in ("both", "gradient") and float((y - x_new) @ (w * (x_new - ev_x.alpha))) > 0
        ) or (
            restart in ("both", "function")
            and ev_new.objective < ev_x.objective - (noise(ev_x.objective) if lean else 0.0)
        ):
            # The momentum points away from the ascent direction: restart (O'Donoghue-Candes).
            t_new = 1.0
            n_restarts += 1
            ev_y = _full(problem, monitor, ev_new)
        else:
            beta = (t - 1.0) / t_new
            y_next = x_new + beta * (x_new - ev_x.alpha)
            ev_y = _full(problem, monitor, ev_new) if beta == 0.0 else problem.evaluate(y_next)
            if beta != 0.0:
                # y is an extrapolated, possibly infeasible point: only its bound counts.
                monitor.offer(ev_y, feasible=False)
                if not _finite(ev_y):
                    ev_y = _full(problem, monitor, ev_new)
        if not _finite(ev_y):
            # Only a completed ("lean") evaluation of x_{k+1} can get here: its objective was
            # finite, its gradient is not.
            monitor.stop("numerical_error", "the gradient is not finite at the new iterate")
            break
        ev_x = ev_new
        t = t_new
        L *= lipschitz_decrease
        if monitor.end_iteration(current_objective=ev_x.objective, lipschitz=L):
            break
    info = {
        "step": step,
        "evaluations": evaluations,
        # evaluations that computed the objective only (the others: gradient and bound too)
        "n_objective_evaluations": n_partial,
        "n_backtracks": n_backtracks,
        "n_restarts": n_restarts,
        "lipschitz_estimate": L,
    }
    return monitor.finish(info=info)


def proximal_step(
    problem: ProxyKernelProblem, x: NDArray[np.float64], g: NDArray[np.float64], lipschitz: float
) -> NDArray[np.float64]:
    """The projected-gradient step ``prox(x + g / (L w), 1 / L, w)`` from ``x`` with gradient
    ``g`` and Lipschitz estimate ``L``, in the problem's metric ``w`` (None: Euclidean).

    Algorithm 1 of paper 004 (Sect. 3.2) with its step ``t / k`` replaced by ``1 / L``, the
    prox of the l1 term and the metric of ``Problem.metric``. The Newton method's first step
    (its option ``gradient_start``) and ACCPM's polishing steps are this step too.
    """
    w = problem.metric
    return problem.prox(x + g / (lipschitz if w is None else lipschitz * w), 1.0 / lipschitz, w)


def starting_point(
    problem: ProxyKernelProblem, alpha0: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """``alpha0`` projected onto the feasible set (checked), or the problem's initial point."""
    if alpha0 is None:
        return problem.initial_point()
    alpha0 = np.asarray(alpha0, dtype=np.float64)
    if alpha0.shape != (problem.n,) or not np.all(np.isfinite(alpha0)):
        raise ValueError(f"alpha0 must be a finite vector of length {problem.n}.")
    return problem.project(alpha0)


def _finite(ev: Evaluation) -> bool:
    if ev.gradient is None:
        return bool(np.isfinite(ev.smooth_objective))
    return bool(np.isfinite(ev.smooth_objective) and np.all(np.isfinite(ev.gradient)))


def _full(problem: ProxyKernelProblem, monitor: SolverMonitor, ev: Evaluation) -> Evaluation:
    """``ev`` with its gradient: a partial (objective-only) evaluation is completed and offered."""
    if not ev.partial:
        return ev
    full = problem.evaluate(ev.alpha)
    monitor.offer(full)
    return full


def _paper_policy(
    problem: ProxyKernelProblem,
    monitor: SolverMonitor,
    x: NDArray[np.float64],
    step_size: float,
    smoothing: float,
) -> SolveResult:
    """Algorithm 1 of paper 004 with step ``t / k`` and optional smoothing."""
    k = 0
    while True:
        k += 1
        ev = problem.evaluate(x, smoothing=smoothing)
        monitor.offer(ev)
        if not _finite(ev):
            monitor.stop("numerical_error", "the objective or gradient is not finite")
            break
        if monitor.end_iteration(current_objective=ev.objective):
            break
        step_k = step_size / k
        x = problem.prox(x + step_k * ev.gradient, step_k)
    info = {"step": "paper", "step_size": step_size, "smoothing": smoothing}
    return monitor.finish(info=info)


#: What the solver needs from the problem's kernel operator
#: (:class:`indefsvm.proxy.protocols.KernelOperator`): nothing beyond evaluations, so it runs
#: on every operator, dense or low-rank at any n.
projected_gradient.needs = frozenset()  # type: ignore[attr-defined]
