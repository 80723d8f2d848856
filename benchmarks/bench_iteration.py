"""Per-iteration cost of the core problem vs one dense eigendecomposition.

One iteration of every solver evaluates the objective of eq. (7), its gradient and the certified
gap (``ClassificationProblem.evaluate``). The rank-one eigen-update engine makes that O(n^2):
this script times it against one ``numpy.linalg.eigh`` of the same n x n matrix, in the same run,
on a sigmoid kernel with about half its eigenvalues negative.

Run: ``python benchmarks/bench_iteration.py [--sizes 500 1000 2000 4000]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import machine_line, median_time, sigmoid_kernel_problem

from indefsvm import ClassificationProblem, solve


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print(machine_line())
    print(
        "| n | #neg eig K0 | #neg eig M | eigh (s) | matmul n x n (s) | iteration (ms) "
        "| eigh / iteration | matmul / iteration |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        K0, y = sigmoid_kernel_problem(n, seed=n)
        t0 = time.perf_counter()
        prob = ClassificationProblem(K0, y, C=1.0, rho=1.0)
        setup = time.perf_counter() - t0
        # A realistic iterate: a few accelerated steps from 0 (support vectors at both bounds).
        res = solve(K0, y, C=1.0, rho=1.0, max_iter=20, tol=0.0, verbose=False)
        alpha = res.alpha
        ev = prob.evaluate(alpha)
        n_neg_m = int(np.count_nonzero(ev.state.low_values < 0))
        t_iter = median_time(lambda a=alpha, p=prob: p.evaluate(a), args.repeats)
        reps = 3 if n <= 2000 else 2
        t_eigh = median_time(lambda K=K0: np.linalg.eigh(K), reps)
        t_mm = median_time(lambda K=K0: K @ K, reps)
        print(
            f"| {n} | {prob.operator.n_negative_k0} | {n_neg_m} | {t_eigh:.3f} | {t_mm:.3f} | "
            f"{1e3 * t_iter:.2f} | {t_eigh / t_iter:.1f} | {t_mm / t_iter:.1f} |",
            flush=True,
        )
        del setup


if __name__ == "__main__":
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    warnings.simplefilter("ignore", ConvergenceWarning)
    main()
