"""Tests of indefsvm.kernels.image (Simpson and tangent distance kernels) against per-pair
formulas and independent references.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import ndimage
from sklearn.datasets import load_digits

import indefsvm.utils.blocks as blocks_module
from indefsvm.kernels import (
    DEFAULT_TANGENTS,
    one_sided_tangent_distance,
    simpson_kernel,
    squared_euclidean_distances,
    tangent_distance_kernel,
    tangent_vectors,
)
from indefsvm.linalg.spectrum import eigen_summary


def test_simpson_matches_set_formula() -> None:
    rng = np.random.default_rng(3)
    imgs = rng.integers(0, 17, size=(12, 8, 8)).astype(float)
    K = simpson_kernel(imgs, threshold=8)
    sets = [set(np.flatnonzero(im.ravel() >= 8)) for im in imgs]
    expected = np.array([[len(a & b) / min(len(a), len(b)) for b in sets] for a in sets])
    np.testing.assert_allclose(K, expected, rtol=1e-14)
    np.testing.assert_allclose(np.diag(K), 1.0)
    K_xy = simpson_kernel(imgs[:5], imgs[5:], threshold=8)
    np.testing.assert_allclose(K_xy, expected[:5, 5:], rtol=1e-14)
    flat = simpson_kernel(imgs.reshape(12, 64), threshold=8)
    np.testing.assert_array_equal(flat, K)


def test_simpson_is_indefinite_on_digits() -> None:
    d = load_digits()
    X = d.data[np.isin(d.target, [3, 5])]
    assert eigen_summary(simpson_kernel(X, threshold=8)).n_negative > 0


def test_simpson_errors() -> None:
    imgs = np.zeros((3, 4, 4))
    imgs[0, 1, 1] = imgs[2, 2, 2] = 1
    with pytest.raises(ValueError, match="without ink"):
        simpson_kernel(imgs)
    with pytest.raises(ValueError, match="square number"):
        simpson_kernel(np.ones((2, 10)))
    with pytest.raises(ValueError, match="Y images"):
        simpson_kernel(np.ones((2, 4, 4)), np.ones((2, 3, 3)))


def blob_image(size: int, cx: float, cy: float, angle: float = 0.0) -> np.ndarray:
    """An anisotropic Gaussian blob sampled analytically (rotation by ``angle`` about center)."""
    c = (size - 1) / 2.0
    rows, cols = np.mgrid[0:size, 0:size].astype(float)
    x, y = cols - c - cx, rows - c - cy
    ca, sa = math.cos(angle), math.sin(angle)
    u, v = ca * x + sa * y, -sa * x + ca * y
    return np.exp(-(u**2) / 8.0 - v**2 / 2.0)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(abs(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_translation_and_rotation_tangents_match_finite_differences() -> None:
    size, h, smooth = 24, 1e-3, 1.0
    T = tangent_vectors(blob_image(size, 0.0, 0.0)[None], smoothing=smooth)[0]

    def smoothed(img: np.ndarray) -> np.ndarray:
        return ndimage.gaussian_filter(img, smooth, mode="constant").ravel()

    fd_x = (smoothed(blob_image(size, h, 0)) - smoothed(blob_image(size, -h, 0))) / (2 * h)
    fd_y = (smoothed(blob_image(size, 0, h)) - smoothed(blob_image(size, 0, -h))) / (2 * h)
    fd_rot = (smoothed(blob_image(size, 0, 0, h)) - smoothed(blob_image(size, 0, 0, -h))) / (2 * h)
    names = list(DEFAULT_TANGENTS)
    # Moving the blob by +h changes the image by -h * p_x (up to sign conventions).
    np.testing.assert_allclose(-T[:, names.index("translation_x")], fd_x, atol=2e-3)
    np.testing.assert_allclose(-T[:, names.index("translation_y")], fd_y, atol=2e-3)
    assert cosine(T[:, names.index("rotation")], fd_rot) > 0.999


def test_one_sided_distance_matches_per_pair_least_squares() -> None:
    d = load_digits()
    X = d.data[:12]
    D = one_sided_tangent_distance(X)
    T = tangent_vectors(X)
    for i in range(12):
        for j in range(12):
            a, *_ = np.linalg.lstsq(T[i], X[j] - X[i], rcond=None)
            expected = np.linalg.norm(X[i] + T[i] @ a - X[j])
            assert D[i, j] == pytest.approx(expected, rel=1e-7, abs=1e-6)


def test_one_sided_distance_without_useful_tangents_is_euclidean() -> None:
    # Blank images have zero tangents: the distance from them is Euclidean.
    X = np.zeros((3, 36))
    Y = np.random.default_rng(0).random((4, 36))
    D = one_sided_tangent_distance(X, Y)
    np.testing.assert_allclose(D, np.sqrt(squared_euclidean_distances(X, Y)), rtol=1e-12)


def test_tangent_distance_properties_on_digits() -> None:
    d = load_digits()
    img3 = d.images[d.target == 3][0]
    img5 = d.images[d.target == 5][0]
    shifted = ndimage.shift(img3, (0.0, 0.5), order=3, mode="constant")
    stack = np.stack([img3, shifted, img5, img3.copy()])
    D = one_sided_tangent_distance(stack)
    assert D[0, 0] == 0.0 and D[0, 3] == pytest.approx(0.0, abs=1e-6)
    euclid = np.sqrt(squared_euclidean_distances(stack.reshape(4, -1)))
    assert D[0, 1] < 0.8 * euclid[0, 1]  # tangents explain part of a sub-pixel shift
    assert D[0, 1] < 0.65 * D[0, 2] and D[1, 0] < 0.65 * D[2, 0]
    # Comparing the smoothed images (consistent first-order model) explains most of the shift.
    Ds = one_sided_tangent_distance(stack, smooth_images=True)
    smoothed = ndimage.gaussian_filter(stack, (0, 1, 1), mode="constant").reshape(4, -1)
    assert Ds[0, 1] < 0.35 * np.linalg.norm(smoothed[0] - smoothed[1])
    assert Ds[0, 1] < 0.35 * Ds[0, 2]
    K = tangent_distance_kernel(stack, gamma=1e-3)
    assert np.array_equal(K, K.T)
    np.testing.assert_allclose(np.diag(K), 1.0)
    assert K[0, 3] == pytest.approx(1.0) and K[0, 1] > K[0, 2]
    mean = 0.5 * (D + D.T)
    np.testing.assert_allclose(K, np.exp(-1e-3 * mean**2), rtol=1e-12)


def test_tangent_kernel_rectangular_equals_block_of_square() -> None:
    d = load_digits()
    X, Y = d.data[:7], d.data[7:12]
    full = tangent_distance_kernel(np.vstack([X, Y]), gamma=2e-3)
    np.testing.assert_allclose(tangent_distance_kernel(X, Y, gamma=2e-3), full[:7, 7:], rtol=1e-9)


def test_tangent_distance_chunked(monkeypatch) -> None:
    X = load_digits().data[:20]
    full = one_sided_tangent_distance(X)
    monkeypatch.setattr(blocks_module, "BLOCK_BYTES", 8 * 20 * 15 * 3)
    np.testing.assert_allclose(one_sided_tangent_distance(X), full, rtol=1e-12, atol=1e-9)


def test_tangent_distance_any_image_size() -> None:
    rng = np.random.default_rng(5)
    imgs = ndimage.gaussian_filter(rng.random((5, 10, 14)), (0, 1, 1))
    D = one_sided_tangent_distance(imgs.reshape(5, -1), image_shape=(10, 14))
    np.testing.assert_allclose(D, one_sided_tangent_distance(imgs))
    assert D.shape == (5, 5) and np.all(np.diag(D) == 0)
    sub = one_sided_tangent_distance(imgs, tangents=("translation_x",))
    assert np.all(sub >= D - 1e-9)  # fewer tangents cannot explain more


def test_tangent_errors() -> None:
    with pytest.raises(ValueError, match="tangents"):
        tangent_vectors(np.ones((1, 4, 4)), tangents=("zoom",))
    with pytest.raises(ValueError, match="image_shape"):
        one_sided_tangent_distance(np.ones((2, 12)), image_shape=(5, 5))
    with pytest.raises(ValueError, match="smoothing"):
        tangent_vectors(np.ones((1, 4, 4)), smoothing=0.0)


# A tangent distance kernel whose gamma does not match the pixel scale warns and
# names a sensible gamma (raw digits pixels with gamma = 1 underflow to the identity).


@pytest.fixture(scope="module")
def digits():
    return load_digits().images[:30]


def _median_sq_distance(X):
    D = one_sided_tangent_distance(X)
    d2 = ((D + D.T) / 2) ** 2
    return float(np.median(d2[~np.eye(len(X), dtype=bool)]))


def test_underflowing_gamma_warns_with_a_sensible_scale(digits):
    with pytest.warns(UserWarning, match="underflows") as record:
        K = tangent_distance_kernel(digits, gamma=1.0)
    off = K[~np.eye(len(digits), dtype=bool)]
    assert np.mean(off == 0.0) > 0.5  # the defect: a numerically diagonal kernel
    message = str(record[0].message)
    suggested = float(message.split("1/median(d^2) = ")[1].split(" ")[0])
    assert suggested == pytest.approx(1.0 / _median_sq_distance(digits), rel=0.05)
    # The suggested gamma gives a usable kernel and no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K = tangent_distance_kernel(digits, gamma=suggested)
    off = K[~np.eye(len(digits), dtype=bool)]
    assert 0.05 < np.median(off) < 0.9


def test_test_rows_and_the_all_ones_end_warn(digits):
    with pytest.warns(UserWarning, match=r"underflows to \(nearly\) zero"):
        tangent_distance_kernel(digits[:4], digits[4:], gamma=1.0)
    with pytest.warns(UserWarning, match="all-ones"):
        tangent_distance_kernel(digits, gamma=1e-12)


def test_sensible_gamma_does_not_warn(digits):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tangent_distance_kernel(digits, gamma=1e-3)
        tangent_distance_kernel(digits[:3], digits, gamma=1e-3)
