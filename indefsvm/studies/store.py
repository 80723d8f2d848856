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
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from indefsvm.studies.spec import Study

__all__ = ["RESULT_COLUMNS", "TIMING_COLUMNS", "SpecChangedError", "Store", "StoreError"]

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


class StoreError(ValueError):
    """The results directory cannot hold a store (not a directory, not writable, corrupt)."""


def _connect(path: Path) -> sqlite3.Connection:
    # A generous busy timeout: two runs on one directory wait for each other's transactions
    # instead of failing with "database is locked".
    try:
        return sqlite3.connect(path, isolation_level=None, timeout=60.0)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the study store {path}: {exc}") from None


def _query(conn: sqlite3.Connection, path: Path, sql: str, args: tuple = ()) -> list[tuple]:
    """Run a read query; a file that is not a SQLite database is a StoreError naming it."""
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.DatabaseError as exc:
        raise StoreError(
            f"{path} is not a readable study store ({exc}); move it away or use another "
            "--out directory."
        ) from None


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
        if self.directory.exists() and not self.directory.is_dir():
            raise StoreError(f"{self.directory} is a file, not a results directory.")
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.directory} holds no study ({DB_NAME} is missing).")
        self.conn = _connect(self.path)
        try:
            _query(self.conn, self.path, "PRAGMA synchronous=FULL")
            self._meta("spec_hash")
        except StoreError:
            self.conn.close()
            raise

    @staticmethod
    def check_location(directory: str | Path) -> None:
        """Refuse a results directory that is a file or cannot be written (before any work)."""
        directory = Path(directory)
        if directory.exists() and not directory.is_dir():
            raise StoreError(f"--out {directory} is a file; expected a results directory.")
        parent = directory
        while not parent.exists():
            parent = parent.parent
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            raise StoreError(
                f"--out {directory}: {parent} is not writable; choose a directory you can write."
            )

    @classmethod
    def create(cls, directory: str | Path, study: Study, *, force_new: bool = False) -> Store:
        """Open the store of ``directory`` for ``study``, creating it if needed.

        Creation is race-safe: two runs starting on a fresh directory both end up with the
        one store (``INSERT OR IGNORE`` of the spec, then a comparison, in one transaction). A
        store of a different spec with no record is replaced; one with records is replaced
        only with ``force_new``, atomically (a complete new file is renamed over the old one,
        so the old records survive anything that fails before).

        Raises
        ------
        SpecChangedError
            When the directory holds records of a different spec (and not ``force_new``).
        StoreError
            When the directory is a file, not writable, or holds a corrupt store.
        """
        directory = Path(directory)
        cls.check_location(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the results directory {directory}: {exc}") from None
        path = directory / DB_NAME
        try:
            stored = cls._stored_hash(path)
        except StoreError:
            if not force_new:
                raise
            stored = ""  # a corrupt store is replaced on request like any other
        if stored is not None and stored != study.hash:
            n_records = cls._count_records(path) if stored else 0
            if n_records and not force_new:
                raise SpecChangedError(
                    f"{directory} holds results of a different spec (stored hash {stored[:12]}, "
                    f"this spec {study.hash[:12]}, {n_records} records): the study, its data "
                    "files or their contents changed. Use another --out directory, or "
                    "--force-new to replace the old records."
                )
            cls._replace(path, study)
        else:
            cls._initialise(path, study)
        return cls(directory)

    @staticmethod
    def _initialise(path: Path, study: Study) -> None:
        """Create the tables and the spec rows if missing; refuse a different stored spec."""
        conn = _connect(path)
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")  # one writer at a time from here on
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('spec_hash', ?), ('spec', ?), "
                    "('created', ?)",
                    (study.hash, json.dumps(study.to_dict(), sort_keys=True), repr(time.time())),
                )
                stored = conn.execute("SELECT value FROM meta WHERE key = 'spec_hash'").fetchone()
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(f"{path} is not a usable study store: {exc}") from None
        finally:
            conn.close()
        if stored[0] != study.hash:
            # Another run created the store for a different spec in the meantime.
            raise SpecChangedError(
                f"{path.parent} holds results of a different spec (stored hash "
                f"{stored[0][:12]}, this spec {study.hash[:12]}); use another --out directory."
            )

    @staticmethod
    def _replace(path: Path, study: Study) -> None:
        """Build a new store beside the old one and rename it over it (atomic on POSIX)."""
        tmp = path.with_name(f"{DB_NAME}.new-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        try:
            Store._initialise(tmp, study)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        for suffix in ("-journal", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)

    @staticmethod
    def _stored_hash(path: Path) -> str | None:
        """The spec hash of an existing store (None when there is no store or no spec yet)."""
        if not path.exists():
            return None
        conn = _connect(path)
        try:
            tables = {r[0] for r in _query(conn, path, "SELECT name FROM sqlite_master")}
            if "meta" not in tables:
                return None
            row = _query(conn, path, "SELECT value FROM meta WHERE key = 'spec_hash'")
            return row[0][0] if row else None
        finally:
            conn.close()

    @staticmethod
    def _count_records(path: Path) -> int:
        conn = _connect(path)
        try:
            tables = {r[0] for r in _query(conn, path, "SELECT name FROM sqlite_master")}
            return sum(
                _query(conn, path, f"SELECT COUNT(*) FROM {t}")[0][0]
                for t in ("inner_records", "outer_records")
                if t in tables
            )
        finally:
            conn.close()

    def _meta(self, key: str) -> str:
        rows = _query(self.conn, self.path, "SELECT value FROM meta WHERE key = ?", (key,))
        if not rows:
            raise StoreError(f"{self.path} holds no spec ({key!r} is missing): not a study store.")
        return rows[0][0]

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    # ---- meta

    def study(self) -> Study:
        """The stored spec."""
        text = self._meta("spec")
        try:
            return Study.from_dict(json.loads(text))
        except (ValueError, TypeError, KeyError) as exc:
            raise StoreError(f"{self.path}: the stored spec cannot be read ({exc}).") from None

    def spec_hash(self) -> str:
        """The stored spec hash."""
        return self._meta("spec_hash")

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
