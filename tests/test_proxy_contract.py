"""ProxyKernelOperator products and kernels against dense eigh, for every kind of state.

Written for mutants that survived the first mutation run of ``indefsvm/proxy.py``
(docs/mutation.md): states that carry the eigenpairs in ``[0, eps)`` of the paper's smoothing,
kernels larger than one 512-row block, the PSD shortcut, and the documented errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import sigmoid_problem
from reference import psd_part

from indefsvm.problems import make_problem
from indefsvm.proxy import ProxyKernelOperator


def _dense_kstar(K0, u, sigma):
    return psd_part(K0 + sigma * np.outer(u, u))


@pytest.mark.parametrize("smoothing", [0.0, 0.3, 1.0])
def test_products_of_a_smoothed_state_use_only_negative_eigenpairs(smoothing):
    """A state evaluated with smoothing also holds eigenpairs in [0, eps): K*, its products and
    the row projector must still remove the negative part only (the paper policy's final
    kernel is built from such a state)."""
    K0, y = sigmoid_problem(18, 31)
    sigma = 0.5
    op = ProxyKernelOperator(K0, sigma)
    u = y * np.random.default_rng(0).uniform(0.0, 1.0, size=18)
    state = op.state(u, smoothing=smoothing)
    # only the eigenpairs below the threshold are computed (documented ProxyState contents)
    assert np.all(state.low_values < smoothing)
    assert state.low_vectors.shape == (18, state.low_values.size)
    if smoothing > 0:
        lam = state.low_values
        assert np.any((lam >= 0) & (lam < smoothing))  # the case is exercised
    K = _dense_kstar(K0, u, sigma)
    scale = np.abs(K).max()
    assert np.allclose(op.kernel(state), K, atol=1e-10 * scale)
    v = np.random.default_rng(1).normal(size=18)
    assert np.allclose(op.matvec(state, v), K @ v, atol=1e-10 * scale)
    M = K0 + sigma * np.outer(u, u)
    assert np.allclose(op.project_rows(state, M), K, atol=1e-10 * scale)
    assert np.allclose(state.kstar_u, K @ u, atol=1e-10 * scale)


def test_paper_policy_with_smoothing_returns_the_exact_proxy_kernel():
    K0, y = sigmoid_problem(16, 32)
    problem = make_problem("svc", K0, y, C=1.0, rho=0.5)
    from indefsvm.api import solve_problem

    with pytest.warns(Warning):
        res = solve_problem(problem, step="paper", step_size=1.0, smoothing=0.5, max_iter=20)
    K = _dense_kstar(K0, y * res.alpha, 0.5)
    assert np.allclose(res.kernel, K, atol=1e-10 * np.abs(K).max())


def test_kernel_larger_than_one_block_matches_dense_and_is_exactly_symmetric():
    """``kernel`` fills the upper block triangle in 512-row blocks and mirrors it: the result is
    exactly symmetric, as documented (it was not: the diagonal blocks were transposed whole)."""
    rng = np.random.default_rng(2)
    n = 700
    X = rng.normal(size=(n, 3))
    K0 = np.tanh(0.5 * X @ X.T - 0.3)
    u = rng.uniform(-0.2, 0.2, size=n)
    op = ProxyKernelOperator(K0, 0.25)
    state = op.state(u)  # default: no smoothing, the negative eigenpairs only
    assert state.low_values.size > 0 and np.all(state.low_values < 0)
    K = op.kernel(state)
    ref = _dense_kstar(K0, u, 0.25)
    assert np.array_equal(K, K.T)
    assert np.allclose(K, ref, atol=1e-9 * np.abs(ref).max())
    # the same for a vector rho (K* = Ds^-1 (.)_+ Ds^-1) and without negative eigenvalues
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    problem = make_problem("svc", K0, y, rho=np.linspace(0.2, 5.0, n))
    Kv = problem.proxy_kernel(np.full(n, 0.1))
    assert np.array_equal(Kv, Kv.T)
    op_psd = ProxyKernelOperator(X @ X.T + np.eye(n), 0.25)
    Kp = op_psd.kernel(op_psd.state(u))
    assert np.array_equal(Kp, Kp.T)
    assert np.allclose(Kp, X @ X.T + np.eye(n) + 0.25 * np.outer(u, u), atol=1e-12)


def test_psd_kernel_rows_are_copied_and_smoothing_uses_the_eigenbasis():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(14, 3))
    # PSD, rank 3 plus 1e-3 I: M = K0 + sigma uu' has many eigenvalues in [0, eps)
    K0 = X @ X.T / 3.0 + 1e-3 * np.eye(14)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    problem = make_problem("svc", K0, y, C=1.0, rho=0.5)
    assert problem.operator.is_psd
    alpha = problem.project(np.full(14, 0.5))
    state = problem.state(alpha)
    # the PSD shortcut: no eigenpairs at all
    assert state.low_values.shape == (0,) and state.low_vectors.shape == (14, 0)
    R = rng.normal(size=(4, 14))
    rows = problem.out_of_sample_rows(alpha, R, state=state)
    assert np.array_equal(rows, R) and rows.dtype == np.float64
    rows[0, 0] += 1.0  # a copy, not a view of the caller's array
    assert rows[0, 0] != R[0, 0]
    # with smoothing the PSD shortcut is not taken: the smoothed gradient uses the eigenpairs
    # of M in [0, eps), which a PSD K0 of low rank has (compare: dense eigh)
    eps = 0.5
    ev = problem.evaluate(alpha, smoothing=eps)
    u = y * alpha
    lam, V = np.linalg.eigh(K0 + np.outer(u, u) / 2.0)
    weight = np.clip(lam / eps, 0.0, 1.0) * lam
    k_eps_u = V @ (weight * (V.T @ u))
    assert np.allclose(ev.gradient, 1.0 - y * k_eps_u, atol=1e-10)
    assert np.max(np.abs(ev.gradient - problem.evaluate(alpha).gradient)) > 1e-3


def test_smoothing_is_refused_without_an_eigenbasis():
    X = np.random.default_rng(4).normal(size=(8, 2))
    K0 = X @ X.T
    y = np.array([1.0, -1.0] * 4)
    problem = make_problem("perturb", K0, y, C=1.0, rho=1.0)
    msg = r"^smoothing needs the eigenbasis; it is not used with a PSD kernel\.$"
    with pytest.raises(ValueError, match=msg):
        problem.evaluate(np.full(8, 0.1), smoothing=0.05)
    # the Gershgorin bound (max absolute row sum) stands in for max |lambda| without eigh
    op = problem.operator
    assert op.spectral_scale() == pytest.approx(np.max(np.abs(K0).sum(axis=1)), rel=1e-14)
    assert op.spectral_scale() >= np.max(np.abs(np.linalg.eigvalsh(K0)))


def test_precomputed_eigendecomposition_gives_the_same_evaluation():
    from indefsvm.problems import ClassificationProblem

    K0, y = sigmoid_problem(15, 33)
    alpha = np.full(15, 0.2)
    plain = ClassificationProblem(K0, y, C=1.0, rho=0.5)
    shared = ClassificationProblem(K0, y, C=1.0, rho=0.5, eigh=np.linalg.eigh(K0))
    a, b = plain.evaluate(alpha), shared.evaluate(alpha)
    assert b.objective == pytest.approx(a.objective, rel=1e-12)
    assert np.allclose(b.gradient, a.gradient, atol=1e-12)
    assert shared.operator.n_negative_k0 == np.count_nonzero(np.linalg.eigvalsh(K0) < 0)
