"""The estimator layer's shared base: one base class and one kernel-input mixin for both paradigms.

Every estimator of :mod:`indefsvm.proxy.estimators` (proxy-kernel SVMs, paper 004),
:mod:`indefsvm.proxy.baselines` (LIBSVM baselines of paper 004, Table 2) and
:mod:`indefsvm.krein.models` (Krein-space learning, papers 000/002/003) derives from
:class:`IndefsvmEstimator` and :class:`KernelInputMixin`:

* parameters are assigned once in ``__init__`` (scikit-learn's rule: no logic there, so
  ``get_params``/``set_params``/``clone`` work) and validated at the start of ``fit`` from the
  declarative ``_parameter_constraints`` (``Interval``/``StrOptions``/... of the package's own
  :mod:`indefsvm.utils.constraints`) through :func:`fit_context`. Checks that
  couple several parameters (e.g. ``prediction_params={"out_of_sample": "transductive"}`` needs
  a scalar ``rho``) stay hand-written in ``fit`` with messages that say how to fix them;
* the kernel input is the same everywhere: ``kernel="precomputed"`` (``fit(K_train, y)``,
  ``predict(K_test_train)``), a kernel name of :data:`indefsvm.kernels.KERNEL_NAMES` (or an
  alias), or a callable ``kernel(X, Y=None, **params)``; ``gamma``/``coef0``/``degree`` and
  ``kernel_params`` are passed to the kernel function when given.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.validation import validate_data

from indefsvm.kernels.registry import KERNEL_ALIASES, KERNEL_NAMES, resolve_kernel
from indefsvm.threads import threaded_fit
from indefsvm.utils.constraints import (
    Interval,
    StrOptions,
    check_dict_parameter,
    set_init_parameters,
    validated_fit,
)
from indefsvm.utils.dask_rows import dask_fit_progress, is_dask_array, labels_in_client
from indefsvm.utils.validation import (
    check_finite_matrix,
    check_square_symmetric,
    collect_kernel_params,
)

__all__ = [
    "KERNEL_PARAMETER_CONSTRAINTS",
    "KERNEL_PARAMS_DOC",
    "NYSTROEM_PARAMETER_CONSTRAINTS",
    "NYSTROEM_PARAMS_DEFAULTS",
    "IndefsvmEstimator",
    "KernelInputMixin",
    "PrecomputedColumns",
    "check_landmark_parameters",
    "check_nystroem_prediction",
    "fit_context",
    "nystroem_param",
    "nystroem_test_features",
    "prediction_param",
    "set_init_parameters",
]

#: Constraints of the kernel-input parameters shared by every estimator.
KERNEL_PARAMETER_CONSTRAINTS: dict[str, list[Any]] = {
    "kernel": [StrOptions({"precomputed", *KERNEL_NAMES, *KERNEL_ALIASES}), callable],
    "gamma": [Real, None],
    "coef0": [Real, None],
    "degree": [Real, None],
    "kernel_params": [Mapping, None],
}

#: The docstring paragraph of those parameters beside ``kernel`` (its text differs by estimator):
#: ``{KERNEL_PARAMS}`` of :func:`indefsvm.utils.docstrings.fill_doc`.
KERNEL_PARAMS_DOC = """
    gamma, coef0, degree : float, optional
        Kernel parameters passed to the kernel function when not None.
    kernel_params : dict, optional
        Further keyword arguments of the kernel function.
"""


#: Constraints of the Nystroem input (``n_components``), the same in both paradigms.
NYSTROEM_PARAMETER_CONSTRAINTS: dict[str, list[Any]] = {
    "n_components": [Interval(Integral, 1, None, closed="left"), None],
    "random_state": ["random_state"],
}

#: The keys of ``nystroem_params`` with their defaults: the options of the Nystroem map of
#: ``n_components`` (parameters of :class:`~indefsvm.approximation.nystrom.IndefiniteNystroem`
#: the estimator does not set itself). The map checks their values when it is fitted. An
#: estimator family may change a default (``_nystroem_defaults``): the proxy-kernel estimators
#: use the plain map (their problem depends only on the approximated kernel), the Krein
#: estimators paper 003's one-shot features (their regulariser is the features' norm).
NYSTROEM_PARAMS_DEFAULTS: dict[str, Any] = {
    "landmarks": "uniform",
    "sketch_size": None,
    "rcond": None,
    "dtype": "float64",
    "factorization": "one-shot",
}


def nystroem_param(estimator: Any, key: str) -> Any:
    """The value of ``key`` in the estimator's ``nystroem_params`` (its default when not set)."""
    params = getattr(estimator, "nystroem_params", None) or {}
    defaults = getattr(estimator, "_nystroem_defaults", NYSTROEM_PARAMS_DEFAULTS)
    return params.get(key, defaults[key])


def fit_context(fit: Callable[..., Any]) -> Callable[..., Any]:
    """Parameter checks and thread choice around the package's ``fit`` methods.

    Validates the parameters against ``_parameter_constraints`` once per top-level ``fit``;
    nested fits (the one-vs-one binary clones, the Nystroem transformer) skip it. The fit runs
    with threads chosen by its size (:func:`indefsvm.threads.threaded_fit`); a fit on a dask
    array shows one progress bar for all its passes (:func:`indefsvm.utils.dask_rows.
    dask_fit_progress`).
    """
    return validated_fit(threaded_fit(dask_fit_progress(fit)))


class PrecomputedColumns:
    """Kernel "function" on row indices of a precomputed kernel: ``k(I, J) = K[I, J]``.

    Lets the Nystroem map (``n_components``) run on ``kernel="precomputed"``: it reads only the
    landmark columns of the given kernel, the "points" being row indices.
    """

    def __init__(self, K: NDArray[np.float64]) -> None:
        self.K: NDArray[np.float64] | None = K

    def release(self) -> None:
        """Drop the reference to the ``(n, n)`` kernel once the map is fitted.

        Prediction reads the landmark columns of the test kernel, never the training kernel;
        keeping it would store O(n^2) numbers in every fitted (and pickled) model.
        """
        self.K = None

    def __call__(self, A: Any, B: Any, **params: Any) -> NDArray[np.float64]:
        if self.K is None:
            raise ValueError(
                "the training kernel of this precomputed Nystroem map was released after "
                "fitting; give the estimator the (m, n_train) test-vs-train kernel instead."
            )
        i = np.asarray(A, dtype=np.float64).ravel().astype(np.intp)
        j = np.asarray(B, dtype=np.float64).ravel().astype(np.intp)
        return self.K[np.ix_(i, j)]


#: Parameters the estimators pass to their Nystroem map themselves (``nystroem_params`` must not
#: set them a second time, with another value).
_OWN_NYSTROEM_PARAMETERS = (
    "kernel",
    "gamma",
    "coef0",
    "degree",
    "kernel_params",
    "n_components",
    "random_state",
)


def prediction_param(estimator: Any, key: str, default: Any) -> Any:
    """The value of ``key`` in the estimator's ``prediction_params`` (``default`` when not set,
    or when the estimator has no such parameter)."""
    params = getattr(estimator, "prediction_params", None) or {}
    return params.get(key, default)


def check_landmark_parameters(estimator: Any) -> None:
    """Refuse landmark parameters that the estimator's other parameters would silently ignore.

    ``nystroem_params`` configures the Nystroem map, which only ``n_components`` switches on;
    explicit landmark indices fix the number of landmarks, so an ``n_components`` that
    disagrees with them is a conflict; ``nystroem_params`` may not repeat the estimator's own
    parameters, and takes the keys of :data:`NYSTROEM_PARAMS_DEFAULTS` only (those of the
    estimator's ``_nystroem_keys`` where it has fewer).
    """
    m = getattr(estimator, "n_components", None)
    extra = getattr(estimator, "nystroem_params", None)
    landmarks = nystroem_param(estimator, "landmarks")
    explicit = not isinstance(landmarks, str)
    name = type(estimator).__name__
    if m is None:
        if extra is not None:
            count = f"={int(np.size(landmarks))}" if explicit else "=<number of landmarks>"
            raise ValueError(
                f"{name}: nystroem_params configure the Nystroem map, which n_components=None "
                f"(the dense n x n kernel) does not use. Set n_components{count} for the "
                "low-rank model, or drop nystroem_params."
            )
        return
    if extra is not None:
        own = set(_OWN_NYSTROEM_PARAMETERS)
        clash = sorted(set(extra) & own) if isinstance(extra, Mapping) else []
        if clash:
            raise ValueError(
                f"{name}: nystroem_params may not set {clash}; they are parameters of {name} "
                "itself (set them there)."
            )
        allowed = getattr(estimator, "_nystroem_keys", tuple(NYSTROEM_PARAMS_DEFAULTS))
        keys = dict.fromkeys(allowed, ["no_validation"])
        check_dict_parameter(extra, keys, owner=name, name="nystroem_params")
    if explicit:
        count = int(np.size(landmarks))
        if isinstance(m, Integral) and not isinstance(m, bool) and int(m) != count:
            raise ValueError(
                f"{name}: n_components={m} but landmarks gives {count} indices; explicit "
                f"landmarks fix the number of landmarks. Set n_components={count}."
            )


def check_nystroem_prediction(estimator: Any) -> None:
    """Refuse ``out_of_sample="transductive"`` for a model of the Nystroem map (``n_components``).

    New points of a low-rank model are mapped by the Nystroem features; the transductive
    heuristic would need the dense train+test kernel. Estimators without the prediction rule
    (no ``out_of_sample`` in ``prediction_params``) pass.
    """
    if prediction_param(estimator, "out_of_sample", "projection") != "projection":
        raise ValueError(
            "with n_components, prediction goes through the Nystroem map; prediction_params "
            "out_of_sample='transductive' needs the dense train+test kernel."
        )


def nystroem_test_features(
    estimator: Any, X: Any, nystroem: Any | None = None
) -> NDArray[np.float64]:
    """Nystroem features of new points for an estimator fitted with ``n_components``.

    ``X`` holds raw features, or the ``(m, n_train)`` test-vs-train kernel with
    ``kernel="precomputed"`` (then the features are ``k(x, Z) W`` read from the landmark
    columns, what ``nystroem_.transform`` computes from points). ``nystroem`` is the fitted
    map (the estimator's ``nystroem_`` when None); ``X`` is checked by the estimator.
    """
    nys = estimator.nystroem_ if nystroem is None else nystroem
    if is_dask_array(X):
        # Lazy row-chunked features: the caller's decision values are the only n-vector.
        _refuse_dask_precomputed(estimator)
        return nys._transform_dask(X, persist=False)
    if estimator._precomputed():
        X = validate_data(estimator, X, dtype=np.float64, reset=False)
        return X[:, nys.landmarks_] @ nys.components_
    X = estimator._check_raw(X, reset=False)
    return np.asarray(nys.transform(X), dtype=np.float64)


def _refuse_dask_precomputed(estimator: Any) -> None:
    if estimator._precomputed():
        raise ValueError(
            f"{type(estimator).__name__}: kernel='precomputed' with a dask array is not "
            "supported (the Nystroem map would need the n x n kernel in memory); pass the raw "
            "points as a dask array with a kernel name or callable."
        )


class IndefsvmEstimator(BaseEstimator):
    """Base of every estimator of the package (scikit-learn's :class:`~sklearn.base.BaseEstimator`
    with declarative parameter constraints checked by :func:`fit_context`)."""

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}


class KernelInputMixin:
    """Kernel input shared by every estimator of the package.

    With ``kernel="precomputed"`` the input ``X`` of ``fit`` is the ``(n, n)`` training kernel
    and the input of ``predict`` the ``(m, n)`` test-vs-train kernel; otherwise ``X`` holds raw
    features and the kernel is ``kernel(X, Y, **params)`` with ``params`` collected from
    ``gamma``, ``coef0``, ``degree`` (when not None) and ``kernel_params``.
    """

    #: Whether the estimator's solver keeps its n-vectors in this process (the proxy-kernel
    #: SVMs): the labels of a dask ``X`` are then brought here; otherwise
    #: they stay on the workers with the factor.
    _labels_in_client: ClassVar[bool] = False

    kernel: str | Callable[..., Any]
    gamma: float | None
    coef0: float | None
    degree: float | None
    kernel_params: Mapping[str, Any] | None

    def __sklearn_tags__(self):
        # Lets scikit-learn's model selection slice a precomputed kernel as (test, train)
        # blocks, as it does for SVC(kernel="precomputed").
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._precomputed()
        return tags

    def _precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _kernel_arguments(self) -> dict[str, Any]:
        params = collect_kernel_params(self.gamma, self.coef0, self.degree, self.kernel_params)
        if self._precomputed() and params:
            raise ValueError(
                f"kernel parameters {sorted(params)} were given but kernel='precomputed' "
                "(X is already the kernel matrix)."
            )
        return params

    def _kernel_function(self) -> Callable[..., Any]:
        """The callable kernel, or the function of a kernel name of :mod:`indefsvm.kernels`."""
        function = resolve_kernel(self.kernel)
        if function is None:
            raise ValueError("kernel='precomputed' has no kernel function.")
        return function

    def _call_kernel(self, X: Any, Y: Any | None) -> NDArray[np.float64]:
        function = self._kernel_function()
        params = self._kernel_arguments()
        try:
            K = function(X, Y, **params)
        except TypeError as exc:
            raise TypeError(
                f"calling kernel {self.kernel!r} with parameters {params} failed: {exc}"
            ) from exc
        K = check_finite_matrix(np.asarray(K, dtype=np.float64), name=f"kernel {self.kernel!r}")
        expected = (X.shape[0], X.shape[0] if Y is None else Y.shape[0])
        if K.shape != expected:
            raise ValueError(
                f"kernel {self.kernel!r} returned shape {K.shape}; expected {expected}."
            )
        return K

    def _check_raw(self, X: Any, *, reset: bool) -> Any:
        # Named kernels act on numeric feature matrices; a callable may take any array
        # (e.g. a 3-D array of time series), validated by the kernel itself.
        if isinstance(self.kernel, str):
            # Fitting needs two points (a kernel of one point has no structure to learn).
            return validate_data(
                self, X, reset=reset, dtype=np.float64, ensure_min_samples=2 if reset else 1
            )
        return X

    def _fit_kernel(self, X: Any, y: Any = "no_validation", **check: Any):
        """Validate ``X`` (and ``y`` unless ``"no_validation"``) and return ``(K_train, y)``.

        Sets ``n_features_in_`` (``n_train`` for a precomputed kernel) and, for a kernel
        computed from features, ``X_fit_``.
        """
        self._kernel_arguments()  # a parameter that does not apply fails before the data
        if isinstance(y, str) and y == "no_validation":
            X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, **check)
        # A non-symmetric training kernel is refused with the fix (estimators do not
        # symmetrise: the functional make_problem/solve and the command line do, on request).
        if self._precomputed():
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    "with kernel='precomputed', X must be the square (n, n) training kernel; "
                    f"got shape {X.shape}."
                )
            K = check_square_symmetric(X, name="K_train", min_size=2)
        else:
            self.X_fit_ = X
            K = check_square_symmetric(
                self._call_kernel(X, None),
                name="K_train",
                advice="The kernel function gave a non-symmetric training matrix; pass a kernel "
                "that returns (K + K.T) / 2 (e.g. a wrapper around it).",
            )
        return K, y

    def _test_kernel(self, X: Any) -> NDArray[np.float64]:
        """Validate ``X`` and return the ``(m, n_train)`` test-vs-train kernel."""
        if self._precomputed():
            return self._given_test_kernel(X)
        return self._computed_test_kernel(X)

    def _given_test_kernel(self, X: Any) -> NDArray[np.float64]:
        """The ``(m, n_train)`` test-vs-train kernel given with ``kernel="precomputed"``,
        validated against the training kernel's size."""
        try:
            return validate_data(self, X, dtype=np.float64, reset=False)
        except ValueError as exc:
            if "features" not in str(exc):
                raise
            # sklearn's text first (its checks match it), then what it means here.
            raise ValueError(
                f"{exc} With kernel='precomputed', X must be the (m, {self.n_features_in_}) "
                "kernel between test and training points."
            ) from exc

    def _computed_test_kernel(self, X: Any) -> NDArray[np.float64]:
        """``k(X, X_fit_)``: the test-vs-train kernel computed from validated test points."""
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._call_kernel(X, self.X_fit_)

    # ------------------------------------------------------------ Nystroem input (n_components)

    def _nystroem_overrides(self) -> dict[str, Any]:
        """Parameters of the Nystroem map that the estimator fixes itself (none by default)."""
        return {}

    def _landmark_map(self, kernel: Any, n: int | None = None) -> Any:
        """The unfitted :class:`~indefsvm.approximation.nystrom.IndefiniteNystroem` of
        ``n_components``: the one place where every estimator builds its Nystroem map.

        ``kernel`` is the estimator's kernel, or a :class:`PrecomputedColumns` for
        ``kernel="precomputed"``; ``n`` the number of training points. Explicit ``landmarks``
        fix the number of landmarks (checked against ``n_components`` by
        :func:`check_landmark_parameters`); a scheme takes ``min(n_components, n)`` of them.
        ``nystroem_params`` (where the estimator has it) sets further parameters of the map.
        """
        from indefsvm.approximation.nystrom import IndefiniteNystroem

        m = int(self.n_components)  # type: ignore[attr-defined]
        landmarks = nystroem_param(self, "landmarks")
        if n is not None and m > n and isinstance(landmarks, str):
            # As scikit-learn's Nystroem: said, not silently clipped.
            warnings.warn(
                f"{type(self).__name__}: n_components = {m} > n = {n} training points; using "
                f"all {n} points as landmarks (the low-rank model of the full kernel: set "
                f"n_components <= {n}, or n_components=None for the dense model).",
                UserWarning,
                stacklevel=2,
            )
        nys = IndefiniteNystroem(
            kernel=kernel,
            gamma=self.gamma,
            coef0=self.coef0,
            degree=self.degree,
            kernel_params=self.kernel_params,
            n_components=None if not isinstance(landmarks, str) else min(m, n or m),
            landmarks=landmarks,
            random_state=self.random_state,  # type: ignore[attr-defined]
            verbose=bool(getattr(self, "verbose", False)),
            **{
                "factorization": nystroem_param(self, "factorization"),
                **self._nystroem_overrides(),
            },
        )
        extra = getattr(self, "nystroem_params", None)
        if extra is not None:
            nys.set_params(**dict(extra))
        return nys

    def _low_rank(self) -> bool:
        """Whether the Nystroem map of ``n_components`` is asked for (after the landmark
        parameters are checked, :func:`check_landmark_parameters`)."""
        check_landmark_parameters(self)
        return getattr(self, "n_components", None) is not None

    def _nystroem_features(self, X: Any, nystroem: Any | None = None) -> NDArray[np.float64]:
        """Nystroem features of new points by the map ``nystroem`` (``nystroem_`` when None;
        :func:`nystroem_test_features`)."""
        return nystroem_test_features(self, X, nystroem)

    def _fit_landmarks(
        self,
        X: Any,
        y: Any = "no_validation",
        *,
        columns: bool = False,
        lazy: bool = False,
        **check: Any,
    ) -> tuple[Any, NDArray[np.floating], Any]:
        """``(nystroem, F, y)``: the fitted Nystroem map of ``n_components`` and the training
        features ``F`` (with ``columns=True`` the landmark columns ``k(X, Z)`` instead).

        The one Nystroem input path of both paradigms. With ``kernel="precomputed"`` the map
        reads only the landmark columns of the given kernel (the "points" are row indices) and
        the kernel is released after fitting (prediction reads the test kernel's columns). A
        one-vs-one pair (:mod:`indefsvm.multiclass`) fits no map: it is given its rows of the
        multi-class model's one shared map as an input map (:class:`indefsvm.inputs.PairRows`).
        ``y`` is validated with ``X`` (``check`` as for
        :func:`sklearn.utils.validation.validate_data`) unless ``"no_validation"``. A
        ``dask.array`` ``X`` goes to :meth:`_fit_landmarks_dask`.
        """
        check_landmark_parameters(self)
        self._kernel_arguments()  # a parameter that does not apply fails before the data
        no_y = isinstance(y, str) and y == "no_validation"
        if is_dask_array(X):
            return self._fit_landmarks_dask(X, None if no_y else y, columns, lazy, **check)
        kernel: Any = self.kernel
        if self._precomputed():
            K, y = self._fit_kernel(X, y, **check)
            kernel, X = PrecomputedColumns(K), np.arange(K.shape[0], dtype=np.float64)[:, None]
        elif no_y:
            X = self._check_raw(X, reset=True)
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, **check)
        nys = self._landmark_map(kernel, len(X))
        F = nys.fit(X).landmark_columns(X) if columns else nys.fit_transform(X)
        if isinstance(kernel, PrecomputedColumns):
            kernel.release()
        return nys, F, y

    def _fit_landmarks_dask(
        self, X: Any, y: Any, columns: bool, lazy: bool, **check: Any
    ) -> tuple[Any, Any, Any]:
        """:meth:`_fit_landmarks` for a ``dask.array`` ``X`` (one fit on a Dask cluster).

        The Nystroem map is fitted on the workers and ``F`` is a dask array with ``X``'s row
        chunks: persisted under a client (:meth:`~indefsvm.approximation.nystrom.
        IndefiniteNystroem.fit_transform`), or with ``lazy`` not yet evaluated (the caller
        transforms and persists it, so the workers never hold two factors). ``y`` comes to this
        process when the estimator's solver keeps its n-vectors here (``_labels_in_client``,
        the proxy-kernel SVMs); otherwise it stays as given and the learner aligns it with the
        factor's rows on the workers (:mod:`indefsvm.utils.dask_rows`).
        """
        name = type(self).__name__
        _refuse_dask_precomputed(self)
        if getattr(self, "probability", False):
            raise ValueError(
                f"{name}: probability=True refits on folds of X in this process; it is not "
                "supported with a dask array X. Fit with probability=False."
            )
        if X.ndim != 2 or X.shape[0] < 2:
            raise ValueError(f"{name}: X must be a 2-D dask array with n >= 2 rows; got {X.shape}.")
        if y is not None and self._labels_in_client:
            y = labels_in_client(y, X.shape[0], name, numeric=bool(check.get("y_numeric")))
        nys = self._landmark_map(self.kernel, X.shape[0])
        if columns:
            F = nys.fit(X).landmark_columns(X)
        elif lazy:
            F = nys.fit(X)._transform_dask(X, persist=False)
        else:
            F = nys.fit_transform(X)
        self.n_features_in_ = X.shape[1]
        return nys, F, ("no_validation" if y is None else y)

    def _test_test_kernel(self, X: Any, K_test_test: Any | None) -> NDArray | None:
        if K_test_test is not None or self._precomputed():
            return K_test_test
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._call_kernel(X, None)
