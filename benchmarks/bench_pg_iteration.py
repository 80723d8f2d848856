"""One projected-gradient iteration as a user waits for it, against one ``eigh`` (issue 14).

What is timed: in ``indefsvm.solve(K0, y, max_iter=45)``, the wall time from the end of
iteration 5 to the end of iteration 45 (the run's history), divided by 40 -- every evaluation
the accelerated solver makes per iteration included (backtracking, extrapolated point, certified
gap), the set-up (``eigh`` of ``K0``) excluded as in the issue's T(45) - T(5) -- against ONE
``numpy.linalg.eigh`` of the same kernel timed in the same process with default BLAS threads.
Both secular engines are run: the compiled one (``engine="numba"``, warm-started) and LAPACK
``dlaed4`` (the reference path, ``engine="lapack"``). Evaluations per iteration and sweeps over
the poles per secular root are reported.

Problem: sigmoid kernel ``tanh(<x, x'>)`` in R^10 (``_common.sigmoid_kernel_problem``, about half
its eigenvalues negative), C = rho = 1, tol = 0 (every iteration runs).

``--evaluations lean full`` runs both of pg's evaluation modes ("lean", the default since issue 14:
objective only at backtracking trial points; "full": objective, gradient and bound everywhere);
"evaluations / iteration" counts all of them, the objective-only ones in parentheses. The eigh is
timed again right before every configuration, and the 1-minute load average is printed per row.

Run (from the repository root): ``python benchmarks/bench_pg_iteration.py [--sizes 1000 2000]
[--repeats 3] [--numba-threads 1 2] [--evaluations lean full] [--skip-lapack]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from _common import ROOT, machine_line, sigmoid_kernel_problem
from threadpoolctl import threadpool_info, threadpool_limits

import indefsvm.linalg.rank_one as rank_one_module
import indefsvm.proxy.operators as proxy_module
from indefsvm import solve
from indefsvm.threads import set_config


def _solve_time(K0, y, max_iter: int, evaluations: str = "lean") -> tuple[float, object]:
    t0 = time.perf_counter()
    res = solve(
        K0, y, C=1.0, rho=1.0, tol=0.0, max_iter=max_iter, options={"evaluations": evaluations}
    )
    return time.perf_counter() - t0, res


def per_iteration(
    K0, y, repeats: int, evaluations: str = "lean"
) -> tuple[float, float, float, float, float]:
    """Median over ``repeats`` solves of (t(iteration 45) - t(iteration 5)) / 40.

    The times come from the run's own history (wall time since the call started), so one run
    gives the issue's ``(T(max_iter=45) - T(max_iter=5)) / 40`` without the noise of two
    separate set-up ``eigh`` calls. Also returns evaluations per iteration (whole run), sweeps
    over the poles per secular root and products ``V'u`` formed by linearity per iteration
    (instead of a pass over ``V``; one per iteration is the design: the extrapolated point).
    """
    values = []
    evals = partial = sweeps = 0.0
    for _ in range(repeats):
        _, res = _solve_time(K0, y, 45, evaluations)
        t = res.history["time"]
        values.append((t[44] - t[4]) / 40.0)
        evals = res.n_evaluations / res.n_iter
        partial = res.info.get("n_objective_evaluations", 0) / res.n_iter
        operator = _LAST_WARM.get("operator")
        linear = operator.n_linear_z / res.n_iter if operator is not None else 0.0
    stats = _LAST_WARM.get("warm")
    if stats is not None and stats.n_roots:
        sweeps = stats.n_sweeps / stats.n_roots
    return statistics.median(values), evals, partial, sweeps, linear


_LAST_WARM: dict[str, object] = {}


def _track_warm_start() -> None:
    """Record the warm-start object of the last operator built (for sweeps per root)."""
    original = proxy_module.ProxyKernelOperator.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        _LAST_WARM["warm"] = self.warm_start
        _LAST_WARM["operator"] = self

    proxy_module.ProxyKernelOperator.__init__ = init


def compile_times() -> tuple[float, float]:
    """First call of the compiled kernel in a fresh process: empty cache, then warm cache."""
    # The package import (scikit-learn, cvxpy, ...) is done before the clock starts.
    code = (
        "import time, numpy as np;"
        "from indefsvm.linalg.rank_one import rank_one_eigh, rank_one_eigvals_below;"
        "t=time.perf_counter();"
        "d=np.arange(10.0) - 5; z=np.ones(10); rank_one_eigh(d, z, 1.0, engine='numba');"
        "rank_one_eigvals_below(d, z, 1.0, engine='numba');"
        "print(time.perf_counter()-t)"
    )
    out = []
    with tempfile.TemporaryDirectory() as cache:
        # this checkout's indefsvm, not an installed copy (as _common does for this process)
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT))
        for _ in range(2):
            run = subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            )
            out.append(float(run.stdout.strip()))
    return out[0], out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--numba-threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--evaluations",
        nargs="+",
        default=["lean", "full"],
        help="pg's evaluations= ('lean': objective only at trial points; 'full': the old path)",
    )
    parser.add_argument("--skip-lapack", action="store_true", help="omit the dlaed4 engine")
    args = parser.parse_args()
    print(machine_line())
    blas = [(i.get("internal_api"), i.get("num_threads")) for i in threadpool_info()]
    print(f"BLAS/OpenMP thread pools (threadpoolctl): {blas}")
    print(f"load average at start: {os.getloadavg()}")
    cold, cached = compile_times()
    print(
        f"compiled kernel, first call in a fresh process: {cold:.1f} s with an empty numba "
        f"cache (compilation), {cached:.2f} s with the cache filled (cache=True)"
    )
    _track_warm_start()
    print(
        "| n | #neg eig K0 | eigh (s) | evaluations | engine | numba threads | iteration (ms) | "
        "evaluations / iteration (objective-only) | sweeps / root | V'u by linearity / iteration | "
        "eigh / iteration | "
        "eigh 1 thread (s) | eigh 1 thread / iteration | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    available = rank_one_module.numba_available
    for n in args.sizes:
        K0, y = sigmoid_kernel_problem(n, seed=n)
        d = np.linalg.eigvalsh(K0)
        runs = [] if args.skip_lapack else [("lapack", 1, args.evaluations[0])]
        runs += [("numba", t, ev) for ev in args.evaluations for t in args.numba_threads]
        for engine, threads, ev in runs:
            rank_one_module.numba_available = available if engine == "numba" else lambda: False
            set_config(n_threads={"engine": threads})
            _solve_time(K0, y, 2, ev)  # warm-up (compilation / caches)
            _LAST_WARM.pop("warm", None)
            # eigh timed right before each configuration: the ratio is same-run and same-load
            t_eigh = statistics.median(
                [_timed(lambda K=K0: np.linalg.eigh(K)) for _ in range(args.repeats)]
            )
            # one BLAS thread: what a loaded machine cannot distort as much (a conservative
            # reference when other jobs compete for the cores; the target is the default)
            with threadpool_limits(limits=1, user_api="blas"):
                t_eigh1 = statistics.median(
                    [_timed(lambda K=K0: np.linalg.eigh(K)) for _ in range(args.repeats)]
                )
            t_it, evals, partial, sweeps, linear = per_iteration(K0, y, args.repeats, ev)
            sweep_s = f"{sweeps:.2f}" if engine == "numba" else "-"
            print(
                f"| {n} | {int(np.sum(d < 0))} | {t_eigh:.3f} | {ev} | {engine} | "
                f"{threads if engine == 'numba' else '-'} | {1e3 * t_it:.1f} | {evals:.2f} "
                f"({partial:.2f}) | {sweep_s} | {linear:.2f} | 1/{t_eigh / t_it:.0f} | "
                f"{t_eigh1:.3f} | "
                f"1/{t_eigh1 / t_it:.0f} | "
                f"{os.getloadavg()[0]:.2f} |",
                flush=True,
            )
        rank_one_module.numba_available = available
    print(f"load average at end: {os.getloadavg()}")


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    from sklearn.exceptions import ConvergenceWarning

    warnings.simplefilter("ignore", ConvergenceWarning)
    main()
