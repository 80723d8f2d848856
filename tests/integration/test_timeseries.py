"""DTW distances/kernel and the aeon time-series loader (studies' structured data)."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indefsvm.datasets import load_aeon
from indefsvm.kernels import dtw_distances, dtw_kernel


def naive_dtw(a, b):
    """Independent reference: the full cost matrix, filled row by row in pure Python."""
    n, m = len(a), len(b)
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            D[i, j] = (a[i - 1] - b[j - 1]) ** 2 + min(D[i - 1, j - 1], D[i - 1, j], D[i, j - 1])
    return D[n, m]


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(2, 12),
    st.integers(2, 12),
    st.integers(0, 2**31 - 1),
)
def test_dtw_matches_naive_recursion(n, m, T, S, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(n, T)), rng.normal(size=(m, S))
    ref = np.array([[naive_dtw(x, y) for y in Y] for x in X])
    assert np.allclose(dtw_distances(X, Y), ref, rtol=1e-12, atol=1e-12)


def test_dtw_is_symmetric_not_a_metric_and_kernel_is_indefinite():
    rng = np.random.default_rng(0)
    X = np.cumsum(rng.normal(size=(40, 30)), axis=1)
    D = dtw_distances(X)
    assert np.array_equal(D, D.T) and np.all(np.diag(D) == 0)
    assert np.allclose(D, dtw_distances(X, X))
    # DTW warps: a series and its time-shifted copy are close, unlike in Euclidean distance
    a = np.sin(np.linspace(0, 6, 50))
    b = np.sin(np.linspace(0, 6, 50) - 0.5)
    assert dtw_distances(a[None], b[None])[0, 0] < 0.2 * np.sum((a - b) ** 2)
    K = dtw_kernel(X, gamma=1.0 / np.median(D[np.triu_indices(40, 1)]))
    assert np.linalg.eigvalsh(K)[0] < -1e-8  # indefinite: the package's use case
    with pytest.raises(ValueError, match="gamma"):
        dtw_kernel(X, gamma=0.0)


def _fake_aeon(monkeypatch, X_train, y_train, X_test, y_test):
    datasets = types.ModuleType("aeon.datasets")

    def load_classification(name, split):
        assert name == "Toy"
        return (X_train, y_train) if split == "train" else (X_test, y_test)

    datasets.load_classification = load_classification
    aeon = types.ModuleType("aeon")
    aeon.datasets = datasets
    monkeypatch.setitem(sys.modules, "aeon", aeon)
    monkeypatch.setitem(sys.modules, "aeon.datasets", datasets)


def test_load_aeon_concatenates_splits_and_refuses_multivariate(monkeypatch):
    rng = np.random.default_rng(1)
    Xa, Xb = rng.normal(size=(5, 1, 20)), rng.normal(size=(3, 1, 20))
    _fake_aeon(monkeypatch, Xa, np.array(["1"] * 5), Xb, np.array(["2"] * 3))
    b = load_aeon("Toy")
    assert b.data.shape == (8, 20) and b.target.tolist() == ["1"] * 5 + ["2"] * 3
    assert np.array_equal(b.data[:5], Xa[:, 0, :])
    multi = rng.normal(size=(8, 2, 20))
    _fake_aeon(monkeypatch, multi[:5], np.ones(5), multi[5:], np.ones(3))
    with pytest.raises(ValueError, match="multivariate"):
        load_aeon("Toy")


def test_load_aeon_without_aeon_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "aeon", None)
    monkeypatch.setitem(sys.modules, "aeon.datasets", None)
    with pytest.raises(ImportError, match="timeseries"):
        load_aeon("GunPoint")


def test_study_on_time_series_with_dtw_kernel(monkeypatch, tmp_path):
    from indefsvm.studies import run_study

    rng = np.random.default_rng(2)
    t = np.linspace(0, 6, 24)
    shifts = rng.uniform(-1, 1, size=30)
    X = np.array([np.sin(t - s) + 0.1 * rng.normal(size=24) for s in shifts])
    X[15:] = np.sign(X[15:])  # two shapes: sine and square wave
    y = np.array(["sine"] * 15 + ["square"] * 15)
    _fake_aeon(monkeypatch, X[:18, None, :], y[:18], X[18:, None, :], y[18:])
    spec = tmp_path / "ts.toml"
    spec.write_text(
        """
[study]
seed = 0
outer_folds = 3
inner_folds = 2
scoring = "accuracy"

[[datasets]]
name = "toy-series"
loader = "aeon"
options = { name = "Toy" }

[[kernels]]
name = "dtw"
grid = { gamma = [1.0] }
scale = { gamma = "inverse_median" }

[[methods]]
estimator = "IndefiniteSVC"
grid = { C = [1.0], rho = [1.0] }

[[methods]]
estimator = "KreinClassifier"
"""
    )
    out = tmp_path / "out"
    run_study(spec, out, n_jobs=1, progress=False, report=False)
    text = (out / "results.csv").read_text()
    assert "toy-series" in text and "IndefiniteSVC" in text and "KreinClassifier" in text


#: UCR archive DataSummary (2018): the learned window (% of the length) and the test error of
#: 1NN-DTW with it, for the univariate equal-length sets aeon bundles (ACSF1, 4 %: 58 or 59
#: cells give the same 0.3800, so it does not tell roundings apart and is left out for time).
ARCHIVE_LEARNED_WINDOW = {
    "ArrowHead": (0.00, 0.2000),
    "GunPoint": (0.00, 0.0867),
    "ItalyPowerDemand": (0.00, 0.0447),
    "OSULeaf": (0.07, 0.3884),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ARCHIVE_LEARNED_WINDOW))
def test_window_fraction_reproduces_the_archive_learned_window_error(name):
    """1NN-DTW with ``window=fraction`` on the official split gives the published error: the
    fraction-to-cells rounding is the archive's (OSULeaf: floor's 29 cells give 0.3802)."""
    from helpers import require_optional

    require_optional("aeon", "timeseries")
    fraction, published = ARCHIVE_LEARNED_WINDOW[name]
    train, test = load_aeon(name, split="train"), load_aeon(name, split="test")
    D = dtw_distances(test.data, train.data, window=fraction)
    error = np.mean(train.target[np.argmin(D, axis=1)] != test.target)
    assert error == pytest.approx(published, abs=5e-5)
