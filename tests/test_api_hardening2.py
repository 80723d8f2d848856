"""Issue 22 item 16 (solver/API part): solver options that clash or do not exist are named."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import sigmoid_problem

import indefsvm
from indefsvm.proxy.api import check_solver_options
from indefsvm.proxy.estimators import IndefiniteSVC


def test_estimator_solver_options_clashing_with_its_parameters_are_named():
    K0, y = sigmoid_problem(20, 1)
    clf = IndefiniteSVC(kernel="precomputed", solver_options={"tol": 1e-3, "max_iter": 5})
    # was: TypeError "solve_problem() got multiple values for keyword argument 'tol'"
    with pytest.raises(ValueError, match=r"'tol', 'max_iter'.*IndefiniteSVC.*tol=\.\.\."):
        clf.fit(K0, y)
    # genuine solver options still pass through
    clf = IndefiniteSVC(kernel="precomputed", solver_options={"step": "paper", "libsvm_every": 5})
    assert clf.fit(K0, y).predict(K0).shape == y.shape


def test_check_solver_options_contract():
    assert check_solver_options(None) == {}
    assert check_solver_options({"step": "paper"}) == {"step": "paper"}
    with pytest.raises(ValueError, match="'tol'"):
        check_solver_options({"tol": 1.0, "step": "paper"})
    with pytest.raises(TypeError, match="dict"):
        check_solver_options([("step", "paper")])


def test_solve_names_unknown_solver_options_before_any_work():
    K0, y = sigmoid_problem(20, 1)
    with pytest.raises(TypeError, match=r"method='pg' takes no option 'stepp'; its options are"):
        indefsvm.solve(K0, y, stepp="paper")
    with pytest.raises(TypeError, match=r"not as solver_options=\{\.\.\.\}"):
        indefsvm.solve(K0, y, solver_options={"step": "paper"})
    res = indefsvm.solve(K0, y, step="paper", step_size=1.0, max_iter=300, tol=1e-2)
    assert np.isfinite(res.objective)
