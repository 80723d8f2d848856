"""Probability estimates for the SVM classifiers, as LIBSVM's ``-b 1`` / ``SVC(probability=True)``.

* :func:`platt_sigmoid` -- Platt's (1999) sigmoid ``P(y = +1 | f) = 1 / (1 + exp(A f + B))``
  fitted to decision values by the Newton method with backtracking of Lin, Lin & Weng (2007),
  with Platt's regularised targets ``(N+ + 1)/(N+ + 2)`` and ``1/(N- + 2)``.
* :func:`pairwise_coupling` -- class probabilities from pairwise ones, method 2 of Wu, Lin &
  Weng (2004): ``min_p 1/2 p'Qp`` s.t. ``sum p = 1`` with ``Q_tt = sum_{s != t} r_st^2`` and
  ``Q_st = -r_st r_ts``, the method LIBSVM uses; solved exactly through its KKT system (the
  solution is non-negative, their Theorem 2, so the bound constraints are inactive).
* :class:`PlattProbabilityMixin` -- ``probability=True``: the sigmoid is fitted on decision
  values of an internal stratified cross-validation (5 folds, seeded by ``random_state``), so
  that it does not see the over-confident decisions of the training points; more than two
  classes couple the sigmoids of the one-vs-one pairs.

References
----------
J. Platt. Probabilistic outputs for support vector machines and comparisons to regularized
likelihood methods. In Advances in Large Margin Classifiers, 1999.
H.-T. Lin, C.-J. Lin, R. C. Weng. A note on Platt's probabilistic outputs for support vector
machines. Machine Learning 68, 2007.
T.-F. Wu, C.-J. Lin, R. C. Weng. Probability estimates for multi-class classification by
pairwise coupling. JMLR 5, 2004.
"""

from __future__ import annotations

import functools
import logging
import types
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.exceptions import ConvergenceWarning

__all__ = [
    "PlattProbabilityMixin",
    "pairwise_coupling",
    "platt_sigmoid",
    "probability_method",
    "sigmoid_probability",
]

logger = logging.getLogger(__name__)

#: Folds of the internal cross-validation (LIBSVM's value).
N_PROBABILITY_FOLDS = 5
#: Pairwise probabilities are kept in [MIN_PROB, 1 - MIN_PROB] before coupling (LIBSVM's value),
#: so that every ``r_ij > 0`` and the coupling system is non-singular.
MIN_PROB = 1e-7


def _nll_terms(t: NDArray[np.float64], z: NDArray[np.float64]) -> float:
    """``sum -t log p - (1 - t) log(1 - p)`` with ``p = 1/(1 + exp(z))``, without overflow."""
    # log(1 + exp(z)) - ... rewritten by the sign of z (Lin, Lin & Weng 2007, Sect. 3).
    pos = z >= 0
    out = np.where(pos, t * z, (t - 1.0) * z) + np.log1p(np.exp(-np.abs(z)))
    return float(out.sum())


def sigmoid_probability(f: ArrayLike, A: float, B: float) -> NDArray[np.float64]:
    """``1 / (1 + exp(A f + B))`` evaluated without overflow."""
    z = A * np.asarray(f, dtype=np.float64) + B
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def platt_sigmoid(
    decision: ArrayLike,
    y: ArrayLike,
    *,
    max_iter: int = 100,
    min_step: float = 1e-10,
    sigma: float = 1e-12,
    tol: float = 1e-5,
) -> tuple[float, float]:
    """Fit Platt's sigmoid ``P(y = +1 | f) = 1 / (1 + exp(A f + B))`` to decision values.

    Minimises the cross-entropy ``-sum t_i log p_i + (1 - t_i) log(1 - p_i)`` with Platt's
    regularised targets ``t_i = (N+ + 1)/(N+ + 2)`` for ``y_i = +1`` and ``1/(N- + 2)`` for
    ``y_i = -1`` by Newton's method with a backtracking (Armijo) line search and the Hessian
    shifted by ``sigma I`` (Lin, Lin & Weng 2007, Algorithm 1), started at ``A = 0``,
    ``B = log((N- + 1)/(N+ + 1))``.

    Parameters
    ----------
    decision : array_like of shape (n,)
        Decision values (positive means class +1).
    y : array_like of shape (n,)
        Labels in {-1, +1}.
    max_iter : int
        Newton iterations.
    min_step : float
        Smallest step of the line search.
    sigma : float
        Shift of the Hessian's diagonal (keeps the Newton system positive definite).
    tol : float
        Stop when both gradient entries are below ``tol`` in absolute value.

    Returns
    -------
    (A, B) : tuple of float
    """
    f = np.asarray(decision, dtype=np.float64).ravel()
    labels = np.asarray(y).ravel()
    if f.shape != labels.shape:
        raise ValueError(f"decision has {f.shape[0]} values but y has {labels.shape[0]} labels.")
    if not np.all(np.isfinite(f)):
        raise ValueError("decision values must be finite.")
    positive = labels > 0
    n_pos = int(positive.sum())
    n_neg = int(f.shape[0] - n_pos)
    t = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = _nll_terms(t, A * f + B)
    converged = False
    for _ in range(max_iter):
        p = sigmoid_probability(f, A, B)
        d2 = p * (1.0 - p)
        d1 = t - p
        # Gradient and Hessian of the cross-entropy in (A, B); dp/dz = -p(1 - p).
        g1, g2 = float(f @ d1), float(d1.sum())
        if abs(g1) < tol and abs(g2) < tol:
            converged = True
            break
        h11 = sigma + float(f * f @ d2)
        h22 = sigma + float(d2.sum())
        h21 = float(f @ d2)
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        slope = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            A_new, B_new = A + step * dA, B + step * dB
            value_new = _nll_terms(t, A_new * f + B_new)
            if value_new < value + 1e-4 * step * slope:
                A, B, value = A_new, B_new, value_new
                break
            step /= 2.0
        else:
            warnings.warn(
                "platt_sigmoid: the line search failed (no decrease at the smallest step); "
                f"returning A = {A:.6g}, B = {B:.6g}.",
                ConvergenceWarning,
                stacklevel=2,
            )
            return A, B
    if not converged:
        p = sigmoid_probability(f, A, B)
        d1 = t - p
        if max(abs(float(f @ d1)), abs(float(d1.sum()))) >= tol:
            warnings.warn(
                f"platt_sigmoid: {max_iter} Newton iterations without reaching |gradient| < "
                f"{tol:g}.",
                ConvergenceWarning,
                stacklevel=2,
            )
    return A, B


def pairwise_coupling(r: ArrayLike) -> NDArray[np.float64]:
    """Class probabilities from pairwise probabilities (Wu, Lin & Weng 2004, method 2).

    Solves ``min_p 1/2 p'Qp`` s.t. ``sum_t p_t = 1`` with ``Q_tt = sum_{s != t} r_st^2`` and
    ``Q_ts = -r_st r_ts`` through its KKT system ``[[Q, e], [e', 0]] [p; b] = [0; 1]`` (exact;
    LIBSVM iterates to tolerance ``0.005 / k``). The minimiser is non-negative (their
    Theorem 2), so the bounds ``p >= 0`` need no treatment.

    Parameters
    ----------
    r : array_like of shape (m, k, k) or (k, k)
        ``r[..., i, j]`` estimates ``P(class i | class i or j)``; ``r_ij + r_ji = 1`` off the
        diagonal (the diagonal is ignored).

    Returns
    -------
    ndarray of shape (m, k) or (k,)
    """
    R = np.asarray(r, dtype=np.float64)
    single = R.ndim == 2
    if single:
        R = R[None]
    if R.ndim != 3 or R.shape[1] != R.shape[2] or R.shape[1] < 2:
        raise ValueError(f"r must have shape (m, k, k) or (k, k) with k >= 2; got {R.shape}.")
    m, k, _ = R.shape
    off = ~np.eye(k, dtype=bool)
    Roff = np.where(off, R, 0.0)
    # Q_tt = sum_s r_st^2 (column t of r squared), Q_st = -r_st r_ts.
    Q = -Roff * np.swapaxes(Roff, 1, 2)
    Q[:, np.arange(k), np.arange(k)] = np.sum(Roff**2, axis=1)
    kkt = np.zeros((m, k + 1, k + 1))
    kkt[:, :k, :k] = Q
    kkt[:, :k, k] = 1.0
    kkt[:, k, :k] = 1.0
    rhs = np.zeros((m, k + 1, 1))
    rhs[:, k, 0] = 1.0
    try:
        p = np.linalg.solve(kkt, rhs)[:, :k, 0]
    except np.linalg.LinAlgError:
        # Some r_ij = 0 exactly (callers that do not clip like MIN_PROB): the minimiser is then
        # not unique; take the minimum-norm solution of each KKT system.
        p = np.stack([np.linalg.lstsq(kkt[i], rhs[i, :, 0], rcond=None)[0][:k] for i in range(m)])
    # Rounding can leave -1e-17 entries; the exact solution is >= 0 and sums to 1.
    p = np.clip(p, 0.0, None)
    p /= p.sum(axis=1, keepdims=True)
    return p[0] if single else p


class PlattProbabilityMixin:
    """``probability=True``: Platt scaling on internal cross-validation, pairwise coupling.

    For a binary classifier whose ``fit`` ends with ``self._fit_probability(X, y)`` and whose
    ``decision_function`` is positive for ``classes_[1]``. ``fit`` then runs a stratified
    ``N_PROBABILITY_FOLDS``-fold cross-validation (shuffled with ``random_state``; fewer folds
    when a class has fewer members), fits a clone with ``probability=False`` on each training
    part and records the decision values of the held-out part; :func:`platt_sigmoid` on these
    gives ``probA_``, ``probB_``. With more than two classes each one-vs-one pair is a clone
    with ``probability=True`` (its own sigmoid on its own cross-validation, as LIBSVM) and
    :func:`pairwise_coupling` combines them.

    The sigmoid is ``P(classes_[1] | f) = 1 / (1 + exp(probA_ f + probB_))`` with our
    orientation (``f > 0`` means ``classes_[1]``), so ``probA_`` is usually negative; LIBSVM
    orients ``f`` towards its first label. As for :class:`sklearn.svm.SVC`, ``predict`` keeps
    using the decision function, so in rare cases the argmax of ``predict_proba`` differs from
    ``predict``.
    """

    def _check_probability_available(self) -> bool:
        if not getattr(self, "probability", False):
            raise AttributeError(
                f"predict_proba is not available when probability=False; fit "
                f"{type(self).__name__}(probability=True, ...) to get Platt-scaled "
                "probabilities."
            )
        return True

    def _fit_probability(
        self,
        X: Any,
        y: ArrayLike,
        labels_pm: NDArray[np.float64],
        sample_weight: NDArray[np.float64] | None = None,
        rows: Any | None = None,
    ) -> None:
        """Platt's sigmoid on out-of-fold decision values (binary problem).

        The folds split the rows of every per-point input: the training kernel (blocks), the
        features, the rows of a Nystroem factor, a vector ``rho`` and the sample weights.
        ``rows`` is the Nystroem map of a low-rank fit as an :class:`indefsvm.inputs.PairRows`
        (a one-vs-one pair's rows of the multi-class model's shared map, or a binary model's
        own map; None for a dense fit): each fold's clone is fitted and decides through the
        template's hooks (``_fit_shared_rows``, ``_decide_shared_rows``) on the fold's rows of
        it (``rows.fold(train, test)``), so no map is refitted on a fold.
        """
        from sklearn.base import clone
        from sklearn.model_selection import StratifiedKFold

        if not getattr(self, "probability", False):
            return
        y = np.asarray(y)
        counts = np.unique(labels_pm, return_counts=True)[1]
        n_folds = min(N_PROBABILITY_FOLDS, int(counts.min()))
        if n_folds < 2:
            raise ValueError(
                "probability=True needs at least 2 training points of each class for its "
                f"internal cross-validation; the smallest class has {int(counts.min())}."
            )
        Xa = np.asarray(X)
        n = labels_pm.shape[0]
        # A low-rank fit gives its rows of a Nystroem factor (a pair's X is then its landmark
        # columns k(X, Z), n x m): the folds take rows of X and of the factor, never a block of
        # X as if it were an n x n kernel.
        pairwise = _is_precomputed(self) and rows is None
        # Per-point parameters (a vector rho) and sample weights follow the fold's rows.
        per_point = {}
        for name in getattr(self, "_ovo_per_sample_params", ()):
            value = getattr(self, name, None)
            if value is not None and np.ndim(value) == 1 and np.shape(value)[0] == n:
                per_point[name] = np.asarray(value)
        seed = getattr(self, "random_state", None)
        if isinstance(seed, np.random.Generator):
            seed = int(seed.integers(2**31 - 1))
        folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
        decision = np.empty(n)
        for train, test in folds.split(np.zeros(n), labels_pm):
            est = clone(self).set_params(
                probability=False, **{name: v[train] for name, v in per_point.items()}
            )
            fit_args = {} if sample_weight is None else {"sample_weight": sample_weight[train]}
            if rows is not None:
                fold = rows.fold(train, test)
                weight = None if sample_weight is None else sample_weight[train]
                est._fit_shared_rows(Xa[train], y[train], weight, fold)
                decision[test] = est._decide_shared_rows(Xa[test], fold)
            elif pairwise:
                est.fit(Xa[np.ix_(train, train)], y[train], **fit_args)
                extra = ()
                given = getattr(self, "prediction_params", None) or {}
                if given.get("out_of_sample") == "transductive":
                    extra = (Xa[np.ix_(test, test)],)  # the heuristic needs the test block
                decision[test] = est.decision_function(Xa[np.ix_(test, train)], *extra)
            else:
                est.fit(Xa[train], y[train], **fit_args)
                decision[test] = est.decision_function(Xa[test])
        A, B = platt_sigmoid(decision, labels_pm)
        self.probA_ = np.array([A])
        self.probB_ = np.array([B])
        logger.debug("Platt sigmoid on %d-fold decision values: A=%g, B=%g", n_folds, A, B)

    def _probability_of_positive(self, X: Any, *extra: Any) -> NDArray[np.float64]:
        d = self.decision_function(X, *extra)
        return sigmoid_probability(d, float(self.probA_[0]), float(self.probB_[0]))

    def _multiclass_probability(self, X: Any) -> NDArray[np.float64]:
        d = self._pair_decisions(X)  # (m, n_pairs), positive means the pair's second class
        k = len(self.classes_)
        index = {c: i for i, c in enumerate(self.classes_.tolist())}
        R = np.zeros((d.shape[0], k, k))
        for col, (est, (ci, cj)) in enumerate(
            zip(self.estimators_, self.pairwise_classes_, strict=True)
        ):
            p_j = sigmoid_probability(d[:, col], float(est.probA_[0]), float(est.probB_[0]))
            p_j = np.clip(p_j, MIN_PROB, 1.0 - MIN_PROB)
            i, j = index[ci], index[cj]
            R[:, j, i] = p_j
            R[:, i, j] = 1.0 - p_j
        return pairwise_coupling(R)

    def _predict_proba(self, X: Any, *extra: Any) -> NDArray[np.float64]:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self)
        if self._is_multiclass():
            if any(e is not None for e in extra):
                raise ValueError(
                    "extra arguments such as K_test_test apply to binary problems only; the "
                    "one-vs-one estimators need the test-vs-train kernel alone."
                )
            return self._multiclass_probability(X)
        if not hasattr(self, "probA_"):
            raise AttributeError(
                f"this {type(self).__name__} was fitted with probability=False; refit with "
                "probability=True to use predict_proba."
            )
        p = self._probability_of_positive(X, *extra)
        return np.column_stack([1.0 - p, p])


class probability_method:  # noqa: N801 - used as a decorator, like property
    """Decorator of ``predict_proba``/``predict_log_proba``: the method exists only when the
    model was built with ``probability=True``.

    ``hasattr(clf, "predict_proba")`` is False otherwise (what scikit-learn's meta-estimators
    test, as for ``SVC``), and calling it raises an ``AttributeError`` whose message says why
    and how to get probabilities (``SVC`` says only "has no attribute 'predict_proba'").
    """

    def __init__(self, method: Any) -> None:
        self.method = method
        functools.update_wrapper(self, method)

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self.method
        obj._check_probability_available()  # AttributeError with the reason
        return types.MethodType(self.method, obj)


def _is_precomputed(estimator: Any) -> bool:
    kernel = getattr(estimator, "kernel", "precomputed")
    return isinstance(kernel, str) and kernel == "precomputed"
