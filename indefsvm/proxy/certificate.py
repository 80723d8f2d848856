"""The certificate of a proxy-kernel problem: certified upper bounds, their rounding, LIBSVM checks.

A problem of :mod:`indefsvm.proxy.problems` maximises a concave ``f`` (paper 004 eq. 7, 17, 20,
22); this module bounds its optimum from above at any point, so that ``UB - f(alpha)`` certifies
how far ``alpha`` is from optimal:

- the primal bound ``OPT <= omega(K) + rho ||K - K0||_F^2`` for every PSD ``K``, evaluated at
  ``K*(alpha)`` (:func:`penalty` and the hook ``_primal_from``) or at any other PSD kernel
  (:func:`bound_for_kernel`, :func:`bound_for_kernel_excess`; docs/theory.md §3);
- the differences ``f(alpha) - f(0)`` and ``UB - f(0)`` formed without the constant
  ``f(0) = rho ||(K0)_-||_F^2``, with bounds on their rounding errors
  (:func:`objective_excess`, :func:`upper_excess`; docs/theory.md §10): a gap certified from
  them keeps its digits however large ``f(0)`` is;
- the LIBSVM check: the primal of LIBSVM's (or, on a large factored kernel, LIBLINEAR's)
  solution on ``K*(alpha)``, a bound valid whatever the external solver's tolerance
  (:func:`libsvm_upper_bound`, :func:`libsvm_bound_excess`, :func:`check_libsvm_options`;
  docs/theory.md §4).

The functions take the problem as their first argument (they read its feasible set, its
operator and its hooks ``_primal_from``, ``_libsvm_solution`` and ``_linear_solution``);
:class:`~indefsvm.proxy.problems.ProxyKernelProblem` exposes the bounds and checks as its
methods (``bound_for_kernel``, ``libsvm_upper_bound``, ``check_options``, ...: the contract of
:mod:`indefsvm.proxy.protocols`), so the solvers and the monitor never call this module.
The derivations are in docs/theory.md §3, §4 and §10.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from indefsvm.proxy.operators import ProxyState, unscale_kernel

if TYPE_CHECKING:  # the problems import this module: the names are for annotations only
    from indefsvm.proxy.problems import Evaluation, ProxyKernelProblem

#: Rounding error of a sum of a few terms, relative to the sum of their magnitudes (a small
#: multiple of the unit roundoff; the bounds of the excesses are first-order estimates).
_ROUNDING = 16.0 * float(np.finfo(np.float64).eps)


# -- the penalty and the scale of the rounding bounds ----------------------------------------
def penalty(problem: ProxyKernelProblem, state: ProxyState) -> float:
    """``rho ||K* - K0||_F^2 = rho ||sigma u u' - M_-||_F^2`` (no cancellation; theory.md §3)."""
    sigma = problem.operator.sigma
    return problem.penalty_rho * (
        sigma**2 * state.u_norm_sq**2 - 2.0 * sigma * state.u_mneg_u + state.neg_sq_sum
    )


def penalty_excess(problem: ProxyKernelProblem, state: ProxyState) -> tuple[float, float]:
    """``rho ||K* - K0||_F^2 - f(0)`` and a bound on its rounding error (theory.md §10).

    The penalty is ``f(0)`` plus alpha-dependent terms; the constant is left out (the
    negative eigenvalues enter through :attr:`ProxyState.neg_sq_change`), so a certified gap
    formed from it does not cancel against ``f(0)``.
    """
    sigma = problem.operator.sigma
    rho = problem.penalty_rho
    a = sigma**2 * state.u_norm_sq**2
    b = 2.0 * sigma * state.u_mneg_u
    value = rho * (a - b + state.neg_sq_change)
    error = rho * (_ROUNDING * (a + abs(b) + abs(state.neg_sq_change)) + state.neg_sq_change_error)
    return value, error


def eigen_scale(problem: ProxyKernelProblem) -> float:
    """``max |lambda(K0)|`` of the working kernel (its Gershgorin bound on the PSD path).

    The scale of the rounding bounds of the excesses; computed once per problem (the
    Gershgorin bound is O(n^2), too much per evaluation).
    """
    cached = getattr(problem, "_eigen_scale_value", None)
    if cached is None:
        d = getattr(problem.operator, "eigenvalues", None)
        if d is not None and np.size(d):
            cached = float(np.max(np.abs(d)))
        else:
            cached = float(problem.operator.spectral_scale())
        problem._eigen_scale_value = cached
    return cached


# -- the excesses over f(0) that certify (theory.md §10) -------------------------------------
def objective_excess(
    problem: ProxyKernelProblem, alpha: NDArray[np.float64], state: ProxyState
) -> tuple[float, float]:
    """``f(alpha) - f(0)`` (theory.md §1, §10) without the constant, and its error bound."""
    linear = float(problem.linear_coef @ alpha)
    l1 = problem.l1_weight * float(np.sum(np.abs(alpha)))
    quad = 0.5 * state.u_k0_u
    quartic = 0.25 * problem.operator.sigma * state.u_norm_sq**2
    penalty_change = problem.penalty_rho * state.neg_sq_change
    value = linear - l1 - quad - quartic + penalty_change
    # u'K0u = z'Dz with z = V'u rounded: its error is bounded through |lambda|max ||u||^2.
    spread = eigen_scale(problem) * state.u_norm_sq
    error = (
        _ROUNDING * (abs(linear) + l1 + abs(quad) + spread + quartic + abs(penalty_change))
        + problem.penalty_rho * state.neg_sq_change_error
    )
    return value, error


def upper_excess(
    problem: ProxyKernelProblem,
    primal: float,
    decision: NDArray[np.float64],
    state: ProxyState,
) -> tuple[float, float]:
    """``primal + rho ||K* - K0||_F^2 - f(0)`` and its rounding error bound (theory.md §3, §10).

    The primal (hinge or epsilon-insensitive sum) is rounded in each term: its error is
    bounded through ``max box * ||K* u||_1`` (plus its own size).
    """
    value, penalty_error = penalty_excess(problem, state)
    n = problem.n
    box = float(np.max(np.maximum(np.abs(problem.lower), np.abs(problem.upper)))) if n else 0.0
    primal_size = (
        abs(primal)
        + box * float(np.sum(np.abs(decision)))
        + eigen_scale(problem) * state.u_norm_sq
        + problem.operator.sigma * state.u_norm_sq**2
    )
    return primal + value, _ROUNDING * primal_size + penalty_error


# -- bounds from any PSD kernel (the cutting-plane solvers, theory.md §3) --------------------
def bound_for_kernel(
    problem: ProxyKernelProblem, K: NDArray[np.float64], alpha: NDArray[np.float64]
) -> float:
    """Certified upper bound on the optimum from any PSD working kernel ``K`` (theory.md §3).

    ``OPT <= omega(K) + rho ||K - K0||_F^2`` for every PSD ``K``, and ``omega(K)`` is at most
    the primal value of ``w = sum_j u_j phi_K(x_j)`` with the best intercept for any ``u``;
    ``u = u_coef * alpha`` makes the bound tight at a saddle point.
    """
    u = problem.u_coef * np.asarray(alpha, dtype=np.float64)
    g = K @ u
    decision = g if problem.scale is None else g / problem.scale
    primal, _ = problem.primal_value(decision, float(u @ g))
    return primal + problem.penalty_rho * float(np.sum((K - problem.operator.K0) ** 2))


def bound_for_kernel_excess(
    problem: ProxyKernelProblem, K: NDArray[np.float64], alpha: NDArray[np.float64]
) -> tuple[float, float, float]:
    """:func:`bound_for_kernel` less ``f(0)``, formed without it (theory.md §3, §10).

    With ``K0 = P - N`` (``P = (K0)_+``, ``N = (K0)_-`` from the eigendecomposition the
    objective uses) and ``<P, N> = 0``:
    ``||K - K0||_F^2 - ||N||_F^2 = ||K - P||_F^2 + 2 <K, N>``, a sum of two non-negative
    terms (``K`` PSD), so the penalty's excess over ``f(0) = rho ||N||_F^2`` keeps its digits
    however large ``f(0)`` is.

    Returns
    -------
    excess, error, value : float
        ``bound - f(0)``, a bound on its rounding error and the bound itself.
    """
    eigh = problem.working_eigh
    if eigh is None:  # PSD path: f(0) = 0, nothing cancels
        value = bound_for_kernel(problem, K, alpha)
        return value, _ROUNDING * abs(value), value
    d, V = eigh
    u = problem.u_coef * np.asarray(alpha, dtype=np.float64)
    g = K @ u
    decision = g if problem.scale is None else g / problem.scale
    primal, _ = problem.primal_value(decision, float(u @ g))
    neg = d < 0
    P = positive_part(problem)
    Vn = V[:, neg]
    kn = float(np.sum(-d[neg] * np.sum((K @ Vn) * Vn, axis=0)))
    diff_sq = float(np.sum((K - P) ** 2))
    rho = problem.penalty_rho
    excess = primal + rho * (diff_sq + 2.0 * kn)
    # P, and a K formed in floating point (a mixture of factors, the dense K*), carry
    # rounding errors of about n eps max|d| per entry: the first through ||K - P||^2, the
    # second through <K, N>, which rho multiplies (at rho = 1e13 a K* formed to 1e-16
    # gave an excess 2e-3 below the objective's). Both are counted, so such a bound is
    # only preferred where it is precise (the monitor compares excess + error).
    n = problem.n
    entry_error = n * _ROUNDING * float(np.max(np.abs(d)))
    n_norm = float(np.sqrt(np.sum(d[neg] ** 2)))
    box = float(np.max(np.maximum(np.abs(problem.lower), np.abs(problem.upper))))
    error = _ROUNDING * (
        abs(primal) + box * float(np.sum(np.abs(decision))) + rho * (diff_sq + 2.0 * abs(kn))
    ) + rho * n * entry_error * (2.0 * np.sqrt(diff_sq) + 2.0 * n_norm)
    return excess, error, primal + rho * float(np.sum((K - problem.operator.K0) ** 2))


def positive_part(problem: ProxyKernelProblem) -> NDArray[np.float64]:
    """``(K0)_+`` of the working kernel from its eigendecomposition (cached on the problem)."""
    P = getattr(problem, "_k0_positive", None)
    if P is None:
        d, V = problem.working_eigh
        pos = d > 0
        P = (V[:, pos] * d[pos]) @ V[:, pos].T
        P = 0.5 * (P + P.T)
        problem._k0_positive = P
    return P


# -- the LIBSVM check (theory.md §4) ---------------------------------------------------------
def check_libsvm_options(problem: ProxyKernelProblem, libsvm_every: int | None) -> None:
    """Refuse, before solving, a LIBSVM check that the problem could only refuse after iterating.

    A LIBSVM check (``libsvm_every``) trains LIBSVM on the n x n proxy kernel; where the
    operator forms no n x n arrays (a large low-rank problem), it runs as a linear SVM on
    the factor of ``K*``, which exists only for problems with a ``_linear_solution``
    (classification and regression): the one-class problem would iterate and then fail at
    its first check (the result thrown away), so it is refused here with the way out.
    """
    if libsvm_every is None or "n_by_n" in problem.operator.provides:
        return
    if not problem.has_linear_check:
        kind = problem.kind
        what = "the one-class problem" if kind == "oneclass" else f"problem={kind!r}"
        if getattr(getattr(problem.operator, "backend", None), "distributed", False):
            limit = "a low-rank problem on Dask workers never forms (at any n), and then"
        else:
            limit = (
                f"the low-rank problem forms only up to n = {problem.operator.dense_limit}; "
                f"here n = {problem.n}, and above the limit"
            )
        raise ValueError(
            f"libsvm_every needs a LIBSVM check of {what} on the n x n proxy kernel, which "
            f"{limit} only classification and regression have the linear (LIBLINEAR) "
            "check. Leave libsvm_every=None: the certified gap does not need it."
        )


def libsvm_upper_bound(
    problem: ProxyKernelProblem, evaluation: Evaluation, tol: float
) -> tuple[float, float, NDArray[np.float64]]:
    """Upper bound from LIBSVM's solution on ``K*(alpha)`` (theory.md §4).

    Trains LIBSVM on the dense proxy kernel at ``evaluation.alpha`` and evaluates the PRIMAL
    of its solution (so the bound stays valid whatever LIBSVM's tolerance), plus the penalty
    ``rho ||K* - K0||_F^2`` of the same kernel.

    Returns
    -------
    upper_bound, intercept, alpha_libsvm
    """
    primal, b, alpha_lib, _ = libsvm_primal(problem, evaluation, tol)
    return primal + penalty(problem, evaluation.state), b, alpha_lib


def libsvm_bound_excess(
    problem: ProxyKernelProblem, evaluation: Evaluation, tol: float
) -> tuple[float, float, float]:
    """:func:`libsvm_upper_bound` less ``f(0)``, formed without it, and its error bound.

    Returns ``(upper_bound - f(0), error bound, upper_bound)`` (theory.md §10: the monitor
    certifies with the excess, which keeps its digits when ``f(0)`` is huge).
    """
    primal, _, _, decision = libsvm_primal(problem, evaluation, tol)
    state = evaluation.state
    excess, error = upper_excess(problem, primal, decision, state)
    return excess, error, primal + penalty(problem, state)


def libsvm_primal(
    problem: ProxyKernelProblem, evaluation: Evaluation, tol: float
) -> tuple[float, float, NDArray[np.float64], NDArray[np.float64]]:
    """Primal value, intercept, alpha and decision values of an external SVM on ``K*``.

    The common part of :func:`libsvm_upper_bound` and :func:`libsvm_bound_excess`
    (theory.md §3-4), which add ``rho ||K* - K0||_F^2``. Where the operator forms n x n arrays
    this is LIBSVM on the dense ``K*`` (the problem's hook ``_libsvm_solution``). Otherwise
    ``K* = F F'`` with ``F`` the (m'+1)-column factor of
    :meth:`~indefsvm.proxy.lowrank.LowRankProxyOperator.proxy_features`, so the SVM with kernel
    ``K*`` is a LINEAR SVM on ``F``: LIBLINEAR (:func:`linear_primal`, dual coordinate descent)
    solves it in O(nm) per epoch, and the bound is the exact primal of its ``w`` with the best
    intercept (valid whatever LIBLINEAR's tolerance). The third value (LIBSVM's alpha) is NaN
    on the linear path (LIBLINEAR does not return its duals).
    """
    state = evaluation.state
    if "n_by_n" not in problem.operator.provides:
        return linear_primal(problem, state, tol)
    K = unscale_kernel(problem.operator.kernel(state), problem.scale)
    u_lib = problem._libsvm_solution(K, tol)
    g = K @ u_lib
    primal, b = problem._primal_from(g, float(u_lib @ g))
    return primal, b, problem.sign * u_lib, g


def linear_primal(
    problem: ProxyKernelProblem, state: ProxyState, tol: float
) -> tuple[float, float, NDArray[np.float64], NDArray[np.float64]]:
    """The linear form of the LIBSVM check on the factor ``F`` of ``K* = F F'``."""
    if not problem.has_linear_check:
        raise ValueError(
            f"a LIBSVM check of problem={problem.kind!r} needs the n x n proxy kernel, which "
            f"this problem's operator does not form (n = {problem.n}); it has no linear form."
        )
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    F = problem.operator.proxy_features(state)
    # LIBLINEAR's own convergence warning is irrelevant: the primal of any w is a bound.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        w = problem._linear_solution(F, tol)
    g = F @ w
    primal, b = problem._primal_from(g, float(w @ w))
    return primal, b, np.full(problem.n, np.nan), g
