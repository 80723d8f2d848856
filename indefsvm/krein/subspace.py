"""Ong et al. (2004), Sect. 5: regularisation by subspace for the indefinite interpolation problem.

The interpolation problem ``f(x_i) = y_i`` with ``f = sum_i alpha_i k(x_i, .)`` is the linear
system ``K alpha = y`` with an indefinite Gram matrix ``K``. Tikhonov regularisation
``(K + lambda I) alpha = y`` can be singular when ``-lambda`` is an eigenvalue of ``K`` (their
Sect. 4.2), so they set ``lambda = 0`` and restrict the solution to a small subspace (their
eq. 5). The regularisation parameter is the truncation level or the iteration count:

* :func:`truncated_spectral_factorization` (TSF, Sect. 5.1) keeps the eigenpairs of largest
  ``|mu_i|``: ``alpha = sum_{kept} u_i (u_i'y) / mu_i``.
* :func:`landweber_fridman` (LF, Sect. 5.2): gradient descent on ``J = 1/2 ||T f - y||^2``,
  by default in the Hilbert space associated with the Krein space (the reading that
  reproduces their Fig. 2); Hanke & Hansen's normal-equation variant and the formula with the
  Krein adjoint as printed are options.
* :func:`mr_ii` (MR-II, Hanke 1995; their Fig. 1): the minimal-residual Krylov method for
  symmetric indefinite systems; iterate ``k`` minimises ``||y - K alpha||`` over
  ``alpha_0 + span{K r_0, ..., K^k r_0}`` (full reorthogonalisation by default, so that this
  holds in floating point beyond the first few iterations).

A zero kernel matrix is refused by all three with the same ``ValueError`` (see
:func:`_check_system`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.utils.validation import check_finite_matrix, check_square_symmetric

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


_EPS = float(np.finfo(np.float64).eps)

#: Kernel scale bounds: below, ``K`` is treated as numerically zero; ``K @ K`` (Landweber's
#: normal equations, MR-II's ``w = K v``) would under- or overflow outside ``[1e-150, 1e150]``.
_SCALE_MIN = 1e-150
_SCALE_MAX = 1e150


def _check_system(K: ArrayLike, y: ArrayLike) -> tuple[NDArray, NDArray]:
    """Validate ``K alpha = y``; refuse a zero (or unusably scaled) ``K`` the same way everywhere.

    A zero kernel makes every coefficient vector fit equally badly (``K alpha = 0``): the
    interpolation problem has no solution and no subspace carries information, so all three
    methods of Ong et al. (TSF, Landweber-Fridman, MR-II) raise the same ``ValueError`` instead
    of returning a meaningless ``alpha`` (TSF and MR-II used to return 0 silently, Landweber
    raised). It is nearly always a kernel-parameter mistake (e.g. a bandwidth far below the
    distances between points, so that ``exp(-gamma d^2)`` underflows).
    """
    K = check_square_symmetric(K, name="K")
    y = check_finite_matrix(y, name="y", ndim=1)
    if y.shape[0] != K.shape[0]:
        raise ValueError(
            f"y has {y.shape[0]} entries but K has {K.shape[0]} rows; expected one per row."
        )
    scale = float(np.max(np.abs(K))) if K.size else 0.0
    if scale == 0.0:
        raise ValueError(
            "K is the zero matrix (numerically zero kernel): K alpha = 0 for every alpha, so the "
            "interpolation problem K alpha = y has no solution and no subspace method applies. "
            "Check the kernel and its scale parameters (e.g. a bandwidth far smaller than the "
            "distances between points makes exp(-gamma d^2) underflow to 0)."
        )
    if not _SCALE_MIN <= scale <= _SCALE_MAX:
        raise ValueError(
            f"K is numerically unusable: max |K_ij| = {scale:.3g} lies outside [{_SCALE_MIN:g}, "
            f"{_SCALE_MAX:g}], where products with K under- or overflow. Rescale K by a constant "
            "c (the solution of (c K) alpha = y is alpha / c)."
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


def _fundamental_symmetry(K: NDArray) -> NDArray:
    """``J = sign(K) = U sign(mu) U'``: the fundamental symmetry of the Krein space on the data.

    ``J K = |K|``; zero eigenvalues get sign 0 (no component of ``alpha`` is moved there).
    """
    mu, U = np.linalg.eigh(K)
    # Eigenvalues below the numerical-rank tolerance are rounding noise of a zero eigenvalue.
    sign = np.where(np.abs(mu) > K.shape[0] * _EPS * np.max(np.abs(mu)), np.sign(mu), 0.0)
    return (U * sign) @ U.T


LANDWEBER_VARIANTS = ("hilbert", "normal", "krein")


def landweber_fridman(
    K: ArrayLike,
    y: ArrayLike,
    *,
    n_iter: int,
    step_size: float | None = None,
    variant: str = "hilbert",
) -> IterativeSolution:
    """Landweber-Fridman iteration, Ong et al. (2004), Sect. 5.2.

    The paper minimises ``J(f) = 1/2 ||T f - y||^2`` by gradient descent,
    ``f_{k+1} = f_k - omega (T^# T f_k - T^# y)`` (their Sect. 5.2, after Hanke & Hansen 1993),
    where ``T`` evaluates ``f`` at the training points and ``T^#`` is an adjoint of ``T``. With
    ``f = sum_i alpha_i k(x_i, .)`` the three readings of the adjoint give three iterations on
    the coefficients, all with one product with ``K`` per step (plus ``J`` for "hilbert"):

    ``variant="hilbert"`` (default)
        ``T^#`` is the adjoint in the Hilbert space associated with the Krein space
        (``H = K_+ (+) K_-``, the paper's Sect. 2; the gradient of the convex ``J`` is only
        defined with respect to a Hilbert inner product), ``T^# = J T*`` with the fundamental
        symmetry ``J``, which on the data is ``sign(K) = U sign(mu) U'``:
        ``alpha_{k+1} = alpha_k + omega sign(K) (y - K alpha_k)``. Filter factor
        ``1 - (1 - omega |mu_i|)^k``, convergent for ``0 < omega < 2/||K||``; default
        ``omega = 1/||K||``. This is the paper's formula exactly when ``K`` is positive
        semi-definite (``J = I``) and the reading that reproduces paper 002's Fig. 2 and its
        "30 iterations" for LF on the sinc toy (``experiments/ong_fig2.py``,
        ``docs/krein.md``): on the sinc toy the RMSE is at its minimum (0.071, TSF 0.077,
        MR-II 0.087 after 8 iterations) after 30 iterations. Costs one eigendecomposition for
        ``sign(K)`` (O(n^3), as TSF).
    ``variant="normal"``
        Hanke & Hansen's (1993) Landweber method for the symmetric system, gradient descent in
        the Euclidean coefficient space: ``alpha_{k+1} = alpha_k + omega K (y - K alpha_k)``,
        filter ``1 - (1 - omega mu_i^2)^k``, convergent for ``0 < omega < 2/||K||^2``
        (default ``1/||K||^2``). No eigendecomposition, but the filter moves as ``mu^2``
        instead of ``|mu|``: components with ``|mu_i| = 0.03 ||K||`` need ~30 times more
        iterations than with "hilbert" (sinc toy of ``experiments/ong_fig2.py``, mean of 100
        runs: RMSE 0.170 after 30 iterations and 0.075 after 1000, where "hilbert" has 0.071
        after 30).
    ``variant="krein"``
        The paper's formula with the Krein adjoint ``T*`` (``T* T = K``) as printed:
        ``alpha_{k+1} = alpha_k + omega (y - K alpha_k)``, subspace
        ``span{(I - omega K)^k y}``, filter ``1 - (1 - omega mu_i)^k``; default
        ``omega = 1/||K||``. The factor ``1 - omega mu_i`` exceeds 1 on negative eigenvalues,
        so those components grow geometrically (sinc toy: RMSE 9.0 after 8 and 3.5e5 after 30
        iterations): usable only with few iterations or a positive definite ``K``; kept to
        reproduce the formula as written.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric Gram matrix (not the zero matrix).
    y : array_like of shape (n,)
        Targets.
    n_iter : int
        Number of iterations (the regularisation parameter; 0 returns ``alpha = 0``).
    step_size : float, optional
        ``omega``. Default ``1/||K||`` ("hilbert", "krein") or ``1/||K||^2`` ("normal").
    variant : {"hilbert", "normal", "krein"}
        See above.

    Returns
    -------
    IterativeSolution
    """
    K, y = _check_system(K, y)
    n_iter = _check_n_iter(n_iter)
    if variant not in LANDWEBER_VARIANTS:
        raise ValueError(f"variant must be one of {LANDWEBER_VARIANTS}; got {variant!r}.")
    norm = _spectral_norm(K)
    if variant == "normal":
        limit, default = 2.0 / norm**2, 1.0 / norm**2
    else:
        limit, default = 2.0 / norm, 1.0 / norm
    if step_size is None:
        omega = default
    else:
        omega = float(step_size)
        if not (np.isfinite(omega) and omega > 0):
            raise ValueError(f"step_size must be finite and > 0; got {step_size!r}.")
        if variant != "krein" and omega >= limit:
            bound = "2/||K||^2" if variant == "normal" else "2/||K||"
            raise ValueError(
                f"step_size = {omega:.3g} >= {bound} = {limit:.3g}: the Landweber "
                "iteration would diverge; choose a smaller step."
            )
    J = _fundamental_symmetry(K) if variant == "hilbert" and n_iter > 0 else None
    alpha = np.zeros_like(y)
    residual = y.copy()
    norms = [float(np.linalg.norm(residual))]
    for _ in range(n_iter):
        if variant == "normal":
            direction = K @ residual
        elif variant == "hilbert":
            direction = J @ residual
        else:
            direction = residual
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
    reorthogonalize: bool = True,
) -> IterativeSolution:
    """MR-II (Hanke 1995) as given in Ong et al. (2004), Fig. 1, with full reorthogonalisation.

    One matrix-vector product per iteration. The printed figure lost its minus signs in our
    copy; the recurrence implemented is Hanke's::

        r_0 = y - K x_0;  v_{-1} = w_{-1} = 0;  v_0 = K r_0;  w_0 = K v_0;
        beta = ||w_0||;  v_0 /= beta;  w_0 /= beta
        repeat:  rho = <r_k, w_{k-1}>;  a = <w_{k-1}, K w_{k-1}>
                 x_{k+1} = x_k + rho v_{k-1};  r_{k+1} = r_k - rho w_{k-1}
                 v_k = w_{k-1} - a v_{k-1} - beta v_{k-2}
                 w_k = K w_{k-1} - a w_{k-1} - beta w_{k-2}
                 beta = ||w_k||;  v_k /= beta;  w_k /= beta

    In exact arithmetic the invariant ``w_k = K v_k`` with orthonormal ``w`` (a Lanczos basis
    of ``K K_k(K, K r_0)``) makes ``x_k`` the minimiser of ``||y - K x||`` over
    ``x_0 + span{K r_0, ..., K^k r_0}``. In floating point the three-term recurrence loses the
    orthogonality of the ``w`` as soon as Ritz values converge (Paige 1976), and with it the
    minimisation: on a sigmoid kernel (n = 100) the plain recurrence stays 6% above the minimal
    residual after 30 iterations (3.449 vs 3.247; ``tests/krein/test_subspace.py``).

    ``reorthogonalize=True`` (default) therefore orthogonalises each new ``w_k`` against all
    previous ones (classical Gram-Schmidt, applied twice, "twice is enough"; the same
    combination is subtracted from ``v_k`` so that ``w_k = K v_k`` still holds). Cost: O(n k)
    extra work and memory per iteration on top of the O(n^2) product with ``K``; the iterate
    is then the Krylov minimiser to rounding for every ``k``. ``reorthogonalize=False`` is the
    plain recurrence of the paper (O(n) memory), exact only while orthogonality lasts
    (about 8-15 iterations on kernel matrices; the paper used 8).

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric (indefinite) Gram matrix (not the zero matrix).
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
        ``beta <= breakdown_tol * ||K||`` (``||K||`` bounded by the largest absolute row sum):
        the Krylov space is exhausted (``K`` has fewer distinct eigenvalues above
        ``breakdown_tol * ||K||`` on ``r_0`` than iterations) and the iterate is already the
        least-squares solution over it (for a rank-deficient ``K``, the minimum-norm one).
        Continuing would normalise rounding noise into
        directions of huge norm and destroy the iterate.
    reorthogonalize : bool
        Full reorthogonalisation (default) or the paper's plain recurrence.

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
    if norms[0] == 0.0:
        return IterativeSolution(alpha=x, n_iter=0, residual_norms=np.asarray(norms))
    v_prev = np.zeros(n)
    w_prev = np.zeros(n)
    v = K @ r
    w = K @ v
    beta = float(np.linalg.norm(w))
    # Breakdown is judged against ||K|| (a bound), not against ||K w||: once the Krylov space
    # holds the numerical range of K, the next w lives in the null space, where ||K w|| is
    # itself rounding noise and a relative test would never fire (rank-3 kernel: |x| ~ 1e14).
    k_scale = _spectral_norm_bound(K)
    if beta <= breakdown_tol * float(np.linalg.norm(v)) * k_scale:
        return IterativeSolution(alpha=x, n_iter=0, residual_norms=np.asarray(norms))
    v /= beta
    w /= beta
    # Columns of W (orthonormal, W = K V) and V, kept only for reorthogonalisation.
    size = min(n_iter, n) + 1 if reorthogonalize else 0
    W = np.empty((n, size))
    V = np.empty((n, size))
    done = 0
    for _ in range(n_iter):
        if reorthogonalize:
            W[:, done] = w
            V[:, done] = v
        rho = float(r @ w)
        Kw = K @ w
        a = float(w @ Kw)
        x += rho * v
        r -= rho * w
        norms.append(float(np.linalg.norm(r)))
        done += 1
        if norms[-1] <= rtol * norms[0] or (reorthogonalize and done >= n):
            break
        v_new = w - a * v - beta * v_prev
        w_new = Kw - a * w - beta * w_prev
        if reorthogonalize:
            Wd, Vd = W[:, :done], V[:, :done]
            for _pass in range(2):
                c = Wd.T @ w_new
                w_new -= Wd @ c
                v_new -= Vd @ c
        beta = float(np.linalg.norm(w_new))
        if beta <= breakdown_tol * k_scale:
            break
        v_prev, w_prev = v, w
        v, w = v_new / beta, w_new / beta
    return IterativeSolution(alpha=x, n_iter=done, residual_norms=np.asarray(norms))
