"""Approximate eigendecompositions of an indefinite Nystroem matrix: time and error (issue 26).

Every method in :data:`METHODS` gets the same factor ``K_nm = k(X, Z)``, ``K_mm = k(Z, Z)``
(sigmoid kernel of ``bench_lowrank.py``, ``m`` uniform landmarks) and returns eigenvalues and
orthonormal eigenvectors of ``K_nm K_mm^+ K_mn`` (eq. (3) of paper 003). Reported: the median
wall time of ``--repeats`` calls (one BLAS thread), the largest eigenvalue error relative to
``max|lambda|`` against a reference computed with numpy alone, and ``max|U'U - I|``.

References: for ``n <= --dense-max`` the dense ``numpy.linalg.eigh`` of ``K_nm K_mm^+ K_mn``
(formed explicitly); above it the Gram route: the non-zero eigenvalues of ``L S L'`` (``L =
K_nm U_r |D_r|^{-1/2}``, ``S = sign(D_r)`` from ``numpy.linalg.eigh(K_mm)``) are those of
``G^{1/2} S G^{1/2}`` with ``G = L'L`` (m x m).

Only the one-shot method of paper 003 (Sect. 2.2) is measured: the Gisbrecht & Schleif (2015)
method, the paper's baseline (Appendix B), is not implemented (its defining section was not
available; see issue 26). A method is a callable ``(K_nm, K_mm) -> (eigenvalues, eigenvectors)``
added to :data:`METHODS`.

Run from the repository root (about a minute on one core):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_nystrom_eig.py \
        --out docs/results/nystrom_eig.md
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import load_line, machine_line, markdown_header, markdown_row, median_time
from bench_lowrank import COEF0, GAMMA, make_data
from threadpoolctl import threadpool_limits

from indefsvm.approximation.nystrom import DEFAULT_RCOND, one_shot_eigendecomposition
from indefsvm.kernels import sigmoid_kernel

#: Methods measured: name -> ``(K_nm, K_mm) -> (eigenvalues, orthonormal eigenvectors)``.
METHODS: dict[str, Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]] = {
    "one-shot (003 Sect. 2.2)": one_shot_eigendecomposition,
}

COLUMNS = (
    "n",
    "m",
    "r (negative)",
    "method",
    "time (s)",
    "eigenvalue error / max abs(lambda)",
    "reference",
    "max abs(U'U - I)",
)


def factor(n: int, m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``K_nm, K_mm`` of the sigmoid kernel on ``n`` points with ``m`` uniform landmarks."""
    X, _, _, _ = make_data(n, seed)
    Z = X[np.sort(np.random.default_rng(seed + 1).choice(n, size=m, replace=False))]
    return sigmoid_kernel(X, Z, gamma=GAMMA, coef0=COEF0), sigmoid_kernel(
        Z, gamma=GAMMA, coef0=COEF0
    )


def _sorted(w: np.ndarray) -> np.ndarray:
    return w[np.argsort(-np.abs(w), kind="stable")]


def reference_eigenvalues(K_nm: np.ndarray, K_mm: np.ndarray, dense: bool) -> np.ndarray:
    """Non-zero eigenvalues of ``K_nm K_mm^+ K_mn`` by numpy alone, sorted by magnitude."""
    d, U = np.linalg.eigh(0.5 * (K_mm + K_mm.T))
    keep = np.abs(d) > DEFAULT_RCOND * np.max(np.abs(d))
    W0, S = U[:, keep] / np.sqrt(np.abs(d[keep])), np.sign(d[keep])
    if dense:
        K = (K_nm @ W0 * S) @ (K_nm @ W0).T
        return _sorted(np.linalg.eigvalsh(0.5 * (K + K.T)))[: int(keep.sum())]
    L = K_nm @ W0
    g, V = np.linalg.eigh(L.T @ L)
    H = (V * np.sqrt(np.maximum(g, 0.0))) @ V.T
    return _sorted(np.linalg.eigvalsh((H * S) @ H))


def measure(n: int, m: int, repeats: int, dense_max: int) -> list[dict[str, Any]]:
    K_nm, K_mm = factor(n, m)
    dense = n <= dense_max
    ref = reference_eigenvalues(K_nm, K_mm, dense)
    rows = []
    for name, method in METHODS.items():
        lam, U = method(K_nm, K_mm)
        seconds = median_time(lambda method=method: method(K_nm, K_mm), repeats)
        k = min(lam.size, ref.size)
        rows.append(
            {
                "n": n,
                "m": m,
                "r": lam.size,
                "negative": int(np.sum(lam < 0)),
                "method": name,
                "time": seconds,
                "eig_error": float(np.max(np.abs(lam[:k] - ref[:k])) / np.max(np.abs(ref))),
                "reference": "dense eigh" if dense else "Gram",
                "orthogonality": float(np.max(np.abs(U.T @ U - np.eye(lam.size)))),
            }
        )
    return rows


def table(rows: Sequence[dict[str, Any]]) -> str:
    lines = [markdown_header(COLUMNS)]
    for row in rows:
        lines.append(
            markdown_row(
                [
                    row["n"],
                    row["m"],
                    f"{row['r']} ({row['negative']})",
                    row["method"],
                    f"{row['time']:.3f}",
                    f"{row['eig_error']:.1e}",
                    row["reference"],
                    f"{row['orthogonality']:.1e}",
                ]
            )
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000, 100000])
    parser.add_argument("--landmarks", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dense-max", type=int, default=2000)
    parser.add_argument("--smoke", action="store_true", help="n = 300, m = 20/50, one repeat")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.landmarks, args.repeats = [300], [20, 50], 1
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    if min(args.sizes) < 2 or min(args.landmarks) < 1:
        parser.error("--sizes must be >= 2 and --landmarks >= 1")
    if any(m > n for n in args.sizes for m in args.landmarks):
        parser.error("every --landmarks value must be <= every --sizes value")
    rows = []
    with threadpool_limits(limits=1):
        for n in args.sizes:
            for m in args.landmarks:
                rows.extend(measure(n, m, args.repeats, args.dense_max))
    text = "\n".join([machine_line(), load_line(), "", table(rows)])
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
