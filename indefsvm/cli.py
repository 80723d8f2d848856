"""Command-line interface: ``indefsvm solve KERNEL LABELS [options] [--plot gap.png]`` and
``indefsvm compare KERNEL LABELS --methods pg accpm siqclp [--plot gaps.png]``.

Matrices are read from ``.npy``, ``.csv`` (comma-separated) or ``.txt`` (whitespace-separated)
files; labels likewise (one per line, any two distinct values).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from indefsvm.api import METHODS, solve
from indefsvm.problems import PROBLEMS


def load_array(path: str, *, what: str, labels: bool = False) -> np.ndarray:
    """Load a matrix or vector from ``.npy``, ``.csv`` or ``.txt``."""
    p = Path(path)
    if not p.exists():
        raise SystemExit(f"error: {what} file {path!r} does not exist.")
    suffix = p.suffix.lower()
    try:
        if suffix == ".npy":
            return np.load(p, allow_pickle=False)
        if suffix in (".csv", ".txt", ".tsv", ".dat"):
            delimiter = "," if suffix == ".csv" else ("\t" if suffix == ".tsv" else None)
            if labels:
                return np.loadtxt(p, delimiter=delimiter, dtype=str, ndmin=1)
            return np.loadtxt(p, delimiter=delimiter, dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise SystemExit(f"error: could not read {what} file {path!r}: {exc}") from exc
    raise SystemExit(f"error: {what} file {path!r}: expected .npy, .csv, .tsv or .txt.")


def _labels_as_numbers_if_possible(y: np.ndarray) -> np.ndarray:
    if y.dtype.kind in "US":
        try:
            return y.astype(np.float64)
        except ValueError:
            return y
    return y


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="indefsvm", description="Learning with indefinite kernels (Luss & d'Aspremont SVM)."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser(
        "solve",
        help="solve the indefinite SVM (paper 004, eq. 7) on a precomputed kernel",
        description="Solve max_alpha min_K>=0 of the indefinite SVM and write the result as JSON.",
    )
    s.add_argument("kernel", help="n x n kernel matrix (.npy, .csv or .txt)")
    s.add_argument(
        "labels",
        nargs="?",
        default=None,
        help="n labels (two classes) or regression targets; omit for --problem oneclass",
    )
    s.add_argument(
        "--problem",
        choices=PROBLEMS,
        default="svc",
        help="svc (eq. 7), svr (eq. 17), oneclass (eq. 20), perturb (eq. 22)",
    )
    s.add_argument("--epsilon", type=float, default=0.1, help="SVR tube width (--problem svr)")
    s.add_argument("--nu", type=float, default=0.5, help="one-class nu (--problem oneclass)")
    s.add_argument(
        "--rho-file",
        default=None,
        help="per-point penalties (vector rho, Theorem 3) instead of --rho",
    )
    s.add_argument("--C", type=float, default=1.0, help="misclassification penalty (default 1)")
    s.add_argument("--rho", type=float, default=1.0, help="kernel penalty rho (default 1)")
    s.add_argument("--method", choices=METHODS, default="pg", help="solver (default pg)")
    s.add_argument(
        "--step",
        choices=["accelerated", "paper"],
        default="accelerated",
        help="projected-gradient step policy (default accelerated)",
    )
    s.add_argument("--step-size", type=float, default=5.0, help="t of the paper's step t/k")
    s.add_argument(
        "--smoothing", type=float, default=0.0, help="paper's Moreau-Yosida eps (with --step paper)"
    )
    s.add_argument("--tol", type=float, default=1e-6, help="certified relative gap (default 1e-6)")
    s.add_argument("--max-iter", type=int, default=10000, help="iteration limit (default 10000)")
    s.add_argument("--max-time", type=float, default=None, help="wall-time limit in seconds")
    s.add_argument(
        "--class-weight",
        default=None,
        help="None, 'balanced' or 'paper' (C*n_pos/n_neg on the negative class)",
    )
    s.add_argument(
        "--libsvm-every",
        type=int,
        default=None,
        help="LIBSVM duality-gap check every N iterations (and at the end)",
    )
    s.add_argument("--symmetrize", action="store_true", help="use (K + K')/2 if K is not symmetric")
    s.add_argument("--every", type=int, default=50, help="print a progress line every N iterations")
    s.add_argument("--quiet", action="store_true", help="no progress lines")
    s.add_argument("--out", default=None, help="write the result as JSON to this file")
    s.add_argument("--save-kernel", default=None, help="write the proxy kernel K* (.npy)")
    s.add_argument(
        "--plot", default=None, help="draw the gap against iteration and time to this image file"
    )

    c = sub.add_parser(
        "compare",
        help="run several solvers on the same problem and draw their convergence together",
        description=(
            "Solve one problem with several methods (default pg, accpm, siqclp), print a summary "
            "table and optionally draw the certified gap against iteration and time."
        ),
    )
    c.add_argument("kernel", help="n x n kernel matrix (.npy, .csv or .txt)")
    c.add_argument("labels", nargs="?", default=None, help="labels/targets (omit for oneclass)")
    c.add_argument("--problem", choices=PROBLEMS, default="svc")
    c.add_argument("--epsilon", type=float, default=0.1, help="SVR tube width")
    c.add_argument("--nu", type=float, default=0.5, help="one-class nu")
    c.add_argument("--C", type=float, default=1.0)
    c.add_argument("--rho", type=float, default=1.0)
    c.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    c.add_argument("--tol", type=float, default=1e-6)
    c.add_argument("--max-iter", type=int, default=10000)
    c.add_argument("--max-time", type=float, default=None, help="wall-time limit per method")
    c.add_argument("--libsvm-every", type=int, default=None)
    c.add_argument("--symmetrize", action="store_true")
    c.add_argument("--plot", default=None, help="image file for the convergence figure")
    c.add_argument("--quiet", action="store_true")
    from indefsvm.studies.cli import add_study_parser  # studies (issue 13)

    add_study_parser(sub)
    return parser


def _compare(args: argparse.Namespace) -> int:
    K = load_array(args.kernel, what="kernel")
    y = None
    if args.labels is not None:
        y = _labels_as_numbers_if_possible(load_array(args.labels, what="labels", labels=True))
    elif args.problem != "oneclass":
        raise SystemExit(f"error: --problem {args.problem} needs a LABELS file.")
    extra: dict = {}
    if args.problem == "svr":
        extra["epsilon"] = args.epsilon
    if args.problem == "oneclass":
        extra["nu"] = args.nu
    results = {}
    for method in args.methods:
        try:
            results[method] = solve(
                K,
                y,
                C=args.C,
                rho=args.rho,
                problem=args.problem,
                method=method,
                tol=args.tol,
                max_iter=args.max_iter,
                max_time=args.max_time,
                libsvm_every=args.libsvm_every,
                symmetrize=args.symmetrize,
                verbose=False if args.quiet else 50,
                **extra,
            )
        except (ValueError, TypeError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    print(
        f"{'method':>8} {'status':>10} {'objective':>18} {'upper bound':>18} {'rel gap':>10} "
        f"{'iterations':>10} {'time (s)':>9}"
    )
    for method, res in results.items():
        print(
            f"{method:>8} {res.status:>10} {res.objective:18.10g} {res.upper_bound:18.10g} "
            f"{res.relative_gap:10.3g} {res.n_iter:10d} {res.time:9.3f}"
        )
    if args.plot:
        import matplotlib.pyplot as plt

        from indefsvm.plotting import plot_convergence

        fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
        plot_convergence(results, x="iteration", ax=axes[0])
        plot_convergence(results, x="time", ax=axes[1])
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        plt.close(fig)
        print(f"wrote {args.plot}")
    return 0 if all(r.converged for r in results.values()) else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``indefsvm`` command."""
    args = build_parser().parse_args(argv)
    if args.command == "study":
        return args.study_handler(args)
    if args.command == "solve":
        if args.method != "pg" and (args.step != "accelerated" or args.smoothing):
            raise SystemExit("error: --step/--smoothing apply to --method pg only.")
        options: dict = {"step": args.step} if args.method == "pg" else {}
        K = load_array(args.kernel, what="kernel")
        y = None
        if args.labels is not None:
            y = _labels_as_numbers_if_possible(load_array(args.labels, what="labels", labels=True))
        elif args.problem != "oneclass":
            raise SystemExit(f"error: --problem {args.problem} needs a LABELS file.")
        rho = args.rho
        if args.rho_file is not None:
            rho = load_array(args.rho_file, what="rho").ravel()
        if args.problem == "svr":
            options["epsilon"] = args.epsilon
        if args.problem == "oneclass":
            options["nu"] = args.nu
        class_weight = None if args.class_weight in (None, "None", "none") else args.class_weight
        if args.step == "paper":
            options.update(step_size=args.step_size, smoothing=args.smoothing)
        elif args.smoothing:
            raise SystemExit("error: --smoothing is the paper's approximation; use --step paper.")
        try:
            result = solve(
                K,
                y,
                C=args.C,
                rho=rho,
                problem=args.problem,
                method=args.method,
                tol=args.tol,
                max_iter=args.max_iter,
                max_time=args.max_time,
                class_weight=class_weight,
                libsvm_every=args.libsvm_every,
                symmetrize=args.symmetrize,
                verbose=False if args.quiet else args.every,
                **options,
            )
        except (ValueError, TypeError, NotImplementedError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(result)
        if args.out:
            result.to_json(args.out)
            print(f"wrote {args.out}")
        if args.save_kernel:
            np.save(args.save_kernel, result.kernel)
            print(f"wrote {args.save_kernel}")
        if args.plot:
            import matplotlib.pyplot as plt

            from indefsvm.plotting import plot_solve

            plt.close(plot_solve(result, args.plot))
            print(f"wrote {args.plot}")
        return 0 if result.converged else 1
    if args.command == "compare":
        return _compare(args)
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["build_parser", "load_array", "main"]
