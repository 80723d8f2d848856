"""The low-rank solvers refuse a feature matrix that is not 2-D, with one message."""

from __future__ import annotations

import re

import numpy as np
import pytest

from indefsvm.krein.lowrank import lowrank_variance_constrained, squared_hinge_svm

Y = np.array([1.0, -1.0, 1.0, -1.0])


@pytest.mark.parametrize(
    "F, shape",
    [(np.ones(4), "(4,)"), (np.ones((4, 2, 1)), "(4, 2, 1)"), (np.float64(1.0), "()")],
)
@pytest.mark.parametrize(
    "solve",
    [
        lambda F: lowrank_variance_constrained(F, Y, [1.0, 1.0], 0.5),
        lambda F: squared_hinge_svm(F, Y, [1.0, 1.0]),
    ],
    ids=["variance_constrained", "squared_hinge"],
)
def test_feature_matrix_must_be_2d(solve, F, shape):
    with pytest.raises(ValueError, match=f"^{re.escape(f'F must be 2-D; got shape {shape}.')}$"):
        solve(F)
