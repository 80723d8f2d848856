"""The shared docstring paragraphs (indefsvm.utils.docstrings): placement and the refusals."""

from __future__ import annotations

import inspect

import pytest

from indefsvm.utils.docstrings import fill_doc, filled_doc

PARAGRAPH = """
    p : float
        Positive exponent,

        on two lines.
"""


def test_a_paragraph_takes_the_indentation_of_its_placeholder():
    text = 'Title.\n\n    Parameters\n    ----------\n    {P}\n    q : {"a", "b"}\n    '
    assert fill_doc(text, P=PARAGRAPH) == (
        "Title.\n\n    Parameters\n    ----------\n"
        "    p : float\n        Positive exponent,\n\n        on two lines.\n"
        '    q : {"a", "b"}\n    '
    )
    method = "Title.\n\n        Parameters\n        ----------\n        {P}\n        "
    assert fill_doc(method, P=PARAGRAPH).splitlines()[5] == "            Positive exponent,"


def test_text_around_a_placeholder_and_unused_paragraphs_are_kept():
    filled = fill_doc("    a {P} b.\n", P="x\n    y", UNUSED="z")
    assert filled == "    a x\n        y b.\n"
    assert fill_doc('{"one-shot", "plain"} {0.1, 1} {y\'alpha = 0}') == (
        '{"one-shot", "plain"} {0.1, 1} {y\'alpha = 0}'
    )


def test_an_unknown_placeholder_is_refused():
    with pytest.raises(KeyError, match=r"\{NYSTROM_PARAMS\} names no paragraph"):
        fill_doc("    {NYSTROM_PARAMS}\n", NYSTROEM_PARAMS="nystroem_params : dict")


def test_a_placeholder_left_by_a_paragraph_is_refused():
    with pytest.raises(ValueError, match=r"\{INNER\} is left unfilled"):
        fill_doc("    {OUTER}\n", OUTER="x : int\n    See {INNER}.", INNER="y")


def test_the_decorator_fills_the_docstring_of_a_function():
    @filled_doc(P=PARAGRAPH)
    def power(p: float) -> None:
        """Power.

        Parameters
        ----------
        {P}
        """

    assert inspect.getdoc(power) == (
        "Power.\n\nParameters\n----------\np : float\n    Positive exponent,\n\n    on two lines."
    )
