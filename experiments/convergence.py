"""Paper 004 Fig. 1: convergence of ACCPM and projected gradient on random subsets.

Luss & d'Aspremont (2009), Sect. 5.3, run ACCPM and the projected gradient method on random
subsets of the USPS 3-vs-5 problem with the Simpson kernel, without stopping them, and plot the
average duality gap (plus and minus one standard deviation) against the iteration on a log scale.
Here the data are scikit-learn's bundled 8x8 digits (``indefsvm.datasets.load_digits_pair``,
Simpson score, ink = intensity >= 8), NOT the paper's 16x16 USPS images.

Methods: ``accpm`` (Algorithm 2, 3n cuts), ``pg-paper`` (Algorithm 1 with the paper's step
``t / k``, t = 5, and the published code's smoothed gradient, eps = 1e-4) and ``pg`` (the
accelerated projected gradient of the core, for reference). Each run has a fixed iteration budget
(``tol = 0``: the codes are not stopped by the gap), with LIBSVM checks every ``--libsvm-every``
iterations.

Outputs in ``--out`` (default ``experiments/results/convergence``): ``histories.csv`` (one row
per iteration and run, appended as runs finish), ``summary.md`` / ``summary.csv`` and the figures
``fig1_iteration.png`` (ACCPM left, projected gradient right, like the paper), ``fig1_time.png``
and ``fig1_all.png`` (all methods together).

Run (default, a few minutes on 2 cores):
``OMP_NUM_THREADS=1 python experiments/convergence.py``; paper-like sizes:
``python experiments/convergence.py --full`` (n = 300, 10 subsets, 3000 iterations);
``--smoke``: n = 20, one subset, 10 iterations (a check that the script runs; outputs in a
temporary directory unless ``--out`` is given).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    add_smoke_argument,
    output_dir,
    solve_to_limit,
    write_csv_and_markdown,
)

from indefsvm.datasets import load_digits_pair  # noqa: E402
from indefsvm.plotting import gap_series, plot_convergence  # noqa: E402

METHODS = {
    "accpm": {"method": "accpm", "options": {"variant": "paper"}},  # Algorithm 2 as published
    "pg-paper": {
        "method": "pg",
        "options": {"step": "paper", "step_size": 5.0, "smoothing": 1e-4},
    },
    "pg": {"method": "pg"},
}
HISTORY_COLUMNS = [
    "run",
    "method",
    "iteration",
    "time",
    "best_objective",
    "gap",
    "rel_gap",
    "libsvm_gap",
]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--digits", type=int, nargs=2, default=[3, 5])
    p.add_argument("--kernel", default="simpson", choices=["simpson", "tangent"])
    p.add_argument("--n", type=int, default=60, help="subset size")
    p.add_argument("--runs", type=int, default=5, help="random subsets")
    p.add_argument("--iters", type=int, default=1000, help="iterations per method and run")
    p.add_argument("--C", type=float, default=10.0)
    p.add_argument("--rho", type=float, default=1.0)
    p.add_argument("--libsvm-every", type=int, default=25)
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--full", action="store_true", help="n = 300, 10 runs, 3000 iterations")
    p.add_argument("--out", default=None, help="default experiments/results/convergence")
    add_smoke_argument(p)
    args = p.parse_args(argv)
    if args.full:
        args.n, args.runs, args.iters = 300, 10, 3000
    if args.smoke:
        args.n, args.runs, args.iters, args.libsvm_every = 20, 1, 10, 5
    args.out = output_dir(args.out, args.smoke, "experiments/results/convergence")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = load_digits_pair(tuple(args.digits), kernel=args.kernel)
    print(data.description, flush=True)
    K_all, y_all = data.kernel, data.target
    if args.n > K_all.shape[0]:
        raise SystemExit(f"--n {args.n} exceeds the {K_all.shape[0]} images of the pair.")
    rng = np.random.default_rng(args.seed)
    hist_path = out / "histories.csv"
    with open(hist_path, "w", newline="") as fh:
        csv.writer(fh).writerow(HISTORY_COLUMNS)
    results: dict[str, list] = {m: [] for m in args.methods}
    for run in range(args.runs):
        idx = np.sort(rng.choice(K_all.shape[0], size=args.n, replace=False))
        K0, y = K_all[np.ix_(idx, idx)], y_all[idx]
        for label in args.methods:
            t0 = time.perf_counter()
            spec = METHODS[label]
            res = solve_to_limit(
                K0,
                y,
                C=args.C,
                rho=args.rho,
                tol=0.0,
                max_iter=args.iters,
                method=spec["method"],
                options={**spec.get("options", {}), "libsvm_every": args.libsvm_every},
            )
            results[label].append(res)
            h = res.history
            _, _, rel = gap_series(res)
            lib = h["libsvm_upper_bound"] - h["best_objective"]
            with open(hist_path, "a", newline="") as fh:
                w = csv.writer(fh)
                for k in range(h["iteration"].size):
                    w.writerow(
                        [
                            run,
                            label,
                            int(h["iteration"][k]),
                            f"{h['time'][k]:.6g}",
                            f"{h['best_objective'][k]:.12g}",
                            f"{h['gap'][k]:.6g}",
                            f"{rel[k]:.6g}",
                            f"{lib[k]:.6g}",
                        ]
                    )
            print(
                f"run {run} {label:>8}: rel gap {res.relative_gap:.3g} after {res.n_iter} "
                f"iterations, {time.perf_counter() - t0:.1f}s",
                flush=True,
            )
    write_summary(results, args, out)
    draw(results, args, out, data.description)


def first_reach(res, tol: float) -> float:
    _, _, rel = gap_series(res)
    hit = np.flatnonzero(rel <= tol)
    return float(res.history["iteration"][hit[0]]) if hit.size else np.nan


def write_summary(results, args, out: Path) -> None:
    cols = [
        "method",
        "runs",
        "final rel gap (mean)",
        "final rel gap (std)",
        "iters to 1e-3 (mean)",
        "iters to 1e-6 (mean)",
        "reached 1e-6",
        "time/iter (ms)",
    ]
    rows = []
    for label, runs in results.items():
        final = np.array([r.relative_gap for r in runs])
        r3 = np.array([first_reach(r, 1e-3) for r in runs])
        r6 = np.array([first_reach(r, 1e-6) for r in runs])
        per_iter = np.mean([r.time / max(r.n_iter, 1) for r in runs]) * 1e3
        rows.append(
            [
                label,
                len(runs),
                f"{final.mean():.3g}",
                f"{final.std():.3g}",
                f"{np.nanmean(r3):.0f}" if np.isfinite(r3).any() else "-",
                f"{np.nanmean(r6):.0f}" if np.isfinite(r6).any() else "-",
                f"{int(np.isfinite(r6).sum())}/{len(runs)}",
                f"{per_iter:.2f}",
            ]
        )
    caption = (
        f"Convergence (paper 004 Fig. 1) on scikit-learn digits {args.digits[0]} vs "
        f"{args.digits[1]}, {args.kernel} kernel (not the paper's USPS): n = {args.n}, "
        f"{args.runs} random subsets, C = {args.C:g}, rho = {args.rho:g}, {args.iters} "
        "iterations per run, relative certified gap."
    )
    write_csv_and_markdown(out, cols, rows, caption)


def draw(results, args, out: Path, description: str) -> None:
    title = f"digits {args.digits[0]} vs {args.digits[1]} ({args.kernel}), n = {args.n}"
    pg_label = "pg-paper" if "pg-paper" in results else ("pg" if "pg" in results else None)
    panels = [m for m in ("accpm", pg_label) if m is not None and m in results]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for ax, label in zip(axes[0], panels, strict=True):
        plot_convergence({label: results[label]}, x="iteration", ax=ax, title=label)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out / "fig1_iteration.png", dpi=120)
    plt.close(fig)
    fig = plot_convergence(
        results, x="time", gaps=("gap",), title=title, path=out / "fig1_time.png"
    )
    plt.close(fig)
    fig = plot_convergence(results, x="iteration", title=title, path=out / "fig1_all.png")
    plt.close(fig)
    print(f"wrote {out}/fig1_iteration.png, fig1_time.png, fig1_all.png", flush=True)


if __name__ == "__main__":
    main()
