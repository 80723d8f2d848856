"""Tests of indefsvm.studies.report: failed cells, paired tests, measures and plots."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import SMALL_STUDY, write_small_study_data, write_study_spec
from scipy import stats

from indefsvm.studies import Store, run_study
from indefsvm.studies.report import significance_p, summarize
from indefsvm.studies.spec import DatasetSpec, MethodSpec, Study


def _study(outer_folds=5, significance="welch"):
    return Study(
        name="s", seed=0, outer_folds=outer_folds, inner_folds=2, scoring="accuracy",
        metrics=(), task="classification", search="grid", n_iter=None,
        significance=significance, alpha=0.05,
        datasets=(DatasetSpec(name="d", kernel="K.npy", labels="y.txt"),),
        kernels=(), methods=(MethodSpec("IndefiniteSVC", "A"), MethodSpec("SpectrumSVC", "B"),
                             MethodSpec("KreinSVC", "C")),
    )  # fmt: skip


def _records(scores: dict[str, list[float]]):
    return [
        {"dataset": "d", "kernel": "precomputed", "method": m, "outer_fold": f,
         "score": None if math.isnan(s) else s, "metrics": {}}
        for m, v in scores.items() for f, s in enumerate(v)
    ]  # fmt: skip


@pytest.mark.parametrize("test", ["welch", "paired-t", "wilcoxon"])
def test_a_cell_with_failed_folds_never_wins_and_tests_pair_complete_folds(test):
    nan = math.nan
    scores = {
        "A": [0.99, nan, nan, nan, 0.98],  # failed 3 of 5 folds; surviving mean is the best
        "B": [0.80, 0.70, 0.75, 0.82, 0.78],
        "C": [0.74, 0.71, 0.60, 0.70, 0.72],
    }
    rows = {r["method"]: r for r in summarize(_records(scores), _study(significance=test),
                                              "accuracy")}  # fmt: skip
    assert rows["A"]["n_failed"] == 3 and not rows["A"]["bold"]
    assert rows["B"]["bold"] and rows["B"]["rank"] == 1.0
    assert rows["A"]["rank"] == 3.0  # after every complete cell
    a, b, c = (np.array(scores[k]) for k in "ABC")
    ok = np.isfinite(a)
    ref = {
        "welch": lambda x, y: stats.ttest_ind(x, y, equal_var=False).pvalue,
        "paired-t": lambda x, y: stats.ttest_rel(x, y).pvalue,
        "wilcoxon": lambda x, y: stats.wilcoxon(x, y).pvalue,
    }[test]
    if test != "wilcoxon":  # two pairs are too few for a signed-rank p below 1
        assert rows["A"]["p_vs_best"] == pytest.approx(ref(a[ok], b[ok]), rel=1e-12)
    assert rows["C"]["p_vs_best"] == pytest.approx(ref(c, b), rel=1e-12)
    assert significance_p(a, b, test) == pytest.approx(
        ref(a[ok], b[ok]) if test != "wilcoxon" else significance_p(a[ok], b[ok], test)
    )
    assert 0.0 < significance_p(a, b, "welch") < 1.0  # not the 0.0 a NaN used to give


def test_report_marks_failed_cells(tmp_path):
    from indefsvm.studies.report import _table

    nan = math.nan
    scores = {"A": [0.99, nan, nan, nan, 0.98], "B": [0.8, 0.7, 0.75, 0.82, 0.78],
              "C": [0.7, 0.7, 0.6, 0.7, 0.7]}  # fmt: skip
    study = _study()
    lines = _table(summarize(_records(scores), study, "accuracy"), study, "accuracy")
    row = next(x for x in lines if x.startswith("| d |"))
    cells = [x.strip() for x in row.strip("|").split("|")][1:]
    assert "3/5 folds failed" in cells[0] and "**" not in cells[0]
    assert cells[1].startswith("**")


def test_report_defines_its_measures_and_iota_and_plots_tell_methods_apart(tmp_path):
    from indefsvm.studies.report import _plots

    write_small_study_data(tmp_path)
    spec = SMALL_STUDY.replace("inner_folds = 2", 'inner_folds = 2\nmetrics = ["average"]')
    spec += '\n[[methods]]\nestimator = "KreinClassifier"\ngrid = { lambda_plus = [0.1, 1.0] }\n'
    out = tmp_path / "out"
    run_study(write_study_spec(tmp_path, spec), out, progress=False)
    report = (out / "report.md").read_text()
    assert "`average`: (accuracy + recall) / 2" in report
    assert "averaged over the rows" in report  # what the average rank averages
    assert "*mean iota*" in report and "differs between the methods" in report

    store = Store(out)
    study, records = store.study(), store.outer_records()
    store.close()
    rows = summarize(records, study, study.scoring)
    timings = {(r["dataset"], r["kernel"], r["method"], r["outer_fold"]): r["fit_time"]
               for r in records}  # fmt: skip
    figures = {}
    _plots(records, rows, study, timings, out, figures)
    legend = figures["scores.png"].legends[0]
    markers = [h.get_marker() for h in legend.legend_handles]
    assert len(set(markers)) == len(markers) == 2
    lines = figures["fit_time_vs_n.png"].axes[0].get_lines()
    assert lines and all(line.get_linestyle() in ("None", "none", "") for line in lines)
    import matplotlib.pyplot as plt

    for fig in figures.values():
        plt.close(fig)
