"""Solver options in one place (``options=``, as SciPy's) and one way to say "as in the paper".

The reference: a run with the paper's options spelt out by hand (the preset must give the same
iterates bitwise). A solver option given as a loose keyword is a TypeError that says where it goes.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import indefsvm
from indefsvm.proxy.api import PRESETS


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return np.tanh(0.5 * X @ X.T - 0.2), np.where(X[:, 0] + 0.1 > 0, 1.0, -1.0)


def _quiet_solve(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return indefsvm.solve(*args, **kwargs)


def test_options_reach_the_solver_and_loose_keywords_are_refused():
    K, y = _data()
    new = _quiet_solve(K, y, max_iter=60, options={"step": "paper", "step_size": 2.0})
    default = _quiet_solve(K, y, max_iter=60)
    assert not np.array_equal(default.alpha, new.alpha)  # the options did reach the solver
    message = (
        "solve() got unexpected keyword arguments 'step', 'step_size'; the solver's options are "
        "passed as options={...} (as scipy.optimize.minimize takes them): "
        "solve(..., options={'step': ..., 'step_size': ...})."
    )
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        indefsvm.solve(K, y, max_iter=60, step="paper", step_size=2.0)
    problem = indefsvm.make_problem("svc", K, y)
    with pytest.raises(TypeError, match=r"^solve_problem\(\) got unexpected keyword argument "):
        indefsvm.solve_problem(problem, step="paper")


@pytest.mark.parametrize(
    ("method", "paper_options", "max_iter"),
    [
        ("pg", {"step": "paper"}, 40),
        ("accpm", {"variant": "paper"}, 15),
    ],
)
def test_paper_preset_is_the_papers_algorithm(method, paper_options, max_iter):
    K, y = _data()
    preset = _quiet_solve(K, y, method=method, max_iter=max_iter, options={"preset": "paper"})
    by_hand = _quiet_solve(K, y, method=method, max_iter=max_iter, options=paper_options)
    np.testing.assert_array_equal(preset.alpha, by_hand.alpha)
    assert preset.n_iter == by_hand.n_iter


def test_siqclp_paper_preset_runs_the_qclp_master():
    K, y = _data(n=24)
    res = _quiet_solve(K, y, method="siqclp", max_iter=3, options={"preset": "paper"})
    by_hand = _quiet_solve(
        K, y, method="siqclp", max_iter=3,
        options={"master": "qclp", "stabilise": "none", "compile": "rebuild"},
    )  # fmt: skip
    assert PRESETS["paper"]["siqclp"]["master"] == "qclp"
    np.testing.assert_allclose(res.alpha, by_hand.alpha, atol=1e-9)


def test_explicit_options_override_the_preset():
    K, y = _data()
    a = _quiet_solve(K, y, max_iter=40, options={"preset": "paper", "step": "accelerated"})
    b = _quiet_solve(K, y, max_iter=40)
    np.testing.assert_array_equal(a.alpha, b.alpha)


def test_bad_preset_and_doubly_given_options_are_refused():
    K, y = _data()
    with pytest.raises(ValueError, match=r"^preset must be one of \('default', 'paper'\); got 'x'"):
        indefsvm.solve(K, y, options={"preset": "x"})
    with pytest.raises(TypeError, match=r"^solve\(\) got unexpected keyword argument 'step';"):
        indefsvm.solve(K, y, step="paper", options={"step": "accelerated"})
    with pytest.raises(ValueError, match=r"^options has 'tol', which solve takes as its own"):
        indefsvm.solve(K, y, options={"tol": 1e-3})
    # preset and the monitor's keys live in options only (0.2.0): the keyword names their home
    with pytest.raises(
        TypeError, match=r"^solve\(\) got unexpected keyword argument 'preset': pass"
    ):
        indefsvm.solve(K, y, preset="paper")
    with pytest.raises(TypeError, match=r"pass max_time, callback in options="):
        indefsvm.solve(K, y, max_time=1.0, callback=print)
    with pytest.raises(TypeError, match=r"^method='pg' takes no option 'stepp'; its options are"):
        indefsvm.solve(K, y, method="pg", options={"stepp": "paper"})
    with pytest.raises(TypeError, match=r"^no solver takes the option 'stepp'"):
        indefsvm.solve(K, y, options={"stepp": "paper"})
    with pytest.raises(
        TypeError, match=r"not as solver_options=\{\.\.\.\} \(the estimators' name\)"
    ):
        indefsvm.solve(K, y, method="pg", solver_options={"step": "paper"})


def test_siqclp_conic_solver_option_chooses_the_conic_solver():
    K, y = _data(n=20)
    with pytest.raises(ValueError, match=r"^solver 'NOPE' is not installed for cvxpy"):
        _quiet_solve(K, y, method="siqclp", options={"master": "qclp", "conic_solver": "NOPE"})
    with pytest.raises(TypeError, match=r"^method='siqclp' takes no option 'solver'; its options"):
        _quiet_solve(K, y, method="siqclp", options={"master": "qclp", "solver": "NOPE"})


def test_paper_preset_refuses_a_method_the_paper_does_not_have():
    K, y = _data()
    with pytest.raises(ValueError, match=r"^preset='paper' names the paper's algorithms, and"):
        indefsvm.solve(K, y, method="lowrank_newton", options={"preset": "paper"})
