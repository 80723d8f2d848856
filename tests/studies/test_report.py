"""Tests of indefsvm.studies.report: failed cells, paired tests, measures and plots."""

from __future__ import annotations

import math
import types
from pathlib import Path

import numpy as np
import pytest
from helpers import SMALL_STUDY, write_small_study_data, write_study_spec
from scipy import stats

from indefsvm.studies import Store, run_study
from indefsvm.studies.report import significance_p, summarize, write_report
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


def _report(directory, study, records):
    """``write_report`` on a results directory holding ``records`` (outer records of
    :func:`summarize`'s form): the report's text and its figures by file name (the Figure objects
    as ``savefig`` wrote them)."""

    store = Store.create(directory, study)
    for r in records:
        task = types.SimpleNamespace(
            dataset=r["dataset"], kernel=r["kernel"], method=r["method"],
            outer_fold=r["outer_fold"], params=r.get("params", '{"kernel": {}, "method": {}}'),
        )  # fmt: skip
        store.write_outer(
            {"task": task, "score": r["score"], "metrics": r["metrics"], "inner_score": None,
             "status": "ok" if r["score"] is not None else "failed", "gap": None,
             "relative_gap": None, "iota": r.get("iota"), "n_train": r.get("n_train", 30),
             "n_test": r.get("n_test", 10), "seed": 0, "warnings": "", "versions": "",
             "fit_time": r.get("fit_time", 0.01), "predict_time": 0.0, "kernel_time": 0.0}
        )  # fmt: skip
    store.close()
    return _written(directory)


def _written(directory):
    """``write_report(directory)``: the report's text and its figures by file name."""
    import matplotlib.figure
    import matplotlib.pyplot as plt

    figures = {}
    savefig = matplotlib.figure.Figure.savefig

    def keep(fig, fname, *args, **kwargs):
        figures[Path(fname).name] = fig
        return savefig(fig, fname, *args, **kwargs)

    matplotlib.figure.Figure.savefig = keep
    try:
        report = write_report(directory).read_text()
    finally:
        matplotlib.figure.Figure.savefig = savefig
        plt.close("all")
    return report, figures


def _nadeau_bengio_reference(x, y, ratio=0.25):
    """Nadeau & Bengio (2003): t = mean(d) / sqrt((1/J + n_test/n_train) var(d)), J - 1 dof."""
    d = np.asarray(x) - np.asarray(y)
    t = d.mean() / np.sqrt((1 / len(d) + ratio) * d.var(ddof=1))
    return 2 * stats.t.sf(abs(t), len(d) - 1)


@pytest.mark.parametrize("test", ["nadeau-bengio", "welch", "paired-t", "wilcoxon"])
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
        # the records carry no n_train / n_test here: 5 folds give n_test / n_train = 1 / 4
        "nadeau-bengio": _nadeau_bengio_reference,
        "welch": lambda x, y: stats.ttest_ind(x, y, equal_var=False).pvalue,
        "paired-t": lambda x, y: stats.ttest_rel(x, y).pvalue,
        "wilcoxon": lambda x, y: stats.wilcoxon(x, y).pvalue,
    }[test]
    if test != "wilcoxon":  # two pairs are too few for a signed-rank p below 1
        assert rows["A"]["p_vs_best"] == pytest.approx(ref(a[ok], b[ok]), rel=1e-12)
    assert rows["C"]["p_vs_best"] == pytest.approx(ref(c, b), rel=1e-12)
    kw = {"test_train_ratio": 0.25} if test == "nadeau-bengio" else {}
    assert significance_p(a, b, test, **kw) == pytest.approx(
        ref(a[ok], b[ok]) if test != "wilcoxon" else significance_p(a[ok], b[ok], test)
    )
    assert 0.0 < significance_p(a, b, "welch") < 1.0  # not the 0.0 a NaN used to give


def test_report_marks_failed_cells(tmp_path):
    nan = math.nan
    scores = {"A": [0.99, nan, nan, nan, 0.98], "B": [0.8, 0.7, 0.75, 0.82, 0.78],
              "C": [0.7, 0.7, 0.6, 0.7, 0.7]}  # fmt: skip
    report, _ = _report(tmp_path, _study(), _records(scores))
    row = next(x for x in report.splitlines() if x.startswith("| d / precomputed |"))
    cells = [x.strip() for x in row.strip("|").split("|")][1:]
    assert "3/5 folds failed" in cells[0] and "**" not in cells[0]
    assert cells[1].startswith("**")


def test_report_defines_its_measures_and_iota_and_plots_tell_methods_apart(tmp_path):
    write_small_study_data(tmp_path)
    spec = SMALL_STUDY.replace("inner_folds = 2", 'inner_folds = 2\nmetrics = ["average"]')
    spec += '\n[[methods]]\nestimator = "KreinClassifier"\ngrid = { lambda_plus = [0.1, 1.0] }\n'
    out = tmp_path / "out"
    run_study(write_study_spec(tmp_path, spec), out, progress=False)
    report = (out / "report.md").read_text()
    assert "`average`: (accuracy + recall) / 2" in report
    assert "averaged over the rows" in report  # what the average rank averages
    assert "*mean iota*" in report and "differs between the methods" in report

    _, figures = _written(out)
    legend = figures["scores.png"].legends[0]
    markers = [h.get_marker() for h in legend.legend_handles]
    assert len(set(markers)) == len(markers) == 2
    lines = figures["fit_time_vs_n.png"].axes[0].get_lines()
    assert lines and all(line.get_linestyle() in ("None", "none", "") for line in lines)


def test_default_test_is_the_paired_corrected_one_and_uses_the_recorded_fold_sizes():
    from indefsvm.studies.spec import parse_spec

    raw = {"datasets": [{"name": "h", "loader": "haberman"}], "kernels": [{"name": "linear"}],
           "methods": [{"estimator": "SpectrumSVC"}]}  # fmt: skip
    assert parse_spec(raw).significance == "nadeau-bengio"
    default_hash = parse_spec(raw).hash
    raw["study"] = {"significance": "welch"}
    assert parse_spec(raw).significance == "welch"
    # the default was "welch": results directories of specs without the key stay valid (the
    # records do not depend on the test), another test is another spec
    assert parse_spec(raw).hash == default_hash
    raw["study"] = {"significance": "paired-t"}
    assert parse_spec(raw).hash != default_hash
    with pytest.raises(ValueError, match="needs test_train_ratio"):
        significance_p(np.ones(3), np.zeros(3), "nadeau-bengio")
    # the ratio comes from the records' n_test / n_train (here 1/3, not 5-fold's 1/4)
    scores = {"A": [0.80, 0.70, 0.75, 0.82, 0.78], "B": [0.74, 0.71, 0.60, 0.70, 0.72]}
    records = _records(scores)
    for r in records:
        r["n_train"], r["n_test"] = 30, 10
    rows = {r["method"]: r for r in summarize(records, _study(significance="nadeau-bengio"),
                                              "accuracy")}  # fmt: skip
    ref = _nadeau_bengio_reference(scores["B"], scores["A"], ratio=1 / 3)
    assert rows["B"]["p_vs_best"] == pytest.approx(ref, rel=1e-12)
    assert rows["B"]["p_vs_best"] > stats.ttest_rel(scores["B"], scores["A"]).pvalue


def _plot_inputs(n_train, given=False, mean=0.985):
    """Synthetic records of 2 data sets x 3 methods, scores near 100 % (bars would cross it)."""
    from indefsvm.studies.spec import KernelSpec

    rng = np.random.default_rng(0)
    folds = 1 if given else 5
    datasets = tuple(DatasetSpec(name=f"d{i}", kernel="K.npy", labels="y.txt",
                                 split="given" if given else None) for i in range(2))  # fmt: skip
    study = Study(
        name="s", seed=0, outer_folds=5, inner_folds=2, scoring="accuracy", metrics=(),
        task="classification", search="grid", n_iter=None, significance="nadeau-bengio",
        alpha=0.05, datasets=datasets, kernels=(KernelSpec("precomputed", "precomputed"),),
        methods=(MethodSpec("IndefiniteSVC", "A"), MethodSpec("SpectrumSVC", "B"),
                 MethodSpec("KreinSVC", "C")),
    )  # fmt: skip
    records = []
    for i, d in enumerate(datasets):
        for m in "ABC":
            for f in range(folds):
                score = min(1.0, max(0.0, mean + 0.03 * rng.normal()))
                records.append({"dataset": d.name, "kernel": "precomputed", "method": m,
                                "outer_fold": f, "score": score, "metrics": {}, "iota": 0.1,
                                "n_train": n_train[i], "n_test": 20,
                                "params": '{"kernel": {}, "method": {"C": 1.0}}',
                                "fit_time": 0.01 * (1 + i)})  # fmt: skip
    return study, records


@pytest.mark.parametrize("given", [False, True])
def test_score_plot_clips_bars_labels_ticks_and_says_what_a_point_is(tmp_path, given):
    study, records = _plot_inputs([250, 280], given=given)
    rows = summarize(records, study, "accuracy")
    assert {r["row"] for r in rows} == {"d0 / precomputed", "d1 / precomputed"}
    _, figures = _report(tmp_path, study, records)
    fig = figures["scores.png"]
    title = " ".join(t.get_text() for t in fig.texts)  # the suptitle
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2
    for ax in axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == ["A", "B", "C"]
        tops = [seg[:, 1].max() for c in ax.collections for seg in c.get_segments()]
        if given:
            assert all(np.ptp(seg[:, 1]) == 0 for c in ax.collections for seg in c.get_segments())
        else:
            assert tops and max(tops) <= 100.0 + 1e-9  # std 3 % around 98.5 %: cut at 100
            assert ax.get_ylim()[1] <= 100.2
    if given:
        assert "mean ± std" not in title and "given train/test split" in title
    else:
        assert "mean ± std over 5 outer folds" in title


@pytest.mark.parametrize(("n_train", "scale"), [([250, 280], "linear"), ([100, 5000], "log")])
def test_fit_time_axis_is_linear_for_nearly_equal_n(tmp_path, n_train, scale):
    study, records = _plot_inputs(n_train)
    _, figures = _report(tmp_path, study, records)
    assert figures["fit_time_vs_n.png"].axes[0].get_xscale() == scale


def test_error_bars_stop_at_zero_too(tmp_path):
    """Scores near 0 %: the bars (mean ± std) are cut at the bottom of the range as well, and
    the part above the mean stays a whole std."""
    study, records = _plot_inputs([250, 280], mean=0.015)
    rows = summarize(records, study, "accuracy")
    _, figures = _report(tmp_path, study, records)
    bars = [
        seg[:, 1]
        for ax in figures["scores.png"].axes
        if ax.get_visible()
        for c in ax.collections
        for seg in c.get_segments()
    ]
    assert len(bars) == len(rows) and min(b.min() for b in bars) >= 0.0
    cut = [r for r in rows if r["mean"] < r["std"]]
    assert cut  # the data holds bars that would cross 0
    tops = sorted(b.max() for b in bars)
    assert np.allclose(tops, sorted(100.0 * (r["mean"] + r["std"]) for r in rows), rtol=1e-9)


def test_report_has_selected_parameters_ranks_and_cd_diagram(tmp_path):
    import csv
    import json

    write_small_study_data(tmp_path)
    spec = SMALL_STUDY.replace(
        "[[datasets]]",
        '[[datasets]]\nname = "again"\nfeatures = '
        '"X.npy"\nlabels = "y.txt"\nmax_samples = 30\n\n[[datasets]]',
        1,
    )
    spec += '\n[[methods]]\nestimator = "KreinSVC"\ngrid = { C = [0.1, 1.0] }\n'
    out = tmp_path / "out"
    run_study(write_study_spec(tmp_path, spec), out, progress=False)
    report = (out / "report.md").read_text()
    assert "| again / sigmoid |" in report and "| mine / sigmoid |" in report
    assert "corrected resampled t-test of Nadeau & Bengio" in report
    assert "## Across data sets (accuracy)" in report and "Wilcoxon" in report
    assert "![Critical-difference diagram of average ranks](cd_diagram.png)" in report
    assert (out / "cd_diagram.png").stat().st_size > 1000
    assert "## Selected hyper-parameters" in report
    # selected_params.csv holds, per outer record, the parameters of results.csv
    results = list(csv.DictReader(open(out / "results.csv")))
    chosen = list(csv.DictReader(open(out / "selected_params.csv")))
    assert len(chosen) == len(results) == 2 * 2 * 2
    by_key = {(r["dataset"], r["method"], r["outer_fold"]): r for r in chosen}
    for r in results:
        c = by_key[(r["dataset"], r["method"], r["outer_fold"])]
        params = json.loads(r["params"])
        assert float(c["kernel.gamma"]) == params["kernel"]["gamma"]
        assert float(c["method.C"]) == params["method"]["C"]
        assert float(c["score"]) == pytest.approx(float(r["score"]), rel=1e-15)
        cell = f"gamma={params['kernel']['gamma']:g}; C={params['method']['C']:g}"
        assert cell in report
