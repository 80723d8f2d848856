"""Execution backends: local processes through joblib (loky) or a Dask cluster.

Both run :func:`indefsvm.studies.harness.run_task` on small task objects; the data sets travel
through each engine's own sharing mechanism, not with every task: joblib memory-maps large
arrays for its worker processes, Dask scatters each data set once to every worker
(``broadcast=True``). The fold kernels are then built by the workers. Results come back to the
driver, which alone writes the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from indefsvm.studies.data import StudyData
from indefsvm.studies.harness import Task, run_task
from indefsvm.studies.spec import Study

__all__ = ["BACKENDS", "BackendError", "DaskBackend", "LokyBackend", "make_backend"]

log = logging.getLogger(__name__)

BACKENDS = ("loky", "dask")
#: Seconds to wait for a Dask scheduler before giving up (distributed's default is 30 s).
SCHEDULER_TIMEOUT = 10.0


class BackendError(ValueError):
    """A backend cannot be used as asked (bad worker count, unreachable scheduler, ...)."""


def _check_n_jobs(n_jobs: int) -> int:
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise BackendError(f"n_jobs (--n-jobs) must be an integer >= 1; got {n_jobs!r}.")
    return n_jobs


class LokyBackend(AbstractContextManager):
    """joblib's process pool; ``n_jobs = 1`` runs in the driver process.

    BLAS/OpenMP threads per worker: 1 by default (threadpoolctl). Small kernels gain nothing
    from threads, and on a loaded machine spinning OpenBLAS/OpenMP threads made a 53 x 53
    LIBSVM fit 100x slower (measured; see docs/studies.md).
    """

    name = "loky"

    def __init__(self, n_jobs: int = 1, max_threads: int | None = None) -> None:
        self.n_jobs = _check_n_jobs(n_jobs)
        self.max_threads = max_threads or 1

    def __exit__(self, *exc: Any) -> None:
        return None

    def map(
        self, tasks: list[Task], data: dict[str, StudyData], study: Study
    ) -> Iterator[dict[str, Any]]:
        """Run ``tasks``; yield results as they finish (any order)."""
        if not tasks:
            return iter(())
        if self.n_jobs == 1:
            return (run_task(t, data[t.dataset], study, self.max_threads) for t in tasks)
        from joblib import Parallel, delayed

        parallel = Parallel(n_jobs=self.n_jobs, backend="loky", return_as="generator_unordered")
        return iter(
            parallel(delayed(run_task)(t, data[t.dataset], study, self.max_threads) for t in tasks)
        )


class DaskBackend(AbstractContextManager):
    """A ``dask.distributed`` cluster: ``scheduler`` address, or a new ``LocalCluster``.

    Without a scheduler address a ``LocalCluster`` of ``n_jobs`` worker processes with one
    thread each is started (and closed at the end). Workers of a remote cluster need indefsvm
    installed; data files are read by the driver and scattered, so they need not be shared.
    """

    name = "dask"

    def __init__(
        self,
        n_jobs: int = 1,
        scheduler: str | None = None,
        max_threads: int = 1,
        *,
        verbose: bool = False,
        timeout: float = SCHEDULER_TIMEOUT,
    ) -> None:
        _check_n_jobs(n_jobs)
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - the extra is in the test extra
            raise ImportError(
                "the Dask backend needs dask.distributed: pip install 'indefsvm[dask]'."
            ) from exc
        from indefsvm.utils.log import quiet_third_party_loggers

        # distributed sets its loggers to INFO on import: quiet them again now.
        quiet_third_party_loggers(verbose)
        self.max_threads = max_threads
        self.cluster = None
        if scheduler is None:
            self.cluster = LocalCluster(
                n_workers=n_jobs,
                threads_per_worker=1,
                processes=True,
                # ":0" is any free port: no "port 8787 is already in use" warning when another
                # cluster runs on the machine.
                dashboard_address=":0",
                silence_logs=logging.DEBUG if verbose else logging.WARNING,
            )
            self.client = Client(self.cluster)
        else:
            try:
                self.client = Client(scheduler, timeout=timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise BackendError(
                    f"cannot reach the Dask scheduler {scheduler!r} within {timeout:g} s "
                    f"({type(exc).__name__}: {exc}); check --scheduler (e.g. tcp://host:8786) "
                    "and that the scheduler is running."
                ) from None
        log.info("Dask backend: %s", self.client)
        self._scattered: dict[str, Any] = {}

    def __exit__(self, *exc: Any) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def map(
        self, tasks: list[Task], data: dict[str, StudyData], study: Study
    ) -> Iterator[dict[str, Any]]:
        """Submit ``tasks``; yield results as they finish."""
        from dask.distributed import as_completed

        if not tasks:
            return iter(())
        for name in {t.dataset for t in tasks}:
            if name not in self._scattered:
                self._scattered[name] = self.client.scatter(data[name], broadcast=True)
        futures = [
            self.client.submit(
                run_task, t, self._scattered[t.dataset], study, self.max_threads, pure=False
            )
            for t in tasks
        ]
        return (f.result() for f in as_completed(futures))


def make_backend(
    name: str,
    *,
    n_jobs: int = 1,
    scheduler: str | None = None,
    max_threads: int = 1,
    verbose: bool = False,
) -> LokyBackend | DaskBackend:
    """Backend by name (``"loky"`` or ``"dask"``)."""
    if name == "loky":
        if scheduler is not None:
            raise BackendError("--scheduler applies to --backend dask only.")
        return LokyBackend(n_jobs, max_threads)
    if name == "dask":
        return DaskBackend(n_jobs, scheduler, max_threads, verbose=verbose)
    raise BackendError(f"backend must be one of {BACKENDS}; got {name!r}.")


def consume(results: Iterable[dict[str, Any]], callback: Callable[[dict[str, Any]], None]) -> int:
    """Feed results to ``callback``; return how many."""
    n = 0
    for r in results:
        callback(r)
        n += 1
    return n
