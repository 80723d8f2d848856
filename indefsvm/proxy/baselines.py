"""Baselines of paper 004, Table 2: SVMs on modified or unmodified indefinite kernels.

Every baseline trains LIBSVM (``libsvm-official``, C-SVC ``-s 0`` with a precomputed kernel) and
has the API of :class:`indefsvm.proxy.estimators.IndefiniteSVC` (``fit(K_train, y)``,
``decision_function(K_test_train)``, precomputed kernels or a kernel name/callable on features,
labels of any two-class type).

* :class:`SpectrumSVC` -- the spectrum transformations of Sect. 5.1: ``spectrum="clip"`` (the
  paper's *denoise*), ``"flip"``, ``"shift"`` and ``"square"``, with the consistent maps for test
  rows of :func:`indefsvm.linalg.spectrum.spectrum_transform` (Chen et al. 2009; Wu et al. 2005 for
  shift).
* :class:`ModSVC` -- the paper's *Mod SVM*, the convexification of Lin & Lin (2003): the
  quadratic term uses the identity and the kernel appears only in the margin constraints,
  ``min 1/2 ||a||^2 + sum_i C_i xi_i`` s.t. ``y_i ((K Y a)_i + b) >= 1 - xi_i``, ``xi >= 0``.
  With ``w = Y a`` this is a linear SVM whose features are the kernel rows (the empirical kernel
  map), so LIBSVM solves it with the PSD kernel ``K K'`` and the decision of a new point with
  kernel row ``k_x`` is ``k_x' Y a + b``.
* :class:`DirectSVC` -- LIBSVM on the indefinite kernel as it is (the paper's *SVM* column).
  LIBSVM's decomposition then converges to a stationary point of the non-convex dual, not
  necessarily its optimum: an :class:`IndefiniteKernelWarning` says so.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import ClassifierMixin

from indefsvm.base import (
    KERNEL_PARAMETER_CONSTRAINTS,
    IndefsvmEstimator,
    KernelInputMixin,
    set_init_parameters,
)
from indefsvm.linalg.spectrum import TRANSFORM_METHODS, SpectrumTransform, spectrum_transform
from indefsvm.multiclass import WeightedOneVsOneMixin
from indefsvm.probability import PlattProbabilityMixin, probability_method
from indefsvm.proxy import _libsvm
from indefsvm.utils.constraints import Interval, StrOptions
from indefsvm.utils.docstrings import fill_doc
from indefsvm.utils.log import user_stacklevel
from indefsvm.utils.validation import check_binary_labels, class_weights_to_C

__all__ = [
    "DirectSVC",
    "IndefiniteKernelWarning",
    "ModSVC",
    "SpectrumSVC",
]


class IndefiniteKernelWarning(UserWarning):
    """LIBSVM was trained on an indefinite kernel: the solution is only a stationary point."""


class _LibsvmKernelClassifier(
    PlattProbabilityMixin,
    WeightedOneVsOneMixin,
    ClassifierMixin,
    KernelInputMixin,
    IndefsvmEstimator,
):
    """C-SVC by LIBSVM on a kernel derived from the training kernel; subclasses define it.

    Subclasses implement ``_train_kernel(K) -> K_fit`` (the PSD or raw kernel LIBSVM sees) and
    ``_test_coefficients(K, coef) -> c`` such that the decision of a new point with ORIGINAL
    kernel row ``k_x`` is ``k_x' c + b`` (the test-row map folded into the coefficients).
    """

    _parameter_constraints: dict = {
        **KERNEL_PARAMETER_CONSTRAINTS,
        "C": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions({"balanced", "paper"}), Mapping, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "probability": ["boolean"],
        "random_state": ["random_state"],
    }

    def _train_kernel(self, K: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    def _test_coefficients(
        self, K: NDArray[np.float64], coef: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        raise NotImplementedError

    def _fit_binary(self, X: Any, y: Any, sample_weight: NDArray | None = None) -> None:
        """Train LIBSVM on the (transformed) training kernel (two classes); instance weights
        multiply the bounds, ``C_i = C * class weight * w_i``."""
        K, y = self._fit_kernel(X, y)
        labels = check_binary_labels(y, K.shape[0])
        self.classes_ = labels.classes
        box = class_weights_to_C(self.C, labels.y, self.class_weight, labels.classes)
        if sample_weight is not None:
            box = box * sample_weight
        K_fit = self._train_kernel(K)
        fit = _libsvm.train_precomputed(
            K_fit, labels.y, svm_type=0, C=1.0, box=box, tol=float(self.tol)
        )
        # LIBSVM's decision is positive for its first label; orient it towards +1.
        sign = 1.0 if fit.labels[0] == 1 else -1.0
        coef = sign * fit.coef
        self.intercept_ = sign * fit.intercept
        self.train_dual_coef_ = coef
        self.alpha_ = labels.y * coef
        self.support_ = np.flatnonzero(coef != 0)
        self.dual_coef_ = self._test_coefficients(K, coef)
        self._fit_probability(X, y, labels.y, sample_weight)

    def _decision_binary(self, X: Any) -> NDArray[np.float64]:
        # X is the ORIGINAL test kernel (or features): the test map is in dual_coef_.
        return self._test_kernel(X) @ self.dual_coef_ + self.intercept_

    @probability_method
    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """Class probabilities (``probability=True``), columns in the order of ``classes_``.

        Platt scaling on an internal stratified 5-fold cross-validation seeded by
        ``random_state`` and pairwise coupling for more than two classes, as
        :meth:`indefsvm.proxy.estimators.IndefiniteSVC.predict_proba`.
        """
        return self._predict_proba(X)

    @probability_method
    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``log(predict_proba(X))``."""
        return np.log(self._predict_proba(X))


_BASE_PARAMS_DOC = """
    C : float
        Misclassification penalty (> 0).
    class_weight : None, "balanced", "paper" or dict
        Per-class multipliers of ``C`` (as in :class:`indefsvm.proxy.estimators.IndefiniteSVC`).
    tol : float
        LIBSVM's stopping tolerance ``-e``.
    kernel : "precomputed", str or callable
        ``"precomputed"`` (``X`` is the kernel), a kernel name of :mod:`indefsvm.kernels` or a
        callable ``kernel(X, Y=None, **params)``.
    gamma, coef0, degree, kernel_params
        Kernel parameters when the kernel is computed from features.
    probability : bool
        Enable ``predict_proba`` (Platt scaling on an internal stratified 5-fold
        cross-validation, pairwise coupling; as ``sklearn.svm.SVC(probability=True)``).
    random_state : int, Generator or None
        Seed of that cross-validation (used only with ``probability=True``).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    train_dual_coef_ : ndarray of shape (n_train,)
        LIBSVM's ``y_i alpha_i`` on the kernel it was trained on (zero off the support).
    dual_coef_ : ndarray of shape (n_train,)
        Coefficients on the ORIGINAL test-vs-train kernel rows: decision =
        ``K_test_train @ dual_coef_ + intercept_``.
    intercept_ : float
    support_ : ndarray
        Indices of LIBSVM's support vectors.
    n_features_in_ : int"""


class SpectrumSVC(_LibsvmKernelClassifier):
    __doc__ = fill_doc(
        """SVM on a spectrum-modified kernel (paper 004, Sect. 5.1: denoise, flip, shift).

    The training kernel ``K = U diag(lambda) U'`` is made PSD by ``spectrum`` and LIBSVM is
    trained on the result. Test rows use the consistent map of
    :class:`indefsvm.linalg.spectrum.SpectrumTransform`: ``k -> U diag(1[lambda>0]) U' k`` (clip),
    ``U diag(sign lambda) U' k`` (flip), ``K k`` (square) and ``k`` unchanged (shift, the
    heuristic of Wu et al. 2005). Since these maps are linear and symmetric, they are folded
    into ``dual_coef_``.

    Parameters
    ----------
    spectrum : {"clip", "flip", "shift", "square"}
        The spectrum transformation; ``"clip"`` is the paper's *denoise* (negative eigenvalues
        set to 0). (Named ``spectrum``, not ``transform``: a parameter called ``transform``
        would make scikit-learn take the classifier for a transformer, and ``method`` is kept
        for the optimisation algorithm elsewhere.)
    shift : float, optional
        Diagonal shift for ``spectrum="shift"`` (default ``max(0, -lambda_min)``).
    {BASE_PARAMS}
    transform_ : SpectrumTransform
        The fitted transformation (eigendecomposition, transformed kernel, test map).
    """,
        BASE_PARAMS=_BASE_PARAMS_DOC,
    )

    _parameter_constraints: dict = {
        **_LibsvmKernelClassifier._parameter_constraints,
        "spectrum": [StrOptions(set(TRANSFORM_METHODS))],
        "shift": [Real, None],
    }

    def __init__(
        self,
        spectrum: str = "clip",
        C: float = 1.0,
        *,
        shift: float | None = None,
        class_weight: None | str | Mapping[Any, float] = None,
        decision_function_shape: str = "ovr",
        tol: float = 1e-3,
        kernel: str | Callable[..., Any] = "precomputed",
        gamma: float | None = None,
        coef0: float | None = None,
        degree: int | None = None,
        kernel_params: Mapping[str, Any] | None = None,
        probability: bool = False,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        set_init_parameters(self, locals())

    def _train_kernel(self, K: NDArray[np.float64]) -> NDArray[np.float64]:
        shift = self.shift if self.spectrum == "shift" else None
        self.transform_: SpectrumTransform = spectrum_transform(K, self.spectrum, shift=shift)
        # LIBSVM on a numerically zero kernel (clip of a kernel without positive eigenvalues)
        # would fit rounding noise: refuse.
        self.transform_.check_nonzero(owner=f"SpectrumSVC(spectrum={self.spectrum!r})")
        return self.transform_.kernel

    def _test_coefficients(
        self, K: NDArray[np.float64], coef: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        # k' P coef with P the symmetric test map: P coef is the map applied to the row coef'.
        return self.transform_.transform(coef[None, :])[0]


class ModSVC(_LibsvmKernelClassifier):
    __doc__ = fill_doc(
        """Mod SVM of paper 004 (Lin & Lin 2003): identity in the objective, kernel in the
    constraints.

    Solves ``min_{a, b, xi} 1/2 ||a||^2 + sum_i C_i xi_i`` subject to
    ``y_i ((K Y a)_i + b) >= 1 - xi_i`` and ``xi >= 0``: the non-convex quadratic term of the SVM
    dual is replaced by the identity, so the problem is convex for any symmetric ``K``. With
    ``w = Y a`` it is the linear SVM on the features ``phi(x_i) = k_i`` (kernel rows), whose
    dual LIBSVM solves with the PSD kernel ``K K'``; then ``w = K (y * beta)`` and the decision
    for a new point is ``k_x' w + b``.

    Parameters
    ----------
    {BASE_PARAMS}
    alpha_ : ndarray of shape (n_train,)
        The variable ``a`` of the formulation above (``Y a = dual_coef_``).

    References
    ----------
    H.-T. Lin, C.-J. Lin. A study on sigmoid kernels for SVM and the training of non-PSD kernels
    by SMO-type methods. Technical report, National Taiwan University, 2003.
    """,
        BASE_PARAMS=_BASE_PARAMS_DOC,
    )

    def __init__(
        self,
        C: float = 1.0,
        *,
        class_weight: None | str | Mapping[Any, float] = None,
        decision_function_shape: str = "ovr",
        tol: float = 1e-3,
        kernel: str | Callable[..., Any] = "precomputed",
        gamma: float | None = None,
        coef0: float | None = None,
        degree: int | None = None,
        kernel_params: Mapping[str, Any] | None = None,
        probability: bool = False,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        set_init_parameters(self, locals())

    def _train_kernel(self, K: NDArray[np.float64]) -> NDArray[np.float64]:
        G = K @ K.T
        return 0.5 * (G + G.T)

    def _test_coefficients(
        self, K: NDArray[np.float64], coef: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        return K @ coef

    def _fit_binary(self, X: Any, y: Any, sample_weight: NDArray | None = None) -> None:
        super()._fit_binary(X, y, sample_weight)
        # a = Y w (the formulation's variable); alpha_ from the base class is y * coef.
        self.alpha_ = check_binary_labels(y).y * self.dual_coef_


class DirectSVC(_LibsvmKernelClassifier):
    __doc__ = fill_doc(
        """LIBSVM on the indefinite kernel as it is (the *SVM* column of paper 004, Table 2).

    LIBSVM's SMO-type decomposition still converges on a non-PSD kernel (Lin & Lin 2003), but
    only to a stationary point of the non-convex dual, not necessarily to its optimum: fitting a
    kernel with a negative eigenvalue below ``-psd_tol * max|lambda|`` emits an
    :class:`IndefiniteKernelWarning`.

    Parameters
    ----------
    psd_tol : float
        Relative tolerance of the PSD check behind the warning.
    {BASE_PARAMS}
    lambda_min_ : float
        Smallest eigenvalue of the training kernel.
    """,
        BASE_PARAMS=_BASE_PARAMS_DOC,
    )

    _parameter_constraints: dict = {
        **_LibsvmKernelClassifier._parameter_constraints,
        "psd_tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        C: float = 1.0,
        *,
        class_weight: None | str | Mapping[Any, float] = None,
        decision_function_shape: str = "ovr",
        tol: float = 1e-3,
        psd_tol: float = 1e-10,
        kernel: str | Callable[..., Any] = "precomputed",
        gamma: float | None = None,
        coef0: float | None = None,
        degree: int | None = None,
        kernel_params: Mapping[str, Any] | None = None,
        probability: bool = False,
        random_state: int | np.random.Generator | None = None,
    ) -> None:
        set_init_parameters(self, locals())

    def _train_kernel(self, K: NDArray[np.float64]) -> NDArray[np.float64]:
        lam = np.linalg.eigvalsh(K)
        self.lambda_min_ = float(lam[0])
        scale = max(1.0, float(np.max(np.abs(lam))))
        if lam[0] < -self.psd_tol * scale:
            warnings.warn(
                f"DirectSVC: the training kernel is indefinite (lambda_min = {lam[0]:.4g}, "
                f"{int(np.sum(lam < -self.psd_tol * scale))} negative eigenvalues). LIBSVM "
                "converges to a stationary point of the non-convex dual, which is not "
                "guaranteed to be optimal.",
                IndefiniteKernelWarning,
                stacklevel=user_stacklevel(),
            )
        return K

    def _test_coefficients(
        self, K: NDArray[np.float64], coef: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        return coef
