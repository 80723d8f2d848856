"""tools/mutation.py names files that exist, and each module's selection holds its mirrored tests.

The mutation command runs each module's mutants against a fixed list of test files; after a
file moves, a stale path would make mutmut collect nothing (every mutant "survives") or fail.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import load_script

ROOT = Path(__file__).resolve().parents[2]


MODULES = load_script("tools/mutation.py", "mutation_tool").MODULES


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


def test_pytest_verdicts_switch_each_mutant_on_and_run_its_recorded_tests(tmp_path, capsys):
    """The plain-pytest check of survivors: a mutant its recorded test catches is "killed", one
    it does not catch "survived" (a stand-in module with mutmut's switch variable)."""
    import json

    mutants = tmp_path / "mod" / "mutants"
    (mutants / "tests").mkdir(parents=True)
    (mutants / "tests" / "stand_in.py").write_text(
        "import os\n"
        "def f():\n"
        "    active = os.environ.get('MUTANT_UNDER_TEST', '')\n"
        "    return 2 if active == 'stand_in.x_f__mutmut_1' else 1\n"
    )
    (mutants / "tests" / "test_stand_in.py").write_text(
        "from stand_in import f\n\ndef test_f():\n    assert f() == 1\n"
    )
    stats = {"tests_by_mangled_function_name": {"stand_in.x_f": ["tests/test_stand_in.py::test_f"]}}
    (mutants / "mutmut-stats.json").write_text(json.dumps(stats))
    tool = load_script("tools/mutation.py", "mutation_tool_pytest")
    names = ["stand_in.x_f__mutmut_1", "stand_in.x_f__mutmut_2"]
    assert tool.mapped_tests(stats, names[0]) == ["tests/test_stand_in.py::test_f"]
    verdicts = tool.pytest_verdicts("mod", tmp_path, names)
    assert verdicts == {names[0]: "killed", names[1]: "survived"}
    assert "stand_in.x_f__mutmut_1\tkilled" in capsys.readouterr().out
    # the same verdicts from one interpreter that switches the mutants in turn
    assert tool.pytest_verdicts("mod", tmp_path, names, in_process=True) == verdicts
    # a selection that fails with no mutant switched on judges nothing
    (mutants / "tests" / "test_broken.py").write_text("def test_g():\n    assert False\n")
    broken = tool.pytest_verdicts("mod", tmp_path, names, ["tests/test_broken.py"])
    assert broken == {name: "baseline fails" for name in names}


def test_verdicts_follow_an_edit_into_the_function_it_moved_to():
    """A hand verdict is carried to the same edit: in the same function first, then, for code
    moved into a function of its own, by the removed and added lines alone; never when the
    previous file gives that edit two different verdicts."""
    mutation = load_script("tools/mutation.py")
    previous = [
        "# header",
        "x_big__mutmut_7\tsurvived\t- a = b <= c\t+ a = b < c\tEQUIVALENT: a tie",
        "x_big__mutmut_9\tsurvived\t- d = e\t+ d = None\tEQUIVALENT: unread",
        "x_other__mutmut_1\tsurvived\t- d = e\t+ d = None\tNOT DETECTABLE: another reason",
        "x_big__mutmut_12\tsurvived\t- f(g)\t+ f(None)",
    ]
    new = [
        "x_big__mutmut_8\tsurvived\t- a = b <= c\t+ a = b < c",  # same function, renumbered
        "x__step__mutmut_3\tsurvived\t- a = b <= c\t+ a = b < c",  # moved out of x_big
        "x__step__mutmut_4\tsurvived\t- d = e\t+ d = None",  # two verdicts for this edit
        "x__step__mutmut_5\tsurvived\t- f(g)\t+ f(None)",  # no verdict to carry
        "x__step__mutmut_6\tsurvived\t- h\t+ None",  # a new edit
    ]
    out, carried = mutation.carry_verdicts(new, previous)
    verdicts = [line.split("\t")[4] if line.count("\t") >= 4 else None for line in out]
    assert verdicts == ["EQUIVALENT: a tie", "EQUIVALENT: a tie", None, None, None]
    assert carried == 2
