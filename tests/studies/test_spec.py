"""Tests of indefsvm.studies.spec: values checked before any work, errors naming the key."""

from __future__ import annotations

import csv

import pytest
from helpers import SMALL_STUDY, write_small_study_data, write_study_spec

from indefsvm.studies import SpecError, load_spec, run_study


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # 10
        (
            'name = "sigmoid"',
            'name = "precomputed"',
            r"kernels\[0\].name: 'precomputed'.*kernel = ",
        ),
        # 17
        ("C = [0.1, 1.0]", 'C = [-1, "x"]', r"methods\[0\].grid.C: SpectrumSVC refuses C = -1"),
        ("C = [0.1, 1.0]", "C = [1.0, nan]", r"methods\[0\].grid.C: .*C = nan"),
        ("C = [0.1, 1.0]", "C = [1.0, inf]", r"methods\[0\].grid.C: .*C = inf"),
        ('spectrum = "clip"', 'spectrum = "clipp"', r"methods\[0\].params: .*spectrum"),
        (
            'estimator = "SpectrumSVC"\nparams = { spectrum = "clip" }\ngrid = { C = [0.1, 1.0] }',
            'estimator = "IndefiniteNystroem"',
            r"methods\[0\].estimator: .*transformer",
        ),
        (
            'estimator = "SpectrumSVC"\nparams = { spectrum = "clip" }\ngrid = { C = [0.1, 1.0] }',
            'estimator = "KreinRegressor"',
            r"methods\[0\].estimator: .*not a classifier",
        ),
        # 18
        (
            "inner_folds = 2",
            'inner_folds = 2\nscoring = "log_loss"',
            r"study.scoring: .*neg_log_loss",
        ),
        (
            "inner_folds = 2",
            'inner_folds = 2\nmetrics = ["neg_log_loss"]',
            r"study.metrics\[0\]: 'neg_log_loss' needs predict_proba",
        ),
        (
            "inner_folds = 2",
            'inner_folds = 2\nscoring = "r2"',
            r"study.scoring: 'r2' is a regression",
        ),
        # 19
        ("seed = 0", "seed = 4294967296", r"study.seed must be an integer in \[0, 4294967295\]"),
    ],
)
def test_spec_values_are_checked_up_front(tmp_path, old, new, message):
    write_small_study_data(tmp_path)
    assert old in SMALL_STUDY
    with pytest.raises(SpecError, match=message):
        load_spec(write_study_spec(tmp_path, SMALL_STUDY.replace(old, new)))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("outer_folds = 2", "outer_folds = 50", r"study.outer_folds = 50 .*'mine'"),
        ("inner_folds = 2", "inner_folds = 30", r"study.inner_folds = 30 .*'mine'"),
        (
            "grid = { gamma = [0.5, 1.0] }",
            'grid = { gamma = [0.5, "x"] }',
            r"kernels\[0\].grid.gamma",
        ),
    ],
)
def test_data_dependent_errors_name_the_key_and_write_nothing(tmp_path, old, new, message):
    write_small_study_data(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(SpecError, match=message):
        run_study(write_study_spec(tmp_path, SMALL_STUDY.replace(old, new)), out, report=False)
    assert not (out / "study.sqlite").exists()


def test_f1_on_multiclass_data_is_refused_with_the_multiclass_variant(tmp_path):
    write_small_study_data(tmp_path, n=60, n_classes=3)
    spec = SMALL_STUDY.replace("inner_folds = 2", 'inner_folds = 2\nmetrics = ["f1"]')
    with pytest.raises(SpecError, match=r"study.metrics\[0\]: 'f1' .* 3; use 'f1_macro'"):
        run_study(write_study_spec(tmp_path, spec), tmp_path / "o", report=False)
    spec = SMALL_STUDY.replace("inner_folds = 2", 'inner_folds = 2\nmetrics = ["f1_macro"]')
    run_study(write_study_spec(tmp_path, spec), tmp_path / "o2", report=False, progress=False)
    with open(tmp_path / "o2" / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert all(r["status"] == "ok" and "nan" not in r["metrics"] for r in rows)
