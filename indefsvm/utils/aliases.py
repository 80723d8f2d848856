"""The module paths of release 0.x before the layout of issue 23, kept importable for one release.

``import indefsvm.estimators`` (or ``indefsvm.solvers.pg``, ...) still works: a finder on
``sys.meta_path`` answers the old name with the module at its new path (the same module object,
so patching through either name patches both) and issues a ``FutureWarning`` that names the new
path. ``indefsvm.proxy`` was a module and is now the paradigm-1 package: its old attributes are
forwarded to :mod:`indefsvm.proxy.operators` by the package itself. Model files written before
the move name classes by their old paths; :mod:`indefsvm.persistence` trusts those names too.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED_MODULES", "install", "new_module_name"]

#: Old module path -> new module path (every submodule of an old package moves with it).
MOVED_MODULES: dict[str, str] = {
    "indefsvm._base": "indefsvm.base",
    "indefsvm._multiclass": "indefsvm.multiclass",
    "indefsvm._probability": "indefsvm.probability",
    "indefsvm._validation": "indefsvm.utils.validation",
    "indefsvm._io": "indefsvm.utils.io",
    "indefsvm._lazy": "indefsvm.utils.lazy",
    "indefsvm._logging": "indefsvm.utils.log",
    "indefsvm._dtw": "indefsvm.kernels._dtw",
    "indefsvm.rank_one": "indefsvm.linalg.rank_one",
    "indefsvm._secular_numba": "indefsvm.linalg._secular_numba",
    "indefsvm.projection": "indefsvm.linalg.projection",
    "indefsvm._linear_time": "indefsvm.linalg._linear_time",
    "indefsvm.spectrum": "indefsvm.linalg.spectrum",
    "indefsvm.nystrom": "indefsvm.approximation.nystrom",
    "indefsvm.problems": "indefsvm.proxy.problems",
    "indefsvm.lowrank": "indefsvm.proxy.lowrank",
    "indefsvm._penalty_numba": "indefsvm.proxy._penalty_numba",
    "indefsvm.protocols": "indefsvm.proxy.protocols",
    "indefsvm.result": "indefsvm.proxy.result",
    "indefsvm.out_of_sample": "indefsvm.proxy.out_of_sample",
    "indefsvm.api": "indefsvm.proxy.api",
    "indefsvm.estimators": "indefsvm.proxy.estimators",
    "indefsvm.baselines": "indefsvm.proxy.baselines",
    "indefsvm._libsvm": "indefsvm.proxy._libsvm",
    "indefsvm.solvers": "indefsvm.proxy.solvers",
}


def new_module_name(old: str) -> str | None:
    """The new path of an old module path (None if ``old`` did not move)."""
    for before, after in MOVED_MODULES.items():
        if old == before or old.startswith(before + "."):
            return after + old[len(before) :]
    return None


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an old module path with the module at its new path."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):  # noqa: ANN201
        if new_module_name(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = new_module_name(spec.name)
        assert new is not None
        warnings.warn(
            f"{spec.name} moved to {new} (issue 23); the old path works for one more release.",
            FutureWarning,
            stacklevel=2,
        )
        # The module keeps its own name and spec: the import system does not override them.
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        pass  # already executed under its new name


_FINDER = _MovedModuleFinder()


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)  # before path finders (an editable install's too)


def legacy_type_names(type_names: tuple[str, ...]) -> tuple[str, ...]:
    """Old spellings (``module.Class``) of types whose module moved."""
    inverse = {new: old for old, new in MOVED_MODULES.items()}
    inverse["indefsvm.proxy.operators"] = "indefsvm.proxy"
    out = []
    for name in type_names:
        module, _, cls = name.rpartition(".")
        for new, old in inverse.items():
            if module == new or module.startswith(new + "."):
                out.append(old + module[len(new) :] + "." + cls)
    return tuple(out)
