"""Every exit path of the ``indefsvm`` commands against the one exit-code table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from indefsvm.cli import main
from indefsvm.cli.common import EPILOG, EXIT_CODES, ExitCode

ROOT = Path(__file__).resolve().parents[2]

# The table as documented (hand-written): code -> a word of its meaning.
DOCUMENTED = {0: "success", 1: "certified convergence", 2: "bad input", 3: "internal error",
              130: "interrupted"}  # fmt: skip


def test_the_table_is_the_documented_one_and_each_code_has_one_meaning():
    assert {int(c) for c in ExitCode} == set(DOCUMENTED)
    assert len({int(c) for c in ExitCode}) == len(list(ExitCode))  # no alias: one meaning each
    for code, word in DOCUMENTED.items():
        assert word in EXIT_CODES[ExitCode(code)]
    for code, meaning in EXIT_CODES.items():
        line = re.search(rf"^ +{int(code)}  (.*(?:\n {{7}}.*)*)", EPILOG, re.M)
        assert line and " ".join(line.group(1).split()) == meaning, code


def test_docs_and_help_show_the_table(capsys):
    rows = re.findall(r"^\| (\d+) \| (.*) \|$", (ROOT / "docs" / "cli.md").read_text(), re.M)
    assert {int(c): m for c, m in rows} == {int(c): m for c, m in EXIT_CODES.items()}
    for argv in (["--help"], ["solve", "--help"], ["study", "--help"], ["study", "run", "--help"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0
        assert EPILOG in capsys.readouterr().out, argv


def test_no_command_returns_a_bare_number():
    for path in (ROOT / "indefsvm" / "cli").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant):
                assert not isinstance(node.value.value, int), f"{path.name}:{node.lineno}"


@pytest.fixture
def problem(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, 2))
    K = np.tanh(0.5 * X @ X.T - 0.2)
    y = np.where(X[:, 0] + 0.1 * rng.normal(size=16) > 0, 1, -1)
    np.save(tmp_path / "K.npy", 0.5 * (K + K.T))
    np.savetxt(tmp_path / "y.txt", y, fmt="%d")
    return str(tmp_path / "K.npy"), str(tmp_path / "y.txt")


def test_top_level_exit_paths(problem, tmp_path, monkeypatch, capsys):
    K, y = problem
    assert main(["solve", K, y, "-q"]) == ExitCode.OK == 0
    assert main(["solve", K, y, "-q", "--max-iter", "1"]) == ExitCode.INCOMPLETE == 1
    assert main(["compare", K, y, "-q", "--max-iter", "1", "--methods", "pg"]) == 1
    assert main(["solve", str(tmp_path / "none.npy"), y]) == ExitCode.BAD_INPUT == 2
    assert "does not exist" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # argparse: usage
        main(["solve", K, y, "--no-such-option"])
    assert exc.value.code == ExitCode.BAD_INPUT
    model = str(tmp_path / "m.skops")
    assert main(["fit", K, y, "--model", model, "-q", "--set", "max_iter=5000"]) == 0
    assert main(["predict", model, K, "--out", str(tmp_path / "p.txt"), "-q"]) == 0
    assert main(["predict", str(tmp_path / "none.skops"), K]) == 2
    assert main(["example-data", str(tmp_path / "ex"), "--n", "2"]) == 2

    def bug(*args, **kwargs):
        raise ZeroDivisionError("boom")

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    # the solve command's solver (a public function) fails or is interrupted
    import indefsvm.proxy.api as api

    capsys.readouterr()
    monkeypatch.setattr(api, "solve_problem", bug)
    assert main(["solve", K, y]) == ExitCode.INTERNAL_ERROR == 3
    assert "internal error: ZeroDivisionError: boom" in capsys.readouterr().err
    monkeypatch.setattr(api, "solve_problem", ctrl_c)
    assert main(["solve", K, y]) == ExitCode.INTERRUPTED == 130
    assert "interrupted" in capsys.readouterr().err


def test_study_exit_paths(tmp_path, monkeypatch, capsys):
    from indefsvm.studies import runner
    from indefsvm.studies.spec import load_spec
    from indefsvm.studies.store import Store

    rng = np.random.default_rng(0)
    np.save(tmp_path / "X.npy", rng.normal(size=(20, 2)))
    np.savetxt(tmp_path / "y.txt", np.r_[np.ones(10), -np.ones(10)], fmt="%d")
    spec = tmp_path / "s.toml"
    spec.write_text(
        '[study]\nseed = 0\nouter_folds = 2\ninner_folds = 2\n\n[[datasets]]\nname = "d"\n'
        'features = "X.npy"\nlabels = "y.txt"\n\n[[kernels]]\nname = "linear"\n\n'
        '[[methods]]\nestimator = "SpectrumSVC"\ngrid = { C = [1.0] }\n'
    )
    out = tmp_path / "o"
    Store.create(out, load_spec(spec)).close()
    assert main(["study", "status", str(out)]) == ExitCode.INCOMPLETE
    assert main(["study", "run", str(spec), "--out", str(out), "--quiet", "--no-report"]) == 0
    assert main(["study", "status", str(out)]) == ExitCode.OK
    (tmp_path / "bad.toml").write_text("[study]\nseed = 'x'\n")
    assert main(["study", "run", str(tmp_path / "bad.toml"), "--out", str(tmp_path / "b")]) == 2
    for exc, code in ((KeyboardInterrupt, 130), (ZeroDivisionError, 3)):

        def fail(*args, exc=exc, **kwargs):
            raise exc

        monkeypatch.setattr(runner, "run_study", fail)
        assert main(["study", "run", str(spec), "--out", str(tmp_path / "c")]) == code
