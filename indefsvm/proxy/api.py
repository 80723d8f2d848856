"""``indefsvm.solve``: one entry point for every problem and solver of paper 004."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from typing import Any

from numpy.typing import ArrayLike

from indefsvm.proxy.problems import ProxyKernelProblem, make_problem
from indefsvm.proxy.result import SolveResult
from indefsvm.proxy.solvers._monitor import SolverMonitor
from indefsvm.proxy.solvers.auto import (
    CLIP_PROBE,
    choose_method,
    run_clip_probe,
    solver_options_of,
)

#: Solver registry: ``method=`` name -> ``"module:function"`` of a
#: ``solver(problem, monitor, **options) -> SolveResult`` that uses only the problem contract
#: (docs/design.md). A new solver is one module plus one line here; modules are imported on
#: first use (SIQCLP needs cvxpy, which is slow to import).
SOLVERS: dict[str, str] = {
    "pg": "indefsvm.proxy.solvers.pg:projected_gradient",
    "accpm": "indefsvm.proxy.solvers.accpm:analytic_center_cutting_plane",
    "siqclp": "indefsvm.proxy.solvers.siqclp:exchange_method",
    "lowrank_newton": "indefsvm.proxy.solvers.newton:lowrank_newton",
}

#: Solvers known to :func:`solve`: ``"auto"`` (the default: the solver chosen by the measured
#: policy of :mod:`indefsvm.proxy.solvers.auto`) and the names of :data:`SOLVERS`.
METHODS = ("auto", *SOLVERS)
#: Solvers that need a factored ``K0`` (``needs`` has ``"factor"``: a
#: :class:`~indefsvm.linalg.factor.LowRankKernel`), declared here so callers that hold a dense
#: kernel (the CLI's ``compare`` default) need not import every solver to find out.
FACTOR_ONLY = ("lowrank_newton",)

#: ``preset=`` name -> solver -> options: the one way to say "as in the paper" (paper 004's
#: algorithms as published; our defaults are faster variants with the same optimum and the same
#: certified gap). Options given explicitly override a preset's. ``"default"`` is the empty
#: preset. The estimators' ``preset="paper"`` also sets the paper's intercept.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "default": {},
    "paper": {
        # Algorithm 1: projected gradient with step t/k (Sect. 3.2).
        "pg": {"step": "paper"},
        # Algorithm 2: the analytic center cutting plane method (Sect. 3.3).
        "accpm": {"variant": "paper"},
        # Algorithm 3: Chen & Ye's exchange method with the QCLP (13) master, as the paper ran
        # it (no proximal stabilisation, the problem rebuilt each iteration).
        "siqclp": {"master": "qclp", "stabilise": "none", "compile": "rebuild"},
    },
}


def resolve_options(
    method: str,
    *,
    preset: str | None = None,
    options: Mapping[str, Any] | None = None,
    owner: str = "solve",
) -> dict[str, Any]:
    """The solver options of one solve: a preset's, then ``options`` (explicit ones win).

    Raises
    ------
    ValueError
        For an unknown preset, or a preset that has no algorithm called ``method``.
    """
    if preset is None:
        preset = "default"
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {tuple(PRESETS)}; got {preset!r}.")
    explicit = check_solver_options(options, owner=owner, name="options")
    if preset != "default" and method not in PRESETS[preset]:
        raise ValueError(
            f"preset={preset!r} names the paper's algorithms, and paper 004 has none called "
            f"method={method!r}; it has {', '.join(repr(m) for m in PRESETS[preset])}."
        )
    return {**PRESETS[preset].get(method, {}), **explicit}


def _refuse_keywords(owner: str, keywords: Mapping[str, Any]) -> None:
    """Refuse keywords that :func:`solve` does not take, saying where a solver option goes.

    The solver's own options go in ``options={...}`` (as ``scipy.optimize.minimize`` takes
    them); a keyword that is neither an argument of ``owner`` nor in ``options`` is a TypeError
    naming that spelling.
    """
    if not keywords:
        return
    if list(keywords) == ["solver_options"] and isinstance(keywords["solver_options"], Mapping):
        raise TypeError(
            f"indefsvm.{owner} takes the solver's options as options={{...}} (as "
            "scipy.optimize.minimize does), not as solver_options={...} (the estimators' name): "
            f"{owner}(..., options=solver_options)."
        )
    names = ", ".join(repr(k) for k in keywords)
    spelled = ", ".join(f"{k!r}: ..." for k in keywords)
    moved = [k for k in keywords if k in OPTION_KEYS]
    if moved:
        raise TypeError(
            f"{owner}() got unexpected keyword argument{'s' if len(keywords) > 1 else ''} "
            f"{names}: pass {', '.join(moved)} in options= (with the solver's options, the keys "
            f"the estimators take in solver_options): {owner}(..., options={{{spelled}}})."
        )
    raise TypeError(
        f"{owner}() got unexpected keyword argument{'s' if len(keywords) > 1 else ''} {names}; "
        "the solver's options are passed as options={...} (as scipy.optimize.minimize takes "
        f"them): {owner}(..., options={{{spelled}}})."
    )


#: Named arguments of :func:`solve_problem`: a solver option with one of these names would be
#: passed twice (Python's "multiple values for keyword" deep inside a fit).
#: The arguments that go to the :class:`SolverMonitor` (stopping, checks, history, progress).
MONITOR_ARGUMENTS = (
    "tol",
    "max_iter",
    "libsvm_every",
    "libsvm_tol",
    "verbose",
    "callback",
    "max_time",
    "progress",
)
NAMED_OPTIONS = ("method", *MONITOR_ARGUMENTS, "start_time", "preset", "options")
#: Keys of ``options`` (:func:`solve`) and ``solver_options`` (the estimators) that are not the
#: solver's own: the monitor's arguments the caller has no parameter for, and the preset. Both
#: dicts take the same keys.
OPTION_KEYS = ("max_time", "libsvm_every", "libsvm_tol", "callback", "progress", "preset")


def split_options(
    options: Mapping[str, Any] | None,
    *,
    named: tuple[str, ...],
    owner: str,
    name: str,
) -> tuple[str | None, dict[str, Any], dict[str, Any]]:
    """``(preset, monitor, solver)``: the keys of ``options`` by where they go.

    ``named`` are the monitor's arguments ``owner`` takes as its own parameters (refused as keys,
    naming the parameter); ``preset`` and the other keys of :data:`OPTION_KEYS` are taken out;
    what is left are the solver's own options (checked against the solver by
    :func:`solve_problem`).
    """
    refused = ("method", *named, "start_time", "options")
    options = check_solver_options(options, named=refused, owner=owner, name=name)
    preset = options.pop("preset", None)
    monitor = {key: options.pop(key) for key in list(options) if key in MONITOR_ARGUMENTS}
    return preset, monitor, options


def check_solver_options(
    solver_options: Mapping[str, Any] | None,
    *,
    named: tuple[str, ...] = NAMED_OPTIONS,
    owner: str = "solve",
    name: str = "solver_options",
) -> dict[str, Any]:
    """A copy of ``solver_options`` after refusing keys that clash with named arguments.

    Estimators pass ``tol``, ``max_iter``, ... themselves and forward ``solver_options`` to
    :func:`solve_problem`; a key such as ``"tol"`` in it would otherwise fail with Python's
    "got multiple values for keyword argument 'tol'".

    Parameters
    ----------
    solver_options : mapping or None
        Options for the solver.
    named : tuple of str
        Names given as their own arguments (refused as keys).
    owner : str
        Who takes those arguments (for the message, e.g. ``"IndefiniteSVC"``).
    name : str
        The argument's name in ``owner`` (``"options"`` for :func:`solve`).

    Raises
    ------
    TypeError
        If ``solver_options`` is not a mapping with string keys.
    ValueError
        Naming every clashing key.
    """
    if solver_options is None:
        return {}
    if not isinstance(solver_options, Mapping):
        raise TypeError(
            f"{name} must be a dict of solver options; got {type(solver_options).__name__}."
        )
    options = dict(solver_options)
    bad_keys = [key for key in options if not isinstance(key, str)]
    if bad_keys:
        raise TypeError(f"{name} keys must be option names (str); got {bad_keys!r}.")
    clash = [key for key in options if key in named]
    if clash:
        raise ValueError(
            f"{name} has {', '.join(repr(k) for k in clash)}, which {owner} takes as its "
            f"own argument{'s' if len(clash) > 1 else ''}: pass "
            f"{', '.join(f'{k}=...' for k in clash)} to {owner} directly, not in {name}."
        )
    return options


def _check_solver_keywords(method: str, solver: Callable[..., Any], options: Mapping) -> None:
    """Refuse options the solver does not take, with the ones it does (before any work)."""
    accepted = solver_options_of(solver)
    if accepted is None:
        return
    unknown = [key for key in options if key not in accepted]
    if not unknown:
        return
    raise TypeError(
        f"method={method!r} takes no option {', '.join(repr(k) for k in unknown)}; its options "
        f"are {', '.join(accepted)}."
    )


def get_solver(method: str) -> Callable[..., SolveResult]:
    """The solver function registered as ``method`` in :data:`SOLVERS`."""
    if method not in SOLVERS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
    module, _, name = SOLVERS[method].partition(":")
    return getattr(importlib.import_module(module), name)


def solve(
    K0: ArrayLike,
    y: ArrayLike | None = None,
    *,
    C: float | None = None,
    rho: float | ArrayLike | None = None,
    problem: str = "svc",
    epsilon: float | None = None,
    nu: float | None = None,
    method: str = "auto",
    tol: float = 1e-6,
    max_iter: int = 10000,
    class_weight: None | str | Mapping[Any, float] = None,
    verbose: bool | int = False,
    symmetrize: bool = False,
    psd_tol: float | None = None,
    options: Mapping[str, Any] | None = None,
    **keywords: Any,
) -> SolveResult:
    """Solve the indefinite SVM of Luss & d'Aspremont (paper 004, eq. 4/7) or a variant.

    Maximises ``e'alpha - 1/2 Tr(K*(Y alpha)(Y alpha)') + rho ||K* - K0||_F^2`` over
    ``{y'alpha = 0, 0 <= alpha <= C_i}`` with the proxy kernel
    ``K* = (K0 + (Y alpha)(Y alpha)'/(4 rho))_+`` (Theorem 1, eq. 5), and certifies the result
    with a duality gap valid at every iteration (theory.md §3).

    Parameters
    ----------
    K0 : array_like of shape (n, n)
        Symmetric, possibly indefinite kernel (similarity) matrix.
    y : array_like of shape (n,), optional
        Labels of exactly two classes (any type; ``classes[1]`` maps to +1) for ``"svc"`` and
        ``"perturb"``, real targets for ``"svr"``; omitted for ``"oneclass"``.
    C : float, optional
        SVM misclassification penalty (> 0; default 1). Not for ``"oneclass"``.
    rho : float or array_like of shape (n,), optional
        Penalty on the distance ``||K - K0||_F^2`` (> 0; default 1); ``rho -> inf`` gives the
        SVM on the clipped kernel ``(K0)_+``. A vector gives componentwise penalties
        ``H_ij = sqrt(rho_i rho_j)`` (Sect. 4.4, Theorem 3).
    problem : {"svc", "svr", "oneclass", "perturb"}
        ``"svc"``: classification, eq. (7). ``"svr"``: epsilon-insensitive regression, eq. (17).
        ``"oneclass"``: one-class SVM, eq. (20) with ``e'alpha = 1``. ``"perturb"``: PerturbSVM
        for a PSD kernel, eq. (22) (refuses an indefinite ``K0``).
    epsilon : float, optional
        Width of the insensitive tube (``"svr"`` only; default 0.1).
    nu : float, optional
        One-class parameter in (0, 1] (``"oneclass"`` only; default 0.5).

        Options left at ``None`` are "not given"; giving one that the problem does not take
        (``epsilon`` for ``"svc"``, ``y`` or ``C`` for ``"oneclass"``) is an error, never ignored.
    method : {"auto", "pg", "accpm", "siqclp", "lowrank_newton"}
        Solver. ``"auto"`` (default): chosen from the problem's form by a measured policy
        (:mod:`indefsvm.proxy.solvers.auto`; docs/solvers.md): the second-order
        ``"lowrank_newton"`` for classification with a scalar ``rho`` on a factored ``K0``
        (continuing with the projected gradient where it stalls), ``"pg"`` otherwise; the
        choice is in ``result.method`` and the reason in ``result.info["auto"]``. ``"pg"``:
        projected gradient (``step="accelerated"`` by default, or ``step="paper"`` with
        ``step_size`` and ``smoothing`` for the paper's Algorithm 1).
        ``"accpm"``: analytic center cutting plane method (Sect. 3.3, Algorithm 2; options of
        :func:`indefsvm.proxy.solvers.accpm.analytic_center_cutting_plane`). ``"siqclp"``: Chen &
        Ye's exchange method (Sect. 3.4, Algorithm 3) with a regularised-MKL master problem
        (Sect. 5.3; ``master="qclp"``: the QCLP (13) through cvxpy); options of
        :func:`indefsvm.proxy.solvers.siqclp.exchange_method`. ``"lowrank_newton"``: the
        second-order method for a factored ``K0`` (theory.md §12; options of
        :func:`indefsvm.proxy.solvers.newton.lowrank_newton`).
    tol : float
        Stop when the certified gap ``<= tol * max(1, |f(alpha) - f(0)|)``: relative to the part
        of the objective that depends on alpha (``f(0) = rho ||(K0)_-||_F^2`` is a constant
        that can dominate ``f``; ``f(alpha) - f(0)`` tends to the SVM dual objective on
        ``(K0)_+`` as ``rho -> inf``). The absolute gap is ``result.gap``.
    max_iter : int
        Iteration limit; reaching it sets ``status="max_iter"`` and warns.
    class_weight : None, "balanced", "paper" or dict
        Per-class multipliers of ``C``; ``"paper"`` is the published code's
        ``C * n_pos / n_neg`` for the negative class.
    verbose : bool or int
        Print a progress line every ``verbose`` iterations (True: every 50).
    symmetrize : bool
        Accept a non-symmetric ``K0`` and use ``(K0 + K0')/2``.
    psd_tol : float, optional
        Relative tolerance of the PSD check of ``problem="perturb"`` (default 1e-10).
    options : dict, optional
        The solver's own options, as ``scipy.optimize.minimize(options=...)``:
        :func:`indefsvm.proxy.solvers.projected_gradient`,
        :func:`~indefsvm.proxy.solvers.accpm.analytic_center_cutting_plane` or
        :func:`~indefsvm.proxy.solvers.siqclp.exchange_method` (an option the solver does not
        take is refused, naming the ones it does), and the keys of :data:`OPTION_KEYS`, the
        same as the estimators' ``solver_options`` take:

        ``"max_time"`` (float)
            Wall-time limit in seconds.
        ``"libsvm_every"`` (int)
            Every this many iterations (and at the end) train LIBSVM on the current proxy
            kernel and use its solution's primal value to tighten the upper bound
            (theory.md §4).
        ``"libsvm_tol"`` (float, default 1e-3)
            LIBSVM's stopping tolerance ``-e`` for the checks.
        ``"callback"`` (callable)
            Called after every iteration with a dict (iteration, objective, upper_bound, gap,
            alpha, time); returning True stops the solver.
        ``"progress"`` (bool, default False)
            Show a progress bar (tqdm, stderr) whose unit is the certified relative gap's
            progress towards ``tol`` on a log scale, with an estimate of the time left.
        ``"preset"`` ({"default", "paper"})
            ``"paper"``: the paper's algorithm for the chosen ``method`` (:data:`PRESETS`:
            Algorithm 1, 2 or 3 as published) instead of our faster default variant; same
            optimum, same certified gap. The solver's options given beside it override it.
    **keywords
        None are taken: a keyword that is not an argument above is a TypeError that says to pass
        the solver's options in ``options``.

    Returns
    -------
    SolveResult
        ``alpha``, ``objective`` (value of eq. 7), ``upper_bound``, ``gap``, ``kernel`` (K*),
        ``intercept``, ``n_iter``, ``status``, ``history``, ``method``, ...

    Examples
    --------
    >>> import numpy as np, indefsvm
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3)); y = np.sign(X[:, 0] + 0.1)
    >>> K0 = np.tanh(0.5 * X @ X.T - 0.2)          # indefinite sigmoid kernel
    >>> res = indefsvm.solve(K0, y, C=1.0, rho=1.0)
    >>> res.status
    'converged'
    """
    start = time.perf_counter()
    _refuse_keywords("solve", keywords)
    arguments = locals()  # tol, max_iter, verbose: the monitor's arguments solve takes itself
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; got {method!r}.")
    built = make_problem(
        problem,
        K0,
        y,
        C=C,
        rho=rho,
        epsilon=epsilon,
        nu=nu,
        class_weight=class_weight,
        symmetrize=symmetrize,
        psd_tol=psd_tol,
    )
    # A clash with solve's own arguments is named as such; the monitor's keys and the preset
    # are taken out of options, what is left is the solver's own.
    preset, monitor, solver_options = split_options(
        options, named=("tol", "max_iter", "verbose"), owner="solve", name="options"
    )
    monitor = {"libsvm_tol": 1e-3, "progress": False, **monitor}
    # solve_problem chooses the solver ("auto") and resolves the preset, in one place.
    return solve_problem(
        built,
        method=method,
        start_time=start,
        preset=preset,
        options=solver_options,
        tol=arguments["tol"],
        max_iter=arguments["max_iter"],
        verbose=arguments["verbose"],
        **monitor,
    )


def solve_problem(
    problem: ProxyKernelProblem,
    *,
    method: str = "auto",
    tol: float = 1e-6,
    max_iter: int = 10000,
    libsvm_every: int | None = None,
    libsvm_tol: float = 1e-3,
    verbose: bool | int = False,
    callback: Callable[[dict[str, Any]], Any] | None = None,
    max_time: float | None = None,
    start_time: float | None = None,
    progress: bool = False,
    preset: str | None = None,
    options: Mapping[str, Any] | None = None,
    **keywords: Any,
) -> SolveResult:
    """Run a solver on an already-built problem object (same options as :func:`solve`)."""
    _refuse_keywords("solve_problem", keywords)
    arguments = locals()  # the monitor's arguments, passed on by name
    choice = None
    if method == "auto":
        given = list(check_solver_options(options, name="options"))
        choice = choose_method(
            problem, preset=preset, options=given, solvers=SOLVERS, get_solver=get_solver
        )
        method = choice.method
        if method == CLIP_PROBE:
            monitor_args = {name: arguments[name] for name in MONITOR_ARGUMENTS}
            # Both runs count time from the same start: max_time covers the whole solve.
            monitor_args["start_time"] = start_time or time.perf_counter()
            result = run_clip_probe(problem, solve_problem, monitor_args)
            result.info["auto"] = choice.reason
            return result
    solver = get_solver(method)
    solver_options = resolve_options(method, preset=preset, options=options, owner="solve_problem")
    _check_solver_keywords(method, solver, solver_options)
    # A solver declares what it needs from the kernel operator (e.g. n x n arrays); a problem
    # whose operator lacks it (a large low-rank one) refuses before any work.
    problem.check_solver(method, getattr(solver, "needs", frozenset()))
    # A check the solve would reach only after its iterations (e.g. a LIBSVM check that this
    # problem cannot run) is refused now, before any work is thrown away.
    problem.check_options(method=method, libsvm_every=libsvm_every)
    monitor = SolverMonitor(
        problem,
        method=method,
        start_time=start_time,
        **{name: arguments[name] for name in MONITOR_ARGUMENTS},
    )
    result = solver(problem, monitor, **solver_options)
    if choice is not None:
        result.info["auto"] = choice.reason
    return result
