"""Paper 004 Fig. 2: total time and time per iteration against the dimension n.

Luss & d'Aspremont (2009), Sect. 5.3, time the projected gradient method, ACCPM and SIQCLP on
random subsets of the USPS 3-vs-5 problem with the Simpson kernel, C = 10 and "a tolerance of .1
for the duality gap", averaged over 10 subsets. Here: scikit-learn's bundled 8x8 digits
(``indefsvm.datasets.load_digits_pair``, Simpson score), NOT the paper's USPS (the pair has only
365 images, so n stops below the paper's 500). The gap tolerance is the paper's absolute 0.1 on
the certified gap (``--gap-tol``; a callback stops the solver when it is reached, status
``callback``). The projected gradient uses the paper's step policy (``t / k``, t = 5, smoothed
gradient eps = 1e-4, like the published code) and the accelerated policy of the core.

Outputs in ``--out`` (default ``experiments/results/timing``): ``runs.csv`` (one row per run,
appended as runs finish), ``summary.md`` / ``summary.csv`` (mean and std per method and n) and
``fig2_timing.png`` (total time left, time per iteration right, SIQCLP only in the left panel as
in the paper).

Run (default, a few minutes on 2 cores): ``OMP_NUM_THREADS=1 python experiments/timing.py``;
paper-like sizes: ``python experiments/timing.py --full`` (n = 100..350, 10 subsets, SIQCLP up
to 300); ``--smoke``: n = 10, 20, one subset, SIQCLP at n = 10, at most 200 iterations (a
check that the script runs; outputs in a temporary directory unless ``--out`` is given).
"""

from __future__ import annotations

import argparse
import csv
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
from indefsvm.plotting import plot_timing, timing_statistics  # noqa: E402

METHODS = {
    "pg-paper": {
        "method": "pg",
        "options": {"step": "paper", "step_size": 5.0, "smoothing": 1e-4},
    },
    "pg": {"method": "pg"},
    "accpm-paper": {"method": "accpm", "options": {"variant": "paper"}},  # Algorithm 2
    "accpm": {"method": "accpm"},  # the proximal variant (the default of method="accpm")
    "siqclp": {"method": "siqclp"},
}
RUN_COLUMNS = [
    "method",
    "n",
    "rho",
    "subset",
    "status",
    "n_iter",
    "time",
    "time_per_iter",
    "gap",
    "rel_gap",
    "objective",
]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--digits", type=int, nargs=2, default=[3, 5])
    p.add_argument("--sizes", type=int, nargs="+", default=[30, 60, 100])
    p.add_argument("--subsets", type=int, default=3)
    p.add_argument("--C", type=float, default=10.0)
    p.add_argument("--rhos", type=float, nargs="+", default=[1.0])
    p.add_argument("--gap-tol", type=float, default=0.1, help="absolute certified gap")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--siqclp-max-n", type=int, default=30, help="largest n for SIQCLP")
    p.add_argument("--max-iter", type=int, default=20000)
    p.add_argument("--max-time", type=float, default=300.0, help="per run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--full", action="store_true", help="n = 100..350, 10 subsets")
    p.add_argument("--out", default=None, help="default experiments/results/timing")
    add_smoke_argument(p)
    args = p.parse_args(argv)
    if args.full:
        args.sizes, args.subsets, args.siqclp_max_n = [100, 150, 200, 250, 300, 350], 10, 300
    if args.smoke:
        args.sizes, args.subsets, args.siqclp_max_n, args.max_iter = [10, 20], 1, 10, 200
    args.out = output_dir(args.out, args.smoke, "experiments/results/timing")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = load_digits_pair(tuple(args.digits), kernel="simpson")
    print(data.description, flush=True)
    K_all, y_all = data.kernel, data.target
    rng = np.random.default_rng(args.seed)
    runs_path = out / "runs.csv"
    with open(runs_path, "w", newline="") as fh:
        csv.writer(fh).writerow(RUN_COLUMNS)
    rows = []
    for n in args.sizes:
        if n > K_all.shape[0]:
            raise SystemExit(f"n = {n} exceeds the {K_all.shape[0]} images of the pair.")
        for subset in range(args.subsets):
            idx = np.sort(rng.choice(K_all.shape[0], size=n, replace=False))
            K0, y = K_all[np.ix_(idx, idx)], y_all[idx]
            for rho in args.rhos:
                for label in args.methods:
                    if label == "siqclp" and n > args.siqclp_max_n:
                        continue
                    spec = METHODS[label]
                    monitor = {
                        "max_time": args.max_time,
                        "callback": lambda info: info["gap"] <= args.gap_tol,
                    }
                    res = solve_to_limit(
                        K0,
                        y,
                        C=args.C,
                        rho=rho,
                        tol=0.0,
                        max_iter=args.max_iter,
                        method=spec["method"],
                        options={**spec.get("options", {}), **monitor},
                    )
                    status = "reached" if res.gap <= args.gap_tol else res.status
                    row = {
                        "method": label,
                        "n": n,
                        "rho": rho,
                        "subset": subset,
                        "status": status,
                        "n_iter": res.n_iter,
                        "time": res.time,
                        "time_per_iter": res.time / max(res.n_iter, 1),
                        "gap": res.gap,
                        "rel_gap": res.relative_gap,
                        "objective": res.objective,
                    }
                    rows.append(row)
                    with open(runs_path, "a", newline="") as fh:
                        csv.writer(fh).writerow([row[c] for c in RUN_COLUMNS])
                    print(
                        f"n={n} subset={subset} rho={rho:g} {label:>8}: {status}, "
                        f"{res.n_iter} iterations, {res.time:.2f}s, gap {res.gap:.3g}",
                        flush=True,
                    )
    write_summary(rows, args, out)
    title = (
        f"digits {args.digits[0]} vs {args.digits[1]} (Simpson), C = {args.C:g}, "
        f"gap <= {args.gap_tol:g}"
    )
    for rho in args.rhos:
        sel = [r for r in rows if r["rho"] == rho]
        name = "fig2_timing.png" if len(args.rhos) == 1 else f"fig2_timing_rho{rho:g}.png"
        fig = plot_timing(
            sel,
            title=f"{title}, rho = {rho:g}",
            path=out / name,
            per_iteration_methods=[m for m in args.methods if m != "siqclp"],
        )
        plt.close(fig)
        print(f"wrote {out / name}", flush=True)


def write_summary(rows, args, out: Path) -> None:
    cols = [
        "method",
        "rho",
        "n",
        "runs",
        "reached",
        "iterations (mean)",
        "time s (mean)",
        "time s (std)",
        "time/iter ms (mean)",
    ]
    table = []
    for rho in args.rhos:
        sel = [r for r in rows if r["rho"] == rho]
        total = timing_statistics(sel, value="time")
        per = timing_statistics(sel, value="time_per_iter")
        for method, (ns, mean, std) in total.items():
            for j, n in enumerate(ns):
                group = [r for r in sel if r["method"] == method and r["n"] == n]
                table.append(
                    [
                        method,
                        f"{rho:g}",
                        int(n),
                        len(group),
                        sum(r["status"] == "reached" for r in group),
                        f"{np.mean([r['n_iter'] for r in group]):.0f}",
                        f"{mean[j]:.3g}",
                        f"{std[j]:.2g}",
                        f"{1e3 * per[method][1][j]:.3g}",
                    ]
                )
    caption = (
        f"Timing (paper 004 Fig. 2) on scikit-learn digits {args.digits[0]} vs {args.digits[1]}, "
        f"Simpson kernel (not the paper's USPS), C = {args.C:g}, certified gap <= "
        f"{args.gap_tol:g} (absolute), {args.subsets} random subsets per n."
    )
    write_csv_and_markdown(out, cols, table, caption)


if __name__ == "__main__":
    main()
