"""One table writer: markdown and CSV from columns and rows.

The study report, :func:`indefsvm.linalg.spectrum.spectrum_table`, the experiment scripts and
the benchmarks write their tables through these functions, so a table looks the same wherever
it is written. Cells are written with ``str`` (format numbers before); a column is aligned left
(``"l"``, ``---``) or right (``"r"``, ``---:``).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["csv_text", "markdown_header", "markdown_row", "markdown_table", "write_csv"]

_MARKS = {"l": "---", "r": "---:"}


def markdown_row(cells: Iterable[Any]) -> str:
    """One row of a markdown table: ``| a | b |`` (cells written with ``str``)."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _separator(n_columns: int, align: str | Sequence[str] | None) -> str:
    marks = ["l"] * n_columns if align is None else list(align)
    if len(marks) != n_columns:
        raise ValueError(
            f"align gives {len(marks)} alignments for {n_columns} columns; expected one per column."
        )
    bad = sorted({m for m in marks if m not in _MARKS})
    if bad:
        raise ValueError(f"align must hold 'l' (left) or 'r' (right) per column; got {bad}.")
    return "|" + "|".join(_MARKS[m] for m in marks) + "|"


def markdown_header(columns: Sequence[Any], align: str | Sequence[str] | None = None) -> str:
    """The header and separator lines of a markdown table (joined by a newline).

    Parameters
    ----------
    columns : sequence
        Column titles.
    align : str or sequence of {"l", "r"}, optional
        One alignment per column, e.g. ``"llr"``; None: every column left.

    Returns
    -------
    str
        Two lines, without a final newline.
    """
    return markdown_row(columns) + "\n" + _separator(len(columns), align)


def markdown_table(
    columns: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    *,
    align: str | Sequence[str] | None = None,
) -> str:
    """A markdown table: header, separator and one line per row (no final newline).

    Parameters
    ----------
    columns : sequence
        Column titles.
    rows : iterable of sequences
        The cells of each row, written with ``str``; a row may be shorter than ``columns``
        only if it is empty (an empty table body).
    align : str or sequence of {"l", "r"}, optional
        One alignment per column; None: every column left.

    Returns
    -------
    str

    Examples
    --------
    >>> markdown_table(["name", "n"], [["a", 1], ["b", 22]], align="lr").splitlines()
    ['| name | n |', '|---|---:|', '| a | 1 |', '| b | 22 |']
    """
    lines = [markdown_header(columns, align)]
    for i, row in enumerate(rows):
        row = list(row)
        if len(row) != len(columns):
            raise ValueError(
                f"row {i} has {len(row)} cells for {len(columns)} columns; expected one cell "
                "per column."
            )
        lines.append(markdown_row(row))
    return "\n".join(lines)


def csv_text(columns: Sequence[Any] | None, rows: Iterable[Sequence[Any]]) -> str:
    """CSV text (comma-separated, quoted where needed, ``\\n`` line ends) of a table.

    ``columns`` None writes the rows only.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if columns is not None:
        writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def write_csv(
    path: str | os.PathLike[str], columns: Sequence[Any] | None, rows: Iterable[Sequence[Any]]
) -> None:
    """Write :func:`csv_text` of a table to ``path`` (atomically: complete or not at all)."""
    from indefsvm.utils.io import atomic_write

    text = csv_text(columns, rows)
    atomic_write(path, lambda fh: fh.write(text))
