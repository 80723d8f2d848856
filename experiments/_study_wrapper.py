"""Shared code of the thin wrappers that run a paper's table as a study.

``run(spec, default_out, paper, argv)`` runs ``indefsvm study run SPEC --out OUT [options]``
and writes ``OUT/paper_comparison.md``: our mean over the outer folds next to the published
value, for the rows and methods the paper reports; ``OUT/methods.md``: every method on every
row (mean ± std, bold as the study's report marks it, average ranks); ``OUT/methods.png``: the
same drawn, one panel per data set. ``--from DIR [DIR ...]`` skips the run and combines the
``summary.csv`` of stores the spec was run into one data set each (``indefsvm study run SPEC
--datasets D --out DIR``, the way a long spec is run in pieces). ``--datasets`` and ``--seed``
are passed to ``indefsvm study run`` (a subset of the data sets; other folds). ``--smoke`` runs
the spec's smoke slice (``indefsvm study run SPEC --smoke``: seconds, numbers meaningless) into
a temporary directory unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Callable
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
    after: Callable[[Path], None] | None = None,
) -> int:
    """Run the study of ``spec`` (or combine stores run per data set) and compare with the
    published ``paper`` values (in %); ``after(OUT)`` then adds the script's own outputs."""
    parser = argparse.ArgumentParser(description=f"Run {spec.name} as a study.")
    parser.add_argument("--out", default=None, help=f"default {default_out}")
    parser.add_argument("--n-jobs", default="1")
    parser.add_argument("--backend", default="loky", choices=("loky", "dask"))
    parser.add_argument("--scheduler", default=None)
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument(
        "--datasets",
        nargs="+",
        metavar="NAME",
        default=None,
        help="run only these data sets of the spec (indefsvm study run --datasets)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="replace the spec's study.seed: other folds (indefsvm study run --seed)",
    )
    parser.add_argument(
        "--from",
        dest="stores",
        nargs="+",
        metavar="DIR",
        default=None,
        help="do not run: combine the summary.csv of studies of this spec run one data set per"
        " store (indefsvm study run SPEC --datasets D --out DIR)",
    )
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    args.out = str(output_dir(args.out, args.smoke, default_out))
    if args.stores:
        rows = [r for store in args.stores for r in _summary_rows(Path(store), measure)]
        Path(args.out).mkdir(parents=True, exist_ok=True)
    else:
        cmd = ["run", str(spec), "--out", args.out, "--n-jobs", args.n_jobs, "--backend",
               args.backend] + (["--scheduler", args.scheduler] if args.scheduler else []) + (
            ["--quiet"] if args.quiet else []) + (["--smoke"] if args.smoke else []) + (
            ["--datasets", *args.datasets] if args.datasets else []) + (
            ["--seed", str(args.seed)] if args.seed is not None else [])  # fmt: skip
        code = study_main(["study", *cmd])
        if code != 0:
            return code
        rows = _summary_rows(Path(args.out), measure)
    out = Path(args.out)
    _write_comparison(out, rows, paper, measure, note)
    _write_method_table(out, rows, paper, measure)
    _draw(out, rows, measure)
    if after is not None:
        after(out)
    print(out / "paper_comparison.md")
    return 0


def _summary_rows(store: Path, measure: str) -> list[dict[str, str]]:
    with open(store / "summary.csv") as fh:
        return [r for r in csv.DictReader(fh) if r["measure"] == measure]


def _row_keys(rows: list[dict[str, str]]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((r["dataset"], r["kernel"]) for r in rows))


def _methods(rows: list[dict[str, str]]) -> list[str]:
    return list(dict.fromkeys(r["method"] for r in rows))


def _write_comparison(
    out: Path,
    rows: list[dict[str, str]],
    paper: dict[tuple[str, str], dict[str, float]],
    measure: str,
    note: str,
) -> None:
    """``paper_comparison.md``: our means next to the published ones, on the paper's rows."""
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
    (out / "paper_comparison.md").write_text("\n".join(lines) + "\n")


def _write_method_table(
    out: Path,
    rows: list[dict[str, str]],
    paper: dict[tuple[str, str], dict[str, float]],
    measure: str,
) -> None:
    """``methods.md``: every method on every row, mean ± std in %, bold and ranked as the study's
    report marks them (``summary.csv``: the best of the row and those not significantly
    different from it; ranks with ties averaged, in the measure's direction), with the paper's
    value of its first method where it prints one, and each method's average rank."""
    methods = _methods(rows)
    paper_method = next((m for v in paper.values() for m in v), None)
    by_key = {(r["dataset"], r["kernel"], r["method"]): r for r in rows}
    ranks: dict[str, list[float]] = {m: [] for m in methods}
    body = []
    for dataset, kernel in _row_keys(rows):
        cells = []
        for m in methods:
            r = by_key.get((dataset, kernel, m))
            if r is None:
                cells.append("")
                continue
            # the study's own rank (ties averaged, the measure's direction, failed folds last)
            ranks[m].append(float(r["rank"]))
            std = float(r["std"])
            # one split (a given train/test split): one score, no std
            text = f"{100 * float(r['mean']):.2f}" + ("" if std != std else f" ± {100 * std:.2f}")
            cells.append(f"**{text}**" if r["bold"] == "1" else text)
        if paper_method is not None:
            published = paper.get((dataset, kernel), {}).get(paper_method)
            cells.append("–" if published is None else f"{published:.2f}")
        body.append([f"{dataset} / {kernel}", *cells])
    columns = ["data set / kernel", *methods]
    if paper_method is not None:
        columns.append(f"paper, {paper_method}")
    table = markdown_table(columns, body, align="l" + "r" * (len(columns) - 1))
    average = ", ".join(
        f"{m} {sum(v) / len(v):.2f}"
        for m, v in sorted(ranks.items(), key=lambda kv: sum(kv[1]) / max(len(kv[1]), 1))
        if v
    )
    lines = [
        f"# Every method ({measure}, %, {_what(rows)})",
        "",
        *table,
        "",
        f"Average rank over the {len(body)} rows (ties share their rank): {average}.",
    ]
    (out / "methods.md").write_text("\n".join(lines) + "\n")


def _what(rows: list[dict[str, str]]) -> str:
    """What a cell is: a mean ± std over folds, or the one score of a given split."""
    single = all(r["n_folds"] == "1" for r in rows)
    return "test score on the given split" if single else "mean ± std over the outer folds"


def _draw(out: Path, rows: list[dict[str, str]], measure: str) -> None:
    """``methods.png``: one panel per data set, the kernels along x, each method's mean ± std
    (filled marker: bold in the table)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    methods = _methods(rows)
    fig, axes = plt.subplots(
        1, len(datasets), figsize=(3.2 * len(datasets) + 1.5, 3.4), squeeze=False
    )
    markers = "osD^vP*X"
    for ax, dataset in zip(axes[0], datasets, strict=True):
        kernels = list(dict.fromkeys(r["kernel"] for r in rows if r["dataset"] == dataset))
        for j, m in enumerate(methods):
            offset = (j - (len(methods) - 1) / 2) * 0.15
            for i, kernel in enumerate(kernels):
                r = next(
                    (r for r in rows
                     if (r["dataset"], r["kernel"], r["method"]) == (dataset, kernel, m)),
                    None,
                )  # fmt: skip
                if r is None:
                    continue
                color = f"C{j}"
                # the measures are fractions: the bar stops at 0 and 100 %
                mean, std = float(r["mean"]), float(r["std"])
                std = 0.0 if std != std else std  # one split: no bar
                bar = [[100 * min(std, mean)], [100 * min(std, 1.0 - mean)]]
                ax.errorbar(
                    i + offset, 100 * mean, yerr=bar,
                    fmt=markers[j % len(markers)], color=color, capsize=2,
                    markerfacecolor=color if r["bold"] == "1" else "white",
                    label=m if i == 0 else None,
                )  # fmt: skip
        ax.set_xticks(range(len(kernels)))
        ax.set_xticklabels(kernels, rotation=30, ha="right", fontsize=8)
        ax.set_title(dataset)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel(f"{measure} (%)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=8)
    fig.suptitle(f"{measure}, {_what(rows)} (filled: bold in methods.md)")
    fig.tight_layout(rect=(0, 0, 1 - 1.4 / fig.get_figwidth(), 0.95))
    fig.savefig(out / "methods.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
