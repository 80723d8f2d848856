"""Ong et al. (2004), Sect. 5: TSF, Landweber-Fridman and MR-II against dense references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indefsvm.kernels import gaussian_combination_kernel, sigmoid_kernel
from indefsvm.krein import (
    OngSubspaceRegressor,
    landweber_fridman,
    mr_ii,
    truncated_spectral_factorization,
)


def _indefinite(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    return (A + A.T) / 2, rng.normal(size=n)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 25), st.integers(0, 2**31 - 1), st.integers(1, 8))
def test_mr_ii_minimises_residual_over_krylov_space(n, seed, k):
    K, y = _indefinite(n, seed)
    k = min(k, n)
    sol = mr_ii(K, y, n_iter=k)
    # Reference: least squares over span{K y, ..., K^j y} with j = iterations done (QR basis).
    j = sol.n_iter
    B = np.column_stack([np.linalg.matrix_power(K, i) @ y for i in range(1, j + 1)])
    Q, _ = np.linalg.qr(B)
    c, *_ = np.linalg.lstsq(K @ Q, y, rcond=None)
    ref = np.linalg.norm(y - K @ (Q @ c))
    assert np.linalg.norm(y - K @ sol.alpha) == pytest.approx(ref, rel=1e-6, abs=1e-9)
    assert np.all(np.diff(sol.residual_norms) <= 1e-9 * sol.residual_norms[0])


def test_mr_ii_with_clustered_and_repeated_eigenvalues_reaches_solution():
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    lam = np.array([-2.0, -2.0, -2.0, -1e-3, 1.0, 1.0, 1.0 + 1e-10, 3.0, 3.0, 5.0, -4.0, 2.0])
    K = (Q * lam) @ Q.T
    y = rng.normal(size=12)
    K = 0.5 * (K + K.T)
    exact = np.linalg.solve(K, y)
    # 7 clusters (one split by 1e-10): after 7 steps only the split is unresolved.
    assert np.linalg.norm(K @ mr_ii(K, y, n_iter=7).alpha - y) <= 1e-4 * np.linalg.norm(y)
    # Running far past exhaustion must not blow the iterate up (breakdown guard).
    sol = mr_ii(K, y, n_iter=50)
    assert np.linalg.norm(K @ sol.alpha - y) <= 1e-6 * np.linalg.norm(y)
    assert np.allclose(sol.alpha, exact, rtol=1e-4, atol=1e-6 * np.abs(exact).max())


def test_landweber_filter_factors():
    K, y = _indefinite(10, 1)
    mu, U = np.linalg.eigh(K)
    omega = 0.5 / np.max(mu**2)
    k = 17
    sol = landweber_fridman(K, y, n_iter=k, step_size=omega, variant="normal")
    ref = U @ ((1 - (1 - omega * mu**2) ** k) / mu * (U.T @ y))
    assert np.allclose(sol.alpha, ref, atol=1e-10)
    assert np.all(np.diff(sol.residual_norms) <= 1e-12)
    # The paper's Krein-adjoint reading: filter 1 - (1 - omega mu)^k, growing on mu < 0.
    omega_k = 0.1 / np.max(np.abs(mu))
    kre = landweber_fridman(K, y, n_iter=5, step_size=omega_k, variant="krein")
    ref_k = U @ ((1 - (1 - omega_k * mu) ** 5) / mu * (U.T @ y))
    assert np.allclose(kre.alpha, ref_k, atol=1e-10)
    with pytest.raises(ValueError, match="diverge"):
        landweber_fridman(K, y, n_iter=3, step_size=3.0 / np.max(mu**2), variant="normal")


def test_tsf_truncation():
    K, y = _indefinite(9, 2)
    full = truncated_spectral_factorization(K, y, n_components=9)
    assert np.allclose(K @ full, y, atol=1e-9)
    mu, U = np.linalg.eigh(K)
    keep = np.argsort(-np.abs(mu))[:3]
    ref = sum(U[:, i] * (U[:, i] @ y) / mu[i] for i in keep)
    assert np.allclose(truncated_spectral_factorization(K, y, n_components=3), ref)
    thr = np.sort(np.abs(mu))[-4]  # strictly above -> 3 components
    assert np.allclose(truncated_spectral_factorization(K, y, threshold=thr), ref)
    with pytest.raises(ValueError, match="exactly one"):
        truncated_spectral_factorization(K, y)
    with pytest.raises(ValueError, match="n_components"):
        truncated_spectral_factorization(K, y, n_components=0)


def test_iteration_bad_input():
    K, y = _indefinite(4, 0)
    with pytest.raises(ValueError, match="n_iter"):
        mr_ii(K, y, n_iter=-1)
    with pytest.raises(ValueError, match="one per row"):
        landweber_fridman(K, y[:3], n_iter=2)
    with pytest.raises(ValueError, match="variant"):
        landweber_fridman(K, y, n_iter=2, variant="x")


def test_mr_ii_stops_when_a_rank_deficient_kernel_exhausts_the_krylov_space():
    """Rank-3 kernel, targets outside its range: after 3 steps the Krylov space is exhausted
    and MR-II's iterate is the minimum-norm least-squares solution ``pinv(K) y`` (x_k lies in
    range(K)); continuing would normalise rounding noise of the null space (eigenvalues
    ~1e-15 ||K||) into a huge iterate (|alpha| ~ 1e14 before the breakdown test was scaled by
    ||K||)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 3)) * np.array([3.0, 1.0, 0.2])
    K = X @ X.T
    y = rng.normal(size=20) + 5.0
    sol = mr_ii(K, y, n_iter=10)
    reference = np.linalg.pinv(K, rcond=1e-10) @ y
    assert sol.n_iter <= 4
    np.testing.assert_allclose(sol.alpha, reference, rtol=1e-6, atol=1e-8 * np.abs(reference).max())


# OngSubspaceRegressor (Ong et al. 2004, Sect. 5) against independent dense computations.
#
# The references use only numpy: the eigendecomposition of the Gram matrix for TSF and the
# Landweber filter factors, a least-squares problem over an explicit Krylov basis for MR-II, a dense
# solve of ``K alpha = y`` for the unregularised limit, and the centring matrix ``H = I - 11'/n``
# written out.


def _sigmoid(A, B=None, a=0.7, b=-0.2):
    return np.tanh(a * A @ (A if B is None else B).T + b)


def _data(seed=0, n=25, m=9):
    rng = np.random.default_rng(seed)
    X, Xt = rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 1.5  # non-zero mean: centring matters
    K, Kt = _sigmoid(X), _sigmoid(Xt, X)
    assert np.linalg.eigvalsh(K)[0] < -1e-3  # indefinite
    return X, Xt, y, K, Kt


def _center(K, Kt):
    n = K.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    # test rows: subtract the mean over training columns of the row, the training column
    # means, add the grand mean; in matrix form (Kt - 1 1'K/n) H
    Kt_c = (Kt - np.ones((Kt.shape[0], n)) @ K / n) @ H
    return H @ K @ H, Kt_c


def _tsf_ref(K, y, k):
    mu, U = np.linalg.eigh(K)
    keep = np.argsort(-np.abs(mu))[:k]
    return U[:, keep] @ ((U[:, keep].T @ y) / mu[keep])


def _krylov_ref(K, y, k):
    """argmin ||y - K alpha|| over alpha in span{K y, ..., K^k y} (MR-II, alpha_0 = 0)."""
    B = np.column_stack([np.linalg.matrix_power(K, i) @ y for i in range(1, k + 1)])
    Q, _ = np.linalg.qr(B)
    c, *_ = np.linalg.lstsq(K @ Q, y, rcond=None)
    return Q @ c


def _landweber_ref(K, y, k, omega):
    mu, U = np.linalg.eigh(K)
    return U @ ((1 - (1 - omega * mu**2) ** k) / mu * (U.T @ y))


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("k", [3, 8])
def test_tsf_matches_dense_truncated_eigensolution(center, k):
    X, Xt, y, K, Kt = _data()
    Kf, Ktf, b = K, Kt, 0.0
    if center:
        Kf, Ktf = _center(K, Kt)
        b = y.mean()
    alpha = _tsf_ref(Kf, y - b, k)
    est = OngSubspaceRegressor(solver="tsf", n_eigenpairs=k, center=center).fit(K, y)
    assert np.allclose(est.alpha_, alpha, atol=1e-9 * np.abs(alpha).max())
    assert est.intercept_ == pytest.approx(b)
    assert np.allclose(est.predict(Kt), Ktf @ alpha + b, atol=1e-8)
    # a callable kernel gives the same model as the precomputed one
    est_x = OngSubspaceRegressor(_sigmoid, solver="tsf", n_eigenpairs=k, center=center)
    assert np.allclose(est_x.fit(X, y).predict(Xt), Ktf @ alpha + b, atol=1e-8)


def test_tsf_default_threshold_interpolates_like_a_dense_solve():
    _, _, y, K, Kt = _data(1)
    est = OngSubspaceRegressor(solver="tsf").fit(K, y)
    exact = np.linalg.solve(K, y)
    assert np.allclose(est.alpha_, exact, rtol=1e-6, atol=1e-8 * np.abs(exact).max())
    assert np.allclose(est.predict(K), y, atol=1e-7)
    assert np.allclose(est.predict(Kt), Kt @ exact, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("center", [False, True])
@pytest.mark.parametrize("k", [1, 4, 7])
def test_mr2_matches_least_squares_over_krylov_basis(center, k):
    _, _, y, K, Kt = _data(2)
    Kf, Ktf, b = K, Kt, 0.0
    if center:
        Kf, Ktf = _center(K, Kt)
        b = y.mean()
    alpha = _krylov_ref(Kf, y - b, k)
    est = OngSubspaceRegressor(solver="mr2", n_iter=k, center=center).fit(K, y)
    assert est.n_iter_ == k
    res_est = np.linalg.norm(Kf @ est.alpha_ - (y - b))
    res_ref = np.linalg.norm(Kf @ alpha - (y - b))
    assert res_est == pytest.approx(res_ref, rel=1e-6)
    assert np.allclose(est.alpha_, alpha, rtol=1e-5, atol=1e-6 * np.abs(alpha).max())
    assert np.allclose(est.predict(Kt), Ktf @ alpha + b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("k", [5, 40])
def test_landweber_matches_filter_factors(k):
    _, _, y, K, Kt = _data(3)
    omega = 0.7 / np.max(np.linalg.eigvalsh(K) ** 2)
    alpha = _landweber_ref(K, y, k, omega)
    # the normal-equation variant (Hanke & Hansen), whose filter factors _landweber_ref writes out
    est = OngSubspaceRegressor(solver="landweber", variant="normal", n_iter=k, step_size=omega).fit(
        K, y
    )
    assert est.n_iter_ == k
    assert np.allclose(est.alpha_, alpha, atol=1e-10 * max(1.0, np.abs(alpha).max()))
    assert np.allclose(est.predict(Kt), Kt @ alpha, atol=1e-9)
    # default step 1/||K||^2
    default = OngSubspaceRegressor(solver="landweber", variant="normal", n_iter=k).fit(K, y)
    omega0 = 1.0 / np.max(np.abs(np.linalg.eigvalsh(K))) ** 2
    assert np.allclose(default.alpha_, _landweber_ref(K, y, k, omega0), rtol=1e-6, atol=1e-9)


def test_more_iterations_fit_the_training_targets_better():
    _, _, y, K, _ = _data(4)
    res = [
        np.linalg.norm(OngSubspaceRegressor(solver="mr2", n_iter=k).fit(K, y).predict(K) - y)
        for k in (1, 3, 6, 12)
    ]
    assert all(a > b for a, b in zip(res, res[1:], strict=False))


_ZERO = "K is the zero matrix"


def test_zero_kernel_is_refused_by_every_subspace_method():
    K = np.zeros((5, 5))
    y = np.arange(5.0)
    with pytest.raises(ValueError, match=_ZERO):
        truncated_spectral_factorization(K, y, n_components=2)
    with pytest.raises(ValueError, match=_ZERO):
        truncated_spectral_factorization(K, y, threshold=1e-3)
    for variant in ("hilbert", "normal", "krein"):
        with pytest.raises(ValueError, match=_ZERO):
            landweber_fridman(K, y, n_iter=3, variant=variant)
    with pytest.raises(ValueError, match=_ZERO):
        mr_ii(K, y, n_iter=3)
    with pytest.raises(ValueError, match="numerically unusable"):
        mr_ii(np.eye(5) * 1e-200, y, n_iter=3)


@pytest.mark.parametrize("method", ["tsf", "landweber", "mr2"])
def test_zero_kernel_in_the_estimator(method):
    y = np.arange(6.0)
    with pytest.raises(ValueError, match=_ZERO):
        OngSubspaceRegressor(solver=method, n_iter=3).fit(np.zeros((6, 6)), y)
    # A constant kernel is zero after centring.
    with pytest.raises(ValueError, match=_ZERO):
        OngSubspaceRegressor(solver=method, n_iter=3, center=True).fit(np.ones((6, 6)), y)


def _krylov_reference(K, r0, k):
    """min ||r0 - K Q c|| with Q an orthonormal basis of span{K r0, ..., K^k r0}.

    Built by Arnoldi with two modified Gram-Schmidt passes on the Krylov sequence itself (not
    MR-II's Lanczos basis of K times that space) and solved by dense least squares.
    """
    scale = np.linalg.norm(K, 2)
    basis: list[np.ndarray] = []
    v = K @ r0
    for _ in range(k):
        for _pass in range(2):
            for q in basis:
                v = v - (q @ v) * q
        nv = np.linalg.norm(v)
        if nv <= 1e-13 * scale * (np.linalg.norm(basis[-1]) if basis else np.linalg.norm(r0)):
            break
        basis.append(v / nv)
        v = K @ basis[-1]
    Q = np.column_stack(basis)
    c, *_ = np.linalg.lstsq(K @ Q, r0, rcond=None)
    return float(np.linalg.norm(r0 - K @ (Q @ c))), Q.shape[1]


def _sigmoid_problem(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(100, 5))
    y = np.sign(X[:, 0] + 0.3 * rng.normal(size=100))
    return sigmoid_kernel(X, gamma=0.5, coef0=-0.2), y


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("k", [20, 25, 30, 40])
def test_mr_ii_is_the_krylov_minimiser_at_20_and_more_iterations(seed, k):
    # Issue 10, item 9: the plain recurrence stays above the minimum from ~15 iterations on
    # (seed 1, k = 30: 3.449 vs 3.247).
    K, y = _sigmoid_problem(seed)
    sol = mr_ii(K, y, n_iter=k)
    ref, dim = _krylov_reference(K, y, k)
    assert sol.n_iter == dim == k
    assert np.linalg.norm(y - K @ sol.alpha) == pytest.approx(ref, rel=1e-9)
    assert sol.residual_norms[-1] == pytest.approx(ref, rel=1e-9)
    assert np.all(np.diff(sol.residual_norms) <= 1e-12 * sol.residual_norms[0])


def test_mr_ii_plain_recurrence_is_kept_and_loses_optimality():
    K, y = _sigmoid_problem(1)
    plain = mr_ii(K, y, n_iter=30, reorthogonalize=False)
    ref, _ = _krylov_reference(K, y, 30)
    assert np.linalg.norm(y - K @ plain.alpha) > 1.03 * ref
    # Before orthogonality is lost both agree.
    early = mr_ii(K, y, n_iter=8, reorthogonalize=False)
    assert np.allclose(early.alpha, mr_ii(K, y, n_iter=8).alpha, rtol=1e-8, atol=1e-10)


@settings(max_examples=10, deadline=None)
@given(st.integers(20, 45), st.integers(0, 2**31 - 1), st.integers(20, 60))
def test_mr_ii_minimal_residual_property(n, seed, k):
    rng = np.random.default_rng(seed)
    # Graded indefinite spectrum (as kernel matrices have): orthogonality is lost quickly.
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    mu = rng.choice([-1.0, 1.0], size=n) * np.exp(-rng.uniform(0, 8, size=n))
    K = (Q * mu) @ Q.T
    K = 0.5 * (K + K.T)
    y = rng.normal(size=n)
    sol = mr_ii(K, y, n_iter=k)
    ref, _ = _krylov_reference(K, y, sol.n_iter)
    # Near exhaustion (k ~ n) the residual is tiny and only accurate to ~eps cond(K) ||y||.
    cond = np.max(np.abs(mu)) / np.min(np.abs(mu))
    slack = 1e-11 * cond * np.linalg.norm(y)
    assert np.linalg.norm(y - K @ sol.alpha) <= ref * (1 + 1e-6) + slack


def sinc_toy(seed, n=100, noise=0.1):
    """The sinc toy of ``experiments/ong_fig2.py`` (paper 002, Sect. 5.3, Fig. 2 top row)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-10.0, 10.0, size=(n, 1))
    y = np.sinc(x[:, 0] / np.pi) + noise * rng.normal(size=n)
    grid = np.linspace(-10.0, 10.0, 500)[:, None]
    params = {"sigma1": 0.8, "sigma2": 1.2, "sigma3": 10.0}
    K = gaussian_combination_kernel(x, **params)
    K_grid = gaussian_combination_kernel(grid, x, **params)
    return K, y, K_grid, np.sinc(grid[:, 0] / np.pi)


def test_landweber_default_reaches_its_best_fit_in_30_iterations():
    ratios = []
    for seed in range(5):
        K, y, Kg, fg = sinc_toy(seed)

        def rmse(alpha, Kg=Kg, fg=fg):
            return float(np.sqrt(np.mean((Kg @ alpha - fg) ** 2)))

        at30 = rmse(landweber_fridman(K, y, n_iter=30).alpha)
        best = min(rmse(landweber_fridman(K, y, n_iter=k).alpha) for k in (100, 300, 1000))
        best_mr = min(rmse(mr_ii(K, y, n_iter=k).alpha) for k in range(4, 16))
        ratios.append(at30 / min(best, best_mr))
    # Paper 002: "30 iterations for LF" give a fit as good as TSF and MR-II (visually).
    assert np.median(ratios) <= 1.15, ratios


def test_landweber_hilbert_filter_factors():
    rng = np.random.default_rng(4)
    A = rng.normal(size=(10, 10))
    K = (A + A.T) / 2
    y = rng.normal(size=10)
    mu, U = np.linalg.eigh(K)
    for omega in (None, 0.7 / np.max(np.abs(mu))):
        w = 1.0 / np.max(np.abs(mu)) if omega is None else omega
        sol = landweber_fridman(K, y, n_iter=23, step_size=omega)
        ref = U @ ((1 - (1 - w * np.abs(mu)) ** 23) / mu * (U.T @ y))
        assert np.allclose(sol.alpha, ref, atol=1e-10)
        assert np.all(np.diff(sol.residual_norms) <= 1e-12)
    with pytest.raises(ValueError, match="diverge"):
        landweber_fridman(K, y, n_iter=3, step_size=2.5 / np.max(np.abs(mu)))
    # On a positive definite K "hilbert" is the paper's formula as printed ("krein").
    P = A @ A.T + np.eye(10)
    assert np.allclose(
        landweber_fridman(P, y, n_iter=9).alpha,
        landweber_fridman(P, y, n_iter=9, variant="krein").alpha,
        atol=1e-12,
    )


def test_tsf_truncation_level_is_n_eigenpairs_not_a_nystroem_rank():
    """The truncation level is ``n_eigenpairs`` (0.2.0): ``n_components`` is the Nystroem rank
    elsewhere, and the thread policy (:func:`indefsvm.threads.threaded_fit`) reads it as one."""
    params = OngSubspaceRegressor(solver="tsf", n_eigenpairs=3).get_params()
    assert params["n_eigenpairs"] == 3 and "n_components" not in params
    with pytest.raises(TypeError, match="n_components"):
        OngSubspaceRegressor(solver="tsf", n_components=3)
