"""Contract of ``indefsvm.proxy.solvers.accpm`` on small inputs, against independent references.

The fast first file of the ``solvers_accpm`` mutation run (tools/mutation.py, docs/mutation.md).
Every function of the module is exercised in well under a second:

* the polytopes (``_Localization``, ``_EpigraphLocalization``): slacks, barrier values, Newton
  systems against dense KKT solves, maximal steps against their definition, analytic centres
  against their optimality conditions (dense, in the null space of ``c'``), the Newton
  tolerance at its edge, relevance (12) against a dense inverse, the pruning rule;
* the solvers on a concave quadratic stub problem (``QP``: ``f(a) = b'a - 1/2 a'Qa - l1 |a|``
  on ``{c'a = d, lower <= a <= upper}``, its optimum by cvxpy, evaluations in microseconds):
  every cut against the stub's own gradient, the re-centering step and the paper's ellipsoid
  bound against dense linear algebra, the stopping rules, the exits (zero reduced gradient,
  failed centres, restarts, stalls), statuses, warnings and ``info``; the proximal variant's
  weights (``rho_p`` updates, first centre) and its proximal-gradient polish against a
  reference FISTA trace;
* both variants on a real problem (eq. 7 and SVR's eq. 17, n = 8): cuts against the dense
  objective's finite-difference gradient, the certified gap never below the suboptimality
  measured from the SDP optimum of problem (3) (cvxpy);
* every input check with an anchored message.
"""

from __future__ import annotations

import contextlib
import warnings
from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import pytest
import scipy.linalg
from helpers import sigmoid_problem
from reference import psd_part, sdp_optimum, svr_sdp
from sklearn.exceptions import ConvergenceWarning

from indefsvm.linalg.projection import project_hyperplane_box
from indefsvm.proxy.problems import Evaluation, make_problem
from indefsvm.proxy.solvers import SolverMonitor
from indefsvm.proxy.solvers import accpm as A
from indefsvm.proxy.solvers.accpm import (
    LocalizationSetEmpty,
    _EpigraphLocalization,
    _Localization,
    analytic_center_cutting_plane,
)
from indefsvm.threads import config_context


# ---------------------------------------------------------------------------------------------
# A concave quadratic stub problem with a known optimum
# ---------------------------------------------------------------------------------------------
class QP:
    """``f(a) = b'a - 1/2 a'Qa - l1 sum|a| + offset`` on ``{c'a = d, lower <= a <= upper}``.

    ``upper_bound`` of every evaluation is the optimum ``f*`` (cvxpy) plus ``bound_margin``, so
    the monitor's gap is the true suboptimality (plus the margin). ``lower >= 0``, so the l1
    term is linear on the feasible set and its prox is a shifted projection.
    """

    kind = "svc"
    classes = np.array([-1.0, 1.0])
    baseline_objective = 0.0

    def __init__(
        self,
        n=6,
        seed=0,
        *,
        l1=0.0,
        offset=0.0,
        bound_margin=0.0,
        metric=None,
        b=None,
        Q=None,
        nan_gradient_from=None,
    ):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(n, n))
        b_drawn = 2.0 * rng.normal(size=n)  # drawn always: same c and upper for any b
        self.Q = X @ X.T / n + 0.1 * np.eye(n) if Q is None else Q
        self.b = b_drawn if b is None else b
        c = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
        c[0], c[1] = 1.0, -1.0
        self.n = n
        self.eq_coef = c
        self.eq_rhs = 0.0
        self.lower = np.zeros(n)
        self.upper = rng.uniform(0.5, 2.0, size=n)
        self.l1_weight = l1
        self.offset = offset
        self.metric = metric
        self.nan_gradient_from = nan_gradient_from
        self.points: list[np.ndarray] = []
        self.libsvm_calls = 0
        a = cp.Variable(n)
        obj = self.b @ a - 0.5 * cp.quad_form(a, cp.psd_wrap(self.Q)) - l1 * cp.sum(a)
        cons = [c @ a == 0, a >= 0, a <= self.upper]
        self.fstar = cp.Problem(cp.Maximize(obj), cons).solve(solver="CLARABEL") + offset
        self.astar = a.value
        self.bound = self.fstar + bound_margin

    def value(self, a):
        return float(self.b @ a - 0.5 * a @ self.Q @ a - self.l1_weight * np.abs(a).sum())

    def grad(self, a):
        """Gradient of the smooth part (the l1 term is left to the solver, as for SVR)."""
        return self.b - self.Q @ a

    def evaluate(self, a):
        a = np.array(a, dtype=float)
        self.points.append(a.copy())
        g = self.grad(a)
        if self.nan_gradient_from is not None and len(self.points) >= self.nan_gradient_from:
            g = np.full(self.n, np.nan)
        f = self.value(a) + self.offset
        return Evaluation(
            alpha=a,
            objective=f,
            smooth_objective=f + self.l1_weight * np.abs(a).sum(),
            gradient=g,
            upper_bound=self.bound,
            intercept=0.0,
            state=None,
        )

    def project(self, v):
        return project_hyperplane_box(v, self.eq_coef, self.eq_rhs, self.lower, self.upper)

    def prox(self, v, step, metric=None):
        v = v - step * self.l1_weight * (1.0 if metric is None else 1.0 / metric)
        if metric is None:
            return self.project(v)
        sw = np.sqrt(metric)
        z = project_hyperplane_box(
            sw * v, self.eq_coef / sw, self.eq_rhs, sw * self.lower, sw * self.upper
        )
        return z / sw

    def lipschitz_estimate(self):
        return float(np.linalg.eigvalsh(self.Q).max())

    def initial_point(self):
        return self.project(np.zeros(self.n))

    def reset_warm_start(self):
        pass

    def libsvm_upper_bound(self, best, tol):
        self.libsvm_calls += 1
        return self.bound, None, None

    def kernel_from_state(self, state):
        return np.eye(self.n)


def run(problem, *, tol=1e-6, max_iter=500, callback=None, max_time=None, **kw):
    monitor = SolverMonitor(
        problem, method="accpm", tol=tol, max_iter=max_iter, callback=callback, max_time=max_time
    )
    return analytic_center_cutting_plane(problem, monitor, **kw)


def quiet_run(problem, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return run(problem, **kw)


def spy(monkeypatch, cls, name, record):
    """Wrap ``cls.name``; ``record(self, args, kwargs, out)`` sees every call."""
    orig = getattr(cls, name)

    def wrapper(self, *args, **kwargs):
        pre = record(self, args, kwargs, None, before=True)
        out = orig(self, *args, **kwargs)
        record(self, args, kwargs, out, before=False, pre=pre)
        return out

    monkeypatch.setattr(cls, name, wrapper)


def null_basis(c):
    return scipy.linalg.null_space(c[None, :])


def reduced_inverse(H, c):
    """``Z (Z'HZ)^-1 Z'``: the inverse of H on the hyperplane ``c'x = 0`` (dense)."""
    Z = null_basis(c)
    return Z @ np.linalg.solve(Z.T @ H @ Z, Z.T)


# ---------------------------------------------------------------------------------------------
# _Localization (paper variant's polytope)
# ---------------------------------------------------------------------------------------------
def polytope(n=6, m=4, seed=0):
    rng = np.random.default_rng(seed)
    c = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    c[0], c[1] = 1.0, -1.0
    upper = rng.uniform(0.5, 2.0, size=n)
    loc = _Localization(np.zeros(n), upper, c, 0.0, m + 2)
    x0 = np.full(n, 0.25) * np.where(c > 0, 1.0, (c > 0).sum() / (c < 0).sum())
    assert abs(c @ x0) < 1e-14
    for _ in range(m):
        a = rng.normal(size=n)
        a /= np.linalg.norm(a)
        loc.add_cut(a, float(a @ x0) + rng.uniform(0.01, 0.2))
    return loc, x0


def dense_barrier_hessian(loc, x):
    sl, su, s = x - loc.lower, loc.upper - x, loc.b[: loc.m] - loc.A[: loc.m] @ x
    Am = loc.A[: loc.m]
    return (Am / s[:, None] ** 2).T @ Am + np.diag(1 / sl**2 + 1 / su**2)


def dense_barrier_gradient(loc, x):
    sl, su, s = x - loc.lower, loc.upper - x, loc.b[: loc.m] - loc.A[: loc.m] @ x
    return -1 / sl + 1 / su + loc.A[: loc.m].T @ (1 / s)


def test_slacks_barrier_and_cuts():
    loc, x0 = polytope(5, 3, 1)
    sl, su, s = loc.slacks(x0)
    assert np.array_equal(sl, x0) and np.array_equal(su, loc.upper - x0)
    assert np.allclose(s, loc.b[:3] - loc.A[:3] @ x0, rtol=0, atol=1e-15) and s.shape == (3,)
    expected = -(np.log(sl).sum() + np.log(su).sum() + np.log(s).sum())
    assert loc.barrier(sl, su, s) == pytest.approx(expected, rel=1e-14)
    assert isinstance(loc.barrier(sl, su, s), float)
    # one slack exactly 0 in any group: outside
    for k in range(3):
        groups = [sl.copy(), su.copy(), s.copy()]
        groups[k][1] = 0.0
        assert loc.barrier(*groups) == np.inf
        groups[k][1] = -1e-3
        assert loc.barrier(*groups) == np.inf
    # no cuts: the empty group is fine
    assert loc.barrier(sl, su, np.empty(0)) == pytest.approx(
        -(np.log(sl).sum() + np.log(su).sum()), rel=1e-14
    )
    # add_cut appends, keep reorders and truncates
    a, b = np.arange(5.0), 7.0
    loc.add_cut(a, b)
    assert loc.m == 4 and np.array_equal(loc.A[3], a) and loc.b[3] == b
    rows, rhs = loc.A[:4].copy(), loc.b[:4].copy()
    loc.keep(np.array([1, 3]))
    assert loc.m == 2 and np.array_equal(loc.A[:2], rows[[1, 3]])
    assert np.array_equal(loc.b[:2], rhs[[1, 3]])


@pytest.mark.parametrize("m", [0, 3])
def test_factor_solve_and_reduced_solve_match_dense_linear_algebra(m):
    loc, x0 = polytope(6, m, 2)
    x = x0 + 0.01 * np.sin(np.arange(6.0))
    loc.factor(*loc.slacks(x))
    H = dense_barrier_hessian(loc, x)
    rng = np.random.default_rng(3)
    r, R = rng.normal(size=6), rng.normal(size=(6, 3))
    assert np.allclose(loc.solve(r), np.linalg.solve(H, r), rtol=1e-10)
    assert np.allclose(loc.solve(R), np.linalg.solve(H, R), rtol=1e-10)
    dx = loc.reduced_solve(r)
    kkt = np.block([[H, loc.c[:, None]], [loc.c[None, :], np.zeros((1, 1))]])
    sol = np.linalg.solve(kkt, np.concatenate([r, [0.0]]))
    assert np.allclose(dx, sol[:6], rtol=1e-10, atol=1e-13)


def test_factor_adds_a_growing_ridge_when_cholesky_fails(monkeypatch):
    loc, x0 = polytope(4, 2, 4)
    sl, su, s = loc.slacks(x0)
    H = dense_barrier_hessian(loc, x0)
    scale = 1 / np.sqrt(np.diag(H))
    Hs = H * np.outer(scale, scale)
    seen = []
    orig = scipy.linalg.cho_factor

    def flaky(M, lower=False, fail=2):
        seen.append(M.copy())
        if len(seen) <= fail:
            raise np.linalg.LinAlgError("not positive definite")
        return orig(M, lower=lower)

    monkeypatch.setattr(scipy.linalg, "cho_factor", flaky)
    loc.factor(sl, su, s)
    assert len(seen) == 3
    assert np.allclose(seen[0], Hs, rtol=1e-14, atol=0)
    assert np.allclose(seen[1] - seen[0], 1e-14 * np.eye(4), rtol=0.05, atol=1e-18)
    assert np.allclose(seen[2] - seen[0], 1e-12 * np.eye(4), rtol=0.05, atol=1e-18)
    assert np.allclose(loc.chol[1], scale, rtol=1e-14)
    # lower-triangular factor of the ridged matrix
    L = np.tril(loc.chol[0][0])
    assert np.allclose(L @ L.T, seen[2], rtol=1e-12)
    # a matrix that never factors: the set is declared empty after 8 tries
    seen.clear()
    monkeypatch.setattr(scipy.linalg, "cho_factor", lambda M, lower=False: flaky(M, lower, 99))
    with pytest.raises(LocalizationSetEmpty, match=r"^the barrier Hessian could not be factored$"):
        loc.factor(sl, su, s)
    assert len(seen) == 8
    assert np.allclose(seen[-1] - seen[0], 1e-2 * np.eye(4), rtol=1e-6)


@pytest.mark.parametrize("m", [0, 3])
def test_max_step_is_the_largest_step_keeping_every_slack_nonnegative(m):
    loc, x0 = polytope(6, m, 5)
    rng = np.random.default_rng(6)
    for _ in range(5):
        dx = rng.normal(size=6)
        t = loc.max_step(x0, dx, *loc.slacks(x0))
        # definition: min over constraints whose slack decreases of slack / rate
        sl, su, s = loc.slacks(x0)
        rates = np.concatenate([dx, -dx, -(loc.A[:m] @ dx)])
        slacks = np.concatenate([sl, su, s])
        dec = rates < 0
        assert t == pytest.approx(np.min(slacks[dec] / -rates[dec]), rel=1e-14)
        assert min(np.concatenate(loc.slacks(x0 + t * dx))) == pytest.approx(0.0, abs=1e-12)
        assert min(np.concatenate(loc.slacks(x0 + 0.999 * t * dx))) > 0
    assert loc.max_step(x0, np.zeros(6), *loc.slacks(x0)) == np.inf
    # a single coordinate moving up: only its upper bound limits
    e = np.zeros(6)
    e[2] = 1.0
    if m == 0:
        assert loc.max_step(x0, e, *loc.slacks(x0)) == pytest.approx(loc.upper[2] - x0[2])
        assert loc.max_step(x0, -e, *loc.slacks(x0)) == pytest.approx(x0[2])


@pytest.mark.parametrize("m", [0, 4])
def test_center_satisfies_the_optimality_conditions_of_the_analytic_center(m):
    loc, x0 = polytope(6, m, 7)
    x, steps = loc.center(x0.copy(), tol=1e-14, max_steps=100)
    assert 1 <= steps < 100
    assert abs(loc.c @ x - loc.d) < 1e-13
    assert np.all(np.concatenate(loc.slacks(x)) > 0)
    # stationary on the hyperplane: the gradient of the barrier is a multiple of c
    g = dense_barrier_gradient(loc, x)
    Z = null_basis(loc.c)
    assert np.linalg.norm(Z.T @ g) <= 1e-6 * np.linalg.norm(g)
    # strictly convex: every feasible neighbour on the hyperplane has a larger barrier
    rng = np.random.default_rng(8)
    phi = loc.barrier(*loc.slacks(x))
    for _ in range(5):
        z = x + 1e-3 * Z @ rng.normal(size=5)
        assert loc.barrier(*loc.slacks(z)) > phi
    # the factor kept is the Hessian at the returned centre (it is used by the relevance)
    H = dense_barrier_hessian(loc, x)
    assert np.allclose(loc.solve(np.ones(6)), np.linalg.solve(H, np.ones(6)), rtol=1e-8)


def dense_decrement(loc, x):
    g = dense_barrier_gradient(loc, x)
    return float(g @ reduced_inverse(dense_barrier_hessian(loc, x), loc.c) @ g)


def test_center_stops_when_half_the_squared_decrement_is_below_tol():
    loc, x0 = polytope(6, 4, 9)
    x2, steps = loc.center(x0.copy(), tol=1e-300, max_steps=2)
    assert steps == 2 and not np.allclose(x2, x0)
    dec = dense_decrement(loc, x2)
    assert dec > 1e-8  # still far from the centre after two steps
    # tol just above dec/2: the third step is not taken (x2 returned, 3 steps counted)
    x, steps = loc.center(x0.copy(), tol=0.5 * dec * (1 + 1e-6), max_steps=10)
    assert steps == 3 and np.array_equal(x, x2)
    # tol just below: it is
    x, steps = loc.center(x0.copy(), tol=0.5 * dec * (1 - 1e-6), max_steps=10)
    assert steps > 3 and not np.allclose(x, x2)
    # a start that is already the centre (huge tol): one step counted, nothing moved
    x, steps = loc.center(x0.copy(), tol=1e300, max_steps=10)
    assert steps == 1 and np.array_equal(x, x0)


def test_first_newton_step_is_the_damped_dense_newton_step():
    loc, x0 = polytope(6, 4, 10)
    x1, steps = loc.center(x0.copy(), tol=1e-300, max_steps=1)
    assert steps == 1
    g = dense_barrier_gradient(loc, x0)
    dx = -reduced_inverse(dense_barrier_hessian(loc, x0), loc.c) @ g
    step = (x1 - x0) @ dx / (dx @ dx)
    assert np.allclose(x1, x0 + step * dx, rtol=0, atol=1e-12)
    assert 0 < step <= 1.0
    # the step satisfies the Armijo test of the code (decrease of at least 1% of step * dec)
    dec = float(-g @ dx)
    phi0, phi1 = loc.barrier(*loc.slacks(x0)), loc.barrier(*loc.slacks(x1))
    assert phi1 <= phi0 - 0.01 * step * dec
    # and is the first of the backtracking sequence that does: full step (capped at 0.99 of
    # the largest feasible step), then halvings floored at the damped step 1/(1 + sqrt(dec))
    t_max = loc.max_step(x0, dx, *loc.slacks(x0))
    t, floor = min(1.0, 0.99 * t_max), 1 / (1 + np.sqrt(dec))
    while loc.barrier(*loc.slacks(x0 + t * dx)) > phi0 - 0.01 * t * dec:
        t = max(0.5 * t, floor) if t > floor else 0.5 * t
    assert step == pytest.approx(t, rel=1e-9)


def test_center_refuses_a_start_outside():
    loc, x0 = polytope(5, 2, 11)
    for bad in (np.zeros(5), loc.upper.copy()):
        with pytest.raises(
            LocalizationSetEmpty, match=r"^the starting point is not strictly inside$"
        ):
            loc.center(bad, tol=1e-6, max_steps=5)


def test_center_raises_on_a_nonfinite_newton_step(monkeypatch):
    loc, x0 = polytope(5, 2, 12)
    monkeypatch.setattr(loc, "reduced_solve", lambda r: np.full(5, np.nan))
    with pytest.raises(LocalizationSetEmpty, match=r"^non-finite Newton step$"):
        loc.center(x0.copy(), tol=1e-6, max_steps=5)


def test_relevance_is_measure_12_restricted_to_the_hyperplane():
    loc, x0 = polytope(7, 6, 13)
    x, _ = loc.center(x0.copy(), tol=1e-12, max_steps=100)
    loc.factor(*loc.slacks(x))
    rel = loc.relevance(x)
    Am, s = loc.A[: loc.m], loc.b[: loc.m] - loc.A[: loc.m] @ x
    Hinv = reduced_inverse(dense_barrier_hessian(loc, x), loc.c)
    assert np.allclose(rel, np.einsum("ij,jk,ik->i", Am, Hinv, Am) / s**2, rtol=1e-8)
    assert np.all(rel >= 0)


# ---------------------------------------------------------------------------------------------
# _interior_start and _single_point
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d,frac", [(7.0, 0.25), (9.8, 0.1), (10.6, 0.01), (10.95, 1e-4)])
def test_interior_start_uses_the_largest_margin_that_is_feasible(d, frac):
    # x1 + x2 = d in [0, 1] x [0, 10]: a margin f of the box width is feasible iff
    # 11 f <= d <= 11 - 11 f, and with it the upper margin of x1 is active (mid = (0.5, 5))
    p = SimpleNamespace(
        lower=np.zeros(2), upper=np.array([1.0, 10.0]), eq_coef=np.ones(2), eq_rhs=d
    )
    x = A._interior_start(p)
    assert x[0] == pytest.approx(1.0 - frac, rel=1e-12)
    assert x.sum() == pytest.approx(d, rel=1e-14)
    assert np.all(x > p.lower) and np.all(x < p.upper)
    # only the corner (1, 10) is feasible: no interior point
    assert A._interior_start(SimpleNamespace(**{**vars(p), "eq_rhs": 11.0})) is None


def test_interior_start_depends_on_the_box_midpoint_and_widths():
    # lower != 0: the start is the projection of the box midpoint (0, 4) (untouched when it
    # is feasible) and the margins are fractions of the widths (2, 12)
    p = SimpleNamespace(
        lower=np.array([-1.0, -2.0]), upper=np.array([1.0, 10.0]), eq_coef=np.ones(2), eq_rhs=4.0
    )
    assert np.allclose(A._interior_start(p), [0.0, 4.0], atol=1e-15)
    # x1 + x2 = 8.8: the margin 0.25 is infeasible, 0.1 leaves x1 <= 1 - 0.2 (active)
    p.eq_rhs = 8.8
    assert np.allclose(A._interior_start(p), [0.8, 8.0], rtol=1e-13)


@pytest.mark.parametrize("nu", [0.5, 0.97])
def test_interior_start_of_a_oneclass_problem(nu):
    K0, _ = sigmoid_problem(10, 0)
    p = make_problem("oneclass", K0, None, nu=nu)
    x = A._interior_start(p)
    assert np.allclose(x, 0.1, rtol=1e-14)  # e'a = 1 with equal bounds: the uniform point


@pytest.mark.parametrize("variant", ["paper", "proximal"])
def test_a_single_feasible_point_is_returned_without_cuts(variant):
    K0, _ = sigmoid_problem(10, 0)
    p = make_problem("oneclass", K0, None, nu=1.0)
    assert A._interior_start(p) is None
    res = quiet_run(p, variant=variant, max_iter=3, tol=1e-9)
    assert np.allclose(res.alpha, 0.1)
    assert res.info == {"note": "the feasible set has no interior; single point"}
    assert res.n_evaluations == 1
    ref = make_problem("oneclass", K0, None, nu=1.0).evaluate(np.full(10, 0.1))
    assert res.objective == pytest.approx(ref.objective, rel=1e-12)
    # the monitor decides when the loop ends: the certified gap, else max_iter
    if res.status == "converged":
        assert res.relative_gap <= 1e-9 and res.n_iter == 1
    else:
        assert res.status == "max_iter" and res.n_iter == 3


# ---------------------------------------------------------------------------------------------
# Input checks and dispatch
# ---------------------------------------------------------------------------------------------
BAD = [
    ({"variant": "simplex"}, r"^variant must be one of \('paper', 'proximal'\); got 'simplex'\.$"),
    ({"recenter_radius": 1.0}, r"^recenter_radius must be in \(0, 1\); got 1\.0\.$"),
    ({"recenter_radius": 0.0}, r"^recenter_radius must be in \(0, 1\); got 0\.0\.$"),
    ({"stop": "volume"}, r"^stop must be one of \('certified', 'ellipsoid'\); got 'volume'\.$"),
    (
        {"stop": "ellipsoid"},
        r"^stop='ellipsoid' is the paper's ellipsoid rule, defined for variant='paper' only; the "
        r"proximal variant stops on the certified gap \(stop='certified'\)\.$",
    ),
    ({"box_weight": 0.0}, r"^box_weight must be a finite number > 0; got 0\.0\.$"),
    ({"box_weight": np.inf}, r"^box_weight must be a finite number > 0; got inf\.$"),
    ({"objective_weight": -1.0}, r"^objective_weight must be a finite number > 0; got -1\.0\.$"),
    ({"objective_weight": np.nan}, r"^objective_weight must be a finite number > 0; got nan\.$"),
    ({"prox_update": 0.5}, r"^prox_update must be a finite number >= 1; got 0\.5\.$"),
    ({"prox_update": np.inf}, r"^prox_update must be a finite number >= 1; got inf\.$"),
    ({"null_update": 0.99}, r"^null_update must be a finite number >= 1; got 0\.99\.$"),
    ({"null_update": np.nan}, r"^null_update must be a finite number >= 1; got nan\.$"),
]
OPTIONS = [
    ({"max_cuts": 0}, r"^max_cuts must be a positive integer; got 0\.$"),
    ({"max_cuts": 2.5}, r"^max_cuts must be a positive integer; got 2\.5\.$"),
    ({"newton_tol": 0.0}, r"^newton_tol must be > 0; got 0\.0\.$"),
    ({"newton_tol": np.nan}, r"^newton_tol must be > 0; got nan\.$"),
    ({"max_newton": 0}, r"^max_newton must be a positive integer; got 0\.$"),
    ({"max_newton": 1.5}, r"^max_newton must be a positive integer; got 1\.5\.$"),
]


@pytest.mark.parametrize("kwargs,message", BAD)
def test_bad_options_are_refused_with_their_message(kwargs, message):
    with pytest.raises(ValueError, match=message):
        run(QP(4), max_iter=1, **kwargs)


@pytest.mark.parametrize("variant", ["paper", "proximal"])
@pytest.mark.parametrize("kwargs,message", OPTIONS)
def test_bad_cut_and_newton_options_are_refused_by_both_variants(variant, kwargs, message):
    with pytest.raises(ValueError, match=message):
        run(QP(4), max_iter=1, variant=variant, **kwargs)


def test_the_body_of_the_paper_variant_checks_its_own_options():
    # _accpm is reachable only through analytic_center_cutting_plane, which checks
    # recenter_radius and stop first; the body repeats the checks for direct callers.
    p = QP(4)
    mon = SolverMonitor(p, method="accpm", tol=1e-6, max_iter=1)
    with pytest.raises(ValueError, match=r"^recenter_radius must be in \(0, 1\); got 1\.5\.$"):
        A._accpm(p, mon, None, 1e-3, 50, 1.5, "certified")
    for edge in (0.0, 1.0):  # the open interval's ends
        with pytest.raises(
            ValueError, match=rf"^recenter_radius must be in \(0, 1\); got {edge}\.$"
        ):
            A._accpm(p, mon, None, 1e-3, 50, edge, "certified")
    with pytest.raises(
        ValueError, match=r"^stop must be one of \('certified', 'ellipsoid'\); got 'x'\.$"
    ):
        A._accpm(p, mon, None, 1e-3, 50, 0.5, "x")
    with pytest.raises(ValueError, match=r"^max_cuts must be a positive integer; got -1\.$"):
        A._accpm(p, mon, -1, 1e-3, 50, 0.5, "certified")


def test_edge_values_of_the_options_are_accepted():
    kw = dict(max_cuts=1, max_newton=1, prox_update=1.0, null_update=1.0, newton_tol=1e-300)
    res = quiet_run(QP(4), max_iter=3, **kw)
    assert res.n_iter == 3 and res.info["max_cuts"] == 1 and res.info["n_cuts"] <= 1
    res = quiet_run(
        QP(4), max_iter=3, variant="paper", max_cuts=1, max_newton=1, recenter_radius=1e-9
    )
    assert res.n_iter == 3 and res.info["max_cuts"] == 1


@pytest.mark.parametrize(
    "variant,n,expected",
    [
        ("proximal", 5, 15),
        ("proximal", 40, 100),
        ("paper", 5, 15),
        ("paper", 40, 120),
    ],
)
def test_default_cut_limits(variant, n, expected):
    res = quiet_run(QP(n), max_iter=1, variant=variant)
    assert res.info["max_cuts"] == expected and type(res.info["max_cuts"]) is int


@pytest.mark.parametrize("variant", ["paper", "proximal"])
@pytest.mark.parametrize("threads", [None, 1, 2])
def test_the_solver_runs_inside_the_blas_thread_limit(monkeypatch, variant, threads):
    calls = []
    inside = []

    @contextlib.contextmanager
    def fake_limit(n):
        calls.append(n)
        inside.append(True)
        yield
        inside.append(False)

    monkeypatch.setattr(A, "blas_limit", fake_limit)
    p = QP(4)
    orig = p.evaluate
    p.evaluate = lambda a: (inside and inside[-1]) and orig(a)
    if threads is None:  # not configured: one thread (the solvers' default)
        res = quiet_run(p, max_iter=2, variant=variant)
    else:
        with config_context(n_threads={"blas": threads}):
            res = quiet_run(p, max_iter=2, variant=variant)
    assert calls == [threads or 1] and res.n_iter == 2
    with pytest.raises(TypeError, match="blas_threads"):
        quiet_run(p, max_iter=1, variant=variant, blas_threads=2)


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="step"):
        run(QP(4), step="paper")


# ---------------------------------------------------------------------------------------------
# The paper's variant (Algorithm 2) on the stub
# ---------------------------------------------------------------------------------------------
def test_paper_variant_converges_to_the_optimum_with_consistent_info(monkeypatch):
    p = QP(6, 1)
    centers = []

    def record(self, args, kwargs, out, before, pre=None):
        if not before:
            centers.append(out)

    spy(monkeypatch, _Localization, "center", record)
    res = run(p, variant="paper", tol=1e-6)
    assert res.status == "converged" and res.method == "accpm"
    assert p.fstar - res.objective <= 1e-6 * max(1.0, abs(res.objective)) + 1e-12
    assert np.allclose(res.alpha, p.astar, atol=1e-2)
    assert set(res.info) == {
        "max_cuts",
        "n_cuts",
        "newton_steps",
        "time_center",
        "time_gradient",
        "time_cuts",
        "time_center_per_iter",
        "time_gradient_per_iter",
        "ellipsoid_bound",
    }
    assert res.info["max_cuts"] == 18 and 1 <= res.info["n_cuts"] <= 18
    # the first centre plus one per iteration that was not the last
    assert len(centers) == res.n_iter
    assert res.info["newton_steps"] == sum(steps for _, steps in centers)
    for key in ("center", "gradient"):
        total = res.info[f"time_{key}"]
        assert total > 0
        assert res.info[f"time_{key}_per_iter"] == pytest.approx(total / res.n_iter, rel=1e-12)
    assert res.info["time_cuts"] > 0
    assert res.info["time_center"] + res.info["time_gradient"] + res.info["time_cuts"] <= (
        res.history["time"][-1] + 1e-3
    )


@pytest.mark.parametrize("radius", [0.3, 0.999])
def test_paper_cuts_recentering_and_ellipsoid_bound_match_dense_linear_algebra(monkeypatch, radius):
    p = QP(6, 2, l1=0.3)
    limited = []
    centers, cuts, starts, bounds, newton = [], [], [], [], []

    # with radius 0.999 the boundary is brought 100x closer for the re-centering step only
    # (max_step scaled between the callback and the next centre), so 0.9 t_max limits it
    shrink = {"on": False, "factor": 1e-2 if radius > 0.9 else 1.0}
    orig_max_step = _Localization.max_step

    def max_step(self, *args):
        return orig_max_step(self, *args) * (shrink["factor"] if shrink["on"] else 1.0)

    monkeypatch.setattr(_Localization, "max_step", max_step)

    def rec_center(self, args, kwargs, out, before, pre=None):
        if before:
            shrink["on"] = False
            starts.append(args[0].copy())
        else:
            centers.append((out[0].copy(), self.A[: self.m].copy(), self.b[: self.m].copy()))
            newton.append(out[1])

    def callback(info):
        bounds.append(info)
        shrink["on"] = True

    def rec_cut(self, args, kwargs, out, before, pre=None):
        if before:
            cuts.append((args[0].copy(), args[1], len(p.points)))

    spy(monkeypatch, _Localization, "center", rec_center)
    spy(monkeypatch, _Localization, "add_cut", rec_cut)
    res = quiet_run(
        p,
        variant="paper",
        tol=1e-12,
        max_iter=6,
        recenter_radius=radius,
        callback=callback,
    )
    assert res.status == "max_iter" and len(cuts) == 5 and len(bounds) == 6
    c = p.eq_coef
    for k, (a_cut, b_cut, n_points) in enumerate(cuts):
        pt = p.points[n_points - 1]  # the point evaluated just before the cut
        assert np.allclose(pt, p.project(centers[k][0]), atol=1e-15)
        # supergradient of the whole objective, l1 included (lower = 0: sign(p) = 1)
        g = p.grad(pt) - 0.3 * np.sign(pt)
        g_red = g - c * (c @ g) / (c @ c)
        assert np.allclose(a_cut, -g_red / np.linalg.norm(g_red), rtol=1e-12, atol=1e-15)
        assert b_cut == pytest.approx(a_cut @ pt, rel=1e-12, abs=1e-15)
        # the paper's bound f(x) + (2n + m) sqrt(g' H^-1 g), H at the centre (on c'x = 0)
        x, Am, bm = centers[k]
        loc = _Localization(p.lower, p.upper, c, 0.0, 20)
        loc.A[: len(bm)], loc.b[: len(bm)], loc.m = Am, bm, len(bm)
        q = g @ reduced_inverse(dense_barrier_hessian(loc, x), c) @ g
        ell = p.value(pt) + (2 * 6 + len(bm)) * np.sqrt(q)
        assert bounds[k]["ellipsoid_bound"] == pytest.approx(ell, rel=1e-8)
        assert bounds[k]["n_cuts"] == len(bm)
        # the re-centering step: from the centre along H^-1(-a) in the Dikin ellipsoid of
        # the given radius, at most 0.9 of the way to the boundary
        dx = -reduced_inverse(dense_barrier_hessian(loc, x), c) @ a_cut
        norm_h = -a_cut @ dx
        sl, su, sc = loc.slacks(x)
        rates = np.concatenate([dx, -dx, -(Am @ dx)])
        slacks = np.concatenate([sl, su, sc])
        t_max = np.min(slacks[rates < 0] / -rates[rates < 0]) * shrink["factor"]
        step = min(radius / np.sqrt(norm_h), 0.9 * t_max)
        limited.append(0.9 * t_max < radius / np.sqrt(norm_h))
        assert np.allclose(starts[k + 1], x + step * dx, rtol=1e-9, atol=1e-14)
        assert b_cut - a_cut @ starts[k + 1] > 0
    # with a radius near 1 the Dikin step reaches 0.9 of the way to the boundary
    assert all(limited) if radius > 0.9 else not any(limited)
    assert res.info["ellipsoid_bound"] == min(b["ellipsoid_bound"] for b in bounds)
    # the callback sees the Newton steps of the centre just evaluated
    assert [b["newton_steps"] for b in bounds] == newton


def test_paper_history_records_each_centre_and_the_sum_of_newton_steps(monkeypatch):
    """The paper variant's history 'objective' is f at each iteration's own centre (the offered
    evaluations, some worse than the best so far) and info['newton_steps'] is the sum of the
    steps of every centring, the first one included (both recorded by spies)."""
    offered, steps = [], []
    orig_offer = SolverMonitor.offer

    def offer(self, ev, *a, **k):
        offered.append(ev.objective)
        return orig_offer(self, ev, *a, **k)

    monkeypatch.setattr(SolverMonitor, "offer", offer)
    orig_center = A._Localization.center

    def center(self, x, *, tol, max_steps):
        out = orig_center(self, x, tol=tol, max_steps=max_steps)
        steps.append(out[1])
        return out

    monkeypatch.setattr(A._Localization, "center", center)
    res = quiet_run(QP(6, 3), variant="paper", tol=1e-9, max_iter=30)
    assert np.array_equal(res.history["objective"], offered)
    assert np.array_equal(res.history["best_objective"], np.maximum.accumulate(offered))
    assert any(np.diff(offered) < 0)  # some centre is worse than the best before it
    assert res.info["newton_steps"] == sum(steps) and steps[0] > 0


def test_paper_pruning_keeps_the_most_relevant_cuts(monkeypatch):
    p = QP(5, 3)
    kept, centers = [], []

    def rec_center(self, args, kwargs, out, before, pre=None):
        if not before:
            centers.append(out[0].copy())

    def rec_keep(self, args, kwargs, out, before, pre=None):
        if before:
            x = centers[-1]
            Am, s = self.A[: self.m], self.b[: self.m] - self.A[: self.m] @ x
            Hinv = reduced_inverse(dense_barrier_hessian(self, x), self.c)
            rel = np.einsum("ij,jk,ik->i", Am, Hinv, Am) / s**2
            kept.append((args[0].copy(), rel))
        else:
            assert self.m == 2

    spy(monkeypatch, _Localization, "center", rec_center)
    spy(monkeypatch, _Localization, "keep", rec_keep)
    res = quiet_run(p, variant="paper", tol=1e-12, max_iter=8, max_cuts=3)
    assert res.info["n_cuts"] == 3 and len(kept) == 8 - 1 - 3
    for index, rel in kept:
        assert np.array_equal(index, np.sort(np.argsort(rel)[::-1][:2]))
        # the dropped cut is the least relevant one
        assert rel[np.setdiff1d(np.arange(3), index)[0]] == rel.min()


def test_paper_zero_reduced_gradient_ends_the_run_with_a_note():
    n = 4
    base = QP(n, 0)
    # f = 2 c'a: constant on the feasible set, its gradient is normal to the hyperplane
    p = QP(n, 0, b=2.0 * base.eq_coef, Q=np.zeros((n, n)), bound_margin=1.0)
    with pytest.warns(ConvergenceWarning, match="NOT certified"):
        res = run(p, variant="paper", tol=1e-9)
    note = "zero gradient on the hyperplane at an interior center"
    assert res.status == "stalled" and res.n_iter == 1 and res.message == note
    assert res.info["note"] == note and p.libsvm_calls == 1


@pytest.mark.parametrize("variant", ["paper", "proximal"])
def test_nonfinite_gradient_is_an_error(variant):
    p = QP(4, 0, nan_gradient_from=2, bound_margin=1.0)
    with pytest.raises(FloatingPointError, match=r"^non-finite gradient at an analytic center$"):
        run(p, variant=variant, tol=1e-9)
    assert len(p.points) == 2


def fail_the_third_centre(monkeypatch):
    """Make the third call of ``_Localization.center`` raise; returns the list of the calls'
    ``max_steps``."""
    orig = _Localization.center
    calls = []

    def failing(self, x, *, tol, max_steps):
        calls.append(max_steps)
        if len(calls) == 3:
            raise LocalizationSetEmpty("boom")
        return orig(self, x, tol=tol, max_steps=max_steps)

    monkeypatch.setattr(_Localization, "center", failing)
    return calls


def test_paper_failed_centre_stops_with_its_note(monkeypatch):
    p = QP(5, 4, bound_margin=1.0)
    calls = fail_the_third_centre(monkeypatch)
    with pytest.warns(ConvergenceWarning, match="NOT certified"):
        res = run(p, variant="paper", tol=1e-9, max_newton=7)
    assert calls == [7, 7, 7]
    note = "ACCPM stopped early: analytic center failed: boom; loosen tol or use method='pg'"
    assert res.status == "stalled" and res.n_iter == 2
    assert res.message == note and res.info["note"] == "analytic center failed: boom"
    assert res.info["time_center"] > 0 and res.info["n_cuts"] == 2


def test_paper_failed_centre_still_counts_its_time(monkeypatch):
    # the clock ticks once per reading, so each timed centre lasts exactly 1: the initial
    # centre, the second and the failed third one add up to 3 (the failed centre's interval
    # is added to, not written over, the earlier ones)
    calls = fail_the_third_centre(monkeypatch)
    monkeypatch.setattr(A, "time", FakeClock())
    res = quiet_run(QP(5, 4, bound_margin=1.0), variant="paper", tol=1e-9)
    assert len(calls) == 3 and res.n_iter == 2 and res.status == "stalled"
    assert res.info["time_center"] == 3.0
    assert res.info["time_center_per_iter"] == 1.5


def test_paper_centre_that_cannot_move_stops_with_its_note(monkeypatch):
    p = QP(5, 5, bound_margin=1.0)
    state = {"stuck": False}
    orig = _Localization.reduced_solve

    def solve(self, r):
        return np.zeros_like(r) if state["stuck"] else orig(self, r)

    monkeypatch.setattr(_Localization, "reduced_solve", solve)

    def callback(info):
        state["stuck"] = info["iteration"] == 2

    with pytest.warns(ConvergenceWarning):
        res = run(p, variant="paper", tol=1e-9, callback=callback)
    note = "the localization set has no interior left at working precision"
    assert res.status == "stalled" and res.n_iter == 2 and res.info["note"] == note
    assert res.info["n_cuts"] == 1


@pytest.mark.parametrize("offset", [40.0, -2.0])
def test_paper_ellipsoid_stopping_rule_stops_at_the_first_iteration_it_holds(offset):
    # offset -2: |f| ~ 0.2 < 1, where the rule's scale max(1, |f|) is 1
    tol = 1e-2
    p = QP(6, 6, offset=offset, bound_margin=1.0)
    seen = []
    with pytest.warns(ConvergenceWarning, match="ellipsoid stopping rule holds"):
        res = run(
            p,
            variant="paper",
            tol=tol,
            stop="ellipsoid",
            callback=lambda info: seen.append(info) and False,
        )
    best = np.minimum.accumulate([i["ellipsoid_bound"] for i in seen])
    obj = np.array([i["objective"] for i in seen])
    holds = best - obj <= tol * np.maximum(1.0, np.abs(obj))
    assert holds[-1] and not holds[:-1].any() and res.n_iter == len(seen) > 1
    assert offset > 0 or abs(obj[-1]) < 1  # the scale is 1 where the rule is decided
    assert res.info["note"] == "the paper's ellipsoid stopping rule holds"
    assert res.status == "stalled"
    assert res.info["ellipsoid_bound"] == best[-1]


def test_paper_ellipsoid_rule_with_a_certified_gap_converges():
    p = QP(6, 6)
    res = run(p, variant="paper", tol=1e-2, stop="ellipsoid")
    assert res.status == "converged"
    assert res.info.get("note") in (None, "the paper's ellipsoid stopping rule holds")


# ---------------------------------------------------------------------------------------------
# _EpigraphLocalization (proximal variant's set)
# ---------------------------------------------------------------------------------------------
def epigraph(n=6, m=3, seed=0, *, mu=0.1, w=1.5, rho=3.0):
    rng = np.random.default_rng(seed)
    c = np.where(rng.uniform(size=n) < 0.5, -1.0, 1.0)
    c[0], c[1] = 1.0, -1.0
    upper = rng.uniform(0.5, 2.0, size=n)
    loc = _EpigraphLocalization(
        np.zeros(n), upper, c, 0.0, m + 3, box_weight=mu, objective_weight=w
    )
    a0 = np.full(n, 0.25) * np.where(c > 0, 1.0, (c > 0).sum() / (c < 0).sum())
    a_bar = a0 + 0.05 * rng.uniform(-1, 1, size=n)
    a_bar -= c * (c @ a_bar) / n
    loc.move(a_bar, 0.2)
    loc.rho = rho
    t0 = 0.1
    for _ in range(m):
        g = rng.normal(size=n)
        f_at_a0 = 0.2 + t0 + rng.uniform(0.05, 0.5)
        loc.add_cut(g, f_at_a0, a0)
    return loc, a0, t0


def epi_dense(loc, a, t, s):
    sl, su = a - loc.lower, loc.upper - a
    E = np.hstack([loc.G[: loc.m], -np.ones((loc.m, 1))]) / s[:, None]
    D = np.concatenate([loc.rho + loc.mu * (1 / sl**2 + 1 / su**2), [loc.w / t**2]])
    return np.diag(D) + E.T @ E, E


def epi_phi(loc, a, t):
    s = loc.cut_slacks(a, t)
    return (
        0.5 * loc.rho * np.sum((a - loc.center_a) ** 2)
        - loc.mu * (np.log(a - loc.lower).sum() + np.log(loc.upper - a).sum())
        - loc.w * np.log(t)
        - np.log(s).sum()
    )


def epi_grad(loc, a, t):
    s = loc.cut_slacks(a, t)
    ga = (
        loc.rho * (a - loc.center_a)
        - loc.mu * (1 / (a - loc.lower) - 1 / (loc.upper - a))
        - loc.G[: loc.m].T @ (1 / s)
    )
    return ga, -loc.w / t + np.sum(1 / s)


def test_epigraph_cuts_are_tangent_planes_kept_relative_to_the_proximal_centre():
    loc, a0, t0 = epigraph(5, 0, 1)
    assert loc.m == 0 and loc.theta == 0.2 and loc.mu == 0.1 and loc.w == 1.5
    fresh = _EpigraphLocalization(
        np.zeros(3), np.ones(3), np.ones(3), 1.0, 4, box_weight=0.5, objective_weight=2.0
    )
    assert fresh.theta == -np.inf and fresh.rho == 1.0 and fresh.m == 0
    assert np.array_equal(fresh.center_a, np.full(3, 0.5)) and fresh._woodbury is None
    rng = np.random.default_rng(2)
    pts = [(rng.normal(size=5), float(rng.normal()), rng.uniform(0, 1, 5)) for _ in range(3)]
    for g, f, pt in pts:
        loc.add_cut(g, f, pt)
    assert loc.m == 3

    def values(a):  # the cuts' values f_j + g_j'(a - p_j), from the stored form
        return loc.cut_slacks(a, 0.0) + loc.theta

    for a in (a0, rng.uniform(0, 1, 5)):
        expected = [f + g @ (a - pt) for g, f, pt in pts]
        assert np.allclose(values(a), expected, rtol=1e-13, atol=1e-13)
        assert np.allclose(loc.cut_slacks(a, 0.3), values(a) - loc.theta - 0.3, atol=1e-13)
    # a move of the proximal centre and of theta changes no cut's value
    new_center = rng.uniform(0, 1, 5)
    loc.move(new_center, -1.7)
    assert loc.theta == -1.7 and loc.center_a is new_center
    for a in (a0, rng.uniform(0, 1, 5)):
        assert np.allclose(values(a), [f + g @ (a - pt) for g, f, pt in pts], atol=1e-13)
    loc.keep(np.array([2, 0]))
    assert loc.m == 2
    assert np.allclose(
        values(a0),
        [pts[2][1] + pts[2][0] @ (a0 - pts[2][2]), pts[0][1] + pts[0][0] @ (a0 - pts[0][2])],
    )
    # move without cuts: only the centre and theta change
    empty = _EpigraphLocalization(
        np.zeros(2), np.ones(2), np.ones(2), 1.0, 2, box_weight=1.0, objective_weight=1.0
    )
    empty.move(np.array([0.3, 0.7]), 5.0)
    assert empty.theta == 5.0 and empty.m == 0


def test_epigraph_phi_is_the_proximal_barrier():
    loc, a0, t0 = epigraph(6, 3, 3)
    s = loc.cut_slacks(a0, t0)
    assert np.all(s > 0)
    assert loc._phi(a0, t0, s) == pytest.approx(epi_phi(loc, a0, t0), rel=1e-13)
    assert isinstance(loc._phi(a0, t0, s), float)
    for a, t, ss in (
        (np.where(np.arange(6) == 2, 0.0, a0), t0, s),
        (np.where(np.arange(6) == 4, loc.upper, a0), t0, s),
        (a0, 0.0, s),
        (a0, -1.0, s),
        (a0, t0, np.where(np.arange(3) == 1, 0.0, s)),
    ):
        assert loc._phi(a, t, ss) == np.inf
    assert np.isfinite(loc._phi(a0, t0, np.empty(0)))


@pytest.mark.parametrize("shifted", [False, True])
@pytest.mark.parametrize("m", [0, 4])
def test_epigraph_woodbury_solves_match_the_dense_kkt_system(m, shifted):
    loc, a0, t0 = epigraph(6, m, 4)
    if shifted:  # lower != 0: the box terms use a - lower
        shift = np.linspace(-1.0, -0.3, 6)
        loc.lower, loc.upper, loc.center_a = (
            loc.lower + shift,
            loc.upper + shift,
            loc.center_a + shift,
        )
        a0 = a0 + shift
    s = loc.cut_slacks(a0, t0)
    loc._factor(a0, t0, s)
    H, E = epi_dense(loc, a0, t0, s)
    rng = np.random.default_rng(5)
    ra, rt = rng.normal(size=(6, 2)), rng.normal(size=2)
    xa, xt = loc._solve(ra, rt)
    ref = np.linalg.solve(H, np.vstack([ra, rt[None, :]]))
    assert np.allclose(xa, ref[:6], rtol=1e-10, atol=1e-13)
    assert np.allclose(xt, ref[6], rtol=1e-10, atol=1e-13)
    da, dt = loc.reduced_solve(ra[:, 0], float(rt[0]))
    c1 = np.concatenate([loc.c, [0.0]])
    kkt = np.block([[H, c1[:, None]], [c1[None, :], np.zeros((1, 1))]])
    sol = np.linalg.solve(kkt, np.concatenate([ra[:, 0], [rt[0]], [0.0]]))
    assert np.allclose(da, sol[:6], rtol=1e-10, atol=1e-13)
    assert dt == pytest.approx(sol[6], rel=1e-10, abs=1e-13) and isinstance(dt, float)
    if m:
        rel = loc.relevance(a0, t0, s)
        assert np.allclose(rel, np.einsum("ij,jk,ik->i", E, np.linalg.inv(H), E), rtol=1e-10)


def test_epigraph_factor_refuses_nonfinite_or_lost_matrices(monkeypatch):
    loc, a0, t0 = epigraph(5, 2, 6)
    s = loc.cut_slacks(a0, t0)
    with pytest.raises(
        LocalizationSetEmpty, match=r"^non-finite Newton matrix \(slacks at rounding level\)$"
    ):
        with np.errstate(all="ignore"):
            loc._factor(a0, t0, np.array([s[0], 0.0]))

    def fail(M, lower=False):
        raise np.linalg.LinAlgError("lost")

    monkeypatch.setattr(scipy.linalg, "cho_factor", fail)
    with pytest.raises(LocalizationSetEmpty, match=r"^Newton matrix lost to rounding \(lost\)$"):
        loc._factor(a0, t0, s)
    # without cuts no factorization is needed
    empty, a1, t1 = epigraph(5, 0, 6)
    empty._factor(a1, t1, np.empty(0))
    assert empty._woodbury[-1] is None


@pytest.mark.parametrize("m", [1, 3])
def test_epigraph_center_satisfies_its_optimality_conditions(m):
    loc, a0, t0 = epigraph(6, m, 7)
    a, t, steps = loc.center(a0, t0, loc.cut_slacks(a0, t0), tol=1e-14, max_steps=200)
    assert 1 <= steps < 200 and isinstance(t, float | np.floating)
    assert abs(loc.c @ a - loc.d) < 1e-13 and t > 0 and np.all(loc.cut_slacks(a, t) > 0)
    ga, gt = epi_grad(loc, a, t)
    Z = null_basis(loc.c)
    assert np.linalg.norm(Z.T @ ga) <= 1e-6 and abs(gt) <= 1e-6 * (loc.w / t)
    rng = np.random.default_rng(8)
    phi = epi_phi(loc, a, t)
    for _ in range(4):
        da = 1e-4 * Z @ rng.normal(size=5)
        assert epi_phi(loc, a + da, t * (1 + 1e-4 * rng.normal())) > phi


def test_epigraph_center_from_an_infeasible_start_reaches_the_same_centre():
    loc, a0, t0 = epigraph(6, 3, 9)
    a1, t1, _ = loc.center(a0, t0, loc.cut_slacks(a0, t0), tol=1e-14, max_steps=200)
    t_bad = t0 + 10.0
    assert np.all(loc.cut_slacks(a0, t_bad) < 0)
    a2, t2, steps = loc.center(a0, t_bad, np.full(3, 0.3), tol=1e-14, max_steps=200)
    assert np.allclose(a2, a1, atol=1e-8) and t2 == pytest.approx(t1, rel=1e-8)
    # one infeasible step only: no feasible point yet, the set is declared empty
    with pytest.raises(
        LocalizationSetEmpty, match=r"^the cuts leave no interior \(infeasible start did not end\)$"
    ):
        loc.center(a0, t_bad, np.full(3, 1e-3), tol=1e-14, max_steps=1)


def test_epigraph_first_infeasible_step_is_the_dense_newton_step():
    loc, a0, t0 = epigraph(5, 2, 10)
    t_bad = t0 + 5.0
    s0 = np.full(2, 0.4)
    r = s0 - loc.cut_slacks(a0, t_bad)
    # dense Newton step of the KKT system in (a, t, s) with the linear slack equations
    # s = h + G(a - a_bar) - t (Boyd & Vandenberghe 10.3): eliminate s
    ga, gt = epi_grad(loc, a0, t_bad)
    # gradient of phi in (a, t) with the slack variables held at s0
    inv_s = 1 / s0
    sl, su = a0 - loc.lower, loc.upper - a0
    ga = loc.rho * (a0 - loc.center_a) - loc.mu * (1 / sl - 1 / su) - loc.G[:2].T @ inv_s
    gt = -loc.w / t_bad + inv_s.sum()
    H, _ = epi_dense(loc, a0, t_bad, s0)
    rhs = np.concatenate([-ga + loc.G[:2].T @ (r * inv_s**2), [-gt - np.sum(r * inv_s**2)]])
    c1 = np.concatenate([loc.c, [0.0]])
    kkt = np.block([[H, c1[:, None]], [c1[None, :], np.zeros((1, 1))]])
    dz = np.linalg.solve(kkt, np.concatenate([rhs, [0.0]]))[:-1]
    da, dt = dz[:5], dz[5]
    ds = -r + loc.G[:2] @ da - dt
    t_max = np.inf
    for rate, slack in ((da, sl), (-da, su), (ds, s0)):
        if np.any(rate < 0):
            t_max = min(t_max, np.min(slack[rate < 0] / -rate[rate < 0]))
    if dt < 0:
        t_max = min(t_max, t_bad / -dt)
    step = min(1.0, 0.9 * t_max)
    assert step < 1.0
    # two steps: the second starts from the first; with max_steps = 1 the run would raise, so
    # read the first step off a spy on _factor's arguments
    seen = []
    orig = loc._factor

    def rec(a, t, s):
        seen.append((a.copy(), t, s.copy()))
        return orig(a, t, s)

    loc._factor = rec
    with contextlib.suppress(LocalizationSetEmpty):
        loc.center(a0, t_bad, s0, tol=1e-14, max_steps=2)
    a1, t1, s1 = seen[1]
    assert np.allclose(a1, a0 + step * da, rtol=1e-9, atol=1e-13)
    assert t1 == pytest.approx(t_bad + step * dt, rel=1e-9)
    assert np.allclose(s1, s0 + step * ds, rtol=1e-9, atol=1e-13)


def test_epigraph_center_refuses_starts_outside():
    loc, a0, t0 = epigraph(5, 2, 11)
    s = loc.cut_slacks(a0, t0)
    msg = r"^the starting point is not strictly inside$"
    for a, t in (
        (a0, 0.0),
        (a0, -1.0),
        (np.where(np.arange(5) == 3, 0.0, a0), t0),
        (np.where(np.arange(5) == 1, loc.upper, a0), t0),
    ):
        with pytest.raises(LocalizationSetEmpty, match=msg):
            loc.center(a, t, s, tol=1e-8, max_steps=5)


def test_epigraph_center_tolerance_edge():
    loc, a0, t0 = epigraph(6, 3, 12)
    s0 = loc.cut_slacks(a0, t0)
    a2, t2, steps = loc.center(a0, t0, s0, tol=1e-300, max_steps=2)
    assert steps == 2
    ga, gt = epi_grad(loc, a2, t2)
    H, _ = epi_dense(loc, a2, t2, loc.cut_slacks(a2, t2))
    g = np.concatenate([ga, [gt]])
    dec = float(g @ reduced_inverse(H, np.concatenate([loc.c, [0.0]])) @ g)
    assert dec > 1e-8
    a, t, steps = loc.center(a0, t0, s0, tol=0.5 * dec * (1 + 1e-6), max_steps=10)
    assert steps == 3 and np.array_equal(a, a2) and t == t2
    a, t, steps = loc.center(a0, t0, s0, tol=0.5 * dec * (1 - 1e-6), max_steps=10)
    assert steps > 3 and not np.allclose(a, a2)


# ---------------------------------------------------------------------------------------------
# _polish against a reference FISTA trace
# ---------------------------------------------------------------------------------------------
def reference_fista(problem, start, lip, steps):
    """FISTA with curvature backtracking and gradient restart (O'Donoghue & Candes), written
    from the description in accpm._polish: the trace of evaluated points and final lip."""
    w = np.ones(problem.n) if problem.metric is None else problem.metric
    trace = []
    x_prev, y, g = start.copy(), start.copy(), problem.grad(start)
    mom = 1.0
    for _ in range(steps):
        while True:
            x = problem.prox(y + g / (lip * w), 1 / lip, problem.metric)
            trace.append(x)
            gx = problem.grad(x)
            dx = x - y
            dd = dx @ (w * dx)
            if dd == 0 or (g - gx) @ dx <= lip * dd * (1 + 1e-12):
                break
            lip *= 2
        if dd == 0:
            break
        if (y - x) @ (x - x_prev) > 0:
            mom, y_next = 1.0, x
        else:
            m_next = 0.5 * (1 + np.sqrt(1 + 4 * mom**2))
            y_next = x + (mom - 1) / m_next * (x - x_prev)
            mom = m_next
        x_prev = x
        if y_next is x:
            y, g = x, gx
        else:
            y = problem.project(y_next)
            trace.append(y)
            g = problem.grad(y)
    return trace, lip


@pytest.mark.parametrize("metric", [None, "vector"])
@pytest.mark.parametrize("l1", [0.0, 0.4])
def test_polish_is_fista_with_curvature_backtracking_and_gradient_restart(metric, l1):
    p = QP(6, 13, l1=l1, bound_margin=1.0)
    if metric:
        p.metric = np.random.default_rng(14).uniform(0.5, 2.0, 6)
    lip0 = 0.05 * p.lipschitz_estimate()  # too small: the backtracking must double it
    start = p.evaluate(p.project(np.full(6, 0.3)))
    ref_trace, ref_lip = reference_fista(p, start.alpha, lip0, 12)
    p.points.clear()
    mon = SolverMonitor(p, method="accpm", tol=1e-12, max_iter=100)
    loc = _EpigraphLocalization(
        p.lower, p.upper, p.eq_coef, 0.0, 6, box_weight=1.0, objective_weight=1.0
    )
    loc.move(start.alpha.copy(), start.objective)
    stop, lip, last = A._polish(p, mon, loc, lip0, 12, start)
    assert not stop and lip == ref_lip > lip0
    assert len(p.points) == len(ref_trace)
    assert np.allclose(np.array(p.points), np.array(ref_trace), rtol=0, atol=1e-12)
    assert mon.n_evaluations == len(ref_trace) and mon.n_iter == 12
    assert np.array_equal(last.alpha, p.points[-1]) or np.array_equal(last.alpha, p.points[-2])
    # one cut per step, up to the capacity - 1
    assert loc.m == 5
    # ascent to the optimum with enough steps
    p2 = QP(6, 13, l1=l1, bound_margin=1.0)
    mon2 = SolverMonitor(p2, method="accpm", tol=1e-12, max_iter=1000)
    loc2 = _EpigraphLocalization(
        p2.lower, p2.upper, p2.eq_coef, 0.0, 3, box_weight=1.0, objective_weight=1.0
    )
    stop, _, last = A._polish(p2, mon2, loc2, p2.lipschitz_estimate(), 400, start)
    assert not stop and last.objective == pytest.approx(p2.fstar, abs=1e-7)


def test_polish_cuts_are_the_supergradients_of_the_polished_points():
    p = QP(5, 15, l1=0.25, bound_margin=1.0)
    start = p.evaluate(p.project(np.full(5, 0.2)))
    p.points.clear()
    mon = SolverMonitor(p, method="accpm", tol=1e-12, max_iter=100)
    loc = _EpigraphLocalization(
        p.lower, p.upper, p.eq_coef, 0.0, 40, box_weight=1.0, objective_weight=1.0
    )
    loc.move(start.alpha.copy(), start.objective)
    lip = 4 * p.lipschitz_estimate()  # large enough: no backtracking, no extrapolation copies
    A._polish(p, mon, loc, lip, 3, start)
    # each step evaluates x_k (prox step) and then the extrapolated y_k; the cuts are at x_k
    xs = p.points[0::2][:3]
    assert loc.m == 3
    for j, x in enumerate(xs):
        g = p.grad(x) - 0.25 * np.sign(x)
        assert np.allclose(loc.G[j], g, rtol=1e-13, atol=1e-14)
        z = np.full(5, 0.1)
        assert loc.cut_slacks(z, 0.0)[j] + loc.theta == pytest.approx(
            p.value(x) + g @ (z - x), rel=1e-12, abs=1e-13
        )


def test_polish_returns_true_when_the_monitor_stops():
    p = QP(5, 16, bound_margin=1.0)
    start = p.evaluate(p.project(np.full(5, 0.2)))
    mon = SolverMonitor(p, method="accpm", tol=1e-12, max_iter=3)
    loc = _EpigraphLocalization(
        p.lower, p.upper, p.eq_coef, 0.0, 10, box_weight=1.0, objective_weight=1.0
    )
    stop, lip, last = A._polish(p, mon, loc, p.lipschitz_estimate(), 50, start)
    assert stop and mon.n_iter == 3 and mon.status == "max_iter"
    assert lip == p.lipschitz_estimate() and last.alpha is not start.alpha


def test_polish_stops_at_a_fixed_point(monkeypatch):
    p = QP(5, 17, bound_margin=1.0)
    start = p.evaluate(p.project(np.full(5, 0.2)))
    p.points.clear()
    mon = SolverMonitor(p, method="accpm", tol=1e-12, max_iter=100)
    loc = _EpigraphLocalization(
        p.lower, p.upper, p.eq_coef, 0.0, 10, box_weight=1.0, objective_weight=1.0
    )
    # a prox step that returns its starting point (x_new == y): no backtracking, one step
    monkeypatch.setattr(p, "prox", lambda v, step, metric=None: start.alpha.copy())
    stop, lip, last = A._polish(p, mon, loc, 0.5, 50, start)
    assert not stop and mon.n_iter == 1 and len(p.points) == 1 and lip == 0.5
    assert np.array_equal(last.alpha, start.alpha) and loc.m == 1


# ---------------------------------------------------------------------------------------------
# The proximal variant on the stub
# ---------------------------------------------------------------------------------------------
def test_proximal_converges_with_consistent_info(monkeypatch):
    p = QP(7, 18)
    steps = []

    def rec(self, args, kwargs, out, before, pre=None):
        if not before:
            steps.append(out[2])

    spy(monkeypatch, _EpigraphLocalization, "center", rec)
    res = run(p, tol=1e-7)
    assert res.status == "converged"
    assert p.fstar - res.objective <= 1e-7 * max(1.0, abs(res.objective)) + 1e-12
    assert set(res.info) == {
        "variant",
        "max_cuts",
        "n_cuts",
        "newton_steps",
        "serious_steps",
        "restarts",
        "polish_steps",
        "first_polish_iteration",
        "proximal_weight",
        "time_center",
        "time_gradient",
        "time_cuts",
        "time_polish",
        "time_center_per_iter",
        "time_gradient_per_iter",
    }
    info = res.info
    assert info["variant"] == "proximal" and info["max_cuts"] == 21 and info["n_cuts"] <= 21
    if info["restarts"] == 0:
        assert info["newton_steps"] == sum(steps)
    for key in ("center", "gradient"):
        assert info[f"time_{key}"] > 0
        assert info[f"time_{key}_per_iter"] == pytest.approx(info[f"time_{key}"] / res.n_iter)
    assert info["time_cuts"] > 0 and info["time_polish"] >= 0
    if info["polish_steps"] == 0:
        assert info["first_polish_iteration"] is None and info["time_polish"] == 0.0


@pytest.mark.parametrize("case", ["plain", "l1-small-lip", "small-gradient-shifted-box"])
def test_proximal_cuts_weights_and_first_centre(monkeypatch, case):
    w, prox_up, null_up = 0.7, 3.0, 1.5
    l1 = 0.3 if case == "l1-small-lip" else 0.0
    p = QP(6, 19, l1=l1, bound_margin=1.0)
    if case == "l1-small-lip":  # a curvature scale below 1 (floored at 1e-12 only)
        p = QP(6, 19, l1=l1, bound_margin=1.0, Q=0.05 * QP(6, 19).Q)
        assert p.lipschitz_estimate() < 0.5
    elif case == "small-gradient-shifted-box":
        # a reduced gradient of norm < 1 and a gradient step shorter than 1; lower != 0
        p = QP(6, 19, bound_margin=1.0, b=0.05 * QP(6, 19).b)
        p.upper = 0.1 * p.upper
        p.lower = -0.2 * p.upper
    cuts, moves, first = [], [], []

    def rec_cut(self, args, kwargs, out, before, pre=None):
        if before:
            cuts.append((args[0].copy(), args[1], args[2].copy()))

    def rec_move(self, args, kwargs, out, before, pre=None):
        if before:
            moves.append(args[1])

    def rec_center(self, args, kwargs, out, before, pre=None):
        if before and not first:
            first.append((args[0].copy(), args[1], args[2].copy(), self.rho, self.mu, self.w))

    spy(monkeypatch, _EpigraphLocalization, "add_cut", rec_cut)
    spy(monkeypatch, _EpigraphLocalization, "move", rec_move)
    spy(monkeypatch, _EpigraphLocalization, "center", rec_center)
    res = quiet_run(
        p,
        tol=1e-14,
        max_iter=9,
        objective_weight=w,
        prox_update=prox_up,
        null_update=null_up,
        box_weight=0.05,
    )
    info = res.info
    assert res.status == "max_iter" and info["polish_steps"] == 0 and info["restarts"] == 0
    assert len(cuts) == 8 and info["n_cuts"] == 8
    for k, (g, f, pt) in enumerate(cuts):
        assert np.allclose(pt, p.points[k], rtol=0, atol=0)
        assert f == p.value(pt)
        assert np.allclose(g, p.grad(pt) - l1 * np.sign(pt), rtol=1e-13, atol=1e-14)
    # serious steps: the moves after the first; rho_p's trust-region updates
    S = len(moves) - 1
    assert info["serious_steps"] == S and moves == sorted(moves) and moves[0] == cuts[0][1]
    g0 = p.grad(p.points[0]) - l1 * np.sign(p.points[0])
    c = p.eq_coef
    g_norm = np.linalg.norm(g0 - c * (c @ g0) / (c @ c))
    lip = p.lipschitz_estimate()
    rho0 = (1 + w) / (g_norm / lip) ** 2
    if case == "small-gradient-shifted-box":
        assert g_norm < 1 and g_norm / lip < 1
    nulls = 9 - 2 - S
    assert info["proximal_weight"] == pytest.approx(rho0 * null_up**nulls / prox_up**S, rel=1e-12)
    # first centre: from the interior start with t = 1% of what the gradient gains across the
    # box and the cut slack at half of it; the barrier weights are the options
    a, t, s, rho, mu, ww = first[0]
    x0 = A._interior_start(p)
    assert np.array_equal(a, x0)
    t_ref = g_norm * np.linalg.norm(p.upper - p.lower) * 1e-2
    assert t == pytest.approx(t_ref, rel=1e-12)
    assert np.allclose(s, 0.5 * t_ref, rtol=1e-12) and s.shape == (1,)
    assert rho == pytest.approx(rho0, rel=1e-12) and mu == 0.05 and ww == w


def test_proximal_pruning_keeps_the_most_relevant_cuts(monkeypatch):
    p = QP(6, 20, bound_margin=1.0)
    centres, kept = [], []

    def rec_center(self, args, kwargs, out, before, pre=None):
        if not before:
            centres.append((out[0].copy(), out[1]))

    def rec_keep(self, args, kwargs, out, before, pre=None):
        if before:
            a, t = centres[-1]
            s = self.cut_slacks(a, t)
            H, E = epi_dense(self, a, t, s)
            kept.append((args[0].copy(), np.einsum("ij,jk,ik->i", E, np.linalg.inv(H), E)))

    spy(monkeypatch, _EpigraphLocalization, "center", rec_center)
    spy(monkeypatch, _EpigraphLocalization, "keep", rec_keep)
    res = quiet_run(p, tol=1e-14, max_iter=10, max_cuts=4)
    assert res.info["restarts"] == 0 and res.info["n_cuts"] == 4
    assert len(kept) == 10 - 1 - 4
    for index, rel in kept:
        assert np.array_equal(index, np.sort(np.argsort(rel)[::-1][:3]))


@pytest.mark.parametrize("scale", [1.0, 0.2])
def test_proximal_restarts_polish_and_gives_up_after_repeated_failures(monkeypatch, scale):
    # scale 0.2 (b and Q scaled): the kept cut's slack at the restart point is in (0, 1), where
    # it must still be passed as it is (at scale 1 it is 1.1)
    p0 = QP(6, 21)
    p = QP(6, 21, bound_margin=1.0, b=scale * p0.b, Q=scale * p0.Q)
    calls = []

    inputs, cut_slacks, rows, newest = [], [], [], []

    def rec_keep(self, args, kwargs, out, before, pre=None):
        if before:
            newest.append(self.G[self.m - 1].copy())

    spy(monkeypatch, _EpigraphLocalization, "keep", rec_keep)

    def failing(self, a, t, s, *, tol, max_steps):
        calls.append(max_steps)
        inputs.append((max_steps, a.copy(), t, s.copy(), self.m, self.rho, len(p.points)))
        cut_slacks.append(self.cut_slacks(a, t))
        rows.append(self.G[0].copy())
        raise LocalizationSetEmpty("x")

    monkeypatch.setattr(_EpigraphLocalization, "center", failing)
    polishes = []
    orig_polish = A._polish

    def rec_polish(problem, monitor, loc, lip, steps, start):
        polishes.append((monitor.n_iter, steps, start.objective, monitor.best.objective))
        return orig_polish(problem, monitor, loc, lip, steps, start)

    monkeypatch.setattr(A, "_polish", rec_polish)
    with pytest.warns(ConvergenceWarning, match="NOT certified"):
        res = run(p, tol=1e-9, max_newton=6)
    info = res.info
    # the main centre fails 4 times (failures > 3 on the fourth); 3 restarts in between, each
    # with a restart centre of 4 * max_newton steps
    assert calls == [6, 24, 6, 24, 6, 24, 6]
    assert info["restarts"] == 3 and info["polish_steps"] == 150 and len(polishes) == 3
    assert info["first_polish_iteration"] == 2 and polishes[0][0] == 1
    assert all(steps == 50 for _, steps, _, _ in polishes)
    # each polish starts from the best point seen
    assert all(start == best for _, _, start, best in polishes)
    assert info["note"] == "proximal centre failed: x"
    assert res.message == (
        "ACCPM stopped early: proximal centre failed: x; loosen tol or use method='pg'"
    )
    assert res.status == "stalled" and info["time_polish"] > 0 and info["n_cuts"] >= 1
    # each restart keeps the newest cut only, with a fresh proximal weight and model gap, from
    # halfway to the interior start (here the start itself: the failed centres never moved)
    x0 = A._interior_start(p)
    c, lip = p.eq_coef, p.lipschitz_estimate()
    for k, (steps, a, t, s, m, rho, _) in enumerate(inputs):
        assert np.allclose(a, x0, rtol=0, atol=1e-15)
        if steps == 24:
            main_point = p.points[inputs[k - 1][6] - 1]  # the evaluation of that iteration
            g = p.grad(main_point)
            g_norm = np.linalg.norm(g - c * (c @ g) / (c @ c))
            assert m == 1 and rho == pytest.approx(2.0 / (g_norm / lip) ** 2, rel=1e-12)
            t_ref = g_norm * np.linalg.norm(p.upper - p.lower) * 1e-2
            assert t == pytest.approx(t_ref, rel=1e-12) and s.shape == (1,)
            # the kept cut's slack at the restart point, or t where it is violated
            cs = cut_slacks[k]
            assert np.array_equal(s, np.where(cs > 0, cs, t))
            assert scale == 1.0 or 0 < cs[0] < 1
            assert np.array_equal(rows[k], newest[(k - 1) // 2])  # the newest cut is kept


def test_proximal_stops_after_five_restarts_that_do_not_shrink_the_gap(monkeypatch):
    p = QP(6, 22, bound_margin=1.0)
    orig = _EpigraphLocalization.center
    calls = []

    def alternating(self, a, t, s, *, tol, max_steps):
        calls.append(max_steps)
        main = [m for m in calls if m == 6]
        if max_steps == 6 and len(main) % 2 == 0:
            raise LocalizationSetEmpty("y")
        return orig(self, a, t, s, tol=tol, max_steps=max_steps)

    monkeypatch.setattr(_EpigraphLocalization, "center", alternating)
    with pytest.warns(ConvergenceWarning, match="NOT certified"):
        res = run(p, tol=1e-9, max_newton=6, max_iter=5000)
    note = (
        "5 restarts of the bundle without a smaller gap: the cuts are at the working "
        "precision of the objective (y)"
    )
    assert res.info["note"] == note and res.status == "stalled"
    assert res.info["restarts"] == 6 and res.info["polish_steps"] == 300
    assert calls.count(24) == 5


def test_proximal_restart_with_a_shrinking_gap_is_not_stale(monkeypatch):
    # bounds that shrink by half at every evaluation: every restart sees a smaller gap, so the
    # run ends on the failure count, not on the stale rule
    p = QP(6, 23, bound_margin=1.0)
    orig_eval = p.evaluate

    def evaluate(a):
        ev = orig_eval(a)
        ev.upper_bound = p.fstar + 0.99 ** len(p.points)
        return ev

    p.evaluate = evaluate
    orig = _EpigraphLocalization.center
    calls = []

    def alternating(self, a, t, s, *, tol, max_steps):
        calls.append(max_steps)
        main = [m for m in calls if m == 6]
        if max_steps == 6 and len(main) % 2 == 0:
            raise LocalizationSetEmpty("z")
        return orig(self, a, t, s, tol=tol, max_steps=max_steps)

    monkeypatch.setattr(_EpigraphLocalization, "center", alternating)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = run(p, tol=1e-300, max_newton=6, max_iter=400)
    assert "note" not in res.info and res.status == "max_iter"
    assert res.info["restarts"] >= 6


@pytest.mark.parametrize("variant", ["paper", "proximal"])
def test_limits_set_their_status_and_warn(variant):
    p = QP(6, 24, bound_margin=1.0)
    with pytest.warns(ConvergenceWarning, match=r"iteration limit 3 reached.*NOT certified"):
        res = run(p, variant=variant, max_iter=3)
    assert res.status == "max_iter" and res.n_iter == 3 and "note" not in res.info
    with pytest.warns(ConvergenceWarning, match=r"time limit 1e-09s reached"):
        res = run(QP(6, 24, bound_margin=1.0), variant=variant, max_time=1e-9)
    assert res.status == "max_time" and res.n_iter == 1
    res = run(QP(6, 24, bound_margin=1.0), variant=variant, callback=lambda info: True)
    assert res.status == "callback" and res.n_iter == 1
    assert res.history["objective"].shape == (1,)


# ---------------------------------------------------------------------------------------------
# Real problems: cuts against the dense objective, certified gap against the SDP optimum
# ---------------------------------------------------------------------------------------------
def dense_eq7(K0, y, alpha, rho):
    u = y * alpha
    K = psd_part(K0 + np.outer(u, u) / (4 * rho))
    return alpha.sum() - 0.5 * u @ K @ u + rho * np.sum((K - K0) ** 2)


def fd_gradient(f, x, h=1e-6):
    e = np.eye(x.size)
    return np.array([(f(x + h * e[i]) - f(x - h * e[i])) / (2 * h) for i in range(x.size)])


@pytest.mark.parametrize("variant", ["paper", "proximal"])
def test_real_svc_cuts_and_certified_gap(monkeypatch, variant):
    K0, y = sigmoid_problem(8, 0)
    C, rho = 1.0, 1.0
    opt, _ = sdp_optimum(K0, y, C, rho)
    problem = make_problem("svc", K0, y, C=C, rho=rho)
    evals = []
    orig_eval = problem.evaluate

    def evaluate(a, *args, **kwargs):
        ev = orig_eval(a, *args, **kwargs)
        evals.append(ev)
        return ev

    monkeypatch.setattr(problem, "evaluate", evaluate)
    res = run(problem, variant=variant, tol=1e-6, max_iter=400)
    assert res.status == "converged"
    h = res.history
    scale = max(1.0, abs(opt))
    # the certified gap is never below the true suboptimality; the objective never above opt
    assert np.all(h["gap"] >= (opt - h["best_objective"]) - 1e-7 * scale)
    assert np.all(h["best_objective"] <= opt + 1e-7 * scale)
    assert opt - res.objective <= 1e-6 * max(1.0, abs(res.objective - problem.baseline_objective))
    # the objective and gradient behind the first cuts: eq. (7) by dense eigh, its gradient by
    # central differences
    for ev in evals[:3]:
        assert ev.objective == pytest.approx(dense_eq7(K0, y, ev.alpha, rho), rel=1e-10)
        fd = fd_gradient(lambda a: dense_eq7(K0, y, a, rho), ev.alpha)
        assert np.allclose(ev.gradient, fd, rtol=1e-5, atol=1e-6)


def test_real_svr_proximal_cuts_use_the_l1_supergradient(monkeypatch):
    rng = np.random.default_rng(25)
    n = 8
    X = rng.normal(size=(n, 3))
    K0 = np.tanh(0.8 * X @ X.T - 0.3)
    t = X[:, 0] + 0.1 * rng.normal(size=n)
    opt, _ = svr_sdp(K0, t, 1.0, 0.1, 1.0)
    problem = make_problem("svr", K0, t, C=1.0, epsilon=0.1, rho=1.0)
    cuts = []

    def rec(self, args, kwargs, out, before, pre=None):
        if before:
            cuts.append((args[0].copy(), args[1], args[2].copy()))

    spy(monkeypatch, _EpigraphLocalization, "add_cut", rec)
    res = run(problem, tol=1e-6, max_iter=400)
    assert res.status == "converged" and abs(res.objective - opt) <= 1e-5 * max(1, abs(opt))
    h = res.history
    assert np.all(h["gap"] >= (opt - h["best_objective"]) - 1e-7 * max(1, abs(opt)))
    Kd = problem.working_kernel

    def full(a):  # eq. (17): linear part with the l1 term, kernel part by dense eigh
        u = a
        K = psd_part(Kd + np.outer(u, u) / 4.0)
        return t @ a - 0.1 * np.abs(a).sum() - 0.5 * u @ K @ u + np.sum((K - Kd) ** 2)

    away = [cut for cut in cuts[1:8] if np.all(np.abs(cut[2]) > 1e-4)]  # not at |a|'s kink
    assert len(away) >= 3
    for g, f, pt in away[:3]:
        assert f == pytest.approx(full(pt), rel=1e-9, abs=1e-10)
        assert np.allclose(g, fd_gradient(full, pt), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# Tests added for survivors of the first mutation run
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("m,seed", [(0, 0), (8, 0)])
def test_center_stops_when_no_step_decreases_the_barrier(m, seed):
    # tol = 1e-300: the run still ends at working precision (decrement 0 or no decrease),
    # long before max_steps (counted: 7 steps on both polytopes)
    loc, x0 = polytope(6, m, seed)
    x, steps = loc.center(x0.copy(), tol=1e-300, max_steps=200)
    assert steps < 20
    g = dense_barrier_gradient(loc, x)
    assert np.linalg.norm(null_basis(loc.c).T @ g) <= 1e-8 * np.linalg.norm(g)


@pytest.mark.parametrize("m,seed", [(1, 0), (3, 1), (8, 2)])
def test_epigraph_center_stops_when_no_step_decreases_the_barrier(m, seed):
    loc, a0, t0 = epigraph(6, m, seed)
    a, t, steps = loc.center(a0, t0, loc.cut_slacks(a0, t0), tol=1e-300, max_steps=200)
    assert steps < 40
    ga, gt = epi_grad(loc, a, t)
    assert np.linalg.norm(null_basis(loc.c).T @ ga) <= 1e-6 and abs(gt) * t <= 1e-6


def test_slacks_and_phi_use_the_lower_bounds():
    # lower != 0 (SVR's box is [-C, C]): the lower slack is x - lower
    loc, x0 = polytope(5, 2, 14)
    shift = np.linspace(-1.0, -0.2, 5)
    loc.lower, loc.upper = loc.lower + shift, loc.upper + shift
    loc.b[:2] += loc.A[:2] @ shift
    x = x0 + shift
    sl, su, s = loc.slacks(x)
    assert np.allclose(sl, x0, atol=1e-15) and np.allclose(su, loc.upper - x, atol=0)
    epi, a0, t0 = epigraph(5, 2, 15)
    phi = epi._phi(a0, t0, epi.cut_slacks(a0, t0))
    epi.lower = epi.lower - 0.5
    phi_shifted = epi._phi(a0, t0, epi.cut_slacks(a0, t0))
    assert phi_shifted == pytest.approx(epi_phi(epi, a0, t0), rel=1e-13) and phi_shifted < phi


def test_barriers_on_the_boundary_are_infinite_without_evaluating_log_zero():
    # a slack exactly 0 is outside: +inf is returned before any log(0) (no warning)
    loc, x0 = polytope(5, 3, 16)
    sl, su, s = loc.slacks(x0)
    epi, a0, t0 = epigraph(5, 3, 17)
    es = epi.cut_slacks(a0, t0)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        for k in range(3):
            groups = [sl.copy(), su.copy(), s.copy()]
            groups[k][1] = 0.0
            assert loc.barrier(*groups) == np.inf
        for a, t, ss in (
            (np.where(np.arange(5) == 2, epi.lower, a0), t0, es),
            (np.where(np.arange(5) == 4, epi.upper, a0), t0, es),
            (a0, 0.0, es),
            (a0, t0, np.where(np.arange(3) == 1, 0.0, es)),
        ):
            assert epi._phi(a, t, ss) == np.inf


def test_epigraph_center_at_its_centre_takes_no_step():
    loc, a0, t0 = epigraph(6, 3, 18)
    a, t, steps = loc.center(a0, t0, loc.cut_slacks(a0, t0), tol=1e300, max_steps=10)
    assert steps == 1 and np.array_equal(a, a0) and t == t0


def test_polish_backtracking_gives_up_after_30_doublings():
    p = QP(5, 19, bound_margin=1.0)
    start = p.evaluate(p.project(np.full(5, 0.2)))
    p.points.clear()
    mon = SolverMonitor(p, method="accpm", tol=1e-12, max_iter=100)
    loc = _EpigraphLocalization(
        p.lower, p.upper, p.eq_coef, 0.0, 10, box_weight=1.0, objective_weight=1.0
    )
    lip0 = p.lipschitz_estimate() * 2.0**-45  # 30 doublings are not enough
    _, lip, _ = A._polish(p, mon, loc, lip0, 1, start)
    assert lip == lip0 * 2.0**30
    # 30 trial points, then the extrapolated point of the next step
    assert len(p.points) == 31 and mon.n_iter == 1


def test_polish_curvature_test_accepts_the_exact_lipschitz_constant():
    # Q = 2 I: (g - g_new)'dx = 2 ||dx||^2 exactly up to rounding, so lip = 2 passes the test
    # (with its 1e-12 allowance) and is never doubled
    n = 5
    p = QP(n, 20, Q=2.0 * np.eye(n), bound_margin=1.0)
    start = p.evaluate(p.project(np.full(n, 0.2)))
    mon = SolverMonitor(p, method="accpm", tol=1e-12, max_iter=100)
    loc = _EpigraphLocalization(
        p.lower, p.upper, p.eq_coef, 0.0, 10, box_weight=1.0, objective_weight=1.0
    )
    _, lip, _ = A._polish(p, mon, loc, 2.0, 6, start)
    assert lip == 2.0


def test_polish_records_each_step_in_the_monitor():
    p = QP(5, 21, bound_margin=1.0)
    start = p.evaluate(p.project(np.full(5, 0.2)))
    seen = []
    mon = SolverMonitor(
        p, method="accpm", tol=1e-12, max_iter=100, callback=lambda info: seen.append(info)
    )
    mon.offer(p.evaluate(p.project(p.astar)))  # the best point is known: steps are below it
    p.points.clear()
    loc = _EpigraphLocalization(
        p.lower, p.upper, p.eq_coef, 0.0, 10, box_weight=1.0, objective_weight=1.0
    )
    # a large lip: no backtracking, each step evaluates x_k then y_k
    A._polish(p, mon, loc, 50 * p.lipschitz_estimate(), 4, start)
    assert [info["n_cuts"] for info in seen] == [1, 2, 3, 4]
    rows = np.array(mon._rows)
    xs = p.points[0::2][:4]
    # the current objective of each row is that of the step's point x_k (not the best)
    assert np.allclose(rows[:, 2], [p.value(x) for x in xs], rtol=1e-14)


def test_epigraph_center_with_shifted_bounds_is_the_shifted_centre():
    loc, a0, t0 = epigraph(6, 3, 22)
    a1, t1, _ = loc.center(a0, t0, loc.cut_slacks(a0, t0), tol=1e-14, max_steps=200)
    shift = np.linspace(-1.0, -0.3, 6)  # a box [-C, C]-like lower bound (SVR)
    loc.lower, loc.upper, loc.center_a = loc.lower + shift, loc.upper + shift, loc.center_a + shift
    a2, t2, _ = loc.center(a0 + shift, t0, loc.cut_slacks(a0 + shift, t0), tol=1e-14,
                           max_steps=200)  # fmt: skip
    assert np.allclose(a2, a1 + shift, atol=1e-9) and t2 == pytest.approx(t1, rel=1e-8)


@pytest.mark.parametrize(("da_nan", "dt_nan"), [(True, False), (False, True)], ids=["da", "dt"])
def test_epigraph_center_refuses_a_nonfinite_newton_step(monkeypatch, da_nan, dt_nan):
    loc, a0, t0 = epigraph(5, 2, 23)
    monkeypatch.setattr(
        loc,
        "reduced_solve",
        lambda ra, rt: (np.full(5, np.nan if da_nan else 0.1), np.nan if dt_nan else 0.1),
    )
    with pytest.raises(LocalizationSetEmpty, match=r"^non-finite Newton step$"):
        loc.center(a0, t0, loc.cut_slacks(a0, t0), tol=1e-8, max_steps=5)


def test_epigraph_center_reports_a_newton_system_lost_to_rounding(monkeypatch):
    loc, a0, t0 = epigraph(5, 2, 24)

    def fail(ra, rt):
        raise ValueError("array must not contain infs or NaNs")

    monkeypatch.setattr(loc, "reduced_solve", fail)
    msg = r"^Newton system lost to rounding \(array must not contain infs or NaNs\)$"
    with pytest.raises(LocalizationSetEmpty, match=msg):
        loc.center(a0, t0, loc.cut_slacks(a0, t0), tol=1e-8, max_steps=5)


def test_epigraph_full_infeasible_step_with_no_interior_is_refused(monkeypatch):
    # a full infeasible-start step restores the slack equations exactly; if the recomputed
    # slacks are not positive (rounding), the set has no interior
    loc, a0, t0 = epigraph(5, 2, 25)
    s_true = loc.cut_slacks(a0, t0)
    calls = []
    orig = loc.cut_slacks

    def slacks(a, t):
        calls.append(1)
        out = orig(a, t)
        return out if len(calls) == 1 else np.minimum(out, 0.0)

    monkeypatch.setattr(loc, "cut_slacks", slacks)
    # slightly wrong starting slacks: the full step is feasible
    with pytest.raises(LocalizationSetEmpty, match=r"^no interior left at working precision$"):
        loc.center(a0, t0, s_true * 1.01, tol=1e-8, max_steps=5)
    assert len(calls) == 2


def infeasible_first_step(loc, a0, t, s0):
    """The first infeasible-start Newton step (Boyd & Vandenberghe 10.3), densely: the step
    of the KKT system in (a, t) with the slack block eliminated, cut at 0.9 of the largest
    step keeping the box, cut and t slacks positive."""
    m = loc.m
    r = s0 - loc.cut_slacks(a0, t)
    inv_s = 1 / s0
    sl, su = a0 - loc.lower, loc.upper - a0
    ga = loc.rho * (a0 - loc.center_a) - loc.mu * (1 / sl - 1 / su) - loc.G[:m].T @ inv_s
    gt = -loc.w / t + inv_s.sum()
    H, _ = epi_dense(loc, a0, t, s0)
    rhs = np.concatenate([-ga + loc.G[:m].T @ (r * inv_s**2), [-gt - np.sum(r * inv_s**2)]])
    c1 = np.concatenate([loc.c, [0.0]])
    kkt = np.block([[H, c1[:, None]], [c1[None, :], np.zeros((1, 1))]])
    dz = np.linalg.solve(kkt, np.concatenate([rhs, [0.0]]))[:-1]
    da, dt = dz[:-1], dz[-1]
    ds = -r + loc.G[:m] @ da - dt
    limits = {"lower": np.inf, "upper": np.inf, "cuts": np.inf, "t": np.inf}
    for key, rate, slack in (("lower", da, sl), ("upper", -da, su), ("cuts", ds, s0)):
        if np.any(rate < 0):
            limits[key] = np.min(slack[rate < 0] / -rate[rate < 0])
    if dt < 0:
        limits["t"] = t / -dt
    step = min(1.0, 0.9 * min(limits.values()))
    return step, da, dt, ds, min(limits, key=limits.get)


def test_epigraph_infeasible_steps_respect_every_slack():
    binding = set()
    for seed in range(8):
        loc, a0, t0 = epigraph(5, 2, 30 + seed)
        rng = np.random.default_rng(seed)
        # starts pushed towards the box (on the hyperplane) with violated cut slacks
        Z = null_basis(loc.c)
        d = Z @ rng.normal(size=4)
        with np.errstate(divide="ignore"):
            room = np.min(np.where(d > 0, (loc.upper - a0) / d, (loc.lower - a0) / d))
        a = a0 + 0.97 * room * d
        values = loc.cut_slacks(a, 0.0)
        t = max(values.min() + 0.05, 1e-3)  # the lowest cut is violated
        s0 = np.full(2, 0.4)
        step, da, dt, ds, limit = infeasible_first_step(loc, a, t, s0)
        seen = []
        orig = loc._factor

        def rec(a_, t_, s_, seen=seen, orig=orig):
            seen.append((a_.copy(), t_, s_.copy()))
            return orig(a_, t_, s_)

        loc._factor = rec
        with contextlib.suppress(LocalizationSetEmpty):
            loc.center(a, t, s0, tol=1e-14, max_steps=2)
        a1, t1, s1 = seen[1]
        assert np.allclose(a1, a + step * da, rtol=1e-9, atol=1e-13)
        assert t1 == pytest.approx(t + step * dt, rel=1e-9)
        assert np.allclose(s1, s0 + step * ds, rtol=1e-9, atol=1e-13)
        if step < 1.0:
            binding.add(limit)
    assert {"lower", "upper"} <= binding


def test_option_defaults_reach_the_solver_bodies(monkeypatch):
    seen = {}
    monkeypatch.setattr(A, "_proximal_accpm", lambda *args: seen.setdefault("proximal", args))
    monkeypatch.setattr(A, "_accpm", lambda *args: seen.setdefault("paper", args))
    limits = []

    @contextlib.contextmanager
    def fake_limit(n):
        limits.append(n)
        yield

    monkeypatch.setattr(A, "blas_limit", fake_limit)
    p = QP(5)
    mon = SolverMonitor(p, method="accpm", tol=1e-6, max_iter=1)
    analytic_center_cutting_plane(p, mon)
    analytic_center_cutting_plane(p, mon, variant="paper")
    assert seen["proximal"][2:] == (15, 1e-3, 50, 1e-2, 1.0, 2.0, 2.0)
    assert [type(v) for v in seen["proximal"][2:]] == [int, float, int, float, float, float, float]
    assert seen["paper"][2:] == (None, 1e-3, 50, 0.5, "certified")
    assert limits == [1, 1]


class FakeClock:
    """``time.perf_counter`` seen by accpm only: 0, 1, 2, ... one per call."""

    def __init__(self):
        self.now = -1.0

    def perf_counter(self):
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("n_iter", [1, 4])
def test_paper_time_split_counts_every_interval_once(monkeypatch, n_iter):
    # with a clock that ticks once per reading, each timed interval lasts exactly 1: the
    # initial centre, then per iteration the gradient and the bound (cuts), and per iteration
    # that continues the re-centering step (cuts) and the centre
    monkeypatch.setattr(A, "time", FakeClock())
    res = quiet_run(QP(5, 26, bound_margin=1.0), variant="paper", max_iter=n_iter)
    info = res.info
    assert res.n_iter == n_iter
    assert info["time_gradient"] == n_iter and info["time_center"] == n_iter
    assert info["time_cuts"] == 2 * n_iter - 1
    assert info["time_gradient_per_iter"] == 1.0 and info["time_center_per_iter"] == 1.0


@pytest.mark.parametrize("n_iter", [1, 4])
def test_proximal_time_split_counts_every_interval_once(monkeypatch, n_iter):
    monkeypatch.setattr(A, "time", FakeClock())
    res = quiet_run(QP(5, 26, bound_margin=1.0), max_iter=n_iter)
    info = res.info
    assert res.n_iter == n_iter and info["polish_steps"] == 0
    assert info["time_gradient"] == n_iter
    assert info["time_cuts"] == n_iter - 1 and info["time_center"] == n_iter - 1
    assert info["time_polish"] == 0.0
    assert info["time_gradient_per_iter"] == 1.0
    assert info["time_center_per_iter"] == (n_iter - 1) / n_iter


def test_proximal_time_split_excludes_the_polish_from_the_centres(monkeypatch):
    # four failed centres: three polishes (1 each) and restarts; a centre interval that holds
    # a polish lasts 4 ticks of which the polish's 2 are not counted
    monkeypatch.setattr(A, "time", FakeClock())

    def failing(self, a, t, s, *, tol, max_steps):
        raise LocalizationSetEmpty("x")

    monkeypatch.setattr(_EpigraphLocalization, "center", failing)
    res = quiet_run(QP(6, 21, bound_margin=1.0), tol=1e-9)
    info = res.info
    assert info["restarts"] == 3
    assert info["time_polish"] == 3 and info["time_center"] == 3 * 2 + 1
    assert info["time_gradient"] == 4 and info["time_cuts"] == 4


def test_proximal_stale_stop_times_its_last_centre(monkeypatch):
    monkeypatch.setattr(A, "time", FakeClock())
    orig = _EpigraphLocalization.center
    calls = []

    def alternating(self, a, t, s, *, tol, max_steps):
        calls.append(max_steps)
        if max_steps == 50 and calls.count(50) % 2 == 0:
            raise LocalizationSetEmpty("y")
        return orig(self, a, t, s, tol=tol, max_steps=max_steps)

    monkeypatch.setattr(_EpigraphLocalization, "center", alternating)
    res = quiet_run(QP(6, 22, bound_margin=1.0), tol=1e-9, max_iter=5000)
    info = res.info
    assert info["restarts"] == 6 and info["time_polish"] == 6
    n_main = calls.count(50)
    # successful main centres 1 tick; failed ones with a restart 2; the last failure 2 (the
    # stale stop reads the clock after the polish without a restart centre)
    assert info["time_center"] == (n_main - 6) + 5 * 2 + 2


def test_proximal_warm_start_rule(monkeypatch):
    # the start of every centre after the first: the previous centre a, t from the model gap
    # (lowered by a serious step's improvement, at most halved), lowered under every cut when
    # they all promise more than 1% of the gap, cut slacks replaced by half the gap where the
    # new cut cuts the start off
    p = QP(6, 27, bound_margin=1.0)
    events = []

    def rec_center(self, args, kwargs, out, before, pre=None):
        if before:
            snap = (self.G[: self.m].copy(), self.h[: self.m].copy(), self.center_a.copy())
            events.append(("in", args[0].copy(), args[1], args[2].copy(), snap))
        else:
            events.append(("out", out[0].copy(), out[1]))

    def rec_move(self, args, kwargs, out, before, pre=None):
        if before:
            events.append(("move", self.theta, args[1]))

    spy(monkeypatch, _EpigraphLocalization, "center", rec_center)
    spy(monkeypatch, _EpigraphLocalization, "move", rec_move)
    res = quiet_run(p, tol=1e-14, max_iter=8)
    assert res.info["restarts"] == 0 and res.info["polish_steps"] == 0
    checked = lowered = 0
    prev = None
    serious = None
    for ev in events:
        if ev[0] == "move":
            serious = ev if np.isfinite(ev[1]) else None
        elif ev[0] == "out":
            prev = ev
        elif prev is not None:
            _, a_in, t_in, s_in, (G, h, ca) = ev
            a_prev, t_prev = prev[1], prev[2]
            t = t_prev
            if serious is not None:
                t = max(t_prev - (serious[2] - serious[1]), 0.5 * t_prev)
            model = h + G @ (a_prev - ca)
            if model.min() > 1e-2 * t_prev:
                t = min(t, 0.5 * model.min())
                lowered += 1
            assert np.array_equal(a_in, a_prev)
            assert t_in == pytest.approx(t, rel=1e-12)
            sl = model - t
            assert np.allclose(s_in, np.where(sl > 0, sl, 0.5 * t_prev), rtol=1e-12, atol=0)
            checked += 1
            serious = None
    # the lowering branch is never taken: the newest cut passes through the previous centre
    # (p = project(a) = a) with value f(p) - theta <= 0, so the model never promises more
    # than 1% of the gap there
    assert checked == 6 and lowered == 0


def test_proximal_first_centre_with_a_zero_reduced_gradient(monkeypatch):
    # f = 2 c'a is constant on the feasible set: the first proximal weight is (1 + w) / 1 (a
    # unit step) and the model gap its floor 1e-12 * 1e-2
    n, w = 4, 0.6
    base = QP(n, 0)
    p = QP(n, 0, b=2.0 * base.eq_coef, Q=np.zeros((n, n)), bound_margin=1.0)
    first = []

    def rec(self, args, kwargs, out, before, pre=None):
        if before and not first:
            first.append((self.rho, args[1]))

    spy(monkeypatch, _EpigraphLocalization, "center", rec)
    # regression: the centre's equality solve divided by c'H^-1 c = 0 (rounded) and the
    # solver died with ZeroDivisionError; it is now a failed centre like any lost Newton system
    res = quiet_run(p, max_iter=2, objective_weight=w)
    assert res.n_iter == 2 and res.status == "max_iter"
    rho, t = first[0]
    assert rho == pytest.approx(1 + w, rel=1e-14) and t == pytest.approx(1e-14, rel=1e-14)


def test_proximal_reports_each_iteration_to_the_monitor(monkeypatch):
    p = QP(6, 28, bound_margin=1.0)
    steps = []

    def rec(self, args, kwargs, out, before, pre=None):
        if not before:
            steps.append(out[2])

    spy(monkeypatch, _EpigraphLocalization, "center", rec)
    seen = []
    res = quiet_run(p, tol=1e-14, max_iter=9, callback=lambda info: seen.append(info))
    assert res.info["polish_steps"] == 0 and res.info["restarts"] == 0
    # the cuts and the Newton steps of the centre that produced the evaluated point
    assert [i["n_cuts"] for i in seen] == list(range(9))
    assert [i["newton_steps"] for i in seen] == [0, *steps]
    # the current objective of each row is that iteration's point, not the best one
    values = [p.value(x) for x in p.points]
    assert np.array_equal(res.history["objective"], values)
    assert np.any(np.diff(values) < 0)  # a null step: current below best


def test_epigraph_centre_backtracking_halves_a_rejected_step(monkeypatch):
    # the first two trial points of the first Newton step are rejected (phi = inf): the trial
    # steps must then shrink, 1 -> 1/2 -> max(1/4, floor) with floor = 1 / (1 + decrement),
    # here the floor 0.38 (each trial's step is (t_trial - t) / (t_first_trial - t))
    loc, a0, t0 = epigraph(6, 3, 0)
    trials = []
    orig_phi = _EpigraphLocalization._phi

    def phi(self, a, t, s):
        trials.append(t)
        value = orig_phi(self, a, t, s)
        return np.inf if len(trials) in (2, 3) else value  # the first call is the start

    monkeypatch.setattr(_EpigraphLocalization, "_phi", phi)
    loc.center(a0, t0, loc.cut_slacks(a0, t0), tol=1e-10, max_steps=1)
    assert len(trials) == 4
    steps = [(t - trials[0]) / (trials[1] - trials[0]) for t in trials[1:]]
    assert steps[1] == pytest.approx(0.5, rel=1e-12)
    assert 0.25 <= steps[2] < 0.5


# ---------------------------------------------------------------------------------------------
# The damped Newton line search shared by both variants
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "decrement_sq,step_max,first",
    [
        (9.0, 10.0, [1.0, 0.5, 0.25, 0.125]),  # floor 1/(1+3) = 0.25 reached by halving
        (1.0, 0.7, [0.693, 0.5, 0.25, 0.125]),  # 0.3465 would pass the floor 0.5: clamped
        (0.25, 0.9, [0.891, 2.0 / 3.0, 1.0 / 3.0]),  # floor 1/(1+0.5)
        (-1e-18, 0.3, [0.297, 0.1485]),  # a rounding-negative decrement: floor 1
    ],
)
def test_backtracking_steps_halve_but_clamp_at_the_damped_newton_step(
    decrement_sq, step_max, first
):
    """Trial steps: ``0.99 step_max`` (at most 1), halved, clamped once at the damped step
    ``1/(1 + lambda)`` while above it, then halved on until they reach 1e-14."""
    steps = list(A._backtracking_steps(decrement_sq, step_max))
    np.testing.assert_allclose(steps[: len(first)], first, rtol=1e-15)
    assert steps[-1] > 1e-14 >= 0.5 * steps[-1]
    ratios = np.array(steps[len(first) :]) / np.array(steps[len(first) - 1 : -1])
    np.testing.assert_allclose(ratios, 0.5, rtol=1e-15)


def test_sufficient_decrease_is_armijo_or_a_non_increase_near_the_centre():
    """Armijo with slope 0.01 (the bound itself accepted), and near the centre (decrement below
    1e-6) any finite non-increase; never an increase, a NaN or a bare non-increase far away."""
    phi, step, dec = 1.0, 0.5, 2.0
    armijo = phi - 0.01 * step * dec
    assert A._sufficient_decrease(armijo, phi, step, dec)
    assert not A._sufficient_decrease(np.nextafter(armijo, 2.0), phi, step, dec)
    assert not A._sufficient_decrease(phi, phi, step, dec)
    assert not A._sufficient_decrease(phi - 0.009, phi, 1.0, dec)  # step 1: margin 0.02
    assert A._sufficient_decrease(phi - 0.021, phi, 1.0, dec)
    assert A._sufficient_decrease(phi - 0.0051, phi, 0.25, dec)  # step 0.25: margin 0.005
    assert A._sufficient_decrease(phi, phi, step, 1e-8)  # near the centre: no increase suffices
    assert not A._sufficient_decrease(phi, phi, step, 1e-6)  # 1e-6 is not "near"
    assert not A._sufficient_decrease(phi, phi, step, 0.5)
    assert not A._sufficient_decrease(np.nextafter(phi, 2.0), phi, step, 1e-8)
    assert not A._sufficient_decrease(np.nan, phi, step, 1e-8)
    assert not A._sufficient_decrease(np.inf, phi, step, 1e-8)
