"""Private names the tests use: the figure of issue 37, item 7, per test file.

Counted with :mod:`ast` over ``tests/**/*.py``:

* **imports**: ``from indefsvm... import _name`` (a private name), any import of a private
  module (``indefsvm.x._y``, ``from indefsvm.x import _y`` where ``_y`` is a module), and the
  string forms ``monkeypatch.setattr("indefsvm.x._y", ...)``;
* **attributes**: ``obj._name`` where ``_name`` is not a dunder, and ``getattr/setattr/hasattr``
  or ``monkeypatch.setattr/delattr`` with a literal ``"_name"``. A name the test file defines
  itself in its own classes (a stand-in's methods and state) is not counted: it is no private
  name of the package.

``docs/design.md`` ("Private names in tests") lists the numerical contracts that may use private
names and which; ``tests/utils/test_layout.py`` fails on any use outside that table.

Usage (from the repository root)::

    python tools/private_names.py            # the per-file table and the totals
    python tools/private_names.py --names    # also each file's private names
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "indefsvm"

#: functions whose second argument is an attribute name (``setattr(obj, "_x", ...)``)
NAME_ARGUMENT = {"getattr", "setattr", "hasattr", "delattr"}


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_module(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] == PACKAGE and any(is_private(p) for p in parts[1:])


class Uses:
    """The private names one test file uses: ``imports`` and ``attributes``, each a Counter of
    the name (for an import: the private module or ``module:name``; for an attribute: ``_name``).
    """

    def __init__(self) -> None:
        self.imports: Counter = Counter()
        self.attributes: Counter = Counter()

    def names(self) -> set[str]:
        """Every private name used: attribute names, imported private names, and each private
        component of an imported module path (``indefsvm.linalg._secular_numba`` ->
        ``_secular_numba``)."""
        out = set(self.attributes)
        for entry in self.imports:
            module, _, name = entry.partition(":")
            out.update(p for p in module.split(".")[1:] if is_private(p))
            if name and is_private(name):
                out.add(name)
        return out


def _own_names(tree: ast.AST) -> set[str]:
    """Private names the file defines itself: methods and class attributes of its own classes
    and ``self._x = ...`` assignments in them (a stand-in's own state, no name of the package)."""
    own = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for node in ast.walk(cls):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node in cls.body:
                own.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                # unpack ``self._a, self._b = ...``
                targets = [
                    e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])
                ]
                for target in targets:
                    if isinstance(target, ast.Name) and target in _flat(cls.body):
                        own.add(target.id)
                    elif (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id in ("self", "cls")
                    ):
                        own.add(target.attr)
    return {name for name in own if is_private(name)}


def _flat(body: list[ast.stmt]) -> list[ast.AST]:
    """The targets of the class-level assignments of a class body."""
    out: list[ast.AST] = []
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            out.extend(stmt.targets)
        elif isinstance(stmt, ast.AnnAssign):
            out.append(stmt.target)
    return out


def _string_target(node: ast.Call) -> str | None:
    """``monkeypatch.setattr("indefsvm.a._b.f", value)``: the dotted string, else None."""
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in ("setattr", "delattr")
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
        and node.args[0].value.startswith(PACKAGE + ".")
    ):
        return node.args[0].value
    return None


def _name_argument(node: ast.Call) -> str | None:
    """The literal attribute name of ``getattr(obj, "_x")`` / ``monkeypatch.setattr(obj, "_x",
    v)``, else None."""
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called not in NAME_ARGUMENT or len(node.args) < 2:
        return None
    if isinstance(func, ast.Attribute) and called in ("getattr", "hasattr"):
        return None  # a method of some object, not the builtin
    arg = node.args[1]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return None


def scan(source: str, filename: str = "<test>") -> Uses:
    tree = ast.parse(source, filename=filename)
    own = _own_names(tree)
    uses = Uses()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] != PACKAGE:
                continue
            if private_module(node.module):
                for alias in node.names:
                    uses.imports[f"{node.module}:{alias.name}"] += 1
                continue
            for alias in node.names:
                if is_private(alias.name):
                    uses.imports[f"{node.module}:{alias.name}"] += 1
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if private_module(alias.name):
                    uses.imports[alias.name] += 1
        elif isinstance(node, ast.Attribute):
            if is_private(node.attr) and node.attr not in own:
                uses.attributes[node.attr] += 1
        elif isinstance(node, ast.Call):
            target = _string_target(node)
            if target is not None:
                if private_module(target.rsplit(".", 1)[0]) or is_private(target.rsplit(".")[-1]):
                    module, _, name = target.rpartition(".")
                    uses.imports[f"{module}:{name}"] += 1
                continue
            name = _name_argument(node)
            if name is not None and is_private(name) and name not in own:
                uses.attributes[name] += 1
    return uses


def scan_tests(tests: Path = ROOT / "tests") -> dict[str, Uses]:
    """Every test file (``tests/**/*.py``) with at least one private use, by relative path."""
    out = {}
    for path in sorted(tests.rglob("*.py")):
        uses = scan(path.read_text(), str(path))
        if uses.imports or uses.attributes:
            out[path.relative_to(tests.parent).as_posix()] = uses
    return out


def table(found: dict[str, Uses], *, names: bool = False) -> str:
    width = max([len(p) for p in found] + [5])
    lines = [f"{'file':<{width}}  imports  attributes"]
    for path, uses in found.items():
        lines.append(
            f"{path:<{width}}  {sum(uses.imports.values()):>7}  {sum(uses.attributes.values()):>10}"
        )
        if names:
            lines.append(f"{'':<{width}}    {', '.join(sorted(uses.names()))}")
    imported = set().union(*(u.imports for u in found.values())) if found else set()
    lines.append(
        f"total: {sum(1 for u in found.values() if u.imports)} files import "
        f"{len(imported)} private names ({sum(sum(u.imports.values()) for u in found.values())} "
        f"imports); {len(found)} files touch private attributes "
        f"{sum(sum(u.attributes.values()) for u in found.values())} times"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--names", action="store_true", help="list each file's private names")
    args = parser.parse_args(argv)
    print(table(scan_tests(), names=args.names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
