"""One pass over a Nystroem factor on a Dask cluster against the same pass in memory (issue 25).

The low-rank Krein learners (LSM, VC-LSM, SH-SVM) spend their time in two kinds of passes over
the factor ``F`` (n x m): a Gram reduction ``F'F`` (each worker reduces its row chunks to one
``m x m`` matrix, the partial sums are added on the workers and one ``m x m`` matrix reaches the
client) and a product ``F z`` (an ``m``-vector goes out, an ``n``-vector stays on the workers,
persisted). This script builds ``F`` with ``IndefiniteNystroem.fit_transform`` of a dask array
on a ``LocalCluster`` (the factor stays on the workers), gathers one copy into the client for
the in-memory reference, and prints the median wall time of ``--repeats`` passes of each kind,
distributed and in memory, their ratio, and the time of an empty pass over the same chunks
(one task per chunk and the pairwise combination: the fixed overhead of a pass).

Synthetic data (seeded): ``X ~ N(0, 1)^{n x 10}``, sigmoid kernel ``tanh(0.05 x'z - 1)``.

    OMP_NUM_THREADS=1 python benchmarks/bench_dask_krein.py --n 50000 --m 200
    OMP_NUM_THREADS=1 python benchmarks/bench_dask_krein.py --smoke
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import machine_line, median_time

from indefsvm.approximation.nystrom import IndefiniteNystroem
from indefsvm.krein import lowrank
from indefsvm.utils.dask_rows import reduce_rows


def _nothing(block: np.ndarray) -> float:
    return 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--m", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        help="rows per chunk (default: two chunks per worker, so each worker overlaps the "
        "reduction of one chunk with the next)",
    )
    parser.add_argument("--threads", action="store_true", help="workers as threads, not processes")
    parser.add_argument("--smoke", action="store_true", help="n = 4000, m = 40, 3 repeats")
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.m, args.repeats = 4000, 40, 3
    import dask.array as da
    from distributed import Client, LocalCluster

    chunk = args.chunk_rows or -(-args.n // (2 * args.workers))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, 10))
    print(machine_line())
    kind = "threads" if args.threads else "processes"
    print(
        f"n = {args.n}, m = {args.m}, {args.workers} workers ({kind}, 1 thread each), "
        f"chunks of {chunk} rows"
    )
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=not args.threads,
            dashboard_address=":0",
        ) as cluster,
        Client(cluster),
    ):
        Xd = da.from_array(X, chunks=(chunk, -1))
        t0 = time.perf_counter()
        ny = IndefiniteNystroem(
            kernel="sigmoid", gamma=0.05, coef0=-1.0, n_components=args.m, random_state=0
        )
        Fd = ny.fit_transform(Xd)
        print(f"Nystroem fit_transform on the cluster: {time.perf_counter() - t0:.2f} s")
        F = np.asarray(Fd.compute())  # the in-memory reference on the same numbers
        # A new z per pass: a repeated F z with the same z would share its keys (and result)
        # with the previous, still persisted one.
        draws = np.random.default_rng(1)
        rows = [("empty pass (overhead)", lambda: reduce_rows(_nothing, Fd), None)]
        rows.append(("Gram F'F", lambda: lowrank._gram(Fd), lambda: lowrank._gram(F)))
        rows.append(
            (
                "product F z",
                lambda: lowrank._matvec(Fd, draws.normal(size=F.shape[1])),
                lambda: lowrank._matvec(F, draws.normal(size=F.shape[1])),
            )
        )
        print(f"{'pass':<24}{'cluster (s)':>12}{'memory (s)':>12}{'ratio':>8}")
        for name, distributed_pass, memory_pass in rows:
            t_d = median_time(distributed_pass, args.repeats)
            if memory_pass is None:
                print(f"{name:<24}{t_d:>12.4f}{'':>12}{'':>8}")
                continue
            t_m = median_time(memory_pass, args.repeats)
            print(f"{name:<24}{t_d:>12.4f}{t_m:>12.4f}{t_d / t_m:>8.2f}")


if __name__ == "__main__":
    main()
