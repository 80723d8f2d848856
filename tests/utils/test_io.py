"""Atomic file output (indefsvm.utils.io): permissions of the written files (issue 22, item 27)."""

from __future__ import annotations

import os
import stat

import pytest

from indefsvm.utils.io import atomic_write


@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_get_the_mode_open_would_give(tmp_path, umask, expected):
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "a.txt", lambda fh: fh.write("x"))
        with open(tmp_path / "b.txt", "w") as fh:  # the reference: a plain open
            fh.write("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == expected
    assert stat.S_IMODE((tmp_path / "b.txt").stat().st_mode) == expected


def test_replacing_a_file_keeps_its_mode(tmp_path):
    target = tmp_path / "a.bin"
    target.write_bytes(b"old")
    target.chmod(0o640)
    atomic_write(target, lambda fh: fh.write(b"new"), binary=True)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
