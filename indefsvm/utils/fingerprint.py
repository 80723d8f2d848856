"""Recognising training points among the inputs of ``predict``: row fingerprints.

The proxy kernel ``K* = (K0 + sigma u u')_+`` of paper 004 has a rank-one term that belongs to
the training sample: as a kernel on the input space, ``M(x, x') = k0(x, x') + sigma u(x) u(x')``
with ``u(x) = u_i`` when ``x`` is the training input ``x_i`` and ``0`` for every other point
(``docs/theory.md``, "Training points and new points"). The decision of a training point is
therefore its row of ``K*`` times ``u``, and that of a new point the projection ``P_+ k_x``.
To tell the two apart, ``fit`` stores a 64-bit fingerprint of every training input row (a
feature vector, or a row of the precomputed kernel) and ``predict`` looks the rows it is given
up: a row identical to a training input, bit for bit, is that training point.

Rows equal to several training inputs (duplicated points) get the mean of their training
decisions: the row of ``K*`` averaged over the duplicates, i.e. ``u(x)`` the mean of their
``u_i``. Fingerprints are 64-bit hashes; two different rows share one with probability about
``2^-64`` per pair, so a collision among 10^6 training points has probability below 1e-7.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from indefsvm.utils.blocks import rows_per_block

__all__ = ["TrainingRows", "row_fingerprints"]

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """SplitMix64's finaliser (Steele, Lea & Flood 2014): a bijection of 64-bit words whose
    output bits each depend on every input bit (wrap-around arithmetic is intended)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _numeric_fingerprints(A: NDArray[np.float64]) -> NDArray[np.uint64]:
    n, d = A.shape
    out = np.empty(n, dtype=np.uint64)
    # Each word is mixed with its column's own constant, so permuted rows differ.
    salt = _mix((np.arange(d, dtype=np.uint64) + np.uint64(1)) * _GOLDEN)
    # Two float64-sized temporaries per row block (the block and its mixed words).
    step = rows_per_block(d, n_temporaries=2)
    with np.errstate(over="ignore"):
        for start in range(0, n, step):
            block = np.ascontiguousarray(A[start : start + step], dtype=np.float64) + 0.0
            words = block.view(np.uint64)  # + 0.0 maps -0.0 to 0.0: equal values, equal bits
            h = _mix(words ^ salt[None, :])
            out[start : start + step] = _mix(
                np.bitwise_xor.reduce(_mix(h + salt), axis=1) + np.uint64(d)
            )
    return out


def row_fingerprints(X: Any) -> NDArray[np.uint64]:
    """One 64-bit fingerprint per row of ``X`` (equal rows, equal fingerprints).

    Numeric rows are compared by value in float64 (``-0.0`` equals ``0.0``); other arrays (e.g.
    strings of a sequence kernel) by the text of each row.

    Parameters
    ----------
    X : array_like of shape (n, ...)

    Returns
    -------
    ndarray of uint64, shape (n,)
    """
    arr = np.asarray(X)
    if arr.ndim == 0:
        raise ValueError("row_fingerprints needs an array with at least one axis (rows).")
    n = arr.shape[0]
    if arr.dtype.kind in "biuf":
        return _numeric_fingerprints(arr.reshape(n, -1).astype(np.float64, copy=False))
    out = np.empty(n, dtype=np.uint64)
    for i in range(n):
        digest = hashlib.blake2b(repr(arr[i].tolist()).encode(), digest_size=8).digest()
        out[i] = np.frombuffer(digest, dtype=np.uint64)[0]
    return out


class TrainingRows:
    """Fingerprints of the training inputs, and their look-up among new inputs.

    Parameters
    ----------
    fingerprints : ndarray of uint64, shape (n,)
        :func:`row_fingerprints` of the training inputs, in training order.
    """

    def __init__(self, fingerprints: NDArray[np.uint64]) -> None:
        keys = np.asarray(fingerprints, dtype=np.uint64)
        order = np.argsort(keys, kind="stable")
        self.order_ = order.astype(np.intp)
        self.keys_ = keys[order]
        self.n_ = int(keys.shape[0])

    @classmethod
    def of(cls, X: Any) -> TrainingRows:
        """The training rows of the input ``X`` (a numpy array, or a dask array whose
        fingerprints are computed where its chunks are)."""
        from indefsvm.utils.dask_rows import is_dask_array

        if is_dask_array(X):
            if X.ndim > 2:
                X = X.reshape(X.shape[0], -1)
            if X.ndim == 2 and len(X.chunks[1]) > 1:
                X = X.rechunk({1: -1})
            keys = X.map_blocks(
                row_fingerprints, dtype=np.uint64, drop_axis=list(range(1, X.ndim))
            ).compute()
            return cls(np.asarray(keys))
        return cls(row_fingerprints(X))

    def match(self, X: Any) -> tuple[NDArray[np.intp], list[NDArray[np.intp]]]:
        """Rows of ``X`` that are training inputs.

        Returns
        -------
        rows : ndarray of int
            Indices of the rows of ``X`` identical to at least one training input.
        members : list of ndarray of int
            For each of ``rows``, the training indices (training order) it equals.
        """
        keys = row_fingerprints(X)
        lo = np.searchsorted(self.keys_, keys, side="left")
        hi = np.searchsorted(self.keys_, keys, side="right")
        rows = np.flatnonzero(hi > lo)
        members = [np.sort(self.order_[lo[i] : hi[i]]) for i in rows]
        return rows, members

    def training_values(self, X: Any, values: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        """``(rows, v)``: the rows of ``X`` that are training inputs and ``values`` there (the
        mean over duplicated training inputs).

        Parameters
        ----------
        values : ndarray of shape (n, ...)
            One value (or row) per training point, in training order.
        """
        values = np.asarray(values)
        if values.shape[0] != self.n_:
            raise ValueError(
                f"values has {values.shape[0]} rows; expected one per training point ({self.n_})."
            )
        keys = row_fingerprints(X)
        lo = np.searchsorted(self.keys_, keys, side="left")
        hi = np.searchsorted(self.keys_, keys, side="right")
        rows = np.flatnonzero(hi > lo)
        if rows.shape[0] == 0:
            return rows, values[:0]
        # One training input per row (the usual case) in one gather; duplicates averaged.
        v = values[self.order_[lo[rows]]].astype(np.float64, copy=True)
        for k in np.flatnonzero(hi[rows] - lo[rows] > 1):
            i = rows[k]
            v[k] = values[self.order_[lo[i] : hi[i]]].mean(axis=0)
        return rows, v
