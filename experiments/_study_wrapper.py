"""Shared code of the thin wrappers that run a paper's table as a study.

``run(spec, default_out, paper, argv)`` runs ``indefsvm study run SPEC --out OUT [options]``
and writes ``OUT/paper_comparison.md``: our mean over the outer folds next to the published
value, for the rows and methods the paper reports. ``--smoke`` runs the spec's smoke slice
(``indefsvm study run SPEC --smoke``: seconds, numbers meaningless) into a temporary directory
unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from _common import add_smoke_argument, markdown_table, output_dir

from indefsvm.cli.study import main as study_main


def run(
    spec: Path,
    default_out: str,
    paper: dict[tuple[str, str], dict[str, float]],
    measure: str,
    argv: list[str] | None,
    note: str,
) -> int:
    """Run the study of ``spec`` and compare with the published ``paper`` values (in %)."""
    parser = argparse.ArgumentParser(description=f"Run {spec.name} as a study.")
    parser.add_argument("--out", default=None, help=f"default {default_out}")
    parser.add_argument("--n-jobs", default="1")
    parser.add_argument("--backend", default="loky", choices=("loky", "dask"))
    parser.add_argument("--scheduler", default=None)
    parser.add_argument("--quiet", action="store_true")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    args.out = str(output_dir(args.out, args.smoke, default_out))
    cmd = ["run", str(spec), "--out", args.out, "--n-jobs", args.n_jobs, "--backend",
           args.backend] + (["--scheduler", args.scheduler] if args.scheduler else []) + (
        ["--quiet"] if args.quiet else []) + (["--smoke"] if args.smoke else [])  # fmt: skip
    code = study_main(["study", *cmd])
    if code != 0:
        return code
    with open(Path(args.out) / "summary.csv") as fh:
        rows = [r for r in csv.DictReader(fh) if r["measure"] == measure]
    methods = list(dict.fromkeys(m for v in paper.values() for m in v))
    body = []
    for (dataset, kernel), published in paper.items():
        cells = []
        for m in methods:
            ours = next(
                (float(r["mean"]) for r in rows
                 if r["dataset"] == dataset and r["kernel"] == kernel and r["method"] == m),
                None,
            )  # fmt: skip
            pub = published.get(m)
            text = "" if ours is None else f"{100 * ours:.2f}"
            if pub is not None:
                text += f" ({pub:.2f})"
            cells.append(text)
        body.append([f"{dataset} / {kernel}", *cells])
    table = markdown_table(["data set / kernel", *methods], body, align="l" + "r" * len(methods))
    lines = [f"# Ours against the published values ({measure}, %)", "", note, "", *table]
    (Path(args.out) / "paper_comparison.md").write_text("\n".join(lines) + "\n")
    print(Path(args.out) / "paper_comparison.md")
    return 0
