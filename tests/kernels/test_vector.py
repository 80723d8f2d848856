"""Tests of indefsvm.kernels against direct per-pair formulas and independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import ndimage
from sklearn.datasets import load_digits

import indefsvm.kernels as kernels_module
from indefsvm.kernels import (
    DEFAULT_TANGENTS,
    DoubleCentering,
    difference_of_gaussians_kernel,
    double_centering,
    epanechnikov_kernel,
    exp_dissimilarity_kernel,
    gaussian_combination_kernel,
    gaussian_kernel,
    linear_kernel,
    multiquadric_kernel,
    one_sided_tangent_distance,
    polynomial_kernel,
    sigmoid_kernel,
    simpson_kernel,
    squared_euclidean_distances,
    tangent_distance_kernel,
    tangent_vectors,
    thin_plate_spline_kernel,
)
from indefsvm.linalg.spectrum import eigen_summary, is_cnd, is_psd


def sqdist(x: np.ndarray, y: np.ndarray) -> float:
    return float(sum((a - b) ** 2 for a, b in zip(x, y, strict=True)))


def dot(x: np.ndarray, y: np.ndarray) -> float:
    return float(sum(a * b for a, b in zip(x, y, strict=True)))


def tps(x: np.ndarray, y: np.ndarray, sigma: float, p: float) -> float:
    d2 = sqdist(x, y)
    return 0.0 if d2 == 0 else (math.sqrt(d2) / sigma) ** (2 * p) * math.log(d2 / sigma)


# (kernel function, parameters, per-pair reference formula written independently)
CASES = [
    (linear_kernel, {}, lambda x, y: dot(x, y)),
    (
        polynomial_kernel,
        {"degree": 2, "gamma": 0.5, "coef0": 1.5},
        lambda x, y: (0.5 * dot(x, y) + 1.5) ** 2,
    ),
    (gaussian_kernel, {"gamma": 0.3}, lambda x, y: math.exp(-0.3 * sqdist(x, y))),
    (
        sigmoid_kernel,
        {"gamma": 0.7, "coef0": -0.2},
        lambda x, y: math.tanh(0.7 * dot(x, y) - 0.2),
    ),
    (
        epanechnikov_kernel,
        {"sigma": 6.0, "p": 2.0},
        lambda x, y: max(0.0, 1 - sqdist(x, y) / 6.0) ** 2,
    ),
    (
        gaussian_combination_kernel,
        {"sigma1": 1.0, "sigma2": 10.0, "sigma3": 3.0},
        lambda x, y: (
            math.exp(-sqdist(x, y)) + math.exp(-sqdist(x, y) / 10) - math.exp(-sqdist(x, y) / 3)
        ),
    ),
    (
        multiquadric_kernel,
        {"sigma": 2.0, "c": 0.5},
        lambda x, y: math.sqrt(sqdist(x, y) / 2.0 + 0.25),
    ),
    (thin_plate_spline_kernel, {"sigma": 1.5, "p": 1.0}, lambda x, y: tps(x, y, 1.5, 1.0)),
    (
        difference_of_gaussians_kernel,
        {"gamma1": 1.0, "gamma2": 0.2, "weight": 0.8},
        lambda x, y: math.exp(-sqdist(x, y)) - 0.8 * math.exp(-0.2 * sqdist(x, y)),
    ),
]


@pytest.fixture
def small_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((9, 3)), rng.standard_normal((6, 3))


@pytest.mark.parametrize("func, params, ref", CASES, ids=[c[0].__name__ for c in CASES])
def test_vector_kernels_match_per_pair_formula(func, params, ref, small_data) -> None:
    X, Y = small_data
    K = func(X, Y, **params)
    expected = np.array([[ref(x, y) for y in Y] for x in X])
    assert K.dtype == np.float64 and K.shape == (9, 6)
    np.testing.assert_allclose(K, expected, rtol=1e-10, atol=1e-12)
    Kxx = func(X, **params)
    expected_xx = np.array([[ref(x, y) for y in X] for x in X])
    np.testing.assert_allclose(Kxx, expected_xx, rtol=1e-10, atol=1e-12)
    assert np.array_equal(Kxx, Kxx.T)


@pytest.mark.parametrize("func, params, ref", CASES, ids=[c[0].__name__ for c in CASES])
def test_chunking_gives_the_same_result(func, params, ref, small_data, monkeypatch) -> None:
    X, Y = small_data
    full = func(X, Y, **params)
    full_xx = func(X, **params)
    # A budget of a few rows forces many blocks (and the blocked symmetrisation).
    monkeypatch.setattr(kernels_module, "BLOCK_BYTES", 8 * 6 * 2)
    np.testing.assert_allclose(func(X, Y, **params), full, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(func(X, **params), full_xx, rtol=1e-13, atol=1e-14)
    assert np.array_equal(func(X, **params), func(X, **params).T)


def test_definiteness_of_vector_kernels() -> None:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 4))
    assert is_psd(gaussian_kernel(X, gamma=0.5))
    assert is_psd(polynomial_kernel(X, degree=3, coef0=1.0), tol=1e-9)
    assert is_psd(linear_kernel(X), tol=1e-9)
    # Multiquadric is conditionally negative definite (Micchelli 1986): one positive eigenvalue.
    MQ = multiquadric_kernel(X)
    assert is_cnd(MQ) and eigen_summary(MQ).n_positive == 1
    assert eigen_summary(gaussian_combination_kernel(X, sigma1=0.1, sigma2=10, sigma3=1)).n_negative
    assert eigen_summary(sigmoid_kernel(X, gamma=1.0, coef0=-1.0)).n_negative > 0
    dog = difference_of_gaussians_kernel(X, gamma1=1.0, gamma2=0.1)
    s = eigen_summary(dog)
    assert s.n_negative > 0 and s.n_positive > 0
    np.testing.assert_allclose(np.diag(thin_plate_spline_kernel(X)), 0.0)


def test_squared_distances_exact_diagonal() -> None:
    X = np.random.default_rng(2).standard_normal((20, 5)) * 1e3
    D = squared_euclidean_distances(X)
    assert np.all(np.diag(D) == 0) and np.all(D >= 0)
    ref = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(D, ref, rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: gaussian_kernel(np.ones((3, 2)), np.ones((3, 3))), "same number of features"),
        (lambda: gaussian_kernel(np.ones((3, 2)), gamma=0.0), "gamma"),
        (lambda: gaussian_kernel(np.array([[np.nan, 1.0]])), "NaN"),
        (lambda: gaussian_kernel(np.ones(3)), "2-dimensional"),
        (lambda: polynomial_kernel(np.ones((2, 2)), degree=1.5), "degree"),
        (lambda: sigmoid_kernel(np.ones((2, 2)), coef0=np.inf), "coef0"),
        (lambda: epanechnikov_kernel(np.ones((2, 2)), p=-1.0), "p"),
        (lambda: difference_of_gaussians_kernel(np.ones((2, 2)), weight=0.0), "weight"),
    ],
)
def test_vector_kernel_errors(call, match) -> None:
    with pytest.raises(ValueError, match=match):
        call()


# --------------------------------------------------------------------------------------------
# Simpson score
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Tangent distance
# --------------------------------------------------------------------------------------------


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
    monkeypatch.setattr(kernels_module, "BLOCK_BYTES", 8 * 20 * 15 * 3)
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


# --------------------------------------------------------------------------------------------
# Dissimilarities
# --------------------------------------------------------------------------------------------


def test_double_centering_recovers_centred_gram() -> None:
    rng = np.random.default_rng(6)
    X = rng.standard_normal((10, 3))
    Xt = rng.standard_normal((4, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    Dt = np.sqrt(((Xt[:, None] - X[None]) ** 2).sum(-1))
    mu = X.mean(axis=0)
    # Classical MDS of Euclidean distances is the Gram matrix of the centred points.
    dc = DoubleCentering().fit(D)
    np.testing.assert_allclose(dc.kernel_, (X - mu) @ (X - mu).T, atol=1e-12)
    np.testing.assert_allclose(dc.transform(Dt), (Xt - mu) @ (X - mu).T, atol=1e-12)
    np.testing.assert_allclose(dc.transform(D), dc.kernel_, atol=1e-13)
    J = np.eye(10) - 1.0 / 10
    np.testing.assert_allclose(double_centering(D), -0.5 * J @ (D**2) @ J, atol=1e-12)
    np.testing.assert_allclose(double_centering(D**2, squared=True), dc.kernel_, atol=1e-12)


def test_double_centering_of_non_euclidean_is_indefinite() -> None:
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 4))
    D_l1 = np.abs(X[:, None] - X[None]).sum(-1) ** 1.5  # not Euclidean-embeddable
    assert eigen_summary(double_centering(D_l1)).n_negative > 0


def test_exp_dissimilarity_and_errors() -> None:
    D = np.array([[0.0, 2.0], [2.0, 0.0]])
    np.testing.assert_allclose(
        exp_dissimilarity_kernel(D, gamma=0.5), [[1, math.exp(-1)], [math.exp(-1), 1]]
    )
    with pytest.raises(ValueError, match="negative"):
        exp_dissimilarity_kernel(-D)
    with pytest.raises(ValueError, match="not symmetric"):
        double_centering(np.array([[0.0, 1.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="not fitted"):
        DoubleCentering().transform(D)
    with pytest.raises(ValueError, match="one column per training point"):
        DoubleCentering().fit(D).transform(np.ones((1, 3)))
