"""The classification problem object: objective, gradient, proxy kernel and certified bound."""

from __future__ import annotations

import re

import cvxpy as cp
import numpy as np
import pytest
from helpers import record_calls, sigmoid_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    dense_objective_eigen_form,
    dense_objective_eq7,
    psd_part,
    random_feasible_alpha,
    svm_dual_value,
)

from indefsvm.proxy import problems as P
from indefsvm.proxy.problems import (
    ClassificationProblem,
    OneClassProblem,
    PerturbProblem,
    RegressionProblem,
    make_problem,
    minimize_piecewise_linear,
)


def random_symmetric(n, rng, kind):
    """Random symmetric matrices including clustered and repeated eigenvalues."""
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    if kind == "gaussian":
        A = rng.normal(size=(n, n))
        return (A + A.T) / 2
    if kind == "repeated":
        d = rng.choice([-1.0, 0.0, 0.5, 2.0], size=n)
    elif kind == "clustered":
        centers = rng.choice([-1.0, 1.0], size=n)
        d = centers + 1e-9 * rng.normal(size=n)
    else:  # low rank indefinite
        d = np.zeros(n)
        d[:2] = [-3.0, 5.0]
    return (Q * d) @ Q.T


matrices = st.tuples(
    st.integers(3, 25),
    st.integers(0, 2**31 - 1),
    st.sampled_from(["gaussian", "repeated", "clustered", "lowrank"]),
    st.sampled_from([1e-4, 1e-2, 1.0, 1e2, 1e4]),
)


@settings(max_examples=60, deadline=None)
@given(matrices)
def test_objective_matches_dense_eq7_and_eigen_form(params):
    n, seed, kind, rho = params
    rng = np.random.default_rng(seed)
    K0 = random_symmetric(n, rng, kind)
    y = rng.choice([-1.0, 1.0], size=n)
    y[0], y[1] = 1.0, -1.0
    C = rng.uniform(0.1, 5.0)
    prob = ClassificationProblem(K0, y, C=C, rho=rho)
    alpha = random_feasible_alpha(y, C, rng)
    ev = prob.evaluate(alpha)
    f_ref, Ks = dense_objective_eq7(K0, y, alpha, rho)
    scale = max(1.0, abs(f_ref), alpha.sum(), rho * np.sum(K0**2))
    assert abs(ev.objective - f_ref) <= 1e-9 * scale
    assert abs(ev.objective - dense_objective_eigen_form(K0, y, alpha, rho)) <= 1e-8 * scale
    kscale = max(1.0, np.abs(Ks).max())
    assert np.allclose(prob.proxy_kernel(alpha), Ks, atol=1e-9 * kscale)
    v = rng.normal(size=n)
    assert np.allclose(prob.proxy_kernel_matvec(alpha, v), Ks @ v, atol=1e-9 * kscale * n)
    # gradient of eq. (7) is e - Y K* Y alpha (theory.md §2)
    assert np.allclose(ev.gradient, 1 - y * (Ks @ (y * alpha)), atol=1e-9 * kscale * n)


def test_gradient_matches_finite_differences(small_indefinite):
    K0, y = small_indefinite
    rng = np.random.default_rng(2)
    for rho in (0.05, 1.0, 20.0):
        prob = ClassificationProblem(K0, y, C=2.0, rho=rho)
        alpha = random_feasible_alpha(y, 2.0, rng)
        g = prob.gradient(alpha)
        h = 1e-6
        fd = np.array(
            [
                (prob.objective(alpha + h * e) - prob.objective(alpha - h * e)) / (2 * h)
                for e in np.eye(len(y))
            ]
        )
        assert np.allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_upper_bound_is_svm_primal_of_proxy_kernel(small_indefinite):
    """UB(alpha) >= omega_C(K*) + rho||K* - K0||^2 (cvxpy) >= f(alpha); gap = UB - f."""
    K0, y = small_indefinite
    rng = np.random.default_rng(4)
    rho, C = 0.5, 1.5
    prob = ClassificationProblem(K0, y, C=C, rho=rho)
    for _ in range(3):
        alpha = random_feasible_alpha(y, C, rng)
        ev = prob.evaluate(alpha)
        Ks = psd_part(K0 + np.outer(y * alpha, y * alpha) / (4 * rho))
        omega, _ = svm_dual_value(Ks, y, C)
        inner = omega + rho * np.sum((Ks - K0) ** 2)
        assert ev.upper_bound >= inner - 1e-6 * abs(inner)
        assert inner >= ev.objective - 1e-9 * abs(inner)
        # direct primal value with the reported intercept
        g = Ks @ (y * alpha)
        primal = 0.5 * (y * alpha) @ g + C * np.sum(np.maximum(0, 1 - y * (g + ev.intercept)))
        assert np.isclose(ev.upper_bound, primal + rho * np.sum((Ks - K0) ** 2), rtol=1e-10)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 40), st.integers(0, 2**31 - 1))
def test_best_intercept_beats_a_fine_grid(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=n)
    y[0], y[1] = 1.0, -1.0
    g = rng.normal(size=n) * 2
    C = rng.uniform(0.1, 2.0, size=n)
    b, val = minimize_piecewise_linear(0.0, C, -y, 1 - y * g)
    loss = lambda bb: np.sum(C * np.maximum(0, 1 - y * (g + bb)))  # noqa: E731
    assert np.isclose(val, loss(b), rtol=1e-12, atol=1e-12)
    grid = np.linspace(-10, 10, 4001)
    assert val <= min(loss(bb) for bb in grid) + 1e-12


def test_class_weight_options():
    K0, y = sigmoid_problem(12, 1)
    n_pos, n_neg = int((y > 0).sum()), int((y < 0).sum())
    p = ClassificationProblem(K0, y, C=2.0, class_weight="paper")
    assert np.allclose(p.box[y > 0], 2.0) and np.allclose(p.box[y < 0], 2.0 * n_pos / n_neg)
    p = ClassificationProblem(K0, y, C=2.0, class_weight="balanced")
    assert np.allclose(p.box[y > 0], 2.0 * 12 / (2 * n_pos))
    labels = np.where(y > 0, "yes", "no")
    p = ClassificationProblem(K0, labels, C=1.0, class_weight={"yes": 3.0})
    assert list(p.classes) == ["no", "yes"]
    assert np.allclose(p.box[y > 0], 3.0) and np.allclose(p.box[y < 0], 1.0)
    with pytest.raises(ValueError, match="not class labels"):
        ClassificationProblem(K0, labels, class_weight={"maybe": 2.0})
    with pytest.raises(ValueError, match="class_weight"):
        ClassificationProblem(K0, y, class_weight="unbalanced")


def test_psd_kernel_needs_no_eigen_work(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(15, 4))
    K0 = X @ X.T + 1e-3 * np.eye(15)  # strictly PSD
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    import indefsvm.proxy.operators as proxy

    def forbidden(*args, **kwargs):
        raise AssertionError("rank-one eigen work on a PSD kernel")

    monkeypatch.setattr(proxy, "rank_one_eigh", forbidden)
    prob = ClassificationProblem(K0, y, C=1.0, rho=0.3)
    alpha = random_feasible_alpha(y, 1.0, rng)
    f_ref, Ks = dense_objective_eq7(K0, y, alpha, 0.3)
    ev = prob.evaluate(alpha)
    assert np.isclose(ev.objective, f_ref, rtol=1e-12)
    # eq. (22): K* = K0 + u u'/(4 rho) exactly
    u = y * alpha
    assert np.allclose(prob.proxy_kernel(alpha), K0 + np.outer(u, u) / 1.2, atol=1e-12)


# Contract of ``indefsvm.proxy.problems`` on small inputs, against independent references.
#
# The fast first file of the ``problems`` mutation run (tools/mutation.py, docs/mutation.md): every
# quantity a problem object returns is recomputed here from its definition in paper 004 with dense
# numpy only: the proxy kernel ``K* = (K0 + u u'/(4 rho))_+`` by ``eigh`` (eq. 5/16; for a vector
# rho ``Ds^-1 (Ds K0 Ds + v v'/4)_+ Ds^-1`` with ``v = Ds^-1 u``, Theorem 3), the objective of
# eq. (7)/(17)/(20)/(22) evaluated literally, its gradient by central differences, the certified
# bound (primal value of ``w = sum u_j phi(x_j)`` with the best intercept, theory.md §3) by brute
# force over the breakpoints, the projections by cvxpy, and every error message (anchored).
# No solver is run.


N = 9


def _data(seed=0, n=N, psd=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    K0 = X @ X.T + 0.1 * np.eye(n) if psd else np.tanh(0.8 * X @ X.T - 0.3)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    t = X[:, 0] + 0.1 * rng.normal(size=n)
    return K0, y, t


def _problem(kind, vector_rho=False, seed=0, **opts):
    K0, y, t = _data(seed, psd=kind == "perturb")
    rho = np.random.default_rng(seed + 7).uniform(0.3, 3.0, N) if vector_rho else 0.7
    if kind == "svc":
        problem = ClassificationProblem(K0, y, C=1.3, rho=rho, **opts)
    elif kind == "perturb":
        problem = PerturbProblem(K0, y, C=1.3, rho=rho, **opts)
    elif kind == "svr":
        problem = RegressionProblem(K0, t, C=0.8, epsilon=0.15, rho=rho, **opts)
    else:
        problem = OneClassProblem(K0, nu=0.4, rho=rho, **opts)
    problem.given_K0 = K0.copy()  # the reference uses the kernel given, not the problem's copy
    return problem


def _point(problem, seed=1):
    """A feasible point with coordinates strictly inside and on both bounds."""
    rng = np.random.default_rng(seed)
    v = rng.uniform(problem.lower, problem.upper)
    v[0], v[1] = problem.upper[0] * 2, problem.lower[1] - 1.0
    return problem.project(v)


class Ref:
    """Paper 004's quantities by dense eigh, in the original coordinates."""

    def __init__(self, problem, alpha):
        self.p = problem
        given = getattr(problem, "given_K0", None)
        if given is None:  # built by the test itself with a scalar rho
            assert problem.scale is None
            given = problem.operator.K0
        self.K0 = given
        rho = np.broadcast_to(np.asarray(problem.rho, dtype=float), (problem.n,))
        self.H = np.sqrt(np.outer(rho, rho))  # componentwise penalty, Theorem 3
        self.ds = rho**0.25
        self.u = problem.sign * alpha
        v = self.u / self.ds
        work = self.ds[:, None] * self.K0 * self.ds[None, :] + np.outer(v, v) / 4.0
        self.K = psd_part(work) / np.outer(self.ds, self.ds)
        self.alpha = alpha

    def objective(self, alpha=None):
        if alpha is not None:
            return Ref(self.p, alpha).objective()
        p, u, K = self.p, self.u, self.K
        lin = p.linear_coef @ self.alpha - p.l1_weight * np.abs(self.alpha).sum()
        return lin - 0.5 * u @ K @ u + np.sum(self.H * (K - self.K0) ** 2)

    def penalty(self):
        return float(np.sum(self.H * (self.K - self.K0) ** 2))


def _f0(problem):
    """``f(0) = rho ||(K0)_-||_F^2`` by the dense reference (componentwise for a vector rho)."""
    return Ref(problem, np.zeros(problem.n)).objective()


def _brute_primal(problem, g, w_sq):
    """``1/2 ||w||^2 + loss(g + b)`` minimised over the intercept by trying every breakpoint."""
    if problem.kind in ("svc", "perturb"):
        y, C = problem.y, problem.upper

        def loss(b):
            return np.sum(C * np.maximum(0.0, 1.0 - y * (g + b)))

        cands = y - g
    elif problem.kind == "svr":
        y, C, e = problem.y, problem.C, problem.epsilon

        def loss(b):
            return C * np.sum(np.maximum(0.0, np.abs(y - g - b) - e))

        cands = np.concatenate([y - g - e, y - g + e])
    else:
        w = 1.0 / (problem.nu * problem.n)

        def loss(b):  # b = -r: -r + w sum max(0, r - g)
            return b + w * np.sum(np.maximum(0.0, -b - g))

        cands = -g
    vals = np.array([loss(b) for b in cands])
    return 0.5 * w_sq + vals.min(), cands, loss


KINDS = ["svc", "svr", "oneclass", "perturb"]


@pytest.mark.parametrize("method", ["select", "sort"])
@pytest.mark.parametrize("seed", range(4))
def test_piecewise_linear_minimum_by_brute_force(method, seed):
    rng = np.random.default_rng(seed)
    m = 11
    w = rng.uniform(0.1, 2.0, m)
    a = rng.choice([-1.0, 1.0, -0.5, 0.5, 2.0], m)
    a[:2] = [1.0, -1.0]
    r = rng.normal(size=m)
    c0 = [0.0, 0.3, -0.2, 0.0][seed]

    def f(b):
        return c0 * b + np.sum(w * np.maximum(0.0, a * b + r))

    nz = a != 0
    breaks = -r[nz] / a[nz]
    best = min(f(b) for b in breaks)
    b, value = minimize_piecewise_linear(c0, w, a, r, method=method)
    assert value == pytest.approx(best, rel=1e-12, abs=1e-12)
    assert f(b) == pytest.approx(value, rel=1e-12, abs=1e-12)
    assert np.min(np.abs(breaks - b)) <= 1e-12 * (1 + abs(b))  # a breakpoint


def _zero_slope_case():
    rng = np.random.default_rng(3)
    w, a, r = (
        rng.uniform(0.1, 2.0, 6),
        np.array([1.0, -1.0, 2.0, 0.0, -0.5, 0.0]),
        rng.normal(size=6),
    )
    r[3] = 0.8  # a constant piece w_3 max(0, 0.8) > 0 without a breakpoint
    best = min(np.sum(w * np.maximum(0.0, a * b + r)) for b in -r[a != 0] / a[a != 0])
    return w, a, r, best


def test_piecewise_linear_constant_pieces_count_in_the_value():
    w, a, r, best = _zero_slope_case()
    b, value = minimize_piecewise_linear(0.0, w, a, r, method="select")
    assert value == pytest.approx(best, rel=1e-12)
    assert value == pytest.approx(np.sum(w * np.maximum(0.0, a * b + r)), rel=1e-12)


def test_piecewise_linear_sort_counts_constant_pieces_in_the_value():
    """Regression: method='sort' dropped the w_i max(0, r_i) of pieces with a_i == 0."""
    w, a, r, best = _zero_slope_case()
    b, value = minimize_piecewise_linear(0.0, w, a, r, method="sort")
    assert value == pytest.approx(best, rel=1e-12)


@pytest.mark.parametrize("method", ["select", "sort"])
def test_piecewise_linear_edge_cases(method):
    msg = r"^the intercept problem is unbounded \(is a class or a bound missing\?\)\.$"
    one = np.ones(3)
    # positive slope left of every breakpoint: unbounded below as b -> -inf (and mirrored)
    with pytest.raises(ValueError, match=msg):
        minimize_piecewise_linear(1.0, one, one, np.arange(3.0), method=method)
    with pytest.raises(ValueError, match=msg):
        minimize_piecewise_linear(-1.0, one, -one, np.arange(3.0), method=method)
    # slope exactly 0 at both ends: bounded (flat), not unbounded
    b, v = minimize_piecewise_linear(0.0, one, one, np.arange(3.0), method=method)
    assert v == 0.0 and b <= 0.0
    with pytest.raises(ValueError, match=msg):
        minimize_piecewise_linear(1.0, np.ones(0), np.ones(0), np.ones(0), method=method)
    # no breakpoint and no linear term: the constant 0
    assert minimize_piecewise_linear(0.0, np.ones(0), np.ones(0), np.ones(0), method=method) == (
        0.0,
        0.0,
    )
    # slope exactly 0 right of the breakpoints with a slope of 2 there: bounded
    b, v = minimize_piecewise_linear(-2.0, np.ones(2), np.array([2.0, -1.0]), np.zeros(2),
                                     method=method)  # fmt: skip
    assert v == 0.0 and b >= 0.0
    # c0 balancing the slopes exactly: flat everywhere right of the breakpoints too
    b, v = minimize_piecewise_linear(-2.0, np.array([1.0, 1.0]), np.array([1.0, 1.0]),
                                     np.array([0.0, -1.0]), method=method)  # fmt: skip
    assert v == pytest.approx(-2.0 * b + b + (b - 1.0)) and v == pytest.approx(-1.0)


@pytest.mark.parametrize("method", ["select", "sort"])
def test_piecewise_linear_all_constant_pieces(method):
    """Every a_i == 0: the function is the constant sum w_i max(0, r_i) of b (c0 == 0), or
    unbounded (c0 != 0)."""
    w, a, r = np.array([1.0, 2.0, 3.0]), np.zeros(3), np.array([0.5, -1.0, 2.0])
    b, value = minimize_piecewise_linear(0.0, w, a, r, method=method)
    assert value == 6.5 and np.isfinite(b)
    with pytest.raises(ValueError, match="unbounded"):
        minimize_piecewise_linear(0.5, w, a, r, method=method)


def test_piecewise_linear_select_uses_the_linear_time_selection(monkeypatch):
    """method='select' is the O(n) weighted selection of indefsvm.linalg._linear_time, 'sort' is
    not."""
    import indefsvm.linalg._linear_time as linear_time

    calls = record_calls(monkeypatch, linear_time, "piecewise_linear_argmin")
    w, a, r, best = _zero_slope_case()
    for method, expected in (("select", 1), ("sort", 1)):
        assert minimize_piecewise_linear(0.0, w, a, r, method=method)[1] == pytest.approx(best)
        assert len(calls) == expected, method
        # the selection gets contiguous float64 copies of integer inputs
    minimize_piecewise_linear(0, np.ones(3, dtype=int), np.array([1, -1, 2]), np.zeros(3, int))
    assert all(arr.dtype == np.float64 and arr.flags.c_contiguous for arr in calls[-1][1:])


def test_piecewise_linear_method_is_checked():
    with pytest.raises(ValueError, match=r"^method must be 'select' or 'sort'; got 'median'\.$"):
        minimize_piecewise_linear(0.0, np.ones(2), np.array([1.0, -1.0]), np.zeros(2),
                                  method="median")  # fmt: skip


def test_piecewise_linear_tie_goes_to_the_left_breakpoint():
    """Slopes -1 | 0 | +1: the whole middle piece is optimal; ``sort`` returns its left end."""
    w, a, r = np.ones(2), np.array([-1.0, 1.0]), np.array([1.0, -3.0])  # breaks at 1 and 3
    b, v = minimize_piecewise_linear(0.0, w, a, r, method="sort")
    assert b == 1.0 and v == 0.0
    b, v = minimize_piecewise_linear(0.0, w, a, r, method="select")
    assert 1.0 <= b <= 3.0 and v == 0.0


@pytest.mark.parametrize("vector_rho", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_evaluation_matches_dense_definitions(kind, vector_rho):
    problem = _problem(kind, vector_rho)
    alpha = _point(problem)
    ev = problem.evaluate(alpha)
    ref = Ref(problem, alpha)
    scale = max(1.0, abs(ref.objective()))
    assert ev.objective == pytest.approx(ref.objective(), abs=1e-11 * scale)
    l1 = problem.l1_weight * np.abs(alpha).sum()
    assert ev.smooth_objective == pytest.approx(ref.objective() + l1, abs=1e-11 * scale)
    if kind == "svr":
        assert l1 > 0.01
    assert np.array_equal(ev.alpha, alpha)
    # the bound: primal of w = sum u_j phi(x_j) on K* with the best intercept, plus the penalty
    g = ref.K @ ref.u
    primal, cands, loss = _brute_primal(problem, g, ref.u @ g)
    assert ev.upper_bound == pytest.approx(primal + ref.penalty(), abs=1e-10 * scale)
    assert 0.5 * ref.u @ g + loss(ev.intercept) == pytest.approx(primal, abs=1e-10 * scale)
    assert ev.gap == ev.upper_bound - ev.objective
    assert ev.gap >= -1e-10 * scale
    # decision values in the original coordinates: K* S alpha
    assert np.allclose(problem.decision_values(ev.state), g, atol=1e-11 * scale)
    # gradient of the smooth part by central differences of the literal objective
    h = 1e-6
    fd = np.empty(problem.n)
    for i in range(problem.n):
        e = np.zeros(problem.n)
        e[i] = h
        sp = Ref(problem, alpha + e).objective() + problem.l1_weight * np.abs(alpha + e).sum()
        sm = Ref(problem, alpha - e).objective() + problem.l1_weight * np.abs(alpha - e).sum()
        fd[i] = (sp - sm) / (2 * h)
    assert np.allclose(ev.gradient, fd, atol=1e-6 * scale)
    # the wrappers
    assert problem.objective(alpha) == ev.objective
    assert np.array_equal(problem.gradient(alpha), ev.gradient)
    assert problem.duality_gap(alpha) == ev.gap
    assert problem.linear_value(alpha) == pytest.approx(
        problem.linear_coef @ alpha - problem.l1_weight * np.abs(alpha).sum(), rel=1e-15
    )
    assert problem.primal_value(g, ref.u @ g)[0] == pytest.approx(primal, abs=1e-10 * scale)


@pytest.mark.parametrize("vector_rho", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_objective_only_evaluation_matches_dense_definitions(kind, vector_rho):
    """``evaluate_objective``: the objective of eq. (7)/(17)/(20)/(22) by dense eigh, and a
    PARTIAL evaluation (no gradient, bound +inf, intercept NaN, no eigenvectors) at the given
    alpha; a full ``evaluate`` at the same point gives the same value to rounding."""
    problem = _problem(kind, vector_rho)
    alpha = _point(problem)
    ev = problem.evaluate_objective(alpha)
    ref = Ref(problem, alpha)
    scale = max(1.0, abs(ref.objective()))
    assert ev.partial is True
    assert ev.objective == pytest.approx(ref.objective(), abs=1e-11 * scale)
    l1 = problem.l1_weight * np.abs(alpha).sum()
    assert ev.smooth_objective == pytest.approx(ref.objective() + l1, abs=1e-11 * scale)
    assert ev.gradient is None and ev.upper_bound == np.inf and np.isnan(ev.intercept)
    assert np.array_equal(ev.alpha, alpha) and ev.alpha.dtype == np.float64
    assert ev.state.low_vectors is None
    full = problem.evaluate(alpha)
    assert full.partial is False
    assert ev.objective == pytest.approx(full.objective, abs=1e-12 * scale)
    # an integer point is converted (the same value as its float copy)
    ints = np.zeros(problem.n, dtype=np.int64)
    ev_int = problem.evaluate_objective(ints)
    assert ev_int.alpha.dtype == np.float64
    assert ev_int.objective == pytest.approx(
        problem.evaluate(ints.astype(float)).objective, abs=1e-12 * scale
    )


def test_objective_only_evaluation_falls_back_to_a_full_one_without_an_objective_path():
    """An operator that does not provide "objective_only" (the low-rank one) gets a full one."""
    problem = _problem("svc")
    alpha = _point(problem)

    class NoObjectivePath:
        provides = frozenset({"n_by_n", "eigenbasis"})

        def __init__(self, operator):
            self._operator = operator

        def __getattr__(self, name):
            if name == "objective_state":
                raise AttributeError(name)
            return getattr(self._operator, name)

    problem.operator = NoObjectivePath(problem.operator)
    ev = problem.evaluate_objective(alpha)
    assert ev.partial is False and ev.gradient is not None and np.isfinite(ev.upper_bound)
    assert ev.objective == pytest.approx(Ref(problem, alpha).objective(), rel=1e-11)


@pytest.mark.parametrize("vector_rho", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_kernels_products_and_rows_match_dense(kind, vector_rho):
    problem = _problem(kind, vector_rho)
    alpha = _point(problem)
    ref = Ref(problem, alpha)
    K = problem.proxy_kernel(alpha)
    assert np.allclose(K, ref.K, atol=1e-11)
    assert np.array_equal(K, K.T)
    assert np.array_equal(problem.kernel_from_state(problem.state(alpha)), K)
    v = np.random.default_rng(3).normal(size=problem.n)
    assert np.allclose(problem.proxy_kernel_matvec(alpha, v), ref.K @ v, atol=1e-11)
    assert np.allclose(problem.proxy_kernel_matvec(alpha, list(v)), ref.K @ v, atol=1e-11)
    # the training rows of M = K0 + (rank-one term) map to the rows of K* (theory.md §8)
    M = ref.K0 + np.outer(ref.u / ref.ds**2, ref.u / ref.ds**2) / 4.0
    assert np.allclose(problem.out_of_sample_rows(alpha, M), ref.K, atol=1e-10)
    state = problem.state(alpha)
    assert np.allclose(problem.out_of_sample_rows(None, M[:3], state=state), ref.K[:3], atol=1e-10)
    # working coordinates: Ds K0 Ds (K0 for a scalar rho) and its eigendecomposition, K* there
    s = np.ones(problem.n) if problem.scale is None else ref.ds
    W = s[:, None] * ref.K0 * s[None, :]
    assert np.allclose(problem.working_kernel, W, atol=1e-14)
    Kw = problem.working_proxy_kernel(state)
    assert np.allclose(Kw, ref.K * np.outer(s, s), atol=1e-11)
    eig = problem.working_eigh
    if kind == "perturb":
        assert eig is None
    else:
        d, V = eig
        assert np.allclose((V * d) @ V.T, W, atol=1e-12)
    lam = np.linalg.eigvalsh(W)
    if kind == "perturb":  # Gershgorin bound without an eigendecomposition
        assert problem.lipschitz_estimate() == pytest.approx(np.abs(W).sum(axis=1).max())
    else:
        assert problem.lipschitz_estimate() == pytest.approx(np.abs(lam).max(), rel=1e-12)
    # f(0) = rho ||(K0)_-||_F^2 (working rho and kernel)
    base = 0.0 if kind == "perturb" else problem.penalty_rho * np.sum(np.minimum(lam, 0) ** 2)
    assert problem.baseline_objective == pytest.approx(base, rel=1e-12, abs=1e-300)
    if kind != "perturb":
        assert base > 1e-3
    zero = np.zeros(problem.n)
    assert problem.evaluate(zero).objective == pytest.approx(base, rel=1e-12, abs=1e-300)
    if vector_rho:
        assert problem.penalty_rho == 1.0 and np.allclose(problem.scale, ref.ds, rtol=1e-15)
        assert np.allclose(problem.metric, 1.0 / np.sqrt(problem.rho), rtol=1e-14)
        assert np.allclose(problem.u_coef, problem.sign / ref.ds, rtol=1e-15)
    else:
        assert problem.metric is None and problem.scale is None and problem.penalty_rho == 0.7
        assert problem.operator.sigma == pytest.approx(1.0 / 2.8, rel=1e-15)


@pytest.mark.parametrize("vector_rho", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_bound_for_any_psd_kernel(kind, vector_rho):
    """``bound_for_kernel(K, alpha)``: primal with the best intercept on K plus the penalty.

    ``bound_for_kernel_excess(K, alpha)`` returns ``(bound - f(0), its error bound, bound)``,
    checked against ``f(0)`` by dense eigh; on the PSD path (PerturbSVM: ``f(0) = 0``) the
    excess is the bound itself.
    """
    problem = _problem(kind, vector_rho)
    alpha = _point(problem)
    Kw = psd_part(problem.working_kernel) + 0.05 * np.eye(problem.n)
    u = problem.u_coef * alpha
    g = Kw @ u
    decision = g if problem.scale is None else g / problem.scale
    primal, _, _ = _brute_primal(problem, decision, u @ g)
    pen = problem.penalty_rho * np.sum((Kw - problem.working_kernel) ** 2)
    assert problem.bound_for_kernel(Kw, alpha) == pytest.approx(primal + pen, rel=1e-12)
    f0 = _f0(problem)
    excess, error, value = problem.bound_for_kernel_excess(Kw, alpha)
    scale = max(1.0, abs(primal + pen), abs(f0))
    assert value == pytest.approx(primal + pen, rel=1e-12)
    assert excess == pytest.approx(primal + pen - f0, abs=1e-11 * scale)
    assert 0.0 < error < 1e-10 * scale
    if kind == "perturb":
        assert f0 < 1e-20 and excess == value  # the reference's eigh rounds PSD K0's zeros
    else:
        assert f0 > 0.1  # the case where the excess differs from the bound
    # at K = K*(alpha) it is the evaluation's bound
    ev = problem.evaluate(alpha)
    Ks = problem.working_proxy_kernel(ev.state)
    assert problem.bound_for_kernel(Ks, alpha) == pytest.approx(ev.upper_bound, rel=1e-10)


@pytest.mark.parametrize("first_label", [1.0, -1.0])
@pytest.mark.parametrize("class_weight", [None, {1.0: 2.0, -1.0: 0.5}])
def test_libsvm_bound_is_the_primal_of_libsvms_dual_solution(first_label, class_weight):
    """LIBSVM's solution on K*(alpha): feasible, and (strong duality, tight tol) its primal with
    the best intercept equals its dual value; wrong sign or C per class would break both."""
    K0, y, _ = _data(4)
    y[0] = first_label
    y[1] = -first_label
    problem = ClassificationProblem(K0, y, C=1.3, rho=0.7, class_weight=class_weight)
    alpha = _point(problem)
    ev = problem.evaluate(alpha)
    ub, b, a_lib = problem.libsvm_upper_bound(ev, tol=1e-10)
    ref = Ref(problem, alpha)
    assert np.all(a_lib >= -1e-12) and np.all(a_lib <= problem.upper + 1e-12)
    assert abs(y @ a_lib) <= 1e-9
    u = y * a_lib
    dual = a_lib.sum() - 0.5 * u @ ref.K @ u
    assert ub - ref.penalty() == pytest.approx(dual, abs=1e-6)
    g = ref.K @ u
    primal, _, loss = _brute_primal(problem, g, u @ g)
    assert ub == pytest.approx(primal + ref.penalty(), abs=1e-10)
    assert 0.5 * u @ g + loss(b) == pytest.approx(primal, abs=1e-10)
    if class_weight is not None:  # the per-class C was passed: both boxes are active
        assert np.any(np.isclose(a_lib, 2.6)) or np.any(np.isclose(a_lib, 0.65))


@pytest.mark.parametrize("kind", ["svr", "oneclass"])
def test_libsvm_bound_of_svr_and_oneclass(kind):
    problem = _problem(kind)
    alpha = _point(problem)
    ev = problem.evaluate(alpha)
    ub, b, a_lib = problem.libsvm_upper_bound(ev, tol=1e-10)
    ref = Ref(problem, alpha)
    assert np.all(a_lib >= problem.lower - 1e-9) and np.all(a_lib <= problem.upper + 1e-9)
    assert a_lib.sum() == pytest.approx(problem.eq_rhs, abs=1e-9)
    lin = problem.linear_coef @ a_lib - problem.l1_weight * np.abs(a_lib).sum()
    dual = lin - 0.5 * a_lib @ ref.K @ a_lib
    assert ub - ref.penalty() == pytest.approx(dual, abs=1e-6)
    g = ref.K @ a_lib
    primal, _, loss = _brute_primal(problem, g, a_lib @ g)
    assert ub == pytest.approx(primal + ref.penalty(), abs=1e-10)
    assert 0.5 * a_lib @ g + loss(b) == pytest.approx(primal, abs=1e-10)


def _cvx_prox(v, a, t, lo, hi, l1=0.0, w=None):
    x = cp.Variable(v.size)
    w = np.ones(v.size) if w is None else w
    obj = 0.5 * cp.sum(cp.multiply(w, cp.square(x - v))) + l1 * cp.norm1(x)
    cp.Problem(cp.Minimize(obj), [a @ x == t, x >= lo, x <= hi]).solve(solver="CLARABEL")
    return x.value


def _assert_prox(x, v, a, t, lo, hi, l1, w=None):
    """x is feasible, no worse than cvxpy's solution (Clarabel is accurate to ~1e-5 here, the
    exact projection is better) and close to it."""
    w = np.ones(v.size) if w is None else w
    ref = _cvx_prox(v, a, t, lo, hi, l1, w)

    def f(z):
        return 0.5 * np.sum(w * (z - v) ** 2) + l1 * np.abs(z).sum()

    assert abs(a @ x - t) <= 1e-12 and np.all(x >= lo) and np.all(x <= hi)
    assert f(x) <= f(ref) + 1e-12
    assert np.allclose(x, ref, atol=1e-4)


@pytest.mark.parametrize("vector_rho", [False, True])
@pytest.mark.parametrize("kind", ["svc", "svr", "oneclass"])
def test_feasible_sets_and_projections_match_cvxpy(kind, vector_rho):
    problem = _problem(kind, vector_rho)
    n = problem.n
    if kind == "svc":
        assert np.array_equal(problem.lower, np.zeros(n))
        assert np.allclose(problem.upper, 1.3) and problem.eq_rhs == 0.0
        assert np.array_equal(problem.eq_coef, problem.y)
        assert np.array_equal(problem.linear_coef, np.ones(n))
        assert problem.l1_weight == 0.0 and np.array_equal(problem.sign, problem.y)
    elif kind == "svr":
        assert problem.classes is None
        assert np.allclose(problem.lower, -0.8) and np.allclose(problem.upper, 0.8)
        assert np.array_equal(problem.eq_coef, np.ones(n)) and problem.eq_rhs == 0.0
        assert np.array_equal(problem.linear_coef, problem.y) and problem.l1_weight == 0.15
        assert np.array_equal(problem.sign, np.ones(n))
    else:
        assert problem.classes is None
        assert np.array_equal(problem.lower, np.zeros(n))
        assert np.allclose(problem.upper, 1.0 / (0.4 * n)) and problem.eq_rhs == 1.0
        assert np.array_equal(problem.eq_coef, np.ones(n))
        assert np.array_equal(problem.linear_coef, np.zeros(n))
    rng = np.random.default_rng(5)
    lo, hi, a, t = problem.lower, problem.upper, problem.eq_coef, problem.eq_rhs
    for _ in range(2):  # twice: the second projection starts from the stored multiplier
        v = rng.normal(size=n)
        assert np.allclose(problem.project(v), _cvx_prox(v, a, t, lo, hi), atol=1e-6)
        step = 0.7
        l1 = step * problem.l1_weight
        _assert_prox(problem.prox(v, step), v, a, t, lo, hi, l1)
        w = rng.uniform(0.2, 3.0, n)
        _assert_prox(problem.prox(v, step, metric=w), v, a, t, lo, hi, l1, w)
    x0 = problem.initial_point()
    if kind == "oneclass":
        assert np.array_equal(x0, np.full(n, 1.0 / n))
    else:
        assert np.array_equal(x0, np.zeros(n))
    problem.reset_warm_start()
    assert problem._tau_warm is None
    problem.check_solver("pg", frozenset())  # a dense operator provides every capability
    problem.check_solver("siqclp", frozenset({"n_by_n", "eigenbasis"}))
    with pytest.raises(ValueError, match=r"^method='x' needs teleportation, which this problem's"):
        problem.check_solver("x", frozenset({"teleportation"}))


def test_class_weights_set_the_box_and_labels_are_mapped():
    K0, y, _ = _data(0)
    labels = np.where(y > 0, "pos", "neg")
    problem = ClassificationProblem(K0, labels, C=2.0, class_weight={"pos": 1.5, "neg": 0.25})
    assert list(problem.classes) == ["neg", "pos"]
    assert np.array_equal(problem.y, np.where(labels == "pos", 1.0, -1.0))
    assert np.allclose(problem.upper, np.where(labels == "pos", 3.0, 0.5))
    assert problem.C == 2.0 and problem.class_weight == {"pos": 1.5, "neg": 0.25}


def test_perturb_is_the_psd_problem_of_eq_22():
    problem = _problem("perturb")
    alpha = _point(problem)
    u = problem.y * alpha
    K0 = problem.operator.K0
    f = alpha.sum() - 0.5 * u @ K0 @ u - (u @ u) ** 2 / (16 * 0.7)
    assert problem.objective(alpha) == pytest.approx(f, rel=1e-13)
    assert problem.operator.assume_psd and problem.operator.eigenvalues is None
    # rounding-size negative eigenvalues pass psd_tol, real ones are refused with the count
    K0, y, _ = _data(0, psd=True)
    w, V = np.linalg.eigh(K0)
    w[0] = -1e-12
    PerturbProblem((V * w) @ V.T, y)
    w[0], w[1] = -0.5, -0.25
    Kneg = (V * w) @ V.T
    Kneg = (Kneg + Kneg.T) / 2
    scale = np.abs(np.linalg.eigvalsh(Kneg)).max()
    msg = (
        r"^problem='perturb' \(PerturbSVM, paper 004 Sect\. 4\.3\) needs a PSD kernel, but K0 "
        r"has 2 eigenvalues below -psd_tol \* max\|lambda\| = "
        + re.escape(f"{-1e-10 * scale:.3g}")
        + r" \(smallest -0\.5\)\. Use problem='svc' for indefinite kernels, or raise psd_tol "
        r"if these are rounding errors\.$"
    )
    with pytest.raises(ValueError, match=msg):
        PerturbProblem(Kneg, y)
    PerturbProblem(Kneg, y, psd_tol=0.6)  # tolerance relative to max|lambda| ...
    w = np.linspace(-0.05, 0.1, N)  # ... but at least 1: a small kernel gets an absolute one
    Ksmall = (V * w) @ V.T
    Ksmall = (Ksmall + Ksmall.T) / 2
    PerturbProblem(Ksmall, y, psd_tol=0.4)
    with pytest.raises(ValueError, match="needs a PSD kernel, but K0 has 1 eigenvalues below"):
        PerturbProblem(Ksmall, y, psd_tol=0.04)


def test_input_checks_have_clear_messages():
    K0, y, t = _data(0)
    msg = (
        r"^rho must be a positive scalar or a vector of length n = 9 \(one penalty per training "
        r"point\); got shape \(3,\)\.$"
    )
    with pytest.raises(ValueError, match=msg):
        ClassificationProblem(K0, y, rho=np.ones(3))
    with pytest.raises(ValueError, match=r"^a precomputed eigh of K0 cannot be used with a "
                       r"vector rho\.$"):  # fmt: skip
        ClassificationProblem(K0, y, rho=np.ones(N), eigh=np.linalg.eigh(K0))
    with pytest.raises(ValueError, match=r"^y must be a vector of 9 regression targets; got "
                       r"shape \(8,\)\.$"):  # fmt: skip
        RegressionProblem(K0, t[:8])
    for eps in (-0.1, np.nan, np.inf):
        with pytest.raises(ValueError, match=r"^epsilon must be finite and >= 0; got "
                           + re.escape(repr(float(eps))) + r"\.$"):  # fmt: skip
            RegressionProblem(K0, t, epsilon=eps)
    assert RegressionProblem(K0, t, epsilon=0).epsilon == 0.0
    for nu in (0.0, 1.5, np.nan):
        with pytest.raises(ValueError, match=r"^nu must be in \(0, 1\]; got "
                           + re.escape(repr(float(nu))) + r"\.$"):  # fmt: skip
            OneClassProblem(K0, nu=nu)
    assert OneClassProblem(K0, nu=1.0).nu == 1.0
    # kernel scale: squared eigenvalues would overflow
    big = K0 * 1e150
    msg = (
        r"^K0 has entries up to " + re.escape(f"{np.abs(big).max():.3g}") + r": at this scale "
        r"the squared eigenvalues in the objective overflow double precision\. Rescale the "
        r"kernel \(e\.g\. K0 / np\.abs\(K0\)\.max\(\)\) and choose C and rho on that scale\.$"
    )
    with pytest.raises(ValueError, match=msg):
        ClassificationProblem(big, y)
    with pytest.raises(ValueError, match=r"^rho = 1e-320 is too small: sigma = 1/\(4 rho\) "
                       r"overflows\. Use a rho of at least 1e-300 relative to the kernel's scale "
                       r"\(typical values are 1e-2 to 1e3\)\.$"):  # fmt: skip
        ClassificationProblem(K0, y, rho=1e-320)


def test_input_scale_limits_are_exact():
    """``max|K| * n > 1e150`` is refused; exactly at the limit it is not (checked before eigh,
    when the operator is made). A rho whose ``sigma = 1/(4 rho)`` overflows is refused with its
    own message (just above that, the objective's range check refuses first)."""
    K = np.full((2, 2), 0.5e150)
    assert P.make_operator(K, 1.0).n == 2
    with pytest.raises(ValueError, match="^K0 has entries up to"):
        P.make_operator(K * 1.0000001, 1.0)
    K0, y = np.array([[1.0, 0.5], [0.5, -1.0]]), np.array([1.0, -1.0])
    with pytest.raises(ValueError, match=r"^rho = 1e-310 is too small"):
        ClassificationProblem(K0, y, rho=1e-310)


def test_objective_range_check_names_the_overflowing_terms():
    K0, y, _ = _data(0)
    # sigma ||u||^4 above 1e300 while u'K0u is not: a tiny rho
    with pytest.raises(ValueError) as err:
        ClassificationProblem(K0, y, C=3.4e50, rho=1e-100)
    text = str(err.value)
    assert text.startswith("the objective's terms ||u||^4/(16 rho) overflow double precision")
    lam = np.abs(np.linalg.eigvalsh(K0)).max()
    u_sq = N * 3.4e50**2
    assert f"(max |eigenvalue of K0| = {lam:.3g}, rho = 1e-100, max ||u||^2 = {u_sq:.3g})." in text
    RegressionProblem(K0, np.zeros(N), C=4.5e49, rho=1e-100)  # 8.3e299: just below 1e300
    with pytest.raises(ValueError, match="^the objective's terms"):
        RegressionProblem(K0, np.zeros(N), C=5e49, rho=1e-100)  # 1.3e300
    assert text.endswith(
        "Rescale the kernel (e.g. K0 / np.abs(K0).max()) and choose C and rho on that scale; "
        "rho must not be vanishingly small either."
    )
    with pytest.raises(ValueError) as err:
        ClassificationProblem(K0, y, C=1e160, rho=1.0)
    assert str(err.value).startswith("the objective's terms u'K0u, ||u||^4/(16 rho) overflow")
    with pytest.raises(ValueError) as err:
        ClassificationProblem(K0 * 1e140, y, C=1.0, rho=1e30)
    assert str(err.value).startswith("the objective's terms rho ||(K0)_-||_F^2 overflow")
    # just inside the limits: accepted (the bound uses max(|lower|, |upper|) * |u_coef|)
    ClassificationProblem(K0, y, C=1e74, rho=1.0)
    RegressionProblem(K0, np.zeros(N), C=1e74, rho=1.0)


def test_make_problem_contract():
    K0, y, t = _data(0)
    with pytest.raises(ValueError, match=r"^problem must be one of \('svc', 'svr', 'oneclass', "
                       r"'perturb'(, '[a-z_]+')*\); got 'svm'\.$"):  # fmt: skip
        make_problem("svm", K0, y)
    with pytest.raises(ValueError, match=r"^nu does not apply to problem='svc', which takes C, "
                       r"rho, class_weight, sample_weight\.$"):  # fmt: skip
        make_problem("svc", K0, y, nu=0.5)
    with pytest.raises(ValueError, match=r"^epsilon, nu do not apply to problem='svc', which "
                       r"takes C, rho, class_weight, sample_weight\.$"):  # fmt: skip
        make_problem("svc", K0, y, nu=0.5, epsilon=0.1)
    with pytest.raises(ValueError, match=r"^problem='oneclass' is unsupervised and takes no y "
                       r"\(labels or targets\); pass y=None\.$"):  # fmt: skip
        make_problem("oneclass", K0, y)
    with pytest.raises(ValueError, match=r"^problem='svr' needs y \(real-valued regression "
                       r"targets\); only unsupervised problems omit it\.$"):  # fmt: skip
        make_problem("svr", K0)
    # None means "not given": the class default applies
    p = make_problem("svr", K0, t, C=None, epsilon=None, rho=2.0)
    assert p.C == 1.0 and p.epsilon == 0.1 and p.rho == 2.0
    oc = make_problem("oneclass", K0, nu=0.3)
    assert type(oc) is OneClassProblem and oc.nu == 0.3
    assert type(make_problem("perturb", _data(0, psd=True)[0], y)) is PerturbProblem
    # symmetrize is passed on
    A = K0.copy()
    A[0, 1] += 1e-3
    with pytest.raises(ValueError):
        make_problem("svc", A, y)
    sym = make_problem("svc", A, y, symmetrize=True)
    assert np.allclose(sym.operator.K0, (A + A.T) / 2)
    sym1 = make_problem("oneclass", A, symmetrize=True)
    assert np.allclose(sym1.operator.K0, (A + A.T) / 2)


def test_make_problem_low_rank_kernels():
    from indefsvm.linalg.factor import LowRankKernel
    from indefsvm.proxy.lowrank import LowRankProxyOperator

    rng = np.random.default_rng(0)
    Phi, _ = np.linalg.qr(rng.normal(size=(N, 3)))
    lrk = LowRankKernel(Phi, np.array([-0.5, 1.0, 2.0]))
    _, y, t = _data(0)
    with pytest.raises(ValueError, match=r"^symmetrize does not apply to a LowRankKernel "
                       r"\(symmetric by design\)\.$"):  # fmt: skip
        make_problem("svc", lrk, y, symmetrize=True)
    # One class per problem for both forms of K0: the operator is what differs (issue 23).
    svc = make_problem("svc", lrk, y)
    assert type(svc) is P.PROBLEM_TYPES["svc"] and svc.low_rank
    assert isinstance(svc.operator, LowRankProxyOperator)
    assert not make_problem("svc", lrk.toarray(), y).low_rank
    oc = make_problem("oneclass", lrk, nu=0.3)
    assert type(oc) is P.PROBLEM_TYPES["oneclass"] and oc.nu == 0.3 and oc.low_rank
    assert make_problem("svr", lrk, t, epsilon=0.2).epsilon == 0.2
    with pytest.raises(ValueError, match=r"^problem='perturb' \(PerturbSVM"):
        make_problem("perturb", lrk, y)  # the signature has a negative weight
    psd = LowRankKernel(Phi, np.array([0.5, 1.0, 2.0]))
    assert type(make_problem("perturb", psd, y)) is P.PROBLEM_TYPES["perturb"]


def test_register_problem_extends_the_registry(monkeypatch):
    monkeypatch.setattr(P, "PROBLEM_TYPES", dict(P.PROBLEM_TYPES))
    monkeypatch.setattr(P, "PROBLEMS", P.PROBLEMS)

    class Shifted(OneClassProblem):
        kind = "shifted_oneclass"

    assert P.register_problem(Shifted) is Shifted
    assert P.PROBLEM_TYPES["shifted_oneclass"] is Shifted
    assert P.PROBLEMS[-1] == "shifted_oneclass" and "svc" in P.PROBLEMS
    K0, _, _ = _data(0)
    assert type(make_problem("shifted_oneclass", K0, nu=0.5)) is Shifted
    # ... and, being one class, works on a LowRankKernel at once (the operator differs; issue
    # 23): same objective and certified bound as on the dense form of the same kernel.
    from indefsvm.linalg.factor import LowRankKernel

    Phi, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(N, 3)))
    lrk = LowRankKernel(Phi, np.array([-0.5, 1.0, 2.0]))
    low = make_problem("shifted_oneclass", lrk, nu=0.5)
    dense = make_problem("shifted_oneclass", lrk.toarray(), nu=0.5)
    assert type(low) is Shifted and low.low_rank and not dense.low_rank
    alpha = np.random.default_rng(1).dirichlet(np.ones(N))
    a, b = low.evaluate(alpha), dense.evaluate(alpha)
    assert a.objective == pytest.approx(b.objective, rel=1e-10, abs=1e-12)
    assert a.upper_bound == pytest.approx(b.upper_bound, rel=1e-10, abs=1e-12)


def test_base_class_hooks_are_abstract():
    K0, _, _ = _data(0)
    n = N
    base = P.ProxyKernelProblem(
        K0, 1.0, lower=np.zeros(n), upper=np.ones(n), eq_coef=np.ones(n), eq_rhs=1.0,
        sign=np.ones(n), linear_coef=np.zeros(n),
    )  # fmt: skip
    assert base.kind == "base" and base.options == () and base.targets is None
    assert base.l1_weight == 0.0
    with pytest.raises(NotImplementedError):
        base.evaluate(np.full(n, 1.0 / n))


def test_objective_range_check_refuses_a_huge_box_with_a_clear_error():
    """Regression: 1.3e154 < max ||u||^2 < 1.8e308 raised OverflowError, not the clear error."""
    K0, y, _ = _data(0)
    with pytest.raises(ValueError, match="overflow double precision"):
        ClassificationProblem(K0, y, C=1e78, rho=1.0)


def test_out_of_sample_rows_input_checks():
    problem = _problem("svc")
    alpha = _point(problem)
    msg = (
        r"^K_test_train must have shape \(m, 9\) \(similarities to the 9 training points\); "
        r"got \((9,|2, 8)\)\.$"
    )
    with pytest.raises(ValueError, match=msg):
        problem.out_of_sample_rows(alpha, np.ones(N))  # one row given as a vector
    with pytest.raises(ValueError, match=msg):
        problem.out_of_sample_rows(alpha, np.ones((2, 8)))
    R = np.ones((2, N))
    R[1, 3] = np.nan
    with pytest.raises(ValueError, match=r"^K_test_train contains NaN or inf\.$"):
        problem.out_of_sample_rows(alpha, R)
    # rows and alpha given as lists of ints are converted
    rows = problem.out_of_sample_rows(list(np.ones(N, dtype=int)), [[1] * N])
    assert rows.dtype == np.float64 and rows.shape == (1, N)


def test_perturb_psd_check_threshold_is_strict_and_relative():
    """``lam_min < -psd_tol * max(1, max|lambda|)`` (strict); eigenvalues of a diagonal K0 are
    exact, so the edges can be probed."""
    y = np.array([1.0, -1.0, 1.0, -1.0])
    K0 = np.diag([-0.4, -0.1, 0.5, 4.0])  # scale 4: the threshold is -psd_tol * 4
    PerturbProblem(K0, y, psd_tol=0.1)  # -0.4 is not below -0.4
    msg = (
        r"^problem='perturb' \(PerturbSVM, paper 004 Sect\. 4\.3\) needs a PSD kernel, but K0 "
        r"has 1 eigenvalues below -psd_tol \* max\|lambda\| = -0\.2 \(smallest -0\.4\)\."
    )
    with pytest.raises(ValueError, match=msg):  # -0.1 is not below -0.2: one eigenvalue counted
        PerturbProblem(K0, y, psd_tol=0.05)
    with pytest.raises(ValueError, match=r"has 2 eigenvalues below .* = -0\.08 \(smallest"):
        PerturbProblem(K0, y, psd_tol=0.02)
    assert -0.025 * 4.0 == -0.1  # an eigenvalue exactly at the threshold is not counted
    with pytest.raises(ValueError, match=r"has 1 eigenvalues below .* = -0\.1 \(smallest"):
        PerturbProblem(K0, y, psd_tol=0.025)


@pytest.mark.parametrize("kind", KINDS)
def test_constructor_defaults_and_kernel_checks(kind):
    """Documented defaults (C = 1, rho = 1, epsilon = 0.1, nu = 0.5, no class weights, no
    symmetrisation) and the kernel checks with ``K0`` named in the messages, at least 2 rows."""
    K0, y, t = _data(0, psd=kind == "perturb")
    cls = {"svc": ClassificationProblem, "perturb": PerturbProblem}.get(kind)
    if kind == "svr":
        p = RegressionProblem(K0, t)
        assert (p.C, p.rho, p.epsilon) == (1.0, 1.0, 0.1)
    elif kind == "oneclass":
        p = OneClassProblem(K0)
        assert (p.rho, p.nu) == (1.0, 0.5)
    else:
        p = cls(K0, y)
        assert (p.C, p.rho, p.class_weight) == (1.0, 1.0, None)
        assert np.array_equal(p.upper, np.ones(N))
        q = cls(K0, y, class_weight={1.0: 2.0, -1.0: 1.0})
        assert np.array_equal(q.upper, np.where(y > 0, 2.0, 1.0))
        r = cls(K0, y, C=1.3, rho=0.7)
        assert (r.C, r.rho) == (1.3, 0.7) and np.array_equal(r.upper, np.full(N, 1.3))

    def build(K, **kw):
        if kind == "svr":
            return RegressionProblem(K, t[: K.shape[0]], **kw)
        if kind == "oneclass":
            return OneClassProblem(K, **kw)
        return cls(K, y[: K.shape[0]], **kw)

    A = K0.copy()
    A[0, 1] += 1e-3
    with pytest.raises(ValueError, match=r"^K0 is not symmetric: max\|K0 - K0'\| = 0\.001 "):
        build(A)
    sym = build(A, symmetrize=True)
    B = (A + A.T) / 2
    assert np.allclose(sym.working_kernel, B, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match=r"^K0 must have at least 2 rows; got n = 1\.$"):
        build(np.ones((1, 1)))
    assert build(K0[:2, :2]).n == 2


def test_libsvm_bound_with_a_single_sample_of_each_class():
    """One positive and one negative sample (each class's C is read from its first sample)."""
    K0, _, _ = _data(4, n=2)
    for y in (np.array([1.0, -1.0]), np.array([-1.0, 1.0])):
        problem = ClassificationProblem(K0, y, C=1.3, rho=0.7, class_weight={1.0: 2.0, -1.0: 1.0})
        alpha = problem.project(np.array([0.4, 0.4]))
        ub, b, a_lib = problem.libsvm_upper_bound(problem.evaluate(alpha), tol=1e-10)
        assert np.all(a_lib >= -1e-12) and np.all(a_lib <= problem.upper + 1e-12)
        assert abs(y @ a_lib) <= 1e-12
        assert ub >= problem.evaluate(alpha).objective


@pytest.mark.parametrize("kind", ["svc", "svr", "oneclass"])
def test_precomputed_eigh_is_used_and_default_libsvm_tol(kind):
    K0, y, t = _data(0)
    d, V = np.linalg.eigh(K0)
    eigh = (d.copy(), V.copy())
    if kind == "svc":
        p = ClassificationProblem(K0, y, eigh=eigh)
    elif kind == "svr":
        p = RegressionProblem(K0, t, eigh=eigh)
    else:
        p = OneClassProblem(K0, eigh=eigh)
    assert p.operator.eigenvalues is eigh[0] and p.operator.eigenvectors is eigh[1]
    assert p.working_eigh[0] is eigh[0]
    ev = p.evaluate(_point(p))
    default = p.libsvm_upper_bound(ev)
    explicit = p.libsvm_upper_bound(ev, tol=1e-3)
    assert default[0] == explicit[0] and np.array_equal(default[2], explicit[2])


def test_argument_checks_name_the_argument():
    K0, y, t = _data(0)
    bad_t = t.copy()
    bad_t[2] = np.nan
    with pytest.raises(
        ValueError,
        match=r"^y \(regression targets\) contains NaN or inf; expected finite values\.$",
    ):
        RegressionProblem(K0, bad_t)
    with pytest.raises(
        ValueError, match=r"^y \(regression targets\) must be 1-dimensional; got shape \(9, 1\)\.$"
    ):
        RegressionProblem(K0, t[:, None])
    for build in (
        lambda C: RegressionProblem(K0, t, C=C),
        lambda C: ClassificationProblem(K0, y, C=C),
    ):
        with pytest.raises(ValueError, match=r"^C must be finite and > 0; got -1(\.0)?\.$"):
            build(-1.0)
    for build in (
        lambda r: RegressionProblem(K0, t, rho=r),
        lambda r: ClassificationProblem(K0, y, rho=r),
        lambda r: OneClassProblem(K0, rho=r),
    ):
        with pytest.raises(ValueError, match=r"^rho must be finite and > 0; got 0(\.0)?\.$"):
            build(0.0)


def test_reset_warm_start_resets_the_operator():
    """After ``reset_warm_start`` an evaluation does not reuse stored products (``V'u`` by
    linearity) nor stored secular roots: a solve starts cold."""
    problem = _problem("svc")
    rng = np.random.default_rng(11)
    x0 = problem.project(rng.uniform(0, 1.3, N))
    x1 = problem.project(rng.uniform(0, 1.3, N))
    problem.evaluate(x0)
    problem.evaluate(x1)
    before = problem.operator.n_linear_z
    problem.reset_warm_start()
    assert problem.operator.warm_start.offsets is None
    problem.evaluate(x1 + 0.5 * (x1 - x0))
    assert problem.operator.n_linear_z == before


def test_prox_with_an_l1_weight_of_one():
    K0, _, t = _data(0)
    problem = RegressionProblem(K0, t, C=0.8, epsilon=1.0)
    v = np.random.default_rng(12).normal(size=N) * 2
    lo, hi = problem.lower, problem.upper
    _assert_prox(problem.prox(v, 0.3), v, problem.eq_coef, 0.0, lo, hi, 0.3)


def test_more_edges_of_the_input_checks():
    import warnings

    K0, y, t = _data(0)
    # sigma = 1/(4 rho) overflows below rho = 1.39e-309; just above, the objective-range check
    # refuses the problem instead
    with pytest.raises(ValueError, match=r"^rho = 1\.2e-309 is too small"):
        ClassificationProblem(K0, y, rho=1.2e-309)
    with pytest.raises(
        ValueError, match=r"^the objective's terms \|\|u\|\|\^4/\(16 rho\) overflow"
    ):
        ClassificationProblem(K0, y, rho=2e-309)
    with pytest.raises(
        ValueError,
        match=r"^y has 8 labels but the kernel has 9 rows; expected one label per row\.$",
    ):
        ClassificationProblem(K0, y[:8])
    # the penalty term rho n lambda_max^2: 5e300 is refused (the other terms are small)
    lam = np.abs(np.linalg.eigvalsh(K0 * 1e140)).max()
    rho = 5e300 / (N * lam**2)
    with pytest.raises(ValueError, match=r"^the objective's terms rho \|\|\(K0\)_-\|\|_F\^2 over"):
        ClassificationProblem(K0 * 1e140, y, C=1.0, rho=rho)
    ClassificationProblem(K0 * 1e140, y, C=1.0, rho=rho / 10)  # 5e299: accepted
    # the range check itself does not warn (overflow is expected there and handled)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="^the objective's terms u'K0u, "):
            ClassificationProblem(K0, y, C=1e160, rho=1.0)


def test_low_rank_problems_have_no_l1_term_unless_svr():
    from indefsvm.linalg.factor import LowRankKernel

    Phi, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(N, 3)))
    lrk = LowRankKernel(Phi, np.array([-0.5, 1.0, 2.0]))
    _, y, t = _data(0)
    assert make_problem("svc", lrk, y).l1_weight == 0.0
    assert make_problem("oneclass", lrk).l1_weight == 0.0
    assert make_problem("svr", lrk, t, epsilon=0.2).l1_weight == 0.2


# The sign of the paper's smoothed-gradient correction: finite differences of the smoothed
# objective, written out from its eigenvalues with a dense eigh (a deliberate bug the suite
# once missed).


def _smoothed_objective_dense(problem, alpha, eps):
    """Smoothed objective whose gradient is ``grad l - S K_eps u`` (dense eigh, no package code).

    ``K_eps = sum_i clip(lambda_i/eps, 0, 1) lambda_i v_i v_i'`` (Moreau-Yosida, Sect. 3)
    replaces ``K* = M_+``; it is ``M - sum_i h'(lambda_i)/2 v_i v_i'`` with
    ``h(l) = l^2`` (l < 0), ``l^2 - 2 l^3 / (3 eps)`` (0 <= l < eps), ``eps^2 / 3`` (l >= eps),
    the smoothed version of ``min(0, l)^2`` in the closed form of eq. (7) (theory.md §1):
    ``f_eps = l(alpha) - 1/2 u'K0u - ||u||^4 / (16 rho) + rho sum_i h(lambda_i(M))``.
    """
    rho = problem.penalty_rho
    K0 = problem.operator.K0
    u = problem.u_coef * alpha
    lam = np.linalg.eigvalsh(K0 + np.outer(u, u) / (4.0 * rho))
    mid = (lam >= 0) & (lam < eps)
    h = np.where(lam < 0, lam**2, eps**2 / 3.0)
    h = np.where(mid, lam**2 - 2.0 * lam**3 / (3.0 * eps), h)
    return (
        float(problem.linear_coef @ alpha)
        - 0.5 * u @ K0 @ u
        - float(u @ u) ** 2 / (16.0 * rho)
        + rho * float(np.sum(h))
    )


@pytest.mark.parametrize("kind", ["svc", "oneclass"])
@pytest.mark.parametrize("eps", [0.3, 1.0])
def test_paper_smoothed_gradient_matches_finite_differences(kind, eps):
    """Catches mutation 2 (sign of the smoothing correction in ``smoothed_kstar_u``)."""
    K, y = sigmoid_problem(16, 21)
    C = None if kind == "oneclass" else 1.0  # one-class has no C (it would be refused)
    problem = make_problem(kind, K, None if kind == "oneclass" else y, C=C, rho=0.5)
    rng = np.random.default_rng(3)
    alpha = problem.project(rng.uniform(0.0, 1.0, size=16) * problem.upper)
    ev = problem.evaluate(alpha, smoothing=eps)
    # the point must exercise the correction: eigenvalues of M in [0, eps)
    lam = ev.state.low_values
    assert np.any((lam >= 0) & (lam < eps))
    # objective and bound stay exact with smoothing
    assert ev.objective == pytest.approx(problem.evaluate(alpha).objective, rel=1e-12)
    h = 1e-6
    fd = np.empty(16)
    for i in range(16):
        e = np.zeros(16)
        e[i] = h
        fd[i] = (
            _smoothed_objective_dense(problem, alpha + e, eps)
            - _smoothed_objective_dense(problem, alpha - e, eps)
        ) / (2 * h)
    assert np.allclose(ev.gradient, fd, atol=1e-6, rtol=1e-6)
    # and it differs from the exact gradient (the check is not vacuous)
    assert np.max(np.abs(ev.gradient - problem.evaluate(alpha).gradient)) > 1e-4


def test_smoothed_gradient_tends_to_exact_gradient():
    K, y = sigmoid_problem(16, 22)
    problem = make_problem("svc", K, y, C=1.0, rho=0.5)
    alpha = problem.project(np.full(16, 0.5))
    exact = problem.evaluate(alpha).gradient
    errors = [
        np.max(np.abs(problem.evaluate(alpha, smoothing=eps).gradient - exact))
        for eps in (1.0, 1e-2, 1e-4)
    ]
    assert errors[0] > errors[1] > errors[2] or errors[2] < 1e-12
    assert errors[2] < 1e-3


# -- the excesses over f(0) and their error bounds (theory.md §10) ---------------------------------


@pytest.mark.parametrize("vector_rho", [False, True], ids=["scalar_rho", "vector_rho"])
@pytest.mark.parametrize("kind", KINDS)
def test_excesses_are_the_values_less_f0_with_positive_error_bounds(kind, vector_rho):
    """``objective_excess``/``upper_excess`` are ``f(alpha) - f(0)`` and ``bound - f(0)``,
    formed without ``f(0)``; each carries a positive, small rounding bound. The objective-only
    evaluation has the same objective excess and no bound (+inf)."""
    problem = _problem(kind, vector_rho)
    alpha = _point(problem)
    f0 = _f0(problem)
    ref = Ref(problem, alpha)  # f(alpha) and the bound by dense eigh and brute force
    g = ref.K @ ref.u
    bound = _brute_primal(problem, g, ref.u @ g)[0] + ref.penalty()
    ev = problem.evaluate(alpha)
    scale = max(1.0, abs(f0), abs(ref.objective()), abs(bound))
    assert ev.objective_excess == pytest.approx(ref.objective() - f0, abs=1e-11 * scale)
    assert ev.upper_excess == pytest.approx(bound - f0, abs=1e-11 * scale)
    for error in (ev.objective_error, ev.upper_error):
        assert 0.0 < error < 1e-11 * scale
    part = problem.evaluate_objective(alpha)
    assert part.objective_excess == pytest.approx(ev.objective_excess, abs=1e-11 * scale)
    assert part.upper_excess == np.inf
    assert 0.0 < part.objective_error < 1e-11 * scale


def test_bound_for_kernel_excess_keeps_its_digits_when_f0_is_huge():
    """With ``f(0) = rho ||(K0)_-||^2`` 1e4-1e5 times the excess, ``bound - f(0)`` formed by
    subtraction would lose those digits; the excess formed from ``||K - P||^2 + 2 <K, N>`` is
    within its own error bound of the exact value, which the test forms from the eigenvalues:
    ``K = V diag(k) V'`` gives ``||K - K0||^2 - ||N||^2 = sum (k - d)^2 - sum_{d<0} d^2``."""
    K0, y, _ = _data(3)
    d, V = np.linalg.eigh(K0)
    rho = 1e6
    problem = ClassificationProblem(K0, y, C=1.3, rho=rho, eigh=(d, V))
    alpha = _point(problem)
    neg = d < 0
    k = np.maximum(d, 0.0) + 1e-6 * np.linspace(1.0, 2.0, d.size)  # K just above (K0)_+
    K = (V * k) @ V.T
    K = 0.5 * (K + K.T)
    u = problem.u_coef * alpha
    g = K @ u
    primal, _, _ = _brute_primal(problem, g, u @ g)
    penalty_excess = np.sum((k[~neg] - d[~neg]) ** 2) + np.sum(k[neg] ** 2 - 2 * k[neg] * d[neg])
    expected = primal + rho * penalty_excess
    excess, error, value = problem.bound_for_kernel_excess(K, alpha)
    assert abs(excess - expected) <= error < 1e-6 * abs(expected)
    f0 = rho * np.sum(d[neg] ** 2)
    assert f0 > 1e4 * abs(expected)
    assert value == pytest.approx(f0 + expected, rel=1e-12)


# -- the LIBSVM check: default tolerance, vector rho, and its linear form on a factor ----------


def _factor_problems(kind, seed):
    from indefsvm.linalg.factor import LowRankKernel

    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(60, 5))
    s = np.array([1.0, 1.0, -1.0, 1.0, -1.0])
    y = np.where(Phi[:, 0] + 0.3 * rng.normal(size=60) > 0, 1.0, -1.0)
    t = 5.0 + Phi[:, 0] + 0.1 * rng.normal(size=60)  # an offset: the intercept matters
    if kind == "svc":  # a per-class box that is not 1: LIBLINEAR's sample weights matter
        target, opts = y, {"C": 0.5, "class_weight": {1.0: 2.0, -1.0: 0.7}}
    else:
        target, opts = t, {"C": 0.1, "epsilon": 0.3}  # C != 1: LIBLINEAR's own C matters
    low = make_problem(kind, LowRankKernel(Phi, s), target, rho=0.7, **opts)
    dense = make_problem(kind, (Phi * s) @ Phi.T, target, rho=0.7, **opts)
    return low, dense, low.project(rng.uniform(low.lower, low.upper))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["svc", "svr"])
def test_linear_check_on_a_factor_is_near_libsvms_on_the_dense_kernel(kind, seed, monkeypatch):
    """Above the dense limit the LIBSVM check is a linear SVM (LIBLINEAR) on the factor F of
    ``K* = F F'``: the same SVM, so its bound is at least LIBSVM's (tight tol, dense K*) and
    close to it at the default tol 1e-3 (measured on these cases: within 0.07 % for
    classification, 0.14 % for regression at C = 0.1); the same bound on every run (seeded), and
    NaN in place of LIBSVM's alpha. (Regression at a large C is looser: LIBLINEAR's dual
    coordinate descent with the intercept feature converges slowly; 3x LIBSVM's primal at C = 5
    on seed 1. The bound is valid either way.)"""
    from indefsvm.proxy import lowrank

    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 10)
    low, dense, alpha = _factor_problems(kind, seed)
    assert "n_by_n" not in low.operator.provides
    ev_low, ev_dense = low.evaluate(alpha), dense.evaluate(alpha)
    penalty = Ref(dense, alpha).penalty()  # rho ||K* - K0||^2 by dense eigh
    libsvm = dense.libsvm_upper_bound(ev_dense, tol=1e-12)[0] - penalty
    bound, b, alpha_lib = low.libsvm_upper_bound(ev_low)
    linear = bound - penalty
    assert libsvm - 1e-9 <= linear <= libsvm * (1.002 if kind == "svc" else 1.01)
    assert alpha_lib.dtype == np.float64 and np.isnan(alpha_lib).all()
    assert np.isfinite(b)
    again = low.libsvm_bound_excess(ev_low, tol=1e-3)
    assert again[2] == bound
    assert again[0] == pytest.approx(bound - _f0(dense), abs=1e-10 * abs(bound))


def test_linear_check_of_the_one_class_problem_says_there_is_none(monkeypatch):
    from indefsvm.linalg.factor import LowRankKernel
    from indefsvm.proxy import lowrank

    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 10)
    Phi = np.random.default_rng(0).normal(size=(30, 3))
    problem = make_problem("oneclass", LowRankKernel(Phi, [1.0, -1.0, 1.0]))
    ev = problem.evaluate(problem.initial_point())
    message = (
        "a LIBSVM check of problem='oneclass' needs the n x n proxy kernel, which this "
        "problem's operator does not form (n = 30); it has no linear form."
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        problem.libsvm_bound_excess(ev)


@pytest.mark.parametrize("kind", ["svc", "svr", "oneclass"])
def test_libsvm_bound_with_a_vector_rho_is_libsvms_primal_on_k_star(kind):
    """With a componentwise rho LIBSVM is trained on ``K*`` in the ORIGINAL coordinates (the
    working kernel is ``Ds K* Ds``): its bound is the primal of its solution on that ``K*`` plus
    the componentwise penalty, and the excess form equals it less ``f(0)``."""
    problem = _problem(kind, vector_rho=True)
    alpha = _point(problem)
    ev = problem.evaluate(alpha)
    ub, b, a_lib = problem.libsvm_upper_bound(ev, tol=1e-10)
    ref = Ref(problem, alpha)
    u = problem.sign * a_lib
    g = ref.K @ u
    primal, _, loss = _brute_primal(problem, g, u @ g)
    assert ub == pytest.approx(primal + ref.penalty(), abs=1e-10 * max(1.0, abs(ub)))
    assert 0.5 * u @ g + loss(b) == pytest.approx(primal, abs=1e-10 * max(1.0, abs(primal)))
    assert ub >= ev.objective - 1e-9 * max(1.0, abs(ub))
    excess, error, value = problem.libsvm_bound_excess(ev, tol=1e-10)
    assert value == ub
    assert excess == pytest.approx(ub - _f0(problem), abs=1e-11 * max(1.0, abs(ub)))
    assert 0.0 < error < 1e-11 * max(1.0, abs(ub))
    assert problem.libsvm_bound_excess(ev)[2] == problem.libsvm_bound_excess(ev, tol=1e-3)[2]


# -- options reaching the operator, and refusals --------------------------------------------


@pytest.mark.parametrize("vector_rho", [False, True], ids=["scalar_rho", "vector_rho"])
@pytest.mark.parametrize("kind", KINDS)
def test_rcond_reaches_the_factored_operator(kind, vector_rho):
    """A factor with a column within 1e-5 of another: the default cut-off 1e-12 keeps all five
    directions, ``rcond=1e-6`` drops one, through every problem's constructor."""
    from indefsvm.linalg.factor import LowRankKernel
    from indefsvm.proxy.problems import PROBLEM_TYPES, make_operator

    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(30, 5))
    Phi[:, 4] = Phi[:, 0] + 1e-5 * rng.normal(size=30)
    s = np.ones(5) if kind == "perturb" else np.array([1.0, 1.0, -1.0, 1.0, -1.0])
    target = {"oneclass": (), "svr": (rng.normal(size=30),)}.get(
        kind, (np.where(rng.normal(size=30) > 0, 1.0, -1.0),)
    )
    rho = rng.uniform(0.3, 3.0, 30) if vector_rho else 0.7
    cls = PROBLEM_TYPES[kind]
    assert cls(LowRankKernel(Phi, s), *target, rho=rho).operator.rank == 5
    assert cls(LowRankKernel(Phi, s), *target, rho=rho, rcond=1e-6).operator.rank == 4
    assert make_operator(LowRankKernel(Phi, s), 0.25, rcond=1e-6).rank == 4
    assert make_operator(LowRankKernel(Phi, s), 0.25).rank == 5


def test_defaults_of_the_kernel_input_and_the_operator():
    """A non-symmetric K0 is refused unless symmetrize=True; a dense K0 is not assumed PSD."""
    from indefsvm.proxy.problems import check_kernel_input, make_operator

    K = np.array([[1.0, 2.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"^K0 is not symmetric: max\|K0 - K0'\| = 2 exceeds"):
        check_kernel_input(K)
    np.testing.assert_array_equal(check_kernel_input(K, symmetrize=True), [[1, 1], [1, 1]])
    K0, _, _ = _data(0)
    operator = make_operator(K0, 0.25)
    np.testing.assert_allclose(operator.eigenvalues, np.linalg.eigvalsh(K0), atol=1e-12)
    assert not operator.is_psd


def test_perturb_and_set_penalty_refusals_are_whole_messages():
    K0, y, _ = _data(0, psd=True)
    for options, names in (
        ({"eigh": np.linalg.eigh(K0)}, "eigh"),
        ({"assume_psd": True}, "assume_psd"),
        ({"assume_psd": True, "eigh": np.linalg.eigh(K0)}, "assume_psd, eigh"),
    ):
        with pytest.raises(
            TypeError, match=f"^PerturbProblem takes no {names} \\(it assumes K0 PSD\\)\\.$"
        ):
            PerturbProblem(K0, y, **options)
    vector = ClassificationProblem(K0, y, rho=np.full(N, 0.5))
    with pytest.raises(
        ValueError,
        match=r"^set_penalty changes a scalar rho only; this problem has a vector rho$",
    ):
        vector.set_penalty(2.0)
    with pytest.raises(ValueError, match=r"^rho must be finite and > 0; got -1(\.0)?\.$"):
        ClassificationProblem(K0, y).set_penalty(-1.0)
