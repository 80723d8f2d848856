"""``tune_squared_hinge``: the KREIN SH-SVM tuned by its hypergradient (issue 26, item 8)."""

from __future__ import annotations

import itertools
import logging

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from indefsvm.kernels import gaussian_combination_kernel
from indefsvm.krein import (
    KreinSquaredHingeSVC,
    hypergrad,
    tune_squared_hinge,
    tune_variance_constrained,
)


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


# The sign of the tuner's hypergradient: finite differences of the tuner's own objective and a
# substantial decrease of the validation loss (a deliberate bug the suite once missed).


def _gc(A, B=None, sigma1=1.0):
    return gaussian_combination_kernel(A, B, sigma1=sigma1, sigma2=3.0, sigma3=1.5)


def _tuning_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=60)
    return X, y


def _capture_tuner_objective(monkeypatch, **kwargs):
    """Run the tuner and keep the objective (value, gradient in log-parameters) it minimises."""
    captured = {}
    real_minimize = hypergrad.minimize

    def spy(fun, x0, **kw):
        captured["fun"], captured["x0"] = fun, np.array(x0, dtype=float)
        return real_minimize(fun, x0, **kw)

    monkeypatch.setattr(hypergrad, "minimize", spy)
    result = tune_variance_constrained(**kwargs)
    return result, captured["fun"], captured["x0"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {
            "formulation": "krein",
            "tune_kernel_params": ["sigma1"],
            "kernel_params": {"sigma1": 1.0},
        },
        {"formulation": "omcs"},
        {"formulation": "clip"},
    ],
    ids=["krein-sigma1", "omcs", "omcs-clip"],
)
def test_tuner_gradient_matches_finite_differences_of_its_objective(monkeypatch, kwargs):
    """Catches mutation 4 (sign of the hypergradient handed to L-BFGS-B)."""
    X, y = _tuning_data()
    if "tune_kernel_params" in kwargs:
        data = {"X": X, "kernel": _gc}
    else:
        data = {"X": _gc(X)}
    _, fun, z0 = _capture_tuner_objective(
        monkeypatch, y=y, random_state=1, max_iter=1, **data, **kwargs
    )
    rng = np.random.default_rng(4)
    for z in (z0, z0 + rng.uniform(-0.5, 0.5, size=z0.size)):
        _, g = fun(z)
        h = 1e-5
        fd = np.array([(fun(z + h * e)[0] - fun(z - h * e)[0]) / (2 * h) for e in np.eye(z.size)])
        assert np.allclose(g, fd, rtol=1e-4, atol=1e-7), (g, fd)


def test_tuner_substantially_decreases_the_validation_loss():
    """Catches mutation 4: with a wrong-signed gradient L-BFGS-B stalls at the start (0.0863)
    yet reports success; the correct tuner reaches about a third of it (0.0281)."""
    X, y = _tuning_data()
    res = tune_variance_constrained(
        X,
        y,
        kernel=_gc,
        kernel_params={"sigma1": 1.0},
        tune_kernel_params=["sigma1"],
        random_state=1,
        max_iter=15,
    )
    assert res.loss <= 0.5 * res.history[0], (res.loss, res.history[0])
    # the tuned parameters moved away from the start
    assert not np.allclose([res.params["lambda_plus"], res.params["sigma1"]], [1e-2, 1.0])


def _regression(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    K = gaussian_combination_kernel(X, sigma1=1.0, sigma2=3.0, sigma3=1.5)
    return X, K, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("name", ["lambda_plus", "lambda_minus"])
@pytest.mark.parametrize("value", [0.0, -1.0, np.nan, np.inf])
def test_tuner_refuses_non_positive_regularisation_and_shows_the_value(name, value):
    _, K, y = _regression()
    shown = {0.0: "got 0.0", -1.0: "got -1.0", np.inf: "got inf"}.get(value, "got nan")
    with pytest.raises(ValueError, match=f"{name} must be finite and > 0; {shown}"):
        tune_variance_constrained(K, y, max_iter=2, random_state=0, **{name: value})


def test_tuner_refuses_bad_lam_bounds_and_iterations():
    _, K, y = _regression()
    with pytest.raises(ValueError, match="lam must be finite and > 0; got -1"):
        tune_variance_constrained(K, y, formulation="omcs", lam=-1.0)
    with pytest.raises(ValueError, match="log_bounds"):
        tune_variance_constrained(K, y, log_bounds=(3.0, -3.0))
    with pytest.raises(ValueError, match="max_iter"):
        tune_variance_constrained(K, y, max_iter=0)


def test_tuner_warns_when_an_initial_value_is_outside_the_bounds(caplog):
    _, K, y = _regression()
    with caplog.at_level(logging.WARNING, logger="indefsvm.krein.hypergrad"):
        res = tune_variance_constrained(K, y, lambda_plus=1e-9, max_iter=2, random_state=0)
    assert "outside" in caplog.text
    assert res.params["lambda_plus"] >= np.exp(-12.0) * (1 - 1e-12)


def _hard_fold_targets(n=30):
    """Targets zero except one point: the inner fold that validates on it trains on zeros."""
    y = np.zeros(n)
    y[3] = 1.0
    return y


@pytest.mark.parametrize("method", ["krein", "omcs"])
def test_hard_case_fold_does_not_abort_tuning(method, caplog):
    _, K, _ = _regression()
    y = _hard_fold_targets()
    with caplog.at_level(logging.WARNING, logger="indefsvm.krein.hypergrad"):
        res = tune_variance_constrained(K, y, formulation=method, random_state=0, max_iter=8)
    assert res.n_hard_case >= 1
    assert caplog.text.count("hard case") == 1  # one warning per run, the rest at debug level
    assert np.isfinite(res.loss) and res.loss <= res.history[0]
    assert all(np.isfinite(v) and v > 0 for v in res.params.values())


def test_hard_case_fold_with_tuned_kernel_parameter(caplog):
    X, _, _ = _regression()
    y = _hard_fold_targets()

    def gc(A, B=None, sigma1=1.0):
        return gaussian_combination_kernel(A, B, sigma1=sigma1, sigma2=3.0, sigma3=1.5)

    with caplog.at_level(logging.WARNING, logger="indefsvm.krein.hypergrad"):
        res = tune_variance_constrained(
            X,
            y,
            kernel=gc,
            kernel_params={"sigma1": 1.0},
            tune_kernel_params=["sigma1"],
            random_state=0,
            max_iter=5,
        )
    assert res.n_hard_case >= 1 and "kernel-parameter gradient of this fold set to 0" in caplog.text
    assert np.isfinite(res.loss) and res.loss <= res.history[0]
