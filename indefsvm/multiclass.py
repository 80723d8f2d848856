"""Multi-class classification by one-vs-one voting, as scikit-learn's ``SVC`` does.

The proxy-kernel SVM, the spectrum baselines and the Krein classifiers are binary problems. A
classifier that lists :class:`OneVsOneMixin` first among its bases accepts any number of classes:
with more than two it fits one clone of itself per pair of classes and predicts by majority vote
with ties broken by the summed confidences, exactly as
:class:`sklearn.multiclass.OneVsOneClassifier` and LIBSVM (:func:`ovo_vote_scores`). It does
not use that class because a ``class_weight`` dict must be restricted to each pair, and a
per-point parameter (a vector ``rho``, Theorem 3 of paper 004) to each pair's rows. Two classes
use the binary estimator directly, so the binary results are unchanged.

The training data are held once, by the multi-class model; the pair models are
``kernel="precomputed"`` models on blocks of data computed once:

* dense models: the training kernel ``K`` (given, or computed once from the features, which the
  multi-class model keeps as ``X_fit_``); pair ``idx`` is fitted on ``K[np.ix_(idx, idx)]`` and
  predicts from ``K_test_train[:, idx]``, the test kernel being computed once for all pairs. The
  test-vs-test kernel of the ``"transductive"`` map (``prediction_params``) is the same for every
  pair: it is passed on (``predict(K_test_train, K_test_test)``) or computed once from the features;
* low-rank models (``n_components``): ONE Nystroem map is fitted on the whole training set and
  shared by every pair, as ``make_pipeline(Nystroem(...), OneVsOneClassifier(...))`` would share
  it: ``landmarks`` (a scheme, or explicit indices into the training set) choose the landmark
  points ``Z`` once, from all classes (``landmarks_``), the factor ``Phi = k(X, Z) W`` is
  computed once, and a pair's factor is its rows of ``Phi``
  (:meth:`indefsvm.approximation.nystrom.IndefiniteNystroem.column_input`; its input is its
  rows of the landmark columns ``k(X, Z)``). Its kernel is then ``K_pair|Z``, the Nystroem
  kernel of its rows with the landmark points ``Z`` (which need not be among them), so each pair
  is the binary low-rank model of its rows of that factor. Prediction computes the test
  features ``k(x, Z) W`` once for all pairs. The proxy-kernel SVMs depend on the factor only
  through ``K_pair|Z``; the Krein models whose regularisers act on eigenspaces re-diagonalise
  the pair's rows of the shared factor (``lambda_+``/``lambda_-`` then act on the eigenspaces of
  ``K_pair|Z``, as in a binary fit). There is no switch back to a map per pair: per-pair maps
  (each with its own landmarks from the pair's rows) are what
  ``sklearn.multiclass.OneVsOneClassifier(estimator)`` fits;
* estimators whose test map needs more than kernel rows (``KreinClassifier`` with
  ``formulation="square", square_test_map="wu"`` needs ``k(x, x)``) keep the old layout: each
  pair is fitted on its own rows of ``X``.

``decision_function_shape`` follows ``SVC``: ``"ovr"`` (default) returns
``(n_samples, n_classes)`` scores (votes plus bounded confidences, :func:`ovo_vote_scores`);
``"ovo"`` returns the ``(n_samples, n_classes * (n_classes - 1) / 2)``
pairwise decision values in the order of ``estimators_``. With two classes the decision is the
usual 1-D signed value either way.

Probability estimates: ``probability=True`` on :class:`~indefsvm.proxy.estimators.IndefiniteSVC` and
the LIBSVM baselines (:mod:`indefsvm.probability`: each pair's clone fits Platt's sigmoid on its
own internal cross-validation, and the pairs are coupled as LIBSVM does; precomputed kernels are
split pairwise). :class:`sklearn.calibration.CalibratedClassifierCV` also works but splits rows
only, so it needs features and a kernel function rather than ``kernel="precomputed"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from indefsvm.base import (
    check_landmark_parameters,
    check_nystroem_prediction,
    fit_context,
    prediction_param,
)
from indefsvm.inputs import PairRows
from indefsvm.utils.constraints import is_outermost_fit
from indefsvm.utils.dask_rows import is_dask_array, rowwise_on_workers
from indefsvm.utils.docstrings import filled_doc
from indefsvm.utils.fingerprint import TrainingRows
from indefsvm.utils.validation import check_sample_weight, no_fit_params

DECISION_FUNCTION_SHAPES = ("ovr", "ovo")


def ovo_vote_scores(decisions: NDArray[np.float64], n_classes: int) -> NDArray[np.float64]:
    """One-vs-one decisions to per-class scores: votes, ties broken by summed confidences.

    Parameters
    ----------
    decisions : ndarray of shape (n_samples, n_classes * (n_classes - 1) / 2)
        Pairwise decision values in the order ``(0, 1), (0, 2), ..., (n_classes - 2,
        n_classes - 1)``; a positive value is a vote for the second class of the pair.
    n_classes : int

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        ``votes + s / (3 (|s| + 1))`` where ``s`` sums each class's confidences (the decision
        value for the second class of a pair, its negative for the first). The added term lies
        in ``(-1/3, 1/3)``, so it orders classes with equal votes and never overturns a vote:
        the convention of ``SVC(decision_function_shape="ovr")``.
    """
    decisions = np.asarray(decisions, dtype=np.float64)
    n_pairs = n_classes * (n_classes - 1) // 2
    if decisions.ndim != 2 or decisions.shape[1] != n_pairs:
        raise ValueError(
            f"{n_classes} classes have {n_pairs} pairs; got decisions of shape {decisions.shape}."
        )
    n_samples = decisions.shape[0]
    votes = np.zeros((n_samples, n_classes))
    confidence = np.zeros((n_samples, n_classes))
    column = 0
    for first in range(n_classes):
        for second in range(first + 1, n_classes):
            value = decisions[:, column]
            second_wins = value > 0
            votes[:, second] += second_wins
            votes[:, first] += ~second_wins
            confidence[:, second] += value
            confidence[:, first] -= value
            column += 1
    return votes + confidence / (3.0 * (np.abs(confidence) + 1.0))


#: Paragraphs of the ``fit`` docstrings, written once (:func:`~indefsvm.utils.docstrings.fill_doc`).
_DOC_PARAGRAPHS = {
    "FIT_X_Y": """
        X : array_like of shape (n, n) or (n, n_features)
            The training kernel with ``kernel="precomputed"``, else the training points.
        y : array_like of shape (n,)
            Class labels (any type). Two classes are one binary problem; more are handled
            one-vs-one (one problem per pair of classes, as :class:`sklearn.svm.SVC`).
        """,
}


class OneVsOneMixin:
    """The classifier template: target checks, one-vs-one dispatch, binary fit and decision.

    A classifier lists this mixin before its other bases and implements the binary problem
    only:

    * ``_fit_binary(X, y)``: fit on ``X`` (the training kernel, or features) and labels ``y``
      of exactly two classes in the user's label space; it sets ``classes_`` (``classes_[1]``
      is the positive class);
    * ``_decision_binary(X, *extra)``: signed decision values, positive for ``classes_[1]``.

    A classifier with ``n_components`` also takes a one-vs-one pair's input map as an argument:
    ``_fit_binary(X, y, inputs=rows)`` and ``_decision_binary(X, inputs=rows)`` with ``rows`` a
    :class:`~indefsvm.inputs.PairRows` (its rows of the multi-class model's shared Nystroem
    map), given by the hooks :meth:`_fit_shared_rows` and :meth:`_decide_shared_rows`.

    :meth:`fit` checks the targets once (``y`` given, classification targets, at least two
    classes), fits one clone per pair of classes when there are more than two
    (:meth:`_fit_multiclass`: per-pair slices of ``class_weight`` and of every per-point
    parameter of ``_ovo_per_sample_params``, the training kernel or the Nystroem map computed
    once) and calls ``_fit_binary`` otherwise; :meth:`decision_function` and :meth:`predict`
    aggregate the pairs by :func:`ovo_vote_scores` or call ``_decision_binary``. The kernel
    input (precomputed, named or callable kernel, Nystroem map of ``n_components``) is the one
    path of :class:`indefsvm.base.KernelInputMixin`, shared with the regressors and the
    one-class model.

    Attributes set by ``fit`` with more than two classes: ``estimators_`` (one fitted binary clone
    per pair of classes ``(classes_[i], classes_[j])``, i < j, in lexicographic order),
    ``pairwise_classes_`` (their pairs) and ``n_iter_`` (one entry per pair, as ``SVC``).
    A ``class_weight`` dict is restricted to each pair's two classes, and a per-point parameter
    (``_ovo_per_sample_params``, e.g. a vector ``rho``) to each pair's rows.

    The training data are stored once, by the multi-class model (see the module docstring):
    the pair models are fitted on blocks of one kernel (or of one set of landmark columns)
    computed once, and prediction computes the test kernel once for all pairs.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True  # any number of classes, by one-vs-one
        return tags

    @fit_context
    @filled_doc(**_DOC_PARAGRAPHS)
    def fit(self, X: ArrayLike, y: ArrayLike, **fit_params: Any):
        """Fit the binary problem, or one binary problem per pair of classes.

        Parameters
        ----------
        {FIT_X_Y}
        **fit_params
            None are taken: ``sample_weight`` is refused with the reason (the formulation has
            no per-sample weights; the classifiers that have them take it by name).

        Returns
        -------
        self
        """
        why = getattr(self, "_sample_weight_refusal", "its formulation has no per-sample weights")
        no_fit_params(self, dict(fit_params), why)
        return self._fit_classes(X, y, None)

    def _fit_classes(self, X: ArrayLike, y: ArrayLike, sample_weight: Any, inputs: Any = None):
        """:meth:`fit` with ``sample_weight`` (None, or checked here: one per row of ``X``).

        ``inputs`` is an input map handed to ``_fit_binary`` (a one-vs-one pair's rows of a
        shared map, by :meth:`_fit_shared_rows`), for classifiers whose binary fit takes one.
        """
        if y is None:
            validate_data(self, X, y)  # scikit-learn's "requires y to be passed" error
        if sample_weight is not None:
            n = X.shape[0] if hasattr(X, "shape") else np.asarray(X).shape[0]
            sample_weight = check_sample_weight(sample_weight, n, owner=type(self).__name__)
        if is_dask_array(X) or is_dask_array(y):
            self._fit_dask(X, y, sample_weight)
            return self
        check_classification_targets(np.asarray(y))
        if sample_weight is not None:
            labels = np.asarray(y).ravel()
            weighted = np.unique(labels[sample_weight > 0]) if labels.shape == (n,) else None
            if weighted is not None and weighted.shape[0] < 2:
                raise ValueError(
                    f"{type(self).__name__}: sample_weight is zero for every point but those of "
                    f"class {weighted.tolist()}; a classifier needs positive weights in at least "
                    "two classes."
                )
        if self._fit_multiclass(X, y, sample_weight):
            self._remember_pair_training_inputs(X)
            if getattr(self, "probability", False):
                # One sigmoid per pair, each fitted by the pair's own clone (as LIBSVM).
                self.probA_ = np.array([float(e.probA_[0]) for e in self.estimators_])
                self.probB_ = np.array([float(e.probB_[0]) for e in self.estimators_])
            return self
        classes = np.unique(np.asarray(y))
        if classes.shape[0] != 2:
            # Labels first: a one-class y is a more useful error than a kernel shape.
            raise ValueError(
                f"{type(self).__name__} needs y with at least two classes (exactly two classes "
                "are one binary problem, more are fitted one-vs-one); got "
                f"{classes.shape[0]} class(es) {classes[:10].tolist()}."
            )
        given = {} if inputs is None else {"inputs": inputs}
        self._fit_binary(X, y, **_weights(sample_weight), **given)
        return self

    def _remember_pair_training_inputs(self, X: Any) -> None:
        """Fingerprints of the training inputs when the pairs have training scores (the
        proxy-kernel SVMs: a training point gets each pair's row of its learned kernel ``K*``,
        :mod:`indefsvm.utils.fingerprint`)."""
        has_scores = all(hasattr(e, "train_scores_") for e in self.estimators_)
        projection = prediction_param(self, "out_of_sample", "projection") == "projection"
        self.train_rows_ = (
            TrainingRows.of(X) if has_scores and projection and is_outermost_fit(self) else None
        )

    def _fit_dask(self, X: Any, y: Any, sample_weight: Any = None) -> None:
        """One binary fit on dask arrays; the labels are checked on the workers."""
        from indefsvm.utils.dask_rows import dask_classes

        classes = dask_classes(y) if is_dask_array(y) else np.unique(np.asarray(y))
        check_classification_targets(classes)
        if classes.shape[0] != 2:
            raise ValueError(
                f"{type(self).__name__} on dask arrays fits one binary problem: y must have "
                f"exactly two classes; got {classes.shape[0]} {classes[:10].tolist()} "
                "(one-vs-one over more classes needs the data in memory)."
            )
        self.ovo_ = None
        self._fit_binary(X, y, **_weights(sample_weight))

    def _fit_binary(self, X: Any, y: Any) -> None:
        raise NotImplementedError

    def _decision_binary(self, X: Any, *extra: Any) -> NDArray[np.float64]:
        raise NotImplementedError

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Signed decision values; positive means ``classes_[1]``.

        Parameters
        ----------
        X : array_like of shape (m, n_train) or (m, n_features)
            Test-vs-train kernel (``kernel="precomputed"``) or features.

        Returns
        -------
        ndarray of shape (m,), or (m, n_classes) / (m, n_pairs) with more than two classes
            (``decision_function_shape`` "ovr" / "ovo", as :class:`sklearn.svm.SVC`).
        """
        return self._decide(X)

    def predict(self, X: ArrayLike) -> NDArray:
        """Predicted labels in the user's label space (``classes_``)."""
        return self._predict_labels(X)

    @rowwise_on_workers
    def _decide(self, X: ArrayLike, *extra: Any) -> NDArray[np.float64]:
        check_is_fitted(self)
        if self._is_multiclass():
            return self._multiclass_decision(X, *extra)
        return self._decision_binary(X, *extra)

    @rowwise_on_workers
    def _predict_labels(self, X: ArrayLike, *extra: Any) -> NDArray:
        check_is_fitted(self)
        if self._is_multiclass():
            return self._multiclass_predict(X, *extra)
        d = self._decision_binary(X, *extra)
        return self.classes_[(d > 0).astype(np.intp)]

    #: Parameters that may hold one value per training point (sliced to each pair's rows).
    _ovo_per_sample_params: tuple[str, ...] = ()

    def _ovo_kernel_shared(self) -> bool:
        """Whether the pairs may be fitted on blocks of one precomputed kernel (the default).

        An estimator whose test map needs more than the test-vs-train kernel (e.g. ``k(x, x)``)
        returns False: its pairs then keep their own training rows.
        """
        return True

    @fit_context
    def _fit_shared_rows(
        self, X: Any, y: Any, sample_weight: NDArray | None, rows: PairRows
    ) -> Any:
        """Fit this clone as a pair on its rows of the multi-class model's shared map.

        ``X`` are the pair's landmark columns ``k(X_pair, Z)``; ``rows`` holds the shared map
        and the pair's rows of its training features (formed once, by the multi-class model).
        They are the binary fit's input map, passed as an argument
        (``_fit_binary(X, y, inputs=rows)``). The Platt folds of a pair
        (:mod:`indefsvm.probability`) fit their clones here too, each on its rows
        (:meth:`~indefsvm.inputs.PairRows.fold`).
        """
        return self._fit_classes(X, y, sample_weight, inputs=rows)

    def _decide_shared_rows(self, X: Any, rows: PairRows) -> NDArray[np.float64]:
        """A pair's decision values of landmark columns ``X`` whose shared-map features
        (``rows.test_features``) the multi-class model formed once for all pairs (passed to
        ``_decision_binary(X, inputs=rows)``, as :meth:`_fit_shared_rows` passes the training
        rows)."""
        check_is_fitted(self)
        return self._decision_binary(X, inputs=rows)

    def _fit_multiclass(
        self, X: ArrayLike, y: ArrayLike | None, sample_weight: NDArray | None = None
    ) -> bool:
        """Fit one-vs-one if ``y`` has more than two classes; return whether it did."""
        shape = getattr(self, "decision_function_shape", "ovr")
        if shape not in DECISION_FUNCTION_SHAPES:
            raise ValueError(
                f"decision_function_shape must be one of {DECISION_FUNCTION_SHAPES}; got {shape!r}."
            )
        y_arr = _labels_or_none(y)
        if y_arr is None:
            self.ovo_ = None
            return False
        classes = np.unique(y_arr)
        if classes.shape[0] <= 2:
            self.ovo_ = None
            return False
        from sklearn.base import clone

        check_landmark_parameters(self)
        pairwise = _is_pairwise(self)
        Xa = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        n = Xa.shape[0]
        if n != y_arr.shape[0]:
            raise ValueError(
                f"X has {n} rows but y has {y_arr.shape[0]} labels; expected one label per row."
            )
        if pairwise and n != Xa.shape[1]:
            raise ValueError(
                "with kernel='precomputed', X must be the square (n, n) training kernel; "
                f"got shape {Xa.shape}."
            )
        weights = getattr(self, "class_weight", None)
        if isinstance(weights, Mapping):
            unknown = [k for k in weights if k not in set(classes.tolist())]
            if unknown:
                raise ValueError(
                    f"class_weight has keys {unknown} that are not class labels {classes.tolist()}."
                )
        per_sample = self._ovo_per_sample_values(n)
        mode, train, landmark_map, features = self._ovo_training_input(Xa, pairwise)
        overrides: dict[str, Any] = {}
        if mode != "features" and not pairwise:
            # The pairs read blocks of the kernel (or landmark columns) computed here once.
            overrides = {"kernel": "precomputed", "gamma": None, "coef0": None, "degree": None}
            overrides["kernel_params"] = None
        if mode == "landmarks":
            # The landmarks are chosen once, on the whole training set (shared by every pair).
            # (Their other Nystroem options stay: the factorisation decides how a pair uses it.)
            params = self.get_params(deep=False)
            if "nystroem_params" in params:
                given = params["nystroem_params"] or {}
                rest = {key: value for key, value in given.items() if key != "landmarks"}
                overrides["nystroem_params"] = rest or None
        if mode == "landmarks":
            # One factor for every pair: Phi = k(X, Z) W of the map fitted on all rows.
            shared_map = landmark_map.column_input()
            factor = features.astype(np.dtype(shared_map.dtype), copy=False)
        estimators, indices, pairs = [], [], []
        for i in range(classes.shape[0]):
            for j in range(i + 1, classes.shape[0]):
                idx = np.flatnonzero((y_arr == classes[i]) | (y_arr == classes[j]))
                est = clone(self).set_params(
                    **overrides, **{name: value[idx] for name, value in per_sample.items()}
                )
                if isinstance(weights, Mapping):
                    est.set_params(
                        class_weight={
                            k: v for k, v in weights.items() if k in (classes[i], classes[j])
                        }
                    )
                pair_weight = None if sample_weight is None else sample_weight[idx]
                # One pair after the other: side by side (threads or processes) they were not
                # faster, their small numpy steps hold the GIL (docs/benchmarks.md, "Fast by
                # default", Multi-class).
                if mode == "landmarks":
                    # The pair's rows of the one shared factor (its kernel is K_pair|Z).
                    fitted = est._fit_shared_rows(
                        train[idx], y_arr[idx], pair_weight, PairRows(shared_map, factor[idx])
                    )
                else:
                    Xs = (
                        train[idx]
                        if mode == "features" and not pairwise
                        else train[np.ix_(idx, idx)]
                    )
                    fitted = est.fit(Xs, y_arr[idx], **_weights(pair_weight))
                estimators.append(fitted)
                indices.append(idx)
                pairs.append((classes[i], classes[j]))
        self.ovo_ = {"indices": indices, "pairwise": pairwise, "mode": mode}
        if mode == "landmarks":
            self.ovo_["shared_map"] = True
        self.classes_ = classes
        self.estimators_ = estimators
        self.pairwise_classes_ = pairs
        if all(hasattr(e, "n_iter_") for e in estimators):
            self.n_iter_ = np.array([np.max(e.n_iter_) for e in estimators])
        return True

    def _ovo_per_sample_values(self, n: int) -> dict[str, NDArray[Any]]:
        """Per-point parameters given as vectors, checked against the full training size."""
        values = {}
        for name in self._ovo_per_sample_params:
            value = getattr(self, name, None)
            if value is None or np.ndim(value) == 0:
                continue
            arr = np.asarray(value)
            if arr.ndim != 1 or arr.shape[0] != n:
                raise ValueError(
                    f"{name} must be a scalar or a vector of length n = {n} (one value per "
                    f"training point); got shape {arr.shape}."
                )
            values[name] = arr
        return values

    def _ovo_training_input(self, Xa: NDArray[np.float64], pairwise: bool):
        """``(mode, data, landmark_map, features)``: what the pair models are fitted on.

        ``"kernel"``: the training kernel, computed once (pairs take principal blocks);
        ``"landmarks"``: the kernel columns ``k(X, Z)`` of landmarks chosen once on the whole
        training set (pairs take their rows; ``landmark_map`` is the fitted Nystroem map and
        ``features`` its float64 features of all rows, formed once by its check);
        ``"features"``: the raw rows (estimators whose test map needs more than kernel rows).
        """
        if self._low_rank():
            check_nystroem_prediction(self)
            landmark_map, C, _ = self._fit_landmarks(Xa, columns=True)
            # fit_transform's check (fit read only the landmarks); its features are the factor
            features = landmark_map.check_columns(C)
            self.landmarks_ = landmark_map.landmarks_
            # Named kernels: the landmark points are all prediction needs of the training set.
            self.landmark_points_ = None if pairwise else landmark_map.landmark_points_
            return "landmarks", C, landmark_map, features
        if self._ovo_kernel_shared():
            K, _ = self._fit_kernel(Xa)
            return "kernel", K, None, None
        return "features", Xa, None, None

    def _is_multiclass(self) -> bool:
        return getattr(self, "ovo_", None) is not None

    def _pair_decisions(self, X: ArrayLike, *extra: Any) -> NDArray[np.float64]:
        """``(m, n_pairs)`` binary decisions; positive means the pair's second class."""
        check_is_fitted(self)
        mode = self.ovo_.get("mode", "features")
        given = [value for value in extra if value is not None]
        if mode == "landmarks":
            _refuse_extra(extra)
            if self.ovo_["pairwise"]:
                C = validate_data(self, X, dtype=np.float64, reset=False)[:, self.landmarks_]
            else:
                Xa = validate_data(self, X, dtype=np.float64, reset=False)
                C = self._call_kernel(Xa, self.landmark_points_)
            parts = [C] * len(self.estimators_)
            if self.ovo_.get("shared_map", False):
                # The test features of the shared map, once for all pairs (models saved before
                # the map was shared have one map per pair and compute their own).
                shared_map = self.estimators_[0].nystroem_
                rows = PairRows(shared_map, test_features=C @ shared_map.components_)
                D = np.column_stack([est._decide_shared_rows(C, rows) for est in self.estimators_])
                return self._pair_training_rows(X, D)
        elif mode == "kernel":
            K_test = self._test_kernel(X)
            parts = [K_test[:, idx] for idx in self.ovo_["indices"]]
            if (
                not given
                and not self.ovo_["pairwise"]
                and prediction_param(self, "out_of_sample", None) == "transductive"
            ):
                # The pairs are precomputed models now: the test-vs-test block (the same for
                # every pair) is computed here once from the features.
                given = [self._test_test_kernel(X, None)]
        else:
            Xa = validate_data(self, X, dtype=np.float64, reset=False)
            if self.ovo_["pairwise"]:
                parts = [Xa[:, idx] for idx in self.ovo_["indices"]]
            else:
                parts = [Xa] * len(self.estimators_)
        D = np.column_stack(
            [
                est.decision_function(Xs, *given)
                for est, Xs in zip(self.estimators_, parts, strict=True)
            ]
        )
        return self._pair_training_rows(X, D)

    def _pair_training_rows(self, X: Any, D: NDArray[np.float64]) -> NDArray[np.float64]:
        """``D`` (m, n_pairs) with the entries of training inputs replaced by the pair's
        ``(K* u)_i + b`` (pairs that did not train on the point keep their decision)."""
        rows_of_train = getattr(self, "train_rows_", None)
        if rows_of_train is None:
            return D
        rows, members = rows_of_train.match(X)
        if rows.shape[0] == 0:
            return D
        n = rows_of_train.n_
        single = np.array([m.shape[0] == 1 for m in members], dtype=bool)
        first = np.array([m[0] for m in members], dtype=np.intp)
        for col, (est, idx) in enumerate(zip(self.estimators_, self.ovo_["indices"], strict=True)):
            where = np.full(n, -1, dtype=np.intp)
            where[idx] = np.arange(idx.shape[0])
            # one training input per row (the usual case) in one gather
            pos = where[first[single]]
            hit = pos >= 0
            D[rows[single][hit], col] = est.train_scores_[pos[hit]] + est.intercept_
            for k in np.flatnonzero(~single):  # duplicated inputs: the mean of their rows
                pos = where[members[k]]
                pos = pos[pos >= 0]
                if pos.shape[0]:
                    D[rows[k], col] = float(est.train_scores_[pos].mean()) + est.intercept_
        return D

    def _multiclass_decision(self, X: ArrayLike, *extra: Any) -> NDArray[np.float64]:
        d = self._pair_decisions(X, *extra)
        if getattr(self, "decision_function_shape", "ovr") == "ovo":
            return d
        return ovo_vote_scores(d, len(self.classes_))

    def _multiclass_predict(self, X: ArrayLike, *extra: Any) -> NDArray:
        d = self._pair_decisions(X, *extra)
        scores = ovo_vote_scores(d, len(self.classes_))
        return self.classes_[np.argmax(scores, axis=1)]


class WeightedOneVsOneMixin(OneVsOneMixin):
    """:class:`OneVsOneMixin` for classifiers whose binary fit takes per-sample weights
    (``_fit_binary(X, y, sample_weight=None)``): ``fit`` takes ``sample_weight`` by name, so
    scikit-learn's ``has_fit_parameter`` and metadata routing see it."""

    @fit_context
    @filled_doc(**_DOC_PARAGRAPHS)
    def fit(self, X: ArrayLike, y: ArrayLike, sample_weight: ArrayLike | None = None):
        """Fit the binary problem, or one binary problem per pair of classes.

        Parameters
        ----------
        {FIT_X_Y}
        sample_weight : array_like of shape (n,), optional
            Per-point weights of the loss (LIBSVM's instance weights: ``C_i = C w_i``, times
            the class weight). Each one-vs-one pair takes its rows.

        Returns
        -------
        self
        """
        return self._fit_classes(X, y, sample_weight)


def _weights(sample_weight: NDArray | None) -> dict[str, Any]:
    """``{"sample_weight": w}`` when weights are given, else no argument (binary fits of
    estimators without weights take none)."""
    return {} if sample_weight is None else {"sample_weight": sample_weight}


def _is_pairwise(estimator: Any) -> bool:
    kernel = getattr(estimator, "kernel", "precomputed")
    return isinstance(kernel, str) and kernel == "precomputed"


def _refuse_extra(extra: tuple[Any, ...]) -> None:
    if any(value is not None for value in extra):
        raise ValueError(
            "K_test_test is used only by out_of_sample='transductive', which the low-rank "
            "(n_components) model does not support; pass the test-vs-train kernel alone."
        )


def _labels_or_none(y: ArrayLike | None) -> NDArray[Any] | None:
    """``y`` as a 1-D label array (a column vector warns, as scikit-learn does), or None when it
    cannot be read as labels (the binary fit then reports the problem)."""
    if y is None:
        return None
    try:
        arr = np.asarray(y)
        if arr.ndim == 2 and arr.shape[1] == 1:
            from sklearn.utils.validation import column_or_1d

            arr = column_or_1d(arr, warn=True)
        if arr.ndim != 1 or arr.dtype.kind not in "biufUO":
            return None
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            return None
        np.unique(arr)
        return arr
    except (TypeError, ValueError):
        return None
