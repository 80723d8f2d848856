"""experiments/ucr_study.py: 1NN-DTW with the window chosen on the study's inner folds, against
a brute-force reference (pure-Python banded DTW, explicit nearest-neighbour loops)."""

from __future__ import annotations

import math

import numpy as np
from helpers import load_script

from indefsvm.studies.data import StudyData
from indefsvm.studies.harness import inner_splits
from indefsvm.studies.spec import parse_spec


def _dtw(a, b, w):
    n, m = len(a), len(b)
    w = n if w is None else max(w, abs(n - m))
    D = [[math.inf] * (m + 1) for _ in range(n + 1)]
    D[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(max(1, i - w), min(m, i + w) + 1):
            D[i][j] = (a[i - 1] - b[j - 1]) ** 2 + min(D[i - 1][j - 1], D[i - 1][j], D[i][j - 1])
    return D[n][m]


def _nn_error(X, y, fit, ev, w):
    wrong = 0
    for i in ev:
        nearest = min(fit, key=lambda j: _dtw(X[i], X[j], w))  # first of equal distances
        wrong += y[nearest] != y[i]
    return wrong / len(ev)


def test_window_by_inner_cv_and_test_error_match_brute_force():
    ucr = load_script("experiments/ucr_study.py", "ucr_study_under_test")
    rng = np.random.default_rng(7)  # windows 0, 2 and 3 cells tie at the lowest inner error
    n, T = 18, 10
    y = np.array(["a", "b"] * (n // 2))
    t = np.linspace(0, 3, T)
    shift = rng.uniform(-1, 1, size=(n, 1))
    X = np.where(y[:, None] == "a", np.sin(t + shift), np.sign(np.sin(t + shift)))
    X = X + 0.4 * rng.normal(size=X.shape)
    test_mask = np.arange(n) >= 10
    data = StudyData("toy", y, X, None, False, "toy", "", test_mask)
    study = parse_spec({"study": {"inner_folds": 2, "seed": 1},
                        "datasets": [{"name": "toy", "loader": "digits"}],
                        "kernels": [{"name": "linear"}],
                        "methods": [{"estimator": "SpectrumSVC"}]})  # fmt: skip
    windows = [None, 0, 0.3, 2]  # 0.3 of 10: 3 cells
    w, cv, test = ucr.nn_dtw_by_cv(data, study, windows)
    folds = inner_splits(y, study, 0, test_mask)
    cells = {None: None, 0: 0, 0.3: 3, 2: 2}
    ref_cv = {
        win: float(np.mean([_nn_error(X, y, fit, ev, cells[win]) for fit, ev in folds]))
        for win in windows
    }
    order = [0, 2, 0.3, None]  # increasing band (cells); ties go to the narrower one
    best = min(order, key=lambda win: (round(ref_cv[win], 12), order.index(win)))
    assert w == best and cv == ref_cv[best]
    train, tst = np.flatnonzero(~test_mask), np.flatnonzero(test_mask)
    assert test == _nn_error(X, y, list(train), list(tst), cells[best])
