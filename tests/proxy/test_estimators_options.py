"""The estimators take the solver's options and the paper preset as solve does (issue 23 item 4)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import indefsvm


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return np.tanh(0.5 * X @ X.T - 0.2), np.where(X[:, 0] + 0.1 > 0, 1, 0)


def _fit(**params):
    K, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("error", FutureWarning)  # no deprecated path inside a fit
        return indefsvm.IndefiniteSVC(max_iter=40, **params).fit(K, y)


def test_paper_preset_equals_the_papers_options_spelt_out():
    preset = _fit(preset="paper")
    by_hand = _fit(solver_options={"step": "paper"})
    default = _fit()
    np.testing.assert_array_equal(preset.dual_coef_, by_hand.dual_coef_)
    assert not np.array_equal(default.dual_coef_, preset.dual_coef_)
    # and the same alpha as the functional API with the same preset
    K, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = indefsvm.solve(K, np.where(y == 1, 1.0, -1.0), max_iter=40, preset="paper")
    np.testing.assert_allclose(preset.result_.alpha, res.alpha, rtol=0, atol=0)


def test_monitor_arguments_in_solver_options_reach_the_monitor_without_warnings():
    model = _fit(solver_options={"max_time": 1e9, "libsvm_every": 10})
    assert np.isfinite(model.result_.libsvm_upper_bound)


def test_preset_is_validated_and_not_accepted_twice():
    K, y = _data()
    with pytest.raises(ValueError, match="preset"):
        indefsvm.IndefiniteSVC(preset="nope").fit(K, y)
    with pytest.raises(ValueError, match=r"solver_options has 'preset', which IndefiniteSVC takes"):
        indefsvm.IndefiniteSVC(solver_options={"preset": "paper"}).fit(K, y)
