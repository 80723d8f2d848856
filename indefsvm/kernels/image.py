"""Kernels on images: the Simpson kernel (Luss & d'Aspremont 2009, Sect. 5.1) and the one-sided
tangent distance of Simard et al. (1998) with its kernel (Haasdonk & Keysers 2002)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import ndimage

from indefsvm.kernels._blocks import (
    _check_real,
    _fill_blocked,
    _rows_per_block,
    _symmetrize_inplace,
)
from indefsvm.utils.validation import check_finite_matrix, check_positive

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
