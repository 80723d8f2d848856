"""The grid that chose ``method="auto"``'s policy: every named solver and ``auto`` on each point.

For each grid point a fresh problem is built and solved by every named solver that can take it
(``pg``, ``accpm``, ``siqclp`` on a dense kernel; ``pg``, ``lowrank_newton`` on a factor, and
the cutting-plane methods while the factor is small enough for n x n arrays) and then by
``auto``, each timed as a user waits for it (problem set-up included: the eigendecomposition of a
dense ``K0``, the Gram matrix of a factor) with the monitor's stopping rule at ``--tol`` and a
wall-time cap. A row records, per solver, the time and whether the gap was certified; ``auto``'s
ratio is its time over the fastest named solver that certified, and a point fails the policy
when the ratio exceeds 1.2 or ``auto`` ends uncertified where a named solver certified.

Problems (seeded):

``dense``
    The sigmoid kernel ``tanh(<x, x'>)`` of :func:`_common.sigmoid_kernel_problem` (n points in
    R^10, about half the eigenvalues negative), times ``scale``.
``factor``
    The Nyström factor (m = ``--m`` uniform landmarks, float64; float32 from n = 10^6) of the
    sigmoid kernel ``tanh(0.05 x'z - 1)`` on ``X ~ N(0, 1)^{n x 20}`` with the labels of
    ``benchmarks/bench_lowrank.py``, its features times ``sqrt(scale)``.

Problem kinds (``--kinds``): ``svc`` (default), ``oneclass`` (the one-class SVM, ``nu`` = 0.5:
the C axis is left out) and ``vrho`` (``svc`` with a componentwise rho: the point's rho times a
seeded permutation of ``geomspace(0.1, 10, n)``).

Around the base point (kernel scale 1, rho = 1, C = 1) each axis is moved to both ends of the
issue's ranges one at a time (scale 1e-2 and 1e5, rho 1e-3 and 1e8, C 1e-4 and 1e4): 7 points per
(form, n) up to ``--full-max-n`` (30,000), the base point alone above it. ``--corners`` adds,
for the smallest n of each form, all 27 combinations of the three
axes' (low, 1, high).

Run (from the repository root; rows are appended to ``--out`` as they finish, so an interrupted
run keeps them and ``--resume`` skips them)::

    python benchmarks/bench_auto_policy.py --out results/auto_policy.csv
    python benchmarks/bench_auto_policy.py --quick      # a 1-minute smoke grid

It prints a markdown table (docs/benchmarks.md, "solver='auto'") and the machine and load.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import time
import warnings
from pathlib import Path

import numpy as np
from _common import load_line, machine_line, markdown_header, markdown_row, sigmoid_kernel_problem

from indefsvm.linalg.factor import DENSE_LIMIT, LowRankKernel
from indefsvm.proxy.api import solve_problem
from indefsvm.proxy.problems import make_problem

SCALES = (1e-2, 1e5)
RHOS = (1e-3, 1e8)
CS = (1e-4, 1e4)
FIELDS = ["form", "n", "m", "scale", "rho", "C", "tol", "solver", "time", "status", "certified"]
FIELDS += ["kind"]
KINDS = ("svc", "oneclass", "vrho")


def problem_maker(kind: str, n: int):
    """``make(kernel, y, rho, C)`` for a kind (see the module docstring)."""
    spread = np.random.default_rng(7).permutation(np.geomspace(0.1, 10.0, n))

    def make(kernel, y, rho, C):
        if kind == "oneclass":
            return make_problem("oneclass", kernel, None, nu=0.5, rho=rho)
        if kind == "vrho":
            return make_problem("svc", kernel, y, C=C, rho=rho * spread)
        return make_problem("svc", kernel, y, C=C, rho=rho)

    return make


def base_points(corners: bool, kind: str = "svc") -> list[tuple[float, float, float]]:
    points = [(1.0, 1.0, 1.0)]
    points += [(s, 1.0, 1.0) for s in SCALES]
    points += [(1.0, r, 1.0) for r in RHOS]
    if kind != "oneclass":
        points += [(1.0, 1.0, c) for c in CS]
    if corners:
        axes = [(SCALES[0], 1.0, SCALES[1]), (RHOS[0], 1.0, RHOS[1]), (CS[0], 1.0, CS[1])]
        points += [p for p in itertools.product(*axes) if p not in points]
    return points


def factor_data(n: int, m: int, seed: int = 0):
    """Nyström features and labels of the low-rank benchmark's rule (bench_lowrank.py)."""
    from indefsvm.approximation.nystrom import IndefiniteNystroem

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 20))
    noise = 0.3 * rng.normal(size=n)
    f = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + (X[:, 3] ** 2 - 1) / 2 + 0.3 * X[:, 4] + noise
    y = np.where(f > 0, 1.0, -1.0)
    dtype = "float32" if n >= 1_000_000 else "float64"
    nys = IndefiniteNystroem(
        "sigmoid", gamma=0.05, coef0=-1.0, n_components=m, random_state=seed, dtype=dtype
    )
    Phi = nys.fit_transform(X)
    return Phi, nys.signature_, y


def candidates(form: str, n: int) -> list[str]:
    if form == "dense":
        return ["pg", "accpm", *(["siqclp"] if n <= 1000 else [])]
    return ["pg", "lowrank_newton", *(["accpm"] if n <= min(DENSE_LIMIT, 2000) else [])]


def run_once(make, solver: str, tol: float, max_time: float) -> tuple[float, str, bool]:
    """Time of one solve as a user waits for it (the problem built, then solved)."""
    from sklearn.exceptions import ConvergenceWarning

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        problem = make()
        result = solve_problem(problem, method=solver, tol=tol, max_time=max_time)
    status = f"{result.method}:{result.status}"
    return time.perf_counter() - t0, status, result.status == "converged"


#: Short solves are timed up to this many times (median), while their total stays below
#: ``REPEAT_BUDGET`` seconds.
REPEATS, REPEAT_BUDGET = 5, 2.0


def time_solvers(
    make, solvers: list[str], tol: float, max_time: float
) -> dict[str, tuple[float, str, bool]]:
    """Median time, status and certification of each solver on one grid point.

    The solvers are timed round-robin, in a rotated order each round, so that a slow phase of
    the machine (another process, a frequency change) or an after-effect of one solver (a
    thread pool left warm or cold) falls on all of them alike rather than on whichever ran
    its repeats then: a ratio of medians taken back to back read 1.38 for ``auto`` running
    the very solver it was compared with.
    """
    times: dict[str, list[float]] = {s: [] for s in solvers}
    last: dict[str, tuple[str, bool]] = {}
    for round_ in range(REPEATS):
        active = [s for s in solvers if not times[s] or sum(times[s]) <= REPEAT_BUDGET]
        if round_ and not active:
            break
        shift = round_ % max(len(active), 1)
        for solver in active[shift:] + active[:shift]:
            elapsed, status, certified = run_once(make, solver, tol, max_time)
            times[solver].append(elapsed)
            last[solver] = (status, certified)
    return {s: (float(np.median(times[s])), *last[s]) for s in solvers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dense-n", type=int, nargs="*", default=[50, 200, 1000, 3000])
    parser.add_argument("--factor-n", type=int, nargs="*", default=[300, 3000, 30_000, 100_000])
    parser.add_argument("--big-n", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--m", type=int, default=100)
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--big-tol", type=float, default=1e-4)
    parser.add_argument("--max-time", type=float, default=60.0)
    parser.add_argument("--corners", action="store_true")
    parser.add_argument("--kinds", nargs="*", choices=KINDS, default=["svc"])
    parser.add_argument(
        "--full-max-n", type=int, default=30_000, help="larger n: the base point only"
    )
    parser.add_argument("--quick", action="store_true", help="small smoke grid (CI-sized)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.dense_n, args.factor_n, args.big_n, args.max_time = [40], [300], [], 10.0

    done: set[tuple] = set()
    rows: list[dict] = []
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if args.resume and args.out.exists():
            with args.out.open() as fh:
                rows = list(csv.DictReader(fh))
            for r in rows:
                r["kind"] = r.get("kind") or "svc"
            done = {
                (r["kind"], r["form"], r["n"], r["scale"], r["rho"], r["C"], r["solver"])
                for r in rows
            }
        elif not args.out.exists() or not args.resume:
            with args.out.open("w", newline="") as fh:
                csv.DictWriter(fh, FIELDS).writeheader()

    # One-off costs (imports, compilation) are not charged to the first solver timed.
    K, y = sigmoid_kernel_problem(60, seed=1)
    for solver in ("pg", "accpm"):
        run_once(lambda: make_problem("svc", K, y), solver, 1e-4, 10.0)
    Phi, signature, y = factor_data(200, 20)
    factor = LowRankKernel(Phi, signature)
    run_once(lambda: make_problem("svc", factor, y), "lowrank_newton", 1e-4, 10.0)

    print(machine_line())
    print(load_line())
    plan = [("dense", n, args.tol) for n in args.dense_n]
    plan += [("factor", n, args.tol) for n in args.factor_n]
    plan += [("factor", n, args.big_tol) for n in args.big_n]
    plan = [(kind, *p) for kind in args.kinds for p in plan]
    first = {"dense": min(args.dense_n, default=None), "factor": min(args.factor_n, default=None)}
    for kind, form, n, tol in plan:
        build = problem_maker(kind, n)
        if form == "dense":
            K0, y = sigmoid_kernel_problem(n, seed=0)
        else:
            Phi, signature, y = factor_data(n, args.m)
        big = n >= 1_000_000
        base_only = n > args.full_max_n
        points = (
            [(1.0, 1.0, 1.0)] if base_only else base_points(args.corners and n == first[form], kind)
        )
        for scale, rho, C in points:
            if form == "dense":
                data = K0 * scale

                def make(data=data, y=y, rho=rho, C=C, build=build):
                    return build(data, y, rho, C)
            else:
                feats = Phi * np.asarray(np.sqrt(scale), dtype=Phi.dtype)

                def make(feats=feats, s=signature, y=y, rho=rho, C=C, build=build):
                    return build(LowRankKernel(feats, s), y, rho, C)

            cap = args.max_time * (4 if big else 1)
            point = (kind, form, str(n), repr(scale), repr(rho), repr(C))
            todo = [s for s in [*candidates(form, n), "auto"] if (*point, s) not in done]
            timed = time_solvers(make, todo, tol, cap) if todo else {}
            for solver, (elapsed, status, certified) in timed.items():
                m = Phi.shape[1] if form == "factor" else ""
                values = [form, n, m, repr(scale), repr(rho), repr(C), tol, solver]
                values += [f"{elapsed:.4f}", status, certified, kind]
                row = dict(zip(FIELDS, values, strict=True))
                rows.append(row)
                if args.out is not None:
                    with args.out.open("a", newline="") as fh:
                        csv.DictWriter(fh, FIELDS).writerow(row)
                print(f"{kind} {form} n={n} scale={scale:g} rho={rho:g} C={C:g} {solver}: "
                      f"{elapsed:.2f}s {status}", flush=True)  # fmt: skip
    print(load_line())
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    """One line per grid point: each solver's time (* = uncertified), auto's choice and ratio."""
    points: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        key = (
            r.get("kind") or "svc",
            r["form"],
            int(r["n"]),
            float(r["scale"]),
            float(r["rho"]),
            float(r["C"]),
        )
        points.setdefault(key, {})[r["solver"]] = r
    names = ["pg", "accpm", "siqclp", "lowrank_newton"]
    print(
        markdown_header(["kind", "form", "n", "scale", "rho", "C", *names, "auto", "ratio", "ok"])
    )
    failures = 0
    for key, by in points.items():
        cells = []
        best = np.inf
        any_certified = False
        for name in names:
            r = by.get(name)
            if r is None:
                cells.append("")
                continue
            cert = str(r["certified"]) == "True"
            t = float(r["time"])
            cells.append(f"{t:.2f}" + ("" if cert else "*"))
            if cert:
                best, any_certified = min(best, t), True
        a = by.get("auto")
        if a is None:
            continue
        a_cert = str(a["certified"]) == "True"
        ratio = float(a["time"]) / best if any_certified else float("nan")
        ok = (a_cert or not any_certified) and not (ratio > 1.2)
        failures += not ok
        chosen = a["status"].split(":")[0]
        head = [key[0], key[1], key[2], f"{key[3]:g}", f"{key[4]:g}", f"{key[5]:g}"]
        print(markdown_row([*head, *cells,
                            f"{float(a['time']):.2f}{'' if a_cert else '*'} ({chosen})",
                            f"{ratio:.2f}", "yes" if ok else "**no**"]))  # fmt: skip
    print(f"\n{len(points)} points, {failures} outside the policy's target (ratio > 1.2 or "
          "uncertified where a named solver certified); * = not certified at the cap.")  # fmt: skip


if __name__ == "__main__":
    main()
