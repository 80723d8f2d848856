"""Shared helpers for the benchmark scripts (problem generators, timing, machine info, tables).

Every script imports from here (``from _common import ...``: running ``python
benchmarks/bench_x.py`` puts this folder first on ``sys.path``) instead of keeping its own copy
of the problem generator, the machine line, the markdown table and the silenced solve.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

#: This checkout's ``indefsvm`` first on ``sys.path``, not an installed (editable) copy elsewhere:
#: ``python benchmarks/x.py`` puts only the script's own folder there. Scripts import this module
#: before ``indefsvm`` (ruff's import order does: ``_common`` sorts with the third-party block).
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def sigmoid_kernel_problem(n: int, seed: int = 0, *, dim: int = 10, a: float = 1.0, b: float = 0.0):
    """Sigmoid kernel ``tanh(a <x, x'> + b)`` on Gaussian data: about half its eigenvalues < 0.

    Labels are the sign of a random linear function plus 20% label-independent noise, so the
    SVM has both free and bounded support vectors.
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, dim))
    w = rng.normal(size=dim)
    y = np.where(X @ w + 0.5 * rng.normal(size=n) * np.linalg.norm(w) > 0, 1.0, -1.0)
    K0 = np.tanh(a * (X @ X.T) + b)
    return K0, y


def median_time(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def machine_line() -> str:
    """One line describing the machine and BLAS threads for the record."""
    threads = os.environ.get("OMP_NUM_THREADS", "default")
    return (
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} cores, OMP_NUM_THREADS={threads}, {platform.machine()}"
    )


def load_line() -> str:
    """The 1, 5 and 15 minute load averages (others share the CPU: quote them with timings)."""
    return "load average: " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def markdown_header(columns: Iterable[str]) -> str:
    """Header and separator lines of a markdown table (:mod:`indefsvm.utils.tables`)."""
    from indefsvm.utils.tables import markdown_header as header

    return header(list(columns))


def markdown_row(cells: Iterable[Any]) -> str:
    """One markdown table row (cells already formatted, or formatted with ``str``)."""
    from indefsvm.utils.tables import markdown_row as row

    return row(cells)


def solve_to_limit(K0: np.ndarray, y: np.ndarray | None, **options: Any) -> Any:
    """``indefsvm.solve`` with its ConvergenceWarning silenced.

    Benchmarks stop runs at an iteration or time cap on purpose and report ``res.status`` and
    the certified gap themselves; the warning would only repeat that on stderr.
    """
    from sklearn.exceptions import ConvergenceWarning

    import indefsvm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return indefsvm.solve(K0, y, **options)
