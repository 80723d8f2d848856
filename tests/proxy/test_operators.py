"""The proxy kernel of paper 004, Theorem 1 (eq. 5), against dense ``numpy.linalg.eigh``.

``ProxyKernelOperator`` never forms ``M = K0 + sigma u u'`` or ``K* = M_+``; every quantity of
a :class:`~indefsvm.proxy.operators.ProxyState` is compared here with the same quantity computed
from the dense eigendecomposition of ``M`` (``tests/reference.py``: ``psd_part``): the states of
the paper's smoothing and block sizes, the fast paths (warm start, ``V'u`` by linearity,
engines), and ``negative_square_change`` against a 60-digit reference.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import sigmoid_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from mp_reference import DPS
from reference import psd_part

import indefsvm
import indefsvm.linalg.rank_one as rank_one_module
from indefsvm.proxy import operators as proxy
from indefsvm.proxy.operators import ProxyKernelOperator, negative_square_change
from indefsvm.proxy.problems import make_problem


def _random_case(seed: int, n: int, n_negative: int, sigma: float):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    d = np.concatenate([-rng.uniform(0.1, 2.0, n_negative), rng.uniform(0.0, 2.0, n - n_negative)])
    K0 = (Q * d) @ Q.T
    K0 = (K0 + K0.T) / 2
    u = rng.normal(size=n)
    return K0, u, sigma


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 25),
    frac_negative=st.floats(0.0, 1.0),
    log_sigma=st.floats(-3.0, 2.0),
)
def test_state_matches_dense_eigh_of_the_rank_one_update(seed, n, frac_negative, log_sigma):
    """Every field of the state equals its definition evaluated with dense eigh of M."""
    K0, u, sigma = _random_case(seed, n, int(round(frac_negative * n)), 10.0**log_sigma)
    op = ProxyKernelOperator(K0, sigma)
    st_ = op.state(u)
    M = K0 + sigma * np.outer(u, u)
    lam = np.linalg.eigvalsh(M)
    K_star = psd_part(M)  # Theorem 1: the nearest PSD matrix to M in Frobenius norm
    scale = max(1.0, np.abs(lam).max()) * max(1.0, u @ u)
    np.testing.assert_allclose(st_.kstar_u, K_star @ u, atol=1e-9 * scale)
    assert st_.u_kstar_u == pytest.approx(u @ K_star @ u, abs=1e-9 * scale)
    assert st_.u_k0_u == pytest.approx(u @ K0 @ u, abs=1e-9 * scale)
    assert st_.u_norm_sq == pytest.approx(u @ u, rel=1e-12)
    # u' M_- u and ||M - K*||_F^2 = sum of squared negative eigenvalues
    assert st_.u_mneg_u == pytest.approx(u @ (M - K_star) @ u, abs=1e-9 * scale)
    assert st_.neg_sq_sum == pytest.approx(np.sum(np.minimum(lam, 0) ** 2), abs=1e-9 * scale)
    assert np.all(st_.low_values < 0)
    if not np.any(np.abs(lam) < 1e-8 * scale):  # no eigenvalue ambiguous about its sign
        np.testing.assert_allclose(np.sort(st_.low_values), lam[lam < 0], atol=1e-9 * scale)
    # products and the dense kernel
    v = np.random.default_rng(seed + 1).normal(size=n)
    np.testing.assert_allclose(op.matvec(st_, v), K_star @ v, atol=1e-9 * scale * max(1, v @ v))
    K = op.kernel(st_)
    np.testing.assert_allclose(K, K_star, atol=1e-9 * scale)
    assert np.array_equal(K, K.T)
    # K* = P_+ M (theory.md §8): projecting the rows of M onto M's non-negative eigenspace
    np.testing.assert_allclose(op.project_rows(st_, M), K_star, atol=1e-9 * scale)


def test_spectral_scale_and_psd_flag_match_eigh():
    K0, u, sigma = _random_case(1, 12, 4, 0.3)
    op = ProxyKernelOperator(K0, sigma)
    assert op.spectral_scale() == pytest.approx(np.abs(np.linalg.eigvalsh(K0)).max(), rel=1e-12)
    assert not op.is_psd and op.n_negative_k0 == 4
    K_psd = psd_part(K0) + 1e-3 * np.eye(12)
    op_psd = ProxyKernelOperator(K_psd, sigma)
    assert op_psd.is_psd
    st_ = op_psd.state(u)
    # PSD K0: M is PSD for every u, so K* = M and no eigenpair is dropped (paper 004 eq. 22)
    assert st_.low_values.size == 0
    np.testing.assert_allclose(op_psd.kernel(st_), K_psd + sigma * np.outer(u, u), atol=1e-12)


def test_assume_psd_skips_the_eigendecomposition_and_uses_a_gershgorin_scale():
    K0, u, sigma = _random_case(2, 10, 0, 0.5)
    op = ProxyKernelOperator(K0, sigma, assume_psd=True)
    assert op.eigenvalues is None and op.eigenvectors is None
    assert op.spectral_scale() == pytest.approx(np.abs(K0).sum(axis=1).max())
    st_ = op.state(u)
    np.testing.assert_allclose(op.kernel(st_), K0 + sigma * np.outer(u, u), atol=1e-12)


def test_zero_update_gives_the_clipped_kernel():
    """u = 0: K* = (K0)_+, the rho -> infinity kernel (paper 004, Sect. 2.3)."""
    K0, _, sigma = _random_case(3, 15, 6, 1.0)
    op = ProxyKernelOperator(K0, sigma)
    st_ = op.state(np.zeros(15))
    np.testing.assert_allclose(op.kernel(st_), psd_part(K0), atol=1e-12)
    assert st_.neg_sq_sum == pytest.approx(np.sum(np.minimum(np.linalg.eigvalsh(K0), 0) ** 2))


@pytest.mark.parametrize("seed", [0, 1])
def test_objective_state_matches_dense_eigh_and_the_full_state(seed):
    """``objective_state`` (negative eigenvalues only) vs dense eigh of M and the full state."""
    K0, u, sigma = _random_case(seed, 40, 18, 0.25)
    op = ProxyKernelOperator(K0, sigma)
    part = op.objective_state(u)
    lam = np.linalg.eigvalsh(K0 + sigma * np.outer(u, u))
    assert part.low_vectors is None and part.kstar_u is None
    np.testing.assert_allclose(part.neg_sq_sum, np.sum(np.minimum(lam, 0) ** 2), rtol=1e-11)
    np.testing.assert_allclose(part.u_k0_u, u @ K0 @ u, rtol=1e-11, atol=1e-11)
    full = op.state(u)
    np.testing.assert_allclose(part.low_values, full.low_values[full.low_values < 0], atol=1e-12)
    assert part.neg_sq_sum == pytest.approx(full.neg_sq_sum, rel=1e-13)


# ProxyKernelOperator products and kernels against dense eigh, for every kind of state.
#
# Written for mutants that survived the first mutation run of ``indefsvm/proxy/operators.py``
# (docs/mutation.md): states that carry the eigenpairs in ``[0, eps)`` of the paper's smoothing,
# kernels larger than one 512-row block, the PSD shortcut, and the documented errors.


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
    from indefsvm.proxy.api import solve_problem

    with pytest.warns(Warning):
        res = solve_problem(
            problem, options={"step": "paper", "step_size": 1.0, "smoothing": 0.5}, max_iter=20
        )
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
    from indefsvm.proxy.problems import ClassificationProblem

    K0, y = sigmoid_problem(15, 33)
    alpha = np.full(15, 0.2)
    plain = ClassificationProblem(K0, y, C=1.0, rho=0.5)
    shared = ClassificationProblem(K0, y, C=1.0, rho=0.5, eigh=np.linalg.eigh(K0))
    a, b = plain.evaluate(alpha), shared.evaluate(alpha)
    assert b.objective == pytest.approx(a.objective, rel=1e-12)
    assert np.allclose(b.gradient, a.gradient, atol=1e-12)
    assert shared.operator.n_negative_k0 == np.count_nonzero(np.linalg.eigvalsh(K0) < 0)


_EPS = float(np.finfo(np.float64).eps)


def _small_indefinite(n, seed):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    d = np.linspace(-1.0, 2.0, n)
    K0 = (Q * d) @ Q.T
    return (K0 + K0.T) / 2.0


def _evaluate_sequence(op, us):
    """Evaluate the states of ``us`` in order; return the last state and, per state, whether its
    ``V'u`` was formed by linearity (``n_linear_z`` went up by exactly one) or directly."""
    by_linearity = []
    state = None
    for u in us:
        before = op.n_linear_z
        state = op.state(u)
        assert op.n_linear_z - before in (0, 1)
        by_linearity.append(op.n_linear_z == before + 1)
        # whichever way z was formed, it is V'u to a few rounding errors of the combination
        direct = op.eigenvectors.T @ u
        assert np.allclose(state.z, direct, rtol=0, atol=64 * _EPS * np.abs(u).sum())
    return state, by_linearity


def test_z_of_the_extrapolated_point_is_the_combination_of_the_last_two():
    K0 = _small_indefinite(20, 40)
    rng = np.random.default_rng(41)
    op = ProxyKernelOperator(K0, 0.5)
    assert op.n_linear_z == 0
    x0, x1 = rng.uniform(-1, 1, 20), rng.uniform(-1, 1, 20)
    # exactly two stored products are enough
    y = x1 + 0.7 * (x1 - x0)
    state, lin = _evaluate_sequence(op, [x0, x1, y])
    assert lin == [False, False, True] and op.n_linear_z == 1
    assert np.allclose(state.kstar_u, _dense_kstar(K0, y, 0.5) @ y, atol=1e-12)
    # with more history: the last stored u is paired with the one before it
    op.reset_warm_start()
    h = [rng.uniform(-1, 1, 20) for _ in range(3)]
    _, lin = _evaluate_sequence(op, [*h, h[2] + 0.4 * (h[2] - h[1])])
    assert lin == [False, False, False, True] and op.n_linear_z == 2
    # ... or with an older one (searched newest first)
    op.reset_warm_start()
    h = [rng.uniform(-1, 1, 20) for _ in range(4)]
    _, lin = _evaluate_sequence(op, [*h, h[3] - 0.3 * (h[3] - h[0])])
    assert lin == [False, False, False, False, True] and op.n_linear_z == 3


def test_z_by_linearity_skips_parallel_pairs_and_keeps_six_products():
    K0 = _small_indefinite(12, 42)
    rng = np.random.default_rng(43)
    op = ProxyKernelOperator(K0, 0.5)
    h0, h1 = rng.uniform(-1, 1, 12), rng.uniform(-1, 1, 12)
    h2 = 2.0 * h1  # a combination (2 h1 + 0 h0): formed by linearity
    # h2 was formed by linearity, so it is no basis; h1 and h0 are
    u = h2 + 0.3 * (h2 - h0)
    _, lin = _evaluate_sequence(op, [h0, h1, h2, u])
    assert lin == [False, False, True, True] and op.n_linear_z == 2
    # the newest pair of bases (h4, h3) is nearly parallel (h4 is -3 h3 up to 1e-6, too far
    # from span(h3, h0) to be combined), so the search goes on to (h4, h0)
    op.reset_warm_start()
    h = [rng.uniform(-1, 1, 12) for _ in range(4)]
    h.append(-3.0 * h[3] + 1e-6 * rng.uniform(-1, 1, 12))
    _, lin = _evaluate_sequence(op, [h[0], h[3], h[4], h[4] + 0.5 * (h[4] - h[0])])
    assert lin == [False, False, False, True] and op.n_linear_z == 3
    # only the six most recent products are kept: a combination of the newest and the seventh
    # newest is formed directly
    op.reset_warm_start()
    assert op.n_linear_z == 3  # a counter over the operator's life, not reset
    h = [rng.uniform(-1, 1, 12) for _ in range(7)]
    _, lin = _evaluate_sequence(op, [*h, h[6] + 0.5 * (h[6] - h[0])])
    assert lin == [False] * 8 and op.n_linear_z == 3
    # ... and of the newest and the sixth newest by linearity
    op.reset_warm_start()
    _, lin = _evaluate_sequence(op, [*h, h[6] + 0.5 * (h[6] - h[1])])
    assert lin == [False] * 7 + [True] and op.n_linear_z == 4
    # a point that is no combination of the stored ones is formed directly
    _, lin = _evaluate_sequence(op, [rng.uniform(-1, 1, 12)])
    assert lin == [False]


def test_z_of_zero_after_stored_products_is_formed_directly():
    """u = 0 is the combination 0 u1 + 0 u2 of anything (a start at alpha = 0): its product is
    the exact zero vector, formed directly (this once divided by ||u|| = 0)."""
    K0 = _small_indefinite(8, 51)
    rng = np.random.default_rng(52)
    op = ProxyKernelOperator(K0, 0.5)
    state, lin = _evaluate_sequence(op, [rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8), np.zeros(8)])
    assert lin == [False, False, False]
    assert np.array_equal(state.z, np.zeros(8)) and np.array_equal(state.kstar_u, np.zeros(8))


def test_z_by_linearity_refuses_combinations_with_cancellation():
    """Two nearly equal stored points with a tiny difference: u = u1 + c (u1 - u2) with a huge
    c fits to rounding, but z1 and z2 carry rounding errors that c would multiply (ACCPM's
    points did this: errors of 1e-6 in V'u). Such a u is formed directly."""
    K0 = _small_indefinite(12, 49)
    rng = np.random.default_rng(50)
    op = ProxyKernelOperator(K0, 0.5)
    u1 = rng.uniform(-1, 1, 12)
    u2 = u1 + 1e-9 * rng.uniform(-1, 1, 12)
    u = u1 + 1e6 * (u1 - u2)  # |a| ||u1|| + |b| ||u2|| is about 2e6 ||u||
    _, lin = _evaluate_sequence(op, [u2, u1, u])
    assert lin == [False, False, False]
    # the same step with a moderate coefficient (|a| ||u1|| + |b| ||u2|| < 4 ||u||) is combined
    u3 = rng.uniform(-1, 1, 12)
    _, lin = _evaluate_sequence(op, [u3, u3 + 1.5 * (u3 - u)])
    assert lin == [False, True]


@pytest.mark.parametrize("scale", [1.0, 2.0**10, 2.0**-10])
def test_z_by_linearity_acceptance_boundary(scale):
    """The acceptance rule at its edges: u1 = 2 (e0 + e2), u2 = 4 (e1 + e3) and
    u = (1, 1, 1 + m1 eps, 1 + m2 eps, t) (all times ``scale``, a power of two). The least-squares
    fit is a = 1/2 + m1 eps / 4, b = 1/4 + m2 eps / 8 with residual norm
    sqrt((m1 eps)^2 / 2 + (m2 eps)^2 / 2 + t^2), accepted while it is at most
    8 eps (|a| ||u1|| + |b| ||u2||) = 8 sqrt(2) eps (2 + ...): an offset of up to 32 eps in one
    entry (31 accepted, 33 refused) or an entry outside span(u1, u2) up to 16 sqrt(2) eps."""
    K0 = _small_indefinite(5, 44)
    u1 = scale * 2.0 * np.array([1.0, 0.0, 1.0, 0.0, 0.0])
    u2 = scale * 4.0 * np.array([0.0, 1.0, 0.0, 1.0, 0.0])
    cases = [
        ((0, 0, 0.0), True),
        ((31, 0, 0.0), True),
        ((33, 0, 0.0), False),
        ((0, 31, 0.0), True),
        ((0, 33, 0.0), False),
        ((0, 0, 22 * _EPS), True),
        ((0, 0, 23 * _EPS), False),
    ]
    for (m1, m2, last), accepted in cases:
        u = scale * np.array([1.0, 1.0, 1.0 + m1 * _EPS, 1.0 + m2 * _EPS, last])
        op = ProxyKernelOperator(K0, 0.5)
        _, lin = _evaluate_sequence(op, [u2, u1, u])
        assert lin == [False, False, accepted], (m1, m2, last)


def test_z_by_linearity_accepts_extrapolations_of_nearly_parallel_iterates():
    """Consecutive iterates of a solver differ by a small step, so u1 and u2 are nearly parallel
    and a fit on (u1, u2) is ill-conditioned: its coefficients were wrong by ~1e-13 and the
    extrapolated points of a real solve were refused. Here y = x1 + beta (x1 - x0) with
    ||x1 - x0|| = 1e-4 ||x0|| and entries where x1 is 0 (a bound), as in pg."""
    n = 40
    K0 = _small_indefinite(n, 47)
    rng = np.random.default_rng(48)
    op = ProxyKernelOperator(K0, 0.5)
    x0 = rng.uniform(0.1, 1.0, n)
    x1 = x0 + 1e-4 * rng.uniform(-1, 1, n)
    x1[:5] = 0.0
    x0[:5] = 1e-5 * rng.uniform(0.1, 1.0, 5)
    for beta in (0.3, 0.7, 0.95):
        y = x1 + beta * (x1 - x0)
        op.reset_warm_start()
        state, lin = _evaluate_sequence(op, [x0, x1, y])
        assert lin == [False, False, True], beta
        assert np.allclose(state.kstar_u, _dense_kstar(K0, y, 0.5) @ y, atol=1e-12)


def test_state_passes_the_operators_engine_settings(monkeypatch):
    import indefsvm.proxy.operators as proxy_module

    K0 = _small_indefinite(10, 45)
    u = np.random.default_rng(46).uniform(-1, 1, 10)
    reference = ProxyKernelOperator(K0, 0.5).state(u)
    seen = []
    real = proxy_module.rank_one_eigh

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(proxy_module, "rank_one_eigh", spy)
    op = ProxyKernelOperator(K0, 0.5)
    op.engine_threads = 2
    op.engine = "lapack"
    state = op.state(u, smoothing=0.25)
    (kw,) = seen
    assert kw["n_threads"] == 2 and kw["engine"] == "lapack" and kw["warm_start"] is op.warm_start
    assert kw["which"] == "below" and kw["upper"] == 0.25
    assert np.allclose(state.kstar_u, reference.kstar_u, rtol=0, atol=1e-13)


def test_products_run_under_the_documented_blas_thread_limit(monkeypatch):
    """``state`` and ``matvec`` limit BLAS to ``GEMV_BLAS_THREADS`` threads (threadpoolctl);
    ``None`` leaves BLAS alone."""
    import indefsvm.proxy.operators as proxy_module

    calls = []

    class FakeController:
        def limit(self, **kwargs):
            import contextlib

            calls.append(kwargs)
            return contextlib.nullcontext()

    monkeypatch.setattr(proxy_module, "_blas_controller", lambda: FakeController())
    K0 = _small_indefinite(8, 47)
    op = ProxyKernelOperator(K0, 0.5)
    u = np.random.default_rng(48).uniform(-1, 1, 8)
    state = op.state(u)
    op.matvec(state, u)
    assert calls == [{"limits": 1, "user_api": "blas"}] * 2
    monkeypatch.setattr(proxy_module, "GEMV_BLAS_THREADS", None)
    op.matvec(state, u)
    assert len(calls) == 2
    # the real controller limits the BLAS pools (when threadpoolctl sees one)
    monkeypatch.undo()
    from threadpoolctl import threadpool_info

    with proxy_module._gemv_threads():
        blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert all(p["num_threads"] == 1 for p in blas)


def test_exact_zero_eigenvalue_keeps_the_psd_shortcut():
    """A PSD K0 with an eigenvalue exactly 0 has no negative eigenvalue: the PSD shortcut
    (no eigenpairs, ``z`` None) is taken and K* = K0 + sigma u u'."""
    K0 = np.diag([0.0, 1.0, 2.0])
    op = ProxyKernelOperator(K0, 0.5)
    assert op.n_negative_k0 == 0 and op.is_psd
    u = np.array([1.0, -2.0, 0.5])
    state = op.state(u)
    assert state.z is None and state.low_values.size == 0
    assert np.allclose(op.kernel(state), K0 + 0.5 * np.outer(u, u), rtol=0, atol=1e-15)
    # rows given in another dtype come back as float64 copies
    R = np.ones((2, 3), dtype=np.float32)
    rows = op.project_rows(state, R)
    assert rows.dtype == np.float64 and np.array_equal(rows, R)


def test_row_projector_keeps_the_null_eigenspace_of_m():
    """``P_+`` projects on M's NON-NEGATIVE eigenspace (theory.md §8): an eigenvalue exactly 0 (here
    a deflated pole of K0, reported in a smoothed state's ``[0, eps)`` eigenpairs) is kept."""
    K0 = np.diag([-1.0, 0.0, 1.0, 2.0])
    u = np.array([1.0, 0.0, 1.0, 0.0])  # orthogonal to e_1: (0, e_1) is an eigenpair of M
    op = ProxyKernelOperator(K0, 0.5)
    state = op.state(u, smoothing=0.5)
    assert 0.0 in state.low_values.tolist()
    R = np.array([[0.0, 1.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]])
    M = K0 + 0.5 * np.outer(u, u)
    w, V = np.linalg.eigh(M)
    P = V[:, w >= -1e-12] @ V[:, w >= -1e-12].T
    assert np.allclose(op.project_rows(state, R), R @ P, atol=1e-14)
    assert np.array_equal(op.project_rows(state, R[:1]), R[:1])


def test_default_engine_threads_follow_the_affinity_and_the_thread_variables(monkeypatch):
    """The cores this process may use, lowered (never raised) by a positive integer in
    ``OMP_NUM_THREADS`` or ``NUMBA_NUM_THREADS``; anything else in them is ignored."""
    import os

    import indefsvm.proxy.operators as proxy_module

    cores = {"n": 4}
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores["n"])))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    threads = proxy_module._default_engine_threads
    assert threads() == 4
    cases = [
        ({"OMP_NUM_THREADS": "2"}, 2),
        ({"NUMBA_NUM_THREADS": "3"}, 3),
        ({"OMP_NUM_THREADS": "3", "NUMBA_NUM_THREADS": "2"}, 2),
        ({"OMP_NUM_THREADS": "2", "NUMBA_NUM_THREADS": "3"}, 2),
        ({"OMP_NUM_THREADS": "8"}, 4),  # never more than the cores
        ({"OMP_NUM_THREADS": " 1 "}, 1),  # surrounding blanks are allowed
        ({"OMP_NUM_THREADS": "0"}, 4),  # not positive: ignored
        ({"OMP_NUM_THREADS": "-2"}, 4),
        ({"OMP_NUM_THREADS": "two"}, 4),
        ({"OMP_NUM_THREADS": ""}, 4),
    ]
    for env, expected in cases:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert threads() == expected, env
        for name in env:
            monkeypatch.delenv(name)
    cores["n"] = 1
    assert threads() == 1
    cores["n"] = 0  # an empty affinity set still gives one thread
    assert threads() == 1
    # without sched_getaffinity (not Linux): os.cpu_count(), 1 when it is unknown
    monkeypatch.delattr(os, "sched_getaffinity")
    count = {"n": 3}
    monkeypatch.setattr(os, "cpu_count", lambda: count["n"])
    assert threads() == 3
    monkeypatch.setenv("NUMBA_NUM_THREADS", "2")
    assert threads() == 2
    monkeypatch.delenv("NUMBA_NUM_THREADS")
    count["n"] = None
    assert threads() == 1
    # a new operator takes the engine threads of config_context (no module override: 0.2.0)
    from indefsvm.threads import config_context, usable_cores

    assert not hasattr(proxy_module, "ENGINE_THREADS")
    with config_context(n_threads={"engine": 3}):
        assert ProxyKernelOperator(np.diag([-1.0, 1.0]), 0.5).engine_threads == min(
            3, usable_cores()
        )


def test_objective_state_holds_what_the_objective_needs(monkeypatch):
    """``objective_state``: ``||u||^2``, ``u'K0u``, the negative eigenvalues of M (dense eigh)
    and their squared sum; no eigenvectors, no ``K*u``, NaN for what it does not compute. Its
    ``V'u`` is the one ``state`` at the same ``u`` reuses."""
    import indefsvm.proxy.operators as proxy_module

    K0 = _small_indefinite(14, 53)
    rng = np.random.default_rng(54)
    u = rng.uniform(-1, 1, 14)
    seen = []
    real = proxy_module.rank_one_eigvals_below

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(proxy_module, "rank_one_eigvals_below", spy)
    op = ProxyKernelOperator(K0, 0.5)
    op.engine_threads = 2
    op.engine = "lapack"
    part = op.objective_state(u)
    (kw,) = seen
    assert kw == {"upper": 0.0, "n_threads": 2, "engine": "lapack", "warm_start": op.warm_start}
    assert kw["warm_start"] is op.warm_start
    w = np.linalg.eigvalsh(K0 + 0.5 * np.outer(u, u))
    assert part.u is u
    np.testing.assert_allclose(part.z, op.eigenvectors.T @ u, rtol=0, atol=1e-14)
    np.testing.assert_allclose(part.low_values, w[w < 0], rtol=0, atol=1e-13)
    assert part.low_vectors is None and part.kstar_u is None
    assert np.isnan(part.u_kstar_u) and np.isnan(part.u_mneg_u)
    assert part.u_norm_sq == pytest.approx(u @ u, rel=1e-15)
    assert part.u_k0_u == pytest.approx(u @ K0 @ u, rel=1e-13)
    assert part.neg_sq_sum == pytest.approx(np.sum(w[w < 0] ** 2), rel=1e-13)
    assert isinstance(part.neg_sq_sum, float) and isinstance(part.u_k0_u, float)
    full = op.state(u)
    assert full.z is part.z and op.n_linear_z == 0 and len(op._z_history) == 1
    assert part.neg_sq_sum == pytest.approx(full.neg_sq_sum, rel=1e-13)
    # the PSD shortcut: no eigenvalue work at all, u'K0u formed directly
    seen.clear()
    psd = ProxyKernelOperator(np.diag([0.5, 1.0, 2.0]), 0.5)
    v = np.array([1.0, -2.0, 0.5])
    part = psd.objective_state(v)
    assert not seen and part.z is None and part.low_values.shape == (0,)
    assert part.u_k0_u == 0.5 + 4.0 + 0.5 and part.u_norm_sq == 5.25 and part.neg_sq_sum == 0.0
    assert part.low_vectors is None and part.kstar_u is None and np.isnan(part.u_kstar_u)


def test_z_of_the_last_u_is_reused():
    """``state``/``objective_state`` at the ``u`` of the previous evaluation (the same array or
    an equal copy) reuse its ``V'u``: no product, nothing added to the history."""
    K0 = _small_indefinite(9, 55)
    rng = np.random.default_rng(56)
    op = ProxyKernelOperator(K0, 0.5)
    u0, u = rng.uniform(-1, 1, 9), rng.uniform(-1, 1, 9)
    op.state(u0)
    first = op.state(u)
    assert op.state(u).z is first.z and op.objective_state(u.copy()).z is first.z
    assert len(op._z_history) == 2 and op.n_linear_z == 0
    # an equal u that is no longer the last one is formed again (here by linearity: 0 u + 1 u0)
    op.state(u0)
    assert len(op._z_history) == 3 and op.n_linear_z == 1
    # a different u right after is not taken for the last one
    v = u.copy()
    v[3] += 1e-3
    st = op.state(v)
    np.testing.assert_allclose(st.z, op.eigenvectors.T @ v, rtol=0, atol=1e-14)


def _reference_linearity(history, u, limit=4.0):
    """The documented rule of ``_z_by_linearity`` by least squares (numpy.linalg.lstsq): the
    newest stored ``u1`` with each older ``u2`` (newest first); accepted when the residual norm
    is at most ``8 eps (|a| ||u1|| + |b| ||u2||)`` and the error bound
    ``E = (|a| ||u1|| E1 + |b| ||u2|| E2) / ||u||`` at most 4. Returns E or None."""
    if len(history) < 2 or not np.linalg.norm(u) > 0:
        return None
    u1, e1 = history[-1]
    for u2, e2 in reversed(history[:-1]):
        A = np.column_stack([u1, u2])
        if np.linalg.cond(A) > 1e7:
            continue
        (a, b), *_ = np.linalg.lstsq(A, u, rcond=None)
        w1, w2 = abs(a) * np.linalg.norm(u1), abs(b) * np.linalg.norm(u2)
        error = (w1 * e1 + w2 * e2) / np.linalg.norm(u)
        residual = np.linalg.norm(u - a * u1 - b * u2)
        if error <= limit and residual <= 8 * _EPS * (w1 + w2):
            assert abs(error - limit) > 1e-3 * limit  # no case at the edge
            return error
    return None


@pytest.mark.parametrize("scale", [1.0, 8.0, 0.125])
def test_z_by_linearity_error_budget(scale):
    """Every stored ``V'u`` carries its error bound (1 when formed directly, ``E`` of the
    combination otherwise, relative to ``||u||``), and a combination whose bound exceeds 4 is
    formed directly: checked against the documented rule evaluated by least squares, on single
    extrapolations near the bound and on chains of combinations of combinations."""
    K0 = _small_indefinite(6, 57)
    e = np.eye(6)
    rng = np.random.default_rng(58)
    x0 = rng.uniform(0.2, 1.0, 6)
    x1 = x0 + 1e-3 * rng.uniform(-1, 1, 6)  # nearly parallel, as consecutive iterates
    y = x1 + 0.9 * (x1 - x0)  # E about 2.8
    w = y + 0.9 * (y - x1)  # from (y, x1): E about 1.9 * 2.8 + 0.9; from (y, x0): about 4.4
    v0, v1 = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
    g = v1 + 0.5 * (v1 - v0)
    sequences = [
        # u1 = e0, u2 = e0 + t e1, u = u1 + c (u1 - u2): E = 3.93, 4.08, 4.91, 3.96
        ([e[0] + 0.5 * e[1], e[0], e[0] - 1.25 * e[1]], [False, False, True]),
        ([e[0] + 0.5 * e[1], e[0], e[0] - 1.5 * e[1]], [False, False, False]),
        ([e[0] + 0.1 * e[1], e[0], e[0] - 0.2 * e[1]], [False, False, False]),
        ([e[0] + 0.1 * e[1], e[0], e[0] - 0.15 * e[1]], [False, False, True]),
        # a chain through nearly parallel iterates: w is refused with y's bound (accepted
        # were y's bound 1), and the next extrapolation pairs w (direct) with y (E about 2.8)
        ([x0, x1, y, w, w + 0.3 * (w - y)], [False, False, True, False, True]),
        # the newest pair (c, b) exceeds the bound (b is close to c: u = -9 c + 10 b), so the
        # search goes on to the older pair (c, a), which fits with u = c + a
        ([e[1], e[0] + 0.1 * e[1], e[0], e[0] + e[1]], [False, False, True, True]),
        # chains of well-separated points: bounds below 4 multiply along the chain
        ([v0, v1, g, g + 0.5 * (g - v1), g + 0.5 * (g - v1) + 0.5 * (g - v1)], None),
    ]
    for us, expected in sequences:
        us = [scale * np.asarray(u, dtype=float) for u in us]
        op = ProxyKernelOperator(K0, 0.5)
        reference = []  # (u, bound) as documented
        lin = []
        for u in us:
            before = op.n_linear_z
            state = op.state(u)
            bound = _reference_linearity(reference, u)
            lin.append(op.n_linear_z == before + 1)
            assert lin[-1] == (bound is not None)
            stored_u, stored_z, stored_bound = op._z_history[-1]
            assert stored_u is u and stored_z is state.z
            assert stored_bound == pytest.approx(1.0 if bound is None else bound, rel=1e-9)
            direct = op.eigenvectors.T @ u
            gamma = 6 * _EPS * np.linalg.norm(u)  # rounding of V'u formed directly (n = 6)
            assert np.linalg.norm(state.z - direct) <= 4 * stored_bound * gamma + gamma
            reference.append((u, 1.0 if bound is None else bound))
        if expected is not None:
            assert lin == expected, lin
        else:
            assert lin[2:] == [True, True, True]


# The proxy-kernel operator's fast paths (issue 14): compiled engine, warm start, z by linearity.
#
# Every fast path is compared with the reference computation on the same input: a fresh operator
# (cold start, ``V'u`` formed directly) with the LAPACK ``dlaed4`` engine, and dense ``eigh`` of
# ``K0 + sigma u u'``.


def _reference(K0, sigma, u):
    op = ProxyKernelOperator(K0, sigma)
    op.engine = "lapack"
    return op.state(u)


def _dense_proxy_kernel(K0, sigma, u):
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
    np.testing.assert_allclose(st.kstar_u, _dense_proxy_kernel(K0, 0.25, u3) @ u3, atol=1e-10)
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
        np.testing.assert_allclose(st.kstar_u, _dense_proxy_kernel(K0, 0.5, u) @ u, atol=1e-10)
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


# negative_square_change against a 60-digit mpmath reference.


mp = pytest.importorskip("mpmath")


def _random_update(seed: int, n: int, spread: float):
    rng = np.random.default_rng(seed)
    d = np.sort(rng.normal(size=n) * spread)
    d[n // 3] = d[n // 3 - 1]  # a repeated pole
    z = rng.normal(size=n)
    z[n // 2] = 1e-12  # a nearly deflated component
    return d, z


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
@pytest.mark.parametrize(
    ("seed", "spread", "sigma"),
    [(0, 1.0, 0.3), (1, 1e5, 0.25), (2, 1.0, 2.5e-14), (3, 1e3, 10.0), (4, 1e6, 1e-3)],
)
def test_negative_square_change_matches_mpmath(monkeypatch, seed, spread, sigma, compiled):
    """``sum min(0, lambda)^2 - sum min(0, d)^2`` of ``diag(d) + sigma z z'`` to its bound."""
    if not compiled:
        monkeypatch.setattr(proxy, "_compiled_refinement", lambda: None)
    elif proxy._compiled_refinement() is None:
        pytest.skip("numba is not available")
    d, z = _random_update(seed, 9, spread)
    lam = np.linalg.eigvalsh(np.diag(d) + sigma * np.outer(z, z))
    # scale 0: every root is refined (the solvers refine those that matter for their scale)
    change, error = negative_square_change(d, z, sigma, lam[lam < 0], scale=0.0)
    ref = _mp_change(d, z, sigma)
    assert abs(change - ref) <= error  # the error bound holds
    # and the change is accurate relative to ITSELF, not to sum d_i^2 (the plain difference
    # of the two sums is not: it carries eps * sum d_i^2)
    assert abs(change - ref) <= 1e-12 * abs(ref) + 1e-300, (change, ref)


def test_k0_eigenvalues_of_the_dense_operator_on_both_paths():
    """The working K0's spectrum, as the spectral rho scale reads it: from the eigendecomposition
    the operator keeps, or (PSD-only path, PerturbSVC) computed once and cached."""
    rng = np.random.default_rng(4)
    A = rng.standard_normal((7, 7))
    K_indefinite = (A + A.T) / 2
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0])
    problem = make_problem("svc", K_indefinite, y, C=1.0, rho=1.0)
    np.testing.assert_allclose(
        problem.operator.k0_eigenvalues(), np.linalg.eigvalsh(K_indefinite), atol=1e-12
    )
    K_psd = A @ A.T
    perturb = make_problem("perturb", K_psd, y, C=1.0, rho=1.0)
    assert perturb.operator.eigenvalues is None  # the PSD-only path keeps no decomposition
    first = perturb.operator.k0_eigenvalues()
    np.testing.assert_allclose(first, np.linalg.eigvalsh(K_psd), atol=1e-10)
    assert perturb.operator.k0_eigenvalues() is first


# _refine_offsets root by root, and the bound of negative_square_change for roots computed only
# as accurately as its docstring assumes.


def _mp_roots(d, z, sigma) -> list:
    """The eigenvalues of ``diag(d) + sigma z z'`` (from the float64 inputs, exactly) to 60
    digits, ascending."""
    A = mp.diag([mp.mpf(float(v)) for v in d])
    zm = mp.matrix([mp.mpf(float(v)) for v in z])
    ev, _ = mp.eigsy(A + mp.mpf(sigma) * zm * zm.T)
    return sorted(ev[i] for i in range(len(d)))


def _mp_offsets(d, z, sigma):
    """``lambda_i - d_i`` of ``diag(d) + sigma z z'`` for every i, from 60-digit eigenvalues."""
    with mp.workdps(DPS):
        roots = _mp_roots(d, z, sigma)
        return np.array([float(roots[i] - mp.mpf(float(d[i]))) for i in range(len(d))])


def _mp_change(d, z, sigma) -> float:
    """``sum min(0, lambda_i)^2 - sum min(0, d_i)^2`` from 60-digit eigenvalues."""
    with mp.workdps(DPS):
        after = sum(min(0, v) ** 2 for v in _mp_roots(d, z, sigma))
        return float(after - sum(min(0, mp.mpf(float(v))) ** 2 for v in d))


def _offset_case(name: str):
    rng = np.random.default_rng(11)
    d = np.sort(rng.normal(size=9))
    z = rng.normal(size=9)
    if name == "general":
        return d - 1.5, z, 0.3
    if name == "near_upper_poles":  # a large update pushes each root towards the pole above it
        return d - 1.5, z, 1e3
    if name == "tiny_update":  # offsets of 1e-9 relative to the poles
        return d - 1.5, z, 1e-8
    if name in ("lowest_pole_dominant", "highest_pole_dominant"):
        # ||M|| (the scale of every root's assumed error) set by one end of the spectrum
        d = d - 1.5
        if name == "lowest_pole_dominant":
            d[0] = -10.0
        else:
            d[-1] = 10.0
        return d, z, 0.3
    if name == "at_upper_poles":  # small weights on two poles: roots 4e-16 and 3e-19 below them
        z[[2, 5]] = [1e-7, 1e-9]
        return d - 1.5, z, 1e3
    # every pole negative (the top root's interval is unbounded), a repeated pole (its root is
    # the pole itself: no bracket) and a nearly deflated component (offset ~1e-27)
    d = d - 4.0
    d[4] = d[3]
    z[6] = 1e-13
    return d, z, 0.05


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
@pytest.mark.parametrize(
    "case", ["general", "near_upper_poles", "at_upper_poles", "tiny_update", "edges"]
)
def test_refined_offsets_match_mpmath_root_by_root(monkeypatch, case, compiled):
    """Each offset ``lambda_i - d_i`` to a few ulps of ITSELF, inside its returned bound, and that
    bound tight (within 256 eps of the offset; 94 eps at most here); only the repeated pole is
    left unrefined. A root next to the pole above it is solved around that pole, so its offset
    (about the gap) carries the gap's rounding and little more: a bound of 4 eps."""
    if not compiled:
        monkeypatch.setattr(proxy, "_compiled_refinement", lambda: None)
    elif proxy._compiled_refinement() is None:
        pytest.skip("numba is not available")
    d, z, sigma = _offset_case(case)
    lam = np.linalg.eigvalsh(np.diag(d) + sigma * np.outer(z, z))
    k = min(int(np.sum(lam < 0)), int(np.sum(d < 0)))
    idx = np.arange(k)
    ref = _mp_offsets(d, z, sigma)[:k]
    offset, error, ok = proxy._refine_offsets(d, z, sigma, idx, lam[:k], compiled=compiled)
    repeated = np.append(np.diff(d) == 0, False)[:k]
    np.testing.assert_array_equal(ok, ~repeated)
    eps = np.finfo(np.float64).eps
    actual = np.abs(offset[ok] - ref[ok])
    assert np.all(actual <= error[ok]), (actual, error[ok])
    assert np.all(actual <= 4 * eps * np.abs(ref[ok])), actual / np.abs(ref[ok])
    assert np.all(error[ok] <= 256 * eps * np.abs(ref[ok])), error[ok] / np.abs(ref[ok])
    gap = np.append(np.diff(d), np.inf)[:k]
    at_upper = ok & (gap - ref < 1e-12 * gap)
    assert np.all(error[at_upper] <= 4 * eps * ref[at_upper]), error[at_upper] / ref[at_upper]
    if case == "at_upper_poles":
        assert np.sum(at_upper) == 2


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
@pytest.mark.parametrize("scale", [0.0, 1e300], ids=["all_refined", "none_refined"])
@pytest.mark.parametrize(
    "case",
    [
        "general",
        "near_upper_poles",
        "tiny_update",
        "edges",
        "lowest_pole_dominant",
        "highest_pole_dominant",
    ],
)
def test_change_bound_holds_for_roots_as_inaccurate_as_assumed(monkeypatch, case, scale, compiled):
    """Roots off by 0.9 x the absolute accuracy the docstring assumes of any eigensolver
    (``8 sqrt(n) eps ||M||``): unrefined, the returned bound still covers the change's error;
    refined, the change is exact again to 1e-12 of itself."""
    if not compiled:
        monkeypatch.setattr(proxy, "_compiled_refinement", lambda: None)
    elif proxy._compiled_refinement() is None:
        pytest.skip("numba is not available")
    d, z, sigma = _offset_case(case)
    eps = np.finfo(np.float64).eps
    norm = np.max(np.abs(d)) + sigma * float(z @ z)
    lam = np.linalg.eigvalsh(np.diag(d) + sigma * np.outer(z, z))
    # pushed up, away from the pole below (an offset the interlacing clip would not undo)
    lam = lam + 0.9 * 8.0 * np.sqrt(d.size) * eps * norm
    change, error = negative_square_change(d, z, sigma, lam[lam < 0], scale=scale)
    ref = _mp_change(d, z, sigma)
    assert abs(change - ref) <= error, (change, ref, error)
    if scale == 0.0:
        assert abs(change - ref) <= 1e-12 * abs(ref), (change, ref)
    else:  # the perturbation is visible: the test would pass on exact roots by luck otherwise
        assert abs(change - ref) > 1e-13 * abs(ref), (change, ref)


def test_penalty_change_is_refined_to_the_accuracy_the_problem_asks_for():
    """With no accuracy asked for (a bare operator), ``neg_sq_change`` is refined until its error
    bound is below ``64 eps`` of the other alpha-dependent terms of objective (7),
    ``4 sigma (1 + |u'K0u|/2 + sigma ||u||^4 / 4)`` in penalty units; a problem asking for
    ``1e-3 tol`` (``set_excess_accuracy``, the monitor's call) leaves roots unrefined whose
    rounding stays below that, and the bound says so."""
    rng = np.random.default_rng(61)
    n = 12
    d = np.concatenate([-1e3 * rng.uniform(0.5, 1.0, 6), rng.uniform(0.1, 1.0, 6)])
    V, _ = np.linalg.qr(rng.standard_normal((n, n)))
    K0 = (V * d) @ V.T
    K0 = (K0 + K0.T) / 2
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    problem = make_problem("svc", K0, y, C=1.0, rho=1.0)
    op = problem.operator
    alpha = 1e-2 * rng.uniform(0.2, 1.0, n)
    u = y * alpha
    eps = np.finfo(np.float64).eps
    z = op.eigenvectors.T @ u
    size = (
        4 * op.sigma * (1 + 0.5 * np.abs(op.eigenvalues) @ (z * z) + 0.25 * op.sigma * (u @ u) ** 2)
    )
    # every bound below must hold against the change from 60-digit eigenvalues of the same
    # diag(d) + sigma z z' (independent of the refinement)
    ref = _mp_change(op.eigenvalues, z, op.sigma)

    def holds(state):
        return abs(state.neg_sq_change - ref) <= state.neg_sq_change_error

    # the plain differences alone would be off by ~1e-8: far above 64 eps of the size
    for state in (op.state(u), op.objective_state(u)):
        assert 0 < state.neg_sq_change_error <= 64 * eps * size, state.neg_sq_change_error / size
        assert holds(state)
    problem.set_excess_accuracy(1.0)  # asks for 1e-3 of the size
    op.reset_warm_start()
    for state in (op.state(u), op.objective_state(u)):
        assert 1e3 * 64 * eps * size < state.neg_sq_change_error <= 1e-3 * size
        assert holds(state)
    # Asked for half the error of leaving every root alone, it refines the roots with the
    # largest errors (the lowest) and leaves the rest: the bound lands between.
    problem.set_excess_accuracy(1e30)
    unrefined = op.state(u).neg_sq_change_error
    problem.set_excess_accuracy(0.5 * unrefined / (1e-3 * size))
    for state in (op.state(u), op.objective_state(u)):
        assert 0.1 * unrefined < state.neg_sq_change_error <= 0.5 * unrefined
        assert holds(state)


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
def test_change_when_no_root_or_one_root_stays_negative(monkeypatch, compiled):
    """No update: exactly (0, 0). Every negative pole's root crossed zero: minus the squares of
    those poles. One of two negative roots left: its refined term plus the crossed square."""
    if not compiled:
        monkeypatch.setattr(proxy, "_compiled_refinement", lambda: None)
    elif proxy._compiled_refinement() is None:
        pytest.skip("numba is not available")
    d = np.array([-3.0, -1.0, 0.5, 2.0])
    z = np.array([1.0, 0.8, -0.6, 0.3])
    assert negative_square_change(d, 0.0 * z, 0.7, d[d < 0], scale=0.0) == (0.0, 0.0)
    eps = np.finfo(np.float64).eps
    # interlacing keeps the root in (-3, -1) negative: one root is left, one crossed zero
    lam = np.linalg.eigvalsh(np.diag(d) + 40.0 * np.outer(z, z))
    assert np.sum(lam < 0) == 1
    change, error = negative_square_change(d, z, 40.0, lam[lam < 0], scale=0.0)
    ref = _mp_change(d, z, 40.0)
    assert abs(change - ref) <= error <= 64 * eps * abs(ref), (change, ref, error)
    assert -10.0 < ref < -1.0  # not both squares left the sum, and more than the crossed one
    # a single negative pole whose root crossed zero
    d = np.array([-1.0, 2.0, 3.0, 4.0])
    lam = np.linalg.eigvalsh(np.diag(d) + 40.0 * np.outer(z, z))
    assert np.sum(lam < 0) == 0
    change, error = negative_square_change(d, z, 40.0, lam[lam < 0], scale=0.0)
    assert change == -1.0 and error <= 4 * eps


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "numpy"])
def test_a_root_farther_than_the_bracket_is_left_to_its_plain_difference(monkeypatch, compiled):
    """The refinement looks for the root only within ``64 n eps ||M||`` of the computed one: a
    computed root farther off (no eigensolver's) is not moved onto the bracket's edge and
    reported as refined; it is left alone (``ok`` False) and the others are refined as usual."""
    if not compiled:
        monkeypatch.setattr(proxy, "_compiled_refinement", lambda: None)
    elif proxy._compiled_refinement() is None:
        pytest.skip("numba is not available")
    d, z, sigma = _offset_case("general")
    lam = np.linalg.eigvalsh(np.diag(d) + sigma * np.outer(z, z))
    k = min(int(np.sum(lam < 0)), int(np.sum(d < 0)))
    idx = np.arange(k)
    ref = _mp_offsets(d, z, sigma)[:k]
    gap = np.diff(d)[:k]
    lam_off = lam[:k].copy()
    lam_off[2] = d[2] + 0.5 * (ref[2] + (ref[2] + gap[2]) / 2)  # inside its interval, far off
    lam_off[5] = d[5] + 0.5 * ref[5]
    offset, error, ok = proxy._refine_offsets(d, z, sigma, idx, lam_off, compiled=compiled)
    expected = np.ones(k, dtype=bool)
    expected[[2, 5]] = False
    np.testing.assert_array_equal(ok, expected)
    eps = np.finfo(np.float64).eps
    assert np.all(np.abs(offset[ok] - ref[ok]) <= 4 * eps * np.abs(ref[ok]))


def test_state_forms_its_eigenvectors_on_first_read_and_keeps_them():
    """An evaluation by the compiled engine keeps the negative part's eigenvectors unformed
    (``state.low`` is the RankOneEigen); ``low_vectors`` forms them once, and they are those
    of the dense eigendecomposition of ``diag(d) + sigma z z'`` (up to sign)."""
    if not rank_one_module.numba_available():
        pytest.skip("needs the compiled secular engine")
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 4))
    K0 = np.tanh(X @ X.T / 4 - 0.5)
    op = ProxyKernelOperator(K0, 0.2)  # engine "auto": the compiled one when available
    state = op.state(rng.uniform(-1.0, 1.0, size=300))
    assert isinstance(state.low, rank_one_module.RankOneEigen) and not state.low.formed
    W = state.low_vectors
    assert isinstance(state.low, np.ndarray) and state.low_vectors is W  # formed once
    M = np.diag(op.eigenvalues) + 0.2 * np.outer(state.z, state.z)
    lam, Q = np.linalg.eigh(M)
    neg = lam < 0
    np.testing.assert_allclose(state.low_values[: neg.sum()], lam[neg], rtol=0, atol=1e-10)
    # Same eigenspace: the projectors agree.
    P = Q[:, neg] @ Q[:, neg].T
    Wn = W[:, : neg.sum()]
    np.testing.assert_allclose(Wn @ Wn.T, P, rtol=0, atol=1e-8)
