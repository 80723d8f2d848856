"""The result of :func:`indefsvm.solve` (modelled on SciPy's ``OptimizeResult``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from indefsvm.utils.io import atomic_write

#: Keys of :attr:`SolveResult.history`, one entry per iteration.
HISTORY_KEYS = (
    "iteration",
    "time",
    "objective",
    "best_objective",
    "upper_bound",
    "gap",
    "libsvm_upper_bound",
)


@dataclass
class SolveResult:
    """Solution of a proxy-kernel problem of paper 004.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        Best feasible point found (highest objective).
    objective : float
        ``f(alpha)``: the value of eq. (7) (eq. 17, 20 or 22 for the other problems) at ``alpha``,
        at the paper's scale. A certified lower bound on the optimum.
    upper_bound : float
        Best certified upper bound on the optimum seen during the run (theory.md §3 and §4).
    gap : float
        ``upper_bound - objective >= OPT - objective`` (certified, up to rounding; formed as
        ``(upper_bound - f(0)) - (objective - f(0))`` with both excesses computed without
        ``f(0)``, so a huge constant ``f(0)`` does not swamp it; ``gap_error`` bounds its rounding).
    relative_gap : float
        ``gap / max(1, |objective - f(0)|)``: the gap relative to the part of the objective that
        depends on alpha (``f(0) = rho ||(K0)_-||_F^2`` is a constant); the stopping rule is
        ``relative_gap <= tol``.
    kernel : ndarray of shape (n, n)
        The proxy kernel ``K*(alpha)`` of eq. (5). Formed on first access when the solver passed
        a callable (O(n^2 k) with k negative eigenvalues: not part of the solve's time).
    intercept : float
        Intercept ``b`` minimising the primal loss with kernel ``K*(alpha)`` (theory.md §3).
    n_iter : int
        Iterations performed.
    status : str
        ``"converged"`` (certified relative gap <= tol), ``"max_iter"``, ``"max_time"``,
        ``"callback"`` (stopped by the callback), ``"stalled"`` (ACCPM/SIQCLP's own rule holds
        but the certified gap does not), ``"numerical_error"`` (non-finite values),
        ``"solver_error"`` (the conic solver of SIQCLP failed) or ``"precision_limit"`` (the
        computed gap is within tol but its rounding error bound ``gap_error`` is not: double
        precision cannot certify this tolerance); every status but ``"converged"`` and
        ``"callback"`` warns. ``"converged"`` means ``max(gap, 0) + gap_error <= tol *
        max(1, |objective - f(0)|)``.
    message : str
        Human-readable explanation of ``status``.
    method : str
        Solver used (``"pg"``, ``"accpm"``, ``"siqclp"``).
    problem : str
        Problem type (``"svc"``, ...).
    history : dict of str -> ndarray
        Per-iteration arrays keyed by :data:`HISTORY_KEYS`: ``iteration``, ``time`` (seconds since
        the start, including set-up), ``objective`` (at the iterate), ``best_objective``,
        ``upper_bound`` (best so far), ``gap`` (certified, best bounds) and
        ``libsvm_upper_bound`` (NaN where no LIBSVM check ran).
    libsvm_upper_bound : float
        Best upper bound obtained from LIBSVM checks (NaN if none ran).
    n_evaluations : int
        Number of objective/gradient/bound evaluations.
    time : float
        Total wall time in seconds.
    info : dict
        Solver-specific details (step policy, timings, ...).
    baseline_objective : float
        ``f(0)``, the alpha-free part against which ``relative_gap`` is measured.
    gap_error : float
        A bound (first order) on the rounding error of ``gap``.
    objective_excess : float
        ``objective - baseline_objective``, i.e. ``f(alpha) - f(0)``, computed WITHOUT the
        constant ``f(0)`` (the alpha-dependent part of the objective; as ``rho -> inf`` the SVM
        dual value on the clipped kernel). Compare this, not ``objective - baseline_objective``,
        when ``f(0)`` is large: the difference of two large numbers loses their rounding.
    """

    alpha: NDArray[np.float64]
    objective: float
    upper_bound: float
    gap: float
    relative_gap: float
    kernel: NDArray[np.float64] | None
    intercept: float
    n_iter: int
    status: str
    message: str
    method: str
    problem: str
    history: dict[str, NDArray[np.float64]]
    libsvm_upper_bound: float = float("nan")
    n_evaluations: int = 0
    time: float = 0.0
    classes: NDArray[Any] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    baseline_objective: float = 0.0
    gap_error: float = 0.0
    objective_excess: float = float("nan")

    @property
    def converged(self) -> bool:
        """True when the certified relative gap reached the tolerance."""
        return self.status == "converged"

    @property
    def success(self) -> bool:
        """Alias of :attr:`converged` (SciPy's name)."""
        return self.converged

    def __repr__(self) -> str:
        return (
            f"SolveResult(method={self.method!r}, problem={self.problem!r}, "
            f"status={self.status!r}, objective={self.objective:.10g}, "
            f"upper_bound={self.upper_bound:.10g}, gap={self.gap:.3g}, "
            f"relative_gap={self.relative_gap:.3g}, n_iter={self.n_iter}, time={self.time:.3g}s)"
        )

    def to_dict(self, *, include_kernel: bool = False) -> dict[str, Any]:
        """A JSON-serialisable dictionary (the kernel only on request: it is n x n).

        With ``include_kernel=True`` the ``"kernel"`` entry is the n x n proxy kernel as nested
        lists, or, for a low-rank problem (``kernel`` a
        :class:`~indefsvm.proxy.lowrank.LowRankProxyKernel`), its factor
        ``{"format": "factor", "features": F}`` with ``K* = F F'`` (n x k, k <= m + 1): the
        factored kernel is never formed n x n.
        """

        def conv(v: Any) -> Any:
            if isinstance(v, np.ndarray):
                return v.tolist()
            if isinstance(v, np.generic):
                return v.item()
            if isinstance(v, float) and not np.isfinite(v):
                return None
            if isinstance(v, dict):
                return {k: conv(x) for k, x in v.items()}
            if isinstance(v, list | tuple):
                return [conv(x) for x in v]
            return v

        out = {
            "alpha": self.alpha,
            "objective": self.objective,
            "upper_bound": self.upper_bound,
            "gap": self.gap,
            "relative_gap": self.relative_gap,
            "baseline_objective": self.baseline_objective,
            "gap_error": self.gap_error,
            "objective_excess": self.objective_excess,
            "intercept": self.intercept,
            "n_iter": self.n_iter,
            "status": self.status,
            "message": self.message,
            "method": self.method,
            "problem": self.problem,
            "libsvm_upper_bound": self.libsvm_upper_bound,
            "n_evaluations": self.n_evaluations,
            "time": self.time,
            "classes": self.classes,
            "history": {k: np.where(np.isfinite(v), v, np.nan) for k, v in self.history.items()},
            "info": self.info,
        }
        if include_kernel:
            kernel = self.kernel
            features = getattr(kernel, "features", None)
            if callable(features):
                out["kernel"] = {"format": "factor", "features": features()}
            elif kernel is None or isinstance(kernel, np.ndarray):
                out["kernel"] = kernel
            else:
                raise TypeError(
                    f"the kernel of this result is a {type(kernel).__name__}, which to_dict "
                    "cannot write; convert it (np.asarray(result.kernel)) and save it yourself."
                )
        return conv(out)

    def to_json(self, path: str | os.PathLike[str], *, include_kernel: bool = False) -> None:
        """Write :meth:`to_dict` to ``path`` as JSON (NaN/inf written as null)."""

        def nan_to_none(x: Any) -> Any:
            if isinstance(x, float) and not np.isfinite(x):
                return None
            if isinstance(x, list):
                return [nan_to_none(v) for v in x]
            if isinstance(x, dict):
                return {k: nan_to_none(v) for k, v in x.items()}
            return x

        # Serialise fully in memory first, then write atomically: a failure can never leave a
        # truncated or half-overwritten file (indefsvm.utils.io).
        text = json.dumps(nan_to_none(self.to_dict(include_kernel=include_kernel)))
        atomic_write(path, lambda fh: fh.write(text))


def _get_kernel(self: SolveResult) -> NDArray[np.float64] | None:
    value = self.__dict__.get("_kernel")
    if callable(value):
        value = value()
        self.__dict__["_kernel"] = value
    return value


def _set_kernel(self: SolveResult, value: Any) -> None:
    self.__dict__["_kernel"] = value


# ``kernel`` is a dataclass field (``SolveResult(kernel=...)`` as before) stored behind a property,
# so that a solver can pass a callable and the n x n proxy kernel is only formed if it is used.
SolveResult.kernel = property(  # type: ignore[assignment]
    _get_kernel, _set_kernel, doc="The proxy kernel ``K*(alpha)`` of eq. (5) (formed on first use)."
)
