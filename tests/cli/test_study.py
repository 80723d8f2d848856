"""Tests of the study CLI (indefsvm.cli.study through indefsvm.cli.main): exit codes and
messages, interruption, status.
"""

from __future__ import annotations

import os

import pytest
from helpers import SMALL_STUDY, write_small_study_data, write_study_spec

from indefsvm.cli import main
from indefsvm.studies import Store, load_spec, run_study, study_status


def test_cli_user_errors_exit_2_with_a_message(tmp_path, capsys):
    write_small_study_data(tmp_path)
    spec = str(write_study_spec(tmp_path))
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
    write_small_study_data(tmp_path)
    spec = str(write_study_spec(tmp_path))
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
    write_small_study_data(tmp_path)
    code = main(["study", "run", str(write_study_spec(tmp_path)), "--out", str(tmp_path / "o"),
                 "--backend", "dask", "--scheduler", f"tcp://127.0.0.1:{port}"])  # fmt: skip
    assert code == 2 and "cannot reach the Dask scheduler" in capsys.readouterr().err


def test_cli_ctrl_c_internal_errors_and_incomplete_status(tmp_path, capsys, monkeypatch):
    from indefsvm.cli import study as study_cli
    from indefsvm.studies import runner

    write_small_study_data(tmp_path)
    spec, out = str(write_study_spec(tmp_path)), str(tmp_path / "o")

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


def test_random_search_with_unsorted_grid_keys_is_complete_after_a_run(tmp_path, capsys):
    write_small_study_data(tmp_path)
    method = 'estimator = "SpectrumSVC"\nparams = { spectrum = "clip" }\ngrid = { C = [0.1, 1.0] }'
    # Keys deliberately not in sorted order (the README's main job has the same grid).
    krein = (
        'estimator = "KreinClassifier"\n'
        "grid = { lambda_plus = [0.01, 0.1, 1.0], lambda_minus = [0.01, 0.1, 1.0] }"
    )
    spec = SMALL_STUDY.replace(method, krein)
    spec = spec.replace("inner_folds = 2", 'inner_folds = 2\nsearch = "random"\nn_iter = 3')
    out = tmp_path / "out"
    assert main(["study", "run", str(write_study_spec(tmp_path, spec)), "--out", str(out),
                 "--quiet", "--no-report"]) == 0  # fmt: skip
    status = study_status(out)
    assert status.complete, status
    assert main(["study", "status", str(out)]) == 0
    assert "(complete)" in capsys.readouterr().out
