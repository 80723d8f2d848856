"""``indefsvm.threads.config_context``: the one way to set thread counts for a block.

References: threadpoolctl's own report of the loaded libraries' thread counts, Numba's
``get_num_threads``, and the documented rule of :func:`indefsvm.threads.threads_for`.
"""

from __future__ import annotations

import contextlib
import threading
from unittest import mock

import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_info

import indefsvm.threads as T


def _blas() -> int:
    return max(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")


def _state():
    return T.get_config(), _blas(), numba.get_num_threads()


@pytest.mark.threads(2)
def test_threadpoolctl_reports_the_limit_inside_and_the_old_one_after():
    before = _state()
    # The marker's two BLAS threads (Numba's count stays what NUMBA_NUM_THREADS allows).
    assert before[:2] == ({"n_threads": None, "max_threads": None}, 2)
    with T.config_context(n_threads=1) as config:
        assert config == {"n_threads": 1, "max_threads": None}
        assert _blas() == 1 and numba.get_num_threads() == 1
    assert _state() == before
    with T.config_context(max_threads=1):
        assert _blas() == 1 and numba.get_num_threads() == 1
        assert T.get_config()["max_threads"] == 1
    assert _state() == before


@pytest.mark.threads(2)
def test_restores_on_exception():
    before = _state()
    with pytest.raises(RuntimeError, match="boom"):
        with T.config_context(n_threads=1, max_threads=1):
            assert _blas() == 1
            raise RuntimeError("boom")
    assert _state() == before


@pytest.mark.threads(2)
def test_blocks_nest(monkeypatch):
    monkeypatch.setattr(T, "usable_cores", lambda: 4)
    with T.config_context(n_threads={"blas": 2, "engine": 3}):
        assert (T.threads_for(10, "blas"), T.threads_for(10, "engine")) == (2, 3)
        with T.config_context(n_threads=1):
            assert _blas() == 1
            assert [T.threads_for(10, k) for k in ("blas", "engine", "openmp")] == [1, 1, 1]
            with T.config_context(max_threads=1):  # names max_threads only: n_threads kept
                assert T.get_config() == {"n_threads": 1, "max_threads": 1}
        assert T.get_config()["n_threads"] == {"blas": 2, "engine": 3}
        assert T.threads_for(10, "openmp") == 1  # left out: automatic (below the cross-over)
        assert _blas() == 2
    assert T.get_config() == {"n_threads": None, "max_threads": None}


def test_a_block_in_one_thread_does_not_change_another(monkeypatch):
    seen = {}
    inside, release = threading.Event(), threading.Event()

    def other():
        inside.wait(5)
        seen["other"] = T.get_config()["n_threads"]
        release.set()

    thread = threading.Thread(target=other)
    thread.start()
    with T.config_context(n_threads=1):
        inside.set()
        release.wait(5)
        seen["here"] = T.get_config()["n_threads"]
    thread.join()
    assert seen == {"other": None, "here": 1}


def test_bad_settings_name_the_setting():
    for bad in (0, -1, 1.5, True, "2", {"gpu": 1}, {"blas": 0}):
        with pytest.raises(ValueError, match="n_threads"):
            with T.config_context(n_threads=bad):
                pass
    with pytest.raises(ValueError, match="max_threads must be a positive integer or None"):
        with T.config_context(max_threads=0):
            pass
    assert T.get_config() == {"n_threads": None, "max_threads": None}


def test_set_config_is_the_process_setting(monkeypatch):
    monkeypatch.setattr(T, "usable_cores", lambda: 4)
    T.set_config(n_threads=3)
    try:
        assert T.threads_for(10, "blas") == 3 and T.get_config()["n_threads"] == 3
        assert T.THREADS == 3
        with T.config_context(n_threads=2):  # a block overrides the process setting
            assert T.threads_for(10, "blas") == 2
    finally:
        T.set_config(n_threads=None)
    assert T.THREADS is None and T.get_config()["n_threads"] is None


def test_cap_threads_is_config_context_max_threads(monkeypatch):
    monkeypatch.setattr(T, "usable_cores", lambda: 4)
    monkeypatch.setattr(T, "free_cores", lambda: 4)  # an idle machine
    with T.cap_threads(2):
        assert T.get_config()["max_threads"] == 2 and T.threads_for(10**5, "blas") == 2
    with T.cap_threads(None):
        assert T.get_config()["max_threads"] is None
    with T.cap_threads(max_threads=3):  # the decided name (0.2.0; was threads=)
        assert T.get_config()["max_threads"] == 3
    with pytest.raises(TypeError, match="threads"), T.cap_threads(threads=2):
        pass  # pragma: no cover


def _spy_accpm(monkeypatch):
    """The thread counts ACCPM hands to its BLAS limiter (the real limiter still runs)."""
    from indefsvm.proxy.solvers import accpm

    spy = mock.Mock(side_effect=accpm.blas_limit)
    monkeypatch.setattr(accpm, "blas_limit", spy)
    return spy


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_solvers_read_it(monkeypatch):
    from indefsvm.proxy.api import solve

    spy = _spy_accpm(monkeypatch)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    K, y = X @ X.T, np.where(X[:, 0] > 0, 1, -1)
    solve(K, y, method="accpm", max_iter=1)  # default: one BLAS thread
    with T.config_context(n_threads={"blas": 2}):
        solve(K, y, method="accpm", max_iter=1)
    assert [c.args for c in spy.call_args_list] == [(1,), (2,)]


def test_the_study_runner_reads_it(monkeypatch, tmp_path):
    from indefsvm.studies import runner

    rng = np.random.default_rng(0)
    np.save(tmp_path / "X.npy", rng.normal(size=(20, 2)))
    np.savetxt(tmp_path / "y.txt", np.r_[np.ones(10), -np.ones(10)], fmt="%d")
    (tmp_path / "s.toml").write_text(
        '[study]\nseed = 0\nouter_folds = 2\ninner_folds = 2\n\n[[datasets]]\nname = "d"\n'
        'features = "X.npy"\nlabels = "y.txt"\n\n[[kernels]]\nname = "linear"\n\n'
        '[[methods]]\nestimator = "SpectrumSVC"\ngrid = { C = [1.0] }\n'
    )
    seen = []

    class Stop(Exception):
        pass

    @contextlib.contextmanager
    def fake_backend(name, *, max_threads, **kwargs):
        seen.append(max_threads)
        raise Stop
        yield  # pragma: no cover

    monkeypatch.setattr(runner, "make_backend", fake_backend)

    def run(out, **kw):
        with pytest.raises(Stop):
            runner.run_study(tmp_path / "s.toml", tmp_path / out, progress=False, **kw)

    run("a")
    with T.config_context(max_threads=2):
        run("b")
    with T.config_context(n_threads=3):
        run("c")
    assert seen == [1, 2, 3]
