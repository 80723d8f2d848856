"""Shared fixtures: small indefinite kernels with known structure."""

from __future__ import annotations

import numpy as np
import pytest


def sigmoid_problem(n: int, seed: int, *, a: float = 0.8, b: float = -0.3, d: int = 3):
    """A sigmoid kernel ``tanh(a <x, x'> + b)`` (indefinite) with noisy linear labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    if np.all(y == y[0]):
        y[0] = -y[0]
    K0 = np.tanh(a * X @ X.T + b)
    return K0, y


@pytest.fixture
def small_indefinite():
    K0, y = sigmoid_problem(20, 0)
    assert np.linalg.eigvalsh(K0)[0] < -1e-3
    return K0, y
