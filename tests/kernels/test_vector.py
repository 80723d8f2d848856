"""Tests of indefsvm.kernels.vector against direct per-pair formulas and independent references."""

from __future__ import annotations

import math

import numpy as np
import pytest

import indefsvm.utils.blocks as blocks_module
from indefsvm.kernels import (
    difference_of_gaussians_kernel,
    epanechnikov_kernel,
    gaussian_combination_kernel,
    gaussian_kernel,
    linear_kernel,
    multiquadric_kernel,
    polynomial_kernel,
    sigmoid_kernel,
    squared_euclidean_distances,
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
    monkeypatch.setattr(blocks_module, "BLOCK_BYTES", 8 * 6 * 2)
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
