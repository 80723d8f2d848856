"""The problem contract: every registered problem provides it, and solvers use nothing else."""

from __future__ import annotations

import numpy as np
import pytest

import indefsvm
from indefsvm.proxy.protocols import DenseProblem, Problem


def _data(n=24, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return X, np.tanh(0.5 * X @ X.T - 0.2), np.sign(X[:, 0] + 0.1)


def _problem(kind):
    X, K, y = _data()
    if kind == "perturb":
        return indefsvm.make_problem(kind, X @ X.T, y)
    if kind == "oneclass":
        return indefsvm.make_problem(kind, K)
    if kind == "svr":
        return indefsvm.make_problem(kind, K, X[:, 1])
    return indefsvm.make_problem(kind, K, y)


def _members(protocol):
    names = set()
    for klass in protocol.__mro__:
        if klass in (object,) or klass.__name__ in ("Protocol", "Generic"):
            continue
        names |= {n for n in vars(klass) if not n.startswith("_")}
        names |= set(getattr(klass, "__annotations__", {}))
    return names


class Restricted:
    """Forwards only the members of a protocol; anything else is a contract violation."""

    def __init__(self, problem, protocol):
        self._problem = problem
        self._allowed = _members(protocol)

    def __getattr__(self, name):
        if name not in self._allowed:
            raise AssertionError(f"a solver used {name!r}, which is not in the problem contract")
        return getattr(self._problem, name)


@pytest.mark.parametrize("kind", list(indefsvm.PROBLEM_TYPES))
def test_registered_problems_satisfy_the_contract(kind):
    problem = _problem(kind)
    assert isinstance(problem, Problem) and isinstance(problem, DenseProblem)


@pytest.mark.parametrize("kind", list(indefsvm.PROBLEM_TYPES))
def test_pg_and_monitor_use_only_the_problem_contract(kind):
    problem = _problem(kind)
    ref = indefsvm.solve_problem(problem, tol=1e-7)
    res = indefsvm.solve_problem(
        Restricted(problem, Problem), method="pg", tol=1e-7, libsvm_every=5
    )
    assert res.status == "converged"
    assert res.objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("kind", ["svc", "svr", "oneclass"])
def test_bound_for_kernel_is_valid_and_tight_at_the_proxy_kernel(kind):
    problem = _problem(kind)
    res = indefsvm.solve_problem(problem, tol=1e-9)
    rng = np.random.default_rng(1)
    # Any PSD kernel gives a valid bound (weak duality): random PSD kernels near K0.
    K0 = problem.working_kernel
    for _ in range(5):
        B = rng.normal(size=(problem.n, 4))
        d, V = np.linalg.eigh(K0 + 0.1 * B @ B.T)
        K = (V * np.maximum(d, 0)) @ V.T
        assert problem.bound_for_kernel(K, res.alpha) >= res.objective - 1e-9
    # At the proxy kernel of the solution (dense reference: eigh of M) the bound is tight.
    u = problem.u_coef * res.alpha
    d, V = np.linalg.eigh(K0 + np.outer(u, u) / (4 * problem.penalty_rho))
    K_star = (V * np.maximum(d, 0)) @ V.T
    assert problem.bound_for_kernel(K_star, res.alpha) == pytest.approx(
        res.objective, abs=1e-6 * max(1.0, abs(res.objective))
    )


def test_low_rank_problem_needs_only_the_contract():
    # The low-rank problem (one module, indefsvm.proxy.lowrank) plugs into the same solver and
    # monitor
    # through the contract alone, and agrees with the dense problem on an exactly rank-m kernel.
    from indefsvm.linalg.factor import LowRankKernel

    rng = np.random.default_rng(3)
    n, m = 60, 6
    Phi = rng.normal(size=(n, m))
    s = np.array([1.0, 1.0, 1.0, 1.0, -1.0, -1.0])
    y = np.sign(Phi[:, 0] + 0.3 * rng.normal(size=n))
    problem = indefsvm.make_problem("svc", LowRankKernel(Phi, s), y, rho=0.7)
    assert isinstance(problem, Problem)
    res = indefsvm.solve_problem(Restricted(problem, Problem), method="pg", tol=1e-8)
    dense = indefsvm.solve((Phi * s) @ Phi.T, y, rho=0.7, tol=1e-8)
    assert res.status == "converged"
    assert res.objective == pytest.approx(dense.objective, rel=1e-6)


@pytest.mark.parametrize("method", ["accpm", "siqclp"])
def test_cutting_plane_solvers_use_only_the_dense_contract(method):
    problem = _problem("svc")
    ref = indefsvm.solve_problem(problem, tol=1e-6)
    res = indefsvm.solve_problem(
        Restricted(problem, DenseProblem), method=method, tol=1e-6, max_time=120
    )
    assert res.objective == pytest.approx(ref.objective, rel=1e-5, abs=1e-6)
