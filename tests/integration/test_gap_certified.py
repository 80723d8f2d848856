"""The certified gap at EVERY iteration, for every solver and problem (issue 15).

Cases with active box constraints (small C, some alpha at their upper bound), scalar and vector
rho, for pg (both step policies, with and without the paper's smoothing), ACCPM and SIQCLP on
problems svc, svr, oneclass and perturb. The independent reference optimum is the cvxpy SDP of
``tests/reference.py``; every evaluation a solver offers to the monitor is checked:

- a point offered as FEASIBLE (its objective becomes the lower bound) is feasible, and its
  objective is the dense eq. (7) value and does not exceed the optimum;
- every upper bound offered (at any point, feasible or not, and the mixture/LIBSVM bounds) is
  >= the optimum, i.e. each gap bounds the true suboptimality;
- the history's gap is >= 0 and >= the true suboptimality of the best point at every iteration.
"""

from __future__ import annotations

import warnings
from functools import cache

import numpy as np
import pytest
from helpers import sigmoid_problem
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from reference import oneclass_sdp, psd_part, svc_sdp, svr_sdp
from sklearn.exceptions import ConvergenceWarning

from indefsvm.proxy.api import solve_problem
from indefsvm.proxy.problems import make_problem
from indefsvm.proxy.solvers import SolverMonitor

N = 10
C_SMALL = {"svc": 0.15, "perturb": 0.15, "svr": 0.2}
NU = 0.8  # one-class upper bound 1/(nu n) = 1/8: at least eight points, some at the bound
EPS = 0.1
RHO_VECTOR = np.linspace(0.3, 3.0, N)


def _data(kind: str, seed: int = 5):
    K0, y = sigmoid_problem(N, seed)
    if kind == "perturb":
        X = np.random.default_rng(seed).normal(size=(N, 3))
        K0 = X @ X.T / 3.0  # PSD (PerturbSVM)
    if kind == "svr":
        y = np.sin(np.arange(N) / 2.0) + 0.1 * np.random.default_rng(seed).normal(size=N)
    if kind == "oneclass":
        y = None
    return K0, y


def _rho(rho_kind: str):
    return 0.5 if rho_kind == "scalar" else RHO_VECTOR


def _h_sqrt(rho):
    r = np.broadcast_to(np.asarray(rho, dtype=np.float64), (N,))
    return np.outer(r, r) ** 0.25  # sqrt(H) with H_ij = sqrt(rho_i rho_j)


@cache
def reference_optimum(kind: str, rho_kind: str, seed: int = 5, C: float | None = None) -> float:
    """Optimal value by the SDP of tests/reference.py (no package code)."""
    K0, y = _data(kind, seed)
    rho = _rho(rho_kind)
    C = C_SMALL.get(kind) if C is None else C
    if kind in ("svc", "perturb"):
        opt, _ = svc_sdp(K0, y, C, 1.0, H_sqrt=_h_sqrt(rho))
    elif kind == "svr":
        opt, _ = svr_sdp(K0, y, C, EPS, 1.0, H_sqrt=_h_sqrt(rho))
    else:
        opt, _ = oneclass_sdp(K0, NU, 1.0, H_sqrt=_h_sqrt(rho))
    return float(opt)


def dense_objective(kind, K0, y, rho, alpha, C=None):
    """Eq. (7)/(17)/(20)/(24) at alpha with a dense eigh (Theorem 1 and 3; no package code)."""
    r = np.broadcast_to(np.asarray(rho, dtype=np.float64), (N,))
    ds = r**0.25
    u = alpha * (y if kind in ("svc", "perturb") else 1.0)
    us = u / ds
    Ks = psd_part((ds[:, None] * K0) * ds[None, :] + np.outer(us, us) / 4.0)
    K = (Ks / ds[:, None]) / ds[None, :]
    penalty = float(np.sum(np.sqrt(np.outer(r, r)) * (K - K0) ** 2))
    if kind in ("svc", "perturb"):
        lin = float(alpha.sum())
    elif kind == "svr":
        lin = float(y @ alpha) - EPS * float(np.abs(alpha).sum())
    else:
        lin = 0.0
    return lin - 0.5 * float(u @ K @ u) + penalty


def build(kind, rho_kind, seed=5, C=None):
    K0, y = _data(kind, seed)
    rho = _rho(rho_kind)
    C = C_SMALL.get(kind, 1.0) if C is None else C
    if kind == "svr":
        return make_problem("svr", K0, y, C=C, epsilon=EPS, rho=rho), K0, y, rho
    if kind == "oneclass":
        return make_problem("oneclass", K0, nu=NU, rho=rho), K0, y, rho
    return make_problem(kind, K0, y, C=C, rho=rho), K0, y, rho


def assert_feasible(problem, alpha, atol=1e-9):
    scale = max(1.0, float(np.abs(problem.upper).max()))
    assert np.all(alpha >= problem.lower - atol * scale), alpha - problem.lower
    assert np.all(alpha <= problem.upper + atol * scale), problem.upper - alpha
    assert abs(problem.eq_coef @ alpha - problem.eq_rhs) <= atol * scale * problem.n


class CheckingMonitor:
    """Wraps SolverMonitor.offer / offer_upper_bound to check every offered bound and point."""

    def __init__(self, monkeypatch, kind, problem, K0, y, rho, opt):
        self.n_feasible = 0
        self.n_bounds = 0
        self.slack = 1e-6 * max(1.0, abs(opt))
        offer, offer_ub = SolverMonitor.offer, SolverMonitor.offer_upper_bound
        checker = self

        def checked_offer(monitor, evaluation, *, feasible=True):
            if feasible:
                a = evaluation.alpha
                assert_feasible(problem, a)
                f_ref = dense_objective(kind, K0, y, rho, a)
                assert evaluation.objective == pytest.approx(f_ref, rel=1e-9, abs=1e-10)
                assert evaluation.objective <= opt + checker.slack
                # the bound at the same feasible point is above its objective
                assert evaluation.gap >= -checker.slack
                checker.n_feasible += 1
            return offer(monitor, evaluation, feasible=feasible)

        def checked_offer_ub(monitor, value, *, excess=None, error=None):
            assert value >= opt - checker.slack, (value, opt)
            if excess is not None and np.isfinite(excess):
                # the excess over f(0) that certifies is the same bound (issue 22)
                assert monitor.baseline + excess >= opt - checker.slack, (excess, opt)
                assert monitor.baseline + excess == pytest.approx(value, rel=1e-9, abs=1e-9)
            checker.n_bounds += 1
            return offer_ub(monitor, value, excess=excess, error=error)

        monkeypatch.setattr(SolverMonitor, "offer", checked_offer)
        monkeypatch.setattr(SolverMonitor, "offer_upper_bound", checked_offer_ub)


METHODS = {
    "pg-accelerated": ("pg", {}),
    "pg-paper": ("pg", {"step": "paper", "step_size": 1.0}),
    "pg-paper-smoothed": ("pg", {"step": "paper", "step_size": 1.0, "smoothing": 0.05}),
    "accpm": ("accpm", {}),
    "siqclp": ("siqclp", {}),
    "siqclp-algorithm3": ("siqclp", {"stabilise": "none"}),
    "siqclp-simplemkl": ("siqclp", {"mkl_step": "reduced_gradient"}),
    "siqclp-qclp": ("siqclp", {"master": "qclp"}),
}


def run_checked(monkeypatch, kind, rho_kind, method_name, *, seed=5, C=None, opt=None):
    problem, K0, y, rho = build(kind, rho_kind, seed, C)
    if opt is None:
        opt = reference_optimum(kind, rho_kind, seed, C)
    checker = CheckingMonitor(monkeypatch, kind, problem, K0, y, rho, opt)
    method, options = METHODS[method_name]
    paper = options.get("step") == "paper"
    seen = []

    def callback(info):
        # the point reported at every iteration is the best FEASIBLE point so far
        assert_feasible(problem, info["alpha"])
        assert info["gap"] >= 0.0
        assert info["upper_bound"] >= opt - checker.slack
        assert opt - info["objective"] <= info["gap"] + checker.slack
        seen.append(info["iteration"])

    with warnings.catch_warnings():
        # the paper's t/k step is slow: its run may stop at max_iter (checked below)
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve_problem(
            problem,
            method=method,
            tol=1e-7,
            max_iter=150 if paper else 5000,
            libsvm_every=10,
            libsvm_tol=1e-6,
            callback=callback,
            options=options,
        )
    h = res.history
    slack = checker.slack
    assert np.all(h["gap"] >= 0.0)
    assert np.all(h["upper_bound"] >= opt - slack)
    assert np.all(h["best_objective"] <= opt + slack)
    # the certified gap bounds the true suboptimality of the best point at every iteration
    assert np.all(opt - h["best_objective"] <= h["gap"] + slack)
    assert res.upper_bound >= opt - slack and res.objective <= opt + slack
    assert_feasible(problem, res.alpha)
    assert checker.n_feasible >= 1 and checker.n_bounds >= res.n_iter
    if not paper:
        assert res.converged, res.message
        assert res.objective == pytest.approx(opt, abs=20 * slack)
    else:
        assert res.status in ("converged", "max_iter")
    return res, problem


# smoothing needs the eigenbasis, which PerturbSVM does not compute (a documented error, tested
# below): that one combination is left out.
CASES = [
    (method, kind)
    for method in ("pg-accelerated", "pg-paper", "pg-paper-smoothed", "accpm")
    for kind in ("svc", "svr", "oneclass", "perturb")
    if not (method == "pg-paper-smoothed" and kind == "perturb")
]


@pytest.mark.parametrize("rho_kind", ["scalar", "vector"])
@pytest.mark.parametrize(("method_name", "kind"), CASES)
def test_gap_certified_at_every_iteration(monkeypatch, kind, rho_kind, method_name):
    res, problem = run_checked(monkeypatch, kind, rho_kind, method_name)
    if method_name in ("pg-accelerated", "accpm"):
        # the case exercises the box: some alpha at its upper (or, SVR, lower) bound
        # (ACCPM's analytic centers approach the bound from inside: 1e-4 relative)
        width = problem.upper.max()
        at_bound = np.isclose(res.alpha, problem.upper, atol=1e-4 * width) | (
            (problem.lower < 0) & np.isclose(res.alpha, problem.lower, atol=1e-4 * width)
        )
        assert np.any(at_bound), res.alpha


@pytest.mark.parametrize("rho_kind", ["scalar", "vector"])
@pytest.mark.parametrize("kind", ["svc", "svr", "oneclass", "perturb"])
@pytest.mark.parametrize(
    "method_name",
    [
        "siqclp",
        "siqclp-algorithm3",
        "siqclp-simplemkl",
        pytest.param("siqclp-qclp", marks=pytest.mark.slow),
    ],
)
def test_gap_certified_at_every_iteration_siqclp(monkeypatch, kind, rho_kind, method_name):
    """Every SIQCLP master (MKL with or without the proximal term, SimpleMKL's steps, the cvxpy
    QCLP) keeps every bound it offers above the optimum and converges to it."""
    run_checked(monkeypatch, kind, rho_kind, method_name)


def test_smoothed_paper_policy_raises_for_perturb():
    problem, *_ = build("perturb", "scalar")
    with pytest.raises(ValueError, match="smoothing"):
        solve_problem(problem, options={"step": "paper", "smoothing": 0.05}, max_iter=3)


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # each example solves an SDP: no shrinking
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 500),
    C=st.sampled_from([0.02, 0.1, 0.5]),
    method_name=st.sampled_from(["pg-accelerated", "pg-paper", "accpm"]),
)
def test_gap_certified_on_random_small_C_svc(monkeypatch, seed, C, method_name):
    opt = reference_optimum("svc", "scalar", seed, C)
    with monkeypatch.context() as mp:
        run_checked(mp, "svc", "scalar", method_name, seed=seed, C=C, opt=opt)
