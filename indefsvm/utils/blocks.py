"""The one memory budget of every row-block pass of the package.

Kernel builders, the Nystroem map, the passes over a factor (both wings), the out-of-sample
map and the row fingerprints all cut their work into blocks of rows whose temporaries fit in
:data:`BLOCK_BYTES`; :func:`rows_per_block` turns the budget into a row count. One setting: a
test that needs many blocks (or a user with little memory) changes this constant only.
"""

from __future__ import annotations

__all__ = ["BLOCK_BYTES", "rows_per_block"]

#: Memory budget (bytes) of the temporaries of one row block: 32 MB, large enough that a block
#: product runs at BLAS speed, small enough to stay in the caches' shadow next to the arrays.
BLOCK_BYTES = 32 * 2**20


def rows_per_block(n_cols: int, n_temporaries: int = 1, itemsize: int = 8) -> int:
    """Rows per block so that ``n_temporaries`` blocks of ``n_cols`` columns fit in the budget.

    ``BLOCK_BYTES // (itemsize * n_cols * n_temporaries)``, at least 1; read at call time, so a
    changed :data:`BLOCK_BYTES` takes effect everywhere.

    Parameters
    ----------
    n_cols : int
        Columns of one temporary block.
    n_temporaries : int, default 1
        Blocks of that size alive at once.
    itemsize : int, default 8
        Bytes per entry (8: float64).

    Returns
    -------
    int
    """
    return max(1, BLOCK_BYTES // (itemsize * max(1, n_cols) * max(1, n_temporaries)))
