"""Row-chunked Dask arrays: detection, checks and map-reduce passes (optional dependency).

One fit on a Dask cluster keeps every ``n``-sized array (the Nystroem factor, the
fitted values, residuals, active masks) on the workers, chunked by rows, and brings back to the
client only what one pass over the rows reduces to: an ``m x m`` Gram matrix, an ``m``-vector,
a few scalars, or an ``m x m`` R factor. Every pass here is a tree of tasks: one task per row
chunk computes the chunk's summary (e.g. ``B'B``) and the summaries are combined pairwise on the
workers (sums, or the QR of two stacked R factors), so the client receives one summary, not one
per chunk.

``dask`` is optional: :func:`is_dask_array` looks for ``dask.array`` in :data:`sys.modules`
instead of importing it (an array cannot be a Dask array unless dask was imported), and every
function that needs dask imports it itself. ``import indefsvm`` never imports dask.

With a :class:`distributed.Client` active (:func:`active_client`) the passes run on its workers;
without one, on dask's local scheduler (threads of the client process).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np
from numpy.typing import NDArray

from indefsvm.utils.progress import ProgressBar, progress_bar

__all__ = [
    "active_client",
    "align_rows",
    "check_dask_rows",
    "dask_binary_labels",
    "dask_classes",
    "dask_fit_progress",
    "labels_in_client",
    "rowwise_on_workers",
    "fit_progress",
    "is_dask_array",
    "map_rows",
    "on_workers",
    "persist_rows",
    "reduce_rows",
]


def is_dask_array(x: Any) -> bool:
    """Whether ``x`` is a ``dask.array.Array`` (without importing dask)."""
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(x, module.Array)


def on_workers(*inputs: Any) -> bool:
    """Whether a fit on these inputs runs on the Dask workers (any of them a dask array): the
    estimators' test of their inputs, before a factor (and its backend) exists."""
    return any(is_dask_array(x) for x in inputs)


def active_client() -> Any | None:
    """The default :class:`distributed.Client`, or None (no client, distributed not loaded, or
    a local scheduler chosen in dask's configuration, e.g. ``dask.config.set(scheduler=
    "threads")``, which dask's own ``compute`` and ``persist`` obey while a client exists)."""
    if "distributed" not in sys.modules:
        return None
    import dask
    from distributed import Client

    chosen = dask.config.get("scheduler", None)
    if isinstance(chosen, Client):
        return chosen
    if chosen not in (None, "dask.distributed", "distributed"):
        return None
    from distributed import default_client

    try:
        return default_client()
    except ValueError:  # "No clients found"
        return None


#: The bar of the fit in progress: every pass (:func:`reduce_rows`, :func:`persist_rows`) of
#: that fit advances it by its chunks, so one fit shows one bar however many passes it makes.
_FIT_BAR: ContextVar[ProgressBar | None] = ContextVar("indefsvm_dask_fit_bar", default=None)


@contextlib.contextmanager
def fit_progress(desc: str, *, enabled: bool | None = None) -> Iterator[ProgressBar]:
    """One bar on the client for a whole fit on dask arrays, counting the chunks processed.

    Nested calls (the Nystroem map inside an estimator's fit) reuse the outer bar. ``enabled``
    as :func:`indefsvm.utils.progress.progress_bar` (None: when stderr is a terminal).
    """
    outer = _FIT_BAR.get()
    if outer is not None:
        yield outer
        return
    bar = progress_bar(None, desc=desc, unit="chunks", enabled=enabled)
    token = _FIT_BAR.set(bar)
    try:
        yield bar
    finally:
        _FIT_BAR.reset(token)
        bar.close()


def dask_fit_progress(fit: Callable[..., Any]) -> Callable[..., Any]:
    """Run an estimator's ``fit(X, ...)`` under :func:`fit_progress` when ``X`` is a dask array."""

    @functools.wraps(fit)
    def wrapper(estimator: Any, X: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not is_dask_array(X):
            return fit(estimator, X, *args, **kwargs)
        verbose = getattr(estimator, "verbose", None)
        with fit_progress(f"{type(estimator).__name__} fit", enabled=None if not verbose else True):
            return fit(estimator, X, *args, **kwargs)

    return wrapper


def check_dask_rows(X: Any, name: str = "X") -> Any:
    """A Dask array chunked by rows only: known chunk sizes, one chunk along the other axes.

    Unknown chunk sizes (NaN, e.g. after boolean indexing) cannot be aligned with other arrays
    nor sliced by landmark index: refused with the fix. Chunks along the columns are merged (a
    kernel row needs the whole point).
    """
    if X.ndim == 0 or any(np.isnan(c) for axis in X.chunks for c in axis):
        raise ValueError(
            f"{name} is a dask array with unknown chunk sizes (NaN in {name}.chunks, e.g. after "
            f"boolean indexing); call {name}.compute_chunk_sizes() (or build it with known "
            "chunks) before fitting."
        )
    if X.shape[0] == 0:
        raise ValueError(f"{name} must have at least one row; got 0.")
    if X.ndim > 1 and any(len(c) > 1 for c in X.chunks[1:]):
        X = X.rechunk({axis: -1 for axis in range(1, X.ndim)})
    return X


def align_rows(v: Any, X: Any, name: str, *, dtype: Any = None) -> Any:
    """``v`` (numpy or dask, one entry per row of ``X``) as a 1-D dask array with ``X``'s row
    chunks, so that chunk ``i`` of ``v`` belongs to chunk ``i`` of ``X``."""
    import dask.array as da

    n = X.shape[0]
    if is_dask_array(v):
        if any(np.isnan(c) for axis in v.chunks for c in axis):
            raise ValueError(
                f"{name} is a dask array with unknown chunk sizes; call "
                f"{name}.compute_chunk_sizes() before fitting."
            )
        if v.ndim == 2 and 1 in v.shape:
            v = v.reshape(-1)
        if v.ndim != 1 or v.shape[0] != n:
            raise ValueError(
                f"{name} has shape {v.shape} but X has {n} rows; expected one entry per row."
            )
        v = v.rechunk((X.chunks[0],)) if v.chunks[0] != X.chunks[0] else v
    else:
        arr = np.asarray(v)
        if arr.ndim == 2 and 1 in arr.shape:
            arr = arr.ravel()
        if arr.ndim != 1 or arr.shape[0] != n:
            raise ValueError(
                f"{name} has shape {arr.shape} but X has {n} rows; expected one entry per row."
            )
        v = da.from_array(arr, chunks=(X.chunks[0],))
    return v if dtype is None else v.astype(dtype)


def persist_rows(A: Any, *, bar: ProgressBar | None = None) -> Any:
    """``A`` computed and kept in memory chunk by chunk: on the workers of the active client
    (the factor stays there, dask-ml's convention), else in the client process (dask's local
    scheduler). ``bar`` advances by one per finished chunk (with a client)."""
    bar = _FIT_BAR.get() if bar is None else bar
    client = active_client()
    if client is None:
        A = A.persist()
        if bar is not None:
            bar.update(A.npartitions)
        return A
    from distributed import as_completed, futures_of

    A = client.persist(A)
    for _ in as_completed(futures_of(A)):
        if bar is not None:
            bar.update(1)
    return A


def map_rows(func: Callable[..., Any], *arrays: Any, args: Sequence[Any] = (), dtype: Any) -> Any:
    """Lazy row-chunked result of ``func(block_1, ..., *args)`` for each row chunk.

    ``func`` returns an array with the chunk's rows: 1-D (a value per row), or 2-D (its width
    is taken from ``func`` on an empty chunk). The result has the row chunks of ``arrays[0]``.
    """
    import dask.array as da

    first = arrays[0]
    probe = func(*(np.empty((0, *a.shape[1:]), dtype=a.dtype) for a in arrays), *args)
    drop = list(range(1, first.ndim)) if probe.ndim == 1 else list(range(2, first.ndim))
    chunks = (first.chunks[0],) if probe.ndim == 1 else (first.chunks[0], (probe.shape[1],))
    return da.map_blocks(
        _Bound(func, tuple(args)),
        *arrays,
        chunks=chunks,
        drop_axis=drop or None,
        dtype=dtype,
        meta=np.empty((0,) * probe.ndim, dtype=dtype),
    )


class _Bound:
    """``func(*blocks, *args)`` as a picklable callable of the blocks only (``map_blocks`` would
    treat array arguments as arrays to chunk)."""

    def __init__(self, func: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.func = func
        self.args = args

    def __call__(self, *blocks: Any) -> Any:
        return self.func(*blocks, *self.args)


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, tuple):
        return tuple(x + y for x, y in zip(a, b, strict=True))
    return a + b


def reduce_rows(
    func: Callable[..., Any],
    *arrays: Any,
    args: Sequence[Any] = (),
    combine: Callable[[Any, Any], Any] = _add,
    bar: ProgressBar | None = None,
) -> Any:
    """One pass over the row chunks: ``combine`` of ``func(chunk_1, ..., *args)`` over chunks.

    ``func`` runs once per row chunk on the workers (``arrays`` share their row chunks; each has
    one chunk along its other axes) and returns a small summary: an array or a tuple of arrays.
    The summaries are combined pairwise on the workers (a binary tree; default: the sum), so
    only the final summary travels to the client. ``args`` (small numpy arrays, scalars) are
    passed to every task.
    """
    import dask
    from dask import delayed

    bar = _FIT_BAR.get() if bar is None else bar
    blocks = list(zip(*(a.to_delayed().ravel() for a in arrays), strict=True))
    parts = [delayed(func, pure=True)(*bs, *args) for bs in blocks]
    while len(parts) > 1:
        merged = [
            delayed(combine, pure=True)(a, b) for a, b in zip(parts[::2], parts[1::2], strict=False)
        ]
        if len(parts) % 2:
            merged.append(parts[-1])
        parts = merged
    client = active_client()
    if client is None:
        (result,) = dask.compute(parts[0])
    else:
        result = client.compute(parts[0]).result()
    if bar is not None:
        bar.update(len(blocks))
    return _owned(result)


def _owned(value: Any) -> Any:
    """Arrays received from a worker process as our own aligned copies.

    Deserialised buffers can be unaligned views of the message (``flags.aligned`` False), which
    LAPACK wrappers refuse (scipy: "Expected a real or complex array"); the copies are small.
    """
    if isinstance(value, tuple):
        return tuple(_owned(v) for v in value)
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True, order="C")
    return value


def dask_classes(y: Any) -> np.ndarray:
    """The sorted distinct labels of a dask ``y`` (found on the workers; only they travel)."""
    import dask.array as da

    if any(np.isnan(c) for axis in y.chunks for c in axis):
        raise ValueError(
            "y is a dask array with unknown chunk sizes; call y.compute_chunk_sizes() first."
        )
    if y.ndim == 2 and 1 in y.shape:
        y = y.reshape(-1)
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D vector of labels; got shape {y.shape}.")
    classes = _owned(np.asarray(da.unique(y).compute()))
    if classes.dtype.kind == "f" and not np.all(np.isfinite(classes)):
        raise ValueError("y contains NaN or inf.")
    return classes


def dask_binary_labels(y: Any) -> tuple[Any, np.ndarray]:
    """``(y_pm, classes)``: a dask ``y`` of exactly two classes mapped to a lazy +-1 float64
    vector (the larger label is +1, as :func:`indefsvm.utils.validation.check_binary_labels`)."""
    import dask.array as da

    classes = dask_classes(y)
    if classes.shape[0] != 2:
        raise ValueError(
            f"y must contain exactly two classes; found {classes.shape[0]}: "
            f"{classes[:10].tolist()}."
        )
    y = y.reshape(-1) if y.ndim == 2 else y
    return da.where(y == classes[1], 1.0, -1.0), classes


def _rows_of_block(block: Any, estimator: Any, method_name: str, extra: tuple) -> Any:
    return getattr(estimator, method_name)(block, *extra)


def rowwise_on_workers(method: Callable[..., Any]) -> Callable[..., Any]:
    """Prediction methods that map a ``dask.array`` of test rows to a dask array.

    ``method(self, X, *extra)`` runs unchanged on numpy input; on a dask array it runs on each
    row chunk where the chunk is (``map_blocks``: the fitted model travels to the workers, the
    test points do not come to the client) and returns a dask array chunked like ``X``'s rows.
    The output's trailing shape and type come from the model applied to the first test row.
    Extra arguments (``K_test_test``) are refused with a dask ``X``.
    """

    @functools.wraps(method)
    def wrapper(self: Any, X: Any, *extra: Any) -> Any:
        if not is_dask_array(X):
            return method(self, X, *extra)
        if any(e is not None for e in extra):
            raise ValueError(
                f"{type(self).__name__}: with a dask array X only the test points may be given "
                "(K_test_test, the transductive map's test block, is not supported)."
            )
        if X.ndim != 2 or X.shape[0] < 1:
            raise ValueError(f"X must be a 2-D dask array with at least one row; got {X.shape}.")
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: -1})
        probe = np.asarray(method(self, np.asarray(X[:1].compute()), *extra))
        tail = probe.shape[1:]
        return X.map_blocks(
            _rows_of_block,
            estimator=self,
            method_name=method.__name__,
            extra=extra,
            dtype=probe.dtype,
            chunks=(X.chunks[0], *((k,) for k in tail)),
            drop_axis=[] if tail else [1],
            meta=np.empty((0,) + tail, dtype=probe.dtype),
        )

    return wrapper


def labels_in_client(y: Any, n: int, name: str, *, numeric: bool = False) -> NDArray:
    """Training targets of a dask ``X`` as a numpy vector in this process (O(n) numbers).

    ``y`` may be numpy or dask; its length must be ``n``, the number of rows of ``X``.
    """
    from sklearn.utils.validation import check_array, column_or_1d

    if is_dask_array(y):
        y = y.compute()
    y = column_or_1d(
        check_array(y, ensure_2d=False, dtype=np.float64 if numeric else None), warn=True
    )
    if y.shape[0] != n:
        raise ValueError(
            f"{name}: X (a dask array) has {n} rows but y has {y.shape[0]} entries; one label "
            "per row of X is expected."
        )
    return y
