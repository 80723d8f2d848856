"""Report of a study: markdown and CSV tables, significance marks, ranks and plots.

Tables give the mean ± standard deviation over the outer folds. As in Oglic & Gaertner (2018),
Sect. 5 (paper 000, Tables 2 and 3), a test at level ``alpha = 0.05`` marks results in bold:
per row (data set and kernel), the best method and every method whose difference from it is
not statistically significant. Every method sees the same outer folds, so the default test is
paired: the corrected resampled t-test of Nadeau & Bengio (2003) over the shared folds
(``significance = "nadeau-bengio"``; :func:`indefsvm.studies.statistics.corrected_resampled_t`).
The papers' unpaired Welch test is ``significance = "welch"``; ``"paired-t"`` (the plain paired
t-test, too liberal on overlapping training parts) and ``"wilcoxon"`` can also be chosen.

Across the rows: average ranks (1 = best, ties averaged), each method against the best-ranked
one by the Wilcoxon signed-rank test over the rows with wins/ties/losses, and Nemenyi's
critical difference of average ranks with its diagram (Demšar 2006). ``selected_params.csv``
and a table of the report list the hyper-parameters each method selected in every outer fold.

Plots (PNG, linked from ``report.md``): the score of every method per data set and kernel, the
score of every outer fold against the indefiniteness of its training kernel, the fit time
against the number of training points and the critical-difference diagram.
"""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from indefsvm.studies.scoring import greater_is_better
from indefsvm.studies.spec import Study
from indefsvm.studies.store import Store, StoreError
from indefsvm.utils.tables import markdown_table, write_csv

__all__ = ["significance_p", "summarize", "write_report"]

log = logging.getLogger(__name__)


def significance_p(
    a: np.ndarray, b: np.ndarray, test: str, *, test_train_ratio: float | None = None
) -> float:
    """Two-sided p-value of ``mean(a) == mean(b)`` on the folds where both have a score.

    ``a[i]`` and ``b[i]`` are the scores of outer fold ``i`` (NaN: the fit failed). Only the
    complete pairs enter the test -- a NaN would make the statistic NaN, and dropping it on
    one side only would compare different folds. Fewer than two complete pairs: 1 (no
    evidence of a difference); identical samples: 1.

    ``test`` is ``"nadeau-bengio"`` (the corrected resampled t-test; needs
    ``test_train_ratio``, the folds' ``n_test / n_train``), ``"welch"``, ``"paired-t"`` or
    ``"wilcoxon"``.
    """
    if test == "nadeau-bengio" and test_train_ratio is None:
        raise ValueError("the nadeau-bengio test needs test_train_ratio (n_test / n_train).")

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
        return _p_value(a, b, test, test_train_ratio)


def _p_value(a: np.ndarray, b: np.ndarray, test: str, ratio: float | None) -> float:
    from scipy import stats

    if test == "nadeau-bengio":
        from indefsvm.studies.statistics import corrected_resampled_t

        return corrected_resampled_t(a, b, ratio)[1]
    if test == "welch":
        p = stats.ttest_ind(a, b, equal_var=False).pvalue
    elif test == "paired-t":
        p = stats.ttest_rel(a, b).pvalue
    elif test == "wilcoxon":
        d = a - b
        if np.all(d == 0):
            return 1.0
        p = stats.wilcoxon(a, b).pvalue
    elif test != "paired-t":
        raise ValueError(f"unknown significance test {test!r}.")
    if not np.isfinite(p):
        # Zero variance on both sides: different constants differ, equal ones do not.
        return 1.0 if np.isclose(a.mean(), b.mean()) else 0.0
    return float(p)


def _row_label(dataset: str, kernel: str, study: Study) -> str:
    """The row of a table or plot: the data set and the kernel (whatever their number)."""
    return f"{dataset} / {kernel}"


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
    # n_test / n_train of each outer fold of a data set (the corrected resampled t-test)
    sizes: dict[str, dict[int, float]] = {}
    for r in records:
        value = r["score"] if measure == study.scoring else r["metrics"].get(measure)
        value = math.nan if value is None else float(value)
        groups.setdefault((r["dataset"], r["kernel"], r["method"]), []).append(
            (r["outer_fold"], value)
        )
        if r.get("n_train") and r.get("n_test") is not None:
            sizes.setdefault(r["dataset"], {})[r["outer_fold"]] = r["n_test"] / r["n_train"]
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
            ratios = sizes.get(r["dataset"])
            # k-fold cross-validation: n_test / n_train = 1 / (k - 1) up to rounding
            ratio = (
                float(np.mean(list(ratios.values())))
                if ratios
                else 1.0 / max(study.outer_folds_of(r["dataset"]) - 1, 1)
            )
            p = (
                1.0
                if r is best
                else significance_p(
                    r["folds"], best["folds"], study.significance, test_train_ratio=ratio
                )
            )
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


def _measure_range(measure: str) -> tuple[float, float] | None:
    """The range of a measure's values (fractions), None when it is unbounded."""
    return (0.0, 1.0) if _percent(measure) else None


def _clipped_error(
    mean: float, std: float, bounds: tuple[float, float] | None
) -> tuple[float, float]:
    """Lower and upper length of a ``mean ± std`` bar cut at the measure's range."""
    if math.isnan(std):
        return 0.0, 0.0
    if bounds is None:
        return std, std
    return max(0.0, min(std, mean - bounds[0])), max(0.0, min(std, bounds[1] - mean))


def _score_description(study: Study, rows: list[dict[str, Any]]) -> str:
    """What a plotted score is: a mean ± std over folds, or one score of a given split."""
    single = sorted({r["dataset"] for r in rows if r["n_folds"] == 1})
    folded = sorted({r["dataset"] for r in rows if r["n_folds"] > 1})
    if not folded:
        return "test score on the given train/test split (one split: no error bars)"
    text = f"mean ± std over {study.outer_folds} outer folds (bars cut at the measure's range)"
    if single:
        text += f"; {', '.join(single)}: one score on the given split"
    return text


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
    configs = list(dict.fromkeys(r["config"] for r in rows))
    cmap = plt.get_cmap("tab10" if len(configs) <= 10 else "tab20")
    # Methods differ by marker as well as colour: readable in grey print and for colour-blind
    # readers.
    method_markers = "osD^v<>pP*Xh"
    style = _PlotStyle(
        measure=measure,
        scale=scale,
        unit=" (%)" if scale == 100.0 else "",
        configs=configs,
        datasets=list(dict.fromkeys(r["row"] for r in rows)),
        colors={c: cmap(i % cmap.N) for i, c in enumerate(configs)},
        marks={c: method_markers[i % len(method_markers)] for i, c in enumerate(configs)},
    )

    def save(fig: Any, name: str) -> None:
        # "tight": titles, tick labels and legends outside the axes are kept whole
        fig.savefig(out / name, dpi=110, bbox_inches="tight")
        if figures is not None:
            figures[name] = fig
        else:
            plt.close(fig)

    save(_plot_scores(plt, rows, study, style), "scores.png")
    save(_plot_score_vs_iota(plt, records, study, style), "score_vs_indefiniteness.png")
    save(_plot_fit_time(plt, records, study, timings, style), "fit_time_vs_n.png")
    return [
        ("Score per method and data set", "scores.png"),
        ("Score against indefiniteness", "score_vs_indefiniteness.png"),
        ("Fit time against n", "fit_time_vs_n.png"),
    ]


@dataclass(frozen=True)
class _PlotStyle:
    """What the plots share: the measure and its scale, the methods' colours and markers."""

    measure: str
    scale: float
    unit: str
    configs: list[str]
    datasets: list[str]
    colors: dict[str, Any]
    marks: dict[str, str]


def _plot_scores(plt: Any, rows: list[dict[str, Any]], study: Study, style: _PlotStyle) -> Any:
    """Plot 1: the score per method, data set and kernel, one panel per data set / kernel."""
    measure, scale, unit = style.measure, style.scale, style.unit
    configs, datasets, colors, marks = style.configs, style.datasets, style.colors, style.marks
    # One panel per row with its own y range: data sets differ more than methods do. Error
    # bars (std over the outer folds) stop at the measure's range (no accuracy above 100 %);
    # a given split has one score and no bar.
    bounds = _measure_range(measure)
    ncols = min(3, len(datasets))
    nrows = -(-len(datasets) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(1.2 + (1.0 + 0.45 * len(configs)) * ncols,
                             1.4 + 2.8 * nrows), squeeze=False, layout="constrained")  # fmt: skip
    for ax, d in zip(axes.flat, datasets, strict=False):
        for j, c in enumerate(configs):
            r = next((x for x in rows if x["config"] == c and x["row"] == d), None)
            if r is None or math.isnan(r["mean"]):
                continue
            low, high = _clipped_error(r["mean"], r["std"], bounds)
            ax.errorbar([j], [scale * r["mean"]], yerr=[[scale * low], [scale * high]],
                        fmt=marks[c], ms=6, capsize=3, color=colors[c],
                        mfc=colors[c] if r["bold"] else "white")  # fmt: skip
        ax.set_title(d, fontsize=9)
        ax.set_xticks(range(len(configs)), configs, rotation=35, ha="right", fontsize=8)
        ax.set_xlim(-0.7, len(configs) - 0.3)
        if bounds is not None:
            lo, hi = ax.get_ylim()
            ax.set_ylim(max(lo, scale * bounds[0]), min(hi, scale * bounds[1] * 1.002))
        ax.grid(axis="y", alpha=0.3)
        ax.tick_params(axis="y", labelsize=8)
    for ax in list(axes.flat)[len(datasets) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"{measure}{unit}", fontsize=9)
    handles = [
        plt.Line2D([], [], color=colors[c], marker=marks[c], ls="", label=c) for c in configs
    ]
    fig.legend(handles=handles, loc="outside right center", fontsize=8)
    fig.suptitle(f"{study.name}: {measure}, {_score_description(study, rows)}\n"
                 "filled marker: bold in the table", fontsize=10)  # fmt: skip
    return fig


def _plot_score_vs_iota(
    plt: Any, records: list[dict[str, Any]], study: Study, style: _PlotStyle
) -> Any:
    """Plot 2: the outer-fold scores against the indefiniteness of the training kernel."""
    scale, colors, datasets = style.scale, style.colors, style.datasets
    fig, ax = plt.subplots(figsize=(8.0, 4.2))
    markers = "osD^v<>pP*X"
    ds_marker = {d: markers[i % len(markers)] for i, d in enumerate(datasets)}
    for c in style.configs:
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
    ax.set_ylabel(f"outer-fold {style.measure}{style.unit}")
    ax.set_title("Score against indefiniteness (one point per outer fold)")
    ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1.0), loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _plot_fit_time(
    plt: Any,
    records: list[dict[str, Any]],
    study: Study,
    timings: dict[tuple, float],
    style: _PlotStyle,
) -> Any:
    """Plot 3: the fit time against n, one point per method and data set / kernel."""
    # Markers only, since a line through points of different data sets would suggest a trend
    # that is none.
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for c in style.configs:
        xs, ys = [], []
        for d in style.datasets:
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
            ax.plot(xs, ys, ls="none", marker=style.marks[c], color=style.colors[c], label=c, ms=6)
    # A log axis only when the values span a decade: three nearly equal n on a log axis
    # look like a trend of labels (2.5 x 10^2 ... 2.9 x 10^2).
    all_n = [x for line in ax.get_lines() for x in line.get_xdata()]
    all_t = [y for line in ax.get_lines() for y in line.get_ydata() if y > 0]
    if all_n and max(all_n) >= 10 * min(all_n):
        ax.set_xscale("log")
    if all_t and max(all_t) >= 10 * min(all_t):
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel("training points n (outer fold; median over folds)")
    ax.set_ylabel("fit time (s), median over folds")
    ax.set_title("Fit time of the selected model against n (one point per data set)")
    ax.legend(fontsize=8, bbox_to_anchor=(1.01, 1.0), loc="upper left")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    return fig


def _format_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _selected_params(
    records: list[dict[str, Any]], study: Study, out: Path
) -> tuple[list[str], Path]:
    """``selected_params.csv`` and a markdown table: the candidate each method selected (by
    its mean inner score) in every outer fold, kernel and method parameters."""
    import json

    order = {(d.name, k.label, m.label): i for i, (d, k, m) in enumerate(
        (d, k, m) for d in study.datasets for k in study.kernels_for(d) for m in study.methods
    )}  # fmt: skip
    recs = sorted(
        (r for r in records if r.get("params")),
        key=lambda r: (order.get((r["dataset"], r["kernel"], r["method"]), 10**9),
                       r["outer_fold"]),
    )  # fmt: skip
    parsed = [(r, json.loads(r["params"])) for r in recs]
    names = [
        f"{part}.{name}"
        for part in ("kernel", "method")
        for name in sorted({n for _, p in parsed for n in p.get(part, {})})
    ]
    path = out / "selected_params.csv"
    write_csv(
        path,
        ["dataset", "kernel", "method", "outer_fold", *names, "inner_score", "score"],
        [[r["dataset"], r["kernel"], r["method"], r["outer_fold"],
          *(_format_value(p.get(n.split(".", 1)[0], {}).get(n.split(".", 1)[1], ""))
            for n in names),
          "" if r.get("inner_score") is None else repr(r["inner_score"]),
          "" if r.get("score") is None else repr(r["score"])]
         for r, p in parsed],
    )  # fmt: skip
    n_folds = max((r["outer_fold"] for r in recs), default=-1) + 1
    cells: dict[tuple[str, str], list[str]] = {}
    for r, p in parsed:
        key = (_row_label(r["dataset"], r["kernel"], study), r["method"])
        row = cells.setdefault(key, [""] * n_folds)
        parts = [", ".join(f"{k}={_format_value(v)}" for k, v in sorted(p.get(part, {}).items()))
                 for part in ("kernel", "method")]  # fmt: skip
        row[r["outer_fold"]] = "; ".join(x for x in parts if x) or "(defaults)"
    columns = ["data set / kernel", "method", *(f"fold {f}" for f in range(n_folds))]
    body = [[row, method, *v] for (row, method), v in cells.items()]
    return markdown_table(columns, body, align="ll" + "l" * n_folds).split("\n"), path


def _across_rows(
    rows: list[dict[str, Any]], study: Study, measure: str, out: Path
) -> tuple[list[str], list[tuple[str, str]]]:
    """Average ranks over the rows, each method against the best-ranked one (Wilcoxon over the
    rows), Friedman's test and Nemenyi's critical difference with its diagram."""
    from indefsvm.studies.statistics import (
        average_ranks,
        critical_difference,
        draw_cd_diagram,
        wilcoxon_over_datasets,
    )

    greater = greater_is_better(measure)
    configs = list(dict.fromkeys(r["config"] for r in rows))
    by = {(r["row"], r["config"]): r for r in rows}
    complete = [
        row for row in dict.fromkeys(r["row"] for r in rows)
        if all((row, c) in by and by[(row, c)]["n_failed"] == 0
               and not math.isnan(by[(row, c)]["mean"]) for c in configs)
    ]  # fmt: skip
    lines = [f"## Across data sets ({measure})", ""]
    if len(configs) < 2 or len(complete) < 2:
        lines += [
            f"Needs two methods and two rows (data set and kernel) where every method has a "
            f"complete score; this study has {len(configs)} method(s) and {len(complete)} such "
            "row(s).",
            "",
        ]
        return lines, []
    scores = np.array([[by[(row, c)]["mean"] for c in configs] for row in complete])
    ranks = average_ranks(scores, greater)
    best = int(np.argmin(ranks))
    n, k = scores.shape
    cd = critical_difference(k, n, study.alpha)
    body = []
    for j, c in enumerate(configs):
        if j == best:
            body.append([c, f"{ranks[j]:.2f}", "(best average rank)", ""])
            continue
        w = wilcoxon_over_datasets(scores[:, j], scores[:, best], greater)
        body.append([c, f"{ranks[j]:.2f}", f"{w['wins']}/{w['ties']}/{w['losses']}",
                     f"{w['p']:.3g}"])  # fmt: skip
    friedman = ""
    if k >= 3:
        from scipy.stats import friedmanchisquare

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p = friedmanchisquare(*scores.T).pvalue
        friedman = f" Friedman's test of equal ranks: p = {p:.3g}." if np.isfinite(p) else ""
    lines += [
        f"The {n} rows (data set and kernel) where every method has a complete score; each "
        f"method's score there (its mean over the outer folds, or the one score of a given "
        f"split). Ranks: 1 = best, ties averaged. Against "
        f"{configs[best]} (the best average rank): wins/ties/losses over the rows and the "
        "Wilcoxon signed-rank test over the rows (two-sided, zero differences dropped; Demšar "
        f"2006, Sect. 3.1.3).{friedman} Nemenyi's critical difference at alpha = "
        f"{study.alpha:g}: CD = {cd:.2f} (k = {k} methods, N = {n} rows; Demšar 2006, "
        "Sect. 3.2.2): two methods whose average ranks differ by less are not significantly "
        "different (joined by a bar in the diagram). With few rows no test can be significant: "
        "read them as a summary.",
        "",
        *markdown_table(
            ["method", "average rank", f"wins/ties/losses vs {configs[best]}", "Wilcoxon p"],
            body,
            align="lrrr",
        ).split("\n"),
        "",
    ]
    draw_cd_diagram(configs, ranks, cd, out / "cd_diagram.png",
                    title=f"{study.name}: average rank ({measure}) over {n} rows, "
                          f"Nemenyi CD at alpha = {study.alpha:g}")  # fmt: skip
    return lines, [("Critical-difference diagram of average ranks", "cd_diagram.png")]


def _fits_section(records: list[dict], rows: list[dict], timings: dict[tuple, float]) -> list[str]:
    """The "Fits" section: per row and method the median fit time, the solvers' statuses, the
    mean indefiniteness of the training kernels and the warnings."""
    lines = [
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
    for r in rows:
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
    return lines


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
        "nadeau-bengio": "the corrected resampled t-test of Nadeau & Bengio (2003) over the "
        "shared outer folds, paired",
        "welch": 'Welch\'s t-test, unpaired (study.significance = "welch")',
        "paired-t": "the paired t-test over the shared outer folds",
        "wilcoxon": "the Wilcoxon signed-rank test",
    }[study.significance]
    budget = (
        "the full joint grid (kernel x method parameters)"
        if study.search == "grid"
        else f"{study.n_iter} seeded random draws from the joint grid"
    )
    percent = " (in %)" if _percent(study.scoring) else ""
    if all(d.split == "given" for d in study.datasets):
        cells_text = (
            f"Cells: the test score on the data set's given train/test split{percent}, one split "
            "(no std, no significance test). **Bold**: the best score of the row (data set and "
            "kernel) and its ties. "
        )
    else:
        cells_text = (
            f"Cells: mean ± std over the outer folds{percent} (a data set with a given split: its "
            "one test score, bold only if best). **Bold**: the best method of the row (data set "
            f"and kernel) and those not significantly different from it ({test_name}, p >= "
            f"{study.alpha:g}; the marks of Oglic & Gaertner 2018). Tests pair the outer folds "
            "where both methods have a score. "
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
        cells_text,
        "A cell marked † has "
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
    across, cd_plot = _across_rows(summaries[study.scoring], study, study.scoring, out)
    lines += across
    params_table, params_csv = _selected_params(records, study, out)
    lines += [
        "## Selected hyper-parameters",
        "",
        "The candidate each method selected in each outer fold by its mean inner "
        f"`{study.scoring}` (kernel parameters; method parameters), refitted on the fold's "
        f"training part; also `{params_csv.name}` (with the inner and test scores). Every "
        "candidate's inner scores: `search.csv`.",
        "",
        *params_table,
        "",
    ]

    lines += _fits_section(records, summaries[study.scoring], timings)
    plots = _plots(records, summaries[study.scoring], study, timings, out) + cd_plot
    lines += ["## Plots", ""]
    for title, fname in plots:
        lines += [f"### {title}", "", f"![{title}]({fname})", ""]
    lines += [
        "Files: `results.csv` (one row per outer fold; no timing columns), `timings.csv`, "
        "`search.csv` (every tuning candidate), `summary.csv`, `selected_params.csv`.",
        "",
    ]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    log.info("wrote %s", path)
    return path
