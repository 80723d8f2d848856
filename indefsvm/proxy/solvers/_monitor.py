"""Bookkeeping shared by every solver: best bounds, history, LIBSVM checks, progress, stopping.

Solvers only produce points and evaluations; the monitor decides what is certified. The lower
bound is the best objective at a FEASIBLE point, the upper bound the best certified bound seen
anywhere (theory.md §3: any point gives a valid upper bound), so the reported gap can never be
below the true suboptimality of the returned point.

Relative gaps are measured against the part of the objective that depends on alpha,
``max(1, |f(alpha) - f(0)|)``, never against ``|f(alpha)|``: ``f(0) = rho ||(K0)_-||_F^2`` does not
depend on alpha and dominates ``f`` for large rho or strongly indefinite kernels (at rho = 1e6 a
rule relative to ``|f|`` stopped after one iteration with 19% of the SVM part missing). As
``rho -> inf``, ``f(alpha) - f(0)`` tends to the SVM dual objective on ``(K0)_+``, so ``tol`` means
what it means for an SVM.
"""

from __future__ import annotations

import functools
import logging
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from indefsvm.proxy.problems import Evaluation, ProxyKernelProblem
from indefsvm.proxy.result import HISTORY_KEYS, SolveResult
from indefsvm.utils.progress import ProgressBar, ensure_visible, progress_bar
from indefsvm.utils.validation import is_positive_int, is_real

logger = logging.getLogger("indefsvm.proxy.solvers")

#: Statuses that end a run without a certificate of optimality (they warn).
UNCERTIFIED_STATUSES = (
    "max_iter",
    "max_time",
    "stalled",
    "numerical_error",
    "solver_error",
    "precision_limit",
)
#: Rounding error of an absolute value offered without its excess over ``f(0)``, relative to
#: ``|f(0)|``: a value that holds the constant ``f(0)`` has lost the digits below ``eps |f(0)|``
#: (none when ``f(0) = 0``), and its excess is formed by a subtraction.
_OFFER_ROUNDING = 16.0 * float(np.finfo(np.float64).eps)


def _excess(evaluation: Any, name: str, baseline: float) -> tuple[float, float]:
    """``(value - f(0), error bound)`` of an evaluation's objective or upper bound.

    Evaluations of :class:`~indefsvm.proxy.problems.ProxyKernelProblem` carry the excess computed
    without ``f(0)`` (theory.md §10); for others (NaN) it is formed by a subtraction whose rounding
    is counted in the bound.
    """
    excess = getattr(evaluation, f"{name}_excess", float("nan"))
    value = evaluation.objective if name == "objective" else evaluation.upper_bound
    if excess is None or np.isnan(excess):
        if not np.isfinite(value):
            return float(value), 0.0
        return float(value) - baseline, _OFFER_ROUNDING * abs(baseline)
    return float(excess), float(getattr(evaluation, f"{name}_error", 0.0))


class SolverMonitor:
    """Track bounds and decide when a solver stops.

    Parameters
    ----------
    problem : ProxyKernelProblem
    method : str
        Solver name recorded in the result.
    tol : float
        Stop when ``(UB - f) <= tol * max(1, |f - f(0)|)``: the certified gap relative to the part
        of the objective that depends on alpha (``f(0)`` is ``problem.baseline_objective``).
    max_iter : int
        Iteration limit (status ``"max_iter"`` with a ``ConvergenceWarning`` when reached).
    libsvm_every : int or None
        Run a LIBSVM check every this many iterations and at the end (None: never).
    libsvm_tol : float
        LIBSVM's ``-e`` for the checks.
    verbose : bool or int
        Print a progress line every ``verbose`` iterations (True: every 50) and at each check.
    callback : callable, optional
        ``callback(info: dict) -> bool | None``; returning True stops the solver
        (status ``"callback"``). ``info`` has iteration, objective, upper_bound, gap, alpha, time.
    max_time : float, optional
        Wall-time limit in seconds (status ``"max_time"``).
    progress : bool or None
        Show a tqdm progress bar on stderr (None: when stderr is a terminal). Its unit is the
        progress of the certified relative
        gap on a log scale, ``log(gap_1 / gap) / log(gap_1 / tol)`` in percent, so its "time
        left" is an estimate of the time to convergence (the CLI turns it on when interactive).
    """

    def __init__(
        self,
        problem: ProxyKernelProblem,
        *,
        method: str,
        tol: float,
        max_iter: int,
        libsvm_every: int | None = None,
        libsvm_tol: float = 1e-3,
        verbose: bool | int = False,
        callback: Callable[[dict[str, Any]], Any] | None = None,
        max_time: float | None = None,
        start_time: float | None = None,
        progress: bool = False,
    ) -> None:
        if not np.isfinite(tol) or tol < 0:
            raise ValueError(f"tol must be a finite non-negative number; got {tol!r}.")
        if not is_positive_int(max_iter):
            raise ValueError(f"max_iter must be a positive integer (e.g. 10000); got {max_iter!r}.")
        if libsvm_every is not None and not is_positive_int(libsvm_every):
            raise ValueError(
                f"libsvm_every must be None or a positive integer; got {libsvm_every!r}."
            )
        if max_time is not None and not (is_real(max_time) and max_time > 0):
            raise ValueError(f"max_time must be None or a number > 0 (seconds); got {max_time!r}.")
        if not (is_real(libsvm_tol) and np.isfinite(libsvm_tol) and libsvm_tol > 0):
            raise ValueError(
                f"libsvm_tol must be a finite number > 0 (LIBSVM's -e, e.g. 1e-3); "
                f"got {libsvm_tol!r}."
            )
        self.problem = problem
        self.method = method
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.libsvm_every = libsvm_every
        self.libsvm_tol = float(libsvm_tol)
        self.baseline = float(problem.baseline_objective)
        # Evaluations may warm-start from earlier ones (secular roots): a solve starts cold.
        problem.reset_warm_start()
        # The excesses over f(0) that certify need only be accurate to a fraction of tol.
        # An optional hint of the contract (protocols.Problem): minimal problems may lack it.
        self._set_accuracy = getattr(problem, "set_excess_accuracy", None)
        self._accuracy_asked: float | None = None
        self._ask_accuracy(self.tol)
        self.verbose = 50 if verbose is True else int(verbose or 0)
        if self.verbose:
            ensure_visible(logger)
        self.callback = callback
        self.max_time = max_time
        self.start = time.perf_counter() if start_time is None else start_time
        self.best: Evaluation | None = None
        self.upper_bound = np.inf
        # The certifying quantities, formed without f(0) (theory.md §10): UB - f(0) and f - f(0) of
        # the best point, with bounds on their rounding errors.
        self.upper_excess = np.inf
        self.upper_error = 0.0
        self.best_excess = -np.inf
        self.best_error = 0.0
        self.best_intercept = np.nan
        self.libsvm_upper_bound = np.nan
        self.n_iter = 0
        self.n_evaluations = 0
        self.status: str | None = None
        self.note: str | None = None
        self._first_gap: float | None = None
        # progress=True draws the bar whatever stderr is (a notebook's is not a terminal);
        # None draws it when stderr is a terminal (the estimators' default for long fits).
        bar = progress_bar(
            100, desc=method, unit="%", enabled=None if progress is None else bool(progress)
        )
        self._bar: ProgressBar | None = bar if bar.active else None
        self._rows: list[tuple[float, ...]] = []
        self._header_printed = False

    # -- bounds -------------------------------------------------------------------------------
    @property
    def objective(self) -> float:
        return -np.inf if self.best is None else self.best.objective

    @property
    def gap(self) -> float:
        """``UB - f(alpha)``, formed as ``(UB - f(0)) - (f(alpha) - f(0))`` (theory.md §10)."""
        return self.upper_excess - self.best_excess

    @property
    def gap_error(self) -> float:
        """A bound on the rounding error of :attr:`gap` (first order)."""
        return self.upper_error + self.best_error

    @property
    def scale(self) -> float:
        """``max(1, |f(alpha) - f(0)|)``: what the relative gap is measured against."""
        if self.best is None:
            return 1.0
        return max(1.0, abs(self.best_excess))

    @property
    def relative_gap(self) -> float:
        return self.gap / self.scale

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def out_of_time(self) -> bool:
        """True when ``max_time`` has passed; inner loops of solvers poll it."""
        return self.max_time is not None and self.elapsed() >= self.max_time

    def offer_upper_bound(
        self, value: float, *, excess: float | None = None, error: float | None = None
    ) -> None:
        """Take a certified upper bound computed anywhere (e.g. at an infeasible point).

        ``excess`` is ``value - f(0)`` formed without ``f(0)`` and ``error`` its rounding error
        bound; when omitted, the excess is the subtraction and its error ``16 eps |f(0)|`` (an
        absolute bound that holds ``f(0)`` cannot certify more finely).
        """
        if excess is None or not np.isfinite(excess):
            excess = value - self.baseline
            error = _OFFER_ROUNDING * abs(self.baseline) if np.isfinite(value) else 0.0
        # Compare certified values (excess plus its rounding error): a bound known only to a
        # few digits must not replace a tighter, precise one because of its noise.
        if excess + (error or 0.0) < self.upper_excess + self.upper_error:
            self.upper_excess = float(excess)
            self.upper_error = float(error or 0.0)
            self.upper_bound = value

    def offer(self, evaluation: Evaluation, *, feasible: bool = True) -> None:
        """Take an evaluation: its bound always, its objective only if the point is feasible."""
        self.n_evaluations += 1
        excess, error = _excess(evaluation, "upper", self.baseline)
        self.offer_upper_bound(evaluation.upper_bound, excess=excess, error=error)
        if feasible:
            value, value_error = _excess(evaluation, "objective", self.baseline)
            if self.best is None or value > self.best_excess:
                self.best = evaluation
                self.best_excess, self.best_error = value, value_error

    def complete_best(self) -> Evaluation | None:
        """Make the best evaluation a full one (gradient, bound, eigenvectors) if it is partial.

        Solvers may offer objective-only evaluations (``Evaluation.partial``, e.g. the trial
        points of backtracking): their objective counts as a lower bound, but the result (proxy
        kernel, intercept) and LIBSVM checks need the full state, computed here once, at the
        point that is returned. Its certified bound is offered as well.
        """
        best = self.best
        if best is not None and getattr(best, "partial", False):
            full = self.problem.evaluate(best.alpha)
            excess, error = _excess(full, "upper", self.baseline)
            self.offer_upper_bound(full.upper_bound, excess=excess, error=error)
            # Same point, same roots: the objective agrees to rounding; keep the larger so the
            # reported lower bound never decreases.
            value, value_error = _excess(full, "objective", self.baseline)
            if value < self.best_excess:
                full.objective = best.objective
                full.smooth_objective = best.smooth_objective
                full.objective_excess = self.best_excess
                full.objective_error = self.best_error
            else:
                self.best_excess, self.best_error = value, value_error
            self.best = full
        return self.best

    def libsvm_check(self) -> float:
        """LIBSVM bound at the best point (theory.md §4); returns it and keeps the best."""
        assert self.best is not None
        self.complete_best()
        # Registered problems form the excess without f(0) (protocols.Problem); a minimal
        # problem with only the absolute bound is certified on that.
        bound_excess = getattr(self.problem, "libsvm_bound_excess", None)
        if bound_excess is not None:
            excess, error, ub = bound_excess(self.best, tol=self.libsvm_tol)
        else:
            ub, _, _ = self.problem.libsvm_upper_bound(self.best, tol=self.libsvm_tol)
            excess, error = None, None
        if not np.isfinite(self.libsvm_upper_bound) or ub < self.libsvm_upper_bound:
            self.libsvm_upper_bound = ub
        self.offer_upper_bound(ub, excess=excess, error=error)
        return ub

    def certified(self) -> bool:
        """True when the gap, its rounding error included, is within ``tol`` (theory.md §3, §10)."""
        return max(self.gap, 0.0) + self.gap_error <= self.tol * self.scale

    def precision_lost(self) -> bool:
        """True when rounding, not the solver, keeps the gap from being certified within tol.

        The computed gap is within ``tol`` but its rounding error bound is more than half of
        ``tol * scale``: further iterations cannot certify more than the arithmetic resolves
        (e.g. a huge ``f(0)`` whose own rounding exceeds the tolerance).
        """
        limit = self.tol * self.scale
        return self.gap <= limit and not self.certified() and self.gap_error > 0.5 * limit

    # -- per-iteration ---------------------------------------------------------------------------
    def end_iteration(self, current_objective: float | None = None, **extra: Any) -> bool:
        """Record one iteration; return True if the solver must stop (``status`` is then set)."""
        self.n_iter += 1
        k = self.n_iter
        lib = np.nan
        if self.libsvm_every and k % self.libsvm_every == 0:
            lib = self.libsvm_check()
        cur = self.objective if current_objective is None else current_objective
        self._rows.append((k, self.elapsed(), cur, self.objective, self.upper_bound, self.gap, lib))
        if self.verbose and (k % self.verbose == 0 or np.isfinite(lib) or k == 1):
            self._log_progress(k, lib)
        if self._bar is not None:
            self._update_bar()
        self._follow_gap()
        if self.certified():
            self.status = "converged"
        elif self.precision_lost():
            self.status = "precision_limit"
        elif self.callback is not None and self.callback(
            {
                "iteration": k,
                "objective": self.objective,
                "upper_bound": self.upper_bound,
                "gap": self.gap,
                "alpha": self.best.alpha if self.best is not None else None,
                "time": self.elapsed(),
                **extra,
            }
        ):
            self.status = "callback"
        elif self.out_of_time():
            self.status = "max_time"
        elif k >= self.max_iter:
            self.status = "max_iter"
        return self.status is not None

    def _ask_accuracy(self, tol: float) -> None:
        if self._set_accuracy is not None and tol != self._accuracy_asked:
            self._set_accuracy(tol)
            self._accuracy_asked = tol

    def _follow_gap(self) -> None:
        """Ask for excesses only as accurate as the current gap can use.

        Their rounding matters only next to the gap being certified: while the relative gap is
        far above ``tol`` (always, with ``tol = 0``) the penalty change need not be refined to
        ``1e-3 tol`` (about 7 ms of a 30 ms PG iteration at n = 2000 with ``tol = 0``). A
        hundredth of the current gap leaves the next bounds accurate to ``1e-5`` of it, far
        below what one iteration gains; the request never drops below ``tol``. Every error bound
        is still carried, so this changes what certifies no earlier, only what it costs.
        """
        gap = self.relative_gap
        if not np.isfinite(gap):
            return
        wanted = max(self.tol, 1e-2 * max(gap, 0.0))
        # Only a change of more than a factor 10 is passed on; the first gap may loosen the
        # request made with tol alone, after that the gap (and the request) only shrinks.
        asked = self._accuracy_asked
        if asked is None or not 0.1 * asked <= wanted <= 10.0 * asked or wanted == self.tol:
            self._ask_accuracy(wanted)

    def _update_bar(self) -> None:
        gap = self.relative_gap
        if not np.isfinite(gap) or gap <= 0:
            done = 100.0 if gap <= self.tol else 0.0
        else:
            if self._first_gap is None:
                self._first_gap = max(gap, self.tol * 10)
            span = np.log(self._first_gap / max(self.tol, 1e-300))
            done = 100.0 * np.clip(np.log(self._first_gap / max(gap, self.tol)) / span, 0, 1)
        self._bar.set(round(float(done), 1), postfix=f"rel gap {gap:.2e}")

    def _log_progress(self, k: int, lib: float) -> None:
        if not self._header_printed:
            logger.info(
                "[%s] %7s %16s %16s %10s %10s %16s %8s",
                self.method,
                "iter",
                "objective",
                "upper bound",
                "gap",
                "rel gap",
                "libsvm UB",
                "time",
            )
            self._header_printed = True
        lib_s = f"{lib:16.9g}" if np.isfinite(lib) else f"{'-':>16}"
        logger.info(
            "[%s] %7d %16.9g %16.9g %10.3g %10.3g %s %8.2fs",
            self.method,
            k,
            self.objective,
            self.upper_bound,
            self.gap,
            self.relative_gap,
            lib_s,
            self.elapsed(),
        )

    def stop(self, status: str, note: str | None = None) -> None:
        """End the run early with ``status`` and a note explaining why (kept in the message).

        The monitor judges the stop, not the solver: whatever made the solver stop (a stall, a
        non-finite trial point, the time limit), a best point whose gap is already certified
        within ``tol`` ends ``"converged"`` (the note still says why the solver stopped), and a
        stall that rounding alone keeps from certifying ends ``"precision_limit"``. Only a
        callback's stop is taken as given.
        """
        if self.status is None:
            if status != "callback" and self.best is not None and self.certified():
                status = "converged"
            elif status == "stalled" and self.best is not None and self.precision_lost():
                status = "precision_limit"
            self.status = status
        if note is not None:
            self.note = note

    def conclude(
        self,
        note: str | None = None,
        *,
        otherwise: str = "stalled",
        check_libsvm: bool = True,
    ) -> None:
        """Termination shared by solvers that stop on their own rule (ACCPM, SIQCLP).

        Their rule (an empty localization set, Algorithm 3's exchange test, a failing conic
        solver) does not certify anything, so the monitor decides: it runs a LIBSVM check if the
        certified gap is not yet within ``tol`` (the cheapest way to tighten the upper bound),
        then sets ``"converged"`` only if the certified relative gap is within ``tol`` and
        ``otherwise`` (``"stalled"``, ``"solver_error"``) if not; ``note`` says which rule stopped
        the solver and ends up in the result's message and warning.
        """
        if self.status is not None:
            return
        if not self.certified() and check_libsvm and self.best is not None:
            self.libsvm_check()
        if self.certified():
            self.stop("converged", note)
        else:
            self.stop("precision_limit" if self.precision_lost() else otherwise, note)

    # -- result -----------------------------------------------------------------------------------
    def finish(
        self, *, info: dict[str, Any] | None = None, final_libsvm: bool = True
    ) -> SolveResult:
        """Build the result; runs the final LIBSVM check and warns if not converged."""
        assert self.best is not None, "the solver never offered a feasible evaluation"
        self.complete_best()
        if self.status is None:
            self.status = "max_iter"
        lib = np.nan
        if self.libsvm_every and final_libsvm:
            lib = self.libsvm_check()
            if self.status != "converged" and self.certified():
                self.status = "converged"
        if self.status == "converged" and self.gap < -self.gap_error:
            # An upper bound below the objective by more than rounding: some bound is wrong.
            self.status = "numerical_error"
            self.note = (
                f"the best upper bound lies {-self.gap:.3g} below the objective, beyond its "
                f"rounding error bound {self.gap_error:.3g}"
            )
        if self._rows and np.isfinite(lib):
            row = list(self._rows[-1])
            row[4], row[5], row[6] = self.upper_bound, self.gap, lib
            self._rows[-1] = tuple(row)
        messages = {
            "converged": f"certified relative gap {self.relative_gap:.3g} <= tol {self.tol:g}",
            "max_iter": (
                f"iteration limit {self.max_iter} reached before the certified relative gap "
                f"reached tol: relative gap {self.relative_gap:.3g} > {self.tol:g}"
            ),
            "max_time": (
                f"time limit {self.max_time}s reached with relative gap "
                f"{self.relative_gap:.3g} > tol {self.tol:g}"
            ),
            "callback": f"stopped by the callback with relative gap {self.relative_gap:.3g}",
            "precision_limit": (
                f"the certified gap cannot be resolved to tol in double precision: relative gap "
                f"{self.relative_gap:.3g} with a rounding error bound of "
                f"{self.gap_error / self.scale:.3g} (relative) > tol {self.tol:g} / 2, so the "
                "gap is not certified below tol (e.g. "
                "f(0) = rho ||(K0)_-||_F^2 or the kernel's scale dwarfs the alpha-dependent part "
                "of the objective; rescale the kernel, lower rho or loosen tol)"
            ),
        }
        message = messages.get(self.status, self.status)
        if self.note:
            message = f"{message} ({self.note})" if self.status in messages else self.note
        if self.status in UNCERTIFIED_STATUSES:
            # scikit-learn's class, so users filter one warning for every estimator; imported
            # here because importing scikit-learn costs seconds at CLI start-up.
            from sklearn.exceptions import ConvergenceWarning

            if self.status == "precision_limit":
                advice = ": loosen tol, or rescale the kernel / lower rho."
            else:
                advice = (
                    f" (certified relative gap {self.relative_gap:.3g} > tol {self.tol:g}); "
                    "increase max_iter/max_time, loosen tol or try another method."
                )
            warnings.warn(
                f"{self.method}: {message}. The result is NOT certified optimal{advice}",
                ConvergenceWarning,
                stacklevel=3,
            )
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self.verbose:
            self._log_progress(self.n_iter, lib)
            logger.info("[%s] %s: %s", self.method, self.status, message)
        best = self.best
        rows = np.array(self._rows, dtype=np.float64).reshape(-1, len(HISTORY_KEYS))
        history = {key: rows[:, j].copy() for j, key in enumerate(HISTORY_KEYS)}
        problem = self.problem
        # The dense K* costs O(n^2 k) (k negative eigenvalues of M): formed when first used, so
        # a solve costs one eigh plus its iterations (SolveResult.kernel).
        kernel = functools.partial(problem.kernel_from_state, best.state)
        return SolveResult(
            alpha=best.alpha.copy(),
            objective=best.objective,
            upper_bound=self.upper_bound,
            gap=self.gap,
            relative_gap=self.relative_gap,
            kernel=kernel,
            intercept=best.intercept,
            n_iter=self.n_iter,
            status=self.status,
            message=message,
            method=self.method,
            problem=problem.kind,
            history=history,
            libsvm_upper_bound=self.libsvm_upper_bound,
            n_evaluations=self.n_evaluations,
            time=self.elapsed(),
            classes=getattr(problem, "classes", None),
            info=info or {},
            baseline_objective=self.baseline,
            gap_error=self.gap_error,
            objective_excess=float(self.best_excess),
        )
