"""Size-aware thread defaults (issue 22, "Defaults that fit the size of the problem").

A fit must use one thread per pool (BLAS, LIBSVM's OpenMP, the Numba secular engine) on a small
problem, more only above the cross-over sizes and only on free cores, never more than the
caller allows, and leave the caller's settings as they were. The pools are observed from inside
the fit (threadpoolctl's report at the moment LIBSVM or the secular kernel runs), against the
caller's settings read before and after.
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import sigmoid_problem
from threadpoolctl import threadpool_info, threadpool_limits

import indefsvm.linalg.rank_one as rank_one
import indefsvm.threads as T
from indefsvm import IndefiniteSVC
from indefsvm.krein.models import KreinSquaredHingeSVC, KreinSVC
from indefsvm.proxy.baselines import SpectrumSVC

numba = pytest.importorskip("numba")
TWO_CORES = numba.config.NUMBA_NUM_THREADS >= 2


def _pools() -> list[tuple[str, str, int]]:
    return sorted((p["user_api"], p["filepath"], p["num_threads"]) for p in threadpool_info())


def _estimators():
    return [
        IndefiniteSVC(kernel="precomputed"),
        SpectrumSVC(kernel="precomputed"),
        KreinSVC(kernel="precomputed"),
        KreinSquaredHingeSVC(kernel="precomputed"),
    ]


@pytest.fixture
def two_threads_allowed(monkeypatch):
    """The caller allows 2 threads everywhere (as a user who set nothing on a 2-core machine)."""
    if not TWO_CORES:
        pytest.skip("needs a process that may use 2 cores")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    from libsvm import svmutil  # noqa: F401  (loads LIBSVM's libgomp, so it can be limited)

    limiter = threadpool_limits(limits=2)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    yield
    numba.set_num_threads(before)
    limiter.restore_original_limits()


@pytest.mark.skipif(not TWO_CORES, reason="needs 2 cores")
@pytest.mark.parametrize("index", range(4))
def test_fit_restores_the_callers_thread_settings(two_threads_allowed, monkeypatch, index):
    """After a fit, every BLAS/OpenMP pool and Numba's thread count are what the caller set,
    also when the fit changed them (BLAS/OpenMP lowered for a small fit; the secular engine
    forced to two threads by ``config_context(n_threads={"engine": 2})``)."""
    numba.set_num_threads(1)
    K, y = sigmoid_problem(40, 3)
    estimator = _estimators()[index]
    before = _pools()
    assert max(count for api, _, count in before if api == "blas") == 2
    with T.config_context(n_threads={"engine": 2}):
        inside = (_pools(), numba.get_num_threads())
        estimator.fit(K, y)
        assert (_pools(), numba.get_num_threads()) == inside
    assert _pools() == before
    assert numba.get_num_threads() == 1


def test_small_fits_run_single_threaded_inside(two_threads_allowed, monkeypatch):
    """At n = 40 the secular engine gets one thread and LIBSVM's OpenMP one thread, although the
    caller allows two (issue 22: default threads made such fits 14-100x slower)."""
    from libsvm import svmutil

    engine_requests, openmp_inside = [], []
    use_threads = rank_one._use_threads

    def spy_use_threads(n_threads):
        engine_requests.append(n_threads)
        return use_threads(n_threads)

    train = svmutil.svm_train

    def spy_train(*args, **kwargs):
        openmp_inside.append(
            [p["num_threads"] for p in threadpool_info() if p["user_api"] == "openmp"]
        )
        return train(*args, **kwargs)

    monkeypatch.setattr(rank_one, "_use_threads", spy_use_threads)
    monkeypatch.setattr(svmutil, "svm_train", spy_train)
    K, y = sigmoid_problem(40, 4)
    IndefiniteSVC(kernel="precomputed").fit(K, y)
    SpectrumSVC(kernel="precomputed").fit(K, y)
    assert engine_requests and set(engine_requests) == {1}
    assert openmp_inside and all(counts and max(counts) == 1 for counts in openmp_inside)


def test_large_fits_use_the_free_cores(two_threads_allowed, monkeypatch):
    """Above the cross-over the engine and BLAS get the free cores; on busy cores one thread."""

    monkeypatch.setitem(T.CROSSOVER, "engine", 30)
    monkeypatch.setitem(T.CROSSOVER, "blas", 30)
    requests: list[int] = []
    use_threads = rank_one._use_threads
    monkeypatch.setattr(rank_one, "_use_threads", lambda n: requests.append(n) or use_threads(n))
    K, y = sigmoid_problem(40, 5)
    monkeypatch.setattr(T, "free_cores", lambda: T.usable_cores())  # an idle machine
    with T.limit_threads(40) as chosen:
        assert chosen == {"blas": 2, "engine": 2, "openmp": 1}
    IndefiniteSVC(kernel="precomputed").fit(K, y)
    assert set(requests) == {2}
    requests.clear()
    # Both cores busy with other processes: one thread (a second one would wait for a core).
    monkeypatch.setattr(T, "free_cores", lambda: 1)
    with T.limit_threads(40) as chosen:
        assert chosen == {"blas": 1, "engine": 1, "openmp": 1}
    IndefiniteSVC(kernel="precomputed").fit(K, y)
    assert set(requests) == {1}


def test_threads_for_follows_size_cores_variables_and_explicit_settings(monkeypatch):
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)))
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.setattr(T, "_others_running", lambda: 0)
    monkeypatch.setattr(T, "CROSSOVER", {"blas": 100.0, "engine": 1000.0, "openmp": np.inf})
    assert [T.threads_for(n, "blas") for n in (10, 99, 100, 5000)] == [1, 1, 4, 4]
    assert [T.threads_for(n, "engine") for n in (999, 1000)] == [1, 4]
    assert T.threads_for(10**6, "openmp") == 1
    # low rank: the work of a dense (n m^2)^(1/3) problem
    assert T.threads_for(8000, "blas", m=10) == 1  # (8000 * 100)^(1/3) = 92.8
    assert T.threads_for(8000, "blas", m=12) == 4  # 104.8
    # other processes' runnable tasks take cores away, at least one thread is left
    monkeypatch.setattr(T, "_others_running", lambda: 3)
    assert T.threads_for(5000, "blas") == 1
    monkeypatch.setattr(T, "_others_running", lambda: 1)
    assert T.threads_for(5000, "blas") == 3
    monkeypatch.setattr(T, "LOAD_AWARE", False)
    assert T.threads_for(5000, "blas") == 4
    monkeypatch.setattr(T, "_others_running", lambda: None)  # no /proc: the usable cores
    monkeypatch.setattr(T, "LOAD_AWARE", True)
    assert T.threads_for(5000, "blas") == 4
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert T.threads_for(5000, "blas") == 2
    # a cap (study worker) lowers every automatic choice; an explicit setting wins over all
    with T.cap_threads(1):
        assert T.threads_for(5000, "engine") == 1
    monkeypatch.setattr(T, "THREADS", 3)
    assert T.threads_for(10, "openmp") == 2  # never more than the usable cores
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert T.threads_for(10, "openmp") == 3
    monkeypatch.setattr(T, "THREADS", {"engine": 2})
    assert (T.threads_for(10, "engine"), T.threads_for(10, "blas")) == (2, 1)
    for bad in (0, -1, 1.5, True, "2", {"gpu": 1}, {"blas": 0}):
        monkeypatch.setattr(T, "THREADS", bad)
        with pytest.raises(ValueError, match="THREADS"):
            T.threads_for(10, "blas")
    monkeypatch.setattr(T, "THREADS", None)
    with pytest.raises(ValueError, match="kind"):
        T.threads_for(10, "gpu")
    with pytest.raises(ValueError, match="positive integer"):
        with T.cap_threads(0):
            pass


def test_others_running_sees_a_busy_process():
    """``/proc/loadavg`` minus this process's own running threads counts a busy loop."""

    if T._others_running() is None:
        pytest.skip("no /proc/loadavg")
    loop = subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
    try:
        time.sleep(0.3)
        assert T._others_running() >= 1
    finally:
        loop.kill()
        loop.wait()


def test_others_combine_the_instant_count_and_the_load_average(monkeypatch):
    """A load that just started shows in the instant count, a bursty one in the average."""
    import os

    monkeypatch.setattr(T, "_own_load", lambda: 1.0)
    for now, average, expected in [(0, 1.2, 0), (0, 1.8, 1), (0, 3.1, 2), (2, 1.0, 2), (1, 0.0, 1)]:
        monkeypatch.setattr(T, "_others_running_now", lambda now=now: now)
        monkeypatch.setattr(os, "getloadavg", lambda average=average: (average, 0.0, 0.0))
        assert T._others_running() == expected
    monkeypatch.setattr(T, "_others_running_now", lambda: None)
    assert T._others_running() is None


def test_own_load_is_this_process_cpu_use(monkeypatch):
    """``_own_load``: CPU seconds per second of this process, averaged over about a minute."""
    import os

    clock = {"wall": 100.0, "cpu": 10.0}
    monkeypatch.setattr(T.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(os, "times", lambda: (clock["cpu"], 0.0, 0.0, 0.0, 0.0))
    monkeypatch.setattr(T, "_OWN_LOAD", [100.0, 10.0, None])
    assert T._own_load() == 1.0  # no time has passed: one busy thread assumed
    clock.update(wall=110.0, cpu=25.0)  # 1.5 cores over 10 s
    assert T._own_load() == pytest.approx(1.5)
    clock.update(wall=170.0, cpu=25.0)  # idle for a minute: the average decays by 1/e
    assert T._own_load() == pytest.approx(1.5 * np.exp(-1.0))


def test_explicit_engine_threads_override_still_works():
    """``config_context(n_threads={"engine": k})`` sets the secular loop's threads (the module
    override ``ENGINE_THREADS`` is gone: 0.2.0)."""
    import indefsvm.proxy.operators as proxy_module
    from indefsvm.proxy.operators import ProxyKernelOperator

    K, _ = sigmoid_problem(12, 6)
    assert not hasattr(proxy_module, "ENGINE_THREADS")
    assert ProxyKernelOperator(K, 0.5).engine_threads == 1  # small: one thread
    with T.config_context(n_threads={"engine": 2}):
        assert ProxyKernelOperator(K, 0.5).engine_threads == min(2, T.usable_cores())


def test_the_test_session_runs_one_thread_per_pool():
    """tests/conftest.py: no test process oversubscribes the cores (item 0, last bullet)."""
    import os

    assert [p for p in _pools() if p[0] in ("blas", "openmp") and p[2] != 1] == []
    assert numba.get_num_threads() == 1
    assert os.environ["OMP_NUM_THREADS"] == "1"


@pytest.mark.threads(2)
@pytest.mark.skipif(not TWO_CORES, reason="needs 2 cores")
def test_a_test_can_ask_for_threads():
    assert numba.get_num_threads() == 2
    # numpy's OpenBLAS (an older one loaded with 1 thread, e.g. scs's, may not grow)
    assert max(count for api, _, count in _pools() if api == "blas") == 2


def test_study_tasks_cap_every_pool(monkeypatch):
    """``harness.run_task(max_threads=1)``: no pool gets a second thread inside a task, also
    the Numba engine and LIBSVM's OpenMP, which a fit sizes itself (issue 22)."""
    from indefsvm.studies import harness

    monkeypatch.setattr(T, "free_cores", lambda: T.usable_cores())  # an idle machine
    monkeypatch.setattr(T, "CROSSOVER", {"blas": 1.0, "engine": 1.0, "openmp": 1.0})
    monkeypatch.setattr(T, "usable_cores", lambda: 2)
    seen = {}

    def fake_task(task, data, study):
        seen["inside"] = {kind: T.threads_for(10**4, kind) for kind in ("blas", "engine", "openmp")}
        return {}

    monkeypatch.setattr(harness, "_run_task", fake_task)
    harness.run_task(None, None, None, max_threads=1)
    assert seen["inside"] == {"blas": 1, "engine": 1, "openmp": 1}
    harness.run_task(None, None, None, max_threads=None)
    assert seen["inside"] == {"blas": 2, "engine": 2, "openmp": 2}


def test_every_compiled_function_is_cached():
    """Every ``@njit``/``@jit`` in the package caches its machine code (``cache=True``): the
    first fit in a fresh environment compiles for 8-35 s idle, a later process loads the cache
    (the package directory, or ``~/.cache/numba`` when that is read-only; docs/benchmarks.md)."""
    import ast
    from pathlib import Path

    import indefsvm

    uncached, found = [], 0
    for path in Path(indefsvm.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef):
                continue
            for decorator in node.decorator_list:
                call = decorator if isinstance(decorator, ast.Call) else None
                target = call.func if call else decorator
                name = (
                    target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                )
                if name not in ("njit", "jit", "vectorize", "guvectorize"):
                    continue
                found += 1
                cached = call is not None and any(
                    k.arg == "cache" and getattr(k.value, "value", None) is True
                    for k in call.keywords
                )
                if not cached:
                    uncached.append(f"{path.name}:{node.lineno} {node.name}")
    assert found >= 30
    assert uncached == []
