"""Every experiment script and study spec runs end to end in its smoke setting (issue 26, item 1).

Nothing else runs ``experiments/``, so without these tests a renamed parameter breaks a script
unnoticed (``krein_synthetic.py`` crashed with ``KreinRegressor(method=...)`` after the rename
to ``formulation=``). Each script runs as a subprocess with ``--smoke`` (a tiny setting of the
whole script) and this checkout first on ``PYTHONPATH``; each ``experiments/*.toml`` spec runs
its smoke slice (``indefsvm study run SPEC --smoke``), directly or through the script that
wraps it. The numbers of a smoke run mean nothing: only that every step runs and writes its
outputs, into the given directory and nowhere else.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import require_optional

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = ROOT / "experiments"
SCRIPTS = sorted(p.name for p in EXPERIMENTS.glob("*.py") if not p.name.startswith("_"))
SPECS = sorted(p.name for p in EXPERIMENTS.glob("*.toml"))

#: The file each script's smoke run must write into its ``--out`` directory.
OUTPUTS = {
    "convergence.py": "summary.md",
    "extensions.py": "extensions.md",
    "krein_synthetic.py": "krein_synthetic.md",
    "krein_uci.py": "paper_comparison.md",
    "lowrank_accuracy.py": "lowrank_accuracy.md",
    "nystrom_approximation.py": "nystrom_approximation.md",
    "ong_fig2.py": "ong_fig2.md",
    "scale_krein.py": "scale_krein.md",
    "sh_svm_tuning.py": "sh_svm_tuning.md",
    "spectrum_table.py": "spectrum_table.md",
    "table2.py": "paper_comparison.md",
    "table3.py": "paper_comparison.md",
    "timing.py": "summary.md",
    "ucr_study.py": "ucr_comparison.md",
}
#: Scripts whose smoke run takes more than about 10 s on a loaded 2-core machine.
SLOW_SCRIPTS = {
    "convergence.py",
    "krein_uci.py",
    "table2.py",
    "table3.py",
    "timing.py",
    "ucr_study.py",
}
SLOW_SPECS = {"main_study.toml"}
#: Specs run by a wrapper script (its smoke test runs the spec's smoke slice).
WRAPPED_SPECS = {
    "table2_004.toml": "table2.py",
    "table3_000.toml": "krein_uci.py",
    "table3_004.toml": "table3.py",
    "ucr_study.toml": "ucr_study.py",
}
#: Specs that need an optional package: (module, extra). Without it their smoke test skips,
#: unless the extra is declared installed (INDEFSVM_REQUIRE_TIMESERIES=1): then it fails.
SPEC_NEEDS = {"timeseries_study.toml": ("aeon", "timeseries")}
#: Scripts that need optional packages, as SPEC_NEEDS.
SCRIPT_NEEDS = {
    "ucr_study.py": [("aeon", "timeseries"), ("pyts", "timeseries"), ("tslearn", "timeseries")]
}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = "1"
    env["MPLBACKEND"] = "Agg"
    return env


def test_every_script_and_spec_is_listed():
    # A new script or spec must be added here (and get a smoke setting).
    assert set(OUTPUTS) == set(SCRIPTS)
    assert set(SPECS) == set(WRAPPED_SPECS) | {"main_study.toml", "timeseries_study.toml"}
    for spec, script in WRAPPED_SPECS.items():
        text = (EXPERIMENTS / script).read_text()
        assert re.search(rf'with_name\("{re.escape(spec)}"\)', text), (spec, script)


@pytest.mark.parametrize(
    "script",
    [pytest.param(s, marks=pytest.mark.slow) if s in SLOW_SCRIPTS else s for s in SCRIPTS],
)
def test_script_runs_in_smoke_mode(script, tmp_path):
    for need in SCRIPT_NEEDS.get(script, []):
        require_optional(*need)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(EXPERIMENTS / script), "--smoke", "--out", str(out)],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, (
        f"{script} --smoke failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    )
    assert (out / OUTPUTS[script]).is_file(), sorted(p.name for p in out.iterdir())
    # Nothing written beside --out (the default result folders are relative to the cwd).
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_smoke_without_out_writes_to_a_temporary_directory(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(EXPERIMENTS / "ong_fig2.py"), "--smoke"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert list(tmp_path.iterdir()) == []  # not results/ong_fig2 under the cwd
    written = Path(re.search(r"wrote (\S+)/ong_fig2\.png", proc.stdout).group(1))
    try:
        assert written.name.startswith("indefsvm-smoke-")
        assert (written / "ong_fig2.md").is_file()
    finally:
        for p in written.iterdir():
            p.unlink()
        written.rmdir()


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(s, marks=pytest.mark.slow) if s in SLOW_SPECS else s
        for s in sorted(set(SPECS) - set(WRAPPED_SPECS))
    ],
)
def test_spec_runs_its_smoke_slice(spec, tmp_path):
    need = SPEC_NEEDS.get(spec)
    if need is not None:
        require_optional(*need)
    from indefsvm.cli.study import main
    from indefsvm.studies.runner import study_status

    out = tmp_path / "out"
    code = main(["study", "run", str(EXPERIMENTS / spec), "--smoke", "--out", str(out), "--quiet"])
    assert code == 0
    status = study_status(out)
    assert status.complete and status.name.endswith("(smoke)")
    assert (out / "report.md").is_file()
