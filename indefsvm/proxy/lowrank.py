"""The proxy-kernel SVM of paper 004 on a low-rank kernel ``K0 = Phi diag(s) Phi'``.

Paper 004 (Luss & d'Aspremont) maximises, over the SVM feasible set,

    f(alpha) = l(alpha) - 1/2 u'K0 u - ||u||^4 / (16 rho) + rho * sum_i min(0, lambda_i(M))^2

with ``u = S alpha`` and ``M = K0 + sigma u u'``, ``sigma = 1/(4 rho)`` (theory.md §1; eq. 7,
17, 20).
When ``K0 = Phi diag(s) Phi'`` has rank ``m`` (a Nyström factor, paper 003 Sect. 2.2), ``M`` acts
only on ``span(Phi, u)`` (theory.md §11): with an orthonormal basis ``U = Phi T`` of range(Phi) in
which ``K0 = U diag(d) U'`` (computed once, O(n m^2)), ``z = U'u`` and the unit residual
``q = (u - U z) / ||u - U z||``,

    M = [U q] (diag(d, 0) + sigma c c') [U q]',      c = (z, ||u - U z||),

an (m+1)-dimensional diagonal-plus-rank-one matrix. Its negative eigenpairs (the rank-one engine
of :mod:`indefsvm.linalg.rank_one`, O(m^2)) give the objective, the exact gradient
``grad l - S K*(alpha) u`` (theory.md §2) and the certified duality gap (theory.md §3): the upper
bound is
the SVM primal of the rank-(m+1) proxy kernel ``K* = M_+``, i.e. a linear SVM on m+1 features with
the best intercept found by sorting (:func:`indefsvm.proxy.problems.minimize_piecewise_linear`). One
evaluation costs two products with ``Phi`` (O(nm)) plus O(m^2); no n x n array is formed.

No published method has this low-rank variant; everything else (feasible sets, projections,
bounds, the solvers) is the dense problem's: the problem classes of :mod:`indefsvm.proxy.problems`
take a :class:`LowRankKernel` as ``K0`` and build :class:`LowRankProxyOperator` in place of the
dense operator (:func:`indefsvm.proxy.problems.make_operator`); both follow
:class:`indefsvm.proxy.protocols.KernelOperator`.

Usage::

    K0 = LowRankKernel(Phi, signature)          # K0 = Phi diag(signature) Phi'
    res = indefsvm.solve(K0, y, C=1.0, rho=1.0)  # method="pg"
    res.kernel                                   # a LowRankProxyKernel (factor), not n x n

The factor in memory or on a Dask cluster
-----------------------------------------
The operator reads the factor only through the backend of the :class:`LowRankKernel`
(:class:`indefsvm.linalg.factor.NumpyFactor` in memory, :class:`indefsvm.linalg.factor.DaskFactor`
on a Dask cluster; :mod:`indefsvm.linalg.factor` says how the passes run and why the
n-vectors stay in the client), so the operator, the problems and the solvers are one code path.

Methods that need dense n x n matrices (``method="accpm"``/``"siqclp"``, LIBSVM checks, a dense
``K*``) work up to ``n = DENSE_LIMIT`` and are refused above it with a message saying why.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

# check_dense under its former local name: the operator's body is unchanged by the move.
from indefsvm.linalg.factor import DENSE_LIMIT, LowRankKernel
from indefsvm.linalg.factor import check_dense as _check_dense
from indefsvm.linalg.rank_one import rank_one_eigh
from indefsvm.proxy.operators import (
    _EPS,
    _TINY,
    _Z_ERROR_LIMIT,
    ProxyState,
    eigen_state_fields,
    smoothing_correction,
)

__all__ = [
    "LowRankProxyKernel",
    "LowRankProxyOperator",
]

logger = logging.getLogger(__name__)

# Stored (u, U'u) pairs: the pair x_k, x_{k-1} must survive a few backtracking evaluations.
_LOWRANK_Z_HISTORY = 6
# Factors smaller than this (n * m entries, 8 MB in float64) are cheaper to read again than to
# update by rows: below it basis_gram_masked makes its pass (the bookkeeping of the row updates,
# a few O(n) array operations, costs more than one product at n * m ~ 1e4-1e5).
_MIN_UPDATE_ENTRIES = 2**20
# Below this fraction of ||u||^2 the residual norm is recomputed from the explicit residual
# instead of ||u||^2 - ||z||^2 (whose rounding error is eps ||u||^2).
_CANCELLATION = 1e-6


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

    ``Phi_w = diag(row_scale) Phi`` (the ``Ds`` scaling of a componentwise rho, theory.md §7) is
    never
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

    low_rank = True

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
        #: The passes over the factor (:class:`NumpyFactor` or :class:`DaskFactor`).
        self.backend = kernel.backend
        self.n = kernel.n
        self.sigma = float(sigma)
        self.row_scale = row_scale
        self.engine_threads = 1
        #: Passes over the factor since the operator was built (the passes per fit): one
        #: per product ``Phi_w' V`` or ``Phi_w W`` (any number of columns: the factor is read
        #: once), the set-up's Gram matrices included.
        self.n_passes = 0
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
        #: Rows read by :meth:`basis_factor_gram` and :meth:`basis_gram_rows`, in units of n (a
        #: BLAS-3 product over a subset of rows, not a memory-bound pass).
        self.n_gram_passes = 0.0
        logger.debug("low-rank operator: n=%d, m=%d, rank=%d", self.n, kernel.rank, self.rank)

    @staticmethod
    def _check_scale(kernel: LowRankKernel, row_scale: NDArray[np.float64] | None) -> None:
        """Refuse a factor whose kernel overflows, as the dense path does (before any product).

        ``|K0_ij| <= m max|Phi|^2 max|s|``; the dense problem refuses ``n max|K0| > 1e150``
        (its squared eigenvalues overflow), and the Gram matrix of a factor at that scale
        overflows too (numpy's eigh then failed with a bare ``LinAlgError``).
        """
        Phi = kernel.features
        peak = kernel.backend.peak(row_scale)
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
        """Forget the stored ``U'u`` products, row Gram matrix and masked products (a solve
        starts from nothing remembered)."""
        self._z_history.clear()
        self._basis_row_gram = None
        self._masked = None

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
        self.n_passes += 1
        G = self.backend.gram(T, self.row_scale)
        return 0.5 * (G + G.T)

    @staticmethod
    def _orthonormalizer(G: NDArray[np.float64], rank_tol: float) -> NDArray[np.float64]:
        gam, W = np.linalg.eigh(G)
        keep = gam > max(rank_tol, 0.0) * gam[-1]
        keep &= gam > 0
        return W[:, keep] / np.sqrt(gam[keep])

    def rmat_w(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Phi_w' v``."""
        self.n_passes += 1
        if self.row_scale is not None:
            v = v * (self.row_scale if v.ndim == 1 else self.row_scale[:, None])
        return self.backend.rmat(v)

    def mat_w(self, w: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Phi_w w``."""
        self.n_passes += 1
        out = self.backend.mat(w)
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
        return self._adjoint_from(state, self.rmat_w(V), V)

    def _adjoint_from(self, state: LowRankProxyState, raw: NDArray, V: NDArray) -> NDArray:
        """``[U q]' V`` from ``raw = Phi_w' V`` (no pass over the factor)."""
        x = self.T.T @ raw
        rn = state.residual_norm
        if rn == 0.0:
            return self._join(x, np.zeros(x.shape[1:]) if x.ndim > 1 else 0.0)
        z_head, _ = self._split(state.z)
        if state.residual is not None:
            last = state.residual @ V
        else:
            last = (state.u @ V - z_head @ x) / rn
        return self._join(x, last)

    # -- second-order information (the Newton solver, proxy/solvers/newton.py) -------------------
    def kstar_u_jacobian(self, state: LowRankProxyState) -> tuple[float, NDArray[np.float64]]:
        """The derivative of ``u -> K*(u) u`` at ``state``: ``J = gamma (I - P) + [U q] H [U q]'``.

        ``P`` is the projector on ``span([U q])``; ``J`` is symmetric PSD (the Hessian of ``-f`` is
        ``S J S``, theory.md §12). With ``B = diag(d, 0) + sigma c c' = V diag(lam) V'`` the matrix
        of
        ``M`` in the basis ``[U q]`` and ``c~ = V'c``, the derivative of the positive part
        (Daleckii-Krein, divided differences ``F_ij = (lam_i+ - lam_j+) / (lam_i - lam_j)``) gives

            H = V (diag(lam_+) + sigma diag(F c~^2) + sigma diag(c~) F diag(c~)) V',

        and on the complement of ``span([U q])`` (an eigenspace of ``M`` with eigenvalue 0, where
        ``u`` has no component) ``J`` is ``gamma = sigma sum_{lam_i > 0} c~_i^2``, the ``gamma``
        of ``K* u = U w + gamma u`` (theory.md §12). Cost: one (m'+1)-dimensional rank-one
        eigendecomposition (O(m^2)) and two O(m^3) products, no pass over the factor.

        Returns
        -------
        gamma : float
        H : ndarray of shape (m'+1, m'+1)
            In the coordinates of :meth:`apply_basis` (residual coordinate at
            ``residual_index``).
        """
        c = state.z
        sigma = self.sigma
        # A diagonal plus rank one: the secular-equation eigensolver (O(m^2) with the stable
        # vectors of Gu & Eisenstat) instead of LAPACK's O(m^3) eigh, which took a quarter of a
        # 26-class fit's time at m = 300.
        full = rank_one_eigh(self.d_ext, c, sigma, which="all", n_threads=self.engine_threads)
        lam, V = full.eigenvalues, full.eigenvectors
        ct = V.T @ c
        pos = np.maximum(lam, 0.0)
        diff = lam[:, None] - lam[None, :]
        same = diff == 0.0
        # Divided differences of max(0, .); equal eigenvalues take its derivative.
        F = np.where(
            same,
            (lam[:, None] > 0) * 1.0,
            (pos[:, None] - pos[None, :]) / np.where(same, 1.0, diff),
        )
        A = sigma * (ct[:, None] * F * ct[None, :])
        A[np.diag_indices_from(A)] += pos + sigma * (F @ ct**2)
        H = V @ A @ V.T
        gamma = sigma * float(np.sum(ct[lam > 0] ** 2))
        return gamma, 0.5 * (H + H.T)

    def basis_gram_rows(
        self,
        state: LowRankProxyState,
        rows: NDArray[np.bool_],
        V: NDArray[np.float64] | None = None,
    ) -> NDArray[np.float64] | tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``[U q]_I' [U q]_I`` over the rows ``I`` (a boolean mask of length n).

        ``[U q]_I = [Phi_I v_I] R`` (``v`` the residual ``u - U U'u`` when the state holds it,
        else ``u``; ``R`` an (m+1) x (m'+1) matrix), so it is ``R'[Phi_I v_I]'[Phi_I v_I] R``:
        ``T'Phi_I'Phi_I T`` from :meth:`basis_factor_gram` (updated by the rows that entered or
        left ``I`` since the previous call), ``Phi_I'v_I`` one pass over the factor, and
        O(k^2 + mk).
        Coordinates as in :meth:`apply_basis`. With ``V`` (n, k) also returns
        ``[U q]' V`` (:meth:`basis_adjoint`) from the same pass.
        """
        mask = np.asarray(rows, dtype=bool)
        v = state.residual if state.residual is not None else state.u
        vm = np.where(mask, v, 0.0)
        raw = self._rmat_columns(vm if V is None else np.column_stack([vm, V]))
        return self._basis_gram_from(state, mask, vm, raw, V)

    def basis_gram_masked(
        self,
        state: LowRankProxyState,
        rows: NDArray[np.bool_],
        columns: list[tuple[NDArray[np.float64], NDArray[np.bool_]]],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """:meth:`basis_gram_rows` with ``V[:, j] = vectors_j * masks_j`` given as
        ``columns = [(vector_j, mask_j), ...]``, its pass over the factor replaced by updates.

        ``Phi_w' V`` (and the residual column over ``rows``) is kept from the previous call and
        updated by the rows whose masks changed, O(m) per row and column, when the state and
        the vectors are the same objects and few rows changed (an active-set iteration moves
        few rows per step); otherwise, and always for a factor of fewer than
        ``_MIN_UPDATE_ENTRIES`` entries, it is one pass. The rows read are added to
        :attr:`n_gram_passes`; a refresh by a full pass follows ``8 n`` changed rows (the
        updates lose digits as the Gram downdates of :meth:`basis_factor_gram`).
        """
        mask = np.asarray(rows, dtype=bool)
        v = state.residual if state.residual is not None else state.u
        vectors = [v] + [vec for vec, _ in columns]
        masks = np.column_stack([mask] + [np.asarray(mk, dtype=bool) for _, mk in columns])
        values = np.column_stack(vectors)
        cache = getattr(self, "_masked", None)
        raw = None
        if self.n * self.Phi.shape[1] < _MIN_UPDATE_ENTRIES:
            cache = None  # a small factor: one pass is the cheaper way
        if (
            cache is not None
            and cache[0] is state
            and len(cache[1]) == len(vectors)
            and all(a is b for a, b in zip(cache[1], vectors, strict=True))
        ):
            _, _, old, raw_old, churn = cache
            changed = np.flatnonzero(np.any(masks != old, axis=1))
            if changed.size <= self.n // 4 and churn + changed.size <= 8 * self.n:
                step = masks[changed].astype(np.float64) - old[changed].astype(np.float64)
                raw = raw_old + self._rows_rmat(changed, values[changed] * step)
                churn += changed.size
        if raw is None:
            raw = self._rmat_columns(np.where(masks, values, 0.0))
            churn = 0
        if self.n * self.Phi.shape[1] >= _MIN_UPDATE_ENTRIES:
            self._masked = (state, vectors, masks, raw, churn)
        V = np.where(masks[:, 1:], values[:, 1:], 0.0)
        return self._basis_gram_from(state, mask, np.where(mask, v, 0.0), raw, V)

    def _rows_rmat(self, idx: NDArray[np.intp], W: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Phi_w[idx]' W`` for a few rows (``W`` of shape ``(len(idx), k)``)."""
        self.n_gram_passes += idx.shape[0] / self.n
        return self.backend.rows_rmat(idx, W, self.row_scale)

    def _basis_gram_from(self, state, mask, vm, raw, V):
        """:meth:`basis_gram_rows` from ``raw = Phi_w'[vm V]`` (no pass over the factor).

        With ``R = [[T, a], [0, b]]`` (``b = 1/||r||``; ``a = -T z b`` when ``v = u``, else 0)
        and ``W = T'Phi_I'Phi_I T`` (:meth:`basis_factor_gram`, kept and updated by rows), the
        Gram matrix ``R'[Phi_I v_I]'[Phi_I v_I]R`` is formed in O(k^2 + mk), not O(m^3).
        """
        k = self.rank
        W = self.basis_factor_gram(mask)
        g = raw if V is None else raw[:, 0]
        Tg = self.T.T @ g
        out = np.zeros((k + 1, k + 1))
        out[:k, :k] = W
        rn = state.residual_norm
        if rn > 0:
            b = 1.0 / rn
            vv = float(vm @ vm)
            if state.residual is None:
                z_head, _ = self._split(state.z)
                Wz = W @ z_head
                cross = (Tg - Wz) * b
                corner = (float(z_head @ Wz) - 2.0 * float(Tg @ z_head) + vv) * b * b
            else:
                cross, corner = Tg * b, vv * b * b
            out[:k, k] = out[k, :k] = cross
            out[k, k] = corner
        order = np.insert(np.arange(k), self.residual_index, k)
        gram = 0.5 * (out + out.T)[np.ix_(order, order)]
        if V is None:
            return gram
        return gram, self._adjoint_from(state, raw[:, 1:], V)

    def basis_factor_gram(self, rows: NDArray[np.bool_]) -> NDArray[np.float64]:
        """``T'Phi_w,I'Phi_w,I T = U_I'U_I`` for the rows ``I`` (a boolean mask), in the basis
        ``U = Phi_w T``, O(mk) per row read (no O(m^3) product per active-set step).

        The previous call's matrix is kept and updated by the rows that entered or left ``I``
        when they are fewer than ``|I|`` (an active-set method changes few rows per step),
        else recomputed: from the set-up's Gram of all rows (:attr:`gram`, in the basis once)
        minus the rows left out when ``I`` holds more than half of them, else over ``I``; rows
        are read in blocks converted to float64. Adds the rows read, in units of n, to
        :attr:`n_gram_passes`. :meth:`reset_warm_start` forgets the matrix.
        """
        mask = np.asarray(rows, dtype=bool)
        count = int(np.count_nonzero(mask))
        cache = getattr(self, "_basis_row_gram", None)
        if cache is not None:
            old, W, churn = cache
            added = np.flatnonzero(mask & ~old)
            removed = np.flatnonzero(old & ~mask)
            change = added.size + removed.size
            # Downdates lose digits relative to the rows removed: bounded churn, then refresh.
            if change < count and churn + change <= 8 * self.n:
                W = W + self._rows_gram(added, self.T) - self._rows_gram(removed, self.T)
                self._basis_row_gram = (mask.copy(), W, churn + change)
                return W
        if count > self.n // 2:
            # Most rows: the set-up's Gram of all rows minus the few left out (at alpha = 0 every
            # row is free, and the set-up already read them all). The subtraction loses digits
            # as a downdate does: counted as churn, so the bound above forces a fresh sum.
            left_out = self.n - count
            full = getattr(self, "_basis_gram_all", None)
            if full is None:
                full = self.T.T @ self.gram @ self.T
                self._basis_gram_all = full = 0.5 * (full + full.T)
            W = full - self._rows_gram(np.flatnonzero(~mask), self.T) if left_out else full
            self._basis_row_gram = (mask.copy(), W, left_out)
            return W
        W = self._rows_gram(np.flatnonzero(mask), self.T)
        self._basis_row_gram = (mask.copy(), W, 0)
        return W

    def _rmat_columns(self, V: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Phi_w' V`` for a few columns: with a float32 factor and the compiled kernels, one
        compiled product per column (reading the float32 factor k times is cheaper than
        converting it to float64 in blocks once: 0.03 s against 0.18 s for k = 4 at n = 10^5,
        m = 500)."""
        if V.ndim == 1 or not self.backend.columnwise(V[:, 0]):
            return self.rmat_w(V)
        return np.column_stack([self.rmat_w(np.ascontiguousarray(v)) for v in V.T])

    def apply_basis_columns(self, state: LowRankProxyState, c: NDArray[np.float64]) -> NDArray:
        """:meth:`apply_basis` for a few columns ``c`` (m'+1, k), one compiled product per column
        when the factor is float32 (see :meth:`_rmat_columns`)."""
        if c.ndim == 1 or not self.backend.columnwise(c[0]):
            return self.apply_basis(state, c)
        return np.column_stack([self.apply_basis(state, col) for col in c.T])

    def _rows_gram(
        self, idx: NDArray[np.intp], transform: NDArray[np.float64] | None = None
    ) -> NDArray[np.float64]:
        G = self.backend.rows_gram(idx, self.row_scale, transform)
        self.n_gram_passes += idx.shape[0] / self.n
        return 0.5 * (G + G.T)

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
    def dense_limit(self) -> int:
        """Largest n for which n x n arrays are formed (:data:`DENSE_LIMIT`)."""
        return DENSE_LIMIT

    @property
    def provides(self) -> frozenset[str]:
        """Capabilities (:class:`indefsvm.proxy.protocols.KernelOperator`): n x n arrays and a
        dense eigenbasis only up to :data:`DENSE_LIMIT` (formed on demand), never an
        objective-only evaluation (one evaluation is already O(nm + m^2)); always the factor.
        A factor on Dask workers never provides n x n arrays (they would be formed in this
        process: the cutting-plane solvers are refused by their ``needs`` check)."""
        if self.n <= DENSE_LIMIT and not self.backend.distributed:
            return frozenset({"n_by_n", "eigenbasis", "factor"})
        return frozenset({"factor"})

    def dense_eigh(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(eigenvalues, eigenvectors)`` of the dense working kernel (up to ``DENSE_LIMIT``).

        The dense view that the cutting-plane solvers need (SIQCLP's initial constraint
        ``(K0)_+`` and its certified kernel bounds): the factored operator has no n x n
        eigenbasis, so one is computed here, once, from the dense ``K0`` (refused above
        :data:`DENSE_LIMIT` with the reason).
        """
        cached = getattr(self, "_dense_eigh", None)
        if cached is None:
            _check_dense(self.n, DENSE_LIMIT, "the eigendecomposition of K0 (needed by SIQCLP)")
            cached = self._dense_eigh = np.linalg.eigh(self.K0)
        return cached

    def k0_eigenvalues(self) -> NDArray[np.float64]:
        """The nonzero eigenvalues of the working ``K0`` (the rest are 0)."""
        return self.eigenvalues

    def result_kernel(self, state: LowRankProxyState) -> LowRankProxyKernel:
        """``K*`` of ``state`` as results carry it: a :class:`LowRankProxyKernel` (never n x n)."""
        return LowRankProxyKernel(self, state)

    def proxy_features(self, state: LowRankProxyState) -> NDArray[np.float64]:
        """A factor ``F`` with ``K* = F F'`` in the original coordinates (O(nm) memory)."""
        if self.backend.distributed:
            raise ValueError(
                "the factor of K* (used by the LIBSVM/LIBLINEAR check, libsvm_every) would bring "
                f"an {self.n} x {self.rank + 1} array from the Dask workers into this process; "
                "it is not formed for a distributed factor. The solvers' own certified gap "
                "needs no such check."
            )
        return LowRankProxyKernel(self, state).features()

    def feature_coef(self, state: LowRankProxyState, u: NDArray[np.float64]) -> NDArray:
        """Weights ``c`` (m,) of the inductive decision in factor coordinates (theory.md §8).

        ``u = S alpha`` in the original coordinates; ``state.u`` is its working form. A point
        with factor row ``phi`` (e.g. its Nyström features) has the kernel row
        ``k_x = Phi diag(s) phi``; its proxy-kernel decision ``(P_+ k_x)'u`` (the map of
        :meth:`~indefsvm.proxy.problems.ProxyKernelProblem.out_of_sample_rows`) equals
        ``phi @ c``. On a training point (``phi`` its row of ``Phi``) it is
        ``(P_+ k_i)'u = (K0 P_+ u)_i``, not the row ``(K* u)_i`` of the learned kernel:
        ``K* = M P_+`` adds ``sigma u_i (u'P_+ u)`` on every support vector (the rank-one term
        of ``M`` belongs to the training sample). Cost O(nm).
        """
        g = self.backend.rmat(u)  # Phi' u in the ORIGINAL coordinates
        neg = state.low_values < 0
        if np.any(neg):
            Wn = state.low_vectors[:, neg]
            t = Wn @ (Wn.T @ state.z)  # [U q]' Q_- Q_-' u_w in the basis [U q]
            head, last = self._split(t)
            corr = self.gram @ (self.T @ head)
            rn = state.residual_norm
            if rn > 0 and last != 0.0:
                if state.residual is not None:
                    phi_q = self.rmat_w(state.residual) / rn
                else:
                    z_head, _ = self._split(state.z)
                    phi_q = (self.rmat_w(state.u) - self.gram @ (self.T @ z_head)) / rn
                corr = corr + last * phi_q
            g = g - corr
        return self.factor.signature * g

    @property
    def K0(self) -> NDArray[np.float64]:
        """The dense working kernel ``Phi_w diag(s) Phi_w'`` (only up to ``DENSE_LIMIT``)."""
        _check_dense(self.n, DENSE_LIMIT, "the dense kernel K0 (needed by SIQCLP)")
        U = self.mat_w(self.T)
        K = (U * self.eigenvalues) @ U.T
        return 0.5 * (K + K.T)

    def state(self, u: NDArray[np.float64], *, smoothing: float = 0.0) -> LowRankProxyState:
        """Proxy-kernel quantities at ``u`` in O(nm + m^2) (theory.md §11)."""
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
        s, fields = eigen_state_fields(
            d, z, sigma, low, u_norm_sq, getattr(self, "excess_accuracy", 0.0)
        )
        state = LowRankProxyState(
            u=u, kstar_u=np.empty(0), residual_norm=rn, residual=residual, **fields
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
        """``R (I - Q_- Q_-')``: the projector on M's non-negative eigenspace (theory.md §8)."""
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
