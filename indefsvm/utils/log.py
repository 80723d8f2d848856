"""The package logger's console handler.

Library code only logs (``logging.getLogger("indefsvm...")``); when nobody configured logging and
the user asks for output (``verbose=True``, the CLI), one handler is attached to the ``indefsvm``
logger. It writes to whatever ``sys.stderr`` is at the time of each record, not to the stream
that was current when it was attached, so redirected or replaced streams (pytest's capture,
notebooks) never see writes to a closed file.
"""

from __future__ import annotations

import logging
import os
import sys

#: Exit code of every ``indefsvm`` command that ends on an unexpected exception (a bug).
EXIT_INTERNAL_ERROR = 3


class StderrHandler(logging.StreamHandler):
    """A ``StreamHandler`` bound to the current ``sys.stderr``."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setFormatter(logging.Formatter("%(message)s"))

    @property  # type: ignore[override]
    def stream(self):  # noqa: D102 - the current stderr, always
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # StreamHandler.__init__ assigns it; ignored
        pass


def _with_stderr_handler() -> logging.Logger:
    """The ``indefsvm`` logger, with one :class:`StderrHandler` attached."""
    pkg = logging.getLogger("indefsvm")
    if not any(isinstance(h, StderrHandler) for h in pkg.handlers):
        pkg.addHandler(StderrHandler())
    return pkg


def console_logger(level: int) -> logging.Logger:
    """The ``indefsvm`` logger with one :class:`StderrHandler` and the given level."""
    pkg = _with_stderr_handler()
    pkg.setLevel(level)
    return pkg


def report_internal_error(exc: BaseException, log: logging.Logger) -> int:
    """Log at ERROR that ``exc`` is a bug (traceback at debug level); the exit code 3.

    Every ``indefsvm`` command (also ``indefsvm study``) ends an unexpected exception this way.
    ``log`` is a logger below ``indefsvm``; the command's console handler (attached here if the
    command has not attached it yet) shows the message on stderr.
    """
    _with_stderr_handler()
    log.debug("internal error", exc_info=True)
    log.error(
        "internal error: %s: %s\nThis is a bug in indefsvm; please report it with the command "
        "line (run with -v for the traceback).",
        type(exc).__name__,
        exc,
    )
    return EXIT_INTERNAL_ERROR


def quiet_third_party_loggers(verbose: bool = False) -> None:
    """Dask's ``distributed`` and matplotlib log at WARNING unless ``verbose``.

    ``distributed`` configures its loggers when it is imported (INFO), so this is called again
    by the Dask backend after the import.
    """
    level = logging.DEBUG if verbose else logging.WARNING
    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    names = ["distributed", "bokeh", "tornado"] + [
        n for n in logging.root.manager.loggerDict if n.startswith("distributed.")
    ]
    for name in names:
        logging.getLogger(name).setLevel(level)


def user_stacklevel() -> int:
    """``stacklevel`` for :func:`warnings.warn` that names the first frame outside the package.

    Called by the function that warns: the warning then points at the user's line however
    many of the package's wrappers (parameter validation, thread settings, the Dask progress
    bar, the one-vs-one template) stand between it and the caller, instead of a count that
    each new wrapper silently shifts.
    """
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame = frame.f_back
        level += 1
    return level
