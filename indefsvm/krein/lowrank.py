"""Low-rank learning in Krein spaces on a Nystroem factor (Oglic & Gaertner 2019, Sect. 2.4-2.5).

Every learner here works on a factor ``K ~= Phi diag(s) Phi'`` (``Phi`` of shape ``(n, r)``,
``s`` = +-1 per column), e.g. from :class:`indefsvm.approximation.nystrom.IndefiniteNystroem`, and
costs
``O(n r^2 + r^3)``: no ``n x n`` array is formed.

Reduction (paper 003, Sect. 2.4). With ``Phi = U |Lambda|^{1/2}`` (orthonormal ``U``, the
one-shot eigendecomposition ``K_X|Z = U Lambda U'``) and ``z = |Lambda|^{1/2} U' alpha``:

* ``K alpha = Phi S z`` -- the fitted values are linear in the features ``F = Phi S``;
* ``||f_+||^2 = alpha' K_+ alpha = ||z_+||^2`` and ``||f_-||^2 = ||z_-||^2`` where ``z_+-`` are
  the entries of ``z`` on the columns with ``s = +-1``.

Hence (the paper's ``Phi`` is our ``F = Phi S``)

* KREIN LSM: ``min_z ||F z - y||^2 + n lambda_+ ||z_+||^2 + n lambda_- ||z_-||^2``, i.e.
  ``z = (F'F + n Lambda)^{-1} F'y`` (:func:`lowrank_krein_ridge`);
* KREIN VC-LSM: ``min_z n z' Lambda z - 2 z'F'y  s.t.  z'F'F z = n r^2`` (the variance
  constraint of paper 000 on the factor), solved globally by the secular-equation solver
  :func:`indefsvm.krein.solver.minimize_quadratic_on_sphere` in ``r`` dimensions after the SVD
  ``F = A Sigma B'`` (:func:`lowrank_variance_constrained`);
* KREIN SH-SVM: ``min_z sum_i max(1 - y_i (F_i z + b), 0)^2 + n lambda_+ ||z_+||^2 +
  n lambda_- ||z_-||^2`` by the modified finite Newton method of Keerthi & DeCoste (2005)
  (:func:`squared_hinge_svm`) with hyperparameter gradients by implicit differentiation as in
  Chapelle et al. (2002) (:func:`squared_hinge_hypergradient`).

The split into ``z_+`` and ``z_-`` is the spectral split of ``K_X|Z`` only when the columns of
``Phi`` are orthogonal (the one-shot features, and the features after
:func:`rediagonalize`). With the full eigendecomposition of ``K`` as the factor every learner
here reproduces its full-rank counterpart exactly; that is what the tests check with all
training points as landmarks.

Dask arrays (one fit on a cluster). Every learner also takes the factor as a
``dask.array`` chunked by rows (``y`` as a dask or numpy vector, aligned with the factor's row
chunks). Their work is then map-reduce passes over the row chunks on the workers
(:mod:`indefsvm.utils.dask_rows`): ``F'F``, ``F'y``, the active-set normal equations
``[F_I 1]'[F_I 1]``, ``[F_I 1]'y_I`` and the SH-SVM gradient ``(F'g, sum g)`` each bring back one
``O(r^2)`` or ``O(r)`` summary; ``F z + b`` is a row-chunked dask vector persisted on the workers,
and residuals, margins and active masks are lazy expressions of those vectors, evaluated inside
the passes. The SH-SVM line search is exact without moving ``n``-vectors: its derivative is
piecewise linear in the step with kinks at the breakpoints ``a_i / c_i``; a few bracketing rounds
(per-chunk order statistics of the breakpoints inside the bracket, the derivative at 64 of them
by per-chunk sums) shrink the bracket until each chunk's breakpoints inside it fit in one
message, and the segment holding the root is then chosen as the in-memory walk chooses it.
Results equal the in-memory fit on the same factor to rounding (tests: ``1e-8`` relative; a
float32 factor's ``F'y`` is summed in float64 across chunks, in float32 in memory).

References
----------
D. Oglic, T. Gaertner. Scalable learning in reproducing kernel Krein spaces. ICML 2019
(paper 003), Sect. 2.4-2.5.
D. Oglic, T. Gaertner. Learning in reproducing kernel Krein spaces. ICML 2018 (paper 000).
S. S. Keerthi, D. DeCoste. A modified finite Newton method for fast solution of large scale
linear SVMs. JMLR 6, 2005.
O. Chapelle, V. Vapnik, O. Bousquet, S. Mukherjee. Choosing multiple parameters for support
vector machines. Machine Learning 46, 2002.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray
from sklearn.exceptions import ConvergenceWarning

from indefsvm.krein.solver import minimize_quadratic_on_sphere
from indefsvm.linalg.factor import DaskFactor, NumpyFactor, as_factor
from indefsvm.utils.validation import check_finite_matrix, check_positive

if TYPE_CHECKING:  # hypergrad imports the estimators, which import this module
    from indefsvm.krein.hypergrad import HyperGradient

__all__ = [
    "LowRankVCSolution",
    "SquaredHingeSolution",
    "exact_line_search",
    "lowrank_krein_ridge",
    "lowrank_variance_constrained",
    "rediagonalize",
    "ridge_on_rows",
    "squared_hinge_hypergradient",
    "squared_hinge_svm",
]

_EPS = float(np.finfo(np.float64).eps)


Factor = NumpyFactor | DaskFactor


def _check_factor(Phi: ArrayLike, signature: ArrayLike) -> tuple[Factor, NDArray[np.float64]]:
    backend = _check_features(Phi, name="Phi")
    # Finiteness of a float64 factor is checked here; of a float32 or dask factor on the Gram
    # matrix its first pass brings back (_gram): no extra pass over the rows.
    if not backend.distributed and backend.Phi.dtype != np.float32:
        backend = NumpyFactor(check_finite_matrix(backend.Phi, name="Phi"))
    s = check_finite_matrix(signature, name="signature", ndim=1)
    if s.shape[0] != backend.Phi.shape[1]:
        raise ValueError(
            f"signature has {s.shape[0]} entries but Phi has {backend.Phi.shape[1]} columns."
        )
    if not np.all(np.abs(s) == 1.0):
        raise ValueError("signature must contain only +1.0 and -1.0.")
    return backend, s


def _check_features(F: ArrayLike, name: str = "F") -> Factor:
    """The backend of the feature matrix ``F`` (n, r) of the low-rank solvers, refused unless 2-D.

    Its dtype is kept (a float32 factor stays float32 and every pass accumulates in float64);
    shared by every learner here. A dask array stays one, chunked by rows and read as it is (not
    persisted here: the estimators persist their final factor; module docstring, "Dask arrays").
    """
    return as_factor(F, name, what="a 2-D (n, r) factor" if name == "Phi" else "2-D")


def _block_matvec_t(B: NDArray, v: NDArray) -> NDArray[np.float64]:
    """One row block's ``B'v``, accumulated in float64 (a float32 block is converted)."""
    return np.asarray(B, dtype=np.float64).T @ v


def _block_matvec(B: NDArray, z: NDArray[np.float64], b: float) -> NDArray[np.float64]:
    return np.asarray(B @ z.astype(B.dtype, copy=False), dtype=np.float64) + b


def _block_gram(B: NDArray) -> NDArray[np.float64]:
    B = np.asarray(B, dtype=np.float64)
    return B.T @ B


def _gram(F: Factor) -> NDArray[np.float64]:
    """``F'F`` in float64; the check of a float32 or dask factor's finiteness.

    In memory the backend's Gram pass (one BLAS product; float32 by row blocks accumulated in
    64 bit). On Dask the map-reduce of the chunks' :func:`_block_gram` (``r x r`` per chunk
    summed on the workers), a pass like every other of these learners: the fit's progress bar
    counts its chunks.
    """
    G = F.reduce(_block_gram) if F.distributed else F.gram(None, None)
    if not np.all(np.isfinite(G)):
        raise ValueError("the factor contains NaN or inf values.")
    return G


def _reg_diag(s: NDArray[np.float64], lambda_plus: float, lambda_minus: float) -> NDArray:
    return np.where(s > 0, lambda_plus, lambda_minus)


def rediagonalize(
    Phi: ArrayLike, signature: ArrayLike, *, tol: float | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rotate a factor so that its columns are orthogonal (eigenbasis of ``Phi S Phi'``).

    Returns ``T`` (``(r, r')``) and ``Lambda`` (``(r',)``, sorted by ``|Lambda|``) with
    ``(Phi T)' (Phi T) = |Lambda|`` and ``(phi T) sign(Lambda) (Phi T)' = phi S Phi'`` for
    every row ``phi`` (training or new) -- the
    one-shot step of paper 003, Sect. 2.2, applied to a factor (e.g. after centring its
    columns). Directions where ``Phi`` is numerically rank deficient (Gram eigenvalues below
    ``tol * max``; default ``n eps`` as :func:`indefsvm.krein.solver.kernel_eigen`) are dropped.

    Parameters
    ----------
    Phi : array_like of shape (n, r)
    signature : array_like of shape (r,)
    tol : float, optional

    Returns
    -------
    (T, Lambda)
    """
    Phi, s = _check_factor(Phi, signature)
    n = Phi.shape[0]
    tol = n * _EPS if tol is None else float(tol)
    w, B = scipy.linalg.eigh(_gram(Phi), check_finite=False)
    keep = w > tol * max(float(w.max()), 0.0)
    w, B = w[keep], B[:, keep]
    sigma = np.sqrt(w)
    C = B.T * sigma[:, None]  # Sigma B'  (R factor of Phi up to an orthogonal matrix)
    M = (C * s[None, :]) @ C.T
    lam, P = scipy.linalg.eigh(0.5 * (M + M.T), check_finite=False)
    order = np.argsort(-np.abs(lam), kind="stable")
    lam, P = lam[order], P[:, order]
    # T = S B Sigma P |Lambda|^{-1/2} sign(Lambda): equal to B Sigma^{-1} P |Lambda|^{1/2} when
    # nothing is dropped, and the right map for NEW rows when Phi is rank deficient (it keeps
    # phi(x) S Phi' for every x, not only for the training rows).
    T = ((B * sigma[None, :]) * s[:, None]) @ (P * (np.sign(lam) / np.sqrt(np.abs(lam)))[None, :])
    return T, lam


def lowrank_krein_ridge(
    Phi: ArrayLike,
    signature: ArrayLike,
    y: ArrayLike,
    *,
    lambda_plus: float,
    lambda_minus: float,
) -> NDArray[np.float64]:
    """Low-rank KREIN LSM (Krein kernel ridge regression), paper 003, Sect. 2.4.

    ``z = (F'F + n Lambda)^{-1} F'y`` with ``F = Phi S`` and
    ``Lambda = lambda_+ S_+ + lambda_- |S_-|``; predictions ``f(x) = phi(x) S z``.

    Parameters
    ----------
    Phi : array_like of shape (n, r)
        Factor with ``K ~= Phi diag(signature) Phi'`` (orthogonal columns for the exact
        spectral split).
    signature : array_like of shape (r,)
    y : array_like of shape (n,)
    lambda_plus, lambda_minus : float
        Regularisation of the two decomposition components (> 0).

    Returns
    -------
    ndarray of shape (r,)
        ``z``.
    """
    lambda_plus = check_positive(lambda_plus, "lambda_plus")
    lambda_minus = check_positive(lambda_minus, "lambda_minus")
    Phi, s = _check_factor(Phi, signature)
    n = Phi.shape[0]
    y = Phi.rows(y)
    # F'F = S Phi'Phi S, F'y = S Phi'y.
    G = _gram(Phi) * np.outer(s, s)
    G[np.diag_indices_from(G)] += n * _reg_diag(s, lambda_plus, lambda_minus)
    rhs = s * _matvec_t(Phi, y)
    return scipy.linalg.solve(G, rhs, assume_a="pos", check_finite=False)


def _matvec_t(F: Factor, v: Any) -> NDArray[np.float64]:
    """``F'v`` in float64: one pass of :func:`_block_matvec_t` over the row blocks (in memory)
    or chunks (on Dask, an ``r``-vector per chunk summed on the workers); the check of the
    vector's finiteness on Dask (``v`` not yet read) and of a float32 factor's."""
    out = F.reduce(_block_matvec_t, v)
    if not np.all(np.isfinite(out)):
        raise ValueError("the factor or the vector contain NaN or inf values.")
    return out


def _matvec(F: Factor, z: NDArray[np.float64], b: float = 0.0) -> Any:
    """``F z + b`` in float64, one value per row (on Dask a row-chunked vector persisted on the
    workers: later passes read it instead of recomputing it)."""
    return F.map(_block_matvec, args=(z, float(b)))


@dataclass(frozen=True)
class LowRankVCSolution:
    """Solution of the low-rank KREIN VC-LSM (paper 003, Sect. 2.4).

    Attributes
    ----------
    z : ndarray of shape (r,)
        Coefficients: fitted values ``F z`` with ``F = Phi S`` (or ``Phi`` for a PSD factor).
    mu : float
        Lagrange multiplier (smallest root of the secular equation, ``r``-dimensional).
    gap : float
        ``min(D) - mu``.
    hard_case : bool
    objective : float
        ``||F z - y||^2 + n z' Lambda z``.
    n_iter : int
    """

    z: NDArray[np.float64]
    mu: float
    gap: float
    hard_case: bool
    objective: float
    n_iter: int


def lowrank_variance_constrained(
    F: ArrayLike,
    y: ArrayLike,
    reg: ArrayLike,
    r: float,
    *,
    tol: float | None = None,
    hard_tol: float = 1e-14,
) -> LowRankVCSolution:
    """Globally solve ``min_z ||F z - y||^2 + n z' diag(reg) z  s.t.  ||F z||^2 = n r^2``.

    Paper 003, Sect. 2.4 (KREIN VC-LSM on the factor): with the thin SVD ``F = A Sigma B'``
    and ``gamma = Sigma B' z``, and the eigendecomposition
    ``n Sigma^{-1} B' diag(reg) B Sigma^{-1} = Q diag(D) Q'``, the problem becomes
    ``min xi' D xi - 2 (Q'A'y)' xi  s.t.  ||xi||^2 = n r^2`` in ``r`` dimensions, solved by
    :func:`indefsvm.krein.solver.minimize_quadratic_on_sphere` (Gander, Golub & von Matt). For
    orthogonal columns (one-shot features) ``D_i = n reg_i / ||F_i||^2``, the diagonal of the
    full-rank problem. ``reg`` may have any signs (OMCS: ``lam * s``).

    Parameters
    ----------
    F : array_like of shape (n, r)
        Features (``Phi S`` for KREIN, see the module docstring).
    y : array_like of shape (n,)
        (Centred) targets.
    reg : array_like of shape (r,)
        Diagonal regulariser on ``z`` (KREIN: ``lambda_+`` / ``lambda_-`` by signature).
    r : float
        Radius: ``(1/n) ||F z||^2 = r^2``.
    tol : float, optional
        Relative cut-off of ``Sigma^2`` (default ``n eps``): directions outside the numerical
        range of ``F`` are dropped (minimum-norm ``z``).
    hard_tol : float

    Returns
    -------
    LowRankVCSolution
    """
    F = _check_features(F)
    n = F.shape[0]
    y = F.rows(y)
    reg = check_finite_matrix(reg, name="reg", ndim=1)
    r = check_positive(r, "r")
    tol = n * _EPS if tol is None else float(tol)
    if reg.shape[0] != F.shape[1]:
        raise ValueError(f"reg has {reg.shape[0]} entries but F has {F.shape[1]} columns.")
    w, B = scipy.linalg.eigh(_gram(F), check_finite=False)
    keep = w > tol * max(float(np.max(w, initial=0.0)), 0.0)
    if not np.any(keep):
        # No column (e.g. the clipped factor of a kernel without positive eigenvalues) or a
        # numerically zero F: no f satisfies the variance constraint ||F z||^2 = n r^2.
        raise ValueError(
            f"F (shape {F.shape}) is numerically zero: the variance constraint "
            "||F z||^2 = n r^2 has no solution (is the factor's kernel zero, e.g. clipped "
            "without positive eigenvalues?)."
        )
    w, B = w[keep], B[:, keep]
    sigma = np.sqrt(w)
    C = (B / sigma[None, :]).T  # Sigma^{-1} B'
    Dm = n * (C * reg[None, :]) @ C.T
    D, Q = scipy.linalg.eigh(0.5 * (Dm + Dm.T), check_finite=False)
    Aty = (B.T @ _matvec_t(F, y)) / sigma  # A'y = Sigma^{-1} B' F'y
    sol = minimize_quadratic_on_sphere(D, Q.T @ Aty, np.sqrt(n) * r, hard_tol=hard_tol)
    gamma = Q @ sol.x
    z = B @ (gamma / sigma)
    res = _matvec(F, z) - y
    objective = float(res @ res) + float(n * z @ (reg * z))
    return LowRankVCSolution(
        z=z,
        mu=sol.mu,
        gap=sol.gap,
        hard_case=sol.hard_case,
        objective=objective,
        n_iter=sol.n_iter,
    )


def _block_sums(C: NDArray, yb: NDArray) -> tuple[NDArray[np.float64], float, float]:
    return np.asarray(C, dtype=np.float64).sum(axis=0), float(yb.sum()), float(C.shape[0])


def _block_centred_normal(
    C: NDArray, yb: NDArray, c_mean: NDArray[np.float64], y_mean: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    Cc = np.asarray(C, dtype=np.float64) - c_mean
    return Cc.T @ Cc, Cc.T @ (yb - y_mean)


def ridge_on_rows(C: ArrayLike, y: ArrayLike, alpha: float) -> tuple[NDArray[np.float64], float]:
    """Ridge regression with an intercept on row-chunked features: SF-LSM on a dask array.

    ``min_{w, b} ||C w + b - y||^2 + alpha ||w||^2`` (paper 003, Sect. 3, SF-LSM with ``C`` the
    similarities to the landmarks), solved as scikit-learn's ``Ridge(alpha).fit(C, y)`` solves
    it: centre ``C`` and ``y`` by their means, ``(C_c'C_c + alpha I) w = C_c'y_c``,
    ``b = mean(y) - mean(C) w``. Two passes over the row chunks: the means, then the centred
    normal equations (centred inside each chunk, so no cancellation of ``C'C - n c c'``); an
    ``m x m`` matrix and an ``m``-vector reach the client.

    Parameters
    ----------
    C : dask array of shape (n, m)
    y : dask or numpy array of shape (n,)
    alpha : float
        Ridge penalty (> 0).

    Returns
    -------
    (coef, intercept)
    """
    alpha = check_positive(alpha, "alpha")
    C = _check_features(C, name="C")
    y = C.rows(y)
    col_sums, y_sum, n = C.reduce(_block_sums, y)
    if not (np.all(np.isfinite(col_sums)) and np.isfinite(y_sum)):
        raise ValueError("the features or the targets (dask arrays) contain NaN or inf values.")
    c_mean, y_mean = col_sums / n, y_sum / n
    A, rhs = C.reduce(_block_centred_normal, y, args=(c_mean, y_mean))
    A[np.diag_indices_from(A)] += alpha
    coef = scipy.linalg.solve(A, rhs, assume_a="pos", check_finite=False)
    return coef, float(y_mean - c_mean @ coef)


# ------------------------------------------------------------------------------ KREIN SH-SVM


@dataclass(frozen=True)
class SquaredHingeSolution:
    """Solution of the KREIN SH-SVM primal (paper 003, Sect. 2.5).

    Attributes
    ----------
    z : ndarray of shape (r,)
    intercept : float
    objective : float
        ``sum max(1 - y_i (F_i z + b), 0)^2 + n z' diag(reg) z``.
    active : ndarray of bool, shape (n,)
        Points with ``y_i (F_i z + b) < 1`` (the support vectors of the squared hinge).
    n_iter : int
        Newton iterations.
    converged : bool
        The active set was stable after a full Newton step (the finite termination of
        Keerthi & DeCoste) or the relative gradient norm fell below ``tol``.
    grad_norm : float
        Final ``||grad||`` relative to ``max(1, ||grad at z = 0||)``.
    """

    z: NDArray[np.float64]
    intercept: float
    objective: float
    active: NDArray[np.bool_]
    n_iter: int
    converged: bool
    grad_norm: float


def _sh_objective(out, y, z, reg, n) -> float:
    viol = np.maximum(1.0 - y * out, 0.0)
    return float(viol @ viol + n * z @ (reg * z))


def exact_line_search(
    a: NDArray[np.float64], c: NDArray[np.float64], q0: float, q1: float
) -> float:
    """Exact minimiser over ``t >= 0`` of ``phi(t) = sum max(a_i - t c_i, 0)^2 + 2 q0 t + q1 t^2``.

    The line search of the squared-hinge SVM on the Nystroem factor (paper 003, Sect. 2.5):
    ``phi'(t)/2 = q0 + q1 t - sum_{a_i - t c_i > 0} c_i (a_i - t c_i)`` is piecewise linear and
    non-decreasing (Keerthi & DeCoste 2005, Sect. 2.3); its root is found by walking the sorted
    breakpoints ``t_i = a_i / c_i > 0`` in O(n log n).

    Parameters
    ----------
    a : ndarray of shape (n,)
        Margin slacks at ``t = 0`` (``1 - y_i f(x_i)``).
    c : ndarray of shape (n,)
        Their rate of decrease along the search direction (``y_i`` times the change of
        ``f(x_i)``).
    q0 : float
        Half the slope of the regulariser at ``t = 0`` (``n z' Reg d``).
    q1 : float
        The regulariser's curvature along the direction (``n d' Reg d``, >= 0).

    Returns
    -------
    float
        The minimising step ``t >= 0`` (1.0 when ``phi`` has no curvature along the direction).
    """
    # Slope/intercept of phi'/2 at t = 0+: active terms have a_i > 0, or a_i == 0 and c_i < 0.
    nz = c != 0.0
    a, c = a[nz], c[nz]
    active = (a > 0.0) | ((a == 0.0) & (c < 0.0))
    # phi'(t)/2 = q0 + q1 t + sum_active (c_i^2 t - c_i a_i)
    slope = q1 + float(np.sum(c[active] ** 2))
    inter = q0 - float(np.sum(c[active] * a[active]))
    bp = a / c
    # Breakpoints at t > 0 where a term switches: active with c > 0 leaves, inactive with c < 0
    # enters (at t = a/c > 0 since a < 0, c < 0).
    events = (bp > 0.0) & ((active & (c > 0.0)) | (~active & (c < 0.0)))
    idx = np.flatnonzero(events)
    order = idx[np.argsort(bp[idx], kind="stable")]
    for i in order:
        t_i = bp[i]
        if inter + slope * t_i >= 0.0:
            break
        # Crossing t_i: a leaving term removes (c^2, -c a); an entering term adds them.
        sign = -1.0 if (active[i]) else 1.0
        slope += sign * c[i] ** 2
        inter += sign * (-c[i] * a[i])
    if slope <= 0.0:
        return 1.0
    return max(0.0, -inter / slope)


def _active_normal_equations(
    F: Factor, y: Any, active: Any, fit_intercept: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``[F_I 1]'[F_I 1]`` and ``[F_I 1]'y_I``: one pass of :func:`_block_active_normal` over
    the row blocks (no copy of ``F_I``; on Dask ``(r+1) x (r+1)`` per chunk summed on the
    workers)."""
    return F.reduce(_block_active_normal, y, active, args=(fit_intercept,))


def _block_active_normal(
    B: NDArray, yb: NDArray, act: NDArray, fit_intercept: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """One row chunk's share of :func:`_active_normal_equations`."""
    r = B.shape[1]
    p = r + 1 if fit_intercept else r
    H = np.zeros((p, p))
    rhs = np.zeros(p)
    if np.any(act):
        Ba = np.asarray(B[act], dtype=np.float64)
        ya = yb[act]
        H[:r, :r] = Ba.T @ Ba
        rhs[:r] = Ba.T @ ya
        if fit_intercept:
            col = Ba.sum(axis=0)
            H[:r, r] = col
            H[r, :r] = col
            H[r, r] = float(Ba.shape[0])
            rhs[r] = ya.sum()
    return H, rhs


def _block_sh_gradient(B: NDArray, yb: NDArray, ob: Any) -> tuple[NDArray[np.float64], float]:
    """One row chunk's ``(F'g, sum g)`` with ``g = -2 y max(1 - y o, 0)``."""
    g_out = -2.0 * yb * np.maximum(1.0 - yb * ob, 0.0)
    return _block_matvec_t(B, g_out), float(g_out.sum())


def _same_mask(a: Any, b: Any) -> bool:
    """Whether two boolean row masks of the same rows agree (dask masks: compared on the
    workers, only the answer travels)."""
    return not bool((a != b).any())


# Distributed exact line search. phi'(t)/2 = g(t) = q0 + q1 t + sum_i c_i min(t c_i - a_i, 0) is
# continuous, piecewise linear and non-decreasing; its kinks ("events") are the breakpoints
# a_i / c_i > 0 where a term leaves (active, c > 0) or enters (inactive, c < 0) the active set.
# exact_line_search walks the sorted events on one machine; on row chunks the root's segment is
# bracketed instead: per-chunk order statistics of the events inside the bracket, g at a few of
# them (per-chunk sums), a narrower bracket, until every chunk's events inside the bracket fit in
# one message. The segment is then picked exactly as exact_line_search picks it, from per-chunk
# sums of c^2 and c a over the terms active inside each gap between consecutive events.

#: Events per chunk returned by one bracketing round (order statistics) or in full.
_SEARCH_SAMPLES = 64


def _block_events(
    a: NDArray, c: NDArray, lo: float, hi: float, k: int
) -> tuple[int, NDArray[np.float64], bool]:
    active = (a > 0.0) | ((a == 0.0) & (c < 0.0))
    nz = c != 0.0
    bp = np.full(a.shape, -1.0)
    np.divide(a, c, out=bp, where=nz)
    event = nz & (bp > lo) & (bp < hi) & ((active & (c > 0.0)) | (~active & (c < 0.0)))
    values = np.sort(bp[event])
    if values.size <= k:
        return int(values.size), values, True
    pick = np.unique(np.linspace(0, values.size - 1, k).round().astype(np.intp))
    return int(values.size), values[pick], False


def _merge_events(x: tuple, y: tuple) -> tuple:
    return x[0] + y[0], np.concatenate([x[1], y[1]]), x[2] and y[2]


def _block_g(a: NDArray, c: NDArray, ts: NDArray[np.float64]) -> NDArray[np.float64]:
    """``sum_i c_i min(t c_i - a_i, 0)`` of the chunk for every ``t`` in ``ts``."""
    return np.array([float(c @ np.minimum(t * c - a, 0.0)) for t in ts])


def _block_segments(a: NDArray, c: NDArray, points: NDArray[np.float64]) -> NDArray[np.float64]:
    """``(sum c^2, sum c a)`` over the chunk's terms active at each point (rows of the result)."""
    out = np.empty((len(points), 2))
    for j, t in enumerate(points):
        act = a - t * c > 0.0
        ca = c[act]
        out[j] = (float(ca @ ca), float(ca @ a[act]))
    return out


def _exact_line_search_rows(F: Factor, a: Any, c: Any, q0: float, q1: float) -> float:
    """:func:`exact_line_search` for vectors ``a`` and ``c`` cut like the rows of ``F``, exact.

    Its passes are ``F.reduce`` over the vectors only (``factor=False``); on Dask each brings back
    O(chunks * 64) numbers and the vectors never leave the workers.
    """
    reduce = functools.partial(F.reduce, factor=False)
    lo, hi = 0.0, np.inf
    while True:
        _, values, complete = reduce(
            _block_events, a, c, args=(lo, hi, _SEARCH_SAMPLES), combine=_merge_events
        )
        values = np.unique(values)
        if complete:
            break
        # g at (at most) 64 of the merged order statistics narrows the bracket [lo, hi].
        pick = np.unique(np.linspace(0, values.size - 1, _SEARCH_SAMPLES).round().astype(np.intp))
        ts = values[pick]
        g = q0 + q1 * ts + reduce(_block_g, a, c, args=(ts,))
        below, above = ts[g < 0.0], ts[g >= 0.0]
        lo = float(below.max()) if below.size else lo
        hi = float(above.min()) if above.size else hi
    # Every event inside (lo, hi): the segments between consecutive events, as in
    # exact_line_search, which breaks at the first event e with inter + slope e >= 0.
    edges = np.concatenate([[lo], values, [hi]])
    right = edges[1:]
    mids = np.where(
        np.isfinite(right), 0.5 * (edges[:-1] + right), edges[:-1] + 1.0 + abs(edges[:-1])
    )
    sums = reduce(_block_segments, a, c, args=(mids,))
    slope = q1 + sums[:, 0]
    inter = q0 - sums[:, 1]
    with np.errstate(invalid="ignore"):
        stop = np.isfinite(right) & (inter + slope * right >= 0.0)
    j = int(np.argmax(stop)) if np.any(stop) else len(mids) - 1
    if slope[j] <= 0.0:
        return 1.0
    return max(0.0, -float(inter[j]) / float(slope[j]))


def _check_squared_hinge_inputs(
    F: ArrayLike, y: ArrayLike, reg: ArrayLike, fit_intercept: bool, z0: ArrayLike | None
) -> tuple[Any, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Check the features, labels and regulariser; the start ``w`` (intercept last, if any)."""
    F = _check_features(F)
    r = F.shape[1]
    y = F.rows(y)
    if not bool((abs(y) == 1.0).all()):
        raise ValueError("y must contain only -1.0 and +1.0 labels.")
    reg = check_finite_matrix(reg, name="reg", ndim=1)
    if reg.shape[0] != r or np.any(reg <= 0):
        raise ValueError(f"reg must be {r} positive regularisation values.")
    p = r + 1 if fit_intercept else r
    w = np.zeros(p) if z0 is None else np.array(z0, dtype=np.float64)
    if w.shape[0] == r and fit_intercept:
        w = np.concatenate([w, [0.0]])
    if w.shape[0] != p:
        raise ValueError(f"z0 must have {r} or {p} entries; got {w.shape[0]}.")
    return F, y, reg, w


def _active_set_minimiser(
    F: Any, y: NDArray, active: NDArray, regp: NDArray, w: NDArray, fit_intercept: bool
) -> NDArray[np.float64]:
    """Minimiser of the regularised least squares on the active set (the Newton point)."""
    r = F.shape[1]
    H, rhs = _active_normal_equations(F, y, active, fit_intercept)
    H[np.diag_indices_from(H)] += regp
    if fit_intercept and not bool(active.any()):
        H[r, r] = 1.0  # no active point: the intercept is free, keep it
        rhs[r] = w[r]
    try:
        return scipy.linalg.solve(H, rhs, assume_a="pos", check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgError):
        return scipy.linalg.lstsq(H, rhs, check_finite=False)[0]


def _newton_step_length(
    F: Any, y: NDArray, out: NDArray, delta: NDArray, regp: NDArray, w: NDArray, d: NDArray
) -> float:
    """Exact minimiser ``t`` of the objective along ``d`` (outputs change by ``t delta``)."""
    # phi(t) along d: a_i = 1 - y_i o_i, c_i = y_i delta_i.
    q0 = float(regp @ (w * d))
    q1 = float(regp @ (d * d))
    if F.distributed:  # the walk over the sorted breakpoints needs the vectors in one place
        return _exact_line_search_rows(F, 1.0 - y * out, y * delta, q0, q1)
    return exact_line_search(1.0 - y * out, y * delta, q0, q1)


def squared_hinge_svm(
    F: ArrayLike,
    y: ArrayLike,
    reg: ArrayLike,
    *,
    fit_intercept: bool = True,
    tol: float = 1e-10,
    max_iter: int = 100,
    z0: ArrayLike | None = None,
) -> SquaredHingeSolution:
    """KREIN SH-SVM primal by the modified finite Newton method (Keerthi & DeCoste 2005).

    ``min_{z, b} sum_i max(1 - y_i (F_i z + b), 0)^2 + n sum_j reg_j z_j^2`` (paper 003,
    Sect. 2.5, with an unregularised intercept ``b`` when ``fit_intercept``). Each iteration
    solves the regularised least-squares problem on the current active set
    ``I = {i : y_i o_i < 1}``, ``(F_I'F_I + n Reg) z_bar = F_I' y_I``, and moves to the exact
    minimiser along ``z_bar - z`` of the piecewise-quadratic objective (exact line search over
    the sorted breakpoints). The method terminates finitely: when the full Newton step keeps
    the active set, ``z_bar`` is the optimum.

    Parameters
    ----------
    F : array_like of shape (n, r)
        Features (``Phi S`` for the Krein model).
    y : array_like of shape (n,)
        Labels in {-1, +1}.
    reg : array_like of shape (r,)
        Positive diagonal regulariser (``lambda_+`` / ``lambda_-`` by signature).
    fit_intercept : bool
    tol : float
        Stop also when ``||grad|| <= tol * max(1, ||grad(0)||)``.
    max_iter : int
    z0 : array_like, optional
        Warm start (``r`` or ``r + 1`` entries with the intercept last).

    Returns
    -------
    SquaredHingeSolution
    """
    F, y, reg, w = _check_squared_hinge_inputs(F, y, reg, fit_intercept, z0)
    n, r = F.shape
    p = w.shape[0]
    regp = np.concatenate([n * reg, [0.0]]) if fit_intercept else n * reg

    def outputs(v: NDArray) -> NDArray:
        return _matvec(F, v[:r], float(v[r]) if fit_intercept else 0.0)

    def gradient(v: NDArray, out: NDArray) -> NDArray:
        # F'g_out and sum(g_out) in one pass.
        g_f, g_b = F.reduce(_block_sh_gradient, y, out)
        g = np.concatenate([g_f, [g_b]]) if fit_intercept else g_f
        return g + 2.0 * regp * v

    out = outputs(w)
    g0 = float(np.linalg.norm(gradient(np.zeros(p), 0.0 * y)))
    scale = max(1.0, g0)
    converged = False
    n_iter = 0
    active = y * out < 1.0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - reported
        w_bar = _active_set_minimiser(F, y, active, regp, w, fit_intercept)
        d = w_bar - w
        out_bar = outputs(w_bar)
        active_bar = y * out_bar < 1.0
        if _same_mask(active_bar, active):
            # Finite termination (Keerthi & DeCoste 2005, Sect. 3): w_bar minimises the quadratic
            # of the active set it itself induces, so it is the optimum. Checked directly rather
            # than through "line search returned t == 1", which rounding can spoil at large n.
            w, out = w_bar, out_bar
            converged = True
            break
        delta = out_bar - out
        t = _newton_step_length(F, y, out, delta, regp, w, d)
        w = w + t * d
        # On Dask: cut the graph, out stays on the workers as data, not as a chain of updates.
        out = F.persist(out + t * delta)
        new_active = y * out < 1.0
        gnorm = float(np.linalg.norm(gradient(w, out)))
        if (t == 1.0 and _same_mask(new_active, active)) or gnorm <= tol * scale:
            active = new_active
            converged = True
            break
        active = new_active
    gnorm = float(np.linalg.norm(gradient(w, out))) / scale
    if not converged:
        warnings.warn(
            f"squared_hinge_svm: modified finite Newton stopped after {max_iter} iterations "
            f"without a stable active set (relative gradient norm {gnorm:.2e}).",
            ConvergenceWarning,
            stacklevel=2,
        )
    z = w[:r]
    b = float(w[r]) if fit_intercept else 0.0
    return SquaredHingeSolution(
        z=z,
        intercept=b,
        objective=_sh_objective(out, y, z, reg, n),
        active=active,
        n_iter=n_iter,
        converged=converged,
        grad_norm=gnorm,
    )


def squared_hinge_hypergradient(
    F: ArrayLike,
    y: ArrayLike,
    signature: ArrayLike,
    solution: SquaredHingeSolution,
    F_val: ArrayLike,
    y_val: ArrayLike,
    *,
    lambda_plus: float,
    lambda_minus: float,
    loss: str = "squared_hinge",
    fit_intercept: bool = True,
) -> HyperGradient:
    """Gradient of a validation loss of the KREIN SH-SVM w.r.t. ``lambda_+`` and ``lambda_-``.

    Implicit differentiation (Chapelle et al. 2002; paper 003, Sect. 2.5): on the optimal
    active set ``I`` the optimum solves ``H w = F_I' y_I`` with
    ``H = [F_I 1]'[F_I 1] + n diag(Reg, 0)``, so ``dw/d lambda_+- = -H^{-1} n E_+- w`` with
    ``E_+-`` the indicator of the columns of signature +-1. The squared hinge is twice
    differentiable except where some ``y_i o_i = 1`` exactly, so the gradient is exact almost
    everywhere.

    Parameters
    ----------
    F, y : training features and +-1 labels used for ``solution``.
    signature : array_like of shape (r,)
        Splits the regulariser: ``reg_j = lambda_+`` where ``signature_j > 0``.
    solution : SquaredHingeSolution
        From :func:`squared_hinge_svm` with the same ``reg``.
    F_val, y_val : validation features and labels (+-1).
    lambda_plus, lambda_minus : float
    loss : {"squared_hinge", "squared_error"}
        Mean validation loss ``(1/m) sum max(1 - y o, 0)^2`` or ``(1/m) sum (o - y)^2``.
    fit_intercept : bool
        As in the fit.

    Returns
    -------
    HyperGradient
        ``loss`` and ``grad`` with keys ``"lambda_plus"``, ``"lambda_minus"`` (``mu`` is NaN:
        no multiplier in this problem).
    """
    from indefsvm.krein.hypergrad import HyperGradient  # noqa: F811 - runtime import

    F = NumpyFactor(np.asarray(F))
    n, r = F.shape
    y = F.rows(y)
    s = check_finite_matrix(signature, name="signature", ndim=1)
    Fv = NumpyFactor(np.asarray(F_val))
    yv = Fv.rows(y_val)
    if loss not in ("squared_hinge", "squared_error"):
        raise ValueError(f"loss must be 'squared_hinge' or 'squared_error'; got {loss!r}.")
    reg = _reg_diag(s, lambda_plus, lambda_minus)
    p = r + 1 if fit_intercept else r
    w = np.concatenate([solution.z, [solution.intercept]]) if fit_intercept else solution.z
    H, _ = _active_normal_equations(F, y, solution.active, fit_intercept)
    H[np.arange(r), np.arange(r)] += n * reg
    out_v = _matvec(Fv, solution.z) + solution.intercept
    m = Fv.shape[0]
    if loss == "squared_hinge":
        viol = np.maximum(1.0 - yv * out_v, 0.0)
        value = float(viol @ viol) / m
        g_out = -2.0 * yv * viol / m
    else:
        res = out_v - yv
        value = float(res @ res) / m
        g_out = 2.0 * res / m
    g_w = np.empty(p)
    g_w[:r] = _matvec_t(Fv, g_out)
    if fit_intercept:
        g_w[r] = g_out.sum()
    adj = scipy.linalg.solve(H, g_w, assume_a="pos", check_finite=False)
    grad = {}
    for name, mask in (("lambda_plus", s > 0), ("lambda_minus", s < 0)):
        dH_w = np.zeros(p)
        dH_w[:r] = n * mask * w[:r]
        grad[name] = float(-adj @ dH_w)
    return HyperGradient(loss=value, grad=grad, mu=float("nan"), dmu={})
