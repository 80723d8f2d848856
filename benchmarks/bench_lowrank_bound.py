"""Is the certified bound or the iterate what limits the low-rank solver at large n? (issue 12)

At n = 10^6 the projected gradient did not reach a certified relative gap of 1e-4 in 10 minutes
(docs/benchmarks.md). The previous diagnosis was that the certificate lags: its upper bound is the
SVM primal of ``w(alpha)`` for the proxy kernel ``K*(alpha)`` (notes §3), which converges only
linearly in ``||alpha - alpha*||``, so a better primal point for the SAME kernel should tighten it.

This script tests that hypothesis. It stops the solver after given iteration counts, freezes the
kernel ``K* = K*(alpha_k) = F F'`` (``F``: the factor of :meth:`LowRankProxyKernel.features`, n x
(m+1)) and runs dual coordinate descent (Hsieh et al. 2008, LIBLINEAR's method; the intercept
fixed at the solver's best ``b``, warm-started at ``alpha_k``) on the linear SVM with features
``F``. Every ``w`` it produces gives a valid upper bound: the primal of ``w`` with the best
intercept, plus ``rho ||K* - K0||_F^2``. If the gap of these bounds falls far below the solver's
own certified gap, a primal polish would pay; if it plateaus near it, the limit is the kernel
``K*(alpha_k)`` itself (``min_w UB(K*(alpha_k), w) - f(alpha_k)`` is the SVM duality gap of
``alpha_k`` for its own kernel, which only better iterates reduce).

Data and kernel as ``bench_lowrank.py --mode lowrank --dtype float32`` (sigmoid kernel, m = 500
uniform landmarks, C = 0.1, rho = 1). Run from the repository root:

    OMP_NUM_THREADS=1 python benchmarks/bench_lowrank_bound.py --n 200000 --iterations 60 120 180
"""

from __future__ import annotations

import argparse
import time
import warnings

import numba
import numpy as np
from _common import load_line, machine_line
from bench_lowrank import COEF0, GAMMA, make_data

from indefsvm import make_problem, solve_problem
from indefsvm.approximation.nystrom import IndefiniteNystroem
from indefsvm.linalg.factor import LowRankKernel
from indefsvm.proxy import certificate


@numba.njit(cache=True)
def dual_cd_epoch(F, sq, y, box, a, w, b, order):  # pragma: no cover - compiled
    """One pass of dual coordinate descent on ``max sum a_i (1 - y_i b) - ||w||^2 / 2``,
    ``w = F' Y a``, ``0 <= a <= box`` (intercept ``b`` fixed), in the given order; in place.
    ``sq`` holds the squared row norms of ``F``."""
    r = F.shape[1]
    for i in order:
        if sq[i] <= 0.0:
            continue
        s = 0.0
        for j in range(r):
            s += F[i, j] * w[j]
        new = min(max(a[i] + (1.0 - y[i] * b - y[i] * s) / sq[i], 0.0), box[i])
        step = (new - a[i]) * y[i]
        if step != 0.0:
            a[i] = new
            for j in range(r):
                w[j] += step * F[i, j]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200000)
    parser.add_argument("--m", type=int, default=500)
    parser.add_argument("--C", type=float, default=0.1)
    parser.add_argument("--rho", type=float, default=1.0)
    parser.add_argument("--iterations", type=int, nargs="+", default=[60, 120, 180])
    parser.add_argument("--epochs", type=int, nargs="+", default=[1, 4, 16, 64, 256])
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(machine_line())
    print(load_line())
    X, y, _, _ = make_data(args.n, 0)
    nys = IndefiniteNystroem(
        "sigmoid", gamma=GAMMA, coef0=COEF0, n_components=args.m, random_state=0, dtype="float32"
    )
    Phi = nys.fit_transform(X)
    problem = make_problem("svc", LowRankKernel(Phi, nys.signature_), y, C=args.C, rho=args.rho)
    print(
        "| solver iterations | solver's certified rel. gap | "
        + " | ".join(f"after {e} DCD epochs" for e in args.epochs)
        + " | DCD time [s] |"
    )
    print("|---:|---:|" + "---:|" * (len(args.epochs) + 1))
    for iterations in args.iterations:
        res = solve_problem(problem, tol=1e-14, max_iter=iterations)
        scale = max(1.0, res.objective - res.baseline_objective)
        state = problem.state(res.alpha)
        F64 = problem.kernel_from_state(state).features()
        F = F64.astype(np.float32)  # the search runs on rounded features; bounds use F64
        penalty = certificate.penalty(problem, state)
        a = res.alpha.copy()
        w = F64.T @ (y * a)
        sq = np.einsum("ij,ij->i", F64, F64)
        rng = np.random.default_rng(0)
        b, done, cells, t_dcd = res.intercept, 0, [], 0.0
        for epochs in args.epochs:
            t0 = time.perf_counter()
            for _ in range(epochs - done):
                dual_cd_epoch(
                    F, sq, y.astype(np.float64), problem.box, a, w, b, rng.permutation(len(y))
                )
            t_dcd += time.perf_counter() - t0
            done = epochs
            g = F64 @ w
            primal, b = problem._primal_from(g, float(w @ w))
            cells.append(f"{(primal + penalty - res.objective) / scale:.2e}")
        print(
            f"| {iterations} | {res.gap / scale:.2e} | " + " | ".join(cells) + f" | {t_dcd:.1f} |"
        )
    print(load_line())


if __name__ == "__main__":
    main()
