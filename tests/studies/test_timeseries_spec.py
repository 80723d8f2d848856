"""The DTW study spec experiments/timeseries_study.toml (issue 26, item 13) and its smoke slice.

The smoke slice is the spec itself with fewer objects, shorter grids and fewer draws: the
same data sets (official splits), kernels and methods go through the whole study (tuning,
refit, report) in seconds. Without aeon a stand-in module serves synthetic series under the
bundled names; with aeon the real series are used. With ``INDEFSVM_REQUIRE_TIMESERIES=1`` (the
``timeseries`` extra declared installed) a missing aeon fails these tests instead.
"""

from __future__ import annotations

import copy
import csv
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from helpers import optional_available

from indefsvm.studies import run_study
from indefsvm.studies.spec import load_spec, parse_spec, tomllib

SPEC = Path(__file__).resolve().parents[2] / "experiments" / "timeseries_study.toml"


def smoke_slice(raw: dict, max_samples: int = 60) -> dict:
    """A few objects of each data set (both parts of its split), two values per grid key, two
    random draws per method and two tuning folds."""
    raw = copy.deepcopy(raw)
    raw["study"].update(n_iter=2, inner_folds=2)
    for d in raw["datasets"]:
        d["max_samples"] = max_samples
    for table in raw["kernels"] + raw["methods"]:
        table["grid"] = {k: v[:2] for k, v in table.get("grid", {}).items()}
    return raw


def test_spec_uses_official_splits_tunes_window_and_gamma_and_runs_both_paradigms():
    study = load_spec(SPEC)
    assert {"ArrowHead", "GunPoint", "ItalyPowerDemand"} <= {d.name for d in study.datasets}
    assert all(d.loader == "aeon" and d.split == "given" for d in study.datasets)
    assert all(study.outer_folds_of(d) == 1 for d in study.datasets)
    (kernel,) = study.kernels
    assert kernel.name == "dtw" and {"gamma", "window"} <= set(kernel.grid)
    assert kernel.scale == {"gamma": "inverse_median"}
    estimators = {m.estimator for m in study.methods}
    assert {"IndefiniteSVC", "SpectrumSVC", "KreinSVC", "KreinClassifier"} <= estimators
    spectra = {m.params.get("spectrum") for m in study.methods if m.estimator == "SpectrumSVC"}
    assert spectra == {"clip", "flip", "shift"}
    (isvc,) = [m for m in study.methods if m.estimator == "IndefiniteSVC"]
    assert isvc.params["rho_scale"] == "spectral" and "rho" in isvc.grid


def _fake_ucr(monkeypatch):
    """aeon.datasets stand-in: two or three shape classes, official-looking split sizes."""
    shapes = {"ArrowHead": (36, 175, 40, 3), "GunPoint": (50, 150, 30, 2),
              "ItalyPowerDemand": (67, 1029, 24, 2), "OSULeaf": (200, 242, 60, 6)}  # fmt: skip

    def load_classification(name, split):
        n_train, n_test, T, k = shapes[name]
        rng = np.random.default_rng([len(name), split == "test"])
        n = n_train if split == "train" else n_test
        y = np.arange(n) % k
        t = np.linspace(0, 2 * np.pi, T)
        X = np.sin((y[:, None] + 1) * t[None, :] - rng.uniform(-0.5, 0.5, size=(n, 1)))
        X += 0.2 * rng.normal(size=X.shape)
        return X[:, None, :], y.astype(str)

    datasets = types.ModuleType("aeon.datasets")
    datasets.load_classification = load_classification
    aeon = types.ModuleType("aeon")
    aeon.datasets = datasets
    monkeypatch.setitem(sys.modules, "aeon", aeon)
    monkeypatch.setitem(sys.modules, "aeon.datasets", datasets)


def _run_slice(tmp_path, raw):
    study = parse_spec(raw, base=SPEC.parent, default_name="timeseries-smoke")
    out = tmp_path / "out"
    run_study(study, out, n_jobs=1, progress=False)
    rows = list(csv.DictReader(open(out / "results.csv")))
    return study, rows, (out / "report.md").read_text()


@pytest.mark.slow
def test_smoke_slice_runs_the_whole_study(monkeypatch, tmp_path):
    raw = tomllib.loads(SPEC.read_text())
    raw["datasets"] = raw["datasets"][:2]  # ArrowHead (3 classes) and GunPoint
    if not optional_available("aeon", "timeseries"):
        _fake_ucr(monkeypatch)
    study, rows, report = _run_slice(tmp_path, smoke_slice(raw))
    # one test record per (data set, method), on the official test part of the slice
    assert len(rows) == len(study.datasets) * len(study.methods)
    assert {r["outer_fold"] for r in rows} == {"0"}
    for r in rows:
        assert "error" not in r["status"]
        assert 0.0 <= float(r["score"]) <= 1.0
    assert "given train/test split" in report


def test_smoke_study_of_the_spec_fits_every_official_training_part(monkeypatch):
    """``study run SPEC --smoke`` (40 objects per data set, 2 inner folds) must fit the small
    official training parts: ItalyPowerDemand's 67 of 1096 series kept 2 of the 40."""
    from indefsvm.studies.harness import inner_splits
    from indefsvm.studies.runner import prepare_study
    from indefsvm.studies.spec import smoke_study

    if not optional_available("aeon", "timeseries"):
        _fake_ucr(monkeypatch)
    smoke, data = prepare_study(smoke_study(load_spec(SPEC)))  # raised SpecError before
    assert {d.name for d in smoke.datasets} == set(data)
    for d in data.values():
        train = ~d.test_mask
        _, counts = np.unique(d.y[train], return_counts=True)
        assert counts.min() >= smoke.inner_folds, d.name
        assert len(inner_splits(d.y, smoke, 0, d.test_mask)) == smoke.inner_folds


def test_dtw_blocks_from_the_cached_matrix_equal_the_direct_kernel():
    """The study slices one DTW matrix per window; the reference computes each block anew."""
    from indefsvm.kernels import dtw_distances
    from indefsvm.studies.data import StudyData
    from indefsvm.studies.harness import kernel_blocks
    from indefsvm.studies.spec import KernelSpec

    rng = np.random.default_rng(5)
    X = np.cumsum(rng.normal(size=(14, 30)), axis=1)
    data = StudyData("rw", np.arange(14) % 2, X, None, False, "rw-cache-test", "")
    kernel = KernelSpec("dtw", "dtw", grid={"gamma": [2.0], "window": [3]},
                        scale={"gamma": "inverse_median"})  # fmt: skip
    fit, ev = np.arange(0, 14, 2), np.arange(1, 14, 2)
    D = dtw_distances(X[fit], window=3)
    gamma = 2.0 / np.median(D[np.triu_indices(len(fit), 1)])
    ref_f, ref_e = np.exp(-gamma * D), np.exp(-gamma * dtw_distances(X[ev], X[fit], window=3))
    for tag in [("outer", 0), ()]:
        Kf, Ke = kernel_blocks(data, kernel, {"gamma": 2.0, "window": 3}, fit, ev, tag)
        assert np.allclose(Kf, ref_f, rtol=1e-13, atol=0)
        assert np.allclose(Ke, ref_e, rtol=1e-13, atol=0)
