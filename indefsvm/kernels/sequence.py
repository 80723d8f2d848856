"""Kernels on time series: dynamic time warping distances and the DTW kernel."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.utils.validation import check_finite_matrix, check_positive

__all__ = ["dtw_distances", "dtw_kernel", "dtw_window_cells"]


def dtw_window_cells(window: int | float | None, length: int) -> int | None:
    """Sakoe-Chiba band half-width in cells for a ``window`` parameter.

    Parameters
    ----------
    window : int, float or None
        An integer: the band half-width ``w`` in cells (``|i - j| <= w``). A float in
        ``[0, 1]``: a fraction of the series length, as the UCR archive states its "learned
        warping window" (Dau et al. 2019), rounded to the nearest cell, halves up:
        ``w = floor(window * length + 1/2)``. This rounding reproduces the archive's published
        learned-window 1NN-DTW errors on every bundled set (OSULeaf, 7 % of 427: 30 cells give
        its 0.3884, where ``floor`` gives 29 cells and 0.3802; docs/timeseries.md). None: full
        window.
    length : int
        The (longer) series length the fraction refers to.

    Returns
    -------
    int or None
        ``w`` (None for the full window).
    """
    if window is None:
        return None
    if isinstance(window, (bool, np.bool_)):
        raise TypeError(f"window must be an int, a float in [0, 1] or None; got {window!r}.")
    if isinstance(window, Integral):
        if window < 0:
            raise ValueError(f"window must be >= 0 cells; got {window}.")
        return int(window)
    if isinstance(window, Real):
        r = float(window)
        if not (0.0 <= r <= 1.0):
            raise ValueError(
                f"a float window is a fraction of the series length and must lie in [0, 1]; got "
                f"{window!r} (give an int for a number of cells)."
            )
        # nearest cell, halves up; the tolerance keeps r * length = k + 1/2 computed as
        # k + 0.4999999999 (floating point) on the upper side
        return int(math.floor(r * length + 0.5 + 1e-9))
    raise TypeError(f"window must be an int, a float in [0, 1] or None; got {window!r}.")


def dtw_distances(
    X: ArrayLike, Y: ArrayLike | None = None, *, window: int | float | None = None
) -> NDArray[np.float64]:
    """Dynamic time warping distances between univariate series (rows of ``X`` and ``Y``).

    DTW with squared point differences (``indefsvm.kernels._dtw``, compiled with Numba), optionally
    restricted to the Sakoe-Chiba band ``|i - j| <= w`` (Sakoe & Chiba 1978): the constrained
    DTW of the UCR archive's baselines. Series of one set share a length, the two sets may
    differ (the band is then widened to ``|T - T'|`` so that a warping path exists). Not a
    metric, so kernels built on it are indefinite. Cost O(n m T min(T', 2w + 1)).

    Parameters
    ----------
    X : array_like of shape (n, T)
    Y : array_like of shape (m, T'), optional
        Default ``X`` (then the result is exactly symmetric with a zero diagonal).
    window : int, float or None, default None
        Band half-width: an int is a number of cells, a float in ``[0, 1]`` a fraction of the
        series length rounded to the nearest cell (``w = floor(window * max(T, T') + 1/2)``,
        the rounding that reproduces the UCR archive's learned-window errors: e.g. ``0.04`` is
        its "4 %" window; :func:`dtw_window_cells`), None the full window (unconstrained DTW).
        ``window=0`` is the squared Euclidean distance of equal-length series.

    Returns
    -------
    ndarray of shape (n, m)
    """
    from indefsvm.kernels._dtw import dtw_matrix

    X = np.ascontiguousarray(check_finite_matrix(X, name="X"))
    Yc = X if Y is None else np.ascontiguousarray(check_finite_matrix(Y, name="Y"))
    for name, A in (("X", X), ("Y", Yc)):
        if A.shape[1] == 0:
            raise ValueError(
                f"{name} holds series of length 0 (shape {A.shape}); DTW needs at least one "
                "point per series."
            )
    length = max(X.shape[1], Yc.shape[1])
    w = dtw_window_cells(window, length)
    cells = length if w is None else min(w, length)  # a band >= length is the full window
    D = dtw_matrix(X, Yc, Y is None, cells)
    if not np.all(np.isfinite(D)):
        top = max(float(np.max(np.abs(X))), float(np.max(np.abs(Yc))))
        raise ValueError(
            "DTW distances overflow float64: sums of squared differences of series with values "
            f"up to |x| = {top:.3g} exceed 1.8e308. Rescale the series (e.g. z-normalise each)."
        )
    return D


def dtw_kernel(
    X: ArrayLike,
    Y: ArrayLike | None = None,
    *,
    gamma: float = 1.0,
    window: int | float | None = None,
) -> NDArray[np.float64]:
    """Gaussian DTW similarity ``k(x, y) = exp(-gamma DTW(x, y))`` of univariate time series.

    The usual "Gaussian of the DTW distance" (e.g. Bahlmann et al. 2002; Oglic & Gaertner 2019
    use alignment scores of this kind): indefinite in general because DTW is not a metric.
    Choose ``gamma`` relative to the median training distance (``1 / median DTW`` is a
    sensible start; the studies' ``scale`` option does this per fold, and
    :class:`~indefsvm.kernels.DissimilarityKernel` does it on a precomputed distance matrix).

    Parameters
    ----------
    X : array_like of shape (n, T)
    Y : array_like of shape (m, T'), optional
    gamma : float
        Positive scale.
    window : int, float or None, default None
        Sakoe-Chiba band of :func:`dtw_distances` (cells, fraction of the length, or full).
    """
    gamma = check_positive(gamma, "gamma")
    return np.exp(-gamma * dtw_distances(X, Y, window=window))
