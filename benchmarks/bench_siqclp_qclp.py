"""One SIQCLP master problem (QCLP (13) of paper 004): compile vs solve, rebuilt vs compiled once.

For each n: the sigmoid kernel problem of ``bench_accpm.py`` (C = rho = 1) and ``m`` proxy
kernels ``K*(a)`` at random feasible points (the kernels an exchange run collects). The QCLP
over the first ``m - 1`` kernels is solved, then the QCLP over all ``m`` (the next exchange):

- ``rebuild`` (``compile="rebuild"``): each QCLP is a new cvxpy problem with constant factors;
- ``parametric`` (``compile="parametric"``): one DPP problem, compiled at the first QCLP, whose
  parameter values are updated for the second (cvxpy reuses the canonicalisation).

Columns are the second QCLP's times (what every later exchange costs) and the first one's
compilation (the one-off cost of the compiled problem). Times: ``wall`` (the whole QCLP as the
exchange method waits for it), ``compile`` (cvxpy's ``compilation_time``, plus the explicit DPP
canonicalisation), ``solver`` (the conic solver's own time).

Run (from the repository root): ``python benchmarks/bench_siqclp_qclp.py [--sizes 100 200]
[--kernels 8]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import load_line, machine_line, markdown_header, sigmoid_kernel_problem

from indefsvm.proxy.problems import make_problem
from indefsvm.proxy.solvers.siqclp import _QCLP, _Kernel, _psd_factor


def kernels_for(problem, m: int, seed: int) -> list[_Kernel]:
    """``m`` proxy kernels at random feasible points, with their constants (as the solver)."""
    rng = np.random.default_rng(seed)
    K0 = problem.working_kernel
    out = []
    for i in range(m):
        alpha = problem.project(rng.uniform(0.0, 1.0, size=problem.n))
        factor = _psd_factor(problem.working_proxy_kernel(problem.evaluate(alpha).state))
        constant = problem.penalty_rho * float(np.sum((factor @ factor.T - K0) ** 2))
        out.append(_Kernel(factor, constant, i))
    return out


def run(problem, kernels, mode: str) -> dict:
    qclp = _QCLP(problem, mode, "CLARABEL", {})
    qclp.solve(kernels[:-1])
    first_compile = qclp.compile_time
    compile0, solver0 = qclp.compile_time, qclp.solve_time
    t0 = time.perf_counter()
    t_value, _, _ = qclp.solve(kernels)
    return {
        "wall": time.perf_counter() - t0,
        "compile": qclp.compile_time - compile0,
        "solver": qclp.solve_time - solver0,
        "first_compile": first_compile,
        "t": t_value,
        "compilations": qclp.n_compilations,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--kernels", type=int, default=8)
    args = parser.parse_args()
    print(machine_line())
    print(f"at start: {load_line()}")
    print(
        markdown_header(
            ["n", "kernels", "mode", "wall (s)", "compile (s)", "solver (s)",
             "first compile (s)", "compilations", "t", "wall / rebuild wall"]
        )
    )  # fmt: skip
    # one-off imports and solver loading are not charged to the first row
    warm = make_problem("svc", *sigmoid_kernel_problem(30), C=1.0, rho=1.0)
    run(warm, kernels_for(warm, 3, 0), "rebuild")
    run(warm, kernels_for(warm, 3, 0), "parametric")
    for n in args.sizes:
        K0, y = sigmoid_kernel_problem(n)
        problem = make_problem("svc", K0, y, C=1.0, rho=1.0)
        kernels = kernels_for(problem, args.kernels, 1)
        base = None
        for mode in ("rebuild", "parametric"):
            r = run(problem, kernels, mode)
            base = r["wall"] if base is None else base
            print(
                f"| {n} | {args.kernels} | {mode} | {r['wall']:.2f} | {r['compile']:.2f} | "
                f"{r['solver']:.2f} | {r['first_compile']:.2f} | {r['compilations']} | "
                f"{r['t']:.8g} | {r['wall'] / base:.2f} |",
                flush=True,
            )
    print(f"at end: {load_line()}")


if __name__ == "__main__":
    main()
