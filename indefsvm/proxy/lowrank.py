"""The proxy-kernel SVM of paper 004 on a low-rank kernel ``K0 = Phi diag(s) Phi'``.

Paper 004 (Luss & d'Aspremont) maximises, over the SVM feasible set,

    f(alpha) = l(alpha) - 1/2 u'K0 u - ||u||^4 / (16 rho) + rho * sum_i min(0, lambda_i(M))^2

with ``u = S alpha`` and ``M = K0 + sigma u u'``, ``sigma = 1/(4 rho)`` (notes §1; eq. 7, 17, 20).
When ``K0 = Phi diag(s) Phi'`` has rank ``m`` (a Nyström factor, paper 003 Sect. 2.2), ``M`` acts
only on ``span(Phi, u)`` (notes §11): with an orthonormal basis ``U = Phi T`` of range(Phi) in
which ``K0 = U diag(d) U'`` (computed once, O(n m^2)), ``z = U'u`` and the unit residual
``q = (u - U z) / ||u - U z||``,

    M = [U q] (diag(d, 0) + sigma c c') [U q]',      c = (z, ||u - U z||),

an (m+1)-dimensional diagonal-plus-rank-one matrix. Its negative eigenpairs (the rank-one engine
of :mod:`indefsvm.linalg.rank_one`, O(m^2)) give the objective, the exact gradient
``grad l - S K*(alpha) u`` (notes §2) and the certified duality gap (notes §3): the upper bound is
the SVM primal of the rank-(m+1) proxy kernel ``K* = M_+``, i.e. a linear SVM on m+1 features with
the best intercept found by sorting (:func:`indefsvm.proxy.problems.minimize_piecewise_linear`). One
evaluation costs two products with ``Phi`` (O(nm)) plus O(m^2); no n x n array is formed.

No published method has this low-rank variant; everything else (feasible sets, projections,
bounds, the solvers) is the dense problem's, so the problem classes here subclass the dense ones
of :mod:`indefsvm.proxy.problems` and only replace the kernel operator.

Usage::

    K0 = LowRankKernel(Phi, signature)          # K0 = Phi diag(signature) Phi'
    res = indefsvm.solve(K0, y, C=1.0, rho=1.0)  # method="pg"
    res.kernel                                   # a LowRankProxyKernel (factor), not n x n

Methods that need dense n x n matrices (``method="accpm"``/``"siqclp"``, LIBSVM checks, a dense
``K*``) work up to ``n = DENSE_LIMIT`` and are refused above it with a message saying why.
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.exceptions import ConvergenceWarning

from indefsvm.linalg.rank_one import rank_one_eigh
from indefsvm.proxy.operators import (
    _EPS,
    _TINY,
    _Z_ERROR_LIMIT,
    ProxyState,
    neg_sq_change_fields,
    smoothing_correction,
)
from indefsvm.proxy.problems import (
    ClassificationProblem,
    Evaluation,
    OneClassProblem,
    ProxyKernelProblem,
    RegressionProblem,
)

__all__ = [
    "DENSE_LIMIT",
    "LowRankClassificationProblem",
    "LowRankKernel",
    "LowRankOneClassProblem",
    "LowRankPerturbProblem",
    "LowRankProxyKernel",
    "LowRankProxyOperator",
    "LowRankRegressionProblem",
    "make_lowrank_problem",
]

logger = logging.getLogger(__name__)

#: Largest n for which a low-rank problem agrees to form n x n matrices (dense ``K0``/``K*``,
#: LIBSVM checks, ACCPM's Newton systems, SIQCLP): 5,000 x 5,000 float64 is 200 MB.
DENSE_LIMIT = 5000
#: Problems whose LIBSVM check has a linear (LIBLINEAR) form above :data:`DENSE_LIMIT`.
_LINEAR_CHECK_KINDS = ("svc", "perturb", "svr")

# Rows of Phi converted to float64 at once when Phi is stored in float32 (64 MB for m = 500).
_BLOCK_ROWS = 16384
# Stored (u, U'u) pairs: the pair x_k, x_{k-1} must survive a few backtracking evaluations.
_LOWRANK_Z_HISTORY = 6
# Below this fraction of ||u||^2 the residual norm is recomputed from the explicit residual
# instead of ||u||^2 - ||z||^2 (whose rounding error is eps ||u||^2).
_CANCELLATION = 1e-6


def _blocks(n: int, block: int = _BLOCK_ROWS):
    for start in range(0, n, block):
        yield slice(start, min(n, start + block))


class LowRankKernel:
    """A symmetric kernel given by a factor: ``K0 = features @ diag(signature) @ features.T``.

    The input type of :func:`indefsvm.solve` / :func:`indefsvm.make_problem` for the low-rank
    proxy-kernel SVM (e.g. the output of ``IndefiniteNystroem``: ``Phi = nys.transform(X)``,
    ``signature = nys.signature_``). Nothing n x n is formed unless :meth:`toarray` is called.

    Parameters
    ----------
    features : array_like of shape (n, m)
        The factor ``Phi``. float64 and float32 arrays are kept by reference (no copy); float32
        storage halves the memory, and every product converts row blocks to float64, so the
        kernel is exactly the one of the stored values and the certified bounds stay valid.
    signature : array_like of shape (m,)
        Diagonal weights, ``±1`` for a Nyström factor of an indefinite kernel (any finite real
        weights are accepted).
    """

    def __init__(self, features: ArrayLike, signature: ArrayLike) -> None:
        Phi = np.asarray(features)
        if Phi.dtype not in (np.float64, np.float32):
            if not (np.issubdtype(Phi.dtype, np.number) and not np.iscomplexobj(Phi)):
                raise TypeError(f"features must be a real numeric array; got dtype {Phi.dtype}.")
            Phi = Phi.astype(np.float64)
        if Phi.ndim != 2 or Phi.shape[0] < 2 or Phi.shape[1] < 1:
            raise ValueError(
                f"features must be a 2-D array (n, m) with n >= 2 and m >= 1; got {Phi.shape}."
            )
        s = np.asarray(signature, dtype=np.float64)
        if s.ndim != 1 or s.shape[0] != Phi.shape[1]:
            raise ValueError(
                f"signature must be a vector of length m = {Phi.shape[1]} (one weight per column "
                f"of features); got shape {s.shape}."
            )
        if not np.all(np.isfinite(s)):
            raise ValueError("signature contains NaN or inf.")
        for sl in _blocks(Phi.shape[0]):
            if not np.all(np.isfinite(Phi[sl])):
                raise ValueError("features contains NaN or inf.")
        self.features = Phi
        self.signature = s

    @property
    def shape(self) -> tuple[int, int]:
        return (self.features.shape[0], self.features.shape[0])

    @property
    def n(self) -> int:
        return self.features.shape[0]

    @property
    def rank(self) -> int:
        """Number of columns ``m`` of the factor (an upper bound on the rank)."""
        return self.features.shape[1]

    def matvec(self, v: ArrayLike) -> NDArray[np.float64]:
        """``K0 @ v`` in O(nm)."""
        v = np.asarray(v, dtype=np.float64)
        return _mat(self.features, self.signature * _rmat(self.features, v))

    def toarray(self, *, max_n: int = DENSE_LIMIT) -> NDArray[np.float64]:
        """The dense ``n x n`` kernel (refused above ``max_n`` rows: it would need n^2 memory)."""
        _check_dense(self.n, max_n, "the dense kernel K0")
        F = np.asarray(self.features, dtype=np.float64)
        K = (F * self.signature) @ F.T
        return 0.5 * (K + K.T)

    def __repr__(self) -> str:
        return f"LowRankKernel(n={self.n}, m={self.rank}, dtype={self.features.dtype})"


def _check_dense(n: int, max_n: int, what: str) -> None:
    if n > max_n:
        raise ValueError(
            f"{what} would be a dense {n} x {n} array ({8 * n * n / 1e9:.3g} GB); the low-rank "
            f"problem forms n x n arrays only up to n = {max_n}. Use method='pg' and the factored "
            "results (LowRankProxyKernel.matvec / rows) instead."
        )


@functools.lru_cache(maxsize=1)
def _float32_kernels() -> tuple[Any, Any] | None:
    """Compiled ``Phi' v`` and ``Phi w`` for float32 ``Phi`` and float64 vectors (Numba).

    Each product reads the float32 factor once and accumulates in float64 (a float32 value is
    exact in float64, so the result is the float64 product of the stored values). The numpy
    fallback converts row blocks to float64 first, which writes and reads twice the bytes:
    at n = 10^6, m = 500 a pass is memory bound. None when Numba is not installed.
    """
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is optional here
        return None

    @numba.njit(parallel=True, cache=True)
    def rmat(Phi, v, parts):  # pragma: no cover - compiled
        n, m = Phi.shape
        chunks = parts.shape[0]
        for c in numba.prange(chunks):
            start = c * n // chunks
            stop = (c + 1) * n // chunks
            for i in range(start, stop):
                vi = v[i]
                for j in range(m):
                    parts[c, j] += Phi[i, j] * vi
        return parts.sum(axis=0)

    # Reassociation lets LLVM vectorise the row dot products (a different summation order of
    # the same float64 terms; all values are finite).
    @numba.njit(parallel=True, cache=True, fastmath={"reassoc", "contract"})
    def mat(Phi, w, out):  # pragma: no cover - compiled
        n, m = Phi.shape
        for i in numba.prange(n):
            acc = 0.0
            for j in range(m):
                acc += Phi[i, j] * w[j]
            out[i] = acc
        return out

    return rmat, mat


def _use_compiled(Phi: NDArray, x: NDArray) -> bool:
    return (
        Phi.dtype == np.float32
        and x.ndim == 1
        and Phi.flags.c_contiguous
        and (_float32_kernels() is not None)
    )


def _rmat(Phi: NDArray, v: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Phi' v`` in float64 (float32 Phi: compiled kernel, or row blocks converted)."""
    if Phi.dtype == np.float64:
        return Phi.T @ v
    if _use_compiled(Phi, v):
        rmat, _ = _float32_kernels()  # type: ignore[misc]
        return rmat(Phi, np.ascontiguousarray(v, dtype=np.float64), np.zeros((16, Phi.shape[1])))
    out = np.zeros((Phi.shape[1],) + v.shape[1:])
    for sl in _blocks(Phi.shape[0]):
        out += Phi[sl].astype(np.float64).T @ v[sl]
    return out


def _mat(Phi: NDArray, w: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Phi w`` in float64 (float32 Phi: compiled kernel, or row blocks converted)."""
    if Phi.dtype == np.float64:
        return Phi @ w
    if _use_compiled(Phi, w):
        _, mat = _float32_kernels()  # type: ignore[misc]
        return mat(Phi, np.ascontiguousarray(w, dtype=np.float64), np.empty(Phi.shape[0]))
    out = np.empty((Phi.shape[0],) + w.shape[1:])
    for sl in _blocks(Phi.shape[0]):
        out[sl] = Phi[sl].astype(np.float64) @ w
    return out


@dataclass
class LowRankProxyState(ProxyState):
    """:class:`~indefsvm.proxy.operators.ProxyState` of the low-rank operator.

    ``z`` is ``c = (U'u, ||r||)`` in the (m'+1)-dimensional basis ``[U q]`` (the residual
    coordinate at index ``residual_index``), ``low_vectors`` are eigenvectors of
    ``diag(d, 0) + sigma c c'`` in that basis.
    """

    residual_norm: float = 0.0
    residual: NDArray[np.float64] | None = None


class LowRankProxyOperator:
    """``K*(u) = (K0 + sigma u u')_+`` for ``K0 = Phi_w diag(s) Phi_w'`` without n x n arrays.

    Same interface as :class:`indefsvm.proxy.operators.ProxyKernelOperator` (``state``, ``matvec``,
    ``project_rows``, ``kernel``, ``smoothed_kstar_u``, ``spectral_scale``, ``sigma``,
    ``eigenvalues``), so the problems and solvers of the package use it unchanged.

    ``Phi_w = diag(row_scale) Phi`` (the ``Ds`` scaling of a componentwise rho, notes §7) is never
    formed: the scaling is applied to the vectors.

    Parameters
    ----------
    kernel : LowRankKernel
    sigma : float
        ``1 / (4 rho)``.
    row_scale : ndarray of shape (n,), optional
        ``rho_i^(1/4)`` for a vector rho.
    rank_tol : float
        Directions of range(Phi) whose squared singular value (of the column-normalised factor)
        is below ``rank_tol`` times the largest are dropped: they carry a kernel part of relative
        size ``rank_tol`` at most and would make the basis lose orthogonality.
    """

    def __init__(
        self,
        kernel: LowRankKernel,
        sigma: float,
        *,
        row_scale: NDArray[np.float64] | None = None,
        rank_tol: float = 1e-12,
    ) -> None:
        self.factor = kernel
        self.Phi = kernel.features
        self.n = kernel.n
        self.sigma = float(sigma)
        self.row_scale = row_scale
        self.engine_threads = 1
        self._check_scale(kernel, row_scale)
        G = self._gram(None)
        self.gram = G
        # Orthonormal basis U = Phi_w T of range(Phi_w) from the Gram matrix after Jacobi
        # scaling (Nyström features have orthogonal columns of very different norms), with a
        # second pass when the first is ill conditioned (Cholesky-QR2 idea).
        norms = np.sqrt(np.maximum(np.diag(G), 0.0))
        keep = norms > 0
        if not np.any(keep):
            raise ValueError("the kernel factor is identically zero.")
        Dinv = np.zeros_like(norms)
        Dinv[keep] = 1.0 / norms[keep]
        T = self._orthonormalizer(Dinv[:, None] * G * Dinv[None, :], rank_tol) * Dinv[:, None]
        gam = np.linalg.eigvalsh(T.T @ G @ T)
        if gam.size and (gam[-1] - 1.0 > 1e-8 or 1.0 - gam[0] > 1e-8):
            T = T @ self._orthonormalizer(self._gram(T), 0.0)
        # K0 = U (T'G S G T) U' on range(Phi_w); rotate the basis to diagonalise it.
        GT = G @ T
        B0 = (GT.T * kernel.signature) @ GT
        d, P = np.linalg.eigh(0.5 * (B0 + B0.T))
        self.T = T @ P
        self.eigenvalues = d
        self.rank = d.shape[0]
        self.n_negative_k0 = int(np.count_nonzero(d < 0))
        # The complement of range(Phi) is an eigenspace of K0 with eigenvalue 0: one pole 0.
        self.residual_index = int(np.searchsorted(d, 0.0))
        self.d_ext = np.insert(d, self.residual_index, 0.0)
        self.assume_psd = False
        #: Recent ``(u, U'u)`` pairs: ``U'u`` is linear in ``u``, so at the accelerated method's
        #: extrapolated point it is a combination of two stored products
        #: (:meth:`_z_by_linearity`), which saves one of the four passes over the factor per
        #: iteration. ``n_linear_z`` counts them.
        self._z_history: list[tuple[NDArray[np.float64], NDArray[np.float64], float]] = []
        self.n_linear_z = 0
        logger.debug("low-rank operator: n=%d, m=%d, rank=%d", self.n, kernel.rank, self.rank)

    @staticmethod
    def _check_scale(kernel: LowRankKernel, row_scale: NDArray[np.float64] | None) -> None:
        """Refuse a factor whose kernel overflows, as the dense path does (before any product).

        ``|K0_ij| <= m max|Phi|^2 max|s|``; the dense problem refuses ``n max|K0| > 1e150``
        (its squared eigenvalues overflow), and the Gram matrix of a factor at that scale
        overflows too (numpy's eigh then failed with a bare ``LinAlgError``).
        """
        Phi = kernel.features
        peak = 0.0
        for sl in _blocks(Phi.shape[0]):
            block = np.abs(np.asarray(Phi[sl], dtype=np.float64))
            if row_scale is not None:
                block = block * row_scale[sl, None]
            peak = max(peak, float(np.max(block)) if block.size else 0.0)
        with np.errstate(over="ignore"):
            weight = float(np.max(np.abs(kernel.signature))) if kernel.signature.size else 0.0
            entry = np.float64(peak) ** 2 * weight
            bound = entry * Phi.shape[1] * Phi.shape[0]
        if not np.isfinite(bound) or bound > 1e150:
            size = f"{entry:.3g}" if np.isfinite(entry) else "more than 1.8e308 (overflow)"
            raise ValueError(
                f"the low-rank kernel's factor has entries up to {peak:.3g} (signature up to "
                f"{weight:.3g}): K0 = Phi diag(s) Phi' reaches about {size} "
                "per entry, and at this scale the squared eigenvalues in the objective overflow "
                "double precision. Rescale the factor (e.g. Phi / np.abs(Phi).max()) and choose "
                "C and rho on that scale."
            )

    def reset_warm_start(self) -> None:
        """Forget the stored ``U'u`` products (a solve starts from nothing remembered)."""
        self._z_history.clear()

    def _z_by_linearity(self, u: NDArray[np.float64]) -> tuple[NDArray[np.float64], float] | None:
        """``U'u`` and its error bound in O(n) when ``u = u_1 + c (u_1 - u_2)`` (to rounding).

        ``u_1, u_2`` are two recent points.

        The accelerated method evaluates ``y = x_k + beta (x_k - x_{k-1})`` right after
        ``x_k``. Consecutive iterates are nearly parallel, so a least-squares fit on the pair
        (the dense operator's test) is ill-conditioned and rejects them; along the difference
        ``d = u_1 - u_2`` the coefficient ``c = d'(u - u_1) / d'd`` is well determined. Accepted
        only if ``||u - u_1 - c d|| <= 16 eps (||u_1|| + |c| ||d||)`` (what forming ``y`` itself
        rounds off, plus the error of the fitted ``c``): ``U`` has orthonormal columns, so the
        combined ``U'u`` differs from ``U'u`` by at most that norm, the size of the direct
        product's own rounding error. (An entrywise test rejects most extrapolated points: the
        error of ``c`` is of order ``eps ||u|| / ||d||``, not small entry by entry.)

        The rounding errors of ``z_1`` and ``z_2`` enter multiplied by ``1 + c`` and ``c``, so
        as in :meth:`indefsvm.proxy.operators.ProxyKernelOperator._z_by_linearity` every stored
        product
        carries a bound ``E`` in units of the direct product's rounding (1 for those), and a
        combination is refused when ``(|1 + c| ||u_1|| E_1 + |c| ||u_2|| E_2) / ||u|| > 4`` (a
        huge ``c`` from two nearly equal points, or combinations of combinations).
        """
        history = self._z_history
        if len(history) < 2:
            return None
        u1, z1, e1 = history[-1]
        e = u - u1
        norm1 = np.sqrt(float(u1 @ u1))
        norm_u = np.sqrt(float(u @ u))
        if not norm_u > 0:
            return None  # u = 0: the direct product is exact
        for u2, z2, e2 in reversed(history[:-1]):
            d = u1 - u2
            dd = float(d @ d)
            if not dd > 0:
                continue
            c = float(d @ e) / dd
            error = abs(1.0 + c) * norm1 * e1 + abs(c) * np.sqrt(float(u2 @ u2)) * e2
            if not error <= _Z_ERROR_LIMIT * norm_u:
                continue
            r = e - c * d
            allowed = (16.0 * _EPS) * (norm1 + abs(c) * np.sqrt(dd)) + _TINY
            if np.sqrt(float(r @ r)) <= allowed:
                self.n_linear_z += 1
                return z1 + c * (z1 - z2), float(error / norm_u)
        return None

    # -- products with the factor ---------------------------------------------------------------
    def _gram(self, T: NDArray[np.float64] | None) -> NDArray[np.float64]:
        """``(Phi_w T)'(Phi_w T)`` accumulated over row blocks."""
        Phi, s = self.Phi, self.row_scale
        if Phi.dtype == np.float64 and s is None and T is None:
            G = Phi.T @ Phi
            return 0.5 * (G + G.T)
        k = Phi.shape[1] if T is None else T.shape[1]
        G = np.zeros((k, k))
        for sl in _blocks(self.n):
            B = Phi[sl].astype(np.float64, copy=False)
            if s is not None:
                B = B * s[sl, None]
            if T is not None:
                B = B @ T
            G += B.T @ B
        return 0.5 * (G + G.T)

    @staticmethod
    def _orthonormalizer(G: NDArray[np.float64], rank_tol: float) -> NDArray[np.float64]:
        gam, W = np.linalg.eigh(G)
        keep = gam > max(rank_tol, 0.0) * gam[-1]
        keep &= gam > 0
        return W[:, keep] / np.sqrt(gam[keep])

    def rmat_w(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Phi_w' v``."""
        if self.row_scale is not None:
            v = v * (self.row_scale if v.ndim == 1 else self.row_scale[:, None])
        return _rmat(self.Phi, v)

    def mat_w(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Phi_w w``."""
        out = _mat(self.Phi, w)
        if self.row_scale is not None:
            out *= self.row_scale if out.ndim == 1 else self.row_scale[:, None]
        return out

    def _split(self, c: NDArray[np.float64]) -> tuple[NDArray[np.float64], Any]:
        """Split coordinates in ``[U q]`` into the U part and the residual part."""
        j = self.residual_index
        return np.delete(c, j, axis=0), c[j]

    def _join(self, head: NDArray[np.float64], last: Any) -> NDArray[np.float64]:
        return np.insert(head, self.residual_index, last, axis=0)

    def residual(self, state: LowRankProxyState) -> NDArray[np.float64]:
        """``r = u - U U'u`` (computed once per state, on demand)."""
        if state.residual is None:
            z_head, _ = self._split(state.z)
            state.residual = state.u - self.mat_w(self.T @ z_head)
        return state.residual

    def apply_basis(self, state: LowRankProxyState, c: NDArray[np.float64]) -> NDArray[np.float64]:
        """``[U q] c`` for coordinates ``c`` of shape (m'+1,) or (m'+1, k); one pass over Phi."""
        head, last = self._split(c)
        rn = state.residual_norm
        if rn == 0.0:
            return self.mat_w(self.T @ head)
        if state.residual is not None:
            r = state.residual
            return self.mat_w(self.T @ head) + (np.multiply.outer(r, last) / rn)
        # q = (u - U z)/rn: fold the U part of q into the single product with Phi.
        z_head, _ = self._split(state.z)
        coef = np.asarray(last) / rn
        return self.mat_w(self.T @ (head - np.multiply.outer(z_head, coef))) + np.multiply.outer(
            state.u, coef
        )

    def basis_adjoint(self, state: LowRankProxyState, V: NDArray[np.float64]) -> NDArray:
        """``[U q]' V`` for ``V`` of shape (n,) or (n, k); one pass over Phi."""
        x = self.T.T @ self.rmat_w(V)
        rn = state.residual_norm
        if rn == 0.0:
            return self._join(x, np.zeros(x.shape[1:]) if x.ndim > 1 else 0.0)
        z_head, _ = self._split(state.z)
        if state.residual is not None:
            last = state.residual @ V
        else:
            last = (state.u @ V - z_head @ x) / rn
        return self._join(x, last)

    # -- ProxyKernelOperator interface ------------------------------------------------------------
    def spectral_scale(self) -> float:
        """Initial curvature estimate for the solvers: ``max(lambda(K0))`` (``max |lambda|`` if
        no eigenvalue is positive).

        The gradient ``grad l - S K* u`` only sees ``K* = M_+``, so a large NEGATIVE eigenvalue
        (a sigmoid kernel ``tanh(g x'z + c)`` with ``c < 0`` has one of order ``n |tanh c|``, the
        constant direction) says nothing about the step size; starting from it cost about 25
        projected-gradient iterations at n = 100,000 before the estimate had decayed.
        Backtracking corrects an underestimate.
        """
        if not self.rank:
            return 0.0
        top = float(np.max(self.eigenvalues))
        return top if top > 0 else float(np.max(np.abs(self.eigenvalues)))

    @property
    def is_psd(self) -> bool:
        return self.n_negative_k0 == 0

    @property
    def K0(self) -> NDArray[np.float64]:
        """The dense working kernel ``Phi_w diag(s) Phi_w'`` (only up to ``DENSE_LIMIT``)."""
        _check_dense(self.n, DENSE_LIMIT, "the dense kernel K0 (needed by SIQCLP)")
        U = self.mat_w(self.T)
        K = (U * self.eigenvalues) @ U.T
        return 0.5 * (K + K.T)

    def state(self, u: NDArray[np.float64], *, smoothing: float = 0.0) -> LowRankProxyState:
        """Proxy-kernel quantities at ``u`` in O(nm + m^2) (notes §11)."""
        sigma = self.sigma
        u = np.asarray(u, dtype=np.float64)
        u_norm_sq = float(u @ u)
        found = self._z_by_linearity(u)
        if found is None:
            z_head, z_error = self.T.T @ self.rmat_w(u), 1.0
        else:
            z_head, z_error = found
        self._z_history.append((u, z_head, z_error))
        del self._z_history[:-_LOWRANK_Z_HISTORY]
        rn_sq = u_norm_sq - float(z_head @ z_head)
        residual = None
        if rn_sq <= _CANCELLATION * u_norm_sq:
            # ||u||^2 - ||z||^2 lost its digits: form r explicitly (one more pass over Phi).
            residual = u - self.mat_w(self.T @ z_head)
            rn_sq = float(residual @ residual)
        rn = float(np.sqrt(max(rn_sq, 0.0)))
        if rn == 0.0:
            residual = None
        z = self._join(z_head, rn)
        d = self.d_ext
        low = rank_one_eigh(
            d, z, sigma, which="below", upper=float(smoothing), n_threads=self.engine_threads
        )
        lam, W = low.eigenvalues, low.eigenvectors
        neg = lam < 0
        wz = W[:, neg].T @ z
        # [U q]' K* u = (diag(d,0) + sigma c c') c - W_- diag(lam_-) W_-' c
        s = d * z + (sigma * float(z @ z)) * z - W[:, neg] @ (lam[neg] * wz)
        state = LowRankProxyState(
            u=u,
            z=z,
            low_values=lam,
            low_vectors=W,
            kstar_u=np.empty(0),
            u_kstar_u=float(z @ s),
            u_k0_u=float(z @ (d * z)),
            u_norm_sq=u_norm_sq,
            u_mneg_u=float(np.sum(lam[neg] * wz**2)),
            neg_sq_sum=float(np.sum(lam[neg] ** 2)),
            **neg_sq_change_fields(
                d, z, sigma, lam[neg], u_norm_sq, getattr(self, "excess_accuracy", 0.0)
            ),
            residual_norm=rn,
            residual=residual,
        )
        state.kstar_u = self.apply_basis(state, s)
        return state

    def _small_kstar(self, state: LowRankProxyState) -> NDArray[np.float64]:
        """``K*`` in the basis ``[U q]``: ``diag(d,0) + sigma c c' - W_- diag(lam_-) W_-'``."""
        z = state.z
        B = np.diag(self.d_ext) + self.sigma * np.outer(z, z)
        neg = state.low_values < 0
        Wn = state.low_vectors[:, neg]
        B -= (Wn * state.low_values[neg]) @ Wn.T
        return 0.5 * (B + B.T)

    def matvec(self, state: LowRankProxyState, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``K*(u) v`` in O(nm): ``K*`` lives in span([U q])."""
        v = np.asarray(v, dtype=np.float64)
        return self.apply_basis(state, self._small_kstar(state) @ self.basis_adjoint(state, v))

    def smoothed_kstar_u(self, state: LowRankProxyState, smoothing: float) -> NDArray:
        """The paper's Moreau-Yosida smoothed ``K_eps u`` (Sect. 3), as in the dense operator."""
        c = smoothing_correction(state, smoothing)
        return state.kstar_u if c is None else state.kstar_u - self.apply_basis(state, c)

    def project_rows(self, state: LowRankProxyState, R: NDArray[np.float64]) -> NDArray:
        """``R (I - Q_- Q_-')``: the projector on M's non-negative eigenspace (notes §8)."""
        R = np.array(R, dtype=np.float64, copy=True)
        neg = state.low_values < 0
        if not np.any(neg):
            return R
        Wn = state.low_vectors[:, neg]
        # (R Q_-) with Q_- = [U q] W_-: [U q]' R' is one pass over Phi for all rows at once.
        RQ = (self.basis_adjoint(state, R.T).T) @ Wn
        R -= self.apply_basis(state, Wn @ RQ.T).T
        return R

    def kernel(self, state: LowRankProxyState) -> NDArray[np.float64]:
        """The dense ``K*`` (only up to ``DENSE_LIMIT``; use :class:`LowRankProxyKernel`)."""
        _check_dense(self.n, DENSE_LIMIT, "the dense proxy kernel K*")
        E = self.apply_basis(state, np.eye(self.rank + 1))
        K = (E @ self._small_kstar(state)) @ E.T
        return 0.5 * (K + K.T)


class LowRankProxyKernel:
    """The learned proxy kernel ``K*`` of a low-rank problem, kept as a factor.

    ``K* = E B E'`` with ``E = Ds^-1 [U q]`` (n x (m'+1), never stored: ``U = Phi_w T``) and
    ``B`` the (m'+1) x (m'+1) PSD matrix of :attr:`core`. This is ``SolveResult.kernel`` (and
    ``proxy_kernel_`` of the estimators) for a low-rank problem, in place of the dense n x n array.

    Attributes
    ----------
    shape : tuple
        ``(n, n)``.
    core : ndarray of shape (m'+1, m'+1)
    """

    def __init__(self, operator: LowRankProxyOperator, state: LowRankProxyState) -> None:
        self.operator = operator
        self.state = state
        self.core = operator._small_kstar(state)
        self.shape = (operator.n, operator.n)

    def _unscale(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        s = self.operator.row_scale
        if s is None:
            return x
        return x / (s if x.ndim == 1 else s[:, None])

    def matvec(self, V: ArrayLike) -> NDArray[np.float64]:
        """``K* @ V`` for ``V`` of shape (n,) or (n, k), in O(nmk)."""
        op, st = self.operator, self.state
        V = self._unscale(np.asarray(V, dtype=np.float64))
        return self._unscale(op.apply_basis(st, self.core @ op.basis_adjoint(st, V)))

    def features(self) -> NDArray[np.float64]:
        """A factor ``F`` (n x k, k <= m'+1) with ``K* = F F'`` (O(nm) memory)."""
        lam, W = np.linalg.eigh(self.core)
        pos = lam > 0
        return self._unscale(self.operator.apply_basis(self.state, W[:, pos] * np.sqrt(lam[pos])))

    def rows(self, index: ArrayLike) -> NDArray[np.float64]:
        """Rows ``K*[index]`` (len(index) x n), O(nm) per row."""
        idx = np.atleast_1d(np.asarray(index))
        e = np.zeros((self.shape[0], idx.shape[0]))
        e[idx, np.arange(idx.shape[0])] = 1.0
        return self.matvec(e).T

    def toarray(self, *, max_n: int = DENSE_LIMIT) -> NDArray[np.float64]:
        """The dense ``K*`` (refused above ``max_n``)."""
        _check_dense(self.shape[0], max_n, "the dense proxy kernel K*")
        F = self.features()
        K = F @ F.T
        return 0.5 * (K + K.T)

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[np.float64]:
        K = self.toarray()
        return K if dtype is None else K.astype(dtype)

    def __repr__(self) -> str:
        return f"LowRankProxyKernel(n={self.shape[0]}, rank<={self.core.shape[0]})"


class _LowRankProblemMixin:
    """Replaces the dense operator of a :class:`ProxyKernelProblem` by the low-rank one.

    The subclasses below inherit everything else (projection, objective, gradient, certified
    bound ``_primal_from``, out-of-sample rows) from the dense problem classes: those only talk to
    ``self.operator`` through the :class:`~indefsvm.proxy.operators.ProxyKernelOperator` interface.
    """

    #: Marks the problem as factored (no n x n arrays); used by estimators and ``solve``.
    low_rank = True
    n: int
    operator: LowRankProxyOperator

    def _init_lowrank(
        self,
        K0: LowRankKernel,
        rho: float | ArrayLike,
        feasible: dict[str, Any],
        *,
        rank_tol: float = 1e-12,
    ) -> None:
        # The dense problem's rho and feasible-set set-up (same attributes), then the factored
        # operator in place of the dense one.
        self.kernel0 = K0
        self._setup(K0.n, rho, **feasible)  # type: ignore[attr-defined]
        self.operator = LowRankProxyOperator(
            K0, 1.0 / (4.0 * self.penalty_rho), row_scale=self.scale, rank_tol=rank_tol
        )

    def check_method(self, method: str) -> None:
        """Refuse solvers that form n x n matrices above :data:`DENSE_LIMIT` (hook of solve)."""
        if method != "pg" and self.n > DENSE_LIMIT:
            raise ValueError(
                f"method={method!r} needs n x n matrices (ACCPM: the Newton system of its "
                f"analytic centers; SIQCLP: dense kernels in its conic program), which the "
                f"low-rank problem forms only up to n = {DENSE_LIMIT}; here n = {self.n}. "
                "Use method='pg' (O(nm) per iteration)."
            )

    def check_options(self, *, method: str, libsvm_every: int | None = None) -> None:
        """Refuse, before solving, options that would fail only after the iterations.

        Above :data:`DENSE_LIMIT` the LIBSVM checks run as a linear SVM (LIBLINEAR) on the
        factor of ``K*``, which exists for classification and regression only: a one-class
        problem with ``libsvm_every`` would iterate and then fail at its first check (the
        result thrown away), so it is refused here with the way out.
        """
        kind = getattr(self, "kind", "")
        if libsvm_every is not None and self.n > DENSE_LIMIT and kind not in _LINEAR_CHECK_KINDS:
            what = "the one-class problem" if kind == "oneclass" else f"problem={kind!r}"
            raise ValueError(
                f"libsvm_every needs a LIBSVM check of {what} on the n x n proxy "
                f"kernel, which the low-rank problem forms only up to n = {DENSE_LIMIT}; here "
                f"n = {self.n}, and above the limit only {', '.join(_LINEAR_CHECK_KINDS)} have "
                "the linear (LIBLINEAR) check. Leave libsvm_every=None: the certified gap does "
                "not need it."
            )

    @property
    def working_eigh(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(eigenvalues, eigenvectors)`` of the dense working kernel (up to ``DENSE_LIMIT``).

        The dense view that the cutting-plane solvers need (SIQCLP's initial constraint
        ``(K0)_+`` and its certified kernel bounds;
        :class:`~indefsvm.proxy.protocols.DenseProblem`):
        the factored operator has no n x n eigenbasis, so one is computed here, once, from the
        dense ``K0`` (refused above :data:`DENSE_LIMIT` with the reason).
        """
        cached = getattr(self, "_dense_eigh", None)
        if cached is None:
            _check_dense(self.n, DENSE_LIMIT, "the eigendecomposition of K0 (needed by SIQCLP)")
            d, V = np.linalg.eigh(self.operator.K0)
            cached = (d, V)
            self._dense_eigh = cached
        return cached

    def objective_at_zero(self) -> float:
        """``f(0) = rho ||(K0)_-||_F^2`` (notes §10), the alpha-free part of the objective."""
        d = self.operator.eigenvalues
        return self.penalty_rho * float(np.sum(np.minimum(d, 0.0) ** 2))

    def kernel_from_state(self, state: ProxyState) -> LowRankProxyKernel:  # type: ignore[override]
        """The proxy kernel as a :class:`LowRankProxyKernel` factor (never n x n)."""
        return LowRankProxyKernel(self.operator, state)  # type: ignore[arg-type]

    def feature_coef(
        self, alpha: ArrayLike, *, state: ProxyState | None = None
    ) -> NDArray[np.float64]:
        """Weights ``c`` (m,) of the inductive decision in factor coordinates (notes §8).

        A point with factor row ``phi`` (e.g. its Nyström features) has the kernel row
        ``k_x = Phi diag(s) phi``; its proxy-kernel decision ``(P_+ k_x)'u`` (the map of
        :meth:`out_of_sample_rows`) equals ``phi @ c``. On a training point (``phi`` its row of
        ``Phi``) it is ``(P_+ k_i)'u = (K0 P_+ u)_i``, not the row ``(K* u)_i`` of the learned
        kernel: ``K* = M P_+`` adds ``sigma u_i (u'P_+ u)`` on every support vector (the
        rank-one term of ``M`` belongs to the training sample). Cost O(nm).
        """
        alpha = np.asarray(alpha, dtype=np.float64)
        op = self.operator
        if state is None:
            state = self.state(alpha)
        u = self.sign * alpha
        u_w = self.u_coef * alpha
        g = _rmat(op.Phi, u)  # Phi' u in the ORIGINAL coordinates
        neg = state.low_values < 0
        if np.any(neg):
            Wn = state.low_vectors[:, neg]
            t = Wn @ (Wn.T @ state.z)  # [U q]' Q_- Q_-' u_w in the basis [U q]
            head, last = op._split(t)
            corr = op.gram @ (op.T @ head)
            rn = state.residual_norm
            if rn > 0 and last != 0.0:
                if isinstance(state, LowRankProxyState) and state.residual is not None:
                    phi_q = op.rmat_w(state.residual) / rn
                else:
                    z_head, _ = op._split(state.z)
                    phi_q = (op.rmat_w(u_w) - op.gram @ (op.T @ z_head)) / rn
                corr = corr + last * phi_q
            g = g - corr
        return self.kernel0.signature * g

    def _libsvm_primal(
        self, evaluation: Evaluation, tol: float
    ) -> tuple[float, float, NDArray[np.float64], NDArray[np.float64]]:
        """Primal value, intercept, alpha and decision values of an external SVM on ``K*``.

        The hook of :meth:`~indefsvm.proxy.problems.ProxyKernelProblem.libsvm_upper_bound` (notes
        §3-4),
        which adds ``rho ||K* - K0||_F^2``.

        Up to :data:`DENSE_LIMIT` this is the dense problem's LIBSVM check on the n x n ``K*``.
        Above it, ``K* = F F'`` with ``F`` the (m'+1)-column factor of
        :meth:`LowRankProxyKernel.features`, so the SVM with kernel ``K*`` is a LINEAR SVM on
        ``F``: LIBLINEAR (scikit-learn's ``LinearSVC``/``LinearSVR``, dual coordinate descent,
        ``C_i`` as sample weights) solves it in O(nm) per epoch, and the bound is the exact
        primal of its ``w`` with the best intercept (valid whatever LIBLINEAR's tolerance) plus
        ``rho ||K* - K0||_F^2``. The one-class problem has no LIBLINEAR counterpart and is refused
        above the limit. The third value (LIBSVM's alpha) is NaN on the linear path (LIBLINEAR
        does not return its dual variables).
        """
        state = evaluation.state
        if self.n > DENSE_LIMIT:
            return self._linear_primal(state, tol)
        K = self.operator.kernel(state)
        if self.scale is not None:
            K = (K / self.scale[:, None]) / self.scale[None, :]
        u_lib = self._libsvm_solution(K, tol)  # type: ignore[attr-defined]
        g = K @ u_lib
        primal, b = self._primal_from(g, float(u_lib @ g))  # type: ignore[attr-defined]
        return primal, b, self.sign * u_lib, g  # type: ignore[attr-defined]

    def _linear_primal(
        self, state: ProxyState, tol: float
    ) -> tuple[float, float, NDArray[np.float64], NDArray[np.float64]]:
        kind = getattr(self, "kind", "")
        if kind not in _LINEAR_CHECK_KINDS:
            _check_dense(self.n, DENSE_LIMIT, "a LIBSVM check of the one-class problem")
        F = self.kernel_from_state(state).features()
        # LIBLINEAR regularises the intercept as an extra feature: a large scale makes that
        # negligible; the bound re-optimises b exactly anyway.
        common = {"C": 1.0, "dual": True, "tol": tol, "intercept_scaling": 10.0}
        # LIBLINEAR's own convergence warning is irrelevant: the primal of any w is a bound.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            w = self._liblinear_w(kind, F, common)
        g = F @ w
        primal, b = self._primal_from(g, float(w @ w))  # type: ignore[attr-defined]
        return primal, b, np.full(self.n, np.nan), g

    def _liblinear_w(self, kind: str, F: NDArray[np.float64], common: dict) -> NDArray:
        from sklearn.svm import LinearSVC, LinearSVR

        if kind == "svr":
            model = LinearSVR(loss="epsilon_insensitive", epsilon=self.epsilon, **common)
            model.C = self.C  # type: ignore[attr-defined]
            model.fit(F, self.y)  # type: ignore[attr-defined]
        else:
            model = LinearSVC(loss="hinge", max_iter=2000, **common)
            model.fit(F, self.y, sample_weight=self.box)  # type: ignore[attr-defined]
        return np.ravel(model.coef_)


class LowRankClassificationProblem(_LowRankProblemMixin, ClassificationProblem):
    """Indefinite SVM classification (paper 004, eq. 7) on ``K0 = Phi diag(s) Phi'``.

    Same problem, parameters and results as :class:`~indefsvm.proxy.problems.ClassificationProblem`;
    ``K0`` is a :class:`LowRankKernel` and one evaluation costs O(nm + m^2) (notes §11).
    """

    def __init__(
        self,
        K0: LowRankKernel,
        y: ArrayLike,
        *,
        C: float = 1.0,
        rho: float | ArrayLike = 1.0,
        class_weight: None | str | Mapping[Any, float] = None,
        rank_tol: float = 1e-12,
    ) -> None:
        feasible = self._feasible_set(K0.n, y, C=C, class_weight=class_weight)  # type: ignore
        self._init_lowrank(K0, rho, feasible, rank_tol=rank_tol)


class LowRankPerturbProblem(LowRankClassificationProblem):
    """PerturbSVM (eq. 21-22) on a PSD low-rank kernel (``signature >= 0`` up to ``psd_tol``)."""

    kind = "perturb"

    def __init__(
        self,
        K0: LowRankKernel,
        y: ArrayLike,
        *,
        C: float = 1.0,
        rho: float | ArrayLike = 1.0,
        class_weight: None | str | Mapping[Any, float] = None,
        psd_tol: float = 1e-10,
        rank_tol: float = 1e-12,
    ) -> None:
        super().__init__(K0, y, C=C, rho=rho, class_weight=class_weight, rank_tol=rank_tol)
        d = self.operator.eigenvalues
        scale = max(1.0, float(np.max(np.abs(d)))) if d.size else 1.0
        if d.size and d[0] < -psd_tol * scale:
            raise ValueError(
                f"problem='perturb' (PerturbSVM, paper 004 Sect. 4.3) needs a PSD kernel, but "
                f"the low-rank K0 has {int(np.sum(d < -psd_tol * scale))} eigenvalues below "
                f"-psd_tol * max|lambda| (smallest {d[0]:.6g}). Use problem='svc'."
            )


class LowRankRegressionProblem(_LowRankProblemMixin, RegressionProblem):
    """Indefinite SVR (paper 004, eq. 17) on ``K0 = Phi diag(s) Phi'`` (see the dense class)."""

    def __init__(
        self,
        K0: LowRankKernel,
        y: ArrayLike,
        *,
        C: float = 1.0,
        epsilon: float = 0.1,
        rho: float | ArrayLike = 1.0,
        rank_tol: float = 1e-12,
    ) -> None:
        feasible = self._feasible_set(K0.n, y, C=C, epsilon=epsilon)  # type: ignore[attr-defined]
        self._init_lowrank(K0, rho, feasible, rank_tol=rank_tol)


class LowRankOneClassProblem(_LowRankProblemMixin, OneClassProblem):
    """Indefinite one-class SVM (paper 004, eq. 20) on ``K0 = Phi diag(s) Phi'``."""

    def __init__(
        self,
        K0: LowRankKernel,
        *,
        nu: float = 0.5,
        rho: float | ArrayLike = 1.0,
        rank_tol: float = 1e-12,
    ) -> None:
        self._init_lowrank(K0, rho, self._feasible_set(K0.n, nu=nu), rank_tol=rank_tol)  # type: ignore


#: Low-rank counterparts of :data:`indefsvm.proxy.problems.PROBLEM_TYPES` (same names, options and
#: targets): ``make_problem`` picks from here when ``K0`` is a :class:`LowRankKernel`.
LOW_RANK_PROBLEM_TYPES: dict[str, type[ProxyKernelProblem]] = {
    "svc": LowRankClassificationProblem,
    "svr": LowRankRegressionProblem,
    "oneclass": LowRankOneClassProblem,
    "perturb": LowRankPerturbProblem,
}


def make_lowrank_problem(
    kind: str, K0: LowRankKernel, y: ArrayLike | None = None, **options: Any
) -> ProxyKernelProblem:
    """Low-rank counterpart of :func:`indefsvm.proxy.problems.make_problem` (same arguments).

    ``make_problem`` (and so :func:`indefsvm.solve`) does this itself when ``K0`` is a
    :class:`LowRankKernel`; this function only insists on that input type.
    """
    if not isinstance(K0, LowRankKernel):
        raise TypeError(f"K0 must be a LowRankKernel; got {type(K0).__name__}.")
    from indefsvm.proxy.problems import make_problem

    return make_problem(kind, K0, y, **options)
