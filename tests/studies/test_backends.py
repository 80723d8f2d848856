"""Tests of indefsvm.studies.backends."""

from __future__ import annotations

import os

import pytest
from helpers import write_small_study_data, write_study_spec


@pytest.mark.slow
def test_dask_backend_is_quiet_without_verbose(tmp_path):
    import subprocess
    import sys

    write_small_study_data(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "indefsvm.cli", "study", "run", str(write_study_spec(tmp_path)),
         "--out", str(tmp_path / "o"), "--backend", "dask", "--n-jobs", "1", "--quiet",
         "--no-report"],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    info = [x for x in lines if "distributed" in x and "INFO" in x]
    port = [x for x in lines if "8787" in x or "port" in x.lower()]
    assert info == [] and port == [], (info, port)
