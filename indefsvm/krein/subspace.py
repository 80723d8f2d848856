"""Ong et al. (2004), Sect. 5: regularisation by subspace for the indefinite interpolation problem.

The interpolation problem ``f(x_i) = y_i`` with ``f = sum_i alpha_i k(x_i, .)`` is the linear
system ``K alpha = y`` with an indefinite Gram matrix ``K``. Tikhonov regularisation
``(K + lambda I) alpha = y`` can be singular when ``-lambda`` is an eigenvalue of ``K`` (their
Sect. 4.2), so they set ``lambda = 0`` and restrict the solution to a small subspace (their
eq. 5). The regularisation parameter is the truncation level or the iteration count:

* :func:`truncated_spectral_factorization` (TSF, Sect. 5.1) keeps the eigenpairs of largest
  ``|mu_i|``: ``alpha = sum_{kept} u_i (u_i'y) / mu_i``.
* :func:`landweber_fridman` (LF, Sect. 5.2): gradient descent on ``J = 1/2 ||K alpha - y||^2``.
* :func:`mr_ii` (MR-II, Hanke 1995; their Fig. 1): the minimal-residual Krylov method for
  symmetric indefinite systems; iterate ``k`` minimises ``||y - K alpha||`` over
  ``alpha_0 + span{K r_0, ..., K^k r_0}``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm._validation import check_finite_matrix, check_square_symmetric

__all__ = [
    "IterativeSolution",
    "landweber_fridman",
    "mr_ii",
    "truncated_spectral_factorization",
]


@dataclass(frozen=True)
class IterativeSolution:
    """Result of an iterative regularisation method.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        Coefficients after the last iteration.
    n_iter : int
        Iterations performed (may be fewer than requested after a Krylov breakdown).
    residual_norms : ndarray of shape (n_iter + 1,)
        ``||y - K alpha_k||`` for ``k = 0 .. n_iter``.
    """

    alpha: NDArray[np.float64]
    n_iter: int
    residual_norms: NDArray[np.float64]


def _check_system(K: ArrayLike, y: ArrayLike) -> tuple[NDArray, NDArray]:
    K = check_square_symmetric(K, name="K")
    y = check_finite_matrix(y, name="y", ndim=1)
    if y.shape[0] != K.shape[0]:
        raise ValueError(
            f"y has {y.shape[0]} entries but K has {K.shape[0]} rows; expected one per row."
        )
    return K, y


def _check_n_iter(n_iter: int) -> int:
    if isinstance(n_iter, bool) or not isinstance(n_iter, int | np.integer) or n_iter < 0:
        raise ValueError(f"n_iter must be an integer >= 0; got {n_iter!r}.")
    return int(n_iter)


def truncated_spectral_factorization(
    K: ArrayLike,
    y: ArrayLike,
    *,
    n_components: int | None = None,
    threshold: float | None = None,
) -> NDArray[np.float64]:
    """Truncated spectral factorisation (TSF), Ong et al. (2004), Sect. 5.1.

    ``alpha = sum_{i in L} u_i <y, u_i> / mu_i`` over the eigenpairs ``(mu_i, u_i)`` of ``K``
    kept by the truncation: either the ``n_components`` of largest ``|mu_i|`` or those with
    ``|mu_i| > threshold`` (the paper's ``L = span{T* u_i : |mu_i| > lambda}``).

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric (indefinite) Gram matrix.
    y : array_like of shape (n,)
        Targets.
    n_components : int, optional
        Truncation level (1 <= n_components <= n).
    threshold : float, optional
        Absolute eigenvalue threshold (> 0). Exactly one of the two must be given.

    Returns
    -------
    ndarray of shape (n,)
    """
    K, y = _check_system(K, y)
    n = K.shape[0]
    if (n_components is None) == (threshold is None):
        raise ValueError("give exactly one of n_components and threshold.")
    mu, U = np.linalg.eigh(K)
    order = np.argsort(-np.abs(mu), kind="stable")
    if n_components is not None:
        if not isinstance(n_components, int | np.integer) or not 1 <= n_components <= n:
            raise ValueError(f"n_components must be an integer in [1, {n}]; got {n_components!r}.")
        keep = order[: int(n_components)]
    else:
        threshold = float(threshold)
        if not (np.isfinite(threshold) and threshold > 0):
            raise ValueError(f"threshold must be finite and > 0; got {threshold!r}.")
        keep = np.flatnonzero(np.abs(mu) > threshold)
    keep = keep[mu[keep] != 0.0]
    Uk = U[:, keep]
    return Uk @ ((Uk.T @ y) / mu[keep])


def _spectral_norm(K: NDArray) -> float:
    """``||K||_2`` by Lanczos (O(n^2) per step) for large ``K``, dense otherwise."""
    n = K.shape[0]
    if n <= 200:
        return float(np.max(np.abs(np.linalg.eigvalsh(K))))
    from scipy.sparse.linalg import eigsh

    v0 = np.ones(n) / np.sqrt(n)
    return float(abs(eigsh(K, k=1, which="LM", v0=v0, return_eigenvectors=False)[0]))


def _spectral_norm_bound(K: NDArray) -> float:
    """Cheap upper bound of ``||K||_2`` (max absolute row sum)."""
    return float(np.max(np.sum(np.abs(K), axis=1)))


def landweber_fridman(
    K: ArrayLike,
    y: ArrayLike,
    *,
    n_iter: int,
    step_size: float | None = None,
    variant: str = "normal",
) -> IterativeSolution:
    """Landweber-Fridman iteration, Ong et al. (2004), Sect. 5.2.

    ``variant="normal"`` (default) is gradient descent on ``J(alpha) = 1/2 ||K alpha - y||^2``,
    the Landweber method for ``K alpha = y`` of Hanke & Hansen (1993), whom Ong et al. cite:
    ``alpha_{k+1} = alpha_k + omega K (y - K alpha_k)``, convergent for
    ``0 < omega < 2 / ||K||^2`` whatever the signs of the eigenvalues; after ``k`` steps the
    eigencomponent ``i`` carries the filter factor ``1 - (1 - omega mu_i^2)^k``.

    ``variant="krein"`` is the paper's formula read with the Krein adjoint,
    ``f_{k+1} = f_k - omega (T*T f_k - T*y)``, i.e. ``alpha_{k+1} = alpha_k + omega (y - K
    alpha_k)`` with subspace ``span{(I - omega K)^k y}``. Its factor ``1 - omega mu_i`` exceeds 1
    on negative eigenvalues, so those components grow geometrically: usable only with few
    iterations (or a positive definite ``K``); kept to reproduce the paper as written.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric Gram matrix.
    y : array_like of shape (n,)
        Targets.
    n_iter : int
        Number of iterations (the regularisation parameter; 0 returns ``alpha = 0``).
    step_size : float, optional
        ``omega``. Default ``1 / ||K||^2`` (normal) or ``1 / ||K||`` (krein).
    variant : {"normal", "krein"}
        See above.

    Returns
    -------
    IterativeSolution
    """
    K, y = _check_system(K, y)
    n_iter = _check_n_iter(n_iter)
    if variant not in ("normal", "krein"):
        raise ValueError(f"variant must be 'normal' or 'krein'; got {variant!r}.")
    norm = _spectral_norm(K)
    if norm == 0.0:
        raise ValueError("K is the zero matrix; the interpolation problem has no solution.")
    if step_size is None:
        omega = 1.0 / norm**2 if variant == "normal" else 1.0 / norm
    else:
        omega = float(step_size)
        if not (np.isfinite(omega) and omega > 0):
            raise ValueError(f"step_size must be finite and > 0; got {step_size!r}.")
        if variant == "normal" and omega >= 2.0 / norm**2:
            raise ValueError(
                f"step_size = {omega:.3g} >= 2/||K||^2 = {2.0 / norm**2:.3g}: the Landweber "
                "iteration would diverge; choose a smaller step."
            )
    alpha = np.zeros_like(y)
    residual = y.copy()
    norms = [float(np.linalg.norm(residual))]
    for _ in range(n_iter):
        direction = K @ residual if variant == "normal" else residual
        alpha += omega * direction
        residual = y - K @ alpha
        norms.append(float(np.linalg.norm(residual)))
    return IterativeSolution(alpha=alpha, n_iter=n_iter, residual_norms=np.asarray(norms))


def mr_ii(
    K: ArrayLike,
    y: ArrayLike,
    *,
    n_iter: int,
    alpha0: ArrayLike | None = None,
    rtol: float = 1e-12,
    breakdown_tol: float = 1e-12,
) -> IterativeSolution:
    """MR-II (Hanke 1995) as given in Ong et al. (2004), Fig. 1.

    One matrix-vector product per iteration. The printed figure lost its minus signs in our
    copy; the recurrence implemented is Hanke's::

        r_0 = y - K x_0;  v_{-1} = w_{-1} = 0;  v_0 = K r_0;  w_0 = K v_0;
        beta = ||w_0||;  v_0 /= beta;  w_0 /= beta
        repeat:  rho = <r_k, w_{k-1}>;  a = <w_{k-1}, K w_{k-1}>
                 x_{k+1} = x_k + rho v_{k-1};  r_{k+1} = r_k - rho w_{k-1}
                 v_k = w_{k-1} - a v_{k-1} - beta v_{k-2}
                 w_k = K w_{k-1} - a w_{k-1} - beta w_{k-2}
                 beta = ||w_k||;  v_k /= beta;  w_k /= beta

    The invariant ``w_k = K v_k`` with orthonormal ``w`` (a Lanczos basis of
    ``K^2 K_k(K, r_0)``) makes ``x_k`` the minimiser of ``||y - K x||`` over
    ``x_0 + span{K r_0, ..., K^k r_0}``.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric (indefinite) Gram matrix.
    y : array_like of shape (n,)
        Targets.
    n_iter : int
        Number of iterations (the regularisation parameter).
    alpha0 : array_like of shape (n,), optional
        Starting point (default 0).
    rtol : float
        Stop early when the updated residual satisfies ``||r_k|| <= rtol ||r_0||``: the system
        is solved to rounding, and further steps only normalise rounding noise (the recursive
        residual then stays tiny while the true one and the iterate blow up; observed on
        clustered spectra).
    breakdown_tol : float
        Stop early when the new Lanczos vector is lost in cancellation,
        ``beta <= breakdown_tol * ||K w_{k-1}||``: the Krylov space is exhausted (``K`` has
        fewer distinct eigenvalues on ``r_0`` than iterations) and the iterate is already the
        least-squares solution over it. Continuing would normalise rounding noise into
        directions of huge norm and destroy the iterate.

    Returns
    -------
    IterativeSolution
    """
    K, y = _check_system(K, y)
    n_iter = _check_n_iter(n_iter)
    n = K.shape[0]
    x = np.zeros(n) if alpha0 is None else check_finite_matrix(alpha0, name="alpha0", ndim=1)
    if x.shape[0] != n:
        raise ValueError(f"alpha0 must have {n} entries; got {x.shape[0]}.")
    x = x.copy()
    r = y - K @ x
    norms = [float(np.linalg.norm(r))]
    v_prev = np.zeros(n)
    w_prev = np.zeros(n)
    v = K @ r
    w = K @ v
    beta = float(np.linalg.norm(w))
    if beta <= breakdown_tol * float(np.linalg.norm(v)) * _spectral_norm_bound(K):
        return IterativeSolution(alpha=x, n_iter=0, residual_norms=np.asarray(norms))
    v /= beta
    w /= beta
    done = 0
    for _ in range(n_iter):
        rho = float(r @ w)
        Kw = K @ w
        a = float(w @ Kw)
        x += rho * v
        r -= rho * w
        norms.append(float(np.linalg.norm(r)))
        done += 1
        if norms[-1] <= rtol * norms[0]:
            break
        v_new = w - a * v - beta * v_prev
        w_new = Kw - a * w - beta * w_prev
        beta = float(np.linalg.norm(w_new))
        if beta <= breakdown_tol * float(np.linalg.norm(Kw)):
            break
        v_prev, w_prev = v, w
        v, w = v_new / beta, w_new / beta
    return IterativeSolution(alpha=x, n_iter=done, residual_norms=np.asarray(norms))
