"""SIQCLP with the regularised-MKL master (paper 004 Sect. 3.4 step 3 and Sect. 5.3).

References are independent of the MKL code: LIBSVM and cvxpy for the inner SVM, the cvxpy QCLP
(13) for the master, the SDP of problem (3) and the projected gradient for the whole method.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from helpers import kind_problem, sigmoid_problem
from reference import sdp_optimum, svm_dual_value
from sklearn.exceptions import ConvergenceWarning

import indefsvm
from indefsvm.proxy import _libsvm, api
from indefsvm.proxy.problems import make_problem
from indefsvm.proxy.solvers import _mkl, _monitor, siqclp
from indefsvm.proxy.solvers._mkl import MKLMaster
from indefsvm.proxy.solvers.siqclp import _QCLP, _Kernel, _psd_factor


def _kernels(problem, rng, count):
    """Proxy kernels K*(a) at random feasible points, as the exchange method collects them."""
    K0 = problem.working_kernel
    kernels = []
    for j in range(count):
        a = problem.project(rng.uniform(problem.lower, problem.upper))
        factor = _psd_factor(problem.working_proxy_kernel(problem.evaluate(a).state))
        const = problem.penalty_rho * float(np.sum((factor @ factor.T - K0) ** 2))
        kernels.append(_Kernel(factor, const, j))
    return kernels


def _dual(problem, K, alpha):
    u = problem.u_coef * alpha
    lin = problem.linear_coef @ alpha - problem.l1_weight * np.abs(alpha).sum()
    return lin - 0.5 * u @ K @ u


@pytest.mark.parametrize("rank", [3, 20])
def test_inner_svm_matches_libsvm_and_cvxpy(rank):
    """The inner QP (SMO + active-set polish) on a PSD kernel of low or full rank reaches the
    SVM dual optimum of LIBSVM (tight tolerance) and of cvxpy."""
    rng = np.random.default_rng(rank)
    n = 30
    X = rng.normal(size=(n, rank))
    K = X @ X.T / rank
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    problem = make_problem("svc", np.eye(n), y, C=2.0, rho=1.0)
    master = MKLMaster(problem)
    w, _, viol = master._qp(master._P(K), master.w_lin, master._to_w(problem.initial_point()))
    alpha = master._alpha(w)
    assert viol <= master.tol
    assert abs(y @ alpha) < 1e-12 and alpha.min() >= 0 and alpha.max() <= 2.0
    ours = _dual(problem, K, alpha)
    ref_cvx, _ = svm_dual_value(K, y, 2.0)
    fit = _libsvm.train_precomputed(K, y, svm_type=0, C=2.0, tol=1e-10)
    u_lib = fit.coef if fit.labels[0] == 1 else -fit.coef
    ref_lib = np.abs(u_lib).sum() - 0.5 * u_lib @ K @ u_lib
    assert ours >= max(ref_cvx, ref_lib) - 1e-9 * max(1.0, abs(ours))
    assert ours == pytest.approx(ref_lib, rel=1e-8)
    # certified: the primal of our solution is within rounding of its dual value
    assert problem.bound_for_kernel(K, alpha) - problem.penalty_rho * np.sum(
        (K - problem.working_kernel) ** 2
    ) == pytest.approx(ours, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("step", ["newton", "reduced_gradient"])
@pytest.mark.parametrize(
    "kind,kwargs",
    [("svc", {"C": 1.0, "rho": 1.0}), ("svr", {"C": 1.0, "epsilon": 0.1}), ("oneclass", {})],
)
def test_mkl_master_matches_cvxpy_qclp(step, kind, kwargs):
    """(t, alpha, lambda) of min_simplex J (SVMs on kernel mixtures) against the QCLP (13)
    solved by cvxpy/Clarabel on the same collected kernels."""
    K0, y, _ = kind_problem(kind, 14, 3)
    problem = make_problem(kind, K0, y, **kwargs)
    kernels = _kernels(problem, np.random.default_rng(1), 4)
    t_ref, a_ref, mult_ref = _QCLP(problem, "rebuild", "CLARABEL", {}).solve(kernels)
    scale = max(1.0, abs(t_ref))
    # SimpleMKL's reduced gradient is a first-order method: a looser master gap, more steps
    newton = step == "newton"
    gap_tol = (1e-10 if newton else 1e-6) * scale
    master = MKLMaster(problem, step=step, max_steps=100 if newton else 3000)
    t, alpha, lam, gap = master.solve(kernels, gap_tol)
    assert gap <= gap_tol
    if newton:
        # exact second-order steps: a handful, one SVM each (no backtracking near the solution)
        assert master.stats.master_iterations <= 10
        assert master.stats.svm_solves <= 2 * master.stats.master_iterations + 1
    # J(lambda) bounds (13) from above; gap bounds the excess (up to Clarabel's accuracy)
    assert t_ref - 1e-7 * scale <= t <= t_ref + gap + 1e-7 * scale
    # the multipliers of (13) are the simplex weights (they sum to 1 at a solution of (13))
    assert np.allclose(lam, mult_ref / mult_ref.sum(), atol=1e-4 if newton else 1e-2)
    # alpha need not be unique; its constraint values must be (the max-min value is attained)
    values = [
        problem.linear_coef @ alpha
        - problem.l1_weight * np.abs(alpha).sum()
        - 0.5 * (problem.u_coef * alpha) @ k.gram @ (problem.u_coef * alpha)
        + k.constant
        for k in kernels
    ]
    assert t_ref - gap - 1e-7 * scale <= min(values) <= t_ref + 1e-7 * scale
    if kind != "oneclass" and newton:
        # (the one-class alpha is not unique on these low-rank kernels: no linear term)
        assert np.allclose(alpha, a_ref, atol=1e-3 * max(1.0, np.abs(a_ref).max()))


@pytest.mark.parametrize(
    "options",
    [{}, {"stabilise": "none"}, {"mkl_step": "reduced_gradient"}],
    ids=["proximal", "algorithm3", "simplemkl"],
)
@pytest.mark.parametrize("n,seed,C,rho", [(12, 0, 1.0, 1.0), (14, 2, 0.5, 10.0)])
def test_mkl_siqclp_matches_sdp_of_problem_3(options, n, seed, C, rho):
    K0, y = sigmoid_problem(n, seed)
    opt, K_sdp = sdp_optimum(K0, y, C, rho)
    res = indefsvm.solve(K0, y, C=C, rho=rho, method="siqclp", tol=1e-6, options=options)
    assert res.converged, res.message
    assert res.info["master"] == "mkl"
    assert res.objective <= opt + 1e-6 * abs(opt)
    assert res.upper_bound >= opt - 1e-6 * abs(opt)
    assert opt - res.objective <= 1e-6 * max(1.0, abs(opt)) + 1e-6 * abs(opt)
    assert np.allclose(res.kernel, K_sdp, atol=1e-2 * max(1.0, np.abs(K_sdp).max()))
    proximal = options.get("stabilise", "proximal") == "proximal"
    assert (res.info["n_serious_steps"] > 0) == proximal
    assert res.info["n_svm_solves"] >= res.n_iter


@pytest.mark.parametrize(
    "kind,kwargs",
    [
        ("svr", {"C": 1.0, "epsilon": 0.1}),
        ("oneclass", {"nu": 0.3}),
        ("svc", {"rho": "vec"}),
        ("perturb", {"C": 1.0}),
    ],
)
def test_mkl_siqclp_agrees_with_pg_and_accpm(kind, kwargs):
    K0, y, rho = kind_problem(kind, 16, 8, vector_rho=kwargs.get("rho") == "vec")
    kwargs = dict(kwargs) if rho is None else {**kwargs, "rho": rho}
    pg = indefsvm.solve(K0, y, problem=kind, tol=1e-10, max_iter=50000, **kwargs)
    accpm = indefsvm.solve(K0, y, problem=kind, method="accpm", tol=1e-8, **kwargs)
    res = indefsvm.solve(K0, y, problem=kind, method="siqclp", tol=1e-7, **kwargs)
    assert res.converged, res.message
    for ref in (pg, accpm):
        assert res.objective <= ref.upper_bound + 1e-9
        assert ref.objective <= res.upper_bound + 1e-9
    assert pg.objective - res.objective <= res.gap + 1e-9


class _FakeTime:
    """The ``time`` module with a ``perf_counter`` that only the test advances."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def __getattr__(self, name):
        return getattr(time, name)


def test_max_time_is_honoured_inside_the_master(monkeypatch):
    """The master polls the deadline between its evaluations and stops at the first one past it.

    Load-independent (issue 22): time is a fake clock that advances one second per evaluation of
    the MKL master and never otherwise, so the deadline falls inside the master whatever the
    machine's load, and what is checked is the status and that the master was interrupted
    (counted by spies), not seconds.
    """
    clock = _FakeTime()
    for module in (api, _monitor, siqclp, _mkl):
        monkeypatch.setattr(module, "time", clock)
    evaluations, late, interrupted = [], [], []
    evaluate, out_of_time = MKLMaster._evaluate, MKLMaster._out_of_time

    def counting_evaluate(self, *args, **kwargs):
        if self.deadline is not None and clock.now > self.deadline:
            late.append(clock.now)  # an evaluation started after the deadline had passed
        evaluations.append(clock.now)
        clock.now += 1.0
        return evaluate(self, *args, **kwargs)

    def spying_out_of_time(self):
        result = out_of_time(self)
        if result:
            interrupted.append(clock.now)
        return result

    monkeypatch.setattr(MKLMaster, "_evaluate", counting_evaluate)
    monkeypatch.setattr(MKLMaster, "_out_of_time", spying_out_of_time)
    K0, y = sigmoid_problem(40, 3)
    with pytest.warns(ConvergenceWarning, match="time limit"):
        res = indefsvm.solve(
            K0, y, method="siqclp", tol=0.0, max_iter=10**7, options={"max_time": 5.5}
        )
    assert res.status == "max_time" and res.gap >= 0
    assert interrupted and interrupted[0] == 6.0  # the first poll past the deadline stops it
    assert len(evaluations) >= 6 and late == []  # no evaluation starts after the deadline


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"master": "mosek"}, "master must be one of"),
        ({"stabilise": "trust"}, "stabilise must be one of"),
        ({"master": "qclp", "stabilise": "proximal"}, "needs master='mkl'"),
        ({"mkl_step": "bfgs"}, "mkl_step must be one of"),
        ({"mkl_svm_tol": 0.0}, "svm_tol"),
        ({"mkl_gap": 2.0}, "mkl_gap"),
        ({"mkl_max_steps": 0}, "mkl_max_steps"),
        ({"prox_weight": -1.0}, "prox_weight"),
        ({"compile": "parametric"}, "pass master='qclp'"),
    ],
)
def test_bad_mkl_options_get_clear_errors(kwargs, match):
    K0, y = sigmoid_problem(8, 6)
    with pytest.raises(ValueError, match=match):
        indefsvm.solve(K0, y, method="siqclp", options=kwargs)


def test_repeated_solves_are_identical():
    K0, y = sigmoid_problem(30, 4)
    runs = [indefsvm.solve(K0, y, method="siqclp", tol=1e-9) for _ in range(2)]
    assert np.array_equal(runs[0].alpha, runs[1].alpha)
    assert np.array_equal(runs[0].history["gap"], runs[1].history["gap"])
    assert runs[0].info["n_kernel_bounds"] == runs[1].info["n_kernel_bounds"]
