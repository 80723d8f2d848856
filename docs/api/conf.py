"""Sphinx configuration for the indefsvm API reference.

Build (from the repository root; any warning is an error)::

    python -m sphinx -W --keep-going -b html docs/api docs/api/_build/html

The pages are generated from the package's numpydoc docstrings by ``sphinx.ext.autodoc`` and the
``numpydoc`` extension (``pip install -e ".[docs]"``; the ``test`` extra has them too, so the
test suite checks the build: ``tests/integration/test_docs.py``). No network access is needed:
intersphinx is not used, so numpy/scipy/scikit-learn names in the docstrings stay plain text.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

# Document the checkout this file belongs to, also when another indefsvm is installed.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import indefsvm  # noqa: E402
import indefsvm.proxy.solvers  # noqa: E402

# ``indefsvm`` and ``indefsvm.proxy.solvers`` import their public names on first use (PEP 562
# ``__getattr__``); ``automodule`` lists a module's members from its namespace, so resolve them
# all once here. New exports then appear in the reference without touching these pages.
for _package in (indefsvm, indefsvm.proxy.solvers):
    for _name in _package.__all__:
        getattr(_package, _name)

project = "indefsvm"
author = "indefsvm developers"
copyright = "indefsvm developers"
version = release = indefsvm.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

# Single backquotes in the docstrings are not cross-references (``code`` and :func:`x` are).
default_role = None

autosummary_generate = False
autodoc_default_options = {
    "members": True,
    "member-order": "bysource",
}
# The numpydoc "Parameters" section documents the types; hints in the signature would repeat
# them (and the NDArray aliases expand to unreadable unions).
autodoc_typehints = "none"
autoclass_content = "class"

# numpydoc: no per-class member tables (autodoc documents the members), types as plain text (no
# intersphinx to resolve "ndarray"), no style validation (ruff and the reviews do that).
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# Never reached at build time (no network).
intersphinx_mapping: dict[str, Any] = {}
nitpicky = False
# Bibliographies in "References" sections (``.. [GE94] ...``) list the sources of a module even
# where the prose names them ("Gu & Eisenstat, 1994") instead of citing ``[GE94]_``.
suppress_warnings = ["ref.citation"]

templates_path: list[str] = []
exclude_patterns = ["_build", "README.md"]
html_theme = "alabaster"
html_static_path: list[str] = []
html_title = f"indefsvm {release} API reference"


def _constant_doc(fullname: str, value: Any) -> list[str] | None:
    """The ``#:`` comment of the constant ``fullname``, found where it is defined."""
    from sphinx.errors import PycodeError
    from sphinx.pycode import ModuleAnalyzer

    package, _, attr = fullname.rpartition(".")
    # The module itself, then its submodules, then the other modules of indefsvm.
    loaded = [m for m in sys.modules if m == "indefsvm" or m.startswith("indefsvm.")]
    order = sorted(loaded, key=lambda m: (m != package, not m.startswith(package + "."), m))
    for modname in order:
        if getattr(sys.modules[modname], attr, object()) is not value:
            continue
        try:
            doc = ModuleAnalyzer.for_module(modname).find_attr_docs().get(("", attr))
        except PycodeError:
            continue
        if doc:
            return list(doc)
    return None


def _skip_member(app, what, name, obj, skip, options):
    # scikit-learn generates ``set_fit_request``, ``set_score_request``... on every estimator
    # subclass; their docstrings point into scikit-learn's own documentation (glossary, labels)
    # and say nothing about indefsvm.
    if re.fullmatch(r"set_\w+_request", name):
        return True
    # A submodule's member that its package re-exports (``indefsvm.krein.lowrank`` ->
    # ``indefsvm.krein.LowRankVCSolution``) is documented once, on the package's page.
    current = app.env.temp_data.get("autodoc:module") or ""
    package = sys.modules.get(current.rpartition(".")[0])
    # (Not for indefsvm itself: its page is written by hand and points to indefsvm.linalg.spectrum.)
    # The layout packages (docs/api/layout.rst) show only their docstrings: their re-exports
    # stay on the pages of the defining modules.
    layout_only = ("indefsvm.proxy", "indefsvm.approximation", "indefsvm.linalg", "indefsvm.utils")
    if (
        what == "module"
        and package is not None
        and package.__name__.startswith("indefsvm.")
        and package.__name__ not in layout_only
    ):
        if name in getattr(package, "__all__", ()) and getattr(package, name, None) is obj:
            return True
    # The estimator pages use ``:inherited-members:``: the methods of our private bases
    # (``_ProxyKernelEstimator``, the Krein mixins) are part of each estimator's interface, those
    # of scikit-learn (get_params, score, ...) and builtins are documented there.
    if what in ("class", "exception"):
        impl = obj.fget if isinstance(obj, property) else getattr(obj, "__func__", obj)
        if callable(impl) or isinstance(obj, property):
            module = getattr(impl, "__module__", None) or ""
            if module != "indefsvm" and not module.startswith("indefsvm."):
                return True
    return None


def _reexported_constant_doc(app, what, name, obj, options, lines):
    # ``indefsvm.SOLVERS`` (a lazy export of indefsvm.proxy.api) or
    # ``indefsvm.krein.KREIN_FORMULATIONS`` (imported from indefsvm.krein.models) would show the
    # docstring of ``dict``/``tuple``:
    # autodoc reads ``#:`` comments only in the module being documented. Take the comment from
    # the module that defines the constant. (``automodule`` skips such constants altogether, so
    # the pages name them with ``autodata``.)
    if what not in ("data", "attribute"):
        return
    doc = _constant_doc(name, obj)
    if doc:
        lines[:] = doc


_TYPED_SECTIONS = {
    "Parameters",
    "Other Parameters",
    "Returns",
    "Yields",
    "Receives",
    "Attributes",
    "Raises",
    "Warns",
}
_TRAILING_UNDERSCORE = re.compile(r"(?<![\\\w])([A-Za-z]\w*?)_(?![\w`])")


def _escape_types(app, what, name, obj, options, lines):
    # The type of a numpydoc entry is plain text to the reader ("ndarray of shape
    # (n, n_components_)"), but reST reads ``n_components_`` as a hyperlink reference to an
    # unknown target (an error). Escape such trailing underscores in the type part of the entry
    # lines of typed sections (outside ``literals``); names are escaped by numpydoc itself.
    section = None
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and line.strip() and set(lines[i + 1].strip()) == {"-"}:
            section = line.strip()
            continue
        if section not in _TYPED_SECTIONS or not line.strip() or line.startswith(" "):
            continue
        if set(line.strip()) == {"-"}:
            continue
        head, sep, typ = line.partition(" : ")
        if not sep:
            if section not in ("Returns", "Yields", "Receives"):
                continue
            head, typ = "", line
        parts = typ.split("``")
        parts[::2] = [_TRAILING_UNDERSCORE.sub(r"\1\\_", part) for part in parts[::2]]
        lines[i] = head + sep + "``".join(parts)


_INITIAL = re.compile(r"^([A-Z](?:\.-[A-Z])?)\. ")


def _reference_list(app, what, name, obj, options, lines):
    # Our "References" sections list one reference per line, author initials first
    # ("P. Y. Simard, ... Title. Venue, 1998.") with unindented continuation lines. reST reads a
    # leading "P." as an enumerator (a broken enumerated list, warning when the next line is not
    # indented) and runs the references together; make them a bullet list instead.
    out: list[str] = []
    in_refs = False
    i = 0
    while i < len(lines):
        line = lines[i]
        header = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"} and line.strip()
        if header:
            in_refs = line.strip() == "References"
            out += [line, lines[i + 1]]
            if in_refs:
                out.append("")
            i += 2
            continue
        if in_refs and line.strip() and not line.startswith((" ", "..")):
            match = _INITIAL.match(line)
            if match:
                if out and out[-1].strip():
                    out.append("")
                out.append("- " + match.group(1) + "\\. " + line[match.end() :])
            else:
                out.append("  " + line)
        else:
            out.append(line)
        i += 1
    lines[:] = out


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    # Before numpydoc (priority 500) parses the lines.
    app.connect("autodoc-process-docstring", _reexported_constant_doc, priority=100)
    app.connect("autodoc-process-docstring", _reference_list, priority=100)
    app.connect("autodoc-process-docstring", _escape_types, priority=100)
