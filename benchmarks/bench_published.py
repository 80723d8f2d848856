"""The default solver against a faithful port of the published projected gradient.

The published IndefiniteSVM code (paper 004, Sect. 3.2 and 3.5) runs Algorithm 1 with the step
5/k, the Moreau-Yosida smoothed gradient with eps = 1e-4, the class-weighted C
(``C * n_pos / n_neg`` on the negative class) and a LIBSVM duality-gap check every 10 iterations.
Its rank-one eigen-update falls back to a full eigendecomposition of ``K0 + u u'/(4 rho)``
whenever the update fails; the port below takes that path at every iteration (one ``eigh`` and
the products with the eigenvectors), which is what the iteration costs when the fallback fires.

The port runs 300 iterations on n = 600; then our default solver (accelerated projected gradient,
exact gradient, rank-one engine) runs on the same problem until its best objective reaches the
port's final objective. Both are timed in the same run.

Timing (issue 14): the port's 300 iterations, then ``indefsvm.solve`` stopped by a callback once
its objective reaches the port's final one -- the first solve in a fresh process (cold: Numba's
cache is loaded) and the median of ``--repeats`` later solves (warm, what a user waits for on
every further solve). Both include the set-up ``eigh`` of ``K0``; forming the dense proxy kernel
(``result.kernel``, on first access since issue 14) is timed separately.

Run: ``python benchmarks/bench_published.py [--n 600 --iterations 300 --seed 1 --C 1 --rho 1]
[--blas-threads 1]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from _common import ROOT, machine_line, sigmoid_kernel_problem

from indefsvm import solve
from indefsvm.linalg.projection import project_hyperplane_box
from indefsvm.proxy import _libsvm
from indefsvm.utils.validation import class_weights_to_C


def published_projected_gradient(K0, y, C, rho, iterations, step=5.0, eps=1e-4, libsvm_every=10):
    """Algorithm 1 as published: full eigh per iteration, smoothed gradient, step t/k."""
    n = len(y)
    box = class_weights_to_C(C, y, "paper")
    alpha = np.zeros(n)
    objective = -np.inf
    best_dual = np.inf
    for k in range(1, iterations + 1):
        u = y * alpha
        M = K0 + np.outer(u, u) / (4 * rho)
        lam, V = np.linalg.eigh(M)
        lam_pos = np.maximum(lam, 0.0)
        Vu = V.T @ u
        # Moreau-Yosida smoothed positive part: u*(lambda) = clip(lambda / eps, 0, 1)
        smoothed = np.clip(lam / eps, 0.0, 1.0) * lam
        grad = 1.0 - y * (V @ (smoothed * Vu))
        # exact eq. (7) at alpha: e'a - 1/2 u'K*u + rho ||K* - K0||^2 with
        # ||K* - K0||^2 = ||sigma u u' - M_-||^2 expanded in the eigenbasis of M
        sigma = 1.0 / (4 * rho)
        lam_neg = np.minimum(lam, 0.0)
        distance_sq = (
            sigma**2 * float(u @ u) ** 2
            - 2 * sigma * float(np.sum(lam_neg * Vu**2))
            + float(np.sum(lam_neg**2))
        )
        objective = alpha.sum() - 0.5 * float(np.sum(lam_pos * Vu**2)) + rho * distance_sq
        if k % libsvm_every == 0:
            Kstar = (V * lam_pos) @ V.T
            c_pos, c_neg = float(box[y > 0][0]), float(box[y < 0][0])
            fit = _libsvm.train_precomputed(
                Kstar, y, svm_type=0, C=1.0, class_weights={1: c_pos, -1: c_neg}
            )
            a_lib = np.abs(fit.coef)
            u_lib = y * a_lib
            dual = a_lib.sum() - 0.5 * u_lib @ Kstar @ u_lib + rho * np.sum((Kstar - K0) ** 2)
            best_dual = min(best_dual, dual)
        alpha = project_hyperplane_box(alpha + (step / k) * grad, y, 0.0, np.zeros(n), box)
    return alpha, objective, best_dual


def _solve_to(K0, y, args, target):
    """One ``indefsvm.solve`` as a user runs it, stopped when its objective reaches ``target``."""
    t0 = time.perf_counter()
    res = solve(
        K0,
        y,
        C=args.C,
        rho=args.rho,
        class_weight="paper",
        tol=1e-10,
        max_iter=100000,
        options={"callback": lambda info: info["objective"] >= target},
    )
    return time.perf_counter() - t0, res


def _cold_solve(args, target: float) -> float:
    code = (
        "import sys, time; sys.argv = ['x'];"
        "from _common import sigmoid_kernel_problem; from indefsvm import solve;"
        f"K0, y = sigmoid_kernel_problem({args.n}, seed={args.seed});"
        "t = time.perf_counter();"
        f"solve(K0, y, C={args.C!r}, rho={args.rho!r}, class_weight='paper', tol=1e-10,"
        f" max_iter=100000, callback=lambda info: info['objective'] >= {float(target)!r});"
        "print(time.perf_counter() - t)"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "benchmarks")]))
    if args.blas_threads is not None:
        env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(args.blas_threads)
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return float(run.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--rho", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5, help="warm solves (median reported)")
    parser.add_argument(
        "--blas-threads",
        type=int,
        default=None,
        help="limit BLAS threads for both methods (default: leave BLAS alone); on a loaded "
        "machine 1 thread distorts both timings less than contended multi-threaded eigh",
    )
    args = parser.parse_args()
    if args.blas_threads is not None:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=args.blas_threads, user_api="blas"):
            print(f"BLAS threads limited to {args.blas_threads} for both methods")
            _run(args)
    else:
        _run(args)


def _run(args) -> None:
    print(machine_line())
    print(f"load average at start: {os.getloadavg()}")
    K0, y = sigmoid_kernel_problem(args.n, seed=args.seed)
    f0 = args.rho * float(np.sum(np.minimum(np.linalg.eigvalsh(K0), 0.0) ** 2))
    print(
        f"problem: _common.sigmoid_kernel_problem(n={args.n}, seed={args.seed}), C={args.C:g}, "
        f"rho={args.rho:g}, class_weight='paper'; f(0) = rho ||(K0)_-||_F^2 = {f0:.10g}"
    )
    t0 = time.perf_counter()
    alpha, f_port, dual = published_projected_gradient(K0, y, args.C, args.rho, args.iterations)
    t_port = time.perf_counter() - t0
    print(
        f"published port: {args.iterations} iterations in {t_port:.2f} s "
        f"({1e3 * t_port / args.iterations:.1f} ms/iteration), final objective {f_port:.10g}, "
        f"best LIBSVM 'dual' value {dual:.10g}"
    )
    target = f_port
    # Cold: the first solve in a FRESH process (this one has numba loaded by the port's
    # projection): indefsvm, numpy and the problem are set up before the clock starts; numba's
    # import and on-disk cache loading are inside the timed solve.
    t_cold = _cold_solve(args, target)
    print(
        f"indefsvm default, first solve in a fresh process (numba import and cache loading "
        f"included, package import excluded): {t_cold:.3f} s -> speed-up {t_port / t_cold:.0f}x"
    )
    _solve_to(K0, y, args, target)  # this process's first solve (warm-up, not reported)
    # Warm: what a user waits for on every later solve in the same process.
    warm = []
    for _ in range(args.repeats):
        t, res = _solve_to(K0, y, args, target)
        t_set = res.history["time"][0] if res.n_iter else float("nan")
        t0 = time.perf_counter()
        _ = res.kernel  # the dense K* is formed on first access (O(n^2 k))
        warm.append((t, t_set, time.perf_counter() - t0))
    t_warm = statistics.median(w[0] for w in warm)
    t_kernel = statistics.median(w[2] for w in warm)
    t_first = statistics.median(w[1] for w in warm)
    print(
        f"indefsvm default, warm (median of {args.repeats}): reached {res.objective:.10g} >= "
        f"{target:.10g} after {res.n_iter} iterations in {t_warm:.3f} s (set-up eigh + first "
        f"iteration {t_first:.3f} s; status {res.status}, certified gap {res.gap:.3g}); "
        f"forming result.kernel afterwards: {t_kernel:.3f} s"
    )
    print(
        f"speed-up to the port's final objective: {t_port / t_warm:.0f}x warm, "
        f"{t_port / (t_warm + t_kernel):.0f}x warm with result.kernel formed, "
        f"{t_port / t_cold:.0f}x cold"
    )
    t0 = time.perf_counter()
    full = solve(K0, y, C=args.C, rho=args.rho, class_weight="paper", tol=1e-6)
    t_full = time.perf_counter() - t0
    print(
        f"indefsvm default to certified relative gap 1e-6: {t_full:.3f} s, {full.n_iter} "
        f"iterations, objective {full.objective:.10g} (port's final objective is "
        f"{(full.objective - f_port) / abs(full.objective - f0):.2e} of f - f(0) below it)"
    )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
