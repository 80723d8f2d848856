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
    preset = _fit(solver_options={"preset": "paper"})
    by_hand = _fit(solver_options={"step": "paper"})
    default = _fit()
    np.testing.assert_array_equal(preset.dual_coef_, by_hand.dual_coef_)
    assert not np.array_equal(default.dual_coef_, preset.dual_coef_)
    # and the same alpha as the functional API with the same preset
    K, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = indefsvm.solve(
            K, np.where(y == 1, 1.0, -1.0), max_iter=40, options={"preset": "paper"}
        )
    np.testing.assert_allclose(preset.result_.alpha, res.alpha, rtol=0, atol=0)


def test_monitor_arguments_in_solver_options_reach_the_monitor_without_warnings():
    model = _fit(solver_options={"max_time": 1e9, "libsvm_every": 10})
    assert np.isfinite(model.result_.libsvm_upper_bound)


def test_preset_is_validated_and_not_accepted_twice():
    K, y = _data()
    with pytest.raises(ValueError, match="preset"):
        indefsvm.IndefiniteSVC(solver_options={"preset": "nope"}).fit(K, y)
    with pytest.raises(ValueError, match=r"solver_options has 'tol', which IndefiniteSVC takes"):
        indefsvm.IndefiniteSVC(solver_options={"tol": 1e-3}).fit(K, y)
    # preset is a key of solver_options only (0.2.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'preset'"):
        indefsvm.IndefiniteSVC(preset="paper")


#: Signature widths (docs/design.md, "Vocabulary", "Signature width"): keywords of ``solve``
#: besides ``options``, constructor parameters of the estimators.
WIDTH_LIMITS = {"solve": 12, "IndefiniteSVC": 20, "PerturbSVC": 20, "IndefiniteSVR": 19}


def _width(name):
    import inspect

    if name == "solve":
        params = inspect.signature(indefsvm.solve).parameters.values()
        keywords = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
        return len([k for k in keywords if k != "options"])
    return len(inspect.signature(getattr(indefsvm, name)).parameters)


@pytest.mark.parametrize("name", list(WIDTH_LIMITS))
def test_signature_widths_stay_within_their_limits(name):
    assert _width(name) <= WIDTH_LIMITS[name], (name, _width(name))


def test_dict_parameters_survive_clone_and_set_params():
    """``nystroem_params``, ``prediction_params`` and ``solver_options`` are stored unchanged,
    cloned, replaced by ``set_params`` and read at fit time (scikit-learn's conventions)."""
    from sklearn.base import clone

    from indefsvm.krein import KreinSquaredHingeSVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    kernel = {"kernel": "sigmoid", "gamma": 0.5, "coef0": -0.2, "random_state": 0}
    nys = {"landmarks": "kmeans++"}
    est = indefsvm.IndefiniteSVC(
        **kernel,
        n_components=20,
        nystroem_params=nys,
        prediction_params={"intercept": "paper"},
        solver_options={"preset": "paper", "keep_training_state": True},
        max_iter=50,
    )
    assert est.nystroem_params is nys  # stored as given
    twin = clone(est)
    assert twin.get_params() == est.get_params() and twin.nystroem_params is not nys
    twin.set_params(nystroem_params={"landmarks": "leverage"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        twin.fit(X, y)
        est.fit(X, y)
    assert (twin.nystroem_.landmarks, est.nystroem_.landmarks) == ("leverage", "kmeans++")
    assert twin.problem_ is not None  # keep_training_state from solver_options
    assert est.result_.method == "pg"  # the paper's preset: its projected gradient
    krein = clone(KreinSquaredHingeSVC(**kernel, n_components=20, nystroem_params=nys))
    krein.set_params(nystroem_params={"factorization": "plain"}).fit(X, y)
    assert krein.nystroem_.factorization == "plain"
