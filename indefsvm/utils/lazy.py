"""Lazy attributes of a package (PEP 562), shared by ``indefsvm`` and ``indefsvm.proxy.solvers``.

A package lists ``name -> defining module`` and its lazily imported submodules; the first access
imports the module and caches the value in the package's namespace, so later accesses are plain
attribute lookups. This keeps ``import indefsvm`` (and the CLI's start-up) free of scikit-learn,
cvxpy and LIBSVM until a name that needs them is used.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def attach(
    package: str, exports: Mapping[str, str], submodules: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module-level ``__getattr__`` and ``__dir__`` for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : mapping of str to str
        Public name -> fully qualified module that defines it.
    submodules : iterable of str
        Submodules reachable as attributes (``indefsvm.krein``) without an explicit import.
    """
    submodules = tuple(submodules)

    def __getattr__(name: str) -> Any:
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
            setattr(sys.modules[package], name, value)
            return value
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports, *submodules})

    return __getattr__, __dir__
