"""Kernel functions: indefinite and positive definite kernels on vectors, kernels on images,
and kernels built from dissimilarities.

Every kernel on vectors is a function ``(X, Y=None, **params) -> K`` with ``K[i, j] = k(x_i,
y_j)`` (``Y = X`` when omitted). Results are float64 and are built in blocks of rows whose
temporaries are capped by :data:`BLOCK_BYTES` (32 MB), so a 20,000 x 20,000 kernel needs its
3.2 GB plus a few tens of MB, never a second full-size array. With ``Y`` omitted only the upper
triangle is computed and mirrored (exactly symmetric result, half the work).

Kernels on vectors (``d = ||x - y||``):

* :func:`linear_kernel` ``<x, y>`` and :func:`gaussian_kernel` ``exp(-gamma d^2)`` (PSD);
* :func:`polynomial_kernel` ``(gamma <x, y> + coef0)^degree`` (PSD for ``coef0 >= 0``);
* :func:`sigmoid_kernel` ``tanh(gamma <x, y> + coef0)`` (textbook eq. 6.6; indefinite in general);
* :func:`epanechnikov_kernel` ``(1 - d^2/sigma)^p`` for ``d^2 <= sigma``, else 0;
  :func:`gaussian_combination_kernel` ``e^{-d^2/s1} + e^{-d^2/s2} - e^{-d^2/s3}``;
  :func:`multiquadric_kernel` ``sqrt(d^2/sigma + c^2)``;
  :func:`thin_plate_spline_kernel` ``(d/sigma)^(2p) ln(d^2/sigma)`` (Ong et al. 2004, Table 1);
* :func:`difference_of_gaussians_kernel` ``e^{-g1 d^2} - w e^{-g2 d^2}`` (Oglic & Gaertner 2019).

Kernels on images: :func:`simpson_kernel` (Luss & d'Aspremont 2009, Sect. 5.1) and the one-sided
tangent distance of Simard et al. (1998), :func:`one_sided_tangent_distance`, turned into a kernel
by :func:`tangent_distance_kernel` as in Luss & d'Aspremont (2009) after Haasdonk & Keysers (2002).

From dissimilarities: :func:`double_centering` / :class:`DoubleCentering` (classical MDS, with
the out-of-sample extension for test rows) and :func:`exp_dissimilarity_kernel`.

References
----------
C. S. Ong, X. Mary, S. Canu, A. J. Smola. Learning with non-positive kernels. ICML 2004.
D. Oglic, T. Gaertner. Scalable learning in reproducing kernel Krein spaces. ICML 2019.
R. Luss, A. d'Aspremont. Support vector machine classification with indefinite kernels.
Math. Prog. Comp. 1, 2009.
P. Y. Simard, Y. LeCun, J. S. Denker, B. Victorri. Transformation invariance in pattern
recognition -- tangent distance and tangent propagation. LNCS 1524, 1998.
B. Haasdonk, D. Keysers. Tangent distance kernels for support vector machines. ICPR 2002.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import ndimage
from sklearn.base import BaseEstimator, TransformerMixin

from indefsvm._validation import check_finite_matrix, check_positive, check_square_symmetric

__all__ = [
    "DEFAULT_TANGENTS",
    "DoubleCentering",
    "difference_of_gaussians_kernel",
    "double_centering",
    "dtw_distances",
    "dtw_kernel",
    "epanechnikov_kernel",
    "exp_dissimilarity_kernel",
    "gaussian_combination_kernel",
    "gaussian_kernel",
    "linear_kernel",
    "multiquadric_kernel",
    "one_sided_tangent_distance",
    "polynomial_kernel",
    "sigmoid_kernel",
    "simpson_kernel",
    "squared_euclidean_distances",
    "tangent_distance_kernel",
    "tangent_vectors",
    "thin_plate_spline_kernel",
]

#: Memory budget (bytes) of the per-block temporaries of the chunked kernel builders.
BLOCK_BYTES = 32 * 2**20

#: Simard et al. (1998) tangents: x/y translation, rotation, scaling, the two hyperbolic
#: (shear) transformations, and line thickness.
DEFAULT_TANGENTS = (
    "translation_x",
    "translation_y",
    "rotation",
    "scaling",
    "shear_parallel",
    "shear_diagonal",
    "thickness",
)


# --------------------------------------------------------------------------------------------
# Block machinery
# --------------------------------------------------------------------------------------------


def _rows_per_block(n_cols: int, n_temporaries: int = 1) -> int:
    """Rows per block so that ``n_temporaries`` float64 blocks fit in :data:`BLOCK_BYTES`."""
    return max(1, BLOCK_BYTES // (8 * max(1, n_cols) * max(1, n_temporaries)))


def _check_pair(
    X: ArrayLike, Y: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
    X = check_finite_matrix(X, name="X")
    if Y is None:
        return X, X, True
    Y = check_finite_matrix(Y, name="Y")
    if Y.shape[1] != X.shape[1]:
        raise ValueError(
            f"X and Y must have the same number of features; got X with {X.shape[1]} and Y "
            f"with {Y.shape[1]}."
        )
    return X, Y, False


def _symmetrize_inplace(K: NDArray[np.float64]) -> None:
    """Replace ``K`` by ``(K + K') / 2``, block by block (no full-size temporary)."""
    n = K.shape[0]
    # Two b x b temporaries per step stay within BLOCK_BYTES.
    b = max(1, int(np.sqrt(BLOCK_BYTES / 16.0)))
    for i in range(0, n, b):
        i_end = min(n, i + b)
        for j in range(i, n, b):
            j_end = min(n, j + b)
            avg = K[i:i_end, j:j_end] + K[j:j_end, i:i_end].T
            avg *= 0.5
            K[i:i_end, j:j_end] = avg
            K[j:j_end, i:i_end] = avg.T


def _fill_blocked(
    X: NDArray[np.float64],
    Y: NDArray[np.float64],
    symmetric: bool,
    fill_block: Callable[[int, int, int, NDArray[np.float64]], None],
    n_temporaries: int = 1,
) -> NDArray[np.float64]:
    """Allocate the result and fill it in blocks of rows.

    ``fill_block(start, stop, col_start, block)`` writes ``k(x_i, y_j)`` for rows
    ``start:stop`` and columns ``col_start:`` into the view ``block``. For a symmetric kernel
    (``Y is X``) only the upper triangle is computed and mirrored: half the work, and the result
    is exactly symmetric (eigensolvers read one triangle only).
    """
    n_x, n_y = X.shape[0], Y.shape[0]
    out = np.empty((n_x, n_y), dtype=np.float64)
    step = _rows_per_block(n_y, n_temporaries)
    for start in range(0, n_x, step):
        stop = min(n_x, start + step)
        col_start = start if symmetric else 0
        block = out[start:stop, col_start:]
        fill_block(start, stop, col_start, block)
        if symmetric:
            diagonal_block = block[:, : stop - start]
            diagonal_block[...] = 0.5 * (diagonal_block + diagonal_block.T)
            out[stop:, start:stop] = block[:, stop - start :].T
    return out


def _blocked_sq_distances(
    X: NDArray[np.float64],
    Y: NDArray[np.float64],
    symmetric: bool,
    apply: Callable[[NDArray[np.float64]], None],
    n_temporaries: int = 1,
) -> NDArray[np.float64]:
    """Fill ``K[i, j] = f(||x_i - y_j||^2)``, with ``apply`` transforming a block in place."""
    xx = np.einsum("ij,ij->i", X, X)
    yy = xx if symmetric else np.einsum("ij,ij->i", Y, Y)

    def fill_block(start: int, stop: int, col_start: int, block: NDArray[np.float64]) -> None:
        np.matmul(X[start:stop], Y[col_start:].T, out=block)
        block *= -2.0
        block += xx[start:stop, None]
        block += yy[None, col_start:]
        np.maximum(block, 0.0, out=block)
        if symmetric:
            # The expansion |x|^2 + |y|^2 - 2<x,y> leaves rounding noise on the diagonal.
            rows = np.arange(stop - start)
            block[rows, rows] = 0.0
        apply(block)

    return _fill_blocked(X, Y, symmetric, fill_block, n_temporaries)


def _blocked_inner_products(
    X: NDArray[np.float64],
    Y: NDArray[np.float64],
    symmetric: bool,
    apply: Callable[[NDArray[np.float64]], None],
) -> NDArray[np.float64]:
    """Fill ``K[i, j] = f(<x_i, y_j>)``, with ``apply`` transforming a block in place."""

    def fill_block(start: int, stop: int, col_start: int, block: NDArray[np.float64]) -> None:
        np.matmul(X[start:stop], Y[col_start:].T, out=block)
        apply(block)

    return _fill_blocked(X, Y, symmetric, fill_block)


def _check_real(value: float, name: str) -> float:
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number; got {value!r}.")
    return value


# --------------------------------------------------------------------------------------------
# Kernels on vectors
# --------------------------------------------------------------------------------------------


def squared_euclidean_distances(X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
    """Squared Euclidean distances ``||x_i - y_j||^2``, built in row blocks.

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
        Defaults to ``X`` (then the diagonal is exactly 0 and the result exactly symmetric).

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    X, Y, sym = _check_pair(X, Y)
    return _blocked_sq_distances(X, Y, sym, lambda block: None)


def linear_kernel(X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
    """Linear kernel ``k(x, y) = <x, y>`` (positive semi-definite).

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
        Defaults to ``X``.

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    X, Y, sym = _check_pair(X, Y)
    return _blocked_inner_products(X, Y, sym, lambda block: None)


def polynomial_kernel(
    X: ArrayLike,
    Y: ArrayLike | None = None,
    *,
    degree: int = 3,
    gamma: float = 1.0,
    coef0: float = 1.0,
) -> NDArray[np.float64]:
    """Polynomial kernel ``k(x, y) = (gamma <x, y> + coef0)^degree``.

    Positive semi-definite for ``gamma > 0`` and ``coef0 >= 0`` (textbook, Sect. 6.2).

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
    degree : int
        Positive integer degree.
    gamma : float
        Positive scale of the inner product.
    coef0 : float
        Additive constant.

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    if isinstance(degree, bool) or int(degree) != degree or degree < 1:
        raise ValueError(f"degree must be a positive integer; got {degree!r}.")
    degree = int(degree)
    gamma = check_positive(gamma, "gamma")
    coef0 = _check_real(coef0, "coef0")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        block *= gamma
        block += coef0
        np.power(block, degree, out=block)

    return _blocked_inner_products(X, Y, sym, apply)


def gaussian_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, gamma: float = 1.0
) -> NDArray[np.float64]:
    """Gaussian (RBF) kernel ``k(x, y) = exp(-gamma ||x - y||^2)`` (positive definite).

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
    gamma : float
        Positive inverse squared length scale.

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    gamma = check_positive(gamma, "gamma")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        block *= -gamma
        np.exp(block, out=block)

    return _blocked_sq_distances(X, Y, sym, apply)


def sigmoid_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, gamma: float = 1.0, coef0: float = 0.0
) -> NDArray[np.float64]:
    """Sigmoid (hyperbolic tangent) kernel ``k(x, y) = tanh(gamma <x, y> + coef0)``.

    The textbook's eq. (6.6) ``tanh(a (x . x') + b)``; indefinite in general (Luss & d'Aspremont
    2009, Table 1, the ``-sig`` data sets; Oglic & Gaertner 2018, Table 1).

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
    gamma : float
        Positive slope ``a``.
    coef0 : float
        Offset ``b`` (any sign).

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    gamma = check_positive(gamma, "gamma")
    coef0 = _check_real(coef0, "coef0")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        block *= gamma
        block += coef0
        np.tanh(block, out=block)

    return _blocked_inner_products(X, Y, sym, apply)


def epanechnikov_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, sigma: float = 1.0, p: float = 1.0
) -> NDArray[np.float64]:
    """Epanechnikov kernel of Ong et al. (2004), Table 1.

    ``k(x, y) = (1 - ||x - y||^2 / sigma)^p`` for ``||x - y||^2 / sigma <= 1`` and 0 otherwise.

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
    sigma : float
        Positive bandwidth (on the squared distance).
    p : float
        Positive exponent.

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    sigma = check_positive(sigma, "sigma")
    p = check_positive(p, "p")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        block *= -1.0 / sigma
        block += 1.0
        np.maximum(block, 0.0, out=block)
        if p != 1.0:
            np.power(block, p, out=block)

    return _blocked_sq_distances(X, Y, sym, apply)


def gaussian_combination_kernel(
    X: ArrayLike,
    Y: ArrayLike | None = None,
    *,
    sigma1: float = 0.1,
    sigma2: float = 10.0,
    sigma3: float = 1.0,
) -> NDArray[np.float64]:
    """Gaussian combination kernel of Ong et al. (2004), Table 1.

    ``k(x, y) = exp(-||x-y||^2/sigma1) + exp(-||x-y||^2/sigma2) - exp(-||x-y||^2/sigma3)``:
    the sum of two Gaussians minus a third. Its Fourier transform
    ``sum_k +-sigma_k^(d/2) exp(-sigma_k |w|^2 / 4)`` (up to a constant) is negative at some
    frequency when the subtracted Gaussian dominates there, e.g. for the defaults
    ``(0.1, 10, 1)``; then the kernel is indefinite.

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
    sigma1, sigma2, sigma3 : float
        Positive bandwidths (on the squared distance).

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    s1 = check_positive(sigma1, "sigma1")
    s2 = check_positive(sigma2, "sigma2")
    s3 = check_positive(sigma3, "sigma3")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        d2 = block.copy()
        np.exp(-d2 / s1, out=block)
        block += np.exp(-d2 / s2)
        block -= np.exp(-d2 / s3)

    return _blocked_sq_distances(X, Y, sym, apply, n_temporaries=3)


def multiquadric_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, sigma: float = 1.0, c: float = 1.0
) -> NDArray[np.float64]:
    """Multiquadric kernel of Ong et al. (2004), Table 1: ``sqrt(||x-y||^2 / sigma + c^2)``.

    Conditionally negative definite, hence indefinite (one positive eigenvalue on distinct
    points; Micchelli 1986).

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
    sigma : float
        Positive bandwidth (on the squared distance).
    c : float
        Offset (finite; only ``c^2`` enters).

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    sigma = check_positive(sigma, "sigma")
    c = _check_real(c, "c")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        block *= 1.0 / sigma
        block += c * c
        np.sqrt(block, out=block)

    return _blocked_sq_distances(X, Y, sym, apply)


def thin_plate_spline_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, sigma: float = 1.0, p: float = 1.0
) -> NDArray[np.float64]:
    """Thin plate spline kernel of Ong et al. (2004), Table 1.

    ``k(x, y) = (||x - y|| / sigma)^(2p) ln(||x - y||^2 / sigma)``, exactly as printed in the
    table (``sigma`` divides the distance in the power and the squared distance in the log), and
    ``k(x, x) = 0`` (the limit for ``p > 0``). ``p = 1, sigma = 1`` is the classical
    ``r^2 ln r^2``.

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
    sigma : float
        Positive scale.
    p : float
        Positive exponent.

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    sigma = check_positive(sigma, "sigma")
    p = check_positive(p, "p")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        positive = block > 0
        log_term = np.log(np.where(positive, block, 1.0) / sigma)
        np.power(block / (sigma * sigma), p, out=block)
        block *= log_term
        block[~positive] = 0.0

    return _blocked_sq_distances(X, Y, sym, apply, n_temporaries=3)


def difference_of_gaussians_kernel(
    X: ArrayLike,
    Y: ArrayLike | None = None,
    *,
    gamma1: float = 1.0,
    gamma2: float = 0.1,
    weight: float = 1.0,
) -> NDArray[np.float64]:
    """Difference of two Gaussian kernels (Oglic & Gaertner 2019, Sect. 5).

    ``k(x, y) = exp(-gamma1 ||x - y||^2) - weight * exp(-gamma2 ||x - y||^2)``, the indefinite
    kernel of their Figures 1-2 (a kernel in a Krein space: difference of two positive definite
    kernels).

    Parameters
    ----------
    X : array_like of shape (n_x, d)
    Y : array_like of shape (n_y, d), optional
    gamma1, gamma2 : float
        Positive inverse squared length scales of the positive and the negative component.
    weight : float
        Positive weight of the subtracted Gaussian.

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    g1 = check_positive(gamma1, "gamma1")
    g2 = check_positive(gamma2, "gamma2")
    w = check_positive(weight, "weight")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        negative_part = np.exp(-g2 * block)
        negative_part *= w
        block *= -g1
        np.exp(block, out=block)
        block -= negative_part

    return _blocked_sq_distances(X, Y, sym, apply, n_temporaries=2)


# --------------------------------------------------------------------------------------------
# Kernels on images
# --------------------------------------------------------------------------------------------


def _as_images(
    X: ArrayLike, image_shape: tuple[int, int] | None, name: str
) -> tuple[NDArray[np.float64], tuple[int, int]]:
    """Return ``(flat (n, h*w), (h, w))`` from a stack of images or a matrix of rows."""
    arr = np.asarray(X)
    if arr.ndim == 3:
        arr = check_finite_matrix(arr, name=name, ndim=3)
        shape = (arr.shape[1], arr.shape[2])
        if image_shape is not None and tuple(image_shape) != shape:
            raise ValueError(
                f"{name} images are {shape} but image_shape (or the X images) is "
                f"{tuple(image_shape)}; expected images of one size."
            )
        return arr.reshape(arr.shape[0], -1), shape
    flat = check_finite_matrix(arr, name=name)
    d = flat.shape[1]
    if image_shape is None:
        side = int(round(np.sqrt(d)))
        if side * side != d:
            raise ValueError(
                f"{name} has {d} pixels per row, not a square number; pass image_shape=(h, w)."
            )
        shape = (side, side)
    else:
        shape = (int(image_shape[0]), int(image_shape[1]))
        if shape[0] * shape[1] != d:
            raise ValueError(
                f"image_shape {shape} has {shape[0] * shape[1]} pixels but {name} rows have {d}."
            )
    return flat, shape


def _binarize(flat: NDArray[np.float64], threshold: float, name: str) -> NDArray[np.float64]:
    ink = (flat >= threshold).astype(np.float64)
    counts = ink.sum(axis=1)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        raise ValueError(
            f"{name} has {empty.size} image(s) without ink (no pixel >= threshold {threshold:g}), "
            f"e.g. rows {empty[:5].tolist()}; the Simpson score divides by the ink count."
        )
    return ink


def simpson_kernel(
    X: ArrayLike,
    Y: ArrayLike | None = None,
    *,
    threshold: float = 0.5,
    image_shape: tuple[int, int] | None = None,
) -> NDArray[np.float64]:
    """Simpson score between binary images (Luss & d'Aspremont 2009, Sect. 5.1).

    ``k(a, b) = |a AND b| / min(|a|, |b|)``: the number of ink pixels the two images share
    divided by the smaller ink count. Indefinite in general (their Table 1, ``-SS`` rows).

    Parameters
    ----------
    X : array_like of shape (n_x, h, w) or (n_x, h*w)
        Images (any real intensities).
    Y : array_like, optional
        Second set of images of the same size; defaults to ``X``.
    threshold : float
        A pixel is ink when its value is ``>= threshold`` (0.5 suits 0/1 images; use 8 for the
        0..16 intensities of scikit-learn's digits).
    image_shape : (int, int), optional
        Only used to validate flattened input.

    Returns
    -------
    ndarray of shape (n_x, n_y)
        Scores in ``[0, 1]``, 1 on the diagonal.
    """
    threshold = _check_real(threshold, "threshold")
    flat_x, shape = _as_images(X, image_shape, "X")
    A = _binarize(flat_x, threshold, "X")
    if Y is None:
        B, symmetric = A, True
    else:
        flat_y, shape_y = _as_images(Y, image_shape or shape, "Y")
        if shape_y != shape:
            raise ValueError(f"X images are {shape} but Y images are {shape_y}.")
        B, symmetric = _binarize(flat_y, threshold, "Y"), False
    ca, cb = A.sum(axis=1), B.sum(axis=1)

    def fill_block(start: int, stop: int, col_start: int, block: NDArray[np.float64]) -> None:
        np.matmul(A[start:stop], B[col_start:].T, out=block)
        block /= np.minimum(ca[start:stop, None], cb[None, col_start:])

    return _fill_blocked(A, B, symmetric, fill_block)


def tangent_vectors(
    images: ArrayLike,
    *,
    image_shape: tuple[int, int] | None = None,
    tangents: Sequence[str] = DEFAULT_TANGENTS,
    smoothing: float = 1.0,
) -> NDArray[np.float64]:
    """Tangent vectors of Simard et al. (1998) for a stack of images.

    The image ``p`` is smoothed with a Gaussian of standard deviation ``smoothing`` pixels, and
    its derivatives ``p_x`` (along columns) and ``p_y`` (along rows) are taken from the smoothed
    image (Gaussian-derivative filters). With centred coordinates ``(x, y)``, the Lie-derivative
    tangents are: translation ``p_x``, ``p_y``; rotation ``y p_x - x p_y``; scaling
    ``x p_x + y p_y``; parallel hyperbolic (shear) ``x p_x - y p_y``; diagonal hyperbolic
    ``y p_x + x p_y``; thickness ``p_x^2 + p_y^2``. Works for any image size.

    Parameters
    ----------
    images : array_like of shape (n, h, w) or (n, h*w)
    image_shape : (int, int), optional
        Needed for flattened non-square images.
    tangents : sequence of str
        Subset of :data:`DEFAULT_TANGENTS`, in the order wanted.
    smoothing : float
        Positive standard deviation (pixels) of the Gaussian smoothing.

    Returns
    -------
    ndarray of shape (n, h*w, len(tangents))
    """
    smoothing = check_positive(smoothing, "smoothing")
    unknown = [t for t in tangents if t not in DEFAULT_TANGENTS]
    if unknown or len(tangents) == 0:
        raise ValueError(
            f"tangents must be a non-empty subset of {DEFAULT_TANGENTS}; got {list(tangents)}."
        )
    flat, (h, w) = _as_images(images, image_shape, "images")
    imgs = flat.reshape(-1, h, w)
    # Ink outside the frame is background (0): 'constant' padding, not reflection.
    # sigma 0 on the stack axis: each image is smoothed on its own.
    sigma = (0.0, smoothing, smoothing)
    px = ndimage.gaussian_filter(imgs, sigma, order=(0, 0, 1), mode="constant")
    py = ndimage.gaussian_filter(imgs, sigma, order=(0, 1, 0), mode="constant")
    yy, xx = np.meshgrid(np.arange(h) - (h - 1) / 2.0, np.arange(w) - (w - 1) / 2.0, indexing="ij")
    fields = {
        "translation_x": lambda: px,
        "translation_y": lambda: py,
        "rotation": lambda: yy * px - xx * py,
        "scaling": lambda: xx * px + yy * py,
        "shear_parallel": lambda: xx * px - yy * py,
        "shear_diagonal": lambda: yy * px + xx * py,
        "thickness": lambda: px * px + py * py,
    }
    T = np.stack([fields[name]().reshape(-1, h * w) for name in tangents], axis=2)
    return np.ascontiguousarray(T)


def _tangent_bases(T: NDArray[np.float64]) -> NDArray[np.float64]:
    """Orthonormal bases (n, d, k) of the tangent spaces; columns of dependent directions are 0.

    A batched thin SVD replaces a QR so that rank-deficient tangent sets (a blank image, two
    parallel tangents) get no spurious directions.
    """
    U, s, _ = np.linalg.svd(T, full_matrices=False)
    s_max = s[:, :1]
    keep = s > 1e-10 * np.maximum(s_max, np.finfo(np.float64).tiny)
    return U * keep[:, None, :]


def _one_sided_td_matrix(
    X: NDArray[np.float64],
    Q: NDArray[np.float64],
    Y: NDArray[np.float64],
    symmetric: bool,
) -> NDArray[np.float64]:
    """``D[i, j] = ||(I - Q_i Q_i') (x_i - y_j)||`` for all pairs, in row blocks."""
    n_x, n_y = X.shape[0], Y.shape[0]
    d, k = Q.shape[1], Q.shape[2]
    out = np.empty((n_x, n_y), dtype=np.float64)
    xx = np.einsum("ij,ij->i", X, X)
    yy = np.einsum("ij,ij->i", Y, Y)
    # Per block: the (b, k, n_y) projections dominate the temporaries.
    step = _rows_per_block(n_y, n_temporaries=2 * k + 1)
    for start in range(0, n_x, step):
        stop = min(n_x, start + step)
        b = stop - start
        Qb = Q[start:stop]
        proj_y = (Qb.transpose(0, 2, 1).reshape(b * k, d) @ Y.T).reshape(b, k, n_y)
        proj_x = np.einsum("bdk,bd->bk", Qb, X[start:stop])
        proj_y -= proj_x[:, :, None]
        # ||Q_i'(x_i - y_j)||^2: the part of the difference the tangents of x_i can explain.
        explained = np.einsum("bkm,bkm->bm", proj_y, proj_y)
        block = out[start:stop]
        np.matmul(X[start:stop], Y.T, out=block)
        block *= -2.0
        block += xx[start:stop, None]
        block += yy[None, :]
        block -= explained
        np.maximum(block, 0.0, out=block)
        if symmetric:
            rows = np.arange(start, stop)
            block[rows - start, rows] = 0.0
        np.sqrt(block, out=block)
    return out


def _prepare_td(
    X: ArrayLike,
    Y: ArrayLike | None,
    image_shape: tuple[int, int] | None,
    tangents: Sequence[str],
    smoothing: float,
    smooth_images: bool,
) -> tuple[
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64],
    NDArray[np.float64] | None,
    tuple[int, int],
]:
    """Pixels compared (raw or smoothed) and tangent bases of X and (if given) Y."""
    flat_x, shape = _as_images(X, image_shape, "X")
    flat_y = None
    if Y is not None:
        flat_y, shape_y = _as_images(Y, image_shape or shape, "Y")
        if shape_y != shape:
            raise ValueError(f"X images are {shape} but Y images are {shape_y}.")
    Qx = _tangent_bases(
        tangent_vectors(flat_x, image_shape=shape, tangents=tangents, smoothing=smoothing)
    )
    Qy = None
    if flat_y is not None:
        Qy = _tangent_bases(
            tangent_vectors(flat_y, image_shape=shape, tangents=tangents, smoothing=smoothing)
        )

    def pixels(flat: NDArray[np.float64]) -> NDArray[np.float64]:
        if not smooth_images:
            return flat
        stack = flat.reshape(-1, *shape)
        smoothed = ndimage.gaussian_filter(stack, (0.0, smoothing, smoothing), mode="constant")
        return smoothed.reshape(flat.shape[0], -1)

    px = pixels(flat_x)
    py = px if flat_y is None else pixels(flat_y)
    return px, Qx, py, Qy, shape


def one_sided_tangent_distance(
    X: ArrayLike,
    Y: ArrayLike | None = None,
    *,
    image_shape: tuple[int, int] | None = None,
    tangents: Sequence[str] = DEFAULT_TANGENTS,
    smoothing: float = 1.0,
    smooth_images: bool = False,
) -> NDArray[np.float64]:
    """One-sided tangent distance of Simard et al. (1998) for all pairs.

    ``D[i, j] = min_a ||x_i + T(x_i) a - y_j||``, where the columns of ``T(x_i)`` are the tangent
    vectors of ``x_i`` (:func:`tangent_vectors`). With an orthonormal basis ``Q_i`` of the tangent
    space the minimum is ``||(I - Q_i Q_i')(x_i - y_j)||``, which is evaluated for all pairs
    at once through Gram-matrix algebra (``||x_i - y_j||^2 - ||Q_i' x_i - Q_i' y_j||^2``): no
    Python loop over pairs. Not symmetric: ``D[i, j]`` uses the tangents of ``x_i`` only.

    Parameters
    ----------
    X : array_like of shape (n_x, h, w) or (n_x, h*w)
        Images whose tangents are used.
    Y : array_like, optional
        Images compared against; defaults to ``X`` (diagonal exactly 0).
    image_shape : (int, int), optional
        Needed for flattened non-square images.
    tangents : sequence of str
        Tangents used (default: all of :data:`DEFAULT_TANGENTS`).
    smoothing : float
        Gaussian smoothing (pixels) before the image derivatives are taken.
    smooth_images : bool
        Compare the smoothed images (the images whose derivatives are the tangents, so the
        first-order model is consistent: a sub-pixel shift is explained almost entirely) instead
        of the raw pixels. Raw pixels (default) keep more detail: leave-one-out 1-NN accuracy on
        scikit-learn's 8x8 digits is 99.2% raw vs 97.8% smoothed (smoothing 1.0).

    Returns
    -------
    ndarray of shape (n_x, n_y)
        Distances; with an empty tangent space they are Euclidean distances.
    """
    px, Qx, py, _, _ = _prepare_td(X, Y, image_shape, tangents, smoothing, smooth_images)
    return _one_sided_td_matrix(px, Qx, py, Y is None)


#: ``gamma * median(d^2)`` outside these bounds gives a degenerate tangent distance kernel:
#: above, ``exp(-36) = 2.3e-16`` is below the rounding of the unit diagonal, so most
#: off-diagonal similarities are numerically zero (the kernel is the identity, test rows are
#: zero); below, every similarity is ``1 - O(1e-6)`` (numerically the all-ones matrix).
_TD_GAMMA_SCALE = (1e-6, 36.0)


def _tangent_distance_scale(d2: NDArray[np.float64], gamma: float, symmetric: bool) -> None:
    """Warn when ``exp(-gamma d^2)`` is degenerate for most pairs; suggest ``1/median(d^2)``.

    The median is taken over an evenly spaced grid of at most 300 x 300 entries (off the
    diagonal when ``symmetric``), so the check costs O(1) extra memory for any kernel size.
    """
    import warnings

    rows = np.unique(np.linspace(0, d2.shape[0] - 1, min(d2.shape[0], 300)).astype(int))
    cols = np.unique(np.linspace(0, d2.shape[1] - 1, min(d2.shape[1], 300)).astype(int))
    sample = d2[np.ix_(rows, cols)]
    if symmetric:
        sample = sample[rows[:, None] != cols[None, :]]
    if sample.size == 0:
        return
    median = float(np.median(sample))
    if median <= 0.0:
        return
    scaled = gamma * median
    low, high = _TD_GAMMA_SCALE
    if low <= scaled <= high:
        return
    if scaled > high:
        shape = "the identity matrix" if symmetric else "zero"
        what = (
            f"exp(-gamma d^2) <= exp(-{scaled:.3g}) for half of the pairs: the kernel "
            f"underflows to (nearly) {shape}"
        )
    else:
        what = (
            f"exp(-gamma d^2) >= exp(-{scaled:.3g}) for half of the pairs: the kernel is "
            "numerically the all-ones matrix"
        )
    warnings.warn(
        f"tangent_distance_kernel: gamma = {gamma:.3g} but the median squared tangent distance "
        f"is {median:.3g}, so {what}. A sensible gamma is of order 1/median(d^2) = "
        f"{1.0 / median:.3g} (e.g. 0.1x to 10x that); pixel values on a 0..255 or 0..16 "
        "scale need a correspondingly small gamma.",
        UserWarning,
        stacklevel=3,
    )


def tangent_distance_kernel(
    X: ArrayLike,
    Y: ArrayLike | None = None,
    *,
    gamma: float = 1.0,
    image_shape: tuple[int, int] | None = None,
    tangents: Sequence[str] = DEFAULT_TANGENTS,
    smoothing: float = 1.0,
    smooth_images: bool = False,
) -> NDArray[np.float64]:
    """One-sided tangent distance kernel of Luss & d'Aspremont (2009), Sect. 5.1.

    The one-sided tangent distance (:func:`one_sided_tangent_distance`) is symmetrised by the
    mean of Haasdonk & Keysers (2002), ``d(x, y) = (D(x, y) + D(y, x)) / 2``, squared and turned
    into a similarity by negative exponentiation: ``k(x, y) = exp(-gamma d(x, y)^2)``. The kernel
    is not positive definite in general (their Table 1, ``-TD1`` rows: nearly PSD).

    Parameters
    ----------
    X : array_like of shape (n_x, h, w) or (n_x, h*w)
    Y : array_like, optional
        Defaults to ``X`` (then the result is exactly symmetric with unit diagonal).
    gamma : float
        Positive scale of the squared mean distance. It must match the pixel scale: a
        sensible value is of order ``1 / median(d^2)`` (on raw 0..16 digits pixels about
        ``1e-3``; ``gamma = 1`` there makes 95% of the similarities underflow to 0). A
        ``UserWarning`` naming that value is issued when ``gamma * median(d^2)`` is above 36
        (kernel numerically the identity) or below ``1e-6`` (numerically all ones).
    image_shape, tangents, smoothing, smooth_images
        As in :func:`one_sided_tangent_distance`; the tangents of both images are used.

    Returns
    -------
    ndarray of shape (n_x, n_y)
    """
    gamma = check_positive(gamma, "gamma")
    px, Qx, py, Qy, _ = _prepare_td(X, Y, image_shape, tangents, smoothing, smooth_images)
    if Qy is None:
        D = _one_sided_td_matrix(px, Qx, px, True)
        _symmetrize_inplace(D)  # (D + D')/2: the mean symmetrisation, block by block
    else:
        D = _one_sided_td_matrix(px, Qx, py, False)
        D += _one_sided_td_matrix(py, Qy, px, False).T
        D *= 0.5
    np.square(D, out=D)
    _tangent_distance_scale(D, gamma, symmetric=Qy is None)
    D *= -gamma
    np.exp(D, out=D)
    return D


# --------------------------------------------------------------------------------------------
# Kernels from dissimilarities
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Time series: dynamic time warping
# --------------------------------------------------------------------------------------------


def dtw_distances(X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
    """Dynamic time warping distances between univariate series (rows of ``X`` and ``Y``).

    Full-window DTW with squared point differences (``indefsvm._dtw``); series of one set share
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
    from indefsvm._dtw import dtw_matrix

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
