"""The input map of a fit: what the problem is built on, and what new points become.

An estimator with a kernel input (:class:`~indefsvm.base.KernelInputMixin`) learns on one of
two operands, the dense training kernel ``K0`` (n x n) or a factor ``K0 = Phi diag(s) Phi'`` of
the Nystroem map (:class:`~indefsvm.linalg.factor.LowRankKernel`), and decides new points from
the matching test operand: their kernel rows against the training points, or their Nystroem
features. An :class:`InputMap` owns both sides of one fit, with one implementation per kind of
input:

* :class:`PrecomputedKernel`: ``kernel="precomputed"``; the given ``(n, n)`` kernel and the
  given ``(m, n)`` test-vs-train kernel;
* :class:`KernelFunction`: a kernel name or callable on raw points; ``k(X, X)`` and
  ``k(X_test, X_fit_)``;
* :class:`NystroemFeatures`: ``n_components``; the fitted map's features of the training points
  (in memory or a dask array on the workers) and of new points;
* :class:`PairRows`: a one-vs-one pair of a multi-class model with one shared Nystroem map
  (:mod:`indefsvm.multiclass`): the pair's rows of the shared map's features, formed once for
  all pairs, and the shared map's features of new points, also formed once; the Platt folds of
  a pair (:mod:`indefsvm.probability`) take their rows of it (:meth:`PairRows.fold`).

Both paradigms use it: the proxy-kernel estimators (:mod:`indefsvm.proxy.estimators`) build
their problem on it, the Krein models (:mod:`indefsvm.krein.models`) their low-rank factor. It
answers the one low-rank question of a fit, :attr:`InputMap.low_rank`: the estimators do not
ask their parameters, their problem or their fitted attributes again. The map is built by
:func:`fit_input` from the training data (or given to the fit, for a pair) and passed to the
code that needs it; after the fit, :func:`fitted_input` rebuilds it from the fitted state
(``nystroem_`` for a low-rank model), so nothing new is saved in a model file.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.utils.validation import validate_data

from indefsvm.base import check_nystroem_prediction
from indefsvm.linalg.factor import LowRankKernel

__all__ = [
    "InputMap",
    "KernelFunction",
    "NystroemFeatures",
    "PairRows",
    "PrecomputedKernel",
    "fit_input",
    "fitted_input",
]


class InputMap:
    """The training and test operands of one fit (the base of the four kinds of input).

    Parameters
    ----------
    estimator : KernelInputMixin
        The estimator whose input this is: its kernel parameters and input checks
        (``n_features_in_``, ``X_fit_``) are those of the map.
    """

    def __init__(self, estimator: Any) -> None:
        self.estimator = estimator

    @property
    def low_rank(self) -> bool:
        """True when the training operand is a factor and new points are given by features."""
        return False

    @property
    def n_samples(self) -> int:
        """The number of training points."""
        return int(self.training_operand().shape[0])

    def training_operand(self) -> Any:
        """The kernel the problem is built on: an ``(n, n)`` array or a ``LowRankKernel``."""
        raise NotImplementedError

    def test_operand(self, X: Any) -> NDArray[np.floating]:
        """What the fitted coefficients multiply for new points ``X``.

        Kernel rows ``(m, n)`` against the training points (dense), or features ``(m, r)``
        in the factor's coordinates (low rank).
        """
        raise NotImplementedError

    def kernel_rows(self, X: Any, training: Any) -> NDArray[np.float64]:
        """The ``(m, n)`` rows of the training kernel for new points ``X``.

        ``training`` is the training operand of the fit (kept by the fitted problem): a low-rank
        map forms the rows ``F diag(s) Phi'`` from it and the points' features ``F``.
        """
        return self.test_operand(X)


class _DenseKernel(InputMap):
    """A dense input: the ``(n, n)`` training kernel, kernel rows for new points."""

    def __init__(self, estimator: Any, K: NDArray[np.float64] | None = None) -> None:
        super().__init__(estimator)
        self.K = K

    def training_operand(self) -> NDArray[np.float64]:
        if self.K is None:
            raise ValueError(
                f"{type(self).__name__} of a fitted model has no training kernel (the model "
                "keeps only what prediction needs)."
            )
        return self.K


class PrecomputedKernel(_DenseKernel):
    """``kernel="precomputed"``: the given training kernel; new points are the given rows
    (parameters as :class:`KernelFunction`)."""

    def test_operand(self, X: Any) -> NDArray[np.float64]:
        """The ``(m, n_train)`` test-vs-train kernel ``X``, validated against the training size."""
        return self.estimator._given_test_kernel(X)


class KernelFunction(_DenseKernel):
    """A kernel name or callable on raw points: ``k(X, X)``, and ``k(X_test, X_fit_)``.

    Parameters
    ----------
    estimator : KernelInputMixin
    K : ndarray of shape (n, n), optional
        The validated training kernel (``k(X, X)``, or the given one for
        :class:`PrecomputedKernel`); None for the map of a fitted model, which needs only the
        test side.
    """

    def test_operand(self, X: Any) -> NDArray[np.float64]:
        """``k(X, X_fit_)`` for validated test points ``X``."""
        return self.estimator._computed_test_kernel(X)


class NystroemFeatures(InputMap):
    """``n_components``: the Nystroem map's features of the training points and of new points.

    Parameters
    ----------
    estimator : KernelInputMixin
    nystroem : IndefiniteNystroem
        The fitted map (the work is its own: its ``transform``, or the landmark columns of a
        precomputed test kernel times its ``components_``).
    features : ndarray or dask array of shape (n, r), optional
        The training features ``Phi``, with ``K0 ~= Phi diag(nystroem.signature_) Phi'`` (None
        for the map of a fitted model).
    """

    def __init__(self, estimator: Any, nystroem: Any, features: Any | None = None) -> None:
        super().__init__(estimator)
        self.nystroem = nystroem
        self.features = features
        self._factor: LowRankKernel | None = None

    @property
    def low_rank(self) -> bool:
        return True

    def training_operand(self) -> LowRankKernel:
        """The factor ``LowRankKernel(Phi, signature_)`` (built once, then the same object)."""
        if self._factor is None:
            if self.features is None:
                raise ValueError(
                    f"{type(self).__name__} of a fitted model has no training features (the "
                    "model keeps only what prediction needs)."
                )
            self._factor = LowRankKernel(self.features, self.nystroem.signature_)
        return self._factor

    def test_operand(self, X: Any) -> NDArray[np.floating]:
        """The map's features of new points (raw points, or the test-vs-train kernel)."""
        return self.estimator._nystroem_features(X, self.nystroem)

    def kernel_rows(self, X: Any, training: LowRankKernel) -> NDArray[np.float64]:
        return training.cross(self.test_operand(X))


class PairRows(NystroemFeatures):
    """A one-vs-one pair's rows of the multi-class model's one shared Nystroem map.

    The features are formed once, by the multi-class model, for all its pairs; a pair takes its
    rows (training) or all of them (new points). The shared map is fitted on the landmark
    columns ``k(X, Z)`` (:meth:`~indefsvm.approximation.nystrom.IndefiniteNystroem.
    column_input`), so the pair's kernel is ``K_pair|Z``.

    Parameters
    ----------
    nystroem : IndefiniteNystroem
        The shared map (its ``signature_`` weighs the factor's columns).
    features : ndarray of shape (n_pair, r), optional
        The pair's rows of the shared map's training features (to fit).
    test_features : ndarray of shape (m, r), optional
        The shared map's features of the points to decide (to predict).
    """

    def __init__(
        self, nystroem: Any, features: Any | None = None, test_features: Any | None = None
    ) -> None:
        super().__init__(None, nystroem, features)
        self.test_features = test_features

    def test_operand(self, X: Any) -> NDArray[np.floating]:
        """The shared map's features of the points ``X``, formed by the multi-class model."""
        if self.test_features is None:
            raise ValueError("these pair rows were given no test features.")
        return self.test_features

    def fold(self, train: NDArray[np.intp], test: NDArray[np.intp]) -> PairRows:
        """The rows of one fold of the pair's internal cross-validation (the Platt folds of
        :mod:`indefsvm.probability`): its ``train`` rows to fit on, its ``test`` rows to decide,
        both rows of this pair's features of the one shared map."""
        if self.features is None:
            raise ValueError("these pair rows were given no training features to split.")
        return PairRows(self.nystroem, self.features[train], test_features=self.features[test])


def fit_input(
    estimator: Any,
    X: Any,
    y: Any = "no_validation",
    *,
    given: InputMap | None = None,
    lazy: bool = False,
    **check: Any,
) -> tuple[InputMap, Any]:
    """``(input_map, y)``: the input map of a fit on ``X`` (and ``y``, validated with it).

    The kind follows the parameters: ``n_components`` gives :class:`NystroemFeatures` (the map
    is fitted here, :meth:`~indefsvm.base.KernelInputMixin._fit_landmarks`; a dask ``X`` keeps
    its features on the workers, with ``lazy`` not yet evaluated: the Krein models centre and
    rotate them before they persist them), otherwise the dense kernel of
    ``kernel="precomputed"`` (:class:`PrecomputedKernel`) or of a kernel function
    (:class:`KernelFunction`). A map ``given`` by the caller (a one-vs-one pair's
    :class:`PairRows`) is used as it is; ``X`` and ``y`` are still checked, and ``X`` (the
    pair's landmark columns) sets ``n_features_in_``. ``check`` is passed to the validation
    (e.g. ``y_numeric=True``).
    """
    no_y = isinstance(y, str) and y == "no_validation"
    if given is not None:
        if no_y:
            validate_data(estimator, X, dtype=np.float64, ensure_min_samples=2)
        else:
            _, y = validate_data(estimator, X, y, dtype=np.float64, ensure_min_samples=2, **check)
        return given, y
    if not estimator._low_rank():  # also checks the landmark parameters
        K, y = estimator._fit_kernel(X, y, **check)
        dense = PrecomputedKernel if estimator._precomputed() else KernelFunction
        return dense(estimator, K), y
    check_nystroem_prediction(estimator)
    nystroem, features, y = estimator._fit_landmarks(X, y, lazy=lazy, **check)
    return NystroemFeatures(estimator, nystroem, features), y


def fitted_input(estimator: Any) -> InputMap:
    """The input map of a fitted estimator, for new points (rebuilt from its fitted state).

    A model of the Nystroem map has ``nystroem_`` (a dense fit removes the map of an earlier
    fit), so model files saved before the input map existed are read the same way.
    """
    nystroem = getattr(estimator, "nystroem_", None)
    if nystroem is not None:
        return NystroemFeatures(estimator, nystroem)
    if estimator._precomputed():
        return PrecomputedKernel(estimator)
    return KernelFunction(estimator)
