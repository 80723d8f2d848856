"""Tests of indefsvm.studies.data: data files are read like the CLI reads them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SMALL_STUDY, write_small_study_data, write_study_spec

from indefsvm.studies import SpecError, load_spec
from indefsvm.studies.data import load_dataset


def test_whitespace_txt_features_are_read_like_the_cli_reads_them(tmp_path):
    X, y = write_small_study_data(tmp_path)
    np.savetxt(tmp_path / "X.txt", X)  # whitespace-separated, the CLI's .txt format
    spec = load_spec(write_study_spec(tmp_path, SMALL_STUDY.replace("X.npy", "X.txt")))
    data = load_dataset(spec.datasets[0])
    np.testing.assert_array_equal(data.X, np.loadtxt(tmp_path / "X.txt"))
    np.testing.assert_array_equal(data.y, y)
    (tmp_path / "bad.txt").write_text("1 2 x\n3 4 5\n")
    spec = load_spec(write_study_spec(tmp_path, SMALL_STUDY.replace("X.npy", "bad.txt")))
    with pytest.raises(SpecError, match=r"features = '.*bad\.txt'.*whitespace"):
        load_dataset(spec.datasets[0])
