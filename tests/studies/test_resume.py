"""A study survives ``kill -9`` and gives the same results on a two-worker Dask cluster."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from indefsvm.studies import run_study

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

SPEC = """
[study]
name = "resume"
seed = 0
outer_folds = 3
inner_folds = 2
scoring = "accuracy"
metrics = ["recall"]

[[datasets]]
name = "blobs"
features = "X.npy"
labels = "y.txt"

[[datasets]]
name = "haberman"
loader = "haberman"
max_samples = 80

[[kernels]]
name = "sigmoid"
params = { coef0 = -1.0 }
grid = { gamma = [0.5, 2.0] }
scale = { gamma = "inverse_n_features" }

[[methods]]
estimator = "IndefiniteSVC"
params = { tol = 1e-6 }
grid = { C = [0.1, 10.0] }

[[methods]]
estimator = "SpectrumSVC"
label = "flip"
params = { spectrum = "flip" }
grid = { C = [0.1, 10.0] }

[[methods]]
estimator = "KreinClassifier"
grid = { lambda_plus = [0.01, 1.0] }

[[methods]]
estimator = "KreinSVC"
"""


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("study")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(70, 4))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=70) > 0, 1, -1)
    np.save(d / "X.npy", X)
    np.savetxt(d / "y.txt", y, fmt="%d")
    (d / "study.toml").write_text(SPEC)
    run_study(d / "study.toml", d / "reference", n_jobs=1, report=False)
    return d


def _count(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
        try:
            return con.execute("SELECT COUNT(*) FROM inner_records").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def _finished(db: Path) -> dict[tuple, float]:
    con = sqlite3.connect(db)
    try:
        return {
            tuple(r[:5]): r[5]
            for r in con.execute(
                "SELECT dataset, kernel, method, params, outer_fold, finished_at FROM inner_records"
            )
        }
    finally:
        con.close()


def test_kill_9_and_resume_gives_byte_identical_results(study_dir):
    out = study_dir / "killed"
    cmd = [sys.executable, "-m", "indefsvm.cli", "study", "run", str(study_dir / "study.toml"),
           "--out", str(out), "--quiet", "--no-report"]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db = out / "study.sqlite"
    deadline = time.monotonic() + 300
    while _count(db) < 8 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the study finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    before = _finished(db)
    total = 3 * 2 * (2 * 2 + 2 * 2 + 2 * 2 + 2)  # folds x data sets x tuning candidates
    assert 8 <= len(before) < total
    assert not (out / "results.csv").exists()

    status = subprocess.run(
        [sys.executable, "-m", "indefsvm.cli", "study", "status", str(out)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert status.returncode == 1 and f"tuning records {len(before)}/{total}" in status.stdout

    resumed = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(before)} already done" in resumed.stderr
    after = _finished(db)
    # No finished record was recomputed.
    assert all(after[k] == v for k, v in before.items()) and len(after) == total
    ref = study_dir / "reference"
    assert (out / "results.csv").read_bytes() == (ref / "results.csv").read_bytes()
    assert (out / "search.csv").read_bytes() == (ref / "search.csv").read_bytes()


def test_dask_local_cluster_gives_identical_results(study_dir):
    """``--backend dask --scheduler ADDR`` on a two-worker LocalCluster (processes, 1 thread)."""
    from dask.distributed import LocalCluster

    from indefsvm.cli import main

    out = study_dir / "dask"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:  # fmt: skip
        code = main(["study", "run", str(study_dir / "study.toml"), "--out", str(out),
                     "--backend", "dask", "--scheduler", cluster.scheduler_address,
                     "--quiet", "--no-report"])  # fmt: skip
    assert code == 0
    ref = study_dir / "reference"
    assert (out / "results.csv").read_bytes() == (ref / "results.csv").read_bytes()
    assert (out / "search.csv").read_bytes() == (ref / "search.csv").read_bytes()
