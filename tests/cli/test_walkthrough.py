"""The README's command-line walkthrough, run as a new user runs it, and the CLI's messages.

Before: ``indefsvm predict model.skops test_vs_train_kernel.npy`` needed a file nothing created,
``--set gamma=0.05 coef0=-1`` needed one ``--set`` each, ``--set Cc=1`` did not list the valid
names, a NaN kernel got scikit-learn's advice to use HistGradientBoosting, and a warning was
printed with its source file, line and the code that raised it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from indefsvm.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def _readme_cli_blocks() -> list[str]:
    """The README's bash blocks of the walkthrough (example-data, solve, fit, predict)."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [b for b in blocks if re.search(r"^indefsvm (example-data|solve|fit|predict)", b, re.M)]


def test_the_readme_walkthrough_runs_in_a_fresh_directory(tmp_path):
    blocks = _readme_cli_blocks()
    assert any("example-data" in b for b in blocks) and any("predict" in b for b in blocks)
    script = "set -euo pipefail\n" + "\n".join(blocks)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    predicted = np.loadtxt(tmp_path / "predictions.txt")
    truth = np.loadtxt(tmp_path / "test_labels.txt")
    assert predicted.shape == truth.shape == (100,)
    assert np.mean(predicted == truth) >= 0.9


def test_set_takes_several_parameters_and_lists_the_valid_names(tmp_path, capsys):
    assert main(["example-data", str(tmp_path), "--n", "60", "-q"]) == 0
    kernel, labels, model = tmp_path / "kernel.npy", tmp_path / "labels.txt", tmp_path / "m.skops"
    code = main(["fit", str(kernel), str(labels), "--model", str(model), "-q",
                 "--set", "C=2", "rho=0.5", "--set", "tol=1e-4"])  # fmt: skip
    assert code == 0
    from indefsvm.persistence import load_model

    clf = load_model(model)
    assert (clf.C, clf.rho, clf.tol) == (2, 0.5, 1e-4)
    capsys.readouterr()
    assert main(["fit", str(kernel), str(labels), "--model", str(model), "--set", "Cc=1"]) == 2
    err = capsys.readouterr().err
    assert "Cc is not a parameter of IndefiniteSVC; its parameters are C, class_weight," in err


def test_non_finite_data_files_say_so(tmp_path, capsys):
    main(["example-data", str(tmp_path), "--n", "40", "-q"])
    K = np.load(tmp_path / "kernel.npy")
    K[0, 1] = np.nan
    np.save(tmp_path / "nan.npy", K)
    code = main(["fit", str(tmp_path / "nan.npy"), str(tmp_path / "labels.txt"),
                 "--model", str(tmp_path / "m.skops")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "contains 1 NaN or infinite entries" in err and "HistGradientBoosting" not in err


def test_a_warning_is_one_line_without_source_code(tmp_path):
    main(["example-data", str(tmp_path), "--n", "60", "-q"])
    proc = subprocess.run(
        [sys.executable, "-m", "indefsvm.cli", "solve", "kernel.npy", "labels.txt",
         "--tol", "0", "--max-iter", "5"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "ConvergenceWarning" in line]
    assert len(lines) == 1 and lines[0].startswith("ConvergenceWarning: pg: iteration limit 5")
    assert ".py:" not in proc.stderr and "warnings.warn" not in proc.stderr
    assert "return solver(" not in proc.stderr


def test_study_run_takes_q():
    args = build_parser().parse_args(["study", "run", "spec.toml", "--out", "o", "-q"])
    assert args.quiet is True


def test_example_data_writes_a_test_kernel_against_the_training_points(tmp_path):
    assert main(["example-data", str(tmp_path), "--n", "120", "-q"]) == 0
    K, Kt = np.load(tmp_path / "kernel.npy"), np.load(tmp_path / "test_kernel.npy")
    assert Kt.shape == (100, 120) and len(np.loadtxt(tmp_path / "test_labels.txt")) == 100
    # the same kernel function: a test row equal to a training point's would be its kernel row
    assert not np.allclose(Kt[:, :5], K[:100, :5])
    assert main(["example-data", str(tmp_path / "all"), "--n", "365", "-q"]) == 0
    assert not (tmp_path / "all" / "test_kernel.npy").exists()


@pytest.mark.parametrize("probability", [False, True])
def test_predict_proba_says_why_it_is_missing(probability):
    from indefsvm import IndefiniteSVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    clf = IndefiniteSVC(kernel="rbf", probability=probability, random_state=0).fit(X, y)
    assert hasattr(clf, "predict_proba") is probability
    if probability:
        assert clf.predict_proba(X).shape == (40, 2)
        return
    with pytest.raises(AttributeError, match=r"probability=False; fit IndefiniteSVC\("):
        clf.predict_proba(X)


def test_compare_warms_up_before_timing(tmp_path, monkeypatch):
    """`indefsvm compare` charged the process's one-off costs (the eigendecomposition, compiled
    kernels, imports: 0.95 s of pg's 1.08 s) to the first method: each method now runs one
    untimed iteration first, so the timed runs start warm."""
    import indefsvm.proxy.api as api

    calls = []
    original = api.solve_problem

    def spy(problem, **kw):
        calls.append((kw["method"], kw.get("max_iter")))
        return original(problem, **kw)

    monkeypatch.setattr(api, "solve_problem", spy)
    main(["example-data", str(tmp_path), "--n", "60", "-q"])
    code = main(["compare", str(tmp_path / "kernel.npy"), str(tmp_path / "labels.txt"),
                 "--methods", "pg", "accpm", "-q"])  # fmt: skip
    assert code in (0, 1)
    assert calls[:2] == [("pg", 1), ("accpm", 1)]
    assert [m for m, it in calls[2:]] == ["pg", "accpm"] and all(it != 1 for _, it in calls[2:])
