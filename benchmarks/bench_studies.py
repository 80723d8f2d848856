"""What a user waits for in ``indefsvm study run``: wall time per backend, harness overhead.

One small study (the two UCI rows of ``experiments/main_study.toml``: ionosphere and
haberman, sigmoid kernel, IndefiniteSVC / SpectrumSVC-clip / KreinClassifier / KreinSVC,
5 outer x 3 inner folds, 6 candidates per method) is run, in the same process and on the same
machine state, with

* ``loky`` and one worker (in the driver process),
* ``loky`` with ``--n-jobs`` workers,
* ``dask`` on a fresh ``LocalCluster`` of ``--n-jobs`` workers (start-up included),

each into a fresh directory (``--repeats`` times; median). Printed: wall time, the sum of the
fit + predict + kernel times recorded in the test records plus the tuning fit times (the work
itself), the overhead ratio wall x workers / work, and the same-run speed-up against one
worker. The three runs also check that ``results.csv`` is byte-identical.

Run: ``python benchmarks/bench_studies.py [--n-jobs 2] [--repeats 1]``
"""

from __future__ import annotations

import argparse
import csv
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_line  # noqa: E402

from indefsvm.studies import run_study  # noqa: E402
from indefsvm.studies.spec import load_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _work_seconds(out: Path) -> float:
    total = 0.0
    with open(out / "timings.csv") as fh:
        for r in csv.DictReader(fh):
            total += sum(float(r[c]) for c in ("fit_time", "predict_time", "kernel_time"))
    import sqlite3

    con = sqlite3.connect(out / "study.sqlite")
    total += con.execute("SELECT COALESCE(SUM(fit_time), 0) FROM inner_records").fetchone()[0]
    con.close()
    return total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    base = load_spec(ROOT / "experiments" / "main_study.toml")
    from dataclasses import replace

    study = replace(base, name="bench", datasets=tuple(d for d in base.datasets
                                                        if d.name != "digits-3-5"))  # fmt: skip
    print(machine_line())
    configs = [("loky", 1), ("loky", args.n_jobs), ("dask", args.n_jobs)]
    rows, ref = [], None
    for backend, n_jobs in configs:
        walls, works = [], []
        for _ in range(args.repeats):
            out = Path(tempfile.mkdtemp(prefix="bench_studies_"))
            t0 = time.perf_counter()
            run_study(study, out, backend=backend, n_jobs=n_jobs, progress=False, report=False)
            walls.append(time.perf_counter() - t0)
            works.append(_work_seconds(out))
            data = (out / "results.csv").read_bytes()
            ref = data if ref is None else ref
            assert data == ref, "results differ between backends"
            shutil.rmtree(out)
        rows.append((backend, n_jobs, statistics.median(walls), statistics.median(works)))
    one = rows[0][2]
    print(f"{'backend':>8} {'workers':>7} {'wall (s)':>9} {'work (s)':>9} {'wall*w/work':>11} "
          f"{'speed-up':>8}")  # fmt: skip
    for backend, n_jobs, wall, work in rows:
        print(f"{backend:>8} {n_jobs:>7} {wall:9.1f} {work:9.1f} {wall * n_jobs / work:11.2f} "
              f"{one / wall:8.2f}")  # fmt: skip
    print("results.csv identical across backends: yes")


if __name__ == "__main__":
    main()
