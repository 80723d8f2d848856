"""Kernels from dissimilarities: double centering (classical MDS, with its out-of-sample
extension), ``exp(-gamma D)`` and the scikit-learn transformer :class:`DissimilarityKernel`.

Both transformers declare scikit-learn's pairwise convention (``input_tags.pairwise = True``):
their input is a precomputed ``(n, n)`` dissimilarity matrix, so cross-validation and
``GridSearchCV`` slice it as ``D[train][:, train]`` and ``D[test][:, train]``, and a
:class:`~sklearn.pipeline.Pipeline` starting with one of them inherits the tag.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, TransformerMixin

from indefsvm.utils.validation import check_finite_matrix, check_positive, check_square_symmetric


def _check_dissimilarities(D: ArrayLike, name: str, square: bool) -> NDArray[np.float64]:
    if square:
        advice = (
            f"A training dissimilarity matrix must be symmetric; symmetrise it first, e.g. "
            f"{name} = ({name} + {name}.T) / 2 or np.minimum({name}, {name}.T) (an alignment "
            "score or a banded DTW need not be symmetric)."
        )
        D = check_square_symmetric(D, name=name, advice=advice)
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

    def __sklearn_tags__(self):
        # The input is a square dissimilarity matrix: model selection must slice test rows
        # against the training columns, D[test][:, train] (scikit-learn's pairwise convention).
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        return tags

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


#: Kernels of :class:`DissimilarityKernel`.
DISSIMILARITY_KERNELS = ("exp", "negative")
#: Statistics of the training dissimilarities that :class:`DissimilarityKernel` can use as unit.
DISSIMILARITY_SCALES = ("median", "mean")


class DissimilarityKernel(TransformerMixin, BaseEstimator):
    """Kernel from a precomputed dissimilarity matrix, in units fitted on the training block.

    ``kernel="exp"``: ``K = exp(-D / (gamma * scale_))``, the "Gaussian of a distance" (e.g.
    of DTW, Bahlmann et al. 2002); ``kernel="negative"``: ``K = -D / (gamma * scale_)``, the
    negative-distance kernel (conditionally positive definite for a metric of negative type,
    indefinite for DTW). ``scale_`` is a statistic of the off-diagonal training
    dissimilarities (their median by default), fitted by :meth:`fit` and reused for test rows,
    so ``gamma`` is unit-free and can be tuned on a grid that suits any data set.

    The estimator declares scikit-learn's pairwise convention: in ``cross_val_score``,
    ``GridSearchCV`` or a :class:`~sklearn.pipeline.Pipeline` (as its first step) it is fitted
    on ``D[train][:, train]`` and transforms ``D[test][:, train]``; put an estimator with
    ``kernel="precomputed"`` after it, e.g.
    ``make_pipeline(DissimilarityKernel(), IndefiniteSVC())`` with the grid
    ``{"dissimilaritykernel__gamma": [...], "indefinitesvc__C": [...]}``.

    Parameters
    ----------
    kernel : {"exp", "negative"}, default "exp"
        Kernel of the scaled dissimilarities.
    gamma : float, default 1.0
        Positive width in units of ``scale_`` (divides ``D / scale_`` in both kernels).
    scale : {"median", "mean"} or float or None, default "median"
        Unit of the dissimilarities: the median or mean of the off-diagonal entries of the
        training block, a fixed positive number, or None for 1 (raw dissimilarities).

    Attributes
    ----------
    scale_ : float
        The unit used (fitted on the training block).
    n_train_ : int
        Number of training objects (columns expected by :meth:`transform`).
    """

    def __init__(
        self, kernel: str = "exp", gamma: float = 1.0, scale: str | float | None = "median"
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.scale = scale

    def __sklearn_tags__(self):
        # Input is a precomputed (n, n) dissimilarity matrix (see DoubleCentering).
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True
        return tags

    def _check_params(self) -> float:
        if self.kernel not in DISSIMILARITY_KERNELS:
            raise ValueError(
                f"kernel must be one of {list(DISSIMILARITY_KERNELS)}; got {self.kernel!r}."
            )
        if isinstance(self.scale, str) and self.scale not in DISSIMILARITY_SCALES:
            raise ValueError(
                f"scale must be one of {list(DISSIMILARITY_SCALES)}, a positive number or None; "
                f"got {self.scale!r}."
            )
        if not (self.scale is None or isinstance(self.scale, str)):
            check_positive(self.scale, "scale")
        return check_positive(self.gamma, "gamma")

    def fit(self, D: ArrayLike, y: ArrayLike | None = None) -> DissimilarityKernel:
        """Fit the unit ``scale_`` on a training dissimilarity matrix ``D`` (n, n)."""
        self._check_params()
        D = _check_dissimilarities(D, "D", square=True)
        n = D.shape[0]
        if self.scale is None:
            scale = 1.0
        elif isinstance(self.scale, str):
            if n < 2:
                raise ValueError(
                    f"scale={self.scale!r} needs at least 2 training objects; got {n}."
                )
            off = D[np.triu_indices(n, k=1)]
            scale = float(np.median(off) if self.scale == "median" else np.mean(off))
            if not scale > 0:
                raise ValueError(
                    f"the {self.scale} off-diagonal training dissimilarity is {scale}; it must "
                    "be > 0 to serve as unit (give scale as a positive number or None)."
                )
        else:
            scale = float(self.scale)
        self.scale_ = scale
        self.n_train_ = n
        return self

    def transform(self, D: ArrayLike) -> NDArray[np.float64]:
        """Kernel rows ``(m, n_train_)`` from dissimilarities to the training objects."""
        if not hasattr(self, "scale_"):
            raise ValueError("DissimilarityKernel is not fitted; call fit(D_train) first.")
        gamma = self._check_params()
        D = _check_dissimilarities(D, "D", square=False)
        if D.shape[1] != self.n_train_:
            raise ValueError(
                f"D must have one column per training object: expected (m, {self.n_train_}); "
                f"got {D.shape}."
            )
        Z = D / (gamma * self.scale_)
        return np.exp(-Z) if self.kernel == "exp" else -Z

    def fit_transform(self, D: ArrayLike, y: ArrayLike | None = None) -> NDArray[np.float64]:
        """Fit on ``D`` and return the training kernel (exactly symmetric)."""
        K = self.fit(D).transform(D)
        return 0.5 * (K + K.T)
