"""Command-line interface.

``indefsvm solve KERNEL [LABELS] [options]`` solves one problem and writes the result;
``indefsvm compare KERNEL [LABELS] --methods pg accpm siqclp [--plot gaps.png]`` runs several
solvers on it; ``indefsvm fit DATA LABELS --model M.skops [--estimator NAME] [--set C=1 ...]``
trains any predictor of indefsvm or indefsvm.krein and saves it in the skops format
(:mod:`indefsvm.persistence`: loading it cannot run code), ``indefsvm predict M.skops DATA
[--out predictions.txt]`` applies it (a pickle/joblib model only with ``--allow-pickle``);
``indefsvm example-data DIR`` writes an example ``kernel.npy``/``labels.txt`` pair.
Matrices are read from ``.npy``, ``.csv`` (comma-separated), ``.tsv`` or ``.txt``
(whitespace-separated) files; labels likewise (one per line, any two distinct values; integers
stay integers).

Exit codes: one table for every command, :data:`indefsvm.cli.common.EXIT_CODES` (also in
``indefsvm --help`` and docs/cli.md): 0 success, 1 finished without certified convergence (the
result is still written), 2 bad input or usage, 3 internal error, 130 interrupted.

Heavy modules (scikit-learn, cvxpy) are imported only when a command needs them, so ``--help``
and ``--version`` return at once. Progress lines go through :mod:`logging` to stderr, results and
summaries to stdout; ``-q`` silences both (the exit code still tells the outcome; ``predict``
without ``--out`` still prints its predictions, which are its output), ``-v`` adds debug output.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from indefsvm.cli.common import (
    EPILOG,
    EXIT_CODES,
    ExitCode,
    InputError,
    configure_logging,
    run_command,
)

# The registries (light modules: solvers and scikit-learn are imported on first use).
from indefsvm.proxy.api import FACTOR_ONLY, PRESETS, SOLVERS
from indefsvm.proxy.problems import PROBLEM_TYPES
from indefsvm.utils.progress import progress_wanted

#: A finished run without certified convergence (its result is still written).
NOT_CONVERGED = ExitCode.INCOMPLETE

logger = logging.getLogger("indefsvm.cli")


# -- input --------------------------------------------------------------------------------------
def load_array(path: str, *, what: str, labels: bool = False) -> np.ndarray:
    """Load a matrix or vector from ``.npy``, ``.csv``, ``.tsv`` or ``.txt``.

    :func:`indefsvm.utils.io.read_array` (``labels=True``: :func:`~indefsvm.utils.io.read_labels`);
    a file that cannot be read is bad input (exit code 2).
    """
    from indefsvm.utils.io import ReadError, read_array, read_labels

    try:
        return read_labels(path, what=what) if labels else read_array(path, what=what)
    except ReadError as exc:
        raise InputError(str(exc)) from exc


def _check_outputs(args: argparse.Namespace) -> None:
    """Check every output path before any computation, so a long run is never lost."""
    from indefsvm.utils.io import check_writable

    for option, what in (("out", "--out"), ("save_kernel", "--save-kernel"), ("plot", "--plot")):
        path = getattr(args, option, None)
        if path is None:
            continue
        try:
            check_writable(path, what=what)
        except ValueError as exc:
            raise InputError(str(exc)) from exc
    plot = getattr(args, "plot", None)
    if plot is not None:
        suffix = Path(plot).suffix.lower().lstrip(".")
        if suffix not in ("png", "pdf", "svg", "jpg", "jpeg", "eps", "ps", "tif", "tiff"):
            raise InputError(
                f"--plot {plot!r}: expected an image file name ending in .png, .pdf or .svg."
            )
    save_kernel = getattr(args, "save_kernel", None)
    if save_kernel is not None and Path(save_kernel).suffix.lower() != ".npy":
        raise InputError(
            f"--save-kernel {save_kernel!r}: the kernel is written in NumPy's .npy format; "
            "give a file name ending in .npy."
        )


def _say(args: argparse.Namespace, text: Any) -> None:
    """Print a summary line on stdout unless ``-q`` (the exit code still tells the outcome)."""
    if not args.quiet:
        print(text)


def _write(path: str | Path, writer: Any, *, binary: bool = False) -> None:
    """Write an output file atomically; a file-system refusal is bad input, not a bug."""
    from indefsvm.utils.io import atomic_write

    try:
        atomic_write(path, writer, binary=binary)
    except OSError as exc:
        raise InputError(f"could not write {str(path)!r}: {exc}") from exc


# -- arguments shared by the sub-commands ---------------------------------------------------------
def _add_problem_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("kernel", help="n x n kernel matrix (.npy, .csv, .tsv or .txt)")
    p.add_argument(
        "labels",
        nargs="?",
        default=None,
        help="n labels (two classes) or regression targets; omit for --problem oneclass",
    )
    p.add_argument(
        "--problem",
        choices=tuple(PROBLEM_TYPES),
        default="svc",
        help="svc (eq. 7), svr (eq. 17), oneclass (eq. 20), perturb (eq. 22); default svc",
    )
    p.add_argument("--C", type=float, default=None, help="misclassification penalty (default 1)")
    p.add_argument("--rho", type=float, default=None, help="kernel penalty rho (default 1)")
    p.add_argument("--rho-file", default=None, help="per-point penalties (vector rho, Theorem 3)")
    p.add_argument("--epsilon", type=float, default=None, help="SVR tube width (svr; default 0.1)")
    p.add_argument("--nu", type=float, default=None, help="one-class nu (oneclass; default 0.5)")
    p.add_argument(
        "--class-weight",
        default=None,
        help="'balanced' or 'paper' (C*n_pos/n_neg on the negative class); svc/perturb only",
    )
    p.add_argument("--symmetrize", action="store_true", help="use (K + K')/2 if K is not symmetric")


def _add_solver_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tol",
        type=float,
        default=1e-6,
        help="certified gap relative to max(1, |f(alpha) - f(0)|), the part of the objective "
        "that depends on alpha (default 1e-6)",
    )
    p.add_argument("--max-iter", type=int, default=10000, help="iteration limit (default 10000)")
    p.add_argument("--max-time", type=float, default=None, help="wall-time limit in seconds")
    p.add_argument(
        "--libsvm-every",
        type=int,
        default=None,
        help="LIBSVM duality-gap check every N iterations (and at the end)",
    )


def _add_logging_arguments(p: argparse.ArgumentParser, *, iterations: bool = True) -> None:
    """``-q``, ``-v`` and, for the commands that run a solver (``iterations``), ``--every``."""
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress lines and no summary on stdout (the exit code tells the outcome)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="debug output and tracebacks")
    if iterations:
        p.add_argument("--every", type=int, default=50, help="a progress line every N iterations")


#: Each sub-command's (help, description).
_COMMAND_TEXTS: dict[str, tuple[str, str]] = {
    "solve": (
        "solve the indefinite SVM (paper 004, eq. 7) on a precomputed kernel",
        "Solve max_alpha min_K>=0 of the indefinite SVM and write the result as JSON.",
    ),
    "compare": (
        "run several solvers on the same problem and draw their convergence together",
        (
            "Solve one problem with several methods (default pg, accpm, siqclp), print a summary "
            "table and optionally draw the certified gap against iteration and time."
        ),
    ),
    "fit": (
        "train an estimator (indefsvm or indefsvm.krein) and save it to a model file",
        (
            "Train a scikit-learn style estimator on features (with --kernel NAME) or a "
            "precomputed n x n kernel (the default, --kernel precomputed) and save it in the "
            "skops format (.skops), which 'indefsvm predict' loads without running code."
        ),
    ),
    "predict": (
        "apply a model file written by 'fit' to new data",
        (
            "Predict with a model written by 'indefsvm fit'. DATA is the m x n test-vs-train "
            "kernel (precomputed models) or m x d features."
        ),
    ),
    "example-data": (
        "write an example kernel.npy and labels.txt (and a test kernel) to a directory",
        (
            "Write an indefinite sigmoid kernel on scikit-learn's digits 3 vs 5 (kernel.npy) and "
            "its labels (labels.txt), the input format of 'solve', 'compare' and 'fit'; and, from "
            "the digits that are left, up to 100 test points: their kernel rows against the "
            "training points (test_kernel.npy, the input of 'predict') and their labels "
            "(test_labels.txt)."
        ),
    ),
}


def _add_command(sub: Any, name: str) -> argparse.ArgumentParser:
    """A sub-command whose ``--help`` ends with the exit-code table."""
    help_text, description = _COMMAND_TEXTS[name]
    return sub.add_parser(
        name,
        help=help_text,
        description=description,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``indefsvm`` command (choices from the registries)."""
    parser = argparse.ArgumentParser(
        prog="indefsvm",
        description="Learning with indefinite kernels (Luss & d'Aspremont SVM, Krein spaces).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"indefsvm {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    s = _add_command(sub, "solve")
    _add_problem_arguments(s)
    s.add_argument(
        "--method",
        choices=("auto", *SOLVERS),
        default="auto",
        help="solver (default auto: chosen from the problem's form, docs/solvers.md)",
    )
    s.add_argument(
        "--preset",
        choices=tuple(PRESETS),
        default=None,
        help="'paper': the paper's algorithm for --method (Algorithm 1, 2 or 3 as published)",
    )
    s.add_argument(
        "--step",
        choices=["accelerated", "paper"],
        default=None,
        help="projected-gradient step policy (--method pg; default accelerated)",
    )
    s.add_argument("--step-size", type=float, default=None, help="t of the paper's step t/k")
    s.add_argument(
        "--smoothing", type=float, default=None, help="paper's Moreau-Yosida eps (--step paper)"
    )
    _add_solver_arguments(s)
    _add_logging_arguments(s)
    s.add_argument("--out", default=None, help="write the result as JSON to this file")
    s.add_argument("--save-kernel", default=None, help="write the proxy kernel K* to this .npy")
    s.add_argument("--plot", default=None, help="draw the gap against iteration and time (.png)")

    c = _add_command(sub, "compare")
    _add_problem_arguments(c)
    # The CLI reads dense kernels: solvers of factored kernels only are not run by default.
    dense_methods = [m for m in SOLVERS if m not in FACTOR_ONLY]
    c.add_argument("--methods", nargs="+", choices=tuple(SOLVERS), default=dense_methods)
    _add_solver_arguments(c)
    _add_logging_arguments(c)
    c.add_argument("--plot", default=None, help="image file for the convergence figure")

    f = _add_command(sub, "fit")
    f.add_argument("data", help="n x n kernel (precomputed) or n x d features (.npy/.csv/.txt)")
    f.add_argument("labels", nargs="?", default=None, help="labels/targets (omit if unsupervised)")
    f.add_argument("--model", required=True, help="model file to write (.skops)")
    f.add_argument(
        "--estimator",
        default="IndefiniteSVC",
        help="predictor class exported by indefsvm or indefsvm.krein (default IndefiniteSVC)",
    )
    f.add_argument(
        "--kernel",
        default="precomputed",
        help="'precomputed' (DATA is a kernel) or a kernel name of indefsvm.kernels",
    )
    f.add_argument(
        "--set",
        dest="params",
        action="extend",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="estimator parameters, e.g. --set C=10 rho=0.5 (repeatable)",
    )
    _add_logging_arguments(f, iterations=False)

    pr = _add_command(sub, "predict")
    pr.add_argument("model", help="model file written by 'indefsvm fit' (.skops)")
    pr.add_argument("data", help="m x n test-vs-train kernel or m x d features")
    pr.add_argument("--out", default=None, help="write predictions here (.txt, .csv or .npy)")
    for flag, help_text in (
        ("--decision", "write decision_function values instead of predicted labels"),
        (
            "--allow-pickle",
            "also load a pickle/joblib model file; loading a pickle can run arbitrary code, so "
            "use this only for files whose origin you trust",
        ),
    ):
        pr.add_argument(flag, action="store_true", help=help_text)
    _add_logging_arguments(pr, iterations=False)

    e = _add_command(sub, "example-data")
    e.add_argument(
        "directory", help="directory to write kernel.npy and labels.txt into (created if missing)"
    )
    e.add_argument("--n", type=int, default=200, help="number of samples, 4 to 365 (default 200)")
    _add_logging_arguments(e, iterations=False)

    from indefsvm.cli.study import add_study_parser  # comparative studies (docs/studies.md)

    add_study_parser(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("indefsvm")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


# -- commands -------------------------------------------------------------------------------------
def _load_problem_inputs(args: argparse.Namespace) -> tuple[np.ndarray, Any, dict[str, Any]]:
    K = load_array(args.kernel, what="kernel")
    y = None
    if args.labels is not None:
        y = load_array(args.labels, what="labels", labels=True)
    elif args.problem != "oneclass":
        raise InputError(f"--problem {args.problem} needs a LABELS file.")
    rho: Any = args.rho
    if args.rho_file is not None:
        if args.rho is not None:
            raise InputError("give either --rho or --rho-file, not both.")
        rho = load_array(args.rho_file, what="rho").ravel()
    class_weight = None if args.class_weight in (None, "None", "none") else args.class_weight
    options = {
        "C": args.C,
        "rho": rho,
        "epsilon": args.epsilon,
        "nu": args.nu,
        "class_weight": class_weight,
    }
    return K, y, options


def _build_problem(args: argparse.Namespace) -> Any:
    from indefsvm.proxy.problems import make_problem

    K, y, options = _load_problem_inputs(args)
    try:
        return make_problem(args.problem, K, y, symmetrize=args.symmetrize, **options)
    except (ValueError, TypeError) as exc:
        raise InputError(str(exc)) from exc


def _solver_options(args: argparse.Namespace) -> dict[str, Any]:
    pg_only = {"step": args.step, "step_size": args.step_size, "smoothing": args.smoothing}
    given = {k: v for k, v in pg_only.items() if v is not None}
    if args.method not in ("pg", "auto") and given:
        raise InputError(
            f"--step/--step-size/--smoothing apply to --method pg only; got --method {args.method}."
        )
    paper = args.preset == "paper" and args.method in ("pg", "auto")
    step = given.get("step", "paper" if paper else "accelerated")
    if step != "paper" and ("step_size" in given or "smoothing" in given):
        raise InputError("--step-size and --smoothing are the paper's policy: add --step paper.")
    for name in ("step_size", "smoothing"):
        value = given.get(name)
        if value is not None and not (np.isfinite(value) and value >= 0):
            raise InputError(f"--{name.replace('_', '-')} must be a finite number >= 0.")
    return given


def _monitor_options(args: argparse.Namespace) -> dict[str, Any]:
    if not (np.isfinite(args.tol) and args.tol >= 0):
        raise InputError(f"--tol must be a finite number >= 0; got {args.tol}.")
    if args.max_iter < 1:
        raise InputError(f"--max-iter must be a positive integer; got {args.max_iter}.")
    if args.max_time is not None and not args.max_time > 0:
        raise InputError(f"--max-time must be > 0 seconds; got {args.max_time}.")
    if args.libsvm_every is not None and args.libsvm_every < 1:
        raise InputError(f"--libsvm-every must be a positive integer; got {args.libsvm_every}.")
    if args.every < 1:
        raise InputError(f"--every must be a positive integer; got {args.every}.")
    return {
        "tol": args.tol,
        "max_iter": args.max_iter,
        "max_time": args.max_time,
        "libsvm_every": args.libsvm_every,
        "verbose": False if args.quiet else args.every,
        # A bar with time left when a person watches; log lines otherwise.
        "progress": (not args.quiet) and progress_wanted(None),
    }


def _solve(args: argparse.Namespace) -> int:
    _check_outputs(args)
    solver_options = _solver_options(args)
    monitor_options = _monitor_options(args)
    problem = _build_problem(args)

    from indefsvm.proxy.api import solve_problem

    result = solve_problem(
        problem, method=args.method, preset=args.preset, options=solver_options, **monitor_options
    )
    _say(args, result)
    if args.out:
        try:
            result.to_json(args.out)
        except OSError as exc:
            raise InputError(f"could not write {args.out!r}: {exc}") from exc
        _say(args, f"wrote {args.out}")
    if args.save_kernel:
        kernel = result.kernel
        _write(args.save_kernel, lambda fh: np.save(fh, kernel), binary=True)
        _say(args, f"wrote {args.save_kernel}")
    if args.plot:
        import matplotlib.pyplot as plt

        from indefsvm.plotting import plot_solve

        plt.close(plot_solve(result, args.plot))
        _say(args, f"wrote {args.plot}")
    return ExitCode.OK if result.converged else NOT_CONVERGED


def _compare(args: argparse.Namespace) -> int:
    repeated = sorted({m for m in args.methods if args.methods.count(m) > 1})
    if repeated:
        raise InputError(
            f"--methods names {', '.join(repeated)} more than once; give each method once."
        )
    _check_outputs(args)
    monitor_options = _monitor_options(args)
    problem = _build_problem(args)

    import warnings

    from indefsvm.proxy.api import solve_problem

    # Warm-up: one iteration of each method, untimed, so that one-off costs of the process (the
    # problem's eigendecomposition, compiled kernels loaded from Numba's cache, imports) are not
    # charged to whichever method runs first (0.95 s of pg's 1.08 s on the example data).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in args.methods:
            solve_problem(problem, method=method, max_iter=1)
    results = {}
    for method in args.methods:
        results[method] = solve_problem(problem, method=method, **monitor_options)
    _say(
        args,
        f"{'method':>8} {'status':>16} {'objective':>18} {'upper bound':>18} {'rel gap':>10} "
        f"{'iterations':>10} {'time (s)':>9}",
    )
    for method, res in results.items():
        _say(
            args,
            f"{method:>8} {res.status:>16} {res.objective:18.10g} {res.upper_bound:18.10g} "
            f"{res.relative_gap:10.3g} {res.n_iter:10d} {res.time:9.3f}",
        )
    if args.plot:
        import matplotlib.pyplot as plt

        from indefsvm.plotting import plot_convergence, save_figure

        fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
        plot_convergence(results, x="iteration", ax=axes[0])
        plot_convergence(results, x="time", ax=axes[1])
        fig.tight_layout()
        save_figure(fig, args.plot)
        plt.close(fig)
        _say(args, f"wrote {args.plot}")
    return ExitCode.OK if all(r.converged for r in results.values()) else NOT_CONVERGED


def _example_data(args: argparse.Namespace) -> int:
    from indefsvm.datasets import load_digits_pair
    from indefsvm.kernels import sigmoid_kernel
    from indefsvm.utils.io import check_writable

    directory = Path(args.directory)
    if directory.exists() and not directory.is_dir():
        raise InputError(f"{str(directory)!r} exists and is not a directory.")
    if args.n < 4:
        raise InputError(f"--n must be at least 4; got {args.n}.")
    digits = load_digits_pair((3, 5))
    available = digits.data.shape[0]
    if args.n > available:
        raise InputError(
            f"--n {args.n}: the example data (scikit-learn's digits 3 vs 5) has {available} "
            f"points; choose --n between 4 and {available}."
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"could not create directory {str(directory)!r}: {exc}") from exc
    n_test = min(100, available - args.n)
    names = ["kernel.npy", "labels.txt"] + (["test_kernel.npy", "test_labels.txt"] * (n_test > 0))
    for name in names:
        try:
            check_writable(directory / name, what="example-data")
        except ValueError as exc:
            raise InputError(str(exc)) from exc
    X, y = digits.data[: args.n], digits.digit[: args.n]
    gamma = 1.0 / (X.shape[1] * X.var())

    def write(prefix: str, K: np.ndarray, labels: np.ndarray, what: str) -> None:
        kernel, label_file = directory / f"{prefix}kernel.npy", directory / f"{prefix}labels.txt"
        _write(kernel, lambda fh: np.save(fh, K), binary=True)
        _write(label_file, lambda fh: fh.write("\n".join(map(str, labels)) + "\n"))
        _say(args, f"wrote {kernel} ({K.shape[0]} x {K.shape[1]}{what}) and {label_file}")

    write("", sigmoid_kernel(X, gamma=gamma, coef0=-1.0), y, "")
    if n_test > 0:
        Xt = digits.data[args.n : args.n + n_test]
        Kt = sigmoid_kernel(Xt, X, gamma=gamma, coef0=-1.0)
        write("test_", Kt, digits.digit[args.n : args.n + n_test], ", test vs training points")
    else:
        _say(args, f"no digits are left for a test set (--n {args.n} uses all {available})")
    return ExitCode.OK


def _estimator_class(name: str) -> type:
    import indefsvm
    import indefsvm.krein

    # Predictors only: 'indefsvm predict' applies the model (a transformer such as
    # IndefiniteNystroem has no predict).
    names = sorted(
        n
        for module in (indefsvm, indefsvm.krein)
        for n in module.__all__
        if isinstance(getattr(module, n), type) and hasattr(getattr(module, n), "predict")
    )
    for module in (indefsvm, indefsvm.krein):
        if name in module.__all__:
            cls = getattr(module, name)
            if isinstance(cls, type) and hasattr(cls, "predict"):
                return cls
            if isinstance(cls, type) and hasattr(cls, "transform"):
                raise InputError(
                    f"--estimator {name} is a transformer (fit/transform, no predict), which "
                    f"'indefsvm predict' could not apply; choose a predictor from {names}."
                )
    raise InputError(f"--estimator {name!r} is not an estimator of indefsvm; choose from {names}.")


def _finite(X: np.ndarray, path: str) -> np.ndarray:
    """Refuse NaN or inf in a numeric data file with what to do (a kernel or features have no
    missing values to impute)."""
    if X.dtype.kind in "fc" and not np.all(np.isfinite(X)):
        bad = int(X.size - np.count_nonzero(np.isfinite(X)))
        raise InputError(
            f"{path!r} contains {bad} NaN or infinite entries; a kernel (or feature) matrix "
            "must be finite. Recompute it, or drop the rows and columns of the affected points."
        )
    return X


def _parse_params(items: Sequence[str]) -> dict[str, Any]:
    import ast

    params: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.isidentifier():
            raise InputError(f"--set {item!r}: expected NAME=VALUE, e.g. --set C=10.")
        try:
            params[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            params[name] = text  # a bare word such as kmeans++ or balanced
    return params


_PICKLE_SUFFIXES = (".joblib", ".pkl", ".pickle", ".jbl")


def _fit(args: argparse.Namespace) -> int:
    import warnings

    from indefsvm.persistence import save_model
    from indefsvm.utils.io import check_writable

    if Path(args.model).suffix.lower() in _PICKLE_SUFFIXES:
        raise InputError(
            f"--model {args.model!r}: 'indefsvm fit' writes the skops format, which is safe to "
            "load (a pickle/joblib file can run code when loaded); name the file *.skops."
        )
    try:
        check_writable(args.model, what="--model")
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    cls = _estimator_class(args.estimator)
    params = _parse_params(args.params)
    params.setdefault("kernel", args.kernel)
    valid = sorted(cls().get_params(deep=False))
    unknown = sorted(set(params) - set(valid))
    if unknown:
        verb = "is not a parameter" if len(unknown) == 1 else "are not parameters"
        raise InputError(
            f"--set: {', '.join(unknown)} {verb} of {cls.__name__}; its parameters are "
            f"{', '.join(valid)}."
        )
    estimator = cls(**params)
    X = _finite(load_array(args.data, what="data"), args.data)
    y = None if args.labels is None else load_array(args.labels, what="labels", labels=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            estimator.fit(X, y)
        except (ValueError, TypeError) as exc:
            raise InputError(str(exc)) from exc
    converged = True
    for w in caught:
        logger.warning("%s: %s", w.category.__name__, w.message)
        if w.category.__name__ == "ConvergenceWarning":
            converged = False
    try:
        save_model(estimator, args.model)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    except OSError as exc:
        raise InputError(f"could not write {args.model!r}: {exc}") from exc
    _say(args, f"wrote {args.model} ({args.estimator}, {X.shape[0]} training points)")
    return ExitCode.OK if converged else NOT_CONVERGED


def _predict(args: argparse.Namespace) -> int:
    from indefsvm.persistence import load_model
    from indefsvm.utils.io import check_writable

    if args.out is not None:
        try:
            check_writable(args.out, what="--out")
        except ValueError as exc:
            raise InputError(str(exc)) from exc
    try:
        estimator = load_model(args.model, allow_pickle=args.allow_pickle)
    except ValueError as exc:
        raise InputError(str(exc)) from exc
    name = type(estimator).__name__
    if not hasattr(estimator, "predict"):
        raise InputError(
            f"model {args.model!r} holds {name}, a transformer (no predict); 'indefsvm "
            "predict' applies predictors (IndefiniteSVC, KreinRegressor, ...)."
        )
    if args.decision and not hasattr(estimator, "decision_function"):
        raise InputError(
            f"--decision: model {args.model!r} holds {name}, which has no decision_function "
            "(a regressor's predictions are its decision values); drop --decision."
        )
    X = _finite(load_array(args.data, what="data"), args.data)
    try:
        values = estimator.decision_function(X) if args.decision else estimator.predict(X)
    except (ValueError, TypeError) as exc:
        raise InputError(str(exc)) from exc
    values = np.asarray(values)
    if args.out is None:
        for v in values:
            print(v)
        return ExitCode.OK
    suffix = Path(args.out).suffix.lower()
    if suffix == ".npy":
        _write(args.out, lambda fh: np.save(fh, values), binary=True)
    else:
        sep = "," if suffix == ".csv" else " "
        lines = [sep.join(map(str, np.atleast_1d(v))) for v in values]
        _write(args.out, lambda fh: fh.write("\n".join(lines) + "\n"))
    _say(args, f"wrote {args.out} ({values.shape[0]} predictions)")
    return ExitCode.OK


_COMMANDS = {
    "solve": _solve,
    "compare": _compare,
    "fit": _fit,
    "predict": _predict,
    "example-data": _example_data,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``indefsvm`` command; returns the exit code (see module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "study":
        return args.study_handler(args)
    configure_logging(args.verbose, args.quiet)
    return run_command(_COMMANDS[args.command], args, logger)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["EXIT_CODES", "ExitCode", "InputError", "build_parser", "load_array", "main"]
