"""The `indefsvm study` command: `run SPEC --out DIR`, `report DIR`, `status DIR`.

Hooked into :mod:`indefsvm.cli` with :func:`add_study_parser` and :func:`handle`; exit codes,
logging and error exits are the other commands' (:mod:`indefsvm.cli.common`).
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from indefsvm.cli.common import EPILOG, ExitCode, configure_logging, run_command

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_INCOMPLETE",
    "EXIT_INTERNAL_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "add_study_parser",
    "handle",
    "main",
]

# The names of release 0.x (the table is ExitCode).
EXIT_OK, EXIT_INCOMPLETE, EXIT_BAD_INPUT = ExitCode.OK, ExitCode.INCOMPLETE, ExitCode.BAD_INPUT
EXIT_INTERNAL_ERROR, EXIT_INTERRUPTED = ExitCode.INTERNAL_ERROR, ExitCode.INTERRUPTED

log = logging.getLogger("indefsvm.cli.study")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1; got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1; got {value}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0; got {text!r}") from None
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2**32); got {value}")
    return value


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
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="study_command", required=True)
    raw = {"epilog": EPILOG, "formatter_class": argparse.RawDescriptionHelpFormatter}
    r = sub.add_parser("run", help="run or resume a study", **raw)
    r.add_argument("spec", help="TOML spec file")
    r.add_argument("--out", required=True, help="results directory (created; resumed if present)")
    r.add_argument("--backend", choices=("loky", "dask"), default="loky")
    r.add_argument("--scheduler", default=None, help="Dask scheduler address (default: a local "
                   "cluster of --n-jobs workers)")  # fmt: skip
    r.add_argument("--n-jobs", type=_positive_int, default=1,
                   help="worker processes, >= 1 (default 1)")  # fmt: skip
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar; log lines only")
    r.add_argument(
        "--force-new",
        action="store_true",
        help="replace records of a different spec in --out instead of refusing (the new spec "
        "is checked first; the old store is replaced atomically)",
    )
    r.add_argument("--no-report", action="store_true", help="skip the report at the end")
    r.add_argument(
        "--smoke",
        action="store_true",
        help="a small slice of the spec that runs in seconds (every data set, kernel and "
        "method on 40 objects, 2 outer and 2 inner folds, 1-2 grid values): checks that the "
        "spec still runs; its numbers mean nothing",
    )
    r.add_argument("--datasets", nargs="+", metavar="NAME", default=None,
                   help="run only these data sets of the spec (names)")  # fmt: skip
    r.add_argument("--methods", nargs="+", metavar="LABEL", default=None,
                   help="run only these methods of the spec (labels)")  # fmt: skip
    r.add_argument(
        "--seed",
        type=_seed,
        default=None,
        help="replace the spec's study.seed (outer and inner folds, random draws, subsamples): "
        "the same study on other splits, e.g. to measure split variability (a different spec: "
        "use a new --out)",
    )
    rep = sub.add_parser(
        "report", help="write report.md, summary.csv and plots of a results DIR", **raw
    )
    rep.add_argument("dir")
    st = sub.add_parser(
        "status",
        help="show how many records of a study are finished (exit 0 complete, 1 incomplete)",
        **raw,
    )
    st.add_argument("dir")
    for q in (r, rep, st):
        q.add_argument("-v", "--verbose", action="store_true",
                       help="debug output, Dask's INFO lines and tracebacks")  # fmt: skip
    p.set_defaults(study_handler=handle)
    return p


def handle(args: argparse.Namespace) -> int:
    """Execute a parsed ``study`` command; returns the exit code.

    0 success (``status``: complete); 1 ``status`` of an incomplete study; 2 bad input or
    usage (spec, data, results directory, scheduler address); 3 internal error; 130
    interrupted -- the codes of the top-level CLI.
    """
    from indefsvm.studies.backends import BackendError
    from indefsvm.studies.spec import SpecError
    from indefsvm.studies.store import SpecChangedError, StoreError

    # Long runs: each line with its time, level and logger.
    configure_logging(getattr(args, "verbose", False), timestamps=True)
    bad_input = (SpecError, SpecChangedError, StoreError, BackendError, FileNotFoundError)
    return run_command(_study_command, args, log, bad_input)


def _study_command(args: argparse.Namespace) -> int:
    quiet = getattr(args, "quiet", False)
    verbose = getattr(args, "verbose", False)
    if args.study_command == "run":
        from indefsvm.studies.runner import run_study

        spec: Any = args.spec
        datasets = getattr(args, "datasets", None)
        methods = getattr(args, "methods", None)
        smoke = getattr(args, "smoke", False)
        seed = getattr(args, "seed", None)
        if smoke or datasets is not None or methods is not None or seed is not None:
            from dataclasses import replace

            from indefsvm.studies.spec import load_spec, restrict_study, smoke_study

            spec = restrict_study(load_spec(spec), datasets=datasets, methods=methods)
            if seed is not None:
                spec = replace(spec, seed=seed)
            if smoke:
                spec = smoke_study(spec)
        path = run_study(
            spec,
            args.out,
            backend=args.backend,
            n_jobs=args.n_jobs,
            scheduler=args.scheduler,
            progress=False if quiet else None,
            force_new=args.force_new,
            report=not args.no_report,
            verbose=verbose,
        )
        log.info("results in %s", path.parent)
        return EXIT_OK
    if args.study_command == "report":
        from indefsvm.studies.report import write_report

        print(write_report(args.dir))
        return EXIT_OK
    from indefsvm.studies.runner import study_status

    status = study_status(args.dir)
    print(status)
    return EXIT_OK if status.complete else EXIT_INCOMPLETE


def main(argv: list[str] | None = None) -> int:
    """``python -m indefsvm.cli.study ...`` (the same as ``indefsvm study ...``)."""
    parser = argparse.ArgumentParser(prog="indefsvm")
    add_study_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return handle(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
