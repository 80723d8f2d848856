"""The layout of issue 23: no import circle between the package's modules, a small root.

Every ``import`` counts, also those inside functions (a deferred import is still a dependency:
the issue found its circles there). The graph is built from the source with :mod:`ast`, and the
circles are the strongly connected components of more than one module.
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
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
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


# -- the tests mirror the package (issue 23, item 7) ---------------------------------------------

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
