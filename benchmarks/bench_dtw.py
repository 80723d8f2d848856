"""DTW distance matrices: the full window's fixed-bound loop against the banded loop.

``indefsvm.kernels.dtw_distances`` runs a loop with fixed bounds when the Sakoe-Chiba band
covers every cell (``window=None``) and the banded loop otherwise. This script times, on the
same series and in the same run, the full-window matrix with each loop (identical results,
checked), and the banded loop at a narrow window for scale, with 1 and 2 Numba threads.
Default data: UCR ArrowHead from aeon's wheel, training and test series together (211 series
of length 251, the issue's measurement); ``--synthetic`` uses seeded random walks of the same
shape when aeon is not installed.

With ``--dtaidistance`` (``pip install dtaidistance``) the same matrix from dtaidistance's C
code (``dtw.distance_matrix_fast``, serial for 1 thread, ``parallel=True`` otherwise) is timed
too, after checking that its values are the square roots of ours.

Run: ``python benchmarks/bench_dtw.py [--repeats 3] [--threads 1 2] [--synthetic]
[--dtaidistance]``
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import load_line, machine_line, markdown_header, markdown_row, median_time


def series(synthetic: bool) -> tuple[np.ndarray, str]:
    """(n, T) series and their description."""
    if synthetic:
        rng = np.random.default_rng(0)
        return np.cumsum(rng.normal(size=(211, 251)), axis=1), "seeded random walks 211 x 251"
    from indefsvm.datasets import load_aeon

    b = load_aeon("ArrowHead")
    return b.data, f"ArrowHead (aeon), train and test, {b.data.shape[0]} x {b.data.shape[1]}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per cell (median)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--window", type=float, default=0.07, help="narrow band (fraction)")
    parser.add_argument("--synthetic", action="store_true", help="random walks, not ArrowHead")
    parser.add_argument(
        "--dtaidistance", action="store_true", help="also time dtaidistance's C implementation"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")

    import numba

    from indefsvm.kernels._dtw import dtw_matrix
    from indefsvm.kernels.sequence import dtw_window_cells

    X, what = series(args.synthetic)
    X = np.ascontiguousarray(X)
    T = X.shape[1]
    w = dtw_window_cells(args.window, T)
    full = dtw_matrix(X, X, True, T)
    assert np.array_equal(full, dtw_matrix(X, X, True, T, banded=True)), "loops differ"
    dtw_matrix(X, X, True, w)  # compile (and load the cache) before timing
    print(f"# DTW matrices: {what}")
    print(f"{machine_line()}; {load_line()} (before)")
    print()
    columns = ["Numba threads", "full window, fixed bounds (s)", "full window, banded loop (s)",
               "speed-up", f"band {args.window:g} = {w} cells (s)"]  # fmt: skip
    if args.dtaidistance:
        from dtaidistance import dtw as dtai

        def dtai_full(parallel: bool) -> np.ndarray:
            return dtai.distance_matrix_fast(X, parallel=parallel, compact=False)

        theirs = dtai_full(False)
        upper = np.triu_indices(X.shape[0], 1)
        assert np.allclose(theirs[upper] ** 2, full[upper], rtol=1e-9), "dtaidistance differs"
        columns += ["dtaidistance C, full (s)", "ours / dtaidistance"]
    print(markdown_header(columns))
    for threads in args.threads:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        fixed = median_time(lambda: dtw_matrix(X, X, True, T), args.repeats)
        banded = median_time(lambda: dtw_matrix(X, X, True, T, banded=True), args.repeats)
        narrow = median_time(lambda: dtw_matrix(X, X, True, w), args.repeats)
        cells = [threads, f"{fixed:.3f}", f"{banded:.3f}", f"{banded / fixed:.2f}x",
                 f"{narrow:.3f}"]  # fmt: skip
        if args.dtaidistance:
            c = median_time(lambda t=threads: dtai_full(t > 1), args.repeats)
            cells += [f"{c:.3f}", f"{fixed / c:.2f}"]
        print(markdown_row(cells))
    print()
    print(f"median of {args.repeats}; identical matrices (np.array_equal); {load_line()} (after)")


if __name__ == "__main__":
    main()
