"""Contract of ``indefsvm.proxy.solvers.siqclp`` (Chen & Ye's exchange method, paper 004 Alg. 3).

Written for the mutation run of issue 15 (survivors:
``tools/mutation_survivors/mutation_survivors_solvers_siqclp.txt``), small
inputs (n = 8), seconds in all. References independent of the module: numpy's dense ``eigh`` for
the factors and for the most violated kernel ``K*(a) = (K0 + (Y a)(Y a)'/(4 rho))_+`` (Theorem 1),
a cvxpy QCLP (13) written with ``quad_form`` of the Gram matrices (not the factors), the SDP of
problem (3) for the certified gap, and fake cvxpy problems for the solver fallback and time
limits.
"""

from __future__ import annotations

import logging
import time
import warnings
from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import pytest
from helpers import sigmoid_problem
from reference import psd_part, sdp_optimum
from sklearn.exceptions import ConvergenceWarning

from indefsvm.proxy.problems import make_problem
from indefsvm.proxy.solvers import SolverMonitor, siqclp
from indefsvm.proxy.solvers.siqclp import (
    _QCLP,
    SubproblemError,
    SubproblemTimeout,
    _initial_factor,
    _Kernel,
    _mixture_bound,
    _psd_factor,
    exchange_method,
)
from indefsvm.threads import config_context

N = 8


def data(seed=1):
    return sigmoid_problem(N, seed)


def problem(kind="svc", seed=1, **kw):
    K0, y = data(seed)
    if kind == "svr":
        y = np.sin(np.arange(N) / 2.0)
        kw = {"C": 1.0, "epsilon": 0.1, **kw}
    return make_problem(kind, K0, y, **({"C": 1.0, "rho": 1.0} if kind == "svc" else {}) | kw)


def kernels_at(pb, seed, count):
    rng = np.random.default_rng(seed)
    out = [_Kernel(_initial_factor(pb), 0.0, 0)]
    out[0].constant = pb.penalty_rho * float(np.sum((out[0].gram - pb.working_kernel) ** 2))
    for j in range(1, count):
        a = pb.project(rng.uniform(pb.lower, pb.upper))
        f = _psd_factor(pb.working_proxy_kernel(pb.evaluate(a).state))
        out.append(
            _Kernel(f, pb.penalty_rho * float(np.sum((f @ f.T - pb.working_kernel) ** 2)), j)
        )
    return out


def qclp_reference(pb, kernels):
    """(13) with the Gram matrices as quadratic forms (cvxpy), value and multipliers."""
    a = cp.Variable(pb.n)
    t = cp.Variable()
    u = cp.multiply(pb.u_coef, a)
    lin = pb.linear_coef @ a - pb.l1_weight * cp.norm1(a)
    quad = [
        t <= lin - 0.5 * cp.quad_form(u, cp.psd_wrap(k.factor @ k.factor.T)) + k.constant
        for k in kernels
    ]
    prob = cp.Problem(
        cp.Maximize(t), [pb.eq_coef @ a == pb.eq_rhs, a >= pb.lower, a <= pb.upper, *quad]
    )
    prob.solve(solver="CLARABEL")
    return prob.value, a.value, np.array([float(np.asarray(c.dual_value).item()) for c in quad])


def run(pb=None, *, tol=1e-6, max_iter=200, max_time=None, record=None, rows=None, **kw):
    """exchange_method with a fresh monitor; ``record`` collects every offered evaluation and
    ``rows`` the callback's dict of every iteration (``relaxation_value``, ``n_constraints``,
    ``current_objective``; not called on the converged iteration)."""
    pb = pb or problem()
    cb = None if rows is None else (lambda info: rows.append(dict(info)) and False)
    mon = SolverMonitor(
        pb, method="siqclp", tol=tol, max_iter=max_iter, max_time=max_time, callback=cb
    )
    if record is not None:
        offer = mon.offer

        def spy(ev, *args, **kwargs):
            record.append(ev)
            return offer(ev, *args, **kwargs)

        mon.offer = spy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return exchange_method(pb, mon, **kw)


# -- factors and kernels ----------------------------------------------------------------------
def test_psd_factor_is_the_positive_part_by_dense_eigh():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(N, N))
    K = A + A.T  # indefinite
    L = _psd_factor(K)
    assert np.allclose(L @ L.T, psd_part(K), atol=1e-12)
    assert L.shape == (N, int(np.sum(np.linalg.eigvalsh(K) > 0)))
    # a non-symmetric input: its symmetric part
    B = K + np.triu(np.ones((N, N)), 1)
    assert np.allclose(_psd_factor(B) @ _psd_factor(B).T, psd_part(0.5 * (B + B.T)), atol=1e-12)
    # exact rank: eigenvalues below 1e-14 max(1, max |w|) are dropped, larger ones kept
    V = np.linalg.qr(rng.normal(size=(N, N)))[0]
    w = np.array([0.5, 3e-14, 5e-15, -0.2, 1.5e-14, 0, 0.1, -1e-16])
    L = _psd_factor(V @ np.diag(w) @ V.T)
    assert L.shape[1] == 4  # 1.5e-14 kept: the threshold is 1e-14 below max |w| = 1
    w_big = np.array([100.0, 2e-12, 5e-13, 0, 0, 0, 0, 0])
    assert _psd_factor(V @ np.diag(w_big) @ V.T).shape[1] == 2
    assert _psd_factor(np.zeros((N, N))).shape == (N, 0)


@pytest.mark.parametrize("with_eigh", [True, False])
def test_initial_factor_is_the_clipped_kernel(with_eigh):
    rng = np.random.default_rng(1)
    V = np.linalg.qr(rng.normal(size=(N, N)))[0]
    d = np.array([-0.4, 5e-15, 3e-14, 0.2, 0.7, -0.1, 1e-3, 1.5e-14])
    K0 = V @ np.diag(d) @ V.T
    pb = SimpleNamespace(working_kernel=K0, working_eigh=(d, V) if with_eigh else None)
    L = _initial_factor(pb)
    assert np.allclose(L @ L.T, psd_part(K0), atol=1e-12)
    assert L.shape[1] == 5  # 1.5e-14 kept: the threshold is 1e-14 below max |d| = 1
    # relative threshold: 5e-13 is dropped beside an eigenvalue 70 (1e-14 * 70 = 7e-13)
    d_big = np.array([-40.0, 5e-13, 8e-13, 20.0, 70.0, -10.0, 0.1, 0.0])
    K_big = V @ np.diag(d_big) @ V.T
    big = SimpleNamespace(working_kernel=K_big, working_eigh=(d_big, V) if with_eigh else None)
    assert _initial_factor(big).shape[1] == 4 if with_eigh else _initial_factor(big).shape[1] >= 3


def test_kernel_forms_its_gram_once():
    L = np.arange(6.0).reshape(3, 2)
    k = _Kernel(L, 2.5, 4)
    assert k.factor is L and k.constant == 2.5 and k.origin == 4 and k._gram is None
    G = k.gram
    assert np.array_equal(G, L @ L.T) and k.gram is G


def test_subproblem_error_lists_every_attempt():
    err = SubproblemError([("A", "boom"), ("B", "status 'x'")])
    assert err.attempts == [("A", "boom"), ("B", "status 'x'")]
    assert str(err) == "the QCLP subproblem (13) could not be solved (A: boom; B: status 'x')"
    assert issubclass(SubproblemTimeout, RuntimeError) and issubclass(SubproblemError, RuntimeError)


# -- the QCLP (13) -------------------------------------------------------------------------------
def test_qclp_defaults():
    pb = problem()
    q = _QCLP(pb, "rebuild", "CLARABEL", {"x": 1})
    assert (q.problem, q.mode, q.solver, q.options, q.n) == (pb, "rebuild", "CLARABEL", {"x": 1}, N)
    assert (q.compile_time, q.solve_time, q.wall_time) == (0.0, 0.0, 0.0)
    assert (q.n_compilations, q._slots, q._width, q.slot_block, q.width_block) == (0, 0, 0, 8, 16)
    assert q._param_problem is None and q.deadline is None and q.fallbacks == []
    assert siqclp.COMPILE_MODES == ("rebuild", "parametric")
    assert siqclp.MASTERS == ("mkl", "qclp") and siqclp.STABILISERS == ("proximal", "none")
    assert siqclp.FALLBACK_SOLVERS == ("CLARABEL", "SCS", "ECOS", "MOSEK")
    assert siqclp.TIME_LIMIT_OPTIONS == {"CLARABEL": "time_limit", "SCS": "time_limit_secs"}
    assert siqclp.PARAMETRIC_WARN_SIZE == 250_000


@pytest.mark.parametrize("kind", ["svc", "svr"])
@pytest.mark.parametrize("mode", ["rebuild", "parametric"])
def test_qclp_matches_the_gram_form_of_13(kind, mode):
    pb = problem(kind)
    kernels = kernels_at(pb, 2, 3)
    ref, a_ref, mult_ref = qclp_reference(pb, kernels)
    q = _QCLP(pb, mode, "CLARABEL", {})
    t, alpha, mult = q.solve(kernels)
    assert t == pytest.approx(ref, abs=1e-6)
    assert mult.shape == (3,) and mult.sum() == pytest.approx(1.0, abs=1e-5)
    assert np.allclose(mult, mult_ref, atol=1e-4)
    assert pb.eq_coef @ alpha == pytest.approx(pb.eq_rhs, abs=1e-7)
    assert np.all(alpha >= pb.lower - 1e-7) and np.all(alpha <= pb.upper + 1e-7)
    assert alpha.dtype == np.float64 and isinstance(t, float)
    assert q.n_compilations == 1 and q.wall_time > 0 and q.solve_time > 0 and q.compile_time > 0


def test_parametric_capacity_grows_in_blocks_and_neutral_slots_carry_no_multiplier():
    pb = problem()
    kernels = kernels_at(pb, 3, 3)
    q = _QCLP(pb, "parametric", "CLARABEL", {})
    q.solve(kernels)
    rank = max(k.factor.shape[1] for k in kernels)
    assert q._slots == 8 and q._width == min(N, 16 * -(-rank // 16)) == N
    duals = np.array([float(np.asarray(c.dual_value).item()) for c in q._quad])
    assert np.all(np.abs(duals[3:]) < 1e-7) and duals[:3].sum() == pytest.approx(1, abs=1e-5)
    assert q._c[5].value == pytest.approx(max(k.constant for k in kernels) + 1.0)
    assert np.array_equal(q._L[5].value, np.zeros((N, N)))
    q.solve(kernels[:2])
    assert q.n_compilations == 1
    # a wider block size: width is the rank rounded up to the block, capped at n
    q2 = _QCLP(pb, "parametric", "CLARABEL", {})
    q2.width_block = 2
    q2.slot_block = 2
    q2.solve(kernels)
    assert q2._slots == 4 and q2._width == min(N, max(rank, 2 * -(-rank // 2)))
    more = kernels + kernels_at(pb, 4, 3)[1:]
    t, _, mult = q2.solve(more)
    assert q2._slots == 6 and q2.n_compilations == 2 and mult.shape == (5,)
    assert t == pytest.approx(qclp_reference(pb, more)[0], abs=1e-6)


def test_large_parametric_problem_warns_with_the_sizes(monkeypatch):
    monkeypatch.setattr(siqclp, "PARAMETRIC_WARN_SIZE", 8 * N * N - 1)
    pb = problem()
    with pytest.warns(
        ResourceWarning,
        match=r"^siqclp compile='parametric': compiling 8 slots of \(8, 8\) parameter factors"
        r" \(512 parameter entries\); cvxpy's DPP canonicalisation of dense parameter matrices"
        r" takes time and memory that grow fast with n \(n = 200: 47 s for two compilations;"
        r" n = 300: killed for lack of memory at 24 GB\)\. Use compile='rebuild' \(the default\)"
        r" for large n\.$",
    ):
        _QCLP(pb, "parametric", "CLARABEL", {}).solve(kernels_at(pb, 3, 2))
    monkeypatch.setattr(siqclp, "PARAMETRIC_WARN_SIZE", 8 * N * N)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        _QCLP(pb, "parametric", "CLARABEL", {}).solve(kernels_at(pb, 3, 2))


class FakeProblem:
    """A cvxpy problem stand-in: each solver name maps to an exception, a status or a delay."""

    def __init__(self, outcomes, compile_time=0.25):
        self.outcomes = outcomes
        self.calls = []
        self._compilation_time = compile_time
        self.status = None
        self.solver_stats = None

    def solve(self, solver, **options):
        self.calls.append((solver, options))
        out = self.outcomes[solver]
        if isinstance(out, Exception):
            raise out
        self.status = out
        self.solver_stats = SimpleNamespace(solve_time=0.5)


def test_run_falls_back_in_order_and_passes_options_only_to_the_requested_solver(monkeypatch):
    monkeypatch.setattr(cp, "installed_solvers", lambda: ["OSQP", "SCS", "CLARABEL", "ECOS"])
    q = _QCLP(problem(), "rebuild", "CLARABEL", {"max_iter": 7})
    assert q._solvers() == ["CLARABEL", "SCS", "ECOS"]
    q2 = _QCLP(problem(), "rebuild", "ECOS", {})
    assert q2._solvers() == ["ECOS", "CLARABEL", "SCS"]
    fake = FakeProblem(
        {
            "CLARABEL": cp.error.SolverError("kkt"),
            "SCS": "infeasible",
            "ECOS": cp.OPTIMAL_INACCURATE,
        }
    )
    q._run(fake)
    assert fake.calls == [("CLARABEL", {"max_iter": 7}), ("SCS", {}), ("ECOS", {})]
    assert q.fallbacks == [
        ("ECOS", [("CLARABEL", "SolverError: kkt"), ("SCS", "status 'infeasible'")])
    ]
    assert q.compile_time == pytest.approx(0.75) and q.solve_time == pytest.approx(0.5)
    for exc in (ValueError("v"), ArithmeticError("a")):
        fake = FakeProblem({"CLARABEL": exc, "SCS": cp.OPTIMAL, "ECOS": cp.OPTIMAL})
        q._run(fake)
        assert [c[0] for c in fake.calls] == ["CLARABEL", "SCS"]
    # first solver optimal: no fallback recorded
    n_fb = len(q.fallbacks)
    q._run(FakeProblem({"CLARABEL": cp.OPTIMAL}))
    assert len(q.fallbacks) == n_fb
    # times accumulate over subproblems; a missing or None compile time / solver stats add 0
    assert q.solve_time == pytest.approx(4 * 0.5) and q.compile_time == pytest.approx(8 * 0.25)
    bare = FakeProblem({"CLARABEL": cp.OPTIMAL})
    del bare._compilation_time
    q._run(bare)
    q._run(FakeProblem({"CLARABEL": cp.OPTIMAL}, compile_time=None))
    assert q.compile_time == pytest.approx(8 * 0.25) and q.solve_time == pytest.approx(6 * 0.5)
    no_stats = FakeProblem({"CLARABEL": cp.OPTIMAL})
    no_stats.solve = lambda solver, **o: setattr(no_stats, "status", cp.OPTIMAL)
    q._run(no_stats)
    assert q.solve_time == pytest.approx(6 * 0.5)
    none_time = FakeProblem({"CLARABEL": cp.OPTIMAL})
    none_time.solve = lambda solver, **o: (
        setattr(none_time, "status", cp.OPTIMAL),
        setattr(none_time, "solver_stats", SimpleNamespace(solve_time=None)),
    )
    q._run(none_time)
    assert q.solve_time == pytest.approx(6 * 0.5)
    # all fail: SubproblemError with every attempt
    with pytest.raises(SubproblemError) as info:
        q._run(FakeProblem({"CLARABEL": "a", "SCS": "b", "ECOS": "c"}))
    assert info.value.attempts == [
        ("CLARABEL", "status 'a'"),
        ("SCS", "status 'b'"),
        ("ECOS", "status 'c'"),
    ]
    # other exceptions are not swallowed
    with pytest.raises(TypeError):
        q._run(FakeProblem({"CLARABEL": TypeError("x")}))


def test_run_passes_the_remaining_time_and_stops_at_the_deadline(monkeypatch):
    monkeypatch.setattr(cp, "installed_solvers", lambda: ["CLARABEL", "SCS", "ECOS"])
    q = _QCLP(problem(), "rebuild", "CLARABEL", {})
    q.deadline = time.perf_counter() + 100.0
    fake = FakeProblem({"CLARABEL": "x", "SCS": "y", "ECOS": cp.OPTIMAL})
    q._run(fake)
    (_, o1), (_, o2), (_, o3) = fake.calls
    assert 99.0 < o1["time_limit"] <= 100.0 and 99.0 < o2["time_limit_secs"] <= 100.0
    assert o3 == {}
    # a user time limit is kept
    q3 = _QCLP(problem(), "rebuild", "CLARABEL", {"time_limit": 3.0})
    q3.deadline = time.perf_counter() + 100.0
    fake = FakeProblem({"CLARABEL": cp.OPTIMAL})
    q3._run(fake)
    assert fake.calls[0][1] == {"time_limit": 3.0}
    # almost no time left: at least 0.01 s is passed
    monkeypatch.setattr(siqclp.time, "perf_counter", lambda: 100.0)
    q.deadline = 100.004
    fake = FakeProblem({"CLARABEL": cp.OPTIMAL})
    q._run(fake)
    assert fake.calls[0][1] == {"time_limit": 0.01}
    q.deadline = 150.0
    fake = FakeProblem({"CLARABEL": cp.OPTIMAL})
    q._run(fake)
    assert fake.calls[0][1] == {"time_limit": 50.0}
    q.deadline = 100.0
    fake = FakeProblem({"CLARABEL": cp.OPTIMAL})
    with pytest.raises(SubproblemTimeout, match=r"^max_time reached before CLARABEL could finish$"):
        q._run(fake)
    monkeypatch.undo()
    q.deadline = time.perf_counter() - 1e-3
    fake = FakeProblem({"CLARABEL": cp.OPTIMAL})
    with pytest.raises(SubproblemTimeout, match=r"^max_time reached before CLARABEL could finish$"):
        q._run(fake)
    assert fake.calls == []


def test_solve_times_the_whole_qclp_even_when_it_fails(monkeypatch):
    q = _QCLP(problem(), "rebuild", "CLARABEL", {})

    def boom(prob):
        time.sleep(0.01)
        raise SubproblemError([("X", "y")])

    monkeypatch.setattr(q, "_run", boom)
    t0 = time.perf_counter()
    for _ in range(2):
        with pytest.raises(SubproblemError):
            q.solve(kernels_at(problem(), 1, 1))
    assert 0.02 <= q.wall_time <= time.perf_counter() - t0


# -- bounds --------------------------------------------------------------------------------------
def test_mixture_bound_is_the_bound_of_the_normalised_mixture():
    pb = problem()
    kernels = kernels_at(pb, 5, 3)
    alpha = pb.project(np.full(N, 0.5))
    mult = np.array([2.0, -1.0, 6.0])
    K_mu = (2.0 * kernels[0].gram + 6.0 * kernels[2].gram) / 8.0
    assert _mixture_bound(pb, kernels, mult, alpha) == pytest.approx(
        pb.bound_for_kernel(K_mu, alpha), rel=1e-12
    )
    assert _mixture_bound(pb, kernels, np.array([0.0, 0.0, 1.0]), alpha) == pytest.approx(
        pb.bound_for_kernel(kernels[2].gram, alpha), rel=1e-12
    )
    for bad in ([0.0, 0.0, 0.0], [-1.0, 0.0, -2.0], [np.nan, 1.0, 1.0], [np.inf, 1.0, 0.0]):
        assert _mixture_bound(pb, kernels, np.array(bad), alpha) == np.inf
    opt, _ = sdp_optimum(*data(), 1.0, 1.0)
    assert _mixture_bound(pb, kernels, np.array([0.2, 0.3, 0.5]), alpha) >= opt - 1e-6 * abs(opt)


# -- the exchange method ------------------------------------------------------------------------
BAD = [
    ({"master": "mosek"}, r"^master must be one of \('mkl', 'qclp'\); got 'mosek'\.$"),
    ({"mkl_gap": 0.0}, r"^mkl_gap must be in \(0, 1\]; got 0\.0\.$"),
    ({"mkl_gap": 1.5}, r"^mkl_gap must be in \(0, 1\]; got 1\.5\.$"),
    ({"mkl_gap": np.nan}, r"^mkl_gap must be in \(0, 1\]; got nan\.$"),
    ({"stabilise": "trust"}, r"^stabilise must be one of \('proximal', 'none'\); got 'trust'\.$"),
    (
        {"master": "qclp", "stabilise": "proximal"},
        r"^stabilise='proximal' needs master='mkl' \(the proximal term enters the SVMs\)\.$",
    ),
    ({"prox_weight": 0.0}, r"^prox_weight must be None or a finite number > 0; got 0\.0\.$"),
    ({"prox_weight": np.inf}, r"^prox_weight must be None or a finite number > 0; got inf\.$"),
    ({"compile": "jit"}, r"^compile must be one of \('rebuild', 'parametric'\); got 'jit'\.$"),
    (
        {"compile": "parametric"},
        r"^compile='parametric' applies to the cvxpy QCLP master only; pass master='qclp'\.$",
    ),
    ({"conic_solver": "NOPE"}, r"^solver 'NOPE' is not installed for cvxpy; installed: \["),
    ({"prune_tol": -1.0}, r"^prune_tol must be >= 0; got -1\.0\.$"),
    ({"prune_tol": np.nan}, r"^prune_tol must be >= 0; got nan\.$"),
    ({"exchange_tol": -1.0}, r"^exchange_tol must be >= 0; got -1\.0\.$"),
    ({"exchange_tol": np.nan}, r"^exchange_tol must be >= 0; got nan\.$"),
    ({"exchange_patience": 1.5}, r"^exchange_patience must be an integer >= 0; got 1\.5\.$"),
    ({"exchange_patience": -1}, r"^exchange_patience must be an integer >= 0; got -1\.$"),
    ({"mkl_step": "bfgs"}, r"^mkl_step must be one of"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD)
def test_bad_options_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        run(max_iter=1, **kwargs)


def test_edge_options_are_accepted():
    for kw in (
        {"mkl_gap": 1.0},
        {"prune_tol": 0.0, "exchange_tol": 0.0, "exchange_patience": 0},
        {"master": "qclp", "compile": "parametric", "stabilise": "none"},
        {"prox_weight": 1e-3},
        {"master": "qclp", "conic_solver": "SCS"},
    ):
        res = run(max_iter=1, **kw)
        assert res.n_iter == 1


def solved_with_kernels(monkeypatch, **kw):
    """Run and record every collected kernel (in order) and every offered evaluation."""
    made = []
    orig = siqclp._Kernel

    class Spy(orig):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(siqclp, "_Kernel", Spy)
    offered = []
    res = run(record=offered, **kw)
    return res, made, offered


@pytest.mark.parametrize(
    "options",
    [
        {"master": "qclp"},
        {"master": "mkl", "stabilise": "none"},
        {"master": "mkl"},
        {"master": "mkl", "mkl_step": "reduced_gradient"},
    ],
)
def test_exchange_adds_the_most_violated_kernel_and_certifies_the_gap(monkeypatch, options):
    """Each exchange adds ``K*(a_i)`` (dense eigh of ``K0 + (Y a)(Y a)'/(4 rho)``, clipped),
    whose constraint value at ``a_i`` is ``f(a_i)`` and below that of any PSD kernel; every
    offered point is feasible with ``f <= OPT``, every gap bounds the true suboptimality (SDP)."""
    K0, y = data()
    opt, _ = sdp_optimum(K0, y, 1.0, 1.0)
    pb = problem()
    rows = []
    res, made, offered = solved_with_kernels(
        monkeypatch, pb=pb, max_iter=4, tol=1e-12, rows=rows, **options
    )
    assert made[0].origin == 0 and np.allclose(made[0].gram, psd_part(K0), atol=1e-10)
    assert made[0].constant == pytest.approx(np.sum((psd_part(K0) - K0) ** 2), rel=1e-10)
    rng = np.random.default_rng(0)
    for k in made[1:]:
        ev = offered[k.origin - 1]
        a = ev.alpha
        u = y * a
        Kstar = psd_part(K0 + np.outer(u, u) / 4.0)
        assert np.allclose(k.gram, Kstar, atol=1e-10)
        assert k.constant == pytest.approx(np.sum((Kstar - K0) ** 2), rel=1e-9, abs=1e-12)
        value = a.sum() - 0.5 * u @ k.gram @ u + k.constant
        assert value == pytest.approx(ev.objective, abs=1e-9)
        for _ in range(3):
            B = rng.normal(size=(N, N))
            K = Kstar + 0.1 * B @ B.T / N
            assert a.sum() - 0.5 * u @ K @ u + np.sum((K - K0) ** 2) >= value - 1e-12
    if options.get("stabilise", "proximal") == "proximal" and options["master"] == "mkl":
        # t_2 is the model min_i L_i at the proximal point (without the proximal term)
        u2 = y * offered[1].alpha
        model = [offered[1].alpha.sum() - 0.5 * u2 @ k.gram @ u2 + k.constant for k in made[:2]]
        assert rows[1]["relaxation_value"] == pytest.approx(min(model), abs=1e-9)
    scale = max(1.0, abs(opt))
    for ev in offered:
        assert abs(y @ ev.alpha) < 1e-10 and ev.alpha.min() >= 0 and ev.alpha.max() <= 1.0
        assert ev.objective <= opt + 1e-6 * scale
    h = res.history
    assert np.all(h["upper_bound"] >= opt - 1e-6 * scale)
    assert np.all(h["gap"] >= opt - h["objective"] - 1e-6 * scale)
    assert res.upper_bound >= opt - 1e-6 * scale and res.objective <= opt + 1e-6 * scale


@pytest.mark.parametrize("options", [{"master": "qclp"}, {}, {"mkl_step": "reduced_gradient"}])
def test_converges_to_the_sdp_optimum(options):
    K0, y = data(3)
    opt, _ = sdp_optimum(K0, y, 1.0, 1.0)
    res = run(problem(seed=3), tol=1e-5, **options)
    assert res.status == "converged" and res.method == "siqclp"
    assert res.objective <= opt + 1e-6 * abs(opt) <= res.upper_bound + 2e-6 * abs(opt)
    assert opt - res.objective <= res.gap + 1e-6 * abs(opt)
    assert res.relative_gap <= 1e-5


def test_info_fields_of_the_qclp_master():
    pb = problem()
    rows = []
    res = run(pb, master="qclp", max_iter=3, tol=1e-12, rows=rows)
    info = res.info
    assert info["solver"] == "CLARABEL" and info["compile"] == "rebuild"
    assert info["master"] == "qclp" and info["stabilise"] == "none"
    assert info["n_compilations"] == res.n_iter == 3
    assert info["time_compile"] > 0 and info["time_solver"] > 0 and info["time_qclp"] > 0
    assert info["time_kernel"] > 0 and info["time_mixture_bound"] > 0
    assert info["time_kernel_bound"] == 0.0 and info["n_kernel_bounds"] == 0
    assert info["max_constraints"] >= info["n_constraints"] >= 1
    assert [r["n_constraints"] for r in rows][0] == 1
    assert info["max_constraints"] == max(r["n_constraints"] for r in rows)
    assert info["n_constraints"] == rows[-1]["n_constraints"]
    assert info["relaxation_value"] == rows[-1]["relaxation_value"]
    assert len(rows) == res.history["objective"].size == 3
    assert info["stop_rule"] == res.status == "max_iter"
    assert info["solver_fallbacks"] == [] and info["solver_error"] is None
    assert info["n_serious_steps"] == 0 and info["n_exchange_rule_hits"] == 0
    assert info["prox_weight"] == pytest.approx(1e-14)
    assert "mkl_step" not in info and "n_svm_solves" not in info
    # every timer is a duration within the solve's wall time
    for key in ("time_compile", "time_solver", "time_qclp", "time_kernel", "time_mixture_bound"):
        assert 0 < info[key] <= res.time, key
    assert info["time_compile"] + info["time_solver"] <= info["time_qclp"]
    assert info["n_pruned"] >= 0 and info["n_pruned"] + info["n_constraints"] == 3


def test_info_fields_of_the_mkl_master():
    pb = problem()
    lam = np.linalg.eigvalsh(pb.working_kernel)
    res = run(pb, max_iter=1, tol=1e-12)
    info = res.info
    assert (
        info["master"] == "mkl" and info["stabilise"] == "proximal" and info["mkl_step"] == "newton"
    )
    assert info["prox_weight"] == pytest.approx(1e-2 * np.max(np.abs(lam)), rel=1e-12)
    assert info["n_compilations"] == 0 and info["time_qclp"] == 0.0
    assert info["n_svm_solves"] >= 1 and info["n_smo_iterations"] >= 1
    assert info["time_svm"] > 0 and info["time_master"] >= info["time_svm"]
    for key in ("time_kernel", "time_mixture_bound", "time_svm", "time_master"):
        assert 0 < info[key] <= res.time, key
    assert info["n_master_steps"] == 0 and info["n_master_unconverged_svms"] == 0
    assert isinstance(info["master_gaps"], np.ndarray) and info["master_gaps"].shape == (1,)
    assert info["n_constraints"] == 1 and info["max_constraints"] == 1
    res = run(pb, max_iter=1, prox_weight=0.25, mkl_step="reduced_gradient", stabilise="none")
    assert res.info["prox_weight"] == 0.25 and res.info["mkl_step"] == "reduced_gradient"
    assert res.info["stabilise"] == "none"


@pytest.mark.parametrize("weight", [1.0, 1e-4])
def test_proximal_weight_halves_on_serious_and_doubles_on_null_steps(monkeypatch, weight):
    """The proximal bundle rule: the master sees ``(mu, centre)``; ``mu`` halves when f gains a
    tenth of the model's prediction and doubles otherwise; the centre moves on serious steps."""
    pb = problem()
    seen = []
    orig = siqclp.MKLMaster.solve

    def spy(self, kernels, gap_tol, prox=None):
        seen.append((gap_tol, None if prox is None else (prox[0], prox[1].copy())))
        return orig(self, kernels, gap_tol, prox)

    monkeypatch.setattr(siqclp.MKLMaster, "solve", spy)
    offered, rows = [], []
    gap_share = 0.5 if weight == 1.0 else 0.1
    res = run(
        pb, prox_weight=weight, max_iter=8, tol=1e-12, record=offered, rows=rows, mkl_gap=gap_share
    )
    assert seen[0] == (np.inf, None)
    mus = [p[0] for _, p in seen[1:]]
    assert mus[0] == weight
    assert np.allclose(seen[1][1][1], offered[0].alpha)
    f_center, center, serious = offered[0].objective, offered[0].alpha, 0
    for i in range(1, len(mus)):
        ev = offered[i]
        # the model value at iteration i: recompute predicted from the recorded history
        t_i = rows[i]["relaxation_value"]
        predicted = t_i - f_center
        if ev.objective - f_center >= 0.1 * predicted:
            assert mus[i] == pytest.approx(mus[i - 1] / 2.0)
            center, f_center = ev.alpha, ev.objective
            serious += 1
        else:
            assert mus[i] == pytest.approx(mus[i - 1] * 2.0)
        assert np.allclose(seen[i + 1][1][1], center)
    # (the last iteration's step is counted too; it is not visible through a later solve)
    assert res.info["n_serious_steps"] in (serious, serious + 1) and serious >= 2
    # (weight 1e-4: a null step first, then serious steps below the start: the clamps at
    # 1e-8 and 1e8 times the initial weight are far away)
    assert min(mus) < weight or weight == 1.0
    # the master's accuracy target follows the certified gap (mkl_gap times at most the gap)
    for (gap_tol, _), g in zip(seen[1:], res.history["gap"][:-1], strict=False):
        assert gap_tol <= gap_share * g * (1 + 1e-12) or gap_tol <= 1e-12


def test_pruning_keeps_the_newest_and_the_constraints_with_multipliers(monkeypatch):
    seen = []
    orig = siqclp._QCLP.solve

    def spy(self, kernels):
        out = orig(self, kernels)
        seen.append(([k.origin for k in kernels], out[2].copy()))
        return out

    monkeypatch.setattr(siqclp._QCLP, "solve", spy)
    run(master="qclp", max_iter=5, tol=1e-12, prune_tol=0.2)
    for (origins, mult), (nxt, _) in zip(seen, seen[1:], strict=False):
        kept = [o for o, m in zip(origins, mult, strict=True) if m >= 0.2]
        if origins[-1] not in kept:
            kept.append(origins[-1])
        assert nxt[:-1] == kept and nxt[-1] == max(origins) + 1
    seen.clear()
    res = run(master="qclp", max_iter=4, tol=1e-12, prune_tol=0.0)
    assert res.info["n_pruned"] == 0 and [o for o, _ in seen][-1] == [0, 1, 2, 3]
    seen.clear()
    res = run(master="qclp", max_iter=4, tol=1e-12, prune_tol=2.0)
    assert [o for o, _ in seen] == [[0], [0, 1], [1, 2], [2, 3]] and res.info["n_pruned"] == 2


def test_max_iter_status_and_warning():
    pb = problem()
    mon = SolverMonitor(pb, method="siqclp", tol=1e-12, max_iter=1)
    with pytest.warns(ConvergenceWarning, match=r"^siqclp: iteration limit 1 reached"):
        res = exchange_method(pb, mon, master="qclp")
    assert res.status == "max_iter" and res.n_iter == 1


@pytest.mark.parametrize("master", ["qclp", "mkl"])
def test_max_time_status_and_warning(master):
    pb = problem()
    mon = SolverMonitor(pb, method="siqclp", tol=0.0, max_iter=10**6, max_time=0.05)
    time.sleep(0.06)
    with pytest.warns(ConvergenceWarning, match=r"^siqclp: time limit 0\.05s reached"):
        res = exchange_method(pb, mon, master=master)
    assert res.status == "max_time" and res.info["stop_rule"] == "max_time"
    assert res.n_iter == 1 and np.isfinite(res.objective)
    if master == "qclp":
        assert res.message.startswith("time limit 0.05s reached with relative gap")
        assert "max_time reached before CLARABEL could finish" in res.message
        assert np.allclose(res.alpha, pb.initial_point())
        assert res.info["relaxation_value"] == np.inf


def test_deadline_is_passed_to_both_masters(monkeypatch):
    got = {}
    orig = siqclp._QCLP.solve

    def spy(self, kernels):
        got["qclp"] = self.deadline
        return orig(self, kernels)

    monkeypatch.setattr(siqclp._QCLP, "solve", spy)
    pb = problem()
    mon = SolverMonitor(pb, method="siqclp", tol=1e-12, max_iter=1, max_time=50.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        exchange_method(pb, mon, master="qclp")
    assert got["qclp"] == pytest.approx(mon.start + 50.0)
    orig_m = siqclp.MKLMaster.solve

    def spy_m(self, kernels, gap_tol, prox=None):
        got["mkl"] = self.deadline
        return orig_m(self, kernels, gap_tol, prox)

    monkeypatch.setattr(siqclp.MKLMaster, "solve", spy_m)
    mon = SolverMonitor(pb, method="siqclp", tol=1e-12, max_iter=1, max_time=40.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        exchange_method(pb, mon)
    assert got["mkl"] == pytest.approx(mon.start + 40.0)
    mon = SolverMonitor(pb, method="siqclp", tol=1e-12, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        exchange_method(pb, mon)
    assert got["mkl"] is None


def test_algorithm_3_exchange_rule_stops_with_stalled_and_its_note():
    """Step 2 of Algorithm 3 (``f(a_i) >= t_i - exchange_tol max(1, |t_i|)``) with patience 0."""
    rows = []
    res = run(
        master="qclp", tol=0.0, exchange_tol=1e-2, exchange_patience=0, rows=rows, max_iter=20
    )
    assert res.status == "stalled" and res.info["stop_rule"] == "exchange"
    assert res.info["n_exchange_rule_hits"] == 1
    assert res.message == (
        "Algorithm 3's stopping rule holds (f(alpha) >= t - 0.01 max(1,|t|)) but the master's "
        "accuracy limits the certified gap; tighten the solver's tolerances, use "
        "stabilise='proximal' (master='mkl') or loosen tol"
    )
    t = np.array([r["relaxation_value"] for r in rows])
    f = res.history["objective"]  # f(a_i) of each iteration (current, not best)
    assert f.size == t.size
    assert f[-1] >= t[-1] - 1e-2 * max(1.0, abs(t[-1]))
    # before the last iteration the rule did not hold (the first is never tested)
    assert np.all(f[1:-1] < t[1:-1] - 1e-2 * np.maximum(1, np.abs(t[1:-1])))
    # patience 2: two more exchanges after the first hit
    res2 = run(master="qclp", tol=0.0, exchange_tol=1e-2, exchange_patience=2, max_iter=20)
    assert res2.info["n_exchange_rule_hits"] == 3 and res2.info["stop_rule"] == "exchange"


def test_proximal_exchange_rule_note():
    res = run(tol=0.0, exchange_patience=0, max_iter=100)
    assert res.status == "stalled" and res.info["stop_rule"] == "exchange"
    assert res.message == (
        "the proximal model promises no increase above rounding (1e-13 |t|) but the certified "
        "gap is above tol: the problem is solved to working precision; loosen tol"
    )
    assert res.info["n_exchange_rule_hits"] == 1


def test_solver_error_returns_the_best_point_with_its_status(monkeypatch):
    calls = []
    orig = siqclp._QCLP.solve

    def failing(self, kernels):
        calls.append(len(kernels))
        if len(calls) == 3:
            raise SubproblemError([("CLARABEL", "boom")])
        return orig(self, kernels)

    monkeypatch.setattr(siqclp._QCLP, "solve", failing)
    pb = problem()
    lib_calls = []
    real_lib = pb.libsvm_upper_bound
    monkeypatch.setattr(pb, "libsvm_upper_bound", lambda *a: lib_calls.append(a) or real_lib(*a))
    res = run(pb, master="qclp", tol=1e-12)
    assert res.status == "solver_error" and res.info["stop_rule"] == "solver_error"
    assert (
        res.info["solver_error"] == "the QCLP subproblem (13) could not be solved (CLARABEL: boom)"
    )
    assert res.message == (
        "solver_error: the QCLP subproblem (13) could not be solved (CLARABEL: boom) at "
        "iteration 3; the best certified point so far is returned. Pass another solver "
        "(solver='SCS', ...) or loosen tol"
    )
    # no LIBSVM check after a solver failure (conclude(check_libsvm=False))
    assert lib_calls == []
    assert res.n_iter == 2


def test_non_finite_alpha_is_a_solver_error(monkeypatch):
    monkeypatch.setattr(
        siqclp._QCLP, "solve", lambda self, kernels: (1.0, np.full(self.n, np.nan), np.ones(1))
    )
    res = run(master="qclp")
    assert res.status == "solver_error"
    assert res.info["solver_error"] == "the QCLP solver returned a non-finite alpha at iteration 1"
    assert res.n_iter == 1 and np.allclose(res.alpha, problem().initial_point())


def test_kernel_bound_and_mixture_bound_switches(monkeypatch):
    pb = problem()
    calls = []
    orig = siqclp.MKLMaster.kernel_svm

    def spy(self, K, alpha0, *, full=False):
        calls.append(full)
        return orig(self, K, alpha0, full=full)

    monkeypatch.setattr(siqclp.MKLMaster, "kernel_svm", spy)
    res = run(pb, tol=1e-9)
    assert res.status == "converged"
    assert res.info["n_kernel_bounds"] == len(calls) >= 1 and res.info["time_kernel_bound"] > 0
    calls.clear()
    res = run(pb, tol=1e-9, kernel_bound=False)
    assert calls == [] and res.info["n_kernel_bounds"] == 0
    res = run(pb, master="qclp", max_iter=2, tol=1e-12, certify_mixture=False)
    assert res.info["time_mixture_bound"] == 0.0
    # without the mixture bound the cvxpy master's upper bounds are the core's only
    seen = []
    monkeypatch.setattr(siqclp, "_mixture_bound", lambda *a: seen.append(a) or np.inf)
    run(pb, master="qclp", max_iter=2, tol=1e-12)
    assert len(seen) == 2


def test_blas_threads_are_limited(monkeypatch):
    got = []
    real = siqclp.blas_limit

    def spy(n):
        got.append(n)
        return real(n)

    monkeypatch.setattr(siqclp, "blas_limit", spy)
    run(max_iter=1)
    with config_context(n_threads={"blas": 2}):
        run(max_iter=1)
    assert got == [1, 2]
    with pytest.raises(TypeError, match="blas_threads"):
        run(max_iter=1, blas_threads=None)


def test_offer_bound_hands_the_excess_and_error_to_the_monitor():
    offered = []
    monitor = SimpleNamespace(offer_upper_bound=lambda b, **kw: offered.append((b, kw)))
    bound = siqclp._Bound(2.5)
    bound.excess, bound.error = 0.25, 1e-12
    siqclp._offer_bound(monitor, bound)
    siqclp._offer_bound(monitor, 3.0)  # a plain float carries neither
    assert offered == [
        (2.5, {"excess": 0.25, "error": 1e-12}),
        (3.0, {"excess": None, "error": None}),
    ]
    assert type(offered[0][0]) is float


def test_fallbacks_are_logged(monkeypatch, caplog):
    monkeypatch.setattr(cp, "installed_solvers", lambda: ["CLARABEL", "SCS"])
    q = _QCLP(problem(), "rebuild", "CLARABEL", {})
    with caplog.at_level(logging.INFO, logger="indefsvm.proxy.solvers.siqclp"):
        q._run(FakeProblem({"CLARABEL": cp.error.SolverError("kkt"), "SCS": cp.OPTIMAL}))
    assert [r.getMessage() for r in caplog.records] == [
        "siqclp: CLARABEL failed on the QCLP (13): kkt",
        "siqclp: QCLP (13) solved by SCS after [('CLARABEL', 'SolverError: kkt')]",
    ]
    assert all(r.levelno == logging.INFO for r in caplog.records)


def test_proximal_steps_are_logged_at_debug_level(caplog):
    """One DEBUG line per proximal step with mu, the predicted and gained increase, the master's
    gap and the number of kernels (values checked against the callback's rows)."""
    offered, rows = [], []
    with caplog.at_level(logging.DEBUG, logger="indefsvm.proxy.solvers.siqclp"):
        res = run(prox_weight=1.0, max_iter=3, tol=0.0, record=offered, rows=rows)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("siqclp proximal")]
    assert len(lines) == 2 and all(r.levelno == logging.DEBUG for r in caplog.records)
    f0 = offered[0].objective
    t1 = rows[1]["relaxation_value"]
    gaps = res.info["master_gaps"]
    assert lines[0] == (
        f"siqclp proximal: mu {1.0:.3g} predicted {t1 - f0:.3e} gained "
        f"{offered[1].objective - f0:.3e} master gap {gaps[1]:.3e}, 2 kernels"
    )
    serious = offered[1].objective - f0 >= 0.1 * (t1 - f0)
    mu2, fc = (0.5, offered[1].objective) if serious else (2.0, f0)
    t2 = rows[2]["relaxation_value"]
    k2 = rows[2]["n_constraints"]
    assert lines[1] == (
        f"siqclp proximal: mu {mu2:.3g} predicted {t2 - fc:.3e} gained "
        f"{offered[2].objective - fc:.3e} master gap {gaps[2]:.3e}, {k2} kernels"
    )


def test_proximal_log_line_shows_the_latest_master_gap(monkeypatch, caplog):
    """Each proximal DEBUG line reports the gap of the master solve of its own iteration (the
    last entry of the master's gap list). The real gaps of this run print alike at %.3e, so the
    spy tags each solve's gap with a distinct value (1e-3 times the solve's number)."""
    orig = siqclp.MKLMaster.solve

    def tagged(self, kernels, gap_tol, prox=None):
        out = orig(self, kernels, gap_tol, prox)
        self.stats.gaps[-1] = 1e-3 * len(self.stats.gaps)
        return out

    monkeypatch.setattr(siqclp.MKLMaster, "solve", tagged)
    with caplog.at_level(logging.DEBUG, logger="indefsvm.proxy.solvers.siqclp"):
        res = run(prox_weight=1.0, max_iter=4, tol=0.0)
    gaps = [
        float(r.getMessage().split("master gap ")[1].split(",")[0])
        for r in caplog.records
        if r.getMessage().startswith("siqclp proximal")
    ]
    assert gaps == pytest.approx([2e-3, 3e-3, 4e-3])
    assert res.info["master_gaps"] == pytest.approx([1e-3, 2e-3, 3e-3, 4e-3])


def test_parametric_recompiles_only_when_a_block_is_exceeded():
    """Capacity exactly used (kernels == slots, rank == width) is not a reason to recompile; a
    larger slot block keeps the wider factor width; compile time accumulates over builds."""
    pb = problem()
    kernels = kernels_at(pb, 3, 4)
    ranks = [k.factor.shape[1] for k in kernels]
    q = _QCLP(pb, "parametric", "CLARABEL", {})
    q.slot_block, q.width_block = 2, 1
    q.solve(kernels[:2])
    assert (q._slots, q._width, q.n_compilations) == (2, max(ranks[:2]), 1)
    q.solve(kernels[:2])  # exactly full, rank == width
    assert q.n_compilations == 1
    L = kernels[1].factor[:, :2]
    narrow = _Kernel(L, pb.penalty_rho * float(np.sum((L @ L.T - pb.working_kernel) ** 2)), 9)
    q2 = _QCLP(pb, "parametric", "CLARABEL", {})
    q2.slot_block, q2.width_block = 1, 1
    q2.solve([kernels[1]])
    q2.compile_time = 1000.0
    t, _, _ = q2.solve([narrow, narrow])  # more slots, smaller rank
    assert (q2._slots, q2._width, q2.n_compilations) == (2, ranks[1], 2)
    assert 1000.0 < q2.compile_time < 1000.0 + q2.wall_time
    ref = qclp_reference(pb, [narrow])[0]
    assert t == pytest.approx(ref, abs=1e-6)


def test_defaults_reach_the_masters(monkeypatch):
    """Documented defaults: the MKL master's step/tolerance/steps, patience 5 (six hits of the
    exchange rule), solver options passed to the conic solver."""
    got = {}
    orig_init = siqclp.MKLMaster.__init__

    def spy_init(self, problem, **kw):
        got["mkl"] = kw
        orig_init(self, problem, **kw)

    monkeypatch.setattr(siqclp.MKLMaster, "__init__", spy_init)
    run(max_iter=1)
    assert got["mkl"] == {"step": "newton", "svm_tol": 1e-11, "max_steps": 100}
    orig_run = siqclp._QCLP._run

    def spy_run(self, prob):
        got["options"] = dict(self.options)
        return orig_run(self, prob)

    monkeypatch.setattr(siqclp._QCLP, "_run", spy_run)
    run(master="qclp", max_iter=1, conic_options={"tol_gap_abs": 1e-9})
    assert got["options"] == {"tol_gap_abs": 1e-9}
    run(master="qclp", max_iter=1)
    assert got["options"] == {}
    res = run(master="qclp", tol=0.0, exchange_tol=1e-2, max_iter=30)
    assert res.info["n_exchange_rule_hits"] == 6 and res.info["stop_rule"] == "exchange"


def test_default_exchange_tol_is_a_tenth_of_tol():
    """Without the mixture bound the certified gap lags the model, so Algorithm 3's rule
    (default ``exchange_tol = tol / 10``) stops the run: at the first iteration with
    ``t_i - f(a_i) <= tol / 10 max(1, |t_i|)``, not before."""
    rows = []
    tol = 1e-3
    res = run(
        master="qclp", tol=tol, exchange_patience=0, rows=rows, max_iter=30, certify_mixture=False
    )
    t = np.array([r["relaxation_value"] for r in rows])
    slack = (t - res.history["objective"]) / np.maximum(1.0, np.abs(t))
    assert res.info["stop_rule"] == "exchange" and res.status == "stalled"
    assert slack[-1] <= 0.1 * tol and np.all(slack[:-1] > 0.1 * tol)
    assert np.any(slack[:-1] <= 1.1 * tol)  # a looser default would have stopped earlier
    assert "f(alpha) >= t - 0.0001 max(1,|t|)" in res.message


def test_default_proximal_weight_without_a_stored_eigendecomposition():
    """``mu = 1e-2 max |lambda(K0)|`` from numpy's eigvalsh when the problem keeps no eigh
    (PerturbSVM's PSD path) and from the stored eigenvalues otherwise."""
    X = np.random.default_rng(2).normal(size=(N, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    pb = make_problem("perturb", X @ X.T + 0.1 * np.eye(N), y, C=1.0, rho=1.0)
    assert pb.working_eigh is None
    res = run(pb, max_iter=1)
    lam = np.linalg.eigvalsh(pb.working_kernel)
    assert res.info["prox_weight"] == pytest.approx(1e-2 * np.max(np.abs(lam)), rel=1e-12)


@pytest.mark.parametrize("kw", [{}, {"C": 0.3, "rho": 0.05}])
def test_master_accuracy_target_has_a_rounding_floor(monkeypatch, kw):
    """The master's target ``mkl_gap min(gap, predicted)`` is floored at ``1e-13 max(max(1,
    |f_best|), |c_1|)`` (rounding of the constraint values): reached in a run to ``tol = 0``."""
    pb = problem(**kw)
    seen = []
    orig = siqclp.MKLMaster.solve

    def spy(self, kernels, gap_tol, prox=None):
        seen.append((gap_tol, kernels[0].constant))
        return orig(self, kernels, gap_tol, prox)

    monkeypatch.setattr(siqclp.MKLMaster, "solve", spy)
    offered = []
    run(pb, tol=0.0, exchange_patience=0, max_iter=100, record=offered)
    assert seen[0][0] == np.inf
    best, hits = offered[0].objective, 0
    for i, (gap_tol, c1) in enumerate(seen[1:], start=1):
        floor = 1e-13 * max(max(1.0, abs(best)), abs(c1))
        assert gap_tol >= floor
        hits += gap_tol == floor
        best = max(best, offered[i].objective)
    assert hits >= 1


def test_time_limit_inside_a_later_subproblem_stops_with_max_time(monkeypatch):
    calls = []
    orig = siqclp._QCLP.solve

    def timing_out(self, kernels):
        calls.append(1)
        if len(calls) == 2:
            raise SubproblemTimeout("max_time reached before CLARABEL could finish")
        return orig(self, kernels)

    monkeypatch.setattr(siqclp._QCLP, "solve", timing_out)
    res = run(master="qclp", tol=1e-12)
    assert res.status == "max_time" and res.n_iter == 1
    assert res.message.startswith("time limit None")
    assert "(max_time reached before CLARABEL could finish)" in res.message


def test_kernel_bounds_are_computed_once_per_best_point(monkeypatch):
    calls = []
    orig = siqclp.MKLMaster.kernel_svm

    def spy(self, K, alpha0, *, full=False):
        calls.append((alpha0.tobytes(), full))
        return orig(self, K, alpha0, full=full)

    monkeypatch.setattr(siqclp.MKLMaster, "kernel_svm", spy)
    offered = []
    res = run(tol=1e-10, record=offered, max_iter=60)
    assert len(calls) == len(set(calls)) == res.info["n_kernel_bounds"] >= 1
    # each bounded point was the best at its time
    bests = set()
    best = None
    for ev in offered:
        if best is None or ev.objective > best.objective:
            best = ev
        bests.add(best.alpha.tobytes())
    assert {a for a, _ in calls} <= bests
    assert len({a for a, _ in calls}) >= 3  # the bound follows the best point (7 here)


def test_kernel_bound_is_not_repeated_while_the_best_point_stays(monkeypatch):
    """With a loose exchange tolerance the exchange rule holds at every iteration, so a full
    kernel bound is due at each; the second iterate is worse than the first, and the bound at
    the unchanged best point is not computed again (one full bound per distinct best point,
    the best points replicated from the offered evaluations)."""
    calls, offered = [], []
    orig = siqclp.MKLMaster.kernel_svm

    def spy(self, K, alpha0, *, full=False):
        calls.append((alpha0.tobytes(), full))
        return orig(self, K, alpha0, full=full)

    monkeypatch.setattr(siqclp.MKLMaster, "kernel_svm", spy)
    run(tol=0.0, max_iter=4, record=offered, stabilise="none", exchange_tol=0.5)
    bests, best = [], None
    for ev in offered:
        if best is None or ev.objective > best.objective:
            best = ev
        bests.append(best.alpha.tobytes())
    assert bests[1] == bests[0]  # the second iterate is worse: the best point stays
    distinct = list(dict.fromkeys(bests))
    assert calls == [(a, True) for a in distinct]


def test_history_records_the_current_iterate_not_only_the_best():
    """The history's current objective is f(alpha_i) of each iteration's own iterate (the
    offered evaluations), which differs from the best objective when an iterate is worse
    (the second one here)."""
    offered = []
    res = run(tol=0.0, max_iter=4, record=offered, stabilise="none")
    current = [ev.objective for ev in offered]
    best = np.maximum.accumulate(current)
    assert res.history["objective"] == pytest.approx(current, rel=1e-15)
    assert res.history["best_objective"] == pytest.approx(best, rel=1e-15)
    assert current[1] < best[1]


def test_mixture_bound_time_accumulates(monkeypatch):
    real = siqclp._mixture_bound

    def slow(*args):
        time.sleep(0.02)
        return real(*args)

    monkeypatch.setattr(siqclp, "_mixture_bound", slow)
    res = run(master="qclp", max_iter=3, tol=1e-12)
    assert 0.06 <= res.info["time_mixture_bound"] <= res.time


@pytest.mark.parametrize(
    ("stabilise", "mixture"), [("proximal", True), ("none", True), ("none", False)]
)
def test_kernel_bound_schedule(monkeypatch, stabilise, mixture):
    """The kernel-SVM bound is computed at the best point exactly when the model promises at
    most a tenth of the certified gap (or the exchange rule holds) and that (best point,
    accuracy) pair has no bound yet. Replicated from the outside: the model gap from the
    callback's ``t_i``, the proximal centre by the serious-step rule, the gap at the check
    between the history's gaps of this and the previous iteration (ambiguous cases skipped).
    Without the mixture bound the certified gap stays wide, so with ``stabilise="none"`` bounds
    fall due by the model gap ``t_i - f(a_i)`` alone before the exchange rule holds."""
    calls = []
    offered, rows = [], []
    orig = siqclp.MKLMaster.kernel_svm

    def spy(self, K, alpha0, *, full=False):
        calls.append((len(offered), full))
        return orig(self, K, alpha0, full=full)

    monkeypatch.setattr(siqclp.MKLMaster, "kernel_svm", spy)
    res = run(
        tol=0.0,
        max_iter=30,
        record=offered,
        rows=rows,
        stabilise=stabilise,
        certify_mixture=mixture,
    )
    gaps = res.history["gap"]
    by_iter = dict(calls)
    assert len(by_iter) == len(calls)  # at most one bound per iteration
    bounded, best_f, best_tag, f_center = set(), -np.inf, 0, None
    sure_false = due_by_model = 0
    for i, ev in enumerate(offered, start=1):
        t, f = rows[i - 1]["relaxation_value"], ev.objective
        if f > best_f:
            best_f, best_tag = f, i
        model_gap = max(t - f, 0.0) if i > 1 else np.inf
        if stabilise == "proximal":
            if f_center is None:
                f_center = f
            else:
                predicted = t - f_center
                model_gap = max(predicted, 0.0)
                if f - f_center >= 0.1 * predicted:
                    f_center = f
            done = model_gap <= 1e-13 * max(1.0, abs(t))
        else:
            done = f >= t  # exchange_tol = tol / 10 = 0
        key = (best_tag, done)
        lo_gap, hi_gap = gaps[i - 1], gaps[i - 2] if i > 1 else np.inf
        called = i in by_iter
        if called:
            assert key not in bounded and by_iter[i] == done
            bounded.add(key)
            due_by_model += not done
        if key in bounded and not called:
            continue
        if done or model_gap <= 0.1 * lo_gap:
            assert called, i
        elif model_gap > 0.1 * hi_gap:
            assert not called, i
            sure_false += 1
    assert sure_false >= (20 if mixture else 15)  # 19 without the mixture bound
    if not mixture:
        assert due_by_model >= 3  # 4 here (iterations 13, 18, 23, 27)
    if stabilise == "proximal":
        assert any(not full for _, full in calls)  # bounds before the exchange rule holds


def test_kernel_bound_can_fall_due_at_the_second_iteration(monkeypatch):
    """The model gap ``t_2 - f(a_2)`` is defined from the second iteration on (the first has a
    one-kernel model, no gap): with rho = 10 and no mixture bound it is 1.2e-4 there, below a
    tenth of the first iteration's certified gap (4.8e-3), so the kernel bound is computed at
    iteration 2 already (checked from the callback's ``t_i`` and the history's gaps)."""
    calls, offered, rows = [], [], []
    orig = siqclp.MKLMaster.kernel_svm

    def spy(self, K, alpha0, *, full=False):
        calls.append((len(offered), full))
        return orig(self, K, alpha0, full=full)

    monkeypatch.setattr(siqclp.MKLMaster, "kernel_svm", spy)
    res = run(
        problem(rho=10.0),
        tol=0.0,
        max_iter=3,
        record=offered,
        rows=rows,
        stabilise="none",
        certify_mixture=False,
    )
    t2, f2 = rows[1]["relaxation_value"], offered[1].objective
    assert 0 < t2 - f2 <= 0.1 * res.history["gap"][0]
    assert (2, False) in calls


def test_proximal_exchange_rule_is_relative_to_t():
    """The proximal run stops (patience 0) at the first iteration whose model gap over the
    centre is at most ``1e-13 max(1, |t_i|)``; data with ``|t| < 2``."""
    offered, rows = [], []
    res = run(
        problem(C=0.3, rho=0.05), tol=0.0, exchange_patience=0, max_iter=100,
        record=offered, rows=rows,
    )  # fmt: skip
    assert res.info["stop_rule"] == "exchange"
    f_center = offered[0].objective
    done = []
    for i in range(1, len(offered)):
        t, f = rows[i]["relaxation_value"], offered[i].objective
        predicted = t - f_center
        done.append(max(predicted, 0.0) <= 1e-13 * max(1.0, abs(t)))
        assert abs(t) < 2.0
        if f - f_center >= 0.1 * predicted:
            f_center = f
    assert done[-1] and not any(done[:-1])


@pytest.mark.parametrize(
    ("kw", "excess", "stops"),
    [
        ({}, 3e-13, True),  # |t| ~ 4.8: threshold 1e-13 |t| ~ 4.8e-13
        ({}, 6e-13, False),
        ({"C": 0.1, "rho": 0.05}, 0.5e-13, True),  # |t| < 1: threshold 1e-13
        ({"C": 0.1, "rho": 0.05}, 1.5e-13, False),
    ],
)
def test_proximal_exchange_rule_threshold(monkeypatch, kw, excess, stops):
    """The proximal exchange rule ``max(t_i - f_centre, 0) <= 1e-13 max(1, |t_i|)`` on each side
    of its threshold: the spy makes the third master report ``t_3 = f_centre + excess`` (the
    centre replicated from the outside by the serious-step rule); with patience 0 the run stops
    at iteration 3 exactly when the excess is below the threshold."""
    offered, rows = [], []
    orig = siqclp.MKLMaster.solve
    seen = []

    def spy(self, kernels, gap_tol, prox=None):
        out = orig(self, kernels, gap_tol, prox)
        seen.append(out[0])
        if len(seen) == 3:
            f_center = offered[0].objective
            t2, f2 = rows[1]["relaxation_value"], offered[1].objective
            if f2 - f_center >= 0.1 * (t2 - f_center):
                f_center = f2
            self.last_values = np.full_like(self.last_values, f_center + excess)
            assert abs(f_center) < (1.0 if kw else 10.0) and (kw or abs(f_center) > 4.0)
        return out

    monkeypatch.setattr(siqclp.MKLMaster, "solve", spy)
    res = run(
        problem(**kw), tol=0.0, exchange_patience=0, max_iter=8, record=offered, rows=rows,
        prox_weight=1.0,
    )  # fmt: skip
    assert (res.info["stop_rule"] == "exchange" and len(offered) == 3) == stops
    assert len(offered) > 3 or stops


def test_zero_prune_tol_keeps_kernels_with_zero_weight(monkeypatch):
    """The MKL master's weights are exactly 0 off the simplex face; ``prune_tol = 0`` keeps
    them (``mult >= prune_tol``)."""
    zeros = []
    orig = siqclp.MKLMaster.solve

    def spy(self, kernels, gap_tol, prox=None):
        out = orig(self, kernels, gap_tol, prox)
        zeros.append(int(np.sum(out[2] == 0.0)))
        return out

    monkeypatch.setattr(siqclp.MKLMaster, "solve", spy)
    res = run(prune_tol=0.0, max_iter=8, tol=0.0)
    assert max(zeros) >= 1 and res.info["n_pruned"] == 0 and res.info["n_constraints"] == 8


def test_kernel_bound_time_accumulates_and_full_solve_at_the_exchange_rule(monkeypatch):
    calls = []
    orig = siqclp.MKLMaster.kernel_svm

    def slow(self, K, alpha0, *, full=False):
        time.sleep(0.02)
        calls.append(full)
        return orig(self, K, alpha0, full=full)

    monkeypatch.setattr(siqclp.MKLMaster, "kernel_svm", slow)
    res = run(tol=0.0, exchange_patience=0, max_iter=100)
    assert res.info["stop_rule"] == "exchange" and calls[-1] is True
    assert calls.count(True) == 1 and len(calls) >= 2
    assert 0.02 * len(calls) <= res.info["time_kernel_bound"] <= res.time


def test_kernel_factor_time_accumulates(monkeypatch):
    real = siqclp._psd_factor

    def slow(K):
        time.sleep(0.02)
        return real(K)

    monkeypatch.setattr(siqclp, "_psd_factor", slow)
    res = run(master="qclp", max_iter=4, tol=1e-12)
    assert 0.06 <= res.info["time_kernel"] <= res.time
