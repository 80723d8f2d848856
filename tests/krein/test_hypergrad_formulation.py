"""The tuner names a spectrum-transformed problem as KreinRegressor does (issue 23 item 4)."""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.krein import tune_variance_constrained


def _data(n=36, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    K = np.tanh(0.7 * X @ X.T - 0.3)
    return K, np.cos(X[:, 0]) + 0.1 * rng.normal(size=n)


def test_formulation_clip_is_the_former_omcs_with_transform_clip():
    K, y = _data()
    common = dict(lam=0.05, r=0.5, random_state=0, max_iter=3)
    new = tune_variance_constrained(K, y, formulation="clip", **common)
    with pytest.warns(FutureWarning, match=r"formulation='omcs', transform='clip' is now"):
        old = tune_variance_constrained(K, y, formulation="omcs", transform="clip", **common)
    assert new.loss == old.loss
    assert new.params == old.params
    # and it is not plain OMCS: the transformation reached the inner folds
    omcs = tune_variance_constrained(K, y, formulation="omcs", **common)
    assert omcs.loss != new.loss


def test_unknown_formulation_lists_the_spectrum_ones():
    K, y = _data()
    with pytest.raises(ValueError, match=r"^formulation must be one of \('krein', 'omcs', "):
        tune_variance_constrained(K, y, formulation="nope")
