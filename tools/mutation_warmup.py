"""Warm-up of mutmut's fork server (installed into a module's scratch copy by tools/mutation.py).

mutmut forks one child per mutant from a server that has only *collected* the tests. Everything
the package initialises lazily is then paid again by every child: loading the Numba kernels from
their on-disk cache, scipy's and cvxpy's lazy imports, the first LIBSVM and Clarabel calls. That
is ~0.5 s for a projection and ~1.2 s for a first solve, against a few milliseconds for the
contract test that kills the mutant. This hook runs tiny instances of each of those paths once,
in the server, when it collects (``--collect-only``); the children inherit the loaded kernels.

Only serial code is run (n = 12 stays below every threading threshold), so no thread pool exists
when the server forks. The workload runs the unmutated code: no mutant is active in the server.
"""

from __future__ import annotations

import warnings


def _warm_up() -> None:
    import numpy as np

    import indefsvm
    from indefsvm.linalg.projection import project_hyperplane_box

    rng = np.random.default_rng(0)
    n = 12
    X = rng.normal(size=(n, 3))
    K = np.tanh(X @ X.T / 3.0 - 0.2)  # a sigmoid kernel: indefinite
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    for method in ("newton", "sort"):
        project_hyperplane_box(rng.normal(size=n), y, 0.0, np.zeros(n), np.ones(n), method=method)
        project_hyperplane_box(
            rng.normal(size=n), np.ones(n), 0.0, -np.ones(n), np.ones(n), l1=0.1, method=method
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in ("pg", "accpm", "siqclp"):
            indefsvm.solve(K, y, method=method, max_iter=3)
        indefsvm.solve(K, y, method="accpm", max_iter=3, options={"variant": "paper"})
        indefsvm.solve(K, y, method="pg", max_iter=3, options={"step": "paper"})
        indefsvm.IndefiniteSVR(max_iter=3).fit(K, rng.normal(size=n))
        indefsvm.IndefiniteOneClassSVM(max_iter=3).fit(K)
        indefsvm.krein.KreinSVC().fit(K, y)
        indefsvm.krein.KreinKernelRidge().fit(K, rng.normal(size=n))
        try:
            import cvxpy as cp

            x = cp.Variable(3)
            cp.Problem(cp.Minimize(cp.sum_squares(x - 1.0)), [cp.sum(x) == 1.0]).solve(
                solver="CLARABEL"
            )
        except ImportError:
            pass


def pytest_collection_finish(session) -> None:
    """Warm up only in mutmut's fork server, which collects and never runs tests (the stats run
    must not attribute the warm-up's calls to the first test)."""
    if session.config.option.collectonly:
        _warm_up()
