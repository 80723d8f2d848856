"""Automatic tuning of the low-rank Krein SH-SVM by its hypergradient (paper 003, Sect. 2.5).

Chapelle et al.'s gradient-based model selection, as paper 003 suggests: L-BFGS-B on the
logarithms of ``lambda_+`` and ``lambda_-`` with the exact hypergradient of the inner-fold
validation loss (:func:`indefsvm.krein.lowrank.squared_hinge_hypergradient`). It tunes an
estimator (:class:`~indefsvm.krein.models.KreinSquaredHingeSVC`), so it lives above the
estimator module; the Krein least-squares tuner of paper 000 is
:func:`indefsvm.krein.hypergrad.tune_variance_constrained`.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from indefsvm.krein.hypergrad import (
    TuningResult,
    _check_log_bounds,
    _minimize_logs,
    _tuning_result,
)
from indefsvm.utils.validation import check_positive, check_square_symmetric

logger = logging.getLogger(__name__)

__all__ = ["tune_squared_hinge"]


def tune_squared_hinge(
    X: Any,
    y: ArrayLike,
    *,
    estimator: Any = None,
    lambda_plus: float = 1e-2,
    lambda_minus: float = 1e-2,
    n_folds: int = 3,
    loss: str = "squared_hinge",
    log_bounds: tuple[float, float] = (-12.0, 6.0),
    max_iter: int = 50,
    random_state: int | np.random.Generator | None = None,
    verbose: int = 0,
) -> TuningResult:
    """Tune ``lambda_+``, ``lambda_-`` of the KREIN SH-SVM by L-BFGS-B on inner folds.

    Paper 003, Sect. 2.5 ("to automatically tune the hyperparameters, one can follow the
    procedure described in Chapelle et al. (2002) and use implicit derivation"): minimise the
    mean validation loss over ``n_folds`` stratified inner folds with
    ``scipy.optimize.minimize(method="L-BFGS-B")`` in ``log lambda_+-``, the gradient of each
    fold from :func:`indefsvm.krein.lowrank.squared_hinge_hypergradient`. The factor of each
    fold (exact eigendecomposition or Nystroem features of ``estimator``) does not depend on
    ``lambda_+-`` and is computed once; an evaluation costs one Newton solve per fold.
    The squared-hinge validation loss is differentiable except where a validation or training
    margin is exactly 1 (a set of measure zero), so the gradient is exact almost everywhere.

    Parameters
    ----------
    X : array_like
        Training data for ``estimator`` (a square kernel matrix with ``kernel="precomputed"``,
        sliced per fold).
    y : array_like of shape (n,)
        Two-class labels.
    estimator : KreinSquaredHingeSVC, optional
        Unfitted template giving the kernel and the factor (``n_components``,
        ``nystroem_params``, ``fit_intercept``, ``center``, ...); its ``lambda_plus`` and
        ``lambda_minus`` are ignored. Default ``KreinSquaredHingeSVC()`` (precomputed kernel,
        full rank).
    lambda_plus, lambda_minus : float
        Starting point (> 0).
    n_folds : int
        Inner stratified folds (>= 2).
    loss : {"squared_hinge", "squared_error"}
        Validation loss (mean over the validation points, then over the folds).
    log_bounds : (float, float)
        Bounds of ``log lambda_+-``.
    max_iter : int
        L-BFGS-B iterations.
    random_state : int, Generator or None
        Seed of the inner folds (and of the estimator's landmarks if it has none).
    verbose : int
        Log every evaluation at INFO.

    Returns
    -------
    TuningResult
        ``params`` = ``{"lambda_plus": ..., "lambda_minus": ...}``; ``loss`` the mean inner
        validation loss there.

    References
    ----------
    O. Chapelle, V. Vapnik, O. Bousquet, S. Mukherjee. Choosing multiple parameters for support
    vector machines. Machine Learning 46, 2002. D. Oglic, T. Gaertner. Scalable learning in
    reproducing kernel Krein spaces. ICML 2019, Sect. 2.5.
    """
    from sklearn.model_selection import StratifiedKFold

    from indefsvm.krein.lowrank import squared_hinge_hypergradient, squared_hinge_svm
    from indefsvm.krein.models import KreinSquaredHingeSVC
    from indefsvm.utils.validation import check_binary_labels

    if estimator is None:
        estimator = KreinSquaredHingeSVC()
    if not isinstance(estimator, KreinSquaredHingeSVC):
        raise TypeError(
            f"estimator must be a KreinSquaredHingeSVC; got {type(estimator).__name__}."
        )
    lambda_plus = check_positive(lambda_plus, "lambda_plus")
    lambda_minus = check_positive(lambda_minus, "lambda_minus")
    log_bounds = _check_tuning_settings(n_folds, max_iter, loss, log_bounds)
    precomputed = estimator.kernel == "precomputed"
    if precomputed:
        X = check_square_symmetric(X, name="X (precomputed kernel)")
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    labels = check_binary_labels(y, n)
    yl = labels.y
    seed = random_state if not isinstance(random_state, np.random.Generator) else int(
        random_state.integers(2**32)
    )  # fmt: skip
    folds = list(StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(np.zeros(n), yl))

    start = {"lambda_plus": lambda_plus, "lambda_minus": lambda_minus}
    data = [_fold_factor(estimator, X, yl, tr, va, precomputed, start, seed) for tr, va in folds]
    names = ("lambda_plus", "lambda_minus")
    z0 = np.clip(np.log([lambda_plus, lambda_minus]), *log_bounds)
    history: list[float] = []

    def objective(z: NDArray) -> tuple[float, NDArray]:
        lp, lm = np.exp(z)
        total, g = 0.0, np.zeros(2)
        for F, ytr, Fv, yv, sig in data:
            sol = squared_hinge_svm(
                F,
                ytr,
                np.where(sig > 0, lp, lm),
                fit_intercept=estimator.fit_intercept,
                tol=estimator.tol,
                max_iter=estimator.max_iter,
            )
            hg = squared_hinge_hypergradient(
                F, ytr, sig, sol, Fv, yv, lambda_plus=lp, lambda_minus=lm, loss=loss,
                fit_intercept=estimator.fit_intercept,
            )  # fmt: skip
            total += hg.loss
            g += [hg.grad[k] for k in names]
        total /= len(data)
        g /= len(data)
        history.append(total)
        if verbose:
            logger.info("[tune %3d] val %s %.5g (lambda_+=%.3g, lambda_-=%.3g)",
                        len(history), loss, total, lp, lm)  # fmt: skip
        return total, g * np.exp(z)

    res = _minimize_logs(objective, z0, 2, log_bounds, max_iter)
    return _tuning_result(res, names, history)


def _check_tuning_settings(
    n_folds: Any, max_iter: Any, loss: Any, log_bounds: Any
) -> tuple[float, float]:
    """Check the folds, the iteration cap and the loss; return the checked ``log_bounds``."""
    if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise ValueError(f"n_folds must be an integer >= 2; got {n_folds!r}.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}.")
    if loss not in ("squared_hinge", "squared_error"):
        raise ValueError(f"loss must be 'squared_hinge' or 'squared_error'; got {loss!r}.")
    return _check_log_bounds(log_bounds)


def _fold_factor(
    estimator: Any,
    X: Any,
    yl: NDArray,
    tr: NDArray,
    va: NDArray,
    precomputed: bool,
    start: dict[str, float],
    seed: Any,
) -> tuple:
    """Fit ``estimator`` on one inner fold for its factor: features, labels and signature."""
    from sklearn.base import clone

    if precomputed:
        Xtr, Xva = X[np.ix_(tr, tr)], X[np.ix_(va, tr)]
    else:
        Xtr, Xva = X[tr], X[va]
    est = clone(estimator).set_params(**start)
    if getattr(est, "random_state", None) is None and est.n_components is not None:
        est.set_params(random_state=seed)
    est.fit(Xtr, yl[tr])  # builds the fold's factor (independent of lambda_+-)
    return est._features(Xtr), yl[tr], est._features(Xva), yl[va], est.signature_
