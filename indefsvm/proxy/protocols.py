"""The contracts between problems, solvers and the monitor (see docs/design.md).

A *problem* knows the mathematics: its feasible set, objective, gradient, certified upper bound and
proxy kernel. A *solver* produces points and hands evaluations to a
:class:`~indefsvm.proxy.solvers._monitor.SolverMonitor`, which owns stopping, history and the
result.
Solvers use only the members declared here, so a new problem (for example a low-rank one) is one
class that provides them plus one line in :data:`indefsvm.proxy.problems.PROBLEM_TYPES`, and a new
solver
is one function ``solver(problem, monitor, **options) -> SolveResult`` plus one line in
:data:`indefsvm.proxy.api.SOLVERS`.

Two levels, like skglm's datafit/penalty "required attributes":

:class:`Problem`
    What first-order solvers (projected gradient) and the monitor need. Nothing here requires an
    n x n array: a factored problem can implement it in O(nm) memory.
:class:`DenseProblem`
    What the cutting-plane solvers add (ACCPM, SIQCLP): the feasible set as data and the working
    kernel as a dense matrix. They refuse problems that do not provide it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:  # pragma: no cover
    from indefsvm.proxy.problems import Evaluation


@runtime_checkable
class Problem(Protocol):
    """Maximise a concave ``f`` over a convex feasible set, with certified upper bounds.

    Attributes
    ----------
    n : int
        Number of variables (training points).
    kind : str
        Name in :data:`indefsvm.proxy.problems.PROBLEM_TYPES` (recorded in results).
    classes : ndarray or None
        The user's two class labels (classification), else None.
    baseline_objective : float
        ``f(0)``; relative gaps are measured against ``f(alpha) - f(0)``.
    metric : ndarray of shape (n,) or None
        Diagonal metric in which gradient steps are well scaled (None: Euclidean).
    """

    n: int
    kind: str
    classes: Any

    @property
    def baseline_objective(self) -> float: ...

    @property
    def metric(self) -> NDArray[np.float64] | None: ...

    def initial_point(self) -> NDArray[np.float64]:
        """A feasible starting point."""
        ...

    def project(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """Euclidean projection onto the feasible set."""
        ...

    def prox(
        self,
        v: NDArray[np.float64],
        step: float,
        metric: NDArray[np.float64] | None = None,
    ) -> NDArray[np.float64]:
        """Proximal step of the non-smooth part (if any) restricted to the feasible set."""
        ...

    def evaluate(self, alpha: NDArray[np.float64], *, smoothing: float = 0.0) -> Evaluation:
        """Objective, gradient and a certified upper bound on the optimum (valid at any alpha)."""
        ...

    def evaluate_objective(self, alpha: NDArray[np.float64]) -> Evaluation:
        """The objective at ``alpha`` only (``Evaluation.partial``; added for issue 14).

        May return a full evaluation. Solvers fall back to :meth:`evaluate` for problems written
        before this member existed, so implementing it is optional.
        """
        ...

    def check_method(self, method: str) -> None:
        """Raise a clear ``ValueError`` if solver ``method`` cannot run on this problem."""
        ...

    def check_options(self, *, method: str, libsvm_every: int | None = None) -> None:
        """Raise before solving for options the problem could only refuse after iterating."""
        ...

    def reset_warm_start(self) -> None:
        """Forget state kept between evaluations (called once when a solve starts)."""
        ...

    def set_excess_accuracy(self, tol: float) -> None:
        """Accuracy the certifying excesses over ``f(0)`` need (called once when a solve starts:
        a fraction of the solve's ``tol``)."""
        ...

    def libsvm_bound_excess(
        self, evaluation: Evaluation, *, tol: float = 1e-3
    ) -> tuple[float, float, float]:
        """:meth:`libsvm_upper_bound` as ``(bound - f(0), its rounding error bound, bound)``, the
        excess formed without ``f(0)`` (notes §10: the monitor certifies with it)."""
        ...

    def lipschitz_estimate(self) -> float:
        """Scale of the gradient's Lipschitz constant in :attr:`metric` (step policies adapt)."""
        ...

    def kernel_from_state(self, state: Any) -> Any:
        """The proxy kernel of an evaluated state, as the result should hold it."""
        ...

    def libsvm_upper_bound(
        self, evaluation: Evaluation, *, tol: float = 1e-3
    ) -> tuple[float, float, NDArray[np.float64]]:
        """A certified bound from LIBSVM's solution on the proxy kernel (notes §4)."""
        ...


@runtime_checkable
class DenseProblem(Problem, Protocol):
    """A :class:`Problem` whose feasible set and working kernel are available as dense data.

    The feasible set is ``{eq_coef' a = eq_rhs, lower <= a <= upper}`` and the objective's linear
    part ``linear_coef' a - l1_weight ||a||_1``; ``u = u_coef * alpha`` enters the kernel terms.
    "Working" coordinates are those of the scaled problem (``Ds K0 Ds`` for a vector rho, notes
    §7) with penalty ``penalty_rho``.
    """

    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    eq_coef: NDArray[np.float64]
    eq_rhs: float
    linear_coef: NDArray[np.float64]
    l1_weight: float
    u_coef: NDArray[np.float64]
    penalty_rho: float

    @property
    def working_kernel(self) -> NDArray[np.float64]: ...

    @property
    def working_eigh(self) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None: ...

    def working_proxy_kernel(self, state: Any) -> NDArray[np.float64]:
        """``K*(alpha)`` in working coordinates (dense)."""
        ...

    def bound_for_kernel(self, K: NDArray[np.float64], alpha: NDArray[np.float64]) -> float:
        """Certified upper bound on the optimum from ANY PSD working kernel ``K`` (notes §3)."""
        ...

    def bound_for_kernel_excess(
        self, K: NDArray[np.float64], alpha: NDArray[np.float64]
    ) -> tuple[float, float, float]:
        """:meth:`bound_for_kernel` as ``(bound - f(0), its rounding error bound, bound)``, the
        excess formed without ``f(0)`` (notes §10)."""
        ...


__all__ = ["DenseProblem", "Problem"]
