"""Out-of-sample rules of the proxy-kernel SVMs (paper 004): how new points reach ``K*``.

The operator :class:`indefsvm.proxy.operators.ProxyKernelOperator` defines ``K* = (K0 + sigma u
u')_+`` on
the training points; these functions are the paper's rules that extend it to new points, kept
beside the operator so that estimators call, not implement, them (theory.md §8):

* :func:`projection_coefficients` -- the inductive map ``k_x -> P_+ k_x`` folded into ``n``
  coefficients ``c = P_+ u``, so that a decision is one mat-vec ``k_x' c + b``;
* :func:`transductive_rows` -- the paper's heuristic (Sect. 2.3, published
  ``Ktest_heuristic.m``): clip the spectrum of the full train+test kernel;
* :func:`estimate_intercept_paper` -- the published ``estimate_b.m`` intercept on ``K0``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.utils.blocks import rows_per_block
from indefsvm.utils.validation import check_square_symmetric

__all__ = ["estimate_intercept_paper", "projection_coefficients", "transductive_rows"]

#: Out-of-sample maps of the estimators.
OUT_OF_SAMPLE = ("projection", "transductive")

# Identity rows processed at once when forming P_+ u through the public row map: two n-wide
# float64 blocks are alive per step (the identity rows and the mapped rows). Each call of the
# row map has a per-call cost, so fewer, larger blocks are faster: against the former fixed 512
# rows, 0.070 s vs 0.083 s at n = 1000 and 3.6 s vs 4.1 s at n = 3000 (one thread, medians of 5).
_N_TEMPORARIES = 2


def projection_coefficients(problem: Any, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
    """``c = P_+ u`` (``u = sign * alpha``): the projection map folded into coefficients.

    With ``P_+`` the projector on the non-negative eigenspace of ``M = K0 + sigma u u'`` (notes
    §8), a new point with kernel row ``k_x`` has proxy row ``P_+ k_x`` and decision
    ``(P_+ k_x)' u + b = k_x' c + b``. ``c`` is formed through the problem's public row map
    ``out_of_sample_rows`` applied to blocks of the identity (within
    :data:`~indefsvm.utils.blocks.BLOCK_BYTES`).

    Parameters
    ----------
    problem : ProxyKernelProblem
        The fitted problem (``sign``, ``state``, ``out_of_sample_rows``).
    alpha : ndarray of shape (n,)
        Dual solution.

    Returns
    -------
    ndarray of shape (n,)
    """
    u = problem.sign * alpha
    state = problem.state(alpha)
    n = problem.n
    coef = np.empty(n)
    step = rows_per_block(n, _N_TEMPORARIES)
    for start in range(0, n, step):
        stop = min(n, start + step)
        eye_rows = np.zeros((stop - start, n))
        eye_rows[np.arange(stop - start), np.arange(start, stop)] = 1.0
        coef[start:stop] = problem.out_of_sample_rows(alpha, eye_rows, state=state) @ u
    return coef


def estimate_intercept_paper(
    alpha: ArrayLike,
    K0: ArrayLike,
    y_pm: ArrayLike,
    upper: ArrayLike,
    *,
    threshold: float = 1e-3,
) -> float:
    """Intercept of the published IndefiniteSVM code (``estimate_b.m``).

    ``b = mean_{i free} (y_i - (K0 Y alpha)_i)`` over the free support vectors
    ``threshold < alpha_i < C_i - threshold``, computed with the ORIGINAL training kernel ``K0``
    (not the proxy kernel); 0 when no support vector is free.

    Parameters
    ----------
    alpha : array_like of shape (n,)
        Dual solution of eq. (7).
    K0 : array_like of shape (n, n)
        Original training kernel.
    y_pm : array_like of shape (n,)
        Labels in {-1, +1}.
    upper : array_like of shape (n,)
        Box bounds ``C_i`` (with the class weights used in training).
    threshold : float
        Distance from the bounds below which a coefficient counts as at the bound (1e-3 in the
        published code).
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    y_pm = np.asarray(y_pm, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    free = (alpha > threshold) & (alpha < upper - threshold)
    if not np.any(free):
        return 0.0
    if hasattr(K0, "matvec"):  # a LowRankKernel: O(nm), no n x n array
        g = K0.matvec(alpha * y_pm)[free]
    else:
        g = np.asarray(K0, dtype=np.float64)[free] @ (alpha * y_pm)
    return float(np.mean(y_pm[free] - g))


def transductive_rows(
    K0: ArrayLike,
    u: ArrayLike,
    rho: float,
    K_test_train: ArrayLike,
    K_test_test: ArrayLike,
) -> NDArray[np.float64]:
    """Test-vs-train proxy-kernel rows of the paper's heuristic (Sect. 2.3).

    As the published ``Ktest_heuristic.m``: the full kernel ``[[K0, K_tr_te], [K_te_tr,
    K_te_te]]`` gets the rank-one update ``u u' / (4 rho)`` on its training block, its negative
    eigenvalues are set to zero, and the test-vs-train block is returned.

    Parameters
    ----------
    K0 : array_like of shape (n, n)
        Original training kernel.
    u : array_like of shape (n,)
        ``Y alpha`` (classification) or ``alpha`` (regression, one-class).
    rho : float
        Scalar penalty of the fitted problem.
    K_test_train : array_like of shape (m, n)
    K_test_test : array_like of shape (m, m)

    Returns
    -------
    ndarray of shape (m, n)
    """
    K0 = np.asarray(K0, dtype=np.float64)
    n = K0.shape[0]
    R = np.asarray(K_test_train, dtype=np.float64)
    m = R.shape[0]
    T = check_square_symmetric(K_test_test, name="K_test_test")
    if T.shape[0] != m:
        raise ValueError(
            f"K_test_test must be ({m}, {m}) for the {m} test rows of K_test_train; got {T.shape}."
        )
    u = np.asarray(u, dtype=np.float64)
    full = np.empty((n + m, n + m))
    full[:n, :n] = K0 + np.outer(u, u) / (4.0 * float(rho))
    full[n:, :n] = R
    full[:n, n:] = R.T
    full[n:, n:] = T
    lam, V = np.linalg.eigh(full)
    pos = lam > 0
    # Only the test rows of V diag(lam_+) V' are needed.
    return (V[n:, pos] * lam[pos]) @ V[:n, pos].T
