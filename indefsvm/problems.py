"""Problems of paper 004 as objects: feasible set, objective, gradient, proxy kernel, certified gap.

A problem maximises the concave function (paper 004 eq. 7, and eq. 17/20 for the extensions)

    f(alpha) = l(alpha) - 1/2 u'K0 u - ||u||^4 / (16 rho) + rho * sum_i min(0, lambda_i(M))^2

over ``A = {a'alpha = t, lower <= alpha <= upper}``, where ``u = S alpha``,
``M = K0 + u u' / (4 rho)`` and ``l`` is linear (possibly minus an l1 term). This closed form is
the value of eq. (7) (notes §1); its gradient is ``grad l - S K*(alpha) u`` (notes §2). Solvers
only use this interface: :meth:`project` / :meth:`prox`, :meth:`evaluate` (objective, gradient and
a certified upper bound on the optimum in one O(n^2) pass), :meth:`libsvm_upper_bound` and
:meth:`proxy_kernel`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm import _libsvm
from indefsvm._validation import (
    check_binary_labels,
    check_positive,
    check_square_symmetric,
    class_weights_to_C,
)
from indefsvm.projection import project_hyperplane_box
from indefsvm.proxy import ProxyKernelOperator, ProxyState


def minimize_piecewise_linear(
    c0: float, w: NDArray[np.float64], a: NDArray[np.float64], r: NDArray[np.float64]
) -> tuple[float, float]:
    """Minimise ``c0 * b + sum_i w_i max(0, a_i b + r_i)`` over the scalar ``b`` exactly.

    The function is convex piecewise linear with breakpoints ``-r_i / a_i``; its slope increases
    by ``w_i |a_i|`` at each breakpoint, so the minimiser is the breakpoint where the cumulative
    slope first becomes non-negative (a weighted median). O(n log n).

    Returns
    -------
    b, value : float
        A minimiser and the minimum. Raises ``ValueError`` if the function is unbounded below.
    """
    nz = a != 0
    w, a, r = w[nz], a[nz], r[nz]
    breaks = -r / a
    order = np.argsort(breaks)
    slope_left = c0 + float(np.sum(w[a < 0] * a[a < 0]))
    slope_right = c0 + float(np.sum(w[a > 0] * a[a > 0]))
    if slope_left > 0 or slope_right < 0 or breaks.size == 0:
        if breaks.size == 0 and c0 == 0:
            return 0.0, 0.0
        raise ValueError("the intercept problem is unbounded (is a class or a bound missing?).")
    slopes = slope_left + np.cumsum((w * np.abs(a))[order])
    k = int(np.searchsorted(slopes, 0.0, side="left"))
    b = float(breaks[order[min(k, breaks.size - 1)]])
    value = c0 * b + float(np.sum(w * np.maximum(0.0, a * b + r)))
    return b, value


@dataclass
class Evaluation:
    """One evaluation of a problem at a point ``alpha``.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
    objective : float
        ``f(alpha)``, the value of eq. (7) (or 17/20) at the paper's scale.
    smooth_objective : float
        ``f(alpha)`` plus the non-smooth l1 term (equal to ``objective`` without one).
    gradient : ndarray of shape (n,)
        Gradient of the smooth part (exact, or the paper's smoothed one if requested).
    upper_bound : float
        Certified upper bound on the optimal value (notes §3), valid for any ``alpha``.
    intercept : float
        The intercept that attains ``upper_bound`` (best ``b`` of the primal).
    state : ProxyState
        Proxy kernel quantities at ``alpha`` (for products with ``K*(alpha)``).
    """

    alpha: NDArray[np.float64]
    objective: float
    smooth_objective: float
    gradient: NDArray[np.float64]
    upper_bound: float
    intercept: float
    state: ProxyState

    @property
    def gap(self) -> float:
        """Certified duality gap ``upper_bound - objective`` at this point."""
        return self.upper_bound - self.objective


class ProxyKernelProblem:
    """Base class: the concave program ``max_{alpha in A} f(alpha)`` of paper 004.

    Subclasses set the feasible set, ``sign`` (``S``), the linear term and implement the primal
    bound :meth:`_primal_value` and the LIBSVM interface.
    """

    #: Short name used in results and the CLI.
    kind: str = "base"

    def __init__(
        self,
        K0: NDArray[np.float64],
        rho: float,
        *,
        lower: NDArray[np.float64],
        upper: NDArray[np.float64],
        eq_coef: NDArray[np.float64],
        eq_rhs: float,
        sign: NDArray[np.float64],
        linear_coef: NDArray[np.float64],
        l1_weight: float = 0.0,
        eigh: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
    ) -> None:
        self.rho = check_positive(rho, "rho")
        self.n = K0.shape[0]
        self.lower = lower
        self.upper = upper
        self.eq_coef = eq_coef
        self.eq_rhs = float(eq_rhs)
        self.sign = sign
        self.linear_coef = linear_coef
        self.l1_weight = float(l1_weight)
        self.operator = ProxyKernelOperator(K0, 1.0 / (4.0 * self.rho), eigh=eigh)

    # -- feasible set ------------------------------------------------------------------------
    def project(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """Euclidean projection onto the feasible set (exact, O(n log n); notes §6)."""
        return project_hyperplane_box(v, self.eq_coef, self.eq_rhs, self.lower, self.upper)

    def prox(self, v: NDArray[np.float64], step: float) -> NDArray[np.float64]:
        """Proximal step of ``step * l1 term`` restricted to the feasible set (notes §6)."""
        if self.l1_weight == 0.0:
            return self.project(v)
        return project_hyperplane_box(
            v, self.eq_coef, self.eq_rhs, self.lower, self.upper, l1=step * self.l1_weight
        )

    def initial_point(self) -> NDArray[np.float64]:
        """A feasible starting point (the projection of 0)."""
        return self.project(np.zeros(self.n))

    # -- objective ---------------------------------------------------------------------------
    def _linear(self, alpha: NDArray[np.float64]) -> float:
        return float(self.linear_coef @ alpha) - self.l1_weight * float(np.sum(np.abs(alpha)))

    def _penalty(self, state: ProxyState) -> float:
        """``rho ||K* - K0||_F^2 = rho ||sigma u u' - M_-||_F^2`` (no cancellation)."""
        sigma = self.operator.sigma
        return self.rho * (
            sigma**2 * state.u_norm_sq**2 - 2.0 * sigma * state.u_mneg_u + state.neg_sq_sum
        )

    def evaluate(self, alpha: NDArray[np.float64], *, smoothing: float = 0.0) -> Evaluation:
        """Objective, gradient and certified upper bound at ``alpha`` in one O(n^2) pass.

        Parameters
        ----------
        alpha : ndarray of shape (n,)
            A point (feasible for ``objective`` to be a lower bound on the optimum; the upper bound
            is valid for any point).
        smoothing : float
            If positive, the gradient is the paper's Moreau-Yosida smoothed one with this epsilon
            (Sect. 3); the objective and bound stay exact.
        """
        alpha = np.asarray(alpha, dtype=np.float64)
        u = self.sign * alpha
        state = self.operator.state(u, smoothing=smoothing)
        sigma = self.operator.sigma
        # notes §1: f = l - 1/2 u'K0u - sigma ||u||^4 / 4 + rho sum min(0, lambda)^2
        smooth = (
            float(self.linear_coef @ alpha)
            - 0.5 * state.u_k0_u
            - 0.25 * sigma * state.u_norm_sq**2
            + self.rho * state.neg_sq_sum
        )
        objective = smooth - self.l1_weight * float(np.sum(np.abs(alpha)))
        kstar_u = (
            self.operator.smoothed_kstar_u(state, smoothing) if smoothing > 0 else state.kstar_u
        )
        gradient = self.linear_coef - self.sign * kstar_u
        primal, intercept = self._primal_value(state.kstar_u, state.u_kstar_u)
        upper_bound = primal + self._penalty(state)
        return Evaluation(
            alpha=alpha,
            objective=objective,
            smooth_objective=smooth,
            gradient=gradient,
            upper_bound=upper_bound,
            intercept=intercept,
            state=state,
        )

    def objective(self, alpha: ArrayLike) -> float:
        """``f(alpha)``, the value of eq. (7) (or 17/20)."""
        return self.evaluate(np.asarray(alpha, dtype=np.float64)).objective

    def gradient(self, alpha: ArrayLike) -> NDArray[np.float64]:
        """Exact gradient of the smooth part of ``f`` (notes §2)."""
        return self.evaluate(np.asarray(alpha, dtype=np.float64)).gradient

    def duality_gap(self, alpha: ArrayLike) -> float:
        """Certified gap ``UB(alpha) - f(alpha) >= OPT - f(alpha)`` for feasible ``alpha``."""
        return self.evaluate(np.asarray(alpha, dtype=np.float64)).gap

    def proxy_kernel(self, alpha: ArrayLike) -> NDArray[np.float64]:
        """The dense proxy kernel ``K*(alpha)`` of eq. (5)/(16)."""
        u = self.sign * np.asarray(alpha, dtype=np.float64)
        return self.operator.kernel(self.operator.state(u))

    def proxy_kernel_matvec(self, alpha: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
        """``K*(alpha) @ v`` without forming ``K*``."""
        u = self.sign * np.asarray(alpha, dtype=np.float64)
        return self.operator.matvec(self.operator.state(u), np.asarray(v, dtype=np.float64))

    # -- subclass hooks ----------------------------------------------------------------------
    def _primal_value(self, kstar_u: NDArray[np.float64], u_kstar_u: float) -> tuple[float, float]:
        """Primal value (with the best intercept) of ``w = sum_j u_j phi(x_j)`` for ``K*``."""
        raise NotImplementedError

    def libsvm_upper_bound(
        self, evaluation: Evaluation, *, tol: float = 1e-3
    ) -> tuple[float, float, NDArray[np.float64]]:
        """Upper bound from LIBSVM's solution on ``K*(alpha)`` (notes §4).

        Trains LIBSVM on the dense proxy kernel at ``evaluation.alpha`` and evaluates the PRIMAL
        of its solution (so the bound stays valid whatever LIBSVM's tolerance), plus the penalty
        ``rho ||K* - K0||_F^2`` of the same kernel.

        Returns
        -------
        upper_bound, intercept, alpha_libsvm
        """
        raise NotImplementedError


class ClassificationProblem(ProxyKernelProblem):
    """Indefinite SVM classification, paper 004 eq. (4)/(7).

    ``max e'alpha - 1/2 u'K*u + rho ||K* - K0||_F^2`` over ``{y'alpha = 0, 0 <= alpha <= C_i}``
    with ``u = Y alpha`` and ``K* = (K0 + u u'/(4 rho))_+``.

    Parameters
    ----------
    K0 : array_like of shape (n, n)
        Symmetric, possibly indefinite kernel.
    y : array_like of shape (n,)
        Labels of exactly two classes (any type; mapped to ±1, see ``classes``).
    C : float
        Misclassification penalty (> 0).
    rho : float
        Penalty on ``||K - K0||_F^2`` (> 0).
    class_weight : None, "balanced", "paper" or dict
        Per-class multipliers of ``C`` (``"paper"``: the published code's
        ``C * n_pos / n_neg`` for the negative class).
    symmetrize : bool
        Accept a non-symmetric ``K0`` and use ``(K0 + K0')/2``.
    eigh : tuple, optional
        Precomputed ``(eigenvalues, eigenvectors)`` of the (symmetrised) ``K0``.
    """

    kind = "svc"

    def __init__(
        self,
        K0: ArrayLike,
        y: ArrayLike,
        *,
        C: float = 1.0,
        rho: float = 1.0,
        class_weight: None | str | Mapping[Any, float] = None,
        symmetrize: bool = False,
        eigh: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
    ) -> None:
        K0 = check_square_symmetric(K0, name="K0", symmetrize=symmetrize, min_size=2)
        n = K0.shape[0]
        labels = check_binary_labels(y, n)
        self.classes = labels.classes
        self.y = labels.y
        self.C = check_positive(C, "C")
        self.class_weight = class_weight
        self.box = class_weights_to_C(self.C, self.y, class_weight, labels.classes)
        super().__init__(
            K0,
            rho,
            lower=np.zeros(n),
            upper=self.box,
            eq_coef=self.y,
            eq_rhs=0.0,
            sign=self.y,
            linear_coef=np.ones(n),
            eigh=eigh,
        )

    def _primal_value(self, kstar_u: NDArray[np.float64], u_kstar_u: float) -> tuple[float, float]:
        # 1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i (g_i + b)), best b (notes §3)
        y = self.y
        b, hinge = minimize_piecewise_linear(0.0, self.box, -y, 1.0 - y * kstar_u)
        return 0.5 * u_kstar_u + hinge, b

    def libsvm_upper_bound(
        self, evaluation: Evaluation, *, tol: float = 1e-3
    ) -> tuple[float, float, NDArray[np.float64]]:
        state = evaluation.state
        K = self.operator.kernel(state)
        c_pos = float(self.box[self.y > 0][0])
        c_neg = float(self.box[self.y < 0][0])
        fit = _libsvm.train_precomputed(
            K, self.y, svm_type=0, C=1.0, class_weights={1: c_pos, -1: c_neg}, tol=tol
        )
        # decision = K coef + b with coef = y*alpha when LIBSVM's first label is +1.
        u_lib = fit.coef if fit.labels[0] == 1 else -fit.coef
        g = K @ u_lib
        primal, b = self._primal_value(g, float(u_lib @ g))
        alpha_lib = np.clip(self.y * u_lib, 0.0, self.box)
        return primal + self._penalty(state), b, alpha_lib
