"""Kernels on vectors (``d = ||x - y||``), indefinite and positive definite.

See :mod:`indefsvm.kernels` for the list and the blocked evaluation that bounds the temporaries.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.kernels._blocks import (
    _KERNEL_DOC_PARAGRAPHS,
    _blocked_inner_products,
    _blocked_sq_distances,
    _check_pair,
    _check_real,
)
from indefsvm.utils.docstrings import filled_doc
from indefsvm.utils.validation import check_positive


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
def squared_euclidean_distances(X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
    """Squared Euclidean distances ``||x_i - y_j||^2``, built in row blocks.

    Parameters
    ----------
    {X_Y}
        Defaults to ``X`` (then the diagonal is exactly 0 and the result exactly symmetric).

    {GRAM}
    """
    X, Y, sym = _check_pair(X, Y)
    return _blocked_sq_distances(X, Y, sym, lambda block: None)


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
def linear_kernel(X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
    """Linear kernel ``k(x, y) = <x, y>`` (positive semi-definite).

    Parameters
    ----------
    {X_Y}
        Defaults to ``X``.

    {GRAM}
    """
    X, Y, sym = _check_pair(X, Y)
    return _blocked_inner_products(X, Y, sym, lambda block: None)


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
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
    {X_Y}
    degree : int
        Positive integer degree.
    gamma : float
        Positive scale of the inner product.
    coef0 : float
        Additive constant.

    {GRAM}
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


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
def gaussian_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, gamma: float = 1.0
) -> NDArray[np.float64]:
    """Gaussian (RBF) kernel ``k(x, y) = exp(-gamma ||x - y||^2)`` (positive definite).

    Parameters
    ----------
    {X_Y}
    gamma : float
        Positive inverse squared length scale.

    {GRAM}
    """
    gamma = check_positive(gamma, "gamma")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        block *= -gamma
        np.exp(block, out=block)

    return _blocked_sq_distances(X, Y, sym, apply)


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
def sigmoid_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, gamma: float = 1.0, coef0: float = 0.0
) -> NDArray[np.float64]:
    """Sigmoid (hyperbolic tangent) kernel ``k(x, y) = tanh(gamma <x, y> + coef0)``.

    The textbook's eq. (6.6) ``tanh(a (x . x') + b)``; indefinite in general (Luss & d'Aspremont
    2009, Table 1, the ``-sig`` data sets; Oglic & Gaertner 2018, Table 1).

    Parameters
    ----------
    {X_Y}
    gamma : float
        Positive slope ``a``.
    coef0 : float
        Offset ``b`` (any sign).

    {GRAM}
    """
    gamma = check_positive(gamma, "gamma")
    coef0 = _check_real(coef0, "coef0")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        block *= gamma
        block += coef0
        np.tanh(block, out=block)

    return _blocked_inner_products(X, Y, sym, apply)


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
def epanechnikov_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, sigma: float = 1.0, p: float = 1.0
) -> NDArray[np.float64]:
    """Epanechnikov kernel of Ong et al. (2004), Table 1.

    ``k(x, y) = (1 - ||x - y||^2 / sigma)^p`` for ``||x - y||^2 / sigma <= 1`` and 0 otherwise.

    Parameters
    ----------
    {X_Y}
    {SIGMA}
    {P}

    {GRAM}
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


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
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
    {X_Y}
    sigma1, sigma2, sigma3 : float
        Positive bandwidths (on the squared distance).

    {GRAM}
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


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
def multiquadric_kernel(
    X: ArrayLike, Y: ArrayLike | None = None, *, sigma: float = 1.0, c: float = 1.0
) -> NDArray[np.float64]:
    """Multiquadric kernel of Ong et al. (2004), Table 1: ``sqrt(||x-y||^2 / sigma + c^2)``.

    Conditionally negative definite, hence indefinite (one positive eigenvalue on distinct
    points; Micchelli 1986).

    Parameters
    ----------
    {X_Y}
    {SIGMA}
    c : float
        Offset (finite; only ``c^2`` enters).

    {GRAM}
    """
    sigma = check_positive(sigma, "sigma")
    c = _check_real(c, "c")
    X, Y, sym = _check_pair(X, Y)

    def apply(block: NDArray[np.float64]) -> None:
        block *= 1.0 / sigma
        block += c * c
        np.sqrt(block, out=block)

    return _blocked_sq_distances(X, Y, sym, apply)


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
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
    {X_Y}
    sigma : float
        Positive scale.
    {P}

    {GRAM}
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


@filled_doc(**_KERNEL_DOC_PARAGRAPHS)
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
    {X_Y}
    gamma1, gamma2 : float
        Positive inverse squared length scales of the positive and the negative component.
    weight : float
        Positive weight of the subtracted Gaussian.

    {GRAM}
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
