"""Cost of the rank-one eigen-update engine vs one dense eigendecomposition.

For each n: a sigmoid kernel ``tanh(<x, x'>)`` on Gaussian data (about half its eigenvalues
negative, ``_common.sigmoid_kernel_problem``), decomposed once by ``numpy.linalg.eigh`` (timed:
this is the cubic step the engine replaces); then ``z = V'u`` for ``u = y * alpha`` shaped like an
SVM dual iterate (alpha in [0, C], C = 1: 40% zero, 30% at the bound, the rest inside) and
``sigma = 1/(4 rho)``, rho = 1. Times ``rank_one_eigh(d, z, sigma, which="below", upper=0)``
(median of several repeats; also with ``n_threads=2``), the two products with ``V`` of one solver
iteration, and prints the ratios to one ``eigh``. Accuracy columns: ``||W'W - I||`` and the
relative residual of the returned pairs for ``diag(d) + sigma z z'``.

Run: ``python benchmarks/bench_rank_one.py [--sizes 500 1000 2000 4000] [--repeats 7] [--dim 10]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import machine_line, median_time, sigmoid_kernel_problem

from indefsvm.linalg.rank_one import rank_one_eigh


def dual_like_iterate(y: np.ndarray, rng: np.random.Generator, C: float = 1.0) -> np.ndarray:
    """``u = y * alpha`` with alpha a plausible SVM dual iterate (zeros, bounds and interior)."""
    n = y.size
    state = rng.random(n)
    alpha = np.where(state < 0.4, 0.0, np.where(state < 0.7, C, C * rng.random(n)))
    return y * alpha


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rho", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--dim", type=int, default=10, help="data dimension (small: low-rank kernel, deflation)"
    )
    args = parser.parse_args()
    sigma = 1.0 / (4.0 * args.rho)
    print(machine_line())
    print(
        f"sigmoid kernel tanh(<x, x'>), x in R^{args.dim}; sigma = 1/(4 rho) = {sigma:g}; "
        f"engine times are medians of {args.repeats} runs"
    )
    print(
        "| n | #neg d | #neg M | deflated | eigh (s) | engine below (ms) | eigh / engine "
        "| 2 matvecs V (ms) | eigh / (engine + matvecs) | engine below, 2 threads (ms) "
        "| engine all (ms) | ||W'W-I|| | rel. residual |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        K0, y = sigmoid_kernel_problem(n, seed=n, dim=args.dim)
        rng = np.random.default_rng(args.seed + n)
        t0 = time.perf_counter()
        d, V = np.linalg.eigh(K0)
        t_eigh = time.perf_counter() - t0
        u = dual_like_iterate(y, rng)
        z = V.T @ u
        res = rank_one_eigh(d, z, sigma, which="below", upper=0.0)

        def engine(d=d, z=z, which="below", n_threads=1):
            return rank_one_eigh(d, z, sigma, which=which, upper=0.0, n_threads=n_threads)

        t_below = median_time(engine, args.repeats)
        t_below2 = median_time(lambda: engine(n_threads=2), args.repeats)
        t_all = median_time(lambda: engine(which="all"), max(1, args.repeats // 2))
        W, lam = res.eigenvectors, res.eigenvalues
        coef = lam * (W.T @ z)

        def two_matvecs(V=V, u=u, W=W, coef=coef):
            V.T @ u
            V @ (W @ coef)

        t_mv = median_time(two_matvecs, args.repeats)
        orth = float(np.linalg.norm(W.T @ W - np.eye(lam.size)))
        AW = d[:, None] * W + sigma * np.outer(z, z @ W)
        scale = max(float(np.max(np.abs(d))), sigma * float(z @ z))
        resid = float(np.linalg.norm(AW - W * lam)) / (scale * np.sqrt(max(lam.size, 1)))
        print(
            f"| {n} | {int(np.sum(d < 0))} | {lam.size} | {res.n_deflated} | {t_eigh:.3f} "
            f"| {1e3 * t_below:.1f} | {t_eigh / t_below:.1f} | {1e3 * t_mv:.2f} "
            f"| {t_eigh / (t_below + t_mv):.1f} | {1e3 * t_below2:.1f} | {1e3 * t_all:.1f} "
            f"| {orth:.1e} | {resid:.1e} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
