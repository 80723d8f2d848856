"""The ``indefsvm study`` command moved to :mod:`indefsvm.cli.study` (issue 23).

This path works for one more release, with a ``FutureWarning``: its names are those of
:mod:`indefsvm.cli.study`, and ``python -m indefsvm.studies.cli`` still runs the command.
"""

from __future__ import annotations

import warnings
from typing import Any

from indefsvm.cli import study as _study

warnings.warn(
    "indefsvm.studies.cli moved to indefsvm.cli.study (issue 23); the old path works for one "
    "more release.",
    FutureWarning,
    stacklevel=2,
)

__all__ = list(_study.__all__)


def __getattr__(name: str) -> Any:
    return getattr(_study, name)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_study.main())
