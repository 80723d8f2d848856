"""Tests of the rank-one eigen-update engine against dense ``numpy.linalg.eigh``.

Every check builds the dense matrix ``diag(d) + sigma z z'`` (or ``K0 + sigma u u'``) and compares
with an independent dense eigendecomposition: eigenvalues, orthonormality, residuals, the
solver's quantities ``sum(min(0, lam)^2)`` and ``M_- z = W diag(lam) W' z``, and projectors onto
clusters of eigenvalues.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import indefsvm.linalg.rank_one as rank_one_module
from indefsvm.linalg.rank_one import RankOneEigen, SecularWarmStart, rank_one_eigh, secular_root

TOL = 1e-10


@pytest.fixture(autouse=True, params=["numba", "lapack"])
def engine(request, monkeypatch):
    """Run every test on both secular engines: compiled (Numba) and LAPACK dlaed4 (reference).

    ``engine="auto"`` (the default every test uses) resolves to the compiled kernel when Numba is
    importable; for the reference run it is made to look unavailable.
    """
    if request.param == "lapack":
        monkeypatch.setattr(rank_one_module, "numba_available", lambda: False)
    elif not rank_one_module.numba_available():
        pytest.skip("numba is not installed")
    return request.param


def _dense(d, z, sigma):
    A = np.diag(d) + sigma * np.outer(z, z)
    w, V = np.linalg.eigh(A)
    return A, w, V


def _scale(d, z, sigma):
    return max(float(np.max(np.abs(d))), abs(sigma) * float(z @ z), np.finfo(float).tiny)


def assert_matches_dense(d, z, sigma, which="all", upper=0.0, tol=TOL):
    """Compare ``rank_one_eigh`` with dense eigh on every quantity the solver uses."""
    d = np.asarray(d, dtype=float)
    z = np.asarray(z, dtype=float)
    A, w, V = _dense(d, z, sigma)
    scale = _scale(d, z, sigma)
    res = rank_one_eigh(d, z, sigma, which=which, upper=upper)
    assert isinstance(res, RankOneEigen)
    lam, W = res.eigenvalues, res.eigenvectors
    n = d.size
    assert W.shape == (n, lam.size)
    assert np.all(np.diff(lam) >= 0), "eigenvalues must be ascending"
    if which == "all":
        assert lam.size == n
        np.testing.assert_allclose(lam, w, rtol=0, atol=tol * scale)
    else:
        assert np.all(lam < upper)
        # Eigenvalues within rounding of the threshold may fall on either side of it.
        n_sure = int(np.sum(w < upper - tol * scale))
        n_maybe = int(np.sum(w < upper + tol * scale))
        assert n_sure <= lam.size <= n_maybe
        # The returned pairs are the smallest eigenvalues, whatever the sign of sigma.
        np.testing.assert_allclose(lam, w[: lam.size], rtol=0, atol=tol * scale)
    if lam.size:
        assert np.linalg.norm(W.T @ W - np.eye(lam.size)) <= tol
        assert np.linalg.norm(A @ W - W * lam) <= tol * max(np.linalg.norm(A), scale)
    # Quantities of the solver (theory.md §1, §5), for the pairs below upper = 0.
    if which == "all" or upper == 0.0:
        neg = lam < 0
        wneg = w < 0
        penalty_engine = float(np.sum(lam[neg] ** 2))
        penalty_dense = float(np.sum(w[wneg] ** 2))
        assert abs(penalty_engine - penalty_dense) <= tol * max(scale**2, 1e-300)
        Wn = W[:, neg]
        grad_engine = Wn @ (lam[neg] * (Wn.T @ z))
        Vn = V[:, wneg]
        grad_dense = Vn @ (w[wneg] * (Vn.T @ z))
        assert np.linalg.norm(grad_engine - grad_dense) <= tol * max(
            scale * np.linalg.norm(z), 1e-300
        )
    return res


# --------------------------------------------------------------------------- secular_root


@pytest.mark.parametrize("n", [1, 2, 3, 10, 150])
def test_secular_root_matches_dense_eigenvalues_and_deltas(n):
    rng = np.random.default_rng(n)
    d = np.sort(rng.standard_normal(n)) + np.arange(n) * 1e-3  # strictly increasing
    z = rng.standard_normal(n)
    z /= np.linalg.norm(z)
    rho = 0.7
    w = np.linalg.eigvalsh(np.diag(d) + rho * np.outer(z, z))
    for i in range(n):
        lam, delta = secular_root(d, z, rho, i)
        assert abs(lam - w[i]) <= 1e-13 * max(np.max(np.abs(d)), rho)
        assert delta.shape == (n,)
        np.testing.assert_allclose(delta, d - lam, rtol=0, atol=1e-13 * max(1.0, rho))
        # The secular equation holds at the root (relative to the size of its terms).
        terms = rho * z**2 / delta
        assert abs(1.0 + terms.sum()) <= 1e-12 * (1.0 + np.abs(terms).sum())


def test_secular_root_delta_is_accurate_near_a_pole():
    # Root extremely close to d_1: d_1 - lambda must keep its relative accuracy.
    d = np.array([0.0, 1.0, 2.0])
    z = np.array([1e-7, 1.0, 1.0])
    z /= np.linalg.norm(z)
    lam, delta = secular_root(d, z, 1.0, 0)
    # Exact to first order: lambda_1 - d_1 ~ -rho z_1^2 / f'(...) is tiny but nonzero.
    assert delta[0] < 0 and abs(delta[0]) < 1e-13
    terms = z**2 / delta
    assert abs(1.0 + terms.sum()) <= 1e-12 * np.abs(terms).sum()


@pytest.mark.parametrize(
    ("d", "z", "rho", "i", "match"),
    [
        ([1.0, 0.0], [0.6, 0.8], 1.0, 0, "strictly increasing"),
        ([0.0, 1.0], [1.0, 1.0], 1.0, 0, "unit Euclidean norm"),
        ([0.0, 1.0], [0.6, 0.8], -1.0, 0, "rho must be finite and > 0"),
        ([0.0, 1.0], [0.6, 0.8], 1.0, 2, "i must be an integer"),
        ([0.0, 1.0], [0.6, 0.8, 0.0], 1.0, 0, "shape of d"),
        ([], [], 1.0, 0, "at least one entry"),
        ([0.0, 1.0], [1.0, 0.0], 1.0, 0, "no zero entries"),
    ],
)
def test_secular_root_rejects_bad_input(d, z, rho, i, match):
    with pytest.raises(ValueError, match=match):
        secular_root(np.array(d, dtype=float), np.array(z, dtype=float), rho, i)


# --------------------------------------------------------------------------- deterministic


@pytest.mark.parametrize("n", [1, 2, 3, 7, 60, 300])
@pytest.mark.parametrize("sigma", [0.37, -0.37])
@pytest.mark.parametrize("which", ["all", "below"])
def test_random_diagonal(n, sigma, which):
    rng = np.random.default_rng(1000 + n)
    d = np.sort(rng.standard_normal(n))
    z = rng.standard_normal(n)
    assert_matches_dense(d, z, sigma, which=which)


@pytest.mark.parametrize("sigma_scale", [2.5e-5, 2.5e-3, 0.25, 25.0, 2.5e3])
@pytest.mark.parametrize("z_norm", [1e-3, 1.0, 1e3])
def test_sigma_and_norm_ranges(sigma_scale, z_norm):
    # sigma = 1 / (4 rho) for rho from 1e-4 to 1e4, ||z|| from 1e-3 to 1e3.
    rng = np.random.default_rng(7)
    n = 80
    d = np.sort(rng.standard_normal(n) * 3.0)
    z = rng.standard_normal(n)
    z *= z_norm / np.linalg.norm(z)
    for which in ("all", "below"):
        assert_matches_dense(d, z, sigma_scale, which=which)


def test_exact_duplicates_and_zeros_are_deflated():
    rng = np.random.default_rng(3)
    base = np.sort(rng.standard_normal(20))
    d = np.sort(np.concatenate([np.repeat(base, 4), np.zeros(15)]))
    z = rng.standard_normal(d.size)
    res = assert_matches_dense(d, z, 0.9)
    # Each group of m equal poles leaves m - 1 deflated pairs; the zero block leaves 14.
    assert res.n_deflated >= 20 * 3 + 14
    assert_matches_dense(d, z, 0.9, which="below")
    assert_matches_dense(d, z, -0.9, which="below")


@pytest.mark.parametrize("value", [0.0, 2.0, -1e-3])
def test_all_poles_equal(value):
    """d = c * ones: one chain of merges leaves a single secular root c + sigma ||z||^2."""
    rng = np.random.default_rng(2)
    d = np.full(40, value)
    z = rng.standard_normal(40)
    for sigma in (0.7, -0.7):
        res = assert_matches_dense(d, z, sigma)
        assert res.n_deflated == 39
        expected = np.sort(np.append(np.full(39, value), value + sigma * (z @ z)))
        np.testing.assert_allclose(res.eigenvalues, expected, atol=1e-12 * max(1, z @ z))
        assert_matches_dense(d, z, sigma, which="below", upper=0.0)


@pytest.mark.parametrize("width", [1e-12, 1e-8])
def test_tight_clusters(width):
    rng = np.random.default_rng(11)
    centres = np.linspace(-3, 3, 12)
    d = np.sort(np.concatenate([c + width * rng.random(8) for c in centres]))
    z = rng.standard_normal(d.size)
    for sigma in (0.05, 2.0, -0.7):
        for which in ("all", "below"):
            assert_matches_dense(d, z, sigma, which=which)


def test_zero_and_tiny_z_entries():
    rng = np.random.default_rng(5)
    n = 120
    d = np.sort(rng.standard_normal(n))
    z = rng.standard_normal(n)
    z[::5] = 0.0
    z[1::7] *= 1e-18
    z[2::9] *= 1e-9
    res = assert_matches_dense(d, z, 1.3)
    assert res.n_deflated >= n // 5
    assert_matches_dense(d, z, 1.3, which="below")
    assert_matches_dense(d, z * 1e-20, 1.3)  # everything deflated


def test_zero_update():
    d = np.array([-2.0, -1.0, -1.0, 0.5, 3.0])
    for z, sigma in ((np.zeros(5), 1.0), (np.arange(5.0), 0.0)):
        res = rank_one_eigh(d, z, sigma)
        np.testing.assert_array_equal(res.eigenvalues, d)
        np.testing.assert_array_equal(res.eigenvectors, np.eye(5))
        below = rank_one_eigh(d, z, sigma, which="below", upper=0.0)
        np.testing.assert_array_equal(below.eigenvalues, d[:3])
        np.testing.assert_array_equal(below.eigenvectors, np.eye(5)[:, :3])


def test_psd_case_below_is_empty_for_positive_sigma():
    rng = np.random.default_rng(9)
    d = np.sort(rng.random(50)) + 1e-3
    z = rng.standard_normal(50)
    res = rank_one_eigh(d, z, 0.8, which="below", upper=0.0)
    assert res.eigenvalues.size == 0
    assert res.eigenvectors.shape == (50, 0)
    # PSD with zero eigenvalues: the update can only push them up.
    d0 = np.concatenate([np.zeros(5), d[5:]])
    assert_matches_dense(d0, z, 0.8, which="below")


@pytest.mark.parametrize("upper", [-0.5, 0.3, 10.0])
def test_other_thresholds(upper):
    rng = np.random.default_rng(21)
    d = np.sort(rng.standard_normal(90))
    z = rng.standard_normal(90)
    for sigma in (0.6, -0.6):
        assert_matches_dense(d, z, sigma, which="below", upper=upper)


def _sigmoid_spectrum(n, seed, p=20, a=None, b=-1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    K = np.tanh((a if a is not None else 1.0 / p) * (X @ X.T) + b)
    d, V = np.linalg.eigh(K)
    return K, d, V, rng


@pytest.mark.parametrize("rho", [1e-4, 1e-2, 1.0, 1e2, 1e4])
def test_sigmoid_kernel_full_problem(rho):
    """End-to-end in the original basis: eigenpairs of K0 + sigma u u' via the eigenbasis of K0."""
    n = 160
    K, d, V, rng = _sigmoid_spectrum(n, seed=4, p=5, a=0.4)
    assert 0.2 < np.mean(d < 0) < 0.8  # genuinely indefinite
    y = rng.choice([-1.0, 1.0], size=n)
    alpha = np.where(rng.random(n) < 0.4, rng.random(n), 0.0)
    u = y * alpha
    sigma = 1.0 / (4.0 * rho)
    z = V.T @ u
    res = rank_one_eigh(d, z, sigma, which="below", upper=0.0)
    M = K + sigma * np.outer(u, u)
    w, U = np.linalg.eigh(M)
    scale = max(np.max(np.abs(d)), sigma * (u @ u))
    neg = w < 0
    assert abs(res.eigenvalues.size - int(neg.sum())) <= int(np.sum(np.abs(w) < TOL * scale))
    Wfull = V @ res.eigenvectors
    np.testing.assert_allclose(res.eigenvalues, w[: res.eigenvalues.size], atol=TOL * scale)
    # Objective term rho * sum min(0, lambda)^2 and the gradient term M_- u.
    assert abs(np.sum(res.eigenvalues**2) - np.sum(w[neg] ** 2)) <= TOL * scale**2
    m_minus_u = Wfull @ (res.eigenvalues * (Wfull.T @ u))
    m_minus_u_dense = U[:, neg] @ (w[neg] * (U[:, neg].T @ u))
    assert np.linalg.norm(m_minus_u - m_minus_u_dense) <= TOL * scale * np.linalg.norm(u)
    # Projection on the PSD cone (Theorem 1): M_+ = M - M_-.
    m_plus = M - (Wfull * res.eigenvalues) @ Wfull.T
    m_plus_dense = (U[:, ~neg] * w[~neg]) @ U[:, ~neg].T
    assert np.linalg.norm(m_plus - m_plus_dense) <= TOL * scale


@pytest.mark.parametrize("sigma", [0.25, -0.25, 25.0])
def test_low_rank_kernel_long_deflation_chains(sigma):
    """Kernel of 2-D data: most eigenvalues are rounding noise, merged in long Givens chains."""
    n = 250
    K, d, V, rng = _sigmoid_spectrum(n, seed=8, p=2, a=0.5, b=-0.5)
    u = rng.choice([-1.0, 1.0], size=n) * rng.random(n)
    z = V.T @ u
    res = assert_matches_dense(d, z, sigma)
    assert res.n_deflated > 30
    assert_matches_dense(d, z, sigma, which="below", upper=0.0)


def test_clusters_projectors_match_dense():
    """Eigenvectors of clustered eigenvalues: compare invariant subspaces, not vectors."""
    rng = np.random.default_rng(17)
    centres = np.array([-2.0, -1.0, -0.2, 0.4, 1.5])
    d = np.sort(np.concatenate([c + 1e-13 * rng.random(6) for c in centres] + [rng.random(10)]))
    z = rng.standard_normal(d.size)
    for sigma in (0.3, -0.3):
        A, w, V = _dense(d, z, sigma)
        res = rank_one_eigh(d, z, sigma)
        lam, W = res.eigenvalues, res.eigenvectors
        # Groups of eigenvalues separated by gaps > 1e-6: subspaces are determined to
        # ~eps ||A|| / gap, so the projectors must agree far below 1e-8.
        breaks = np.flatnonzero(np.diff(w) > 1e-6) + 1
        groups = np.split(np.arange(d.size), breaks)
        assert any(g.size > 1 for g in groups)
        for g in groups:
            P_engine = W[:, g] @ W[:, g].T
            P_dense = V[:, g] @ V[:, g].T
            assert np.linalg.norm(P_engine - P_dense) <= 1e-8
            np.testing.assert_allclose(lam[g], w[g], atol=TOL * _scale(d, z, sigma))


# --------------------------------------------------------------------------- hypothesis


@st.composite
def symmetric_problems(draw):
    """A symmetric K0 with possibly repeated/clustered eigenvalues, u and sigma."""
    n = draw(st.integers(min_value=1, max_value=30))
    seed = draw(st.integers(min_value=0, max_value=2**31 - 1))
    rng = np.random.default_rng(seed)
    n_distinct = draw(st.integers(min_value=1, max_value=n))
    values = rng.standard_normal(n_distinct) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    spectrum = values[rng.integers(0, n_distinct, size=n)]
    jitter = draw(st.sampled_from([0.0, 1e-14, 1e-10, 1e-6]))
    spectrum = spectrum + jitter * rng.standard_normal(n) * np.max(np.abs(spectrum))
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    K0 = (Q * spectrum) @ Q.T
    K0 = 0.5 * (K0 + K0.T)
    u = rng.standard_normal(n) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    u[rng.random(n) < draw(st.sampled_from([0.0, 0.5]))] = 0.0
    sigma = draw(st.sampled_from([2.5e-5, 2.5e-3, 0.25, 25.0, 2.5e3, -0.25, 0.0]))
    return K0, u, sigma


@settings(max_examples=60, deadline=None)
@given(symmetric_problems())
def test_property_rank_one_update_of_symmetric_matrix(problem):
    K0, u, sigma = problem
    d, V = np.linalg.eigh(K0)
    z = V.T @ u
    assert_matches_dense(d, z, sigma, which="all")
    assert_matches_dense(d, z, sigma, which="below", upper=0.0)
    # And in the original basis against the dense update itself.
    res = rank_one_eigh(d, z, sigma)
    M = K0 + sigma * np.outer(u, u)
    w = np.linalg.eigvalsh(M)
    scale = max(np.max(np.abs(d)), abs(sigma) * (u @ u), np.finfo(float).tiny)
    np.testing.assert_allclose(res.eigenvalues, w, atol=1e-9 * scale)
    Wf = V @ res.eigenvectors
    assert np.linalg.norm(M @ Wf - Wf * res.eigenvalues) <= 1e-9 * scale * max(1, d.size)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(symmetric_problems(), st.sampled_from([0.0, 0.3]))
def test_property_products_without_the_vectors_match_dense(problem, upper):
    """``W'x`` and ``W c`` of a result whose vectors are not formed (the solver's products,
    ``M_- x = W diag(lam) W'x`` and the projector ``W W'x``) against dense ``eigh``, on
    repeated and clustered eigenvalues (deflation and its Givens rotations)."""
    K0, u, sigma = problem
    d, V = np.linalg.eigh(K0)
    z = V.T @ u
    n = d.size
    x = np.cos(np.arange(n) + 0.5) + z / max(1.0, float(np.linalg.norm(z)))
    res = rank_one_eigh(d, z, sigma, which="below", upper=upper)
    lam = res.eigenvalues
    wx = res.rmatvec(x)
    mneg_x = res.matvec(np.minimum(lam, 0.0) * wx)
    proj_x = res.matvec(wx)
    first = res.rmatvec(x, count=lam.size // 2)
    A, w, Vd = _dense(d, z, sigma)
    scale = _scale(d, z, sigma)
    tol = 1e-9 * scale * max(1.0, float(np.linalg.norm(x)))
    neg = w < 0
    dense_mneg = Vd[:, neg] @ (w[neg] * (Vd[:, neg].T @ x))
    assert np.linalg.norm(mneg_x - dense_mneg) <= tol
    # The projector on the returned pairs: the dense one on the same number of smallest pairs
    # (the threshold is not at an eigenvalue of these problems but rounding may tie).
    dense_proj = Vd[:, : lam.size] @ (Vd[:, : lam.size].T @ x)
    gap_ok = lam.size in (0, n) or w[lam.size] - w[lam.size - 1] > 1e-6 * scale
    if gap_ok:
        assert np.linalg.norm(proj_x - dense_proj) <= 1e-6 * max(1.0, float(np.linalg.norm(x)))
    # The same products from the formed vectors (what every other reader sees).
    W = res.eigenvectors
    np.testing.assert_allclose(wx, W.T @ x, rtol=0, atol=1e-12 * max(1.0, np.linalg.norm(x)))
    np.testing.assert_allclose(
        first, (W.T @ x)[: lam.size // 2], rtol=0, atol=1e-12 * max(1.0, np.linalg.norm(x))
    )
    c = np.linspace(-1.0, 1.0, lam.size)
    np.testing.assert_allclose(
        rank_one_eigh(d, z, sigma, which="below", upper=upper).matvec(c),
        W @ c,
        rtol=0,
        atol=1e-12 * max(1, lam.size),
    )


def test_compiled_engine_forms_the_vectors_only_when_read(engine):
    if engine != "numba":
        pytest.skip("the LAPACK path returns its vectors formed")
    rng = np.random.default_rng(5)
    d = np.sort(rng.standard_normal(300))
    z = rng.standard_normal(300)
    res = rank_one_eigh(d, z, 0.3, which="below")
    assert not res.formed
    wz = res.rmatvec(z)
    out = res.matvec(res.eigenvalues * wz)
    assert not res.formed
    W = res.eigenvectors
    assert res.formed and W.shape == (300, res.eigenvalues.size)
    np.testing.assert_allclose(out, W @ (res.eigenvalues * (W.T @ z)), rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- input checks


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"d": [2.0, 1.0], "z": [1.0, 1.0], "sigma": 1.0}, ValueError, "ascending"),
        ({"d": [1.0, 2.0], "z": [1.0], "sigma": 1.0}, ValueError, "shape of d"),
        ({"d": [1.0, np.nan], "z": [1.0, 1.0], "sigma": 1.0}, ValueError, "NaN or inf"),
        ({"d": [1.0, 2.0], "z": [1.0, 1.0], "sigma": np.inf}, ValueError, "sigma must be finite"),
        ({"d": [[1.0, 2.0]], "z": [1.0, 1.0], "sigma": 1.0}, ValueError, "1-D"),
        ({"d": [1.0, 2.0], "z": [1j, 1.0], "sigma": 1.0}, TypeError, "real"),
        (
            {"d": [1.0, 2.0], "z": [1.0, 1.0], "sigma": 1.0, "which": "neg"},
            ValueError,
            "which must be one of",
        ),
        ({"d": [1.0, 2.0], "z": [1e200, 1.0], "sigma": 1e200}, ValueError, "overflows"),
    ],
)
def test_rank_one_eigh_rejects_bad_input(kwargs, error, match):
    kwargs = dict(kwargs)
    d, z, sigma = kwargs.pop("d"), kwargs.pop("z"), kwargs.pop("sigma")
    with pytest.raises(error, match=match):
        rank_one_eigh(np.array(d), np.array(z), sigma, **kwargs)


@pytest.mark.parametrize("sigma", [0.4, -0.4])
def test_threads_give_bitwise_identical_results(sigma):
    rng = np.random.default_rng(31)
    n = 400  # several blocks of roots
    d = np.sort(np.concatenate([rng.standard_normal(n - 40), np.zeros(40)]))
    z = rng.standard_normal(n)
    for which in ("all", "below"):
        one = rank_one_eigh(d, z, sigma, which=which, n_threads=1)
        two = rank_one_eigh(d, z, sigma, which=which, n_threads=3)
        np.testing.assert_array_equal(one.eigenvalues, two.eigenvalues)
        np.testing.assert_array_equal(one.eigenvectors, two.eigenvectors)
        assert one.n_deflated == two.n_deflated
    assert_matches_dense(d, z, sigma, which="below", upper=0.0)


def test_rejects_bad_thread_count():
    with pytest.raises(ValueError, match="n_threads must be a positive integer"):
        rank_one_eigh(np.array([0.0, 1.0]), np.array([1.0, 1.0]), 1.0, n_threads=0)


def test_dlaed4_failure_is_reported(monkeypatch, engine):
    """A non-zero INFO from dlaed4 must raise, never return a wrong eigenpair.

    On the compiled engine a root that fails its test sends the problem to dlaed4 (here made
    to fail too), so the failure surfaces the same way.
    """
    import ctypes

    import indefsvm.linalg.rank_one as rank_one

    if engine == "numba":
        monkeypatch.setattr(rank_one, "_numba_kernel", lambda: _FailingKernel())

    def failing_dlaed4(n, i, d, z, delta, rho, dlam, info):
        ctypes.c_double.from_address(dlam).value = 0.0
        ctypes.c_int.from_address(info).value = 7

    prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * 8))
    fake = prototype(failing_dlaed4)
    monkeypatch.setattr(rank_one, "_dlaed4", lambda: fake)
    d = np.array([0.0, 1.0, 2.0])
    z = np.array([0.6, 0.0, 0.8])
    with pytest.raises(RuntimeError, match="dlaed4 failed"):
        rank_one.rank_one_eigh(np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 1.0]), 1.0)
    with pytest.raises(RuntimeError, match="dlaed4 failed"):
        rank_one.secular_root(d[[0, 2]], z[[0, 2]], 1.0, 0)


class _FailingKernel:
    """Stand-in for the compiled kernel whose every root fails the convergence test."""

    N_CHUNKS = 4

    @staticmethod
    def secular_roots(d, z, rho, side, guess_tau, pair, origin, tau, status, partial):
        origin[:] = 0
        tau[:] = np.nan
        status[:] = -1
        partial[:] = np.nan

    secular_roots_serial = secular_roots
    secular_vectors = secular_vectors_serial = None  # never reached: every root failed


def test_compiled_root_failure_falls_back_to_dlaed4(monkeypatch, engine):
    if engine != "numba":
        pytest.skip("compiled engine only")
    monkeypatch.setattr(rank_one_module, "_numba_kernel", lambda: _FailingKernel())
    rng = np.random.default_rng(5)
    d = np.sort(rng.standard_normal(40))
    z = rng.standard_normal(40)
    assert_matches_dense(d, z, 0.8)
    assert_matches_dense(d, z, -0.8, which="below", upper=0.0)


def test_engine_option_is_validated(engine):
    with pytest.raises(ValueError, match="engine must be one of"):
        rank_one_eigh(np.array([0.0, 1.0]), np.array([1.0, 1.0]), 1.0, engine="fortran")


@pytest.mark.parametrize("sigma", [0.5, -0.5])
def test_warm_start_sequence_matches_dense_and_saves_sweeps(sigma, engine):
    """A sequence of nearby z (as in the solver) with warm starts: every call matches dense eigh."""
    rng = np.random.default_rng(12)
    n = 120
    d = np.sort(np.concatenate([rng.standard_normal(n - 20), np.zeros(10), np.ones(10)]))
    z = rng.standard_normal(n)
    warm = SecularWarmStart()
    cold = SecularWarmStart()
    for _ in range(6):
        z = z + 0.05 * rng.standard_normal(n)
        res = rank_one_eigh(d, z, sigma, which="below", upper=0.0, warm_start=warm)
        ref = assert_matches_dense(d, z, sigma, which="below", upper=0.0)
        np.testing.assert_allclose(res.eigenvalues, ref.eigenvalues, rtol=0, atol=1e-12)
        rank_one_eigh(d, z, sigma, which="below", upper=0.0, warm_start=cold)
        cold.reset()
    if engine == "numba":
        assert warm.n_calls == cold.n_calls == 6
        assert warm.n_sweeps < cold.n_sweeps


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(3, 40),
    log_shift=st.floats(-14.0, 1.0),
)
def test_property_perturbed_warm_start_guesses_are_safe(seed, n, log_shift, engine):
    """Warm-start guesses moved by any amount (inside or outside their interval) are safe."""
    if engine != "numba":
        return
    rng = np.random.default_rng(seed)
    d = rng.standard_normal(n)
    d[rng.integers(0, n)] = d[0]  # a repeated pole (deflated by rotation)
    d = np.sort(d)
    z = rng.standard_normal(n)
    z[rng.integers(0, n)] = 0.0
    sigma = float(rng.choice([-1.0, 1.0]) * rng.uniform(0.01, 5.0))
    warm = SecularWarmStart()
    ref = assert_matches_dense(d, z, sigma)
    rank_one_eigh(d, z, sigma, warm_start=warm)
    stored = warm.offsets
    if stored is None:  # fewer than 3 roots after deflation: the LAPACK path served the call
        return
    stored += 10.0**log_shift * rng.standard_normal(stored.size)
    again = rank_one_eigh(d, z, sigma, warm_start=warm)
    scale = _scale(d, z, sigma)
    np.testing.assert_allclose(again.eigenvalues, ref.eigenvalues, rtol=0, atol=TOL * scale)
    W = again.eigenvectors
    assert np.linalg.norm(W.T @ W - np.eye(n)) <= TOL


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("upper", [0.0, 0.3, -0.5])
def test_eigvals_below_match_dense_eigh_with_deflation(seed, upper):
    """``rank_one_eigvals_below``: the eigenvalues below ``upper`` of dense eigh, with tiny z_j
    (deflated) and repeated d_j (merged by a rotation) in the problem, cold and warm-started."""
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    rng = np.random.default_rng(seed)
    n = 60
    d = np.sort(rng.normal(size=n))
    d[10:13] = d[10]  # a triple eigenvalue of K0
    d[40:42] = d[40]
    z = rng.normal(size=n)
    z[[3, 25, 50]] = 1e-19  # deflated: (d_j, e_j) is an eigenpair to working accuracy
    sigma = 0.7
    warm = SecularWarmStart()
    for step in range(4):
        zs = z * (1.0 + 0.05 * step) + 0.01 * step * rng.normal(size=n)
        _, w, _ = _dense(d, zs, sigma)
        lam = rank_one_eigvals_below(d, zs, sigma, upper=upper, warm_start=warm)
        expected = w[w < upper]
        assert lam.shape == expected.shape
        np.testing.assert_allclose(lam, expected, rtol=0, atol=TOL * _scale(d, zs, sigma))
        # the same values as the eigenpair path (the objective of the solvers is unchanged)
        full = rank_one_eigh(d, zs, sigma, which="below", upper=upper)
        np.testing.assert_allclose(lam, full.eigenvalues, rtol=0, atol=1e-13 * _scale(d, zs, sigma))
    # negative sigma is delegated to rank_one_eigh
    _, w, _ = _dense(d, z, -0.3)
    np.testing.assert_allclose(
        rank_one_eigvals_below(d, z, -0.3, upper=upper), w[w < upper], rtol=0, atol=1e-10
    )


def test_eigvals_below_prefix_keeps_the_other_warm_guesses():
    """An eigenvalues-only call updates only the guesses of the roots it computed."""
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    rng = np.random.default_rng(5)
    d = np.sort(rng.normal(size=40))
    z = rng.normal(size=40)
    warm = SecularWarmStart()
    rank_one_eigh(d, z, 0.5, warm_start=warm)
    if warm.offsets is None:
        pytest.skip("the warm start is kept by the compiled engine only")
    before = warm.offsets.copy()
    rank_one_eigvals_below(d, 1.1 * z, 0.5, warm_start=warm)
    m = int(np.sum(d < 0))
    assert not np.array_equal(warm.offsets[: m - 1], before[: m - 1])
    np.testing.assert_array_equal(warm.offsets[m + 1 :], before[m + 1 :])


# Two clusters of 13 and 17 poles spread over 1e-8..3e-7 at |d| ~ 100 and 2235 (relative
# spacing ~1e-11, above dlaed2's deflation tolerance) with sigma = 2.5e-5: found by the property
# test above (issue 15 session). The compiled engine gives eigenvectors orthogonal to 1.5e-15; the
# dlaed4 reference path only to 4e-10 (roots 8 and 9: 1.8e-10), although both find the same
# roots to 4e-14. Not yet explained: the reference path's Gu-Eisenstat vector follows dlaed3.
_CLUSTER_D = [
    "-0x1.8e2e91b1795b3p+6",
    "-0x1.8e2e91b05838ap+6",
    "-0x1.8e2e91a92aea7p+6",
    "-0x1.8e2e91a45c1cbp+6",
    "-0x1.8e2e91a3f41a0p+6",
    "-0x1.8e2e91a1a9f76p+6",
    "-0x1.8e2e919cef8c0p+6",
    "-0x1.8e2e919b0aaf7p+6",
    "-0x1.8e2e91975047ep+6",
    "-0x1.8e2e918ce4f03p+6",
    "-0x1.8e2e918ae0163p+6",
    "-0x1.8e2e918a366ccp+6",
    "-0x1.8e2e918275b83p+6",
    "0x1.176c7af6cb963p+11",
    "0x1.176c7af76eb50p+11",
    "0x1.176c7af7766abp+11",
    "0x1.176c7af79154ap+11",
    "0x1.176c7af7ae765p+11",
    "0x1.176c7af7bb789p+11",
    "0x1.176c7af7d330fp+11",
    "0x1.176c7af7e0d09p+11",
    "0x1.176c7af7fdec4p+11",
    "0x1.176c7af8040e6p+11",
    "0x1.176c7af807c14p+11",
    "0x1.176c7af82ad0cp+11",
    "0x1.176c7af83bdaep+11",
    "0x1.176c7af86f909p+11",
    "0x1.176c7af87c5ddp+11",
    "0x1.176c7af8867ecp+11",
    "0x1.176c7af891cecp+11",
]
_CLUSTER_Z = [
    "-0x1.6ccf9d8146cdap+0",
    "-0x1.8cff450a0a60cp-1",
    "0x1.969967288b9fap+0",
    "-0x1.838302754fd4bp-2",
    "-0x1.23357e929737ap-2",
    "-0x1.f5c5ac3c3341ap-2",
    "0x1.1345151c04922p-1",
    "0x1.96b581ad374f6p-1",
    "-0x1.28ab8db917fa2p-1",
    "-0x1.29523e5a6ab9fp-2",
    "0x1.59104c1f4e0aep-2",
    "0x1.e98fa395e5bb9p-1",
    "0x1.9ccf1a529f36bp-3",
    "0x1.477d4d98562b2p-6",
    "-0x1.39dafe36df2bep-2",
    "-0x1.4472329c4004ep-3",
    "0x1.8ae75745bd760p-4",
    "-0x1.6ccd6f3b68525p-3",
    "-0x1.02cf1073f40edp+0",
    "0x1.ef4ef29ae14c8p-6",
    "-0x1.094f005f119abp-3",
    "-0x1.a3ec56a270905p-1",
    "0x1.edad79ddfd409p-5",
    "-0x1.9bbee54932514p-3",
    "-0x1.88b11c90ce6b4p-3",
    "-0x1.d629c8261a46fp-1",
    "0x1.b9a089b77de1ap-6",
    "-0x1.4839fdff01f22p-1",
    "0x1.917e43effedeep-4",
    "0x1.6c70fef9b4ef5p+0",
]


def test_clustered_poles_found_by_hypothesis(engine, request):
    d = np.array([float.fromhex(h) for h in _CLUSTER_D])
    z = np.array([float.fromhex(h) for h in _CLUSTER_Z])
    if engine == "lapack":
        request.applymarker(
            pytest.mark.xfail(
                strict=True,
                reason="dlaed4 reference path: eigenvector orthogonality 4e-10 on this cluster",
            )
        )
    assert_matches_dense(d, z, 2.5e-5, which="all")
    assert_matches_dense(d, z, 2.5e-5, which="below", upper=0.0)


def test_result_says_whether_its_vectors_are_formed_and_needs_one_of_them(engine):
    res = rank_one_eigh(np.array([-1.0, 0.5, 2.0, 3.0]), np.array([1.0, 1.0, 1.0, 1.0]), 0.3)
    lazy = engine == "numba"
    text = repr(res)
    assert text.startswith("RankOneEigen(eigenvalues=array([")
    assert text.endswith(f"n_deflated=0, eigenvectors={'formed when read' if lazy else 'formed'})")
    assert res.eigenvectors.shape[0] == 4
    assert repr(res).endswith("n_deflated=0, eigenvectors=formed)")
    with pytest.raises(
        ValueError, match=r"^RankOneEigen needs the eigenvectors or their assembly\.$"
    ):
        RankOneEigen(np.zeros(2))
