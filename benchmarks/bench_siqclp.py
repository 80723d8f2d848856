"""SIQCLP exchange method (paper 004 Alg. 3, cvxpy + Clarabel) against the projected gradient.

For each n: the sigmoid kernel problem of ``bench_accpm.py`` (C = 1, rho = 1) solved to the
certified relative gap 1e-5 (one run, ``max_time`` cap), with the time split into cvxpy
compilation, conic solver, kernel factors and the mixture bound; the same problem by
``method="pg"``. ``--modes rebuild parametric`` also measures the DPP (parameter) variant.
(The cvxpy QCLP master, ``master="qclp"``; the default MKL master is measured by
``bench_solver_targets.py``.)

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_siqclp.py [--sizes 100 200 300] [--tol 1e-5]
[--modes rebuild] [--max-time 900]``
"""

from __future__ import annotations

import argparse

from _common import (
    load_line,
    machine_line,
    markdown_header,
    sigmoid_kernel_problem,
    solve_to_limit,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 300])
    parser.add_argument("--tol", type=float, default=1e-5)
    parser.add_argument("--modes", nargs="+", default=["rebuild"])
    parser.add_argument("--solver", default="CLARABEL")
    parser.add_argument("--max-time", type=float, default=900.0)
    args = parser.parse_args()
    print(f"{machine_line()}, conic solver {args.solver}")
    print(load_line())
    print(
        markdown_header(
            ["n", "method", "status", "iterations", "time (s)", "compile (s)", "solver (s)",
             "kernels (s)", "bound (s)", "compilations", "constraints kept", "rel. gap"]
        )
    )  # fmt: skip
    for n in args.sizes:
        K0, y = sigmoid_kernel_problem(n)
        runs = [
            ("siqclp", {"master": "qclp", "compile": mode, "conic_solver": args.solver})
            for mode in args.modes
        ]
        runs.append(("pg", {}))
        for method, options in runs:
            res = solve_to_limit(
                K0,
                y,
                C=1.0,
                rho=1.0,
                method=method,
                tol=args.tol,
                max_iter=10**6,
                options={**options, "max_time": args.max_time},
            )
            info = res.info
            if method == "siqclp":
                label = f"siqclp ({info['compile']})"
                split = (
                    f"{info['time_compile']:.2f} | {info['time_solver']:.2f} | "
                    f"{info['time_kernel']:.2f} | {info['time_mixture_bound']:.2f} | "
                    f"{info['n_compilations']} | {info['n_constraints']}"
                )
            else:
                label = "pg"
                split = "- | - | - | - | - | -"
            print(
                f"| {n} | {label} | {res.status} | {res.n_iter} | {res.time:.2f} | {split} | "
                f"{res.relative_gap:.2e} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
