"""The package's layout: layers that import only downwards, no import circle, a small root.

Every ``import`` counts, also those inside functions (a deferred import is still a dependency:
circles used to hide there); only ``if TYPE_CHECKING:`` blocks are left out (they never run).
The graph is built from the source with :mod:`ast`, and the circles are the strongly connected
components of more than one module. Imports by a string (``importlib.import_module``, the lazy
re-exports of :mod:`indefsvm.utils.lazy`) are not seen.

The layers, lowest first (:data:`LAYERS`; a *unit* is a subpackage ``indefsvm/<name>/`` or a
root module ``indefsvm/<name>.py``, and ``indefsvm`` itself is the root ``__init__``, the lazy
public API). A unit imports only units of strictly lower layers, never one of its own layer
(the two paradigms ``proxy`` and ``krein`` share what is below them but not each other):

0. ``utils``: plumbing (validation, constraints, io, log, lazy, progress, fingerprints, dask rows)
1. ``threads``: thread counts of every fit
2. ``linalg``, ``kernels``, ``metrics``: numerical building blocks, knowing no estimator
3. ``approximation``, ``datasets``: the Nystroem map (on the kernels), data sets (kernels)
4. ``base``, ``probability``: the estimator contract shared by both paradigms, Platt scaling
5. ``inputs``: the input map of a fit (dense kernel, kernel function, Nystroem features, a
   one-vs-one pair's rows of a shared map), on the base
6. ``multiclass``: one-vs-one on top of the base and the input map
7. ``proxy``, ``krein``: paradigm 1 and paradigm 2
8. ``indefsvm`` (the root ``__init__``), ``plotting``: the public API, figures of fitted models
9. ``persistence``, ``studies``: model files, comparative studies (through the public API)
10. ``cli``: the command line, on everything

A private module (``_name``, or one inside a private package) is imported only from inside its
own unit.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "indefsvm"


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _import_graph(modules: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        # every import, also inside functions, but not in ``if TYPE_CHECKING:`` (module docstring)
        for node in _imports(ast.parse(path.read_text(), filename=str(path)), module_level=False):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                # "from pkg import sub" depends on pkg.sub when that is a module, else on pkg
                subs = [f"{node.module}.{a.name}" for a in node.names]
                targets = [s for s in subs if s in modules] or [node.module]
            else:
                continue
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_circle_between_modules():
    graph = _import_graph(_modules())
    # The package __init__ re-exports lazily by name (strings), so it imports nothing above it.
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]


def test_at_most_ten_modules_at_the_package_root():
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= 10, root


# -- layers: imports point down ------------------------------------------------------------------

#: Units of the package by layer, lowest first (see the module docstring).
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"utils"}),
    frozenset({"threads"}),
    frozenset({"linalg", "kernels", "metrics"}),
    frozenset({"approximation", "datasets"}),
    frozenset({"base", "probability"}),
    frozenset({"inputs"}),
    frozenset({"multiclass"}),
    frozenset({"proxy", "krein"}),
    frozenset({"indefsvm", "plotting"}),
    frozenset({"persistence", "studies"}),
    frozenset({"cli"}),
)


def _unit(module: str) -> str:
    """``indefsvm.proxy.solvers.pg`` -> ``proxy``; ``indefsvm.base`` -> ``base``; the root
    package ``indefsvm`` is its own unit."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, *, module_level: bool) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of a module, without ``if TYPE_CHECKING:`` bodies; with
    ``module_level`` also without the bodies of functions (class bodies run on import)."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
            continue
        if module_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def _targets(node: ast.Import | ast.ImportFrom, importer: str, modules: dict) -> list[str]:
    """The package modules an import statement depends on (relative imports resolved)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
        return [n for n in names if n in modules]
    base = node.module or ""
    if node.level:
        package = importer if modules[importer].name == "__init__.py" else importer
        package_parts = package.split(".")
        if modules[importer].name != "__init__.py":
            package_parts = package_parts[:-1]
        package_parts = package_parts[: len(package_parts) - (node.level - 1)]
        base = ".".join(package_parts + ([base] if base else []))
    # "from pkg import sub" depends on pkg.sub when that is a module, else on pkg
    subs = [f"{base}.{a.name}" for a in node.names]
    found = [s for s in subs if s in modules] or [base]
    return [t for t in found if t in modules]


def _layered_graph(modules: dict[str, pathlib.Path], *, module_level: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in _imports(tree, module_level=module_level):
            graph[name].update(t for t in _targets(node, name, modules) if t != name)
    return graph


def _layer_violations(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """Imports that do not point to a strictly lower layer, and modules in no layer."""
    level = {unit: i for i, units in enumerate(layers) for unit in units}
    bad = []
    for module in sorted(graph):
        unit = _unit(module)
        if unit not in level:
            bad.append(f"{module}: unit {unit!r} is in no layer (add it to LAYERS)")
            continue
        for target in sorted(graph[module]):
            other = _unit(target)
            if other == unit or other not in level:
                continue
            if level[other] >= level[unit]:
                bad.append(
                    f"{module} imports {target}: layer {level[other]} ({other}) is not below "
                    f"layer {level[unit]} ({unit})"
                )
    return bad


def _private_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a private module (a ``_name`` component) from outside its unit."""
    bad = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            private = any(p.startswith("_") for p in target.split(".")[1:])
            if private and _unit(target) != _unit(module):
                bad.append(f"{module} imports the private module {target}")
    return bad


def _cross_unit_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    return [c for c in _circles(graph) if len({_unit(m) for m in c}) > 1]


def test_no_module_level_import_circle_between_subpackages():
    graph = _layered_graph(_modules(), module_level=True)
    assert _cross_unit_circles(graph) == []


def test_every_import_points_to_a_lower_layer():
    graph = _layered_graph(_modules(), module_level=False)
    assert _layer_violations(graph) == []


def test_no_private_module_of_another_subpackage_is_imported():
    graph = _layered_graph(_modules(), module_level=False)
    assert _private_imports(graph) == []


def test_the_layer_checks_find_upward_private_and_circular_imports(tmp_path):
    package = tmp_path / "pkg"
    for sub in ("low", "high"):
        (package / sub).mkdir(parents=True)
        (package / sub / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "low" / "_impl.py").write_text("")
    (package / "low" / "api.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.high import mod\n"  # not counted
        "def f():\n    from pkg.high.mod import g\n"  # counted: a deferred upward import
    )
    (package / "high" / "mod.py").write_text(
        "from pkg.low import api\nfrom pkg.low._impl import x\nfrom . import other\n"
    )
    (package / "high" / "other.py").write_text("import pkg.low.api\n")
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(tmp_path).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    layers = (frozenset({"low"}), frozenset({"high"}), frozenset({"pkg"}))
    everything = _layered_graph(modules, module_level=False)
    assert everything["pkg.high.mod"] == {"pkg.low.api", "pkg.low._impl", "pkg.high.other"}
    assert _layer_violations(everything, layers) == [
        "pkg.low.api imports pkg.high.mod: layer 1 (high) is not below layer 0 (low)"
    ]
    assert _layer_violations(everything, (frozenset({"low"}),))[:2] == [
        "pkg: unit 'pkg' is in no layer (add it to LAYERS)",
        "pkg.high: unit 'high' is in no layer (add it to LAYERS)",
    ]
    assert _private_imports(everything) == ["pkg.high.mod imports the private module pkg.low._impl"]
    assert _cross_unit_circles(everything) == [["pkg.high.mod", "pkg.high.other", "pkg.low.api"]]
    # at module level the deferred import does not count: no circle
    assert _cross_unit_circles(_layered_graph(modules, module_level=True)) == []


# -- the tests mirror the package ------------------------------------------------------------------

TESTS = PACKAGE.parent / "tests"
#: test folders that do not mirror a subpackage: whole-package checks and the repository's scripts
OTHER_TEST_FOLDERS = {"integration", "experiments", "tools", "benchmarks"}


def _misplaced_test_files(tests: pathlib.Path, package: pathlib.Path) -> list[str]:
    """Test files outside the mirrored layout, each with the reason.

    ``tests/<sub>/.../test_*.py`` must mirror a subpackage ``indefsvm/<sub>/...`` (or sit in one
    of :data:`OTHER_TEST_FOLDERS`), and its folder must be a package (an ``__init__.py``: test
    files of the same name in different folders must not collide); ``tests/test_<name>.py``
    must name a root module or subpackage of ``indefsvm``.
    """
    roots = {p.stem for p in package.glob("*.py")} | {p.name for p in package.iterdir()}
    bad = []
    for path in sorted(tests.rglob("test_*.py")):
        rel = path.relative_to(tests)
        folder = rel.parent
        if folder == pathlib.Path("."):
            if not any(
                path.stem == f"test_{r}" or path.stem.startswith(f"test_{r}_") for r in roots
            ):
                bad.append(f"{rel}: names no root module or subpackage of {package.name}")
            continue
        if folder.parts[0] not in OTHER_TEST_FOLDERS and not (package / folder).is_dir():
            bad.append(f"{rel}: {package.name}/{folder} is not a subpackage")
        for depth in range(1, len(folder.parts) + 1):
            if not (tests / pathlib.Path(*folder.parts[:depth]) / "__init__.py").is_file():
                bad.append(f"{rel}: tests/{pathlib.Path(*folder.parts[:depth])} has no __init__.py")
    return bad


def _conftest_importers(tests: pathlib.Path) -> list[str]:
    """Python files under ``tests`` (other than conftest.py itself) that import ``conftest``."""
    found = []
    for path in sorted(tests.rglob("*.py")):
        if path.name == "conftest.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n.split(".")[-1] == "conftest" for n in names):
                found.append(str(path.relative_to(tests)))
                break
    return found


def test_every_test_file_mirrors_a_module_of_the_package():
    assert _misplaced_test_files(TESTS, PACKAGE) == []


def test_no_test_file_imports_from_conftest():
    # shared data builders live in tests/helpers.py; conftest.py holds fixtures and hooks only
    assert _conftest_importers(TESTS) == []


def test_the_layout_checks_find_misplaced_files(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "root.py").write_text("")
    (package / "sub" / "mod.py").write_text("")
    tests = tmp_path / "tests"
    for folder in ("sub", "nosuch", "integration"):
        (tests / folder).mkdir(parents=True)
    (tests / "sub" / "__init__.py").write_text("")
    (tests / "integration" / "__init__.py").write_text("")
    for name in ("test_root.py", "test_root_topic.py", "sub/test_mod.py", "integration/test_x.py"):
        (tests / name).write_text("import numpy\n")
    assert _misplaced_test_files(tests, package) == []
    (tests / "test_issue7.py").write_text("")
    (tests / "nosuch" / "test_mod.py").write_text("from conftest import x\n")
    assert _misplaced_test_files(tests, package) == [
        "nosuch/test_mod.py: pkg/nosuch is not a subpackage",
        "nosuch/test_mod.py: tests/nosuch has no __init__.py",
        "test_issue7.py: names no root module or subpackage of pkg",
    ]
    assert _conftest_importers(tests) == ["nosuch/test_mod.py"]


# -- private names in tests: only the numerical contracts of docs/design.md ------------------------

DESIGN = PACKAGE.parent / "docs" / "design.md"


def _private_names_tool():
    from helpers import load_script

    return load_script("tools/private_names.py", "private_names_tool")


def _contract_rows(text: str) -> list[tuple[str, list[str], list[str]]]:
    """The rows of the table "Private names in tests" of docs/design.md: (contract, file
    patterns relative to tests/, name patterns), read from the backticked cells."""
    import re

    begin, end = "<!-- private-names:begin -->", "<!-- private-names:end -->"
    block = text[text.index(begin) + len(begin) : text.index(end)]
    rows = []
    for line in block.strip().splitlines()[2:]:  # after the header and the rule
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append(
            (cells[0], re.findall(r"`([^`]+)`", cells[1]), re.findall(r"`([^`]+)`", cells[2]))
        )
    return rows


def _private_name_violations(found: dict, rows: list) -> list[str]:
    """Uses outside the table (a file's private name no row of that file allows), and names a
    row lists that no file of the row uses any more (``*`` patterns may stay unused)."""
    from fnmatch import fnmatchcase

    bad = []
    for path, uses in sorted(found.items()):
        rel = path.removeprefix("tests/")
        allowed = [
            n for _, files, names in rows if any(fnmatchcase(rel, f) for f in files) for n in names
        ]
        for name in sorted(uses.names()):
            if not any(fnmatchcase(name, pattern) for pattern in allowed):
                bad.append(f"tests/{rel} uses {name}, in no row of docs/design.md for this file")
    for contract, files, names in rows:
        used = set().union(
            *(
                u.names()
                for p, u in found.items()
                if any(fnmatchcase(p.removeprefix("tests/"), f) for f in files)
            )
        )
        for name in names:
            if "*" not in name and name not in used:
                bad.append(f"{contract}: {name} is listed but no file of the row uses it")
    return bad


def test_tests_use_private_names_only_for_the_listed_contracts():
    tool = _private_names_tool()
    rows = _contract_rows(DESIGN.read_text())
    assert len(rows) >= 10 and all(files and names for _, files, names in rows)
    assert _private_name_violations(tool.scan_tests(TESTS), rows) == []


def test_the_private_name_check_finds_uses_outside_the_table(tmp_path):
    tool = _private_names_tool()
    source = (
        "import indefsvm.linalg._secular_numba as kernel\n"
        "from indefsvm.proxy.solvers.accpm import _Localization, analytic_center_cutting_plane\n"
        "from indefsvm.threads import free_cores\n"
        "class Stub:\n"
        "    def __init__(self):\n"
        "        self._state = 1\n"
        "    def _f(self, a):\n"
        "        return self._state\n"
        "def test_x(monkeypatch, est, T):\n"
        "    est._pair_decisions(1)\n"
        "    Stub()._f(0)\n"
        "    monkeypatch.setattr(T, '_others_running', lambda: 0)\n"
        "    monkeypatch.setattr('indefsvm.linalg.rank_one._dlaed4', None)\n"
        "    est.__class__, getattr(est, 'public')\n"
    )
    uses = tool.scan(source)
    assert uses.names() == {
        "_secular_numba", "_Localization", "_pair_decisions", "_others_running", "_dlaed4"
    }  # fmt: skip
    assert sum(uses.imports.values()) == 3 and sum(uses.attributes.values()) == 2
    table = (
        "<!-- private-names:begin -->\n"
        "| Contract | Test files | Private names | Why |\n|---|---|---|---|\n"
        "| engine | `linalg/test_*.py` | `_secular_numba`, `_dlaed4`, `_gone` | . |\n"
        "| accpm | `x/test_a.py` | `_Localization`, `_others_*` | . |\n"
        "<!-- private-names:end -->"
    )
    rows = _contract_rows(table)
    assert rows[0] == ("engine", ["linalg/test_*.py"], ["_secular_numba", "_dlaed4", "_gone"])
    found = {"tests/linalg/test_k.py": tool.scan(source), "tests/x/test_a.py": tool.scan(source)}
    assert _private_name_violations(found, rows) == [
        "tests/linalg/test_k.py uses _Localization, in no row of docs/design.md for this file",
        "tests/linalg/test_k.py uses _others_running, in no row of docs/design.md for this file",
        "tests/linalg/test_k.py uses _pair_decisions, in no row of docs/design.md for this file",
        "tests/x/test_a.py uses _dlaed4, in no row of docs/design.md for this file",
        "tests/x/test_a.py uses _pair_decisions, in no row of docs/design.md for this file",
        "tests/x/test_a.py uses _secular_numba, in no row of docs/design.md for this file",
        "engine: _gone is listed but no file of the row uses it",
    ]
