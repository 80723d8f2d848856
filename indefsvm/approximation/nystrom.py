"""Nystroem approximation of indefinite (Krein) kernels (Oglic & Gaertner 2019, Sect. 2.2-2.3).

For landmarks ``Z`` (a subset of the training points) the Nystroem approximation of a Krein
kernel matrix is eq. (3) of paper 003,

    K_X|Z = K_XZ K_ZZ^{-1} K_ZX,

valid for an indefinite ``K_ZZ`` (the projection onto the span of the landmark evaluation
functionals exists when ``K_ZZ`` is non-singular; when it is singular we use the pseudo-inverse
of ``K_ZZ`` over its eigenvalues ``|d| > rcond * max|d|``). :class:`IndefiniteNystroem` returns
features ``Phi`` and a signature ``s`` (+-1 per column) with

    K_X|Z = Phi diag(s) Phi',

computed by the plain factor (default; below) or the one-shot approximate eigendecomposition
of Sect. 2.2: with
``K_ZZ = U D U'``, ``L = K_XZ U |D|^{-1/2}``, ``S = sign(D)``, the thin SVD ``L = A Sigma B'``
and the eigendecomposition ``M = Sigma B' S B Sigma = P Lambda P'``, we have
``K_X|Z = (AP) Lambda (AP)'`` with orthonormal ``AP``; the features are
``Phi = A P |Lambda|^{1/2}`` and ``s = sign(Lambda)``. Because ``A = L B Sigma^{-1}``,
``Phi = K_XZ W`` with the ``(m, r)`` matrix ``W = U |D|^{-1/2} B Sigma^{-1} P |Lambda|^{1/2}``
(:attr:`IndefiniteNystroem.components_`): the same map is the out-of-sample extension of
Sect. 2.2 (``k_x' K_ZZ^{-1} K_ZX``), no transductive step.

The factor ``Sigma, B`` of the thin SVD of ``L`` (n x m) comes from a tall-skinny QR of the
kernel rows ``K_XZ = Q R0`` computed over row blocks (the R factor of ``[R0; K_block]`` is
updated block by block): ``L = Q (R0 W0)`` with ``W0 = U |D|^{-1/2}``, so the SVD of the
``m x r`` matrix ``R0 W0`` gives ``Sigma`` and ``B``. This is as accurate as an SVD of ``L``
itself (backward stable QR), needs only O(m^2) memory beyond one row block, never forms an
``n x n`` array (nor ``L``), and costs ``2 m^2 n + O(m^3)`` flops for ``fit``; ``fit_transform``
adds the ``m r n`` product ``Phi = K_XZ W`` on the kernel rows it kept from the same pass (the
kernel is evaluated once): ``3 m^2 n + O(m^3)``, the paper's bound.

Landmarks (Sect. 2.3): ``"uniform"``; ``"leverage"`` (approximate statistical leverage scores
``l(x_i) = ||U_(i)||^2`` of a one-shot sketch built on ``sketch_size`` uniformly sampled points,
then ``m`` points sampled with probability proportional to ``l``); ``"kmeans++"`` (approximate
kernel k-means++ seeding, Arthur & Vassilvitskii 2007, in the feature space ``L = U |Lambda|^{1/2}``
of the flip-spectrum ``H = L L'`` of the same sketch). Both cost ``O(n * sketch_size)`` per pass
(k-means++: ``O(n * sketch_size * m)`` in total, it is sequential in the ``m`` centroids).

Dask arrays (one fit on a cluster). With ``X`` a ``dask.array`` chunked by rows, only
the ``m`` landmark rows come to the client (uniform landmarks: the same seeded indices as in
memory); ``K_ZZ`` and every ``O(m^3)`` step run there. The pass over the data is a distributed
tall-skinny QR: each worker evaluates ``k(X_chunk, Z)`` for its chunks and reduces it to its R
factor (``m x m``), and the R factors are combined pairwise on the workers (the R factor of two
stacked R factors), so one ``m x m`` matrix reaches the client. A TSQR and not the Gram reduction
``K_XZ' K_XZ``, although that is the same single pass and the same traffic: the Gram squares the
condition number of ``L`` (``Sigma^2`` is bounded below only by the kept ``|d|``, down to
``rcond * max|d|``), and the TSQR reproduces the in-memory factorisation to rounding (tests: to
``1e-10`` relative). Our own tree rather than ``dask.array.linalg.tsqr``: that one also builds
``Q`` (n x m) block by block, which the Nystroem map never needs. ``transform`` evaluates
``k(X_chunk, Z) W`` chunk by chunk on the workers (``map_blocks``) and returns a dask array with
``X``'s row chunks, persisted on the workers when a ``distributed.Client`` is active (the factor
stays there, dask-ml's convention), lazy otherwise; ``fit_transform`` evaluates the kernel twice
(once for the R factor, once for ``Phi``) instead of keeping ``K_XZ`` on the workers, so their
peak memory is the ``n x r`` factor, not ``n x m`` more. ``"leverage"`` landmarks: the sketch as
in memory, scores on the workers, the weighted draw by per-chunk Efraimidis-Spirakis keys (one
pass). ``"kmeans++"`` (sequential in the ``m`` centres) is refused for a dask ``X``. The fitted
map holds only numpy arrays: it pickles and transforms numpy input in memory.

References
----------
D. Oglic, T. Gaertner. Scalable learning in reproducing kernel Krein spaces. ICML 2019
(paper 003), Sect. 2.2 (eq. 3 and the one-shot eigendecomposition) and Sect. 2.3.
P. S. Efraimidis, P. G. Spirakis. Weighted random sampling with a reservoir. Information
Processing Letters 97(5), 2006.
C. Fowlkes, S. Belongie, F. Chung, J. Malik. Spectral grouping using the Nystroem method.
IEEE TPAMI 26(2), 2004.
D. Arthur, S. Vassilvitskii. k-means++: the advantages of careful seeding. SODA 2007.
"""

from __future__ import annotations

import logging
import numbers
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from indefsvm.linalg.factor import compact_columns
from indefsvm.threads import threaded_fit
from indefsvm.utils.blocks import rows_per_block
from indefsvm.utils.constraints import set_init_parameters
from indefsvm.utils.dask_rows import is_dask_array
from indefsvm.utils.progress import LONG_FIT_ROWS, ProgressBar, ensure_visible, progress_bar
from indefsvm.utils.validation import check_finite_matrix, check_square_symmetric, is_real

__all__ = [
    "LANDMARK_METHODS",
    "IndefiniteNystroem",
    "one_shot_eigendecomposition",
    "select_landmarks",
]

logger = logging.getLogger(__name__)

#: Landmark selection schemes of Sect. 2.3 (plus uniform sampling).
LANDMARK_METHODS = ("uniform", "kmeans++", "leverage")

#: Landmark schemes available for a dask ``X`` (the others need sequential passes).
DASK_LANDMARK_METHODS = ("uniform", "leverage")

#: Factorisations: the one-shot eigendecomposition of Sect. 2.2 or the plain factor ``L, S``.
FACTORIZATIONS = ("one-shot", "plain")

#: Default relative cut-off of the pseudo-inverse of ``K_ZZ``: eigenvalues with
#: ``|d| <= rcond * max|d|`` are dropped. 1e-10 keeps the condition number of ``L`` (whose
#: squared singular values are bounded below by the kept ``|d|``) within what double precision
#: resolves, while the dropped part changes ``K_X|Z`` by at most ``~1e-10 max|d|`` per entry.
DEFAULT_RCOND = 1e-10

#: A map's eigenvalue beyond this many times the Gershgorin bound ``n max|k(x, z)|`` of the
#: kernel entries seen comes from a nearly singular ``K_ZZ``, not from the kernel
#: (:func:`_bounded_one_shot`).
_BOUND_FACTOR = 10.0


def _rows_per_block(n_cols: int) -> int:
    """Rows per block of kernel values (:data:`indefsvm.utils.blocks.BLOCK_BYTES`, plus the
    same again for the feature block), at most 65536."""
    return int(min(65536, rows_per_block(n_cols)))


def _blocks(n: int, rows: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, rows):
        yield start, min(n, start + rows)


def _progress(total: int, desc: str, enabled: bool) -> ProgressBar:
    """A bar over ``total`` rows when enabled, or by default for a long pass
    (:data:`~indefsvm.utils.progress.LONG_FIT_ROWS` rows), and stderr is a terminal (else a
    no-op bar)."""
    wanted = enabled or total >= LONG_FIT_ROWS
    return progress_bar(total, desc=desc, unit="rows", enabled=None if wanted else False)


def _resolve_kernel_function(kernel: str | Callable[..., Any]) -> Callable[..., Any]:
    # Imported lazily: keeps "import indefsvm.approximation.nystrom" light (the registry pulls in
    # all kernels).
    from indefsvm.kernels.registry import resolve_kernel

    if isinstance(kernel, str) and kernel == "precomputed":
        raise ValueError(
            "IndefiniteNystroem needs kernel evaluations k(X, Z) on raw inputs; "
            "kernel='precomputed' is not supported (pass a kernel name or a callable)."
        )
    function = resolve_kernel(kernel)
    assert function is not None
    return function


def _check_rng(random_state: Any) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    return np.random.default_rng(random_state)


class _KernelRows:
    """Evaluate ``k(X[block], Z)`` with the kernel parameters of an estimator."""

    def __init__(self, function: Callable[..., Any], params: dict[str, Any], name: Any):
        self.function = function
        self.params = params
        self.name = name

    def __call__(self, X: Any, Z: Any) -> NDArray[np.float64]:
        try:
            K = self.function(X, Z, **self.params)
        except TypeError as exc:
            raise TypeError(
                f"calling kernel {self.name!r} with parameters {self.params} failed: {exc}"
            ) from exc
        K = np.asarray(K, dtype=np.float64)
        expected = (len(X), len(Z))
        if K.shape != expected:
            raise ValueError(f"kernel {self.name!r} returned shape {K.shape}; expected {expected}.")
        if not np.all(np.isfinite(K)):
            raise ValueError(f"kernel {self.name!r} returned NaN or inf values.")
        return K


def _landmark_factor(
    K_ZZ: NDArray[np.float64], rcond: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``W0 = U_r |D_r|^{-1/2}``, ``S = sign(D_r)`` and all eigenvalues ``d`` of ``K_ZZ``.

    ``r`` counts the eigenvalues with ``|d| > rcond * max|d|`` (pseudo-inverse otherwise).
    """
    K_ZZ = 0.5 * (K_ZZ + K_ZZ.T)
    # divide and conquer (LAPACK syevd): half the time of scipy's default MRRR driver at m = 500
    d, U = scipy.linalg.eigh(K_ZZ, driver="evd", check_finite=False)
    scale = float(np.max(np.abs(d))) if d.size else 0.0
    keep = np.abs(d) > rcond * scale
    if not np.any(keep):
        raise ValueError(
            "the landmark kernel matrix K_ZZ is zero (no eigenvalue above "
            f"rcond * max|d| = {rcond * scale:.3g}); the Nystroem approximation is empty."
        )
    d_r = d[keep]
    W0 = U[:, keep] / np.sqrt(np.abs(d_r))
    return W0, np.sign(d_r), d


def _small_eigenproblem(
    R: NDArray[np.float64], S: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The small problem of the one-shot factorisation: ``R = Ur Sigma B'`` (thin SVD) and
    ``M = Sigma B'SB Sigma = P Lambda P'``, eigenpairs sorted by ``|Lambda|`` (largest first).

    Returns ``sigma, B', Lambda, P``.
    """
    _, sigma, Bt = scipy.linalg.svd(R, full_matrices=False, check_finite=False)
    if sigma[-1] <= 0.0:
        raise np.linalg.LinAlgError(
            "the Nystroem factor L is rank deficient (zero singular value)."
        )
    C = Bt * sigma[:, None]  # Sigma B'
    M = (C * S[None, :]) @ C.T
    M = 0.5 * (M + M.T)
    lam, P = scipy.linalg.eigh(M, driver="evd", check_finite=False)
    order = np.argsort(-np.abs(lam), kind="stable")
    return sigma, Bt, lam[order], P[:, order]


def _one_shot(
    R: NDArray[np.float64], S: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """From ``L = Q R`` and ``S``: ``(T, Lambda, Sigma)`` with ``Phi = L T`` (Sect. 2.2).

    ``R = Ur Sigma B'`` gives the thin SVD ``L = (Q Ur) Sigma B'``; ``M = Sigma B'SB Sigma =
    P Lambda P'``; ``T = B Sigma^{-1} P |Lambda|^{1/2}``, columns sorted by ``|Lambda|``
    (largest first).
    """
    sigma, Bt, lam, P = _small_eigenproblem(R, S)
    T = (Bt.T / sigma[None, :]) @ (P * np.sqrt(np.abs(lam))[None, :])
    return _canonical_signs(T), lam, sigma


def _one_shot_few_rows(
    R: NDArray[np.float64], S: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """:func:`_one_shot` for fewer rows than kernel directions (``L = A Sigma B'`` with a
    non-square ``B``, e.g. a few points against many landmarks).

    ``T = B Sigma^{-1} P |Lambda|^{1/2}`` still factorises the training kernel, but a new row
    ``l`` would lose its part outside ``range(B)``: ``l T sign(Lambda) T' L' = l B B' S L'``
    instead of the Nystroem row ``l S L'``. ``T = S B Sigma P |Lambda|^{-1/2} sign(Lambda)``
    gives the same training features (``L T = A M P |Lambda|^{-1/2} sign = A P |Lambda|^{1/2}``)
    and the exact rows ``l T sign(Lambda) Phi' = l S B Sigma A' = l S L'`` for every ``l``.
    Directions with ``|Lambda|`` at rounding level are dropped (they carry no kernel mass).
    """
    sigma, Bt, lam, P = _small_eigenproblem(R, S)
    keep = np.abs(lam) > max(R.shape) * np.finfo(np.float64).eps * np.max(np.abs(lam))
    lam, P = lam[keep], P[:, keep]
    T = ((Bt.T * S[:, None]) * sigma[None, :]) @ (P * (np.sign(lam) / np.sqrt(np.abs(lam))))
    return _canonical_signs(T), lam, sigma


def _canonical_signs(T: NDArray[np.float64]) -> NDArray[np.float64]:
    """``T`` with each column's entry of largest magnitude made positive.

    A feature column is defined up to its sign (that of an eigenvector), and which sign LAPACK
    returns depends on how ``R`` was computed: the in-memory QR and the TSQR of a dask ``X``
    give ``R`` up to the signs of its rows, hence different signs of ``T``. The convention makes
    both paths (and every quantity in feature space, e.g. ``feature_coef_``) agree.
    """
    rows = np.argmax(np.abs(T), axis=0)
    signs = np.sign(T[rows, np.arange(T.shape[1])])
    return T * np.where(signs == 0, 1.0, signs)[None, :]


def one_shot_eigendecomposition(
    K_nm: ArrayLike, K_mm: ArrayLike, *, rcond: float = DEFAULT_RCOND
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Approximate low-rank eigendecomposition of an indefinite kernel from its Nystroem factors.

    The one-shot method of paper 003, Sect. 2.2, applied to given kernel blocks: with
    ``K_mm = U D U'``, ``L = K_nm U |D|^{-1/2}``, ``S = sign(D)``, the thin SVD
    ``L = A Sigma B'`` and ``M = Sigma B' S B Sigma = P Lambda P'``, the Nystroem matrix of
    eq. (3) is ``K_nm K_mm^{-1} K_mn = (AP) Lambda (AP)'`` with orthonormal ``AP``. The SVD of
    ``L`` is taken from the QR factorisation ``K_nm = Q R0`` (``L = Q (R0 U |D|^{-1/2})``), as in
    :meth:`IndefiniteNystroem.fit`; the eigenvectors are ``Q Ur P`` with ``R0 U |D|^{-1/2} =
    Ur Sigma B'``. Cost: ``2 m^2 n`` for the QR, ``2 m r n`` for the eigenvectors, ``O(m^3)``
    for the rest.

    Parameters
    ----------
    K_nm : array_like of shape (n, m)
        Kernel values ``k(x_i, z_j)`` between the ``n`` points and the ``m`` landmarks.
    K_mm : array_like of shape (m, m)
        Kernel matrix of the landmarks (symmetric, possibly indefinite).
    rcond : float, default :data:`DEFAULT_RCOND`
        Relative cut-off of the pseudo-inverse of ``K_mm`` (eigenvalues with
        ``|d| <= rcond * max|d|`` are dropped), in ``(0, 1)``.

    Returns
    -------
    eigenvalues : ndarray of shape (r,)
        The non-zero eigenvalues ``Lambda`` of ``K_nm K_mm^+ K_mn``, sorted by decreasing
        magnitude (``r <= min(n, m)``).
    eigenvectors : ndarray of shape (n, r)
        Orthonormal eigenvectors ``AP`` (columns in the order of ``eigenvalues``).

    References
    ----------
    D. Oglic, T. Gaertner. Scalable learning in reproducing kernel Krein spaces. ICML 2019
    (paper 003), Sect. 2.2, eq. (3).
    """
    K_nm = check_finite_matrix(K_nm, name="K_nm")
    n, m = K_nm.shape
    if n == 0 or m == 0:
        raise ValueError(f"K_nm must have at least one row and one column; got shape {(n, m)}.")
    K_mm = check_square_symmetric(K_mm, name="K_mm")
    if K_mm.shape != (m, m):
        raise ValueError(
            f"K_mm must be the ({m}, {m}) landmark block matching K_nm's {m} columns; "
            f"got shape {K_mm.shape}."
        )
    if not is_real(rcond) or not 0.0 < float(rcond) < 1.0:
        raise ValueError(f"rcond must be a real number in (0, 1); got {rcond!r}.")
    W0, S, _ = _landmark_factor(K_mm, float(rcond))
    Q, R0 = scipy.linalg.qr(K_nm, mode="economic", check_finite=False)
    R = R0 @ W0
    if R.shape[0] >= R.shape[1]:
        T, lam, _ = _one_shot(R, S)
    else:
        T, lam, _ = _one_shot_few_rows(R, S)
    # R T |Lambda|^{-1/2} = Ur P: orthonormal columns, so Q (Ur P) is orthonormal to rounding.
    small = (R @ T) / np.sqrt(np.abs(lam))[None, :]
    return lam, Q @ small


def _stack_r(R: NDArray[np.float64], C: NDArray[np.float64]) -> NDArray[np.float64]:
    """R factor of ``[R; C]`` (at most as many rows as columns): one step of a tall-skinny QR."""
    R = scipy.linalg.qr(
        np.vstack([R, np.asarray(C, dtype=np.float64)]),
        mode="r",
        overwrite_a=True,
        check_finite=False,
    )[0]
    return R[: min(R.shape[0], R.shape[1])]


def _chunk_r(X_chunk: Any, rows: _KernelRows, Z: Any) -> tuple[NDArray[np.float64], float]:
    """R factor of the kernel rows ``k(X_chunk, Z)`` (a leaf of the distributed TSQR) and their
    largest magnitude."""
    C = rows(X_chunk, Z)
    top = float(np.max(np.abs(C))) if C.size else 0.0
    return _stack_r(np.zeros((0, len(Z))), C), top


def _stack_r_max(
    a: tuple[NDArray[np.float64], float], b: tuple[NDArray[np.float64], float]
) -> tuple[NDArray[np.float64], float]:
    return _stack_r(a[0], b[0]), max(a[1], b[1])


def _bounded_one_shot(
    R0: NDArray[np.float64], W0: NDArray[np.float64], S: NDArray[np.float64], bound: float
) -> tuple[NDArray, NDArray, NDArray, NDArray, int]:
    """:func:`_one_shot` on ``R0 W0``, dropping near-singular directions of ``K_ZZ`` that the
    approximation cannot have.

    Every eigenvalue of a kernel matrix on n points whose entries are at most ``k_max`` in
    magnitude lies in ``[-n k_max, n k_max]`` (Gershgorin). A landmark block ``K_ZZ`` with an
    eigenvalue ``d_j`` barely above the pseudo-inverse cut-off (a saturated sigmoid kernel has
    entries ``+-1`` up to 1e-9: a +-1 matrix that is singular up to that) gives the
    approximation a direction of size ``||K_XZ u_j||^2 / |d_j|``, far beyond that bound (6e13
    against n k_max = 1e5 was seen, and the solvers then stalled at the precision limit). The
    directions of the smallest ``|d_j|`` are dropped, one at a time, until the approximation's
    largest ``|Lambda|`` is within ``bound`` (ten times the Gershgorin bound of the kernel
    entries seen). Returns ``(T, Lambda, Sigma, W0, S, dropped)`` (``W0``, ``S``: the
    directions kept).
    """
    dropped = 0
    scale = np.sqrt(1.0 / np.sum(W0 * W0, axis=0))  # |d_j|^{1/2} of each kept column of W0
    while True:
        T, lam, sigma = _one_shot(R0 @ W0, S)
        if not np.isfinite(bound) or np.max(np.abs(lam)) <= bound or W0.shape[1] <= 1:
            return T, lam, sigma, W0, S, dropped
        weakest = int(np.argmin(scale))
        keep = np.arange(W0.shape[1]) != weakest
        W0, S, scale = W0[:, keep], S[keep], scale[keep]
        dropped += 1


def _chunk_columns(X_chunk: Any, rows: _KernelRows, Z: Any) -> NDArray[np.float64]:
    """``k(X_chunk, Z)``: one row chunk of :meth:`IndefiniteNystroem.landmark_columns`."""
    if len(X_chunk) == 0:
        return np.empty((0, len(Z)))
    return rows(X_chunk, Z)


def _chunk_features(
    X_chunk: Any, rows: _KernelRows, Z: Any, W: NDArray[np.float64], dtype: np.dtype
) -> NDArray[np.floating]:
    """``k(X_chunk, Z) @ W`` in ``dtype``: one row chunk of :meth:`IndefiniteNystroem.transform`."""
    if len(X_chunk) == 0:
        return np.empty((0, W.shape[1]), dtype=dtype)
    return (rows(X_chunk, Z) @ W).astype(dtype, copy=False)


def gram_eigenvalues(G: NDArray[np.float64], signature: NDArray[np.float64]) -> NDArray:
    """The nonzero eigenvalues of ``Phi diag(signature) Phi'`` from ``G = Phi'Phi``.

    With ``G = V g V'``, ``B = g^{1/2} V'`` satisfies ``B'B = G``, so ``Phi = Q B`` for some
    ``Q`` with orthonormal columns and ``Phi S Phi' = Q (B S B') Q'``: the ``m x m``
    symmetric ``B S B'`` has the eigenvalues sought (ascending).
    """
    G = 0.5 * (G + G.T)
    g, V = scipy.linalg.eigh(G, driver="evd", check_finite=False)
    B = np.sqrt(np.maximum(g, 0.0))[:, None] * V.T
    M = (B * np.asarray(signature, dtype=np.float64)[None, :]) @ B.T
    return scipy.linalg.eigvalsh(0.5 * (M + M.T), check_finite=False)


def factor_eigenvalues(Phi: NDArray[np.floating], signature: NDArray[np.float64]) -> NDArray:
    """The nonzero eigenvalues of ``Phi diag(signature) Phi'`` in O(n m^2) (the Gram matrix
    ``Phi'Phi`` by float64 row blocks, then :func:`gram_eigenvalues`)."""
    m = Phi.shape[1]
    G = np.zeros((m, m))
    for start, stop in _blocks(Phi.shape[0], _rows_per_block(m)):
        P = np.asarray(Phi[start:stop], dtype=np.float64)
        G += P.T @ P
    return gram_eigenvalues(G, signature)


def _chunk_gram(P: NDArray[np.floating]) -> NDArray[np.float64]:
    """``P'P`` of one row chunk of features, in float64 (a leaf of the plain map's check on a
    dask ``X``)."""
    P = np.asarray(P, dtype=np.float64)
    return P.T @ P


def _chunk_top(X_chunk: Any, rows: _KernelRows, Z: Any) -> float:
    """The largest ``|k(x, z)|`` of one row chunk."""
    if len(X_chunk) == 0:
        return 0.0
    return float(np.max(np.abs(rows(X_chunk, Z))))


def _sample_without_replacement(
    rng: np.random.Generator, n: int, size: int, p: NDArray[np.float64] | None = None
) -> NDArray[np.intp]:
    if p is None:
        return np.sort(rng.choice(n, size=size, replace=False))
    p = np.maximum(p, 0.0)
    positive = int(np.count_nonzero(p))
    if positive < size:
        # Fewer points with positive score than landmarks: take them all and fill uniformly.
        chosen = np.flatnonzero(p)
        rest = np.setdiff1d(np.arange(n), chosen)
        extra = rng.choice(rest, size=size - positive, replace=False)
        return np.sort(np.concatenate([chosen, extra]))
    return np.sort(rng.choice(n, size=size, replace=False, p=p / p.sum()))


class IndefiniteNystroem(TransformerMixin, BaseEstimator):
    """Nystroem features of an indefinite kernel with a signature (paper 003, Sect. 2.2-2.3).

    After ``fit(X)``, ``Phi = transform(X_new)`` (shape ``(n_new, r)``) satisfies::

        k(X_new, X_new') ~= Phi diag(signature_) Phi'_'

    for any two sets of points (the Nystroem approximation of eq. (3), ``K_X|Z = K_XZ K_ZZ^+
    K_ZX``). With ``factorization="plain"`` (default) the features are ``K_XZ U |D|^{-1/2}``
    with ``K_ZZ = U D U'`` and signature ``sign(D)``, as scikit-learn's ``Nystroem`` for a
    positive semidefinite kernel: :meth:`fit` evaluates the kernel on the ``m`` landmarks only.
    With ``factorization="one-shot"`` (paper 003, Sect. 2.2) the columns are the approximate
    eigenvectors scaled by ``|eigenvalue|^{1/2}``: on the training set ``Phi = A P
    |Lambda|^{1/2}`` with orthonormal ``A P``, columns sorted by ``|Lambda|``, so ``Phi[:, :k]``
    is the rank-``k`` truncation of the approximate eigendecomposition; :meth:`fit` makes one
    pass over the training set for it. Both give the same ``K_X|Z``. The kernel is evaluated
    in row blocks against the ``m`` landmarks only (memory O(n m); no ``n x n`` array).

    A nearly singular ``K_ZZ`` (a saturated kernel) can give ``K_X|Z`` an eigenvalue far
    beyond ``n max|k(x, z)|``, which no kernel with such entries has. The one-shot map drops
    those directions with a warning; :meth:`fit_transform` of the plain map checks its
    features against the same bound (free when ``||Phi||_F^2`` is within it, one ``m x m``
    eigenproblem otherwise) and refits one-shot if needed (``factorization_`` says which map
    was fitted). The plain :meth:`fit` sees no row beyond the landmarks and cannot check.

    Parameters
    ----------
    kernel : str or callable, default "sigmoid"
        A kernel name of :mod:`indefsvm.kernels` (as in :func:`indefsvm.proxy.estimators.
        resolve_kernel`, e.g. ``"sigmoid"``, ``"difference_of_gaussians"``, ``"rbf"``) or a
        callable ``kernel(X, Y, **params) -> (len(X), len(Y))`` array. A callable may take any
        indexable ``X`` (e.g. a 3-D array of time series).
    gamma, coef0, degree : float, optional
        Kernel parameters, passed only when not None.
    kernel_params : dict, optional
        Further keyword arguments of the kernel.
    n_components : int, optional
        Number ``m`` of landmarks (clipped to ``n`` with a warning). Default: the number of
        explicit landmark indices, or 100 with a selection scheme. With explicit indices a
        different ``n_components`` is an error (the indices fix ``m``). The number of features
        ``r = n_components_`` is at most ``m`` (fewer when ``K_ZZ`` is singular).
    landmarks : {"uniform", "kmeans++", "leverage"} or array of int, default "uniform"
        Landmark selection of Sect. 2.3, or explicit indices into the training ``X``.
    sketch_size : int, optional
        Size ``s`` of the uniform sketch used by ``"kmeans++"`` and ``"leverage"`` (the paper
        does not fix it; default ``min(n, max(50, m // 2))``). A positive integer or None; with
        ``"uniform"`` or explicit landmarks there is no sketch and a given ``sketch_size`` is
        ignored with a ``UserWarning``.
    random_state : int, Generator or None
        Seed of every random choice (landmarks and sketch).
    verbose : bool, default False
        Log progress and show a tqdm bar over the row blocks (interactive sessions only).
    dtype : {"float64", "float32"}, default "float64"
        Dtype of the features returned by :meth:`transform` (computations stay float64).
    rcond : float, optional
        Relative cut-off of the pseudo-inverse of ``K_ZZ`` (default :data:`DEFAULT_RCOND`).
    factorization : {"plain", "one-shot"}, default "plain"
        ``"plain"``: features ``L = K_XZ U |D|^{-1/2}`` with signature ``sign(D)`` (``fit``
        touches only the landmarks, as scikit-learn's ``Nystroem``). ``"one-shot"``: the
        approximate eigendecomposition of paper 003, Sect. 2.2 (one pass over the training set
        in ``fit``; the features of the Krein estimators). Same ``K_X|Z``.

    Attributes
    ----------
    landmarks_ : ndarray of int, shape (m,)
        Indices of the landmarks in the training ``X``.
    landmark_points_ : array, shape (m, ...)
        The landmarks ``Z = X[landmarks_]``.
    components_ : ndarray, shape (m, r)
        ``W`` with ``transform(X) = k(X, Z) @ W``.
    eigenvalues_ : ndarray, shape (r,)
        One-shot: the approximate eigenvalues ``Lambda`` of ``K`` (the exact non-zero
        eigenvalues of ``K_X|Z`` on the training set), sorted by ``|Lambda|``. Plain: the kept
        eigenvalues of ``K_ZZ``.
    signature_ : ndarray of +-1.0, shape (r,)
        ``sign(eigenvalues_)``.
    n_components_ : int
        ``r``, the number of feature columns.
    landmark_eigenvalues_ : ndarray, shape (m,)
        All eigenvalues of ``K_ZZ`` (ascending).
    landmark_basis_ : ndarray, shape (m, r)
        ``W0 = U_r |D_r|^{-1/2}`` of the kept eigenpairs of ``K_ZZ`` (``L = K_XZ W0``).
    landmark_signature_ : ndarray of +-1.0, shape (r,)
        ``sign(D_r)``.
    sketch_landmarks_ : ndarray of int or None
        Indices of the uniform sketch used by the landmark selection.
    factorization_ : {"plain", "one-shot"}
        The map fitted: ``factorization``, or ``"one-shot"`` when the plain map's check in
        :meth:`fit_transform` refitted it (see above).
    fit_time_ : dict
        Seconds spent in ``"landmarks"`` and ``"factorization"``.

    References
    ----------
    D. Oglic, T. Gaertner. Scalable learning in reproducing kernel Krein spaces. ICML 2019,
    eq. (3) and Sect. 2.2-2.3.
    """

    def __init__(
        self,
        kernel: str | Callable[..., Any] = "sigmoid",
        *,
        gamma: float | None = None,
        coef0: float | None = None,
        degree: int | None = None,
        kernel_params: Mapping[str, Any] | None = None,
        n_components: int | None = None,
        landmarks: str | ArrayLike = "uniform",
        sketch_size: int | None = None,
        random_state: Any = None,
        verbose: bool = False,
        dtype: str | type = "float64",
        rcond: float | None = None,
        factorization: str = "plain",
    ) -> None:
        set_init_parameters(self, locals())

    # ---------------------------------------------------------------------------- validation

    def _kernel_rows(self) -> _KernelRows:
        from indefsvm.utils.validation import collect_kernel_params

        function = _resolve_kernel_function(self.kernel)
        params = collect_kernel_params(self.gamma, self.coef0, self.degree, self.kernel_params)
        return _KernelRows(function, params, self.kernel)

    def _check_X(self, X: Any, *, fitting: bool) -> Any:
        if callable(self.kernel):
            # Structured inputs (time series, strings as arrays): only length and indexing.
            X = np.asarray(X) if not hasattr(X, "shape") else X
            if X.ndim < 1 or len(X) == 0:
                raise ValueError(f"X must be a non-empty array; got shape {np.shape(X)}.")
            return X
        from indefsvm.utils.validation import check_finite_matrix

        X = check_finite_matrix(X, name="X")
        if X.shape[0] == 0:
            raise ValueError("X must have at least one row; got 0.")
        if not fitting and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but IndefiniteNystroem was fitted with "
                f"{self.n_features_in_} features."
            )
        return X

    def _check_params(self) -> tuple[int, float, np.dtype]:
        """Validate every parameter before any data is touched (clear messages, no numpy
        errors from deep inside); returns ``(m, rcond, dtype)`` with ``m`` not yet clipped."""
        landmarks = self.landmarks
        explicit = not isinstance(landmarks, str)
        if not explicit and landmarks not in LANDMARK_METHODS:
            raise ValueError(
                f"landmarks must be one of {LANDMARK_METHODS} or an array of indices; got "
                f"{landmarks!r}."
            )
        m = self.n_components
        if m is not None and (isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 1):
            raise ValueError(f"n_components must be a positive integer or None; got {m!r}.")
        if explicit:
            indices = np.asarray(landmarks)
            if (
                indices.ndim != 1
                or indices.size == 0
                or not np.issubdtype(indices.dtype, np.integer)
            ):
                raise ValueError(
                    f"landmarks must be one of {LANDMARK_METHODS} or a non-empty 1-D array of "
                    f"integer indices; got {landmarks!r}."
                )
            count = int(indices.size)
            if m is not None and int(m) != count:
                raise ValueError(
                    f"n_components = {m} but {count} landmark indices were given: explicit "
                    "landmarks fix the number of landmarks. Drop n_components (or set it to "
                    f"{count})."
                )
            m = count
        elif m is None:
            m = 100
        rcond = self.rcond
        if rcond is None:
            rcond = DEFAULT_RCOND
        elif isinstance(rcond, bool) or not isinstance(rcond, numbers.Real):
            raise ValueError(f"rcond must be a real number in [0, 1) or None; got {rcond!r}.")
        rcond = float(rcond)
        if not (0.0 <= rcond < 1.0):
            raise ValueError(f"rcond must be in [0, 1); got {self.rcond!r}.")
        try:
            # np.dtype(None) is float64: None is no valid choice here.
            dtype = None if self.dtype is None else np.dtype(self.dtype)
        except TypeError:
            dtype = None
        if dtype is None or dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"dtype must be 'float64' or 'float32'; got {self.dtype!r}.")
        if not isinstance(self.factorization, str) or self.factorization not in FACTORIZATIONS:
            raise ValueError(
                f"factorization must be one of {FACTORIZATIONS}; got {self.factorization!r}."
            )
        s = self.sketch_size
        if s is not None:
            if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1:
                raise ValueError(f"sketch_size must be a positive integer or None; got {s!r}.")
            if explicit or landmarks == "uniform":
                warnings.warn(
                    f"sketch_size = {s} is ignored: only landmarks='kmeans++' and 'leverage' "
                    f"sample a sketch (landmarks={'<indices>' if explicit else repr(landmarks)}).",
                    UserWarning,
                    stacklevel=4,
                )
        return int(m), rcond, dtype

    def _clip_components(self, m: int, n: int) -> int:
        if m > n:
            warnings.warn(
                f"n_components = {m} > n = {n} training points; using all {n} points as landmarks.",
                UserWarning,
                stacklevel=4,
            )
            return n
        return m

    # ---------------------------------------------------------------------------- fitting

    @threaded_fit
    def fit(self, X: Any, y: Any = None) -> IndefiniteNystroem:
        """Select the landmarks and factorise (one pass over ``X`` for the one-shot variant).

        Runs with the threads the package's size-aware policy picks for ``len(X)`` points
        (:func:`indefsvm.threads.limit_threads`: only the cores other processes leave free, a
        caller's limit never raised), as inside an estimator's fit.

        Parameters
        ----------
        X : array_like of shape (n, d) (any indexable array for a callable kernel)
        y : ignored

        Returns
        -------
        self
        """
        self._fit(X, keep_features=False)
        return self

    @threaded_fit
    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> NDArray[np.floating]:
        """``fit(X).transform(X)`` with a single evaluation of the kernel rows ``k(X, Z)``.

        Returns
        -------
        ndarray of shape (n, n_components_)
        """
        Phi = self._fit(X, keep_features=True)
        assert Phi is not None
        return Phi

    def _fit(self, X: Any, *, keep_features: bool) -> NDArray[np.floating] | None:
        if is_dask_array(X):
            return self._fit_dask(X, keep_features=keep_features)
        m, rcond, dtype = self._check_params()
        X = self._check_X(X, fitting=True)
        n = len(X)
        if isinstance(self.landmarks, str):
            m = self._clip_components(m, n)
        if not callable(self.kernel):
            self.n_features_in_ = X.shape[1]
        rows = self._kernel_rows()
        rng = _check_rng(self.random_state)
        if self.verbose:  # the timings are logged: visible even if nobody configured logging
            ensure_visible(logger)
        t0 = time.perf_counter()
        idx, sketch = self._draw_landmarks(X, m, rows, rng, rcond)
        t1 = time.perf_counter()
        Z = X[idx]
        W0, S, _ = self._set_landmarks(idx, sketch, Z, rows, rcond)
        if self.factorization == "plain":
            self.fit_time_ = {"landmarks": t1 - t0, "factorization": time.perf_counter() - t1}
            if not keep_features:
                self._log_fit(n)
                return None
            Phi, top, fro2 = self._plain_features(X, rows, dtype)
            if self._plain_within_bound(Phi, top, fro2, n):
                self.fit_time_["factorization"] = time.perf_counter() - t1
                self._log_fit(n)
                return Phi
            del Phi
        return self._fit_one_shot(X, rows, Z, W0, S, (t0, t1), keep_features, dtype)

    def _plain_features(
        self, X: Any, rows: _KernelRows, dtype: np.dtype
    ) -> tuple[NDArray[np.floating], float, float]:
        """The plain features ``K_XZ W0`` by row blocks, with the largest ``|k(x, z)|`` and
        ``||K_XZ W0||_F^2`` (both from the float64 blocks): what :meth:`_plain_within_bound`
        needs, at O(nm) beside the product."""
        n = len(X)
        W = self.components_
        Z = self.landmark_points_
        out = np.empty((n, W.shape[1]), dtype=dtype)
        top = fro2 = 0.0
        bar = _progress(n, "Nystroem factor", bool(self.verbose))
        for start, stop in _blocks(n, _rows_per_block(max(W.shape))):
            C = rows(X[start:stop], Z)
            top = max(top, float(np.max(np.abs(C))) if C.size else 0.0)
            P = C @ W
            fro2 += float(np.einsum("ij,ij->", P, P))
            out[start:stop] = P
            bar.update(stop - start)
        bar.close()
        return out, top, fro2

    def _plain_within_bound(
        self, Phi: NDArray[np.floating], top: float, fro2: float, n: int
    ) -> bool:
        """Whether the plain map's approximation has every eigenvalue within ten times the
        Gershgorin bound ``n max|k(x, z)|`` (the bound the one-shot map enforces,
        :func:`_bounded_one_shot`).

        The nonzero eigenvalues of ``Phi S Phi'`` are those of ``B S B'`` with ``B'B =
        Phi'Phi``, so each is at most ``||Phi||_2^2 <= ||Phi||_F^2`` in magnitude: when the
        Frobenius norm (free with the features) is within the bound nothing more is computed;
        otherwise the ``m x m`` Gram matrix gives the eigenvalues themselves. A map beyond the
        bound (a nearly singular ``K_ZZ``) is refitted one-shot, which drops those directions
        with a warning.
        """
        bound = _BOUND_FACTOR * n * top
        if fro2 <= bound:
            return True
        lam = factor_eigenvalues(Phi, self.signature_)
        if lam.size == 0 or float(np.max(np.abs(lam))) <= bound:
            return True
        logger.info(
            "IndefiniteNystroem: the plain map has an eigenvalue %.3g beyond %g n max|k| = %.3g "
            "(nearly singular K_ZZ); refitting one-shot, which drops those directions.",
            float(np.max(np.abs(lam))),
            _BOUND_FACTOR,
            bound,
        )
        return False

    def check_columns(self, C: ArrayLike) -> NDArray[np.float64]:
        """The check of :meth:`fit_transform` for a map fitted by :meth:`fit`, given the
        landmark columns ``C = k(X, Z)`` of its training points; returns the map's features
        ``C @ components_`` (float64) of those points.

        A plain map whose approximation has an eigenvalue beyond ten times ``n max|k(x, z)|``
        is refitted one-shot from ``C`` (the warning of a nearly singular ``K_ZZ``; see the
        class docstring); a one-shot map was checked by :meth:`fit`. Estimators that share one
        map's columns (one-vs-one pairs) call it once and use the features it returns.
        """
        check_is_fitted(self, "components_")
        C = np.asarray(C, dtype=np.float64)
        Phi = C @ self.components_
        if self.factorization_ != "plain":
            return Phi
        n = C.shape[0]
        top = float(np.max(np.abs(C))) if C.size else 0.0
        if self._plain_within_bound(Phi, top, float(np.einsum("ij,ij->", Phi, Phi)), n):
            return Phi
        del Phi
        R0 = np.zeros((0, C.shape[1]))
        for start, stop in _blocks(n, _rows_per_block(C.shape[1])):
            R0 = _stack_r(R0, C[start:stop])
        now = time.perf_counter()
        self._set_one_shot(R0, self.landmark_basis_, self.landmark_signature_, n, (now, now), top)
        return C @ self.components_

    def _fit_one_shot(
        self,
        X: Any,
        rows: _KernelRows,
        Z: Any,
        W0: NDArray[np.float64],
        S: NDArray[np.float64],
        times: tuple[float, float],
        keep_features: bool,
        dtype: np.dtype,
    ) -> NDArray[np.floating] | None:
        """The one-shot map of Sect. 2.2 on ``X`` (one pass over the kernel rows)."""
        # The R factor of L = K_XZ W0 is R0 W0 with R0 the R factor of K_XZ (L = Q R0 W0), so
        # a tall-skinny QR of the kernel rows themselves (by row blocks) gives Sigma and B of
        # the thin SVD of L without forming L: 2 m^2 n flops for the fit. fit_transform keeps
        # K_XZ (in the output dtype) and turns it into Phi = K_XZ W in place, so the peak is
        # one n x m array (+ blocks), not two.
        n = len(X)
        m_l = W0.shape[0]
        C_all = np.empty((n, m_l), dtype=dtype) if keep_features else None
        R0 = np.zeros((0, m_l))
        step = _rows_per_block(m_l)
        bar = _progress(n, "Nystroem factor", bool(self.verbose))
        top = 0.0
        for start, stop in _blocks(n, step):
            C_block = rows(X[start:stop], Z)
            if C_all is not None:
                C_all[start:stop] = C_block
            R0 = _stack_r(R0, C_block)
            top = max(top, float(np.max(np.abs(C_block))) if C_block.size else 0.0)
            bar.update(stop - start)
        bar.close()
        self._set_one_shot(R0, W0, S, n, times, top)
        r = self.n_components_
        if C_all is None:
            return None
        # Phi = K_XZ W, in place block by block (W is m x r, r <= m).
        W_cast = self.components_.astype(dtype, copy=False)
        for start, stop in _blocks(n, step):
            C_all[start:stop, :r] = C_all[start:stop] @ W_cast
        return C_all if r == m_l else compact_columns(C_all, r)

    def _check_dask_X(self, X: Any, *, fitting: bool) -> Any:
        """A row-chunked dask ``X`` (see :func:`indefsvm.utils.dask_rows.check_dask_rows`)."""
        from indefsvm.utils.dask_rows import check_dask_rows

        X = check_dask_rows(X, "X")
        if not callable(self.kernel):
            if X.ndim != 2 or not np.issubdtype(X.dtype, np.number):
                raise ValueError(
                    f"X must be a 2-D numeric (n, d) array for kernel {self.kernel!r}; got "
                    f"shape {X.shape}, dtype {X.dtype}."
                )
            if not fitting and X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {X.shape[1]} features, but IndefiniteNystroem was fitted with "
                    f"{self.n_features_in_} features."
                )
        return X

    def _fit_dask(self, X: Any, *, keep_features: bool) -> Any:
        """:meth:`fit` on a row-chunked dask array: only the landmark rows and ``m x m`` R
        factors travel to the client (module docstring, "Dask arrays")."""
        from indefsvm.utils.dask_rows import fit_progress, reduce_rows

        m, rcond, _ = self._check_params()
        rows = self._kernel_rows()
        X = self._check_dask_X(X, fitting=True)
        n = X.shape[0]
        if isinstance(self.landmarks, str):
            if self.landmarks not in DASK_LANDMARK_METHODS:
                raise ValueError(
                    f"landmarks={self.landmarks!r} is not available for a dask X: k-means++ "
                    "seeding is sequential in the m landmarks (m passes over the data driven "
                    f"from the client). With a dask X use landmarks in {DASK_LANDMARK_METHODS} "
                    "or explicit indices (e.g. chosen on a sample held in memory)."
                )
            m = self._clip_components(m, n)
        if not callable(self.kernel):
            self.n_features_in_ = X.shape[1]
        rng = _check_rng(self.random_state)
        t0 = time.perf_counter()
        # Uniform and explicit landmarks need only n: the same indices as in memory. Leverage:
        # the sketch (uniform) is the in-memory one; the scores stay on the workers and the
        # weighted draw is one pass of per-chunk keys (same distribution, another sample).
        idx, sketch = self._draw_landmarks(X, m, rows, rng, rcond)
        t1 = time.perf_counter()
        # The m landmark rows, gathered to the client (an own copy: arrays from a worker
        # process may be unaligned views of the message).
        Z = np.array(X[idx].compute(), copy=True)
        if not callable(self.kernel):
            Z = check_finite_matrix(Z, name="X (landmark rows)")
        W0, S, kzz_peak = self._set_landmarks(idx, sketch, Z, rows, rcond)
        if self.factorization == "plain":
            self.fit_time_ = {"landmarks": t1 - t0, "factorization": time.perf_counter() - t1}
            if not keep_features:
                return None
            Phi = self.transform(X)
            if self._plain_within_bound_dask(Phi, X, rows, Z, kzz_peak):
                self.fit_time_["factorization"] = time.perf_counter() - t1
                self._log_fit(n)
                return Phi
            del Phi
        # Distributed TSQR of K_XZ (R factors only, combined pairwise on the workers); the
        # bar is the estimator's whole-fit bar when a fit of one runs this.
        with fit_progress("Nystroem factor", enabled=None if self.verbose else False):
            R0, top = reduce_rows(_chunk_r, X, args=(rows, Z), combine=_stack_r_max)
        self._set_one_shot(R0, W0, S, n, (t0, t1), top)
        return self.transform(X) if keep_features else None

    def _plain_within_bound_dask(
        self, Phi: Any, X: Any, rows: _KernelRows, Z: Any, kzz_peak: float
    ) -> bool:
        """:meth:`_plain_within_bound` for persisted dask features ``Phi`` of ``X``.

        The eigenvalues come from ``Phi'Phi`` (one pass over the features on the workers; an
        ``m x m`` matrix travels). They are first held against the bound of the landmark
        block's largest entry ``kzz_peak = max|K_ZZ| <= max|k(x, z)|`` (no kernel pass; for the
        usual kernels the two are equal); only beyond it is the kernel's largest entry over all rows
        computed (a pass over ``X``), so the decision is that of the in-memory fit.
        """
        from indefsvm.utils.dask_rows import reduce_rows

        n = Phi.shape[0]
        lam = gram_eigenvalues(reduce_rows(_chunk_gram, Phi), self.signature_)
        largest = float(np.max(np.abs(lam))) if lam.size else 0.0
        if largest <= _BOUND_FACTOR * n * kzz_peak:
            return True
        top = reduce_rows(_chunk_top, X, args=(rows, Z), combine=max)
        if largest <= _BOUND_FACTOR * n * top:
            return True
        logger.info(
            "IndefiniteNystroem: the plain map has an eigenvalue %.3g beyond %g n max|k| = %.3g "
            "(nearly singular K_ZZ); refitting one-shot, which drops those directions.",
            largest,
            _BOUND_FACTOR,
            _BOUND_FACTOR * n * top,
        )
        return False

    def _transform_dask(self, X: Any, *, persist: bool = True) -> Any:
        """Row-chunked features of a dask ``X`` (same row chunks), persisted on the workers
        when a distributed client is active (and ``persist``), lazy otherwise (dask-ml's
        convention)."""
        from indefsvm.utils.dask_rows import active_client, fit_progress, map_rows, persist_rows

        X = self._check_dask_X(X, fitting=False)
        dtype = np.dtype(self.dtype)
        Phi = map_rows(
            _chunk_features,
            X,
            args=(self._kernel_rows(), self.landmark_points_, self.components_, dtype),
            dtype=dtype,
        )
        if not persist or active_client() is None:
            return Phi
        with fit_progress("Nystroem transform", enabled=None if self.verbose else False):
            return persist_rows(Phi)

    def _draw_landmarks(
        self, X: Any, m: int, rows: _KernelRows, rng: np.random.Generator, rcond: float
    ) -> tuple[NDArray[np.intp], NDArray[np.intp] | None]:
        """:func:`select_landmarks` with this map's scheme, sketch size and verbosity."""
        return select_landmarks(
            X,
            m,
            rows,
            method=self.landmarks,
            sketch_size=self.sketch_size,
            rng=rng,
            rcond=rcond,
            verbose=self.verbose,
        )

    def _set_landmarks(
        self, idx: NDArray[np.intp], sketch: Any, Z: Any, rows: _KernelRows, rcond: float
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
        """Store the landmarks and the factor ``W0, S`` of ``K_ZZ`` (and, for the plain
        factorisation, the whole map); returns ``(W0, S, max|K_ZZ|)`` (the last for the
        plain map's bound on a dask ``X``, which would otherwise evaluate ``K_ZZ`` again)."""
        self.landmarks_ = idx
        self.sketch_landmarks_ = sketch
        self.landmark_points_ = Z
        K_ZZ = rows(Z, Z)
        peak = float(np.max(np.abs(K_ZZ)))
        W0, S, d = _landmark_factor(K_ZZ, rcond)
        self.landmark_eigenvalues_ = d
        self.landmark_basis_ = W0
        self.landmark_signature_ = S.astype(np.float64)
        self.factorization_ = self.factorization
        r = W0.shape[1]
        if r < len(idx):
            logger.info(
                "K_ZZ is singular: kept %d of %d eigenvalues (|d| > %.3g * max|d|).",
                r,
                len(idx),
                rcond,
            )
        if self.factorization == "plain":
            self.components_ = W0
            self.eigenvalues_ = np.abs(d[np.abs(d) > rcond * np.max(np.abs(d))]) * S
            self.signature_ = S.astype(np.float64)
            self.n_components_ = r
        return W0, S, peak

    def _set_one_shot(
        self, R0: NDArray, W0: NDArray, S: NDArray, n: int, times: tuple, top: float
    ) -> None:
        """The one-shot map of Sect. 2.2 from the R factor ``R0`` of ``K_XZ`` (``times``: the
        clock before and after the landmark selection; ``top``: the largest ``|k(x, z)|``),
        without the near-singular landmark directions no kernel with such entries can have
        (:func:`_bounded_one_shot`)."""
        t0, t1 = times
        T, lam, sigma, W0, S, dropped = _bounded_one_shot(R0, W0, S, _BOUND_FACTOR * n * top)
        if dropped:
            warnings.warn(
                f"IndefiniteNystroem: the landmark kernel K_ZZ is nearly singular; {dropped} of "
                f"its directions gave the approximation eigenvalues beyond n max|k| = "
                f"{n * top:.3g}, the largest a kernel with these entries can have, and were "
                "dropped (n_components_ = "
                f"{W0.shape[1]}). Saturated kernels (e.g. a sigmoid of unscaled integer "
                "features) cause this: scale the features or the kernel parameters.",
                UserWarning,
                stacklevel=4,
            )
            # the landmark directions of the map (column_input refits on other rows use them)
            self.landmark_basis_ = W0
            self.landmark_signature_ = np.asarray(S, dtype=np.float64)
        r = W0.shape[1]
        self.factorization_ = "one-shot"
        self.components_ = W0 @ T
        self.eigenvalues_ = lam
        self.signature_ = np.where(lam >= 0.0, 1.0, -1.0)
        self.n_components_ = r
        self.singular_values_ = sigma
        self.fit_time_ = {"landmarks": t1 - t0, "factorization": time.perf_counter() - t1}
        self._log_fit(n)

    def _log_fit(self, n: int) -> None:
        """The fitted map's summary line (with ``verbose``)."""
        if not self.verbose:
            return
        logger.info(
            "IndefiniteNystroem: n=%d, m=%d, r=%d (%d negative), %s, landmarks %.2fs, "
            "factorization %.2fs",
            n,
            self.components_.shape[0],
            self.n_components_,
            int(np.sum(self.signature_ < 0)),
            self.factorization_,
            self.fit_time_["landmarks"],
            self.fit_time_["factorization"],
        )

    def landmark_columns(self, X: Any) -> NDArray[np.float64]:
        """Kernel columns ``k(X, Z)`` between points and the fitted landmarks ``Z``.

        Every feature map of this transformer is linear in these columns
        (``transform(X) = landmark_columns(X) @ components_``).

        Returns
        -------
        ndarray of shape (n, m), float64
            A lazy row-chunked dask array (``X``'s row chunks) for a dask ``X``.
        """
        check_is_fitted(self, "components_")
        if is_dask_array(X):
            from indefsvm.utils.dask_rows import map_rows

            X = self._check_dask_X(X, fitting=False)
            return map_rows(
                _chunk_columns,
                X,
                args=(self._kernel_rows(), self.landmark_points_),
                dtype=np.float64,
            )
        X = self._check_X(X, fitting=False)
        rows = self._kernel_rows()
        out = np.empty((len(X), len(self.landmarks_)), dtype=np.float64)
        for start, stop in _blocks(len(X), _rows_per_block(len(self.landmarks_))):
            out[start:stop] = rows(X[start:stop], self.landmark_points_)
        return out

    def _column_transformer(self) -> IndefiniteNystroem:
        """An unfactorised transformer on landmark columns with this map's landmarks."""
        check_is_fitted(self, "landmark_basis_")
        m = self.landmark_basis_.shape[0]
        new = IndefiniteNystroem(
            kernel="precomputed",
            n_components=m,
            landmarks=np.arange(m),
            dtype=self.dtype,
            rcond=self.rcond,
            factorization=self.factorization_,
        )
        new.factorization_ = self.factorization_
        new.landmarks_ = np.arange(m, dtype=np.intp)
        new.sketch_landmarks_ = None
        new.landmark_points_ = None
        new.landmark_eigenvalues_ = self.landmark_eigenvalues_
        new.landmark_basis_ = self.landmark_basis_
        new.landmark_signature_ = self.landmark_signature_
        return new

    def column_input(self) -> IndefiniteNystroem:
        """This fitted map with the landmark columns ``C = k(X, Z)`` as its input.

        The same factorisation (``components_``, ``eigenvalues_``, ``signature_``): its
        features of ``C`` are ``C @ components_ = transform(X)``. One-vs-one multi-class models
        share it across their pairs (:mod:`indefsvm.multiclass`), which read the rows of one
        factor instead of re-factorising per pair (:meth:`factor_rows`).

        Returns
        -------
        IndefiniteNystroem
            Fitted, ``kernel="precomputed"``, ``landmarks_ = arange(m)`` (column indices of
            ``C``); it cannot evaluate the kernel itself.
        """
        check_is_fitted(self, "components_")
        new = self._column_transformer()
        new.components_ = self.components_
        new.eigenvalues_ = self.eigenvalues_
        new.signature_ = self.signature_
        if hasattr(self, "singular_values_"):
            new.singular_values_ = self.singular_values_
        new.n_components_ = self.n_components_
        new.fit_time_ = {"landmarks": 0.0, "factorization": 0.0}
        return new

    def factor_rows(self, C: ArrayLike) -> tuple[IndefiniteNystroem, NDArray[np.floating]]:
        """The same landmarks, factorised on other points: ``K_{X'}|Z`` from ``C = k(X', Z)``.

        The Nystroem approximation of eq. (3) on a set ``X'`` (e.g. a subset of the training
        points, as the one-vs-one pairs of a multi-class model) with the fitted landmarks ``Z``,
        which need not belong to ``X'``: the one-shot eigendecomposition of Sect. 2.2 of
        ``K_{X'}|Z = C K_ZZ^+ C'`` (or the plain factor), exactly what :meth:`fit` computes on
        ``X'`` with landmark points ``Z``.

        Parameters
        ----------
        C : array_like of shape (n', m)
            Kernel columns ``k(X', Z)`` (see :meth:`landmark_columns`).

        Returns
        -------
        (nystroem, Phi)
            ``nystroem`` is a fitted transformer whose input is the landmark columns: its
            ``landmarks_`` are ``arange(m)`` (column indices of ``C``) and
            ``C_new @ nystroem.components_`` are the features of new points; its ``kernel`` is
            ``"precomputed"`` (it cannot evaluate the kernel itself). ``Phi`` (shape
            ``(n', r')``) satisfies ``Phi diag(nystroem.signature_) Phi' = K_{X'}|Z``.
        """
        new = self._column_transformer()
        W0, S = self.landmark_basis_, self.landmark_signature_
        m = W0.shape[0]
        C = np.asarray(C, dtype=np.float64)
        if C.ndim != 2 or C.shape[1] != m or C.shape[0] == 0:
            raise ValueError(f"C must be the (n, {m}) kernel columns k(X, Z); got {C.shape}.")
        dtype = np.dtype(self.dtype)
        t0 = time.perf_counter()
        if self.factorization_ == "plain":
            new.components_ = W0
            new.eigenvalues_ = self.eigenvalues_
            new.signature_ = self.signature_
        else:
            R0 = scipy.linalg.qr(C, mode="r", check_finite=False)[0][: min(C.shape)]
            if C.shape[0] >= W0.shape[1]:
                T, lam, sigma = _one_shot(R0 @ W0, S)
            else:
                T, lam, sigma = _one_shot_few_rows(R0 @ W0, S)
            new.components_ = W0 @ T
            new.eigenvalues_ = lam
            new.signature_ = np.where(lam >= 0.0, 1.0, -1.0)
            new.singular_values_ = sigma
        new.n_components_ = new.components_.shape[1]
        new.fit_time_ = {"landmarks": 0.0, "factorization": time.perf_counter() - t0}
        return new, (C @ new.components_).astype(dtype, copy=False)

    def _fit_sketch(self, X: Any, rng: np.random.Generator) -> None:
        """Fit a uniform one-shot sketch (landmark selection) with the caller's generator."""
        self.random_state = rng
        self.landmarks = "uniform"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            self.fit(X)

    # ---------------------------------------------------------------------------- transform

    @threaded_fit  # the same thread policy for a pass over n rows
    def transform(self, X: Any) -> NDArray[np.floating]:
        """Features ``Phi = k(X, Z) @ components_`` (out-of-sample map of Sect. 2.2).

        Parameters
        ----------
        X : array_like of shape (n, d) (any indexable array for a callable kernel)

        Returns
        -------
        ndarray of shape (n, n_components_), dtype ``self.dtype``
            For a dask ``X`` (chunked by rows), a dask array with ``X``'s row chunks, computed
            on the workers and persisted there when a ``distributed.Client`` is active, lazy
            otherwise (module docstring, "Dask arrays").
        """
        check_is_fitted(self, "components_")
        if is_dask_array(X):
            return self._transform_dask(X)
        X = self._check_X(X, fitting=False)
        rows = self._kernel_rows()
        n = len(X)
        W = self.components_
        out = np.empty((n, W.shape[1]), dtype=np.dtype(self.dtype))
        step = _rows_per_block(max(W.shape))
        bar = _progress(n, "Nystroem transform", bool(self.verbose) and n > step)
        for start, stop in _blocks(n, step):
            out[start:stop] = rows(X[start:stop], self.landmark_points_) @ W
            bar.update(stop - start)
        bar.close()
        return out

    def approximate_kernel(self, X: Any, Y: Any | None = None) -> NDArray[np.float64]:
        """Dense ``Phi_X diag(signature_) Phi_Y'`` (for tests and small data only)."""
        PX = np.asarray(self.transform(X), dtype=np.float64)
        PY = PX if Y is None else np.asarray(self.transform(Y), dtype=np.float64)
        return (PX * self.signature_) @ PY.T

    def _more_tags(self) -> dict[str, Any]:  # pragma: no cover - sklearn metadata
        return {"requires_positive_X": False, "preserves_dtype": [np.float64]}


# -------------------------------------------------------------------------------- landmarks


def select_landmarks(
    X: Any,
    m: int,
    kernel_rows: Callable[[Any, Any], NDArray[np.float64]],
    *,
    method: str | ArrayLike = "uniform",
    sketch_size: int | None = None,
    rng: np.random.Generator | int | None = None,
    rcond: float = DEFAULT_RCOND,
    verbose: bool = False,
) -> tuple[NDArray[np.intp], NDArray[np.intp] | None]:
    """Landmark indices by the schemes of paper 003, Sect. 2.3.

    Parameters
    ----------
    X : array of n points
    m : int
        Number of landmarks.
    kernel_rows : callable
        ``kernel_rows(A, B) -> k(A, B)``.
    method : {"uniform", "kmeans++", "leverage"} or array of int
        ``"leverage"``: ``m`` points sampled without replacement with probability proportional
        to the approximate leverage score ``||U_(i)||^2`` of the one-shot eigendecomposition
        ``U Lambda U'`` of a uniform sketch. ``"kmeans++"``: k-means++ seeding in the features
        ``U |Lambda|^{1/2}`` of the same sketch (the flip-spectrum ``H = L L'``). An array:
        explicit indices (validated, returned sorted as given).
    sketch_size : int, optional
        Sketch size ``s`` (default ``min(n, max(50, m // 2))``).
    rng : Generator, int or None
    rcond : float
        Pseudo-inverse cut-off of the sketch's ``K_ZZ``.
    verbose : bool

    Returns
    -------
    (indices, sketch_indices or None)
    """
    rng = _check_rng(rng)
    n = len(X)
    if not isinstance(method, str):
        idx = np.asarray(method)
        if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(
                "landmarks must be one of "
                f"{LANDMARK_METHODS} or a non-empty 1-D array of integer indices; got "
                f"{method!r}."
            )
        if idx.min() < 0 or idx.max() >= n:
            raise ValueError(
                f"landmark indices must lie in [0, {n}); got [{idx.min()}, {idx.max()}]."
            )
        if np.unique(idx).size != idx.size:
            raise ValueError("landmark indices must be distinct.")
        return idx.astype(np.intp), None
    if method not in LANDMARK_METHODS:
        raise ValueError(
            f"landmarks must be one of {LANDMARK_METHODS} or an array of indices; got {method!r}."
        )
    if method == "uniform" or m >= n:
        return _sample_without_replacement(rng, n, m), None
    s = min(n, max(50, m // 2)) if sketch_size is None else sketch_size
    if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1:
        raise ValueError(f"sketch_size must be a positive integer; got {sketch_size!r}.")
    s = int(min(s, n))
    # one-shot: the leverage scores and the flip-spectrum features need orthonormal directions
    sketch = IndefiniteNystroem(
        kernel=_FixedRows(kernel_rows), n_components=s, rcond=rcond, factorization="one-shot"
    )
    sketch._fit_sketch(X, rng)
    if method == "leverage":
        # ||U_(i)||^2 with U = Phi |Lambda|^{-1/2} (orthonormal columns on X).
        inv = 1.0 / np.sqrt(np.abs(sketch.eigenvalues_))
        if is_dask_array(X):
            from indefsvm.utils.dask_rows import map_rows

            scores_d = map_rows(_block_leverage, X, args=(sketch, inv), dtype=np.float64)
            return _sample_rows_weighted(scores_d, m, rng), sketch.landmarks_
        scores = np.empty(n)
        step = _rows_per_block(s)
        for start, stop in _blocks(n, step):
            scores[start:stop] = _block_leverage(X[start:stop], sketch, inv)
        return _sample_without_replacement(rng, n, m, scores), sketch.landmarks_
    # Approximate kernel k-means++ seeding in the sketch features (Sect. 2.3).
    feat_dtype = np.float64 if 8 * n * s <= 2**30 else np.float32
    F = np.empty((n, sketch.n_components_), dtype=feat_dtype)
    step = _rows_per_block(s)
    for start, stop in _blocks(n, step):
        F[start:stop] = sketch.transform(X[start:stop])
    return _kmeanspp(F, m, rng, verbose=verbose), sketch.landmarks_


def _block_leverage(
    X_block: Any, sketch: IndefiniteNystroem, inv: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Approximate leverage scores ``||U_(i)||^2`` of the rows of ``X_block`` (Sect. 2.3)."""
    if len(X_block) == 0:
        return np.empty(0)
    F = sketch.transform(X_block) * inv
    return np.einsum("ij,ij->i", F, F)


def _block_top_keys(
    scores: NDArray[np.float64], index: NDArray[np.intp], m: int, seed: int
) -> tuple[NDArray, NDArray, NDArray]:
    """The ``m`` largest sampling keys of one row chunk: ``(positive, key, index)``.

    Efraimidis & Spirakis (2006): the ``m`` largest ``log(u_i) / w_i`` (``u_i ~ U(0, 1)``) are a
    sample without replacement with probabilities proportional to ``w`` drawn one at a time, the
    distribution of ``Generator.choice(replace=False, p=w / sum(w))``. Points with ``w = 0`` rank
    after every positive one, in uniform random order (the in-memory fill when fewer than ``m``
    scores are positive). The chunk's generator is seeded by ``seed`` and its first row.
    """
    if index.size == 0:
        return np.empty(0, dtype=bool), np.empty(0), np.empty(0, dtype=np.intp)
    u = np.random.default_rng([seed, int(index[0])]).random(index.size)
    u = np.maximum(u, np.finfo(np.float64).tiny)  # log(0) would tie at -inf
    w = np.maximum(scores, 0.0)
    positive = w > 0.0
    key = np.where(positive, np.log(u) / np.where(positive, w, 1.0), u)
    return _top_keys((positive, key, index), m)


def _top_keys(parts: tuple[NDArray, NDArray, NDArray], m: int) -> tuple[NDArray, NDArray, NDArray]:
    positive, key, index = parts
    order = np.lexsort((-key, ~positive))[:m]  # positive first, then the largest keys
    return positive[order], key[order], index[order]


def _merge_top_keys(a: tuple, b: tuple, m: int) -> tuple[NDArray, NDArray, NDArray]:
    return _top_keys(tuple(np.concatenate([x, y]) for x, y in zip(a, b, strict=True)), m)


def _sample_rows_weighted(scores: Any, m: int, rng: np.random.Generator) -> NDArray[np.intp]:
    """``m`` row indices sampled without replacement with probability proportional to the dask
    vector ``scores`` (weighted keys, :func:`_block_top_keys`): one pass, ``m`` keys per chunk
    merged pairwise on the workers; the scores never leave them."""
    import functools

    import dask.array as da

    from indefsvm.utils.dask_rows import reduce_rows

    index = da.arange(scores.shape[0], chunks=scores.chunks, dtype=np.intp)
    seed = int(rng.integers(2**62))
    _, _, chosen = reduce_rows(
        _block_top_keys,
        scores,
        index,
        args=(m, seed),
        combine=functools.partial(_merge_top_keys, m=m),
    )
    return np.sort(chosen)


class _FixedRows:
    """Wrap a ``kernel_rows`` callable as a kernel callable without parameters."""

    def __init__(self, rows: Callable[[Any, Any], NDArray[np.float64]]):
        self.rows = rows

    def __call__(self, X: Any, Y: Any) -> NDArray[np.float64]:
        return self.rows(X, Y)


#: Sketch features with more entries than this are seeded in float32 (:func:`_kmeanspp`).
_KMEANS_FLOAT32_ENTRIES = 2**22


def _kmeanspp(
    F: NDArray[np.floating], m: int, rng: np.random.Generator, *, verbose: bool = False
) -> NDArray[np.intp]:
    """k-means++ seeding (Arthur & Vassilvitskii 2007) on the rows of ``F``: ``m`` indices.

    The first centre is uniform; each next one is drawn with probability proportional to the
    squared distance to the nearest chosen centre (``p++`` of paper 003, Sect. 2.3).
    """
    n = F.shape[0]
    # ||F_i - c||^2 = ||F_i||^2 - 2 F_i'c + ||c||^2: one matrix-vector product per centre (the
    # loop is memory-bound: the difference F - c read and wrote the n x r features three times
    # per centre, 25 s for m = 500 at n = 10^5). Large F in float32 halves the traffic; a
    # distance only sets a sampling probability, and a chosen centre's is set to 0 exactly.
    G = F.astype(np.float32, copy=False) if F.size > _KMEANS_FLOAT32_ENTRIES else np.asarray(F)
    sq = np.einsum("ij,ij->i", G, G, dtype=np.float64)
    chosen = np.empty(m, dtype=np.intp)
    chosen[0] = rng.integers(n)
    dist = np.full(n, np.inf)
    bar = _progress(m, "kernel k-means++", verbose)
    for j in range(m):
        c = G[chosen[j]]
        d = sq - 2.0 * (G @ c).astype(np.float64) + float(sq[chosen[j]])
        np.minimum(dist, np.maximum(d, 0.0), out=dist)
        dist[chosen[: j + 1]] = 0.0
        bar.update(1)
        if j + 1 == m:
            break
        total = float(dist.sum())
        if total <= 0.0:
            # Every point coincides with a centre in the sketch features: fill uniformly.
            rest = np.setdiff1d(np.arange(n), chosen[: j + 1])
            chosen[j + 1 :] = rng.choice(rest, size=m - j - 1, replace=False)
            break
        chosen[j + 1] = rng.choice(n, p=dist / total)
    bar.close()
    return np.sort(chosen)
