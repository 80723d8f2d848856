"""Kernels from dissimilarities: double centering (classical MDS, with its out-of-sample
extension) and ``exp(-gamma D)``."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, TransformerMixin

from indefsvm.utils.validation import check_finite_matrix, check_positive, check_square_symmetric


def _check_dissimilarities(D: ArrayLike, name: str, square: bool) -> NDArray[np.float64]:
    if square:
        D = check_square_symmetric(D, name=name)
    else:
        D = check_finite_matrix(D, name=name)
    if np.any(D < 0):
        raise ValueError(
            f"{name} has {int(np.sum(D < 0))} negative entries; dissimilarities must be >= 0."
        )
    return D


class DoubleCentering(TransformerMixin, BaseEstimator):
    """Negative double centering of a dissimilarity matrix (classical MDS), with test rows.

    ``K = -1/2 J D2 J`` with ``J = I - e e'/n`` and ``D2`` the squared dissimilarities: the Gram
    matrix of classical multidimensional scaling (Torgerson 1952). ``K`` is PSD exactly when the
    dissimilarities are Euclidean (textbook, Theorem 6.16 on NDS kernels); otherwise indefinite.

    A test point with squared dissimilarities ``d2`` (to the ``n`` training points) maps to
    ``-1/2 (d2 - mean(d2) - c + g)`` where ``c`` holds the column means and ``g`` the grand
    mean of the training ``D2``: the same centering with the training statistics. On a training
    row this reproduces the row of ``K`` exactly.

    Parameters
    ----------
    squared : bool
        ``False``: the input holds dissimilarities ``d`` and is squared entrywise (classical
        MDS). ``True``: the input already holds ``d^2``.

    Attributes
    ----------
    column_means_ : ndarray of shape (n,)
        Column means of the training ``D2``.
    grand_mean_ : float
        Mean of all entries of the training ``D2``.
    kernel_ : ndarray of shape (n, n)
        The double-centred training kernel.
    """

    def __init__(self, squared: bool = False) -> None:
        self.squared = squared

    def _squared(self, D: NDArray[np.float64]) -> NDArray[np.float64]:
        return D if self.squared else D * D

    def fit(self, D: ArrayLike, y: ArrayLike | None = None) -> DoubleCentering:
        """Store the centering statistics of a training dissimilarity matrix ``D`` (n, n)."""
        D2 = self._squared(_check_dissimilarities(D, "D", square=True))
        self.column_means_ = D2.mean(axis=0)
        self.grand_mean_ = float(self.column_means_.mean())
        K = -0.5 * (D2 - self.column_means_[:, None] - self.column_means_[None, :])
        K -= 0.5 * self.grand_mean_
        self.kernel_ = 0.5 * (K + K.T)
        return self

    def transform(self, D_test_train: ArrayLike) -> NDArray[np.float64]:
        """Kernel rows ``(m, n)`` of test points from their dissimilarities to the training set."""
        if not hasattr(self, "column_means_"):
            raise ValueError("DoubleCentering is not fitted; call fit(D_train) first.")
        Dt = np.asarray(D_test_train)
        if Dt.ndim == 1:
            raise ValueError(
                "D_test_train must be 2-D (m, n); use .reshape(1, -1) for a single test point."
            )
        D2 = self._squared(_check_dissimilarities(Dt, "D_test_train", square=False))
        n = self.column_means_.shape[0]
        if D2.shape[1] != n:
            raise ValueError(
                f"D_test_train must have one column per training point: expected (m, {n}); got "
                f"{D2.shape}."
            )
        K = D2 - D2.mean(axis=1, keepdims=True) - self.column_means_[None, :] + self.grand_mean_
        K *= -0.5
        return K

    def fit_transform(self, D: ArrayLike, y: ArrayLike | None = None) -> NDArray[np.float64]:
        """Fit on ``D`` and return the double-centred training kernel."""
        return self.fit(D).kernel_.copy()


def double_centering(D: ArrayLike, *, squared: bool = False) -> NDArray[np.float64]:
    """Negative double centering ``-1/2 J D2 J`` of a dissimilarity matrix (classical MDS).

    See :class:`DoubleCentering` for the out-of-sample map of test rows.

    Parameters
    ----------
    D : array_like of shape (n, n)
        Symmetric non-negative dissimilarities.
    squared : bool
        Whether ``D`` already holds squared dissimilarities.

    Returns
    -------
    ndarray of shape (n, n)
    """
    return DoubleCentering(squared=squared).fit_transform(D)


def exp_dissimilarity_kernel(D: ArrayLike, *, gamma: float = 1.0) -> NDArray[np.float64]:
    """Similarity ``exp(-gamma d)`` from dissimilarities (training block or test rows).

    Parameters
    ----------
    D : array_like of shape (m, n)
        Non-negative dissimilarities.
    gamma : float
        Positive scale.

    Returns
    -------
    ndarray of shape (m, n)
    """
    gamma = check_positive(gamma, "gamma")
    D = _check_dissimilarities(D, "D", square=False)
    return np.exp(-gamma * D)
