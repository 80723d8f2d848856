"""Hyperparameter gradients and L-BFGS-B tuners (Oglic & Gaertner 2018, Sect. 3.3; 2019, Sect. 2.5).

:func:`tune_variance_constrained` tunes KREIN / OMCS-KREIN (paper 000);
:func:`tune_squared_hinge` tunes the KREIN SH-SVM (paper 003, Sect. 2.5) with the implicit
derivative of Chapelle et al. (2002), :func:`indefsvm.krein.lowrank.squared_hinge_hypergradient`.

The validation loss ``Xi = (1/m) ||K_v alpha + b - y_v||^2`` of the global solution ``alpha`` of
eq. (2)/(4) is differentiated with respect to ``lambda_+``, ``lambda_-`` (or ``lam``), ``r`` and
kernel parameters ``eta`` through the implicit derivative of the optimal multiplier ``mu*``.

Derivation (re-done here; the paper's Sect. 3.3 has the same structure)
-----------------------------------------------------------------------
Eq. (5) is equivalent to ``A alpha = y`` with ``A = G - mu K`` and ``G = g(K)`` the spectral
function ``g(sigma) = n rho(sigma) / sigma`` (KREIN: ``n lambda_+`` on the positive and
``-n lambda_-`` on the negative eigenvalues, i.e. ``n (lambda_+ P_+ - lambda_- P_-)``, the
matrix of eq. 6; OMCS: ``n lam`` on the range of K), plus ``alpha' K^2 alpha = n r^2``.
Differentiating both, with ``u = K alpha``, ``q = A^+ K u``, ``tau = (2/m) K_v'e``
(``e = K_v alpha + b - y_v``) and ``t = A^+ tau``:

    d mu  = [ n r dr + q' dG alpha - (mu q + u)' dK alpha ] / (q'u)
    d Xi  = (2/m) e' dK_v alpha - t' dG alpha + d mu (t'u) + mu t' dK alpha.

``dG = n P_+ d lambda_+``, ``-n P_- d lambda_-`` or ``n P d lam``; for a kernel parameter
``dG = V (Gamma o V' dK V) V'`` with the Daleckii-Krein divided differences
``Gamma_ij = (g(sigma_i) - g(sigma_j)) / (sigma_i - sigma_j)`` (zero between eigenvalues of the
same sign). Paper 000's kernel-parameter formula omits this ``dG`` term (the derivative of the
projectors ``P_+-``); it is exact only when no eigenvalue changes sign structure, which the
finite-difference tests here show it does not in general. ``A^+`` acts on the numerical range
of ``K``; the null space is assumed to be structural (e.g. the constant vector after centring),
so ``dK`` must not move it. The hard case (``q'u`` infinite) is not differentiable.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import minimize
from sklearn.model_selection import KFold

from indefsvm.krein.centering import center_kernel_test, center_kernel_train
from indefsvm.krein.solver import (
    KernelEigen,
    kernel_eigen,
    krein_regularizer_eigenvalues,
    variance_constrained_least_squares,
)
from indefsvm.linalg.spectrum import TRANSFORM_METHODS, spectrum_transform
from indefsvm.utils.validation import check_finite_matrix, check_positive, check_square_symmetric

logger = logging.getLogger(__name__)

__all__ = [
    "HyperGradient",
    "TuningResult",
    "validation_hypergradient",
    "tune_variance_constrained",
]


@dataclass(frozen=True)
class HyperGradient:
    """Validation loss and its gradient.

    Attributes
    ----------
    loss : float
        Mean squared validation error.
    grad : dict
        ``d loss / d theta`` for ``"lambda_plus"``, ``"lambda_minus"`` (KREIN) or ``"lam"``
        (OMCS), ``"r"`` and every kernel-parameter name given in ``dK``.
    mu : float
        Optimal multiplier.
    dmu : dict
        ``d mu / d theta`` for the same keys.
    hard_case : bool
        The solution is in the hard case (only with ``hard_case="branch"``): ``grad`` is the
        derivative of the returned branch of minimisers; kernel-parameter entries are 0.
    """

    loss: float
    grad: dict[str, float]
    mu: float
    dmu: dict[str, float]
    hard_case: bool = False


def validation_hypergradient(
    K: ArrayLike | KernelEigen,
    y: ArrayLike,
    K_val: ArrayLike,
    y_val: ArrayLike,
    *,
    formulation: str = "krein",
    lambda_plus: float | None = None,
    lambda_minus: float | None = None,
    lam: float | None = None,
    r: float,
    intercept: float = 0.0,
    dK: dict[str, ArrayLike] | None = None,
    dK_val: dict[str, ArrayLike] | None = None,
    rcond: float | None = None,
    projector_derivative: bool = True,
    hard_case: str = "raise",
) -> HyperGradient:
    """Gradient of the validation loss of the KREIN (eq. 4) or OMCS-KREIN (eq. 2) solution.

    Parameters
    ----------
    K : array_like of shape (n, n) or KernelEigen
        Training kernel (centred as in training) or its decomposition.
    y : array_like of shape (n,)
        Training targets (centred as in training).
    K_val : array_like of shape (m, n)
        Validation-to-training kernel rows (same centring).
    y_val : array_like of shape (m,)
        Validation targets (uncentred; ``intercept`` is added to the prediction).
    formulation : {"krein", "omcs"}
        Problem (eq. 4 or eq. 2). For a spectrum-transformed kernel use ``"omcs"`` with the
        transformed matrices (gradients for ``lam`` and ``r``).
    lambda_plus, lambda_minus : float
        KREIN regularisation.
    lam : float
        OMCS regularisation.
    r : float
        Radius.
    intercept : float
        Added to validation predictions (the training mean of ``y`` when centring).
    dK, dK_val : dict of name -> array, optional
        Derivatives of ``K`` (n, n) and ``K_val`` (m, n) with respect to kernel parameters.
    rcond : float, optional
        Zero tolerance when ``K`` is a matrix.
    projector_derivative : bool
        Include ``dG`` for kernel parameters (exact). ``False`` reproduces paper 000's
        Sect. 3.3 formula, which treats ``P_+`` and ``P_-`` as constant.
    hard_case : {"raise", "branch"}
        What to do when the solution is in the hard case (``y_hat`` vanishes exactly on the
        eigenspace of ``min D``, e.g. targets that are constant on a fold and hence zero after
        centring). The minimiser then is ``u_hat = (D - delta)^+ y_hat + s e`` with
        ``delta = min D`` and ``s = sqrt(n r^2 - ||(D - delta)^+ y_hat||^2)``; it is not
        unique (``+-s``) and the implicit-function formula (``q'u`` infinite) does not apply.
        ``"raise"`` refuses with a ``ValueError``. ``"branch"`` returns the loss of the
        minimiser the solver returns and the derivative of that branch, which is smooth in
        ``lambda_+-`` / ``lam`` and ``r`` while the hard case persists:
        ``du_i = -u_i (dD_i - d delta) / (D_i - delta)`` off the bottom eigenspace and
        ``ds = (n r dr - sum_i u_i du_i) / s``. Kernel-parameter derivatives (which would need
        the derivative of the bottom eigenvector) are reported as 0 and ``hard_case=True``.

    Returns
    -------
    HyperGradient
    """
    eig = K if isinstance(K, KernelEigen) else kernel_eigen(K, tol=rcond)
    n = eig.n
    rho, lambda_plus, lambda_minus, lam = _regularizer_spectrum(
        eig, formulation, lambda_plus, lambda_minus, lam
    )
    K_val, y_val, dK, dK_val = _check_validation_inputs(K_val, y_val, n, dK, dK_val)

    sol = _differentiable_solution(eig, y, rho, r, hard_case)
    if sol.hard_case:
        return _hard_case_hypergradient(
            eig, sol, formulation, lambda_plus, lambda_minus, lam, r, intercept, K_val, y_val, dK
        )
    J = eig.active
    sigma = eig.eigenvalues[J]
    VJ = eig.eigenvectors[:, J]
    mu = sol.mu
    u_hat = sol.u_hat
    a_hat = u_hat / sigma  # alpha in eigen coordinates
    # D - mu = gap + (D - min D) without cancellation.
    shifted = (sol.secular_diag - np.min(sol.secular_diag)) + sol.gap
    a_diag = sigma * shifted  # eigenvalues of A = G - mu K on the range
    q_hat = u_hat / shifted
    qu = float(q_hat @ u_hat)
    alpha = sol.alpha
    m = y_val.shape[0]
    e, loss, tau_hat = _validation_loss(alpha, intercept, K_val, y_val, VJ)
    t_hat = tau_hat / a_diag
    tu = float(t_hat @ u_hat)

    grad: dict[str, float] = {}
    dmu: dict[str, float] = {}

    def _accumulate(name: str, dG_alpha_q: float, dG_alpha_t: float, dK_terms=None) -> None:
        # dK_terms = (q'dK alpha, u'dK alpha, t'dK alpha, e'dK_v alpha) or None; dr separately.
        num = dG_alpha_q
        extra = 0.0
        if dK_terms is not None:
            q_dk, u_dk, t_dk, e_dkv = dK_terms
            num -= mu * q_dk + u_dk
            extra = (2.0 / m) * e_dkv + mu * t_dk
        d_mu = num / qu
        dmu[name] = d_mu
        grad[name] = extra - dG_alpha_t + d_mu * tu

    terms, g = _regularization_terms(
        formulation, n, sigma, (q_hat, t_hat, a_hat), lambda_plus, lambda_minus, lam
    )
    for name, dG_q, dG_t in terms:
        _accumulate(name, dG_q, dG_t)
    # r enters only through the constraint: d mu = n r dr / q'u.
    dmu["r"] = n * r / qu
    grad["r"] = dmu["r"] * tu

    if dK:
        vectors = (q_hat, u_hat, t_hat, a_hat, e, alpha)
        for name, dG_q, dG_t, terms in _kernel_parameter_terms(
            dK, dK_val, K_val, n, g, sigma, VJ, vectors, projector_derivative
        ):
            _accumulate(name, dG_q, dG_t, terms)
    return HyperGradient(loss=loss, grad=grad, mu=mu, dmu=dmu)


def _differentiable_solution(
    eig: KernelEigen, y: ArrayLike, rho: NDArray[np.float64], r: float, hard_case: str
) -> Any:
    """Solve eq. (5); a hard-case solution is refused unless ``hard_case="branch"``."""
    # hard_tol=0: only an exactly vanishing y_hat_0 is the (non-differentiable) hard case; a
    # tiny one is a near-hard case, solved by the root finder and differentiable.
    if hard_case not in ("raise", "branch"):
        raise ValueError(f"hard_case must be 'raise' or 'branch'; got {hard_case!r}.")
    sol = variance_constrained_least_squares(eig, y, rho, r, hard_tol=0.0)
    if sol.hard_case and hard_case == "raise":
        raise ValueError(
            "the solution is in the hard case (multiplier at its bracket end, y vanishes "
            "on the eigenspace of min D); the implicit derivative of the validation loss "
            "does not exist there. Pass hard_case='branch' for the derivative of the "
            "returned branch of minimisers."
        )
    return sol


def _regularizer_spectrum(
    eig: KernelEigen,
    formulation: str,
    lambda_plus: float | None,
    lambda_minus: float | None,
    lam: float | None,
) -> tuple[NDArray[np.float64], float | None, float | None, float | None]:
    """Check the regularisation of ``formulation`` and return ``rho`` on the spectrum with it."""
    if formulation == "krein":
        if lambda_plus is None or lambda_minus is None:
            raise ValueError("formulation='krein' needs lambda_plus and lambda_minus.")
        lambda_plus = check_positive(lambda_plus, "lambda_plus")
        lambda_minus = check_positive(lambda_minus, "lambda_minus")
        rho = krein_regularizer_eigenvalues(eig.eigenvalues, lambda_plus, lambda_minus)
    elif formulation == "omcs":
        if lam is None:
            raise ValueError("formulation='omcs' needs lam.")
        lam = check_positive(lam, "lam")
        rho = lam * eig.eigenvalues
    else:
        raise ValueError(f"formulation must be 'krein' or 'omcs'; got {formulation!r}.")
    return rho, lambda_plus, lambda_minus, lam


def _check_validation_inputs(
    K_val: ArrayLike,
    y_val: ArrayLike,
    n: int,
    dK: dict[str, ArrayLike] | None,
    dK_val: dict[str, ArrayLike] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], dict, dict]:
    """Check the validation rows and targets and the names of the kernel derivatives."""
    K_val = check_finite_matrix(K_val, name="K_val")
    y_val = check_finite_matrix(np.ravel(y_val), name="y_val", ndim=1)
    if K_val.shape != (y_val.shape[0], n):
        raise ValueError(
            f"K_val must have shape (len(y_val), n) = {(y_val.shape[0], n)}; got {K_val.shape}."
        )
    dK = {} if dK is None else dK
    dK_val = {} if dK_val is None else dK_val
    if set(dK) != set(dK_val):
        raise ValueError(f"dK and dK_val must have the same keys; got {set(dK)} and {set(dK_val)}.")
    reserved = {"lambda_plus", "lambda_minus", "lam", "r"} & set(dK)
    if reserved:
        raise ValueError(f"kernel parameter names {reserved} clash with hyperparameter names.")
    return K_val, y_val, dK, dK_val


def _regularization_terms(
    formulation: str,
    n: int,
    sigma: NDArray[np.float64],
    vectors: tuple[NDArray[np.float64], ...],
    lambda_plus: float | None,
    lambda_minus: float | None,
    lam: float | None,
) -> tuple[list[tuple[str, float, float]], NDArray[np.float64]]:
    """``(name, q'dG alpha, t'dG alpha)`` of each regularisation parameter, and ``g(sigma)``.

    ``vectors`` is ``(q_hat, t_hat, a_hat)``; ``dG`` is ``n P_+``, ``-n P_-`` or ``n P``.
    """
    q_hat, t_hat, a_hat = vectors
    if formulation == "krein":
        pos = sigma > 0
        neg = ~pos
        terms = [
            ("lambda_plus", n * float(q_hat[pos] @ a_hat[pos]), n * float(t_hat[pos] @ a_hat[pos])),
            (
                "lambda_minus",
                -n * float(q_hat[neg] @ a_hat[neg]),
                -n * float(t_hat[neg] @ a_hat[neg]),
            ),
        ]
        g = np.where(pos, n * lambda_plus, -n * lambda_minus)
    else:
        terms = [("lam", n * float(q_hat @ a_hat), n * float(t_hat @ a_hat))]
        g = np.full(sigma.shape[0], n * lam)
    return terms, g


def _kernel_parameter_terms(
    dK: dict[str, ArrayLike],
    dK_val: dict[str, ArrayLike],
    K_val: NDArray[np.float64],
    n: int,
    g: NDArray[np.float64],
    sigma: NDArray[np.float64],
    VJ: NDArray[np.float64],
    vectors: tuple[NDArray[np.float64], ...],
    projector_derivative: bool,
):
    """Yield ``(name, q'dG alpha, t'dG alpha, dK terms)`` for each kernel parameter in turn.

    ``vectors`` is ``(q_hat, u_hat, t_hat, a_hat, e, alpha)``. A generator, so that each
    parameter is checked just before its terms are accumulated, as in one loop.
    """
    q_hat, u_hat, t_hat, a_hat, e, alpha = vectors
    diff_g = g[:, None] - g[None, :]
    diff_s = sigma[:, None] - sigma[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        Gamma = np.where(diff_g != 0.0, diff_g / diff_s, 0.0)
    for name, dKp in dK.items():
        dKp = check_finite_matrix(dKp, name=f"dK[{name!r}]")
        dKv = check_finite_matrix(dK_val[name], name=f"dK_val[{name!r}]")
        if dKp.shape != (n, n) or dKv.shape != K_val.shape:
            raise ValueError(
                f"dK[{name!r}] must be {(n, n)} and dK_val[{name!r}] {K_val.shape}; got "
                f"{dKp.shape} and {dKv.shape}."
            )
        W = VJ.T @ dKp @ VJ
        dG = Gamma * W if projector_derivative else np.zeros_like(W)
        terms = (
            float(q_hat @ W @ a_hat),
            float(u_hat @ W @ a_hat),
            float(t_hat @ W @ a_hat),
            float(e @ (dKv @ alpha)),
        )
        yield name, float(q_hat @ dG @ a_hat), float(t_hat @ dG @ a_hat), terms


def _validation_loss(
    alpha: NDArray[np.float64],
    intercept: float,
    K_val: NDArray[np.float64],
    y_val: NDArray[np.float64],
    VJ: NDArray[np.float64],
) -> tuple[NDArray[np.float64], float, NDArray[np.float64]]:
    """Validation residual ``e``, the mean squared loss and ``tau_hat = V_J' dloss/dalpha``.

    ``dloss/dalpha = (2/m) K_val' e``, taken to the eigen coordinates of the active eigenvectors
    ``V_J``; the regular and the hard-case hypergradients start from the same three quantities.
    """
    m = y_val.shape[0]
    e = K_val @ alpha + intercept - y_val
    loss = float(e @ e / m)
    tau_hat = VJ.T @ ((2.0 / m) * (K_val.T @ e))
    return e, loss, tau_hat


def _hard_case_hypergradient(
    eig: KernelEigen,
    sol: Any,
    method: str,
    lambda_plus: float | None,
    lambda_minus: float | None,
    lam: float | None,
    r: float,
    intercept: float,
    K_val: NDArray,
    y_val: NDArray,
    dK: dict[str, Any],
) -> HyperGradient:
    """Loss and branch derivative in the hard case (see ``hard_case`` of the caller).

    With ``delta = min D`` (attained on the set ``B``), the returned minimiser is
    ``u_i = y_i / (D_i - delta)`` off ``B`` and ``u_B = s e`` with a fixed unit vector ``e``
    and ``s = sqrt(n r^2 - sum_{i not in B} u_i^2)``; ``mu = delta``. ``D_i = n rho_i /
    sigma_i^2`` is linear in each regularisation parameter: ``dD_i / d theta = D_i / theta``
    on the eigenvalues that ``theta`` governs (KREIN: ``lambda_+`` the positive,
    ``lambda_-`` the negative ones; OMCS: ``lam`` all), 0 elsewhere.
    """
    n = eig.n
    J = eig.active
    sigma = eig.eigenvalues[J]
    VJ = eig.eigenvectors[:, J]
    D = sol.secular_diag
    u_hat = sol.u_hat
    _, loss, tau_hat = _validation_loss(sol.alpha, intercept, K_val, y_val, VJ)
    # d loss = tau_hat' (du_hat / sigma): alpha = V_J (u_hat / sigma).
    t_hat = tau_hat / sigma
    delta = float(np.min(D))
    bottom = (D - delta) <= 4.0 * np.finfo(np.float64).eps * max(1.0, abs(delta))
    rest = ~bottom
    shifted = D[rest] - delta
    s_val = float(np.linalg.norm(u_hat[bottom]))

    def branch(dD: NDArray, dr: float) -> tuple[float, float]:
        d_delta = float(dD[bottom][0])
        du = np.zeros_like(u_hat)
        du[rest] = -u_hat[rest] * (dD[rest] - d_delta) / shifted
        if s_val > 0.0:
            ds = (n * r * dr - float(u_hat[rest] @ du[rest])) / s_val
            du[bottom] = u_hat[bottom] * (ds / s_val)
        return float(t_hat @ du), d_delta

    if method == "krein":
        pos = sigma > 0
        thetas = {"lambda_plus": (lambda_plus, pos), "lambda_minus": (lambda_minus, ~pos)}
    else:
        thetas = {"lam": (lam, np.ones(sigma.shape[0], dtype=bool))}
    grad: dict[str, float] = {}
    dmu: dict[str, float] = {}
    for name, (value, mask) in thetas.items():
        grad[name], dmu[name] = branch(np.where(mask, D / value, 0.0), 0.0)
    grad["r"], dmu["r"] = branch(np.zeros_like(D), 1.0)
    for name in dK:
        grad[name] = 0.0
        dmu[name] = 0.0
    return HyperGradient(loss=loss, grad=grad, mu=sol.mu, dmu=dmu, hard_case=True)


@dataclass
class TuningResult:
    """Outcome of :func:`tune_variance_constrained`.

    Attributes
    ----------
    params : dict
        Tuned hyperparameters (``lambda_plus``/``lambda_minus`` or ``lam``, ``r``) and tuned
        kernel parameters.
    loss : float
        Mean inner-validation MSE at ``params``.
    n_evaluations : int
        Objective/gradient evaluations.
    success : bool
        L-BFGS-B's convergence flag.
    message : str
    history : list of float
        Loss at each evaluation.
    n_hard_case : int
        Fold evaluations that met the hard case of the secular equation (their loss is that
        of the solver's minimiser, their gradient the derivative of that branch; see
        ``hard_case`` of :func:`validation_hypergradient`). A warning is logged.
    """

    params: dict[str, float]
    loss: float
    n_evaluations: int
    success: bool
    message: str
    history: list[float] = field(default_factory=list)
    n_hard_case: int = 0


def _kernel_derivative_fd(
    kernel: Callable, X: NDArray, Y: NDArray | None, params: dict[str, Any], name: str
) -> NDArray:
    """Central finite difference of the kernel matrix in one (positive) parameter."""
    value = float(params[name])
    h = 1e-6 * max(1.0, abs(value))
    plus = dict(params, **{name: value + h})
    minus = dict(params, **{name: value - h})
    return (np.asarray(kernel(X, Y, **plus)) - np.asarray(kernel(X, Y, **minus))) / (2.0 * h)


def tune_variance_constrained(
    X: ArrayLike,
    y: ArrayLike,
    *,
    kernel: str | Callable = "precomputed",
    kernel_params: dict[str, Any] | None = None,
    tune_kernel_params: Sequence[str] = (),
    kernel_grad: Callable | None = None,
    formulation: str = "krein",
    lambda_plus: float = 1e-2,
    lambda_minus: float = 1e-2,
    lam: float = 1e-2,
    r: float | None = None,
    n_folds: int = 3,
    center: bool = True,
    log_bounds: tuple[float, float] = (-12.0, 6.0),
    max_iter: int = 50,
    random_state: int | np.random.Generator | None = None,
    verbose: int = 0,
) -> TuningResult:
    """Tune KREIN / OMCS-KREIN hyperparameters by L-BFGS-B on inner validation folds.

    Paper 000, Sect. 3.3: minimise the mean validation MSE over ``n_folds`` inner folds with
    ``scipy.optimize.minimize(method="L-BFGS-B")`` in the logarithms of the hyperparameters,
    using :func:`validation_hypergradient`. Without kernel parameters each fold's
    eigendecomposition is computed once.

    Parameters
    ----------
    X : array_like
        Precomputed kernel (n, n) or data for a callable kernel.
    y : array_like of shape (n,)
        Targets (±1 for classification).
    kernel : "precomputed" or callable
        ``kernel(X, Y=None, **params)``.
    kernel_params : dict, optional
        Kernel parameters (initial values of the tuned ones).
    tune_kernel_params : sequence of str
        Names of positive kernel parameters to tune (callable kernels only).
    kernel_grad : callable, optional
        ``kernel_grad(X, Y, **params) -> {name: dK}``; default central finite differences of the
        kernel function.
    formulation : {"krein", "omcs", "flip", "clip", "shift", "square"}
        Problem, as ``KreinRegressor(formulation=...)``: eq. (4) (KREIN), eq. (2) (OMCS), or
        eq. (2) on a spectrum-transformed kernel: the transformation is applied to each inner
        training kernel (after centring), with its test-row map
        (:func:`indefsvm.linalg.spectrum.spectrum_transform`); not combinable with
        ``tune_kernel_params``.
    lambda_plus, lambda_minus, lam : float
        Initial regularisation values (finite and > 0: the tuner works in their logarithms,
        and ``lambda = 0`` removes the regularisation the problem needs).
    r : float, optional
        Initial radius (> 0); default the standard deviation of ``y``.
    n_folds : int
        Inner folds (>= 2).
    center : bool
        Centre kernels and targets per fold as :class:`KreinRegressor` does.
    log_bounds : (float, float)
        Bounds of every log-hyperparameter.
    max_iter : int
        L-BFGS-B iteration cap.
    random_state : int or Generator, optional
        Seed of the fold shuffling.
    verbose : int
        Print one line per evaluation when > 0.

    Returns
    -------
    TuningResult

    Notes
    -----
    A fold whose solution is in the hard case of the secular equation (e.g. targets constant
    on the inner training fold, so that they vanish after centring) does not stop the tuning:
    its loss is that of the global minimiser the solver returns and its gradient the
    derivative of that branch (``hard_case="branch"`` of :func:`validation_hypergradient`;
    kernel-parameter derivatives of such a fold are 0). A warning is logged and the count is
    reported in ``TuningResult.n_hard_case``.
    """
    formulation, spectrum = _tuning_formulation(formulation, tune_kernel_params)
    # Validate the initial values here, not after np.log: log(0) = -inf was silently clipped
    # to the lower bound, and log(-1) = nan was reported as "got nan".
    if formulation == "krein":
        lambda_plus = check_positive(lambda_plus, "lambda_plus")
        lambda_minus = check_positive(lambda_minus, "lambda_minus")
    else:
        lam = check_positive(lam, "lam")
    log_bounds = _check_log_bounds(log_bounds)
    if isinstance(max_iter, bool) or not isinstance(max_iter, int | np.integer) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}.")
    X, y, params0, tune_kernel_params, precomputed = _check_tuning_data(
        X, y, kernel, kernel_params, tune_kernel_params
    )
    folds = _inner_folds(y.shape[0], n_folds, random_state)
    r0 = float(np.std(y)) if r is None else check_positive(r, "r")
    if r0 <= 0:
        raise ValueError("y is constant; pass r > 0.")
    hyper_names = ["lambda_plus", "lambda_minus"] if formulation == "krein" else ["lam"]
    names = [*hyper_names, "r", *tune_kernel_params]
    init = {"lambda_plus": lambda_plus, "lambda_minus": lambda_minus, "lam": lam, "r": r0}
    init.update({k: float(params0[k]) for k in tune_kernel_params})
    z0 = _log_start(names, init, log_bounds)

    def _fold_data(params: dict[str, Any], need_grad: bool):
        setting = {
            "kernel": kernel,
            "precomputed": precomputed,
            "tune_kernel_params": tune_kernel_params,
            "kernel_grad": kernel_grad,
            "center": center,
            "spectrum": spectrum,
        }
        grad = need_grad and bool(tune_kernel_params)
        return [_tuning_fold(X, y, tr, va, params, grad, **setting) for tr, va in folds]

    cached = None if tune_kernel_params else _fold_data(params0, need_grad=False)
    history: list[float] = []
    hard_cases = [0]

    def objective(z: NDArray) -> tuple[float, NDArray]:
        theta = dict(zip(names, np.exp(z), strict=True))
        params = dict(params0)
        params.update({k: theta[k] for k in tune_kernel_params})
        data = cached if cached is not None else _fold_data(params, need_grad=True)
        total, g = _mean_hypergradient(data, theta, names, formulation, hard_cases)
        history.append(total)
        if verbose:
            shown = ", ".join(f"{k}={theta[k]:.3g}" for k in names)
            logger.info("[tune %3d] val MSE %.5g  (%s)", len(history), total, shown)
        return total, g * np.exp(z)  # chain rule for log-parameters

    res = _minimize_logs(objective, z0, len(names), log_bounds, max_iter)
    return _tuning_result(res, names, history, n_hard_case=hard_cases[0])


def _tuning_formulation(formulation: str, tune_kernel_params: Sequence[str]) -> tuple[str, Any]:
    """Check ``formulation``; return the problem solved (eq. 2 or 4) and the spectrum method."""
    allowed = ("krein", "omcs", *TRANSFORM_METHODS)
    if formulation not in allowed:
        raise ValueError(f"formulation must be one of {allowed}; got {formulation!r}.")
    # A spectrum formulation is eq. (2) (OMCS) on the transformed inner kernels.
    spectrum = formulation if formulation in TRANSFORM_METHODS else None
    if spectrum is not None:
        formulation = "omcs"
        if tune_kernel_params:
            raise ValueError("tune_kernel_params cannot be combined with a spectrum transform.")
    return formulation, spectrum


def _check_tuning_data(
    X: ArrayLike,
    y: ArrayLike,
    kernel: str | Callable,
    kernel_params: dict[str, Any] | None,
    tune_kernel_params: Sequence[str],
) -> tuple[NDArray, NDArray, dict[str, Any], list[str], bool]:
    """Check the data, the kernel and the tuned kernel parameters' initial values."""
    y = check_finite_matrix(np.ravel(y), name="y", ndim=1)
    params0 = {} if kernel_params is None else dict(kernel_params)
    tune_kernel_params = list(tune_kernel_params)
    precomputed = isinstance(kernel, str)
    if precomputed and kernel != "precomputed":
        raise ValueError(f"kernel must be 'precomputed' or callable; got {kernel!r}.")
    if precomputed and tune_kernel_params:
        raise ValueError("tune_kernel_params needs a callable kernel.")
    for name in tune_kernel_params:
        if name not in params0:
            raise ValueError(f"kernel parameter {name!r} has no initial value in kernel_params.")
        check_positive(params0[name], f"kernel_params[{name!r}]")
    X = (
        check_square_symmetric(X, name="K (precomputed kernel)")
        if precomputed
        else check_finite_matrix(X, name="X")
    )
    n = y.shape[0]
    if X.shape[0] != n:
        raise ValueError(f"X has {X.shape[0]} rows but y has {n} entries.")
    return X, y, params0, tune_kernel_params, precomputed


def _inner_folds(
    n: int, n_folds: int, random_state: int | np.random.Generator | None
) -> list[tuple[NDArray, NDArray]]:
    """Check ``n_folds`` and return the shuffled inner (train, validation) index pairs."""
    if not isinstance(n_folds, int | np.integer) or n_folds < 2:
        raise ValueError(f"n_folds must be an integer >= 2; got {n_folds!r}.")
    seed = (
        random_state
        if not isinstance(random_state, np.random.Generator)
        else int(random_state.integers(2**31 - 1))
    )
    return list(KFold(n_splits=n_folds, shuffle=True, random_state=seed).split(np.arange(n)))


def _log_start(names: list[str], init: dict[str, float], log_bounds: tuple[float, float]):
    """The starting point in the logarithms, clipped (with a warning) into ``log_bounds``."""
    z0 = np.log([float(init[k]) for k in names])
    outside = [k for k, z in zip(names, z0, strict=True) if not log_bounds[0] <= z <= log_bounds[1]]
    if outside:
        # L-BFGS-B would clip silently; say so.
        logger.warning(
            "tune_variance_constrained: initial value(s) of %s lie outside [%.3g, %.3g] "
            "(exp of log_bounds); starting from the nearest bound.",
            outside,
            *np.exp(log_bounds),
        )
        z0 = np.clip(z0, *log_bounds)
    return z0


def _tuning_fold(
    X: NDArray,
    y: NDArray,
    tr: NDArray,
    va: NDArray,
    params: dict[str, Any],
    need_grad: bool,
    *,
    kernel: str | Callable,
    precomputed: bool,
    tune_kernel_params: list[str],
    kernel_grad: Callable | None,
    center: bool,
    spectrum: str | None,
) -> tuple:
    """One inner fold's eigendecomposition, targets, validation rows and kernel derivatives."""
    if precomputed:
        Ktr = X[np.ix_(tr, tr)]
        Kva = X[np.ix_(va, tr)]
    else:
        Ktr = np.asarray(kernel(X[tr], None, **params))
        Kva = np.asarray(kernel(X[va], X[tr], **params))
    dtr: dict[str, NDArray] = {}
    dva: dict[str, NDArray] = {}
    if need_grad:
        if kernel_grad is not None:
            gtr = kernel_grad(X[tr], None, **params)
            gva = kernel_grad(X[va], X[tr], **params)
            dtr = {k: np.asarray(gtr[k]) for k in tune_kernel_params}
            dva = {k: np.asarray(gva[k]) for k in tune_kernel_params}
        else:
            for k in tune_kernel_params:
                dtr[k] = _kernel_derivative_fd(kernel, X[tr], None, params, k)
                dva[k] = _kernel_derivative_fd(kernel, X[va], X[tr], params, k)
    ytr = y[tr]
    b = float(np.mean(ytr)) if center else 0.0
    if center:
        Ktr, col, grand = center_kernel_train(Ktr)
        Kva = center_kernel_test(Kva, col, grand)
        for k in list(dtr):
            dtr[k], dcol, dgrand = center_kernel_train(dtr[k])
            dva[k] = center_kernel_test(dva[k], dcol, dgrand)
    if spectrum is not None:
        tr_map = spectrum_transform(Ktr, spectrum)
        Ktr, Kva = tr_map.kernel, tr_map.transform(Kva)
    return kernel_eigen(Ktr), ytr - b, Kva, y[va], b, dtr, dva


def _log_hard_case_fold(
    count: int, fold: int, theta: dict[str, float], names: list[str], kernel_terms: bool
) -> None:
    """Log a fold in the hard case: a warning the first time in a run, then at DEBUG."""
    logger.log(
        logging.WARNING if count == 1 else logging.DEBUG,
        "tune_variance_constrained: fold %d at %s is in the hard case of the "
        "secular equation (targets vanish on the bottom eigenspace, e.g. constant "
        "targets on the inner training fold); using the loss of the returned "
        "minimiser and the derivative of its branch%s (count in n_hard_case).",
        fold,
        ", ".join(f"{k}={theta[k]:.3g}" for k in names),
        " (kernel-parameter gradient of this fold set to 0)" if kernel_terms else "",
    )


def _mean_hypergradient(
    data: list[tuple],
    theta: dict[str, float],
    names: list[str],
    formulation: str,
    hard_cases: list[int],
) -> tuple[float, NDArray[np.float64]]:
    """Mean validation loss over the inner folds and its gradient in ``theta`` (``names``).

    ``hard_cases[0]`` counts the folds met in the hard case over the whole tuning run.
    """
    total = 0.0
    g = np.zeros(len(names))
    for fold, (eig, ytr, Kva, yva, b, dtr, dva) in enumerate(data):
        hg = validation_hypergradient(
            eig,
            ytr,
            Kva,
            yva,
            formulation=formulation,
            lambda_plus=theta.get("lambda_plus"),
            lambda_minus=theta.get("lambda_minus"),
            lam=theta.get("lam"),
            r=theta["r"],
            intercept=b,
            dK=dtr,
            dK_val=dva,
            hard_case="branch",
        )
        if hg.hard_case:
            hard_cases[0] += 1
            _log_hard_case_fold(hard_cases[0], fold, theta, names, bool(dtr))
        total += hg.loss
        g += np.array([hg.grad[k] for k in names])
    total /= len(data)
    g /= len(data)
    return total, g


def _minimize_logs(
    objective: Callable, z0: NDArray, n_params: int, log_bounds: tuple[float, float], max_iter: int
) -> Any:
    """L-BFGS-B on the log-hyperparameters, each within ``log_bounds``."""
    return minimize(
        objective,
        z0,
        jac=True,
        method="L-BFGS-B",
        bounds=[log_bounds] * n_params,
        options={"maxiter": max_iter},
    )


def _tuning_result(
    res: Any, names: Sequence[str], history: list[float], n_hard_case: int = 0
) -> TuningResult:
    """The :class:`TuningResult` of an L-BFGS-B run in the logarithms of ``names``."""
    return TuningResult(
        params=dict(zip(names, np.exp(res.x).tolist(), strict=True)),
        loss=float(res.fun),
        n_evaluations=int(res.nfev),
        success=bool(res.success),
        message=str(res.message),
        history=history,
        n_hard_case=n_hard_case,
    )


def _check_log_bounds(log_bounds: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in log_bounds)
    except (TypeError, ValueError):
        raise ValueError(
            f"log_bounds must be a pair (low, high) of numbers; got {log_bounds!r}."
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"log_bounds must be finite with low < high; got {log_bounds!r}.")
    return lo, hi
