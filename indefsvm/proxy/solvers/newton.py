"""A second-order method for the low-rank proxy-kernel SVM (theory.md §12).

With ``K0 = U diag(d) U'`` of rank m, the derivative of ``u -> K*(u) u`` is
``J = gamma (I - P) + [U q] H [U q]'`` (:meth:`~indefsvm.proxy.lowrank.LowRankProxyOperator.
kstar_u_jacobian`: ``P`` projects on ``span([U q])``, ``H`` is (m'+1) x (m'+1) from the
Daleckii-Krein derivative of the positive part, ``gamma`` the coefficient of ``u`` in
``K* u = U w + gamma u``), so the Hessian of ``-f`` is ``Y J Y``: a diagonal plus rank m'+1.

Each outer iteration maximises the Levenberg-Marquardt model

    g'd - 1/2 d'(Y J Y + prox I) d      over {y'(x + d) = 0, 0 <= x + d <= C}

(``g = grad f(x)``) by a primal-dual active-set iteration (Hintermueller, Ito & Kunisch 2002):
the rows guessed at a bound are fixed, the equality-constrained model on the free rows ``F`` is
solved by Woodbury with the Gram matrix ``[U q]_F'[U q]_F``
(:meth:`~indefsvm.proxy.lowrank.LowRankProxyOperator.basis_gram_rows`: O(m^2) per row that
entered or left ``F``; its products with the model's vectors are updated by the same rows,
:meth:`~indefsvm.proxy.lowrank.LowRankProxyOperator.basis_gram_masked`, so one pass over the
factor per step remains, for the step itself), and the guess is updated from the signs of
the multipliers until it repeats, when the model is solved exactly. ``prox`` (relative to
``max(lambda(K0))``, option ``proximal``) is divided by 10 after every iteration whose model
was solved so, and multiplied by 10 otherwise; at ``alpha = 0`` it keeps the model regular
(``J`` is singular there). When the active-set iteration does not settle within ``max_inner``
steps, the model with the curvature raised to ``mu I + [U q] (H - gamma I)_+ [U q]'`` is solved
through its smooth (k+1)-dimensional dual in ``(w, b)``,

    min 1/2 ||w||^2 + sum_i h_i(g_i - y_i (E_i w + b)),   a_i = clip(x_i + (...) / mu, 0, C_i),

(the clipped fixed point of theory.md §12) by a globalised semismooth Newton method, and the
active-set iteration restarts from its active set. The outer step is an Armijo line search on
``f`` (a projected-gradient step if neither model ascends); every point evaluated is a full
:meth:`~indefsvm.proxy.problems.ProxyKernelProblem.evaluate` offered to the monitor, so the
certified gap of theory.md §3/§11 is the stopping rule, as for the projected gradient.

Supports classification (``problem="svc"`` and ``"perturb"``) and the one-class SVM
(``"oneclass"``: ``y = 1``, the constraint ``1'a = 1``, no linear term) on a low-rank ``K0`` (the
operator's ``"factor"`` capability), with a scalar or a componentwise ``rho`` (the model works
in ``a' = a / Ds``, :class:`_Form`, where the Hessian keeps its +-1 signs); other problems are
refused before any work (SVR: its l1 term makes the objective non-smooth at 0 and its box
``[-C, C]`` is not one-sided).
Measured (``benchmarks/bench_lowrank.py --method lowrank_newton``): 1-6 outer
iterations and 30-80 passes over the factor where the accelerated projected gradient needs
100-500 iterations of about 3 passes each.
"""

from __future__ import annotations

import logging

import numpy as np
from numpy.typing import NDArray

from indefsvm.proxy.problems import Evaluation, ProxyKernelProblem
from indefsvm.proxy.result import SolveResult
from indefsvm.proxy.solvers._monitor import SolverMonitor
from indefsvm.proxy.solvers.pg import proximal_step, starting_point
from indefsvm.utils.validation import is_positive_int, is_real

logger = logging.getLogger("indefsvm.proxy.solvers")

_EPS = float(np.finfo(np.float64).eps)
#: Rounding allowance of one evaluation of f in units of eps |f| (as the projected gradient's).
NOISE_ULPS = 1024.0
#: Halvings of the outer step before the direction is declared useless.
MAX_HALVINGS = 40
#: Problems whose feasible set and objective have the form the model assumes: ``{c'a = r,
#: 0 <= a <= C}``, a smooth linear term and ``u = c * a`` (the same ``c``; ``c = y`` for the
#: classifiers, ``c = 1`` for the one-class SVM). SVR's l1 term and its box ``[-C, C]`` are not.
SUPPORTED = ("svc", "perturb", "oneclass")


def _check_problem(problem: ProxyKernelProblem) -> None:
    if problem.kind not in SUPPORTED:
        raise ValueError(
            f"method='lowrank_newton' solves problem in {SUPPORTED} (a box from 0, one equality "
            f"constraint, a smooth objective); got problem={problem.kind!r}. Use method='pg'."
        )
    if "second_order" not in problem.provides:
        raise ValueError(
            "method='lowrank_newton' needs the derivative of K*(u) u, which a factored K0 "
            "provides; use method='pg' (solver='auto' picks it) for a dense K0."
        )
    # what the model assumes, checked rather than trusted (the kinds above satisfy it)
    form = _Form(problem)
    if (
        np.any(problem.lower != 0.0)
        or problem.l1_weight != 0.0
        or not np.array_equal(np.abs(form.sign), np.ones(problem.n))
    ):
        raise ValueError(
            f"method='lowrank_newton': problem {problem.kind!r} is not of the form {{e'a = r, "
            "0 <= a <= C} with u = +-a / s and no l1 term. Use method='pg'."
        )


class _Form:
    """The model's coordinates ``a' = a / s`` (``s = Ds = rho^(1/4)`` for a vector rho, theory.md
    §7; else 1), in which ``u = sign * a'`` with ``sign = +-1``, so the Hessian of ``-f`` is
    ``Y J Y`` with ``Y = diag(sign)`` and ``Y^2 = I`` (the Woodbury solves keep a scalar
    diagonal); the scaling moves into the box ``C / s`` and the constraint ``(e s)'a' = r``.
    """

    def __init__(self, problem: ProxyKernelProblem) -> None:
        n = problem.n
        self.s = np.ones(n) if problem.scale is None else np.asarray(problem.scale, float)
        self.sign = np.asarray(problem.sign, float)  # u_coef = sign / s (theory.md §7)
        self.eq = problem.eq_coef * self.s
        self.upper = problem.upper / self.s

    def point(self, ev: Evaluation) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(x', g')``: the point and the gradient of ``f`` in the model's coordinates."""
        return ev.alpha / self.s, ev.gradient * self.s


class _DualModel:
    """The dual of the outer iteration's quadratic model in ``(w, b)`` (module docstring)."""

    def __init__(self, problem, form, state, ev, mu, S):
        self.op = problem.operator
        self.state = state
        self.y = form.sign  # u = y a' (the Hessian's side)
        self.e = form.eq  # the constraint e'a' = r
        self.upper = form.upper
        self.x, self.g = form.point(ev)
        self.mu = mu
        self.S = S

    def E(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.op.apply_basis(self.state, self.S @ w)

    def at(self, w, b, Ew):
        """``(phi, a, free)`` at ``(w, b)`` given ``Ew``: O(n)."""
        r = self.g - self.y * Ew - self.e * b
        v = self.x + r / self.mu
        a = np.clip(v, 0.0, self.upper)
        dx = a - self.x
        phi = 0.5 * float(w @ w) + float(r @ dx) - 0.5 * self.mu * float(dx @ dx)
        free = (v > 0.0) & (v < self.upper)
        return phi, a, free


def _solve_dual(model: _DualModel, b0: float, max_inner: int, monitor: SolverMonitor):
    """Semismooth Newton with Armijo backtracking on the model's dual; returns ``(a, info)``."""
    k = model.S.shape[1]
    mu, y, e = model.mu, model.y, model.e
    w = np.zeros(k)
    b = float(b0) if np.isfinite(b0) else 0.0
    Ew = np.zeros(model.x.shape[0])
    phi, a, free = model.at(w, b, Ew)
    previous = None
    steps = 0
    exact = False
    for steps in range(1, max_inner + 1):  # noqa: B007 (reported)
        I = np.flatnonzero(free)
        ind = free.astype(np.float64)
        # One pass: E'(Y dx) for the gradient, E_I'(Y e) for the Hessian's b column, the Gram.
        gram, both = model.op.basis_gram_rows(
            model.state, free, np.column_stack([y * (a - model.x), ind * y * e])
        )
        both = model.S.T @ both
        grad = np.append(w - both[:, 0], -float(e @ (a - model.x)))
        hess = np.empty((k + 1, k + 1))
        GI = model.S.T @ gram @ model.S
        hess[:k, :k] = np.eye(k) + GI / mu
        hess[:k, k] = hess[k, :k] = both[:, 1] / mu
        # No free row: b is unconstrained to second order (phi is piecewise linear in b there);
        # a tiny curvature keeps the system solvable and the line search does the rest.
        eI = float(e[I] @ e[I])
        hess[k, k] = eI / mu + 1e-12 * (1.0 + eI / mu)
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


def _active_set_direction(
    problem, form, ev: Evaluation, gamma: float, G, nu0: float, max_inner: int, guess=None
):
    """Maximiser of a Newton model over the feasible set, by primal-dual active sets.

    The model ``g'd - 1/2 d'Q d`` with ``Q = gamma I + Z G Z'`` (``Z = Y [U q]``; the Hessian
    ``Y J Y`` of ``-f`` for the operator's ``gamma`` and ``G = H - gamma I``, plus ``prox I``
    when ``gamma`` is raised by ``prox``), over ``{y'd = 0, -x <= d <= C - x}``. Each
    iteration fixes the rows guessed active at their bounds and solves the equality-constrained
    model on the free rows ``F`` (Hintermueller, Ito & Kunisch 2002): ``Q_FF`` is inverted by
    ``Q^-1 v = (v - Z_F G (gamma I + Z_F'Z_F G)^-1 Z_F'v) / gamma`` (Woodbury without
    ``G^-1``; ``G`` is indefinite in general), so an iteration costs one Gram matrix over ``F``
    and one pass over the factor (the products ``Z'v`` of the masked model vectors are updated
    by the rows that changed sides, :meth:`~indefsvm.proxy.lowrank.LowRankProxyOperator.
    basis_gram_masked`). It stops when the guess repeats (then ``d`` solves the model
    exactly). Returns ``(d, steps, exact, nu)`` (``d`` None if a system was singular; ``nu`` the
    multiplier of ``y'd = 0``).
    """
    op, st = problem.operator, ev.state
    # in the model's coordinates (:class:`_Form`): y the Hessian's signs, e the constraint
    (x, g), y, e, C = form.point(ev), form.sign, form.eq, form.upper
    k = G.shape[0]
    lo, hi = -x, C - x
    if guess is None:
        # First guess: the rows at a bound that the gradient pushes against it.
        slope = g - nu0 * e
        upper, lower = (hi <= 0) & (slope > 0), (lo >= 0) & (slope < 0)
    else:
        upper, lower = guess
    d = None
    nu = nu0
    steps = 0
    # y dA = (y hi) on the upper rows + (y lo) on the lower rows; the vectors are fixed for this
    # model, only the masks move: the operator updates Z' of them by the rows that moved.
    y_hi, y_lo, y_g, y_e = y * hi, y * lo, y * g, y * e
    for steps in range(1, max_inner + 1):  # noqa: B007 (reported)
        free = ~(upper | lower)
        F = np.flatnonzero(free)
        dA = np.where(upper, hi, np.where(lower, lo, 0.0))
        columns = [(y_hi, upper), (y_lo, lower), (y_g, free), (y_e, free)]
        gram, R = op.basis_gram_masked(st, free, columns)
        R0, R1, R2 = R[:, 0] + R[:, 1], R[:, 2], R[:, 3]
        a0 = G @ R0
        try:
            X = gamma * np.eye(k) + gram @ G
            # Q^-1 v = (v - Z_F sol(Z_F'v)) / gamma with sol(c) = G X^-1 c
            s1 = G @ np.linalg.solve(X, np.column_stack([R1 - gram @ a0, R2]))
        except np.linalg.LinAlgError:
            return None, steps, False, nu0
        # e_F'Q^-1 v for v = g_F - Z_F a0 and v = e_F (e_F'Z_F c = R2'c)
        yq1 = (float(e[F] @ g[F]) - float(R2 @ a0) - float(R2 @ s1[:, 0])) / gamma
        yq2 = (float(e[F] @ e[F]) - float(R2 @ s1[:, 1])) / gamma
        if not yq2 > 0:
            return None, steps, False, nu0
        nu = (yq1 + float(e @ dA)) / yq2
        b1 = a0 + s1[:, 0] - nu * s1[:, 1]
        ztd_f = (R1 - gram @ a0 - nu * R2 - gram @ (s1[:, 0] - nu * s1[:, 1])) / gamma
        ztd = R0 + ztd_f  # Z'd
        back = op.apply_basis_columns(st, np.column_stack([b1, G @ ztd])) * y[:, None]
        d = dA.copy()
        d[F] = (g[F] - nu * e[F] - back[F, 0]) / gamma
        # multipliers of the rows at a bound: g - Q d - nu e
        lam = np.where(free, 0.0, g - gamma * d - back[:, 1] - nu * e)
        trial = d + lam / gamma
        new_upper, new_lower = trial > hi, trial < lo
        if np.array_equal(new_upper, upper) and np.array_equal(new_lower, lower):
            return form.s * d, steps, True, nu
        upper, lower = new_upper, new_lower
    return (None if d is None else form.s * d), steps, False, nu


def lowrank_newton(
    problem: ProxyKernelProblem,
    monitor: SolverMonitor,
    *,
    alpha0: NDArray[np.float64] | None = None,
    max_inner: int = 50,
    curvature_floor: float = 1e-10,
    proximal: float = 1e-2,
    armijo: float = 1e-4,
    fallback: bool = True,
    gradient_start: bool = True,
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
        Steps of the active-set iteration (and of the dual's Newton method) per model solve.
    curvature_floor : float
        Smallest model curvature off the span of ``[U q]``, relative to ``max(lambda(K0))``.
    proximal : float
        Initial ``prox`` of the model ``Y J Y + prox I``, relative to ``max(lambda(K0))``;
        divided by 10 after each iteration whose model the active-set iteration solved at the
        first try, multiplied by 10 otherwise (a larger ``prox`` moves fewer rows across their
        bounds per step).
    armijo : float
        Sufficient-ascent constant of the outer line search, in (0, 1/2).
    fallback : bool
        When no Newton direction ascends before the gap is certified, continue with the
        accelerated projected gradient from the best point (same monitor: the history, the
        limits and the certified bounds carry on; ``info["fallback"]`` records it). False: stop
        with ``"stalled"``.
    gradient_start : bool
        Without ``alpha0`` and when the initial point is ``alpha = 0`` (classification),
        start from the projected-gradient step (step ``1 / L``, the projected gradient's first
        step) when it ascends: the model's
        ``J`` is singular at ``alpha = 0`` (``gamma = 0``), where the first model then needs
        its proximal term and often the dual's semismooth Newton steps; one step moves the
        rows the linear term pushes to their bound (all of them for a small ``C``). One
        evaluation, counted as the first iteration: the solve stops there when the gap
        certifies. False: start at the initial point.

    Returns
    -------
    SolveResult
        ``info`` has ``n_inner`` (active-set and dual Newton steps), ``n_model`` (models solved
        through the dual), ``n_gradient`` (projected-gradient fallbacks), ``n_inexact_inner``,
        ``n_halvings``, ``n_passes`` (passes over the factor during the solve) and
        ``n_gram_passes`` (rows read by the Gram matrices, in units of n).
    """
    _check_problem(problem)
    if not is_positive_int(max_inner):
        raise ValueError(f"max_inner must be a positive integer; got {max_inner!r}.")
    if not (is_real(curvature_floor) and np.isfinite(curvature_floor) and curvature_floor > 0):
        raise ValueError(f"curvature_floor must be a finite number > 0; got {curvature_floor!r}.")
    if not (is_real(armijo) and 0 < armijo < 0.5):
        raise ValueError(f"armijo must be in (0, 1/2); got {armijo!r}.")
    op = problem.operator
    form = _Form(problem)
    passes0, gram0 = op.n_passes, op.n_gram_passes
    x = starting_point(problem, alpha0)
    scale = max(problem.lipschitz_estimate(), _EPS)
    floor = curvature_floor * scale
    ev = problem.evaluate(x)
    monitor.offer(ev)
    # (alpha = 0 only: the classifiers' start; the one-class start 1/n is regular)
    started = gradient_start and alpha0 is None and not np.any(ev.alpha) and _finite(ev)
    if started:
        ev = _gradient_start(problem, monitor, ev, scale)
    counts = {"n_inner": 0, "n_inexact_inner": 0, "n_halvings": 0, "n_model": 0, "n_gradient": 0}
    b_prev = ev.intercept
    prox = proximal * scale
    # The gradient start is an iteration of its own, and the monitor is asked after it: where
    # it certifies (a small C, whose rows all go to their bound), no Newton model is built.
    done = started and monitor.end_iteration(current_objective=ev.objective, step=1.0)
    while not done:
        if not _finite(ev):
            monitor.stop("numerical_error", "the objective or gradient is not finite")
            break
        gamma, H = op.kstar_u_jacobian(ev.state)
        # Levenberg-Marquardt: the model's Hessian is Y J Y + prox I (J = gamma I + [U q] G
        # [U q]', G = H - gamma I); at alpha = 0 J is singular (gamma = 0, and M's negative
        # eigendirections have no curvature), prox keeps the model's systems regular.
        G = H - gamma * np.eye(H.shape[0])
        mu = max(gamma + prox, floor)
        d, steps, exact, nu = _active_set_direction(problem, form, ev, mu, G, b_prev, max_inner)
        counts["n_inner"] += steps
        first_try = exact
        if not exact:
            # The active-set iteration cycled: the dual of the model (a convex problem, solved
            # by a globalised semismooth Newton method) finds the active set, the active-set
            # iteration restarted from it solves the exact model.
            omega, W = np.linalg.eigh(G)
            keep = omega > 0
            S = W[:, keep] * np.sqrt(omega[keep])
            model = _DualModel(problem, form, ev.state, ev, mu, S)
            a, inner = _solve_dual(model, b_prev, max_inner, monitor)
            counts["n_inner"] += inner["steps"]
            counts["n_model"] += 1
            guess = (a >= form.upper, a <= 0.0)
            d, steps, exact, nu = _active_set_direction(
                problem, form, ev, mu, G, inner["intercept"], max_inner, guess
            )
            counts["n_inner"] += steps
            if not exact:
                d, nu = problem.project(form.s * a) - ev.alpha, inner["intercept"]
                counts["n_inexact_inner"] += 1
        if np.isfinite(nu):
            b_prev = nu
        # Levenberg-Marquardt-like: the proximal curvature shrinks while the exact model is
        # solved at the first try, grows when it is not.
        prox = prox * 0.1 if first_try else max(prox, floor) * 10.0
        trial, t = (
            (None, 0.0)
            if d is None
            else _search(problem, monitor, ev, d, armijo, counts, arc=not exact)
        )
        if trial is None and not monitor.out_of_time():
            # Neither model gave an ascent step (an inexact model solution): a projected
            # gradient step along the projection arc, which ascends for small steps.
            counts["n_gradient"] += 1
            trial, t = _search(problem, monitor, ev, ev.gradient / scale, armijo, counts, arc=True)
        if trial is None:
            if monitor.out_of_time():
                monitor.stop("max_time")
                break
            if not monitor.certified() and fallback:
                # No ascent along any Newton direction before the gap certified (a badly scaled
                # kernel, float32 rounding): the projected gradient takes over from the best
                # point, with the same monitor (bounds, history, limits carry on).
                return _fall_back(problem, monitor, counts, op, passes0, gram0)
            monitor.stop("stalled", "no ascent along the Newton directions")
            break
        logger.debug(
            "newton: f=%.15g t=%g gamma=%.3g mu=%.3g first_try=%s exact=%s free=%d",
            trial.objective,
            t,
            gamma,
            mu,
            first_try,
            exact,
            int(np.count_nonzero((trial.alpha > 0) & (trial.alpha < problem.upper))),
        )
        ev = trial
        done = monitor.end_iteration(current_objective=ev.objective, step=t)
    info = {
        **counts,
        "n_passes": op.n_passes - passes0,
        "n_gram_passes": op.n_gram_passes - gram0,
    }
    return monitor.finish(info=info)


def _gradient_start(
    problem: ProxyKernelProblem, monitor: SolverMonitor, ev: Evaluation, lipschitz: float
) -> Evaluation:
    """The projected-gradient step from ``ev`` when it ascends, else ``ev`` (option
    ``gradient_start``)."""
    trial = problem.evaluate(proximal_step(problem, ev.alpha, ev.gradient, lipschitz))
    monitor.offer(trial)
    if _finite(trial) and trial.objective >= ev.objective:
        return trial
    return ev


def _fall_back(problem, monitor, counts, op, passes0, gram0) -> SolveResult:
    """The projected gradient from the monitor's best point, as the rest of this solve."""
    from indefsvm.proxy.solvers.pg import projected_gradient

    newton_iterations = monitor.n_iter
    logger.info(
        "lowrank_newton: no ascent along the Newton directions after %d iterations with the "
        "gap not certified; continuing with the projected gradient from the best point",
        newton_iterations,
    )
    result = projected_gradient(problem, monitor, alpha0=monitor.best.alpha)
    result.info.update(
        {
            **counts,
            "fallback": "pg",
            "newton_iterations": newton_iterations,
            "n_passes": op.n_passes - passes0,
            "n_gram_passes": op.n_gram_passes - gram0,
        }
    )
    return result


def _search(problem, monitor, ev, d, armijo, counts, *, arc, halvings=MAX_HALVINGS):
    """Backtracking on ``f`` from ``ev.alpha`` along ``d`` (``arc``: along ``P(x + t d)``).

    Every trial is a full evaluation offered to the monitor. Accepts the first ``t`` with
    ``f(x_t) >= f(x) + armijo g'(x_t - x)`` (rounding allowed) and ``g'(x_t - x) > 0``; returns
    ``(evaluation, t)`` or ``(None, t)``.
    """
    x, g = ev.alpha, ev.gradient
    noise = NOISE_ULPS * _EPS * max(1.0, abs(ev.objective))
    t = 1.0
    for _ in range(halvings):
        point = (
            problem.project(np.clip(x + t * d, problem.lower, problem.upper)) if arc else x + t * d
        )
        slope = float(g @ (point - x))
        flat = not slope > noise
        if flat and t < 1.0:
            return None, t
        trial = problem.evaluate(point)
        monitor.offer(trial)
        if not _finite(trial):
            pass
        elif flat:
            # The predicted ascent is below the rounding of f (near the optimum): f cannot
            # judge the step, the certified gap can (a full step of an exact model).
            if trial.objective >= ev.objective - noise and trial.gap < ev.gap:
                return trial, t
            return None, t
        elif trial.objective >= ev.objective + armijo * slope - noise:
            return trial, t
        t *= 0.5
        counts["n_halvings"] += 1
        if monitor.out_of_time():
            break
    return None, t


def _finite(ev: Evaluation) -> bool:
    return bool(np.isfinite(ev.objective) and np.all(np.isfinite(ev.gradient)))


#: The low-rank operator's factor (its derivative of ``K*(u) u`` and Gram matrices over rows).
lowrank_newton.needs = frozenset({"factor"})  # type: ignore[attr-defined]
