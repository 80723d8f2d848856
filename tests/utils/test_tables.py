"""The one table writer (indefsvm.utils.tables), checked against hand-written text."""

from __future__ import annotations

import io

import numpy as np
import pytest

from indefsvm.linalg.spectrum import spectrum_table
from indefsvm.utils.tables import (
    csv_text,
    markdown_header,
    markdown_row,
    markdown_table,
    write_csv,
)


def test_markdown_table_exact_text():
    text = markdown_table(["data set / kernel", "A", "B"], [["x / rbf", "91.00", ""],
                          ["y / tanh", 3, 4.5]], align="lrr")  # fmt: skip
    assert text == (
        "| data set / kernel | A | B |\n"
        "|---|---:|---:|\n"
        "| x / rbf | 91.00 |  |\n"
        "| y / tanh | 3 | 4.5 |"
    )
    assert markdown_table(["a", "b"], []) == "| a | b |\n|---|---|"


def test_header_and_row_stream_the_same_table():
    assert markdown_header(["n", "t"], "rl") == "| n | t |\n|---:|---|"
    assert markdown_row([1, "x"]) == "| 1 | x |"
    whole = markdown_table(["n", "t"], [[1, "x"]], align="rl")
    assert whole == markdown_header(["n", "t"], "rl") + "\n" + markdown_row([1, "x"])


def test_bad_shapes_and_alignments_are_refused():
    with pytest.raises(ValueError, match="row 1 has 1 cells for 2 columns"):
        markdown_table(["a", "b"], [[1, 2], [3]])
    with pytest.raises(ValueError, match="align gives 1 alignments for 2 columns"):
        markdown_table(["a", "b"], [], align="l")
    with pytest.raises(ValueError, match=r"'l' \(left\) or 'r' \(right\).*\['c'\]"):
        markdown_header(["a"], "c")


def test_csv_exact_text_and_file(tmp_path):
    rows = [["a", 1, 0.5], ["b,c", 'say "hi"', float("nan")]]
    expected = 'name,n,x\na,1,0.5\n"b,c","say ""hi""",nan\n'
    assert csv_text(["name", "n", "x"], rows) == expected
    assert csv_text(None, rows[:1]) == "a,1,0.5\n"
    write_csv(tmp_path / "t.csv", ["name", "n", "x"], rows)
    assert (tmp_path / "t.csv").read_bytes() == expected.encode()


def test_spectrum_table_prints_the_same_text_as_before():
    K = np.diag([2.0, -1.0, 0.5])
    out = io.StringIO()
    spectrum_table([("toy", "diag", K)], file=out)
    # iota = 1 / 3.5 = 0.2857...
    assert out.getvalue() == (
        "| dataset | kernel | n | lambda_min | lambda_max | #neg | iota |\n"
        "|---|---|---:|---:|---:|---:|---:|\n"
        "| toy | diag | 3 | -1 | 2 | 1 | 0.286 |\n"
    )
