"""The command-line interface on .npy and .csv inputs."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import sigmoid_problem

import indefsvm
from indefsvm.cli import main


def test_cli_npy_writes_result(tmp_path, capsys, kernel_files):
    K0, y = kernel_files.K0, kernel_files.y
    out = tmp_path / "res.json"
    code = main(
        [
            "solve",
            kernel_files.kernel,
            kernel_files.labels_npy,
            "--C",
            "2",
            "--rho",
            "0.5",
            "--tol",
            "1e-7",
            "--every",
            "5",
            "--libsvm-every",
            "10",
            "--out",
            str(out),
            "--save-kernel",
            str(tmp_path / "Ks.npy"),
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert "[pg]" in captured.err and "converged" in captured.out
    data = json.loads(out.read_text())
    ref = indefsvm.solve(K0, y, C=2.0, rho=0.5, tol=1e-7, libsvm_every=10)
    assert data["status"] == "converged"
    assert data["objective"] == pytest.approx(ref.objective, rel=1e-12)
    assert set(data["history"]) >= {"iteration", "time", "objective", "upper_bound", "gap"}
    assert np.allclose(np.load(tmp_path / "Ks.npy"), ref.kernel)


def test_cli_csv_string_labels_and_errors(tmp_path, capsys):
    K0, y = sigmoid_problem(12, 1)
    np.savetxt(tmp_path / "K.csv", K0, delimiter=",")
    (tmp_path / "y.txt").write_text("\n".join("cat" if v > 0 else "dog" for v in y))
    assert main(["solve", str(tmp_path / "K.csv"), str(tmp_path / "y.txt"), "--quiet"]) == 0
    np.savetxt(tmp_path / "bad.csv", K0 + np.triu(np.ones_like(K0), 1), delimiter=",")
    assert main(["solve", str(tmp_path / "bad.csv"), str(tmp_path / "y.txt"), "--quiet"]) == 2
    assert "not symmetric" in capsys.readouterr().err
    assert main(["solve", str(tmp_path / "missing.npy"), str(tmp_path / "y.txt")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_console_script_entry_point(kernel_files):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "indefsvm.cli",
            "solve",
            kernel_files.kernel,
            kernel_files.labels_npy,
            "--quiet",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "status='converged'" in proc.stdout


def test_cli_extension_problems(tmp_path, capsys):
    K0, y = sigmoid_problem(14, 3)
    np.save(tmp_path / "K.npy", K0)
    np.savetxt(tmp_path / "t.txt", np.sin(np.arange(14.0)))
    np.savetxt(tmp_path / "rho.txt", np.linspace(0.5, 2, 14))
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "solve",
                str(tmp_path / "K.npy"),
                "--problem",
                "oneclass",
                "--nu",
                "0.3",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    ref = indefsvm.solve(K0, problem="oneclass", nu=0.3)
    assert data["problem"] == "oneclass" and data["objective"] == pytest.approx(ref.objective)
    assert (
        main(
            [
                "solve",
                str(tmp_path / "K.npy"),
                str(tmp_path / "t.txt"),
                "--problem",
                "svr",
                "--epsilon",
                "0.2",
                "--rho-file",
                str(tmp_path / "rho.txt"),
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    ref = indefsvm.solve(
        K0, np.sin(np.arange(14.0)), problem="svr", epsilon=0.2, rho=np.linspace(0.5, 2, 14)
    )
    assert json.loads(out.read_text())["objective"] == pytest.approx(ref.objective)
    assert main(["solve", str(tmp_path / "K.npy"), "--problem", "svc"]) == 2
    assert "needs a LABELS file" in capsys.readouterr().err


def test_cli_fit_predict_round_trip(tmp_path, capsys):
    K0, y = sigmoid_problem(60, 4)
    labels = np.where(y > 0, 7, 2)
    np.save(tmp_path / "Ktr.npy", K0[:40, :40])
    np.save(tmp_path / "Kte.npy", K0[40:, :40])
    (tmp_path / "y.txt").write_text("\n".join(map(str, labels[:40])))
    model = tmp_path / "m.joblib"
    assert main(["fit", str(tmp_path / "Ktr.npy"), str(tmp_path / "y.txt"), "--model", str(model),
                 "--set", "C=2", "--set", "rho=0.5", "-q"]) == 0
    out = tmp_path / "p.txt"
    assert main(["predict", str(model), str(tmp_path / "Kte.npy"), "--out", str(out), "-q"]) == 0
    predicted = np.loadtxt(out, dtype=int)
    ref = indefsvm.IndefiniteSVC(kernel="precomputed", C=2, rho=0.5).fit(K0[:40, :40], labels[:40])
    assert np.array_equal(predicted, ref.predict(K0[40:, :40]))
    assert main(["predict", str(model), str(tmp_path / "Kte.npy"), "--decision", "-q"]) == 0
    printed = np.array(capsys.readouterr().out.split()[-20:], dtype=float)
    assert np.allclose(printed, ref.decision_function(K0[40:, :40]), rtol=1e-8)
    # bad inputs are exit code 2 with a message
    assert main(["fit", str(tmp_path / "Ktr.npy"), str(tmp_path / "y.txt"), "--model",
                 str(model), "--estimator", "NoSuchSVC", "-q"]) == 2
    assert main(["predict", str(tmp_path / "y.txt"), str(tmp_path / "Kte.npy"), "-q"]) == 2
    assert "model file" in capsys.readouterr().err


def test_cli_version_and_fast_help():
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, indefsvm.cli; print(sorted(sys.modules))"],
        capture_output=True, text=True, check=True,
    )
    loaded = proc.stdout
    assert "'cvxpy'" not in loaded and "'sklearn'" not in loaded  # lazy imports
    proc = subprocess.run(
        [sys.executable, "-m", "indefsvm.cli", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "indefsvm" in proc.stdout


def test_cli_choices_come_from_the_registries(capsys):
    """`solve --help` lists exactly the registered solvers and problems (public output, not
    argparse's private ``_actions``)."""
    from indefsvm.api import SOLVERS
    from indefsvm.cli import build_parser
    from indefsvm.problems import PROBLEM_TYPES

    with pytest.raises(SystemExit):
        build_parser().parse_args(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    choices = dict(re.findall(r"--(method|problem) \{([^}]*)\}", text))
    assert tuple(choices["method"].split(",")) == tuple(SOLVERS)
    assert tuple(choices["problem"].split(",")) == tuple(PROBLEM_TYPES)
