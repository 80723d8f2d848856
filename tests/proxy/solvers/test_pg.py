"""Projected gradient (``indefsvm.proxy.solvers.pg``): both step policies against independent
references.

``step="paper"`` is Algorithm 1 of paper 004 (Sect. 3.2): every iterate is checked to be
``P(alpha_k + (t/k) grad f(alpha_k))`` with the gradient ``e - Y K*(alpha) Y alpha`` of eq. (7)
(Danskin; ``K*`` from dense eigh) and the projection ``P`` onto ``{y'alpha = 0, 0 <= alpha <= C}``
from its KKT conditions (a scalar root by brentq, not the package's breakpoint search).
``step="accelerated"`` (FISTA with backtracking and restart) is checked against the SDP optimum
of problem (3) from every start, Lipschitz estimate and restart setting.
End-to-end checks through ``indefsvm.solve`` are in ``tests/proxy/test_api.py``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from helpers import sigmoid_problem
from reference import psd_part
from scipy.optimize import brentq
from sklearn.exceptions import ConvergenceWarning

from indefsvm import solve_problem
from indefsvm.proxy.problems import Evaluation, make_problem
from indefsvm.proxy.solvers import SolverMonitor, projected_gradient


class _Recorder:
    """The problem, recording every point the solver evaluates (the rest is delegated)."""

    def __init__(self, problem):
        self._problem = problem
        self.points = []

    def evaluate(self, alpha, **kwargs):
        self.points.append(np.array(alpha, copy=True))
        return self._problem.evaluate(alpha, **kwargs)

    def __getattr__(self, name):
        return getattr(self._problem, name)


def _problem(case):
    return make_problem("svc", case.K0, case.y, C=case.C, rho=case.rho)


def _dense_gradient(case, alpha):
    u = case.y * alpha
    K_star = psd_part(case.K0 + np.outer(u, u) / (4 * case.rho))
    return 1.0 - case.y * (K_star @ u)


def _kkt_projection(v, y, C):
    """Projection onto {y'x = 0, 0 <= x <= C} from its KKT conditions: ``x = clip(v - lam y)``
    with the multiplier ``lam`` a root of the monotone ``y'clip(v - lam y, 0, C)`` (brentq)."""

    def x_of(lam):
        return np.clip(v - lam * y, 0.0, C)

    span = np.abs(v).max() + C + 1.0
    lam = brentq(lambda t: y @ x_of(t), -span, span, xtol=1e-15, rtol=1e-15)
    return x_of(lam)


@pytest.mark.parametrize("step_size", [5.0, 0.5])
def test_paper_policy_takes_the_projected_step_t_over_k(svc_reference, step_size):
    case = svc_reference
    problem = _problem(case)
    rec = _Recorder(problem)
    monitor = SolverMonitor(problem, method="pg", tol=0.0, max_iter=6)
    with pytest.warns(ConvergenceWarning):
        res = projected_gradient(rec, monitor, step="paper", step_size=step_size)
    assert res.n_iter == 6 and res.info["step"] == "paper"
    pts = rec.points
    assert len(pts) == 6
    np.testing.assert_allclose(
        pts[0], _kkt_projection(np.zeros(len(case.y)), case.y, case.C), atol=1e-6
    )
    for k in range(1, len(pts)):
        v = pts[k - 1] + (step_size / k) * _dense_gradient(case, pts[k - 1])
        np.testing.assert_allclose(pts[k], _kkt_projection(v, case.y, case.C), atol=1e-6)
    # the result is the best iterate, with its objective
    best = max(pts, key=problem.objective)
    np.testing.assert_array_equal(res.alpha, best)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"restart": False},
        {"lipschitz0": 1e-6},  # far too small: backtracking must grow it
        {"lipschitz0": 1e6, "lipschitz_decrease": 0.5},  # far too large: it must shrink
        {"backtrack_factor": 10.0},
        {"evaluations": "full"},
        {"evaluations": "full", "lipschitz0": 1e-6},
    ],
    ids=["default", "no-restart", "tiny-L0", "huge-L0", "coarse-backtrack", "full", "full-tiny-L0"],
)
def test_accelerated_policy_reaches_the_sdp_optimum(svc_reference, options):
    case = svc_reference
    problem = _problem(case)
    monitor = SolverMonitor(problem, method="pg", tol=1e-8, max_iter=5000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = projected_gradient(problem, monitor, **options)
    assert res.status == "converged"
    # the certified gap bounds the true suboptimality; the optimum is the SDP's
    assert case.optimum - res.objective <= res.gap + 1e-6
    assert res.objective == pytest.approx(case.optimum, rel=1e-5, abs=1e-6)
    if "lipschitz0" in options and options["lipschitz0"] < 1:
        assert res.info["n_backtracks"] > 0
    if options.get("restart") is False:
        assert res.info["n_restarts"] == 0
    if options.get("evaluations", "lean") == "lean":
        assert res.info["n_objective_evaluations"] > 0
    else:
        assert res.info["n_objective_evaluations"] == 0
    if not options:
        # adaptive restart fires on this problem (35 iterations with it, 107 without)
        assert res.info["n_restarts"] > 0


def test_both_policies_agree_and_alpha0_is_projected(svc_reference):
    case = svc_reference
    problem = _problem(case)
    rec = _Recorder(problem)
    alpha0 = np.linspace(-1.0, 3.0, len(case.y))  # infeasible: outside the box, y'a != 0
    monitor = SolverMonitor(problem, method="pg", tol=1e-8, max_iter=5000)
    fast = projected_gradient(rec, monitor, alpha0=alpha0)
    np.testing.assert_allclose(rec.points[0], _kkt_projection(alpha0, case.y, case.C), atol=1e-6)
    monitor = SolverMonitor(problem, method="pg", tol=1e-3, max_iter=20000)
    slow = projected_gradient(problem, monitor, step="paper")
    assert slow.status == "converged"
    assert slow.objective == pytest.approx(fast.objective, rel=1e-3)
    assert slow.objective <= fast.upper_bound + 1e-9 and fast.objective <= slow.upper_bound + 1e-9


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"step": "newton"}, "step must be one of"),
        ({"step": "paper", "step_size": 0.0}, "step_size must be a finite number > 0"),
        ({"smoothing": 1e-4}, "use it with step='paper'"),
        ({"backtrack_factor": 1.0}, "backtrack_factor must be a finite number > 1"),
        ({"lipschitz_decrease": 1.5}, r"lipschitz_decrease must be in \(0, 1\]"),
        ({"alpha0": np.ones(3)}, "alpha0 must be a finite vector of length 14"),
        ({"evaluations": "some"}, "evaluations must be 'lean' or 'full'"),
    ],
)
def test_bad_options_get_clear_errors(svc_reference, kwargs, match):
    problem = _problem(svc_reference)
    monitor = SolverMonitor(problem, method="pg", tol=1e-6, max_iter=10)
    with pytest.raises(ValueError, match=match):
        projected_gradient(problem, monitor, **kwargs)


class _Checker(_Recorder):
    """Records objective-only evaluations and checks each against dense eigh of M."""

    def __init__(self, problem, case):
        super().__init__(problem)
        self.case = case
        self.partial = 0

    def evaluate_objective(self, alpha):
        ev = self._problem.evaluate_objective(alpha)
        self.partial += ev.partial
        c = self.case
        u = c.y * alpha
        lam = np.linalg.eigvalsh(c.K0 + np.outer(u, u) / (4 * c.rho))
        dense = alpha.sum() - 0.5 * u @ c.K0 @ u - (u @ u) ** 2 / (16 * c.rho)
        dense += c.rho * np.sum(np.minimum(lam, 0) ** 2)
        assert ev.gradient is None and ev.upper_bound == np.inf
        assert ev.objective == pytest.approx(dense, rel=1e-10, abs=1e-10)
        assert ev.objective == pytest.approx(self._problem.evaluate(alpha).objective, rel=1e-12)
        return ev


def test_lean_evaluations_follow_the_full_path_and_complete_the_result(svc_reference):
    """ "lean" evaluates trial points for their objective only (checked against dense eigh of M),
    and takes the same steps as "full" while the objective decides the backtracking test; the
    result carries a full evaluation (gradient-based bound, proxy kernel, intercept)."""
    case = svc_reference
    problem = _problem(case)
    rec = _Checker(problem, case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        monitor = SolverMonitor(problem, method="pg", tol=0.0, max_iter=8)
        lean = projected_gradient(rec, monitor)
        monitor = SolverMonitor(problem, method="pg", tol=0.0, max_iter=8)
        full = projected_gradient(problem, monitor, evaluations="full")
    assert rec.partial == lean.info["n_objective_evaluations"] > 0
    np.testing.assert_allclose(lean.history["objective"][:4], full.history["objective"][:4])
    K_star = psd_part(case.K0 + np.outer(case.y * lean.alpha, case.y * lean.alpha) / (4 * case.rho))
    np.testing.assert_allclose(lean.kernel, K_star, atol=1e-10)
    assert np.isfinite(lean.intercept)
    assert case.optimum - lean.objective <= lean.gap + 1e-9


def test_lean_evaluations_stay_as_fast_as_full_near_the_optimum():
    """Near the optimum f is flat to working precision while the certified bound still improves:
    "lean" must then let the gradient decide (curvature test), or its backtracking and restarts
    follow rounding noise (measured: 357 iterations instead of 126 to tol 1e-10 on this problem
    when the objective alone decides)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 10))
    w = rng.normal(size=10)
    y = np.where(X @ w + 0.5 * rng.normal(size=60) * np.linalg.norm(w) > 0, 1.0, -1.0)
    K0 = np.tanh(X @ X.T)
    n_iter = {}
    for evaluations in ("lean", "full"):
        problem = make_problem("svc", K0, y, C=1.0, rho=1.0)
        monitor = SolverMonitor(problem, method="pg", tol=1e-10, max_iter=2000)
        res = projected_gradient(problem, monitor, evaluations=evaluations)
        assert res.status == "converged"
        n_iter[evaluations] = res.n_iter
    assert n_iter["lean"] <= 1.2 * n_iter["full"]


# Contract of ``indefsvm.proxy.solvers.pg`` that the solver-level tests do not pin down.
#
# The fast first file of the ``solvers_pg`` mutation run (tools/mutation.py, docs/mutation.md):
# every input check with its anchored message, the status, message and ``info`` of the
# numerical-error exits (a problem whose objective is not finite), the arguments the paper's
# policy passes to the problem (smoothing, step ``t / k``) and the ``info`` of both policies.
#
# The accelerated policy's steps are pinned against an independent plain-numpy FISTA
# (``_reference``: Beck & Teboulle 2009 backtracking, O'Donoghue & Candès 2015 restarts, the
# lean evaluations' noise allowance) driven by an analytic concave quadratic on a box (``_Quad``,
# exposing the problem interface the solver uses): every evaluation (point and kind), backtrack,
# restart and Lipschitz estimate must agree. Exact 1-D cases pin the boundaries of the
# sufficient-ascent, curvature and noise tests; the numerical-error and max_time exits are
# driven by problems with non-finite values.


def _small_problem(n=12, seed=3):
    K0, y = sigmoid_problem(n, seed)
    return make_problem("svc", K0, y, C=1.0, rho=0.5)


def _monitor(problem, **kw):
    return SolverMonitor(
        problem, method="pg", tol=kw.pop("tol", 1e-8), max_iter=kw.pop("max_iter", 50), **kw
    )


class _Spy:
    """The problem, recording the keyword arguments of evaluate and the arguments of prox."""

    def __init__(self, problem, nan_after=None):
        self._small_problem = problem
        self.evaluate_kwargs = []
        self.prox_args = []
        self.nan_after = nan_after

    def evaluate(self, alpha, **kwargs):
        self.evaluate_kwargs.append(kwargs)
        ev = self._small_problem.evaluate(alpha, **kwargs)
        if self.nan_after is not None and len(self.evaluate_kwargs) > self.nan_after:
            ev.smooth_objective = float("nan")
            ev.objective = float("nan")
        return ev

    def prox(self, v, step, metric=None):
        self.prox_args.append((step, metric))
        return self._small_problem.prox(v, step, metric)

    def __getattr__(self, name):
        return getattr(self._small_problem, name)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"restart": "never"},
            "restart must be True, False, 'both', 'gradient' or 'function'; got 'never'.",
        ),
        ({"step": "fista"}, "step must be one of ('accelerated', 'paper'); got 'fista'."),
        ({"step_size": 0.0}, "step_size must be a finite number > 0; got 0.0."),
        ({"step_size": np.inf}, "step_size must be a finite number > 0; got inf."),
        ({"smoothing": -1.0}, "smoothing must be a finite number >= 0; got -1.0."),
        ({"smoothing": np.nan}, "smoothing must be a finite number >= 0; got nan."),
        ({"smoothing": "a"}, "smoothing must be a finite number >= 0; got 'a'."),
        (
            {"smoothing": 0.1},
            "smoothing is the paper's gradient approximation; use it with step='paper'.",
        ),
        (
            {"lipschitz0": 0.0},
            "lipschitz0 must be None (estimated from K0) or a finite number > 0; got 0.0.",
        ),
        (
            {"lipschitz0": -1.0},
            "lipschitz0 must be None (estimated from K0) or a finite number > 0; got -1.0.",
        ),
        (
            {"lipschitz0": "a"},
            "lipschitz0 must be None (estimated from K0) or a finite number > 0; got 'a'.",
        ),
        ({"backtrack_factor": 1.0}, "backtrack_factor must be a finite number > 1; got 1.0."),
        ({"lipschitz_decrease": 0.0}, "lipschitz_decrease must be in (0, 1]; got 0.0."),
        ({"lipschitz_decrease": 1.5}, "lipschitz_decrease must be in (0, 1]; got 1.5."),
        ({"alpha0": np.zeros(3)}, "alpha0 must be a finite vector of length 12."),
    ],
)
def test_input_checks(kwargs, message):
    problem = _small_problem()
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        projected_gradient(problem, _monitor(problem), **kwargs)


def test_edges_of_the_input_checks_are_accepted():
    problem = _small_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem, max_iter=3), lipschitz_decrease=1.0)
        assert res.n_iter == 3
        res = projected_gradient(
            problem, _monitor(problem, max_iter=3), step="paper", smoothing=0.0, step_size=5.0
        )
        assert res.info == {"step": "paper", "step_size": 5.0, "smoothing": 0.0}
        # an integer starting point is converted
        res = projected_gradient(problem, _monitor(problem, max_iter=2), alpha0=[0] * 12)
        assert res.n_iter == 2


def test_non_finite_start_is_a_numerical_error():
    problem = _Spy(_small_problem(), nan_after=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem))
    assert res.status == "numerical_error"
    assert "the objective at the starting point is not finite" in res.message
    assert res.info == {"step": "accelerated"}
    assert len(problem.evaluate_kwargs) == 1


def test_paper_policy_passes_smoothing_and_the_step_t_over_k():
    problem = _Spy(_small_problem())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(
            problem, _monitor(problem, max_iter=4), step="paper", step_size=2.0, smoothing=0.3
        )
    assert res.n_iter == 4
    assert all(kw == {"smoothing": 0.3} for kw in problem.evaluate_kwargs)
    steps = [s for s, _ in problem.prox_args]
    assert steps == [2.0 / k for k in range(1, len(steps) + 1)] and len(steps) >= 3
    assert res.info == {"step": "paper", "step_size": 2.0, "smoothing": 0.3}
    assert res.history["objective"].size == res.n_iter


def test_paper_policy_stops_on_a_non_finite_objective():
    problem = _Spy(_small_problem(), nan_after=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem), step="paper")
    assert res.status == "numerical_error"
    assert "the objective or gradient is not finite" in res.message
    assert len(problem.evaluate_kwargs) == 3  # stopped at the first non-finite evaluation


def test_accelerated_policy_steps_and_info():
    """Every prox step is 1/L in the problem's metric; info reports the counters and the final
    Lipschitz estimate."""
    K0, y = sigmoid_problem(12, 3)
    problem = _Spy(make_problem("svc", K0, y, C=1.0, rho=np.linspace(0.3, 3.0, 12)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem, max_iter=20), lipschitz0=50.0)
    assert set(res.info) == {
        "step",
        "evaluations",
        "n_objective_evaluations",
        "n_backtracks",
        "n_restarts",
        "lipschitz_estimate",
    }
    assert res.info["step"] == "accelerated" and res.info["evaluations"] == "lean"
    # objective-only evaluations are counted among the evaluations, never more of them
    assert 0 <= res.info["n_objective_evaluations"] <= res.n_evaluations
    metric = problem.metric
    assert all(m is not None and np.array_equal(m, metric) for _, m in problem.prox_args)
    # L starts at lipschitz0 and is multiplied by 0.9 after each accepted step: the first step
    # is 1/50, and the reported estimate is that of the last step times 0.9
    assert problem.prox_args[0][0] == pytest.approx(1.0 / 50.0, rel=1e-15)
    last = problem.prox_args[-1][0]
    assert res.info["lipschitz_estimate"] == pytest.approx(0.9 / last, rel=1e-12)
    assert res.info["n_backtracks"] >= 0 and res.info["n_restarts"] >= 0


def test_backtracking_doubles_and_accepted_steps_relax_the_lipschitz_estimate():
    """From a tiny ``lipschitz0`` every rejected step halves the next one (backtrack_factor 2 by
    default) and every accepted step lets the next one grow by 1 / 0.9 (lipschitz_decrease);
    ``n_backtracks`` counts the halvings."""
    problem = _Spy(_small_problem())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem, max_iter=15), lipschitz0=1e-3)
    steps = np.array([s for s, _ in problem.prox_args])
    ratios = steps[1:] / steps[:-1]
    halved = np.isclose(ratios, 0.5, rtol=1e-12)
    grown = np.isclose(ratios, 1 / 0.9, rtol=1e-12)
    assert np.all(halved | grown)
    assert res.info["n_backtracks"] == int(halved.sum()) >= 5
    assert steps[0] == 1e3


def test_exit_messages_are_exact():
    problem = _Spy(_small_problem(), nan_after=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem))
    assert re.search(r"(^|\W)the objective at the starting point is not finite($|\W)", res.message)
    problem = _Spy(_small_problem(), nan_after=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(problem, _monitor(problem), step="paper")
    assert re.search(r"(^|\W)the objective or gradient is not finite($|\W)", res.message)


NOISE = 1024.0 * np.finfo(np.float64).eps  # NOISE_ULPS * eps, documented in pg.py


SLACK = 1e-14  # rounding allowance of the sufficient-ascent test, relative to max(1, |f(y)|)


class _Quad:
    """``max F0 + s (c'a - a'Qa / 2)`` over the box ``[lo, hi]^n``: an analytic concave problem.

    ``upper_bound`` is ``f(a) + max_{z in box} g'(z - a)`` (valid for concave f) or +inf
    (``bound=False``, so the monitor never converges and a run takes exactly ``max_iter``
    iterations). ``nan_outside`` makes f NaN outside the box (the extrapolated points),
    ``nan_gradient_above`` makes the gradient NaN where ``a[0]`` exceeds it (f stays finite),
    ``nan_after`` makes every evaluation after that many NaN.
    """

    kind = "quad"

    def __init__(
        self,
        Q,
        c,
        *,
        lo=-1.0,
        hi=1.0,
        F0=0.0,
        s=1.0,
        w=None,
        x0=None,
        bound=False,
        nan_outside=False,
        nan_gradient_above=None,
        nan_after=None,
        lipschitz=None,
    ):
        self.Q = np.asarray(Q, dtype=float)
        self.c = np.asarray(c, dtype=float)
        self.n = self.c.size
        self.lo, self.hi, self.F0, self.s = lo, hi, F0, s
        self._w = w
        self._x0 = np.zeros(self.n) if x0 is None else np.asarray(x0, dtype=float)
        self.bound = bound
        self.nan_outside = nan_outside
        self.nan_gradient_above = nan_gradient_above
        self.nan_after = nan_after
        self._lipschitz = lipschitz
        self.calls = []  # ("full" | "objective", alpha)
        self.prox_steps = []

    # interface used by the solver and the monitor
    metric = property(lambda self: self._w)
    baseline_objective = property(lambda self: self.F0)

    def reset_warm_start(self):
        pass

    def lipschitz_estimate(self):
        if self._lipschitz is not None:
            return self._lipschitz
        return self.s * float(np.linalg.eigvalsh(self.Q)[-1])

    def project(self, v):
        return np.clip(np.asarray(v, dtype=float), self.lo, self.hi)

    def prox(self, v, step, metric=None):
        # the box is separable: its projection in any diagonal metric is the clip
        self.prox_steps.append(step)
        return self.project(v)

    def initial_point(self):
        return self.project(self._x0)

    def kernel_from_state(self, state):
        return None

    def _f(self, a):
        f = self.F0 + self.s * (self.c @ a - 0.5 * a @ (self.Q @ a))
        bad = self.nan_after is not None and len(self.calls) > self.nan_after
        if bad or (self.nan_outside and (np.any(a < self.lo) or np.any(a > self.hi))):
            f = np.nan
        return float(f)

    def _g(self, a):
        g = self.s * (self.c - self.Q @ a)
        if self.nan_gradient_above is not None and a[0] > self.nan_gradient_above:
            g = np.full(self.n, np.nan)
        return g

    def evaluate(self, alpha, **kwargs):
        a = np.array(alpha, dtype=float)
        self.calls.append(("full", a))
        f, g = self._f(a), self._g(a)
        ub = np.inf
        if self.bound:
            ub = f + float(np.sum(np.maximum(g * (self.hi - a), g * (self.lo - a))))
        return Evaluation(a, f, f, g, ub, 0.0, None)

    def evaluate_objective(self, alpha):
        a = np.array(alpha, dtype=float)
        self.calls.append(("objective", a))
        f = self._f(a)
        return Evaluation(a, f, f, None, np.inf, np.nan, None, partial=True)


def _quad(n=5, seed=0, scale=4.0, **kw):
    """A random concave quadratic whose maximiser is partly inside, partly on the box."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    Q = B @ B.T / n + 0.1 * np.eye(n)
    c = scale * rng.standard_normal(n)
    return _Quad(Q, c, **kw)


def _reference(prob, *, L, max_iter, restart="both", lean=True, bf=2.0, ld=0.9):
    """FISTA with backtracking and adaptive restart, from the papers (plain numpy).

    Beck & Teboulle (2009) for a maximisation in the metric ``W = diag(w)``:
    ``x+ = P(y + W^-1 g(y) / L)``, accepted when ``f(x+) >= f(y) + g'(x+ - y) - L/2 ||x+ - y||_W^2``
    (up to ``SLACK max(1, |f(y)|)``), else ``L *= bf``; after acceptance ``L *= ld``;
    ``t+ = (1 + sqrt(1 + 4 t^2)) / 2``, ``y+ = x+ + (t - 1) / t+ (x+ - x)``. Restart
    (O'Donoghue & Candès 2015): gradient when ``(y - x+)'W(x+ - x) > 0``, function when
    ``f(x+) < f(x)`` (by more than the noise allowance with lean evaluations); then ``t+ = 1``,
    ``y+ = x+``. Lean evaluations (pg's docstring): trial points get f only; when the predicted
    gain is within f's rounding (``NOISE max(1, |f(y)|)``) the gradient at ``x+`` is computed
    and the curvature test ``(g(y) - g(x+))'(x+ - y) <= L ||x+ - y||_W^2`` decides as well
    (always applied with full evaluations); the gradient is computed where it is needed (at
    ``y+``, or at ``x+`` when ``y+ = x+``). An extrapolated point with a non-finite value is
    replaced by ``x+`` (t kept).

    Returns the trace: every evaluation (kind, point) in order, f and L after each iteration,
    the counters, and the set of branches taken (so a test can check that its scenario
    exercises them).
    """
    w = np.ones(prob.n) if prob.metric is None else prob.metric
    calls = []

    def f(a, kind):
        calls.append((kind, a))
        return prob._f(a)  # noqa: SLF001 - the reference reads the analytic problem directly

    def grad(a):
        return prob._g(a)  # noqa: SLF001

    def noise(v):
        return NOISE * max(1.0, abs(v))

    x = prob.initial_point()
    fx = f(x, "full")
    y, fy, gy = x, fx, grad(x)
    t = 1.0
    tr = {"f": [], "L": [], "n_backtracks": 0, "n_restarts": 0, "events": set(), "calls": calls}
    for _ in range(max_iter):
        for _ in range(200):
            xn = np.clip(y + gy / (L * w), prob.lo, prob.hi)
            if lean:
                fn, gn = f(xn, "objective"), None
            else:
                fn, gn = f(xn, "full"), grad(xn)
            d = xn - y
            dd = float(np.sum(w * d * d))
            if dd == 0.0:
                tr["events"].add("dd0")
                break
            gain = float(gy @ d) - L / 2 * dd
            if lean and gain <= noise(fy):
                tr["events"].add("gain within noise")
                fn, gn = f(xn, "full"), grad(xn)
            ok = bool(np.isfinite(fn)) and fn >= fy + gain - SLACK * max(1.0, abs(fy))
            if ok and gn is not None:
                curvature = float((gy - gn) @ d)
                ok = curvature <= L * dd * (1 + 1e-12)
                if not ok:
                    tr["events"].add("curvature rejects")
                    _margin(tr, "curvature rejects", curvature / (L * dd) - 1.0)
            if ok:
                break
            L *= bf
            tr["n_backtracks"] += 1
        t_new = (1 + np.sqrt(1 + 4 * t * t)) / 2
        momentum = float((y - xn) @ (w * (xn - x)))
        grad_restart = restart in ("both", "gradient") and momentum > 0
        allowance = noise(fx) if lean else 0.0
        fun_restart = restart in ("both", "function") and fn < fx - allowance
        if lean and restart in ("both", "function") and fx - allowance <= fn < fx:
            tr["events"].add("decrease within noise")
        if fn < fx and not lean:
            tr["events"].add("decrease")
        beta = (t - 1) / t_new
        if grad_restart or fun_restart:
            tr["events"].add("gradient restart" if grad_restart else "function restart")
            # How far from the other side of its test the branch was taken, relative to the
            # sizes that enter it: the scenario must take it by a margin no rounding can close.
            step_sq = float(np.sqrt(((y - xn) @ (w * (y - xn))) * ((xn - x) @ (w * (xn - x)))))
            if grad_restart:
                _margin(tr, "gradient restart", momentum / max(step_sq, 1e-300))
            else:
                # not a gradient restart as well: its test is <= 0 (by this margin), and f fell
                fell = (fx - allowance - fn) / max(1.0, abs(fx))
                if restart == "both":
                    fell = min(fell, -momentum / max(step_sq, 1e-300))
                _margin(tr, "function restart", fell)
            t_new, beta = 1.0, 0.0
            tr["n_restarts"] += 1
        if beta == 0.0:
            if gn is None:
                fn, gn = f(xn, "full"), grad(xn)
            y, fy, gy = xn, fn, gn
        else:
            y = xn + beta * (xn - x)
            fy, gy = f(y, "full"), grad(y)
            if not np.isfinite(fy):
                tr["events"].add("extrapolated point not finite")
                if gn is None:
                    fn, gn = f(xn, "full"), grad(xn)
                y, fy, gy = xn, fn, gn
        x, fx, t = xn, fn, t_new
        L *= ld
        tr["f"].append(fx)
        tr["L"].append(L)
    tr["L_final"] = L
    return tr


def _margin(tr, event, value):
    """Keep the largest relative margin by which the reference took ``event``."""
    tr.setdefault("margins", {})
    tr["margins"][event] = max(tr["margins"].get(event, -np.inf), value)


def _solve(prob, *, max_iter, **kw):
    """Run pg's accelerated policy on ``prob``, recording every iterate and the L passed to the
    callback."""
    seen = {"alpha": [], "lipschitz": []}

    def callback(info):
        seen["lipschitz"].append(info["lipschitz"])

    monitor_kw = {k: kw.pop(k) for k in ("max_time", "tol") if k in kw}
    monitor = SolverMonitor(
        prob, method="pg", tol=monitor_kw.get("tol", 0.0), max_iter=max_iter,
        callback=callback, max_time=monitor_kw.get("max_time"),
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(prob, monitor, **kw)
    return res, seen


def _assert_same_trace(res, seen, ref, prob):
    """pg made the reference's evaluations (kind and point, in order), iterations, restarts,
    backtracks and Lipschitz estimates. The monitor may complete the returned point at the end
    (one more full evaluation, not counted)."""
    calls = prob.calls
    assert len(calls) - len(ref["calls"]) in (0, 1)
    if len(calls) > len(ref["calls"]):
        assert calls[-1][0] == "full"
        np.testing.assert_array_equal(calls[-1][1], res.alpha)
    for k, ((kind, a), (ref_kind, ref_a)) in enumerate(zip(calls, ref["calls"], strict=False)):
        assert kind == ref_kind, f"evaluation {k}"
        np.testing.assert_allclose(a, ref_a, rtol=1e-12, atol=1e-14, err_msg=f"evaluation {k}")
    assert res.n_evaluations == len(ref["calls"])
    assert res.info["n_objective_evaluations"] == sum(k == "objective" for k, _ in ref["calls"])
    assert res.n_iter == len(ref["f"])
    # the history's objective is f at the iterate x_k (not the best so far)
    np.testing.assert_allclose(res.history["objective"], ref["f"], rtol=1e-13)
    np.testing.assert_allclose(seen["lipschitz"], ref["L"], rtol=1e-13)
    assert res.info["n_backtracks"] == ref["n_backtracks"]
    assert res.info["n_restarts"] == ref["n_restarts"]
    assert res.info["lipschitz_estimate"] == pytest.approx(ref["L_final"], rel=1e-13)


def _ill(seed=0, *, n=5, cond=100.0, box=100.0, **kw):
    """An ill-conditioned concave quadratic (condition number ``cond``): momentum overshoots,
    so restarts happen; with ``box`` small the maximiser is on the box."""
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    Q = U @ np.diag(np.geomspace(1.0, 1.0 / cond, n)) @ U.T
    return _Quad(Q, rng.standard_normal(n), lo=-box, hi=box, **kw)


# name -> (problem factory, L0 / s, restart, evaluations, branches the reference must take)
# fmt: off
_SCENARIOS = {
    "backtracks-both-lean": (lambda: _ill(), 0.05, "both", "lean", {"gradient restart"}),
    "both-full": (lambda: _ill(), 3.0, "both", "full", {"gradient restart", "decrease"}),
    "gradient-lean": (lambda: _ill(), 0.05, "gradient", "lean", {"gradient restart"}),
    "gradient-full-metric": (
        lambda: _ill(w=np.linspace(0.5, 2.0, 5)), 0.05, "gradient", "full",
        {"gradient restart", "decrease"},
    ),
    "both-lean-metric": (
        lambda: _ill(w=np.linspace(0.5, 2.0, 5)), 3.0, "both", "lean", {"gradient restart"},
    ),
    "function-lean": (lambda: _ill(), 0.05, "function", "lean", {"function restart"}),
    "function-full-metric": (
        lambda: _ill(w=np.linspace(0.5, 2.0, 5)), 0.05, "function", "full",
        {"function restart"},
    ),
    "no-restart-lean": (lambda: _ill(), 3.0, False, "lean", set()),
    "no-restart-full": (lambda: _ill(), 3.0, False, "full", {"decrease"}),
    # the maximiser on the box: a function restart that is not a gradient one under "both".
    # The data are chosen so that every branch is taken by a wide margin (_margin): an earlier
    # scenario took its function restart by 1e-16 and missed it on another host (issue 22).
    "both-full-box": (
        lambda: _Quad([[6.032, -2.305], [-2.305, 1.21]], [-1.041, -0.606], x0=[0.699, 0.481]),
        1.0, "both", "full", {"function restart", "gradient restart", "curvature rejects"},
    ),
    # a vertex maximiser: the step becomes exactly 0 (dd == 0) and the iterate stays put
    "vertex-lean": (lambda: _quad(), 3.0, "both", "lean", {"dd0", "gradient restart"}),
    "vertex-full-function": (lambda: _quad(), 0.05, "function", "full", {"dd0"}),
    # f flat to working precision (|f| = 1e6, changes ~1e-8): the noise allowance decides
    "flat-function-lean": (
        lambda: _ill(F0=1e6, s=1e-8), 0.05, "function", "lean",
        {"decrease within noise", "gain within noise", "curvature rejects"},
    ),
    "flat-both-lean": (
        lambda: _ill(F0=1e6, s=1e-8), 3.0, "both", "lean",
        {"gain within noise", "curvature rejects", "gradient restart"},
    ),
    "flat-function-full": (
        lambda: _ill(F0=1e6, s=1e-8), 0.05, "function", "full",
        {"function restart", "curvature rejects"},
    ),
    # |f| about 1: the allowance is 1024 eps (not 2048 eps) and a decrease just above it restarts
    "unit-flat-function-lean": (
        lambda: _ill(1, F0=1.0, s=2e-12), 1.0, "function", "lean",
        {"function restart", "decrease within noise"},
    ),
    # extrapolated points outside the box have no finite value: x_{k+1} is used instead
    "extrapolation-not-finite-lean": (
        lambda: _quad(nan_outside=True), 3.0, False, "lean", {"extrapolated point not finite"},
    ),
    "extrapolation-not-finite-full": (
        lambda: _quad(nan_outside=True), 3.0, False, "full", {"extrapolated point not finite"},
    ),
}


@pytest.mark.parametrize("name", sorted(_SCENARIOS))
def test_accelerated_policy_follows_the_reference_fista(name):
    """The accelerated policy is FISTA with backtracking, metric and adaptive restart: every
    evaluation (point and kind), iteration, backtrack, restart, Lipschitz estimate (info and
    callback) and the history's objective at the iterate agree with the plain-numpy reference."""
    make, L_rel, restart, evaluations, events = _SCENARIOS[name]
    prob = make()
    L0 = L_rel * prob.s
    res, seen = _solve(prob, max_iter=60, lipschitz0=L0, restart=restart, evaluations=evaluations)
    ref = _reference(make(), L=L0, max_iter=60, restart=restart, lean=evaluations == "lean")
    assert events <= ref["events"], "the scenario no longer exercises its branches"
    # ... and takes them by a margin that no host's rounding can close (Numba and BLAS round
    # differently per CPU: a branch taken by 1e-16 is a property of the host, not of pg). The
    # flat scenarios are built at f's rounding level on purpose (exact binary decreases).
    if not name.startswith(("flat-", "unit-flat-")):
        for event in events & set(ref.get("margins", {})):
            assert ref["margins"][event] >= 1e-6, (event, ref["margins"][event])
    assert res.status == "max_iter"
    _assert_same_trace(res, seen, ref, prob)


def test_restart_true_is_both_and_the_defaults_are_documented():
    """``restart=True`` is "both"; the defaults are backtrack_factor 2, lipschitz_decrease 0.9,
    lean evaluations, t = 1 at the start, and L0 = problem.lipschitz_estimate()."""
    prob = _ill(0, box=1.0)
    res, seen = _solve(prob, max_iter=60)
    ref = _reference(_ill(0, box=1.0), L=prob.lipschitz_estimate(), max_iter=60)
    assert {"gradient restart", "curvature rejects"} <= ref["events"]
    _assert_same_trace(res, seen, ref, prob)
    prob = _ill(0, box=1.0)
    res, seen = _solve(
        prob, max_iter=60, restart=True, backtrack_factor=3.0, lipschitz_decrease=0.5
    )
    ref = _reference(_ill(0, box=1.0), L=prob.lipschitz_estimate(), max_iter=60, bf=3.0, ld=0.5)
    _assert_same_trace(res, seen, ref, prob)


@pytest.mark.parametrize(("estimate", "first_step"), [(0.5, 2.0), (0.0, 1e12)])
def test_default_lipschitz_is_the_problems_estimate_floored_at_1e_12(estimate, first_step):
    prob = _quad(lipschitz=estimate)
    _solve(prob, max_iter=1)
    assert prob.prox_steps[0] == first_step


def test_problem_without_an_objective_only_evaluation_gets_full_ones():
    """Problems written before ``evaluate_objective`` existed: lean evaluations fall back to
    ``evaluate`` (every trial point full, so the curvature test applies), same steps."""

    class FullOnly(_Quad):
        def __getattribute__(self, name):
            if name == "evaluate_objective":
                raise AttributeError(name)
            return super().__getattribute__(name)

    def make():
        p = _ill()
        return FullOnly(p.Q, p.c, lo=p.lo, hi=p.hi)

    prob = make()
    assert not hasattr(prob, "evaluate_objective")
    res, seen = _solve(prob, max_iter=60, lipschitz0=0.05)
    ref = _reference(make(), L=0.05, max_iter=60, lean=False)
    _assert_same_trace(res, seen, ref, prob)
    assert res.info["evaluations"] == "lean" and res.info["n_objective_evaluations"] == 0


def _one_dim(q, c, *, F0=0.0, box=1.0):
    return _Quad([[q]], [c], lo=-box, hi=box, F0=F0)


@pytest.mark.parametrize(
    ("F0", "log2_c", "L", "gain_over_noise"),
    [(0.0, -20, 2.0, 1), (0.0, -20, 1.0, 2), (1024.0, -15, 2.0, 1), (1024.0, -15, 1.0, 2)],
)
def test_lean_curvature_test_applies_exactly_when_the_gain_is_within_the_noise(
    F0, log2_c, L, gain_over_noise
):
    """Lean evaluations: the curvature test (which needs the gradient at x+) is made when the
    predicted gain ``g'(x+ - y) - L/2 ||x+ - y||^2`` is at most ``1024 eps max(1, |f(y)|)``,
    equality included. In 1-D from y = 0 with c = 2^k and L a power of two the gain is exact:
    here it is 1 or 2 times the allowance (2^-42 |f|-relative), and the curvature ``q = 1.01 L``
    fails while the ascent test passes (the deficit is below its rounding allowance), so the
    curvature test shows as one backtrack."""
    prob = _one_dim(1.01 * L, 2.0**log2_c, F0=F0)
    res, _ = _solve(prob, max_iter=1, lipschitz0=L)
    gain = 2.0 ** (2 * log2_c) / L - 0.5 * L * (2.0**log2_c / L) ** 2
    assert gain == gain_over_noise * NOISE * max(1.0, F0)
    kinds = [k for k, _ in prob.calls]
    if gain_over_noise == 1:
        # x+ completed, rejected by curvature; the halved step is completed and accepted
        assert res.info["n_backtracks"] == 1
        assert kinds[:5] == ["full", "objective", "full", "objective", "full"]
    else:
        assert res.info["n_backtracks"] == 0
        assert kinds[:3] == ["full", "objective", "full"]  # x+ completed after acceptance
    assert res.n_evaluations == (5 if gain_over_noise == 1 else 3)


@pytest.mark.parametrize(
    ("q", "F0", "accepted"),
    [
        (1.0000000209546944, 0.5, True),  # deficit == 1e-14 exactly (rounded): accepted
        (1.0000000213053046, 0.5, False),  # deficit just above 1e-14: rejected
        (1.0 + 2.0**-16, 1024.0, True),  # deficit 0.7e-11 < 1e-14 * 1024
        (1.0 + 2.0**-15, 1024.0, False),  # deficit 1.5e-11 > 1e-14 * 1024
    ],
)
def test_sufficient_ascent_allows_1e_14_relative_rounding(q, F0, accepted):
    """The sufficient-ascent test ``f(x+) >= f(y) + gain - 1e-14 max(1, |f(y)|)`` at its
    boundary (lean evaluations, gain 2^-21 far above the noise: no curvature test). With
    ``f = F0 + c x - q x^2 / 2``, c = 2^-10, L = 1, the deficit is ``(q - 1) x+^2 / 2``."""
    c = 2.0**-10
    prob = _one_dim(q, c, F0=F0)
    x1 = np.array([c])
    gain = c * c - 0.5 * c * c
    deficit_ok = prob._f(x1) >= prob._f(np.zeros(1)) + gain - 1e-14 * max(1.0, F0)  # noqa: SLF001
    assert deficit_ok == accepted
    if F0 == 0.5 and accepted:  # the equality case is exact
        assert prob._f(x1) == (F0 + gain) - 1e-14  # noqa: SLF001
    res, _ = _solve(prob, max_iter=1, lipschitz0=1.0)
    assert res.info["n_backtracks"] == (0 if accepted else 1)


@pytest.mark.parametrize(
    ("q", "accepted"), [(1.0 + 1e-12, True), (1.0 + 2.0**-41, True), (1.0 + 2.0**-39, False)]
)
def test_full_curvature_test_allows_1e_12_relative(q, accepted):
    """evaluations="full": ``(g(y) - g(x+))'(x+ - y) <= L ||x+ - y||^2 (1 + 1e-12)``, equality
    included. In 1-D from 0 with c = 2^-4 and L = 1 the left side is ``q 2^-8`` exactly; the
    ascent test passes (deficit far below 1e-14)."""
    prob = _one_dim(q, 2.0**-4)
    lhs = (prob._g(np.zeros(1)) - prob._g(np.array([2.0**-4]))) @ np.array([2.0**-4])  # noqa: SLF001
    if q == 1.0 + 1e-12:
        assert float(lhs) == 2.0**-8 * (1 + 1e-12)  # the boundary, exactly
    res, _ = _solve(prob, max_iter=1, lipschitz0=1.0, evaluations="full")
    assert res.info["n_backtracks"] == (0 if accepted else 1)


@pytest.mark.parametrize("evaluations", ["lean", "full"])
def test_exhausted_backtracking_is_a_numerical_error(evaluations):
    """Every trial point has a non-finite objective (all evaluations after the first): after
    MAX_BACKTRACKS = 200 doublings of L the run stops with status numerical_error and says so.
    From y = 0 the steps 2^-k never round to 0, so all 200 are made."""
    prob = _quad(nan_after=1)
    res, _ = _solve(prob, max_iter=5, lipschitz0=1.0, evaluations=evaluations)
    assert res.status == "numerical_error"
    assert res.message == (
        f"no ascent step found after 200 backtracking steps (Lipschitz estimate "
        f"{2.0**200:.3g}); the objective or gradient is not finite or not smooth here"
    )
    assert res.info["n_backtracks"] == 200
    assert res.info["lipschitz_estimate"] == 2.0**200
    assert res.n_iter == 0 and res.n_evaluations == len(prob.calls)
    kinds = [k for k, _ in prob.calls]
    assert kinds.count("objective" if evaluations == "lean" else "full") == 200 + (
        evaluations == "full"
    )
    np.testing.assert_array_equal(res.alpha, np.zeros(5))


@pytest.mark.parametrize(("nan_after", "evaluations"), [(1, "lean"), (30, "full")])
def test_backtracking_that_reaches_a_zero_step_with_a_non_finite_trial_says_how_many_steps(
    nan_after, evaluations
):
    """Every evaluation after the first ``nan_after`` is not finite. From a point inside the box
    the step 2^-k g rounds to 0 after about 55 doublings: the trial point is then y itself
    (dd == 0), still not finite, and the run stops with numerical_error. The message gives the
    number of backtracking steps made in that iteration (the trailing halvings of the step),
    not MAX_BACKTRACKS (regression: it said 200) nor the run's total."""
    prob = _ill(nan_after=nan_after, x0=np.full(5, 0.5))
    res, _ = _solve(prob, max_iter=50, lipschitz0=0.05, evaluations=evaluations)
    assert res.status == "numerical_error"
    steps = np.array(prob.prox_steps)
    halved = (steps[1:] / steps[:-1] == 0.5)[::-1]
    k = int(np.argmin(halved)) if not halved.all() else halved.size
    assert 40 < k < 200
    if nan_after > 1:
        assert res.n_iter >= 2 and res.info["n_backtracks"] > k  # earlier iterations backtracked
    else:
        assert res.info["n_backtracks"] == k
        np.testing.assert_array_equal(prob.calls[-1][1], np.full(5, 0.5))  # dd == 0: y itself
    assert res.message == (
        f"no ascent step found after {k} backtracking steps (Lipschitz estimate "
        f"{res.info['lipschitz_estimate']:.3g}); the objective or gradient is not finite or "
        "not smooth here"
    )


def test_non_finite_gradient_at_the_new_iterate_is_a_numerical_error():
    """Lean: the trial point's objective is finite, so it is accepted; completing it gives a
    non-finite gradient (only a completed evaluation can) and the run stops there."""
    prob = _quad(nan_gradient_above=0.0)
    assert prob.c[0] > 0  # the first step increases alpha[0]
    res, _ = _solve(prob, max_iter=5, lipschitz0=10.0)
    assert res.status == "numerical_error"
    assert res.message == "the gradient is not finite at the new iterate"
    assert res.n_iter == 0
    assert [k for k, _ in prob.calls][:3] == ["full", "objective", "full"]
    assert res.objective == max(prob._f(a) for _, a in prob.calls)  # noqa: SLF001


def test_time_limit_is_the_status_when_the_iteration_also_fails():
    """max_time passed during an iteration that then meets a non-finite gradient: the status
    is max_time (a limit was hit) and the message keeps the numerical error as its note."""
    prob = _quad(nan_gradient_above=0.0)
    res, _ = _solve(prob, max_iter=5, lipschitz0=10.0, max_time=1e-9)
    assert res.status == "max_time"
    assert res.message.endswith("(the gradient is not finite at the new iterate)")
    assert res.message.startswith("time limit 1e-09s reached")


def test_time_limit_during_backtracking_ends_the_iteration():
    """max_time passed: backtracking stops after the first rejected trial (its point is feasible
    and finite, so the iteration ends on it) and the run stops with status max_time."""
    prob = _ill()
    res, seen = _solve(prob, max_iter=50, lipschitz0=1e-3, max_time=1e-9)
    assert res.status == "max_time"
    assert res.n_iter == 1 and res.info["n_backtracks"] == 1
    assert seen["lipschitz"] == [pytest.approx(2e-3 * 0.9, rel=1e-15)]
    assert [k for k, _ in prob.calls][:2] == ["full", "objective"]
    assert len(prob.prox_steps) == 1


def test_paper_policy_default_step_and_history():
    """step="paper": the default t is 5 (step 5 / k), the history's objective is f at the
    iterate x_k of ``x_{k+1} = P(x_k + (t / k) grad f(x_k))`` (not the best so far: large
    steps make f oscillate)."""
    prob = _quad(lo=-3.0, hi=3.0)
    monitor = SolverMonitor(prob, method="pg", tol=0.0, max_iter=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = projected_gradient(prob, monitor, step="paper")
    assert prob.prox_steps == [5.0 / k for k in range(1, 12)]
    x, fs = prob.initial_point(), []
    for k in range(1, 13):
        fs.append(prob._f(x))  # noqa: SLF001
        x = np.clip(x + 5.0 / k * prob._g(x), -3.0, 3.0)  # noqa: SLF001
    np.testing.assert_allclose(res.history["objective"], fs, rtol=1e-13)
    assert np.any(np.diff(fs) < 0)  # f decreased at some iteration
    assert not np.array_equal(res.history["objective"], res.history["best_objective"])


# Restart variants of the accelerated projected gradient (O'Donoghue & Candès 2015) reach the
# optimum certified by the default solver and by cvxpy-free dense references.


def _restart_problem():
    rng = np.random.default_rng(5)
    n = 80
    X = rng.normal(size=(n, 3))
    K = np.tanh(0.5 * X @ X.T - 0.3)  # indefinite sigmoid kernel
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return make_problem("svc", K, y, C=1.0, rho=1.0)


@pytest.mark.parametrize("restart", ["both", "gradient", "function", False, True])
def test_restart_variants_reach_the_same_certified_optimum(restart):
    ref = solve_problem(_restart_problem(), tol=1e-9, max_iter=20000)
    res = solve_problem(_restart_problem(), tol=1e-9, max_iter=20000, options={"restart": restart})
    assert ref.status == res.status == "converged"
    scale = max(1.0, abs(ref.objective - ref.baseline_objective))
    # both are certified within 1e-9 * scale of the optimum
    assert abs(res.objective - ref.objective) <= 2e-9 * scale
    assert res.gap >= 0 and res.gap <= 1e-9 * scale
    if restart is False:
        assert res.info["n_restarts"] == 0


def test_restart_option_is_checked():
    with pytest.raises(ValueError, match="restart must be"):
        solve_problem(_restart_problem(), options={"restart": "sometimes"})
