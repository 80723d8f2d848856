"""Centring a kernel in feature space (paper 000, Sect. 4; Schoelkopf et al.'s kernel centring).

Kept apart from the estimators so the hyper-gradient and the low-rank learners use it without
importing the estimator module (which imports them).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["center_kernel_test", "center_kernel_train"]


def center_kernel_train(K: NDArray[np.float64]) -> tuple[NDArray, NDArray, float]:
    """Centre a training kernel in feature space: ``H K H`` with ``H = I - 11'/n``.

    Returns
    -------
    K_centered : ndarray of shape (n, n)
    column_means : ndarray of shape (n,)
        ``mean_i K_ij`` (needed to centre test rows).
    grand_mean : float
    """
    col = K.mean(axis=0)
    grand = float(col.mean())
    Kc = K - col[None, :] - col[:, None] + grand
    return 0.5 * (Kc + Kc.T), col, grand


def center_kernel_test(
    K_test: NDArray[np.float64], column_means: NDArray[np.float64], grand_mean: float
) -> NDArray[np.float64]:
    """Centre test rows with the training statistics (same feature-space mean as training).

    ``k_c(x, x_j) = k(x, x_j) - mean_i k(x, x_i) - mean_i k(x_i, x_j) + mean_il k(x_i, x_l)``.
    """
    return K_test - K_test.mean(axis=1)[:, None] - column_means[None, :] + grand_mean
