"""Every command that docs/*.md tells a user to type parses: ``python experiments/...``,
``python benchmarks/...`` and ``indefsvm ...``.

The README's python blocks run as written (``test_readme.py``); the commands of the guides start
studies and benchmarks of minutes to hours, so they are not run. Each is instead given to its
own argument parser: the script (or the ``indefsvm`` command) starts in a subprocess in which
``argparse.ArgumentParser.parse_args`` stops right after a successful parse. A renamed or
removed option, a wrong value type or a script that no longer exists fails here, with the
document, the command and argparse's message.

Commands are taken from fenced blocks (one a line, ``\\`` continuations joined) and from inline
code spans (which may wrap). Environment assignments (``OMP_NUM_THREADS=1``), ``nice -n N`` and
trailing ``# comments`` are dropped; the placeholders of :data:`PLACEHOLDERS` get a value of
their type. Synopses (``[--option]``, ``{a,b}``, ``a | b``) and the mentions of
:data:`MENTIONS` are not commands.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from .test_readme import _run

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))

#: Placeholder words of the docs and a value of their type (``--seed S``, ``--n N``).
PLACEHOLDERS = {"S": "0", "N": "1000", "$d": "digits-3-5"}
#: Inline code that names a command group in prose, not a command to type.
MENTIONS = {"indefsvm study"}
#: The start of a command: a script of experiments/ or benchmarks/, or the CLI followed by one
#: of its sub-commands or an option (output lines such as "indefsvm default: ..." are not).
_START = re.compile(
    r"^(python (experiments|benchmarks)/\S+\.py|indefsvm (-\S+|solve|compare|fit|predict|"
    r"example-data|study)(\s|$))"
)
_PREFIX = re.compile(r"^((\w+=\S*\s+)|(nice -n \d+\s+))+")


def _clean(text: str) -> str | None:
    """The command in ``text`` without environment, nice and comment; None if none."""
    text = _PREFIX.sub("", " ".join(text.split()))
    if not _START.match(text):
        return None
    return re.sub(r"\s+#.*$", "", text).strip()


def doc_commands() -> list[tuple[str, int, str]]:
    """(document, line, command) of every command in docs/*.md."""
    found = []
    for path in DOCS:
        text = path.read_text()
        fences = list(re.finditer(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M))
        for m in fences:
            start = text[: m.start()].count("\n") + 2
            for i, line in enumerate(m.group(1).replace("\\\n", " \n").split("\n")):
                command = _clean(line)
                if command is not None:
                    found.append((path.name, start + i, command))
        prose = re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text,
                       flags=re.S | re.M)  # fmt: skip
        for m in re.finditer(r"`([^`]+)`", prose):
            command = _clean(m.group(1))
            if command is not None:
                found.append((path.name, prose[: m.start()].count("\n") + 1, command))
    return found


def _is_synopsis(command: str) -> bool:
    return bool(re.search(r"\[-|\{|\s\|\s|\.\.\.", command))


COMMANDS = [c for c in doc_commands() if not _is_synopsis(c[2]) and c[2] not in MENTIONS]

#: Runs in one subprocess: each argv goes to its parser, which stops after parsing.
_DRY_PARSE = r"""
import argparse, contextlib, io, json, runpy, sys
from pathlib import Path

class Parsed(BaseException):
    pass

_parse = argparse.ArgumentParser.parse_args

def parse_args(self, args=None, namespace=None):
    _parse(self, args, namespace)
    raise Parsed

argparse.ArgumentParser.parse_args = parse_args
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    saved_path, saved_argv = list(sys.path), list(sys.argv)
    for name in ("_common", "_study_wrapper"):
        sys.modules.pop(name, None)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if argv[0] == "indefsvm":
                from indefsvm.cli import main
                main(argv[1:])
            else:
                script = Path(argv[1])
                if not script.is_file():
                    raise FileNotFoundError(f"no script {argv[1]}")
                sys.argv = argv[1:]
                sys.path.insert(0, str(script.parent))
                runpy.run_path(str(script), run_name="__main__")
        outcome = "ran without parsing"
    except Parsed:
        outcome = "parsed"
    except SystemExit as exc:
        outcome = "parsed" if exc.code in (0, None) else f"exit {exc.code}"
    except BaseException as exc:
        outcome = f"{type(exc).__name__}: {exc}"
    finally:
        sys.path[:], sys.argv = saved_path, saved_argv
    results.append([outcome, err.getvalue()[-1500:]])
print(json.dumps(results))
"""


def _argv(command: str) -> list[str]:
    return [PLACEHOLDERS.get(w, w) for w in shlex.split(command)]


@pytest.fixture(scope="module")
def outcomes() -> dict[str, list[str]]:
    argvs = [_argv(c) for _, _, c in COMMANDS]
    code = f"import sys\nsys.argv = ['-', {json.dumps(json.dumps(argvs))}]\n" + _DRY_PARSE
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-4000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    return {c: r for (_, _, c), r in zip(COMMANDS, results, strict=True)}


def test_the_docs_have_commands_of_every_kind():
    commands = [c for _, _, c in COMMANDS]
    for start in ("python experiments/", "python benchmarks/", "indefsvm study run ", "indefsvm "):
        assert sum(c.startswith(start) for c in commands) >= 2, start
    # output lines and the tree of design.md are not commands; a synopsis is recognised
    assert not any(c.startswith("indefsvm default") for c in commands)
    assert any(_is_synopsis(c) for _, _, c in doc_commands())


@pytest.mark.parametrize("doc, line, command", COMMANDS, ids=[f"{d}:{n}" for d, n, _ in COMMANDS])
def test_documented_command_parses(outcomes, doc, line, command):
    outcome, stderr = outcomes[command]
    assert outcome == "parsed", f"{doc}:{line}: `{command}` -> {outcome}\n{stderr}"


def test_dry_parse_fails_a_wrong_option_and_a_missing_script():
    """The check itself: a removed option and a renamed script are caught, not passed."""
    argvs = [
        ["python", "experiments/table2.py", "--datasets", "a", "--seed", "S"],
        ["python", "experiments/table2.py", "--no-such-option"],
        ["python", "experiments/no_such_script.py"],
        ["indefsvm", "example-data", "d", "--every", "5"],
        ["indefsvm", "study", "run", "x.toml", "--out", "o", "--seed", "1"],
    ]
    code = f"import sys\nsys.argv = ['-', {json.dumps(json.dumps(argvs))}]\n" + _DRY_PARSE
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-4000:]
    (seed, option, script, every, ok) = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seed[0] == "exit 2" and "--seed" in seed[1]  # a placeholder left in: wrong type
    assert option[0] == "exit 2" and "unrecognized arguments: --no-such-option" in option[1]
    assert script[0].startswith("FileNotFoundError")
    assert every[0] == "exit 2" and "--every" in every[1]
    assert ok[0] == "parsed"
