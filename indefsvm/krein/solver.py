"""Global solutions of the variance-constrained least-squares problems in Krein spaces.

Oglic & Gaertner (2018), "Learning in reproducing kernel Krein spaces" (paper 000), reduce both
the KREIN problem (their eq. 3/4) and the OMCS-KREIN problem (eq. 1/2) to the minimisation of a
quadratic form over a sphere and solve it globally with the secular-equation method of
Gander, Golub & von Matt (1989). This module implements

* :func:`minimize_quadratic_on_sphere` -- ``min x'Dx - 2 b'x  s.t. ||x|| = rho`` for a diagonal
  ``D`` (the smallest root of the secular equation, hard case included);
* :func:`kernel_eigen` -- the one O(n^3) step, reusable across hyperparameters;
* :func:`krein_least_squares` (eq. 4), :func:`omcs_krein_least_squares` (eq. 2) and
  :func:`variance_constrained_least_squares` (any regulariser diagonal in the kernel's
  eigenbasis, e.g. eq. 2 with a spectrum-transformed kernel);
* :func:`krein_kernel_ridge` -- Krein kernel ridge regression / KREIN LSM of Oglic & Gaertner
  (2019, Sect. 2.4), closed form.

Reduction (paper 000, Sect. 3.1, re-derived)
--------------------------------------------
With ``K = V diag(sigma) V'``, ``u = K alpha``, ``u_hat = V'u`` and ``y_hat = V'y``, a
regulariser ``n alpha' R alpha`` with ``R = V diag(rho) V'`` becomes
``n sum_i rho_i u_hat_i^2 / sigma_i^2``. On the constraint ``||u||^2 = n r^2`` the loss
``||u - y||^2`` equals ``n r^2 - 2 y'u + ||y||^2``, so (4) is

    min_{u_hat}  u_hat' D u_hat - 2 y_hat' u_hat   s.t.  ||u_hat||^2 = n r^2,
    D_i = n rho_i / sigma_i^2,

restricted to the range of ``K`` (``u_hat_i = 0`` where ``sigma_i = 0``). KREIN has
``rho_i = lambda_+ |sigma_i|`` for ``sigma_i > 0`` and ``lambda_- |sigma_i|`` for
``sigma_i < 0`` (``D_i = n lambda_{sign} / |sigma_i| > 0``); OMCS-KREIN has
``rho_i = lambda sigma_i`` (``D_i = n lambda / sigma_i``, indefinite). The stationarity
conditions (eq. 5) read ``(D - mu I) u_hat = y_hat`` and ``||u_hat||^2 = n r^2``, so
``u_hat_i(mu) = y_hat_i / (D_i - mu)`` and the secular equation is

    g(mu) = sum_i y_hat_i^2 / (D_i - mu)^2 - n r^2 = 0.

The global minimiser has the smallest multiplier ``mu* <= min_i D_i`` (Forsythe & Golub 1965;
paper 000, Prop. 3). Paper 000's printed eq. (7) drops the square and the sum and writes
``sigma_i`` where ``|sigma_i|`` belongs; the form above is the one that satisfies eq. (5). The
paper writes ``lambda^2`` in eq. (4)-(7) but ``lambda`` in eq. (3); here ``lambda_+`` and
``lambda_-`` enter linearly, as in eq. (3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.utils.validation import check_finite_matrix, check_positive, check_square_symmetric

__all__ = [
    "KernelEigen",
    "SphereSolution",
    "VarianceConstrainedSolution",
    "kernel_eigen",
    "krein_kernel_ridge",
    "krein_least_squares",
    "krein_objective",
    "krein_regularizer_eigenvalues",
    "minimize_quadratic_on_sphere",
    "omcs_krein_least_squares",
    "variance_constrained_least_squares",
]

_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class SphereSolution:
    """Global minimiser of ``x'Dx - 2 b'x`` over the sphere ``||x|| = radius``.

    Attributes
    ----------
    x : ndarray of shape (p,)
        Minimiser.
    mu : float
        Lagrange multiplier (``(D - mu I) x = b``), the smallest root of the secular equation.
    gap : float
        ``min(D) - mu >= 0``, computed directly (no cancellation), so ``x_i = b_i / (d_i -
        min(D) + gap)`` to full relative accuracy.
    hard_case : bool
        True when ``b`` vanishes on the eigenspace of ``min(D)`` and the multiplier sits at the
        end of its bracket (``mu = min(D)``); the minimiser is then not unique (see Notes of
        :func:`minimize_quadratic_on_sphere`).
    n_iter : int
        Newton/bisection iterations of the root finder (0 in the hard case).
    objective : float
        ``x'Dx - 2 b'x``.
    """

    x: NDArray[np.float64]
    mu: float
    gap: float
    hard_case: bool
    n_iter: int
    objective: float


def _secular_norm2(b2: NDArray, e: NDArray, t: float) -> tuple[float, float]:
    """``||x(t)||^2`` and ``sum b_i^2/(e_i+t)^3`` for ``x_i(t) = b_i / (e_i + t)``."""
    inv = 1.0 / (e + t)
    w = b2 * inv * inv
    return float(np.sum(w)), float(np.sum(w * inv))


def minimize_quadratic_on_sphere(
    d: ArrayLike,
    b: ArrayLike,
    radius: float,
    *,
    hard_tol: float = 1e-14,
    max_iter: int = 200,
) -> SphereSolution:
    """Globally minimise ``x'Dx - 2 b'x`` subject to ``||x|| = radius`` for diagonal ``D``.

    Gander, Golub & von Matt (1989), secular-equation method (used by Oglic & Gaertner 2018,
    Sect. 3.1 and Appendix B): the minimiser is ``x_i = b_i / (d_i - mu*)`` with ``mu*`` the
    smallest root of ``sum_i b_i^2 / (d_i - mu)^2 = radius^2``, which lies in
    ``[delta - ||b||/radius, delta - ||b_0||/radius]`` with ``delta = min_i d_i`` and ``b_0`` the
    part of ``b`` on the eigenspace of ``delta``.

    Parameters
    ----------
    d : array_like of shape (p,)
        Diagonal of ``D`` (any signs, repeated values allowed).
    b : array_like of shape (p,)
        Linear term.
    radius : float
        Sphere radius (> 0).
    hard_tol : float
        ``b`` counts as vanishing on the eigenspace of ``delta`` when
        ``||b_0|| <= hard_tol * ||b||``. Entries of ``d`` within ``4 eps max(1, |delta|)`` of
        ``delta`` belong to that eigenspace.
    max_iter : int
        Iteration cap of the safeguarded Newton method (it needs far fewer: the function
        ``1/radius - 1/||x(t)||`` is concave and nearly linear, Reinsch 1971/Moré & Sorensen 1983).

    Returns
    -------
    SphereSolution

    Notes
    -----
    The root is found in the variable ``t = delta - mu`` (so ``d_i - mu = (d_i - delta) + t`` is
    formed without cancellation) by Newton's method on ``psi(t) = 1/radius - 1/||x(t)||`` started
    at the right end of the bracket, with bisection whenever a step leaves the current bracket;
    it stops when the bracket is below a few ulps of ``t`` or the step is.

    Degenerate cases:

    * ``b = 0``: every unit eigenvector of ``delta`` scaled to the radius is optimal; the
      first one is returned (``hard_case=True``).
    * Hard case (``b_0 = 0`` and ``sum_{d_i > delta} b_i^2/(d_i - delta)^2 <= radius^2``):
      ``mu* = delta`` and ``x = (D - delta)^+ b + s e`` with ``e`` a unit vector of the
      ``delta``-eigenspace and ``s = sqrt(radius^2 - ||(D - delta)^+ b||^2)``. Both signs of
      ``s`` (and any ``e`` when the eigenspace has dimension > 1) are optimal; ``e`` follows the
      direction of the (sub-tolerance) ``b_0`` when it is non-zero, else the first index.
    * ``b_0 = 0`` but the rest of ``b`` already reaches the sphere before ``delta``: the root is
      inside the bracket and found as usual with ``x_0 = 0``.
    """
    d = check_finite_matrix(d, name="d", ndim=1)
    b = check_finite_matrix(b, name="b", ndim=1)
    if d.shape != b.shape:
        raise ValueError(f"d and b must have the same shape; got {d.shape} and {b.shape}.")
    if d.shape[0] == 0:
        raise ValueError("d and b must not be empty.")
    radius = check_positive(radius, "radius")
    if not (np.isfinite(hard_tol) and hard_tol >= 0):
        raise ValueError(f"hard_tol must be finite and >= 0; got {hard_tol!r}.")
    delta = float(np.min(d))
    e = d - delta  # >= 0, exact for the minimiser itself
    in_bottom = e <= 4.0 * _EPS * max(1.0, abs(delta))
    e = np.where(in_bottom, 0.0, e)
    b_norm = float(np.linalg.norm(b))
    b0_norm = float(np.linalg.norm(b[in_bottom]))

    def _objective(x: NDArray) -> float:
        return float(x @ (d * x) - 2.0 * (b @ x))

    if b_norm == 0.0 or b0_norm <= hard_tol * b_norm:
        # Hard case candidate: is the sphere reached before mu = delta without the bottom space?
        rest = ~in_bottom
        x = np.zeros_like(b)
        x[rest] = b[rest] / e[rest]
        rest_norm = float(np.linalg.norm(x))
        if rest_norm <= radius:
            bottom = np.flatnonzero(in_bottom)
            if b0_norm > 0.0:
                direction = b[bottom] / b0_norm
            else:
                direction = np.zeros(bottom.shape[0])
                direction[0] = 1.0
            x[bottom] = np.sqrt(max(radius**2 - rest_norm**2, 0.0)) * direction
            return SphereSolution(
                x=x, mu=delta, gap=0.0, hard_case=True, n_iter=0, objective=_objective(x)
            )
        b_active = np.where(in_bottom, 0.0, b)
        t_lo = 0.0
    else:
        b_active = b
        t_lo = b0_norm / radius
    t_hi = float(np.linalg.norm(b_active)) / radius
    t, n_iter = _secular_root(b_active * b_active, e, radius, t_lo, t_hi, max_iter)
    x = b_active / (e + t)
    return SphereSolution(
        x=x, mu=delta - t, gap=t, hard_case=False, n_iter=n_iter, objective=_objective(x)
    )


def _secular_root(
    b2: NDArray, e: NDArray, radius: float, t_lo: float, t_hi: float, max_iter: int
) -> tuple[float, int]:
    """Root ``t`` in ``[t_lo, t_hi]`` of ``1/radius - 1/||x(t)||`` and the iterations it took.

    ``||x(t)||^2 = sum_i b2_i / (e_i + t)^2``; safeguarded Newton on the secular function,
    starting from ``t_hi``.
    """
    t = t_hi
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - n_iter is reported
        norm2, s3 = _secular_norm2(b2, e, t)
        norm = np.sqrt(norm2)
        psi = 1.0 / radius - 1.0 / norm
        if psi == 0.0:
            break
        if psi > 0.0:
            t_lo = max(t_lo, t)
        else:
            t_hi = min(t_hi, t)
        if t_hi - t_lo <= 4.0 * _EPS * t_hi:
            break
        # psi'(t) = -||x||^-3 sum b_i^2/(e_i+t)^3
        dpsi = -s3 / (norm2 * norm)
        step = -psi / dpsi if dpsi != 0.0 else np.inf
        t_new = t + step
        if not (t_lo < t_new < t_hi):
            # Bisection, geometric when the bracket spans orders of magnitude (near-hard case).
            t_new = (
                np.sqrt(t_lo * t_hi) if t_lo > 0.0 and t_hi > 4.0 * t_lo else 0.5 * (t_lo + t_hi)
            )
        if abs(t_new - t) <= 2.0 * _EPS * t_new:
            t = t_new
            break
        t = t_new
    return t, n_iter


@dataclass(frozen=True)
class KernelEigen:
    """Eigendecomposition of a symmetric kernel matrix with a numerical-rank split.

    Attributes
    ----------
    eigenvalues : ndarray of shape (n,)
        Ascending eigenvalues ``sigma``.
    eigenvectors : ndarray of shape (n, n)
        Orthonormal eigenvectors ``V`` (columns).
    active : ndarray of bool, shape (n,)
        ``|sigma_i| > tol * max|sigma|``: the numerical range of ``K``. Eigenvalues inside the
        tolerance are treated as exact zeros (their components of ``K alpha`` vanish).
    tol : float
        The relative tolerance used.
    """

    eigenvalues: NDArray[np.float64]
    eigenvectors: NDArray[np.float64]
    active: NDArray[np.bool_]
    tol: float

    @property
    def n(self) -> int:
        return int(self.eigenvalues.shape[0])


def kernel_eigen(K: ArrayLike, *, tol: float | None = None) -> KernelEigen:
    """Eigendecompose a symmetric kernel matrix once (the only O(n^3) step).

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric, possibly indefinite kernel matrix.
    tol : float, optional
        Relative zero tolerance; default ``n * eps`` (as ``numpy.linalg.matrix_rank``).
        Eigenvalues with ``|sigma| <= tol * max|sigma|`` are treated as zero.

    Returns
    -------
    KernelEigen
    """
    K = check_square_symmetric(K, name="K")
    n = K.shape[0]
    tol = n * _EPS if tol is None else float(tol)
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0; got {tol!r}.")
    sigma, V = np.linalg.eigh(K)
    scale = float(np.max(np.abs(sigma))) if n else 0.0
    active = np.abs(sigma) > tol * scale
    return KernelEigen(eigenvalues=sigma, eigenvectors=V, active=active, tol=tol)


def _as_eigen(K: ArrayLike | KernelEigen, rcond: float | None) -> KernelEigen:
    if isinstance(K, KernelEigen):
        return K
    return kernel_eigen(K, tol=rcond)


def _check_targets(y: ArrayLike, n: int) -> NDArray[np.float64]:
    y = check_finite_matrix(np.ravel(np.asarray(y)) if np.ndim(y) == 2 else y, name="y", ndim=1)
    if y.shape[0] != n:
        raise ValueError(
            f"y has {y.shape[0]} entries but the kernel has {n} rows; expected one target per row."
        )
    return y


@dataclass(frozen=True)
class VarianceConstrainedSolution:
    """Solution of a variance-constrained least-squares problem (paper 000, eq. 2/4).

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        Expansion coefficients, ``f = sum_i alpha_i k(x_i, .)`` (minimum norm: no component in
        the numerical null space of ``K``).
    fitted : ndarray of shape (n,)
        ``u = K alpha``, the fitted values on the training points.
    mu : float
        Optimal Lagrange multiplier (smallest root of the secular equation).
    gap : float
        ``min(D) - mu``, see :class:`SphereSolution`.
    hard_case : bool
        Whether the hard case occurred (multiplier at its bracket end; solution not unique).
    objective : float
        ``||K alpha - y||^2 + n alpha' R alpha`` (the objective of eq. 2/4).
    secular_diag : ndarray of shape (n_active,)
        ``D_i = n rho_i / sigma_i^2`` on the active eigenvalues.
    u_hat : ndarray of shape (n_active,)
        ``V_J' K alpha`` on the active eigenvectors.
    eigen : KernelEigen
        The decomposition used.
    n_iter : int
        Root-finder iterations.
    """

    alpha: NDArray[np.float64]
    fitted: NDArray[np.float64]
    mu: float
    gap: float
    hard_case: bool
    objective: float
    secular_diag: NDArray[np.float64]
    u_hat: NDArray[np.float64]
    eigen: KernelEigen
    n_iter: int


def variance_constrained_least_squares(
    K: ArrayLike | KernelEigen,
    y: ArrayLike,
    reg_eigenvalues: ArrayLike,
    r: float,
    *,
    rcond: float | None = None,
    hard_tol: float = 1e-14,
) -> VarianceConstrainedSolution:
    """Globally solve ``min ||K a - y||^2 + n a'R a  s.t.  a'K^2 a = n r^2``.

    ``R = V diag(rho) V'`` shares the eigenvectors of ``K = V diag(sigma) V'``; this covers the
    KREIN problem (paper 000, eq. 4), OMCS-KREIN (eq. 2) and eq. 2 with a spectrum-transformed
    kernel (Table 1: FLIP, CLIP, SHIFT, SQUARE). See the module docstring for the reduction to
    :func:`minimize_quadratic_on_sphere`.

    Parameters
    ----------
    K : array_like of shape (n, n) or KernelEigen
        Kernel matrix (centred, if the constraint is to be the variance of ``f``; paper 000
        assumes a centred kernel) or its precomputed decomposition.
    y : array_like of shape (n,)
        Targets (centre them together with ``K``).
    reg_eigenvalues : array_like of shape (n,)
        ``rho_i``, aligned with the ascending eigenvalues of ``K``. Entries on inactive
        (numerically zero) eigenvalues are ignored.
    r : float
        Radius (> 0): the constraint is ``(1/n) ||K a||^2 = r^2``.
    rcond : float, optional
        Zero tolerance of :func:`kernel_eigen` when ``K`` is a matrix.
    hard_tol : float
        See :func:`minimize_quadratic_on_sphere`.

    Returns
    -------
    VarianceConstrainedSolution
    """
    eig = _as_eigen(K, rcond)
    n = eig.n
    y = _check_targets(y, n)
    r = check_positive(r, "r")
    rho = check_finite_matrix(reg_eigenvalues, name="reg_eigenvalues", ndim=1)
    if rho.shape[0] != n:
        raise ValueError(f"reg_eigenvalues must have {n} entries; got {rho.shape[0]}.")
    J = eig.active
    if not np.any(J):
        raise ValueError("K is numerically zero: no eigenvalue exceeds the zero tolerance.")
    sigma = eig.eigenvalues[J]
    VJ = eig.eigenvectors[:, J]
    D = n * rho[J] / sigma**2
    y_hat = VJ.T @ y
    sol = minimize_quadratic_on_sphere(D, y_hat, np.sqrt(n) * r, hard_tol=hard_tol)
    u_hat = sol.x
    alpha = VJ @ (u_hat / sigma)
    fitted = VJ @ u_hat
    objective = float(np.sum((fitted - y) ** 2) + n * np.sum(rho[J] * (u_hat / sigma) ** 2))
    return VarianceConstrainedSolution(
        alpha=alpha,
        fitted=fitted,
        mu=sol.mu,
        gap=sol.gap,
        hard_case=sol.hard_case,
        objective=objective,
        secular_diag=D,
        u_hat=u_hat,
        eigen=eig,
        n_iter=sol.n_iter,
    )


def krein_regularizer_eigenvalues(
    sigma: NDArray[np.float64], lambda_plus: float, lambda_minus: float
) -> NDArray[np.float64]:
    """``rho_i = lambda_+ sigma_i`` (``sigma_i > 0``) or ``lambda_- |sigma_i|`` (``sigma_i < 0``).

    The eigenvalues of ``lambda_+ K_+ + lambda_- K_-`` (paper 000, eq. 4) with
    ``K_+ - K_- = K`` split by the sign of the spectrum.
    """
    return np.where(sigma > 0, lambda_plus * sigma, lambda_minus * np.abs(sigma))


def krein_least_squares(
    K: ArrayLike | KernelEigen,
    y: ArrayLike,
    *,
    lambda_plus: float,
    lambda_minus: float,
    r: float,
    rcond: float | None = None,
    hard_tol: float = 1e-14,
) -> VarianceConstrainedSolution:
    """The KREIN problem of Oglic & Gaertner (2018), eq. (3)/(4), solved globally.

    ``min_a ||K a - y||^2 + n a'(lambda_+ K_+ + lambda_- K_-) a  s.t.  a'K^2 a = n r^2``,
    with ``K_+`` / ``K_-`` the positive part and the absolute negative part of ``K``'s spectrum.

    Parameters
    ----------
    K : array_like of shape (n, n) or KernelEigen
        (Centred) indefinite kernel matrix or its decomposition.
    y : array_like of shape (n,)
        (Centred) targets.
    lambda_plus, lambda_minus : float
        Regularisation of the positive and negative decomposition components (> 0), entering
        linearly as in eq. (3) (eq. 4-7 of the paper write their squares).
    r : float
        Standard deviation of the fitted values on the training set (> 0).
    rcond, hard_tol : float
        See :func:`variance_constrained_least_squares`.

    Returns
    -------
    VarianceConstrainedSolution
    """
    lambda_plus = check_positive(lambda_plus, "lambda_plus")
    lambda_minus = check_positive(lambda_minus, "lambda_minus")
    eig = _as_eigen(K, rcond)
    rho = krein_regularizer_eigenvalues(eig.eigenvalues, lambda_plus, lambda_minus)
    return variance_constrained_least_squares(eig, y, rho, r, hard_tol=hard_tol)


def omcs_krein_least_squares(
    K: ArrayLike | KernelEigen,
    y: ArrayLike,
    *,
    lam: float,
    r: float,
    rcond: float | None = None,
    hard_tol: float = 1e-14,
) -> VarianceConstrainedSolution:
    """OMCS-KREIN (paper 000, eq. 1/2): ``min ||K a - y||^2 + n lam a'K a  s.t. a'K^2 a = n r^2``.

    The quadratic term ``a'K a = <f, f>_K`` is indefinite; the secular diagonal
    ``D_i = n lam / sigma_i`` has negative entries and the multiplier's bracket ends at
    ``n lam / sigma_-`` with ``sigma_-`` the negative eigenvalue closest to zero (paper 000,
    Sect. 3.1). With a positive semi-definite ``K`` (a spectrum-transformed kernel) this is the
    problem the paper solves for FLIP, CLIP, SHIFT and SQUARE (Sect. 5).

    Parameters
    ----------
    K : array_like of shape (n, n) or KernelEigen
        (Centred) kernel matrix or its decomposition.
    y : array_like of shape (n,)
        (Centred) targets.
    lam : float
        Regularisation parameter (> 0), linear as in eq. (1).
    r : float
        Radius (> 0).
    rcond, hard_tol : float
        See :func:`variance_constrained_least_squares`.

    Returns
    -------
    VarianceConstrainedSolution
    """
    lam = check_positive(lam, "lam")
    eig = _as_eigen(K, rcond)
    return variance_constrained_least_squares(eig, y, lam * eig.eigenvalues, r, hard_tol=hard_tol)


def krein_objective(K: ArrayLike, y: ArrayLike, alpha: ArrayLike, reg_matrix: ArrayLike) -> float:
    """``||K a - y||^2 + n a'R a`` evaluated directly (reference for tests and diagnostics)."""
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    R = np.asarray(reg_matrix, dtype=np.float64)
    res = K @ alpha - y
    return float(res @ res + K.shape[0] * alpha @ (R @ alpha))


def krein_kernel_ridge(
    K: ArrayLike | KernelEigen,
    y: ArrayLike,
    *,
    lambda_plus: float,
    lambda_minus: float,
    rcond: float | None = None,
) -> NDArray[np.float64]:
    """Krein kernel ridge regression (KREIN LSM), Oglic & Gaertner (2019), Sect. 2.4.

    ``min_f (1/n) sum_i (f(x_i) - y_i)^2 + lambda_+ ||f_+||^2 + lambda_- ||f_-||^2`` has the
    closed form ``alpha = (H + n Lambda)^{-1} P y`` with ``K = U D U'``, ``S = sign(D)``,
    ``H = U D S U'`` (the flip-spectrum matrix), ``P = U S U'`` and
    ``Lambda = U (lambda_+ S_+ + lambda_- |S_-|) U'``; per eigenvector
    ``alpha_hat_i = sign(sigma_i) y_hat_i / (|sigma_i| + n lambda_{sign(sigma_i)})``.
    With ``lambda_+ = lambda_-`` the fitted function equals kernel ridge regression on the
    flip-spectrum kernel with Chen et al.'s test map (their Prop. 2).

    Parameters
    ----------
    K : array_like of shape (n, n) or KernelEigen
        Indefinite kernel matrix or its decomposition.
    y : array_like of shape (n,)
        Targets.
    lambda_plus, lambda_minus : float
        Regularisation of the two decomposition components (> 0).
    rcond : float, optional
        Zero tolerance; numerically zero eigenvalues get ``alpha_hat_i = 0``.

    Returns
    -------
    ndarray of shape (n,)
        ``alpha``.
    """
    lambda_plus = check_positive(lambda_plus, "lambda_plus")
    lambda_minus = check_positive(lambda_minus, "lambda_minus")
    eig = _as_eigen(K, rcond)
    n = eig.n
    y = _check_targets(y, n)
    sigma = eig.eigenvalues
    lam = np.where(sigma > 0, lambda_plus, lambda_minus)
    coef = np.where(eig.active, np.sign(sigma) / (np.abs(sigma) + n * lam), 0.0)
    V = eig.eigenvectors
    return V @ (coef * (V.T @ y))
