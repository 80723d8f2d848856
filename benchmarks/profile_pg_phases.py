"""Where one projected-gradient iteration's time goes, phase by phase (issue 14).

Wraps the phases of an evaluation with wall-clock timers inside ``indefsvm.solve(K0, y,
max_iter=45)`` on the sigmoid problem (C = rho = 1) and prints milliseconds per iteration for
both of pg's evaluation modes ("lean": objective only at trial points; "full": the path before
issue 14). Phases nest ("total" rows include the rows below them); the secular kernels are the
single-thread builds (``set_config(n_threads={"engine": 1})``, set by this script).

Run: ``python benchmarks/profile_pg_phases.py [--n 2000]``
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import time
import warnings

from _common import sigmoid_kernel_problem

import indefsvm.linalg.rank_one as rank_one
import indefsvm.proxy.operators as proxy
import indefsvm.proxy.problems as problems
import indefsvm.proxy.solvers._monitor as monitor
from indefsvm import solve
from indefsvm.linalg import _secular_numba as kernels
from indefsvm.threads import set_config

_ACC: collections.Counter = collections.Counter()


def _wrap(owner, name: str, label: str) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            _ACC[label] += time.perf_counter() - t0

    setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    phases = [
        (problems.ProxyKernelProblem, "evaluate", "evaluate (full: gradient + bound), total"),
        (proxy.ProxyKernelOperator, "_state", "  proxy state, total"),
        (kernels, "secular_roots_serial", "    secular roots, all (Löwner products fused)"),
        (kernels, "secular_vectors_serial", "    eigenvectors (Gu-Eisenstat)"),
        (problems.ClassificationProblem, "_primal_from", "  certified bound: best intercept"),
        (problems.ProxyKernelProblem, "evaluate_objective", "evaluate_objective, total"),
        (proxy.ProxyKernelOperator, "objective_state", "  objective state, total"),
        (kernels, "secular_roots_prefix_serial", "    secular roots, negative only"),
        (proxy.ProxyKernelOperator, "_z_lookup", "V'u (one product, or by linearity)"),
        (rank_one, "_deflate", "deflation"),
        (problems.ProxyKernelProblem, "prox", "projection"),
        (monitor.SolverMonitor, "offer", "monitor.offer"),
        (monitor.SolverMonitor, "end_iteration", "monitor.end_iteration"),
    ]
    for owner, name, label in phases:
        _wrap(owner, name, label)
    # The serial kernels are the ones wrapped above (the threaded builds run elsewhere).
    set_config(n_threads={"engine": 1})
    K0, y = sigmoid_kernel_problem(args.n, seed=args.n)
    print(f"n = {args.n}, load average at start: {os.getloadavg()}")
    for evaluations in ("lean", "full"):
        solve(K0, y, tol=0.0, max_iter=3, options={"evaluations": evaluations})  # warm-up
        _ACC.clear()
        t0 = time.perf_counter()
        res = solve(K0, y, tol=0.0, max_iter=45, options={"evaluations": evaluations})
        per_it = (time.perf_counter() - t0 - res.history["time"][0]) / (res.n_iter - 1)
        print(
            f"{evaluations}: {1e3 * per_it:.1f} ms per iteration (iterations 2-45), "
            f"{res.n_evaluations / res.n_iter:.2f} evaluations per iteration "
            f"({res.info['n_objective_evaluations'] / res.n_iter:.2f} objective-only)"
        )
        for _, _, label in phases:
            if label in _ACC:
                print(f"  {label:50s} {1e3 * _ACC[label] / res.n_iter:7.2f} ms/iteration")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    from sklearn.exceptions import ConvergenceWarning

    warnings.simplefilter("ignore", ConvergenceWarning)
    main()
