"""Cost of building kernel matrices: image kernels on all digits, and chunked vector kernels.

1. Simpson and mean one-sided tangent distance kernels on all 1797 digits of scikit-learn's
   ``load_digits`` (the issue's benchmark), with the tangent kernel split into its two stages,
   and the vectorised tangent distance against a per-pair least-squares loop (measured on a
   subset, same run).
2. Gaussian and Gaussian-combination kernels built in row blocks against scikit-learn's
   ``rbf_kernel``: wall time and peak traced memory relative to the size of the result.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_kernels.py [--repeats 5] [--sizes 2000 4000]``
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from _common import machine_line, median_time
from sklearn.datasets import load_digits
from sklearn.metrics.pairwise import rbf_kernel

from indefsvm.kernels import (
    gaussian_combination_kernel,
    gaussian_kernel,
    one_sided_tangent_distance,
    simpson_kernel,
    tangent_distance_kernel,
    tangent_vectors,
)
from indefsvm.kernels.image import _tangent_bases  # the orthonormalisation step it times


def peak_memory(fn) -> tuple[float, int]:
    """Wall time and peak traced allocation (bytes) of one call."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, peak


def per_pair_td(X: np.ndarray) -> np.ndarray:
    """Reference: one least-squares solve per ordered pair (what the vectorised code avoids)."""
    T = tangent_vectors(X)
    n = X.shape[0]
    D = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            a, *_ = np.linalg.lstsq(T[i], X[j] - X[i], rcond=None)
            D[i, j] = np.linalg.norm(X[i] + T[i] @ a - X[j])
    return D


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 4000])
    parser.add_argument("--loop-subset", type=int, default=150)
    args = parser.parse_args()
    print(machine_line())
    X = load_digits().data  # (1797, 64), intensities 0..16
    n = X.shape[0]

    print(f"\n## Image kernels on all {n} digits (median of {args.repeats} runs)\n")
    print("| kernel | time (s) |")
    print("|---|---:|")
    t_simpson = median_time(lambda: simpson_kernel(X, threshold=8), args.repeats)
    print(f"| Simpson (ink >= 8) | {t_simpson:.3f} |", flush=True)
    t_tan = median_time(lambda: tangent_vectors(X), args.repeats)
    print(f"| tangent vectors (7 per image, smoothing 1.0) | {t_tan:.3f} |", flush=True)
    T = tangent_vectors(X)
    t_svd = median_time(lambda: _tangent_bases(T), args.repeats)
    print(f"| orthonormal tangent bases (batched SVD) | {t_svd:.3f} |", flush=True)
    t_td = median_time(lambda: one_sided_tangent_distance(X), args.repeats)
    print(f"| one-sided tangent distance, all pairs | {t_td:.3f} |", flush=True)
    t_tdk = median_time(lambda: tangent_distance_kernel(X, gamma=1e-3), args.repeats)
    print(f"| tangent distance kernel exp(-g mean^2) | {t_tdk:.3f} |", flush=True)

    m = args.loop_subset
    sub = X[:m]
    t0 = time.perf_counter()
    D_loop = per_pair_td(sub)
    t_loop = time.perf_counter() - t0
    t_vec = median_time(lambda: one_sided_tangent_distance(sub), args.repeats)
    err = float(np.max(np.abs(D_loop - one_sided_tangent_distance(sub))))
    print(
        f"\nPer-pair lstsq loop on {m} digits ({m * m} pairs): {t_loop:.3f} s; vectorised: "
        f"{t_vec:.4f} s; ratio {t_loop / t_vec:.0f}x; max |difference| {err:.2e}. "
        f"Loop extrapolated to all {n * n} pairs: {t_loop * (n / m) ** 2:.0f} s."
    )

    print("\n## Vector kernels: chunked build vs scikit-learn (one call each)\n")
    print(
        "| n | kernel | time (s) | peak traced memory / result size | sklearn rbf_kernel (s) "
        "| sklearn peak / result |"
    )
    print("|---:|---|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for size in args.sizes:
        Z = rng.standard_normal((size, 20))
        result_bytes = size * size * 8
        t_g, p_g = peak_memory(lambda Z=Z: gaussian_kernel(Z, gamma=0.05))
        t_s, p_s = peak_memory(lambda Z=Z: rbf_kernel(Z, gamma=0.05))
        t_c, p_c = peak_memory(lambda Z=Z: gaussian_combination_kernel(Z))
        print(
            f"| {size} | gaussian | {t_g:.3f} | {p_g / result_bytes:.2f} | {t_s:.3f} | "
            f"{p_s / result_bytes:.2f} |",
            flush=True,
        )
        print(
            f"| {size} | gaussian combination | {t_c:.3f} | {p_c / result_bytes:.2f} | | |",
            flush=True,
        )


if __name__ == "__main__":
    main()
