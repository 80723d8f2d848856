"""Paper measures against the published calcMeasures.m and scikit-learn's metrics."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import sigmoid_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, recall_score
from sklearn.model_selection import cross_val_score

from indefsvm.metrics import (
    SCORERS,
    accuracy,
    accuracy_recall_average,
    average_scorer,
    paper_measures,
    recall,
)
from indefsvm.proxy.estimators import IndefiniteSVC


def calc_measures_literal(pred, labels):
    """Line-by-line transcription of the published calcMeasures.m (±1 labels)."""
    indpos = pred == 1
    truepos = np.sum(pred[indpos] == labels[indpos])
    falseneg = np.sum(pred[pred == -1] != labels[pred == -1])
    acc = np.sum(pred == labels) / len(labels)
    return acc, truepos / (truepos + falseneg)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([-1, 1]), st.sampled_from([-1, 1])), min_size=2))
def test_measures_match_published_code_and_sklearn(pairs):
    y_true = np.array([p[0] for p in pairs])
    y_pred = np.array([p[1] for p in pairs])
    if not np.any(y_true == 1):
        assert recall(y_true, y_pred, pos_label=1) == 0.0
        return
    acc, rec = calc_measures_literal(y_pred, y_true)
    assert accuracy(y_true, y_pred) == pytest.approx(acc)
    assert recall(y_true, y_pred, pos_label=1) == pytest.approx(rec)
    assert accuracy(y_true, y_pred) == pytest.approx(accuracy_score(y_true, y_pred))
    assert recall(y_true, y_pred, pos_label=1) == pytest.approx(
        recall_score(y_true, y_pred, pos_label=1)
    )
    assert accuracy_recall_average(y_true, y_pred, pos_label=1) == pytest.approx((acc + rec) / 2)


def test_paper_table_2_average_column():
    # Table 2, USPS-3-5-SS, Indefinite SVM: accuracy 95.73, recall 97.13, average 96.43.
    assert (95.73 + 97.13) / 2 == pytest.approx(96.43, abs=0.005)
    y_true = np.array(["a", "b", "b", "a", "b"])
    y_pred = np.array(["a", "b", "a", "a", "b"])
    m = paper_measures(y_true, y_pred)  # positive class: "b", the larger label
    assert m == pytest.approx({"accuracy": 0.8, "recall": 2 / 3, "average": (0.8 + 2 / 3) / 2})
    assert recall(y_true, y_pred, pos_label="a") == 1.0


def test_scorers_use_the_estimators_positive_class():
    K, y = sigmoid_problem(60, 0)
    names = np.where(y > 0, "pos", "neg")
    clf = IndefiniteSVC(C=1.0).fit(K[:40, :40], names[:40])
    pred = clf.predict(K[40:, :40])
    expected = paper_measures(names[40:], pred, pos_label="pos")
    for key, scorer in SCORERS.items():
        assert scorer(clf, K[40:, :40], names[40:]) == pytest.approx(expected[key])
    # a fold whose truths and predictions are all negative still has recall 0 for "pos"
    only_neg = names[40:] == "neg"
    assert SCORERS["recall"](clf, K[40:, :40][only_neg], names[40:][only_neg]) == 0.0
    s = cross_val_score(IndefiniteSVC(), K, names, cv=3, scoring=average_scorer)
    assert s.shape == (3,) and np.all((0 <= s) & (s <= 1))


def test_bad_input():
    with pytest.raises(ValueError, match="one prediction per label"):
        accuracy([1, 2], [1])
    with pytest.raises(ValueError, match="two classes"):
        recall([1, 2, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="not one of the labels"):
        recall([1, -1], [1, -1], pos_label=7)
    with pytest.raises(ValueError, match="empty"):
        accuracy([], [])
