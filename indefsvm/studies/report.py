"""Report of a study: markdown and CSV tables, significance marks, ranks and plots.

Tables give the mean ± standard deviation over the outer folds. As in Oglic & Gaertner (2018),
Sect. 5 (paper 000, Tables 2 and 3), a test at level ``alpha = 0.05`` marks results in bold:
per row (data set and kernel), the best method and every method whose difference
from it is not statistically significant. The test is Welch's t-test by default (as in the
paper); ``significance = "paired-t"`` (the folds are shared by all methods, so a paired test is
valid and more powerful) or ``"wilcoxon"`` can be chosen in the spec. Ranks (1 = best, ties
averaged) are computed per data set and averaged across data sets.

Plots (PNG, linked from ``report.md``): the score of every method per data set and kernel, the
score of every outer fold against the indefiniteness of its training kernel, and the fit time
against the number of training points.
"""

from __future__ import annotations

import logging
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from indefsvm.studies.scoring import greater_is_better
from indefsvm.studies.spec import Study
from indefsvm.studies.store import Store, StoreError
from indefsvm.utils.tables import markdown_table, write_csv

__all__ = ["significance_p", "summarize", "write_report"]

log = logging.getLogger(__name__)


def significance_p(a: np.ndarray, b: np.ndarray, test: str) -> float:
    """Two-sided p-value of ``mean(a) == mean(b)`` on the folds where both have a score.

    ``a[i]`` and ``b[i]`` are the scores of outer fold ``i`` (NaN: the fit failed). Only the
    complete pairs enter the test -- a NaN would make the statistic NaN, and dropping it on
    one side only would compare different folds. Fewer than two complete pairs: 1 (no
    evidence of a difference); identical samples: 1.
    """

    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape:
        raise ValueError(f"fold vectors differ in length: {a.shape} and {b.shape}.")
    complete = np.isfinite(a) & np.isfinite(b)
    a, b = a[complete], b[complete]
    if len(a) < 2:
        return 1.0
    if np.array_equal(a, b):
        return 1.0
    with warnings.catch_warnings():
        # Nearly constant fold scores (e.g. 100% everywhere) trigger precision warnings.
        warnings.simplefilter("ignore", RuntimeWarning)
        return _p_value(a, b, test)


def _p_value(a: np.ndarray, b: np.ndarray, test: str) -> float:
    from scipy import stats

    if test == "welch":
        p = stats.ttest_ind(a, b, equal_var=False).pvalue
    elif test == "paired-t":
        p = stats.ttest_rel(a, b).pvalue
    else:
        d = a - b
        if np.all(d == 0):
            return 1.0
        p = stats.wilcoxon(a, b).pvalue
    if not np.isfinite(p):
        # Zero variance on both sides: different constants differ, equal ones do not.
        return 1.0 if np.isclose(a.mean(), b.mean()) else 0.0
    return float(p)


def _row_label(dataset: str, kernel: str, study: Study) -> str:
    d = next((x for x in study.datasets if x.name == dataset), None)
    single = d is not None and len(study.kernels_for(d)) == 1
    return dataset if single else f"{dataset} / {kernel}"


def _ranks(values: list[float], greater: bool) -> list[float]:
    from scipy.stats import rankdata

    v = np.array([(-x if greater else x) if not math.isnan(x) else np.inf for x in values])
    return rankdata(v, method="average").tolist()


def summarize(records: list[dict[str, Any]], study: Study, measure: str) -> list[dict[str, Any]]:
    """One row per (data set, kernel, method): mean, std, fold scores, rank, bold mark."""
    greater = greater_is_better(measure)
    order = {(d.name, k.label, m.label): i for i, (d, k, m) in enumerate(
        (d, k, m) for d in study.datasets for k in study.kernels_for(d) for m in study.methods
    )}  # fmt: skip
    groups: dict[tuple, list[tuple[int, float]]] = {}
    for r in records:
        value = r["score"] if measure == study.scoring else r["metrics"].get(measure)
        value = math.nan if value is None else float(value)
        groups.setdefault((r["dataset"], r["kernel"], r["method"]), []).append(
            (r["outer_fold"], value)
        )
    rows = []
    for key in sorted(groups, key=lambda k: order.get(k, 10**9)):
        # Indexed by outer fold (NaN: failed or not yet run), so that two methods' vectors pair
        # the same folds.
        present = dict(groups[key])
        n_total = max(study.outer_folds_of(key[0]), max(present) + 1)
        vals = np.array([present.get(f, math.nan) for f in range(n_total)], dtype=float)
        ok = vals[~np.isnan(vals)]
        rows.append(
            {
                "dataset": key[0],
                "kernel": key[1],
                "method": key[2],
                "row": _row_label(key[0], key[1], study),
                "config": key[2],
                "measure": measure,
                "n_folds": n_total,
                # failed fits (NaN score) and folds without a record yet
                "n_failed": int(np.isnan(vals).sum()),
                "mean": float(ok.mean()) if len(ok) else math.nan,
                "std": float(ok.std(ddof=1)) if len(ok) > 1 else math.nan,
                "folds": vals,
            }
        )
    for row in dict.fromkeys(r["row"] for r in rows):
        sub = [r for r in rows if r["row"] == row]
        # A cell with a failed fold cannot win: its mean is over the surviving folds only (a
        # method that fails on the hard folds would look best). It ranks after every complete
        # cell and is never bold.
        complete = [r for r in sub if r["n_failed"] == 0 and not math.isnan(r["mean"])]
        keys = [r["mean"] if r in complete else math.nan for r in sub]
        for r, rank in zip(sub, _ranks(keys, greater), strict=True):
            r["rank"] = rank
        if not complete:
            for r in sub:
                r["bold"], r["p_vs_best"] = False, math.nan
            continue
        best = max(complete, key=lambda r: r["mean"] if greater else -r["mean"])
        for r in sub:
            if math.isnan(r["mean"]):
                r["bold"], r["p_vs_best"] = False, math.nan
                continue
            if r["n_folds"] == 1:
                # One given train/test split: no test is possible; bold marks the best score
                # (and ties) only, never "not significantly different".
                r["p_vs_best"] = math.nan
                r["bold"] = r in complete and r["mean"] == best["mean"]
                continue
            p = 1.0 if r is best else significance_p(r["folds"], best["folds"], study.significance)
            r["p_vs_best"] = p
            r["bold"] = r in complete and (r is best or p >= study.alpha)
    return rows


def _evaluation(study: Study) -> str:
    """How the data sets are evaluated: the study's outer folds and/or their given splits."""
    given = [d.name for d in study.datasets if d.split == "given"]
    stratified = " (stratified)" if study.task == "classification" else ""
    folds = f"{study.outer_folds} outer folds{stratified}"
    if not given:
        return folds
    split = (
        "the given train/test split of each data set (one test score per cell: no std, bold = "
        "best only; tuning folds inside the training part)"
    )
    if len(given) == len(study.datasets):
        return split
    return f"{folds}, and {split.replace('each data set', ', '.join(given))}"


def _fmt_cell(r: dict[str, Any], scale: float) -> str:
    if math.isnan(r["mean"]):
        return "failed"
    std = "" if math.isnan(r["std"]) else f" ± {scale * r['std']:.2f}"
    text = f"{scale * r['mean']:.2f}{std}"
    if r["n_failed"]:
        # Mean over the surviving folds only; marked so that it is not read as a full result.
        return f"{text} † ({r['n_failed']}/{r['n_folds']} folds failed or missing)"
    return f"**{text}**" if r["bold"] else text


_DEFINITIONS = {
    "accuracy": "fraction of the test objects classified correctly",
    "error_rate": "fraction of the test objects misclassified (smaller is better)",
    "recall": "fraction of the positive class (the larger label) classified correctly",
    "average": "(accuracy + recall) / 2, recall of the positive class (the larger label); the "
    "criterion of Luss & d'Aspremont (paper 004, Sect. 5.1)",
    "balanced_accuracy": "mean over the classes of the per-class recall",
    "f1": "F1 score of the positive class (the larger label)",
}


def _measure_definition(name: str) -> str:
    return _DEFINITIONS.get(name, f"scikit-learn's scorer `{name}` (greater is better)")


def _percent(measure: str) -> bool:
    return measure in ("accuracy", "recall", "average", "balanced_accuracy", "f1", "error_rate")


def _table(rows: list[dict[str, Any]], study: Study, measure: str) -> list[str]:
    configs = list(dict.fromkeys(r["config"] for r in rows))
    scale = 100.0 if _percent(measure) else 1.0
    body = []
    for row in dict.fromkeys(r["row"] for r in rows):
        cells = {r["config"]: r for r in rows if r["row"] == row}
        body.append([row, *(_fmt_cell(cells[c], scale) if c in cells else "" for c in configs)])
    ranks = []
    for c in configs:
        rs = [r["rank"] for r in rows if r["config"] == c]
        ranks.append(f"{np.mean(rs):.2f}" if rs else "")
    body.append(["*average rank*", *ranks])
    table = markdown_table(["data set / kernel", *configs], body, align="l" + "r" * len(configs))
    lines = table.split("\n")
    return lines


def _plots(
    records: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    study: Study,
    timings: dict[tuple, float],
    out: Path,
    figures: dict[str, Any] | None = None,
) -> list[tuple[str, str]]:
    """Write the PNG plots; with ``figures``, keep the Figure objects there (tests)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measure = study.scoring
    scale = 100.0 if _percent(measure) else 1.0
    unit = " (%)" if scale == 100.0 else ""
    configs = list(dict.fromkeys(r["config"] for r in rows))
    datasets = list(dict.fromkeys(r["row"] for r in rows))
    cmap = plt.get_cmap("tab10" if len(configs) <= 10 else "tab20")
    colors = {c: cmap(i % cmap.N) for i, c in enumerate(configs)}
    # Methods differ by marker as well as colour: readable in grey print and for colour-blind
    # readers.
    method_markers = "osD^v<>pP*Xh"
    marks = {c: method_markers[i % len(method_markers)] for i, c in enumerate(configs)}
    made = []

    def save(fig: Any, name: str) -> None:
        fig.savefig(out / name, dpi=110)
        if figures is not None:
            figures[name] = fig
        else:
            plt.close(fig)

    # 1. score per method, data set and kernel
    # One panel per row with its own y range: data sets differ more than methods do.
    ncols = min(3, len(datasets))
    nrows = -(-len(datasets) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.2 + 2.6 * ncols, 0.6 + 2.6 * nrows),
                             squeeze=False)  # fmt: skip
    for ax, d in zip(axes.flat, datasets, strict=False):
        for j, c in enumerate(configs):
            r = next((x for x in rows if x["config"] == c and x["row"] == d), None)
            if r is None or math.isnan(r["mean"]):
                continue
            ax.errorbar([j], [scale * r["mean"]], yerr=[0.0 if math.isnan(r["std"])
                        else scale * r["std"]], fmt=marks[c], ms=6, capsize=3, color=colors[c],
                        mfc=colors[c] if r["bold"] else "white")  # fmt: skip
        ax.set_title(d, fontsize=9)
        ax.set_xticks(range(len(configs)), [""] * len(configs))
        ax.set_xlim(-0.7, len(configs) - 0.3)
        ax.grid(axis="y", alpha=0.3)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(datasets) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"{measure}{unit}", fontsize=9)
    handles = [
        plt.Line2D([], [], color=colors[c], marker=marks[c], ls="", label=c) for c in configs
    ]
    right = 1.0 - 2.6 / (3.2 + 2.6 * ncols)  # room for the legend
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(right + 0.01, 0.5),
               fontsize=8)  # fmt: skip
    fig.suptitle(f"{study.name}: {measure}, mean ± std over {_evaluation(study)} "
                 "(filled: bold in the table)", fontsize=10)  # fmt: skip
    fig.tight_layout(rect=(0, 0, right, 1))
    save(fig, "scores.png")
    made.append(("Score per method and data set", "scores.png"))

    # 2. score against indefiniteness of the training kernel
    fig, ax = plt.subplots(figsize=(8.0, 4.2))
    markers = "osD^v<>pP*X"
    ds_marker = {d: markers[i % len(markers)] for i, d in enumerate(datasets)}
    for c in configs:
        xs = [r for r in records if r["method"] == c and r["iota"] is not None]
        ax.scatter([], [], color=colors[c], label=c, s=18)
        for d in datasets:
            pts = [
                r
                for r in xs
                if _row_label(r["dataset"], r["kernel"], study) == d and r["score"] is not None
            ]
            ax.scatter([r["iota"] for r in pts], [scale * r["score"] for r in pts],
                       color=colors[c], marker=ds_marker[d], s=18, alpha=0.8)  # fmt: skip
    for d in datasets:
        ax.scatter([], [], color="gray", marker=ds_marker[d], label=d, s=18)
    ax.set_xlabel("indefiniteness iota of the training kernel (sum |neg. eig.| / sum |eig.|)")
    ax.set_ylabel(f"outer-fold {measure}{unit}")
    ax.set_title("Score against indefiniteness (one point per outer fold)")
    ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1.0), loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    save(fig, "score_vs_indefiniteness.png")
    made.append(("Score against indefiniteness", "score_vs_indefiniteness.png"))

    # 3. fit time against n: one point per (method, data set / kernel) -- markers only, since
    # a line through points of different data sets would suggest a trend that is none.
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for c in configs:
        xs, ys = [], []
        for d in datasets:
            ns, ts = [], []
            for r in records:
                t = timings.get((r["dataset"], r["kernel"], r["method"], r["outer_fold"]))
                if (
                    r["method"] == c
                    and _row_label(r["dataset"], r["kernel"], study) == d
                    and t is not None
                    and not math.isnan(t)
                ):
                    ns.append(int(r["n_train"]))
                    ts.append(t)
            if ts:
                xs.append(float(np.median(ns)))
                ys.append(float(np.median(ts)))
        if xs:
            ax.plot(xs, ys, ls="none", marker=marks[c], color=colors[c], label=c, ms=6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training points n (outer fold; median over folds)")
    ax.set_ylabel("fit time (s), median over folds")
    ax.set_title("Fit time of the selected model against n (one point per data set)")
    ax.legend(fontsize=8, bbox_to_anchor=(1.01, 1.0), loc="upper left")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    save(fig, "fit_time_vs_n.png")
    made.append(("Fit time against n", "fit_time_vs_n.png"))
    return made


def write_report(directory: str | Path) -> Path:
    """Write ``report.md``, ``summary.csv`` and the plots of a results directory.

    Returns
    -------
    Path
        ``DIR/report.md``.
    """
    out = Path(directory)
    store = Store(out)
    try:
        study = store.study()
        records = store.outer_records()
        spec_hash = store.spec_hash()
        n_in, n_out = store.counts()
    finally:
        store.close()
    if not records:
        raise StoreError(f"{out} holds no finished test record yet; nothing to report.")
    timings = {
        (r["dataset"], r["kernel"], r["method"], r["outer_fold"]): (
            math.nan if r["fit_time"] is None else r["fit_time"]
        )
        for r in records
    }
    measures = list(dict.fromkeys([study.scoring, *study.metrics]))
    summaries = {m: summarize(records, study, m) for m in measures}

    write_csv(
        out / "summary.csv",
        ["dataset", "kernel", "method", "measure", "mean", "std", "n_folds", "n_failed", "rank",
         "bold", "p_vs_best"],
        [[r["dataset"], r["kernel"], r["method"], m, repr(r["mean"]), repr(r["std"]),
          r["n_folds"], r["n_failed"], r["rank"], int(r["bold"]), repr(r["p_vs_best"])]
         for m in measures for r in summaries[m]],
    )  # fmt: skip

    test_name = {
        "welch": "Welch's t-test",
        "paired-t": "the paired t-test over the shared outer folds",
        "wilcoxon": "the Wilcoxon signed-rank test",
    }[study.significance]
    budget = (
        "the full joint grid (kernel x method parameters)"
        if study.search == "grid"
        else f"{study.n_iter} seeded random draws from the joint grid"
    )
    lines = [
        f"# Study `{study.name}`",
        "",
        f"Spec hash `{spec_hash[:12]}`, seed {study.seed}; {_evaluation(study)}, "
        f"{study.inner_folds} inner folds; tuning budget per method: {budget}, selected by mean "
        "inner "
        f"`{study.scoring}`. Every method gets the same folds and the same kernel matrices. "
        f"Records: {n_out} test, {n_in} tuning.",
        "",
        f"Cells: mean ± std over the outer folds{' (in %)' if _percent(study.scoring) else ''} "
        "(a data set with a given split: its one test score, bold only if best). "
        f"**Bold**: the best method of the row (data set and kernel) and those not significantly "
        f"different from it ({test_name}, p >= {study.alpha:g}; as in Oglic & Gaertner 2018). "
        "Tests pair the outer folds where both methods have a score. A cell marked † has "
        "failed or missing folds: its mean is over the remaining folds only, so it is never bold "
        "and ranks after every complete cell of its row. "
        "Last row: *average rank*, the method's rank (1 = best, ties averaged) averaged over the "
        "rows (data set and kernel).",
        "",
        "Measures (on the outer test fold):",
        "",
        *[f"* `{m}`: {_measure_definition(m)}" for m in measures],
        "",
    ]
    for m in measures:
        lines += [f"## {m}", "", *_table(summaries[m], study, m), ""]

    # Solver status and indefiniteness
    lines += [
        "## Fits",
        "",
        "*mean iota*: the indefiniteness iota = sum |negative eigenvalues| / sum |eigenvalues| "
        "of the outer training kernel, averaged over the outer folds (0: positive "
        "semidefinite). Kernel parameters are tuned jointly with each method's parameters, so "
        "each method is scored with the kernel at the parameters it selected: iota differs "
        "between the methods of a row when the kernel has a tuned parameter (e.g. a sigmoid's "
        "gamma), and is the same for all of them with fixed kernel parameters or a precomputed "
        "kernel.",
        "",
    ]
    fits = []
    for r in summaries[study.scoring]:
        recs = [x for x in records if (x["dataset"], x["kernel"], x["method"]) ==
                (r["dataset"], r["kernel"], r["method"])]  # fmt: skip
        times = [timings[(x["dataset"], x["kernel"], x["method"], x["outer_fold"])] for x in recs]
        statuses: dict[str, int] = {}
        for x in recs:
            statuses[x["status"]] = statuses.get(x["status"], 0) + 1
        iotas = [x["iota"] for x in recs if x["iota"] is not None]
        warns = sorted({w for x in recs for w in x["warnings"].split(",") if w})
        fits.append([
            r["row"],
            r["config"],
            f"{np.nanmedian(times):.3g}",
            ", ".join(f"{k} x{v}" for k, v in sorted(statuses.items())),
            f"{np.mean(iotas) if iotas else math.nan:.3f}",
            ", ".join(warns),
        ])  # fmt: skip
    columns = ["data set / kernel", "method", "median fit time (s)", "status", "mean iota",
               "warnings"]  # fmt: skip
    lines += markdown_table(columns, fits, align="llrlrl").split("\n")
    lines.append("")
    plots = _plots(records, summaries[study.scoring], study, timings, out)
    lines += ["## Plots", ""]
    for title, fname in plots:
        lines += [f"### {title}", "", f"![{title}]({fname})", ""]
    lines += [
        "Files: `results.csv` (one row per outer fold; no timing columns), `timings.csv`, "
        "`search.csv` (every tuning candidate), `summary.csv`.",
        "",
    ]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    log.info("wrote %s", path)
    return path
