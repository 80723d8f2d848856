"""Input validation shared by every problem, solver and estimator.

Every check raises ``ValueError`` (or ``TypeError``) with a message that says what is wrong and
what was expected, so bad input never silently turns into a wrong answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Default relative tolerance for the symmetry check: ``max|K - K'| <= tol * max(1, max|K|)``.
SYMMETRY_RTOL = 1e-10


def _refuse_container(X: Any, name: str) -> None:
    """Refuse array containers whose meaning ``np.asarray`` would silently change."""
    if np.ma.isMaskedArray(X):
        raise TypeError(
            f"{name} is a masked array; its mask would be ignored. Drop or fill the masked "
            f"entries first (e.g. np.ma.filled({name}, value) or remove those samples)."
        )
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):  # scipy.sparse, without importing it
        raise TypeError(
            f"{name} is a scipy.sparse matrix; dense arrays are expected (the proxy kernel is "
            f"dense anyway). Pass {name}.toarray()."
        )


def check_square_symmetric(
    K: ArrayLike,
    *,
    name: str = "K0",
    symmetrize: bool = False,
    rtol: float = SYMMETRY_RTOL,
    min_size: int = 1,
    advice: str | None = None,
) -> NDArray[np.float64]:
    """Return ``K`` as a float64 C-contiguous symmetric matrix or raise a clear error.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Kernel (similarity) matrix.
    name : str
        Name used in error messages.
    symmetrize : bool
        If True, a non-symmetric ``K`` is replaced by ``(K + K') / 2`` instead of raising.
    rtol : float
        Relative tolerance of the symmetry check: ``max|K - K'| <= rtol * max(1, max|K|)``.
        Inside the tolerance the matrix is symmetrised exactly (rounding noise only).
    min_size : int
        Smallest accepted ``n``.
    advice : str, optional
        How the caller can fix a non-symmetric matrix (default: symmetrise it first; callers
        with a ``symmetrize`` parameter name it).
    """
    _refuse_container(K, name)
    K = np.asarray(K)
    _refuse_non_real(K, name, what="a numeric matrix", complex_what="a complex matrix")
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square (n, n) matrix; got shape {K.shape}.")
    n = K.shape[0]
    if n < min_size:
        raise ValueError(f"{name} must have at least {min_size} rows; got n = {n}.")
    K = np.array(K, dtype=np.float64, order="C", copy=True)
    if not np.all(np.isfinite(K)):
        bad = int(np.size(K) - np.count_nonzero(np.isfinite(K)))
        raise ValueError(f"{name} contains {bad} non-finite entries (NaN or inf); expected finite.")
    asym = _max_asymmetry(K)
    scale = max(1.0, float(np.max(np.abs(K)))) if n > 0 else 1.0
    if asym > rtol * scale and not symmetrize:
        raise ValueError(
            f"{name} is not symmetric: max|{name} - {name}'| = {asym:.3g} exceeds "
            f"{rtol:g} * max(1, max|{name}|) = {rtol * scale:.3g}. "
            + (advice or f"Symmetrise it first, e.g. {name} = ({name} + {name}.T) / 2.")
        )
    # Exact symmetry matters: eigh reads only one triangle, and the gap uses both.
    if asym > 0:
        _symmetrize_inplace(K)
    return K


_BLOCK = 512


def _max_asymmetry(K: NDArray[np.float64]) -> float:
    """``max|K - K'|`` by blocks, without n x n temporaries."""
    n = K.shape[0]
    worst = 0.0
    for i in range(0, n, _BLOCK):
        rows = K[i : i + _BLOCK]
        worst = max(worst, float(np.max(np.abs(rows - K[:, i : i + _BLOCK].T), initial=0.0)))
    return worst


def _symmetrize_inplace(K: NDArray[np.float64]) -> None:
    """``K <- (K + K')/2`` in place, block pair by block pair."""
    n = K.shape[0]
    for i in range(0, n, _BLOCK):
        I = slice(i, min(i + _BLOCK, n))
        for j in range(i, n, _BLOCK):
            J = slice(j, min(j + _BLOCK, n))
            avg = 0.5 * (K[I, J] + K[J, I].T)
            K[I, J] = avg
            K[J, I] = avg.T


def check_finite_matrix(X: ArrayLike, *, name: str = "X", ndim: int = 2) -> NDArray[np.float64]:
    """Return ``X`` as a finite float64 array of dimension ``ndim`` or raise."""
    _refuse_container(X, name)
    return _as_finite_real(X, name, ndim=ndim, what="numeric", dims=f"{ndim}-dimensional")


def _refuse_non_real(
    X: NDArray[Any], name: str, *, what: str, complex_what: str = "complex values"
) -> None:
    """Refuse a non-numeric or complex ``X`` before it is cast to float64.

    Shared by the matrix checks here and the vector check of :mod:`indefsvm.linalg.rank_one`,
    so every entry point refuses strings, objects and complex numbers the same way (booleans
    are accepted as 0/1); ``what`` and ``complex_what`` finish the messages, e.g. "z must be a
    numeric vector, got dtype <U1." and "z must be real; got complex values.".
    """
    if X.dtype == object or not (
        np.issubdtype(X.dtype, np.number) or np.issubdtype(X.dtype, np.bool_)
    ):
        raise TypeError(f"{name} must be {what}, got dtype {X.dtype}.")
    if np.iscomplexobj(X):
        raise TypeError(f"{name} must be real; got {complex_what}.")


def _as_finite_real(
    X: ArrayLike, name: str, *, ndim: int, what: str, dims: str
) -> NDArray[np.float64]:
    """``X`` as a finite real float64 array of ``ndim`` dimensions (no copy if it is one).

    The one body of :func:`check_finite_matrix` and of the vector check of
    :mod:`indefsvm.linalg.rank_one` (which asks for ``ndim=1``); ``what`` names the expected
    kind in the dtype message (see :func:`_refuse_non_real`) and ``dims`` the expected shape,
    e.g. "a 1-D vector".
    """
    X = np.asarray(X)
    _refuse_non_real(X, name, what=what)
    if X.ndim != ndim:
        raise ValueError(f"{name} must be {dims}; got shape {X.shape}.")
    X = np.asarray(X, dtype=np.float64)
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or inf; expected finite values.")
    return X


def is_real(value: Any) -> bool:
    """True for a real scalar (Python or NumPy int/float, not bool, not complex)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def is_positive_int(value: Any) -> bool:
    """True for a positive integer (an integral float such as ``1e4`` is accepted)."""
    if not is_real(value) or not np.isfinite(value):
        return False
    return float(value).is_integer() and value >= 1


def check_positive(value: Any, name: str, *, allow_array: bool = False) -> Any:
    """Check that a scalar (or, with ``allow_array``, every entry of an array) is finite and > 0."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim > 0 and not allow_array:
        raise ValueError(f"{name} must be a positive scalar; got an array of shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty.")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0; got {value!r}.")
    return float(arr) if arr.ndim == 0 else arr


@dataclass(frozen=True)
class BinaryLabels:
    """Two-class labels mapped to ±1.

    Attributes
    ----------
    y : ndarray of shape (n,)
        Labels in {-1.0, +1.0}.
    classes : ndarray of shape (2,)
        The user's labels, sorted; ``classes[0]`` maps to -1 and ``classes[1]`` to +1.
    """

    y: NDArray[np.float64]
    classes: NDArray[Any]


def check_binary_labels(y: ArrayLike, n: int | None = None, *, name: str = "y") -> BinaryLabels:
    """Map labels of exactly two classes to ±1 (sorted order: smaller class label -> -1).

    Labels may be integers, floats, booleans or strings (also as an object array of those): the
    types a result file can store faithfully. Bytes, complex, dates and other objects are refused.
    """
    y = check_label_values(y, name=name)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be a 1-D vector of labels; got shape {y.shape}.")
    if n is not None and y.shape[0] != n:
        raise ValueError(
            f"{name} has {y.shape[0]} labels but the kernel has {n} rows; "
            "expected one label per row."
        )
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or inf.")
    classes = np.unique(y)
    if classes.shape[0] != 2:
        raise ValueError(
            f"{name} must contain exactly two classes; found {classes.shape[0]} "
            f"class{'' if classes.shape[0] == 1 else 'es'}: "
            f"{classes[:10].tolist()}{' ...' if classes.shape[0] > 10 else ''}."
        )
    y_pm = np.where(y == classes[1], 1.0, -1.0)
    return BinaryLabels(y=y_pm, classes=classes)


def check_label_values(y: ArrayLike, *, name: str = "y") -> NDArray[Any]:
    """Return labels as an array, refusing types that cannot be compared or stored faithfully."""
    _refuse_container(y, name)
    y = np.asarray(y)
    kind = y.dtype.kind
    if kind == "O":
        flat = y.ravel()
        if any(v is None for v in flat):
            raise ValueError(
                f"{name} contains None (missing labels); remove those samples or give them a label."
            )
        bad = {type(v).__name__ for v in flat if not isinstance(v, _LABEL_SCALARS)}
        if bad:
            raise TypeError(
                f"{name} contains values of type {', '.join(sorted(bad))}; labels must be "
                "integers, floats, booleans or strings."
            )
        kinds = {isinstance(v, str) for v in flat}
        if len(kinds) > 1:
            raise TypeError(f"{name} mixes strings and numbers; use one type for all labels.")
        y = np.array(flat.tolist()).reshape(y.shape)
        kind = y.dtype.kind
    if kind not in "biufU":
        raise TypeError(
            f"{name} has dtype {y.dtype}; labels must be integers, floats, booleans or strings "
            "(bytes, complex numbers and dates are not supported: convert them first)."
        )
    return y


_LABEL_SCALARS = (str, bool, int, float, np.integer, np.floating, np.bool_)


def class_weights_to_C(
    C: float,
    y_pm: NDArray[np.float64],
    class_weight: None | str | Mapping[Any, float],
    classes: NDArray[Any] | None = None,
) -> NDArray[np.float64]:
    """Per-sample box bounds ``C_i`` for the classification dual.

    Parameters
    ----------
    C : float
        Misclassification penalty (> 0).
    y_pm : ndarray of shape (n,)
        Labels in {-1, +1}.
    class_weight : None, "balanced", "paper" or dict
        ``None``: ``C_i = C``. ``"balanced"``: scikit-learn's ``n / (2 n_class)`` weights.
        ``"paper"``: the published IndefiniteSVM code's ``C_i = C`` for y=+1 and
        ``C * n_pos / n_neg`` for y=-1. A dict maps the user's labels (or ±1 when ``classes``
        is None) to weights.
    classes : ndarray of shape (2,), optional
        The user's labels (``classes[0]`` -> -1, ``classes[1]`` -> +1), to interpret dict keys.
    """
    C = check_positive(C, "C")
    n = y_pm.shape[0]
    n_pos = int(np.sum(y_pm > 0))
    n_neg = n - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            f"both classes need at least one sample; got {n_pos} positive and {n_neg} negative."
        )
    w_pos = w_neg = 1.0
    if class_weight is None:
        pass
    elif isinstance(class_weight, str):
        if class_weight == "balanced":
            w_pos, w_neg = n / (2.0 * n_pos), n / (2.0 * n_neg)
        elif class_weight == "paper":
            w_pos, w_neg = 1.0, n_pos / n_neg
        else:
            raise ValueError(
                f"class_weight must be None, 'balanced', 'paper' or a dict; got {class_weight!r}."
            )
    elif isinstance(class_weight, Mapping):
        labels = (classes[0], classes[1]) if classes is not None else (-1, 1)
        unknown = [k for k in class_weight if k not in labels]
        if unknown:
            raise ValueError(
                f"class_weight has keys {unknown} that are not class labels {list(labels)}."
            )
        w_neg = float(class_weight.get(labels[0], 1.0))
        w_pos = float(class_weight.get(labels[1], 1.0))
        if not (np.isfinite(w_neg) and np.isfinite(w_pos) and w_neg > 0 and w_pos > 0):
            raise ValueError(f"class weights must be finite and > 0; got {dict(class_weight)}.")
    else:
        raise TypeError(
            f"class_weight must be None, 'balanced', 'paper' or a dict; got {type(class_weight)}."
        )
    return np.where(y_pm > 0, C * w_pos, C * w_neg)


def check_sample_weight(
    sample_weight: ArrayLike | None, n: int, *, owner: str = ""
) -> NDArray[np.float64] | None:
    """``sample_weight`` as a float vector of length ``n``, or None when not given.

    As scikit-learn's estimators take it: a scalar is the same weight for every point; weights
    must be finite and >= 0 and not all zero. A weight multiplies the point's loss, i.e. its
    bound ``C_i`` in the dual (LIBSVM's instance weights); a zero weight removes the point.
    """
    if sample_weight is None:
        return None
    where = f"{owner}: " if owner else ""
    from indefsvm.utils.dask_rows import is_dask_array

    if is_dask_array(sample_weight):
        sample_weight = sample_weight.compute()  # O(n) numbers, like the labels
    w = np.asarray(sample_weight)
    if w.dtype.kind not in "biuf":
        raise ValueError(f"{where}sample_weight must be numeric; got dtype {w.dtype}.")
    w = np.full(n, float(w), dtype=np.float64) if w.ndim == 0 else w.astype(np.float64)
    if w.shape != (n,):
        raise ValueError(
            f"{where}sample_weight must be a scalar or a vector with one weight per training "
            f"point (length n = {n}); got shape {w.shape}."
        )
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"{where}sample_weight must be finite and >= 0.")
    if not np.any(w > 0):
        raise ValueError(f"{where}sample_weight is zero for every point: nothing to fit.")
    return w


def no_fit_params(estimator: Any, fit_params: dict[str, Any], why: str) -> None:
    """The ``**fit_params`` of an estimator whose ``fit`` takes no weights: ``sample_weight`` is
    refused with ``why`` (:func:`refuse_sample_weight`), any other name as Python would.

    Such estimators keep ``sample_weight`` out of their signature, so that scikit-learn
    (``has_fit_parameter``, metadata routing) does not take them for weighted ones.
    """
    refuse_sample_weight(estimator, fit_params.pop("sample_weight", None), why)
    if fit_params:
        raise TypeError(
            f"{type(estimator).__name__}.fit() got unexpected keyword arguments "
            f"{sorted(fit_params)}; it takes X and y."
        )


def refuse_sample_weight(estimator: Any, sample_weight: Any, why: str) -> None:
    """Raise a ``TypeError`` naming the estimator and the reason when weights are given."""
    if sample_weight is None:
        return
    raise TypeError(
        f"{type(estimator).__name__} does not support sample_weight: {why}. Estimators that "
        "take it: IndefiniteSVC, PerturbSVC, IndefiniteSVR, IndefiniteOneClassSVM, SpectrumSVC, "
        "ModSVC, DirectSVC, KreinSVC and SimilarityRidge(Classifier). Resample the training "
        "set, or use one of these."
    )


def blas_limit(blas_threads: int | None, name: str = "blas_threads") -> Any:
    """A context manager limiting BLAS to ``blas_threads`` threads (threadpoolctl); None: no limit.

    Solvers whose iterations are many small matrix products run them with one BLAS thread:
    on two shared cores the default thread pool was measured 15-30x slower (docs/benchmarks.md).
    """
    import contextlib

    if blas_threads is None:
        return contextlib.nullcontext()
    if not is_positive_int(blas_threads):
        raise ValueError(f"{name} must be None or a positive integer; got {blas_threads!r}.")
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=int(blas_threads), user_api="blas")


def collect_kernel_params(
    gamma: Any, coef0: Any, degree: Any, kernel_params: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Keyword arguments of a kernel function from scikit-learn style estimator parameters.

    ``gamma``/``coef0``/``degree`` are passed when not None, then ``kernel_params`` (a dict).
    """
    params: dict[str, Any] = {}
    for name, value in (("gamma", gamma), ("coef0", coef0), ("degree", degree)):
        if value is not None:
            params[name] = value
    if kernel_params is not None:
        if not isinstance(kernel_params, Mapping):
            raise TypeError(f"kernel_params must be a dict or None; got {type(kernel_params)}.")
        params.update(kernel_params)
    return params


def rows_binary_labels(y: Any, n: int | None = None) -> BinaryLabels:
    """:func:`~indefsvm.utils.validation.check_binary_labels`, or for a dask ``y`` its lazy +-1
    vector (with the classes found on the workers), one label per row of an ``n``-row factor."""
    from indefsvm.utils.dask_rows import dask_binary_labels, is_dask_array

    if is_dask_array(y):
        y_pm, classes = dask_binary_labels(y)
        if n is not None and y_pm.shape[0] != n:
            raise ValueError(f"y has {y_pm.shape[0]} labels but the factor has {n} rows.")
        return BinaryLabels(y=y_pm, classes=classes)
    return check_binary_labels(y, n)


def rows_targets(y: Any, n: int) -> Any:
    """Regression targets, one per row: a finite float64 vector, or for a dask ``y`` a lazy
    float64 vector left on the workers (the solver aligns it with the factor's row chunks)."""
    from indefsvm.utils.dask_rows import check_dask_rows, is_dask_array

    if is_dask_array(y):
        y = check_dask_rows(y, "y")
        if y.ndim == 2 and 1 in y.shape:
            y = y.reshape(-1)
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(f"y has shape {y.shape} but the factor has {n} rows.")
        return y.astype(np.float64)
    y = np.asarray(y)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    y = check_finite_matrix(y, name="y", ndim=1)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} targets but the kernel has {n} rows.")
    return y
