"""Issue 22 (hardening 2), study items: 2, 3, 7, 10, 11, 12, 17, 18, 19, 23 and 27."""

from __future__ import annotations

import csv
import math
import os
import sqlite3
import threading

import numpy as np
import pytest
from scipy import stats

from indefsvm.cli import main
from indefsvm.studies import SpecError, Store, load_spec, run_study, study_status
from indefsvm.studies.data import load_dataset
from indefsvm.studies.harness import _fit_score, kernel_blocks, outer_splits
from indefsvm.studies.report import significance_p, summarize
from indefsvm.studies.spec import DatasetSpec, KernelSpec, MethodSpec, Study


def _write_data(tmp_path, n=40, d=3, seed=0, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if n_classes == 2:
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    else:
        y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=n), [-0.5, 0.5])
    np.save(tmp_path / "X.npy", X)
    np.savetxt(tmp_path / "y.txt", y, fmt="%d")
    return X, y


SMALL = """
[study]
seed = 0
outer_folds = 2
inner_folds = 2

[[datasets]]
name = "mine"
features = "X.npy"
labels = "y.txt"

[[kernels]]
name = "sigmoid"
params = { coef0 = -0.5 }
grid = { gamma = [0.5, 1.0] }
scale = { gamma = "inverse_n_features" }

[[methods]]
estimator = "SpectrumSVC"
params = { spectrum = "clip" }
grid = { C = [0.1, 1.0] }
"""


def _spec(tmp_path, text=SMALL, name="study.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _counts(out):
    con = sqlite3.connect(out / "study.sqlite")
    try:
        return tuple(
            con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("inner_records", "outer_records")
        )
    finally:
        con.close()


# --------------------------------------------------------------------------------------------
# 2. kernel cache keyed on everything the blocks depend on
# --------------------------------------------------------------------------------------------


def test_kernel_cache_distinguishes_folds_seeds_and_standardize(tmp_path):
    from indefsvm.kernels import sigmoid_kernel

    _write_data(tmp_path)
    data = load_dataset(DatasetSpec(name="m", features=str(tmp_path / "X.npy"),
                                    labels=str(tmp_path / "y.txt")))  # fmt: skip
    kernel = KernelSpec(name="sigmoid", label="sigmoid", params={"coef0": -0.5})
    params = {"gamma": 0.7}

    def reference(fit, ev, standardize):
        Xf, Xe = data.X[fit], data.X[ev]
        if standardize:
            mu, sd = Xf.mean(axis=0), Xf.std(axis=0)
            Xf, Xe = (Xf - mu) / sd, (Xe - mu) / sd
        return sigmoid_kernel(Xf, None, gamma=0.7, coef0=-0.5), sigmoid_kernel(
            Xe, Xf, gamma=0.7, coef0=-0.5
        )

    # Two studies with different seeds: same fold tag ("outer", 0), different fold layouts.
    for seed in (0, 1):
        study = Study(name="s", seed=seed, outer_folds=2, inner_folds=2, scoring="accuracy",
                      metrics=(), task="classification", search="grid", n_iter=None,
                      significance="welch", alpha=0.05, datasets=(), kernels=(kernel,),
                      methods=())  # fmt: skip
        fit, ev = outer_splits(data.y, study)[0]
        for standardize in (True, False):
            data.standardize = standardize
            Kf, Ke = kernel_blocks(data, kernel, params, fit, ev, ("outer", 0))
            Rf, Re = reference(fit, ev, standardize)
            np.testing.assert_allclose(Kf, Rf, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(Ke, Re, rtol=1e-12, atol=1e-12)


def test_second_study_in_one_process_does_not_reuse_the_first_ones_kernels(tmp_path):
    from indefsvm.studies import harness

    _write_data(tmp_path, n=40)
    first = _spec(tmp_path, SMALL, "a.toml")
    second = _spec(tmp_path, SMALL.replace("seed = 0", "seed = 5"), "b.toml")
    run_study(first, tmp_path / "a", report=False, progress=False)
    run_study(second, tmp_path / "b", report=False, progress=False)
    harness._BLOCK_CACHE.clear()
    run_study(second, tmp_path / "fresh", report=False, progress=False)
    assert (tmp_path / "b" / "results.csv").read_bytes() == (
        tmp_path / "fresh" / "results.csv"
    ).read_bytes()


# --------------------------------------------------------------------------------------------
# 3. report over failed folds
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# 7, 19. the store is created (or replaced) only after the spec and data are checked
# --------------------------------------------------------------------------------------------


def test_force_new_keeps_the_old_store_when_the_new_spec_fails(tmp_path, capsys):
    _write_data(tmp_path)
    out = tmp_path / "out"
    good = _spec(tmp_path)
    assert main(["study", "run", str(good), "--out", str(out), "--quiet", "--no-report"]) == 0
    before = _counts(out)
    old_hash = Store(out).spec_hash()
    bad = _spec(tmp_path, SMALL.replace("C = [0.1, 1.0]", "C = [0.1, -1.0]"), "bad.toml")
    code = main(["study", "run", str(bad), "--out", str(out), "--force-new", "--quiet"])
    assert code == 2 and "methods[0].grid.C" in capsys.readouterr().err
    assert _counts(out) == before and Store(out).spec_hash() == old_hash
    # A bad data file fails after the spec is parsed: the old store is still intact.
    np.savetxt(tmp_path / "y.txt", np.r_[np.ones(39), np.nan])
    changed = _spec(tmp_path, SMALL.replace("seed = 0", "seed = 1"), "changed.toml")
    assert main(["study", "run", str(changed), "--out", str(out), "--force-new"]) == 2
    assert "NaN" in capsys.readouterr().err
    assert _counts(out) == before and Store(out).spec_hash() == old_hash
    assert not [p for p in os.listdir(out) if p.startswith("study.sqlite.new")]


def test_a_rejected_spec_leaves_no_store_that_blocks_the_fixed_one(tmp_path):
    X, y = _write_data(tmp_path)
    np.savetxt(tmp_path / "y_nan.txt", np.r_[y[:-1], np.nan])
    out = tmp_path / "out"
    with pytest.raises(SpecError, match=r"y_nan\.txt.*NaN"):
        run_study(_spec(tmp_path, SMALL.replace("y.txt", "y_nan.txt")), out, report=False)
    assert not (out / "study.sqlite").exists()
    run_study(_spec(tmp_path), out, report=False, progress=False)
    assert _counts(out) == (2 * 4, 2)


def test_an_empty_store_of_another_spec_is_replaced(tmp_path):
    _write_data(tmp_path)
    out = tmp_path / "out"
    other = load_spec(_spec(tmp_path, SMALL.replace("seed = 0", "seed = 9"), "o.toml"))
    Store.create(out, other).close()  # e.g. left by an older version after a rejected spec
    run_study(_spec(tmp_path), out, report=False, progress=False)
    assert _counts(out) == (8, 2)


# --------------------------------------------------------------------------------------------
# 10, 17, 18, 19. errors that name the key or file
# --------------------------------------------------------------------------------------------


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
    _write_data(tmp_path)
    assert old in SMALL
    with pytest.raises(SpecError, match=message):
        load_spec(_spec(tmp_path, SMALL.replace(old, new)))


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
    _write_data(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(SpecError, match=message):
        run_study(_spec(tmp_path, SMALL.replace(old, new)), out, report=False)
    assert not (out / "study.sqlite").exists()


def test_f1_on_multiclass_data_is_refused_with_the_multiclass_variant(tmp_path):
    _write_data(tmp_path, n=60, n_classes=3)
    spec = SMALL.replace("inner_folds = 2", 'inner_folds = 2\nmetrics = ["f1"]')
    with pytest.raises(SpecError, match=r"study.metrics\[0\]: 'f1' .* 3; use 'f1_macro'"):
        run_study(_spec(tmp_path, spec), tmp_path / "o", report=False)
    spec = SMALL.replace("inner_folds = 2", 'inner_folds = 2\nmetrics = ["f1_macro"]')
    run_study(_spec(tmp_path, spec), tmp_path / "o2", report=False, progress=False)
    with open(tmp_path / "o2" / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert all(r["status"] == "ok" and "nan" not in r["metrics"] for r in rows)


def test_a_failing_measure_keeps_the_others():
    from sklearn.metrics import accuracy_score

    rng = np.random.default_rng(0)
    X = rng.normal(size=(45, 2))
    y = np.digitize(X[:, 0], [-0.4, 0.4])
    K = X @ X.T + 1.0
    method = MethodSpec("SpectrumSVC", "s", params={"spectrum": "clip"})
    r = _fit_score(method, {}, K[:30, :30], y[:30], K[30:, :30], y[30:],
                   ["accuracy", "f1"], 0)  # fmt: skip
    from indefsvm import SpectrumSVC

    pred = SpectrumSVC(kernel="precomputed", spectrum="clip").fit(K[:30, :30], y[:30])
    assert r["scores"]["accuracy"] == accuracy_score(y[30:], pred.predict(K[30:, :30]))
    assert math.isnan(r["scores"]["f1"]) and "measure f1 failed" in r["status"]


def test_whitespace_txt_features_are_read_like_the_cli_reads_them(tmp_path):
    X, y = _write_data(tmp_path)
    np.savetxt(tmp_path / "X.txt", X)  # whitespace-separated, the CLI's .txt format
    spec = load_spec(_spec(tmp_path, SMALL.replace("X.npy", "X.txt")))
    data = load_dataset(spec.datasets[0])
    np.testing.assert_array_equal(data.X, np.loadtxt(tmp_path / "X.txt"))
    np.testing.assert_array_equal(data.y, y)
    (tmp_path / "bad.txt").write_text("1 2 x\n3 4 5\n")
    spec = load_spec(_spec(tmp_path, SMALL.replace("X.npy", "bad.txt")))
    with pytest.raises(SpecError, match=r"features = '.*bad\.txt'.*whitespace"):
        load_dataset(spec.datasets[0])


# --------------------------------------------------------------------------------------------
# 11. two runs on a fresh directory
# --------------------------------------------------------------------------------------------


def test_concurrent_store_creation_is_race_safe(tmp_path):
    _write_data(tmp_path)
    study = load_spec(_spec(tmp_path))
    errors = []
    for trial in range(10):
        out = tmp_path / f"out{trial}"
        barrier = threading.Barrier(6)

        def create(out=out, barrier=barrier):
            barrier.wait()
            try:
                Store.create(out, study).close()
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=create) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert Store(out).spec_hash() == study.hash
    assert errors == []


# --------------------------------------------------------------------------------------------
# 12. CLI exit codes
# --------------------------------------------------------------------------------------------


def test_cli_user_errors_exit_2_with_a_message(tmp_path, capsys):
    _write_data(tmp_path)
    spec = str(_spec(tmp_path))
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert main(["study", "run", spec, "--out", str(afile)]) == 2
    assert "is a file" in capsys.readouterr().err
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "study.sqlite").write_bytes(b"this is not a database" * 100)
    for argv in (["status", str(corrupt)], ["report", str(corrupt)],
                 ["run", spec, "--out", str(corrupt)]):  # fmt: skip
        assert main(["study", *argv]) == 2, argv
        assert "study.sqlite" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["study", "run", spec, "--out", str(tmp_path / "o"), "--backend", "dask",
              "--n-jobs", "0"])  # fmt: skip
    assert exc.value.code == 2 and "--n-jobs" in capsys.readouterr().err
    assert main(["study", "run", spec, "--out", str(tmp_path / "o"), "--scheduler", "x:1"]) == 2
    assert "--scheduler applies to --backend dask" in capsys.readouterr().err
    with pytest.raises(ValueError, match="n_jobs"):
        run_study(spec, tmp_path / "o", n_jobs=0)


def test_cli_unwritable_out_exits_2(tmp_path, capsys):
    _write_data(tmp_path)
    spec = str(_spec(tmp_path))
    # /proc refuses new directories even to root; so does a path through a file.
    assert main(["study", "run", spec, "--out", "/proc/indefsvm-study/res"]) == 2
    assert "/proc/indefsvm-study" in capsys.readouterr().err
    (tmp_path / "afile").write_text("x")
    assert main(["study", "run", spec, "--out", str(tmp_path / "afile" / "res")]) == 2
    assert "afile" in capsys.readouterr().err
    if os.geteuid() != 0:  # root writes anywhere else
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        try:
            code = main(["study", "run", spec, "--out", str(locked / "res")])
        finally:
            locked.chmod(0o700)
        assert code == 2 and "not writable" in capsys.readouterr().err


def test_cli_unreachable_scheduler_fails_fast(tmp_path, capsys, monkeypatch):
    import socket

    from indefsvm.studies import backends

    monkeypatch.setattr(backends, "SCHEDULER_TIMEOUT", 2.0)
    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _write_data(tmp_path)
    code = main(["study", "run", str(_spec(tmp_path)), "--out", str(tmp_path / "o"),
                 "--backend", "dask", "--scheduler", f"tcp://127.0.0.1:{port}"])  # fmt: skip
    assert code == 2 and "cannot reach the Dask scheduler" in capsys.readouterr().err


def test_cli_ctrl_c_internal_errors_and_incomplete_status(tmp_path, capsys, monkeypatch):
    from indefsvm.studies import cli as study_cli
    from indefsvm.studies import runner

    _write_data(tmp_path)
    spec, out = str(_spec(tmp_path)), str(tmp_path / "o")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_study", interrupted)
    try:
        code = main(["study", "run", spec, "--out", out])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped the study command")
    assert code == study_cli.EXIT_INTERRUPTED == 130
    assert "interrupted" in capsys.readouterr().err

    def bug(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(runner, "run_study", bug)
    assert main(["study", "run", spec, "--out", out]) == study_cli.EXIT_INTERNAL_ERROR == 3
    assert "internal error: ZeroDivisionError: boom" in capsys.readouterr().err
    # An incomplete study: exit 1, not 3 (internal error).
    Store.create(out, load_spec(spec)).close()
    assert main(["study", "status", out]) == study_cli.EXIT_INCOMPLETE == 1


# --------------------------------------------------------------------------------------------
# 23. status and run plan the same candidates
# --------------------------------------------------------------------------------------------


def test_random_search_with_unsorted_grid_keys_is_complete_after_a_run(tmp_path, capsys):
    _write_data(tmp_path)
    method = 'estimator = "SpectrumSVC"\nparams = { spectrum = "clip" }\ngrid = { C = [0.1, 1.0] }'
    # Keys deliberately not in sorted order (the README's main job has the same grid).
    krein = (
        'estimator = "KreinClassifier"\n'
        "grid = { lambda_plus = [0.01, 0.1, 1.0], lambda_minus = [0.01, 0.1, 1.0] }"
    )
    spec = SMALL.replace(method, krein)
    spec = spec.replace("inner_folds = 2", 'inner_folds = 2\nsearch = "random"\nn_iter = 3')
    out = tmp_path / "out"
    assert main(["study", "run", str(_spec(tmp_path, spec)), "--out", str(out), "--quiet",
                 "--no-report"]) == 0  # fmt: skip
    status = study_status(out)
    assert status.complete, status
    assert main(["study", "status", str(out)]) == 0
    assert "(complete)" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# 27. report text and plots
# --------------------------------------------------------------------------------------------


def test_report_defines_its_measures_and_iota_and_plots_tell_methods_apart(tmp_path):
    from indefsvm.studies.report import _plots

    _write_data(tmp_path)
    spec = SMALL.replace("inner_folds = 2", 'inner_folds = 2\nmetrics = ["average"]')
    spec += '\n[[methods]]\nestimator = "KreinClassifier"\ngrid = { lambda_plus = [0.1, 1.0] }\n'
    out = tmp_path / "out"
    run_study(_spec(tmp_path, spec), out, progress=False)
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


@pytest.mark.slow
def test_dask_backend_is_quiet_without_verbose(tmp_path):
    import subprocess
    import sys

    _write_data(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "indefsvm.cli", "study", "run", str(_spec(tmp_path)), "--out",
         str(tmp_path / "o"), "--backend", "dask", "--n-jobs", "1", "--quiet", "--no-report"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    info = [x for x in lines if "distributed" in x and "INFO" in x]
    port = [x for x in lines if "8787" in x or "port" in x.lower()]
    assert info == [] and port == [], (info, port)
