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

Every problem holds its kernel through one :class:`KernelOperator` (dense ``K0`` or a factored
``K0 = Phi diag(s) Phi'``, chosen by :func:`indefsvm.proxy.problems.make_operator`), so a problem
works on both at once. A solver declares what it needs from the operator (its ``needs``
attribute: ``"n_by_n"``, ``"eigenbasis"``) and :func:`indefsvm.solve` refuses, before any work, a
problem whose operator does not provide it.

Two levels of problem, like skglm's datafit/penalty "required attributes":

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
        """The objective at ``alpha`` only (``Evaluation.partial``).

        May return a full evaluation. Solvers fall back to :meth:`evaluate` for problems written
        before this member existed, so implementing it is optional.
        """
        ...

    @property
    def provides(self) -> frozenset[str]:
        """Capabilities a solver may rely on (the operator's, plus ``"second_order"``)."""
        ...

    def check_solver(self, method: str, needs: frozenset[str]) -> None:
        """Raise a clear ``ValueError`` if solver ``method``, which declares ``needs`` (names of
        :attr:`KernelOperator.provides`), cannot run on this problem."""
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
        excess formed without ``f(0)`` (theory.md §10: the monitor certifies with it)."""
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
        """A certified bound from LIBSVM's solution on the proxy kernel (theory.md §4)."""
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
        """Certified upper bound on the optimum from ANY PSD working kernel ``K`` (theory.md §3)."""
        ...

    def bound_for_kernel_excess(
        self, K: NDArray[np.float64], alpha: NDArray[np.float64]
    ) -> tuple[float, float, float]:
        """:meth:`bound_for_kernel` as ``(bound - f(0), its rounding error bound, bound)``, the
        excess formed without ``f(0)`` (theory.md §10)."""
        ...


@runtime_checkable
class KernelOperator(Protocol):
    """``u -> K*(u) = (K0 + sigma u u')_+`` for one form of ``K0`` (theory.md §1, §5, §11).

    The problems of :mod:`indefsvm.proxy.problems` talk to their kernel only through these
    members; ``K0`` here is the WORKING kernel (``Ds K0 Ds`` for a componentwise rho, theory.md §7).

    Attributes
    ----------
    n : int
        Size of ``K0``.
    sigma : float
        ``1 / (4 rho)`` of the working problem.
    eigenvalues : ndarray or None
        Eigenvalues of ``K0`` that the objective needs (all n for a dense ``K0``, the m nonzero
        ones for a factored one; None on the PSD-only path of PerturbSVM).
    low_rank : bool
        True for a factored ``K0`` (results then hold factors, never n x n arrays).
    provides : frozenset of str
        Capabilities: ``"n_by_n"`` (n x n arrays may be formed: ``K0``, ``K*``, LIBSVM checks),
        ``"eigenbasis"`` (a dense eigendecomposition of ``K0``, :meth:`dense_eigh`),
        ``"objective_only"`` (:meth:`objective_state`, cheaper than :meth:`state`),
        ``"factor"`` (:meth:`proxy_features`, :meth:`feature_coef`).
    excess_accuracy : float
        Accuracy asked of the penalty's change (set by the problem, theory.md §10).
    """

    n: int
    sigma: float
    eigenvalues: NDArray[np.float64] | None
    low_rank: bool
    provides: frozenset[str]

    def state(self, u: NDArray[np.float64], *, smoothing: float = 0.0) -> Any:
        """What an evaluation needs at ``u`` (a :class:`~indefsvm.proxy.operators.ProxyState`)."""
        ...

    def matvec(self, state: Any, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``K*(u) v`` without forming ``K*``."""
        ...

    def smoothed_kstar_u(self, state: Any, smoothing: float) -> NDArray[np.float64]:
        """The paper's Moreau-Yosida smoothed ``K_eps u`` (Sect. 3)."""
        ...

    def project_rows(self, state: Any, R: NDArray[np.float64]) -> NDArray[np.float64]:
        """``R P_+``: the out-of-sample map of kernel rows (theory.md §8)."""
        ...

    def kernel(self, state: Any) -> NDArray[np.float64]:
        """The dense ``K*`` in working coordinates (needs ``"n_by_n"``)."""
        ...

    def result_kernel(self, state: Any) -> Any:
        """``K*`` in the original coordinates, as results hold it (dense or a factor)."""
        ...

    def dense_eigh(self) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """A dense eigendecomposition of ``K0`` (needs ``"eigenbasis"``; None: PSD-only)."""
        ...

    def k0_eigenvalues(self) -> NDArray[np.float64]:
        """The eigenvalues of ``K0`` (for input checks such as PerturbSVM's PSD test)."""
        ...

    def spectral_scale(self) -> float:
        """A curvature scale of ``K0`` for step sizes and rounding bounds."""
        ...

    def reset_warm_start(self) -> None:
        """Forget what was kept between evaluations (a solve starts from nothing)."""
        ...


__all__ = ["DenseProblem", "KernelOperator", "Problem"]
