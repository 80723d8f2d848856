"""The package logger's console handler.

Library code only logs (``logging.getLogger("indefsvm...")``); when nobody configured logging and
the user asks for output (``verbose=True``, the CLI), one handler is attached to the ``indefsvm``
logger. It writes to whatever ``sys.stderr`` is at the time of each record, not to the stream
that was current when it was attached, so redirected or replaced streams (pytest's capture,
notebooks) never see writes to a closed file.
"""

from __future__ import annotations

import logging
import sys


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


def console_logger(level: int) -> logging.Logger:
    """The ``indefsvm`` logger with one :class:`StderrHandler` and the given level."""
    pkg = logging.getLogger("indefsvm")
    if not any(isinstance(h, StderrHandler) for h in pkg.handlers):
        pkg.addHandler(StderrHandler())
    pkg.setLevel(level)
    return pkg
