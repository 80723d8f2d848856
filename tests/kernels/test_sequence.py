"""Sakoe-Chiba window of the compiled DTW against a brute-force Python recursion."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indefsvm.kernels import dtw_distances, dtw_kernel
from indefsvm.kernels.sequence import dtw_window_cells


def brute_dtw(a, b, w=None):
    """Independent reference: the whole (n+1) x (m+1) cost matrix, cells outside the band
    |i - j| <= w left at infinity (w widened to |n - m| so that a path exists)."""
    n, m = len(a), len(b)
    if w is not None:
        w = max(w, abs(n - m))
    D = [[math.inf] * (m + 1) for _ in range(n + 1)]
    D[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if w is not None and abs(i - j) > w:
                continue
            D[i][j] = (float(a[i - 1]) - float(b[j - 1])) ** 2 + min(
                D[i - 1][j - 1], D[i - 1][j], D[i][j - 1]
            )
    return D[n][m]


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 14),
    st.integers(1, 14),
    st.integers(0, 16),
    st.integers(0, 2**31 - 1),
)
def test_banded_dtw_matches_brute_force(n, m, T, S, w, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(n, T)), rng.normal(size=(m, S))
    ref = np.array([[brute_dtw(x, y, w) for y in Y] for x in X])
    assert np.allclose(dtw_distances(X, Y, window=w), ref, rtol=1e-12, atol=1e-12)
    full = np.array([[brute_dtw(x, y) for y in Y] for x in X])
    assert np.allclose(dtw_distances(X, Y), full, rtol=1e-12, atol=1e-12)


def test_window_extremes_and_fraction():
    rng = np.random.default_rng(0)
    X = np.cumsum(rng.normal(size=(7, 30)), axis=1)
    full = dtw_distances(X)
    # window None, a band as wide as the series and the fraction 1.0 are the full DTW
    assert np.array_equal(dtw_distances(X, window=None), full)
    assert np.array_equal(dtw_distances(X, window=30), full)
    assert np.array_equal(dtw_distances(X, window=1.0), full)
    # window 0 on equal lengths: no warping, the squared Euclidean distance
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    assert np.allclose(dtw_distances(X, window=0), sq, rtol=1e-13, atol=0)
    # a fraction is round(r * T) cells, halves up (the UCR archive's percentage windows)
    assert np.array_equal(dtw_distances(X, window=0.1), dtw_distances(X, window=3))
    assert np.array_equal(dtw_distances(X, window=0.09), dtw_distances(X, window=3))  # 2.7
    assert np.array_equal(dtw_distances(X, window=0.08), dtw_distances(X, window=2))  # 2.4
    ref = np.array([[brute_dtw(a, b, 3) for b in X] for a in X])
    assert np.allclose(dtw_distances(X, window=0.1), ref, rtol=1e-12, atol=0)
    # narrowing the band can only raise DTW (fewer paths), never below the full window
    d = [dtw_distances(X, window=w) for w in (0, 1, 3, 10, 30)]
    for wide, narrow in zip(d[1:], d[:-1], strict=True):
        assert np.all(narrow >= wide - 1e-12)
    K = dtw_kernel(X, gamma=0.01, window=3)
    assert np.allclose(K, np.exp(-0.01 * ref), rtol=1e-12, atol=0)


def test_window_validation():
    X = np.zeros((2, 5))
    assert dtw_window_cells(0.5, 10) == 5 and dtw_window_cells(3, 10) == 3
    # nearest cell, halves up, also when r * T lands just below k + 1/2 in floating point
    assert [dtw_window_cells(r, 30) for r in (0.05, 0.15, 0.08, 0.09)] == [2, 5, 2, 3]
    assert dtw_window_cells(0.03, 150) == 5 and dtw_window_cells(0.25, 10) == 3
    assert dtw_window_cells(0.58, 25) == 15  # 0.58 * 25 = 14.499999999999998 in binary
    assert dtw_window_cells(0.0, 427) == 0 and dtw_window_cells(1.0, 427) == 427
    assert dtw_window_cells(None, 10) is None
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        dtw_distances(X, window=1.5)
    with pytest.raises(ValueError, match=">= 0 cells"):
        dtw_distances(X, window=-1)
    with pytest.raises(TypeError, match="window"):
        dtw_distances(X, window=True)
    with pytest.raises(TypeError, match="window"):
        dtw_distances(X, window="full")


def test_dtw_refuses_overflow_and_empty_series():
    """Before: inf without a warning, and zeros for series of length 0."""
    from indefsvm.kernels import dtw_distances

    A = np.array([[1e200, -1e200]])
    with pytest.raises(ValueError, match="overflow float64.*z-normalise"):
        dtw_distances(A, -A)
    with pytest.raises(ValueError, match="overflow"):
        dtw_distances(np.vstack([A, -A]))
    with pytest.raises(ValueError, match="length 0"):
        dtw_distances(np.zeros((3, 0)))
    with pytest.raises(ValueError, match="Y holds series of length 0"):
        dtw_distances(np.zeros((3, 4)), np.zeros((2, 0)))
    # large but representable values still work
    assert np.isfinite(dtw_distances(np.array([[1e150, -1e150]]), np.array([[0.0, 0.0]]))).all()


def test_fraction_rounding_gives_the_archive_windows():
    """The UCR archive's learned windows in cells (DataSummary, 2018): the rounding that
    reproduces its 1NN-DTW errors (tests/integration/test_timeseries.py runs them on the
    bundled sets). OSULeaf 7 % of 427 = 29.89: 30 cells (floor: 29); ACSF1 4 % of 1460 =
    58.4: 58 cells."""
    assert dtw_window_cells(0.07, 427) == 30
    assert dtw_window_cells(0.04, 1460) == 58
    assert [dtw_window_cells(0.0, T) for T in (251, 150, 24)] == [0, 0, 0]


@pytest.mark.parametrize(("n", "m", "T", "S"), [(5, 4, 17, 17), (3, 6, 9, 14), (4, 4, 1, 1)])
def test_full_window_loop_equals_the_banded_loop_bit_for_bit(n, m, T, S):
    """The full window runs a fixed-bound loop (speed); the banded loop at a band covering
    every cell performs the same operations: identical results, not just close."""
    from indefsvm.kernels._dtw import dtw_matrix

    rng = np.random.default_rng(T * 100 + S)
    X, Y = np.cumsum(rng.normal(size=(n, T)), 1), np.cumsum(rng.normal(size=(m, S)), 1)
    width = max(T, S)
    for symmetric, B in ((False, Y), (True, X)):
        if symmetric and T != S:
            B = X
        fixed = dtw_matrix(X, B, symmetric, width)
        banded = dtw_matrix(X, B, symmetric, width, banded=True)
        assert np.array_equal(fixed, banded)
        ref = np.array([[brute_dtw(a, b) for b in B] for a in X])
        if symmetric:
            ref = np.triu(ref, 1) + np.triu(ref, 1).T
        assert np.allclose(fixed, ref, rtol=1e-12, atol=1e-12)
    assert np.array_equal(dtw_distances(X, Y), dtw_matrix(X, Y, False, width, banded=True))
