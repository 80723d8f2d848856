"""``dtype="float32"`` of the low-rank Krein estimators (issue 24): a float32 Nystroem factor,
reductions in float64, results close to the float64 fit.

Tolerance: the float32 factor is the float64 one rounded to 2^-24 ~ 6e-8 relative; every
reduction over the rows accumulates in float64, so the fitted model is the exact model of a
factor perturbed by that much, and its decision values move by about the condition number of
the regularised normal equations (``||Phi||_2^2 / (n lambda) <= ~1e2`` here) times 6e-8. 1e-4
of the largest decision value leaves a margin of >10; a float32 accumulation over the rows (the
error this guards against) would be ~n * 6e-8 per sum.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import indefsvm.krein.lowrank as lowrank
from indefsvm import IndefiniteSVC
from indefsvm.kernels import sigmoid_kernel
from indefsvm.krein.models import (
    KreinClassifier,
    KreinKernelRidgeClassifier,
    KreinRegressor,
    KreinSquaredHingeSVC,
)
from indefsvm.linalg.factor import as_factor

SIG = {"kernel": "sigmoid", "gamma": 0.3, "coef0": -0.4}


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + 60, 4))
    y = np.where(np.sin(X[:, 0]) + X[:, 1] * X[:, 2] > 0, 1, 0)
    return X[:n], y[:n], X[n:]


VC, RIDGE, SH = "lowrank_variance_constrained", "lowrank_krein_ridge", "squared_hinge_svm"
#: name: (estimator class, its extra parameters, the low-rank solver it calls)
MODELS = {
    "KreinRegressor-krein": (KreinRegressor, {}, VC),
    "KreinRegressor-square": (KreinRegressor, {"formulation": "square"}, VC),
    "KreinRegressor-clip": (KreinRegressor, {"formulation": "clip"}, VC),
    "KreinClassifier-flip": (KreinClassifier, {"formulation": "flip", "center": False}, VC),
    "KreinKernelRidgeClassifier": (KreinKernelRidgeClassifier, {"lambda_minus": 5e-2}, RIDGE),
    "KreinKernelRidgeClassifier-landmark": (
        KreinKernelRidgeClassifier,
        {"nystroem_params": {"factorization": "plain"}, "center": True},
        RIDGE,
    ),
    "KreinSquaredHingeSVC": (KreinSquaredHingeSVC, {"lambda_minus": 5e-2}, SH),
}


def _decision(est, X):
    if hasattr(est, "decision_function"):
        return est.decision_function(X)
    return est.predict(X)


@pytest.mark.parametrize("name", list(MODELS))
def test_float32_factor_fits_like_float64(name, monkeypatch):
    cls, extra, solver = MODELS[name]
    X, y, Xt = _data()
    seen = []
    original = getattr(lowrank, solver)

    def spy(F, *args, **kwargs):  # the factor the solver receives
        seen.append(np.asarray(F).dtype)
        return original(F, *args, **kwargs)

    monkeypatch.setattr(lowrank, solver, spy)
    target = y.astype(float) if "Regressor" in name else y
    d64 = _decision(cls(**SIG, **extra, n_components=40, random_state=0).fit(X, target), Xt)
    f32 = {**extra, "nystroem_params": {**extra.get("nystroem_params", {}), "dtype": "float32"}}
    clf = cls(**SIG, **f32, n_components=40, random_state=0).fit(X, target)
    d32 = _decision(clf, Xt)
    assert seen == [np.dtype(np.float64), np.dtype(np.float32)]
    assert clf.nystroem_.transform(Xt[:3]).dtype == np.float32
    scale = float(np.max(np.abs(d64)))
    assert 0 < np.max(np.abs(d32 - d64)) <= 1e-4 * scale


def test_float32_one_vs_one_pairs_share_a_float32_factor(monkeypatch):
    X, _, Xt = _data(seed=1)
    y = np.digitize(X[:, 0], [-0.5, 0.5])  # three classes
    seen = []
    original = lowrank.squared_hinge_svm

    def spy(F, *args, **kwargs):
        seen.append(np.asarray(F).dtype)
        return original(F, *args, **kwargs)

    monkeypatch.setattr(lowrank, "squared_hinge_svm", spy)
    fits = {
        dtype: KreinSquaredHingeSVC(
            **SIG, n_components=30, random_state=0, nystroem_params={"dtype": dtype}
        ).fit(X, y)
        for dtype in ("float64", "float32")
    }
    assert seen == [np.dtype(np.float64)] * 3 + [np.dtype(np.float32)] * 3
    # the pairs' decisions: each pair model on the shared landmark columns (public estimators_)
    d64, d32 = (
        np.column_stack([e.decision_function(C) for e in fit.estimators_])
        for fit in fits.values()
        for C in [sigmoid_kernel(Xt, fit.landmark_points_, gamma=0.3, coef0=-0.4)]
    )
    assert np.max(np.abs(d32 - d64)) <= 1e-4 * float(np.max(np.abs(d64)))


def test_float32_factor_accumulates_in_float64():
    """``Phi'y`` of a float32 factor equals the float64 product of the stored values (a float32
    accumulation over 2e5 rows would be off by ~1e-4 relative)."""
    rng = np.random.default_rng(0)
    F = rng.normal(size=(200_000, 3)).astype(np.float32)
    v = rng.normal(size=200_000)
    exact = F.astype(np.float64).T @ v
    assert np.allclose(lowrank._matvec_t(as_factor(F), v), exact, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize(
    "cls", [KreinRegressor, KreinClassifier, KreinKernelRidgeClassifier, KreinSquaredHingeSVC]
)
def test_dtype_is_validated(cls):
    """The factor's storage is a key of ``nystroem_params`` (0.2.0), checked by the map with
    the map's rule (``"float64"``, ``"float32"`` or the NumPy types)."""
    X, y, _ = _data(n=40)
    with pytest.raises(ValueError, match=r"dtype must be 'float64' or 'float32'; got 'float16'"):
        cls(**SIG, n_components=10, nystroem_params={"dtype": "float16"}).fit(X, y)
    with pytest.raises(ValueError, match="nystroem_params configure the Nystroem map.*None"):
        cls(**SIG, nystroem_params={"dtype": "float32"}).fit(X, y)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtype'"):
        cls(**SIG, n_components=10, dtype="float32")


def test_indefinite_svc_float32_factor_through_nystroem_params():
    """IndefiniteSVC takes the float32 factor through ``nystroem_params`` (its own way since
    issue 12): the solver's factor is float32 and the fit matches the float64 one."""
    X, y, Xt = _data()
    kw = {**SIG, "n_components": 40, "random_state": 0, "tol": 1e-8}
    kw["solver_options"] = {"keep_training_state": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f64 = IndefiniteSVC(**kw).fit(X, y)
        f32 = IndefiniteSVC(**kw, nystroem_params={"dtype": "float32"}).fit(X, y)
    assert f32.problem_.operator.Phi.dtype == np.float32
    assert f64.problem_.operator.Phi.dtype == np.float64
    d64, d32 = f64.decision_function(Xt), f32.decision_function(Xt)
    assert 0 < np.max(np.abs(d32 - d64)) <= 1e-4 * float(np.max(np.abs(d64)))
