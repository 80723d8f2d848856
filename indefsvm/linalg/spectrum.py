"""Spectrum tools shared by the indefinite-SVM and Krein-space paradigms.

* :func:`eigen_summary` -- the statistics of Luss & d'Aspremont (2009), Table 1 (lambda_min,
  lambda_max) and of Oglic & Gaertner (2018), Table 1 (# pos, # neg, indefiniteness iota).
* :func:`is_psd` and :func:`is_cnd` (alias :func:`is_nds`) -- positive semi-definiteness and
  conditional negative definiteness (the textbook's negative definite symmetric kernels,
  Definition 6.14 of the kernel-methods chapter, paper 001).
* :func:`spectrum_transform` -- the spectrum modifications clip (called *denoise* by Luss &
  d'Aspremont), flip, shift and square, with a consistent map for test rows: the linear maps of
  Chen et al. (2009) for clip, flip and square, and the heuristic of Wu et al. (2005) for shift
  (and, as an option, for square, which is what Oglic & Gaertner 2018, Sect. 4, used).

References
----------
Y. Chen, E. K. Garcia, M. R. Gupta, A. Rahimi, L. Cazzanti. Similarity-based classification:
concepts and algorithms. JMLR 10, 2009.
G. Wu, E. Y. Chang, Z. Zhang. An analysis of transformation on non-positive semidefinite
similarity matrix for kernel machines. Technical report, UCSB, 2005.
D. Oglic, T. Gaertner. Learning in reproducing kernel Krein spaces. ICML 2018.
R. Luss, A. d'Aspremont. Support vector machine classification with indefinite kernels.
Math. Prog. Comp. 1, 2009.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any, TextIO

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.utils.tables import markdown_header, markdown_row
from indefsvm.utils.validation import check_finite_matrix, check_square_symmetric

__all__ = [
    "SPECTRUM_MAPS",
    "SpectrumMap",
    "SpectrumSummary",
    "SpectrumTransform",
    "eigen_summary",
    "indefiniteness",
    "is_cnd",
    "is_nds",
    "is_psd",
    "spectrum_table",
    "spectrum_transform",
    "TABLE_COLUMNS",
    "TRANSFORM_METHODS",
]

#: Spectrum transformations understood by :func:`spectrum_transform`.
TRANSFORM_METHODS = ("clip", "flip", "shift", "square")


@dataclass(frozen=True)
class SpectrumSummary:
    """Eigenvalue statistics of a symmetric matrix.

    Attributes
    ----------
    n : int
        Size of the matrix.
    lambda_min, lambda_max : float
        Smallest and largest eigenvalue.
    n_positive, n_negative, n_zero : int
        Number of eigenvalues above ``tol * max|lambda|``, below ``-tol * max|lambda|`` and in
        between (numerically zero).
    iota : float
        Indefiniteness of Oglic & Gaertner (2018), Sect. 5 (after Alabdulmohsin et al. 2015):
        ``iota = sum_{lambda_i < 0} |lambda_i| / sum_i |lambda_i|``, in ``[0, 1]``. Eigenvalues
        inside the zero tolerance are treated as zero, so rounding noise of a PSD matrix does not
        count as indefiniteness.
    """

    n: int
    lambda_min: float
    lambda_max: float
    n_positive: int
    n_negative: int
    n_zero: int
    iota: float


def _check_tol(tol: float, name: str = "tol") -> float:
    tol = float(tol)
    if not np.isfinite(tol) or tol < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {tol!r}.")
    return tol


def indefiniteness(eigenvalues: ArrayLike) -> float:
    """Indefiniteness ``iota`` of a spectrum (Oglic & Gaertner 2018, Sect. 5).

    Parameters
    ----------
    eigenvalues : array_like of shape (n,)
        Eigenvalues of a symmetric matrix.

    Returns
    -------
    float
        ``sum_{lambda_i < 0} |lambda_i| / sum_i |lambda_i|``; 0 for the zero spectrum.
    """
    lam = check_finite_matrix(eigenvalues, name="eigenvalues", ndim=1)
    total = float(np.sum(np.abs(lam)))
    if total == 0.0:
        return 0.0
    return float(np.sum(-lam[lam < 0]) / total)


def eigen_summary(K: ArrayLike, *, tol: float | None = None) -> SpectrumSummary:
    """Summarise the spectrum of a symmetric matrix.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric (kernel) matrix.
    tol : float, optional
        Relative tolerance: an eigenvalue with ``|lambda| <= tol * max|lambda|`` counts as zero.
        Defaults to ``n * eps`` (the rounding level of a dense symmetric eigensolver, as in
        ``numpy.linalg.matrix_rank``).

    Returns
    -------
    SpectrumSummary
        ``n``, ``lambda_min``, ``lambda_max``, counts of positive/negative/zero eigenvalues and
        the indefiniteness ``iota`` (Oglic & Gaertner 2018, Sect. 5; Table 1 columns).
    """
    K = check_square_symmetric(K, name="K")
    n = K.shape[0]
    tol = max(n, 1) * np.finfo(np.float64).eps if tol is None else _check_tol(tol)
    lam = np.linalg.eigvalsh(K)
    scale = float(np.max(np.abs(lam)))
    threshold = tol * scale
    positive = lam > threshold
    negative = lam < -threshold
    lam_clean = np.where(positive | negative, lam, 0.0)
    return SpectrumSummary(
        n=n,
        lambda_min=float(lam[0]),
        lambda_max=float(lam[-1]),
        n_positive=int(np.count_nonzero(positive)),
        n_negative=int(np.count_nonzero(negative)),
        n_zero=int(n - np.count_nonzero(positive) - np.count_nonzero(negative)),
        iota=indefiniteness(lam_clean),
    )


def spectral_scale(K: Any) -> float:
    """Spectral norm ``||K||_2 = max_i |lambda_i(K)|`` of a symmetric kernel matrix.

    The unit of ``rho_scale="spectral"`` in the proxy-kernel estimators. Dense matrices up to
    n = 600 use LAPACK's full eigenvalue solver; larger ones the Lanczos method (ARPACK, a fixed
    start vector, so the value is reproducible); a :class:`~indefsvm.linalg.factor.LowRankKernel`
    ``Phi diag(s) Phi'`` the non-zero eigenvalues of ``R diag(s) R'`` with ``Phi = QR``
    (O(n m^2), nothing n x n).

    Parameters
    ----------
    K : array_like of shape (n, n) or LowRankKernel

    Returns
    -------
    float
    """
    features = getattr(K, "features", None)
    if features is not None and hasattr(K, "signature"):
        if K.backend.distributed:
            # Phi'Phi = V diag(w) V' = R'R with R = diag(sqrt(w)) V': a pass on the workers.
            w, V = np.linalg.eigh(K.backend.gram(None, None))
            R = np.sqrt(np.maximum(w, 0.0))[:, None] * V.T
        else:
            R = np.linalg.qr(np.asarray(features, dtype=np.float64), mode="r")
        lam = np.linalg.eigvalsh((R * np.asarray(K.signature, dtype=np.float64)) @ R.T)
        return float(np.max(np.abs(lam)))
    K = check_square_symmetric(K, name="K")
    n = K.shape[0]
    if n <= 600:
        return float(np.max(np.abs(np.linalg.eigvalsh(K))))
    from scipy.sparse.linalg import eigsh

    v0 = np.full(n, 1.0 / np.sqrt(n))
    return float(np.abs(eigsh(K, k=1, which="LM", v0=v0, return_eigenvectors=False)[0]))


def is_psd(K: ArrayLike, tol: float = 1e-10) -> bool:
    """Whether a symmetric matrix is positive semi-definite up to a relative tolerance.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric matrix.
    tol : float
        Accept ``lambda_min >= -tol * max(1, max|lambda|)``.

    Returns
    -------
    bool
    """
    K = check_square_symmetric(K, name="K")
    tol = _check_tol(tol)
    lam = np.linalg.eigvalsh(K)
    return bool(lam[0] >= -tol * max(1.0, float(np.max(np.abs(lam)))))


def _orthonormal_complement_of_ones(n: int) -> NDArray[np.float64]:
    """Orthonormal basis (n, n-1) of the subspace ``{c : sum(c) = 0}``.

    Built from the Householder reflector that maps ``e / sqrt(n)`` onto the first unit vector,
    so it is exact to rounding and needs no eigendecomposition.
    """
    v = np.full(n, 1.0 / np.sqrt(n))
    v[0] -= 1.0  # v = e/sqrt(n) - e_1, never zero for n >= 2
    H = np.eye(n) - 2.0 * np.outer(v, v) / float(v @ v)
    # H is symmetric orthogonal with H e_1 = e/sqrt(n); its other columns span e's complement.
    return H[:, 1:]


def is_cnd(K: ArrayLike, tol: float = 1e-10) -> bool:
    """Whether ``K`` is conditionally negative definite (an NDS kernel matrix).

    The textbook chapter (paper 001, Definition 6.14) calls a symmetric kernel *negative
    definite symmetric* (NDS) when ``sum_ij c_i c_j K_ij <= 0`` for every ``c`` with
    ``sum_i c_i = 0``. This is checked exactly by restricting ``K`` to the complement of the
    all-ones vector, ``B' K B`` with ``B`` an orthonormal basis of that complement, and testing
    ``lambda_max(B' K B) <= tol * max(1, max|lambda(B' K B)|)``.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric matrix (for instance squared Euclidean distances, Example 6.15).
    tol : float
        Relative tolerance of the eigenvalue test.

    Returns
    -------
    bool
    """
    K = check_square_symmetric(K, name="K")
    tol = _check_tol(tol)
    n = K.shape[0]
    if n == 1:
        return True  # only c = 0 satisfies sum(c) = 0
    B = _orthonormal_complement_of_ones(n)
    restricted = B.T @ K @ B
    restricted = 0.5 * (restricted + restricted.T)
    lam = np.linalg.eigvalsh(restricted)
    return bool(lam[-1] <= tol * max(1.0, float(np.max(np.abs(lam)))))


#: The textbook's name (paper 001, Sect. 6.4) for conditionally negative definite kernels.
is_nds = is_cnd


@dataclass
class SpectrumTransform:
    """A spectrum transformation of a training kernel and its map for test rows.

    Attributes
    ----------
    method : str
        ``"clip"``, ``"flip"``, ``"shift"`` or ``"square"``.
    eigenvalues : ndarray of shape (n,)
        Eigenvalues of the original training kernel, ascending.
    eigenvectors : ndarray of shape (n, n)
        Matching orthonormal eigenvectors (columns).
    transformed_eigenvalues : ndarray of shape (n,)
        ``max(lambda, 0)``, ``|lambda|``, ``lambda + shift`` or ``lambda**2``.
    kernel : ndarray of shape (n, n)
        Transformed training kernel ``U diag(transformed_eigenvalues) U'``.
    shift : float
        Amount added to the diagonal (``method="shift"`` only, else 0).

    Notes
    -----
    Test rows (similarities of test points to the training points) are mapped by
    :meth:`transform`:

    * clip: ``k -> P_clip k`` with ``P_clip = U diag(1[lambda > 0]) U'`` (Chen et al. 2009,
      consistent treatment of training and test samples); ``P_clip K = K_clip`` exactly.
    * flip: ``k -> P_flip k`` with ``P_flip = U diag(sign(lambda)) U'`` (Chen et al. 2009; no
      consistency guarantee is known, Oglic & Gaertner 2018, Sect. 4); ``P_flip K = K_flip``.
    * square: the linear map ``k -> K k`` (similarities used as features), ``K K = K^2``
      exactly on training rows. Passing ``K_test_diag`` instead applies the heuristic of
      Wu et al. (2005) that Oglic & Gaertner (2018) used for square: square the kernel of the
      training set augmented with the test point and read the test row, ``K k + k(x, x) k``.
    * shift: heuristic of Wu et al. (2005). Shifting the augmented train+test kernel changes only
      its diagonal, so a test row is returned unchanged. This is *not* a linear map that
      reproduces the training block: ``transform(K)`` equals ``kernel - shift * I`` (a test
      point is never identical to a training point, so it gets no diagonal shift).
    """

    method: str
    eigenvalues: NDArray[np.float64]
    eigenvectors: NDArray[np.float64]
    transformed_eigenvalues: NDArray[np.float64]
    kernel: NDArray[np.float64]
    shift: float = 0.0

    def active(self, tol: float | None = None) -> NDArray[np.bool_]:
        """Transformed eigenvalues that are not rounding noise.

        The noise level of a transformed eigenvalue is that of the ORIGINAL spectrum: clipping
        a kernel with no positive eigenvalue leaves only its rounding errors (``~ n eps
        max|lambda|``), and measuring them against their own maximum (as a zero tolerance
        relative to the transformed spectrum would) keeps them as signal. ``square`` squares
        the noise too, so its tolerance stays relative to ``max lambda**2``.

        Parameters
        ----------
        tol : float, optional
            Relative zero tolerance (default ``n eps``, as :func:`numpy.linalg.matrix_rank`).

        Returns
        -------
        ndarray of bool, shape (n,)
            ``|transformed| > tol * scale`` with ``scale = max|lambda**2|`` for square and
            ``max(max|lambda|, max|transformed|)`` otherwise.
        """
        n = self.eigenvalues.shape[0]
        tol = max(n, 1) * np.finfo(np.float64).eps if tol is None else _check_tol(tol)
        new = np.abs(self.transformed_eigenvalues)
        scale = float(np.max(new, initial=0.0))
        if self.method != "square":
            scale = max(scale, float(np.max(np.abs(self.eigenvalues), initial=0.0)))
        return new > tol * scale

    def check_nonzero(self, tol: float | None = None, *, owner: str = "") -> NDArray[np.bool_]:
        """:meth:`active`, raising a ``ValueError`` when no transformed eigenvalue is active.

        A numerically zero transformed kernel (``clip`` of a kernel without a positive
        eigenvalue, any transform of a zero kernel, ``shift`` of ``c I``) has no signal to fit:
        a learner on it fits rounding noise.

        Parameters
        ----------
        tol : float, optional
            See :meth:`active`.
        owner : str
            Name used in the error (e.g. ``"KreinRegressor(formulation='clip')"``).

        Returns
        -------
        ndarray of bool, shape (n,)
        """
        active = self.active(tol)
        if np.any(active):
            return active
        lam = self.eigenvalues
        lam_max = float(lam[-1]) if lam.shape[0] else 0.0
        where = f"{owner}: " if owner else ""
        if self.method == "clip":
            why = (
                "the clipped kernel is zero: the training kernel has no positive eigenvalue "
                f"above the zero tolerance (largest eigenvalue {lam_max:.3g}, "
                f"max|lambda| = {float(np.max(np.abs(lam), initial=0.0)):.3g})"
            )
        else:
            why = (
                f"the {self.method}-transformed kernel is numerically zero (eigenvalues of the "
                f"training kernel in [{float(lam[0]) if lam.shape[0] else 0.0:.3g}, "
                f"{lam_max:.3g}], shift {self.shift:.3g})"
            )
        raise ValueError(
            f"{where}{why}; there is nothing to fit. Use a transformation that keeps the "
            "negative part of the spectrum ('flip', 'square'), the Krein formulations ('krein', "
            "'omcs'), or check the kernel."
        )

    def _map_factors(self) -> NDArray[np.float64]:
        """Diagonal ``f`` of the test map ``k -> U diag(f) U' k`` (clip, flip, square)."""
        lam = self.eigenvalues
        if self.method == "clip":
            return (lam > 0).astype(np.float64)
        if self.method == "flip":
            return np.sign(lam)
        if self.method == "square":
            return lam.copy()
        raise ValueError(f"method {self.method!r} has no linear test map.")

    def transform(
        self, K_test_train: ArrayLike, *, K_test_diag: ArrayLike | None = None
    ) -> NDArray[np.float64]:
        """Map test rows consistently with the training transformation.

        Parameters
        ----------
        K_test_train : array_like of shape (m, n)
            Similarities between ``m`` test points and the ``n`` training points (original,
            untransformed kernel).
        K_test_diag : array_like of shape (m,), optional
            Self-similarities ``k(x, x)`` of the test points. Only for ``method="square"``, where
            it selects the Wu et al. (2005) heuristic ``K k + k(x, x) k`` instead of the linear
            map ``K k``.

        Returns
        -------
        ndarray of shape (m, n)
            Transformed test rows; see the class notes for each method.
        """
        n = self.eigenvalues.shape[0]
        Kt = np.asarray(K_test_train)
        if Kt.ndim == 1:
            raise ValueError(
                f"K_test_train must be 2-D of shape (m, {n}); got a 1-D array of shape "
                f"{Kt.shape}. Use K_test_train.reshape(1, -1) for a single test point."
            )
        Kt = check_finite_matrix(Kt, name="K_test_train")
        if Kt.shape[1] != n:
            raise ValueError(
                f"K_test_train must have one column per training point: expected shape "
                f"(m, {n}); got {Kt.shape}."
            )
        if K_test_diag is not None and self.method != "square":
            raise ValueError(
                f"K_test_diag is only used by method='square' (Wu et al. heuristic); got "
                f"method={self.method!r}."
            )
        if self.method == "shift":
            return Kt.copy()
        U = self.eigenvectors
        mapped = ((Kt @ U) * self._map_factors()) @ U.T
        if K_test_diag is not None:
            diag = check_finite_matrix(K_test_diag, name="K_test_diag", ndim=1)
            if diag.shape[0] != Kt.shape[0]:
                raise ValueError(
                    f"K_test_diag must have one entry per test row ({Kt.shape[0]}); got "
                    f"{diag.shape[0]}."
                )
            mapped += diag[:, None] * Kt
        return mapped


class SpectrumMap:
    """One spectrum transformation, on a dense kernel and on a factor (both wings use it).

    ``K = U diag(lambda) U'`` becomes ``U diag(g(lambda)) U'``. On a dense symmetric matrix
    (:meth:`dense`, what :func:`spectrum_transform` returns) through its eigendecomposition; on
    a factor ``K ~= Phi diag(s) Phi'`` with orthogonal columns ``Phi = U |Lambda|^{1/2}``
    (``s = sign(lambda)``, e.g. one-shot Nystroem features) by an operation on the columns
    (:meth:`factor`), which applies to training and test rows alike: the factor of the
    transformed kernel, with an all-positive signature. The instances are in
    :data:`SPECTRUM_MAPS`, one per name of :data:`TRANSFORM_METHODS`.
    """

    #: The name (``"clip"``, ``"flip"``, ``"shift"`` or ``"square"``).
    name: str = ""

    def eigenvalues(self, lam: NDArray[np.float64], shift: float = 0.0) -> NDArray[np.float64]:
        """``g(lambda)``: the transformed eigenvalues (``shift`` is used by ``"shift"`` only)."""
        raise NotImplementedError

    def dense(self, K: ArrayLike, *, shift: float | None = None) -> SpectrumTransform:
        """The transformation of a dense symmetric kernel: :func:`spectrum_transform`."""
        return spectrum_transform(K, self.name, shift=shift)

    def _dense_kernel(
        self, K: NDArray, U: NDArray, new: NDArray, amount: float
    ) -> NDArray[np.float64]:
        return (U * new) @ U.T

    def factor(
        self,
        Phi: Any,
        signature: NDArray[np.float64],
        magnitudes: NDArray[np.float64],
        *,
        inplace: bool = False,
    ) -> tuple[Any, NDArray[np.float64]]:
        """The factor of the transformed kernel from a factor with orthogonal columns.

        Parameters
        ----------
        Phi : ndarray or dask array of shape (n, r)
            Training or test rows of the factor (``K ~= Phi diag(signature) Phi'``).
        signature : ndarray of shape (r,)
            ``sign(lambda)`` per column.
        magnitudes : ndarray of shape (r,)
            ``|lambda|`` per column (the squared column norms of the training rows).
        inplace : bool, default False
            Scale the columns in ``Phi``'s own memory (keeps its dtype; a float32 factor stays
            float32) instead of returning a float64 product.

        Returns
        -------
        (features, signature)
            ``features diag(signature) features'`` is the transformed kernel; ``signature`` is
            all ones (the transformed kernel is PSD).
        """
        raise ValueError(
            f"spectrum transformation {self.name!r} has no factor form: it is not a function "
            "of the factor's columns (use 'clip', 'flip' or 'square')."
        )


class _Clip(SpectrumMap):
    name = "clip"

    def eigenvalues(self, lam: NDArray[np.float64], shift: float = 0.0) -> NDArray[np.float64]:
        return np.maximum(lam, 0.0)

    def factor(self, Phi, signature, magnitudes, *, inplace=False):  # noqa: D102 - see base
        keep = signature > 0
        return Phi[:, keep], np.ones(int(keep.sum()))


class _Flip(SpectrumMap):
    name = "flip"

    def eigenvalues(self, lam: NDArray[np.float64], shift: float = 0.0) -> NDArray[np.float64]:
        return np.abs(lam)

    def factor(self, Phi, signature, magnitudes, *, inplace=False):  # noqa: D102 - see base
        return Phi, np.ones(Phi.shape[1])


class _Square(SpectrumMap):
    name = "square"

    def eigenvalues(self, lam: NDArray[np.float64], shift: float = 0.0) -> NDArray[np.float64]:
        return lam**2

    def _dense_kernel(self, K, U, new, amount):
        return K @ K

    def factor(self, Phi, signature, magnitudes, *, inplace=False):  # noqa: D102 - see base
        # K^2 = (Phi |Lambda|^{1/2})(Phi |Lambda|^{1/2})'.
        scale = np.sqrt(magnitudes)
        if inplace:
            Phi *= scale.astype(Phi.dtype, copy=False)
            return Phi, np.ones(Phi.shape[1])
        return Phi * scale, np.ones(Phi.shape[1])


class _Shift(SpectrumMap):
    name = "shift"

    def eigenvalues(self, lam: NDArray[np.float64], shift: float = 0.0) -> NDArray[np.float64]:
        return lam + shift

    def _dense_kernel(self, K, U, new, amount):
        # K + s I is exact; rebuilding it from the eigenvectors would only add rounding.
        return K + amount * np.eye(K.shape[0])


#: The spectrum transformations by name (:data:`TRANSFORM_METHODS`).
SPECTRUM_MAPS: dict[str, SpectrumMap] = {m.name: m for m in (_Clip(), _Flip(), _Shift(), _Square())}


def spectrum_transform(
    K: ArrayLike,
    spectrum: str,
    *,
    shift: float | None = None,
) -> SpectrumTransform:
    """Make a symmetric kernel matrix positive semi-definite by modifying its spectrum.

    With ``K = U diag(lambda) U'``:

    * ``"clip"`` (Luss & d'Aspremont's *denoise*; Wu et al. 2005): ``lambda -> max(lambda, 0)``,
      the Frobenius projection on the PSD cone;
    * ``"flip"`` (Graepel et al. 1998): ``lambda -> |lambda|``;
    * ``"shift"`` (Roth et al. 2003): ``lambda -> lambda + s`` with ``s = max(0, -lambda_min)``
      unless ``shift`` is given, i.e. ``K + s I``;
    * ``"square"`` (Chen et al. 2009; Graepel et al. 1998): ``lambda -> lambda**2``, i.e. ``K K``.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric training kernel.
    spectrum : {"clip", "flip", "shift", "square"}
        Transformation (the name ``SpectrumSVC(spectrum=...)`` uses).
    shift : float, optional
        Diagonal shift for ``spectrum="shift"`` (finite, >= 0). Defaults to
        ``max(0, -lambda_min)``.

    Returns
    -------
    SpectrumTransform
        Eigendecomposition, transformed kernel and the test-row map (see its notes).
    """
    method = spectrum
    if method not in TRANSFORM_METHODS:
        raise ValueError(f"spectrum must be one of {TRANSFORM_METHODS}; got {method!r}.")
    if shift is not None and method != "shift":
        raise ValueError(f"shift is only used by spectrum='shift'; got spectrum={method!r}.")
    K = check_square_symmetric(K, name="K")
    lam, U = np.linalg.eigh(K)
    amount = 0.0
    if method == "shift":
        amount = max(0.0, -float(lam[0])) if shift is None else _check_tol(shift, "shift")
    transform = SPECTRUM_MAPS[method]
    new = transform.eigenvalues(lam, amount)
    kernel = transform._dense_kernel(K, U, new, amount)
    kernel = 0.5 * (kernel + kernel.T)
    return SpectrumTransform(
        method=method,
        eigenvalues=lam,
        eigenvectors=U,
        transformed_eigenvalues=new,
        kernel=kernel,
        shift=amount,
    )


#: Columns of :func:`spectrum_table` (the analogue of Luss & d'Aspremont 2009, Table 1).
TABLE_COLUMNS = ("dataset", "kernel", "n", "lambda_min", "lambda_max", "n_negative", "iota")


def _format_row(row: dict[str, Any]) -> str:
    return markdown_row(
        [
            row["dataset"],
            row["kernel"],
            row["n"],
            f"{row['lambda_min']:.4g}",
            f"{row['lambda_max']:.4g}",
            row["n_negative"],
            f"{row['iota']:.3f}",
        ]
    )


def spectrum_table(
    entries: Iterable[tuple[str, str, ArrayLike]],
    *,
    tol: float | None = None,
    file: TextIO | None = sys.stdout,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Print a markdown table of kernel spectra, one row per (data set, kernel).

    The analogue of Luss & d'Aspremont (2009), Table 1 (lambda_min, lambda_max), extended with
    the number of negative eigenvalues and the indefiniteness iota of Oglic & Gaertner (2018),
    Table 1. Rows are printed as soon as each matrix is summarised, so a long table shows
    progress and an interrupted run keeps the rows already printed.

    Parameters
    ----------
    entries : iterable of (dataset name, kernel name, kernel matrix)
        Matrices may be produced lazily (e.g. by a generator), one at a time.
    tol : float, optional
        Zero tolerance passed to :func:`eigen_summary`.
    file : text stream or None
        Where to print (default stdout); None prints nothing.
    on_row : callable, optional
        Called with each row's dict as soon as it is computed (e.g. to append it to a CSV file).

    Returns
    -------
    list of dict
        One dict per row with keys ``dataset``, ``kernel`` and the fields of
        :class:`SpectrumSummary`.
    """
    rows: list[dict[str, Any]] = []
    if file is not None:
        columns = ["dataset", "kernel", "n", "lambda_min", "lambda_max", "#neg", "iota"]
        file.write(markdown_header(columns, align="llrrrrr") + "\n")
        file.flush()
    for dataset, kernel_name, K in entries:
        row = {"dataset": dataset, "kernel": kernel_name, **asdict(eigen_summary(K, tol=tol))}
        rows.append(row)
        if file is not None:
            file.write(_format_row(row) + "\n")
            file.flush()
        if on_row is not None:
            on_row(row)
    return rows
