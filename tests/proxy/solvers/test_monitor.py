"""``SolverMonitor``: the certified stopping rule, statuses, history and the shared ending.

The monitor is driven by hand with evaluations of a real problem, so every decision is checked
against numbers computed here: the relative gap against ``max(1, |f(alpha) - f(0)|)`` with
``f(0) = rho ||(K0)_-||_F^2`` from dense eigh, the history against the offered values.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from reference import random_feasible_alpha
from sklearn.exceptions import ConvergenceWarning

from indefsvm.proxy.problems import make_problem
from indefsvm.proxy.result import HISTORY_KEYS
from indefsvm.proxy.solvers import SolverMonitor


@pytest.fixture
def problem(svc_reference):
    case = svc_reference
    return make_problem("svc", case.K0, case.y, C=case.C, rho=case.rho)


def _points(problem, y, count, seed=0):
    rng = np.random.default_rng(seed)
    return [problem.evaluate(random_feasible_alpha(y, 1.0, rng)) for _ in range(count)]


def test_relative_gap_is_measured_against_the_alpha_dependent_part(problem, svc_reference):
    case = svc_reference
    mon = SolverMonitor(problem, method="test", tol=1e-6, max_iter=10)
    f0 = case.rho * np.sum(np.minimum(np.linalg.eigvalsh(case.K0), 0) ** 2)
    assert mon.baseline == pytest.approx(f0, rel=1e-12)
    assert mon.scale == 1.0 and mon.objective == -np.inf  # nothing offered yet
    ev = _points(problem, case.y, 1)[0]
    mon.offer(ev)
    assert mon.objective == ev.objective and mon.upper_bound == ev.upper_bound
    assert mon.gap == pytest.approx(ev.upper_bound - ev.objective)
    # the bound is certified: at or above the SDP optimum, the objective at or below it
    assert ev.objective <= case.optimum + 1e-6 <= ev.upper_bound + 2e-6
    assert mon.relative_gap == pytest.approx(
        (ev.upper_bound - ev.objective) / max(1.0, abs(ev.objective - f0))
    )


def test_best_point_and_bound_are_kept_separately(problem, svc_reference):
    evs = sorted(_points(problem, svc_reference.y, 4, seed=1), key=lambda e: e.objective)
    mon = SolverMonitor(problem, method="test", tol=0.0, max_iter=10)
    for ev in evs:
        mon.offer(ev)
    assert mon.best is evs[-1]
    assert mon.upper_bound == min(e.upper_bound for e in evs)
    # an infeasible point contributes its bound, never its objective
    worse_bound = min(e.upper_bound for e in evs) - 1.0
    mon.offer_upper_bound(worse_bound + 2.0)  # a looser bound changes nothing
    assert mon.upper_bound == min(e.upper_bound for e in evs)
    mon.offer(evs[0], feasible=False)
    assert mon.best is evs[-1] and mon.n_evaluations == 5


def test_converged_only_when_the_certified_gap_is_within_tol(problem, svc_reference):
    ev = _points(problem, svc_reference.y, 1)[0]
    rel = ev.gap / max(1.0, abs(ev.objective - problem.baseline_objective))
    tight = SolverMonitor(problem, method="test", tol=rel * 0.99, max_iter=5)
    tight.offer(ev)
    assert not tight.end_iteration()
    loose = SolverMonitor(problem, method="test", tol=rel * 1.01, max_iter=5)
    loose.offer(ev)
    assert loose.end_iteration() and loose.status == "converged"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = loose.finish()
    assert res.converged and res.success and "<= tol" in res.message


def test_iteration_limit_is_reported_and_warns(problem, svc_reference):
    ev = _points(problem, svc_reference.y, 1)[0]
    mon = SolverMonitor(problem, method="test", tol=0.0, max_iter=3)
    mon.offer(ev)
    assert [mon.end_iteration() for _ in range(3)] == [False, False, True]
    assert mon.status == "max_iter"
    with pytest.warns(ConvergenceWarning, match="NOT certified optimal"):
        res = mon.finish()
    assert res.status == "max_iter" and not res.converged and res.n_iter == 3
    assert "iteration limit 3" in res.message


def test_time_limit_and_callback(problem, svc_reference):
    ev = _points(problem, svc_reference.y, 1)[0]
    mon = SolverMonitor(problem, method="test", tol=0.0, max_iter=100, max_time=0.01)
    mon.offer(ev)
    assert not mon.out_of_time()
    time.sleep(0.02)
    assert mon.out_of_time()
    assert mon.end_iteration() and mon.status == "max_time"
    with pytest.warns(ConvergenceWarning, match="time limit"):
        mon.finish()

    seen = []

    def callback(info):
        seen.append(info)
        return info["iteration"] == 2

    mon = SolverMonitor(problem, method="test", tol=0.0, max_iter=100, callback=callback)
    mon.offer(ev)
    assert not mon.end_iteration(step=0.5)
    assert mon.end_iteration(step=0.25) and mon.status == "callback"
    assert [s["iteration"] for s in seen] == [1, 2] and seen[1]["step"] == 0.25
    assert seen[0]["gap"] == pytest.approx(ev.gap) and np.array_equal(seen[0]["alpha"], ev.alpha)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a user's stop is not a failure
        assert mon.finish().status == "callback"


def test_stop_keeps_the_first_status_and_the_note(problem, svc_reference):
    ev = _points(problem, svc_reference.y, 1)[0]
    mon = SolverMonitor(problem, method="test", tol=0.0, max_iter=10)
    mon.offer(ev)
    mon.stop("numerical_error", "objective is NaN")
    mon.stop("stalled", None)
    assert mon.status == "numerical_error"
    with pytest.warns(ConvergenceWarning, match="objective is NaN"):
        res = mon.finish()
    assert res.status == "numerical_error" and res.message == "objective is NaN"


def test_conclude_certifies_or_reports_stalled(problem, svc_reference):
    """The ending shared by ACCPM and SIQCLP: converged only with a certified gap."""
    ev = _points(problem, svc_reference.y, 1)[0]
    mon = SolverMonitor(problem, method="test", tol=1e-12, max_iter=10)
    mon.offer(ev)
    mon.end_iteration()
    bound_before = mon.upper_bound
    mon.conclude("localization set empty")
    # the LIBSVM check ran (it can only tighten the bound) and the gap is still too large
    assert np.isfinite(mon.libsvm_upper_bound) and mon.upper_bound <= bound_before
    assert mon.status == "stalled"
    with pytest.warns(ConvergenceWarning, match="localization set empty"):
        mon.finish(final_libsvm=False)

    mon = SolverMonitor(problem, method="test", tol=1e3, max_iter=10)
    mon.offer(ev)
    mon.conclude("exchange test holds", check_libsvm=False)
    assert mon.status == "converged" and np.isnan(mon.libsvm_upper_bound)
    assert mon.finish().message.endswith("(exchange test holds)")


def test_history_rows_record_every_iteration(problem, svc_reference):
    evs = _points(problem, svc_reference.y, 5, seed=2)
    mon = SolverMonitor(problem, method="test", tol=0.0, max_iter=5, libsvm_every=2)
    for ev in evs:
        mon.offer(ev)
        mon.end_iteration(current_objective=ev.objective)
    with pytest.warns(ConvergenceWarning):
        res = mon.finish()
    h = res.history
    assert tuple(h) == HISTORY_KEYS
    assert all(len(v) == 5 for v in h.values())
    np.testing.assert_array_equal(h["iteration"], np.arange(1, 6))
    np.testing.assert_array_equal(h["objective"], [e.objective for e in evs])
    np.testing.assert_array_equal(h["best_objective"], np.maximum.accumulate(h["objective"]))
    assert np.all(np.diff(h["upper_bound"]) <= 0) and np.all(np.diff(h["time"]) >= 0)
    np.testing.assert_allclose(h["gap"], h["upper_bound"] - h["best_objective"])
    # LIBSVM checks at iterations 2 and 4 and the final one (replacing the last row's bound)
    assert list(np.flatnonzero(np.isfinite(h["libsvm_upper_bound"])) + 1) == [2, 4, 5]
    assert res.upper_bound == h["upper_bound"][-1] and res.gap == pytest.approx(h["gap"][-1])


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"tol": -1.0}, "tol must be"),
        ({"tol": float("nan")}, "tol must be"),
        ({"max_iter": 0}, "max_iter must be a positive integer"),
        ({"libsvm_every": 0}, "libsvm_every must be None or a positive integer"),
        ({"max_time": 0}, "max_time must be None or a number > 0"),
        ({"libsvm_tol": 0.0}, "libsvm_tol must be a finite number > 0"),
    ],
)
def test_bad_settings_get_clear_errors(problem, kwargs, match):
    settings = {"method": "test", "tol": 1e-6, "max_iter": 10, **kwargs}
    with pytest.raises(ValueError, match=match):
        SolverMonitor(problem, **settings)
