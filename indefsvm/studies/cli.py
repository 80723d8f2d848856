"""The `indefsvm study` command: `run SPEC --out DIR`, `report DIR`, `status DIR`.

Hooked into :mod:`indefsvm.cli` with :func:`add_study_parser` and :func:`handle`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

__all__ = ["add_study_parser", "handle", "main"]


def add_study_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``study`` command (sub-commands run, report, status) to ``subparsers``."""
    p = subparsers.add_parser(
        "study",
        help="comparative studies on equal footing (spec file -> resumable results, report)",
        description=(
            "Run a study declared in a TOML spec (datasets x kernels x methods, shared outer "
            "and inner folds, shared kernel matrices, the same tuning budget), resume it after "
            "an interruption, and report tables and plots. Schema: docs/studies.md."
        ),
    )
    sub = p.add_subparsers(dest="study_command", required=True)
    r = sub.add_parser("run", help="run or resume a study")
    r.add_argument("spec", help="TOML spec file")
    r.add_argument("--out", required=True, help="results directory (created; resumed if present)")
    r.add_argument("--backend", choices=("loky", "dask"), default="loky")
    r.add_argument("--scheduler", default=None, help="Dask scheduler address (default: a local "
                   "cluster of --n-jobs workers)")  # fmt: skip
    r.add_argument("--n-jobs", type=int, default=1, help="worker processes (default 1)")
    r.add_argument("--quiet", action="store_true", help="no progress bar; log lines only")
    r.add_argument("--force-new", action="store_true",
                   help="delete records of a different spec in --out instead of refusing")
    r.add_argument("--no-report", action="store_true", help="skip the report at the end")
    rep = sub.add_parser("report", help="write report.md, summary.csv and plots of a results DIR")
    rep.add_argument("dir")
    st = sub.add_parser("status", help="show how many records of a study are finished")
    st.add_argument("dir")
    p.set_defaults(study_handler=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Execute a parsed ``study`` command; returns the exit code."""
    from indefsvm.studies.spec import SpecError
    from indefsvm.studies.store import SpecChangedError

    quiet = getattr(args, "quiet", False)
    for noisy in ("matplotlib", "distributed"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    try:
        if args.study_command == "run":
            from indefsvm.studies.runner import run_study

            path = run_study(
                args.spec,
                args.out,
                backend=args.backend,
                n_jobs=args.n_jobs,
                scheduler=args.scheduler,
                progress=False if quiet else None,
                force_new=args.force_new,
                report=not args.no_report,
            )
            logging.getLogger("indefsvm.studies").info("results in %s", path.parent)
            return 0
        if args.study_command == "report":
            from indefsvm.studies.report import write_report

            print(write_report(args.dir))
            return 0
        from indefsvm.studies.runner import study_status

        status = study_status(args.dir)
        print(status)
        return 0 if status.complete else 3
    except (SpecError, SpecChangedError, FileNotFoundError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    """``python -m indefsvm.studies.cli ...`` (the same as ``indefsvm study ...``)."""
    parser = argparse.ArgumentParser(prog="indefsvm")
    add_study_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return handle(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
