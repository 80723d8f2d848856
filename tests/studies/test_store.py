"""Tests of indefsvm.studies.store: replacing, keeping and creating result stores."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from helpers import SMALL_STUDY, count_store_records, write_small_study_data, write_study_spec

from indefsvm.cli import main
from indefsvm.studies import SpecError, Store, load_spec, run_study


def test_force_new_keeps_the_old_store_when_the_new_spec_fails(tmp_path, capsys):
    write_small_study_data(tmp_path)
    out = tmp_path / "out"
    good = write_study_spec(tmp_path)
    assert main(["study", "run", str(good), "--out", str(out), "--quiet", "--no-report"]) == 0
    before = count_store_records(out)
    old_hash = Store(out).spec_hash()
    bad = write_study_spec(
        tmp_path, SMALL_STUDY.replace("C = [0.1, 1.0]", "C = [0.1, -1.0]"), "bad.toml"
    )
    code = main(["study", "run", str(bad), "--out", str(out), "--force-new", "--quiet"])
    assert code == 2 and "methods[0].grid.C" in capsys.readouterr().err
    assert count_store_records(out) == before and Store(out).spec_hash() == old_hash
    # A bad data file fails after the spec is parsed: the old store is still intact.
    np.savetxt(tmp_path / "y.txt", np.r_[np.ones(39), np.nan])
    changed = write_study_spec(
        tmp_path, SMALL_STUDY.replace("seed = 0", "seed = 1"), "changed.toml"
    )
    assert main(["study", "run", str(changed), "--out", str(out), "--force-new"]) == 2
    assert "NaN" in capsys.readouterr().err
    assert count_store_records(out) == before and Store(out).spec_hash() == old_hash
    assert not [p for p in os.listdir(out) if p.startswith("study.sqlite.new")]


def test_a_rejected_spec_leaves_no_store_that_blocks_the_fixed_one(tmp_path):
    X, y = write_small_study_data(tmp_path)
    np.savetxt(tmp_path / "y_nan.txt", np.r_[y[:-1], np.nan])
    out = tmp_path / "out"
    with pytest.raises(SpecError, match=r"y_nan\.txt.*NaN"):
        run_study(
            write_study_spec(tmp_path, SMALL_STUDY.replace("y.txt", "y_nan.txt")), out, report=False
        )
    assert not (out / "study.sqlite").exists()
    run_study(write_study_spec(tmp_path), out, report=False, progress=False)
    assert count_store_records(out) == (2 * 4, 2)


def test_an_empty_store_of_another_spec_is_replaced(tmp_path):
    write_small_study_data(tmp_path)
    out = tmp_path / "out"
    other = load_spec(
        write_study_spec(tmp_path, SMALL_STUDY.replace("seed = 0", "seed = 9"), "o.toml")
    )
    Store.create(out, other).close()  # e.g. left by an older version after a rejected spec
    run_study(write_study_spec(tmp_path), out, report=False, progress=False)
    assert count_store_records(out) == (8, 2)


def test_concurrent_store_creation_is_race_safe(tmp_path):
    write_small_study_data(tmp_path)
    study = load_spec(write_study_spec(tmp_path))
    errors = []
    for trial in range(10):
        out = tmp_path / f"out{trial}"
        barrier = threading.Barrier(6)

        def create(out=out, barrier=barrier):
            barrier.wait()
            try:
                Store.create(out, study).close()
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=create) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert Store(out).spec_hash() == study.hash
    assert errors == []
