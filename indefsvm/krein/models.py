"""Scikit-learn estimators for learning in reproducing kernel Krein spaces.

* :class:`KreinRegressor` / :class:`KreinClassifier` -- the variance-constrained least-squares
  problems of Oglic & Gaertner (2018, paper 000): ``formulation="krein"`` (eq. 4),
  ``"omcs"`` (OMCS-KREIN, eq. 2) and ``"flip"``, ``"clip"``, ``"shift"``, ``"square"`` (eq. 2
  with a spectrum-transformed kernel, Table 1), all solved globally by the secular equation.
* :class:`KreinKernelRidge` / :class:`KreinKernelRidgeClassifier` -- Krein kernel ridge
  regression / KREIN LSM (Oglic & Gaertner 2019, Sect. 2.4), closed form.
* :class:`KreinSVC` -- the Krein SVM of Loosli et al. (2016) in the form of Oglic & Gaertner
  (2019), Prop. 3: LIBSVM (scikit-learn's ``SVC``) on the flip-spectrum kernel with Chen et
  al.'s (2009) test map.
* :class:`SimilarityRidge` / :class:`SimilarityRidgeClassifier` -- SF-LSM: similarities to the
  training points as features, linear ridge regression (Chen et al. 2009; Alabdulmohsin et al.
  2015).
* :class:`OngSubspaceRegressor` -- Ong et al. (2004), Sect. 5: TSF, Landweber-Fridman, MR-II.

Every estimator takes ``kernel="precomputed"`` (``fit(K_train, y)``, ``predict(K_test_train)``
with ``K_test_train`` of shape ``(m, n_train)``) or a callable ``kernel(X, Y=None, **params)``
(``fit(X, y)``, ``predict(X_test)``). Test rows always go through the same maps as the training
kernel: the centring of the training kernel (``center=True``) and, for spectrum
transformations, the eigenbasis map of the training kernel.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.linear_model import Ridge
from sklearn.svm import SVC
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

from indefsvm.base import (
    KERNEL_PARAMETER_CONSTRAINTS,
    KERNEL_PARAMS_DOC,
    NYSTROEM_PARAMETER_CONSTRAINTS,
    IndefsvmEstimator,
    KernelInputMixin,
    _refuse_dask_precomputed,
    fit_context,
    nystroem_param,
    set_init_parameters,
)
from indefsvm.inputs import InputMap, PairRows, fit_input, fitted_input
from indefsvm.krein.centering import center_kernel_test, center_kernel_train
from indefsvm.krein.solver import (
    KernelEigen,
    kernel_eigen,
    krein_kernel_ridge,
    krein_least_squares,
    omcs_krein_least_squares,
)
from indefsvm.krein.subspace import landweber_fridman, mr_ii, truncated_spectral_factorization
from indefsvm.linalg.factor import as_factor, right_multiply_inplace
from indefsvm.linalg.spectrum import SPECTRUM_MAPS, TRANSFORM_METHODS, spectrum_transform
from indefsvm.multiclass import OneVsOneMixin, WeightedOneVsOneMixin
from indefsvm.utils.constraints import Interval, StrOptions
from indefsvm.utils.dask_rows import on_workers
from indefsvm.utils.docstrings import fill_doc
from indefsvm.utils.validation import (
    check_binary_labels,
    check_sample_weight,
    no_fit_params,
    rows_binary_labels,
    rows_targets,
)

__all__ = [
    "KREIN_FORMULATIONS",
    "ONG_SOLVERS",
    "KreinClassifier",
    "KreinKernelRidge",
    "KreinKernelRidgeClassifier",
    "KreinRegressor",
    "KreinSVC",
    "KreinSquaredHingeSVC",
    "OngSubspaceRegressor",
    "SimilarityRidge",
    "SimilarityRidgeClassifier",
    "center_kernel_train",
    "center_kernel_test",
]

#: Formulations of :class:`KreinRegressor`.
KREIN_FORMULATIONS = ("krein", "omcs", *TRANSFORM_METHODS)
#: Solvers of :class:`OngSubspaceRegressor`.
ONG_SOLVERS = ("tsf", "landweber", "mr2")

_POSITIVE = Interval(Real, 0, None, closed="neither")
#: Kernel input, Nystroem map, ``factorization`` and the two regularisers of the low-rank Krein
#: learners (KREIN LSM, VC-LSM, SH-SVM).
_KREIN_LOW_RANK_CONSTRAINTS: dict[str, list[Any]] = {
    **KERNEL_PARAMETER_CONSTRAINTS,
    **NYSTROEM_PARAMETER_CONSTRAINTS,
    "nystroem_params": [Mapping, None],
    "lambda_plus": [_POSITIVE],
    "lambda_minus": [_POSITIVE],
}


_NYSTROEM_PARAMS_DOC = """    nystroem_params : dict, optional
        Options of the :class:`~indefsvm.approximation.nystrom.IndefiniteNystroem` of
        ``n_components`` (anything but None is an error without it; another key is an error
        naming these), with the map's names and defaults. ``"landmarks"`` (``"uniform"``,
        ``"kmeans++"``, ``"leverage"`` or an array of int; default ``"uniform"``): landmark
        selection of the low-rank method (paper 003, Sect. 2.3) or explicit indices into the
        training set (``n_components`` must then equal their number); a multi-class
        classifier fits ONE Nystroem map on the whole training set (landmarks from all
        classes) and every one-vs-one pair uses its rows of that map's factor,
        re-diagonalised on the pair (:mod:`indefsvm.multiclass`). ``"factorization"``
        (``"one-shot"`` or ``"plain"``; default ``"one-shot"``): ``"one-shot"`` is the
        approximate eigendecomposition of paper 003, Sect. 2.2 (orthogonal columns), so that
        ``lambda_+`` / ``lambda_-`` act on the positive / negative eigenspaces of the
        (centred) low-rank kernel ``K_X|Z``; ``"plain"`` is paper 003's own split in
        Sect. 2.4-2.5, by the signs of the eigenvalues of ``K_ZZ`` on the features
        ``K_XZ U_ZZ |D_ZZ|^{-1/2}`` (the same ``K_X|Z``, non-orthogonal columns).
        ``"dtype"`` (``"float64"`` or ``"float32"``; default ``"float64"``): storage of the
        ``(n, m)`` Nystroem factor; with ``"float32"`` the factor takes half the memory, and
        the kernel evaluations, the centring and every reduction over the n rows
        (``Phi'Phi``, ``Phi'y``, the Newton systems) accumulate in float64, so the model is
        that of the float32-rounded factor (its coefficients differ from a float64 fit by
        about the float32 rounding of ``Phi`` times the conditioning of the regularised
        normal equations). ``"sketch_size"`` and ``"rcond"``: the uniform sketch of
        ``"kmeans++"`` / ``"leverage"`` and the relative cut-off of the eigenvalues of
        ``K_ZZ``, as in the map."""


#: The paragraphs of the estimators' docstrings (:func:`indefsvm.utils.docstrings.fill_doc`).
_DOC_PARAGRAPHS = {
    "KERNEL_PARAMS": KERNEL_PARAMS_DOC,
    "NYSTROEM_PARAMS": _NYSTROEM_PARAMS_DOC,
}


class _KernelEstimatorMixin(KernelInputMixin):
    """Krein-side kernel handling on top of :class:`indefsvm.base.KernelInputMixin`: centring
    in feature space and the low-rank (Nystroem) factor of paper 003."""

    def _train_kernel(self, X: ArrayLike) -> NDArray[np.float64]:
        return self._fit_kernel(X)[0]

    def _require_y(self, X: Any, y: Any) -> None:
        if y is None:
            validate_data(self, X, y)  # scikit-learn's "requires y to be passed" error

    def _regression_y(self, X: Any, y: Any) -> NDArray[np.float64]:
        """Targets checked as scikit-learn does (1-D numeric; a column warns and is raveled)."""
        self._require_y(X, y)
        if on_workers(X, y):
            return y  # checked against the factor's rows by rows_targets
        y = column_or_1d(y, warn=True)
        return check_array(
            y, ensure_2d=False, dtype=np.float64, input_name="y", estimator=self
        ).astype(np.float64, copy=False)

    # ------------------------------------------------------------- low rank (paper 003)

    def _landmark_split(self) -> bool:
        """Paper 003's split of ``z`` by the signs of ``K_ZZ`` (``nystroem_params``
        ``factorization="plain"``: ``L = K_XZ U |D|^{-1/2}``, signature ``sign(D)``, the
        features of paper 003, Sect. 2.4-2.5)."""
        return nystroem_param(self, "factorization") == "plain"

    def _prepare_train_factor(
        self, X: Any, inputs: PairRows | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Nystroem features ``Phi`` (orthogonal columns), signature and ``|eigenvalues|``.

        One-shot features of paper 003, Sect. 2.2; with ``center`` the columns are centred (the
        feature-space centring of the kernel, ``H K_X|Z H``) and re-diagonalised so that the
        signature is again the spectral split of the centred low-rank kernel. With
        ``factorization="plain"`` the features are paper 003's ``L = K_XZ U |D|^{-1/2}`` with
        the signature ``sign(D)`` of ``K_ZZ = U D U'`` (columns not orthogonal); centring only
        centres the columns and the split stays that of ``K_ZZ``.

        The features come from the fit's input map (:func:`~indefsvm.inputs.fit_input`): the
        Nystroem map of ``n_components`` fitted on ``X``, or ``inputs``, a one-vs-one pair's
        rows of the multi-class model's shared map (:class:`~indefsvm.inputs.PairRows`, given by
        the template's :meth:`~indefsvm.multiclass.OneVsOneMixin._fit_shared_rows`; ``X`` are
        then the pair's landmark columns).
        """
        from indefsvm.krein.lowrank import rediagonalize

        # A dask factor stays lazy until its final form (centred, rotated) is persisted below:
        # the kernel is evaluated again per pass, but the workers hold one factor, not two.
        inputs, _ = fit_input(self, X, given=inputs, lazy=True)
        ny, Phi = inputs.nystroem, inputs.features
        s = ny.signature_
        lam = ny.eigenvalues_
        self.nystroem_ = ny
        self.n_train_ = Phi.shape[0]
        r = Phi.shape[1]
        self.feature_mean_ = np.zeros(r)
        self.feature_rotation_ = np.eye(r)
        if self.center:
            # In place (Phi is ours): the n x r factor is the dominant memory at large n.
            # (A dask factor: a new lazy array, persisted below; np.asarray computes its mean.)
            mean = Phi.mean(axis=0, dtype=np.float64)
            self.feature_mean_ = np.array(np.asarray(mean), copy=True)
            Phi -= self.feature_mean_.astype(Phi.dtype)
        # A one-vs-one pair's rows of the shared factor are not an eigenbasis of its own
        # K_pair|Z: re-diagonalised, so that lambda_+/- act on its eigenspaces (as in a binary fit).
        shared = isinstance(inputs, PairRows)
        if (self.center or shared) and not self._landmark_split():
            T, lam = rediagonalize(Phi, s, tol=getattr(self, "rcond", None))
            self.feature_rotation_ = T
            Phi = right_multiply_inplace(Phi, T)
            s = np.where(lam >= 0.0, 1.0, -1.0)
        self.signature_ = s
        self.feature_eigenvalues_ = lam
        # The factor every solver pass reads, on Dask kept on the workers (or in the local
        # scheduler's memory without a client): centring and rotation are applied once.
        Phi = as_factor(Phi).persist(Phi)
        return Phi, s, np.abs(lam)

    def _test_factor(self, X: Any, inputs: InputMap) -> NDArray[np.float64]:
        """The fitted factor's coordinates of new points: their features by the input map
        ``inputs`` (the model's own, :func:`~indefsvm.inputs.fitted_input`, or a pair's rows of
        a shared map), centred and rotated as the training features were."""
        P = inputs.test_operand(X)
        return (P - self.feature_mean_) @ self.feature_rotation_

    def _test_diag(self, X: ArrayLike) -> NDArray[np.float64]:
        """Self-similarities ``k(x, x)`` of test points (callable kernels only)."""
        X = validate_data(self, X, reset=False, dtype=np.float64)
        params = self._kernel_arguments()
        function = self._kernel_function()
        return np.array(
            [float(function(X[i : i + 1], X[i : i + 1], **params)[0, 0]) for i in range(X.shape[0])]
        )

    def _centred_targets(self, y: ArrayLike, n: int) -> NDArray[np.float64]:
        """``y - intercept_``, the intercept being the mean of ``y`` with ``center`` (else 0)."""
        y = rows_targets(y, n)
        self.intercept_ = float(y.mean()) if self.center else 0.0
        return y - self.intercept_

    def _refuse_dask_full_rank(self, X: Any) -> None:
        if on_workers(X):
            raise ValueError(
                f"{type(self).__name__}: a dask array needs the low-rank model (set "
                "n_components); the full-rank model works on the n x n kernel in memory."
            )

    def _prepare_train(self, X: ArrayLike) -> NDArray[np.float64]:
        self._refuse_dask_full_rank(X)
        self.nystroem_ = None  # full-rank model
        K = self._train_kernel(X)
        self.n_train_ = K.shape[0]
        if self.center:
            K, self.kernel_column_means_, self.kernel_grand_mean_ = center_kernel_train(K)
        return K

    def _prepare_test(self, X: ArrayLike) -> NDArray[np.float64]:
        self._refuse_dask_full_rank(X)
        Kt = self._test_kernel(X)
        if self.center:
            Kt = center_kernel_test(Kt, self.kernel_column_means_, self.kernel_grand_mean_)
        return Kt


def _scale_columns_inplace(Phi: NDArray, scale: NDArray[np.float64]) -> NDArray:
    Phi *= scale.astype(Phi.dtype, copy=False)
    return Phi


class KreinRegressor(_KernelEstimatorMixin, RegressorMixin, IndefsvmEstimator):
    __doc__ = fill_doc(
        """Variance-constrained least squares in a Krein space (Oglic & Gaertner 2018).

    Parameters
    ----------
    kernel : "precomputed", str or callable
        ``"precomputed"`` (``X`` is the kernel), a kernel name of :mod:`indefsvm.kernels`
        (:data:`~indefsvm.kernels.KERNEL_NAMES`, aliases ``"rbf"``, ``"poly"``) or
        ``kernel(X, Y=None, **params)`` returning the (possibly indefinite) kernel.
    {KERNEL_PARAMS}
    formulation : {"krein", "omcs", "flip", "clip", "shift", "square"}
        The optimisation problem (all solved globally by the secular equation, so there is no
        solver choice). ``"krein"``: eq. (4), regularisation
        ``lambda_+ ||f_+||^2 + lambda_- ||f_-||^2``.
        ``"omcs"``: eq. (2), ``lam <f, f>_K`` (indefinite). The transforms: eq. (2) with the
        transformed kernel (``indefsvm.linalg.spectrum.spectrum_transform``) in place of ``K`` and
        its
        test-row map (Table 1 of the paper).
    lambda_plus, lambda_minus : float
        KREIN regularisation (> 0).
    lam : float
        Regularisation of the eq. (2) methods (> 0).
    r : float, optional
        Standard deviation of the fitted values over the training set (> 0); default the
        standard deviation of ``y``.
    center : bool
        Centre the kernel in feature space and the targets (paper 000 assumes a centred kernel;
        the mean of ``y`` becomes the intercept).
    shift : float, optional
        Diagonal shift for ``formulation="shift"`` (default ``-lambda_min``).
    square_test_map : {"linear", "wu"}
        Test map for ``formulation="square"``: Chen et al.'s linear map ``K k`` or the Wu et al.
        (2005) heuristic ``K k + k(x, x) k`` used by the paper (needs a callable kernel).
    rcond : float, optional
        Relative cut-off below which an eigenvalue of the kernel (or of the low-rank kernel,
        re-diagonalised) counts as zero (default ``n eps``; NumPy's name). The Nystroem map's
        own cut-off of ``K_ZZ`` is ``nystroem_params={"rcond": ...}``.
    n_components : int, optional
        None (default): the full-rank method on the dense ``n x n`` kernel. An int ``m``: the
        low-rank method of Oglic & Gaertner (2019, Sect. 2.4-2.5) on the Nystroem features of
        ``m`` landmarks (:class:`indefsvm.approximation.nystrom.IndefiniteNystroem`, one-shot
        eigendecomposition; memory O(n m), no ``n x n`` array with a kernel name or a
        callable). With ``kernel="precomputed"`` the map reads only the landmark columns of
        the given training kernel (``fit``) and of the test-vs-train kernel (``predict``).
        With every training point as a landmark it reproduces the full-rank method.
    {NYSTROEM_PARAMS} ``"factorization": "plain"`` only with ``formulation="krein"`` or
        ``"omcs"`` (the spectrum transformations need the eigenvalues of ``K_X|Z``).
    random_state : int, Generator or None
        Seed of the landmark selection.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_train,)
        Expansion coefficients on the (centred, transformed) training kernel (full rank only;
        the low-rank model stores ``coef_``, ``f(x) = F(x) coef_ + intercept_`` with the
        features ``F(x)`` of the Nystroem map, ``nystroem_``).
    intercept_ : float
    mu_ : float
        Optimal Lagrange multiplier.
    hard_case_ : bool
        Whether the secular equation's hard case occurred (solution not unique).
    r_ : float
        The radius used (``r`` or the default ``std(y)``).
    solution_ : VarianceConstrainedSolution
    transform_ : SpectrumTransform or None
    """,
        **_DOC_PARAGRAPHS,
    )

    _parameter_constraints: dict = {
        **_KREIN_LOW_RANK_CONSTRAINTS,
        "formulation": [StrOptions(set(KREIN_FORMULATIONS))],
        "lam": [_POSITIVE],
        "r": [_POSITIVE, None],
        "center": ["boolean"],
        "shift": [Real, None],
        "square_test_map": [StrOptions({"linear", "wu"})],
        "rcond": [Interval(Real, 0, None, closed="left"), None],
    }

    def __init__(
        self,
        kernel: str | Callable = "precomputed",
        *,
        gamma: float | None = None,
        coef0: float | None = None,
        degree: float | None = None,
        kernel_params: dict | None = None,
        formulation: str = "krein",
        lambda_plus: float = 1e-2,
        lambda_minus: float = 1e-2,
        lam: float = 1e-2,
        r: float | None = None,
        center: bool = True,
        shift: float | None = None,
        square_test_map: str = "linear",
        rcond: float | None = None,
        n_components: int | None = None,
        nystroem_params: Mapping[str, Any] | None = None,
        random_state: Any = None,
    ) -> None:
        set_init_parameters(self, locals())

    def _radius(self, yc: NDArray[np.float64]) -> float:
        """The radius ``r`` (default the standard deviation of the centred targets)."""
        r = float(np.std(yc)) if self.r is None else float(self.r)
        if r <= 0:
            raise ValueError("r defaults to std(y), which is 0 for constant targets; pass r > 0.")
        self.r_ = r
        self.transform_ = None
        return r

    def _fit_targets(
        self, X: ArrayLike, y: NDArray[np.float64], inputs: PairRows | None = None
    ) -> KreinRegressor:
        if (
            self.square_test_map == "wu"
            and self.formulation == "square"
            and self.kernel == "precomputed"
        ):
            raise ValueError(
                "square_test_map='wu' needs k(x, x) of test points: use a callable kernel."
            )
        if self._low_rank():
            return self._fit_low_rank(X, y, inputs)
        K = self._prepare_train(X)
        yc = self._centred_targets(y, K.shape[0])
        r = self._radius(yc)
        if self.formulation == "krein":
            sol = krein_least_squares(
                K,
                yc,
                lambda_plus=self.lambda_plus,
                lambda_minus=self.lambda_minus,
                r=r,
                rcond=self.rcond,
            )
        elif self.formulation == "omcs":
            sol = omcs_krein_least_squares(K, yc, lam=self.lam, r=r, rcond=self.rcond)
        else:
            tr = spectrum_transform(
                K, self.formulation, shift=self.shift if self.formulation == "shift" else None
            )
            self.transform_ = tr
            tol = K.shape[0] * np.finfo(np.float64).eps if self.rcond is None else self.rcond
            # Zero tolerance relative to the ORIGINAL spectrum: after clipping a kernel without
            # positive eigenvalues only rounding noise is left, and a tolerance relative to that
            # noise would fit it (||alpha|| ~ 1e16).
            active = tr.check_nonzero(
                tol, owner=f"{type(self).__name__}(formulation={self.formulation!r})"
            )
            eig = KernelEigen(
                eigenvalues=tr.transformed_eigenvalues,
                eigenvectors=tr.eigenvectors,
                active=active,
                tol=tol,
            )
            sol = omcs_krein_least_squares(eig, yc, lam=self.lam, r=r)
        self.solution_ = sol
        self.alpha_ = sol.alpha
        self.mu_ = sol.mu
        self.hard_case_ = sol.hard_case
        return self

    _sample_weight_refusal = (
        "the global solver of Oglic & Gaertner (2018) minimises the unweighted squared loss "
        "through one secular equation in the eigenbasis of K"
    )

    @fit_context
    def fit(self, X: ArrayLike, y: ArrayLike, **fit_params: Any) -> KreinRegressor:
        """Fit on a precomputed training kernel or on data ``X`` with a callable kernel
        (``sample_weight`` is refused: the formulation has no per-sample weights)."""
        no_fit_params(self, fit_params, self._sample_weight_refusal)
        return self._fit_targets(X, self._regression_y(X, y))

    #: Formulations available with ``n_components`` (``"shift"`` moves the whole spectrum, including
    #: the null space of a low-rank kernel, and ``square_test_map="wu"`` needs ``k(x, x)``).
    LOW_RANK_FORMULATIONS = ("krein", "omcs", "flip", "clip", "square")

    def _low_rank_features(
        self, Phi: NDArray[np.float64], s: NDArray[np.float64], absl: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Features ``F`` (``f = F z``) and the regulariser diagonal of ``self.formulation``."""
        lam = self.lam
        if self.formulation == "krein":
            reg = np.where(s > 0, self.lambda_plus, self.lambda_minus)
            return _scale_columns_inplace(Phi, s), reg
        if self.formulation == "omcs":
            # n lam a'K a = n lam z'S z (module docstring of indefsvm.krein.lowrank).
            return _scale_columns_inplace(Phi, s), lam * s
        # flip, clip, square: the factor of the transformed kernel (in place: keeps the dtype).
        F, _ = SPECTRUM_MAPS[self.formulation].factor(Phi, s, absl, inplace=True)
        return F, np.full(F.shape[1], lam)

    def _test_features(self, X: Any, inputs: InputMap) -> NDArray[np.float64]:
        Phi = self._test_factor(X, inputs)
        s, absl = self.signature_, np.abs(self.feature_eigenvalues_)
        if self.formulation in ("krein", "omcs"):
            return Phi * s
        return SPECTRUM_MAPS[self.formulation].factor(Phi, s, absl)[0]

    def _fit_low_rank(
        self, X: Any, y: NDArray[np.float64], inputs: PairRows | None = None
    ) -> KreinRegressor:
        """Paper 003, Sect. 2.4: KREIN VC-LSM (and the eq. 2 variants) on the factor."""
        from indefsvm.krein.lowrank import lowrank_variance_constrained

        if self.formulation not in self.LOW_RANK_FORMULATIONS:
            raise ValueError(
                f"formulation={self.formulation!r} has no low-rank variant; with n_components use "
                f"one of {self.LOW_RANK_FORMULATIONS}."
            )
        if self.formulation == "square" and self.square_test_map != "linear":
            raise ValueError(
                "with n_components, formulation='square' supports square_test_map='linear'."
            )
        if self._landmark_split() and self.formulation not in ("krein", "omcs"):
            raise ValueError(
                f"nystroem_params factorization='plain' supports formulation='krein' or 'omcs'; "
                f"got {self.formulation!r} (a spectrum transformation needs the eigenvalues of "
                "the low-rank kernel: use factorization='one-shot')."
            )
        Phi, s, absl = self._prepare_train_factor(X, inputs)
        yc = self._centred_targets(y, Phi.shape[0])
        r = self._radius(yc)
        F, reg = self._low_rank_features(Phi, s, absl)
        if F.shape[1] == 0:
            # clip of a factor without positive columns (the Nystroem map drops numerically
            # zero eigenvalues, so every column left is signal or none is).
            raise ValueError(
                f"{type(self).__name__}(formulation={self.formulation!r}, n_components="
                f"{self.n_components}): the clipped kernel is zero: the Nystroem factor has no "
                f"positive eigenvalue above the zero tolerance (largest "
                f"{float(np.max(self.feature_eigenvalues_, initial=-np.inf)):.3g}); there is "
                "nothing to fit. Use formulation='flip', 'square', 'krein' or 'omcs', which "
                "keep the negative part of the spectrum."
            )
        sol = lowrank_variance_constrained(F, yc, reg, r, tol=self.rcond)
        self.solution_ = sol
        self.coef_ = sol.z
        self.mu_ = sol.mu
        self.hard_case_ = sol.hard_case
        return self

    def _transformed_test_rows(self, X: ArrayLike) -> NDArray[np.float64]:
        self._refuse_dask_full_rank(X)
        raw = self._test_kernel(X)
        Kt = raw
        if self.center:
            Kt = center_kernel_test(raw, self.kernel_column_means_, self.kernel_grand_mean_)
        tr = self.transform_
        if tr is None:
            return Kt
        if tr.method == "square" and self.square_test_map == "wu":
            diag = self._test_diag(X)
            if self.center:
                # k_c(x, x) = k(x, x) - 2 mean_i k(x, x_i) + mean K
                diag = diag - 2.0 * raw.mean(axis=1) + self.kernel_grand_mean_
            return tr.transform(Kt, K_test_diag=diag)
        return tr.transform(Kt)

    def _decision(self, X: ArrayLike, inputs: PairRows | None = None) -> NDArray[np.float64]:
        """``f(x) = k~(x)' alpha + intercept`` with the training maps applied to ``k(x)``.

        Low rank: ``f(x) = F(x) coef_ + intercept`` with the Nystroem features of ``x`` (by the
        model's own map, or those of a pair's ``inputs``, formed by the multi-class model)."""
        inputs = fitted_input(self) if inputs is None else inputs
        if inputs.low_rank:
            return self._test_features(X, inputs) @ self.coef_ + self.intercept_
        check_is_fitted(self, "alpha_")
        return self._transformed_test_rows(X) @ self.alpha_ + self.intercept_

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predicted targets."""
        return self._decision(X)


class _SignClassifierMixin(OneVsOneMixin, ClassifierMixin):
    """Classification by least squares on ±1 targets and the sign of the fit.

    Two classes are one fit; more are handled one-vs-one (:mod:`indefsvm.multiclass`), with
    ``decision_function`` of shape ``(n_samples, n_classes)`` (``"ovr"``).
    """

    def _fit_binary(self, X: Any, y: Any, inputs: PairRows | None = None, **weights: Any) -> None:
        labels = rows_binary_labels(y)
        self.classes_ = labels.classes
        self._fit_targets(X, labels.y, inputs=inputs, **weights)

    def _decision_binary(self, X: Any, inputs: PairRows | None = None) -> NDArray[np.float64]:
        # The regression fit on ±1 targets; positive means classes_[1].
        return self._decision(X, inputs)


class KreinClassifier(_SignClassifierMixin, KreinRegressor):
    """:class:`KreinRegressor` on ±1 targets; predicts the sign (paper 000, Table 3).

    The larger class label (sorted) is +1. See :class:`KreinRegressor` for the parameters.
    """

    def _ovo_kernel_shared(self) -> bool:
        # The Wu et al. test map needs k(x, x) of test points: one-vs-one pairs keep their rows.
        return not (self.formulation == "square" and self.square_test_map == "wu")


class KreinKernelRidge(_KernelEstimatorMixin, RegressorMixin, IndefsvmEstimator):
    __doc__ = fill_doc(
        """Krein kernel ridge regression / KREIN LSM (Oglic & Gaertner 2019, Sect. 2.4).

    ``min_f (1/n) sum (f(x_i) - y_i)^2 + lambda_+ ||f_+||^2 + lambda_- ||f_-||^2``, closed form
    :func:`indefsvm.krein.solver.krein_kernel_ridge`.

    Parameters
    ----------
    kernel, gamma, coef0, degree, kernel_params : see :class:`KreinRegressor`.
    lambda_plus, lambda_minus : float
        Regularisation of the decomposition components (> 0).
    center : bool
        Centre kernel and targets (intercept = mean of ``y``). Default False, as in the paper.
    rcond : float, optional
        Relative zero tolerance for eigenvalues.
    n_components : int, optional
        None (default): full rank on the dense kernel. An int ``m``: the low-rank method of
        paper 003 on ``m`` Nystroem landmarks (see :class:`KreinRegressor`).
    {NYSTROEM_PARAMS}
    random_state : int, Generator or None

    Notes
    -----
    Low rank (``n_components``): KREIN LSM of paper 003, Sect. 2.4,
    ``z = (F'F + n Lambda)^{-1} F'y`` with ``F = Phi S`` the Nystroem features times their
    signature (:func:`indefsvm.krein.lowrank.lowrank_krein_ridge`); ``f(x) = F(x) z``.
    """,
        **_DOC_PARAGRAPHS,
    )

    _parameter_constraints: dict = {
        **_KREIN_LOW_RANK_CONSTRAINTS,
        "center": ["boolean"],
        "rcond": [Interval(Real, 0, None, closed="left"), None],
    }

    def __init__(
        self,
        kernel: str | Callable = "precomputed",
        *,
        gamma: float | None = None,
        coef0: float | None = None,
        degree: float | None = None,
        kernel_params: dict | None = None,
        lambda_plus: float = 1e-2,
        lambda_minus: float = 1e-2,
        center: bool = False,
        rcond: float | None = None,
        n_components: int | None = None,
        nystroem_params: Mapping[str, Any] | None = None,
        random_state: Any = None,
    ) -> None:
        set_init_parameters(self, locals())

    def _fit_targets(
        self, X: ArrayLike, y: NDArray[np.float64], inputs: PairRows | None = None
    ) -> KreinKernelRidge:
        if self._low_rank():
            from indefsvm.krein.lowrank import lowrank_krein_ridge

            Phi, s, _ = self._prepare_train_factor(X, inputs)
            self.coef_ = lowrank_krein_ridge(
                Phi,
                s,
                self._centred_targets(y, Phi.shape[0]),
                lambda_plus=self.lambda_plus,
                lambda_minus=self.lambda_minus,
            )
            return self
        K = self._prepare_train(X)
        self.alpha_ = krein_kernel_ridge(
            kernel_eigen(K, tol=self.rcond),
            self._centred_targets(y, K.shape[0]),
            lambda_plus=self.lambda_plus,
            lambda_minus=self.lambda_minus,
        )
        return self

    _sample_weight_refusal = "its closed form (paper 000, Table 2) is the unweighted squared loss"

    @fit_context
    def fit(self, X: ArrayLike, y: ArrayLike, **fit_params: Any) -> KreinKernelRidge:
        """Fit on a precomputed kernel or data with a callable kernel (``sample_weight`` is
        refused: the formulation has no per-sample weights)."""
        no_fit_params(self, fit_params, self._sample_weight_refusal)
        return self._fit_targets(X, self._regression_y(X, y))

    def _decision(self, X: ArrayLike, inputs: PairRows | None = None) -> NDArray[np.float64]:
        """``f(x) = k(x)' alpha + intercept`` with the original (indefinite) kernel.

        Low rank: ``f(x) = phi(x) S coef_ + intercept`` (Nystroem features ``phi``, by the
        model's own map or those of a pair's ``inputs``)."""
        inputs = fitted_input(self) if inputs is None else inputs
        if inputs.low_rank:
            phi = self._test_factor(X, inputs)
            return (phi * self.signature_) @ self.coef_ + self.intercept_
        check_is_fitted(self, "alpha_")
        return self._prepare_test(X) @ self.alpha_ + self.intercept_

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predicted targets."""
        return self._decision(X)


class KreinKernelRidgeClassifier(_SignClassifierMixin, KreinKernelRidge):
    """:class:`KreinKernelRidge` on ±1 targets, predicting the sign."""


class KreinSVC(WeightedOneVsOneMixin, _KernelEstimatorMixin, ClassifierMixin, IndefsvmEstimator):
    """Krein SVM (Loosli et al. 2016) as characterised by Oglic & Gaertner (2019), Prop. 3.

    A standard C-SVM trained by LIBSVM (scikit-learn's ``SVC(kernel="precomputed")``) on the
    flip-spectrum kernel ``|K| = U |D| U'``; test rows ``k(x)`` are mapped by Chen et al.'s
    (2009) ``k -> U sign(D) U' k``. Equivalently the Krein-space hypothesis is
    ``f(x) = k(x)' beta + b`` with ``beta = U sign(D) U' (y * dual)`` (attribute ``krein_coef_``).

    Parameters
    ----------
    kernel, gamma, coef0, degree, kernel_params : see :class:`KreinRegressor`.
    C : float
        SVM penalty (> 0).
    center : bool
        Centre the kernel before flipping (default False, as in Loosli et al.).
    tol : float
        LIBSVM stopping tolerance.
    class_weight : passed to ``SVC``.
    """

    _parameter_constraints: dict = {
        **KERNEL_PARAMETER_CONSTRAINTS,
        "C": [_POSITIVE],
        "center": ["boolean"],
        "tol": [_POSITIVE],
        "class_weight": [StrOptions({"balanced"}), Mapping, None],
    }

    def __init__(
        self,
        kernel: str | Callable = "precomputed",
        *,
        gamma: float | None = None,
        coef0: float | None = None,
        degree: float | None = None,
        kernel_params: dict | None = None,
        C: float = 1.0,
        center: bool = False,
        tol: float = 1e-3,
        class_weight: Any = None,
    ) -> None:
        set_init_parameters(self, locals())

    def _fit_binary(self, X: Any, y: Any, sample_weight: NDArray | None = None) -> None:
        """Train LIBSVM on the flip-spectrum training kernel (instance weights: ``C_i = C w_i``)."""
        K = self._prepare_train(X)
        labels = check_binary_labels(y, K.shape[0])
        self.classes_ = labels.classes
        self.transform_ = spectrum_transform(K, "flip")
        # A zero kernel has nothing to fit (as every other estimator says).
        self.transform_.check_nonzero(owner=type(self).__name__)
        svc = SVC(kernel="precomputed", C=self.C, tol=self.tol, class_weight=self.class_weight)
        # The user's labels (so class_weight keys are the user's); SVC sorts them like
        # check_binary_labels, and decision > 0 means classes_[1].
        svc.fit(
            self.transform_.kernel,
            labels.classes[(labels.y > 0).astype(int)],
            sample_weight=sample_weight,
        )
        self.svc_ = svc
        dual = np.zeros(K.shape[0])
        dual[svc.support_] = svc.dual_coef_[0]  # y_i * a_i with y = +1 for classes_[1]
        U = self.transform_.eigenvectors
        self.krein_coef_ = U @ (np.sign(self.transform_.eigenvalues) * (U.T @ dual))
        self.intercept_ = float(svc.intercept_[0])

    def _decision_binary(self, X: Any) -> NDArray[np.float64]:
        """LIBSVM decision values on the flip-mapped test rows."""
        check_is_fitted(self, "svc_")
        return self.svc_.decision_function(self.transform_.transform(self._prepare_test(X)))


class KreinSquaredHingeSVC(
    OneVsOneMixin, _KernelEstimatorMixin, ClassifierMixin, IndefsvmEstimator
):
    _sample_weight_refusal = (
        "the modified finite Newton method of paper 003 is implemented for the unweighted "
        "squared hinge"
    )

    __doc__ = fill_doc(
        """KREIN SH-SVM: squared-hinge SVM in a Krein space (Oglic & Gaertner 2019, Sect. 2.5).

    ``min_f sum_i max(1 - y_i f(x_i), 0)^2 + n lambda_+ ||f_+||^2 + n lambda_- ||f_-||^2``
    solved in the primal on a factor ``K = Phi S Phi'`` of the kernel,
    ``f(x) = phi(x) S z + b``, by the modified finite Newton method of Keerthi & DeCoste (2005)
    (:func:`indefsvm.krein.lowrank.squared_hinge_svm`). With ``n_components=None`` the factor
    is the exact eigendecomposition of the dense training kernel (``Phi = V |D|^{1/2}``, test
    map ``phi(x) = k(x)' V |D|^{-1/2}``); with ``n_components = m`` it is the one-shot Nystroem
    factor of ``m`` landmarks (paper 003's low-rank method; memory O(n m)), or with
    ``nystroem_params={"factorization": "plain"}`` paper 003's own features
    ``K_XZ U_ZZ |D_ZZ|^{-1/2}``. ``fit_intercept=False`` with ``"plain"`` is the problem
    exactly as paper 003 states it.

    Parameters
    ----------
    kernel, gamma, coef0, degree, kernel_params : see :class:`KreinRegressor`.
        ``kernel="precomputed"`` works with both (with ``n_components`` only the landmark
        columns of the given kernels are read).
    lambda_plus, lambda_minus : float
        Regularisation of the two decomposition components (> 0).
    fit_intercept : bool
        Unregularised intercept ``b`` (default True, a deviation: paper 003's SH-SVM,
        Sect. 2.5, has no intercept; ``fit_intercept=False`` is the paper's problem).
    center : bool
        Centre the kernel in feature space (default False).
    tol, max_iter : float, int
        Newton stopping rule (see :func:`squared_hinge_svm`).
    rcond : float, optional
        Relative zero tolerance for eigenvalues (full rank; default ``n eps``).
    n_components : int, optional
    {NYSTROEM_PARAMS}
    random_state : int, Generator or None

    Attributes
    ----------
    coef_ : ndarray of shape (r,)
        ``z``.
    intercept_ : float
    signature_ : ndarray of shape (r,)
    solution_ : SquaredHingeSolution
    classes_ : ndarray of shape (2,)
    """,
        **_DOC_PARAGRAPHS,
    )

    _parameter_constraints: dict = {
        **_KREIN_LOW_RANK_CONSTRAINTS,
        "fit_intercept": ["boolean"],
        "center": ["boolean"],
        "tol": [_POSITIVE],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "rcond": [Interval(Real, 0, None, closed="left"), None],
    }

    def __init__(
        self,
        kernel: str | Callable = "precomputed",
        *,
        gamma: float | None = None,
        coef0: float | None = None,
        degree: float | None = None,
        kernel_params: dict | None = None,
        lambda_plus: float = 1e-2,
        lambda_minus: float = 1e-2,
        fit_intercept: bool = True,
        center: bool = False,
        tol: float = 1e-10,
        max_iter: int = 100,
        rcond: float | None = None,
        n_components: int | None = None,
        nystroem_params: Mapping[str, Any] | None = None,
        random_state: Any = None,
    ) -> None:
        set_init_parameters(self, locals())

    def _train_features(
        self, X: Any, inputs: PairRows | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        if self._low_rank():
            Phi, s, _ = self._prepare_train_factor(X, inputs)
            return Phi, s
        K = self._prepare_train(X)
        eig = kernel_eigen(K, tol=self.rcond)
        J = eig.active
        sigma = eig.eigenvalues[J]
        V = eig.eigenvectors[:, J]
        s = np.sign(sigma)
        # phi(x) = k(x)' V |D|^{-1/2} S, so that phi(x) S Phi' = k(x)' V V' = k(x)' on range(K).
        self.eigen_map_ = V * (s / np.sqrt(np.abs(sigma)))
        self.signature_ = s
        return V * np.sqrt(np.abs(sigma)), s

    def _features(self, X: Any, inputs: PairRows | None = None) -> NDArray[np.float64]:
        """``phi(x) S``: the features on which ``f`` is linear (of a pair's ``inputs``, the
        shared map's features formed by the multi-class model, when given)."""
        inputs = fitted_input(self) if inputs is None else inputs
        if inputs.low_rank:
            return self._test_factor(X, inputs) * self.signature_
        return (self._prepare_test(X) @ self.eigen_map_) * self.signature_

    def _fit_binary(self, X: Any, y: Any, inputs: PairRows | None = None) -> None:
        """Solve the SH-SVM primal on the (exact or Nystroem) factor (a one-vs-one pair's
        rows of a shared map are its ``inputs``)."""
        from indefsvm.krein.lowrank import squared_hinge_svm

        lp, lm = float(self.lambda_plus), float(self.lambda_minus)
        Phi, s = self._train_features(X, inputs)
        labels = rows_binary_labels(y, Phi.shape[0])
        self.classes_ = labels.classes
        self.train_features_shape_ = Phi.shape
        sol = squared_hinge_svm(
            _scale_columns_inplace(Phi, s),
            labels.y,
            np.where(s > 0, lp, lm),
            fit_intercept=self.fit_intercept,
            tol=self.tol,
            max_iter=self.max_iter,
        )
        if not isinstance(sol.active, np.ndarray):
            # A dask active mask stays on the workers; a fitted model holds no dask array (it
            # pickles and predicts in memory like any other).
            sol = dataclasses.replace(sol, active=None)
        self.solution_ = sol
        self.coef_ = sol.z
        self.intercept_ = sol.intercept
        self.n_iter_ = sol.n_iter

    def _decision_binary(self, X: Any, inputs: PairRows | None = None) -> NDArray[np.float64]:
        """``f(x) = phi(x) S z + b``."""
        check_is_fitted(self, "coef_")
        return self._features(X, inputs) @ self.coef_ + self.intercept_

    def validation_hypergradient(
        self,
        X_val: Any,
        y_val: ArrayLike,
        X_train: Any,
        y_train: ArrayLike,
        *,
        loss: str = "squared_hinge",
    ):
        """Validation loss and its gradient w.r.t. ``lambda_+``/``lambda_-`` (Chapelle et al.
        2002; :func:`indefsvm.krein.lowrank.squared_hinge_hypergradient`).

        ``X_train, y_train`` must be the data of the last ``fit`` (the training features are
        recomputed from them, not stored)."""
        from indefsvm.krein.lowrank import squared_hinge_hypergradient

        check_is_fitted(self, "coef_")
        F = self._features(X_train)
        train = check_binary_labels(y_train, F.shape[0])
        if not np.array_equal(train.classes, self.classes_):
            raise ValueError("y_train has other classes than the fitted model.")
        val = np.where(np.asarray(y_val) == self.classes_[1], 1.0, -1.0)
        return squared_hinge_hypergradient(
            F,
            train.y,
            self.signature_,
            self.solution_,
            self._features(X_val),
            val,
            lambda_plus=self.lambda_plus,
            lambda_minus=self.lambda_minus,
            loss=loss,
            fit_intercept=self.fit_intercept,
        )


class SimilarityRidge(_KernelEstimatorMixin, RegressorMixin, IndefsvmEstimator):
    """SF-LSM: similarities as features with linear ridge regression (Chen et al. 2009).

    The feature vector of ``x`` is ``(k(x, x_1), ..., k(x, x_n))``; the model is
    ``Ridge(alpha=n * lam)`` with an intercept (scikit-learn), i.e.
    ``min (1/n) ||Phi w + b - y||^2 + lam ||w||^2``.

    Parameters
    ----------
    kernel, gamma, coef0, degree, kernel_params : see :class:`KreinRegressor`.
    lam : float
        Ridge penalty per sample (> 0).
    n_components : int, optional
        None (default): similarities to all ``n`` training points. An int ``m``: SF-LSM of
        paper 003 (Sect. 3), similarities to ``m`` landmarks only (features ``k(x, Z)``,
        memory O(n m)); with every training point as a landmark it is the full model.
    nystroem_params : dict, optional
        ``{"landmarks": ...}``: landmark selection (paper 003, Sect. 2.3; ``"uniform"``,
        ``"kmeans++"``, ``"leverage"``) or explicit indices, and ``"sketch_size"`` (as in
        :class:`KreinRegressor`; the features are the landmark columns, so the map's
        factorisation options do not apply and are refused).
    random_state : int, Generator or None
    """

    #: The keys of ``nystroem_params`` (the features are ``k(x, Z)``, not the factor).
    _nystroem_keys = ("landmarks", "sketch_size")
    _parameter_constraints: dict = {
        **KERNEL_PARAMETER_CONSTRAINTS,
        **NYSTROEM_PARAMETER_CONSTRAINTS,
        "nystroem_params": [Mapping, None],
        "lam": [_POSITIVE],
    }

    def __init__(
        self,
        kernel: str | Callable = "precomputed",
        *,
        gamma: float | None = None,
        coef0: float | None = None,
        degree: float | None = None,
        kernel_params: dict | None = None,
        lam: float = 1e-2,
        n_components: int | None = None,
        nystroem_params: Mapping[str, Any] | None = None,
        random_state: Any = None,
    ) -> None:
        set_init_parameters(self, locals())

    center = False  # features are raw similarities; Ridge fits the intercept

    def _nystroem_overrides(self) -> dict[str, Any]:
        # Landmarks only: the "plain" factorisation touches K_ZZ, not the n rows.
        return {"factorization": "plain"}

    def _fit_targets(
        self,
        X: ArrayLike,
        y: NDArray[np.float64],
        sample_weight: NDArray | None = None,
        inputs: PairRows | None = None,
    ) -> SimilarityRidge:
        lam = float(self.lam)
        if self._low_rank():
            # The features are the similarities to the landmarks, k(X, Z).
            if inputs is None:
                self.nystroem_, K, _ = self._fit_landmarks(X, columns=True)
                self.landmark_points_ = self.nystroem_.landmark_points_
            else:
                # A one-vs-one pair: X are its rows of the landmark columns of the shared map,
                # and prediction reads the columns the multi-class model forms.
                fit_input(self, X, given=inputs)  # checks X (n_features_in_: the landmarks)
                self.nystroem_, K = inputs.nystroem, np.asarray(X, dtype=np.float64)
                self.landmark_points_ = None
        else:
            K = self._prepare_train(X)
        y = rows_targets(y, K.shape[0])
        sample_weight = check_sample_weight(sample_weight, K.shape[0], owner=type(self).__name__)
        features = as_factor(K, "K")
        if features.distributed and sample_weight is not None:
            raise ValueError(
                f"{type(self).__name__}: sample_weight is not supported with a dask array X; "
                "fit in memory, or without weights."
            )
        if features.distributed:
            # Landmark similarities on the workers (persisted: two passes read them); the same
            # solution as scikit-learn's Ridge, stored as a fitted Ridge for numpy prediction.
            from indefsvm.krein.lowrank import ridge_on_rows

            coef, intercept = ridge_on_rows(features.persist(K), y, K.shape[0] * lam)
            ridge = Ridge(alpha=K.shape[0] * lam)
            ridge.coef_, ridge.intercept_, ridge.n_features_in_ = coef, intercept, K.shape[1]
            self.ridge_ = ridge
            return self
        self.ridge_ = Ridge(alpha=K.shape[0] * lam).fit(K, y, sample_weight=sample_weight)
        return self

    def _landmark_similarities(self, X: Any) -> NDArray[np.float64]:
        if self._precomputed():
            # test-vs-train kernel rows: the landmark columns are the features
            X = validate_data(self, X, dtype=np.float64, reset=False)
            return X[:, self.nystroem_.landmarks_]
        rows = self.nystroem_._kernel_rows()
        return rows(X, self.landmark_points_)

    @fit_context
    def fit(
        self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None
    ) -> SimilarityRidge:
        """Fit ridge regression on the training similarity rows (``sample_weight`` as
        :class:`sklearn.linear_model.Ridge` takes it)."""
        return self._fit_targets(X, self._regression_y(X, y), sample_weight)

    def _decision(self, X: ArrayLike, inputs: PairRows | None = None) -> NDArray[np.float64]:
        """Ridge prediction on the test similarity rows (a pair's are the landmark columns
        ``X`` the multi-class model formed; the pair's ``inputs`` add nothing to them)."""
        check_is_fitted(self, "ridge_")
        low_rank = (fitted_input(self) if inputs is None else inputs).low_rank
        if on_workers(X) and low_rank:
            _refuse_dask_precomputed(self)
            C = self.nystroem_.landmark_columns(X)
            return C @ self.ridge_.coef_ + self.ridge_.intercept_
        if low_rank:
            if self._precomputed():
                return self.ridge_.predict(self._landmark_similarities(X))
            return self.ridge_.predict(self._landmark_similarities(self._check_raw(X, reset=False)))
        return self.ridge_.predict(self._prepare_test(X))

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """Predicted targets."""
        return self._decision(X)


class SimilarityRidgeClassifier(WeightedOneVsOneMixin, _SignClassifierMixin, SimilarityRidge):
    """:class:`SimilarityRidge` on ±1 targets (LRR-SF of paper 000, Table 2)."""


class OngSubspaceRegressor(_KernelEstimatorMixin, RegressorMixin, IndefsvmEstimator):
    """Regularisation by subspace for indefinite interpolation (Ong et al. 2004, Sect. 5).

    Parameters
    ----------
    kernel, gamma, coef0, degree, kernel_params : see :class:`KreinRegressor`.
    solver : {"tsf", "landweber", "mr2"}
        Truncated spectral factorisation, Landweber-Fridman or MR-II
        (:mod:`indefsvm.krein.subspace`).
    n_iter : int
        Iterations (the regulariser) of ``"landweber"`` and ``"mr2"``.
    n_eigenpairs : int, optional
        Truncation level of ``"tsf"``: the number of eigenpairs kept (default: all eigenpairs
        with ``|mu| > threshold``). Not a Nystroem rank: this model has no ``n_components``.
    threshold : float, optional
        Eigenvalue threshold of ``"tsf"`` when ``n_eigenpairs`` is None (default
        ``n eps max|mu|``).
    step_size : float, optional
        Landweber step (default: the variant's default step of
        :func:`~indefsvm.krein.subspace.landweber_fridman`).
    variant : {"hilbert", "normal", "krein"}
        Landweber variant, see :func:`indefsvm.krein.subspace.landweber_fridman` (default
        ``"hilbert"``, the one that reproduces paper 002's "30 iterations suffice" on sinc).
    center : bool
        Centre kernel and targets (default False: the paper interpolates ``K alpha = y``).
    """

    _parameter_constraints: dict = {
        **KERNEL_PARAMETER_CONSTRAINTS,
        "solver": [StrOptions(set(ONG_SOLVERS))],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "n_eigenpairs": [Interval(Integral, 1, None, closed="left"), None],
        "threshold": [Interval(Real, 0, None, closed="left"), None],
        "step_size": [_POSITIVE, None],
        "variant": [StrOptions({"hilbert", "normal", "krein"})],
        "center": ["boolean"],
    }

    def __init__(
        self,
        kernel: str | Callable = "precomputed",
        *,
        gamma: float | None = None,
        coef0: float | None = None,
        degree: float | None = None,
        kernel_params: dict | None = None,
        solver: str = "mr2",
        n_iter: int = 10,
        n_eigenpairs: int | None = None,
        threshold: float | None = None,
        step_size: float | None = None,
        variant: str = "hilbert",
        center: bool = False,
    ) -> None:
        set_init_parameters(self, locals())

    @fit_context
    def fit(self, X: ArrayLike, y: ArrayLike, **fit_params: Any) -> OngSubspaceRegressor:
        """Solve the interpolation problem in the chosen subspace (``sample_weight`` is refused:
        the formulation has no per-sample weights)."""
        no_fit_params(
            self,
            fit_params,
            "regularization by subspace (Ong et al. 2004) interpolates every training target "
            "with equal weight",
        )
        y = self._regression_y(X, y)
        K = self._prepare_train(X)
        yc = self._centred_targets(y, K.shape[0])
        self.n_iter_ = 0
        if self.solver == "tsf":
            threshold = self.threshold
            if self.n_eigenpairs is None and threshold is None:
                threshold = (
                    K.shape[0]
                    * np.finfo(np.float64).eps
                    * float(np.max(np.abs(np.linalg.eigvalsh(K))))
                )
            self.alpha_ = truncated_spectral_factorization(
                K,
                yc,
                n_components=self.n_eigenpairs,
                threshold=None if self.n_eigenpairs is not None else threshold,
            )
        elif self.solver == "landweber":
            sol = landweber_fridman(
                K, yc, n_iter=self.n_iter, step_size=self.step_size, variant=self.variant
            )
            self.alpha_, self.n_iter_ = sol.alpha, sol.n_iter
        else:
            sol = mr_ii(K, yc, n_iter=self.n_iter)
            self.alpha_, self.n_iter_ = sol.alpha, sol.n_iter
        return self

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """``f(x) = k(x)' alpha + intercept``."""
        check_is_fitted(self, "alpha_")
        return self._prepare_test(X) @ self.alpha_ + self.intercept_
