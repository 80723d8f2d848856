"""A second-order method for the low-rank proxy-kernel SVM (issue 24; notes §12).

With ``K0 = U diag(d) U'`` of rank m, the derivative of ``u -> K*(u) u`` is
``J = gamma (I - P) + [U q] H [U q]'`` (:meth:`~indefsvm.proxy.lowrank.LowRankProxyOperator.
kstar_u_jacobian`; ``P`` the projector on ``span([U q])``), so the Hessian of ``-f`` is
``Y J Y``: a diagonal plus rank m'+1. Each outer iteration maximises the quadratic model

    g'(a - x) - 1/2 (a - x)' Y (mu I + E E') Y (a - x)    over {y'a = 0, 0 <= a <= C},

``mu = max(gamma, floor)``, ``E E' = [U q] (H - mu I)_+ [U q]'``. The model's curvature is at
least ``J`` (exact on the complement of ``span([U q])`` when ``mu = gamma``, and wherever
``H >= mu I`` in the span), so its maximiser ``a`` gives an ascent direction ``a - x`` of ``f``
(``g = grad f(x)``). The model QP has the smooth (k+1)-dimensional dual (``k <= m'+1``)

    min_{w, b}  1/2 ||w||^2 + sum_i h_i(g_i - y_i (E_i w + b)),
    h_i(r) = max_{0 <= a <= C_i} r (a - x_i) - mu/2 (a - x_i)^2,

whose minimiser gives ``a_i = clip(x_i + (g_i - y_i (E_i w + b)) / mu, 0, C_i)`` (the
clipped fixed point of notes §12). It is solved by a semismooth Newton method whose generalised
Hessian ``I + E_I'E_I / mu`` needs one BLAS-3 Gram matrix over the free rows ``I``
(:meth:`~indefsvm.proxy.lowrank.LowRankProxyOperator.basis_gram_rows`) and O(m^3) work; a
piecewise-quadratic dual is minimised exactly once the free set repeats. The outer step is a
backtracking (Armijo) line search on ``f`` along ``a - x``; every point evaluated is a full
:meth:`~indefsvm.proxy.problems.ProxyKernelProblem.evaluate` offered to the monitor, so the
certified gap of notes §3/§11 is the stopping rule, as for the projected gradient.

Supports classification (``problem="svc"`` and ``"perturb"``) with a scalar ``rho`` on a
low-rank ``K0`` (the operator's ``"factor"`` capability); other problems are refused before any
work.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from indefsvm.proxy.problems import Evaluation, ProxyKernelProblem
from indefsvm.proxy.result import SolveResult
from indefsvm.proxy.solvers._monitor import SolverMonitor
from indefsvm.utils.validation import is_positive_int, is_real

logger = logging.getLogger("indefsvm.proxy.solvers")

_EPS = float(np.finfo(np.float64).eps)
#: Rounding allowance of one evaluation of f in units of eps |f| (as the projected gradient's).
NOISE_ULPS = 1024.0
#: Halvings of the outer step before the direction is declared useless.
MAX_HALVINGS = 40
#: Problems whose feasible set and objective have the SVM form the dual model assumes.
SUPPORTED = ("svc", "perturb")


def _check_problem(problem: ProxyKernelProblem) -> None:
    if problem.kind not in SUPPORTED:
        raise ValueError(
            f"method='newton' solves classification (problem in {SUPPORTED}); got "
            f"problem={problem.kind!r}. Use method='pg'."
        )
    if getattr(problem, "scale", None) is not None:
        raise ValueError(
            "method='newton' supports a scalar rho only (a vector rho rescales the factor's rows; "
            "not implemented). Use method='pg' for componentwise penalties."
        )
    if not hasattr(problem.operator, "kstar_u_jacobian"):
        raise ValueError(
            "method='newton' needs the low-rank operator's derivative of K*(u) u "
            f"(kstar_u_jacobian); {type(problem.operator).__name__} has none. Use method='pg'."
        )


class _DualModel:
    """The dual of the outer iteration's quadratic model in ``(w, b)`` (module docstring)."""

    def __init__(self, problem, state, x, g, mu, S):
        self.op = problem.operator
        self.state = state
        self.y = problem.y
        self.upper = problem.upper
        self.x = x
        self.g = g
        self.mu = mu
        self.S = S

    def E(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.op.apply_basis(self.state, self.S @ w)

    def at(self, w, b, Ew):
        """``(phi, a, free)`` at ``(w, b)`` given ``Ew``: O(n)."""
        r = self.g - self.y * (Ew + b)
        v = self.x + r / self.mu
        a = np.clip(v, 0.0, self.upper)
        dx = a - self.x
        phi = 0.5 * float(w @ w) + float(r @ dx) - 0.5 * self.mu * float(dx @ dx)
        free = (v > 0.0) & (v < self.upper)
        return phi, a, free


def _solve_dual(model: _DualModel, b0: float, max_inner: int, monitor: SolverMonitor):
    """Semismooth Newton with Armijo backtracking on the model's dual; returns ``(a, info)``."""
    k = model.S.shape[1]
    mu, y = model.mu, model.y
    w = np.zeros(k)
    b = float(b0) if np.isfinite(b0) else 0.0
    Ew = np.zeros(model.x.shape[0])
    phi, a, free = model.at(w, b, Ew)
    previous = None
    steps = 0
    exact = False
    for steps in range(1, max_inner + 1):
        I = np.flatnonzero(free)
        ind = free.astype(np.float64)
        # One pass: E'(Y dx) for the gradient and E_I' 1 for the Hessian's b column.
        both = model.op.basis_adjoint(model.state, np.column_stack([y * (a - model.x), ind]))
        both = model.S.T @ both
        grad = np.append(w - both[:, 0], -float(y @ a))
        hess = np.empty((k + 1, k + 1))
        GI = model.S.T @ model.op.basis_gram_rows(model.state, I) @ model.S if I.size else 0.0
        hess[:k, :k] = np.eye(k) + GI / mu
        hess[:k, k] = hess[k, :k] = both[:, 1] / mu
        # No free row: b is unconstrained to second order (phi is piecewise linear in b there);
        # a tiny curvature keeps the system solvable and the line search does the rest.
        hess[k, k] = I.size / mu + 1e-12 * (1.0 + I.size / mu)
        step = np.linalg.solve(hess, -grad)
        decrement = -float(grad @ step)
        if not decrement > 64 * _EPS * max(1.0, abs(phi)):
            exact = True
            break
        dw, db = step[:k], float(step[k])
        Edw = model.E(dw)
        t = 1.0
        for _ in range(60):
            phi_t, a_t, free_t = model.at(w + t * dw, b + t * db, Ew + t * Edw)
            if phi_t <= phi - 1e-4 * t * decrement:
                break
            t *= 0.5
        else:
            break
        w, b, Ew = w + t * dw, b + t * db, Ew + t * Edw
        same = t == 1.0 and np.array_equal(free_t, free)
        phi, a, free = phi_t, a_t, free_t
        if same and previous is not None:
            # A full Newton step that keeps the free set minimises the piecewise quadratic.
            exact = True
            break
        previous = I
        if monitor.out_of_time():
            break
    return a, {"steps": steps, "exact": exact, "intercept": b, "free": int(np.count_nonzero(free))}


def newton(
    problem: ProxyKernelProblem,
    monitor: SolverMonitor,
    *,
    alpha0: NDArray[np.float64] | None = None,
    max_inner: int = 50,
    curvature_floor: float = 1e-10,
    armijo: float = 1e-4,
) -> SolveResult:
    """Maximise a low-rank classification problem by the second-order method of the module.

    Parameters
    ----------
    problem : ProxyKernelProblem
        A classification problem (``"svc"``, ``"perturb"``) on a low-rank ``K0`` with scalar rho.
    monitor : SolverMonitor
        Stopping rule (the certified gap), history, limits.
    alpha0 : ndarray of shape (n,), optional
        Starting point (projected onto the feasible set). Default: 0.
    max_inner : int
        Newton steps on the model's dual per outer iteration.
    curvature_floor : float
        Smallest model curvature ``mu`` off the span of ``[U q]``, relative to ``max(lambda(K0))``
        (at ``alpha = 0`` the exact curvature there is 0).
    armijo : float
        Sufficient-ascent constant of the outer line search, in (0, 1/2).

    Returns
    -------
    SolveResult
        ``info`` has ``n_inner`` (Newton steps on the duals), ``n_halvings``, ``n_passes`` (passes
        over the factor during the solve) and ``n_gram_passes`` (rows read by the Gram matrices,
        in units of n).
    """
    _check_problem(problem)
    if not is_positive_int(max_inner):
        raise ValueError(f"max_inner must be a positive integer; got {max_inner!r}.")
    if not (is_real(curvature_floor) and np.isfinite(curvature_floor) and curvature_floor > 0):
        raise ValueError(f"curvature_floor must be a finite number > 0; got {curvature_floor!r}.")
    if not (is_real(armijo) and 0 < armijo < 0.5):
        raise ValueError(f"armijo must be in (0, 1/2); got {armijo!r}.")
    op = problem.operator
    passes0, gram0 = op.n_passes, op.n_gram_passes
    if alpha0 is None:
        x = problem.initial_point()
    else:
        alpha0 = np.asarray(alpha0, dtype=np.float64)
        if alpha0.shape != (problem.n,) or not np.all(np.isfinite(alpha0)):
            raise ValueError(f"alpha0 must be a finite vector of length {problem.n}.")
        x = problem.project(alpha0)
    floor = curvature_floor * max(problem.lipschitz_estimate(), _EPS)
    ev = problem.evaluate(x)
    monitor.offer(ev)
    n_inner = n_halvings = 0
    inexact = 0
    b_prev = ev.intercept
    while True:
        if not _finite(ev):
            monitor.stop("numerical_error", "the objective or gradient is not finite")
            break
        gamma, H = op.kstar_u_jacobian(ev.state)
        mu = max(gamma, floor)
        omega, W = np.linalg.eigh(H)
        keep = omega > mu
        S = W[:, keep] * np.sqrt(omega[keep] - mu)
        model = _DualModel(problem, ev.state, ev.alpha, ev.gradient, mu, S)
        a, inner = _solve_dual(model, b_prev, max_inner, monitor)
        n_inner += inner["steps"]
        inexact += not inner["exact"]
        b_prev = inner["intercept"]
        direction = problem.project(a) - ev.alpha
        slope = float(ev.gradient @ direction)
        noise = NOISE_ULPS * _EPS * max(1.0, abs(ev.objective))
        if not slope > noise:
            monitor.stop(
                "stalled",
                f"the Newton model gives no ascent direction (predicted ascent {slope:.3g})",
            )
            break
        t = 1.0
        for _ in range(MAX_HALVINGS):
            trial = problem.evaluate(ev.alpha + t * direction)
            monitor.offer(trial)
            if _finite(trial) and trial.objective >= ev.objective + armijo * t * slope - noise:
                break
            t *= 0.5
            n_halvings += 1
            if monitor.out_of_time():
                break
        else:
            trial = None
        if trial is None or not _finite(trial) or trial.objective < ev.objective - noise:
            monitor.stop(
                "stalled",
                f"no ascent along the Newton direction after {MAX_HALVINGS} halvings",
            )
            break
        logger.debug(
            "newton: f=%.12g step=%g mu=%.3g inner=%d free=%d",
            trial.objective,
            t,
            mu,
            inner["steps"],
            inner["free"],
        )
        ev = trial
        if monitor.end_iteration(current_objective=ev.objective, step=t):
            break
    info = {
        "n_inner": n_inner,
        "n_inexact_inner": inexact,
        "n_halvings": n_halvings,
        "n_passes": op.n_passes - passes0,
        "n_gram_passes": op.n_gram_passes - gram0,
    }
    return monitor.finish(info=info)


def _finite(ev: Evaluation) -> bool:
    return bool(np.isfinite(ev.objective) and np.all(np.isfinite(ev.gradient)))


#: The low-rank operator's factor (its derivative of ``K*(u) u`` and Gram matrices over rows).
newton.needs = frozenset({"factor"})  # type: ignore[attr-defined]
