"""The proxy-kernel operator's fast paths (issue 14): compiled engine, warm start, z by linearity.

Every fast path is compared with the reference computation on the same input: a fresh operator
(cold start, ``V'u`` formed directly) with the LAPACK ``dlaed4`` engine, and dense ``eigh`` of
``K0 + sigma u u'``.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import sigmoid_problem

import indefsvm
import indefsvm.linalg.rank_one as rank_one_module
from indefsvm.proxy.operators import ProxyKernelOperator


def _reference(K0, sigma, u):
    op = ProxyKernelOperator(K0, sigma)
    op.engine = "lapack"
    return op.state(u)


def _dense_kstar(K0, sigma, u):
    w, V = np.linalg.eigh(K0 + sigma * np.outer(u, u))
    return (V * np.maximum(w, 0)) @ V.T


def test_extrapolated_point_reuses_z_and_matches_reference():
    K0, y = sigmoid_problem(60, 3)
    rng = np.random.default_rng(0)
    op = ProxyKernelOperator(K0, 0.25)
    u1, u2 = y * rng.uniform(0, 1, 60), y * rng.uniform(0, 1, 60)
    op.state(u1)
    op.state(u2)
    beta = 0.7
    u3 = u2 + beta * (u2 - u1)
    st = op.state(u3)
    assert op.n_linear_z == 1
    ref = _reference(K0, 0.25, u3)
    np.testing.assert_allclose(st.z, ref.z, rtol=0, atol=1e-13 * np.abs(ref.z).max())
    np.testing.assert_allclose(st.kstar_u, ref.kstar_u, rtol=0, atol=1e-11)
    np.testing.assert_allclose(st.kstar_u, _dense_kstar(K0, 0.25, u3) @ u3, atol=1e-10)
    assert st.neg_sq_sum == pytest.approx(ref.neg_sq_sum, rel=1e-12)
    # a point that is no combination of the stored ones is computed directly
    op.state(y * rng.uniform(0, 1, 60))
    assert op.n_linear_z == 1


def test_accelerated_pg_forms_every_extrapolated_z_by_linearity(monkeypatch):
    """What a user's solve gets: each iteration evaluates the extrapolated point
    ``y = x_{k+1} + beta (x_{k+1} - x_k)`` in full, and its ``V'u`` must come from the two
    stored products (one n x n pass saved per iteration). Consecutive iterates are nearly
    parallel; a fit on them directly refused all but 1 of 45 at n = 2000."""
    K0, y = sigmoid_problem(150, 5)
    ops = []
    init = ProxyKernelOperator.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        ops.append(self)

    monkeypatch.setattr(ProxyKernelOperator, "__init__", spy)
    res = indefsvm.solve(K0, y, C=1.0, rho=1.0, tol=0.0, max_iter=40, method="pg")
    extrapolated = res.n_evaluations - res.info["n_objective_evaluations"] - res.info["n_restarts"]
    # the full evaluations: the starting point, one restart each, one extrapolated point per
    # other iteration; allow the first iterations (no two stored products yet)
    assert ops[-1].n_linear_z >= extrapolated - 3


def test_warm_started_sequence_matches_cold_reference():
    K0, y = sigmoid_problem(80, 4)
    rng = np.random.default_rng(1)
    op = ProxyKernelOperator(K0, 0.5)
    u = y * rng.uniform(0, 1, 80)
    for _ in range(5):
        u = u + 0.02 * y * rng.standard_normal(80)
        st = op.state(u)
        ref = _reference(K0, 0.5, u)
        np.testing.assert_allclose(st.low_values, ref.low_values, rtol=0, atol=1e-12)
        np.testing.assert_allclose(st.kstar_u, ref.kstar_u, rtol=0, atol=1e-11)
        np.testing.assert_allclose(st.kstar_u, _dense_kstar(K0, 0.5, u) @ u, atol=1e-10)
    if rank_one_module.numba_available():
        warm = op.warm_start
        assert warm.n_calls == 5 and warm.n_sweeps < 5 * warm.n_roots


def test_solve_agrees_between_engines(monkeypatch):
    """The default solver's certified result is the same with the compiled and LAPACK engines."""
    K0, y = sigmoid_problem(70, 6)
    fast = indefsvm.solve(K0, y, C=1.0, rho=0.5, tol=1e-9, max_iter=5000)
    monkeypatch.setattr(rank_one_module, "numba_available", lambda: False)
    slow = indefsvm.solve(K0, y, C=1.0, rho=0.5, tol=1e-9, max_iter=5000)
    assert fast.converged and slow.converged
    assert abs(fast.objective - slow.objective) <= fast.gap + slow.gap + 1e-12 * abs(fast.objective)
    np.testing.assert_allclose(fast.kernel, slow.kernel, atol=1e-5 * np.abs(K0).max())
