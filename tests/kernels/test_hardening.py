"""Issue 10: a tangent distance kernel whose gamma does not match the pixel scale warns and
names a sensible gamma (raw digits pixels with gamma = 1 underflow to the identity)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits

from indefsvm.kernels import one_sided_tangent_distance, tangent_distance_kernel


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
