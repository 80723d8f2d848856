"""The measures a study scores methods by: checked at spec time, computed per fold.

A measure is one of the paper's prediction measures (``accuracy``, ``recall``, ``average`` of
paper 004 Sect. 5.1, ``balanced_accuracy``, ``f1``, ``error_rate``) or any scikit-learn scorer
name. Kept apart from the harness so that the spec checks names without importing the harness
(which imports the spec).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "check_measure_for_classes",
    "check_measure_for_method",
    "check_scoring",
    "greater_is_better",
    "measure",
]

#: Measures computed from predictions (classification); greater is better.
_PREDICTION_MEASURES = ("accuracy", "recall", "average", "balanced_accuracy", "f1", "error_rate")


#: Measures defined for two classes only (the positive class is the larger label), with the
#: multi-class variant to use instead.
_BINARY_ONLY = {
    "recall": "'recall_macro' or 'balanced_accuracy'",
    "average": "'balanced_accuracy'",
    "f1": "'f1_macro' or 'f1_weighted'",
    "precision": "'precision_macro' or 'precision_weighted'",
    "jaccard": "'jaccard_macro' or 'jaccard_weighted'",
    "roc_auc": "'roc_auc_ovr' or 'roc_auc_ovo'",
    "average_precision": "'accuracy' or 'f1_macro'",
    "neg_brier_score": "'neg_log_loss'",
}
#: Scorers that read ``predict_proba`` (no estimator of the package had one when written:
#: checked against each method at spec time).
_NEEDS_PROBA = (
    "neg_log_loss",
    "neg_brier_score",
    "d2_brier_score",
    "d2_log_loss_score",
    "roc_auc_ovr",
    "roc_auc_ovo",
    "roc_auc_ovr_weighted",
    "roc_auc_ovo_weighted",
)
#: Scorers that read ``decision_function`` or, failing that, ``predict_proba``.
_NEEDS_SCORE = ("roc_auc", "average_precision")


def check_scoring(name: str, task: str) -> str:
    """Validate a measure name for ``task``; raise ValueError naming the choices."""
    from sklearn.metrics import get_scorer_names

    if name in ("log_loss", "brier_score"):
        raise ValueError(
            f"{name!r} is not a scorer name; scikit-learn's is 'neg_{name}' (greater is better), "
            "and it needs predict_proba, which the method must provide."
        )
    if name in _PREDICTION_MEASURES:
        if task == "classification":
            return name
        raise ValueError(f"{name!r} is a classification measure; task is {task!r}.")
    if name in get_scorer_names():
        kind = _scorer_task(name)
        if kind is not None and kind != task:
            raise ValueError(f"{name!r} is a {kind} measure; task is {task!r}.")
        return name
    own = list(_PREDICTION_MEASURES) if task == "classification" else []
    raise ValueError(
        f"unknown measure {name!r}; expected one of {own} or a scikit-learn scorer name "
        "(sklearn.metrics.get_scorer_names(), e.g. 'roc_auc', 'r2', 'neg_mean_squared_error')."
    )


_CLASSIFICATION_PREFIXES = (
    "accuracy",
    "balanced_accuracy",
    "top_k_accuracy",
    "average_precision",
    "neg_brier_score",
    "f1",
    "precision",
    "recall",
    "jaccard",
    "roc_auc",
    "neg_log_loss",
    "matthews_corrcoef",
    "d2_brier",
    "d2_log_loss",
)
_REGRESSION_PREFIXES = (
    "explained_variance",
    "r2",
    "neg_max_error",
    "neg_mean",
    "neg_median",
    "neg_root",
    "d2_",
)


def _scorer_task(name: str) -> str | None:
    """The task a scikit-learn scorer is made for (None: unknown, e.g. clustering scores)."""
    if name.startswith(_CLASSIFICATION_PREFIXES):
        return "classification"
    if name.startswith(_REGRESSION_PREFIXES):
        return "regression"
    return None


def check_measure_for_method(name: str, estimator: Any) -> str | None:
    """Why ``estimator`` cannot be scored by ``name`` (None when it can).

    A scorer reading probabilities needs ``predict_proba``; ``roc_auc`` and
    ``average_precision`` need ``decision_function`` or ``predict_proba``.
    """
    proba = hasattr(estimator, "predict_proba")
    if name in _NEEDS_PROBA and not proba:
        return f"{name!r} needs predict_proba, which {type(estimator).__name__} does not have"
    if name in _NEEDS_SCORE and not (proba or hasattr(estimator, "decision_function")):
        return (
            f"{name!r} needs decision_function or predict_proba, which "
            f"{type(estimator).__name__} does not have"
        )
    return None


def check_measure_for_classes(name: str, n_classes: int) -> str | None:
    """Why ``name`` is not defined for ``n_classes`` classes (None when it is)."""
    if n_classes > 2 and name in _BINARY_ONLY:
        return (
            f"{name!r} is defined for two classes and the data have {n_classes}; use "
            f"{_BINARY_ONLY[name]}"
        )
    return None


def measure(name: str, est: Any, K_eval: NDArray, y: NDArray, pred: NDArray) -> float:
    """The value of measure ``name`` on one evaluation block (greater is better but for
    ``error_rate``). The paper's measures come from :mod:`indefsvm.metrics` (one definition
    for the package), with the estimator's ``classes_[-1]`` as the positive class."""
    if name in _PREDICTION_MEASURES:
        from sklearn.metrics import balanced_accuracy_score, f1_score

        from indefsvm import metrics

        classes = getattr(est, "classes_", None)
        pos = classes[-1] if classes is not None else np.max(y)
        if name == "accuracy":
            return metrics.accuracy(y, pred)
        if name == "error_rate":
            return float(np.mean(np.asarray(pred) != np.asarray(y)))
        if name == "balanced_accuracy":
            return float(balanced_accuracy_score(y, pred))
        if name == "f1":
            return float(f1_score(y, pred, pos_label=pos, zero_division=0.0))
        if name == "recall":
            return metrics.recall(y, pred, pos_label=pos)
        return metrics.accuracy_recall_average(y, pred, pos_label=pos)  # paper 004, Sect. 5.1
    from sklearn.metrics import get_scorer

    return float(get_scorer(name)(est, K_eval, y))


def greater_is_better(name: str) -> bool:
    """Whether a larger value of the measure is better (all but ``error_rate``)."""
    return name != "error_rate"
