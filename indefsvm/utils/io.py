"""Reading arrays and labels, and atomic file output.

:func:`read_array` and :func:`read_labels` are the package's one reader of matrices and labels
(``.npy``, ``.csv``, ``.tsv``, ``.txt``): the command line, :func:`indefsvm.datasets.load_matrix`
and the studies' data files all read through them, so they agree on every format; reading never
runs code (``.npy`` without pickle).

Atomic file output: a file is either written completely or left as it was.

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
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np


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


# -- reading arrays and labels --------------------------------------------------------------------
#: Field separator of each text suffix (None: any run of whitespace).
TEXT_DELIMITERS: dict[str, str | None] = {".csv": ",", ".tsv": "\t", ".txt": None, ".dat": None}
#: Every suffix :func:`read_array` and :func:`read_labels` accept.
ARRAY_SUFFIXES: tuple[str, ...] = (".npy", *TEXT_DELIMITERS)
#: Label texts that mean "no label" (compared in lower case, after stripping blanks).
MISSING_LABELS: frozenset[str] = frozenset({"", "nan", "na", "n/a", "none", "null"})
_INTEGER = re.compile(r"[+-]?[0-9]+")


class ReadError(ValueError):
    """A file cannot be read as an array or as labels; the message names the file and why."""


class TableFormatError(ReadError):
    """A text file is not a table of the expected type with the expected field separator."""


class MissingFileError(ReadError, FileNotFoundError):
    """The file to read does not exist (a :class:`ReadError` and a ``FileNotFoundError``)."""


def _source(path: str | os.PathLike[str], what: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise MissingFileError(f"{what} file {str(p)!r} does not exist.")
    if p.is_dir():
        raise ReadError(f"{what} file {str(p)!r} is a directory; expected a file.")
    if p.suffix.lower() not in ARRAY_SUFFIXES:
        raise ReadError(
            f"{what} file {str(p)!r}: expected .npy, .csv, .tsv or .txt (.dat); got {p.suffix!r}."
        )
    return p


def text_delimiter(path: str | os.PathLike[str], delimiter: str | None = None) -> str | None:
    """The field separator of a text file: ``delimiter`` when given, else its suffix's.

    ``.csv`` comma, ``.tsv`` tab, ``.txt`` and ``.dat`` any whitespace (None).
    """
    if delimiter is not None:
        return delimiter
    return TEXT_DELIMITERS.get(Path(path).suffix.lower())


def _describe(delimiter: str | None) -> str:
    return {None: "whitespace", ",": "','", "\t": "tab"}.get(delimiter, repr(delimiter))


def _load_npy(p: Path, what: str) -> np.ndarray:
    try:
        # allow_pickle=False: an object array would be unpickled, which can run code.
        return np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ReadError(f"could not read {what} file {str(p)!r} as a NumPy array: {exc}") from exc


def _load_text(p: Path, what: str, delimiter: str | None, dtype: Any, ndmin: int) -> np.ndarray:
    sep = text_delimiter(p, delimiter)
    try:
        return np.loadtxt(p, delimiter=sep, dtype=dtype, ndmin=ndmin)
    except (ValueError, OSError) as exc:
        kind = "numeric " if dtype is np.float64 else ""
        raise TableFormatError(
            f"could not read {what} file {str(p)!r} as a {kind}table separated by "
            f"{_describe(sep)} ({exc})."
        ) from exc


def read_array(
    path: str | os.PathLike[str],
    *,
    what: str = "array",
    delimiter: str | None = None,
    ndmin: int = 2,
) -> np.ndarray:
    """Read a numeric matrix or vector from ``.npy``, ``.csv``, ``.tsv`` or ``.txt``/``.dat``.

    The one reader of the command line, :func:`indefsvm.datasets.load_matrix` and the studies'
    data files. Reading never runs code: ``.npy`` files are loaded with ``allow_pickle=False``.

    Parameters
    ----------
    path : str or path-like
    what : str
        What the file holds, for the error messages (``"kernel"``, ``"features"``, ...).
    delimiter : str, optional
        Field separator of a text file; None: by suffix (:func:`text_delimiter`).
    ndmin : {1, 2}
        Least number of dimensions of an array read from text (``.npy`` arrays keep theirs).

    Returns
    -------
    ndarray
        float64 from a text file; the stored numeric dtype from ``.npy``.

    Raises
    ------
    MissingFileError
        ``path`` does not exist.
    ReadError
        ``path`` is a directory, has another suffix, or does not hold numbers.
    """
    p = _source(path, what)
    if p.suffix.lower() != ".npy":
        return _load_text(p, what, delimiter, np.float64, ndmin)
    array = _load_npy(p, what)
    if array.dtype.kind not in "biuf":
        raise ReadError(f"{what} file {str(p)!r} holds {array.dtype} values; expected numbers.")
    return array


def parse_labels(tokens: Any, *, what: str = "labels") -> np.ndarray:
    """Labels from their texts: integers, else numbers, else the texts themselves.

    Integers (``int64``) when every label is an integer literal (``"1"``, ``"-1"``, ``"01"``),
    else ``float64`` when every label is a number (``"1.0"``, ``"1e3"``), else the stripped
    texts. A missing label (an empty text, ``nan``, ``NA``, ``None``, ``null``) or an infinite
    one is refused: every object needs a label.

    Parameters
    ----------
    tokens : array_like of str, shape (n,)
    what : str
        Name used in the error messages.

    Returns
    -------
    ndarray of shape (n,)
    """
    text = np.char.strip(np.asarray(tokens).astype(str))
    missing = np.isin(np.char.lower(text), list(MISSING_LABELS))
    if missing.any():
        i, count = int(np.flatnonzero(missing)[0]), int(missing.sum())
        raise ReadError(
            f"{what}: {count} label{'s are' if count > 1 else ' is'} missing or NaN (the first, "
            f"{str(np.asarray(tokens)[i])!r}, on line {i + 1}); expected a label for every object."
        )
    if all(_INTEGER.fullmatch(t) for t in text.tolist()):
        try:
            return text.astype(np.int64)
        except OverflowError:
            pass  # larger than int64: numbers
    try:
        values = text.astype(np.float64)
    except ValueError:
        return text
    _check_finite_labels(values, what)
    return values


def _check_finite_labels(values: np.ndarray, what: str) -> None:
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ReadError(
            f"{what}: {int(np.sum(~np.isfinite(values)))} labels are NaN or infinite (the first "
            f"on line {i + 1}); expected a finite label for every object."
        )


def read_labels(
    path: str | os.PathLike[str], *, what: str = "labels", delimiter: str | None = None
) -> np.ndarray:
    """Read one label (or regression target) per object from a file.

    Text files hold one label per line (or all on one line); they are parsed by
    :func:`parse_labels`. A ``.npy`` file keeps its numeric dtype; text stored in it is parsed
    the same way.

    Parameters
    ----------
    path : str or path-like
    what : str
        Name used in the error messages.
    delimiter : str, optional
        Field separator of a text file; None: by suffix (:func:`text_delimiter`).

    Returns
    -------
    ndarray of shape (n,)

    Raises
    ------
    MissingFileError
        ``path`` does not exist.
    ReadError
        The file cannot be read, is not a vector, or a label is missing or not finite.
    """
    p = _source(path, what)
    npy = p.suffix.lower() == ".npy"
    values = _load_npy(p, what) if npy else _load_text(p, what, delimiter, str, 1)
    if values.ndim == 2 and 1 in values.shape:
        values = values.ravel()
    if values.ndim != 1:
        raise ReadError(
            f"{what} file {str(p)!r}: expected a vector (one label per line); got shape "
            f"{values.shape}."
        )
    name = f"{what} file {str(p)!r}"
    if values.dtype.kind in "US":
        return parse_labels(values, what=name)
    if values.dtype.kind not in "biuf":
        raise ReadError(f"{name} holds {values.dtype} values; expected numbers or text.")
    _check_finite_labels(values, name)
    return values
