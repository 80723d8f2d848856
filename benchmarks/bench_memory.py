"""Peak memory of ``indefsvm.solve`` at n = 4000, counted in n x n float64 arrays.

Runs the solve in a fresh subprocess and reports the growth of the process's peak resident set
size over a baseline taken after the kernel is built (so the input kernel itself is not counted),
divided by the size of one n x n float64 array. LAPACK's workspace is included (tracemalloc would
miss it).

Run: ``python benchmarks/bench_memory.py [--n 4000]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, warnings
sys.path.insert(0, {bench_dir!r})
from _common import sigmoid_kernel_problem
from sklearn.exceptions import ConvergenceWarning
import indefsvm
n, iters = {n}, {iters}
K0, y = sigmoid_kernel_problem(n, seed=3)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
warnings.simplefilter("ignore", ConvergenceWarning)
res = indefsvm.solve(K0, y, C=1.0, rho=1.0, max_iter=iters, tol=1e-6)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({{"base": base, "peak": peak, "n_iter": res.n_iter, "status": res.status}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--iterations", type=int, default=30)
    args = parser.parse_args()
    import os

    code = CHILD.format(
        bench_dir=os.path.dirname(os.path.abspath(__file__)), n=args.n, iters=args.iterations
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    nn = 8 * args.n**2
    print(
        f"n = {args.n}: one n x n float64 array = {nn / 2**20:.0f} MiB; peak RSS growth during "
        f"solve (after K0 was built) = {(data['peak'] - data['base']) / 2**20:.0f} MiB = "
        f"{(data['peak'] - data['base']) / nn:.2f} n x n arrays ({data['n_iter']} iterations, "
        f"status {data['status']})"
    )


if __name__ == "__main__":
    main()
