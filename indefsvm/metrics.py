"""Performance measures of Luss & d'Aspremont (paper 004, Table 2 and 3).

``Accuracy = (TP + TN) / (TP + TN + FP + FN)``, ``Recall = TP / (TP + FN)`` and their
``Average = (Accuracy + Recall) / 2``, the criterion the paper uses to select ``C``, ``rho`` and
the kernel parameters by cross-validation (Sect. 5.1). As in the published ``calcMeasures.m``,
recall is that of the positive class. The functions take labels of any type; the positive class
defaults to the larger of the two labels (``classes_[1]`` of the estimators, +1 for ±1 labels).

:data:`SCORERS` holds scikit-learn scorers for ``GridSearchCV(scoring=...)`` and
``cross_val_score``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "SCORERS",
    "accuracy",
    "accuracy_recall_average",
    "average_scorer",
    "paper_measures",
    "recall",
]


def _check_pair(y_true: ArrayLike, y_pred: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.ndim == 2 and 1 in y_true.shape:
        y_true = y_true.ravel()
    if y_pred.ndim == 2 and 1 in y_pred.shape:
        y_pred = y_pred.ravel()
    if y_true.ndim != 1 or y_pred.ndim != 1:
        raise ValueError(
            f"y_true and y_pred must be 1-D label vectors; got shapes {y_true.shape} and "
            f"{y_pred.shape}."
        )
    if y_true.shape[0] != y_pred.shape[0]:
        raise ValueError(
            f"y_true has {y_true.shape[0]} labels but y_pred has {y_pred.shape[0]}; expected one "
            "prediction per label."
        )
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty.")
    return y_true, y_pred


def _positive_label(y_true: np.ndarray, y_pred: np.ndarray, pos_label: Any) -> Any:
    labels = np.unique(np.concatenate([y_true, y_pred]))
    if labels.shape[0] > 2:
        raise ValueError(
            f"the paper's measures are for two classes; y_true and y_pred hold "
            f"{labels.shape[0]} labels {labels[:10].tolist()}."
        )
    if pos_label is None:
        return labels[-1]
    if pos_label not in labels and labels.shape[0] == 2:
        raise ValueError(f"pos_label={pos_label!r} is not one of the labels {labels.tolist()}.")
    return pos_label


def accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Fraction of correct predictions, ``(TP + TN) / (TP + TN + FP + FN)``.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        True and predicted labels.

    Returns
    -------
    float
    """
    y_true, y_pred = _check_pair(y_true, y_pred)
    return float(np.mean(y_true == y_pred))


def recall(y_true: ArrayLike, y_pred: ArrayLike, *, pos_label: Any = None) -> float:
    """Recall of the positive class, ``TP / (TP + FN)`` (paper 004, Table 2).

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
        True and predicted labels (two classes).
    pos_label : label, optional
        The positive class; default the larger label (+1 for ±1 labels).

    Returns
    -------
    float
        0 when ``y_true`` has no positive example (no positive can be recalled).
    """
    y_true, y_pred = _check_pair(y_true, y_pred)
    pos = _positive_label(y_true, y_pred, pos_label)
    positives = y_true == pos
    n_pos = int(np.sum(positives))
    if n_pos == 0:
        return 0.0
    return float(np.sum(y_pred[positives] == pos) / n_pos)


def accuracy_recall_average(
    y_true: ArrayLike, y_pred: ArrayLike, *, pos_label: Any = None
) -> float:
    """``(accuracy + recall) / 2``: the selection criterion of paper 004, Sect. 5.1.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n,)
    pos_label : label, optional
        Positive class of the recall (default the larger label).

    Returns
    -------
    float
    """
    return 0.5 * (accuracy(y_true, y_pred) + recall(y_true, y_pred, pos_label=pos_label))


def paper_measures(y_true: ArrayLike, y_pred: ArrayLike, *, pos_label: Any = None) -> dict:
    """Accuracy, recall and their average as a dict (one row block of Table 2)."""
    acc = accuracy(y_true, y_pred)
    rec = recall(y_true, y_pred, pos_label=pos_label)
    return {"accuracy": acc, "recall": rec, "average": 0.5 * (acc + rec)}


def _estimator_pos_label(estimator: Any) -> Any:
    classes = getattr(estimator, "classes_", None)
    return None if classes is None else classes[-1]


def _make_paper_scorer(measure: str):
    def scorer(estimator: Any, X: Any, y: ArrayLike) -> float:
        # The estimator's classes_[1] is its positive class, also when a fold's y_true and
        # predictions happen to hold one label only.
        return paper_measures(y, estimator.predict(X), pos_label=_estimator_pos_label(estimator))[
            measure
        ]

    scorer.__name__ = f"{measure}_scorer"
    scorer.__doc__ = (
        f"scikit-learn scorer ``(estimator, X, y) -> {measure}`` of paper 004 (positive class: "
        "the estimator's ``classes_[1]``)."
    )
    return scorer


#: Scorer of the paper's selection criterion (greater is better).
average_scorer = _make_paper_scorer("average")

#: Scorers for multi-metric ``GridSearchCV(scoring=SCORERS, refit="average")``.
SCORERS = {
    "accuracy": _make_paper_scorer("accuracy"),
    "recall": _make_paper_scorer("recall"),
    "average": average_scorer,
}
