"""Resumable result store: SQLite (standard library), one committed row per record.

``DIR/study.sqlite`` holds

* ``meta`` -- the spec hash and the normalised spec (JSON), so that ``status`` and ``report``
  need no spec file and a changed spec is detected;
* ``inner`` -- one row per (data set, kernel, method, candidate parameters, outer fold): the
  candidate's mean inner-CV score;
* ``outer`` -- one row per (data set, kernel, method, outer fold): the selected parameters and
  the scores on the outer test part, times, certified gap, status, kernel indefiniteness,
  library versions and seed.

Every row is written in its own transaction by the driver process only, so a ``kill -9``
loses at most the task that was running; a re-run skips every committed row.

``DIR/results.csv`` (outer rows without timing columns; byte-identical between an
interrupted-and-resumed run and an uninterrupted one), ``DIR/timings.csv`` (the timing
columns) and ``DIR/search.csv`` (inner rows without times) are exported from the database.
"""

from __future__ import annotations

import csv
import json
import math
import sqlite3
import time
from pathlib import Path
from typing import Any

from indefsvm.studies.spec import Study

__all__ = ["RESULT_COLUMNS", "TIMING_COLUMNS", "SpecChangedError", "Store"]

DB_NAME = "study.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS inner_records (
    dataset TEXT NOT NULL, kernel TEXT NOT NULL, method TEXT NOT NULL, params TEXT NOT NULL,
    outer_fold INTEGER NOT NULL, score REAL, scores TEXT NOT NULL, status TEXT NOT NULL,
    warnings TEXT NOT NULL, fit_time REAL, finished_at REAL NOT NULL,
    PRIMARY KEY (dataset, kernel, method, params, outer_fold)
);
CREATE TABLE IF NOT EXISTS outer_records (
    dataset TEXT NOT NULL, kernel TEXT NOT NULL, method TEXT NOT NULL,
    outer_fold INTEGER NOT NULL, params TEXT NOT NULL, score REAL, metrics TEXT NOT NULL,
    inner_score REAL, status TEXT NOT NULL, gap REAL, relative_gap REAL, iota REAL,
    n_train INTEGER, n_test INTEGER, seed INTEGER, warnings TEXT NOT NULL,
    versions TEXT NOT NULL, fit_time REAL, predict_time REAL, kernel_time REAL,
    finished_at REAL NOT NULL,
    PRIMARY KEY (dataset, kernel, method, outer_fold)
);
"""

#: Columns of ``results.csv`` (no timing: identical across runs of the same spec).
RESULT_COLUMNS = (
    "dataset",
    "kernel",
    "method",
    "outer_fold",
    "score",
    "metrics",
    "params",
    "inner_score",
    "status",
    "gap",
    "relative_gap",
    "iota",
    "n_train",
    "n_test",
    "seed",
    "warnings",
    "versions",
)
#: Columns of ``timings.csv``.
TIMING_COLUMNS = (
    "dataset",
    "kernel",
    "method",
    "outer_fold",
    "n_train",
    "fit_time",
    "predict_time",
    "kernel_time",
    "finished_at",
)


class SpecChangedError(RuntimeError):
    """The results directory was created by a different spec."""


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _fmt(x: Any) -> str:
    if x is None:
        return "nan"
    if isinstance(x, float):
        return repr(x)
    return str(x)


class Store:
    """The SQLite store of one results directory.

    Parameters
    ----------
    directory : path
        Results directory (created if needed).
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.directory} holds no study ({DB_NAME} is missing).")
        self.conn = sqlite3.connect(self.path, isolation_level=None)
        self.conn.execute("PRAGMA synchronous=FULL")

    @classmethod
    def create(cls, directory: str | Path, study: Study, *, force_new: bool = False) -> Store:
        """Open the store of ``directory`` for ``study``, creating it if needed.

        Raises
        ------
        SpecChangedError
            When the directory holds records of a different spec (unless ``force_new``, which
            deletes them).
        """
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / DB_NAME
        if force_new and path.exists():
            path.unlink()
            for suffix in ("-journal", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.executescript(_SCHEMA)
        row = conn.execute("SELECT value FROM meta WHERE key = 'spec_hash'").fetchone()
        if row is None:
            with conn:
                conn.execute("BEGIN")
                conn.execute(
                    "INSERT INTO meta VALUES ('spec_hash', ?), ('spec', ?), ('created', ?)",
                    (study.hash, json.dumps(study.to_dict(), sort_keys=True), repr(time.time())),
                )
        elif row[0] != study.hash:
            conn.close()
            raise SpecChangedError(
                f"{directory} holds results of a different spec (stored hash {row[0][:12]}, this "
                f"spec {study.hash[:12]}): the study, its data files or their contents changed. "
                "Use another --out directory, or --force-new to delete the old records."
            )
        conn.close()
        return cls(directory)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    # ---- meta

    def study(self) -> Study:
        """The stored spec."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
        return Study.from_dict(json.loads(row[0]))

    def spec_hash(self) -> str:
        """The stored spec hash."""
        return self.conn.execute("SELECT value FROM meta WHERE key = 'spec_hash'").fetchone()[0]

    # ---- writing (one transaction per record)

    def write_inner(self, r: dict[str, Any]) -> None:
        """Commit one inner record (a result of :func:`indefsvm.studies.harness.run_task`)."""
        t = r["task"]
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.execute(
                "INSERT OR REPLACE INTO inner_records VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (t.dataset, t.kernel, t.method, t.params, t.outer_fold, _num(r["score"]),
                 json.dumps([_num(s) for s in r["scores"]]), r["status"], r["warnings"],
                 _num(r["fit_time"]), time.time()),
            )  # fmt: skip

    def write_outer(self, r: dict[str, Any]) -> None:
        """Commit one outer record."""
        t = r["task"]
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.execute(
                "INSERT OR REPLACE INTO outer_records VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (t.dataset, t.kernel, t.method, t.outer_fold, t.params, _num(r["score"]),
                 json.dumps({k: _num(v) for k, v in r["metrics"].items()}, sort_keys=True),
                 _num(r["inner_score"]), r["status"], _num(r["gap"]), _num(r["relative_gap"]),
                 _num(r["iota"]), r["n_train"], r["n_test"], r["seed"], r["warnings"],
                 r["versions"], _num(r["fit_time"]), _num(r["predict_time"]),
                 _num(r["kernel_time"]), time.time()),
            )  # fmt: skip

    # ---- reading

    def inner_done(self) -> set[tuple]:
        """Keys of the committed inner records."""
        rows = self.conn.execute(
            "SELECT dataset, kernel, method, params, outer_fold FROM inner_records"
        )
        return {tuple(r) for r in rows}

    def inner_scores(self) -> dict[tuple, dict[str, float]]:
        """(data set, kernel, method, fold) -> {params: mean inner score (NaN if failed)}."""
        out: dict[tuple, dict[str, float]] = {}
        for d, k, m, p, f, s in self.conn.execute(
            "SELECT dataset, kernel, method, params, outer_fold, score FROM inner_records"
        ):
            out.setdefault((d, k, m, f), {})[p] = math.nan if s is None else s
        return out

    def outer_done(self) -> set[tuple]:
        """Keys of the committed outer records."""
        rows = self.conn.execute("SELECT dataset, kernel, method, outer_fold FROM outer_records")
        return {tuple(r) for r in rows}

    def outer_records(self) -> list[dict[str, Any]]:
        """Every outer record as a dict (unordered)."""
        cur = self.conn.execute("SELECT * FROM outer_records")
        names = [c[0] for c in cur.description]
        rows = []
        for row in cur:
            r = dict(zip(names, row, strict=True))
            r["metrics"] = json.loads(r["metrics"])
            rows.append(r)
        return rows

    def counts(self) -> tuple[int, int]:
        """Numbers of committed (inner, outer) records."""
        n_in = self.conn.execute("SELECT COUNT(*) FROM inner_records").fetchone()[0]
        n_out = self.conn.execute("SELECT COUNT(*) FROM outer_records").fetchone()[0]
        return int(n_in), int(n_out)

    # ---- export

    def export(self, study: Study) -> list[Path]:
        """Write ``results.csv``, ``timings.csv`` and ``search.csv`` in a fixed order."""
        from indefsvm.studies.harness import plan_outer_keys

        order = {key: i for i, key in enumerate(plan_outer_keys(study))}
        rows = sorted(
            (r for r in self.outer_records()
             if (r["dataset"], r["kernel"], r["method"], r["outer_fold"]) in order),
            key=lambda r: order[(r["dataset"], r["kernel"], r["method"], r["outer_fold"])],
        )  # fmt: skip
        paths = []
        path = self.directory / "results.csv"
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(RESULT_COLUMNS)
            for r in rows:
                w.writerow(
                    [_fmt(r[c]) if c != "metrics" else json.dumps(r[c], sort_keys=True)
                     for c in RESULT_COLUMNS]
                )  # fmt: skip
        paths.append(path)
        path = self.directory / "timings.csv"
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(TIMING_COLUMNS)
            for r in rows:
                w.writerow([_fmt(r[c]) for c in TIMING_COLUMNS])
        paths.append(path)
        path = self.directory / "search.csv"
        cur = self.conn.execute(
            "SELECT dataset, kernel, method, outer_fold, params, score, scores, status, warnings "
            "FROM inner_records ORDER BY dataset, kernel, method, outer_fold, params"
        )
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow([c[0] for c in cur.description])
            for row in cur:
                w.writerow([_fmt(x) for x in row])
        paths.append(path)
        return paths
