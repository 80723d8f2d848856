"""Thread counts that fit the size of the problem.

A fit uses three thread pools: BLAS/LAPACK (OpenBLAS, e.g. the ``eigh`` of the training kernel),
the compiled secular-root loops and the low-rank products (Numba, ``parallel=True``; called the
*engine* here) and LIBSVM's OpenMP loops (``libsvm-official`` is built with OpenMP). Left at
their libraries' defaults every pool starts one thread per core, and a small fit then spends
most of its time waking threads and waiting for them: on a 2-core machine a GridSearchCV at
50-450 training points ran 14-100x slower than with one thread. Every ``fit`` of the
package's estimators therefore runs inside :func:`limit_threads`, which

* uses **one thread** for a problem below the cross-over size of a pool (:data:`CROSSOVER`,
  measured with ``benchmarks/bench_threads.py``; docs/benchmarks.md has the numbers);
* above it, uses the cores this process may use (``os.sched_getaffinity``), lowered by
  ``OMP_NUM_THREADS`` / ``NUMBA_NUM_THREADS`` and by the caller's own limits (a surrounding
  ``threadpoolctl.threadpool_limits``, ``numba.set_num_threads``, a study worker's limit),
  **and only the cores that are free**: the cores other processes keep busy are subtracted
  (the larger of their runnable tasks now, from ``/proc/loadavg``, and the 1-minute load
  average minus this process's own CPU use), because on a busy core a second thread makes BLAS
  and OpenMP threads wait for each other (``eigh`` at n = 1000 on 2 busy cores: 0.42 s with
  one thread, 3.7 s with two);
* restores the caller's settings on exit (BLAS, OpenMP and Numba's thread count).

An explicit choice always wins. The one way to make it is :func:`config_context` (for a block,
like ``sklearn.config_context``) or :func:`set_config` (for the process)::

    with indefsvm.threads.config_context(n_threads=1):      # every pool of every fit inside
        clf.fit(K, y)
    with indefsvm.threads.config_context(max_threads=2):    # a cap on the automatic choices
        run_study(...)

``n_threads`` is an integer for every pool or a mapping ``{"blas": 2, "engine": 1, "openmp": 1}``
(a pool left out stays automatic); ``max_threads`` caps every automatic choice (a study worker,
a test session). Inside the block BLAS and OpenMP are limited at once (``threadpoolctl`` reports
the limit) and Numba's thread count is set; everything is restored on exit, also on an
exception, and blocks nest (an inner block overrides the settings it names). The settings live
in :mod:`contextvars`, so a block in one thread does not change another thread's choices (the
BLAS and OpenMP limits themselves are process-wide, as in ``threadpoolctl``). The solvers' BLAS
threads (default 1) follow ``n_threads`` too, and the study runner's threads per task (default 1)
follow ``max_threads`` (else an integer ``n_threads``).

:func:`cap_threads` is ``config_context(max_threads=...)``; :data:`THREADS` holds the
process-wide setting that :func:`set_config` makes (read it with :func:`get_config`).
``config_context(n_threads={"engine": k})`` sets the secular-root loop alone; wrapping the fit
in ``threadpoolctl.threadpool_limits`` / ``numba.set_num_threads`` also lowers the pools.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from numbers import Integral
from typing import Any

__all__ = [
    "CROSSOVER",
    "LOAD_AWARE",
    "THREADS",
    "cap_threads",
    "config_context",
    "free_cores",
    "get_config",
    "limit_openmp",
    "limit_threads",
    "set_config",
    "threads_for",
    "usable_cores",
]

#: Threads of every pool in every fit, whatever the problem size and the machine's load (None:
#: automatic, see the module docstring). The user's explicit setting, like an ``n_jobs``: an
#: integer for every pool, or a mapping ``{"blas": 2, "engine": 1, "openmp": 1}`` (a pool left
#: out stays automatic).
THREADS: int | Mapping[str, int] | None = None
#: Smallest effective problem size at which a pool gets more than one thread. ``"blas"``: the
#: dense ``eigh``/products of the training kernel; ``"engine"``: the secular-root loops;
#: ``"openmp"``: LIBSVM's loops, which on a precomputed kernel only look entries up, so a second
#: thread never paid (docs/benchmarks.md, "Threads").
CROSSOVER: dict[str, float] = {"blas": 600.0, "engine": 700.0, "openmp": math.inf}
#: Subtract the cores other processes keep busy (False: use every usable core above the
#: cross-over).
LOAD_AWARE: bool = True
_KINDS = ("blas", "engine", "openmp")
#: BLAS threads set by the innermost :func:`limit_threads` (None: outside a fit).
_BLAS_INSIDE: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "indefsvm_blas_inside", default=None
)
#: The innermost :func:`cap_threads` (per thread / task: a ContextVar).
_CAP: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "indefsvm_thread_cap", default=None
)


def _env_cap() -> int | None:
    """Smallest positive integer in ``OMP_NUM_THREADS``/``NUMBA_NUM_THREADS`` (None: unset)."""
    cap = None
    for name in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            cap = int(value) if cap is None else min(cap, int(value))
    return cap


def usable_cores() -> int:
    """Cores this process may use (affinity), lowered by ``OMP_NUM_THREADS``/``NUMBA_NUM_THREADS``.

    Returns
    -------
    int
        At least 1.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    cap = _env_cap()
    if cap is not None:
        cores = min(cores, cap)
    return max(1, cores)


def _own_running_threads() -> int:
    """Threads of this process in state R (running or runnable), from ``/proc/self/task``."""
    running = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # "pid (comm) S ...": the state follows the last ')' (comm may contain one).
        if stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"R":
            running += 1
    return max(1, running)


def _others_running_now() -> int | None:
    """Runnable tasks of other processes at this instant (None: unknown, e.g. no ``/proc``).

    The fourth field of ``/proc/loadavg`` counts the runnable tasks of the whole system; this
    process's own running threads are subtracted. The median of three readings drops a
    short-lived task that happened to run at one of them.
    """
    readings = []
    for _ in range(3):
        try:
            with open("/proc/loadavg", "rb") as handle:
                fields = handle.read().split()
            total = int(fields[3].split(b"/")[0])
        except (OSError, IndexError, ValueError):
            return None
        readings.append(max(0, total - _own_running_threads()))
    return sorted(readings)[1]


#: This process's CPU use (cores) averaged like the 1-minute load average: (monotonic time, CPU
#: seconds, average or None before the first estimate).
_OWN_LOAD: list[Any] = [time.monotonic(), sum(os.times()[:2]), None]


def _own_load() -> float:
    """This process's CPU use in cores, an exponential average over about a minute.

    It is what this process adds to the 1-minute load average (the kernel averages runnable
    tasks with the same time constant); subtracted from it, the rest is the other processes'.
    """
    last_wall, last_cpu, average = _OWN_LOAD
    now, cpu = time.monotonic(), sum(os.times()[:2])
    elapsed = now - last_wall
    if elapsed < 1.0:
        # Too short to measure: the last estimate, or one busy thread (the caller's).
        return 1.0 if average is None else average
    rate = max(0.0, (cpu - last_cpu) / elapsed)
    if average is None:
        average = rate
    else:
        average += (1.0 - math.exp(-elapsed / 60.0)) * (rate - average)
    _OWN_LOAD[:] = [now, cpu, average]
    return average


def _others_running() -> int | None:
    """Cores other processes keep busy (None: unknown, e.g. no ``/proc``).

    The larger of two estimates: the runnable tasks of other processes now
    (:func:`_others_running_now`), and the 1-minute load average minus this process's own
    share (:func:`_own_load`). The first sees a load that has just started (the average lags by
    a minute); the second sees other processes that run in bursts (test runs, other fits) and
    may be idle at the instant of the reading. A share of 0.7 core or more counts as busy.
    """
    now = _others_running_now()
    if now is None:
        return None
    try:
        average = os.getloadavg()[0] - _own_load()
    except OSError:  # pragma: no cover - no load average
        return now
    return max(now, int(average + 0.3))


def free_cores() -> int:
    """Usable cores not kept busy by other processes (at least 1); see :func:`usable_cores`."""
    cores = usable_cores()
    others = _others_running()
    if others is None:
        return cores
    online = os.cpu_count() or cores
    return max(1, min(cores, online - others))


def _effective_size(n: int, m: int | None) -> float:
    """Dense size with the same cubic work: ``n`` dense, ``(n m^2)^(1/3)`` low-rank (rank m)."""
    if m is None or m >= n:
        return float(n)
    return float(n * m * m) ** (1.0 / 3.0)


class _Unset:
    """Marks a setting that is not given (distinct from None, which means "automatic")."""

    def __repr__(self) -> str:
        return "<not given>"


#: Default of a setting that is not given (unchanged; the configuration decides).
NOT_GIVEN: Any = _Unset()
#: ``n_threads`` of the innermost :func:`config_context` that sets it (NOT_GIVEN: THREADS).
_N_THREADS: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "indefsvm_n_threads", default=NOT_GIVEN
)


def _check_n_threads(value: Any, name: str) -> None:
    """Raise a ValueError naming ``name`` unless ``value`` is None, an int >= 1 or a pool map."""
    values = value.values() if isinstance(value, Mapping) else [value]
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(_KINDS))
        if unknown:
            raise ValueError(f"{name} has unknown pools {unknown}; expected keys among {_KINDS}.")
    for v in values:
        if v is not None and (isinstance(v, bool) or not isinstance(v, Integral) or v < 1):
            raise ValueError(
                f"{name} must be None, a positive integer or a mapping from {_KINDS} to "
                f"positive integers; got {value!r}."
            )


def _n_threads() -> tuple[Any, str]:
    """The ``n_threads`` in effect and where it comes from (for error messages)."""
    value = _N_THREADS.get()
    if value is NOT_GIVEN:
        return THREADS, "indefsvm.threads.THREADS"
    return value, "config_context(n_threads=...)"


def get_config() -> dict[str, Any]:
    """The thread settings in effect here: ``{"n_threads": ..., "max_threads": ...}``.

    ``n_threads`` comes from the innermost :func:`config_context` that sets it, else from
    :func:`set_config` (None: automatic); ``max_threads`` from the innermost block that sets it
    (None: no cap).
    """
    return {"n_threads": _n_threads()[0], "max_threads": _CAP.get()}


def set_config(*, n_threads: Any = NOT_GIVEN) -> None:
    """Set the process-wide explicit thread count of every fit (None: automatic).

    Stored in :data:`THREADS`; a :func:`config_context` block overrides it.

    Parameters
    ----------
    n_threads : int, mapping or None
        Threads of every pool, or ``{"blas": .., "engine": .., "openmp": ..}``.
    """
    if n_threads is NOT_GIVEN:
        return
    _check_n_threads(n_threads, "n_threads")
    globals()["THREADS"] = n_threads


@contextlib.contextmanager
def config_context(
    *, n_threads: Any = NOT_GIVEN, max_threads: Any = NOT_GIVEN
) -> Iterator[dict[str, Any]]:
    """Thread settings for a block; the previous ones are back on exit (also on an exception).

    Parameters
    ----------
    n_threads : int, mapping or None, optional
        Explicit threads of every pool in every fit inside (a mapping ``{"blas": 2, "engine":
        1, "openmp": 1}`` sets some pools; None: automatic). BLAS and OpenMP are limited at
        once (at most the usable cores) and Numba's count is set. Not given: unchanged.
    max_threads : int or None, optional
        At most this many threads in every pool (None: no cap); limits BLAS, OpenMP and Numba
        now and every automatic choice inside. An explicit ``n_threads`` is not capped. Not
        given: unchanged.

    Yields
    ------
    dict
        :func:`get_config` inside the block.

    Examples
    --------
    >>> import indefsvm.threads as T
    >>> with T.config_context(n_threads=1):
    ...     T.get_config()["n_threads"]
    1
    """
    if n_threads is not NOT_GIVEN:
        _check_n_threads(n_threads, "n_threads")
    if max_threads is not NOT_GIVEN and max_threads is not None:
        if (
            isinstance(max_threads, bool)
            or not isinstance(max_threads, Integral)
            or max_threads < 1
        ):
            raise ValueError(
                f"max_threads must be a positive integer or None; got {max_threads!r}."
            )
    with contextlib.ExitStack() as stack:
        if max_threads is not NOT_GIVEN:
            token = _CAP.set(None if max_threads is None else int(max_threads))
            stack.callback(_CAP.reset, token)
            if max_threads is not None:
                stack.enter_context(_current_controller().limit(limits=int(max_threads)))
                stack.enter_context(_numba_threads(int(max_threads)))
        if n_threads is not NOT_GIVEN:
            token = _N_THREADS.set(n_threads)
            stack.callback(_N_THREADS.reset, token)
            controller = _current_controller()
            for kind in ("blas", "openmp"):
                wanted = _explicit(kind)
                if wanted is not None:
                    wanted = min(wanted, usable_cores())
                    stack.enter_context(controller.limit(limits=wanted, user_api=kind))
            engine = _explicit("engine")
            if engine is not None and "numba" in sys.modules:
                numba = sys.modules["numba"]
                stack.enter_context(
                    _exact_numba_threads(min(engine, numba.config.NUMBA_NUM_THREADS))
                )
        yield get_config()


def _explicit(kind: str) -> int | None:
    """The user's explicit thread count for ``kind`` (``n_threads``), None when automatic."""
    setting, name = _n_threads()
    _check_n_threads(setting, name)
    value = setting.get(kind) if isinstance(setting, Mapping) else setting
    return None if value is None else int(value)


def solver_blas_threads() -> int:
    """BLAS threads of a solver's run.

    The explicit BLAS count of :func:`config_context` / :func:`set_config`, else 1: the solvers
    run many small products, for which one thread is fastest on a shared machine
    (docs/benchmarks.md).
    """
    explicit = _explicit("blas")
    return 1 if explicit is None else explicit


def task_threads() -> int:
    """Threads per pool of each task of a study (the workers' cap).

    ``max_threads`` of :func:`config_context`, else an integer ``n_threads``, else 1 (several
    tasks side by side, docs/benchmarks.md).
    """
    config = get_config()
    if config["max_threads"] is not None:
        return int(config["max_threads"])
    n_threads = config["n_threads"]
    if isinstance(n_threads, Integral) and not isinstance(n_threads, bool):
        return int(n_threads)
    return 1


def threads_for(n: int, kind: str, *, m: int | None = None) -> int:
    """Threads for one pool of a problem with ``n`` points (rank ``m`` when low-rank).

    Parameters
    ----------
    n : int
        Training points.
    kind : {"blas", "engine", "openmp"}
        The pool (module docstring).
    m : int, optional
        Rank of a low-rank (Nystroem) problem: the work is that of a dense problem of size
        ``(n m^2)^(1/3)``.

    Returns
    -------
    int
        :data:`THREADS` when set (at most the usable cores); otherwise 1 below
        ``CROSSOVER[kind]`` and the free usable cores above it (:func:`free_cores`; all usable
        cores when :data:`LOAD_AWARE` is False). The caller's own limits are applied on top by
        :func:`limit_threads`.
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}; got {kind!r}.")
    explicit = _explicit(kind)
    if explicit is not None:
        return min(explicit, usable_cores())
    if _effective_size(n, m) < CROSSOVER[kind]:
        return 1
    threads = free_cores() if LOAD_AWARE else usable_cores()
    cap = _CAP.get()
    return threads if cap is None else max(1, min(threads, cap))


@contextlib.contextmanager
def cap_threads(max_threads: int | None) -> Iterator[None]:
    """At most ``max_threads`` threads in every pool inside (None: no cap), the caller's after.

    ``config_context(max_threads=max_threads)`` (None here keeps an enclosing cap). For a process
    that runs several fits side by side (a study worker, a test session): limits BLAS and
    OpenMP now (``threadpoolctl``), and every automatic choice of :func:`threads_for` inside,
    including pools a fit loads later (LIBSVM's libgomp) and Numba's engine threads. An
    explicit ``n_threads`` is not capped.
    """
    if max_threads is None:
        yield
        return
    if isinstance(max_threads, bool) or not isinstance(max_threads, Integral) or max_threads < 1:
        raise ValueError(f"max_threads must be a positive integer or None; got {max_threads!r}.")
    with config_context(max_threads=int(max_threads)):
        yield


@functools.lru_cache(maxsize=2)
def _controller(libsvm_loaded: bool) -> Any:
    # Scanning the loaded libraries takes ~15 ms, so the controller is kept; it is rebuilt once
    # LIBSVM is imported (that loads the libgomp whose threads LIBSVM uses).
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _current_controller() -> Any:
    return _controller("libsvm.svm" in sys.modules)


def _current_threads(controller: Any, user_api: str) -> int | None:
    # The largest: a library that cannot be raised (an old OpenBLAS loaded with 1 thread) does
    # not lower the others.
    counts = [lib["num_threads"] for lib in controller.select(user_api=user_api).info()]
    return max(counts) if counts else None


@contextlib.contextmanager
def _numba_threads(threads: int) -> Iterator[None]:
    """Numba's thread count (thread-local) at most ``threads`` inside; the caller's one after."""
    numba = sys.modules.get("numba")
    if numba is None:
        yield
        return
    before = numba.get_num_threads()
    wanted = max(1, min(threads, before))
    if wanted != before:
        numba.set_num_threads(wanted)
    try:
        yield
    finally:
        if numba.get_num_threads() != before:
            numba.set_num_threads(before)


@contextlib.contextmanager
def limit_threads(n: int, *, m: int | None = None) -> Iterator[dict[str, int]]:
    """Run a fit of ``n`` points (rank ``m``) with the threads :func:`threads_for` picks.

    Each pool gets ``min(threads_for(n, kind), the caller's current setting)``: a limit the
    caller set (``threadpoolctl``, ``numba.set_num_threads``, the thread variables) is never
    raised, except by an explicit :data:`THREADS`. Everything is restored on exit.

    Parameters
    ----------
    n : int
        Training points.
    m : int, optional
        Rank of a low-rank problem (``n_components``).

    Yields
    ------
    dict
        The thread counts chosen, ``{"blas": .., "engine": .., "openmp": ..}``.
    """
    chosen = {kind: threads_for(n, kind, m=m) for kind in _KINDS}
    controller = _current_controller()
    with contextlib.ExitStack() as stack:
        for kind, user_api in (("blas", "blas"), ("openmp", "openmp")):
            current = _current_threads(controller, user_api)
            if current is None:
                continue
            wanted = chosen[kind] if _explicit(kind) is not None else min(chosen[kind], current)
            if wanted != current:
                stack.enter_context(controller.limit(limits=wanted, user_api=user_api))
            chosen[kind] = wanted
        token = _BLAS_INSIDE.set(chosen["blas"])
        stack.callback(_BLAS_INSIDE.reset, token)
        if _explicit("engine") is not None and "numba" in sys.modules:
            # An explicit setting may raise Numba's count (up to what it was started with).
            numba = sys.modules["numba"]
            chosen["engine"] = min(chosen["engine"], numba.config.NUMBA_NUM_THREADS)
            stack.enter_context(_exact_numba_threads(chosen["engine"]))
        else:
            stack.enter_context(_numba_threads(chosen["engine"]))
        yield chosen


@contextlib.contextmanager
def _exact_numba_threads(threads: int) -> Iterator[None]:
    numba = sys.modules["numba"]
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(before)


@contextlib.contextmanager
def limit_openmp(n: int) -> Iterator[int]:
    """LIBSVM's OpenMP threads for a training set of ``n`` points (import LIBSVM first).

    LIBSVM's library loads its libgomp when ``libsvm`` is imported, which may happen inside a
    fit after :func:`limit_threads` was entered; this limits that pool too (caller's limit kept,
    restored on exit).

    Yields
    ------
    int
        The OpenMP threads used.
    """
    wanted = threads_for(n, "openmp")
    controller = _current_controller()
    current = _current_threads(controller, "openmp")
    if current is None:
        yield wanted
        return
    if _explicit("openmp") is None:
        wanted = min(wanted, current)
    if wanted == current:
        yield wanted
        return
    with controller.limit(limits=wanted, user_api="openmp"):
        yield wanted


def blas_threads_inside() -> int | None:
    """BLAS threads the enclosing fit set (:func:`limit_threads`); None outside a fit."""
    return _BLAS_INSIDE.get()


def engine_threads(n: int) -> int:
    """Threads of the secular-root loop of an operator on ``n`` points (the caller's Numba cap).

    ``config_context(n_threads={"engine": k})`` sets it; see :func:`threads_for`.
    """
    threads = threads_for(n, "engine")
    numba = sys.modules.get("numba")
    if numba is not None and _explicit("engine") is None:
        threads = min(threads, numba.get_num_threads())
    return max(1, threads)


def _n_points(X: Any) -> int | None:
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        # A dask array with unknown chunk sizes has a NaN length (refused later, with the fix).
        return int(shape[0]) if math.isfinite(shape[0]) else None
    try:
        return len(X)
    except TypeError:
        return None


def threaded_fit(fit: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap an estimator's ``fit(X, ...)`` in :func:`limit_threads` for ``len(X)`` points.

    The rank is the estimator's ``n_components`` when it has one (low-rank fits).
    """

    @functools.wraps(fit)
    def wrapper(estimator: Any, X: Any = None, *args: Any, **kwargs: Any) -> Any:
        n = _n_points(X)
        if n is None:
            return fit(estimator, X, *args, **kwargs)
        m = getattr(estimator, "n_components", None)
        m = int(m) if isinstance(m, int) and not isinstance(m, bool) and m > 0 else None
        with limit_threads(n, m=m):
            return fit(estimator, X, *args, **kwargs)

    return wrapper
