"""Problems of paper 004 as objects: feasible set, objective, gradient, proxy kernel.

A problem maximises the concave function (paper 004 eq. 7, and eq. 17/20 for the extensions)

    f(alpha) = l(alpha) - 1/2 u'K0 u - ||u||^4 / (16 rho) + rho * sum_i min(0, lambda_i(M))^2

over ``A = {a'alpha = t, lower <= alpha <= upper}``, where ``u = S alpha``,
``M = K0 + u u' / (4 rho)`` and ``l`` is linear (possibly minus an l1 term). This closed form is
the value of eq. (7) (theory.md §1); its gradient is ``grad l - S K*(alpha) u`` (theory.md §2).
Solvers only use this interface: :meth:`project` / :meth:`prox`, :meth:`evaluate` (objective,
gradient and a certified upper bound on the optimum in one O(n^2) pass), :meth:`libsvm_upper_bound`
and :meth:`proxy_kernel`. The certified bounds, their rounding analysis and the LIBSVM checks
are in :mod:`indefsvm.proxy.certificate` (theory.md §3, §4, §10); the problem's methods of the
same names call into it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.linalg.factor import LowRankKernel
from indefsvm.linalg.projection import project_hyperplane_box
from indefsvm.proxy import _libsvm, certificate
from indefsvm.proxy.lowrank import LowRankProxyOperator
from indefsvm.proxy.operators import ProxyKernelOperator, ProxyState
from indefsvm.utils.validation import (
    check_binary_labels,
    check_finite_matrix,
    check_positive,
    check_sample_weight,
    check_square_symmetric,
    class_weights_to_C,
)

#: Epoch budget of LIBLINEAR in the linear form of the LIBSVM check (a large low-rank problem):
#: the check's bound is the primal of whatever ``w`` it returns, so a short run only loosens it.
_LINEAR_MAX_ITER = 2000


def _check_input_scale(K: NDArray[np.float64]) -> None:
    """Refuse a kernel so large that its squared eigenvalues overflow (before any eigh)."""
    with np.errstate(over="ignore"):
        scale = float(np.max(np.abs(K))) * K.shape[0] if K.size else 0.0
    if not np.isfinite(scale) or scale > 1e150:
        raise ValueError(
            f"K0 has entries up to {float(np.max(np.abs(K))):.3g}: at this scale the squared "
            "eigenvalues in the objective overflow double precision. Rescale the kernel (e.g. "
            "K0 / np.abs(K0).max()) and choose C and rho on that scale."
        )


def _check_sigma(rho: float) -> None:
    """Refuse a rho so small that ``sigma = 1/(4 rho)`` overflows."""
    if not np.isfinite(1.0 / (4.0 * rho)):
        raise ValueError(
            f"rho = {rho!r} is too small: sigma = 1/(4 rho) overflows. Use a rho of at least "
            "1e-300 relative to the kernel's scale (typical values are 1e-2 to 1e3)."
        )


def check_kernel_input(
    K0: ArrayLike | LowRankKernel, *, symmetrize: bool = False
) -> NDArray[np.float64] | LowRankKernel:
    """``K0`` as a problem takes it: a :class:`LowRankKernel` as given, else a checked array.

    An array must be square, finite and symmetric (``symmetrize=True`` uses ``(K0 + K0')/2``);
    a factored kernel is symmetric by construction, so ``symmetrize`` does not apply to it.
    """
    if isinstance(K0, LowRankKernel):
        if symmetrize:
            raise ValueError("symmetrize does not apply to a LowRankKernel (symmetric by design).")
        return K0
    return check_square_symmetric(
        K0, name="K0", symmetrize=symmetrize, min_size=2,
        advice="Pass symmetrize=True to use (K0 + K0')/2.",
    )  # fmt: skip


def make_operator(
    K0: NDArray[np.float64] | LowRankKernel,
    sigma: float,
    *,
    row_scale: NDArray[np.float64] | None = None,
    eigh: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
    assume_psd: bool = False,
    rcond: float | None = None,
) -> ProxyKernelOperator | LowRankProxyOperator:
    """The proxy-kernel operator ``u -> K*(u) = (K0 + sigma u u')_+`` for this form of ``K0``.

    The one place where the form of ``K0`` is looked at: a dense (checked) array gives
    :class:`~indefsvm.proxy.operators.ProxyKernelOperator` (an eigendecomposition of
    ``Ds K0 Ds``, theory.md §5), a :class:`~indefsvm.linalg.factor.LowRankKernel` gives
    :class:`~indefsvm.proxy.lowrank.LowRankProxyOperator` (an orthonormal basis of the
    factor's range, theory.md §11). Both follow :class:`indefsvm.proxy.protocols.KernelOperator`,
    so every problem works on both and every solver checks the operator's ``provides``.

    Parameters
    ----------
    K0 : ndarray of shape (n, n) or LowRankKernel
        The kernel in the ORIGINAL coordinates (validated by :func:`check_kernel_input`).
    sigma : float
        ``1 / (4 rho)`` of the working problem.
    row_scale : ndarray of shape (n,), optional
        ``Ds = diag(rho_i^(1/4))`` of a componentwise rho (theory.md §7).
    eigh : tuple, optional
        A precomputed eigendecomposition of a dense ``K0`` (scalar rho only).
    assume_psd : bool
        The caller checked that a dense ``K0`` is PSD (PerturbSVM): no eigendecomposition.
    rcond : float, optional
        Relative cut-off of the factor's range (low-rank only; default 1e-12).
    """
    if isinstance(K0, LowRankKernel):
        if eigh is not None:
            raise ValueError("eigh does not apply to a LowRankKernel (its basis is computed).")
        return LowRankProxyOperator(
            K0, sigma, row_scale=row_scale, rank_tol=1e-12 if rcond is None else rcond
        )
    if rcond is not None:
        raise ValueError("rcond applies to a LowRankKernel only; K0 is a dense array.")
    if eigh is not None and row_scale is not None:
        raise ValueError("a precomputed eigh of K0 cannot be used with a vector rho.")
    K_work = K0 if row_scale is None else (row_scale[:, None] * K0) * row_scale[None, :]
    _check_input_scale(K_work)
    return ProxyKernelOperator(K_work, sigma, eigh=eigh, assume_psd=assume_psd, row_scale=row_scale)


def minimize_piecewise_linear(
    c0: float,
    w: NDArray[np.float64],
    a: NDArray[np.float64],
    r: NDArray[np.float64],
    *,
    method: str = "select",
) -> tuple[float, float]:
    """Minimise ``c0 * b + sum_i w_i max(0, a_i b + r_i)`` over the scalar ``b`` exactly.

    The function is convex piecewise linear with breakpoints ``-r_i / a_i``; its slope increases
    by ``w_i |a_i|`` at each breakpoint, so the minimiser is the breakpoint where the cumulative
    slope first becomes non-negative (a weighted median; the best intercept of the certified
    primal bound, theory.md §3). ``method="select"`` finds it by weighted quickselect in expected
    O(n) (:func:`indefsvm.linalg.projection.weighted_breakpoint_argmin`), ``method="sort"`` by a
    full sort, O(n log n); both pick the same breakpoint (up to the summation order of the
    slopes at an exact tie).

    Returns
    -------
    b, value : float
        A minimiser and the minimum. Raises ``ValueError`` if the function is unbounded below.
    """
    if method not in ("select", "sort"):
        raise ValueError(f"method must be 'select' or 'sort'; got {method!r}.")
    if method == "select":
        from indefsvm.linalg.projection import weighted_breakpoint_argmin

        status, b, value = weighted_breakpoint_argmin(
            float(c0),
            np.ascontiguousarray(w, dtype=np.float64),
            np.ascontiguousarray(a, dtype=np.float64),
            np.ascontiguousarray(r, dtype=np.float64),
        )
        if status == 0:
            return float(b), float(value)
        if status == 2 and c0 == 0:  # every a_i == 0: a constant function of b
            return 0.0, float(np.sum(w * np.maximum(0.0, r)))
        raise ValueError("the intercept problem is unbounded (is a class or a bound missing?).")
    nz = a != 0
    # Pieces with a_i == 0 are constants w_i max(0, r_i): no breakpoint, but part of the value.
    constant = float(np.sum(w[~nz] * np.maximum(0.0, r[~nz])))
    w, a, r = w[nz], a[nz], r[nz]
    breaks = -r / a
    order = np.argsort(breaks)
    slope_left = c0 + float(np.sum(w[a < 0] * a[a < 0]))
    slope_right = c0 + float(np.sum(w[a > 0] * a[a > 0]))
    tol = 1e-12 * (abs(c0) + float(np.sum(w * np.abs(a))))  # rounding: flat, not unbounded
    if slope_left > tol or slope_right < -tol or breaks.size == 0:
        if breaks.size == 0 and c0 == 0:
            return 0.0, constant
        raise ValueError("the intercept problem is unbounded (is a class or a bound missing?).")
    slopes = slope_left + np.cumsum((w * np.abs(a))[order])
    k = int(np.searchsorted(slopes, 0.0, side="left"))
    b = float(breaks[order[min(k, breaks.size - 1)]])
    value = c0 * b + float(np.sum(w * np.maximum(0.0, a * b + r))) + constant
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
        Certified upper bound on the optimal value (theory.md §3), valid for any ``alpha``.
    intercept : float
        The intercept that attains ``upper_bound`` (best ``b`` of the primal).
    state : ProxyState
        Proxy kernel quantities at ``alpha`` (for products with ``K*(alpha)``).
    partial : bool
        True for an objective-only evaluation (:meth:`ProxyKernelProblem.evaluate_objective`):
        ``gradient`` is None, ``upper_bound`` is +inf (no bound computed), ``intercept`` NaN and
        ``state`` has no eigenvectors. :meth:`ProxyKernelProblem.evaluate` completes it.
    objective_excess, upper_excess : float
        ``f(alpha) - f(0)`` and ``upper_bound - f(0)``, computed WITHOUT the constant
        ``f(0) = rho ||(K0)_-||_F^2`` (from :attr:`ProxyState.neg_sq_change`, theory.md §10): the
        difference that certifies, accurate even when ``f(0)`` swamps the alpha-dependent part
        (NaN when not computed: the monitor then subtracts ``f(0)`` itself).
    objective_error, upper_error : float
        Bounds on the rounding errors of the two excesses.
    """

    alpha: NDArray[np.float64]
    objective: float
    smooth_objective: float
    gradient: NDArray[np.float64] | None
    upper_bound: float
    intercept: float
    state: ProxyState
    partial: bool = False
    objective_excess: float = float("nan")
    upper_excess: float = float("nan")
    objective_error: float = 0.0
    upper_error: float = 0.0

    @property
    def gap(self) -> float:
        """Certified duality gap ``upper_bound - objective`` at this point."""
        return self.upper_bound - self.objective


class ProxyKernelProblem:
    """Base class: the concave program ``max_{alpha in A} f(alpha)`` of paper 004.

    Subclasses set the feasible set, ``sign`` (``S``), the linear term and implement the primal
    bound :meth:`_primal_from` and :meth:`_libsvm_solution`.

    ``rho`` may be a scalar or a vector with one penalty per training point: the componentwise
    penalty ``sum_ij H_ij (K_ij - K0_ij)^2`` with ``H_ij = sqrt(rho_i rho_j)`` (paper 004 Sect. 4.4,
    Theorem 3, eq. 23-24). It is reduced to the scalar problem with ``rho = 1`` by the diagonal
    scaling ``K0 -> Ds K0 Ds``, ``u -> Ds^-1 u``, ``K* = Ds^-1 (.)_+ Ds^-1`` with
    ``Ds = diag(rho_i^(1/4))`` (theory.md §7), so every solver handles it unchanged.
    """

    #: Short name used in results, the CLI and :data:`PROBLEM_TYPES`.
    kind: str = "base"
    #: Keyword options the problem accepts (checked by :func:`make_problem`).
    options: tuple[str, ...] = ()
    #: What ``y`` is (for messages); None for an unsupervised problem that takes no ``y``.
    targets: str | None = None

    # Public attributes used by the solvers (all in the working, i.e. scaled, coordinates):
    #   n, lower, upper, eq_coef, eq_rhs   feasible set {eq_coef'a = eq_rhs, lower <= a <= upper}
    #   linear_coef, l1_weight             l(alpha) = linear_coef'alpha - l1_weight ||alpha||_1
    #   u_coef                             u = u_coef * alpha (S, divided by Ds for a vector rho)
    #   penalty_rho                        rho of the working problem (1 for a vector rho)
    #   operator                           ProxyKernelOperator on the working kernel operator.K0

    def __init__(
        self,
        K0: NDArray[np.float64] | LowRankKernel,
        rho: float | ArrayLike,
        *,
        lower: NDArray[np.float64],
        upper: NDArray[np.float64],
        eq_coef: NDArray[np.float64],
        eq_rhs: float,
        sign: NDArray[np.float64],
        linear_coef: NDArray[np.float64],
        l1_weight: float = 0.0,
        eigh: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
        assume_psd: bool = False,
        rcond: float | None = None,
    ) -> None:
        # rho: a scalar, or one per point (the Ds scaling of theory.md §7); then the feasible set.
        self.n = n = K0.shape[0]
        rho_arr = np.asarray(check_positive(rho, "rho", allow_array=True), dtype=np.float64)
        if rho_arr.ndim == 0:
            self.rho: float | NDArray[np.float64] = float(rho_arr)
            self.scale: NDArray[np.float64] | None = None
            self.penalty_rho = float(rho_arr)
        else:
            if rho_arr.shape != (n,):
                raise ValueError(
                    f"rho must be a positive scalar or a vector of length n = {n} "
                    f"(one penalty per training point); got shape {rho_arr.shape}."
                )
            self.rho = rho_arr
            self.scale = rho_arr**0.25
            self.penalty_rho = 1.0
        self.lower = lower
        self.upper = upper
        self.eq_coef = eq_coef
        self.eq_rhs = float(eq_rhs)
        self.sign = sign
        self.u_coef = sign if self.scale is None else sign / self.scale
        self.linear_coef = linear_coef
        self.l1_weight = float(l1_weight)
        _check_sigma(self.penalty_rho)
        self.operator = make_operator(
            K0,
            1.0 / (4.0 * self.penalty_rho),
            row_scale=self.scale,
            eigh=eigh,
            assume_psd=assume_psd,
            rcond=rcond,
        )
        self._check_objective_range()

    def set_penalty(self, rho: float) -> None:
        """Change a scalar ``rho`` in place, keeping the operator and its eigendecomposition.

        ``rho`` enters the operator only through ``sigma = 1/(4 rho)`` (theory.md §1): the
        eigendecomposition of ``K0`` (or the factor's basis) does not depend on it, so a
        problem re-scaled after it was built (``rho_scale="spectral"``) costs no second one. A
        vector rho rescales the working kernel itself; build a new problem for it.
        """
        if self.scale is not None:
            raise ValueError("set_penalty changes a scalar rho only; this problem has a vector rho")
        rho = float(check_positive(rho, "rho"))
        _check_sigma(rho)
        self.rho = self.penalty_rho = rho
        self.operator.sigma = 1.0 / (4.0 * rho)
        self.reset_warm_start()
        self._check_objective_range()

    def _check_objective_range(self) -> None:
        """Refuse problems whose objective terms overflow double precision.

        With ``B = max ||u||^2`` over the box, the terms of ``f`` are bounded by ``B lambda_max``
        (quadratic), ``sigma B^2`` (rank-one term) and ``rho n lambda_max^2`` (penalty). A term
        that overflows would turn every evaluation into inf/NaN (the solver could not even
        backtrack), so the problem is refused with the way out, instead of running into it.
        """
        bound = np.maximum(np.abs(self.lower), np.abs(self.upper)) * np.abs(self.u_coef)
        with np.errstate(over="ignore", invalid="ignore"):
            # numpy scalars, not Python floats: u_sq**2 must give inf (refused below with the
            # way out), not raise OverflowError, for 1e154 < u_sq < 1.8e308.
            u_sq = np.float64(np.sum(bound**2))
            lam = self.operator.spectral_scale()
            terms = {
                "u'K0u": u_sq * lam,
                "||u||^4/(16 rho)": self.operator.sigma * u_sq**2,
                "rho ||(K0)_-||_F^2": self.penalty_rho * self.n * lam**2,
            }
        bad = [name for name, value in terms.items() if not np.isfinite(value) or value > 1e300]
        if bad:
            raise ValueError(
                f"the objective's terms {', '.join(bad)} overflow double precision for this "
                f"problem (max |eigenvalue of K0| = {lam:.3g}, rho = {self.penalty_rho:.3g}, "
                f"max ||u||^2 = {u_sq:.3g}). Rescale the kernel (e.g. K0 / np.abs(K0).max()) and "
                "choose C and rho on that scale; rho must not be vanishingly small either."
            )

    @property
    def low_rank(self) -> bool:
        """True when ``K0`` is factored (a :class:`~indefsvm.linalg.factor.LowRankKernel`)."""
        return self.operator.low_rank

    @property
    def provides(self) -> frozenset[str]:
        """What a solver may ask of this problem: its operator's capabilities
        (:attr:`indefsvm.proxy.protocols.KernelOperator.provides`), plus ``"second_order"`` when
        the derivative of ``u -> K*(u) u`` is available (a factored ``K0``: theory.md §12; a
        vector rho works on the factor with rows scaled by ``Ds``, theory.md §7, whose
        derivative is the same)."""
        caps = set(self.operator.provides)
        if hasattr(self.operator, "kstar_u_jacobian"):
            caps.add("second_order")
        return frozenset(caps)

    def check_solver(self, method: str, needs: frozenset[str] | set[str]) -> None:
        """Refuse, before any work, a solver that needs what this problem's operator lacks.

        Solvers declare ``needs`` (:class:`indefsvm.proxy.protocols.KernelOperator` names the
        capabilities): ACCPM forms n x n Newton systems (``"n_by_n"``), SIQCLP also needs a
        dense eigenbasis of ``K0`` (``"eigenbasis"``). A low-rank operator provides them only up
        to its ``dense_limit`` (:data:`~indefsvm.linalg.factor.DENSE_LIMIT`).
        """
        # the size limit first: it is what a user can act on (method='pg')
        missing = sorted(set(needs) - set(self.operator.provides), key=lambda c: (c != "n_by_n", c))
        if not missing:
            return
        what = {
            "n_by_n": "n x n matrices (ACCPM: the Newton system of its analytic centers; "
            "SIQCLP: dense kernels in its conic program)",
            "eigenbasis": "a dense eigendecomposition of K0",
            "factor": "a factored K0 (a LowRankKernel, e.g. Nystroem features and signature)",
        }
        needed = "; ".join(what.get(name, name) for name in missing)
        if self.low_rank and getattr(self.operator.backend, "distributed", False):
            raise ValueError(
                f"method={method!r} needs {needed}, which would be formed in this process from "
                "a factor that lives on the Dask workers: a distributed low-rank problem forms "
                "no n x n arrays at any n. Use method='pg' (O(nm) per iteration, run on the "
                "workers), or fit on an in-memory X."
            )
        if self.low_rank:
            raise ValueError(
                f"method={method!r} needs {needed}, which the low-rank problem forms only up to "
                f"n = {self.operator.dense_limit}; here n = {self.n}. Use method='pg' (O(nm) "
                "per iteration)."
            )
        raise ValueError(
            f"method={method!r} needs {needed}, which this problem's kernel operator "
            f"({type(self.operator).__name__}) does not provide. Use method='pg'."
        )

    def check_options(self, *, method: str, libsvm_every: int | None = None) -> None:
        """Raise, before solving, for options this problem could only refuse after iterating
        (a LIBSVM check it cannot run: :func:`~indefsvm.proxy.certificate.check_libsvm_options`)."""
        certificate.check_libsvm_options(self, libsvm_every)

    @property
    def has_linear_check(self) -> bool:
        """Whether the LIBSVM check has a linear (LIBLINEAR) form on a factor of ``K*``."""
        return type(self)._linear_solution is not ProxyKernelProblem._linear_solution

    def reset_warm_start(self) -> None:
        """Forget state kept between evaluations (the secular solver's warm start).

        The monitor calls it when a solve starts, so a solve does not depend on what was
        evaluated before it and repeated solves are bitwise identical.
        """
        self._tau_warm = None
        self.operator.reset_warm_start()

    def set_excess_accuracy(self, tol: float) -> None:
        """Ask for ``f - f(0)`` and ``UB - f(0)`` accurate to ``1e-3 tol`` of their size.

        The monitor calls it with its ``tol``: the penalty's change is then refined root by root
        only where the plain difference's rounding could reach a thousandth of what the
        certificate resolves (:func:`~indefsvm.proxy.operators.neg_sq_change_fields`); ``tol = 0``
        refines
        wherever rounding shows. The objective and gradient do not depend on it.
        """
        self.operator.excess_accuracy = 1e-3 * max(float(tol), 0.0)

    def lipschitz_estimate(self) -> float:
        """Scale of the gradient's Lipschitz constant in the problem's metric.

        ``max |lambda(Ds K0 Ds)|`` (the working kernel): in the metric :attr:`metric` the Hessian
        of the quadratic part is ``S (Ds K0 Ds) S``. Step policies start from it and adapt.
        """
        return self.operator.spectral_scale()

    @property
    def baseline_objective(self) -> float:
        """``f(0) = rho ||(K0)_-||_F^2``: the value of the objective at ``alpha = 0``.

        It does not depend on alpha, so relative gaps are measured against ``f(alpha) - f(0)``
        (``SolverMonitor``), which tends to the SVM dual objective on ``(K0)_+`` as rho grows.
        """
        d = self.operator.eigenvalues
        if d is None:
            return 0.0
        return self.penalty_rho * float(np.sum(np.minimum(d, 0.0) ** 2))

    @property
    def metric(self) -> NDArray[np.float64] | None:
        """Diagonal metric in which the problem is well scaled (None: Euclidean).

        With a vector rho, ``alpha_i`` enters ``u`` as ``alpha_i / rho_i^(1/4)``, so the curvature
        of ``f`` along coordinate i scales like ``rho_i^(-1/2)``; one tiny ``rho_i`` makes the
        Euclidean problem arbitrarily ill-conditioned (a Euclidean step policy then stalls).
        Gradient steps measured in the metric ``diag(rho_i^(-1/2))`` (i.e. in the variables
        ``alpha_i / rho_i^(1/4)``) see the well-scaled working kernel ``Ds K0 Ds``.
        """
        if self.scale is None:
            return None
        # In z = sqrt(w) alpha = alpha / rho_i^(1/4), u = S z exactly: the working problem.
        return 1.0 / self.scale**2

    # -- feasible set ------------------------------------------------------------------------
    #: Multiplier of the last projection, the warm start of the next one (speed only: the
    #: projection is exact from any start; cleared by :meth:`reset_warm_start`).
    _tau_warm: dict[bool, float] | None = None

    def _project(self, v, a, lower, upper, l1=None, *, metric: bool = False):
        """Projection with the multiplier warm-started from the previous call (theory.md §6)."""
        if self._tau_warm is None:
            self._tau_warm = {}
        x, tau = project_hyperplane_box(
            v, a, self.eq_rhs, lower, upper, l1=l1,
            tau0=self._tau_warm.get(metric), return_tau=True,
        )  # fmt: skip
        self._tau_warm[metric] = tau
        return x

    def project(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """Euclidean projection onto the feasible set (exact, O(n) per Newton step; theory.md
        §6)."""
        return self._project(v, self.eq_coef, self.lower, self.upper)

    def prox(
        self,
        v: NDArray[np.float64],
        step: float,
        metric: NDArray[np.float64] | None = None,
    ) -> NDArray[np.float64]:
        """Proximal step of ``step * l1 term`` restricted to the feasible set (theory.md §6).

        With ``metric = w`` (positive weights) the step is taken in the norm
        ``sum_i w_i x_i^2``: ``argmin 1/2 sum w_i (x_i - v_i)^2 + step * l1(x)`` over the feasible
        set, computed exactly by the change of variables ``z = sqrt(w) x``, which keeps the set a
        hyperplane-box.
        """
        l1 = step * self.l1_weight if self.l1_weight != 0.0 else None
        if metric is None:
            if l1 is None:
                return self.project(v)
            return self._project(v, self.eq_coef, self.lower, self.upper, l1)
        r = np.sqrt(metric)
        z = self._project(
            r * v,
            self.eq_coef / r,
            r * self.lower,
            r * self.upper,
            None if l1 is None else l1 / r,
            metric=True,
        )
        return z / r

    def initial_point(self) -> NDArray[np.float64]:
        """A feasible starting point (the projection of 0)."""
        return self.project(np.zeros(self.n))

    # -- objective ---------------------------------------------------------------------------
    def linear_value(self, alpha: NDArray[np.float64]) -> float:
        """``l(alpha)``: the linear part of the objective including the l1 term (SVR)."""
        return float(self.linear_coef @ alpha) - self.l1_weight * float(np.sum(np.abs(alpha)))

    def state(self, alpha: NDArray[np.float64], *, smoothing: float = 0.0) -> ProxyState:
        """Proxy kernel quantities at ``alpha`` (in the scaled coordinates if rho is a vector)."""
        return self.operator.state(self.u_coef * alpha, smoothing=smoothing)

    def decision_values(self, state: ProxyState) -> NDArray[np.float64]:
        """``K*(alpha) S alpha`` in the original coordinates: training decision values less b."""
        return state.kstar_u if self.scale is None else state.kstar_u / self.scale

    def _objective_values(
        self, alpha: NDArray[np.float64], state: ProxyState
    ) -> tuple[float, float]:
        """``f(alpha)`` and its smooth part (``f`` plus the l1 term) from an evaluated state.

        The closed form of theory.md §1 (paper 004 eq. 7): one formula for :meth:`evaluate`
        and :meth:`evaluate_objective` (whose state has the same roots, without eigenvectors).
        """
        # theory.md §1: f = l - 1/2 u'K0u - sigma ||u||^4 / 4 + rho sum min(0, lambda)^2
        smooth = (
            float(self.linear_coef @ alpha)
            - 0.5 * state.u_k0_u
            - 0.25 * self.operator.sigma * state.u_norm_sq**2
            + self.penalty_rho * state.neg_sq_sum
        )
        return smooth - self.l1_weight * float(np.sum(np.abs(alpha))), smooth

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
        state = self.state(alpha, smoothing=smoothing)
        objective, smooth = self._objective_values(alpha, state)
        kstar_u = (
            self.operator.smoothed_kstar_u(state, smoothing) if smoothing > 0 else state.kstar_u
        )
        gradient = self.linear_coef - self.u_coef * kstar_u
        decision = self.decision_values(state)
        primal, intercept = self._primal_from(decision, state.u_kstar_u)
        # the certified bound (theory.md §3) and the excesses over f(0) that certify (§10)
        upper_bound = primal + certificate.penalty(self, state)
        excess, excess_error = certificate.objective_excess(self, alpha, state)
        upper_excess, upper_error = certificate.upper_excess(self, primal, decision, state)
        return Evaluation(
            alpha=alpha,
            objective=objective,
            smooth_objective=smooth,
            gradient=gradient,
            upper_bound=upper_bound,
            intercept=intercept,
            state=state,
            objective_excess=excess,
            upper_excess=upper_excess,
            objective_error=excess_error,
            upper_error=upper_error,
        )

    def evaluate_objective(self, alpha: NDArray[np.float64]) -> Evaluation:
        """Objective only at ``alpha``: a PARTIAL :class:`Evaluation` (no gradient, no bound).

        ``f`` (theory.md §1) needs only the negative eigenvalues of ``M(alpha)``, not their
        eigenvectors, ``K*u`` or the second product with ``V`` that the gradient and the
        certified bound need (:meth:`evaluate`); the accelerated projected gradient's
        backtracking test needs only ``f`` at the trial point. The value is the one
        :meth:`evaluate` returns, to rounding (the same roots). Operators without an
        objective-only path (e.g. the low-rank one) get a full evaluation instead.
        """
        alpha = np.asarray(alpha, dtype=np.float64)
        if "objective_only" not in self.operator.provides:
            return self.evaluate(alpha)
        state = self.operator.objective_state(self.u_coef * alpha)
        objective, smooth = self._objective_values(alpha, state)
        excess, excess_error = certificate.objective_excess(self, alpha, state)
        return Evaluation(
            alpha=alpha,
            objective=objective,
            smooth_objective=smooth,
            gradient=None,
            upper_bound=np.inf,
            intercept=np.nan,
            state=state,
            partial=True,
            objective_excess=excess,
            upper_excess=np.inf,
            objective_error=excess_error,
        )

    def objective(self, alpha: ArrayLike) -> float:
        """``f(alpha)``, the value of eq. (7) (or 17/20/22)."""
        return self.evaluate(np.asarray(alpha, dtype=np.float64)).objective

    def gradient(self, alpha: ArrayLike) -> NDArray[np.float64]:
        """Exact gradient of the smooth part of ``f`` (theory.md §2)."""
        return self.evaluate(np.asarray(alpha, dtype=np.float64)).gradient

    def duality_gap(self, alpha: ArrayLike) -> float:
        """Certified gap ``UB(alpha) - f(alpha) >= OPT - f(alpha)`` for feasible ``alpha``."""
        return self.evaluate(np.asarray(alpha, dtype=np.float64)).gap

    def kernel_from_state(self, state: ProxyState) -> Any:
        """The proxy kernel of an evaluated state, in the original coordinates.

        Dense (n x n) for a dense ``K0``; a :class:`~indefsvm.proxy.lowrank.LowRankProxyKernel`
        factor for a low-rank one (never n x n).
        """
        return self.operator.result_kernel(state)

    def proxy_kernel(self, alpha: ArrayLike) -> Any:
        """The proxy kernel ``K*(alpha)`` of eq. (5)/(16)/(24) (see :meth:`kernel_from_state`)."""
        return self.kernel_from_state(self.state(np.asarray(alpha, dtype=np.float64)))

    def feature_coef(
        self, alpha: ArrayLike, *, state: ProxyState | None = None
    ) -> NDArray[np.float64]:
        """Weights ``c`` (m,) of the inductive decision in factor coordinates (theory.md §8).

        A low-rank ``K0 = Phi diag(s) Phi'`` only: a point with factor row ``phi`` has the
        out-of-sample decision ``phi @ c`` (:meth:`out_of_sample_rows` applied to its kernel
        row ``Phi diag(s) phi``); on a training point that is ``(P_+ k_i)'u``, not the row
        ``(K* u)_i`` of the learned kernel (see
        :meth:`indefsvm.proxy.lowrank.LowRankProxyOperator.feature_coef`). Cost O(nm).
        """
        alpha = np.asarray(alpha, dtype=np.float64)
        if state is None:
            state = self.state(alpha)
        return self.operator.feature_coef(state, self.sign * alpha)

    def out_of_sample_rows(
        self, alpha: ArrayLike, K_test_train: ArrayLike, *, state: ProxyState | None = None
    ) -> NDArray[np.float64]:
        """Inductive proxy-kernel rows for new points (theory.md §8).

        A new point's row of ``M = K0 + sigma u u'`` is its similarity row ``k_x`` (no rank-one
        term), and ``K* = P_+ M``; the map is ``k_x -> P_+ k_x`` (with the ``Ds`` scaling for a
        vector rho). Given the rows of ``M`` for training points it returns the rows of ``K*``
        exactly.

        Parameters
        ----------
        alpha : array_like of shape (n,)
            The solution.
        K_test_train : array_like of shape (m, n)
            Similarities of m new points to the n training points (``K0`` scale).
        state : ProxyState, optional
            The evaluated state at ``alpha`` (recomputed when omitted).
        """
        R = np.asarray(K_test_train, dtype=np.float64)
        if R.ndim != 2 or R.shape[1] != self.n:
            raise ValueError(
                f"K_test_train must have shape (m, {self.n}) (similarities to the {self.n} "
                f"training points); got {R.shape}."
            )
        if not np.all(np.isfinite(R)):
            raise ValueError("K_test_train contains NaN or inf.")
        if state is None:
            state = self.state(np.asarray(alpha, dtype=np.float64))
        if self.scale is None:
            return self.operator.project_rows(state, R)
        return self.operator.project_rows(state, R * self.scale[None, :]) / self.scale[None, :]

    def proxy_kernel_matvec(self, alpha: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
        """``K*(alpha) @ v`` without forming ``K*``."""
        state = self.state(np.asarray(alpha, dtype=np.float64))
        v = np.asarray(v, dtype=np.float64)
        if self.scale is None:
            return self.operator.matvec(state, v)
        return self.operator.matvec(state, v / self.scale) / self.scale

    # -- dense data for cutting-plane solvers (protocols.DenseProblem) --------------------------
    @property
    def working_kernel(self) -> NDArray[np.float64]:
        """The kernel of the working problem (``Ds K0 Ds`` for a vector rho), dense."""
        return self.operator.K0

    @property
    def working_eigh(self) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """``(eigenvalues, eigenvectors)`` of :attr:`working_kernel` (None for a PSD-only path).

        A low-rank operator computes it once from the dense kernel, up to its dense limit.
        """
        return self.operator.dense_eigh()

    def working_proxy_kernel(self, state: ProxyState) -> NDArray[np.float64]:
        """``K*(alpha)`` of an evaluated state in working coordinates (dense)."""
        return self.operator.kernel(state)

    # -- the certificate: bounds on the optimum (indefsvm.proxy.certificate) -----------------
    def bound_for_kernel(self, K: NDArray[np.float64], alpha: NDArray[np.float64]) -> float:
        """Certified upper bound on the optimum from any PSD working kernel ``K`` (theory.md §3;
        :func:`~indefsvm.proxy.certificate.bound_for_kernel`)."""
        return certificate.bound_for_kernel(self, K, alpha)

    def bound_for_kernel_excess(
        self, K: NDArray[np.float64], alpha: NDArray[np.float64]
    ) -> tuple[float, float, float]:
        """:meth:`bound_for_kernel` less ``f(0)``, formed without it, its rounding error bound and
        the bound (theory.md §3, §10; :func:`~indefsvm.proxy.certificate.bound_for_kernel_excess`).
        """
        return certificate.bound_for_kernel_excess(self, K, alpha)

    def libsvm_upper_bound(
        self, evaluation: Evaluation, *, tol: float = 1e-3
    ) -> tuple[float, float, NDArray[np.float64]]:
        """``(upper_bound, intercept, alpha_libsvm)`` from LIBSVM's solution on ``K*(alpha)``
        (theory.md §4; :func:`~indefsvm.proxy.certificate.libsvm_upper_bound`)."""
        return certificate.libsvm_upper_bound(self, evaluation, tol)

    def libsvm_bound_excess(
        self, evaluation: Evaluation, *, tol: float = 1e-3
    ) -> tuple[float, float, float]:
        """:meth:`libsvm_upper_bound` less ``f(0)``, formed without it, its error bound and the
        bound (theory.md §10; :func:`~indefsvm.proxy.certificate.libsvm_bound_excess`)."""
        return certificate.libsvm_bound_excess(self, evaluation, tol)

    def primal_value(self, g: NDArray[np.float64], w_norm_sq: float) -> tuple[float, float]:
        """Primal value and intercept of ``w = sum_j u_j phi(x_j)`` (see :meth:`_primal_from`)."""
        return self._primal_from(g, w_norm_sq)

    # -- subclass hooks ----------------------------------------------------------------------
    def _primal_from(self, g: NDArray[np.float64], u_k_u: float) -> tuple[float, float]:
        """Primal value, with the best intercept, of ``w = sum_j u_j phi(x_j)``.

        ``g = K u`` are the decision values without intercept and ``u_k_u = ||w||^2``.
        Returns ``(value, intercept)``.
        """
        raise NotImplementedError

    def _libsvm_solution(self, K: NDArray[np.float64], tol: float) -> NDArray[np.float64]:
        """Train LIBSVM on ``K`` and return its ``u = S alpha`` in the original coordinates."""
        raise NotImplementedError

    def _linear_solution(self, F: NDArray[np.float64], tol: float) -> NDArray[np.float64]:
        """Weights ``w`` of the problem's SVM on the features ``F`` (LIBLINEAR), if it has one."""
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
    rho : float or array_like of shape (n,)
        Penalty on ``||K - K0||_F^2`` (> 0); a vector gives componentwise penalties
        ``H_ij = sqrt(rho_i rho_j)`` (Theorem 3).
    class_weight : None, "balanced", "paper" or dict
        Per-class multipliers of ``C`` (``"paper"``: the published code's
        ``C * n_pos / n_neg`` for the negative class).
    symmetrize : bool
        Accept a non-symmetric ``K0`` and use ``(K0 + K0')/2``.
    eigh : tuple, optional
        Precomputed ``(eigenvalues, eigenvectors)`` of the (symmetrised) ``K0``.
    """

    kind = "svc"
    options: tuple[str, ...] = ("C", "rho", "class_weight", "sample_weight")
    targets: str | None = "labels of two classes"

    def __init__(
        self,
        K0: ArrayLike,
        y: ArrayLike,
        *,
        C: float = 1.0,
        rho: float | ArrayLike = 1.0,
        class_weight: None | str | Mapping[Any, float] = None,
        sample_weight: ArrayLike | None = None,
        symmetrize: bool = False,
        eigh: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
        assume_psd: bool = False,
        rcond: float | None = None,
    ) -> None:
        K0 = check_kernel_input(K0, symmetrize=symmetrize)
        feasible = self._feasible_set(
            K0.shape[0], y, C=C, class_weight=class_weight, sample_weight=sample_weight
        )
        super().__init__(K0, rho, **feasible, eigh=eigh, assume_psd=assume_psd, rcond=rcond)

    def _feasible_set(
        self, n: int, y: ArrayLike, *, C: float, class_weight: Any, sample_weight: Any = None
    ) -> dict[str, Any]:
        """Check the labels and C; the set ``{y'alpha = 0, 0 <= alpha <= C_i}`` (eq. 4), with
        ``C_i = C * class weight * sample weight`` (LIBSVM's instance weights)."""
        labels = check_binary_labels(y, n)
        self.classes = labels.classes
        self.y = labels.y
        self.C = check_positive(C, "C")
        self.class_weight = class_weight
        self.box = class_weights_to_C(self.C, self.y, class_weight, labels.classes)
        self.sample_weight = check_sample_weight(sample_weight, n)
        if self.sample_weight is not None:
            self.box = self.box * self.sample_weight
            for sign in (1.0, -1.0):
                if not np.any(self.box[self.y == sign] > 0):
                    raise ValueError(
                        f"sample_weight is zero for every point of class "
                        f"{labels.classes[int(sign > 0)]!r}: each class needs a positive weight."
                    )
        return {
            "lower": np.zeros(n),
            "upper": self.box,
            "eq_coef": self.y,
            "eq_rhs": 0.0,
            "sign": self.y,
            "linear_coef": np.ones(n),
        }

    def _primal_from(self, g: NDArray[np.float64], u_k_u: float) -> tuple[float, float]:
        # 1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i (g_i + b)), best b (theory.md §3)
        y = self.y
        b, hinge = minimize_piecewise_linear(0.0, self.box, -y, 1.0 - y * g)
        return 0.5 * u_k_u + hinge, b

    def _libsvm_solution(self, K: NDArray[np.float64], tol: float) -> NDArray[np.float64]:
        fit = _libsvm.train_precomputed(K, self.y, svm_type=0, C=1.0, box=self.box, tol=tol)
        # decision = K coef + b with coef = y*alpha when LIBSVM's first label is +1.
        return fit.coef if fit.labels[0] == 1 else -fit.coef

    def _linear_solution(self, F: NDArray[np.float64], tol: float) -> NDArray[np.float64]:
        from sklearn.svm import LinearSVC

        # LIBLINEAR regularises the intercept as an extra feature: a large scale makes that
        # negligible; the bound re-optimises b exactly anyway. Its coordinate descent visits
        # the points in a random order: seeded, so a check gives the same bound every run.
        model = LinearSVC(
            loss="hinge", max_iter=_LINEAR_MAX_ITER, C=1.0, dual=True, tol=tol,
            intercept_scaling=10.0, random_state=0,
        )  # fmt: skip
        model.fit(F, self.y, sample_weight=self.box)
        return np.ravel(model.coef_)


def _check_psd_for_perturb(lam: NDArray[np.float64], psd_tol: float) -> None:
    """Refuse ``K0`` with eigenvalues ``lam`` (ascending) below ``-psd_tol * max|lambda|``."""
    if not lam.size:
        return
    scale = max(1.0, float(np.max(np.abs(lam))))
    if lam[0] < -psd_tol * scale:
        raise ValueError(
            f"problem='perturb' (PerturbSVM, paper 004 Sect. 4.3) needs a PSD kernel, but K0 has "
            f"{int(np.sum(lam < -psd_tol * scale))} eigenvalues below -psd_tol * max|lambda| = "
            f"{-psd_tol * scale:.3g} (smallest {lam[0]:.6g}). Use problem='svc' for indefinite "
            "kernels, or raise psd_tol if these are rounding errors."
        )


class PerturbProblem(ClassificationProblem):
    """PerturbSVM: the classification problem for a PSD (Mercer) kernel, eq. (21)-(22).

    ``max e'alpha - 1/2 u'K0u - ||u||^4/(16 rho)`` (eq. 22; with a vector rho the fourth-order
    term is ``1/16 ||W^-1/2 u||^4``, eq. 25): no eigenvalue work per iteration, ``K* = K0 +
    u u'/(4 rho)`` (eq. 21). ``K0`` is checked to be PSD within ``psd_tol * max|lambda|``; its
    eigenvalues within that tolerance below zero are treated as rounding errors.
    """

    kind = "perturb"
    options = ("C", "rho", "class_weight", "sample_weight", "psd_tol")

    def __init__(
        self, K0: ArrayLike, y: ArrayLike, *, psd_tol: float = 1e-10, **options: Any
    ) -> None:
        # options: C, rho, class_weight, symmetrize, rcond, as ClassificationProblem takes
        # them (eigh and assume_psd are this class's to set).
        refused = sorted(set(options) & {"eigh", "assume_psd"})
        if refused:
            raise TypeError(f"PerturbProblem takes no {', '.join(refused)} (it assumes K0 PSD).")
        symmetrize = options.pop("symmetrize", False)
        K0 = check_kernel_input(K0, symmetrize=symmetrize)
        if not isinstance(K0, LowRankKernel):
            # Checked before the operator is built: a PSD dense K0 needs no eigendecomposition
            # (eq. 22), so its eigenvalues are computed once here and not kept.
            _check_psd_for_perturb(np.linalg.eigvalsh(K0), psd_tol)
        super().__init__(K0, y, assume_psd=True, **options)
        if self.low_rank:  # the factored operator has the (m) eigenvalues of K0 anyway
            _check_psd_for_perturb(self.operator.k0_eigenvalues(), psd_tol)


class RegressionProblem(ProxyKernelProblem):
    """Indefinite SVR, paper 004 eq. (14)-(17).

    ``max y'alpha - eps ||alpha||_1 - 1/2 alpha'K*alpha + rho ||K* - K0||_F^2`` over
    ``{e'alpha = 0, -C <= alpha <= C}`` with ``K* = (K0 + alpha alpha'/(4 rho))_+`` (eq. 16).
    The l1 term is handled by the prox (theory.md §6), not by smoothing. The certified bound is the
    epsilon-insensitive primal of ``w = sum_j alpha_j phi(x_j)`` with the best intercept.
    """

    kind = "svr"
    options = ("C", "rho", "epsilon", "sample_weight")
    targets = "real-valued regression targets"

    def __init__(
        self,
        K0: ArrayLike,
        y: ArrayLike,
        *,
        C: float = 1.0,
        epsilon: float = 0.1,
        rho: float | ArrayLike = 1.0,
        sample_weight: ArrayLike | None = None,
        symmetrize: bool = False,
        eigh: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
        rcond: float | None = None,
    ) -> None:
        K0 = check_kernel_input(K0, symmetrize=symmetrize)
        feasible = self._feasible_set(
            K0.shape[0], y, C=C, epsilon=epsilon, sample_weight=sample_weight
        )
        super().__init__(K0, rho, **feasible, eigh=eigh, rcond=rcond)

    def _feasible_set(
        self, n: int, y: ArrayLike, *, C: float, epsilon: float, sample_weight: Any = None
    ) -> dict[str, Any]:
        """Check targets, C, epsilon; the set ``{e'alpha = 0, -C_i <= alpha <= C_i}`` (eq. 17)
        with ``C_i = C * sample weight``."""
        y = check_finite_matrix(y, name="y (regression targets)", ndim=1)
        if y.shape[0] != n:
            raise ValueError(f"y must be a vector of {n} regression targets; got shape {y.shape}.")
        self.y = y
        self.C = check_positive(C, "C")
        epsilon = float(epsilon)
        if not np.isfinite(epsilon) or epsilon < 0:
            raise ValueError(f"epsilon must be finite and >= 0; got {epsilon!r}.")
        self.epsilon = epsilon
        self.classes = None
        self.sample_weight = check_sample_weight(sample_weight, n)
        self.box = np.full(n, self.C) if self.sample_weight is None else self.C * self.sample_weight
        return {
            "lower": -self.box,
            "upper": self.box.copy(),
            "eq_coef": np.ones(n),
            "eq_rhs": 0.0,
            "sign": np.ones(n),
            "linear_coef": self.y,
            "l1_weight": epsilon,
        }

    def _primal_from(self, g: NDArray[np.float64], u_k_u: float) -> tuple[float, float]:
        # 1/2||w||^2 + C sum max(0, |y_i - g_i - b| - eps): two hinges per point in b.
        r = self.y - g
        w = np.concatenate([self.box, self.box])
        a = np.concatenate([-np.ones(self.n), np.ones(self.n)])
        off = np.concatenate([r - self.epsilon, -r - self.epsilon])
        b, loss = minimize_piecewise_linear(0.0, w, a, off)
        return 0.5 * u_k_u + loss, b

    def _libsvm_solution(self, K: NDArray[np.float64], tol: float) -> NDArray[np.float64]:
        fit = _libsvm.train_precomputed(
            K, self.y, svm_type=3, C=1.0, box=self.box, epsilon=self.epsilon, tol=tol
        )
        return fit.coef

    def _linear_solution(self, F: NDArray[np.float64], tol: float) -> NDArray[np.float64]:
        from sklearn.svm import LinearSVR

        # The budget of the classification check: with LinearSVR's default of 1000 epochs, a
        # 60-point check at tol 1e-3 stopped at a primal twice LIBSVM's; 2000 gave 3 % above.
        model = LinearSVR(
            loss="epsilon_insensitive", epsilon=self.epsilon, C=self.C, dual=True, tol=tol,
            intercept_scaling=10.0, max_iter=_LINEAR_MAX_ITER, random_state=0,
        )  # fmt: skip
        model.fit(F, self.y, sample_weight=self.sample_weight)
        return np.ravel(model.coef_)


class OneClassProblem(ProxyKernelProblem):
    """Indefinite one-class SVM, paper 004 eq. (18)-(20).

    ``max -1/2 alpha'K*alpha + rho ||K* - K0||_F^2`` over ``{e'alpha = 1, 0 <= alpha <=
    1/(nu n)}`` (the paper's scale). The certified bound is the one-class primal
    ``1/2||w||^2 - r + 1/(nu n) sum max(0, r - g_i)`` with the best offset ``r``; the
    ``intercept`` is ``-r`` so that ``decision = K* alpha + intercept`` is >= 0 on inliers.
    """

    kind = "oneclass"
    options = ("rho", "nu", "sample_weight")
    targets = None

    def __init__(
        self,
        K0: ArrayLike,
        *,
        nu: float = 0.5,
        rho: float | ArrayLike = 1.0,
        sample_weight: ArrayLike | None = None,
        symmetrize: bool = False,
        eigh: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
        rcond: float | None = None,
    ) -> None:
        K0 = check_kernel_input(K0, symmetrize=symmetrize)
        feasible = self._feasible_set(K0.shape[0], nu=nu, sample_weight=sample_weight)
        super().__init__(K0, rho, **feasible, eigh=eigh, rcond=rcond)

    def _feasible_set(self, n: int, *, nu: float, sample_weight: Any = None) -> dict[str, Any]:
        """Check nu; the set ``{e'alpha = 1, 0 <= alpha <= 1/(nu n)}`` (eq. 20). Sample weights
        ``w`` give the bounds ``w_i / (nu sum(w))`` (the primal's loss weighted by ``w_i``;
        uniform weights give eq. 20)."""
        nu = float(nu)
        if not (np.isfinite(nu) and 0 < nu <= 1):
            raise ValueError(f"nu must be in (0, 1]; got {nu!r}.")
        self.nu = nu
        self.classes = None
        self.sample_weight = check_sample_weight(sample_weight, n)
        if self.sample_weight is None:
            self.box = np.full(n, 1.0 / (nu * n))
        else:
            self.box = self.sample_weight / (nu * float(self.sample_weight.sum()))
        return {
            "lower": np.zeros(n),
            "upper": self.box.copy(),
            "eq_coef": np.ones(n),
            "eq_rhs": 1.0,
            "sign": np.ones(n),
            "linear_coef": np.zeros(n),
        }

    def initial_point(self) -> NDArray[np.float64]:
        if self.sample_weight is None:
            return np.full(self.n, 1.0 / self.n)
        # nu * box sums to 1 and lies in the box (nu <= 1)
        return self.nu * self.box

    def _primal_from(self, g: NDArray[np.float64], u_k_u: float) -> tuple[float, float]:
        r, value = minimize_piecewise_linear(-1.0, self.box, np.ones(self.n), -g)
        return 0.5 * u_k_u + value, -r

    def _libsvm_solution(self, K: NDArray[np.float64], tol: float) -> NDArray[np.float64]:
        # LIBSVM's one-class alphas sum to nu*n (bound 1, or the instance weight): rescale to
        # e'alpha = 1.
        fit = _libsvm.train_precomputed(
            K, np.ones(self.n), svm_type=2, nu=self.nu, tol=tol, box=self.sample_weight
        )
        return fit.coef / float(np.sum(fit.coef))


#: Problem registry: ``problem=`` name -> class. A new problem is one class with ``kind``,
#: ``options`` and ``targets`` plus one line here (or :func:`register_problem`).
PROBLEM_TYPES: dict[str, type[ProxyKernelProblem]] = {
    "svc": ClassificationProblem,
    "svr": RegressionProblem,
    "oneclass": OneClassProblem,
    "perturb": PerturbProblem,
}

#: Problem types accepted by :func:`make_problem` and ``indefsvm.solve(problem=...)``.
PROBLEMS = tuple(PROBLEM_TYPES)


def register_problem(cls: type[ProxyKernelProblem]) -> type[ProxyKernelProblem]:
    """Add a problem class to :data:`PROBLEM_TYPES` under its ``kind`` (usable as a decorator)."""
    global PROBLEMS
    PROBLEM_TYPES[cls.kind] = cls
    PROBLEMS = tuple(PROBLEM_TYPES)
    return cls


def make_problem(
    kind: str,
    K0: ArrayLike,
    y: ArrayLike | None = None,
    *,
    symmetrize: bool = False,
    **options: Any,
) -> ProxyKernelProblem:
    """Build the problem object registered as ``kind`` (see :data:`PROBLEM_TYPES`).

    ``options`` are the problem's own parameters (``C``, ``rho``, ``epsilon``, ``nu``,
    ``class_weight``, ``psd_tol``); ``None`` means "not given" (the class default applies). An
    option the problem does not take, or ``y`` for a problem without targets, is refused: it would
    otherwise be silently ignored.
    """
    if kind not in PROBLEM_TYPES:
        raise ValueError(f"problem must be one of {tuple(PROBLEM_TYPES)}; got {kind!r}.")
    cls = PROBLEM_TYPES[kind]
    given = {name: value for name, value in options.items() if value is not None}
    wrong = sorted(set(given) - set(cls.options))
    if wrong:
        raise ValueError(
            f"{', '.join(wrong)} {'does' if len(wrong) == 1 else 'do'} not apply to "
            f"problem={kind!r}, which takes {', '.join(cls.options)}."
        )
    if cls.targets is None and y is not None:
        raise ValueError(
            f"problem={kind!r} is unsupervised and takes no y (labels or targets); pass y=None."
        )
    if cls.targets is not None and y is None:
        raise ValueError(
            f"problem={kind!r} needs y ({cls.targets}); only unsupervised problems omit it."
        )
    if cls.targets is None:
        return cls(K0, symmetrize=symmetrize, **given)
    return cls(K0, y, symmetrize=symmetrize, **given)
