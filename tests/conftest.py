"""Shared fixtures: small indefinite kernels with known structure and their reference optima.

The data builders (``sigmoid_problem``, ``kind_problem``, ...) live in ``tests/helpers.py``, which
test files import directly; the fixtures below are the common cases. Test files never import
from ``conftest``.

The reference optima are cvxpy SDPs (``tests/reference.py``, seconds each), so they are
session-scoped: computed once per run and shared by every test that asks for them.
"""

from __future__ import annotations

import os

# One thread per pool in every test process and every process it starts (CLI, study workers),
# unless the caller chose otherwise: several test processes on a shared machine, each with a
# BLAS, an OpenMP and a Numba pool per core, wait for each other's threads (issue 22: 30 min
# at load 6-8 instead of 2). Set before numpy loads OpenBLAS; the session fixture below also
# limits what is already loaded. A test that needs threads asks for them:
# ``@pytest.mark.threads(2)``, or an explicit ``n_threads=`` / ``indefsvm.threads.THREADS``.
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

from dataclasses import dataclass  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import sigmoid_problem  # noqa: E402
from hypothesis import settings  # noqa: E402
from reference import psd_part, sdp_optimum  # noqa: E402

# Property tests draw new random examples on every developer run (and keep failures in the
# local .hypothesis database); CI (CI=true) replays one fixed, seeded set, so a run on a clean
# clone is reproducible: what a developer's random run finds becomes an explicit regression test
# (e.g. tests/linalg/test_rank_one.py::test_clustered_poles_found_by_hypothesis).
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "threads(n): run the test with n threads per pool (BLAS, OpenMP, Numba) instead of the "
        "suite's one",
    )


def _set_pools(threads: int):
    """Limit BLAS/OpenMP (threadpoolctl) and Numba's pool to ``threads``; returns the restorer."""
    import numba
    from threadpoolctl import threadpool_limits

    # Numba first: launching its pool (libgomp with the omp layer) sets OpenMP's thread count.
    numba_before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    limiter = threadpool_limits(limits=threads)

    def restore():
        numba.set_num_threads(numba_before)
        limiter.restore_original_limits()

    return restore


@pytest.fixture(scope="session", autouse=True)
def _one_thread_per_pool():
    """The whole session with one thread per pool (see the top of this file)."""
    restore = _set_pools(1)
    yield
    restore()


@pytest.fixture(autouse=True)
def _threads_marker(request, monkeypatch):
    """``@pytest.mark.threads(n)``: this test runs with ``n`` threads per pool."""
    marker = request.node.get_closest_marker("threads")
    if marker is None:
        # A test that raised Numba's thread count and did not restore it must not hand two
        # threads to every later test (Numba's count is per thread, not a threadpoolctl limit).
        import numba

        if numba.get_num_threads() != 1:
            numba.set_num_threads(1)
        yield
        return
    threads = int(marker.args[0])
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(name, str(threads))
    restore = _set_pools(threads)
    yield
    restore()


@dataclass(frozen=True)
class KernelFiles:
    """A kernel and its labels written as the CLI reads them (``.npy``, ``.npy`` and ``.txt``)."""

    K0: np.ndarray
    y: np.ndarray
    kernel: str
    labels_npy: str
    labels_txt: str


@dataclass(frozen=True)
class ReferenceCase:
    """A classification problem with its optimum of problem (3) (paper 004) by an SDP."""

    K0: np.ndarray
    y: np.ndarray
    C: float
    rho: float
    optimum: float
    kernel: np.ndarray

    @property
    def clipped(self) -> np.ndarray:
        """``(K0)_+`` by dense eigh: the rho -> infinity limit of the proxy kernel."""
        return psd_part(self.K0)


@pytest.fixture
def small_indefinite():
    K0, y = sigmoid_problem(20, 0)
    assert np.linalg.eigvalsh(K0)[0] < -1e-3
    return K0, y


@pytest.fixture
def kernel_files(tmp_path) -> KernelFiles:
    """``sigmoid_problem(20, 0)`` saved to ``tmp_path`` as K.npy, y.npy and y.txt."""
    K0, y = sigmoid_problem(20, 0)
    np.save(tmp_path / "K.npy", K0)
    np.save(tmp_path / "y.npy", y)
    np.savetxt(tmp_path / "y.txt", y)
    return KernelFiles(
        K0, y, str(tmp_path / "K.npy"), str(tmp_path / "y.npy"), str(tmp_path / "y.txt")
    )


@pytest.fixture(scope="session")
def svc_reference() -> ReferenceCase:
    """n = 14 sigmoid-kernel SVC, C = 1, rho = 0.5, with the SDP optimum of problem (3)."""
    K0, y = sigmoid_problem(14, 3)
    assert np.linalg.eigvalsh(K0)[0] < -1e-3  # really indefinite
    opt, K = sdp_optimum(K0, y, 1.0, 0.5)
    return ReferenceCase(K0, y, 1.0, 0.5, float(opt), K)
