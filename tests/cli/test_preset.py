"""The CLI names the paper's algorithm as solve and the estimators do: --preset paper (issue 23)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import indefsvm
from indefsvm.cli import main


@pytest.mark.parametrize("method", ["pg", "accpm"])
def test_cli_preset_paper_runs_the_papers_algorithm(tmp_path, kernel_files, method):
    out = tmp_path / "res.json"
    args = ["solve", kernel_files.kernel, kernel_files.labels_npy, "--quiet", "--max-iter", "30"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("error", FutureWarning)  # no deprecated path inside the CLI
        main([*args, "--method", method, "--preset", "paper", "--out", str(out)])
        ref = indefsvm.solve(
            kernel_files.K0, kernel_files.y, method=method, max_iter=30, options={"preset": "paper"}
        )
        default = indefsvm.solve(kernel_files.K0, kernel_files.y, method=method, max_iter=30)
    data = json.loads(out.read_text())
    assert data["objective"] == pytest.approx(ref.objective, rel=1e-12)
    assert np.allclose(data["alpha"], ref.alpha, rtol=0, atol=1e-12)
    assert not np.allclose(default.alpha, ref.alpha, rtol=0, atol=1e-9)
