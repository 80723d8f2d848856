"""Projected (proximal) gradient ascent for the proxy-kernel problems.

Two step policies:

``"accelerated"`` (default)
    FISTA-type momentum (Beck & Teboulle, 2009) with backtracking on the exact objective and
    adaptive gradient restart (O'Donoghue & Candès, 2015). The objective of eq. (7) is C^1 with a
    Lipschitz gradient (notes §2), so no smoothing is needed.
``"paper"``
    Algorithm 1 of paper 004 (Sect. 3.2): ``alpha_{k+1} = P(alpha_k + (t / k) grad f(alpha_k))``
    with the paper's step ``t / k`` (``t = 5`` for IndefiniteSVM in its experiments) and,
    optionally, the Moreau-Yosida smoothed gradient with parameter ``smoothing`` (eps = 1e-4 in
    the published code), so the paper's behaviour can be reproduced.

Both stop on the certified relative gap of :class:`~indefsvm.solvers._monitor.SolverMonitor`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from indefsvm.problems import ProxyKernelProblem
from indefsvm.result import SolveResult
from indefsvm.solvers._monitor import SolverMonitor

STEP_POLICIES = ("accelerated", "paper")


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
    restart: bool = True,
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
        Initial estimate of the gradient's Lipschitz constant (accelerated policy). Default: the
        largest absolute eigenvalue of ``K0``.
    backtrack_factor : float
        Multiplier of the Lipschitz estimate when the sufficient-ascent test fails (> 1).
    lipschitz_decrease : float
        Multiplier applied after every accepted step so the estimate can shrink (in (0, 1]).
    restart : bool
        Adaptive gradient restart of the momentum.
    """
    if step not in STEP_POLICIES:
        raise ValueError(f"step must be one of {STEP_POLICIES}; got {step!r}.")
    if not step_size > 0:
        raise ValueError(f"step_size must be > 0; got {step_size!r}.")
    if smoothing < 0:
        raise ValueError(f"smoothing must be >= 0; got {smoothing!r}.")
    if smoothing > 0 and step != "paper":
        raise ValueError(
            "smoothing is the paper's gradient approximation; use it with step='paper'."
        )
    if not backtrack_factor > 1 or not 0 < lipschitz_decrease <= 1:
        raise ValueError("need backtrack_factor > 1 and 0 < lipschitz_decrease <= 1.")
    if alpha0 is None:
        x = problem.initial_point()
    else:
        alpha0 = np.asarray(alpha0, dtype=np.float64)
        if alpha0.shape != (problem.n,) or not np.all(np.isfinite(alpha0)):
            raise ValueError(f"alpha0 must be a finite vector of length {problem.n}.")
        x = problem.project(alpha0)

    # The secular solver warm-starts from the previous evaluation: start from a clean state so
    # the solve does not depend on earlier evaluations (bitwise-repeatable solves).
    problem.operator.reset_warm_start()
    if step == "paper":
        return _paper_policy(problem, monitor, x, step_size, smoothing)

    if lipschitz0 is not None:
        L = float(lipschitz0)
    else:
        L = max(problem.operator.spectral_scale(), 1e-12)
    ev_x = problem.evaluate(x)
    monitor.offer(ev_x)
    ev_y = ev_x
    t = 1.0
    n_backtracks = 0
    n_restarts = 0
    while True:
        g = ev_y.gradient
        y = ev_y.alpha
        while True:
            x_new = problem.prox(y + g / L, 1.0 / L)
            ev_new = problem.evaluate(x_new)
            monitor.offer(ev_new)
            dx = x_new - y
            dd = float(dx @ dx)
            if dd == 0.0:
                break
            # Sufficient ascent (quadratic lower model of the concave smooth part) with a
            # rounding allowance, plus the curvature test, which is immune to cancellation
            # when the step is tiny relative to the objective.
            model = ev_y.smooth_objective + float(g @ dx) - 0.5 * L * dd
            slack = 1e-14 * max(1.0, abs(ev_y.smooth_objective))
            curvature = float((g - ev_new.gradient) @ dx)
            if ev_new.smooth_objective >= model - slack and curvature <= L * dd * (1 + 1e-12):
                break
            L *= backtrack_factor
            n_backtracks += 1
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        if restart and (
            float((y - x_new) @ (x_new - ev_x.alpha)) > 0 or ev_new.objective < ev_x.objective
        ):
            # The momentum points away from the ascent direction: restart (O'Donoghue-Candes).
            t_new = 1.0
            n_restarts += 1
            ev_y = ev_new
        else:
            beta = (t - 1.0) / t_new
            y_next = x_new + beta * (x_new - ev_x.alpha)
            ev_y = ev_new if beta == 0.0 else problem.evaluate(y_next)
            if beta != 0.0:
                # y is an extrapolated, possibly infeasible point: only its bound counts.
                monitor.offer(ev_y, feasible=False)
        ev_x = ev_new
        t = t_new
        L *= lipschitz_decrease
        if monitor.end_iteration(current_objective=ev_x.objective, lipschitz=L):
            break
    info = {
        "step": step,
        "n_backtracks": n_backtracks,
        "n_restarts": n_restarts,
        "lipschitz_estimate": L,
    }
    return monitor.finish(info=info)


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
        if monitor.end_iteration(current_objective=ev.objective):
            break
        step_k = step_size / k
        x = problem.prox(x + step_k * ev.gradient, step_k)
    info = {"step": "paper", "step_size": step_size, "smoothing": smoothing}
    return monitor.finish(info=info)
