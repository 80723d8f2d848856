"""Every python block of the README and of docs/*.md runs as written; the commands match .ci/run.

Each block runs alone, saved to a file and run as ``python file.py`` in a fresh interpreter (a
subprocess, so one block's imports, names and logging set-up cannot help another), with the
repository's ``indefsvm`` first on the path. The README's large-n examples (``n = 100_000``
points) run with ``n`` scaled down by the explicit substitutions of :data:`SCALE_DOWN`: nothing
else in a block is changed. A block that is deliberately not runnable starts with the visible
comment ``# not run: <why>`` in the markdown and is listed in :data:`NOT_RUN`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

#: (text in the block, replacement): the only changes made before a block runs. The large-n
#: examples keep their code; 100_000 training points become 3_000 so the suite stays fast.
SCALE_DOWN = (
    ("n = 100_000\n", "n = 3_000\n"),
    ("n_train, n_test = 100_000, 20_000\n", "n_train, n_test = 3_000, 600\n"),
)

#: Blocks marked ``# not run: ...`` in the markdown, as (file name, first line of the block).
NOT_RUN: set[tuple[str, str]] = set()

#: Seconds a block may take (the scaled-down large-n examples take a few seconds).
TIMEOUT = 600


def python_blocks() -> list[tuple[str, int, str]]:
    """(file name, line number, code) of every ```python block."""
    blocks = []
    for path in DOCUMENTS:
        text = path.read_text()
        for match in re.finditer(r"^```python\n(.*?)^```", text, flags=re.S | re.M):
            line = text[: match.start()].count("\n") + 1
            blocks.append((path.name, line, match.group(1)))
    return blocks


BLOCKS = python_blocks()


def _scaled(code: str) -> str:
    for old, new in SCALE_DOWN:
        code = code.replace(old, new)
    return code


def _run(code: str) -> subprocess.CompletedProcess:
    """Run a block as users do: saved to a file and run with ``python file.py`` (``python -c``
    hid that the Dask block's worker processes re-import the file: it needs a main guard)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "example.py"
        script.write_text(code)
        return subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
        )


def test_there_are_blocks_and_the_not_run_list_matches_the_markers():
    assert any(name == "README.md" for name, _, _ in BLOCKS), "README has no python example"
    marked = {
        (name, code.splitlines()[0])
        for name, _, code in BLOCKS
        if code.splitlines()[0].startswith("# not run:")
    }
    assert marked == NOT_RUN


def test_scale_down_substitutions_all_apply():
    """Each substitution hits a block, so a changed example cannot silently run at full size."""
    text = "".join(code for _, _, code in BLOCKS)
    for old, _ in SCALE_DOWN:
        assert old in text, f"no block contains {old!r}: update SCALE_DOWN"
    assert "100_000" not in _scaled(text), "a large-n example is not scaled down"


@pytest.mark.parametrize(
    "name, line, code",
    [
        pytest.param(
            *block,
            id=f"{block[0]}:{block[1]}",
            # the large-n examples take 15-20 s even scaled down (Nystroem fits, imports)
            marks=[pytest.mark.slow] if any(old in block[2] for old, _ in SCALE_DOWN) else [],
        )
        for block in BLOCKS
    ],
)
def test_block_runs_as_written(name, line, code):
    if (name, code.splitlines()[0]) in NOT_RUN:
        pytest.skip(f"{name}:{line} is marked as not runnable")
    proc = _run(_scaled(code))
    assert proc.returncode == 0, f"{name}:{line} failed:\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), f"{name}:{line} prints nothing"
    if "res = indefsvm.solve(K0, y" in code:  # the first example: a certified optimum
        assert proc.stdout.split()[0] == "converged", proc.stdout
    if "verbose=" in code:  # with no logging configured, verbose still shows its progress
        assert "IndefiniteNystroem: n=" in proc.stderr or "[pg]" in proc.stderr, (
            f"{name}:{line}: verbose shows nothing:\n{proc.stderr[-2000:]}"
        )


def test_readme_documents_the_cli():
    text = (ROOT / "README.md").read_text()
    for needle in ("indefsvm fit ", "indefsvm predict ", "130", "--allow-pickle", ".skops"):
        assert needle in text, needle


def test_ci_runs_the_readme_commands():
    text = (ROOT / "README.md").read_text()
    bash = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    install, test = bash[0].strip(), bash[1].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert install in ci and test in ci


def test_readme_statement_on_the_low_rank_proxy_kernel():
    """README: ``proxy_kernel_`` is a LowRankProxyKernel if solver_options keep_training_state
    is True, else None."""
    import numpy as np

    from indefsvm import IndefiniteSVC
    from indefsvm.proxy.lowrank import LowRankProxyKernel

    text = " ".join((ROOT / "README.md").read_text().split())
    assert 'is kept only with `solver_options={"keep_training_state": True}`' in text
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    params = {"kernel": "sigmoid", "gamma": 0.05, "coef0": -1.0, "n_components": 20, "tol": 1e-4}
    kept = IndefiniteSVC(
        **params, random_state=0, solver_options={"keep_training_state": True}
    ).fit(X, y)
    assert isinstance(kept.proxy_kernel_, LowRankProxyKernel)
    dropped = IndefiniteSVC(**params, random_state=0).fit(X, y)
    assert dropped.proxy_kernel_ is None
    np.testing.assert_allclose(dropped.decision_function(X), kept.decision_function(X))


def test_one_definition_of_tol_everywhere():
    """tol is relative to |f(alpha) - f(0)| (README, "What tol means"); docs/solvers.md gave
    the old rule |f(best)| until it was found by a user."""
    pattern = re.compile(r"(?<!\w)tol \* max\(1, \|([^|]*)\|\)")
    files = [*DOCUMENTS, *sorted((ROOT / "indefsvm").rglob("*.py"))]
    found = 0
    for path in files:
        text = path.read_text()
        for match in pattern.finditer(text):
            if "old rule" in text[max(0, match.start() - 20) : match.start()]:
                continue  # history, said as such
            found += 1
            assert "f(0)" in match.group(1) or "excess" in match.group(1), (path, match.group(0))
    assert found >= 2


def test_time_series_example_says_when_it_falls_back_to_synthetic_data():
    """Without aeon the README's GunPoint example runs on synthetic series: it must say so."""
    (code,) = [c for name, _, c in BLOCKS if name == "README.md" and "load_aeon(" in c]
    blocked = 'import sys\nsys.modules["aeon"] = None\nsys.modules["aeon.datasets"] = None\n'
    proc = _run(blocked + code)
    assert proc.returncode == 0, proc.stderr[-4000:]
    first = proc.stdout.splitlines()[0]
    assert "aeon is not installed" in first and "SYNTHETIC" in first, proc.stdout
