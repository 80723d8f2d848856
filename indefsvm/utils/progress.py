"""One progress helper: a tqdm bar on stderr with the time left, or nothing.

Every bar of the package (a solver's certified-gap progress, the Nystroem passes, a study's
tasks) is drawn by :func:`progress_bar`, so they all show the same things (count, rate, time
left), go to the same stream and are switched off the same way: ``enabled=False`` (``--quiet``),
or ``enabled=None`` when stderr is not a terminal (a log file, a CI job, a worker process).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

__all__ = ["LONG_FIT_ROWS", "ProgressBar", "ensure_visible", "progress_bar", "progress_wanted"]

#: Fits on at least this many rows take long enough (tens of seconds at n = 10^5) to show their
#: progress bars by default, when stderr is a terminal: the Nystroem passes and the solver's
#: certified gap. Smaller fits stay silent unless asked (``verbose``).
LONG_FIT_ROWS = 20_000


def progress_wanted(enabled: bool | None) -> bool:
    """Whether to draw a bar: ``enabled`` when given, else whether stderr is a terminal."""
    if enabled is None:
        isatty = getattr(sys.stderr, "isatty", None)
        return bool(isatty is not None and isatty())
    return bool(enabled)


class ProgressBar:
    """A tqdm bar, or a no-op with the same methods when disabled.

    Use :func:`progress_bar` to make one. ``active`` tells whether a bar is drawn; the drawn
    bar's attributes (``n``, ``total``, ``postfix``, ...) can be read through it.
    """

    def __init__(self, bar: Any = None) -> None:
        self._bar = bar

    @property
    def active(self) -> bool:
        """True when a bar is drawn."""
        return self._bar is not None

    def update(self, n: float = 1) -> None:
        """Advance the bar by ``n`` units."""
        if self._bar is not None:
            self._bar.update(n)

    def set(self, value: float, postfix: str | None = None) -> None:
        """Move the bar to ``value`` units (e.g. a percentage), with an optional note after it."""
        if self._bar is None:
            return
        self._bar.n = value
        if postfix is not None:
            self._bar.set_postfix_str(postfix, refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        """Remove or finish the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __getattr__(self, name: str) -> Any:
        # The drawn bar's own attributes (n, total, desc, postfix, ...) stay readable.
        bar = self.__dict__.get("_bar")
        if bar is None:
            raise AttributeError(f"a disabled progress bar has no attribute {name!r}")
        return getattr(bar, name)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress_bar(
    total: float | None,
    *,
    desc: str,
    unit: str,
    initial: float = 0,
    leave: bool = False,
    enabled: bool | None = None,
) -> ProgressBar:
    """A progress bar on stderr showing the count, the rate and the time left.

    Parameters
    ----------
    total : float or None
        Units to do (None: unknown, no time left).
    desc : str
        Text before the bar.
    unit : str
        Name of a unit (``"task"``, ``"rows"``, ``"%"``).
    initial : float
        Units already done (a resumed study).
    leave : bool
        Keep the finished bar on screen.
    enabled : bool or None
        True: draw the bar (also in a notebook, whose stderr is not a terminal); False: never;
        None: when stderr is a terminal.

    Returns
    -------
    ProgressBar
        A no-op bar when disabled (or when tqdm cannot be imported).
    """
    if not progress_wanted(enabled):
        return ProgressBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return ProgressBar()
    style = {"dynamic_ncols": True, "file": sys.stderr, "leave": leave}
    return ProgressBar(tqdm(total=total, initial=initial, desc=desc, unit=unit, **style))


def ensure_visible(log: logging.Logger) -> None:
    """Make ``verbose=True`` visible when the application configured no logging at all.

    Library code logs; ``verbose`` asks for progress lines, which would be swallowed by Python's
    last-resort handler (warnings only) if nobody configured logging, so a stderr handler is
    attached to the package logger in that case only.
    """
    if log.isEnabledFor(logging.INFO) and (log.handlers or logging.getLogger().handlers):
        return
    from indefsvm.utils.log import console_logger

    pkg = logging.getLogger("indefsvm")
    level = pkg.level if pkg.level != logging.NOTSET and pkg.level <= logging.INFO else logging.INFO
    console_logger(level)
