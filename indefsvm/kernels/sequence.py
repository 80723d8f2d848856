"""Kernels on time series: dynamic time warping distances and the DTW kernel."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.utils.validation import check_finite_matrix, check_positive


def dtw_distances(X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
    """Dynamic time warping distances between univariate series (rows of ``X`` and ``Y``).

    Full-window DTW with squared point differences (``indefsvm.kernels._dtw``); series of one set
    share
    a length, the two sets may differ. Not a metric, so kernels built on it are indefinite.

    Parameters
    ----------
    X : array_like of shape (n, T)
    Y : array_like of shape (m, T'), optional
        Default ``X`` (then the result is exactly symmetric with a zero diagonal).

    Returns
    -------
    ndarray of shape (n, m)
    """
    from indefsvm.kernels._dtw import dtw_matrix

    X = np.ascontiguousarray(check_finite_matrix(X, name="X"))
    if Y is None:
        return dtw_matrix(X, X, True)
    Y = np.ascontiguousarray(check_finite_matrix(Y, name="Y"))
    return dtw_matrix(X, Y, False)


def dtw_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, gamma: float = 1.0
) -> NDArray[np.float64]:
    """Gaussian DTW similarity ``k(x, y) = exp(-gamma DTW(x, y))`` of univariate time series.

    The usual "Gaussian of the DTW distance" (e.g. Bahlmann et al. 2002; Oglic & Gaertner 2019
    use alignment scores of this kind): indefinite in general because DTW is not a metric.
    Choose ``gamma`` relative to the median training distance (``1 / median DTW`` is a
    sensible start; the studies' ``scale`` option does this per fold).

    Parameters
    ----------
    X : array_like of shape (n, T)
    Y : array_like of shape (m, T'), optional
    gamma : float
        Positive scale.
    """
    gamma = check_positive(gamma, "gamma")
    return np.exp(-gamma * dtw_distances(X, Y))
