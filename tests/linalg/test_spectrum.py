"""Tests of indefsvm.linalg.spectrum against dense eigendecompositions and independent formulas."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from indefsvm.linalg.spectrum import (
    SpectrumSummary,
    eigen_summary,
    indefiniteness,
    is_cnd,
    is_nds,
    is_psd,
    spectrum_table,
    spectrum_transform,
)


def random_orthogonal(n: int, rng: np.random.Generator) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((n, n)))
    return Q * np.sign(np.diag(R))


def matrix_with_spectrum(eigenvalues: np.ndarray, seed: int) -> np.ndarray:
    Q = random_orthogonal(eigenvalues.shape[0], np.random.default_rng(seed))
    K = (Q * eigenvalues) @ Q.T
    return 0.5 * (K + K.T)


# Spectra with clustered and repeated eigenvalues, exact zeros and both signs.
spectra = st.integers(min_value=2, max_value=12).flatmap(
    lambda n: st.lists(
        st.sampled_from([-3.0, -1.0, -1.0 + 1e-9, 0.0, 0.0, 1e-3, 1.0, 1.0 + 1e-12, 2.5, 10.0]),
        min_size=n,
        max_size=n,
    )
)


# --------------------------------------------------------------------------------------------
# eigen_summary / indefiniteness
# --------------------------------------------------------------------------------------------


def test_eigen_summary_matches_known_spectrum() -> None:
    lam = np.array([-4.0, -1.0, 0.0, 0.0, 2.0, 3.0, 5.0])
    K = matrix_with_spectrum(lam, seed=0)
    s = eigen_summary(K)
    assert isinstance(s, SpectrumSummary)
    assert s.n == 7
    assert s.lambda_min == pytest.approx(-4.0, abs=1e-12)
    assert s.lambda_max == pytest.approx(5.0, abs=1e-12)
    assert (s.n_positive, s.n_negative, s.n_zero) == (3, 2, 2)
    # iota = (4 + 1) / (4 + 1 + 2 + 3 + 5), paper 000 Sect. 5
    assert s.iota == pytest.approx(5.0 / 15.0, rel=1e-12)


def test_eigen_summary_agrees_with_scipy_eig() -> None:
    rng = np.random.default_rng(3)
    A = rng.standard_normal((30, 30))
    K = A + A.T
    lam = np.sort(np.real(scipy.linalg.eigvals(K)))  # general (non-symmetric) solver
    s = eigen_summary(K)
    assert s.lambda_min == pytest.approx(lam[0], rel=1e-10)
    assert s.lambda_max == pytest.approx(lam[-1], rel=1e-10)
    assert s.n_negative == int(np.sum(lam < 0))
    expected_iota = sum(-x for x in lam if x < 0) / sum(abs(x) for x in lam)
    assert s.iota == pytest.approx(expected_iota, rel=1e-10)


def test_eigen_summary_psd_has_zero_iota_despite_rounding() -> None:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 3))
    K = X @ X.T  # rank 3: 37 eigenvalues are rounding noise of either sign
    s = eigen_summary(K)
    assert (s.n_positive, s.n_negative, s.n_zero) == (3, 0, 37)
    assert s.iota == 0.0


def test_eigen_summary_tolerance_is_relative() -> None:
    K = np.diag([1e-6, 1.0, -1e-6])
    loose = eigen_summary(K, tol=1e-3)
    assert (loose.n_positive, loose.n_negative, loose.n_zero) == (1, 0, 2)
    strict = eigen_summary(K)
    assert (strict.n_positive, strict.n_negative, strict.n_zero) == (2, 1, 0)


def test_indefiniteness_edge_cases() -> None:
    assert indefiniteness([0.0, 0.0]) == 0.0
    assert indefiniteness([-1.0, -2.0]) == 1.0
    assert indefiniteness([1.0, 2.0]) == 0.0


@settings(max_examples=40, deadline=None)
@given(lam=spectra, seed=st.integers(0, 2**16))
def test_eigen_summary_property(lam: list[float], seed: int) -> None:
    lam_arr = np.array(lam)
    K = matrix_with_spectrum(lam_arr, seed)
    s = eigen_summary(K, tol=1e-6)
    scale = np.max(np.abs(lam_arr))
    assert s.n_positive == int(np.sum(lam_arr > 1e-6 * scale))
    assert s.n_negative == int(np.sum(lam_arr < -1e-6 * scale))
    assert s.n_positive + s.n_negative + s.n_zero == len(lam)
    assert s.lambda_min == pytest.approx(lam_arr.min(), abs=1e-10 * max(1, scale))
    assert 0.0 <= s.iota <= 1.0


@pytest.mark.parametrize(
    "bad, error",
    [
        (np.ones((2, 3)), ValueError),
        (np.array([[1.0, 2.0], [0.0, 1.0]]), ValueError),
        (np.array([[np.nan, 0.0], [0.0, 1.0]]), ValueError),
        (np.array([["a", "b"], ["c", "d"]]), TypeError),
    ],
)
def test_eigen_summary_rejects_bad_input(bad: np.ndarray, error: type) -> None:
    with pytest.raises(error):
        eigen_summary(bad)


# --------------------------------------------------------------------------------------------
# is_psd / is_cnd
# --------------------------------------------------------------------------------------------


def test_is_psd() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 4))
    G = X @ X.T
    assert is_psd(G)
    assert not is_psd(G - 1e-3 * np.eye(20))
    assert is_psd(np.zeros((3, 3)))
    assert not is_psd(np.diag([1.0, -1e-6]), tol=1e-9)
    assert is_psd(np.diag([1.0, -1e-6]), tol=1e-5)
    with pytest.raises(ValueError, match="tol"):
        is_psd(G, tol=-1.0)


def test_is_cnd_textbook_examples() -> None:
    rng = np.random.default_rng(2)
    X = rng.standard_normal((15, 3))
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    assert is_cnd(sq)  # Example 6.15: squared distances are NDS
    assert is_cnd(np.sqrt(sq))  # Theorem 6.18: ||x - y||^p for 0 < p <= 2
    assert not is_cnd(-sq)
    assert not is_cnd(np.exp(-sq))  # a PD kernel is not NDS
    assert is_nds is is_cnd
    assert is_cnd(np.array([[5.0]]))


def reference_cnd_via_pds(K: np.ndarray) -> tuple[bool, float]:
    """Textbook Theorem 6.16: K is NDS iff K'(x,x') = K(x,x0)+K(x',x0)-K(x,x')-K(x0,x0) is PDS.

    Returns the verdict and a margin (distance of the deciding eigenvalue from 0).
    """
    Kp = K[:, :1] + K[:1, :] - K - K[0, 0]
    lam = np.linalg.eigvalsh(0.5 * (Kp + Kp.T))
    return bool(lam[0] >= -1e-9 * max(1.0, np.abs(lam).max())), float(abs(lam[0]))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 10), kind=st.sampled_from(["cnd", "rand"]))
def test_is_cnd_matches_theorem_6_16(seed: int, n: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    if kind == "cnd":
        X = rng.standard_normal((n, 2))
        sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        K = sq + rng.standard_normal() + np.add.outer(u := rng.standard_normal(n), u)
    else:
        A = rng.standard_normal((n, n))
        K = A + A.T
    expected, margin = reference_cnd_via_pds(K)
    if kind == "rand" and margin < 1e-6:
        return  # too close to the boundary for two different tolerances to agree
    assert is_cnd(K) == expected


# --------------------------------------------------------------------------------------------
# spectrum_transform
# --------------------------------------------------------------------------------------------


def indefinite_matrix(n: int = 12, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    return A + A.T


def test_clip_and_flip_match_matrix_functions() -> None:
    K = indefinite_matrix()
    abs_K = np.real(scipy.linalg.sqrtm(K @ K))  # |K| without an eigendecomposition of K
    flip = spectrum_transform(K, "flip")
    clip = spectrum_transform(K, "clip")
    np.testing.assert_allclose(flip.kernel, abs_K, atol=1e-10)
    np.testing.assert_allclose(clip.kernel, 0.5 * (K + abs_K), atol=1e-10)
    assert is_psd(clip.kernel) and is_psd(flip.kernel)


def test_clip_is_the_frobenius_projection() -> None:
    # Any PSD matrix is at least as far from K as the clipped one (Higham 1988).
    K = indefinite_matrix(8, seed=5)
    clip = spectrum_transform(K, "clip").kernel
    rng = np.random.default_rng(0)
    best = np.linalg.norm(K - clip)
    for _ in range(50):
        B = rng.standard_normal((8, 8))
        candidate = clip + 0.05 * B @ B.T
        assert np.linalg.norm(K - candidate) >= best - 1e-12


def test_square_and_shift() -> None:
    K = indefinite_matrix()
    sq = spectrum_transform(K, "square")
    np.testing.assert_allclose(sq.kernel, K @ K, atol=1e-12)
    sh = spectrum_transform(K, "shift")
    lam = np.linalg.eigvalsh(K)
    assert sh.shift == pytest.approx(-lam[0])
    np.testing.assert_allclose(sh.kernel, K - lam[0] * np.eye(12), atol=1e-12)
    assert np.linalg.eigvalsh(sh.kernel)[0] == pytest.approx(0.0, abs=1e-10)
    custom = spectrum_transform(K, "shift", shift=100.0)
    np.testing.assert_allclose(custom.kernel, K + 100 * np.eye(12))
    assert spectrum_transform(np.eye(3), "shift").shift == 0.0


@pytest.mark.parametrize("method", ["clip", "flip", "square"])
def test_test_map_reproduces_training_block(method: str) -> None:
    K = indefinite_matrix(15, seed=7)
    tr = spectrum_transform(K, method)
    scale = np.abs(tr.kernel).max()
    np.testing.assert_allclose(tr.transform(K), tr.kernel, atol=1e-12 * scale)
    np.testing.assert_allclose(tr.transform(K[3:5]), tr.kernel[3:5], atol=1e-12 * scale)


def test_chen_maps_are_the_stated_projections() -> None:
    K = indefinite_matrix(10, seed=11)
    lam, U = scipy.linalg.eigh(K)
    P_clip = U[:, lam > 0] @ U[:, lam > 0].T
    P_flip = (U * np.sign(lam)) @ U.T
    k = np.random.default_rng(0).standard_normal((4, 10))
    np.testing.assert_allclose(spectrum_transform(K, "clip").transform(k), k @ P_clip, atol=1e-12)
    np.testing.assert_allclose(spectrum_transform(K, "flip").transform(k), k @ P_flip, atol=1e-12)


def test_wu_heuristic_for_square_and_shift() -> None:
    # Explicit Wu et al. heuristic: transform the training kernel augmented with one test point
    # and read the test row.
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((14, 3))
    full = np.tanh(Z @ Z.T - 0.5)  # sigmoid kernel on 10 training + 4 test points
    K, Kt, kxx = full[:10, :10], full[10:, :10], np.diag(full)[10:]
    sq = spectrum_transform(K, "square")
    sh = spectrum_transform(K, "shift")
    for i in range(4):
        idx = list(range(10)) + [10 + i]
        aug = full[np.ix_(idx, idx)]
        np.testing.assert_allclose(
            sq.transform(Kt[i : i + 1], K_test_diag=kxx[i : i + 1])[0],
            (aug @ aug)[-1, :10],
            atol=1e-12,
        )
        shifted = spectrum_transform(aug, "shift").kernel
        np.testing.assert_allclose(sh.transform(Kt[i : i + 1])[0], shifted[-1, :10])


@settings(max_examples=40, deadline=None)
@given(lam=spectra, seed=st.integers(0, 2**16), method=st.sampled_from(["clip", "flip", "square"]))
def test_transform_property(lam: list[float], seed: int, method: str) -> None:
    lam_arr = np.array(lam)
    K = matrix_with_spectrum(lam_arr, seed)
    tr = spectrum_transform(K, method)
    fn = {"clip": lambda x: np.maximum(x, 0), "flip": np.abs, "square": np.square}[method]
    expected = np.sort(fn(lam_arr))
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(np.linalg.eigvalsh(tr.kernel), expected, atol=1e-10 * scale)
    np.testing.assert_allclose(np.sort(tr.transformed_eigenvalues), expected, atol=1e-10 * scale)
    np.testing.assert_allclose(tr.transform(K), tr.kernel, atol=1e-10 * scale)
    # eigenvectors are orthonormal even for repeated eigenvalues
    U = tr.eigenvectors
    np.testing.assert_allclose(U.T @ U, np.eye(len(lam)), atol=1e-10)
    assert is_psd(tr.kernel, tol=1e-9)


def test_transform_errors() -> None:
    K = indefinite_matrix(5)
    with pytest.raises(ValueError, match="^spectrum must be one of"):
        spectrum_transform(K, "denoise")
    with pytest.raises(ValueError, match="shift is only used"):
        spectrum_transform(K, "clip", shift=1.0)
    with pytest.raises(ValueError, match="shift"):
        spectrum_transform(K, "shift", shift=-1.0)
    tr = spectrum_transform(K, "clip")
    with pytest.raises(ValueError, match="one column per training point"):
        tr.transform(np.ones((2, 4)))
    with pytest.raises(ValueError, match="reshape"):
        tr.transform(np.ones(5))
    with pytest.raises(ValueError, match="K_test_diag"):
        tr.transform(np.ones((2, 5)), K_test_diag=np.ones(2))
    with pytest.raises(ValueError, match="one entry per test row"):
        spectrum_transform(K, "square").transform(np.ones((2, 5)), K_test_diag=np.ones(3))
    with pytest.raises(ValueError, match="NaN"):
        tr.transform(np.full((1, 5), np.nan))


def test_spectrum_table_prints_rows() -> None:
    buf = io.StringIO()
    K1 = np.diag([-1.0, 2.0, 3.0])
    rows = spectrum_table([("toy", "diag", K1), ("toy", "eye", np.eye(2))], file=buf)
    text = buf.getvalue().splitlines()
    assert text[0].startswith("| dataset | kernel | n |")
    assert text[2] == "| toy | diag | 3 | -1 | 3 | 1 | 0.167 |"
    assert rows[1]["n_negative"] == 0 and rows[1]["iota"] == 0.0
    assert spectrum_table([], file=None) == []
    seen: list[str] = []
    spectrum_table([("a", "k", K1)], file=None, on_row=lambda row: seen.append(row["dataset"]))
    assert seen == ["a"]


def _negative_definite(n: int = 30, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    # -(X X') - I: every eigenvalue <= -1, so clipping leaves only rounding noise.
    return -(X @ X.T) - np.eye(n), y


def test_spectrum_transform_active_uses_the_original_scale():
    """A relative tolerance on the CLIPPED spectrum keeps noise as signal; on the original
    spectrum it does not (dense eigh as reference)."""
    K, _ = _negative_definite()
    tr = spectrum_transform(K, "clip")
    lam = np.linalg.eigvalsh(K)
    noise = 30 * np.finfo(float).eps * np.abs(lam).max()
    assert not np.any(tr.active() & (tr.transformed_eigenvalues <= noise))
    assert not np.any(tr.active())


# -- SpectrumMap: one transformation, on a dense kernel and on a factor ---------------------------
@pytest.mark.parametrize("name", ["clip", "flip", "square"])
def test_spectrum_map_on_a_factor_equals_the_dense_transform(name):
    """Factor form against the dense transform of the same kernel (explicit eigh)."""
    from indefsvm.linalg.spectrum import SPECTRUM_MAPS

    rng = np.random.default_rng(5)
    Q, _ = np.linalg.qr(rng.normal(size=(30, 6)))
    lam = np.array([3.0, -2.0, 1.5, -0.7, 0.4, -0.1])
    Phi = Q * np.sqrt(np.abs(lam))  # orthogonal columns, K = Phi diag(sign) Phi'
    s = np.sign(lam)
    K = (Phi * s) @ Phi.T
    transform = SPECTRUM_MAPS[name]
    dense = transform.dense(K)
    ref = spectrum_transform(K, name)
    np.testing.assert_array_equal(dense.kernel, ref.kernel)
    F, sig = transform.factor(Phi, s, np.abs(lam))
    assert np.all(sig == 1.0)
    np.testing.assert_allclose((F * sig) @ F.T, dense.kernel, atol=1e-12)
    # test rows: the same column operation as the training rows
    rows = rng.normal(size=(4, 6))
    F_test, _ = transform.factor(rows, s, np.abs(lam))
    g = transform.eigenvalues(lam)
    expected = (rows * np.where(g > 0, np.sqrt(g / np.abs(lam)), 0.0))[:, g > 0]
    np.testing.assert_allclose(F_test[:, np.any(F_test != 0, axis=0)], expected, atol=1e-12)
    # in place: the caller's memory and dtype
    P32 = Phi.astype(np.float32)
    F32, _ = transform.factor(P32, s, np.abs(lam), inplace=True)
    assert F32.dtype == np.float32


def test_spectrum_map_shift_has_no_factor_form():
    from indefsvm.linalg.spectrum import SPECTRUM_MAPS, TRANSFORM_METHODS

    assert set(SPECTRUM_MAPS) == set(TRANSFORM_METHODS)
    with pytest.raises(ValueError, match="'shift' has no factor form"):
        SPECTRUM_MAPS["shift"].factor(np.ones((3, 2)), np.ones(2), np.ones(2))
    np.testing.assert_array_equal(
        SPECTRUM_MAPS["shift"].eigenvalues(np.array([-1.0, 2.0]), 1.0), [0.0, 3.0]
    )
