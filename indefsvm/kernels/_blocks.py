"""Block machinery of the kernel builders: row blocks whose temporaries fit in
:data:`~indefsvm.utils.blocks.BLOCK_BYTES`, symmetric fills of the upper triangle, blocked
distances and inner products."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.utils import blocks
from indefsvm.utils.blocks import rows_per_block
from indefsvm.utils.validation import check_finite_matrix

#: Paragraphs of the kernel functions' docstrings, written once
#: (:func:`~indefsvm.utils.docstrings.filled_doc` fills ``{X_Y}``, ``{GRAM}``, ...).
_KERNEL_DOC_PARAGRAPHS = {
    "X_Y": """
        X : array_like of shape (n_x, d)
        Y : array_like of shape (n_y, d), optional
        """,
    "GRAM": """
        Returns
        -------
        ndarray of shape (n_x, n_y)
        """,
    "SIGMA": """
        sigma : float
            Positive bandwidth (on the squared distance).
        """,
    "P": """
        p : float
            Positive exponent.
        """,
}


def _rows_per_block(n_cols: int, n_temporaries: int = 1) -> int:
    """Rows per block so that ``n_temporaries`` float64 blocks fit in the one budget,
    :data:`indefsvm.utils.blocks.BLOCK_BYTES`."""
    return rows_per_block(n_cols, n_temporaries)


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
    # Two b x b temporaries per step stay within BLOCK_BYTES (read at call time: one setting).
    b = max(1, int(np.sqrt(blocks.BLOCK_BYTES / 16.0)))
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
