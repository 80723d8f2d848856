"""Shared numpydoc paragraphs: ``{NAME}`` placeholders in docstrings, filled at import time.

Several estimators and kernels document the same parameter with the same words (the kernel
input ``X`` / ``Y``, a Nystroem option dictionary, the ``fit`` arguments of a classifier).
Each such paragraph is written once, in the module that owns the parameter (e.g.
:data:`indefsvm.base.KERNEL_PARAMS_DOC`), and filled into the docstrings that use it, so the
copies cannot drift apart.

Why not ``str.format`` (or ``%``): docstrings are full of literal braces
(``{"one-shot", "plain"}``, ``{y'alpha = 0}``), which would all need doubling. Only an
upper-case name in braces, ``{NYSTROEM_PARAMS}``, is a placeholder here, and a placeholder that
names no paragraph raises at import time, so a typo cannot ship a docstring that shows
``{NYSTROM_PARAMS}`` to the user.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["fill_doc", "filled_doc"]

_T = TypeVar("_T")

#: A placeholder: an upper-case name (letters, digits, underscores) in braces. Lower-case or
#: quoted braces (``{"plain"}``, ``{0.1, 1}``, ``{y'alpha = 0}``) are text, never placeholders.
_PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")


def fill_doc(text: str, **paragraphs: str) -> str:
    """Replace every ``{NAME}`` placeholder of a docstring with the paragraph ``NAME``.

    Each paragraph is dedented (it may be written flush left or with any common indentation),
    stripped of blank lines at its ends, and its second and later lines are indented like the
    line the placeholder stands on; its first line takes the placeholder's place, so text
    before and after the placeholder on that line is kept. A placeholder on a line of its own,
    indented like the parameters around it, thus yields a paragraph indented like them. The
    result is the same whether the docstring belongs to a function (4 spaces), a method (8) or
    a class attribute set with ``__doc__ = fill_doc(...)``.

    Parameters
    ----------
    text : str
        The docstring with placeholders: upper-case names in braces, e.g. ``{X_Y}``. Other
        braces (``{"exp", "negative"}``) are left alone.
    **paragraphs : str
        The paragraphs by placeholder name. Names that ``text`` does not use are ignored, so
        one set of paragraphs can serve every docstring of a module.

    Returns
    -------
    str
        ``text`` with every placeholder replaced.

    Raises
    ------
    KeyError
        If ``text`` holds a placeholder that names no paragraph.
    ValueError
        If a placeholder is left in the result (a paragraph that itself holds one: paragraphs
        are filled in once, not recursively).
    """

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in paragraphs:
            known = ", ".join(sorted(paragraphs)) or "none"
            raise KeyError(f"docstring placeholder {{{name}}} names no paragraph (known: {known}).")
        line_start = text.rfind("\n", 0, match.start()) + 1
        line = text[line_start : match.start()]
        indent = line[: len(line) - len(line.lstrip())]
        lines = textwrap.dedent(paragraphs[name]).strip("\n").split("\n")
        # Blank lines stay empty (no trailing white space in the docstring).
        return "\n".join([lines[0], *(indent + line if line else line for line in lines[1:])])

    filled = _PLACEHOLDER.sub(replace, text)
    leftover = _PLACEHOLDER.search(filled)
    if leftover is not None:
        raise ValueError(
            f"docstring placeholder {leftover.group(0)} is left unfilled (a paragraph holds it; "
            "paragraphs are not filled recursively)."
        )
    return filled


def filled_doc(**paragraphs: str) -> Callable[[_T], _T]:
    """Decorator form of :func:`fill_doc`: fill the decorated object's ``__doc__`` in place.

    Parameters
    ----------
    **paragraphs : str
        The paragraphs by placeholder name, as in :func:`fill_doc`.

    Returns
    -------
    callable
        The decorator; it returns the object it is given, its ``__doc__`` filled (left
        alone when None, as under ``python -OO``).
    """

    def decorate(obj: _T) -> _T:
        doc = getattr(obj, "__doc__", None)
        if doc is not None:  # None under ``python -OO``: nothing to fill
            obj.__doc__ = fill_doc(doc, **paragraphs)
        return obj

    return decorate
