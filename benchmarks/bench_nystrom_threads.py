"""A stand-alone IndefiniteNystroem fit under the package's thread policy, with a busy neighbour.

What a user waits for: ``IndefiniteNystroem(...).fit(X)`` on n x 20 features with m landmarks,
timed (median of ``--repeats``) with the size-aware thread policy that ``fit`` now runs under
(``indefsvm.threads.limit_threads``) and with the BLAS default (every core, the map's own code
path without the policy). ``--busy K`` starts K processes that multiply 1500 x 1500 matrices with
their default BLAS threads for the whole run, as another job on a shared 2-core machine would;
scikit-learn's ``Nystroem.fit + transform`` on the same data is timed in the same run.

    python benchmarks/bench_nystrom_threads.py --n 100000 --m 500 --busy 1
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time

import numpy as np
from _common import load_line, machine_line, markdown_header, markdown_row, median_time

from indefsvm import IndefiniteNystroem


def _busy(seconds: float) -> None:
    a = np.random.default_rng(0).random((1500, 1500))
    end = time.time() + seconds
    while time.time() < end:
        a @ a


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--m", type=int, default=500)
    parser.add_argument("--busy", type=int, default=1, help="busy neighbour processes")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from sklearn.kernel_approximation import Nystroem

    X = np.random.default_rng(0).normal(size=(args.n, 20))
    params = {"gamma": 0.05, "coef0": -1.0, "n_components": args.m, "random_state": 0}

    def policy() -> None:
        IndefiniteNystroem("sigmoid", **params).fit(X)

    def default_threads() -> None:
        IndefiniteNystroem("sigmoid", **params)._fit(X, keep_features=False)

    def sklearn_pipeline() -> None:
        Nystroem(kernel="sigmoid", **params).fit(X).transform(X)

    ctx = mp.get_context("spawn")
    neighbours = [ctx.Process(target=_busy, args=(3600.0,), daemon=True) for _ in range(args.busy)]
    for p in neighbours:
        p.start()
    try:
        time.sleep(1.0)
        rows = [
            (name, median_time(fn, args.repeats))
            for name, fn in (
                ("IndefiniteNystroem.fit (thread policy)", policy),
                ("the same map, default BLAS threads", default_threads),
                ("scikit-learn Nystroem.fit + transform", sklearn_pipeline),
            )
        ]
    finally:
        for p in neighbours:
            p.terminate()
    print(machine_line())
    print(load_line(), f"| busy neighbours: {args.busy}")
    print(f"n = {args.n}, d = 20, m = {args.m}, sigmoid; median of {args.repeats}")
    print(markdown_header(["fit", "seconds", "vs policy"]))
    for name, seconds in rows:
        print(markdown_row([name, f"{seconds:.2f}", f"{seconds / rows[0][1]:.2f}x"]))


if __name__ == "__main__":
    main()
