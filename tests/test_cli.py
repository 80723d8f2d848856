"""The command-line interface on .npy and .csv inputs."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest
from helpers import sigmoid_problem
from sklearn.exceptions import ConvergenceWarning

import indefsvm
import indefsvm.persistence
from indefsvm.cli import main
from indefsvm.persistence import TRUSTED_TYPES


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
    ref = indefsvm.solve(K0, y, C=2.0, rho=0.5, tol=1e-7, options={"libsvm_every": 10})
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
    model = tmp_path / "m.skops"
    assert (
        main(
            [
                "fit",
                str(tmp_path / "Ktr.npy"),
                str(tmp_path / "y.txt"),
                "--model",
                str(model),
                "--set",
                "C=2",
                "--set",
                "rho=0.5",
                "-q",
            ]
        )
        == 0
    )
    out = tmp_path / "p.txt"
    assert main(["predict", str(model), str(tmp_path / "Kte.npy"), "--out", str(out), "-q"]) == 0
    predicted = np.loadtxt(out, dtype=int)
    ref = indefsvm.IndefiniteSVC(kernel="precomputed", C=2, rho=0.5).fit(K0[:40, :40], labels[:40])
    assert np.array_equal(predicted, ref.predict(K0[40:, :40]))
    assert main(["predict", str(model), str(tmp_path / "Kte.npy"), "--decision", "-q"]) == 0
    printed = np.array(capsys.readouterr().out.split()[-20:], dtype=float)
    assert np.allclose(printed, ref.decision_function(K0[40:, :40]), rtol=1e-8)
    # bad inputs are exit code 2 with a message
    assert (
        main(
            [
                "fit",
                str(tmp_path / "Ktr.npy"),
                str(tmp_path / "y.txt"),
                "--model",
                str(model),
                "--estimator",
                "NoSuchSVC",
                "-q",
            ]
        )
        == 2
    )
    assert main(["predict", str(tmp_path / "y.txt"), str(tmp_path / "Kte.npy"), "-q"]) == 2
    assert "model file" in capsys.readouterr().err


def test_cli_version_and_fast_help():
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, indefsvm.cli; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
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
    from indefsvm.cli import build_parser
    from indefsvm.proxy.api import SOLVERS
    from indefsvm.proxy.problems import PROBLEM_TYPES

    with pytest.raises(SystemExit):
        build_parser().parse_args(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    choices = dict(re.findall(r"--(method|problem) \{([^}]*)\}", text))
    assert tuple(choices["method"].split(",")) == ("auto", *SOLVERS)
    assert tuple(choices["problem"].split(",")) == tuple(PROBLEM_TYPES)


# -- issue 22 -----------------------------------------------------------------------------------
@pytest.fixture
def fitted_files(tmp_path):
    """A train kernel, labels, a test-vs-train kernel and a model written by 'indefsvm fit'."""
    tmp_path = tmp_path / "fitted"  # apart from the files of the kernel_files fixture
    tmp_path.mkdir()
    K0, y = sigmoid_problem(50, 5)
    np.save(tmp_path / "Ktr.npy", K0[:36, :36])
    np.save(tmp_path / "Kte.npy", K0[36:, :36])
    np.savetxt(tmp_path / "y.txt", y[:36], fmt="%d")
    np.savetxt(tmp_path / "t.txt", np.sin(np.arange(36.0)))
    model = tmp_path / "m.skops"
    assert main(["fit", str(tmp_path / "Ktr.npy"), str(tmp_path / "y.txt"), "--model",
                 str(model), "-q"]) == 0  # fmt: skip
    return tmp_path


# item 8: a model file cannot run code
def test_cli_predict_runs_no_code_from_a_crafted_pickle(fitted_files, capsys):
    from test_persistence import malicious_pickle

    marker = fitted_files / "pwned"
    malicious_pickle(fitted_files / "evil.joblib", marker)
    code = main(["predict", str(fitted_files / "evil.joblib"), str(fitted_files / "Kte.npy")])
    assert not marker.exists(), "loading the model ran code"
    assert code == 2
    err = capsys.readouterr().err
    assert "not in the safe skops format" in err and "--allow-pickle" in err


def test_cli_predict_runs_no_code_from_a_tampered_skops_file(fitted_files, capsys):
    from test_persistence import malicious_skops

    marker = fitted_files / "pwned"
    malicious_skops(fitted_files / "evil.skops", marker)
    for extra in ([], ["--allow-pickle"]):
        code = main(["predict", str(fitted_files / "evil.skops"), str(fitted_files / "Kte.npy"),
                     *extra])  # fmt: skip
        assert not marker.exists(), "loading the model ran code"
        assert code == 2 and "os.system" in capsys.readouterr().err


def test_cli_fit_writes_skops_and_predict_needs_allow_pickle_for_joblib(fitted_files, capsys):
    import joblib
    import skops.io

    model = fitted_files / "m.skops"
    assert "schema.json" in zipfile_names(model)  # a skops archive, not a pickle
    assert set(skops.io.get_untrusted_types(file=model)) <= set(TRUSTED_TYPES)
    ref = indefsvm.persistence.load_model(model)
    joblib.dump({"format": "indefsvm-model-1", "estimator": ref}, fitted_files / "old.joblib")
    Kte = str(fitted_files / "Kte.npy")
    assert main(["predict", str(fitted_files / "old.joblib"), Kte, "-q"]) == 2
    assert "--allow-pickle" in capsys.readouterr().err
    assert main(["predict", str(fitted_files / "old.joblib"), Kte, "--allow-pickle"]) == 0
    printed = capsys.readouterr().out.split()
    K0, _ = sigmoid_problem(50, 5)
    assert np.array_equal(np.array(printed, dtype=float), ref.predict(K0[36:, :36]))
    # a pickle name for the safe format is refused, not silently misleading
    code = main(["fit", str(fitted_files / "Ktr.npy"), str(fitted_files / "y.txt"), "--model",
                 str(fitted_files / "m.joblib"), "-q"])  # fmt: skip
    assert code == 2 and ".skops" in capsys.readouterr().err


def zipfile_names(path) -> list[str]:
    import zipfile

    with zipfile.ZipFile(path) as zf:
        return zf.namelist()


# item 13: user errors are exit 2 with a message, never "This is a bug"
def test_cli_kernel_or_labels_path_that_is_a_directory(fitted_files, capsys):
    (fitted_files / "dir.npy").mkdir()
    (fitted_files / "dir.txt").mkdir()
    K, y = str(fitted_files / "Ktr.npy"), str(fitted_files / "y.txt")
    for argv in (
        ["solve", str(fitted_files / "dir.npy"), y],
        ["solve", K, str(fitted_files / "dir.txt")],
        ["solve", str(fitted_files), y],
        ["fit", str(fitted_files / "dir.npy"), y, "--model", str(fitted_files / "x.skops")],
        ["predict", str(fitted_files / "m.skops"), str(fitted_files / "dir.npy")],
        ["predict", str(fitted_files / "dir.npy"), str(fitted_files / "Kte.npy")],
    ):
        assert main([*argv, "-q"]) == 2, argv
        err = capsys.readouterr().err
        assert "is a directory" in err and "bug" not in err, argv


def test_cli_example_data_into_an_unwritable_directory(tmp_path, monkeypatch, capsys):
    target = tmp_path / "locked"
    target.mkdir()
    target.chmod(0o500)
    try:
        if os.access(target, os.W_OK):  # root ignores the mode: make the write itself fail
            import indefsvm.utils.io

            def refuse(*args, **kwargs):
                raise PermissionError(13, "Permission denied", str(target))

            monkeypatch.setattr(indefsvm.utils.io.tempfile, "mkstemp", refuse)
        assert main(["example-data", str(target), "--n", "20"]) == 2
        err = capsys.readouterr().err
        assert str(target) in err and "bug" not in err
    finally:
        target.chmod(0o700)


def test_cli_predict_decision_on_a_regressor(fitted_files, capsys):
    model = fitted_files / "r.skops"
    assert main(["fit", str(fitted_files / "Ktr.npy"), str(fitted_files / "t.txt"), "--model",
                 str(model), "--estimator", "IndefiniteSVR", "-q"]) == 0  # fmt: skip
    code = main(["predict", str(model), str(fitted_files / "Kte.npy"), "--decision"])
    assert code == 2
    err = capsys.readouterr().err
    assert "IndefiniteSVR" in err and "decision_function" in err and "bug" not in err


def test_cli_nystroem_is_not_a_model_for_predict(fitted_files, capsys):
    code = main(["fit", str(fitted_files / "Ktr.npy"), "--model", str(fitted_files / "n.skops"),
                 "--estimator", "IndefiniteNystroem", "--set", "n_components=5", "-q"])  # fmt: skip
    assert code == 2
    assert "transformer" in capsys.readouterr().err
    assert not (fitted_files / "n.skops").exists()
    # a transformer saved from Python is refused by predict with a message too
    from indefsvm.approximation.nystrom import IndefiniteNystroem
    from indefsvm.persistence import save_model

    X = np.random.default_rng(0).normal(size=(30, 3))
    nys = IndefiniteNystroem("sigmoid", n_components=5, random_state=0).fit(X)
    save_model(nys, fitted_files / "n.skops")
    code = main(["predict", str(fitted_files / "n.skops"), str(fitted_files / "Kte.npy")])
    assert code == 2
    err = capsys.readouterr().err
    assert "IndefiniteNystroem" in err and "no predict" in err and "bug" not in err


# item 21: nothing is silently ignored
def test_cli_example_data_n_beyond_the_data_set(tmp_path, capsys):
    assert main(["example-data", str(tmp_path), "--n", "100000"]) == 2
    assert "365" in capsys.readouterr().err
    assert not (tmp_path / "kernel.npy").exists()
    assert main(["example-data", str(tmp_path), "--n", "365", "-q"]) == 0
    assert np.load(tmp_path / "kernel.npy").shape == (365, 365)


def test_cli_compare_refuses_repeated_methods(kernel_files, capsys):
    code = main(["compare", kernel_files.kernel, kernel_files.labels_npy, "--methods", "pg",
                 "pg", "-q"])  # fmt: skip
    assert code == 2 and "pg more than once" in capsys.readouterr().err


# item 27
def test_cli_example_data_creates_the_directory_with_readable_files(tmp_path, capsys):
    old = os.umask(0o022)
    try:
        target = tmp_path / "new" / "deeper"
        assert main(["example-data", str(target), "--n", "20"]) == 0
        for name in ("kernel.npy", "labels.txt"):
            assert stat.S_IMODE((target / name).stat().st_mode) == 0o644, name
        # replacing a file keeps the permissions it has
        (target / "labels.txt").chmod(0o640)
        assert main(["example-data", str(target), "--n", "20", "-q"]) == 0
        assert stat.S_IMODE((target / "labels.txt").stat().st_mode) == 0o640
    finally:
        os.umask(old)
    assert "wrote" in capsys.readouterr().out


def test_cli_quiet_prints_no_summary(fitted_files, kernel_files, capsys):
    K, y = kernel_files.kernel, kernel_files.labels_npy
    runs = [
        ["solve", K, y, "--out", str(fitted_files / "r.json")],
        ["compare", K, y, "--methods", "pg"],
        ["fit", str(fitted_files / "Ktr.npy"), str(fitted_files / "y.txt"), "--model",
         str(fitted_files / "m2.skops")],
        ["predict", str(fitted_files / "m.skops"), str(fitted_files / "Kte.npy"), "--out",
         str(fitted_files / "p.txt")],
        ["example-data", str(fitted_files / "ex"), "--n", "20"],
    ]  # fmt: skip
    for argv in runs:
        assert main([*argv, "-q"]) == 0, argv
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err == "", argv
        assert main(argv) == 0, argv
        assert capsys.readouterr().out != "", argv


# Each reproducer below failed (wrong model, hang, crash, corrupted file, silently ignored
# argument or unclear error) on the code before its fix.


def reproducer(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The issue's data: X ~ N(0,1)^{n x 3}, y = sign(X[:, 0]), sigmoid kernel."""
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return np.tanh(0.5 * X @ X.T - 0.2), np.sign(X[:, 0])


# -- 5. CLI: outputs checked first, exit codes, exact file names, integer labels ---------------
@pytest.fixture
def cli_files(tmp_path):
    K, y = reproducer(20)
    np.save(tmp_path / "K.npy", K)
    (tmp_path / "y.txt").write_text("\n".join("5" if v > 0 else "3" for v in y))
    return tmp_path


def _no_solve(monkeypatch):
    import indefsvm.proxy.api

    def fail(*a, **k):
        raise AssertionError("the solver ran before the output paths were checked")

    monkeypatch.setattr(indefsvm.proxy.api, "solve_problem", fail)


@pytest.mark.parametrize("option", ["--out", "--save-kernel", "--plot"])
def test_cli_checks_output_paths_before_solving(cli_files, monkeypatch, capsys, option):
    _no_solve(monkeypatch)
    suffix = {"--out": "r.json", "--save-kernel": "k.npy", "--plot": "g.png"}[option]
    bad = str(cli_files / "missing-dir" / suffix)
    code = main(["solve", str(cli_files / "K.npy"), str(cli_files / "y.txt"), option, bad, "-q"])
    assert code == 2
    assert "does not exist" in capsys.readouterr().err


def test_cli_save_kernel_writes_the_given_name(cli_files, capsys):
    code = main(
        [
            "solve",
            str(cli_files / "K.npy"),
            str(cli_files / "y.txt"),
            "-q",
            "--save-kernel",
            str(cli_files / "kk"),
        ]
    )
    assert code == 2 and ".npy" in capsys.readouterr().err
    target = cli_files / "proxy.npy"
    code = main(
        ["solve", str(cli_files / "K.npy"), str(cli_files / "y.txt"), "--save-kernel", str(target)]
    )
    assert code == 0 and target.exists() and not (cli_files / "proxy.npy.npy").exists()
    assert f"wrote {target}" in capsys.readouterr().out


def test_cli_exit_codes(cli_files, monkeypatch, capsys):
    K, y = str(cli_files / "K.npy"), str(cli_files / "y.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert main(["solve", K, y, "-q", "--max-iter", "1", "--tol", "1e-12"]) == 1
    assert main(["solve", K, y, "-q", "--C", "-1"]) == 2
    assert "C must be" in capsys.readouterr().err
    import indefsvm.proxy.api

    def crash(*a, **k):
        raise RuntimeError("boom")

    monkeypatch.setattr(indefsvm.proxy.api, "solve_problem", crash)
    assert main(["solve", K, y, "-q"]) == 3
    assert "internal error" in capsys.readouterr().err


def test_cli_integer_labels_round_trip_as_integers(cli_files):
    out = cli_files / "r.json"
    assert (
        main(["solve", str(cli_files / "K.npy"), str(cli_files / "y.txt"), "-q", "--out", str(out)])
        == 0
    )
    assert json.loads(out.read_text())["classes"] == [3, 5]


@pytest.mark.parametrize("option", [["--epsilon", "0.1"], ["--nu", "0.5"]])
def test_cli_refuses_options_of_other_problems(cli_files, capsys, option):
    code = main(["solve", str(cli_files / "K.npy"), str(cli_files / "y.txt"), "-q", *option])
    assert code == 2
    assert "does not apply" in capsys.readouterr().err


def test_cli_refuses_labels_for_oneclass(cli_files, capsys):
    code = main(
        ["solve", str(cli_files / "K.npy"), str(cli_files / "y.txt"), "-q", "--problem", "oneclass"]
    )
    assert code == 2 and "takes no y" in capsys.readouterr().err


def test_cli_every_only_where_a_solver_iterates(capsys):
    """--every sets the progress-line period of a solver: solve and compare take it; fit,
    predict and example-data run no iterations, so their --help does not offer it."""
    for name in ("solve", "compare", "fit", "predict", "example-data"):
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0
        text = capsys.readouterr().out
        assert ("--every" in text) == (name in ("solve", "compare")), name
        assert "--quiet" in text and "--verbose" in text, name
    with pytest.raises(SystemExit) as exc:
        main(["example-data", "somewhere", "--every", "5"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --every 5" in capsys.readouterr().err
