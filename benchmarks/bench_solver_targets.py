"""ACCPM and SIQCLP against the issue-14 targets: certified gap relative to f(alpha) - f(0).

For each (method, n): one ``indefsvm.solve`` on the sigmoid kernel problem of
``bench_accpm.py`` (``tanh(<x, x'>)`` in R^10, C = rho = 1), with a tolerance too small to stop
(1e-12) and a wall-time cap; from the run's history, the time at which the certified gap first
falls below ``tol * max(1, f(alpha) - f(0))`` (the part of the objective that depends on alpha;
``f(0) = rho ||(K0)_-||_F^2``) for each tol, and the gap at the cap. Timed as a user runs it
(set-up included).

Run (from the repository root): ``python benchmarks/bench_solver_targets.py
[--runs accpm:500 accpm-paper:500 accpm:1000 siqclp:200 siqclp-parametric:200 siqclp:300]
[--max-time 60]``

A warm-up solve at n = 60 runs first (one-off import and compilation costs are not charged to
the first run). ``accpm`` is the default ACCPM (``variant="proximal"``), ``accpm-paper`` the
paper's Algorithm 2 (``variant="paper"``); ``siqclp`` is the default exchange method (the
regularised-MKL master with Newton steps on the simplex, proximal exchange iterates),
``siqclp-algorithm3`` the same master in the unstabilised Algorithm 3, ``siqclp-simplemkl`` (and
``siqclp-algorithm3-simplemkl``) SimpleMKL's reduced-gradient steps, ``siqclp-no-kernel-bound``
the default without the kernel-SVM bound, ``siqclp-qclp`` the cvxpy QCLP (13) rebuilt each
exchange (the paper's formulation, the default before) and ``siqclp-parametric`` compiled once as
a DPP problem; runs in one process are timed in the same process, so their ratios are same-run
ones.
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import (
    load_line,
    machine_line,
    markdown_header,
    sigmoid_kernel_problem,
    solve_to_limit,
)

from indefsvm.proxy.problems import make_problem

#: Labels of ``--runs`` that are not method names: (method, solver options).
RUN_KINDS = {
    "accpm-paper": ("accpm", {"variant": "paper"}),
    # SIQCLP masters (issue 14 item 4): "siqclp" is the default (regularised-MKL master with
    # Newton steps on the simplex, proximal exchange iterates)
    "siqclp-algorithm3": ("siqclp", {"stabilise": "none"}),
    "siqclp-simplemkl": ("siqclp", {"mkl_step": "reduced_gradient"}),
    "siqclp-algorithm3-simplemkl": (
        "siqclp",
        {"stabilise": "none", "mkl_step": "reduced_gradient"},
    ),
    "siqclp-no-kernel-bound": ("siqclp", {"kernel_bound": False}),
    # the cvxpy QCLP (13), rebuilt each exchange or compiled once as a DPP problem
    "siqclp-qclp": ("siqclp", {"master": "qclp"}),
    "siqclp-parametric": ("siqclp", {"master": "qclp", "compile": "parametric"}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", default=["accpm:500", "siqclp:200"])
    parser.add_argument("--max-time", type=float, default=60.0)
    parser.add_argument("--tols", type=float, nargs="+", default=[1e-4, 1e-5, 1e-6])
    args = parser.parse_args()
    print(machine_line())
    print(f"at start: {load_line()}")
    tol_cols = [f"time to {t:g} (s)" for t in args.tols]
    print(
        markdown_header(
            ["method", "n", *tol_cols, "iterations", "time (s)", "gap / (f - f(0)) at the end",
             "status", "split"]
        )
    )  # fmt: skip
    # One-off costs of the first solve in a process (imports, loading the compiled secular
    # engine: about 8 s under load) would be charged to whichever run comes first.
    K_warm, y_warm = sigmoid_kernel_problem(60)
    for method in ("pg", "accpm"):
        solve_to_limit(K_warm, y_warm, method=method, max_iter=3)
    for run in args.runs:
        label, n_text = run.split(":")
        n = int(n_text)
        method, options = RUN_KINDS.get(label, (label, {}))
        K0, y = sigmoid_kernel_problem(n)
        f0 = make_problem("svc", K0, y, C=1.0, rho=1.0).objective(np.zeros(n))
        res = solve_to_limit(
            K0, y, C=1.0, rho=1.0, method=method, tol=1e-12, max_iter=10**6,
            options={**options, "max_time": args.max_time},
        )  # fmt: skip
        h = res.history
        scale = np.maximum(1.0, h["best_objective"] - f0)
        rel = h["gap"] / scale
        cells = []
        for tol in args.tols:
            hit = np.flatnonzero(rel <= tol)
            cells.append(f"{h['time'][hit[0]]:.1f}" if hit.size else "not reached")
        info = res.info
        if method == "accpm":
            split = (
                f"centers {info['time_center']:.1f} s, gradients {info['time_gradient']:.1f} s, "
                f"cuts {info['time_cuts']:.1f} s"
            )
            if "polish_steps" in info:
                split += f", polish {info['time_polish']:.1f} s"
                split += (
                    f"; {info['serious_steps']} serious steps, {info['restarts']} restarts, "
                    f"{info['polish_steps']} polish steps"
                )
                if info["first_polish_iteration"] is not None:
                    # what the cutting planes alone certified before the first polish step
                    k = info["first_polish_iteration"] - 1
                    split += f" (first at iteration {k + 1}; gap before it {rel[k - 1]:.1e})"
        elif method == "siqclp" and info["master"] == "mkl":
            split = (
                f"SVMs {info['time_svm']:.1f} s ({info['n_svm_solves']} solves, "
                f"{info['n_master_steps']} master steps), master other "
                f"{info['time_master'] - info['time_svm']:.1f} s, kernels "
                f"{info['time_kernel']:.1f} s, kernel-SVM bound {info['time_kernel_bound']:.1f} s "
                f"({info['n_kernel_bounds']}), mixture bound {info['time_mixture_bound']:.1f} s; "
                f"{info['max_constraints']} kernels at most, {info['n_serious_steps']} serious "
                "steps"
            )
        elif method == "siqclp":
            # the QCLPs' wall time minus cvxpy's compile and the conic solver's own time is
            # model construction and reading the solution (cvxpy overhead, not in either)
            other = info["time_qclp"] - info["time_compile"] - info["time_solver"]
            split = (
                f"cvxpy compile {info['time_compile']:.1f} s ({info['n_compilations']} "
                f"compilations), conic solver {info['time_solver']:.1f} s, other cvxpy "
                f"{other:.1f} s, kernels {info['time_kernel']:.1f} s; "
                f"{info['max_constraints']} kernels at most"
            )
        else:
            split = "-"
        final = res.gap / max(1.0, res.objective - f0)
        print(
            f"| {label} | {n} | {' | '.join(cells)} | {res.n_iter} | {res.time:.1f} | "
            f"{final:.2e} | {res.status} | {split} |",
            flush=True,
        )
    print(f"at end: {load_line()}")


if __name__ == "__main__":
    main()
