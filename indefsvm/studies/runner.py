"""The driver of ``indefsvm study run``: plan, skip finished records, execute, export."""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from indefsvm.studies.backends import BACKENDS, BackendError, _check_n_jobs, make_backend
from indefsvm.studies.data import StudyData, load_dataset
from indefsvm.studies.harness import plan_inner, plan_outer_keys, select
from indefsvm.studies.spec import SpecError, Study, load_spec
from indefsvm.studies.store import Store
from indefsvm.threads import task_threads
from indefsvm.utils.progress import progress_bar, progress_wanted

__all__ = ["StudyStatus", "prepare_study", "run_study", "study_status"]

log = logging.getLogger(__name__)


class _Progress:
    """tqdm bar (interactive) or periodic log lines (``--quiet`` / not a terminal)."""

    def __init__(self, total: int, done: int, enabled: bool, desc: str) -> None:
        self.total, self.done, self.start_done = total, done, done
        self.t0 = time.perf_counter()
        self.last_log = self.t0
        self.bar = progress_bar(
            total, initial=done, desc=desc, unit="task", enabled=enabled, leave=True
        )

    def update(self) -> None:
        self.done += 1
        if self.bar.active:
            self.bar.update(1)
            return
        now = time.perf_counter()
        if now - self.last_log >= 10.0 or self.done == self.total:
            self.last_log = now
            rate = (self.done - self.start_done) / max(now - self.t0, 1e-9)
            eta = (self.total - self.done) / rate if rate > 0 else float("nan")
            log.info("%d/%d tasks done, %.0f s elapsed, about %.0f s left",
                     self.done, self.total, now - self.t0, eta)  # fmt: skip

    def close(self) -> None:
        self.bar.close()


@dataclass
class StudyStatus:
    """Progress of a study directory."""

    name: str
    spec_hash: str
    inner_done: int
    inner_total: int
    outer_done: int
    outer_total: int

    @property
    def complete(self) -> bool:
        """Every record is committed."""
        return self.inner_done >= self.inner_total and self.outer_done >= self.outer_total

    def __str__(self) -> str:
        return (
            f"study {self.name!r} (spec {self.spec_hash[:12]}): tuning records "
            f"{self.inner_done}/{self.inner_total}, test records {self.outer_done}/"
            f"{self.outer_total}{' (complete)' if self.complete else ''}"
        )


def _check_kernels(study: Study, data: dict[str, StudyData]) -> None:
    """Compute every (data set, kernel, grid value) on a few objects first.

    A bad pairing or a grid value the kernel function refuses fails here, naming the key,
    before the store is created -- not as failed records in the middle of the run.
    """
    import numpy as np

    from indefsvm.studies.harness import kernel_blocks

    for d in study.datasets:
        idx = np.arange(min(data[d.name].n, 6))
        for k in study.kernels_for(d):
            first = {name: values[0] for name, values in k.grid.items()}
            trials = [("", first)] + [
                (f".grid.{name}", {**first, name: v})
                for name, values in k.grid.items()
                for v in values[1:]
            ]
            for where, params in trials:
                try:
                    Kf, Ke = kernel_blocks(data[d.name], k, params, idx[:4], idx[4:])
                    finite = bool(np.all(np.isfinite(Kf)) and np.all(np.isfinite(Ke)))
                except Exception as exc:
                    what = f" with {params}" if params else ""
                    hint = (
                        f"kernels[{_kernel_index(study, k)}]{where}"
                        if where
                        else "(restrict the data set's kernels with datasets.kernels = [...])"
                    )
                    raise SpecError(
                        f"kernel {k.label!r} cannot be computed on data set {d.name!r}{what}: "
                        f"{exc} {hint}"
                    ) from None
                if not finite:
                    raise SpecError(
                        f"kernel {k.label!r} with {params} gives non-finite values on data set "
                        f"{d.name!r} (kernels[{_kernel_index(study, k)}]{where})."
                    )


def _kernel_index(study: Study, kernel: object) -> int:
    return next(i for i, k in enumerate(study.kernels) if k is kernel)


def _check_data(study: Study, data: dict[str, StudyData]) -> None:
    """Folds and measures that the loaded data allow, checked before anything runs."""
    import numpy as np

    from indefsvm.studies.harness import inner_splits, outer_splits
    from indefsvm.studies.scoring import check_measure_for_classes

    for d in data.values():
        # The splits themselves, computed now: scikit-learn's refusal is re-raised naming the
        # key (e.g. more folds than objects, or than members of every class).
        if d.test_mask is not None:
            n_test = int(np.sum(d.test_mask))
            if n_test == 0 or n_test == d.n:
                raise SpecError(
                    f"data set {d.name!r}: its given split has {d.n - n_test} training and "
                    f"{n_test} test objects; split = 'given' needs both parts non-empty."
                )
        try:
            outer_splits(d.y, study, d.test_mask)
        except ValueError as exc:
            raise SpecError(
                f"study.outer_folds = {study.outer_folds} does not fit data set {d.name!r} "
                f"(n = {d.n}): {exc}"
            ) from None
        for f in range(1 if d.test_mask is not None else study.outer_folds):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    inner_splits(d.y, study, f, d.test_mask)
            except ValueError as exc:
                raise SpecError(
                    f"study.inner_folds = {study.inner_folds} does not fit the training part of "
                    f"outer fold {f} of data set {d.name!r}: {exc}"
                ) from None
        if study.task == "classification":
            n_classes = int(np.unique(d.y).size)
            for j, name in enumerate([study.scoring, *study.metrics]):
                why = check_measure_for_classes(name, n_classes)
                if why is not None:
                    where = "study.scoring" if j == 0 else f"study.metrics[{j - 1}]"
                    raise SpecError(f"{where}: {why} (data set {d.name!r}).")


def prepare_study(spec: str | Path | Study) -> tuple[Study, dict[str, StudyData]]:
    """Load and check a spec and its data: everything that can fail before a record runs.

    Nothing is written; :func:`run_study` creates (or replaces) the store only after this
    succeeded, so a rejected spec leaves a results directory as it was.
    """
    study = spec if isinstance(spec, Study) else load_spec(spec)
    data: dict[str, StudyData] = {
        d.name: load_dataset(
            d, seed=study.seed, task=study.task, min_train_per_class=study.inner_folds
        )
        for d in study.datasets
    }
    _check_data(study, data)
    _check_kernels(study, data)
    return study, data


def study_status(directory: str | Path) -> StudyStatus:
    """Committed and planned records of a results directory."""
    store = Store(directory)
    try:
        study = store.study()
        inner = {t.key for t in plan_inner(study)}
        outer = set(plan_outer_keys(study))
        return StudyStatus(
            study.name,
            store.spec_hash(),
            len(store.inner_done() & inner),
            len(inner),
            len(store.outer_done() & outer),
            len(outer),
        )
    finally:
        store.close()


def run_study(
    spec: str | Path | Study,
    out: str | Path,
    *,
    backend: str = "loky",
    n_jobs: int = 1,
    scheduler: str | None = None,
    progress: bool | None = None,
    force_new: bool = False,
    report: bool = True,
    verbose: bool = False,
) -> Path:
    """Run (or resume) a study and export its results.

    Parameters
    ----------
    spec : path or Study
        TOML spec file (see :mod:`indefsvm.studies.spec`) or a parsed study.
    out : path
        Results directory: ``study.sqlite`` (the store), ``results.csv``, ``timings.csv``,
        ``search.csv`` and, with ``report``, ``report.md`` with its tables and plots.
    backend : {"loky", "dask"}
    n_jobs : int
        Worker processes (loky) or workers of the local Dask cluster.
    scheduler : str, optional
        Address of a running Dask scheduler.
    progress : bool, optional
        Show a tqdm bar (default: when stderr is a terminal).
    force_new : bool
        Replace the records of a different spec found in ``out`` instead of refusing. The
        new spec and its data are checked first, and the old store is replaced atomically:
        if anything is wrong with the new spec, the old records stay as they were.
    report : bool
        Write the report at the end.
    verbose : bool
        Let Dask's ``distributed`` log at INFO (quiet at WARNING by default).

    Returns
    -------
    Path
        ``out/results.csv``.

    Notes
    -----
    Each task runs with at most ``k`` BLAS/OpenMP/Numba threads, ``k`` from
    ``indefsvm.threads.config_context(max_threads=k)`` around the call (else an integer
    ``n_threads``, else 1); keep it equal across runs that are compared.
    """
    out = Path(out)
    # Read here, in the caller's context: the worker processes do not see it.
    max_threads = task_threads()
    Store.check_location(out)
    # Checked before the data are loaded: a usage error costs nothing.
    if backend not in BACKENDS:
        raise BackendError(f"backend must be one of {BACKENDS}; got {backend!r}.")
    if backend == "loky" and scheduler is not None:
        raise BackendError("--scheduler applies to --backend dask only.")
    _check_n_jobs(n_jobs)
    study, data = prepare_study(spec)
    for d in data.values():
        log.info("data set %s: n=%d, %s", d.name, d.n, d.description)
    store = Store.create(out, study, force_new=force_new)
    progress = progress_wanted(progress)
    try:
        inner_all = plan_inner(study)
        outer_keys = plan_outer_keys(study)
        done_inner = store.inner_done()
        done_outer = store.outer_done()
        inner_todo = [t for t in inner_all if t.key not in done_inner]
        outer_todo_keys = [k for k in outer_keys if k not in done_outer]
        total = len(inner_all) + len(outer_keys)
        already = total - len(inner_todo) - len(outer_todo_keys)
        log.info(
            "study %r: %d tuning tasks and %d test tasks, %d already done (%s)",
            study.name, len(inner_all), len(outer_keys), already, out,
        )  # fmt: skip
        bar = _Progress(total, already, progress, study.name)
        t0 = time.perf_counter()
        try:
            with make_backend(
                backend,
                n_jobs=n_jobs,
                scheduler=scheduler,
                max_threads=max_threads,
                verbose=verbose,
            ) as engine:
                for r in engine.map(inner_todo, data, study):
                    store.write_inner(r)
                    bar.update()
                scores = store.inner_scores()
                outer_tasks = [
                    select(study, d, k, m, f, scores.get((d, k, m, f), {}))
                    for d, k, m, f in outer_todo_keys
                ]
                for r in engine.map(outer_tasks, data, study):
                    store.write_outer(r)
                    bar.update()
        finally:
            bar.close()
        log.info("study %r finished in %.1f s", study.name, time.perf_counter() - t0)
        paths = store.export(study)
    finally:
        store.close()
    if report:
        from indefsvm.studies.report import write_report

        write_report(out)
    return paths[0]
