"""Cost of the global KREIN solution: one O(n^3) eigendecomposition, then O(n^2) per solve.

Measures, in one run and on one sigmoid-kernel problem per size (centred kernel):

* ``eigh``: the eigendecomposition (the only cubic step);
* ``solve``: :func:`indefsvm.krein.krein_least_squares` given the decomposition (secular
  root + two products with the eigenvectors), median over repeats;
* ``root``: the secular root alone (:func:`indefsvm.krein.minimize_quadratic_on_sphere`, O(n)
  per Newton step) and its iteration count;
* ``gander``: the paper's closed-form alternative (eq. 6), the smallest real eigenvalue of the
  2n x 2n non-symmetric matrix of Gander, Golub & von Matt (1989), for n <= 500.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_krein.py [--sizes 250 500 1000 2000]``
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.linalg as sla

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_line, median_time, sigmoid_kernel_problem  # noqa: E402

from indefsvm.krein import (  # noqa: E402
    center_kernel_train,
    kernel_eigen,
    krein_least_squares,
    minimize_quadratic_on_sphere,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    print(machine_line())
    print(
        f"{'n':>6} {'eigh [s]':>10} {'solve [ms]':>11} {'root [ms]':>10} {'iters':>6} "
        f"{'gander [s]':>11} {'eigh/solve':>11} {'gander/solve':>13}"
    )
    for n in args.sizes:
        K0, y = sigmoid_kernel_problem(n, seed=n, a=0.1)
        K, _, _ = center_kernel_train(K0)
        y = y - y.mean()
        t_eig = median_time(lambda K=K: kernel_eigen(K), max(1, args.repeats // 2))
        eig = kernel_eigen(K)
        kw = dict(lambda_plus=1e-2, lambda_minus=5e-2, r=0.5)
        t_solve = median_time(
            lambda eig=eig, y=y, kw=kw: krein_least_squares(eig, y, **kw), args.repeats * 4
        )
        sol = krein_least_squares(eig, y, **kw)
        D, b = sol.secular_diag, eig.eigenvectors[:, eig.active].T @ y
        radius = np.sqrt(n) * 0.5
        t_root = median_time(
            lambda D=D, b=b, radius=radius: minimize_quadratic_on_sphere(D, b, radius),
            args.repeats * 4,
        )
        root = minimize_quadratic_on_sphere(D, b, radius)
        gander = float("nan")
        if n <= 500:
            p = D.shape[0]
            M = np.block([[np.diag(D), -np.eye(p)], [-np.outer(b, b) / radius**2, np.diag(D)]])
            gander = median_time(lambda M=M: sla.eigvals(M), 1)
        print(
            f"{n:>6} {t_eig:>10.3f} {1e3 * t_solve:>11.2f} {1e3 * t_root:>10.3f} "
            f"{root.n_iter:>6} {gander:>11.3f} {t_eig / t_solve:>11.1f} "
            f"{gander / t_solve:>13.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
