"""The thread benchmark runs end to end (``benchmarks/bench_threads.py --smoke``, issue 22)."""

from __future__ import annotations

from helpers import load_script

import indefsvm.threads as T


def _load_bench(name: str):
    return load_script(f"benchmarks/{name}.py")


def test_bench_threads_smoke_prints_the_ratio_table(tmp_path, capsys):
    bench = _load_bench("bench_threads")
    out = tmp_path / "threads.md"
    rows = bench.main(["--smoke", "--out", str(out)])
    estimators = {row["estimator"].split(" m=")[0] for row in rows}
    assert estimators == {
        "IndefiniteSVC",
        "SpectrumSVC",
        "KreinSVC",
        "KreinSquaredHingeSVC",
    }
    assert len(rows) == 5  # IndefiniteSVC dense and low-rank
    for row in rows:
        assert row["default"] > 0 and row["best"] > 0
        assert row["ratio"] == row["default"] / row["best"]
        assert row["best_setting"] != "default"
    table = out.read_text()
    assert "| n | estimator | default (ms) |" in table and "default / best" in table
    assert "Largest default / best" in capsys.readouterr().out
    assert T.THREADS is None  # the benchmark's explicit settings are undone


def test_bench_threads_refuses_bad_arguments(capsys):
    import pytest

    bench = _load_bench("bench_threads")
    for argv in (["--repeats", "0"], ["--sizes", "3"], ["--load", "-1"]):
        with pytest.raises(SystemExit) as excinfo:
            bench.main(argv)
        assert excinfo.value.code == 2
    assert "--repeats must be >= 1" in capsys.readouterr().err


def test_bench_nystrom_eig_smoke_measures_every_method(tmp_path):
    """``benchmarks/bench_nystrom_eig.py --smoke`` (issue 26, item 7) runs and its errors are at
    rounding level against the dense reference."""
    bench = _load_bench("bench_nystrom_eig")
    out = tmp_path / "eig.md"
    rows = bench.main(["--smoke", "--out", str(out)])
    assert {row["method"] for row in rows} == set(bench.METHODS)
    assert {(row["n"], row["m"]) for row in rows} == {(300, 20), (300, 50)}
    for row in rows:
        assert row["reference"] == "dense eigh"
        assert row["eig_error"] < 1e-10 and row["orthogonality"] < 1e-10
        assert row["time"] > 0
    assert "| n | m | r (negative) | method |" in out.read_text()
