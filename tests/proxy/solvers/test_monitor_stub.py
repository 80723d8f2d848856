"""Contract of ``indefsvm.proxy.solvers._monitor.SolverMonitor`` with a stub problem, in
milliseconds.

Written for the mutation run of issue 15 (survivors:
``tools/mutation_survivors/mutation_survivors_solvers_monitor.txt``): the stopping
rule (relative gap against ``max(1, |f - f(0)|)``, equality included), the order of the stopping
reasons, which offers may raise the lower bound, the LIBSVM schedule, ``conclude`` and the
messages and warnings of ``finish``. The stub counts every call, so the tests need no solver.
"""

from __future__ import annotations

import logging
import os
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from indefsvm.proxy.result import HISTORY_KEYS
from indefsvm.proxy.solvers import SolverMonitor


class StubProblem:
    kind = "classification"
    classes = np.array([-1, 1])

    def __init__(self, baseline=10.0, libsvm_bounds=()):
        self.baseline_objective = baseline
        self.resets = 0
        self.libsvm_calls = []
        self._bounds = list(libsvm_bounds)

    def reset_warm_start(self):
        self.resets += 1

    def libsvm_upper_bound(self, best, tol):
        self.libsvm_calls.append((best, tol))
        return self._bounds.pop(0), None, None

    def kernel_from_state(self, state):
        return np.eye(2) * state


def ev(objective, upper_bound, state=1.0):
    return SimpleNamespace(
        objective=objective, upper_bound=upper_bound, alpha=np.array([objective, 0.0]),
        state=state, intercept=0.5,
    )  # fmt: skip


def monitor(problem=None, **kw):
    kw = {"method": "pg", "tol": 1e-3, "max_iter": 100, **kw}
    return SolverMonitor(problem or StubProblem(), **kw)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tol": -1.0}, r"^tol must be a finite non-negative number; got -1\.0\.$"),
        ({"tol": np.nan}, r"^tol must be a finite non-negative number; got nan\.$"),
        ({"max_iter": 0}, r"^max_iter must be a positive integer \(e\.g\. 10000\); got 0\.$"),
        ({"libsvm_every": 0}, r"^libsvm_every must be None or a positive integer; got 0\.$"),
        ({"max_time": 0.0}, r"^max_time must be None or a number > 0 \(seconds\); got 0\.0\.$"),
        ({"max_time": "1"}, r"^max_time must be None or a number > 0 \(seconds\); got '1'\.$"),
        (
            {"libsvm_tol": 0.0},
            r"^libsvm_tol must be a finite number > 0 \(LIBSVM's -e, e\.g\. 1e-3\); got 0\.0\.$",
        ),
        ({"libsvm_tol": np.inf}, r"^libsvm_tol must be a finite number > 0"),
        ({"libsvm_tol": "1"}, r"^libsvm_tol must be a finite number > 0"),
    ],
)
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        monitor(**kwargs)


def test_valid_edge_settings_are_accepted():
    m = monitor(tol=0.0, max_iter=1, libsvm_every=1, max_time=1e-9, libsvm_tol=1e-9)
    assert m.tol == 0.0 and m.max_iter == 1 and m.libsvm_every == 1 and m.libsvm_tol == 1e-9
    assert monitor(libsvm_every=None).libsvm_every is None


def test_a_solve_starts_cold_and_reads_the_baseline():
    p = StubProblem(baseline=3.5)
    m = monitor(p)
    assert p.resets == 1 and m.baseline == 3.5
    assert m.objective == -np.inf and m.upper_bound == np.inf and m.scale == 1.0
    assert m.n_iter == 0 and m.n_evaluations == 0 and m.status is None


def test_bounds_offers_and_the_relative_gap():
    m = monitor(StubProblem(baseline=10.0))
    m.offer(ev(13.0, 20.0))
    assert m.objective == 13.0 and m.upper_bound == 20.0 and m.gap == 7.0
    assert m.scale == 3.0 and m.relative_gap == pytest.approx(7.0 / 3.0)
    m.offer(ev(16.0, 25.0), feasible=False)  # bound kept only if lower; objective not taken
    assert m.objective == 13.0 and m.upper_bound == 20.0
    m.offer(ev(12.0, 18.0))  # lower objective: best stays, lower bound taken
    assert m.objective == 13.0 and m.upper_bound == 18.0 and m.best.objective == 13.0
    m.offer(ev(14.0, 19.0))
    assert m.objective == 14.0 and m.upper_bound == 18.0 and m.n_evaluations == 4
    m.offer_upper_bound(17.0)
    m.offer_upper_bound(17.5)
    assert m.upper_bound == 17.0
    m2 = monitor(StubProblem(baseline=10.0))
    m2.offer(ev(10.5, 11.0))  # |f - f(0)| < 1: scale 1
    assert m2.scale == 1.0 and m2.relative_gap == pytest.approx(0.5)
    m3 = monitor(StubProblem(baseline=10.0))
    m3.offer(ev(4.0, 5.0))  # f below f(0): absolute value
    assert m3.scale == 6.0


def test_converged_when_the_relative_gap_equals_tol():
    m = monitor(StubProblem(baseline=0.0), tol=0.25)
    m.offer(ev(4.0, 5.0))  # gap 1, scale 4: exactly tol
    assert m.end_iteration() is True and m.status == "converged"


def test_stopping_reasons_and_their_order():
    seen = []

    def cb(info):
        seen.append(info)
        return info["iteration"] == 3

    m = monitor(StubProblem(baseline=0.0), tol=1e-6, max_iter=5, callback=cb)
    m.offer(ev(4.0, 5.0))
    assert m.end_iteration(extra_key=7) is False
    assert seen[0]["iteration"] == 1 and seen[0]["objective"] == 4.0
    assert seen[0]["upper_bound"] == 5.0 and seen[0]["gap"] == 1.0
    assert seen[0]["extra_key"] == 7 and seen[0]["time"] >= 0.0
    np.testing.assert_array_equal(seen[0]["alpha"], [4.0, 0.0])
    assert m.end_iteration() is False
    assert m.end_iteration() is True and m.status == "callback" and m.n_iter == 3
    # max_iter at exactly k == max_iter
    m = monitor(StubProblem(baseline=0.0), tol=1e-6, max_iter=2)
    m.offer(ev(4.0, 5.0))
    assert m.end_iteration() is False and m.status is None
    assert m.end_iteration() is True and m.status == "max_iter"
    # converged wins over the callback and the limits
    m = monitor(StubProblem(baseline=0.0), tol=1.0, max_iter=1, callback=lambda i: True)
    m.offer(ev(4.0, 5.0))
    assert m.end_iteration() and m.status == "converged"
    # callback before max_time before max_iter
    m = monitor(StubProblem(), tol=1e-9, max_iter=1, max_time=1e-9, callback=lambda i: True)
    m.offer(ev(4.0, 5.0))
    assert m.end_iteration() and m.status == "callback"
    m = monitor(StubProblem(), tol=1e-9, max_iter=1, max_time=1e-9, callback=lambda i: None)
    m.offer(ev(4.0, 5.0))
    assert m.end_iteration() and m.status == "max_time"
    assert m.out_of_time() and not monitor(max_time=1e6).out_of_time()
    assert not monitor().out_of_time()
    # a callback with no feasible point yet sees alpha None
    m = monitor(callback=lambda i: seen.append(i))
    m.end_iteration()
    assert seen[-1]["alpha"] is None


def test_start_time_is_taken_from_the_caller():
    import time

    m = monitor(start_time=time.perf_counter() - 100.0, max_time=50.0)
    assert m.elapsed() >= 100.0 and m.out_of_time()


def test_libsvm_schedule_keeps_the_smallest_bound():
    p = StubProblem(baseline=0.0, libsvm_bounds=[9.0, 7.0, 8.0, 6.5])
    m = monitor(p, tol=1e-9, max_iter=100, libsvm_every=2, libsvm_tol=0.01)
    m.offer(ev(4.0, 10.0))
    for _ in range(6):
        m.end_iteration()
    assert [tol for _, tol in p.libsvm_calls] == [0.01, 0.01, 0.01]
    assert p.libsvm_calls[0][0] is m.best
    assert m.libsvm_upper_bound == 7.0 and m.upper_bound == 7.0
    with pytest.warns(ConvergenceWarning):  # gap 2.5 of 4: not converged
        res = m.finish()  # final check at the end
    assert res.libsvm_upper_bound == 6.5 and res.upper_bound == 6.5
    # each scheduled check's own bound in its row (the 8.0 of the last row gives way to the final
    # check's 6.5)
    hist = res.history["libsvm_upper_bound"]
    assert np.isnan(hist[0]) and hist[1] == 9.0 and hist[3] == 7.0 and hist[-1] == 6.5
    assert res.history["upper_bound"][-1] == 6.5 and res.history["gap"][-1] == 2.5


def test_final_libsvm_check_can_certify():
    p = StubProblem(baseline=0.0, libsvm_bounds=[4.001])
    m = monitor(p, tol=1e-3, max_iter=1, libsvm_every=10)
    m.offer(ev(4.0, 10.0))
    assert m.end_iteration() and m.status == "max_iter"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = m.finish()
    assert res.status == "converged" and res.upper_bound == 4.001
    assert res.message == "certified relative gap 0.00025 <= tol 0.001"
    m = monitor(StubProblem(baseline=0.0, libsvm_bounds=[4.5]), max_iter=1, libsvm_every=10)
    m.offer(ev(4.0, 10.0))
    m.end_iteration()
    with pytest.warns(ConvergenceWarning):
        assert m.finish(final_libsvm=False).upper_bound == 10.0


def test_conclude_checks_libsvm_only_when_needed():
    p = StubProblem(baseline=0.0, libsvm_bounds=[4.002])
    m = monitor(p, tol=1e-3)
    m.offer(ev(4.0, 10.0))
    m.conclude("empty localization set")
    assert len(p.libsvm_calls) == 1 and m.status == "converged"
    assert m.note == "empty localization set"
    p = StubProblem(baseline=0.0, libsvm_bounds=[6.0])
    m = monitor(p, tol=1e-3)
    m.offer(ev(4.0, 10.0))
    m.conclude("rule", otherwise="solver_error")
    assert m.status == "solver_error" and m.upper_bound == 6.0
    p = StubProblem(baseline=0.0)
    m = monitor(p, tol=1e-3)
    m.offer(ev(4.0, 4.001))
    m.conclude()
    assert p.libsvm_calls == [] and m.status == "converged" and m.note is None
    m = monitor(p, tol=1e-3)
    m.offer(ev(4.0, 10.0))
    m.conclude(check_libsvm=False)
    assert p.libsvm_calls == [] and m.status == "stalled"
    m = monitor(p)
    m.conclude()  # no feasible point: no check, not converged
    assert m.status == "stalled" and p.libsvm_calls == []
    m = monitor(p)
    m.stop("numerical_error", "first")
    m.conclude("second")
    m.stop("stalled")
    assert m.status == "numerical_error" and m.note == "first"
    m.stop("stalled", "third")
    assert m.note == "third"


@pytest.mark.parametrize(
    ("status", "message", "warns"),
    [
        ("converged", "certified relative gap 0.25 <= tol 0.5 (why)", False),
        (
            "max_iter",
            "iteration limit 7 reached before the certified relative gap reached tol: "
            "relative gap 0.25 > 0.5 (why)",
            True,
        ),
        ("max_time", "time limit 3.0s reached with relative gap 0.25 > tol 0.5 (why)", True),
        ("callback", "stopped by the callback with relative gap 0.25 (why)", False),
        ("stalled", "why", True),
        ("numerical_error", "why", True),
        ("solver_error", "why", True),
    ],
)
def test_finish_messages_and_warnings(status, message, warns):
    p = StubProblem(baseline=0.0)
    m = monitor(p, tol=0.5, max_iter=7, max_time=3.0)
    m.offer(ev(4.0, 5.0, state=2.0))
    m.end_iteration()
    m.status = status
    m.note = "why"
    if warns:
        with pytest.warns(ConvergenceWarning) as rec:
            res = m.finish(info={"k": 1})
        (w,) = rec
        assert str(w.message) == (
            f"pg: {message}. The result is NOT certified optimal (certified relative gap 0.25 "
            "> tol 0.5); increase max_iter/max_time, loosen tol or try another method."
        )
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res = m.finish(info={"k": 1})
    assert res.message == message and res.status == status
    assert res.info == {"k": 1} and res.method == "pg" and res.problem == "classification"
    np.testing.assert_array_equal(res.kernel, 2.0 * np.eye(2))
    np.testing.assert_array_equal(res.alpha, [4.0, 0.0])
    assert res.alpha is not m.best.alpha
    assert (res.objective, res.upper_bound, res.gap, res.relative_gap) == (4.0, 5.0, 1.0, 0.25)
    assert res.intercept == 0.5 and res.n_iter == 1 and res.n_evaluations == 1
    assert res.baseline_objective == 0.0 and res.time >= 0.0
    np.testing.assert_array_equal(res.classes, [-1, 1])
    assert set(res.history) == set(HISTORY_KEYS) and res.history["iteration"].tolist() == [1.0]
    assert np.isnan(res.libsvm_upper_bound)


def test_finish_without_status_is_max_iter_and_without_note_has_plain_message():
    m = monitor(StubProblem(baseline=0.0), tol=0.5, max_iter=7)
    m.offer(ev(4.0, 10.0))
    with pytest.warns(ConvergenceWarning):
        res = m.finish()
    assert res.status == "max_iter" and res.info == {}
    assert res.message.startswith("iteration limit 7 reached") and not res.message.endswith(")")
    assert res.history["iteration"].shape == (0,)


def test_verbose_progress_lines(caplog):
    p = StubProblem(baseline=0.0, libsvm_bounds=[9.0, 8.0])
    with caplog.at_level(logging.INFO, logger="indefsvm.proxy.solvers"):
        m = monitor(p, tol=1e-9, max_iter=4, verbose=2, libsvm_every=3)
        m.offer(ev(4.0, 10.0))
        while not m.end_iteration():
            pass
        with pytest.warns(ConvergenceWarning):
            m.finish()
    lines = [r.getMessage() for r in caplog.records]
    # header once; iterations 1 (first), 2 (every 2), 3 (LIBSVM check), 4; final line + status
    assert lines[0].split() == [
        "[pg]", "iter", "objective", "upper", "bound", "gap", "rel", "gap", "libsvm", "UB", "time",
    ]  # fmt: skip
    iters = [int(line.split()[1]) for line in lines[1:-1]]
    assert all(line.startswith("[pg] ") for line in lines)
    assert iters == [1, 2, 3, 4, 4]
    assert lines[3].split()[6] == "9" and lines[1].split()[6] == "-"
    assert lines[-1].startswith("[pg] max_iter: iteration limit 4 reached")
    assert monitor(verbose=True).verbose == 50 and monitor(verbose=False).verbose == 0


def test_progress_bar_tracks_the_log_gap(monkeypatch):
    m = monitor(StubProblem(baseline=0.0), tol=1e-3, progress=True)
    m.offer(ev(1.0, 1.1))  # relative gap 0.1
    m.end_iteration()
    assert m._bar.n == 0.0
    m.offer_upper_bound(1.01)  # 0.01: half-way on the log scale from 0.1 to 1e-3
    m.end_iteration()
    assert m._bar.n == pytest.approx(50.0, abs=0.1)
    m.offer_upper_bound(1.0005)
    m.end_iteration()
    assert m._bar.n == 100.0 and m.status == "converged"
    m.finish()
    assert m._bar is None


def test_verbose_attaches_a_console_handler_only_when_logging_is_unconfigured(monkeypatch):
    from indefsvm.utils.log import StderrHandler

    root, pkg = logging.getLogger(), logging.getLogger("indefsvm")
    sub = logging.getLogger("indefsvm.proxy.solvers")
    levels = (root.level, pkg.level)
    monkeypatch.setattr(root, "handlers", [])  # pytest's capture handlers, put back afterwards
    monkeypatch.setattr(pkg, "handlers", [])
    monkeypatch.setattr(sub, "handlers", [])
    try:
        pkg.setLevel(logging.NOTSET)
        root.setLevel(logging.WARNING)
        monitor(verbose=False)
        assert pkg.handlers == []
        monitor(verbose=3)
        assert [type(h) for h in pkg.handlers] == [StderrHandler] and pkg.level == logging.INFO
        monitor(verbose=True)  # no second handler
        assert len(pkg.handlers) == 1
        # A configured package level at or below INFO is kept (DEBUG stays DEBUG).
        pkg.handlers = []
        pkg.setLevel(logging.DEBUG)
        monitor(verbose=True)
        assert pkg.level == logging.DEBUG and len(pkg.handlers) == 1
        # Logging configured by the application (a root handler, INFO enabled): nothing attached.
        pkg.handlers = []
        pkg.setLevel(logging.INFO)
        root.handlers = [logging.NullHandler()]
        monitor(verbose=True)
        assert pkg.handlers == []
    finally:
        root.setLevel(levels[0])
        pkg.setLevel(levels[1])


# ------------------------------------------------ written for the survivors of the first run
def test_defaults():
    m = monitor()
    assert m.libsvm_tol == 1e-3 and m.verbose == 0 and m._bar is None
    assert m.elapsed() < 100.0  # seconds since the monitor was made, not a clock reading


def test_progress_bar_settings_and_edge_cases():
    m = monitor(StubProblem(baseline=0.0), tol=1e-3, progress=True)
    bar = m._bar
    assert (bar.total, bar.desc, bar.unit, bar.leave, bool(bar.dynamic_ncols)) == (
        100, "pg", "%", False, True,
    )  # fmt: skip
    m.end_iteration()  # no feasible point yet: infinite gap, 0 %
    assert bar.n == 0.0
    m.offer(ev(1.0, 1.003))  # first relative gap 3e-3 < 10 tol: the scale starts at 10 tol
    m.end_iteration()
    assert bar.n == 52.3  # 100 log(1e-2 / 3e-3) / log(1e-2 / 1e-3), one decimal
    assert bar.postfix == "rel gap 3.00e-03"
    m.offer_upper_bound(1.0)  # gap exactly 0
    m.end_iteration()
    assert bar.n == 100.0
    m2 = monitor(StubProblem(baseline=0.0), tol=0.0, progress=True)
    m2.offer(ev(1.0, 1.0))  # gap 0 with tol 0: converged, 100 %
    m2.end_iteration()
    assert m2._bar.n == 100.0
    # The relative gap can grow when |f - f(0)| shrinks; the bar never goes below 0 %.
    m3 = monitor(StubProblem(baseline=0.0), tol=1e-3, progress=True)
    m3.offer(ev(-10.0, 5.0))  # 15 / 10
    m3.end_iteration()
    m3.offer(ev(-1.0, 5.0))  # 6 / 1
    m3.end_iteration()
    assert m3._bar.n == 0.0


def test_conclude_and_finish_at_a_gap_exactly_tol():
    p = StubProblem(baseline=0.0)
    m = monitor(p, tol=0.25)
    m.offer(ev(4.0, 5.0))
    m.conclude()
    assert p.libsvm_calls == [] and m.status == "converged"
    p = StubProblem(baseline=0.0, libsvm_bounds=[5.0])
    m = monitor(p, tol=0.25, max_iter=1, libsvm_every=10)
    m.offer(ev(4.0, 10.0))
    m.end_iteration()
    assert m.finish().status == "converged"  # final check brings the gap to exactly tol


def test_current_objective_is_recorded():
    m = monitor(StubProblem(baseline=0.0), tol=1e-9)
    m.offer(ev(4.0, 10.0))
    m.end_iteration(current_objective=3.5)
    m.end_iteration()
    with pytest.warns(ConvergenceWarning):  # gap 6 of 4: not converged
        res = m.finish()
    # the solver's current objective when it gives one, else the best
    assert list(res.history["objective"]) == [3.5, 4.0]
    assert list(res.history["best_objective"]) == [4.0, 4.0]


def test_finish_edge_cases():
    m = monitor()
    with pytest.raises(AssertionError, match=r"^the solver never offered a feasible evaluation$"):
        m.finish()
    p = StubProblem(baseline=3.0, libsvm_bounds=[9.0])
    del_classes = type("NoClasses", (), {})()
    for name in ("baseline_objective", "reset_warm_start", "libsvm_upper_bound",
                 "kernel_from_state", "kind"):  # fmt: skip
        setattr(del_classes, name, getattr(p, name))
    m = monitor(del_classes, libsvm_every=5)
    m.offer(ev(4.0, 10.0))
    with pytest.warns(ConvergenceWarning):
        res = m.finish()  # final LIBSVM check without any iteration row
    assert res.classes is None and res.baseline_objective == 3.0 and res.time > 0.0
    assert res.upper_bound == 9.0 and res.history["iteration"].shape == (0,)
    m = monitor(StubProblem(baseline=0.0))
    m.offer(ev(4.0, 10.0))
    m.stop("stalled")
    with pytest.warns(ConvergenceWarning):
        assert m.finish().message == "stalled"


def _solver(m):
    return m.finish()


def test_convergence_warning_points_at_the_solvers_caller():
    if "MUTANT_UNDER_TEST" in os.environ:
        pytest.skip("mutmut's trampoline adds call frames; stacklevel is checked outside mutmut")
    m = monitor(StubProblem(baseline=0.0), max_iter=1)
    m.offer(ev(4.0, 10.0))
    m.end_iteration()
    with pytest.warns(ConvergenceWarning) as rec:
        _solver(m)  # stacklevel 3: finish -> solver -> this line
    assert rec[0].filename == __file__


def test_equal_objectives_keep_the_first_point():
    m = monitor()
    first = ev(4.0, 10.0)
    m.offer(first)
    m.offer(ev(4.0, 9.0))
    assert m.best is first and m.upper_bound == 9.0


class CompletingProblem(StubProblem):
    """Stub whose full evaluation at ``alpha`` has a given objective and bound."""

    def __init__(self, full_objective, full_bound):
        super().__init__()
        self.full = (full_objective, full_bound)
        self.evaluated = []

    def evaluate(self, alpha):
        self.evaluated.append(np.array(alpha))
        out = ev(self.full[0], self.full[1])
        out.smooth_objective = self.full[0] + 0.25
        out.partial = False
        return out


def _partial(objective, upper_bound):
    out = ev(objective, upper_bound)
    out.smooth_objective = objective + 0.5
    out.partial = True
    return out


@pytest.mark.parametrize("full_objective", [0.9999, 1.0001])
def test_complete_best_replaces_a_partial_best_by_its_full_evaluation(full_objective):
    # the best point was offered objective-only (partial): complete_best evaluates it fully
    # at the same alpha, takes its certified bound and keeps the larger of the two objectives
    # (the lower bound never decreases)
    p = CompletingProblem(full_objective, 1.5)
    m = monitor(p)
    best = _partial(1.0, 3.0)
    m.offer(best)
    out = m.complete_best()
    assert len(p.evaluated) == 1 and np.array_equal(p.evaluated[0], best.alpha)
    assert out is m.best and out is not best and out.partial is False
    assert m.upper_bound == 1.5
    if full_objective < 1.0:
        assert out.objective == 1.0 and out.smooth_objective == 1.5
    else:
        assert out.objective == 1.0001 and out.smooth_objective == 1.0001 + 0.25
    assert m.complete_best() is out and len(p.evaluated) == 1  # full now: not evaluated again


def test_complete_best_leaves_a_full_best_and_no_best_alone():
    p = CompletingProblem(5.0, 0.0)
    m = monitor(p)
    assert m.complete_best() is None
    full = _partial(1.0, 3.0)
    full.partial = False
    m.offer(full)
    assert m.complete_best() is full and p.evaluated == [] and m.upper_bound == 3.0
    plain = ev(2.0, 2.5)  # an evaluation without the attribute counts as full
    m.offer(plain)
    assert m.complete_best() is plain and p.evaluated == []


# A converged gap must be certified when f(0) swamps the alpha-dependent part: what the monitor
# asks of the problem and which bounds it trusts (stub problems).


class _Stub:
    """A problem whose f(0) is 1e12 (only what the monitor reads)."""

    baseline_objective = 1e12
    n = 1

    def reset_warm_start(self):
        pass

    def set_excess_accuracy(self, tol):
        pass


class _Ev:
    def __init__(self, objective, upper_bound):
        self.objective = objective
        self.upper_bound = upper_bound
        self.alpha = np.zeros(1)


def test_monitor_refuses_to_certify_a_gap_held_by_a_huge_constant():
    # Values that hold f(0) = 1e12 without their excess: their difference is only known to
    # ~1e-4, so a computed gap of 0 is not a certificate at tol 1e-6.
    mon = SolverMonitor(_Stub(), method="stub", tol=1e-6, max_iter=10)
    mon.offer(_Ev(1e12 + 1.0, 1e12 + 1.0))
    assert mon.gap == 0.0 and mon.gap_error > 1e-6
    assert mon.end_iteration() is True and mon.status == "precision_limit"
    # with the excess formed without f(0) (as problems do) the same gap is certified
    mon = SolverMonitor(_Stub(), method="stub", tol=1e-6, max_iter=10)
    ev = _Ev(1e12 + 1.0, 1e12 + 1.0)
    ev.objective_excess, ev.upper_excess = 1.0, 1.0 + 1e-9
    ev.objective_error = ev.upper_error = 1e-15
    mon.offer(ev)
    assert mon.end_iteration() is True and mon.status == "converged"


def test_monitor_prefers_a_precise_bound_to_a_noisy_lower_one():
    mon = SolverMonitor(_Stub(), method="stub", tol=1e-6, max_iter=10)
    ev = _Ev(1e12 + 1.0, 1e12 + 1.0)
    ev.objective_excess, ev.upper_excess = 1.0, 1.0 + 1e-9
    ev.objective_error = ev.upper_error = 1e-15
    mon.offer(ev)
    # an absolute bound 1e-9 lower in value, but known only to ~1e-4: not taken
    mon.offer_upper_bound(1e12 + 1.0)
    assert mon.upper_excess == 1.0 + 1e-9 and mon.gap_error < 1e-14


class _RecordingStub(_Stub):
    baseline_objective = 0.0

    def __init__(self):
        self.asked = []

    def set_excess_accuracy(self, tol):
        self.asked.append(tol)


def test_monitor_asks_accuracy_that_follows_the_gap_and_never_below_tol():
    """With the gap far above tol (always with tol = 0) the excesses need only be accurate to a
    fraction of the gap; the request tightens as the gap shrinks and never drops below tol."""
    for tol in (0.0, 1e-6):
        stub = _RecordingStub()
        mon = SolverMonitor(stub, method="stub", tol=tol, max_iter=100)
        assert stub.asked == [tol]
        for gap in (1.0, 0.5, 1e-3, 1e-9):
            ev = _Ev(-1.0, -1.0 + gap)
            ev.objective_excess, ev.upper_excess = -1.0, -1.0 + gap
            ev.objective_error = ev.upper_error = 0.0
            mon.offer(ev)
            mon.end_iteration()
        # gap 0.5 is within a factor 10 of the request made at gap 1: not passed on
        wanted = [max(tol, 1e-2 * g) for g in (1.0, 1e-3, 1e-9)]
        assert stub.asked[1:] == pytest.approx([w for w in wanted if w > tol] + [tol] * (tol > 0))
        assert min(stub.asked) >= tol


# -- certified values with their rounding error (theory.md §10) -------------------------------


def exact(objective_excess, upper_excess, *, objective_error=0.0, upper_error=None, baseline=0.0):
    """An evaluation carrying its excesses over f(0) and their error bounds, as the registered
    problems' evaluations do (``upper_error=None``: the field is absent)."""
    e = ev(baseline + objective_excess, baseline + upper_excess)
    e.objective_excess, e.objective_error = objective_excess, objective_error
    e.upper_excess = upper_excess
    if upper_error is not None:
        e.upper_error = upper_error
    return e


@pytest.mark.parametrize(
    ("gap", "error", "lost"),
    [
        (0.5, 0.3, True),  # gap at tol, its error above half of it: rounding, not the solver
        (0.5, 0.25, False),  # error exactly half: not lost (strict)
        (0.0, 0.3, False),  # certified: gap + error <= tol * scale
        (0.75, 0.3, False),  # the gap itself is above tol: the solver's business
    ],
)
def test_precision_lost_compares_the_gap_and_its_error_with_tol_times_scale(gap, error, lost):
    m = monitor(StubProblem(baseline=0.0), tol=0.25)
    m.offer(exact(2.0, 2.0 + gap, upper_error=error))  # scale = max(1, |2|) = 2, tol * scale = 0.5
    assert (m.gap, m.gap_error, m.scale) == (gap, error, 2.0)
    assert m.precision_lost() is lost


def test_conclude_and_finish_report_a_precision_limit():
    m = monitor(StubProblem(baseline=0.0), tol=0.25)
    m.offer(exact(2.0, 2.5, upper_error=0.3))
    m.conclude("empty localization set", check_libsvm=False)
    assert m.status == "precision_limit" and m.note == "empty localization set"
    with pytest.warns(ConvergenceWarning) as caught:
        res = m.finish(final_libsvm=False)
    assert res.status == "precision_limit" and res.gap_error == 0.3
    expected = (
        "pg: the certified gap cannot be resolved to tol in double precision: relative gap 0.25 "
        "with a rounding error bound of 0.15 (relative) > tol 0.25 / 2, so the gap is not "
        "certified below tol (e.g. f(0) = rho ||(K0)_-||_F^2 or the kernel's scale dwarfs the "
        "alpha-dependent part of the objective; rescale the kernel, lower rho or loosen tol) "
        "(empty localization set). The result is NOT certified optimal: loosen tol, or rescale "
        "the kernel / lower rho."
    )
    assert [str(w.message) for w in caught] == [expected]


def test_an_error_bound_without_its_field_is_zero_and_an_infinite_value_has_none():
    m = monitor(StubProblem(baseline=0.0), tol=0.25)
    m.offer(exact(2.0, 2.5))  # upper_excess given, upper_error absent
    assert m.gap_error == 0.0
    m2 = monitor(StubProblem(baseline=0.0))
    m2.offer(ev(-np.inf, np.inf))  # no excess fields, nothing finite
    assert (m2.upper_error, m2.best_error) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("gap", "error", "status"),
    [
        (-1.0, 0.125, "numerical_error"),  # the bound lies below the objective beyond rounding
        (-0.125, 0.125, "converged"),  # within its rounding error: fine
        (0.0625, 0.125, "converged"),
    ],
)
def test_an_upper_bound_below_the_objective_beyond_rounding_is_a_numerical_error(
    gap, error, status
):
    m = monitor(StubProblem(baseline=0.0), tol=0.25)
    m.offer(exact(2.0, 2.0 + gap, upper_error=error))
    m.conclude("rule", check_libsvm=False)
    assert m.status == "converged"
    if status == "converged":
        res = m.finish(final_libsvm=False)
        assert res.status == "converged"
        return
    message = r"^pg: the best upper bound lies 1 below the objective, beyond its rounding error"
    with pytest.warns(ConvergenceWarning, match=message + r" bound 0\.125\. The result is NOT"):
        res = m.finish(final_libsvm=False)
    assert res.status == "numerical_error"
    assert res.message == (
        "the best upper bound lies 1 below the objective, beyond its rounding error bound 0.125"
    )


class ExcessStubProblem(StubProblem):
    """A problem that forms the LIBSVM bound's excess over f(0) itself (as registered ones do)."""

    def __init__(self, bound, **kw):
        super().__init__(**kw)
        self.bound = bound
        self.excess_calls = []

    def libsvm_bound_excess(self, best, tol):
        self.excess_calls.append((best, tol))
        return self.bound

    def libsvm_upper_bound(self, best, tol):  # pragma: no cover - must not be used
        raise AssertionError("the excess form must be preferred")


def test_libsvm_check_offers_the_problem_s_excess_and_its_error():
    problem = ExcessStubProblem((0.25, 0.0625, 100.75), baseline=100.0)
    m = monitor(problem, libsvm_tol=0.01)
    best = exact(0.125, 8.0, upper_error=0.0, baseline=100.0)
    m.offer(best)
    assert m.libsvm_check() == 100.75
    assert problem.excess_calls == [(best, 0.01)]
    assert (m.upper_excess, m.upper_error, m.upper_bound) == (0.25, 0.0625, 100.75)
    assert m.libsvm_upper_bound == 100.75
    # a looser certified bound (excess + error) does not replace it, a tighter one does
    m.offer_upper_bound(100.25, excess=0.25, error=0.125)
    assert (m.upper_excess, m.upper_error) == (0.25, 0.0625)
    m.offer_upper_bound(100.25, excess=0.25, error=0.0)
    assert (m.upper_excess, m.upper_error) == (0.25, 0.0)


class ExactCompletingProblem(StubProblem):
    """Stub whose full evaluation carries its excesses over f(0) and their error bounds."""

    def __init__(self, full_excess):
        super().__init__(baseline=0.0)
        self.full_excess = full_excess

    def evaluate(self, alpha):
        out = exact(self.full_excess, 1.0, objective_error=0.03125, upper_error=0.0625)
        out.smooth_objective, out.partial = self.full_excess, False
        return out


@pytest.mark.parametrize(
    ("full_excess", "kept"),
    [(0.4375, "partial"), (0.5, "full"), (0.5625, "full")],
)
def test_complete_best_carries_the_excesses_and_their_errors(full_excess, kept):
    m = monitor(ExactCompletingProblem(full_excess))
    best = exact(0.5, 3.0, objective_error=0.015625, upper_error=0.0)
    best.smooth_objective, best.partial = 0.5, True
    m.offer(best)
    out = m.complete_best()
    # the full evaluation's bound, with its own excess and error
    assert (m.upper_excess, m.upper_error, m.upper_bound) == (1.0, 0.0625, 1.0)
    if kept == "partial":  # the lower bound never decreases: the partial value and its error stay
        assert (out.objective_excess, out.objective_error) == (0.5, 0.015625)
        assert (m.best_excess, m.best_error) == (0.5, 0.015625)
    else:
        assert (m.best_excess, m.best_error) == (full_excess, 0.03125)


def test_an_upper_bound_equal_after_its_error_does_not_replace_the_kept_one():
    m = monitor(StubProblem(baseline=0.0))
    m.offer_upper_bound(0.25, excess=0.25, error=0.0625)
    m.offer_upper_bound(0.3125, excess=0.3125, error=0.0)  # the same certified value 0.3125
    assert (m.upper_excess, m.upper_error, m.upper_bound) == (0.25, 0.0625, 0.25)


@pytest.mark.parametrize("reason", ["stalled", "numerical_error", "max_time"])
def test_a_solver_stop_with_a_certified_gap_is_converged(reason):
    """The monitor judges every stop (certified() first): lowrank_newton reported 'stalled'
    with a certified relative gap of 5e-9 < tol = 1e-6, and warned '5.03e-09 > tol 1e-06'."""
    m = monitor(StubProblem(baseline=0.0), tol=1e-6)
    m.offer(ev(100.0, 100.0 + 5e-7))
    m.stop(reason, "no ascent along the Newton directions")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = m.finish()
    assert res.status == "converged"
    assert res.message.startswith("certified relative gap 5e-09 <= tol 1e-06 (no ascent")


def test_an_uncertified_stop_keeps_its_status_and_a_rounding_stall_is_the_precision_limit():
    m = monitor(StubProblem(baseline=0.0), tol=1e-6)
    m.offer(ev(100.0, 101.0))
    m.stop("stalled")
    assert m.status == "stalled"
    m = monitor(StubProblem(baseline=0.0), tol=1e-6)
    m.offer(ev(100.0, 100.0))
    m.best_error = 1e-4  # a gap of 0 whose rounding bound exceeds tol * scale / 2
    m.stop("stalled")
    assert m.status == "precision_limit"
    m = monitor(StubProblem(baseline=0.0), tol=1e-6)
    m.offer(ev(100.0, 100.0))
    m.stop("callback")
    assert m.status == "callback"
