"""The README's example runs as written and its commands match .ci/run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_example_runs():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    namespace: dict = {}
    exec(compile(blocks[0], "README example", "exec"), namespace)  # noqa: S102
    res = namespace["res"]
    assert res.status == "converged"
    assert res.gap <= 1e-6 * max(1.0, abs(res.objective))


def test_ci_runs_the_readme_commands():
    text = (ROOT / "README.md").read_text()
    bash = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    install, test = bash[0].strip(), bash[1].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert install in ci and test in ci
