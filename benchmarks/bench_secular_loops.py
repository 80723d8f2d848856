"""Why the compiled secular kernel loops over slices: the two loop forms, timed side by side.

One sweep of the secular solver over the poles (``_lower_sums`` of
:mod:`indefsvm.linalg._secular_numba`: a subtraction, one division and three accumulations per pole)
written as before session 5, ``for j in range(lo, hi)`` over the whole arrays, against the
package's form, a loop from 0 over the slices ``d[lo:hi]``, ``z[lo:hi]``. With a start that may
be negative Numba keeps a wraparound branch per index, which kept LLVM from vectorising the
first form. Both are called from a compiled driver (as the root loop calls them) at k = 2000
poles, 3000 sweeps per timing, median of 5; the sums of both forms are printed to show they
compute the same quantity (they differ by rounding: the vectorised sum is reassociated).

Run: ``python benchmarks/bench_secular_loops.py [--k 2000]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from _common import machine_line
from numba import njit

from indefsvm.linalg import _secular_numba as kernel


@njit(cache=False, nogil=True, fastmath=kernel._FAST, error_model="numpy")
def _lower_sums_range(d, z, dorg, tau, lo, hi):
    """The loop form used before session 5 (reference copy)."""
    s = 0.0
    ds = 0.0
    e = 0.0
    for j in range(lo, hi):
        delta = (d[j] - dorg) - tau
        temp = z[j] / delta
        t = z[j] * temp
        s += t
        ds += temp * temp
        e += t * (hi - j)
    return s, ds, e


@njit(cache=False, error_model="numpy")
def _drive_range(d, z, sweeps, lo, hi):
    acc = 0.0
    for i in range(sweeps):
        s, ds, e = _lower_sums_range(d, z, d[hi // 2], 1e-3 + i * 1e-12, lo, hi)
        acc += s + ds + e
    return acc


@njit(cache=False, error_model="numpy")
def _drive_slices(d, z, sweeps, lo, hi):
    acc = 0.0
    for i in range(sweeps):
        s, ds, e = kernel._lower_sums(d, z, d[hi // 2], 1e-3 + i * 1e-12, lo, hi)
        acc += s + ds + e
    return acc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=2000)
    parser.add_argument("--sweeps", type=int, default=3000)
    args = parser.parse_args()
    print(machine_line())
    print(f"load average at start: {os.getloadavg()}")
    rng = np.random.default_rng(0)
    d = np.sort(rng.normal(size=args.k))
    z = rng.normal(size=args.k)
    z /= np.linalg.norm(z)
    times = {}
    for name, drive in (("range(lo, hi)", _drive_range), ("slices", _drive_slices)):
        value = drive(d, z, 4, 0, args.k)  # compile
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            drive(d, z, args.sweeps, 0, args.k)
            samples.append(time.perf_counter() - t0)
        times[name] = statistics.median(samples) / (args.sweeps * args.k)
        print(f"{name}: {1e9 * times[name]:.3f} ns per pole per sweep (sum {value:.15g})")
    print(f"range / slices: {times['range(lo, hi)'] / times['slices']:.2f}x")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
