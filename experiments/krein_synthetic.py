"""Oglic & Gaertner (2018), Table 1: KREIN vs spectrum transformations on synthetic Krein data.

For each base kernel (Gaussian, sigmoid) and size n the data set of
:func:`indefsvm.datasets.make_krein_regression` (indefinite kernel ``G - G^{-1}``, Krein
hypothesis, 5% noise) is evaluated by 10-fold outer cross-validation (RMSE) with

* KREIN (eq. 4, ``lambda_+``, ``lambda_-``, ``r``),
* FLIP, CLIP, SHIFT, SQUARE (eq. 2 with the transformed kernel; Chen et al.'s test maps for
  flip, clip and square, Wu et al.'s heuristic for shift),
* OMCS-KREIN (eq. 2 with the indefinite kernel).

Every method is solved globally by the secular equation (:class:`indefsvm.krein.KreinRegressor`)
after tuning its hyperparameters with L-BFGS-B on 3 inner folds of the outer training fold
(:func:`indefsvm.krein.tune_variance_constrained`, paper 000 Sect. 3.3), from two starting
points. Kernels and targets are centred with training statistics.

Rows are appended to ``<out>/krein_synthetic_folds.csv`` (one per fold and method) and
``<out>/krein_synthetic.csv`` (mean and standard deviation per data set and method) as soon as
they are finished; ``krein_synthetic.md`` and ``krein_synthetic.png`` are rewritten after each
data set.

Run: ``python experiments/krein_synthetic.py`` (n = 100, 200; a few minutes on 2 cores) or
``python experiments/krein_synthetic.py --full`` (the paper's n = 100, 500, 1000);
``--smoke`` runs n = 100, 2 folds, 2 L-BFGS-B iterations in seconds (a check that the script
runs; outputs in a temporary directory unless ``--out`` is given).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import matplotlib
from _common import add_smoke_argument, markdown_table, output_dir

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.model_selection import KFold  # noqa: E402

from indefsvm.datasets import make_krein_regression  # noqa: E402
from indefsvm.krein import KreinRegressor, tune_variance_constrained  # noqa: E402
from indefsvm.linalg.spectrum import eigen_summary  # noqa: E402

METHODS = ("krein", "flip", "clip", "shift", "square", "omcs")
LABELS = {
    "krein": "KREIN",
    "flip": "FLIP",
    "clip": "CLIP",
    "shift": "SHIFT",
    "square": "SQUARE",
    "omcs": "OMCS-KREIN",
}
SUMMARY_FIELDS = [
    "kernel", "n", "lambda_min", "lambda_max", "n_pos", "n_neg", "iota", "y_std", "method",
    "rmse_mean", "rmse_std", "seconds",
]  # fmt: skip
FOLD_FIELDS = ["kernel", "n", "method", "fold", "rmse", "params", "inner_mse"]


def tune(K: np.ndarray, y: np.ndarray, method: str, seed: int, max_iter: int) -> dict:
    """Best of two L-BFGS-B runs (regularisation started at 1e-3 and 1e-1)."""
    best = None
    for start in (1e-3, 1e-1):
        kw = dict(lambda_plus=start, lambda_minus=start, lam=start)
        if method == "krein":
            res = tune_variance_constrained(
                K, y, formulation="krein", random_state=seed, max_iter=max_iter, **kw
            )
        else:  # "omcs" or a spectrum transformation (eq. 2 on the transformed kernel)
            res = tune_variance_constrained(
                K, y, formulation=method, random_state=seed, max_iter=max_iter, **kw
            )
        if best is None or res.loss < best.loss:
            best = res
    return {"params": best.params, "loss": best.loss}


def evaluate(kernel: str, n: int, args: argparse.Namespace, out: Path) -> list[dict]:
    data = make_krein_regression(n, kernel=kernel, random_state=args.seed)
    K, y = data.K, data.y
    summary = eigen_summary(K)
    print(
        f"[{kernel} n={n}] lambda in [{summary.lambda_min:.4g}, {summary.lambda_max:.4g}], "
        f"#pos={summary.n_positive}, #neg={summary.n_negative}, iota={summary.iota:.2f}",
        flush=True,
    )
    folds = list(KFold(args.folds, shuffle=True, random_state=args.seed).split(y))
    rows = []
    for method in METHODS:
        t0 = time.perf_counter()
        rmses = []
        for i, (tr, te) in enumerate(folds):
            Ktr, Kte = K[np.ix_(tr, tr)], K[np.ix_(te, tr)]
            tuned = tune(Ktr, y[tr], method, args.seed + i, args.max_iter)
            p = tuned["params"]
            est = KreinRegressor(
                formulation=method,
                lambda_plus=p.get("lambda_plus", 1.0),
                lambda_minus=p.get("lambda_minus", 1.0),
                lam=p.get("lam", 1.0),
                r=p["r"],
            ).fit(Ktr, y[tr])
            rmse = float(np.sqrt(np.mean((est.predict(Kte) - y[te]) ** 2)))
            rmses.append(rmse)
            with open(out / "krein_synthetic_folds.csv", "a", newline="") as fh:
                csv.DictWriter(fh, FOLD_FIELDS).writerow(
                    {
                        "kernel": kernel,
                        "n": n,
                        "method": method,
                        "fold": i,
                        "rmse": f"{rmse:.6g}",
                        "params": ";".join(f"{k}={v:.4g}" for k, v in p.items()),
                        "inner_mse": f"{tuned['loss']:.6g}",
                    }  # fmt: skip
                )
        row = {
            "kernel": kernel, "n": n, "lambda_min": f"{summary.lambda_min:.6g}",
            "lambda_max": f"{summary.lambda_max:.6g}", "n_pos": summary.n_positive,
            "n_neg": summary.n_negative, "iota": f"{summary.iota:.3f}",
            "y_std": f"{np.std(y):.4g}", "method": method,
            "rmse_mean": f"{np.mean(rmses):.6g}", "rmse_std": f"{np.std(rmses):.6g}",
            "seconds": f"{time.perf_counter() - t0:.1f}",
        }  # fmt: skip
        with open(out / "krein_synthetic.csv", "a", newline="") as fh:
            csv.DictWriter(fh, SUMMARY_FIELDS).writerow(row)
        rows.append(row)
        print(
            f"  {LABELS[method]:<11s} RMSE {np.mean(rmses):.4g} (+- {np.std(rmses):.3g})  "
            f"[{row['seconds']} s]",
            flush=True,
        )
    return rows


def write_markdown(rows: list[dict], out: Path, command: str) -> None:
    by_set: dict[tuple[str, int], dict[str, dict]] = {}
    for row in rows:
        by_set.setdefault((row["kernel"], int(row["n"])), {})[row["method"]] = row
    columns = ["K - K^{-1}", "min", "max", "# pos", "# neg", "iota", "std(y)",
               *(LABELS[m] for m in METHODS)]  # fmt: skip
    body = []
    for (kernel, n), res in by_set.items():
        first = next(iter(res.values()))
        means = {m: float(res[m]["rmse_mean"]) for m in METHODS if m in res}
        best = min(means, key=means.get)
        cells = []
        for m in METHODS:
            if m not in res:
                cells.append("")
                continue
            text = f"{float(res[m]['rmse_mean']):.3f} (± {float(res[m]['rmse_std']):.3f})"
            cells.append(f"**{text}**" if m == best else text)
        body.append([f"{kernel.upper()} (n = {n})", f"{float(first['lambda_min']):.2f}",
                     f"{float(first['lambda_max']):.2f}", first["n_pos"], first["n_neg"],
                     first["iota"], first["y_std"], *cells])  # fmt: skip
    lines = [
        "# Synthetic Krein regression (Oglic & Gaertner 2018, Table 1)",
        "",
        f"Command: `{command}`. RMSE over {rows and 'outer'} 10-fold CV, mean (± std); best per "
        "row in bold.",
        "",
        *markdown_table(columns, body),
    ]
    (out / "krein_synthetic.md").write_text("\n".join(lines) + "\n")

    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(METHODS)
    names = [f"{k} n={n}" for k, n in by_set]
    for j, m in enumerate(METHODS):
        vals = [float(res[m]["rmse_mean"]) / float(res[m]["y_std"]) if m in res else np.nan
                for res in by_set.values()]  # fmt: skip
        ax.bar(np.arange(len(names)) + j * width, vals, width, label=LABELS[m])
    ax.set_xticks(np.arange(len(names)) + 0.4 - width / 2, names)
    ax.set_ylabel("RMSE / std(y)")
    ax.set_yscale("log")
    ax.legend(fontsize=8, ncol=3)
    ax.set_title("Synthetic Krein regression, 10-fold CV")
    fig.tight_layout()
    fig.savefig(out / "krein_synthetic.png", dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--kernels", nargs="+", default=["gaussian", "sigmoid"])
    parser.add_argument("--full", action="store_true", help="paper sizes n = 100, 500, 1000")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--max-iter", type=int, default=40, help="L-BFGS-B iterations")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="default results/krein")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    sizes = [100, 500, 1000] if args.full else args.sizes
    if args.smoke:  # one small set per kernel, 2 folds, 2 L-BFGS-B iterations
        sizes, args.folds, args.max_iter = [100], 2, 2
    args.out = output_dir(args.out, args.smoke, "results/krein")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, fields in (
        ("krein_synthetic.csv", SUMMARY_FIELDS),
        ("krein_synthetic_folds.csv", FOLD_FIELDS),
    ):
        with open(args.out / name, "w", newline="") as fh:
            csv.DictWriter(fh, fields).writeheader()
    command = "python experiments/krein_synthetic.py " + " ".join(argv or [])
    rows: list[dict] = []
    for kernel in args.kernels:
        for n in sizes:
            rows += evaluate(kernel, n, args, args.out)
            write_markdown(rows, args.out, command.strip())
    print(f"wrote {args.out / 'krein_synthetic.md'}", flush=True)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
