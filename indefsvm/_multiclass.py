"""Multi-class classification by one-vs-one voting, as scikit-learn's ``SVC`` does.

The proxy-kernel SVM, the spectrum baselines and the Krein classifiers are binary problems. A
classifier that lists :class:`OneVsOneMixin` first among its bases accepts any number of classes:
with more than two it fits one clone of itself per pair of classes (on the sub-kernel
``K[np.ix_(idx, idx)]`` for ``kernel="precomputed"``, the columns ``K_test_train[:, idx]`` at
prediction) and predicts by majority vote with ties broken by the summed confidences, exactly as
:class:`sklearn.multiclass.OneVsOneClassifier` (whose ``_ovr_decision_function`` it uses). It does
not use that class because a ``class_weight`` dict must be restricted to each pair. Two classes
use the binary estimator directly, so the binary results are unchanged.

``decision_function_shape`` follows ``SVC``: ``"ovr"`` (default) returns
``(n_samples, n_classes)`` scores (votes plus bounded confidences, scikit-learn's
``_ovr_decision_function``); ``"ovo"`` returns the ``(n_samples, n_classes * (n_classes - 1) / 2)``
pairwise decision values in the order of ``estimators_``. With two classes the decision is the
usual 1-D signed value either way.

Probability estimates: ``probability=True`` on :class:`~indefsvm.estimators.IndefiniteSVC` and
the LIBSVM baselines (:mod:`indefsvm._probability`: each pair's clone fits Platt's sigmoid on its
own internal cross-validation, and the pairs are coupled as LIBSVM does; precomputed kernels are
split pairwise). :class:`sklearn.calibration.CalibratedClassifierCV` also works but splits rows
only, so it needs features and a kernel function rather than ``kernel="precomputed"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

DECISION_FUNCTION_SHAPES = ("ovr", "ovo")


class OneVsOneMixin:
    """One-vs-one multi-class support for a binary classifier (see module docstring).

    The classifier's ``fit`` starts with ``if self._fit_multiclass(X, y): return self`` and its
    ``decision_function``/``predict`` with ``if self._is_multiclass(): return
    self._multiclass_decision(X, ...)`` (resp. ``_multiclass_predict``); everything else is the
    binary code path, unchanged.

    Attributes set by ``fit`` with more than two classes: ``estimators_`` (one fitted binary clone
    per pair of classes ``(classes_[i], classes_[j])``, i < j, in lexicographic order),
    ``pairwise_classes_`` (their pairs) and ``n_iter_`` (one entry per pair, as ``SVC``).
    A ``class_weight`` dict is restricted to each pair's two classes.
    """

    def _fit_multiclass(self, X: ArrayLike, y: ArrayLike | None) -> bool:
        """Fit one-vs-one if ``y`` has more than two classes; return whether it did."""
        shape = getattr(self, "decision_function_shape", "ovr")
        if shape not in DECISION_FUNCTION_SHAPES:
            raise ValueError(
                f"decision_function_shape must be one of {DECISION_FUNCTION_SHAPES}; got {shape!r}."
            )
        y_arr = _labels_or_none(y)
        if y_arr is None:
            self.ovo_ = None
            return False
        classes = np.unique(y_arr)
        if classes.shape[0] <= 2:
            self.ovo_ = None
            return False
        from sklearn.base import clone
        from sklearn.utils.validation import validate_data

        pairwise = _is_pairwise(self)
        Xa = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        if Xa.shape[0] != y_arr.shape[0]:
            raise ValueError(
                f"X has {Xa.shape[0]} rows but y has {y_arr.shape[0]} labels; expected one label "
                "per row."
            )
        if pairwise and Xa.shape[0] != Xa.shape[1]:
            raise ValueError(
                "with kernel='precomputed', X must be the square (n, n) training kernel; "
                f"got shape {Xa.shape}."
            )
        weights = getattr(self, "class_weight", None)
        if isinstance(weights, Mapping):
            unknown = [k for k in weights if k not in set(classes.tolist())]
            if unknown:
                raise ValueError(
                    f"class_weight has keys {unknown} that are not class labels {classes.tolist()}."
                )
        estimators, indices, pairs = [], [], []
        for i in range(classes.shape[0]):
            for j in range(i + 1, classes.shape[0]):
                idx = np.flatnonzero((y_arr == classes[i]) | (y_arr == classes[j]))
                est = clone(self)
                if isinstance(weights, Mapping):
                    est.set_params(
                        class_weight={
                            k: v for k, v in weights.items() if k in (classes[i], classes[j])
                        }
                    )
                Xs = Xa[np.ix_(idx, idx)] if pairwise else Xa[idx]
                estimators.append(est.fit(Xs, y_arr[idx]))
                indices.append(idx)
                pairs.append((classes[i], classes[j]))
        self.ovo_ = {"indices": indices, "pairwise": pairwise}
        self.classes_ = classes
        self.estimators_ = estimators
        self.pairwise_classes_ = pairs
        if all(hasattr(e, "n_iter_") for e in estimators):
            self.n_iter_ = np.array([np.max(e.n_iter_) for e in estimators])
        return True

    def _is_multiclass(self) -> bool:
        return getattr(self, "ovo_", None) is not None

    def _pair_decisions(self, X: ArrayLike) -> NDArray[np.float64]:
        """``(m, n_pairs)`` binary decisions; positive means the pair's second class."""
        from sklearn.utils.validation import check_is_fitted, validate_data

        check_is_fitted(self)
        Xa = validate_data(self, X, dtype=np.float64, reset=False)
        if self.ovo_["pairwise"]:
            parts = [Xa[:, idx] for idx in self.ovo_["indices"]]
        else:
            parts = [Xa] * len(self.estimators_)
        return np.column_stack(
            [est.decision_function(Xs) for est, Xs in zip(self.estimators_, parts, strict=True)]
        )

    def _multiclass_decision(self, X: ArrayLike, *extra: Any) -> NDArray[np.float64]:
        _refuse_extra(extra)
        d = self._pair_decisions(X)
        if getattr(self, "decision_function_shape", "ovr") == "ovo":
            return d
        from sklearn.multiclass import _ovr_decision_function

        return _ovr_decision_function(d > 0, d, len(self.classes_))

    def _multiclass_predict(self, X: ArrayLike, *extra: Any) -> NDArray:
        _refuse_extra(extra)
        from sklearn.multiclass import _ovr_decision_function

        d = self._pair_decisions(X)
        scores = _ovr_decision_function(d > 0, d, len(self.classes_))
        return self.classes_[np.argmax(scores, axis=1)]


def _is_pairwise(estimator: Any) -> bool:
    kernel = getattr(estimator, "kernel", "precomputed")
    return isinstance(kernel, str) and kernel == "precomputed"


def _refuse_extra(extra: tuple[Any, ...]) -> None:
    if any(value is not None for value in extra):
        raise ValueError(
            "extra arguments such as K_test_test apply to binary problems only; the one-vs-one "
            "estimators need the test-vs-train kernel alone."
        )


def _labels_or_none(y: ArrayLike | None) -> NDArray[Any] | None:
    """``y`` as a 1-D label array (a column vector warns, as scikit-learn does), or None when it
    cannot be read as labels (the binary fit then reports the problem)."""
    if y is None:
        return None
    try:
        arr = np.asarray(y)
        if arr.ndim == 2 and arr.shape[1] == 1:
            from sklearn.utils.validation import column_or_1d

            arr = column_or_1d(arr, warn=True)
        if arr.ndim != 1 or arr.dtype.kind not in "biufUO":
            return None
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            return None
        np.unique(arr)
        return arr
    except (TypeError, ValueError):
        return None
