"""tools/mutation.py names files that exist, and each module's selection holds its mirrored tests.

The mutation command runs each module's mutants against a fixed list of test files; after a
file moves, a stale path would make mutmut collect nothing (every mutant "survives") or fail.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _modules() -> dict[str, tuple[list[str], list[str]]]:
    spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "tools" / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MODULES


MODULES = _modules()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_mutated_module_and_test_file_exists(name):
    mutate, tests = MODULES[name]
    assert mutate and tests
    missing = [path for path in mutate + tests if not (ROOT / path).is_file()]
    assert missing == [], f"{name}: {missing}"
    assert all(Path(path).name.startswith("test_") for path in tests), tests


@pytest.mark.parametrize("name", sorted(MODULES))
def test_selection_holds_the_test_file_mirroring_the_module(name):
    """indefsvm/<sub>/<module>.py is guarded by tests/<sub>/test_<module>[_<topic>].py."""
    mutate, tests = MODULES[name]
    for path in mutate:
        source = Path(path).relative_to("indefsvm")
        folder = Path("tests", *source.parent.parts)
        stem = "test_" + source.stem.lstrip("_")
        mirrored = [
            t
            for t in tests
            if Path(t).parent == folder
            and (Path(t).stem == stem or Path(t).stem.startswith(stem + "_"))
        ]
        assert mirrored, f"{name}: no {folder}/{stem}*.py in {tests}"
