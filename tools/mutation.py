"""Mutation testing of the core modules with mutmut (``pip install -e .[dev]``), module by module.

Each module's mutants are run against the test files that guard it only (the whole suite would
take hours per mutant set on a shared 2-core machine), with one worker and without the tests
marked ``slow``. Every module runs in its own scratch copy of the repository (``--workdir``), so
the worktree never receives mutmut's ``mutants/`` directory and modules can be resumed
independently (mutmut caches verdicts in the scratch copy).

Usage (from the repository root)::

    python tools/mutation.py --list
    nohup python tools/mutation.py problems proxy > mutation.log 2>&1 &
    python tools/mutation.py --results problems     # survivors of a finished module

The score and the surviving mutants of the latest run are in ``docs/mutation.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: module -> (files to mutate, test files run against its mutants)
MODULES: dict[str, tuple[list[str], list[str]]] = {
    "projection": (
        ["indefsvm/linalg/projection.py"],
        ["tests/linalg/test_projection.py"],
    ),
    # test_rank_one.py runs every test on both secular engines; test_rank_one_secular.py holds
    # the input checks, the one- and two-pole accuracy and the warm-start bookkeeping.
    "rank_one": (
        ["indefsvm/linalg/rank_one.py"],
        ["tests/linalg/test_rank_one_secular.py", "tests/linalg/test_rank_one.py"],
    ),
    "proxy": (
        ["indefsvm/proxy/operators.py"],
        [
            "tests/proxy/test_problems.py",
            "tests/integration/test_extensions.py",
            "tests/proxy/test_problems_at_optimum.py",
            "tests/proxy/test_operators.py",
            # the dense operator's refusals and what the problems read from it (3 s)
            "tests/proxy/test_problems_operators.py",
        ],
    ),
    # The module's fast tests (small inputs, dense references, no solver run); the solver-level
    # files (test_extensions, test_gap_certified, test_problems_at_optimum) are left out: with
    # them every surviving mutant paid ~100 s of solves. Their problems-level claims
    # (vector-rho rows, LIBSVM sign, bound) are checked by test_problems.py directly.
    "problems": (
        # the certificate (bounds, their rounding, LIBSVM checks) was part of problems.py and is
        # reached through the problems' methods: its mutants run against the same tests
        ["indefsvm/proxy/problems.py", "indefsvm/proxy/certificate.py"],
        [
            "tests/proxy/test_problems.py",
            "tests/proxy/test_certificate.py",
            "tests/proxy/test_operators.py",
            # what the problems read from their operator, and the solvers' capability checks
            # (check_solver, check_options, make_operator; 3 s)
            "tests/proxy/test_problems_operators.py",
        ],
    ),
    "solvers_pg": (
        ["indefsvm/proxy/solvers/pg.py"],
        ["tests/proxy/solvers/test_pg.py"],
    ),
    # The small-input file alone (~10 s, a stub problem and n = 8): test_accpm.py and
    # test_accpm_proximal.py take ~90 s at idle and reach every solver function, so every
    # surviving mutant of the solver bodies would pay for them (hours); their claims (SDP
    # optimum, pruning, both variants, limits) are checked by test_accpm_internals.py on
    # smaller problems. The score is therefore a lower bound.
    "solvers_accpm": (
        ["indefsvm/proxy/solvers/accpm.py"],
        ["tests/proxy/solvers/test_accpm_internals.py"],
    ),
    # SIQCLP and its MKL master against their small-input files alone (n = 8-16, ~8 s and ~4 s
    # in all; a lower bound of the score, as solvers_monitor): the solver-level files
    # (test_siqclp.py ~30 s, test_siqclp_mkl.py ~25 s of solves) would be paid in full by every
    # surviving mutant of `_exchange` / of the master's shared functions (550 and ~400
    # mutants), hours with one worker.
    "solvers_siqclp": (
        ["indefsvm/proxy/solvers/siqclp.py"],
        ["tests/proxy/solvers/test_siqclp_exchange.py"],
    ),
    # The MKL master of SIQCLP. mutmut 3 skips decorated functions (other than staticmethod /
    # classmethod), so the Numba-compiled SMO `_smo` (@njit) gets no mutants at all: its
    # trampoline could not be compiled by Numba anyway. It is checked by test_mkl.py (against
    # cvxpy, and through `_qp` against LIBSVM) and by hand-made mutations only.
    "solvers_mkl": (
        ["indefsvm/proxy/solvers/_mkl.py"],
        ["tests/proxy/solvers/test_mkl.py"],
    ),
    # The monitor against its stub-problem tests alone (a lower bound of its score): with the
    # solver tests in the selection every surviving mutant pays for all of them (~100 s at
    # load 6).
    "solvers_monitor": (
        ["indefsvm/proxy/solvers/_monitor.py"],
        ["tests/proxy/solvers/test_monitor_stub.py"],
    ),
    # test_tuning.py and test_hypergrad.py hold the hard-case tests (tuning folds, the
    # hard-case branch's gradient) that reach the solver through the tuner.
    "krein_solver": (
        ["indefsvm/krein/solver.py"],
        [
            "tests/krein/test_solver.py",
            "tests/krein/test_tuning.py",
            "tests/krein/test_hypergrad.py",
            "tests/krein/test_subspace.py",
        ],
    ),
    "krein_hypergrad": (
        ["indefsvm/krein/hypergrad.py"],
        [
            "tests/krein/test_hypergrad.py",
            "tests/krein/test_tuning.py",
            "tests/krein/test_subspace.py",
        ],
    ),
}


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def prepare(module: str, workdir: Path, tests: list[str] | None = None) -> Path:
    """Copy the repository's package, tests and pyproject into ``workdir/module`` with the
    module's ``[tool.mutmut]`` section (kept across runs so mutmut can resume); ``tests``
    replaces the module's test selection."""
    mutate, default_tests = MODULES[module]
    tests = tests or default_tests
    dest = workdir / module
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("indefsvm", "tests"):
        if (dest / name).exists():
            shutil.rmtree(dest / name)
        shutil.copytree(
            ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    # The fork server's warm-up (tools/mutation_warmup.py), as a hook of the scratch copy's
    # conftest: the repository's tests are not changed.
    shutil.copy2(ROOT / "tools" / "mutation_warmup.py", dest / "tests" / "mutation_warmup.py")
    with open(dest / "tests" / "conftest.py", "a") as conftest:
        conftest.write(
            "\n\n# Added by tools/mutation.py in its scratch copy: warm up mutmut's fork server.\n"
            "from mutation_warmup import pytest_collection_finish  # noqa: E402, F401\n"
        )
    pyproject = (ROOT / "pyproject.toml").read_text()
    pyproject += (
        "\n[tool.mutmut]\n"
        'source_paths = ["indefsvm"]\n'
        f"only_mutate = {_toml_list(mutate)}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        # Without pytest's unraisable-exception plugin: at the end of every session it runs
        # gc.collect() five times, which over the heap of numpy, scipy, cvxpy and Numba that
        # each forked child inherits took 0.7 s of a 0.8 s child (the test itself: 0.02 s).
        'pytest_add_cli_args = ["-m", "not slow", "-p", "no:cacheprovider",'
        ' "-p", "no:unraisableexception"]\n'
        # Fork each mutant from a single-threaded server, not from mutmut's main process (whose
        # timeout thread made forked children deadlock in a futex wait), and keep the
        # wall-clock limit of a hung mutant at 3x (not 15x) its tests' recorded duration.
        'process_isolation = "forkserver"\n'
        "timeout_multiplier = 3.0\n"
        # Wall limit = (recorded test time + timeout_constant) x 3: with mutmut's default
        # constant of 1 s, contract tests of 0.1 s got a 3.3 s limit, and at load 5 a forked
        # child starting pytest overran it (false timeouts, counted as kills). 10 s keeps a
        # real infinite loop detected (~30 s) without that.
        "timeout_constant = 10.0\n"
    )
    (dest / "pyproject.toml").write_text(pyproject)
    return dest


def run(
    module: str,
    workdir: Path,
    max_children: int,
    names: list[str] | None = None,
    tests: list[str] | None = None,
    *,
    confirm: bool = True,
) -> tuple[float, tuple[int, int, int]]:
    """Run mutmut on ``module`` in ``workdir/module`` (only the mutants ``names`` if given);
    return the wall time and (detected, tested, mutants).

    With ``confirm`` the mutants that survived are run once more by name in the same copy
    before the counts are taken (mutmut's first run misreports some; see the comment below).
    """
    dest = prepare(module, workdir, tests)
    t0 = time.perf_counter()
    print(f"== {module}: mutmut run in {dest}; load average {os.getloadavg()}", flush=True)
    # mutmut forks one child per mutant from a process that has imported numpy: a BLAS thread
    # pool in the parent can deadlock the child (observed: a child idle for minutes, which the
    # CPU-time limit never ends). Single-threaded BLAS makes the fork safe and spares the CPU.
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    # The hypothesis profile of CI (tests/conftest.py): the same seeded examples for every
    # mutant and every run, so a verdict does not depend on the draw (with random examples
    # rank_one._deflate 39 was killed in one run and survived the next).
    env["CI"] = "true"
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(max_children)]
    subprocess.run([*command, *(names or [])], cwd=dest, check=False, env=env)
    # mutmut 3.8's first run in a fresh copy reports some mutants as surviving that the same
    # tests kill (docs/mutation.md: 15 of 31 in one run, a different 15 in the next, all killed
    # when named); a second run that names them, in the same copy with its recorded test map,
    # re-tests exactly those and has given the right verdict every time.
    first = [name for name, code in exit_codes(module, workdir).items() if code == 0]
    if first and confirm:
        print(f"== {module}: re-testing the {len(first)} mutants that survived", flush=True)
        subprocess.run([*command, *first], cwd=dest, check=False, env=env)
        codes = exit_codes(module, workdir)
        flipped = sum(1 for name in first if codes[name] != 0)
        print(f"== {module}: {flipped} of {len(first)} killed when re-tested", flush=True)
    wall = time.perf_counter() - t0
    print(f"== {module}: {wall:.0f} s wall; load average {os.getloadavg()}", flush=True)
    return wall, results(module, workdir)


def rerun(
    module: str,
    workdir: Path,
    max_children: int,
    statuses: tuple[str, ...],
    tests: list[str] | None = None,
) -> None:
    """Re-test the mutants of a finished run whose status is in ``statuses`` against the
    module's CURRENT test selection (or ``tests``), in a fresh scratch copy
    ``workdir/rerun/<module>``.

    mutmut resets every verdict when the test selection changes, so tests written for the
    survivors of a run are checked on those survivors only, not on the whole module again.
    The survivors already survived the first run's files, so ``--tests`` with only the new
    files gives the same verdicts faster.
    """
    res = subprocess.run(
        [sys.executable, "-c", _SURVIVOR_DUMP, "--keys", *statuses],
        cwd=workdir / module,
        check=True,
        capture_output=True,
        text=True,
    )
    names = res.stdout.split()
    print(f"== {module}: re-testing {len(names)} mutants ({', '.join(statuses)})", flush=True)
    if names:
        run(module, workdir / "rerun", max_children, names, tests)


def mapped_tests(stats: dict, name: str) -> list[str]:
    """The tests mutmut's stats run recorded as reaching the function of mutant ``name``."""
    function = name.rsplit("__mutmut_", 1)[0]
    return sorted(stats["tests_by_mangled_function_name"].get(function, []))


#: Driver of ``pytest_verdicts(..., in_process=True)``: one interpreter runs every mutant's tests
#: with ``pytest.main``, switching mutants through mutmut's variable (its trampolines read it at
#: every call), so the imports of numpy, scipy, cvxpy and Numba are paid once, not per mutant.
#: The mutants' copy of the package must come first on ``sys.path`` (``python -m pytest`` puts
#: the working directory there; a script does not). A mutant whose tests run longer than the
#: time limit is stopped by SIGALRM and reported as "timeout".
_IN_PROCESS_DRIVER = r"""
import json, os, signal, sys, time
sys.path.insert(0, os.getcwd())
import pytest
jobs, limit = json.load(sys.stdin)

class _Overrun(BaseException):
    pass

def _alarm(signum, frame):
    raise _Overrun()

signal.signal(signal.SIGALRM, _alarm)
for name, tests in jobs:
    os.environ["MUTANT_UNDER_TEST"] = name
    t0 = time.perf_counter()
    signal.alarm(int(limit))
    try:
        code = int(pytest.main(["-x", "-q", "-p", "no:cacheprovider", *tests]))
        verdict = {0: "survived", 1: "killed"}.get(code, f"pytest exit {code}")
    except _Overrun:
        verdict = "timeout"
    finally:
        signal.alarm(0)
    print("\nVERDICT\t" + name + "\t" + verdict + "\t%.1f" % (time.perf_counter() - t0), flush=True)
"""


def pytest_verdicts(
    module: str,
    workdir: Path,
    names: list[str],
    tests: list[str] | None = None,
    timeout: float = 1800.0,
    *,
    in_process: bool = False,
) -> dict[str, str]:
    """Re-test mutants of a finished run with plain pytest, outside mutmut.

    In the module's copy (``workdir/<module>/mutants``), each mutant is switched on by mutmut's
    own ``MUTANT_UNDER_TEST`` variable and its tests run with ``pytest -x``: the tests mutmut
    recorded for its function, or ``tests``. Verdict "killed" when a test fails, "survived" when
    all pass. mutmut 3.8 reported the eight ``_as_vector`` message mutants of ``rank_one``
    surviving in both of its runs while these tests kill every one (docs/mutation.md), so judge
    a survivor only after this check. A mutant whose tests run longer than ``timeout`` seconds
    (an endless loop) is reported as "timeout".

    The tests are first run with no mutant switched on: a selection that fails on the original
    code would call every mutant "killed" (e.g. a test that checks a warning's ``stacklevel``
    sees one frame more in the copy, where mutmut's trampoline calls the function), so its
    mutants get the verdict "baseline fails" instead. ``in_process`` runs all mutants in one
    interpreter (:data:`_IN_PROCESS_DRIVER`): about 2 s per mutant instead of ~15 s of imports.
    """
    mutants = workdir / module / "mutants"
    stats = json.loads((mutants / "mutmut-stats.json").read_text())
    env = dict(os.environ, CI="true")
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    selections = {name: list(tests or mapped_tests(stats, name)) for name in names}
    verdicts: dict[str, str] = {}
    baseline_ok: dict[tuple[str, ...], bool] = {}
    for selected in {tuple(sel) for sel in selections.values()}:
        res = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *selected],
            cwd=mutants, env={**env, "MUTANT_UNDER_TEST": ""}, capture_output=True, text=True,
        )  # fmt: skip
        baseline_ok[selected] = res.returncode == 0
        if res.returncode != 0:
            print(f"baseline fails (pytest exit {res.returncode}) for {list(selected)}", flush=True)
    jobs = []
    for name in names:
        if not baseline_ok[tuple(selections[name])]:
            verdicts[name] = "baseline fails"
            print(f"{name}\tbaseline fails", flush=True)
        else:
            jobs.append((name, selections[name]))
    if in_process and jobs:
        # verdicts are printed as the driver reaches them (pytest's own output is dropped)
        with subprocess.Popen(
            [sys.executable, "-c", _IN_PROCESS_DRIVER], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=mutants, env=env, text=True,
        ) as proc:  # fmt: skip
            proc.stdin.write(json.dumps([jobs, timeout]))
            proc.stdin.close()
            for line in proc.stdout:
                if line.startswith("VERDICT\t"):
                    _, name, verdict, seconds = line.rstrip("\n").split("\t")
                    verdicts[name] = verdict
                    print(f"{name}\t{verdict}\t{seconds} s", flush=True)
        for name, _ in jobs:  # the driver died before reaching these
            verdicts.setdefault(name, f"driver exit {proc.returncode}")
        return verdicts
    for name, selected in jobs:
        t0 = time.perf_counter()
        try:
            res = subprocess.run(
                [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *selected],
                cwd=mutants, env={**env, "MUTANT_UNDER_TEST": name}, capture_output=True,
                text=True, timeout=timeout,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            verdict = "timeout"
        else:
            code = res.returncode
            verdict = {0: "survived", 1: "killed"}.get(code, f"pytest exit {code}")
        verdicts[name] = verdict
        print(f"{name}\t{verdict}\t{time.perf_counter() - t0:.0f} s", flush=True)
    return verdicts


#: mutmut exit codes of a detected mutant: a test failed (1; 3 is a pytest internal error), the
#: run timed out (36; SIGXCPU after the CPU-time limit: -24, 24, 152, 255) or the test process
#: crashed (SIGSEGV -11, SIGKILL -9, SIGABRT -6: e.g. a wrong pointer handed to LAPACK through
#: ctypes corrupts the heap and glibc aborts). mutmut files -6 as "suspicious"; it is a crash.
DETECTED_EXIT_CODES = {
    1: "killed",
    3: "killed",
    36: "timeout",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    -11: "crash",
    -9: "crash",
    -6: "crash",
}


def _score(detected: int, tested: int) -> str:
    return f"{100.0 * detected / tested:.1f} %" if tested else "n/a"


def exit_codes(module: str, workdir: Path) -> dict[str, int | None]:
    """mutmut's exit code of every mutant of ``module`` in its scratch copy (None: not run)."""
    codes: dict[str, int | None] = {}
    for meta in sorted((workdir / module / "mutants").rglob("*.py.meta")):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def results(module: str, workdir: Path) -> tuple[int, int, int]:
    """Print a finished module's counts and score; return (detected, tested, mutants).

    Scored over the mutants tested in this copy (a --rerun copy tests only the named ones; the
    rest stay "not checked").
    """
    codes = exit_codes(module, workdir)
    counts: dict[str, int] = {}
    for code in codes.values():
        if code is None:
            kind = "not checked"
        elif code in DETECTED_EXIT_CODES:
            kind = DETECTED_EXIT_CODES[code]
        else:
            kind = {0: "survived", 5: "no tests", 33: "no tests"}.get(code, f"exit {code}")
        counts[kind] = counts.get(kind, 0) + 1
    killed = sum(1 for code in codes.values() if code in DETECTED_EXIT_CODES)
    checked = sum(1 for code in codes.values() if code is not None)
    print(
        f"== {module}: {json.dumps(counts)}; score {_score(killed, checked)}"
        f" ({killed}/{checked} tested, {len(codes)} mutants)",
        flush=True,
    )
    return killed, checked, len(codes)


#: Run inside a module's scratch copy: one line per mutant that was not killed (status, name,
#: removed lines, added lines), read from mutmut's own records.
_SURVIVOR_DUMP = r"""
DETECTED = __DETECTED__
import sys
from mutmut.mutation.data import SourceFileMutationData
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code
from mutmut.utils.file_utils import walk_mutatable_files
import mutmut.__main__ as mm
mm.ensure_config_loaded() if hasattr(mm, "ensure_config_loaded") else None
keys_for = set(sys.argv[2:]) if sys.argv[1:2] == ["--keys"] else None
for path in walk_mutatable_files():
    m = SourceFileMutationData(path=path)
    m.load()
    for key, code in m.exit_code_by_key.items():
        status = status_by_exit_code[code]
        if keys_for is not None:
            if status in keys_for:
                print(key)
            continue
        if code in DETECTED:
            continue
        diff = get_diff_for_mutant(key, path=m.path).splitlines()[2:]
        minus = " | ".join(x[1:].strip() for x in diff if x.startswith("-"))
        plus = " | ".join(x[1:].strip() for x in diff if x.startswith("+"))
        print(f"{key.rpartition('.')[2]}\t{status}\t- {minus}\t+ {plus}")
""".replace("__DETECTED__", repr(set(DETECTED_EXIT_CODES)))


def survivors(module: str, workdir: Path, out: Path | None) -> None:
    """Print (or write to ``out``) every mutant of a finished module that was not killed."""
    dest = workdir / module
    res = subprocess.run(
        [sys.executable, "-c", _SURVIVOR_DUMP], cwd=dest, check=True, capture_output=True, text=True
    )
    lines = sorted(res.stdout.splitlines(), key=_natural_key)
    carried = 0
    if out is not None and out.exists():
        lines, carried = carry_verdicts(lines, out.read_text().splitlines())
    header = (
        f"# Mutants of {', '.join(MODULES[module][0])} not killed"
        f" (mutmut, python tools/mutation.py {module});"
        " one line per mutant: name, status, removed line(s), added line(s), verdict\n"
    )
    text = header + "\n".join(lines) + "\n"
    if out is None:
        print(text, end="")
    else:
        out.write_text(text)
        missing = sum(1 for line in lines if len(line.split("\t")) < 5)
        print(
            f"== {module}: {len(lines)} survivors written to {out} ({carried} verdicts carried"
            f" over from the previous file, {missing} without a verdict)"
        )


def _edit_key(line: str) -> tuple[str, str, str] | None:
    """(function, removed, added) of a survivors line: the edit, independent of mutmut's
    per-function numbering, which shifts whenever the function gains or loses a mutant."""
    fields = line.split("\t")
    if len(fields) < 4 or line.startswith("#"):
        return None
    function = fields[0].rpartition("__mutmut_")[0]
    return function, fields[2], fields[3]


def carry_verdicts(lines: list[str], previous: list[str]) -> tuple[list[str], int]:
    """Append to each new survivor the verdict given by hand to the same edit in the previous
    survivors file, when that verdict is unique: first the same function with the same removed
    and added lines; failing that, the same removed and added lines in any function (code that
    moved to a function of its own when a long one was split).

    Mutant names are numbered per function, so after a code change the same edit gets another
    name; its verdict (an equivalence argument about that edit) still applies unless the code
    around it changed, which is why a carried verdict is reviewed with the diff of the module.
    """
    verdicts: dict[tuple[str, str, str], set[str]] = {}
    moved: dict[tuple[str, str], set[str]] = {}
    for line in previous:
        key = _edit_key(line)
        fields = line.split("\t")
        if key is not None and len(fields) >= 5 and fields[4].strip():
            verdicts.setdefault(key, set()).add(fields[4])
            moved.setdefault(key[1:], set()).add(fields[4])
    out, carried = [], 0
    for line in lines:
        key = _edit_key(line)
        found = verdicts.get(key) if key is not None else None
        if found is None and key is not None:
            found = moved.get(key[1:])
        if found is not None and len(found) == 1:
            line = f"{line}\t{next(iter(found))}"
            carried += 1
        out.append(line)
    return out, carried


_RERUN_DEFAULT = ("survived", "suspicious")


def _natural_key(line: str) -> tuple[str, int]:
    name = line.split("\t", 1)[0]
    stem, _, num = name.rpartition("_")
    return (stem, int(num) if num.isdigit() else -1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help=f"modules to run (default all: {list(MODULES)})")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/indefsvm-mutation"))
    parser.add_argument(
        "--max-children",
        type=int,
        default=os.cpu_count() or 1,
        help="mutmut workers (default: one per core; use 1 on a machine shared with other work)",
    )
    parser.add_argument("--results", action="store_true", help="only print stored results")
    parser.add_argument("--list", action="store_true", help="list modules and their tests")
    parser.add_argument(
        "--tests", nargs="+", help="test files to use instead of the module's selection"
    )
    parser.add_argument(
        "--no-confirm",
        action="store_true",
        help="take the first run's verdicts as they are (no second run of the survivors)",
    )
    parser.add_argument(
        "--names",
        nargs="+",
        metavar="GLOB",
        help="run only these mutants (mutmut names or fnmatch globs, e.g."
        " 'indefsvm.proxy.solvers.accpm.x__accpm__mutmut_*')",
    )
    parser.add_argument(
        "--rerun",
        nargs="*",
        metavar="STATUS",
        help="re-test the mutants of a finished run with these statuses (default: survived"
        " suspicious) against the current tests, in WORKDIR/rerun/<module>",
    )
    parser.add_argument(
        "--pytest",
        nargs="+",
        metavar="NAME",
        help="re-test these mutants of a finished run with plain pytest (their recorded tests,"
        " or --tests) and print killed/survived",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="with --pytest: run every mutant's tests in one interpreter (imports paid once)",
    )
    parser.add_argument(
        "--survivors",
        type=Path,
        nargs="?",
        const=Path("-"),
        help="list the surviving mutants (to DIR/mutation_survivors_<module>.txt if a directory"
        " DIR is given, e.g. tools/mutation_survivors; else stdout)",
    )
    args = parser.parse_args(argv)
    if args.list:
        for name, (mutate, tests) in MODULES.items():
            print(f"{name}: mutate {mutate}; tests {tests}")
        return
    unknown = set(args.modules) - set(MODULES)
    if unknown:
        parser.error(f"unknown modules {sorted(unknown)}; choose from {list(MODULES)}")
    summary: list[tuple[str, float, tuple[int, int, int]]] = []
    started = time.perf_counter()
    for module in args.modules or list(MODULES):
        if args.survivors is not None:
            out = None
            if str(args.survivors) != "-":
                out = args.survivors / f"mutation_survivors_{module}.txt"
            survivors(module, args.workdir, out)
        elif args.pytest:
            pytest_verdicts(
                module, args.workdir, args.pytest, args.tests, in_process=args.in_process
            )
        elif args.rerun is not None:
            statuses = tuple(args.rerun or _RERUN_DEFAULT)
            rerun(module, args.workdir, args.max_children, statuses, args.tests)
        elif args.results:
            results(module, args.workdir)
        else:
            wall, counts = run(
                module,
                args.workdir,
                args.max_children,
                args.names,
                args.tests,
                confirm=not args.no_confirm,
            )
            summary.append((module, wall, counts))
    if len(summary) > 1:
        _print_summary(summary, time.perf_counter() - started, args.max_children)


def _print_summary(
    summary: list[tuple[str, float, tuple[int, int, int]]], wall: float, workers: int
) -> None:
    """The table docs/mutation.md quotes: per module and in all, with the whole wall time."""
    print("\n| module | mutants | detected | score | wall s |\n| --- | --- | --- | --- | --- |")
    for module, seconds, (killed, checked, total) in summary:
        print(f"| {module} | {total} | {killed} | {_score(killed, checked)} | {seconds:.0f} |")
    killed = sum(c[0] for _, _, c in summary)
    checked = sum(c[1] for _, _, c in summary)
    total = sum(c[2] for _, _, c in summary)
    print(
        f"| **all** | {total} | {killed} | {_score(killed, checked)} | {wall:.0f} |\n\n"
        f"{total} mutants in {wall / 60:.1f} min with {workers} workers"
        f" ({total / wall:.2f} mutants/s); load average at the end {os.getloadavg()}",
        flush=True,
    )


if __name__ == "__main__":
    main()
