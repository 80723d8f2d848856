"""Atomic file output: a file is either written completely or left as it was.

Every file the package writes (result JSON, kernels, plots) goes through :func:`atomic_write`:
the content is written to a temporary file in the target's directory and renamed over the
target (``os.replace`` is atomic on POSIX and Windows within one file system), so an exception
half way through serialisation, a full disk or an interrupt never leaves a truncated or
half-overwritten file behind. The file gets the permissions a plain ``open`` would give it
(``0o666`` less the umask, e.g. ``0o644``), or keeps those of the file it replaces, not the
``0o600`` of :func:`tempfile.mkstemp`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any


def check_writable(path: str | os.PathLike[str], *, what: str = "output") -> Path:
    """Raise a clear ``ValueError`` now if ``path`` cannot be written later.

    Used before long computations so that a bad output path does not lose the run.
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{what} path {str(p)!r} is a directory; expected a file name.")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"{what} path {str(p)!r}: directory {str(parent)!r} does not exist.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{what} path {str(p)!r}: directory {str(parent)!r} is not writable.")
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"{what} path {str(p)!r} exists and is not writable.")
    return p


_UMASK_LOCK = threading.Lock()


def _umask() -> int:
    """The process umask, read without changing it where the system allows."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    # Elsewhere the only way to read it is to set it; the lock keeps our own threads from
    # creating files in between.
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def _target_mode(p: Path) -> int:
    try:
        return p.stat().st_mode & 0o777  # replacing a file keeps its permissions
    except OSError:
        return 0o666 & ~_umask()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temporary file next to ``path``; on success rename it to ``path``.

    On any exception the temporary file is removed and ``path`` is untouched.
    """
    p = Path(path)
    mode_bits = _target_mode(p)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent or ".")
    try:
        with os.fdopen(fd, mode) as fh:
            os.chmod(tmp, mode_bits)
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write(
    path: str | os.PathLike[str], writer: Callable[[IO[Any]], None], *, binary: bool = False
) -> Path:
    """Call ``writer(fh)`` on a temporary file and rename it to ``path`` when it succeeds."""
    with atomic_open(path, "wb" if binary else "w") as fh:
        writer(fh)
    return Path(path)
