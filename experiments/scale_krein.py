"""Scaling curve of the low-rank Krein learners (paper 003): fit time and peak memory, n = 1e4..1e6.

Synthetic two-class data with ``d = 20`` features (:func:`make_data`: a curved boundary in
three of the features, 5% label noise, Bayes accuracy 95%), the sigmoid kernel
``tanh(gamma <x, y> + coef0)`` with ``gamma = 1/d``, ``coef0 = -1`` and ``m`` uniform landmarks.
For every ``n`` a fresh child process (so that ``ru_maxrss`` is that run's peak) fits

* ``KreinClassifier(formulation="krein", n_components=m)`` -- KREIN VC-LSM (secular solver, m dims),
* ``KreinKernelRidgeClassifier(n_components=m)`` -- KREIN LSM,
* ``KreinSquaredHingeSVC(n_components=m)`` -- KREIN SH-SVM (modified finite Newton),

each from the raw data (Nystroem features included in its time), predicts 20,000 test points,
and reports fit time, test accuracy and the process's peak resident memory. As a same-run
yardstick each child also times one dense ``numpy.linalg.eigh`` of a 2,000 x 2,000 kernel (the
O(n^3) step every full-rank method needs; at n = 2,000 it is what the full-rank methods pay per
fit, and it grows as n^3).

Run: ``OMP_NUM_THREADS=1 python experiments/scale_krein.py`` (n = 1e4, 3e4, 1e5, 3e5, 1e6;
about 15-25 minutes on the shared 2-core machine; results appended to
``results/scale/scale_krein.csv``, table ``results/scale/scale_krein.md``). ``--smoke``:
n = 1,000, m = 50, 2,000 test points (a check that the script runs; outputs in a temporary
directory unless ``--out`` is given). A failed child ends the run with exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import (  # noqa: E402
    add_smoke_argument,
    append_csv_row,
    markdown_table,
    output_dir,
)

LEARNERS = ("vc-lsm", "lsm", "sh-svm")


def make_data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``x ~ N(0, I_d)``, ``y = sign(x_0 + x_1 + (x_2^2 - 1) / 2)`` with 5% label noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + X[:, 1] + 0.5 * (X[:, 2] ** 2 - 1.0) > 0, 1.0, -1.0)
    flip = rng.random(n) < 0.05
    y[flip] = -y[flip]
    return X, y


def child(n: int, m: int, d: int, learners: list[str], seed: int, n_test: int = 20000) -> dict:
    from indefsvm.kernels import sigmoid_kernel
    from indefsvm.krein import KreinClassifier, KreinKernelRidgeClassifier, KreinSquaredHingeSVC

    X, y = make_data(n, d, seed)
    Xt, yt = make_data(n_test, d, seed + 1)
    params = {"gamma": 1.0 / d, "coef0": -1.0}
    row: dict = {"n": n, "m": m, "d": d}
    # Same-process yardstick: one dense eigh of a 2000 x 2000 sigmoid kernel.
    K = sigmoid_kernel(X[:2000], **params)
    t = time.perf_counter()
    np.linalg.eigh(K)
    row["eigh_2000_s"] = time.perf_counter() - t
    del K
    common = {"kernel": "sigmoid", "kernel_params": params, "n_components": m, "random_state": 0}
    makers = {
        "vc-lsm": lambda: KreinClassifier(
            formulation="krein", lambda_plus=1e-3, lambda_minus=1e-3, **common
        ),
        "lsm": lambda: KreinKernelRidgeClassifier(lambda_plus=1e-4, lambda_minus=1e-4, **common),
        "sh-svm": lambda: KreinSquaredHingeSVC(lambda_plus=1e-4, lambda_minus=1e-4, **common),
    }
    for name in learners:
        est = makers[name]()
        t = time.perf_counter()
        est.fit(X, y)
        row[f"{name}_fit_s"] = time.perf_counter() - t
        row[f"{name}_nystroem_s"] = sum(est.nystroem_.fit_time_.values())
        t = time.perf_counter()
        row[f"{name}_acc"] = float(np.mean(est.predict(Xt) == yt))
        row[f"{name}_predict_s"] = time.perf_counter() - t
        if name == "sh-svm":
            row["sh-svm_newton_iter"] = est.solution_.n_iter
        del est
    row["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[10**4, 3 * 10**4, 10**5, 3 * 10**5, 10**6]
    )
    parser.add_argument("--m", type=int, default=500)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=LEARNERS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-test", type=int, default=20000, help="test points")
    parser.add_argument("--out", type=Path, default=None, help="default results/scale")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    add_smoke_argument(parser)
    args = parser.parse_args(argv)
    if args.child is not None:
        row = child(args.child, args.m, args.d, args.learners, args.seed, args.n_test)
        print(json.dumps(row))
        return
    if args.smoke:
        args.sizes, args.m, args.n_test = [1000], 50, 2000
    args.out = output_dir(args.out, args.smoke, "results/scale")
    args.out.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    machine = (
        f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} cores, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'default')}, load {load[0]:.1f}"
    )
    print(machine, flush=True)
    rows = []
    failed = False
    for n in args.sizes:
        cmd = [
            sys.executable,
            __file__,
            "--child",
            str(n),
            "--m",
            str(args.m),
            "--d",
            str(args.d),
            "--seed",
            str(args.seed),
            "--n-test",
            str(args.n_test),
            "--learners",
            *args.learners,
        ]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(f"n={n} failed:\n{proc.stderr[-2000:]}", flush=True)
            failed = True
            break
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        row["load1"] = os.getloadavg()[0]
        row["wall_s"] = time.perf_counter() - t
        rows.append(row)
        print(json.dumps(row), flush=True)
        path = args.out / "scale_krein.csv"
        append_csv_row(path, row)
    columns = ["n", *(f"{name} {what}" for name in args.learners for what in ("fit (s)", "acc")),
               "peak RSS (GB)", "eigh(2000) (s)", "load"]  # fmt: skip
    body = []
    for row in rows:
        cells = [f"{row['n']:,}"]
        for name in args.learners:
            cells += [f"{row[f'{name}_fit_s']:.1f}", f"{100 * row[f'{name}_acc']:.2f}"]
        cells += [f"{row['peak_rss_gb']:.2f}", f"{row['eigh_2000_s']:.2f}", f"{row['load1']:.1f}"]
        body.append(cells)
    lines = [f"Machine: {machine}", "", *markdown_table(columns, body)]
    (args.out / "scale_krein.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if failed:  # the finished rows are kept; the exit status says the run is incomplete
        raise SystemExit(1)


if __name__ == "__main__":
    main()
