"""The ``indefsvm study`` command, now :mod:`indefsvm.cli.study` (kept importable here).

``python -m indefsvm.studies.cli ...`` keeps working; new code imports :mod:`indefsvm.cli.study`.
"""

from __future__ import annotations

from indefsvm.cli.study import (
    EXIT_BAD_INPUT,
    EXIT_INCOMPLETE,
    EXIT_INTERNAL_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    add_study_parser,
    handle,
    main,
)

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

if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
