"""scikit-learn estimators for the proxy-kernel SVMs of Luss & d'Aspremont (paper 004).

* :class:`IndefiniteSVC` -- classification with an indefinite kernel, eq. (4)/(7): the SVM and
  a positive semi-definite proxy kernel ``K* = (K0 + (Y alpha)(Y alpha)'/(4 rho))_+`` (Theorem 1,
  eq. 5) are learned together.
* :class:`PerturbSVC` -- PerturbSVM for a PSD (Mercer) kernel, Sect. 4.3, eq. (21)-(22): the
  support vectors perturb the kernel, ``K* = K0 + (Y alpha)(Y alpha)'/(4 rho)``.
* :class:`IndefiniteSVR` -- epsilon-insensitive regression, Sect. 4.1, eq. (14)-(17).
* :class:`IndefiniteOneClassSVM` -- one-class SVM, Sect. 4.2, eq. (18)-(20).

All of them take a precomputed kernel (``kernel="precomputed"``, the default: ``fit(K_train,
y)`` and ``predict(K_test_train)``), a kernel name of :mod:`indefsvm.kernels` or a callable
``kernel(X, Y=None, **params) -> K`` applied to raw features. They solve the problem with
:func:`indefsvm.solve_problem` and keep the problem object and the solver result.

Prediction for new points (theory.md §8)
----------------------------------------
``prediction_params={"out_of_sample": "projection"}`` (default) is the inductive map: with ``P_+``
the projector on the non-negative eigenspace of ``M = K0 + sigma u u'`` (``sigma = 1/(4 rho)``),
``K* = P_+ M``, and a new point whose similarities to the training points are ``k_x`` (its row of
``M`` carries no rank-one term) gets the proxy-kernel row ``P_+ k_x``. Given the rows of ``M`` of
training points it returns the rows of ``K*`` exactly. The decision is ``(P_+ k_x)' u + b``; since
``P_+`` is fixed after fitting, this is ``k_x' c + b`` with ``c = P_+ u`` (``dual_coef_``), one
mat-vec per prediction.

A training point passed to ``predict`` gets its row of the learned kernel: ``(K* u)_i + b``,
the decision the solver certified. As a kernel on the input space,
``M(x, x') = k0(x, x') + sigma u(x) u(x')`` with ``u(x) = u_i`` on the training input ``x_i`` and
0 elsewhere: the rank-one term belongs to the training sample, so a new point's row has none
and a training point's row has its own (``docs/theory.md``, "Training points and new points").
``fit`` keeps a fingerprint of each training input row (features, or a row of the precomputed
kernel; :mod:`indefsvm.utils.fingerprint`) and ``train_scores_ = K* u``; an input row identical
to a training input gets its training score (the mean over duplicated training inputs). Without
it, ``P_+ k_i`` drops ``sigma u_i (u'P_+ u)`` on every support vector: with ``K0 = -RBF`` the
model was 0 % accurate on its own training points. A kernel with no positive eigenvalue warns
(new points then have nothing to be projected on), a zero kernel is refused.

``prediction_params={"out_of_sample": "transductive"}`` is the paper's heuristic (Sect. 2.3;
published
``Ktest_heuristic.m``): add the rank-one update to the training block of the full train+test
kernel, clip its negative eigenvalues and read the test-vs-train rows. It needs the
test-vs-test block (``decision_function(K_test_train, K_test_test=...)``).

Dask arrays (one fit on a cluster): with ``n_components`` and a kernel name or callable,
``fit(X, y)`` accepts a row-chunked ``dask.array`` ``X`` (and a numpy or dask ``y``, brought to
this process and checked against ``X``'s rows): the Nystroem features stay on the workers and
every pass of the solver over them runs there (:class:`indefsvm.linalg.factor.DaskFactor`).
``predict``/``decision_function`` of a dask array return a dask array chunked like its rows. Not
supported with dask input, and refused with the reason: ``kernel="precomputed"``,
``probability=True``, more than two classes, ``K_test_test``, and the solvers that need n x n
arrays (``"accpm"``, ``"siqclp"``).

The intercept is, by default, the certified best ``b`` of the solver result (the one that
attains the primal bound of theory.md §3); ``prediction_params={"intercept": "paper"}`` is the
published ``estimate_b.m``:
the mean of ``y_i - (K0 Y alpha)_i`` over free support vectors (``1e-3 < alpha_i < C_i - 1e-3``)
on the ORIGINAL kernel ``K0``.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from indefsvm.base import (
    KERNEL_PARAMETER_CONSTRAINTS,
    KERNEL_PARAMS_DOC,
    NYSTROEM_PARAMETER_CONSTRAINTS,
    NYSTROEM_PARAMS_DEFAULTS,
    IndefsvmEstimator,
    KernelInputMixin,
    check_landmark_parameters,
    fit_context,
    prediction_param,
    set_init_parameters,
)
from indefsvm.inputs import InputMap, PairRows, fit_input, fitted_input
from indefsvm.kernels.registry import KERNEL_ALIASES, KERNEL_NAMES, resolve_kernel
from indefsvm.multiclass import WeightedOneVsOneMixin
from indefsvm.probability import PlattProbabilityMixin, probability_method
from indefsvm.proxy.api import (
    METHODS,
    solve_problem,
    split_options,
)
from indefsvm.proxy.out_of_sample import (
    OUT_OF_SAMPLE,
    estimate_intercept_paper,
    projection_coefficients,
    transductive_rows,
)
from indefsvm.proxy.problems import ProxyKernelProblem, make_problem, minimize_piecewise_linear
from indefsvm.proxy.result import SolveResult
from indefsvm.utils.constraints import (
    Interval,
    StrOptions,
    check_dict_parameter,
    is_outermost_fit,
)
from indefsvm.utils.dask_rows import rowwise_on_workers
from indefsvm.utils.docstrings import fill_doc
from indefsvm.utils.fingerprint import TrainingRows
from indefsvm.utils.progress import LONG_FIT_ROWS
from indefsvm.utils.validation import check_sample_weight

__all__ = [
    "KERNEL_ALIASES",
    "KERNEL_NAMES",
    "IndefiniteOneClassSVM",
    "IndefiniteSVC",
    "IndefiniteSVR",
    "PerturbSVC",
    "estimate_intercept_paper",
    "resolve_kernel",
    "transductive_rows",
]


class _ProxyKernelEstimator(KernelInputMixin, IndefsvmEstimator):
    """Shared fitting and prediction of the estimators built on a :class:`ProxyKernelProblem`.

    A fit builds its input map (:mod:`indefsvm.inputs`: the dense kernel, the Nystroem
    features, or a one-vs-one pair's rows of a shared map) and passes it to
    :meth:`_fit_problem`; prediction rebuilds it from the fitted state. Its ``low_rank`` is the
    one question asked about the kind of input.
    """

    #: The plain Nystroem map by default: the problem depends only on the approximated kernel
    #: ``Phi S Phi'``, which both factorisations give, and the plain one skips the one-shot QR
    #: pass over the n rows (docs/scale.md).
    _nystroem_defaults: ClassVar[dict[str, Any]] = {
        **NYSTROEM_PARAMS_DEFAULTS,
        "factorization": "plain",
    }

    _problem_kind = "svc"
    _labels_in_client = True  # the solvers' n-vectors live here; the factor on the workers
    _parameter_constraints: dict = {
        **KERNEL_PARAMETER_CONSTRAINTS,
        "rho": [Interval(Real, 0, None, closed="neither"), "array-like"],
        "rho_scale": [StrOptions({"spectral"}), None],
        "solver": [StrOptions(set(METHODS))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "solver_options": [Mapping, None],
        **NYSTROEM_PARAMETER_CONSTRAINTS,
        "verbose": ["verbose"],
        "nystroem_params": [Mapping, None],
        "prediction_params": [Mapping, None],
    }
    #: The keys of ``prediction_params`` with their constraints and defaults.
    _prediction_constraints: ClassVar[dict[str, list[Any]]] = {
        "out_of_sample": [StrOptions(set(OUT_OF_SAMPLE))],
    }
    _prediction_defaults: ClassVar[dict[str, Any]] = {"out_of_sample": "projection"}

    def _prediction(self, key: str) -> Any:
        """The prediction rule ``key`` of ``prediction_params`` (its default when not set)."""
        return prediction_param(self, key, self._prediction_defaults[key])

    def _keep_training_state(self) -> bool:
        """``solver_options["keep_training_state"]``: keep the O(n^2) training state."""
        return bool((self.solver_options or {}).get("keep_training_state", False))

    def _solve(self, problem: ProxyKernelProblem) -> SolveResult:
        # tol, max_iter, verbose are the estimator's own parameters: the same keys in
        # solver_options are refused by name, not Python's "multiple values". solver_options
        # holds the solver's own options and the keys of OPTION_KEYS (the preset, the monitor's
        # other arguments: max_time, libsvm_every, callback, ...), as solve's options.
        preset, monitor, options = split_options(
            self.solver_options,
            named=("tol", "max_iter", "verbose"),
            owner=type(self).__name__,
            name="solver_options",
        )
        options.pop("keep_training_state", None)  # the estimator's, read in _finish_fit
        # A long fit shows its certified gap's progress by default (on a terminal).
        monitor.setdefault("progress", None if problem.n >= LONG_FIT_ROWS else False)
        return solve_problem(
            problem,
            method=self.solver,
            tol=self.tol,
            max_iter=self.max_iter,
            verbose=self.verbose,
            preset=preset,
            options=options,
            **monitor,
        )

    def _scaled_problem(self, K: Any, make: Callable[[Any], ProxyKernelProblem]):
        """The problem ``make(rho)`` with the penalty in the units of ``rho_scale``.

        ``rho_scale=None``: ``rho`` as given. ``"spectral"``: ``rho_eff = rho B / ||K0||_2``
        with ``B = sum_i max(|lower_i|, |upper_i|)^2``, the largest ``||u||^2`` over the box
        (``u = Y alpha``), so that the rank-one term of eq. (5) obeys
        ``||u u' / (4 rho_eff)||_2 <= ||K0||_2 / (4 rho)`` for every feasible alpha whatever
        the kernel's scale, and ``(c K0, C / c)`` gives the same classifier as ``(K0, C)`` at
        the same ``rho`` (rho_eff scales as ``c^-3``, the exact invariance of eq. (3)).
        """
        problem = make(self.rho)
        self._check_positive_part(problem)
        if self.rho_scale is None:
            self.effective_rho_ = self.rho
            return problem
        rho = np.asarray(self.rho, dtype=np.float64)
        if rho.ndim == 0:
            # The operator of a scalar-rho problem holds the eigenvalues of K0 itself: ||K0||_2
            # comes from them, and the new rho only changes sigma, so the eigendecomposition is
            # kept (one eigh per fit, not three).
            scale = float(np.max(np.abs(problem.operator.k0_eigenvalues()), initial=0.0))
        else:
            from indefsvm.linalg.spectrum import spectral_scale

            scale = spectral_scale(K)
        if not scale > 0:
            raise ValueError(
                "rho_scale='spectral' needs a non-zero training kernel; got ||K0||_2 = 0."
            )
        bound = float(np.sum(np.maximum(np.abs(problem.lower), np.abs(problem.upper)) ** 2))
        rho = rho * (bound / scale)
        self.effective_rho_ = float(rho) if rho.ndim == 0 else rho
        if rho.ndim == 0:
            problem.set_penalty(self.effective_rho_)
            return problem
        return make(self.effective_rho_)

    def _check_positive_part(self, problem: ProxyKernelProblem) -> None:
        """Refuse a zero training kernel; warn when it has no positive eigenvalue.

        A zero ``K0`` has nothing to learn (every spectrum and Krein estimator refuses it too).
        A ``K0`` without a positive eigenvalue (e.g. ``-RBF``) leaves the proxy kernel only the
        rank-one term of the training sample: the training points are classified by it, but a
        new point's row ``P_+ k_x`` has no positive part of ``K0`` to project on, so its decision
        carries no learned information (``docs/theory.md``, "Training points and new points").
        """
        operator = problem.operator
        name = type(self).__name__
        if getattr(operator, "eigenvalues", None) is None and isinstance(
            getattr(operator, "K0", None), np.ndarray
        ):
            # The PSD path (PerturbSVC) has no eigendecomposition: only a zero kernel is refused.
            lam = np.array([float(np.max(np.abs(operator.K0), initial=0.0))])
        else:
            lam = np.asarray(operator.k0_eigenvalues(), dtype=np.float64)
        scale = float(np.max(np.abs(lam), initial=0.0))
        if not scale > 0:
            raise ValueError(
                f"{name}: the training kernel is zero (every entry, or every eigenvalue of its "
                "Nystroem approximation, is 0): there is nothing to fit. Check the kernel and "
                "its parameters (e.g. gamma)."
            )
        tol = max(lam.shape[0], 1) * np.finfo(np.float64).eps * scale
        if float(np.max(lam)) <= tol:
            warnings.warn(
                f"{name}: the training kernel has no positive eigenvalue (largest "
                f"{float(np.max(lam)):.3g}, max|lambda| = {scale:.3g}). The learned kernel's only "
                "positive part is the rank-one term of the training sample, so decisions on new "
                "points carry no learned information. Use a kernel with a positive part (e.g. "
                "-K for a negative definite K), SpectrumSVC(spectrum='flip') or "
                "indefsvm.krein.KreinSVC.",
                UserWarning,
                stacklevel=5,
            )

    def _check_common(self) -> None:
        # Single parameters are checked by _parameter_constraints; the keys of the dict
        # parameters here (nested fits too), and the coupling.
        owner = type(self).__name__
        check_dict_parameter(
            self.prediction_params, self._prediction_constraints, owner=owner,
            name="prediction_params",
        )  # fmt: skip
        keep = (self.solver_options or {}).get("keep_training_state", False)
        if not isinstance(keep, (bool, np.bool_)):
            raise ValueError(
                f"{owner}: solver_options['keep_training_state'] must be a bool; got {keep!r}."
            )
        check_landmark_parameters(self)
        rho = np.asarray(self.rho, dtype=np.float64)
        if self._prediction("out_of_sample") == "transductive" and rho.ndim > 0:
            raise ValueError(
                "prediction_params out_of_sample='transductive' (the paper's heuristic) is "
                "defined for a scalar rho only: a vector rho has no penalty for the test points. "
                "Use 'projection'."
            )

    def _fit_problem(
        self, inputs: InputMap, make: Callable[[Any, Any], ProxyKernelProblem]
    ) -> tuple[ProxyKernelProblem, SolveResult]:
        """Solve ``make(K, rho)`` on the training operand ``K`` of the input map ``inputs``.

        The fitting path of every estimator here: the penalty in the units of ``rho_scale``
        (:meth:`_scaled_problem`), the solver, the fitted state (:meth:`_finish_fit`). ``K`` is
        the dense kernel or, with ``n_components``, the factor ``LowRankKernel(Phi,
        signature_)`` of the Nystroem map (the low-rank proxy-kernel SVM of
        :mod:`indefsvm.proxy.lowrank`, O(nm) memory). A low-rank model keeps the map as
        ``nystroem_``, from which prediction rebuilds its input
        (:func:`~indefsvm.inputs.fitted_input`); a dense fit drops the map of an earlier
        fit, so that a refitted model predicts through its own input.
        """
        if inputs.low_rank:
            self.nystroem_ = inputs.nystroem
        elif hasattr(self, "nystroem_"):
            del self.nystroem_
        K = inputs.training_operand()
        problem = self._scaled_problem(K, lambda rho: make(K, rho))
        result = self._solve(problem)
        self._finish_fit(inputs, problem, result)
        return problem, result

    def _finish_fit(self, inputs: InputMap, problem: Any, result: SolveResult) -> None:
        """The fitted state of a solved problem, in the coordinates of the input map.

        The decision is ``k_x' c + b`` with ``c = P_+ u`` (``dual_coef_``, n coefficients) on
        kernel rows, or ``phi(x)' c + b`` (``feature_coef_``, in the factor's coordinates) on
        Nystroem features: a low-rank fit forms nothing n x n, ``K*`` stays a factor.
        """
        self.problem_ = problem
        self.result_ = result
        self.alpha_ = result.alpha.copy()
        # The dense K* (O(n^2 k), formed on first access of result.kernel) only when it is kept:
        # _release_training_state drops it otherwise, and prediction does not use it.
        keep = inputs.low_rank or self._keep_training_state()
        self.proxy_kernel_ = result.kernel if keep else None
        self.n_iter_ = result.n_iter
        self._u = problem.sign * self.alpha_
        bound = float(np.max(np.abs(problem.upper)))
        self.support_ = np.flatnonzero(np.abs(self.alpha_) > 1e-8 * bound)
        if inputs.low_rank:
            state = problem.state(self.alpha_)
            self.feature_coef_ = problem.feature_coef(self.alpha_, state=state)
        else:
            # decision = (P_+ k_x)'u = k_x' (P_+ u): the projection map folded into n numbers.
            self.dual_coef_ = projection_coefficients(problem, self.alpha_)
        self._set_train_scores(problem)
        self._release_training_state(inputs)

    def _set_train_scores(self, problem: Any) -> None:
        """``train_scores_ = K* u``: the learned kernel's decisions (before the intercept) on
        its training sample, which :meth:`_raw_decision` returns for a training input."""
        self.train_scores_ = np.asarray(
            problem.proxy_kernel_matvec(self.alpha_, self._u), dtype=np.float64
        )

    def _remember_training_inputs(self, X: Any) -> None:
        """Fingerprints of the training inputs (:mod:`indefsvm.utils.fingerprint`), so that a
        training point passed to ``predict`` gets its row of ``K*``. Only the fit the user
        called stores them: a one-vs-one pair's are its parent's, a cross-validation clone's
        are never asked for."""
        self.train_rows_ = (
            TrainingRows.of(X)
            if is_outermost_fit(self) and self._prediction("out_of_sample") == "projection"
            else None
        )

    def _with_training_rows(self, X: Any, d: NDArray[np.float64]) -> NDArray[np.float64]:
        """``d`` with the rows of training inputs replaced by ``(K* u)_i + b``."""
        rows_of_train = getattr(self, "train_rows_", None)
        if rows_of_train is None:
            return d
        rows, values = rows_of_train.training_values(X, self.train_scores_)
        if rows.shape[0]:
            d = np.array(d, dtype=np.float64, copy=True)
            d[rows] = values + self.intercept_
        return d

    def _release_training_state(self, inputs: InputMap) -> None:
        """Drop the O(n^2) training state unless ``keep_training_state`` (model size).

        Prediction needs ``dual_coef_`` (the out-of-sample map folded into n coefficients) or,
        for the paper's transductive heuristic, the training kernel; the proxy kernel, the
        problem's eigendecomposition and the result's kernel are kept only on request.
        """
        if self._keep_training_state():
            return
        problem = self.problem_
        transductive = self._prediction("out_of_sample") == "transductive"
        if transductive and not inputs.low_rank:
            self.train_kernel_ = problem.operator.K0
        self.result_ = dataclasses.replace(self.result_, kernel=None)
        self.proxy_kernel_ = None
        self.problem_ = None

    def _fitted_problem(self) -> ProxyKernelProblem:
        if self.problem_ is None:
            raise ValueError(
                f"{type(self).__name__} was fitted without solver_options "
                "keep_training_state=True, so it keeps only what prediction needs (O(n) "
                "coefficients); proxy_rows needs the training eigendecomposition. Refit with "
                "solver_options={'keep_training_state': True}."
            )
        return self.problem_

    def proxy_rows(self, X: Any, K_test_test: ArrayLike | None = None) -> NDArray[np.float64]:
        """Proxy-kernel rows of new points for the chosen ``out_of_sample`` map.

        Parameters
        ----------
        X : array_like of shape (m, n) or (m, n_features)
            Test-vs-train kernel (``kernel="precomputed"``) or raw features.
        K_test_test : array_like of shape (m, m), optional
            Test-vs-test kernel, needed by the ``"transductive"`` map of new points
            (``prediction_params``) with a precomputed kernel.

        Returns
        -------
        ndarray of shape (m, n)
        """
        check_is_fitted(self)
        self._check_no_test_test(K_test_test)
        inputs = fitted_input(self)
        if inputs.low_rank:
            # Rows of the Nystroem kernel Phi_x diag(s) Phi' (m x n: fine for a few points).
            problem = self._fitted_problem()
            R = inputs.kernel_rows(X, problem.operator.factor)
            return self._training_proxy_rows(X, problem.out_of_sample_rows(self.alpha_, R))
        R = inputs.test_operand(X)
        if self._prediction("out_of_sample") == "projection":
            rows = self._fitted_problem().out_of_sample_rows(self.alpha_, R)
            return self._training_proxy_rows(X, rows)
        return self._transductive(X, R, K_test_test)

    def _training_proxy_rows(self, X: Any, R: NDArray[np.float64]) -> NDArray[np.float64]:
        """``R`` with the rows of training inputs replaced by their rows of ``K*``."""
        rows_of_train = getattr(self, "train_rows_", None)
        if rows_of_train is None:
            return R
        rows, members = rows_of_train.match(X)
        problem = self._fitted_problem()
        for row, member in zip(rows, members, strict=True):
            e = np.zeros(problem.n)
            e[member] = 1.0 / member.shape[0]
            R[row] = problem.proxy_kernel_matvec(self.alpha_, e)
        return R

    def _check_no_test_test(self, K_test_test: ArrayLike | None) -> None:
        if K_test_test is not None and self._prediction("out_of_sample") == "projection":
            raise ValueError(
                "K_test_test is used only by out_of_sample='transductive' (the paper's heuristic); "
                "with out_of_sample='projection' the map needs only the test-vs-train kernel, so "
                "K_test_test would be ignored. Drop it or set prediction_params="
                "{'out_of_sample': 'transductive'}."
            )

    def _transductive(self, X: Any, R: NDArray, K_test_test: ArrayLike | None) -> NDArray:
        T = self._test_test_kernel(X, K_test_test)
        if T is None:
            raise ValueError(
                "out_of_sample='transductive' is the paper's heuristic (Sect. 2.3): it "
                "eigendecomposes the full train+test kernel and needs the test-vs-test block. "
                "Pass K_test_test=<(m, m) kernel of the test points>, or use "
                "prediction_params out_of_sample='projection' (inductive, needs only K_test_train)."
            )
        K0 = self.problem_.operator.K0 if self.problem_ is not None else self.train_kernel_
        return transductive_rows(K0, self._u, getattr(self, "effective_rho_", self.rho), R, T)

    @rowwise_on_workers
    def _raw_decision(self, X: Any, K_test_test: ArrayLike | None) -> NDArray[np.float64]:
        return self._decision_with(fitted_input(self), X, K_test_test)

    def _decision_with(
        self, inputs: InputMap, X: Any, K_test_test: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Decision values of ``X`` from the test operand of the input map ``inputs``.

        The fitted model's own map (:func:`~indefsvm.inputs.fitted_input`), or the one a
        multi-class model passes to its pairs (the shared map's features of ``X``, formed once).
        """
        check_is_fitted(self)
        self._check_no_test_test(K_test_test)
        T = inputs.test_operand(X)
        if inputs.low_rank:
            # Inductive map through the Nystroem features: (P_+ k_x)'u = phi(x) @ feature_coef_.
            return self._with_training_rows(X, T @ self.feature_coef_ + self.intercept_)
        if self._prediction("out_of_sample") == "projection":
            return self._with_training_rows(X, T @ self.dual_coef_ + self.intercept_)
        return self._transductive(X, T, K_test_test) @ self._u + self.intercept_


_COMMON_DOC = fill_doc(
    """
    solver : {"auto", "pg", "accpm", "siqclp", "lowrank_newton"}
        Optimisation algorithm, passed to :func:`indefsvm.solve_problem` as ``method``
        (``"auto"``, the default: ``"lowrank_newton"`` for classification with a scalar ``rho``
        and ``n_components``, ``"pg"`` otherwise, by the measured policy of docs/solvers.md;
        ``fitted.result_.method`` says which ran; ``"pg"``: projected gradient; ``"accpm"``,
        ``"siqclp"``: paper 004, Sect. 3.3-3.4;
        ``"lowrank_newton"``: the damped Newton / active-set method for the low-rank problem,
        with ``n_components`` only, classification with a scalar ``rho``).
    tol : float
        Certified duality gap at which the solver stops, relative to ``max(1, |f(alpha) - f(0)|)``,
        the part of the objective that depends on alpha (``f(0) = rho ||(K0)_-||_F^2`` is a
        constant; see :func:`indefsvm.solve`).
    max_iter : int
        Solver iteration limit (a ``ConvergenceWarning`` is raised when it is reached).
    kernel : "precomputed", str or callable
        ``"precomputed"`` (``X`` is the kernel), a name of :data:`KERNEL_NAMES` (or alias
        ``"rbf"``, ``"poly"``, ``"tangent"``), or ``kernel(X, Y=None, **params) -> K``.
    {KERNEL_PARAMS}
    solver_options : dict, optional
        The solver's own options, as :func:`indefsvm.solve` takes them in ``options`` (e.g.
        ``{"step_size": 5.0}``), and the same further keys (:data:`indefsvm.proxy.api.OPTION_KEYS`):
        the monitor's arguments the estimator has no parameter for (``{"max_time": 60}``,
        ``{"libsvm_every": 50}``, ``"libsvm_tol"``, ``"callback"``, ``"progress"``: by default a
        bar for fits of at least 2000 points on a terminal) and ``"preset"``: ``"paper"`` for
        the paper's algorithm for ``solver`` (Algorithm 1, 2 or 3 as published,
        :data:`indefsvm.proxy.api.PRESETS`) instead of our faster default variant (same optimum,
        same certified gap; the solver's options given beside it override it; the paper's
        intercept rule is ``prediction_params={"intercept": "paper"}`` where the estimator has
        it: a prediction rule, not part of the algorithm). One key is the estimator's own:
        ``"keep_training_state"`` (bool, default False) keeps the O(n^2) training state
        (``proxy_kernel_``, ``problem_``, the result's kernel) after fitting, which
        :meth:`proxy_rows` needs; by default only what prediction needs is kept.
    random_state : int, Generator or None
        Seeds the landmark selection with ``n_components`` and, with ``probability=True``, the
        internal cross-validation of the classifiers. The solvers are deterministic, so refits
        with the same seed give identical results.
    verbose : bool or int
        Progress: a progress bar for the Nyström map with ``n_components``, and a solver log
        line every ``verbose`` iterations (True: every 50).
    n_components : int or None
        None (default): the dense problem on the n x n kernel. An int ``m``: fit an
        :class:`~indefsvm.approximation.nystrom.IndefiniteNystroem` with ``m`` landmarks and solve
        the
        low-rank proxy-kernel SVM on ``K ~= Phi diag(s) Phi'`` (:mod:`indefsvm.proxy.lowrank`; O(nm)
        memory and time per iteration, no n x n array). Prediction goes through the Nystroem
        map: ``decision(x) = phi(x) @ feature_coef_ + intercept_``, the inductive
        ``(P_+ k_x)'u`` of the Nystroem kernel row for a new point, the row ``(K* u)_i`` for a
        training input (see the module docstring). ``proxy_kernel_`` is then a
        :class:`~indefsvm.proxy.lowrank.LowRankProxyKernel` (a factor; kept only with
        ``solver_options={"keep_training_state": True}``, else None) and ``nystroem_`` the fitted
        transformer.
        Needs the ``"projection"`` map of new points. With ``kernel="precomputed"`` only the
        landmark columns of the given kernels are used.
    nystroem_params : dict, optional
        Options of the :class:`~indefsvm.approximation.nystrom.IndefiniteNystroem` of
        ``n_components`` (an error without it), with the map's names and defaults:
        ``"landmarks"`` ({"uniform", "kmeans++", "leverage"} or array of int; landmark selection,
        paper 003, Sect. 2.3, or explicit indices into the training set, then ``n_components``
        must equal their number), ``"sketch_size"``, ``"rcond"``, ``"dtype"`` (``"float32"``
        halves the factor) and ``"factorization"``; e.g. ``{"landmarks": "kmeans++", "dtype":
        "float32"}``. Another key is an error naming these. With more than two classes ONE
        Nystroem map is fitted on the whole training set (landmarks from all classes) and every
        one-vs-one pair solves on its rows of that map's factor (:mod:`indefsvm.multiclass`);
        per-pair maps are what
        ``sklearn.multiclass.OneVsOneClassifier(IndefiniteSVC(n_components=m))`` fits.
    prediction_params : dict, optional
        The prediction rules (another key is an error naming these): ``"out_of_sample"``
        ({"projection", "transductive"}, default ``"projection"``), the map of new points
        (module docstring): the inductive ``k_x -> P_+ k_x`` (theory.md §8) or the paper's
        transductive heuristic (needs ``K_test_test``); and, in the classifiers,
        ``"intercept"`` ({"certified", "paper"}, default ``"certified"``): the best ``b`` of
        the solver's primal bound with kernel ``K*``, or the published ``estimate_b.m`` on the
        original ``K0`` (:func:`estimate_intercept_paper`).""",
    KERNEL_PARAMS=KERNEL_PARAMS_DOC,
)


_RHO_SCALE_DOC = """    rho_scale : {None, "spectral"}, default None
        Units of ``rho``. None: absolute (the paper's ``rho``). ``"spectral"``: scale-free,
        ``rho_eff = rho * B / ||K0||_2`` with ``B`` the largest ``||Y alpha||^2`` over the box
        (``sum_i C_i^2``), so the rank-one term ``(Y alpha)(Y alpha)'/(4 rho_eff)`` has spectral
        norm at most ``||K0||_2 / (4 rho)``: one grid (e.g. ``{0.1, 1, 10}``) suits a Gaussian
        kernel with entries in (0, 1] and a negative-distance kernel with entries in the
        hundreds alike. The value used is ``effective_rho_``."""

_ATTRIBUTES_DOC = """    Attributes
    ----------
    effective_rho_ : float or ndarray
        The penalty the solver used (``rho`` itself unless ``rho_scale="spectral"``)."""


#: The paragraphs of the estimators' docstrings (:func:`indefsvm.utils.docstrings.fill_doc`).
_DOC_PARAGRAPHS = {
    "COMMON": _COMMON_DOC,
    "RHO_SCALE": _RHO_SCALE_DOC,
    "ATTRIBUTES": _ATTRIBUTES_DOC,
}


class IndefiniteSVC(
    PlattProbabilityMixin, WeightedOneVsOneMixin, ClassifierMixin, _ProxyKernelEstimator
):
    __doc__ = fill_doc(
        """Indefinite SVM classifier of Luss & d'Aspremont (paper 004, eq. 4/7).

    Maximises ``e'alpha - 1/2 (Y alpha)'K*(Y alpha) + rho ||K* - K0||_F^2`` over
    ``{y'alpha = 0, 0 <= alpha <= C_i}`` with the proxy kernel
    ``K* = (K0 + (Y alpha)(Y alpha)'/(4 rho))_+`` (Theorem 1), i.e. learns a PSD kernel close to
    the indefinite ``K0`` together with the SVM. ``rho -> inf`` gives the SVM on ``(K0)_+``
    (Sect. 2.3).

    Parameters
    ----------
    C : float
        Misclassification penalty (> 0).
    rho : float or array_like of shape (n_train,)
        Penalty on ``||K - K0||_F^2`` (> 0); a vector gives componentwise penalties
        ``H_ij = sqrt(rho_i rho_j)`` (Sect. 4.4, Theorem 3).
    {RHO_SCALE}
    class_weight : None, "balanced", "paper" or dict
        Per-class multipliers of ``C`` (``"paper"``: the published code's ``C n_pos / n_neg``
        for the negative class; dict keys are the user's labels).
    {COMMON}
    probability : bool
        Enable :meth:`predict_proba` (Platt scaling on an internal stratified 5-fold
        cross-validation seeded by ``random_state``, as ``sklearn.svm.SVC(probability=True)``;
        fitting costs 5 more fits, per pair with more than two classes).

    {ATTRIBUTES}
    classes_ : ndarray of shape (2,)
        The labels; ``classes_[1]`` is the positive class (+1 in the problem).
    alpha_ : ndarray of shape (n_train,)
        Dual solution of eq. (7).
    support_ : ndarray
        Indices of the support vectors (``alpha_i > 0``).
    dual_coef_ : ndarray of shape (n_train,)
        ``P_+ Y alpha``: the projection decision is ``K_test_train @ dual_coef_ + intercept_``.
    intercept_ : float
    proxy_kernel_ : ndarray of shape (n_train, n_train)
        The learned kernel ``K*``.
    result_ : SolveResult
        The solver result with its history and certified gap.
    problem_ : ProxyKernelProblem
        The problem object (eigendecomposition of ``K0``, out-of-sample map).
    n_iter_ : int
    n_features_in_ : int
        ``n_train`` for a precomputed kernel, else the number of features.
    X_fit_ : ndarray
        Training features (only when the kernel is computed from features).
    probA_, probB_ : ndarray of shape (1,) or (n_pairs,)
        Platt's sigmoid ``P(classes_[1] | f) = 1 / (1 + exp(probA_ f + probB_))`` (one per
        one-vs-one pair; ``probability=True`` only).

    Examples
    --------
    >>> import numpy as np
    >>> from indefsvm.proxy.estimators import IndefiniteSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = np.where(X[:, 0] > 0, "a", "b")
    >>> clf = IndefiniteSVC(kernel="sigmoid", gamma=0.5, coef0=-0.2, C=1.0, rho=1.0).fit(X, y)
    >>> clf.predict(X[:3]).tolist()
    ['a', 'a', 'a']
    """,
        **_DOC_PARAGRAPHS,
    )

    _problem_kind = "svc"
    _ovo_per_sample_params = ("rho",)

    def __init__(
        self,
        C: float = 1.0,
        rho: float | ArrayLike = 1.0,
        *,
        rho_scale: str | None = None,
        solver: str = "auto",
        tol: float = 1e-6,
        max_iter: int = 10000,
        class_weight: None | str | Mapping[Any, float] = None,
        decision_function_shape: str = "ovr",
        kernel: str | Callable[..., Any] = "precomputed",
        gamma: float | None = None,
        coef0: float | None = None,
        degree: int | None = None,
        kernel_params: Mapping[str, Any] | None = None,
        solver_options: Mapping[str, Any] | None = None,
        random_state: int | np.random.Generator | None = None,
        verbose: bool | int = False,
        n_components: int | None = None,
        nystroem_params: Mapping[str, Any] | None = None,
        prediction_params: Mapping[str, Any] | None = None,
        probability: bool = False,
    ) -> None:
        set_init_parameters(self, locals())

    _parameter_constraints: dict = {
        **_ProxyKernelEstimator._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions({"balanced", "paper"}), Mapping, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "probability": ["boolean"],
    }
    _prediction_constraints: ClassVar[dict[str, list[Any]]] = {
        **_ProxyKernelEstimator._prediction_constraints,
        "intercept": [StrOptions({"certified", "paper"})],
    }
    _prediction_defaults: ClassVar[dict[str, Any]] = {
        **_ProxyKernelEstimator._prediction_defaults,
        "intercept": "certified",
    }

    def _make_problem(
        self, K: NDArray, y: NDArray, rho: Any, sample_weight: Any = None
    ) -> ProxyKernelProblem:
        return make_problem(
            self._problem_kind, K, y, C=self.C, rho=rho, class_weight=self.class_weight,
            sample_weight=sample_weight,
        )  # fmt: skip

    def _fit_binary(
        self,
        X: Any,
        y: Any,
        sample_weight: NDArray | None = None,
        inputs: InputMap | None = None,
    ) -> None:
        """Solve eq. (7) on the training kernel (two classes); ``C_i = C w_i`` with weights.

        ``inputs`` is the input map a multi-class model gives a pair (its rows of the shared
        Nystroem map, :meth:`_fit_shared_rows`); otherwise it is built from ``X``.
        """
        self._check_common()
        pair = inputs  # a one-vs-one pair's rows (else None): its Platt folds split them
        inputs, y = fit_input(self, X, y, given=inputs)
        problem, result = self._fit_problem(
            inputs, lambda K, rho: self._make_problem(K, y, rho, sample_weight)
        )
        self.classes_ = problem.classes
        if self._prediction("intercept") == "paper":
            K = inputs.training_operand()
            self.intercept_ = estimate_intercept_paper(self.alpha_, K, problem.y, problem.box)
        else:
            self.intercept_ = float(result.intercept)
        self._remember_training_inputs(X)
        if pair is None and inputs.low_rank:
            # The Platt folds take their rows of this fit's Nystroem map, as one-vs-one pairs
            # take theirs of the shared map: the map is the model's kernel, fixed like a
            # precomputed one (LIBSVM's folds keep the kernel too), and is not refitted on
            # each fold. Explicit landmark indices, which index this training set, need it.
            pair = PairRows(inputs.nystroem, inputs.features)
        self._fit_probability(X, y, problem.y, sample_weight, rows=pair)

    def _decision_binary(
        self, X: Any, *extra: Any, inputs: PairRows | None = None
    ) -> NDArray[np.float64]:
        """Decision values of ``X``: through the fitted model's own input map, or through the
        rows ``inputs`` a multi-class model gives a pair (the shared map's features of ``X``,
        formed once for all pairs: the template's :meth:`_decide_shared_rows`)."""
        if inputs is not None:
            return self._decision_with(inputs, X, *extra)
        return self._raw_decision(X, *extra)

    def decision_function(
        self, X: ArrayLike, K_test_test: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Signed decision values (positive means ``classes_[1]``), as the template's
        :meth:`indefsvm.multiclass.OneVsOneMixin.decision_function` with ``K_test_test``.

        Parameters
        ----------
        X : array_like of shape (m, n_train) or (m, n_features)
            Test-vs-train kernel (``kernel="precomputed"``) or features.
        K_test_test : array_like of shape (m, m), optional
            Test-vs-test kernel, needed by the ``"transductive"`` map of new points
            (``prediction_params``) with a precomputed kernel (computed from the features
            otherwise).

        Returns
        -------
        ndarray
            Of shape ``(m,)`` for two classes; with more, one column per class (``"ovr"``) or
            per pair (``"ovo"``) of ``decision_function_shape``.
        """
        return self._decide(X, K_test_test)

    @probability_method
    def predict_proba(
        self, X: ArrayLike, K_test_test: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Class probabilities (``probability=True``): Platt scaling, pairwise coupling.

        Platt's sigmoid (Lin, Lin & Weng 2007) fitted on the decision values of an internal
        stratified 5-fold cross-validation seeded by ``random_state``; more than two classes
        couple the one-vs-one sigmoids (Wu, Lin & Weng 2004, method 2), as
        ``sklearn.svm.SVC(probability=True)`` (:mod:`indefsvm.probability`). As there,
        ``predict`` uses the decision function, so on rare points near a boundary the argmax of
        the probabilities can differ from ``predict``.

        Parameters
        ----------
        X, K_test_test
            As in :meth:`decision_function` (``K_test_test``: binary problems only).

        Returns
        -------
        ndarray of shape (m, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        return self._predict_proba(X, K_test_test)

    @probability_method
    def predict_log_proba(
        self, X: ArrayLike, K_test_test: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """``log(predict_proba(X))``."""
        return np.log(self._predict_proba(X, K_test_test))

    def predict(self, X: ArrayLike, K_test_test: ArrayLike | None = None) -> NDArray:
        """Predicted labels in the user's label space (``classes_``)."""
        return self._predict_labels(X, K_test_test)


class PerturbSVC(IndefiniteSVC):
    __doc__ = fill_doc(
        """PerturbSVM for a positive semi-definite kernel (paper 004, Sect. 4.3, eq. 21-22).

    Maximises ``e'alpha - 1/2 u'K0u - ||u||^4 / (16 rho)`` with ``u = Y alpha`` over the SVM
    feasible set: the kernel ``K* = K0 + u u'/(4 rho)`` (eq. 21) perturbs only the support
    vectors, and no eigenvalue work is needed. A kernel with eigenvalues below
    ``-psd_tol * max|lambda|`` is refused (use :class:`IndefiniteSVC`). New points use their
    kernel rows unchanged (``M`` is PSD, so ``P_+ = I``): the paper's ``PertSVMerror.m``.

    Parameters
    ----------
    C, rho, rho_scale, class_weight, probability
        As in :class:`IndefiniteSVC`.
    psd_tol : float
        Relative tolerance of the PSD check: eigenvalues above ``-psd_tol * max|lambda|`` count as
        rounding errors (1e-5 by default, which admits kernels computed from float32 data).
    {COMMON}
    """,
        **_DOC_PARAGRAPHS,
    )

    _problem_kind = "perturb"
    _parameter_constraints: dict = {
        **{
            key: value
            for key, value in IndefiniteSVC._parameter_constraints.items()
            if key not in ("n_components", "nystroem_params")
        },
        "psd_tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        C: float = 1.0,
        rho: float | ArrayLike = 1.0,
        *,
        rho_scale: str | None = None,
        solver: str = "auto",
        tol: float = 1e-6,
        max_iter: int = 10000,
        class_weight: None | str | Mapping[Any, float] = None,
        decision_function_shape: str = "ovr",
        kernel: str | Callable[..., Any] = "precomputed",
        gamma: float | None = None,
        coef0: float | None = None,
        degree: int | None = None,
        kernel_params: Mapping[str, Any] | None = None,
        psd_tol: float = 1e-5,
        solver_options: Mapping[str, Any] | None = None,
        random_state: int | np.random.Generator | None = None,
        verbose: bool | int = False,
        prediction_params: Mapping[str, Any] | None = None,
        probability: bool = False,
    ) -> None:
        set_init_parameters(self, locals())

    def _make_problem(
        self, K: NDArray, y: NDArray, rho: Any, sample_weight: Any = None
    ) -> ProxyKernelProblem:
        try:
            return make_problem(
                "perturb",
                K,
                y,
                C=self.C,
                rho=rho,
                class_weight=self.class_weight,
                sample_weight=sample_weight,
                psd_tol=self.psd_tol,
            )
        except ValueError as exc:
            if "PSD" not in str(exc):
                raise
            raise ValueError(
                f"PerturbSVC needs a PSD (Mercer) kernel: {exc} For an indefinite kernel use "
                "IndefiniteSVC."
            ) from exc


class IndefiniteSVR(RegressorMixin, _ProxyKernelEstimator):
    __doc__ = fill_doc(
        """Indefinite support vector regression (paper 004, Sect. 4.1, eq. 14-17).

    Maximises ``y'alpha - epsilon ||alpha||_1 - 1/2 alpha'K*alpha + rho ||K* - K0||_F^2`` over
    ``{e'alpha = 0, -C <= alpha <= C}`` with ``K* = (K0 + alpha alpha'/(4 rho))_+`` (eq. 16).
    ``predict(x) = (proxy row of x) @ alpha + intercept_``.

    Parameters
    ----------
    C : float
        Penalty of the epsilon-insensitive loss (> 0).
    epsilon : float
        Width of the insensitive tube (>= 0).
    rho : float or array_like of shape (n_train,)
        Kernel penalty (scalar, or componentwise as in Theorem 3).
    {RHO_SCALE}
    {COMMON}

    {ATTRIBUTES}
    alpha_ : ndarray of shape (n_train,)
        Dual solution (signed coefficients).
    dual_coef_ : ndarray of shape (n_train,)
        ``P_+ alpha``: the projection prediction is ``K_test_train @ dual_coef_ + intercept_``.
    intercept_ : float
        Best intercept of the certified primal bound.
    support_, proxy_kernel_, result_, problem_, n_iter_, n_features_in_
        As in :class:`IndefiniteSVC`.
    """,
        **_DOC_PARAGRAPHS,
    )

    _problem_kind = "svr"
    _parameter_constraints: dict = {
        **_ProxyKernelEstimator._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        C: float = 1.0,
        epsilon: float = 0.1,
        rho: float | ArrayLike = 1.0,
        *,
        rho_scale: str | None = None,
        solver: str = "auto",
        tol: float = 1e-6,
        max_iter: int = 10000,
        kernel: str | Callable[..., Any] = "precomputed",
        gamma: float | None = None,
        coef0: float | None = None,
        degree: int | None = None,
        kernel_params: Mapping[str, Any] | None = None,
        solver_options: Mapping[str, Any] | None = None,
        random_state: int | np.random.Generator | None = None,
        verbose: bool | int = False,
        n_components: int | None = None,
        nystroem_params: Mapping[str, Any] | None = None,
        prediction_params: Mapping[str, Any] | None = None,
    ) -> None:
        set_init_parameters(self, locals())

    @fit_context
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> IndefiniteSVR:
        """Solve eq. (17) on the training kernel.

        Parameters
        ----------
        X : array_like of shape (n, n) or (n, n_features)
            Training kernel (``kernel="precomputed"``) or features.
        y : array_like of shape (n,)
            Real targets.
        sample_weight : array_like of shape (n,), optional
            Per-point weights of the loss: ``C_i = C w_i`` (LIBSVM's instance weights).
        """
        self._check_common()
        inputs, y = fit_input(self, X, y, y_numeric=True)
        weights = check_sample_weight(sample_weight, inputs.n_samples, owner=type(self).__name__)
        _, result = self._fit_problem(
            inputs,
            lambda K, rho: make_problem(
                "svr", K, y, C=self.C, rho=rho, epsilon=self.epsilon, sample_weight=weights
            ),
        )
        self.intercept_ = float(result.intercept)
        self._remember_training_inputs(X)
        return self

    def predict(self, X: ArrayLike, K_test_test: ArrayLike | None = None) -> NDArray:
        """Predicted targets ``(proxy rows) @ alpha_ + intercept_``.

        Parameters
        ----------
        X : array_like of shape (m, n_train) or (m, n_features)
            Test-vs-train kernel (``kernel="precomputed"``) or test points.
        K_test_test : array_like of shape (m, m), optional
            Needed by the ``"transductive"`` map of new points (``prediction_params``) with a
            precomputed kernel.
        """
        return self._raw_decision(X, K_test_test)


class IndefiniteOneClassSVM(OutlierMixin, _ProxyKernelEstimator):
    __doc__ = fill_doc(
        """Indefinite one-class SVM (paper 004, Sect. 4.2, eq. 18-20).

    Maximises ``-1/2 alpha'K*alpha + rho ||K* - K0||_F^2`` over ``{e'alpha = 1,
    0 <= alpha <= 1/(nu n)}`` with ``K* = (K0 + alpha alpha'/(4 rho))_+``. The decision is
    ``(proxy row) @ alpha + intercept_`` with ``intercept_ = -r``; it is >= 0 on inliers.
    Coefficients sum to 1 (LIBSVM's sum to ``nu n``, so LIBSVM's decision values are ``nu n``
    times these).

    **Decision on a training point.** A training input scores its row of the learned kernel,
    ``(K* alpha)_i`` (``train_scores_``; module docstring), a new point ``(P_+ k_x)'alpha``. The
    offset ``r`` is the exact minimiser of the one-class primal
    ``-r + 1/(nu n) sum_i max(0, r - g_i)`` (eq. 18; Schoelkopf et al. 2001) over these
    training scores, i.e. the certified offset of the solver recomputed from the scores
    ``predict`` returns. Hence the nu-property holds for ``predict`` on the training set: at
    most ``nu n`` training points are outliers (``decision < 0``) and at least ``nu n`` are
    support vectors. With ``rho -> inf`` and a PSD kernel the model is the one-class SVM of
    LIBSVM.

    Parameters
    ----------
    nu : float
        In (0, 1]: an upper bound on the fraction of training points that ``predict`` flags as
        outliers and a lower bound on the fraction of support vectors (the nu-property of
        Schoelkopf et al. 2001, Prop. 4, for the decision function ``predict`` uses).
    rho : float or array_like of shape (n_train,)
        Kernel penalty.
    {RHO_SCALE}
    {COMMON}

    {ATTRIBUTES}
    alpha_ : ndarray of shape (n_train,)
    dual_coef_ : ndarray of shape (n_train,)
        ``P_+ alpha`` (projection map).
    intercept_ : float
        ``-r``, the nu-optimal offset for the training scores ``(K* alpha)_i`` (see above).
    offset_ : float
        ``r = -intercept_``, so that ``decision_function = score_samples - offset_``
        (scikit-learn's convention).
    support_, proxy_kernel_, result_, problem_, n_iter_, n_features_in_
        As in :class:`IndefiniteSVC`.
    """,
        **_DOC_PARAGRAPHS,
    )

    _problem_kind = "oneclass"
    _parameter_constraints: dict = {
        **_ProxyKernelEstimator._parameter_constraints,
        "nu": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(
        self,
        nu: float = 0.5,
        rho: float | ArrayLike = 1.0,
        *,
        rho_scale: str | None = None,
        solver: str = "auto",
        tol: float = 1e-6,
        max_iter: int = 10000,
        kernel: str | Callable[..., Any] = "precomputed",
        gamma: float | None = None,
        coef0: float | None = None,
        degree: int | None = None,
        kernel_params: Mapping[str, Any] | None = None,
        solver_options: Mapping[str, Any] | None = None,
        random_state: int | np.random.Generator | None = None,
        verbose: bool | int = False,
        n_components: int | None = None,
        nystroem_params: Mapping[str, Any] | None = None,
        prediction_params: Mapping[str, Any] | None = None,
    ) -> None:
        set_init_parameters(self, locals())

    @fit_context
    def fit(
        self, X: ArrayLike, y: None = None, sample_weight: ArrayLike | None = None
    ) -> IndefiniteOneClassSVM:
        """Solve eq. (20) on the training kernel (``y`` is ignored).

        ``sample_weight`` (n,) weights each point's term of the one-class primal: the bounds
        become ``w_i / (nu sum(w))`` (uniform weights give eq. 20), as LIBSVM's instance
        weights do.
        """
        self._check_common()
        inputs, _ = fit_input(self, X)
        weights = check_sample_weight(sample_weight, inputs.n_samples, owner=type(self).__name__)
        problem, _ = self._fit_problem(
            inputs,
            lambda K, rho: make_problem("oneclass", K, nu=self.nu, rho=rho, sample_weight=weights),
        )
        self.intercept_ = self._nu_optimal_intercept(problem.box)
        self.offset_ = -self.intercept_
        self._remember_training_inputs(X)
        return self

    def _nu_optimal_intercept(self, box: NDArray[np.float64]) -> float:
        """``-r`` with ``r`` the nu-optimal offset for the training scores ``(K* alpha)_i``.

        The exact minimiser over ``r`` of the one-class primal (eq. 18; Schoelkopf et al.
        2001) with the learned kernel fixed, ``-r + 1/(nu n) sum_i max(0, r - g_i)`` with
        ``g = K* alpha`` (``train_scores_``; ``box`` the bounds ``1/(nu n)``, or
        ``w_i / (nu sum(w))`` with sample weights): a weighted median of the scores, so at most
        ``nu n`` training points score below it (the nu-property). These are the scores
        ``decision_function`` gives the training inputs (both maps reproduce the rows of
        ``K*`` on them), so the property holds for ``predict`` on the training set. It is the
        certified offset of the solver up to the solver's tolerance, recomputed from the
        scores ``predict`` returns so that the point on the boundary stays an inlier.
        """
        g = self.train_scores_
        n = g.shape[0]
        r, _ = minimize_piecewise_linear(-1.0, box, np.ones(n), -g)
        return -float(r)

    def decision_function(
        self, X: ArrayLike, K_test_test: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Decision values; >= 0 on inliers (same arguments as :meth:`IndefiniteSVC.predict`)."""
        return self._raw_decision(X, K_test_test)

    def score_samples(
        self, X: ArrayLike, K_test_test: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """``(proxy rows) @ alpha_``: decision values without the offset (higher = inlier)."""
        return self.decision_function(X, K_test_test) + self.offset_

    def predict(self, X: ArrayLike, K_test_test: ArrayLike | None = None) -> NDArray[np.intp]:
        """+1 for inliers (decision >= 0), -1 for outliers.

        A point exactly on the boundary is an inlier, as for scikit-learn's outlier detectors
        (``predict`` must agree with the sign rule of ``decision_function``). This matters here
        more than for LIBSVM: the certified offset is the best breakpoint of the one-class
        primal, i.e. exactly some training point's score, so that point's decision is exactly 0.
        (LIBSVM's own rule, ``decision > 0``, differs only on such points.)
        """
        d = self.decision_function(X, K_test_test)
        return np.where(d >= 0, 1, -1).astype(np.intp)
