"""``tune_squared_hinge``: the KREIN SH-SVM tuned by its hypergradient (issue 26, item 8)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from indefsvm.krein import KreinSquaredHingeSVC, tune_squared_hinge


def _problem(n: int = 120, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.5 + 0.4 * rng.normal(size=n) > 0, 1, -1)
    K = np.tanh(X @ X.T / 5 - 1.0)
    return X, 0.5 * (K + K.T), y


def _cv_squared_hinge(K, y, folds, template, lp, lm):
    """Mean inner validation squared hinge of fitted estimators (no hypergradient code)."""
    losses = []
    for tr, va in folds:
        est = template.set_params(lambda_plus=lp, lambda_minus=lm).fit(K[np.ix_(tr, tr)], y[tr])
        margin = y[va] * est.decision_function(K[np.ix_(va, tr)])
        losses.append(np.mean(np.maximum(1.0 - margin, 0.0) ** 2))
    return float(np.mean(losses))


@pytest.mark.parametrize("n_components", [None, 30])
def test_tuner_is_no_worse_than_a_coarse_grid(n_components):
    _, K, y = _problem()
    template = KreinSquaredHingeSVC(n_components=n_components, random_state=0)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=7).split(K, y))
    grid = [10.0**k for k in range(-4, 2)]
    best_grid = min(
        _cv_squared_hinge(K, y, folds, template, lp, lm) for lp, lm in itertools.product(grid, grid)
    )
    res = tune_squared_hinge(
        K, y, estimator=template, lambda_plus=1.0, lambda_minus=1.0, random_state=7
    )
    assert set(res.params) == {"lambda_plus", "lambda_minus"}
    # Its objective is the cross-validated loss of the estimator on the same folds ...
    at_best = _cv_squared_hinge(
        K, y, folds, template, res.params["lambda_plus"], res.params["lambda_minus"]
    )
    assert res.loss == pytest.approx(at_best, rel=1e-6)
    # ... and no worse than the best of the 36 grid points.
    assert res.loss <= best_grid * (1 + 1e-6)
    assert res.history[0] > res.loss  # it moved from the start (1, 1)


def test_tuner_with_a_callable_kernel_and_string_labels():
    X, _, y = _problem(80, 1)
    labels = np.where(y > 0, "yes", "no")
    res = tune_squared_hinge(
        X, labels, estimator=KreinSquaredHingeSVC("sigmoid", gamma=0.2, coef0=-1.0),
        random_state=0, max_iter=5,
    )  # fmt: skip
    assert np.isfinite(res.loss) and res.n_evaluations >= 1


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"estimator": object()}, TypeError, "estimator must be a KreinSquaredHingeSVC"),
        ({"lambda_plus": 0.0}, ValueError, "lambda_plus"),
        ({"n_folds": 1}, ValueError, "n_folds must be an integer >= 2"),
        ({"max_iter": 0}, ValueError, "max_iter must be an integer >= 1"),
        ({"loss": "hinge"}, ValueError, "loss must be 'squared_hinge' or 'squared_error'"),
    ],
)
def test_tuner_refuses_bad_input(kwargs, error, message):
    _, K, y = _problem(40)
    with pytest.raises(error, match=message):
        tune_squared_hinge(K, y, **kwargs)
