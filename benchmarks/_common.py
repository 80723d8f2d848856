"""Shared helpers for the benchmark scripts (problem generators, timing, machine info)."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np


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
