"""What every ``indefsvm`` command shares: the exit-code table, the logging set-up, the error exits.

The top-level commands (:mod:`indefsvm.cli`) and ``indefsvm study`` (:mod:`indefsvm.cli.study`)
end through :func:`run_command` and configure logging with :func:`configure_logging`, so an
exit code and a message on stderr mean the same whatever the command.

Exit codes (:data:`EXIT_CODES`; also in ``indefsvm --help`` and docs/cli.md):

====  ==========================================================================================
0     success: ``solve``/``compare``/``fit`` certified convergence; ``study status``: complete
1     finished without a complete result: no certified convergence (``max_iter``, ``max_time``,
      ``stalled``; the result is still written), or ``study status``: records are missing
2     bad input or usage: unreadable files, invalid kernel, labels or spec, options that do
      not apply, output paths that cannot be written (checked before any computation)
3     internal error (a bug: please report it with the message; ``-v`` shows the traceback)
130   interrupted (Ctrl-C); a study keeps its committed records
====  ==========================================================================================
"""

from __future__ import annotations

import argparse
import enum
import logging
import sys
import textwrap
import warnings
from collections.abc import Callable
from typing import Any

from indefsvm.utils.log import (
    EXIT_INTERNAL_ERROR,
    StderrHandler,
    console_logger,
    quiet_third_party_loggers,
    report_internal_error,
)

__all__ = [
    "EPILOG",
    "EXIT_CODES",
    "ExitCode",
    "InputError",
    "configure_logging",
    "run_command",
]


class ExitCode(enum.IntEnum):
    """The exit codes of every ``indefsvm`` command (one meaning each)."""

    OK = 0
    #: The command finished without a complete result (no certified convergence; a study
    #: with missing records).
    INCOMPLETE = 1
    BAD_INPUT = 2
    INTERNAL_ERROR = EXIT_INTERNAL_ERROR
    INTERRUPTED = 130


#: Each code's meaning, in the words of ``--help`` and docs/cli.md.
EXIT_CODES: dict[ExitCode, str] = {
    ExitCode.OK: "success (study status: the study is complete)",
    ExitCode.INCOMPLETE: "finished without a complete result: no certified convergence "
    "(the result is still written); study status: records missing",
    ExitCode.BAD_INPUT: "bad input or usage (files, options, spec, output paths)",
    ExitCode.INTERNAL_ERROR: "internal error (a bug: please report it; -v shows the traceback)",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C; a study keeps its committed records)",
}

#: The ``--help`` epilog of every command: the exit-code table (meanings wrapped at 72 columns).
EPILOG = "exit codes:\n" + "\n".join(
    textwrap.fill(meaning, 78, initial_indent=f"  {int(code):>3}  ", subsequent_indent=" " * 7)
    for code, meaning in EXIT_CODES.items()
)


class InputError(Exception):
    """Bad input or usage detected by a command (exit code 2)."""


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    logging.getLogger("indefsvm").warning("%s: %s", category.__name__, message)


def configure_logging(
    verbose: bool = False, quiet: bool = False, *, timestamps: bool = False
) -> None:
    """The one logging set-up of the commands: the ``indefsvm`` logger to stderr.

    Parameters
    ----------
    verbose : bool
        Debug output (and the INFO lines of Dask's ``distributed``).
    quiet : bool
        Warnings and errors only.
    timestamps : bool
        Prefix each line with the time, level and logger (long runs: ``indefsvm study``).
    """
    quiet_third_party_loggers(verbose)
    # Warnings (a ConvergenceWarning, ...) as one line through the package's logger, not
    # Python's "file:line: Category: text" followed by the source line that raised it.
    warnings.showwarning = _show_warning
    level = logging.DEBUG if verbose else (logging.WARNING if quiet else logging.INFO)
    pkg = console_logger(level)
    fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s" if timestamps else "%(message)s"
    for handler in pkg.handlers:
        if isinstance(handler, StderrHandler):  # the package's own; a user's handler is kept
            handler.setFormatter(logging.Formatter(fmt, datefmt="%H:%M:%S"))


def run_command(
    command: Callable[[argparse.Namespace], int],
    args: argparse.Namespace,
    log: logging.Logger,
    bad_input: tuple[type[BaseException], ...] = (),
) -> int:
    """Run ``command(args)`` and turn its end into an exit code of :class:`ExitCode`.

    :class:`InputError` and the ``bad_input`` exceptions print ``error: ...`` on stderr (2);
    Ctrl-C prints ``interrupted`` (130); any other exception is reported as a bug (3).
    """
    try:
        return int(command(args))
    except (InputError, *bad_input) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return int(ExitCode.BAD_INPUT)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - the commands' last line of defence
        return report_internal_error(exc, log)
