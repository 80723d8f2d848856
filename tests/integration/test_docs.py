"""The API reference (``docs/api``) builds without a warning and documents the public API.

The build is the documented command (README, "Documentation") with the output in a temporary
directory: about 10 s of CPU, most of it importing the package, scikit-learn and cvxpy.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import posixpath
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "api"

#: The one documented command (README and docs/api/index.rst).
COMMAND = "python -m sphinx -W --keep-going -b html docs/api docs/api/_build/html"

#: Modules whose public names (``__all__``, else the public functions and classes defined there)
#: must each appear in the reference.
DOCUMENTED_MODULES = (
    "indefsvm",
    "indefsvm.proxy.protocols",
    "indefsvm.proxy.lowrank",
    "indefsvm.linalg.factor",
    "indefsvm.approximation.nystrom",
    "indefsvm.krein",
    "indefsvm.krein.lowrank",
    "indefsvm.kernels",
    "indefsvm.linalg.spectrum",
    "indefsvm.datasets",
    "indefsvm.metrics",
    "indefsvm.plotting",
    "indefsvm.proxy.solvers",
    "indefsvm.proxy.operators",
    "indefsvm.linalg.projection",
    "indefsvm.linalg.rank_one",
    "indefsvm.persistence",
    "indefsvm.threads",
)


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Run the documented build into a temporary directory; return (process, html dir)."""
    out = tmp_path_factory.mktemp("docs")
    args = COMMAND.split()[1:]
    assert args[-2:] == ["docs/api", "docs/api/_build/html"]
    # Same options, fresh environment (-E), doctrees and pages outside the checkout.
    args = [*args[:-2], "-E", "-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    proc = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    return proc, out / "html"


def _inventory(html: Path) -> set[str]:
    """Python objects of the reference (written with --keep-going even when a warning fails it)."""
    from sphinx.util.inventory import InventoryFile

    assert (html / "objects.inv").is_file(), "the docs build wrote no objects.inv"
    with open(html / "objects.inv", "rb") as fh:
        inventory = InventoryFile.load(fh, "", posixpath.join)
    return {name for role, names in inventory.items() if role.startswith("py:") for name in names}


def _public_names(module) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == module.__name__
    ]


def test_build_has_no_warnings(build):
    proc, html = build
    assert proc.returncode == 0, f"sphinx failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr
    # Python warnings too (-W fails on Sphinx's own only): a FutureWarning of a moved module
    # means a page documents a name through a deprecated path.
    assert not re.search(r"\w+Warning: ", proc.stderr), proc.stderr
    assert (html / "index.html").is_file()


def test_public_api_is_documented(build):
    proc, html = build
    documented = _inventory(html)
    missing = []
    for modname in DOCUMENTED_MODULES:
        module = importlib.import_module(modname)
        for name in _public_names(module):
            obj = getattr(module, name)
            # A re-export may be documented where it is defined (indefsvm.is_psd lives on the
            # indefsvm.linalg.spectrum page), a submodule as a module...
            # ...and a submodule's name re-exported by its package on the package's page.
            parts = modname.split(".")
            targets = {f"{'.'.join(parts[:i])}.{name}" for i in range(1, len(parts) + 1)}
            if inspect.ismodule(obj):
                targets.add(obj.__name__)
            elif hasattr(obj, "__module__") and hasattr(obj, "__qualname__"):
                targets.add(f"{obj.__module__}.{obj.__qualname__}")
            if not targets & documented:
                missing.append(f"{modname}.{name}")
    assert not missing, (
        f"public names missing from the API reference (no docstring, or not listed in "
        f"docs/api/*.rst -- docs/api/indefsvm.rst lists the top-level names by hand): {missing}"
    )


def test_every_public_module_has_a_page(build):
    """Each top-level module is documented, or re-exported by ``indefsvm`` (api, result, ...)."""
    proc, html = build
    documented = _inventory(html)
    import indefsvm

    # the modules defining the top-level names (constants such as METHODS have no __module__)
    reexported = {getattr(getattr(indefsvm, name), "__module__", None) for name in indefsvm.__all__}
    missing = [
        info.name
        for info in pkgutil.iter_modules(indefsvm.__path__, "indefsvm.")
        if not info.name.rpartition(".")[2].startswith("_")
        and info.name not in documented
        and info.name not in reexported
    ]
    assert not missing, (
        f"modules without a page in the API reference: {missing}; add "
        f"'.. automodule:: <module>' to a page of docs/api (and the page to docs/api/index.rst)"
    )


def test_command_is_documented():
    readme = (ROOT / "README.md").read_text()
    index = (DOCS / "index.rst").read_text()
    assert COMMAND in readme, "README's Documentation section must show the docs build command"
    assert COMMAND in index
