"""``method="auto"``: the solver chosen from the problem's form, by a measured policy.

The policy (docs/solvers.md, "Which solver ``auto`` picks"; the grid that chose it is
``benchmarks/bench_auto_policy.py``, its table in docs/benchmarks.md):

1. ``preset="paper"``: the projected gradient (paper 004's Algorithm 1), the paper's first
   method.
2. A factored ``K0`` (:class:`~indefsvm.linalg.factor.LowRankKernel`, in memory or on Dask
   workers) and a problem with the Newton model's form (classification ``"svc"``,
   ``"perturb"``, the one-class ``"oneclass"``; a scalar or componentwise ``rho``): the
   second-order method ``"lowrank_newton"`` (theory.md §12). Where none of its directions
   ascends before the gap is certified (badly scaled kernels, float32 rounding) it continues
   with the projected gradient from its best point, under the same monitor.
3. A dense indefinite ``K0`` near the clip limit (the rank-one term of ``M(alpha)`` at most
   ``CLIP_PROBE_RATIO`` of ``||K0||_2`` over the whole box, :func:`clip_ratio`; any problem
   kind): one exchange of SIQCLP (the SVM on ``(K0)_+`` with its certificate); if it does not
   certify, the projected gradient from its point (``info["probe"]``).
4. Everything else (a dense ``K0`` away from the clip limit at any n; SVR on a factor): the
   accelerated projected gradient ``"pg"``.

Measured on the grid of ``benchmarks/bench_auto_policy.py`` (docs/benchmarks.md; 44 points for
classification, n = 50 to 10^5, both forms, kernel scale 1e-2 to 1e5, rho 1e-3 to 1e8, C 1e-4 to
1e4, and 98 points with ``--kinds svc oneclass vrho``): the chosen solver never ended
uncertified where another certified; where it was over 1.2 times the fastest (14 of the 98
points), the fastest took at most 0.17 s and the chosen one at most 0.05 s more (the Newton
method's first model on easy factored problems, SIQCLP on small dense one-class problems).

Solver options narrow the choice: ``options={"step": "paper"}`` can only mean the projected
gradient, so ``auto`` picks among the solvers that take every option given (and says which
option excludes the others when none does).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from indefsvm.proxy.solvers.newton import SUPPORTED

#: The second-order method's problems (``lowrank_newton`` refuses the others: SVR's l1 term).
NEWTON_PROBLEMS = SUPPORTED


@dataclass(frozen=True)
class Choice:
    """The solver ``auto`` picked and why (kept in ``SolveResult.info["auto"]``)."""

    method: str
    reason: str


def newton_applies(problem: Any) -> str | None:
    """Why the second-order method cannot solve ``problem`` (None when it can)."""
    provides = problem.provides
    if "factor" not in provides:
        return "K0 is a dense matrix (the second-order method needs a factor)"
    if problem.kind not in NEWTON_PROBLEMS:
        return (
            f"problem={problem.kind!r} (the second-order method needs a smooth objective over a "
            "box from 0: classification and one-class)"
        )
    if "second_order" not in provides:
        return "the operator has no derivative of K*(u) u"
    return None


#: ``auto`` probes the clip limit with one exchange of SIQCLP when the rank-one term of the proxy
#: kernel is at most this fraction of ``||K0||_2`` (:func:`clip_ratio`): measured, the exchange
#: method certified in one exchange there (0.2-0.3 s at n = 1000 where the projected gradient
#: took 2-12 s), and when it does not the projected gradient continues from its point. (The
#: clipped kernel's SVM was about 1.4 times this ratio from the optimum, relative: it certifies
#: when the ratio is below the tolerance, and otherwise gives the gradient a warm start.)
CLIP_PROBE_RATIO = 1e-4
#: The probe's method name in :class:`Choice` (not a registered solver).
CLIP_PROBE = "siqclp_probe"


def clip_ratio(problem: Any) -> float | None:
    """``sigma B / ||K0||_2`` for a dense indefinite problem, else None.

    In the working coordinates (theory.md §7: the kernel ``Ds K0 Ds`` and ``u = u_coef * alpha``
    for a componentwise rho), ``B = sum_i (max(|lower_i|, |upper_i|) |u_coef_i|)^2`` bounds
    ``||u||^2`` over the box, so ``sigma B`` (``sigma = 1 / (4 rho)``) bounds the rank-one term
    ``sigma u u'`` of ``M(alpha)`` (theory.md §1) relative to ``K0``: near 0, ``K* = (K0)_+`` to
    within that fraction and the SVM on the clipped kernel (SIQCLP's first exchange) is the
    optimum to a certified gap. Every problem kind has this form (classification, SVR,
    one-class).
    """
    provides = problem.provides
    if "factor" in provides or "n_by_n" not in provides:
        return None  # not dense (a factor is the Newton method's)
    op = problem.operator
    if op.is_psd:
        return None
    norm = float(op.spectral_scale())
    if not norm > 0:
        return None
    reach = np.maximum(np.abs(problem.lower), np.abs(problem.upper)) * np.abs(problem.u_coef)
    return float(np.sum(reach**2)) * float(op.sigma) / norm


def solver_options_of(solver: Callable[..., Any]) -> list[str] | None:
    """The options ``solver`` takes (its keyword-only parameters); None when it takes any."""
    params = inspect.signature(solver).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return [n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY]


def _takes(solver: Callable[..., Any], names: Iterable[str]) -> bool:
    accepted = solver_options_of(solver)
    return accepted is None or set(names) <= set(accepted)


def choose_method(
    problem: Any,
    *,
    preset: str | None = None,
    options: Mapping[str, Any] | None = None,
    solvers: Iterable[str],
    get_solver: Callable[[str], Callable[..., Any]],
) -> Choice:
    """The solver of ``method="auto"`` for ``problem`` (module docstring: the policy).

    Parameters
    ----------
    problem : ProxyKernelProblem
        The built problem (its operator says dense, factor or Dask factor).
    preset : str, optional
        ``"paper"`` picks the paper's projected gradient.
    options : mapping, optional
        Solver options; only solvers that take all of them are candidates.
    solvers : iterable of str
        The registered solver names (a solver added to the registry is a candidate too).
    get_solver : callable
        ``name -> solver function`` (the registry's lookup).

    Raises
    ------
    TypeError
        For an option no solver takes (naming every solver's options).
    ValueError
        When each option is some solver's but no solver takes them all.
    """
    names = list(options or {})
    every = list(solvers)
    # (Solvers are looked up only for options: SIQCLP's module imports cvxpy, seconds.)
    candidates = [m for m in every if _takes(get_solver(m), names)] if names else every
    if not candidates:
        unknown = [k for k in names if not any(_takes(get_solver(m), [k]) for m in every)]
        listing = "; ".join(
            f"{m}: {', '.join(solver_options_of(get_solver(m)) or ['any'])}" for m in every
        )
        if unknown:
            raise TypeError(
                f"no solver takes the option{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(repr(k) for k in unknown)}. The solvers' options are {listing}."
            )
        raise ValueError(
            f"solver='auto' found no solver that takes every option given "
            f"({', '.join(repr(k) for k in names)}); name the solver whose options these are. "
            f"The solvers' options are {listing}."
        )
    if preset == "paper":
        if "pg" in candidates:
            return Choice("pg", "preset='paper': the paper's projected gradient (Algorithm 1)")
        return Choice(candidates[0], f"preset='paper' with options of {candidates[0]!r}")
    why_not = newton_applies(problem)
    if why_not is None and "lowrank_newton" in candidates:
        return Choice(
            "lowrank_newton",
            f"a factored K0, problem={problem.kind!r}: the second-order method "
            "(projected gradient from its best point if it stalls)",
        )
    ratio = clip_ratio(problem) if not names else None
    if ratio is not None and ratio <= CLIP_PROBE_RATIO:
        return Choice(
            CLIP_PROBE,
            f"a dense K0 near the clip limit (rank-one term <= {ratio:.2g} ||K0||_2): one "
            "SIQCLP exchange (the SVM on (K0)_+), the projected gradient from its point if it "
            "does not certify",
        )
    if "pg" in candidates:
        reason = why_not if why_not is not None else f"options {names} are the projected gradient's"
        return Choice("pg", f"the accelerated projected gradient: {reason}")
    for method in candidates:
        if method == "lowrank_newton" and why_not is not None:
            continue
        return Choice(method, f"options {names} are {method!r}'s")
    raise ValueError(
        f"solver='auto': the options {names} are lowrank_newton's, which cannot solve this "
        f"problem ({why_not}); use solver='pg' with its options."
    )


def run_clip_probe(problem: Any, solve: Callable[..., Any], monitor_args: dict[str, Any]) -> Any:
    """One SIQCLP exchange (the SVM on ``(K0)_+`` and its certificate); when it does not certify,
    the projected gradient from its point with what is left of the limits.

    ``solve`` is :func:`indefsvm.proxy.api.solve_problem`; ``monitor_args`` its monitor
    arguments as the caller gave them. The result is the certifying run's; ``info["probe"]``
    records the probe when the projected gradient finished the solve.
    """
    from sklearn.exceptions import ConvergenceWarning

    quiet = {**monitor_args, "max_iter": 1, "verbose": False, "callback": None, "progress": False}
    quiet["libsvm_every"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        probe = solve(problem, method="siqclp", **quiet)
    if probe.status == "converged":
        return probe
    problem.reset_warm_start()
    rest = dict(monitor_args)  # start_time is the probe's: max_time covers both runs
    if rest.get("max_iter") is not None:
        rest["max_iter"] = max(int(rest["max_iter"]) - probe.n_iter, 1)
    result = solve(problem, method="pg", options={"alpha0": probe.alpha}, **rest)
    result.info["probe"] = {
        "method": "siqclp",
        "status": probe.status,
        "relative_gap": probe.relative_gap,
        "time": probe.time,
    }
    return result
