"""The cluster benchmark runs end to end (``benchmarks/bench_dask.py``, issue 25).

Reference: the benchmark's own in-memory fit in a subprocess (the numpy factor); what is checked
here is that the cluster fit succeeds, restarts no worker, predicts the same labels and reports
every figure docs/benchmarks.md quotes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
KEYS = ("client_peak_rss_mb", "factor_mb", "rmat_ratio", "mat_ratio", "max_decision_difference")


def _run(*args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_dask.py"), *args],
        capture_output=True, text=True, env=env, timeout=600, check=True,
    ).stdout  # fmt: skip
    return json.loads(out[: out.rindex("}") + 1])


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ("--smoke",),
        # The scheduler and two workers started from the shell, as in the must target.
        ("--n", "6000", "--m", "20", "--chunk-rows", "2500", "--tol", "1e-5"),
    ],
    ids=["local-cluster", "shell-cluster"],
)
def test_bench_dask_fit_succeeds_and_predicts_like_the_in_memory_fit(args):
    out = _run(*args)
    assert out["success"], out["error"]
    assert out["worker_restarts"] == 0 and out["workers_before_after"] == [2, 2]
    assert out["predictions_equal"]
    assert out["max_decision_difference"] < 1e-8
    assert out["n_iter"] == out["memory_n_iter"]
    assert all(out[k] > 0 for k in KEYS if k != "max_decision_difference")
