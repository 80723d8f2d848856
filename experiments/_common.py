"""Shared helpers of the experiment scripts: progress lines, tables (CSV and markdown), solves.

Scripts import them with ``from _common import ...`` (running ``python experiments/x.py`` puts
this folder first on ``sys.path``) instead of keeping their own copies. The paper tables run as
studies share ``_study_wrapper.py``. Scripts are not library code: they print their progress.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: This checkout's ``indefsvm`` first on ``sys.path``, not an installed (editable) copy elsewhere:
#: ``python experiments/x.py`` puts only the script's own folder there. Scripts import this module
#: before ``indefsvm`` (ruff's import order does: ``_common`` sorts with the third-party block).
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def add_smoke_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--smoke``: a tiny setting that goes through the whole script in seconds.

    The test suite runs every script with it (``tests/experiments/test_smoke.py``) so that
    nothing rots unnoticed; its numbers mean nothing. Without ``--out`` a smoke run writes to a
    fresh temporary directory, never over the results of a real run.
    """
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny setting through the whole script in seconds (numbers mean nothing); "
        "outputs go to a temporary directory unless --out is given",
    )


def output_dir(out: str | Path | None, smoke: bool, default: str | Path) -> Path:
    """The output directory: ``out`` if given, else a temporary one (smoke) or ``default``."""
    if out is not None:
        return Path(out)
    if smoke:
        return Path(tempfile.mkdtemp(prefix="indefsvm-smoke-"))
    return Path(default)


def log(msg: str, *, enabled: bool = True) -> None:
    """Print a time-stamped progress line (and flush: runs are long and often redirected)."""
    if enabled:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def markdown_table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], *, align: str | None = None
) -> list[str]:
    """Lines of a markdown table (:func:`indefsvm.utils.tables.markdown_table`)."""
    from indefsvm.utils import tables

    return tables.markdown_table(columns, rows, align=align).split("\n")


def write_csv_and_markdown(
    out: Path, columns: Sequence[str], rows: Sequence[Sequence[Any]], caption: str,
    *, stem: str = "summary",
) -> None:  # fmt: skip
    """Write ``out/<stem>.csv`` and ``out/<stem>.md`` (caption, blank line, table); print the md."""
    from indefsvm.utils import tables

    tables.write_csv(out / f"{stem}.csv", columns, rows)
    lines = [caption, "", *markdown_table(columns, rows)]
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


def append_csv_row(path: Path, row: dict[str, Any]) -> None:
    """Append one row to a CSV file, writing the header first when the file is new.

    Long runs append as they go, so an interrupted run keeps every finished row.
    """
    new = not path.exists()
    with path.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)


def solve_to_limit(K0: Any, y: Any, **options: Any) -> Any:
    """``indefsvm.solve`` with its ConvergenceWarning silenced.

    The convergence and timing experiments stop runs at an iteration or time cap on purpose and
    record ``res.status`` and the certified gap; the warning would only repeat that.
    """
    from sklearn.exceptions import ConvergenceWarning

    import indefsvm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return indefsvm.solve(K0, y, **options)
