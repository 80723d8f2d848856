"""Chen & Ye's exchange method for the SIQCLP formulation (paper 004, Sect. 3.4, Algorithm 3).

Problem (8) moves the inner minimisation over kernels into infinitely many constraints,

    max t  s.t.  a in A,  t <= l(a) - 1/2 ||L_i' u||^2 + rho ||K_i - K0||_F^2  for all K_i >= 0,

with ``u = u_coef * a`` and ``K_i = L_i L_i'``. The exchange method solves the QCLP (13) with the
finitely many kernels collected so far (starting from ``K_1 = (K0)_+``), adds the constraint of
the minimising kernel ``K_{i+1} = K*(a_i)`` (Theorem 1, closed form), prunes the constraints
whose multipliers vanish (Chen & Ye), and stops when the new constraint is satisfied at
``(t_i, a_i)`` (step 2 of Algorithm 3) or when the certified gap of the core reaches the
tolerance.

Two master problems (``master``):

``"mkl"`` (default)
    The QCLP (13) as the regularised multiple-kernel-learning problem it is (Chen & Ye; paper 004
    Sect. 3.4 step 3 and Sect. 5.3): ``min_{lambda in simplex} J(lambda)``, one SVM-type QP on
    the kernel mixture ``sum_i lambda_i K_i`` per evaluation of ``J``, ``dJ/dlambda_i`` from
    Danskin's theorem, Newton steps on the simplex (or SimpleMKL's reduced gradient,
    ``mkl_step="reduced_gradient"``); see :mod:`indefsvm.proxy.solvers._mkl`. The weights ``lambda``
    are the multipliers that pruning and the mixture bound use.
``"qclp"``
    The QCLP (13) as the paper states it, through cvxpy and a conic solver (the paper used
    MOSEK); the ``compile`` modes below apply to it.

The exchange iterates are Algorithm 3's (``stabilise="none"``; the default with
``master="qclp"``) or proximal (``stabilise="proximal"``, the default with the MKL master): the
master maximises ``min_i L_i(a) - mu/2 ||a - c||^2`` around a centre ``c`` that moves only when
``f`` gains at least a tenth of what the model predicted (a proximal bundle method whose model
pieces are the exact constraint functions; ``mu`` halves after a serious step and doubles after
a null step, as in the proximal ACCPM). Every constraint function is still the value of a PSD
kernel, so the bounds below are certified whichever variant runs. Measured (sigmoid kernel,
C = rho = 1, docs/benchmarks.md): the proximal MKL variant reaches a certified gap of 1e-5 of
``f(alpha) - f(0)`` at n = 200 in about 1 s and at n = 300 in a few seconds, Algorithm 3 with the
same master about 1e-4 after 60 s at n = 200, and the cvxpy master 1e-3 after 180 s.

Certified upper bounds offered each exchange: the core's bound at ``alpha_i``, the bound of the
multipliers' kernel mixture (:func:`_mixture_bound`) and, with the MKL master when the model
promises little more than the gap left, the kernel-SVM bound ``omega(K*(a)) + rho ||K*(a) -
K0||^2`` at the best point ``a`` with ``omega`` from an accurately solved SVM on ``K*(a)``
(certified by the primal of its solution): its excess over the optimum is second order in the
error of ``a`` when the SVM solution is unique, where the core's bound is first order.

Each constraint is written with the factor ``L_i`` (positive eigenpairs of ``K_i``) as
``t <= l(a) - 1/2 sum_squares(L_i' u) + c_i``, which cvxpy compiles to second-order cones. For
SVR the l1 term of ``l`` is ``cp.norm1``.

Two ways of building the QCLP each iteration with ``master="qclp"`` (``compile``):

``"rebuild"`` (default)
    A new cvxpy problem with constant factors ``L_i`` of their exact rank. Compilation is a small
    part of the time because the factors are constants.
``"parametric"``
    One DPP problem (``problem.is_dpp()`` is checked) compiled once: a fixed
    number of constraint slots, each a parameter ``L_j`` of shape ``(n, width)`` (the factor,
    zero-padded) and a parameter ``c_j``. Unused slots are neutralised by their values
    (``L_j = 0``, ``c_j = max_i c_i + 1``: every constraint implies ``t <= l(a) + c_i``, so the
    neutral one is slack by at least 1 and carries no multiplier). Later exchanges only update
    parameter values, and cvxpy reuses the cached canonicalisation; the capacity grows in blocks
    (8 slots, factor widths rounded up to 16 columns) and the problem is recompiled only when a
    block fills (``info["n_compilations"]``).

Measured (``docs/benchmarks.md``, "SIQCLP compiled once"): compilation is a small part of the
time in either mode (5% of a rebuilt run at n = 200); the conic solver dominates (92%:
Clarabel's KKT factorisation with the dense cones of the factors, about ``m r n^2`` work per
interior-point iteration for ``m`` kernels of rank ``r``). The compiled problem re-solves
without compiling (a re-solve is 0.72 of a rebuilt QCLP at n = 100), but cvxpy's DPP
canonicalisation of dense parameter factors is expensive (6.9 s for 8 slots at n = 200; out of
memory at 24 GB at n = 300, hence a ``ResourceWarning`` above ``PARAMETRIC_WARN_SIZE``
parameter entries), so ``rebuild`` stays the default.

Compile time (cvxpy's ``compilation_time``, plus the one-off DPP canonicalisation), the conic
solver's own time and the QCLPs' wall time (``time_qclp``: also model construction and reading
the solution) are reported separately in ``info``.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np
from numpy.typing import NDArray

from indefsvm.proxy.protocols import DenseProblem
from indefsvm.proxy.result import SolveResult
from indefsvm.proxy.solvers._mkl import MKLMaster
from indefsvm.proxy.solvers._monitor import SolverMonitor
from indefsvm.threads import solver_blas_threads
from indefsvm.utils.validation import blas_limit

COMPILE_MODES = ("rebuild", "parametric")
#: Master problems: the regularised MKL dual of (13) (SVM solves on the kernel mixture) or the
#: QCLP (13) through cvxpy (the paper's formulation).
MASTERS = ("mkl", "qclp")
#: Exchange iterates as Algorithm 3 ("none") or with a proximal term (a proximal bundle method).
STABILISERS = ("proximal", "none")
#: Parameter entries (slots x n x width) above which ``compile="parametric"`` warns: cvxpy's DPP
#: canonicalisation used 47 s at 307,200 entries (n = 200) and was killed for lack of memory
#: (24 GB) at n = 300 (docs/benchmarks.md).
PARAMETRIC_WARN_SIZE = 250_000
#: Conic solvers (second-order cones) tried, in this order, after the requested one fails.
FALLBACK_SOLVERS = ("CLARABEL", "SCS", "ECOS", "MOSEK")

logger = logging.getLogger(__name__)


#: cvxpy option that bounds a conic solver's wall time, per solver (so max_time holds inside a
#: subproblem too; solvers without one are only checked between subproblems).
TIME_LIMIT_OPTIONS = {"CLARABEL": "time_limit", "SCS": "time_limit_secs"}


class SubproblemTimeout(RuntimeError):
    """The solve's ``max_time`` ran out inside (or before) a QCLP subproblem."""


class SubproblemError(RuntimeError):
    """Every conic solver tried failed on the QCLP (13); ``attempts`` lists what each said."""

    def __init__(self, attempts: list[tuple[str, str]]) -> None:
        self.attempts = attempts
        detail = "; ".join(f"{name}: {msg}" for name, msg in attempts)
        super().__init__(f"the QCLP subproblem (13) could not be solved ({detail})")


def _psd_factor(K: NDArray[np.float64]) -> NDArray[np.float64]:
    """``L`` with ``L L' = (K)_+`` from the positive eigenpairs (exact rank)."""
    w, V = np.linalg.eigh(0.5 * (K + K.T))
    keep = w > 1e-14 * max(1.0, float(np.max(np.abs(w))))
    return V[:, keep] * np.sqrt(w[keep])


class _Kernel:
    """One collected kernel: its factor and the constant ``rho ||K_i - K0||_F^2``."""

    def __init__(self, factor: NDArray[np.float64], constant: float, origin: int) -> None:
        self.factor = factor
        self.constant = constant
        self.origin = origin
        self._gram: NDArray[np.float64] | None = None

    @property
    def gram(self) -> NDArray[np.float64]:
        """``K_i = L_i L_i'`` (dense, formed once: the MKL master's SVMs use it)."""
        if self._gram is None:
            self._gram = self.factor @ self.factor.T
        return self._gram


class _QCLP:
    """The QCLP (13) over the collected kernels, built for cvxpy in one of the two modes."""

    def __init__(self, problem: DenseProblem, mode: str, solver: str, options: dict) -> None:
        self.problem = problem
        self.mode = mode
        self.solver = solver
        self.options = options
        self.n = problem.n
        self.compile_time = 0.0
        self.solve_time = 0.0
        #: Wall time of the QCLP subproblems as a whole (model construction, compilation,
        #: conic solve, reading the solution): cvxpy's ``compilation_time`` alone misses the
        #: construction of the expression tree.
        self.wall_time = 0.0
        self.n_compilations = 0
        self._slots = 0
        self._width = 0
        #: Capacity blocks of the parametric problem (slots, factor columns).
        self.slot_block = 8
        self.width_block = 16
        self._param_problem: cp.Problem | None = None
        #: Absolute ``time.perf_counter()`` deadline of the solve (None: no limit).
        self.deadline: float | None = None
        #: (solver that succeeded, [(solver, failure), ...]) for every fallback used.
        self.fallbacks: list[tuple[str, list[tuple[str, str]]]] = []

    def _base(self) -> tuple[cp.Variable, cp.Variable, cp.Expression, list]:
        pb = self.problem
        alpha = cp.Variable(self.n)
        t = cp.Variable()
        linear = pb.linear_coef @ alpha
        if pb.l1_weight:
            linear = linear - pb.l1_weight * cp.norm1(alpha)
        feas = [pb.eq_coef @ alpha == pb.eq_rhs, alpha >= pb.lower, alpha <= pb.upper]
        return alpha, t, linear, feas

    def _solvers(self) -> list[str]:
        """The requested solver first, then the other installed conic solvers."""
        installed = cp.installed_solvers()
        others = [name for name in FALLBACK_SOLVERS if name in installed and name != self.solver]
        return [self.solver, *others]

    def _run(self, prob: cp.Problem) -> None:
        """Solve ``prob``; on a solver exception or a non-optimal status try the next solver.

        Interior-point solvers occasionally fail on the QCLP (13) (e.g. Clarabel on a nearly
        singular KKT system when two collected kernels almost coincide): the same
        problem usually solves with another solver, so each installed conic solver is tried once
        before :class:`SubproblemError` is raised. Options are passed only to the requested solver
        (they are solver-specific).
        """
        attempts: list[tuple[str, str]] = []
        for name in self._solvers():
            options = dict(self.options) if name == self.solver else {}
            if self.deadline is not None:
                remaining = self.deadline - time.perf_counter()
                if remaining <= 0:
                    raise SubproblemTimeout(f"max_time reached before {name} could finish")
                key = TIME_LIMIT_OPTIONS.get(name)
                if key is not None and key not in options:
                    options[key] = max(remaining, 0.01)
            try:
                prob.solve(solver=name, **options)
            except (cp.error.SolverError, ValueError, ArithmeticError) as exc:
                attempts.append((name, f"{type(exc).__name__}: {exc}"))
                logger.info("siqclp: %s failed on the QCLP (13): %s", name, exc)
                continue
            finally:
                self.compile_time += float(getattr(prob, "_compilation_time", 0.0) or 0.0)
            if prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                stats = prob.solver_stats
                self.solve_time += float(stats.solve_time or 0.0) if stats is not None else 0.0
                if attempts:
                    self.fallbacks.append((name, attempts[:]))
                    logger.info("siqclp: QCLP (13) solved by %s after %s", name, attempts)
                return
            attempts.append((name, f"status {prob.status!r}"))
        raise SubproblemError(attempts)

    def solve(
        self, kernels: list[_Kernel]
    ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """Solve (13); returns ``t``, ``alpha`` and the multipliers of the kernel constraints."""
        t0 = time.perf_counter()
        try:
            if self.mode == "rebuild":
                return self._solve_rebuild(kernels)
            return self._solve_parametric(kernels)
        finally:
            self.wall_time += time.perf_counter() - t0

    def _solve_rebuild(self, kernels: list[_Kernel]):
        alpha, t, linear, feas = self._base()
        u = cp.multiply(self.problem.u_coef, alpha)
        quad = [t <= linear - 0.5 * cp.sum_squares(k.factor.T @ u) + k.constant for k in kernels]
        prob = cp.Problem(cp.Maximize(t), feas + quad)
        self.n_compilations += 1
        self._run(prob)
        mult = np.array([float(np.asarray(c.dual_value).item()) for c in quad])
        return float(t.value), np.asarray(alpha.value, dtype=np.float64), mult

    def _build_parametric(self, slots: int, width: int) -> None:
        """Compile the DPP problem with ``slots`` constraints whose factors have ``width`` columns.

        Each slot is a parameter ``L_j`` of shape ``(n, width)`` and a parameter ``c_j``; the
        problem is canonicalised once here (``get_problem_data``, timed as compilation), and
        later solves with new parameter values reuse cvxpy's cached parameter-to-data map.
        """
        t0 = time.perf_counter()
        n_params = slots * self.n * width
        if n_params > PARAMETRIC_WARN_SIZE:
            warnings.warn(
                f"siqclp compile='parametric': compiling {slots} slots of ({self.n}, {width}) "
                f"parameter factors ({n_params} parameter entries); cvxpy's DPP "
                "canonicalisation of dense parameter matrices takes time and memory that grow "
                "fast with n (n = 200: 47 s for two compilations; n = 300: killed for lack of "
                "memory at 24 GB). Use compile='rebuild' (the default) for large n.",
                ResourceWarning,
                stacklevel=2,
            )
        alpha, t, linear, feas = self._base()
        u = cp.multiply(self.problem.u_coef, alpha)
        self._L = [cp.Parameter((self.n, width)) for _ in range(slots)]
        self._c = [cp.Parameter() for _ in range(slots)]
        self._quad = [
            t <= linear - 0.5 * cp.sum_squares(L.T @ u) + c
            for L, c in zip(self._L, self._c, strict=True)
        ]
        self._alpha, self._t = alpha, t
        prob = cp.Problem(cp.Maximize(t), feas + self._quad)
        if not prob.is_dpp():  # pragma: no cover - guards the formulation above
            raise RuntimeError("the parametric QCLP (13) is not DPP; cvxpy would recompile it")
        # Fill the parameters once so canonicalisation can run now (its cost is compilation).
        for L, c in zip(self._L, self._c, strict=True):
            L.value = np.zeros((self.n, width))
            c.value = 0.0
        prob.get_problem_data(self.solver)
        self._param_problem = prob
        self._slots = slots
        self._width = width
        self.n_compilations += 1
        self.compile_time += time.perf_counter() - t0

    def _solve_parametric(self, kernels: list[_Kernel]):
        rank = max(k.factor.shape[1] for k in kernels)
        if len(kernels) > self._slots or rank > self._width:
            # Capacity grows in blocks: one compilation per block of kernels, not per exchange.
            block = self.slot_block
            slots = max(self._slots, block * -(-len(kernels) // block))
            width = (
                self._width
                if rank <= self._width
                else min(self.n, max(rank, self.width_block * -(-rank // self.width_block)))
            )
            self._build_parametric(slots, width)
        assert self._param_problem is not None
        # Unused slots are neutralised with L_j = 0 and c_j = max_i c_i + 1: since the quadratic
        # term is <= 0, every constraint gives t <= l(a) + c_i, so the neutral one has slack >= 1
        # at every feasible point and carries no multiplier. (Repeating a real constraint, the
        # previous scheme, duplicates cones: 30.6 s of solver time against 25.6 s for 12
        # exchanges at n = 200, one loaded run each.)
        neutral = max(k.constant for k in kernels) + 1.0
        for j in range(self._slots):
            padded = np.zeros((self.n, self._width))
            if j < len(kernels):
                k = kernels[j]
                padded[:, : k.factor.shape[1]] = k.factor
                self._c[j].value = k.constant
            else:
                self._c[j].value = neutral
            self._L[j].value = padded
        self._run(self._param_problem)
        duals = np.array([float(np.asarray(c.dual_value).item()) for c in self._quad])
        mult = duals[: len(kernels)].copy()
        return float(self._t.value), np.asarray(self._alpha.value, dtype=np.float64), mult


def _mixture_bound(
    problem: DenseProblem,
    kernels: list[_Kernel],
    multipliers: NDArray[np.float64],
    alpha: NDArray[np.float64],
) -> float:
    """Certified upper bound from the kernel mixture of the QCLP multipliers.

    For any convex combination ``K_mu = sum_i mu_i K_i`` (PSD), the optimum of eq. (4) is at most
    ``omega(K_mu) + rho ||K_mu - K0||_F^2`` (min over K <= value at K_mu), and ``omega(K_mu)`` is
    at most the SVM primal value of ``w = sum_j u_j phi(x_j)`` in the space of ``K_mu`` with the
    best intercept (weak duality), for any ``u``: ``problem.bound_for_kernel``. With ``u`` from
    the QCLP solution and ``mu`` its multipliers this is at most ``t_i`` (Jensen) up to the
    solver's accuracy, and it is valid whatever that accuracy is.
    """
    K_mu = _mixture_kernel(problem, kernels, multipliers)
    return np.inf if K_mu is None else _kernel_bound(problem, K_mu, alpha)


def _mixture_kernel(
    problem: DenseProblem, kernels: list[_Kernel], multipliers: NDArray[np.float64]
) -> NDArray[np.float64] | None:
    """``K_mu = sum_i mu_i K_i`` with the normalised multipliers (None if they are unusable)."""
    mu = np.maximum(multipliers, 0.0)
    if not np.isfinite(mu).all() or mu.sum() <= 0:
        return None
    mu = mu / mu.sum()
    K_mu = np.zeros((problem.n, problem.n))
    for weight, k in zip(mu, kernels, strict=True):
        if weight > 0:
            K_mu += weight * (k.factor @ k.factor.T)
    return K_mu


class _Bound(float):
    """A certified upper bound that also carries its excess over ``f(0)`` and its error bound.

    A float (callers that want the number use it as one); :func:`_offer_bound` hands the excess,
    formed without ``f(0)`` (theory.md §10), to the monitor.
    """

    excess: float | None = None
    error: float | None = None


def _kernel_bound(
    problem: DenseProblem, K: NDArray[np.float64], alpha: NDArray[np.float64]
) -> float:
    """``problem.bound_for_kernel(K, alpha)`` with its excess over ``f(0)`` (theory.md §3, §10).

    The excess is formed without ``f(0)`` (``bound_for_kernel_excess``): the monitor certifies
    with it, and an absolute bound that holds ``f(0) = rho ||(K0)_-||_F^2`` loses the digits the
    gap needs when ``f(0)`` is large.
    """
    excess, error, value = problem.bound_for_kernel_excess(K, alpha)
    bound = _Bound(value)
    bound.excess, bound.error = excess, error
    return bound


def _offer_bound(monitor: Any, bound: float) -> None:
    """Offer a bound of :func:`_kernel_bound` (with its excess, if it carries one)."""
    monitor.offer_upper_bound(
        float(bound), excess=getattr(bound, "excess", None), error=getattr(bound, "error", None)
    )


def _initial_factor(problem: DenseProblem) -> NDArray[np.float64]:
    eigh = problem.working_eigh
    if eigh is None:
        return _psd_factor(problem.working_kernel)
    d, V = eigh
    keep = d > 1e-14 * max(1.0, float(np.max(np.abs(d))))
    return V[:, keep] * np.sqrt(d[keep])


def exchange_method(
    problem: DenseProblem,
    monitor: SolverMonitor,
    *,
    conic_solver: str = "CLARABEL",
    conic_options: dict[str, Any] | None = None,
    compile: str = "rebuild",
    master: str = "mkl",
    mkl_step: str = "newton",
    mkl_svm_tol: float = 1e-11,
    mkl_gap: float = 0.1,
    mkl_max_steps: int = 100,
    stabilise: str | None = None,
    prox_weight: float | None = None,
    kernel_bound: bool = True,
    prune_tol: float = 1e-6,
    exchange_tol: float | None = None,
    certify_mixture: bool = True,
    exchange_patience: int = 5,
) -> SolveResult:
    """Maximise a proxy-kernel problem by the exchange method (paper 004, Algorithm 3).

    Parameters
    ----------
    problem : DenseProblem
        Any problem kind; the constraint of kernel ``K_i`` is
        ``t <= linear_value(a) - 1/2 ||L_i' u||^2 + penalty_rho ||K_i - K0||_F^2`` in the working
        coordinates (``u = u_coef * a``).
    monitor : SolverMonitor
        Certified-gap stopping rule, history and LIBSVM checks.
    master : {"mkl", "qclp"}
        Master problem: the regularised-MKL form of (13) solved by SVMs on kernel mixtures
        (default; paper 004 Sect. 5.3) or the QCLP (13) through cvxpy (the paper's).
    mkl_step : {"newton", "reduced_gradient"}
        MKL master: Newton steps on the simplex from the inner SVM's free variables, or
        SimpleMKL's reduced gradient with its line search (Rakotomamonjy et al. 2008).
    mkl_svm_tol : float
        MKL master: KKT tolerance of the inner SVMs (relative to the linear term's scale).
    mkl_gap : float
        MKL master: each master solve stops when its own gap ``J(lambda) - min_i L_i(a)`` is
        below ``mkl_gap`` times the smaller of the certified gap and the model's last predicted
        increase (down to rounding), so the master is as accurate as the exchange needs.
    mkl_max_steps : int
        MKL master: steps on the simplex per master solve.
    stabilise : {"proximal", "none"}, optional
        Proximal exchange iterates (MKL master only; its default) or Algorithm 3's (the default
        with ``master="qclp"``).
    prox_weight : float, optional
        Initial proximal weight ``mu`` (default ``1e-2 max |lambda(K0)|``).
    kernel_bound : bool
        MKL master: offer the kernel-SVM bound at the best point when the model promises less
        than a tenth of the gap left (see the module docstring).
    conic_solver : str
        ``master="qclp"``: cvxpy solver for the QCLP (13) (``"CLARABEL"`` installs with cvxpy;
        ``"SCS"`` also works; ``"MOSEK"`` was the paper's).
    conic_options : dict, optional
        Keyword arguments passed to ``cvxpy.Problem.solve``.
    compile : {"rebuild", "parametric"}
        Rebuild the QCLP with constant factors each iteration (Chen & Ye's method as the paper
        runs it), or compile a DPP problem with parameter slots once, grown in blocks, and only
        update the parameter values (see the module docstring). Both solve the
        same QCLP (13).
    prune_tol : float
        A constraint other than the newest is dropped when its multiplier is below
        ``prune_tol`` (the multipliers sum to 1 at a solution of (13)).
    exchange_tol : float, optional
        Step 2 of Algorithm 3 stops when ``f(a_i) >= t_i - exchange_tol * max(1, |t_i|)``
        (``f(a_i)`` is the value of the new constraint at ``a_i``). Default: ``tol / 10``.
        With proximal iterates the rule is "the model promises at most ``1e-13 |t_i|`` over the
        centre" instead (the problem is then solved to working precision).
    exchange_patience : int
        Iterations in which step 2's rule holds but the certified gap is still above tol that
        are tolerated (exchanging further) before stopping with status ``"stalled"``; 0 stops at
        the first, as Algorithm 3 does.
    certify_mixture : bool
        Also offer the certified bound of the multiplier mixture ``K_mu = sum_i mu_i K_i`` (see
        :func:`_mixture_bound`). It is at most the relaxation value ``t_i`` and, unlike ``t_i``,
        does not depend on the QCLP solver's accuracy; it is the "tighter SIQCLP gap" observed
        in paper 004 Sect. 5.3, made exact.
    Returns
    -------
    SolveResult
        With the MKL master ``info`` has ``time_svm`` (inner SVMs), ``time_master`` (master
        solves in all), ``time_kernel_bound``, ``n_svm_solves``, ``n_master_steps``,
        ``n_kernel_bounds``, ``n_serious_steps`` and ``master_gaps``. ``info`` has
        ``time_compile`` and ``time_solver`` (cvxpy), ``time_qclp`` (wall time of the
        QCLPs), ``time_kernel`` (factors), the number of constraints kept
        (``n_constraints``; ``max_constraints`` the most in one QCLP) and of compilations,
        and the last relaxation value ``t``.

    Notes
    -----
    BLAS runs with the count of ``indefsvm.threads.config_context(n_threads={"blas": k})``,
    else one thread: the eigendecompositions of the new kernels and the mixture bound are small
    dense problems that a second thread barely speeds up, while on a shared machine OpenBLAS's
    threads waiting for each other slow them many times.
    """
    with blas_limit(solver_blas_threads()):
        return _exchange(
            problem,
            monitor,
            solver=conic_solver,
            solver_options=conic_options,
            compile=compile,
            master=master,
            mkl_options={
                "step": mkl_step,
                "svm_tol": mkl_svm_tol,
                "max_steps": mkl_max_steps,
            },
            mkl_gap=mkl_gap,
            stabilise=stabilise,
            prox_weight=prox_weight,
            kernel_bound=kernel_bound,
            prune_tol=prune_tol,
            exchange_tol=exchange_tol,
            certify_mixture=certify_mixture,
            exchange_patience=exchange_patience,
        )


def _checked_options(
    *,
    master: str,
    mkl_gap: float,
    stabilise: str | None,
    prox_weight: float | None,
    compile: str,
    solver: str,
    prune_tol: float,
    exchange_tol: float | None,
    exchange_patience: int,
    tol: float,
) -> tuple[str, float]:
    """Check the exchange method's options; returns ``(stabilise, exchange_tol)`` with their
    defaults filled in (``"proximal"`` with the MKL master, ``tol / 10``)."""
    if master not in MASTERS:
        raise ValueError(f"master must be one of {MASTERS}; got {master!r}.")
    if not (np.isfinite(mkl_gap) and 0 < mkl_gap <= 1):
        raise ValueError(f"mkl_gap must be in (0, 1]; got {mkl_gap!r}.")
    if stabilise is None:
        stabilise = "proximal" if master == "mkl" else "none"
    if stabilise not in STABILISERS:
        raise ValueError(f"stabilise must be one of {STABILISERS}; got {stabilise!r}.")
    if stabilise == "proximal" and master != "mkl":
        raise ValueError(
            "stabilise='proximal' needs master='mkl' (the proximal term enters the SVMs)."
        )
    if prox_weight is not None and not (np.isfinite(prox_weight) and prox_weight > 0):
        raise ValueError(f"prox_weight must be None or a finite number > 0; got {prox_weight!r}.")
    if compile not in COMPILE_MODES:
        raise ValueError(f"compile must be one of {COMPILE_MODES}; got {compile!r}.")
    if compile != "rebuild" and master != "qclp":
        raise ValueError(
            f"compile={compile!r} applies to the cvxpy QCLP master only; pass master='qclp'."
        )
    if solver not in cp.installed_solvers():
        raise ValueError(
            f"solver {solver!r} is not installed for cvxpy; installed: {cp.installed_solvers()}."
        )
    if not prune_tol >= 0:
        raise ValueError(f"prune_tol must be >= 0; got {prune_tol!r}.")
    if exchange_tol is None:
        # t_i bounds the optimum (up to the solver's accuracy), so t_i - f(a_i) <= tol / 10 leaves
        # room for the certified gap, which also absorbs the solver's error, to reach tol.
        exchange_tol = 0.1 * tol
    if not exchange_tol >= 0:
        raise ValueError(f"exchange_tol must be >= 0; got {exchange_tol!r}.")
    if int(exchange_patience) != exchange_patience or exchange_patience < 0:
        raise ValueError(f"exchange_patience must be an integer >= 0; got {exchange_patience!r}.")
    return stabilise, exchange_tol


def _conclude(
    monitor: SolverMonitor,
    problem: DenseProblem,
    solver_error: str | None,
    stop_reason: str | None,
    stabilise: str,
    exchange_tol: float,
    iteration: int,
) -> None:
    """The status after the loop: a conic solver's failure, Algorithm 3's exchange rule, or
    what the monitor already decided (it judges the certified gap in every case)."""
    if solver_error is not None:
        if monitor.best is None:
            # Failed on the first subproblem: the feasible starting point still gives a
            # certified lower bound (and the bound at it an upper bound).
            monitor.offer(problem.evaluate(problem.initial_point()))
            monitor.end_iteration()
        monitor.conclude(
            f"solver_error: {solver_error} at iteration {iteration}; the best certified point "
            "so far is returned. Pass another solver (solver='SCS', ...) or loosen tol",
            otherwise="solver_error",
            check_libsvm=False,
        )
    elif stop_reason == "exchange":
        # Algorithm 3 is satisfied up to the solver's accuracy; the certified gap decides.
        if stabilise == "proximal":
            note = (
                "the proximal model promises no increase above rounding (1e-13 |t|) but the "
                "certified gap is above tol: the problem is solved to working precision; "
                "loosen tol"
            )
        else:
            note = (
                f"Algorithm 3's stopping rule holds (f(alpha) >= t - {exchange_tol:g} "
                "max(1,|t|)) but the master's accuracy limits the certified gap; tighten the "
                "solver's tolerances, use stabilise='proximal' (master='mkl') or loosen tol"
            )
        monitor.conclude(note)


class _ProximalCentre:
    """The proximal bundle rule of ``stabilise="proximal"`` (as the proximal ACCPM): a serious
    step moves the centre when ``f`` gained a fraction of what the model predicted; the weight
    ``mu`` halves after a serious step and doubles after a null step."""

    #: Fraction of the predicted increase that makes a step serious.
    SERIOUS_FRACTION = 0.1

    def __init__(self, problem: DenseProblem, weight: float | None, used: bool) -> None:
        lam_max = 0.0
        if weight is None and used:
            eigh = problem.working_eigh
            lam = eigh[0] if eigh is not None else np.linalg.eigvalsh(problem.working_kernel)
            lam_max = float(np.max(np.abs(lam)))
        self.mu = float(weight) if weight is not None else 1e-2 * max(lam_max, 1e-12)
        self.mu_min, self.mu_max = 1e-8 * self.mu, 1e8 * self.mu
        self.point: NDArray[np.float64] | None = None
        self.value = -np.inf
        self.n_serious = 0

    def update(
        self, alpha: NDArray[np.float64], f: float, t: float, mkl: Any, n_kernels: int
    ) -> float | None:
        """Take the step to ``alpha`` (value ``f``, model value ``t``) as serious or null;
        returns the increase the model predicted over the centre (None at the first point)."""
        if self.point is None:
            self.point, self.value = alpha, f
            return None
        predicted = t - self.value
        logger.debug(
            "siqclp proximal: mu %.3g predicted %.3e gained %.3e master gap %.3e, %d kernels",
            self.mu,
            predicted,
            f - self.value,
            mkl.stats.gaps[-1],
            n_kernels,
        )
        if f - self.value >= self.SERIOUS_FRACTION * predicted:
            self.point, self.value = alpha, f
            self.mu = max(self.mu / 2.0, self.mu_min)
            self.n_serious += 1
        else:
            self.mu = min(self.mu * 2.0, self.mu_max)
        return max(predicted, 0.0)


def _exchange(
    problem: DenseProblem,
    monitor: SolverMonitor,
    *,
    solver: str,
    solver_options: dict[str, Any] | None,
    compile: str,
    master: str,
    mkl_options: dict[str, Any],
    mkl_gap: float,
    stabilise: str | None,
    prox_weight: float | None,
    kernel_bound: bool,
    prune_tol: float,
    exchange_tol: float | None,
    certify_mixture: bool,
    exchange_patience: int,
) -> SolveResult:
    """Body of :func:`exchange_method` (run inside the BLAS thread limit)."""
    stabilise, exchange_tol = _checked_options(
        master=master,
        mkl_gap=mkl_gap,
        stabilise=stabilise,
        prox_weight=prox_weight,
        compile=compile,
        solver=solver,
        prune_tol=prune_tol,
        exchange_tol=exchange_tol,
        exchange_patience=exchange_patience,
        tol=monitor.tol,
    )

    qclp, mkl = _masters(problem, monitor, compile, solver, solver_options, master, mkl_options)
    K0 = problem.working_kernel
    rho = problem.penalty_rho
    t0 = time.perf_counter()
    L1 = _initial_factor(problem)
    K1 = L1 @ L1.T
    kernels = [_Kernel(L1, rho * float(np.sum((K1 - K0) ** 2)), 0)]
    stats = _ExchangeStats(time_kernel=time.perf_counter() - t0)
    centre = _ProximalCentre(problem, prox_weight, stabilise == "proximal")
    #: the model's last predicted increase: the master must be more accurate than that, or the
    #: serious-step test compares noise
    last_predicted = np.inf
    best_tag = 0
    stop_reason = None
    solver_error: str | None = None
    iteration = 0
    while True:
        iteration += 1
        stats.max_constraints = max(stats.max_constraints, len(kernels))
        target = mkl_gap * min(monitor.gap, last_predicted) if mkl is not None else None
        solved, solver_error = _master_step(problem, monitor, qclp, mkl, kernels, target, centre)
        if solved is None:
            break
        t_i, alpha_raw, mult = solved
        stats.relaxation = t_i
        if not np.all(np.isfinite(alpha_raw)):
            solver_error = f"the QCLP solver returned a non-finite alpha at iteration {iteration}"
            break
        # cvxpy's solution is feasible to the solver's tolerance only; the exact projection makes
        # it feasible so its objective is a certified lower bound.
        alpha = problem.project(alpha_raw)
        ev = problem.evaluate(alpha)
        monitor.offer(ev)
        if monitor.best is ev:
            best_tag = iteration
        if certify_mixture:
            t0 = time.perf_counter()
            _offer_bound(monitor, _mixture_bound(problem, kernels, mult, alpha))
            stats.time_bound += time.perf_counter() - t0
        # What the model still promises over the best point it knows: t_i - f(alpha_i), or over
        # the proximal centre.
        model_gap = max(t_i - ev.objective, 0.0) if iteration > 1 else np.inf
        if stabilise == "proximal":
            predicted = centre.update(alpha, ev.objective, t_i, mkl, len(kernels))
            if predicted is not None:
                last_predicted = model_gap = predicted
        exchange_done = _exchange_rule(stabilise, model_gap, ev.objective, t_i, exchange_tol)
        if mkl is not None and kernel_bound:
            _kernel_bound_step(problem, monitor, mkl, model_gap, (best_tag, exchange_done), stats)
        # Step 2 of Algorithm 3 (exchange_done above): f(alpha_i) is the value of the constraint
        # of K_{i+1} = K*(alpha_i). (Proximal: t_i is the model at the proximal point;
        # t_i <= f(alpha_i) + tol means the centre maximises the model, which bounds f from
        # above, up to tol.)
        if monitor.end_iteration(
            current_objective=ev.objective, relaxation_value=t_i, n_constraints=len(kernels)
        ):
            break
        if exchange_done:
            # Algorithm 3 would stop here; the certified gap has not reached tol yet (the QCLP
            # solution is only as accurate as the conic solver), so keep exchanging for a few
            # more kernels, which moves alpha, before giving up.
            stats.n_exchange_stops += 1
            if stats.n_exchange_stops > exchange_patience:
                stop_reason = "exchange"
                break
        kernels, n_dropped = _prune(kernels, mult, prune_tol)
        stats.n_pruned += n_dropped
        t0 = time.perf_counter()
        kernels.append(_proxy_kernel_constraint(problem, ev.state, K0, rho, iteration))
        stats.time_kernel += time.perf_counter() - t0

    _conclude(monitor, problem, solver_error, stop_reason, stabilise, exchange_tol, iteration)
    info = {
        "solver": solver,
        "compile": compile,
        "time_compile": qclp.compile_time,
        "time_solver": qclp.solve_time,
        "time_qclp": qclp.wall_time,
        "time_kernel": stats.time_kernel,
        "time_mixture_bound": stats.time_bound,
        "time_kernel_bound": stats.time_kernel_bound,
        "n_kernel_bounds": stats.n_kernel_bounds,
        "n_compilations": qclp.n_compilations,
        "n_constraints": len(kernels),
        "max_constraints": stats.max_constraints,
        "n_pruned": stats.n_pruned,
        "relaxation_value": stats.relaxation,
        "stop_rule": stop_reason or monitor.status,
        "n_exchange_rule_hits": stats.n_exchange_stops,
        "solver_fallbacks": qclp.fallbacks,
        "solver_error": solver_error,
        "master": master,
        "stabilise": stabilise,
        "n_serious_steps": centre.n_serious,
        "prox_weight": centre.mu,
    }
    if mkl is not None:
        info.update(_mkl_info(mkl))
    return monitor.finish(info=info)


@dataclass
class _ExchangeStats:
    """Times and counts of one run of the exchange method (reported in ``info``)."""

    time_kernel: float
    time_bound: float = 0.0
    time_kernel_bound: float = 0.0
    n_kernel_bounds: int = 0
    #: (iteration of the best point, full precision) pairs whose kernel bound was computed
    bounded: set[tuple[int, bool]] = field(default_factory=set)
    relaxation: float = np.inf
    n_exchange_stops: int = 0
    n_pruned: int = 0
    max_constraints: int = 0


def _kernel_bound_step(
    problem: DenseProblem,
    monitor: SolverMonitor,
    mkl: MKLMaster,
    model_gap: float,
    tag: tuple[int, bool],
    stats: _ExchangeStats,
) -> None:
    """Offer the kernel SVM bound at the best point when it is worth its SVM solve.

    ``tag`` is (iteration of the best point, whether the exchange rule holds); each tag is
    bounded once, with the full-precision SVM when the exchange rule holds.
    """
    # The kernel bound at the best point is worth its SVM solve only when that point is
    # accurate compared with the gap left (the model promises little more): then the
    # first-order excess of the cheap bound, not the point, keeps the certified gap open.
    exchange_done = tag[1]
    if (
        monitor.relative_gap > monitor.tol
        and (model_gap <= 0.1 * monitor.gap or exchange_done)
        and tag not in stats.bounded
    ):
        stats.time_kernel_bound += _bound_by_kernel_svm(problem, monitor, mkl, full=exchange_done)
        stats.bounded.add(tag)
        stats.n_kernel_bounds += 1


def _masters(
    problem: DenseProblem,
    monitor: SolverMonitor,
    compile: str,
    solver: str,
    solver_options: dict[str, Any] | None,
    master: str,
    mkl_options: dict[str, Any],
) -> tuple[_QCLP, MKLMaster | None]:
    """The QCLP master (13) and, with ``master="mkl"``, the MKL one, both with the deadline."""
    qclp = _QCLP(problem, compile, solver, dict(solver_options or {}))
    mkl = MKLMaster(problem, **mkl_options) if master == "mkl" else None
    if monitor.max_time is not None:
        qclp.deadline = monitor.start + monitor.max_time
        if mkl is not None:
            mkl.deadline = qclp.deadline
    return qclp, mkl


def _master_step(
    problem: DenseProblem,
    monitor: SolverMonitor,
    qclp: _QCLP,
    mkl: MKLMaster | None,
    kernels: list[_Kernel],
    target: float | None,
    centre: _ProximalCentre,
) -> tuple[tuple[float, NDArray[np.float64], NDArray[np.float64]] | None, str | None]:
    """Solve the master over ``kernels``: ``((t, alpha, multipliers), None)``.

    ``(None, None)`` when the time limit is reached (the monitor is stopped) and
    ``(None, message)`` when no installed solver could solve it: the exchange stops.
    """
    try:
        if mkl is not None:
            return _solve_mkl_master(mkl, kernels, monitor, target, centre), None
        return qclp.solve(kernels), None
    except SubproblemTimeout as exc:
        if monitor.best is None:
            monitor.offer(problem.evaluate(problem.initial_point()))
            monitor.end_iteration()
        monitor.stop("max_time", f"time limit {monitor.max_time}s reached ({exc})")
        return None, None
    except SubproblemError as exc:
        # No installed solver could solve (13): stop with the best certified point so far
        # (its gap stays certified: bounds never depend on the failed subproblem).
        return None, str(exc)


def _exchange_rule(
    stabilise: str | None, model_gap: float, f: float, t_i: float, exchange_tol: float
) -> bool:
    """Step 2 of Algorithm 3: the model promises no more than the tolerance over ``f``."""
    if stabilise == "proximal":
        # The certified bounds at a point are first order in its error when the SVMs are
        # degenerate (low-rank kernels), f only second order: the proximal iterates go on
        # until the model promises nothing above rounding, not just tol / 10.
        return model_gap <= 1e-13 * max(1.0, abs(t_i))
    return f >= t_i - exchange_tol * max(1.0, abs(t_i))


def _prune(
    kernels: list[_Kernel], mult: NDArray[np.float64], prune_tol: float
) -> tuple[list[_Kernel], int]:
    """Pruning (Chen & Ye): drop constraints other than the newest whose multipliers vanish."""
    keep = [j for j in range(len(kernels)) if mult[j] >= prune_tol or j == len(kernels) - 1]
    return [kernels[j] for j in keep], len(kernels) - len(keep)


def _proxy_kernel_constraint(
    problem: DenseProblem, state: Any, K0: NDArray[np.float64], rho: Any, iteration: int
) -> _Kernel:
    """Step 1: the constraint of ``K_{i+1} = K*(alpha_i)`` in the working coordinates."""
    # Theorem 1: the proxy kernel of alpha_i; its constant is rho ||K_{i+1} - K0||_F^2.
    K_new = problem.working_proxy_kernel(state)
    factor = _psd_factor(K_new)
    constant = rho * float(np.sum((factor @ factor.T - K0) ** 2))
    return _Kernel(factor, constant, iteration)


def _solve_mkl_master(
    mkl: MKLMaster,
    kernels: list[_Kernel],
    monitor: SolverMonitor,
    target: float,
    centre: _ProximalCentre,
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """The MKL master to accuracy ``target``: ``(t, alpha, multipliers)``.

    The master needs to be accurate only to a fraction of the certified gap that is left (an
    inexact master keeps every bound valid), down to rounding. With a proximal centre ``t`` is
    the model value ``min_i L_i(alpha)`` at the proximal point (without the proximal term).
    """
    scale = max(1.0, abs(monitor.objective)) if monitor.best is not None else 1.0
    floor = 1e-13 * max(scale, abs(kernels[0].constant))
    prox = None if centre.point is None else (centre.mu, centre.point)
    t, alpha, mult, _ = mkl.solve(kernels, max(target, floor), prox)
    if prox is not None:
        t = float(np.min(mkl.last_values))
    return t, alpha, mult


def _bound_by_kernel_svm(
    problem: DenseProblem, monitor: SolverMonitor, mkl: MKLMaster, *, full: bool
) -> float:
    """Offer the kernel bound at the monitor's best point; returns the seconds it took.

    ``omega(K*(a)) + rho ||K*(a) - K0||^2`` via the SVM on ``K*(a)`` (certified by the primal of
    its solution): its excess over the optimum is second order in ``a``'s error, the cheap
    bound's (the primal of ``a`` itself) first order.
    """
    t0 = time.perf_counter()
    best = monitor.best
    K_best = problem.working_proxy_kernel(best.state)
    a_svm = mkl.kernel_svm(K_best, best.alpha, full=full)
    _offer_bound(monitor, _kernel_bound(problem, K_best, a_svm))
    return time.perf_counter() - t0


def _mkl_info(mkl: MKLMaster) -> dict[str, Any]:
    """The MKL master's counters for ``SolveResult.info``."""
    st = mkl.stats
    return {
        "mkl_step": mkl.step,
        "time_svm": st.time_svm,
        "time_master": st.time_master,
        "n_svm_solves": st.svm_solves,
        "n_smo_iterations": st.smo_iterations,
        "n_master_steps": st.master_iterations,
        "n_master_unconverged_svms": st.unconverged_svms,
        "master_gaps": np.asarray(st.gaps),
    }


#: What the solver needs from the problem's kernel operator
#: (:class:`indefsvm.proxy.protocols.KernelOperator`): dense kernels in its conic program and a
#: dense eigenbasis of K0 (the initial constraint (K0)_+ and the certified kernel bounds).
exchange_method.needs = frozenset({"n_by_n", "eigenbasis"})  # type: ignore[attr-defined]
