"""Comparative studies (issue 13): spec validation, equal footing, store, report, CLI."""

from __future__ import annotations

import csv
import json
import logging
import math
import sqlite3

import numpy as np
import pytest
from scipy import stats
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from threadpoolctl import threadpool_limits

from indefsvm import SpectrumSVC
from indefsvm.cli import main
from indefsvm.kernels import sigmoid_kernel
from indefsvm.studies import SpecChangedError, SpecError, load_spec, parse_spec, run_study
from indefsvm.studies.data import load_dataset
from indefsvm.studies.harness import (
    candidates,
    inner_splits,
    kernel_blocks,
    outer_splits,
    plan_inner,
)
from indefsvm.studies.report import significance_p, summarize


def _write_data(tmp_path, n=90, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.array([1.0, 3.0, 0.5, 10.0])[:d] + 2.0
    y = np.where(X[:, 0] - 2.0 + 0.4 * rng.normal(size=n) > 0, "yes", "no")
    np.save(tmp_path / "X.npy", X)
    np.savetxt(tmp_path / "y.txt", y, fmt="%s")
    return X, y


SPEC = """
[study]
seed = 3
outer_folds = 3
inner_folds = 3
scoring = "accuracy"
metrics = ["average"]

[[datasets]]
name = "mine"
features = "X.npy"
labels = "y.txt"

[[kernels]]
name = "sigmoid"
params = { coef0 = -0.5 }
grid = { gamma = [0.5, 2.0] }
scale = { gamma = "inverse_n_features" }

[[methods]]
estimator = "IndefiniteSVC"
params = { tol = 1e-5 }
grid = { C = [0.1, 1.0], rho = [1.0] }

[[methods]]
estimator = "KreinClassifier"
grid = { lambda_plus = [0.01, 1.0] }
"""


def _spec(tmp_path, text=SPEC):
    path = tmp_path / "study.toml"
    path.write_text(text)
    return path


# --------------------------------------------------------------------------------------------
# Spec validation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("seed = 3", "seed = 3\nfolds = 2", "study.folds"),
        ('labels = "y.txt"', 'labels = "y.txt"\nlable = 1', "datasets[0].lable"),
        ('estimator = "KreinClassifier"', 'estimator = "KreinClasifier"', "methods[1].estimator"),
        ("lambda_plus = [0.01, 1.0]", "lambda_pluss = [0.01]", "'lambda_pluss'"),
        ("C = [0.1, 1.0]", "C = 0.1", "methods[0].grid.C"),
        ("coef0 = -0.5", "coef = -0.5", "'coef'"),
        ("params = { tol = 1e-5 }", 'params = { kernel = "rbf" }', "'kernel' is set by"),
        (
            'scale = { gamma = "inverse_n_features" }',
            'scale = { gamma = "mean" }',
            "kernels[0].scale.gamma",
        ),
        ('scoring = "accuracy"', 'scoring = "acuracy"', "study.scoring"),
        ('features = "X.npy"', 'features = "missing.npy"', "datasets[0].features"),
        ('name = "sigmoid"', 'name = "sigmod"', "kernels[0].name"),
        ("outer_folds = 3", "outer_folds = 1", "study.outer_folds"),
    ],
)
def test_spec_errors_name_the_bad_key(tmp_path, old, new, message):
    _write_data(tmp_path)
    assert old in SPEC
    with pytest.raises(SpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_spec(_spec(tmp_path, SPEC.replace(old, new)))


ISSUE_EXAMPLE = """
[study]
seed = 0
outer_folds = 3          # stratified for classification
inner_folds = 3
scoring = "accuracy"

[[datasets]]
name = "mine"
features = "X.npy"       # or kernel = "K.npy" (precomputed); or loader = "diabetes"
labels = "y.txt"

[[kernels]]
name = "sigmoid"         # a kernel of indefsvm.kernels (ignored for a precomputed kernel)
grid = { gamma = [0.1, 1.0], coef0 = [-1.0] }

[[methods]]
estimator = "IndefiniteSVC"   # any estimator class exported by indefsvm or indefsvm.krein
grid = { C = [0.1, 1.0], rho = [1.0] }
"""


def test_the_issue_example_spec_runs_as_written(tmp_path, caplog):
    _write_data(tmp_path, n=45)
    out = tmp_path / "out"
    with caplog.at_level(logging.INFO, logger="indefsvm.studies"):
        run_study(_spec(tmp_path, ISSUE_EXAMPLE), out, report=False, progress=False)
    # Without a bar, progress goes to the log (count and time left).
    assert "15/15 tasks done" in caplog.text and "left" in caplog.text
    with open(out / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["outer_fold"] for r in rows] == ["0", "1", "2"]
    assert all(r["status"] == "converged" for r in rows)


def test_spec_duplicate_method_label_and_two_sources(tmp_path):
    _write_data(tmp_path)
    dup = SPEC + '\n[[methods]]\nestimator = "IndefiniteSVC"\n'
    with pytest.raises(SpecError, match="label 'IndefiniteSVC' is used twice"):
        load_spec(_spec(tmp_path, dup))
    two = SPEC.replace('labels = "y.txt"', 'labels = "y.txt"\nkernel = "X.npy"')
    with pytest.raises(SpecError, match="exactly one of 'loader', 'features' or 'kernel'"):
        load_spec(_spec(tmp_path, two))


def test_spec_paths_are_relative_to_the_spec_and_hash_follows_content(tmp_path):
    _write_data(tmp_path)
    study = load_spec(_spec(tmp_path))
    assert study.datasets[0].features == str((tmp_path / "X.npy").resolve())
    h = study.hash
    # Moving the spec and data keeps the hash; changing the data changes it.
    other = tmp_path / "moved"
    other.mkdir()
    for f in ("X.npy", "y.txt"):
        (other / f).write_bytes((tmp_path / f).read_bytes())
    assert load_spec(_spec(other)).hash == h
    _write_data(other, seed=1)
    assert load_spec(_spec(other)).hash != h
    assert load_spec(_spec(tmp_path, SPEC.replace("seed = 3", "seed = 4"))).hash != h


# --------------------------------------------------------------------------------------------
# Equal footing
# --------------------------------------------------------------------------------------------


def test_kernel_blocks_standardise_with_the_training_part_only(tmp_path):
    X, _ = _write_data(tmp_path)
    study = load_spec(_spec(tmp_path))
    data = load_dataset(study.datasets[0], seed=study.seed)
    fit, ev = outer_splits(data.y, study)[1]
    Kf, Ke = kernel_blocks(data, study.kernels[0], {"gamma": 2.0}, fit, ev)
    # Independent reference: statistics of the fitted rows, gamma in units of 1/d.
    mu, sd = X[fit].mean(0), X[fit].std(0)
    Zf, Ze = (X[fit] - mu) / sd, (X[ev] - mu) / sd
    g = 2.0 / X.shape[1]
    np.testing.assert_allclose(Kf, np.tanh(g * Zf @ Zf.T - 0.5), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(Ke, np.tanh(g * Ze @ Zf.T - 0.5), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(Kf, sigmoid_kernel(Zf, gamma=g, coef0=-0.5), atol=1e-14)


def test_folds_and_candidates_are_shared_by_all_methods(tmp_path):
    _write_data(tmp_path)
    study = load_spec(_spec(tmp_path))
    data = load_dataset(study.datasets[0], seed=study.seed)
    outer = outer_splits(data.y, study)
    assert sorted(np.concatenate([b for _, b in outer]).tolist()) == list(range(data.n))
    for f, (train, _) in enumerate(outer):
        inner = inner_splits(data.y, study, f)
        assert sorted(np.concatenate([b for _, b in inner]).tolist()) == train.tolist()
    # Every method is tuned over the same kernel grid, with the method's own grid.
    k = study.kernels[0]
    for m in study.methods:
        kps = [kp for kp, _ in candidates(study, "mine", k, m)]
        assert sorted({kp["gamma"] for kp in kps}) == [0.5, 2.0]
    tasks = plan_inner(study)
    assert len(tasks) == study.outer_folds * (2 * 2 + 2 * 2)


def test_random_search_gives_every_method_the_same_budget(tmp_path):
    _write_data(tmp_path)
    text = SPEC.replace('metrics = ["average"]', 'metrics = ["average"]\nsearch = "random"\n'
                        "n_iter = 3")  # fmt: skip
    study = load_spec(_spec(tmp_path, text))
    sizes = [len(candidates(study, "mine", study.kernels[0], m)) for m in study.methods]
    assert sizes == [3, 3]
    again = [candidates(study, "mine", study.kernels[0], m) for m in study.methods]
    assert again == [candidates(study, "mine", study.kernels[0], m) for m in study.methods]


def test_nested_cv_matches_gridsearchcv_on_a_precomputed_kernel(tmp_path):
    """The harness's selection and refit against scikit-learn's GridSearchCV on the same folds."""
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(80, 3))
    K = np.tanh(0.3 * Z @ Z.T - 0.1)  # indefinite (mildly: LIBSVM stays fast)
    y = np.where(Z[:, 0] + 0.5 * rng.normal(size=80) > 0, 1, -1)
    np.save(tmp_path / "K.npy", K)
    np.savetxt(tmp_path / "y.txt", y, fmt="%d")
    spec = _spec(
        tmp_path,
        """
[study]
seed = 1
outer_folds = 4
inner_folds = 3
[[datasets]]
name = "k"
kernel = "K.npy"
labels = "y.txt"
[[methods]]
estimator = "SpectrumSVC"
params = { spectrum = "clip" }
grid = { C = [0.01, 0.1, 1.0] }
""",
    )
    run_study(spec, tmp_path / "out", report=False)
    with open(tmp_path / "out" / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4
    for f, (train, test) in enumerate(
        StratifiedKFold(4, shuffle=True, random_state=1).split(np.zeros(80), y)
    ):
        inner = StratifiedKFold(3, shuffle=True, random_state=1 + 1 + f)
        gs = GridSearchCV(
            SpectrumSVC("clip"), {"C": [0.01, 0.1, 1.0]}, cv=inner.split(train, y[train])
        )
        with threadpool_limits(1):  # as the harness; spinning BLAS threads are slow here
            gs.fit(K[np.ix_(train, train)], y[train])
        ref = float(np.mean(gs.predict(K[np.ix_(test, train)]) == y[test]))
        row = rows[f]
        assert json.loads(row["params"])["method"] == gs.best_params_
        assert float(row["inner_score"]) == pytest.approx(gs.best_score_, abs=1e-12)
        assert float(row["score"]) == pytest.approx(ref, abs=1e-12)


# --------------------------------------------------------------------------------------------
# Store, report and CLI
# --------------------------------------------------------------------------------------------


def test_run_store_report_and_changed_spec(tmp_path):
    _write_data(tmp_path)
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    run_study(spec, out)
    for name in ("results.csv", "timings.csv", "search.csv", "summary.csv", "report.md",
                 "scores.png", "score_vs_indefiniteness.png", "fit_time_vs_n.png"):  # fmt: skip
        assert (out / name).is_file(), name
    con = sqlite3.connect(out / "study.sqlite")
    n_inner = con.execute("SELECT COUNT(*) FROM inner_records").fetchone()[0]
    outer = con.execute(
        "SELECT method, status, gap, iota, versions, seed FROM outer_records"
    ).fetchall()
    con.close()
    assert n_inner == 3 * (4 + 4) and len(outer) == 3 * 2
    for method, status, gap, iota, versions, seed in outer:
        assert seed == 3 and "numpy" in json.loads(versions) and 0 <= iota <= 1
        if method == "IndefiniteSVC":
            assert status == "converged" and gap >= 0
    report = (out / "report.md").read_text()
    assert "![Score per method and data set](scores.png)" in report
    assert "| *average rank* |" in report
    # Re-running the finished study changes nothing.
    before = (out / "results.csv").read_bytes()
    run_study(spec, out, report=False)
    assert (out / "results.csv").read_bytes() == before
    # A changed spec is refused, or replaced with force_new.
    changed = _spec(tmp_path, SPEC.replace("C = [0.1, 1.0]", "C = [0.1, 10.0]"))
    with pytest.raises(SpecChangedError, match="different spec"):
        run_study(changed, out, report=False)
    run_study(changed, out, report=False, force_new=True)
    assert (out / "results.csv").read_bytes() != before


def test_cli_status_report_and_errors(tmp_path, capsys):
    _write_data(tmp_path)
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    assert main(["study", "run", str(spec), "--out", str(out), "--quiet", "--no-report"]) == 0
    assert main(["study", "status", str(out)]) == 0
    assert "test records 6/6 (complete)" in capsys.readouterr().out
    assert main(["study", "report", str(out)]) == 0
    assert (out / "report.md").is_file()
    bad = _spec(tmp_path, SPEC.replace("seed = 3", "sed = 3"))
    assert main(["study", "run", str(bad), "--out", str(tmp_path / "o2")]) == 2
    assert "unknown key study.sed" in capsys.readouterr().err
    assert main(["study", "status", str(tmp_path / "nothing")]) == 2


def test_significance_marks_follow_welch_test():
    from indefsvm.studies.spec import DatasetSpec, MethodSpec, Study

    study = Study(
        name="s", seed=0, outer_folds=5, inner_folds=2, scoring="accuracy", metrics=(),
        task="classification", search="grid", n_iter=None, significance="welch", alpha=0.05,
        datasets=(DatasetSpec(name="d", kernel="K"),), kernels=(),
        methods=tuple(MethodSpec(estimator="DirectSVC", label=x) for x in "ABC"),
    )  # fmt: skip
    folds = {
        "A": [0.90, 0.92, 0.91, 0.93, 0.90],
        "B": [0.60, 0.62, 0.58, 0.61, 0.60],  # clearly worse
        "C": [0.89, 0.93, 0.90, 0.92, 0.88],  # indistinguishable from A
    }
    records = [
        {"dataset": "d", "kernel": "precomputed", "method": m, "outer_fold": f, "score": s,
         "metrics": {}}
        for m, v in folds.items() for f, s in enumerate(v)
    ]  # fmt: skip
    rows = {r["method"]: r for r in summarize(records, study, "accuracy")}
    assert rows["A"]["bold"] and rows["C"]["bold"] and not rows["B"]["bold"]
    p_ref = stats.ttest_ind(folds["C"], folds["A"], equal_var=False).pvalue
    assert rows["C"]["p_vs_best"] == pytest.approx(p_ref)
    assert [rows[m]["rank"] for m in "ABC"] == [1.0, 3.0, 2.0]
    assert rows["A"]["std"] == pytest.approx(np.std(folds["A"], ddof=1))
    # Constant equal samples are not different; constant different ones are.
    assert significance_p(np.ones(3), np.ones(3), "welch") == 1.0
    assert significance_p(np.ones(3), np.zeros(3), "welch") == 0.0
    assert math.isclose(
        significance_p(np.array(folds["A"]), np.array(folds["C"]), "paired-t"),
        stats.ttest_rel(folds["A"], folds["C"]).pvalue,
    )


def test_loaders_and_kernel_restriction(tmp_path):
    spec = _spec(
        tmp_path,
        """
[[datasets]]
name = "digits"
loader = "digits"
options = { pair = [4, 6] }
max_samples = 40
kernels = ["simpson"]
[[kernels]]
name = "simpson"
[[kernels]]
name = "gaussian"
grid = { gamma = [1.0] }
scale = { gamma = "inverse_median" }
[[methods]]
estimator = "SpectrumSVC"
params = { spectrum = "flip" }
""",
    )
    study = load_spec(spec)
    assert [k.label for k in study.kernels_for(study.datasets[0])] == ["simpson"]
    data = load_dataset(study.datasets[0], seed=0)
    assert data.n == 40 and not data.standardize and set(np.unique(data.y)) == {-1.0, 1.0}
    with pytest.raises(SpecError, match="no option 'pairs'"):
        load_dataset(
            parse_spec({"datasets": [{"name": "d", "loader": "digits",
                                      "options": {"pairs": [1, 2]}}],
                        "kernels": [{"name": "linear"}],
                        "methods": [{"estimator": "DirectSVC"}]}).datasets[0]
        )  # fmt: skip


def test_regression_study_on_the_synthetic_krein_problem(tmp_path, capsys):
    from sklearn.metrics import r2_score

    from indefsvm.datasets import make_krein_regression
    from indefsvm.krein import KreinRegressor

    spec = _spec(
        tmp_path,
        """
[study]
task = "regression"
scoring = "r2"
metrics = ["neg_mean_squared_error"]
outer_folds = 3
inner_folds = 2
[[datasets]]
name = "krein"
loader = "krein_regression"
options = { n_samples = 60, random_state = 0 }
[[methods]]
estimator = "KreinRegressor"
grid = { lambda_plus = [0.01, 1.0], lambda_minus = [0.01, 1.0] }
[[methods]]
estimator = "SimilarityRidge"
grid = { lam = [0.001, 0.1] }
""",
    )
    run_study(spec, tmp_path / "out", report=True, progress=True)  # a tqdm bar on stderr
    assert "24/24" in capsys.readouterr().err  # 18 tuning + 6 test tasks
    with open(tmp_path / "out" / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 and {r["kernel"] for r in rows} == {"precomputed"}
    b = make_krein_regression(60, random_state=0)
    study = load_spec(spec)
    row = rows[1]  # KreinRegressor, outer fold 1
    train, test = outer_splits(b.y, study)[1]
    params = json.loads(row["params"])["method"]
    est = KreinRegressor(**params).fit(b.K[np.ix_(train, train)], b.y[train])
    pred = est.predict(b.K[np.ix_(test, train)])
    assert float(row["score"]) == pytest.approx(r2_score(b.y[test], pred), rel=1e-10)
    mse = json.loads(row["metrics"])["neg_mean_squared_error"]
    assert mse == pytest.approx(-np.mean((b.y[test] - pred) ** 2), rel=1e-10)


def test_classification_measure_refused_for_regression(tmp_path):
    _write_data(tmp_path)
    text = SPEC.replace('scoring = "accuracy"', 'scoring = "accuracy"\ntask = "regression"')
    with pytest.raises(SpecError, match="study.scoring: 'accuracy' is a classification measure"):
        load_spec(_spec(tmp_path, text))
