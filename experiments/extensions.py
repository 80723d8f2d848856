"""Extensions of paper 004 on real data: indefinite SVR (Sect. 4.1) and one-class SVM (Sect. 4.2).

Each is compared with LIBSVM on the clipped kernel ``(K0)_+`` (the ``rho -> infinity`` limit,
Sect. 2.3), whose test rows are mapped by the same projector ``k -> P_clip k``.

* **Regression**: scikit-learn's diabetes data (442 patients, 10 features, disease progression
  after one year). Random half/half split; features and target standardised with the training
  statistics of the data being fitted (fold or split). Sigmoid kernel ``tanh(<x, y>/d + coef0)``
  (``coef0 = -1``: strongly indefinite). Five-fold CV on the training half over ``C`` (and
  ``rho`` for the indefinite SVR), by mean squared error; ``epsilon = 0.1`` (standardised
  target). Reported: test RMSE (original units) and R^2.
  Indefinite: :class:`indefsvm.proxy.estimators.IndefiniteSVR`; baseline: LIBSVM ``-s 3`` on
  ``(K0)_+``.
* **Novelty detection**: scikit-learn's 8x8 digits, Simpson kernel (ink = intensity >= 8). For
  each digit, half of its images (seeded) train a one-class model; the test set is the other
  half (inliers) and the same number of images of the other digits (outliers). ``nu = 0.1``;
  the indefinite model is run for every ``rho`` of the grid (no labels to select it with).
  Reported: ROC AUC of ``score_samples`` and balanced accuracy of ``predict``, mean over the ten
  digits. Indefinite: :class:`indefsvm.proxy.estimators.IndefiniteOneClassSVM`; baseline: LIBSVM
  ``-s 2`` on ``(K0)_+``.

Rows are appended to ``extensions_regression.csv`` and ``extensions_oneclass.csv`` as they are
computed; ``extensions.md`` summarises both.

Run: ``python experiments/extensions.py [--n-jobs 1] [--seed 0]
[--out experiments/results/extensions]``; ``--smoke``: 60 patients, 2 folds, one grid point,
two digits of 30 images (a check that the script runs; outputs in a temporary directory
unless ``--out`` is given).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from _common import add_smoke_argument, log, markdown_table, output_dir
from joblib import Parallel, delayed
from sklearn.datasets import load_diabetes, load_digits
from sklearn.metrics import balanced_accuracy_score, roc_auc_score
from sklearn.model_selection import KFold, train_test_split

from indefsvm.kernels import sigmoid_kernel, simpson_kernel
from indefsvm.proxy import _libsvm
from indefsvm.proxy.estimators import IndefiniteOneClassSVM, IndefiniteSVR

SVR_OPTIONS = {"tol": 1e-6, "max_iter": 5000}
ONECLASS_OPTIONS = {"tol": 1e-8, "max_iter": 5000}


def clip_projector(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(K)_+`` and the projector on the positive eigenspace (test map of the clip)."""
    lam, V = np.linalg.eigh(K)
    Vp = V[:, lam > 0]
    Kc = (Vp * lam[lam > 0]) @ Vp.T
    return 0.5 * (Kc + Kc.T), Vp @ Vp.T


# --------------------------------------------------------------------------------------------
# Regression
# --------------------------------------------------------------------------------------------


def regression_blocks(X, y, fit, ev, coef0):
    mean, std = X[fit].mean(axis=0), X[fit].std(axis=0)
    std[std == 0] = 1.0
    Xf, Xe = (X[fit] - mean) / std, (X[ev] - mean) / std
    y_mean, y_std = float(y[fit].mean()), float(y[fit].std())
    gamma = 1.0 / X.shape[1]
    K_fit = sigmoid_kernel(Xf, gamma=gamma, coef0=coef0)
    K_ev = sigmoid_kernel(Xe, Xf, gamma=gamma, coef0=coef0)
    return K_fit, K_ev, (y[fit] - y_mean) / y_std, y_mean, y_std


def regression_predict(method, params, X, y, fit, ev, coef0) -> np.ndarray:
    """Predictions (original units) of one model fitted on ``fit``."""
    K_fit, K_ev, target, y_mean, y_std = regression_blocks(X, y, fit, ev, coef0)
    if method == "indefinite":
        model = IndefiniteSVR(C=params["C"], rho=params["rho"], epsilon=0.1, **SVR_OPTIONS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(K_fit, target)
        pred = model.predict(K_ev)
    else:
        Kc, P = clip_projector(K_fit)
        lib = _libsvm.train_precomputed(
            Kc, target, svm_type=3, C=params["C"], epsilon=0.1, tol=1e-6
        )
        pred = (K_ev @ P) @ lib.coef + lib.intercept
    return pred * y_std + y_mean


def _regression_cv(method, params, X, y, fit, ev, coef0):
    pred = regression_predict(method, params, X, y, fit, ev, coef0)
    return method, json.dumps(params, sort_keys=True), float(np.mean((pred - y[ev]) ** 2))


def run_regression(args, out: Path, log) -> list[dict[str, Any]]:
    X, y = load_diabetes(return_X_y=True)
    idx = np.arange(len(y))
    if args.smoke:  # a seeded subsample of 60 patients
        idx = np.sort(np.random.default_rng(args.seed).choice(idx, size=60, replace=False))
    train, test = train_test_split(idx, test_size=0.5, random_state=args.seed, shuffle=True)
    folds = list(KFold(2 if args.smoke else 5, shuffle=True, random_state=args.seed).split(train))
    Cs, rhos = ([1.0], [1.0]) if args.smoke else ([0.1, 1.0, 10.0], [0.1, 1.0, 10.0])
    grid = {
        "clipped-libsvm": [{"C": C} for C in Cs],
        "indefinite": [{"C": C, "rho": r} for C, r in itertools.product(Cs, rhos)],
    }
    tasks = [(m, p, train[a], train[b]) for m, ps in grid.items() for p in ps for a, b in folds]
    log(f"regression: diabetes n_train={len(train)} n_test={len(test)}, {len(tasks)} CV fits")
    mse: dict[tuple[str, str], list[float]] = {}
    done = 0
    for m, key, err in Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
        delayed(_regression_cv)(m, p, X, y, a, b, args.coef0) for m, p, a, b in tasks
    ):
        mse.setdefault((m, key), []).append(err)
        done += 1
        if done % 15 == 0 or done == len(tasks):
            log(f"regression: {done}/{len(tasks)} CV fits")
    rows = []
    path = out / "extensions_regression.csv"
    columns = ("method", "params", "cv_rmse", "test_rmse", "test_r2", "n_train", "n_test")
    with open(path, "w", newline="") as fh:
        csv.DictWriter(fh, columns).writeheader()
    for m, ps in grid.items():
        cv, params = min((float(np.mean(mse[(m, json.dumps(p, sort_keys=True))])), p) for p in ps)
        pred = regression_predict(m, params, X, y, train, test, args.coef0)
        rmse = float(np.sqrt(np.mean((pred - y[test]) ** 2)))
        r2 = 1.0 - float(np.sum((pred - y[test]) ** 2) / np.sum((y[test] - y[test].mean()) ** 2))
        row = {
            "method": m,
            "params": json.dumps(params, sort_keys=True),
            "cv_rmse": f"{np.sqrt(cv):.4f}",
            "test_rmse": f"{rmse:.4f}",
            "test_r2": f"{r2:.4f}",
            "n_train": len(train),
            "n_test": len(test),
        }
        rows.append(row)
        with open(path, "a", newline="") as fh:
            csv.DictWriter(fh, columns).writerow(row)
        log(f"regression: {m:<15} test RMSE {rmse:.2f} R^2 {r2:.3f} ({row['params']})")
    return rows


# --------------------------------------------------------------------------------------------
# One-class novelty detection
# --------------------------------------------------------------------------------------------


def novelty_digit(
    digit: int, rhos: list[float], nu: float, seed: int, max_own: int | None = None
) -> list[dict[str, Any]]:
    data = load_digits()
    X, labels = data.data, data.target
    own = np.flatnonzero(labels == digit)
    rng = np.random.default_rng(seed + digit)
    own = rng.permutation(own)[:max_own]
    fit, inl = own[: len(own) // 2], own[len(own) // 2 :]
    outl = rng.choice(np.flatnonzero(labels != digit), size=len(inl), replace=False)
    ev = np.concatenate([inl, outl])
    truth = np.concatenate([np.ones(len(inl)), -np.ones(len(outl))])
    K_fit = simpson_kernel(X[fit], threshold=8.0)
    K_ev = simpson_kernel(X[ev], X[fit], threshold=8.0)
    rows = []
    Kc, P = clip_projector(K_fit)
    lib = _libsvm.train_precomputed(Kc, np.ones(len(fit)), svm_type=2, nu=nu, tol=1e-8)
    score = (K_ev @ P) @ lib.coef
    pred = np.where(score + lib.intercept > 0, 1, -1)
    rows.append(
        {
            "digit": digit,
            "method": "clipped-libsvm",
            "rho": "",
            "auc": roc_auc_score(truth, score),
            "balanced_accuracy": balanced_accuracy_score(truth, pred),
            "status": "libsvm",
        }
    )
    for rho in rhos:
        model = IndefiniteOneClassSVM(nu=nu, rho=rho, **ONECLASS_OPTIONS)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(K_fit)
        rows.append(
            {
                "digit": digit,
                "method": "indefinite",
                "rho": rho,
                "auc": roc_auc_score(truth, model.score_samples(K_ev)),
                "balanced_accuracy": balanced_accuracy_score(truth, model.predict(K_ev)),
                "status": model.result_.status,
            }
        )
    return rows


def run_oneclass(args, out: Path, log) -> list[dict[str, Any]]:
    rhos = [1.0] if args.smoke else [0.1, 1.0, 10.0, 100.0]
    digits, max_own = (range(2), 30) if args.smoke else (range(10), None)
    path = out / "extensions_oneclass.csv"
    columns = ("digit", "method", "rho", "auc", "balanced_accuracy", "status")
    with open(path, "w", newline="") as fh:
        csv.DictWriter(fh, columns).writeheader()
    rows: list[dict[str, Any]] = []
    for digit_rows in Parallel(n_jobs=args.n_jobs, return_as="generator")(
        delayed(novelty_digit)(d, rhos, args.nu, args.seed, max_own) for d in digits
    ):
        rows.extend(digit_rows)
        with open(path, "a", newline="") as fh:
            csv.DictWriter(fh, columns).writerows(digit_rows)
        labels = [r["method"] if r["rho"] == "" else f"rho={r['rho']}" for r in digit_rows]
        summary = ", ".join(
            f"{lab} AUC {r['auc']:.3f}" for lab, r in zip(labels, digit_rows, strict=True)
        )
        log(f"one-class digit {digit_rows[0]['digit']}: {summary}")
    return rows


def write_markdown(reg: list[dict[str, Any]], one: list[dict[str, Any]], path: Path, args) -> None:
    svr = [[r["method"], f"`{r['params']}`", r["cv_rmse"], r["test_rmse"], r["test_r2"]]
           for r in reg]  # fmt: skip
    columns = ["Method", "Chosen parameters", "CV RMSE", "Test RMSE", "Test R^2"]
    lines = [
        "## Indefinite SVR: diabetes (scikit-learn), sigmoid kernel",
        "",
        *markdown_table(columns, svr, align="llrrr"),
        "",
        f"## One-class novelty detection: digits, Simpson kernel, nu = {args.nu}",
        "",
    ]
    novelty = []
    keys = list(dict.fromkeys((r["method"], r["rho"]) for r in one))
    for method, rho in keys:
        sel = [r for r in one if (r["method"], r["rho"]) == (method, rho)]
        auc = np.array([r["auc"] for r in sel])
        bal = np.array([r["balanced_accuracy"] for r in sel])
        novelty.append([method, rho, f"{auc.mean():.4f}", f"{bal.mean():.4f}",
                        f"{auc.min():.4f}", f"{auc.max():.4f}"])  # fmt: skip
    columns = ["Method", "rho", "mean AUC", "mean balanced accuracy", "min AUC", "max AUC"]
    lines += markdown_table(columns, novelty, align="lrrrrr")
    path.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--coef0", type=float, default=-1.0, help="sigmoid offset (regression)")
    parser.add_argument("--nu", type=float, default=0.1, help="one-class nu")
    parser.add_argument("--skip", default="", help="'regression' or 'oneclass' to skip one")
    parser.add_argument("--out", default=None, help="default experiments/results/extensions")
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    out = output_dir(args.out, args.smoke, "experiments/results/extensions")
    out.mkdir(parents=True, exist_ok=True)

    reg = [] if args.skip == "regression" else run_regression(args, out, log)
    one = [] if args.skip == "oneclass" else run_oneclass(args, out, log)
    write_markdown(reg, one, out / "extensions.md", args)
    log(f"wrote {out}/extensions.md and the CSV files")


if __name__ == "__main__":
    main()
