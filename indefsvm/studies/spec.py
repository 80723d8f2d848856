"""Study specification: the TOML schema, its validation and its hash.

A study is ``datasets x kernels (parameter grids) x methods (parameter grids)`` evaluated with
the same outer and inner cross-validation folds, the same kernel matrices and the same tuning
budget for every method. The schema (every key not listed here is an error that names it):

.. code-block:: toml

    [study]
    name = "my-study"          # optional; default: the spec file's stem
    seed = 0                   # seeds folds, random search and estimators' random_state
    outer_folds = 5            # stratified for classification
    inner_folds = 3            # tuning folds inside each outer training part
    scoring = "accuracy"       # selection and report measure (greater is better)
    metrics = ["recall"]       # extra measures computed on the outer test folds
    task = "classification"    # or "regression"
    search = "grid"            # or "random" with n_iter: the same budget for every method
    n_iter = 10
    significance = "nadeau-bengio"  # bold marks: paired corrected resampled t-test (default),
                               # "welch" (unpaired, papers 000/004), "paired-t", "wilcoxon"
    alpha = 0.05

    [[datasets]]
    name = "mine"
    features = "X.npy"         # or kernel = "K.npy" (precomputed), or loader = "diabetes"
    labels = "y.txt"
    standardize = true         # fold-wise, with the training part's statistics
    kernels = ["sigmoid"]      # restrict to these kernel names (default: all)
    max_samples = 300          # seeded stratified subsample (optional)
    options = { pair = [3, 5] }  # loader options
    delimiter = ";"            # text files; default: .csv ",", .tsv tab, .txt whitespace
    split = "given"            # "folds" (default): the study's outer folds; "given": the data
                               # set's own train/test split (loader "aeon": the UCR split) is
                               # the one outer fold, tuning inside its training part

    [[kernels]]
    name = "sigmoid"           # a kernel of indefsvm.kernels (ignored for a precomputed kernel)
    label = "sigmoid"          # optional unique label
    params = { coef0 = -1.0 }  # fixed parameters
    grid = { gamma = [0.1, 1.0] }
    scale = { gamma = "inverse_n_features" }   # data-dependent units, from the training part

    [[methods]]
    estimator = "IndefiniteSVC"   # a class exported by indefsvm or indefsvm.krein
    label = "indefinite"          # optional unique label
    params = { tol = 1e-6 }       # fixed constructor arguments
    grid = { C = [0.1, 1.0], rho = [1.0] }

Relative paths are relative to the spec file.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from indefsvm.datasets import UCI_DATASETS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "SCALE_RULES",
    "SpecError",
    "Study",
    "DatasetSpec",
    "KernelSpec",
    "MethodSpec",
    "estimator_class",
    "load_spec",
    "parse_spec",
    "restrict_study",
    "smoke_study",
]

#: Loaders that produce a precomputed kernel rather than features.
LOADERS_WITH_KERNEL = ("krein_regression",)
#: Every loader name a spec may use (the data model of :mod:`indefsvm.studies.data` serves them).
LOADER_NAMES = ("digits", "aeon", "ucr", *UCI_DATASETS, *LOADERS_WITH_KERNEL)

#: Data-dependent parameter units (computed on the training part of each fold).
SCALE_RULES = ("median", "inverse_median", "inverse_n_features")
SIGNIFICANCE_TESTS = ("nadeau-bengio", "welch", "paired-t", "wilcoxon")
#: The report's default test: paired, corrected for the overlap of the training parts.
DEFAULT_SIGNIFICANCE = "nadeau-bengio"
TASKS = ("classification", "regression")
SEARCHES = ("grid", "random")
#: Outer evaluation of a data set: the study's folds or the data set's given train/test split.
SPLITS = ("folds", "given")
#: Loaders whose data sets come with a train/test split (``split = "given"``).
LOADERS_WITH_SPLIT = ("aeon", "ucr")

_STUDY_KEYS = {
    "name",
    "seed",
    "outer_folds",
    "inner_folds",
    "scoring",
    "metrics",
    "task",
    "search",
    "n_iter",
    "significance",
    "alpha",
}
_DATASET_KEYS = {
    "name",
    "loader",
    "features",
    "kernel",
    "labels",
    "standardize",
    "kernels",
    "max_samples",
    "options",
    "delimiter",
    "split",
}
_KERNEL_KEYS = {"name", "label", "params", "grid", "scale"}
_METHOD_KEYS = {"estimator", "label", "params", "grid"}
_TOP_KEYS = {"study", "datasets", "kernels", "methods"}
#: Constructor arguments the harness owns: the kernel is always precomputed by the harness.
_RESERVED = {"kernel", "gamma", "coef0", "degree", "kernel_params"}


class SpecError(ValueError):
    """A study specification is invalid; the message names the offending key."""


@dataclass(frozen=True)
class DatasetSpec:
    """One ``[[datasets]]`` entry (paths already resolved against the spec file)."""

    name: str
    loader: str | None = None
    features: str | None = None
    kernel: str | None = None
    labels: str | None = None
    standardize: bool | None = None
    kernels: tuple[str, ...] | None = None
    max_samples: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    #: Field separator of text files; None: by suffix (``.csv`` comma, ``.tsv`` tab, ``.txt``
    #: whitespace, as the top-level CLI reads them).
    delimiter: str | None = None
    #: None or "folds": the study's outer folds; "given": the data set's own train/test split
    #: is the single outer fold (tuning folds inside its training part).
    split: str | None = None


@dataclass(frozen=True, kw_only=True)
class _Tuned:
    """What kernel and method entries share: fixed parameters and a grid tuned over."""

    params: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class KernelSpec(_Tuned):
    """One ``[[kernels]]`` entry (``params``, ``grid``: keywords)."""

    name: str
    label: str
    scale: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodSpec(_Tuned):
    """One ``[[methods]]`` entry (``params``, ``grid``: keywords)."""

    estimator: str
    label: str


@dataclass(frozen=True)
class Study:
    """A validated study specification."""

    name: str
    seed: int
    outer_folds: int
    inner_folds: int
    scoring: str
    metrics: tuple[str, ...]
    task: str
    search: str
    n_iter: int | None
    significance: str
    alpha: float
    datasets: tuple[DatasetSpec, ...]
    kernels: tuple[KernelSpec, ...]
    methods: tuple[MethodSpec, ...]
    #: sha256 of every data file the spec reads (path -> hex digest)
    files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (stored in the results directory)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Study:
        """Inverse of :meth:`to_dict`."""
        d = dict(d)
        d["metrics"] = tuple(d["metrics"])
        d["datasets"] = tuple(
            DatasetSpec(**{**x, "kernels": None if x["kernels"] is None else tuple(x["kernels"])})
            for x in d["datasets"]
        )
        d["kernels"] = tuple(KernelSpec(**x) for x in d["kernels"])
        d["methods"] = tuple(MethodSpec(**x) for x in d["methods"])
        return cls(**d)

    @property
    def hash(self) -> str:
        """sha256 of the canonical JSON of the spec, data files replaced by their contents' hash.

        Moving the data files (or the spec) keeps the hash; editing them changes it.
        """
        d = self.to_dict()
        for ds in d["datasets"]:
            for key in ("features", "kernel", "labels"):
                if ds[key] is not None:
                    ds[key] = self.files.get(ds[key], ds[key])
        d.pop("files")
        # The test only marks the report (no record depends on it). Its default was "welch"
        # before "nadeau-bengio": hashing the new default as the old one keeps the results
        # directories of specs without the key valid.
        if d["significance"] == DEFAULT_SIGNIFICANCE:
            d["significance"] = "welch"
        for ds in d["datasets"]:
            # Specs written before the split key existed keep their hash (and results).
            if ds.get("split") is None:
                ds.pop("split", None)
            # Before the delimiter followed the suffix, "," was the stored default: hashing the
            # default as "," keeps the results directories of those specs valid.
            if ds["delimiter"] is None:
                ds["delimiter"] = ","
        text = json.dumps(d, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def outer_folds_of(self, dataset: DatasetSpec | str) -> int:
        """Number of outer folds of a data set: 1 with its given split, else ``outer_folds``."""
        if isinstance(dataset, str):
            dataset = next(d for d in self.datasets if d.name == dataset)
        return 1 if dataset.split == "given" else self.outer_folds

    def kernels_for(self, dataset: DatasetSpec) -> list[KernelSpec]:
        """Kernels applied to ``dataset`` (one pseudo-kernel for a precomputed matrix)."""
        if dataset.kernel is not None or (
            dataset.loader is not None and _loader_gives_kernel(dataset.loader)
        ):
            return [KernelSpec(name="precomputed", label="precomputed")]
        if dataset.kernels is None:
            return list(self.kernels)
        return [k for k in self.kernels if k.label in dataset.kernels]


def _loader_gives_kernel(loader: str) -> bool:
    return loader in LOADERS_WITH_KERNEL


def estimator_class(name: str) -> type:
    """The estimator class ``name`` exported by :mod:`indefsvm` or :mod:`indefsvm.krein`."""
    import indefsvm
    import indefsvm.krein

    for module in (indefsvm, indefsvm.krein):
        if name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isclass(obj) and hasattr(obj, "fit"):
                return obj
    available = sorted(
        n
        for m in (indefsvm, indefsvm.krein)
        for n in m.__all__
        if inspect.isclass(getattr(m, n)) and hasattr(getattr(m, n), "fit")
    )
    raise SpecError(f"unknown estimator {name!r}; expected one of {available}.")


def _tables(raw: dict[str, Any], key: str) -> list[Any]:
    """The non-empty array of tables ``[[key]]`` of the spec."""
    tables = raw.get(key)
    if not isinstance(tables, list) or not tables:
        raise SpecError(f"the spec needs at least one [[{key}]] table.")
    return tables


def _unique(values: list[str], what: str, hint: str = "") -> None:
    """Refuse a name or label used by two tables (results are keyed by it)."""
    dup = sorted({x for x in values if values.count(x) > 1})
    if dup:
        raise SpecError(f"{what} {dup[0]!r} is used twice{hint}.")


def _check_keys(table: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise SpecError(f"{where} must be a table; got {type(table).__name__}.")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise SpecError(
            f"unknown key {where}.{unknown[0]}"
            + (f" (and {unknown[1:]})" if unknown[1:] else "")
            + f"; allowed keys: {sorted(allowed)}."
        )
    return table


def _int(value: Any, where: str, minimum: int, maximum: int | None = None) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        bound = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise SpecError(f"{where} must be an integer {bound}; got {value!r}.")
    return value


def _str(value: Any, where: str, choices: tuple[str, ...] | None = None) -> str:
    if not isinstance(value, str) or not value:
        raise SpecError(f"{where} must be a non-empty string; got {value!r}.")
    if choices is not None and value not in choices:
        raise SpecError(f"{where} must be one of {list(choices)}; got {value!r}.")
    return value


def _scalar_ok(v: Any) -> bool:
    return isinstance(v, (int, float, str, bool)) or v is None


def _params(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpecError(f"{where} must be a table of parameter = value; got {value!r}.")
    for k, v in value.items():
        if not (_scalar_ok(v) or (isinstance(v, list) and all(_scalar_ok(x) for x in v))):
            raise SpecError(f"{where}.{k} must be a number, string, boolean or list; got {v!r}.")
    return dict(value)


def _grid(value: Any, where: str) -> dict[str, list[Any]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpecError(f"{where} must be a table of parameter = [values]; got {value!r}.")
    out = {}
    for k, v in value.items():
        if not isinstance(v, list) or not v:
            raise SpecError(f"{where}.{k} must be a non-empty list of values; got {v!r}.")
        for x in v:
            if not _scalar_ok(x):
                raise SpecError(f"{where}.{k} holds {x!r}; expected numbers, strings or booleans.")
        out[k] = list(v)
    # Canonical order: the store keeps the spec as JSON with sorted keys, and random search
    # draws by position in the joint grid, so the run and `study status` must agree on it.
    return {k: out[k] for k in sorted(out)}


def _check_kernel_params(name: str, keys: set[str], where: str) -> None:
    from indefsvm.kernels.registry import resolve_kernel

    if name == "precomputed":
        raise SpecError(
            f"{where}.name: 'precomputed' is not a kernel function. A precomputed kernel matrix "
            'comes from a file in the data section: give the data set `kernel = "K.npy"` '
            "(with `labels = ...`) instead of `features`, and it is used as it is (sliced per "
            "fold; no [[kernels]] entry is needed for it)."
        )
    try:
        fn = resolve_kernel(name)
    except ValueError as exc:
        raise SpecError(f"{where}.name: {exc}") from None
    if not callable(fn):
        raise SpecError(f"{where}.name: {name!r} is not a kernel function of indefsvm.kernels.")
    sig = inspect.signature(fn)
    accepted = {
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in ("X", "Y")
    }
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return
    bad = sorted(keys - accepted)
    if bad:
        raise SpecError(
            f"{where}: kernel {name!r} has no parameter {bad[0]!r}; its parameters are "
            f"{sorted(accepted)}."
        )


def _check_method_params(cls: type, keys: set[str], where: str) -> None:
    accepted = set(cls().get_params(deep=False))
    reserved = sorted(keys & _RESERVED)
    if reserved:
        raise SpecError(
            f"{where}: {reserved[0]!r} is set by the harness (every method gets the same "
            "precomputed kernel); tune kernel parameters in [[kernels]]."
        )
    bad = sorted(keys - accepted)
    if bad:
        raise SpecError(
            f"{where}: {cls.__name__} has no parameter {bad[0]!r}; its parameters are "
            f"{sorted(accepted - _RESERVED)}."
        )


class _ParamsChecked(BaseException):
    """Raised by :class:`_Probe` when ``fit`` reaches its data: the parameter checks passed.

    A BaseException so that no ``except Exception`` inside ``fit`` can swallow it.
    """


class _Probe:
    """Stand-in for ``X`` and ``y``: any use of it ends ``fit`` with :class:`_ParamsChecked`.

    Every estimator of the package validates its parameters (its ``_parameter_constraints``
    and the hand-written couplings) at the start of ``fit``, before it reads the data; fitting
    on a probe runs exactly those checks, through the public ``fit``, and nothing else.
    """

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise _ParamsChecked

    def __len__(self) -> int:
        raise _ParamsChecked

    def __getattr__(self, name: str) -> Any:
        raise _ParamsChecked


def _parameter_error(cls: type, kwargs: dict[str, Any]) -> Exception | None:
    """The error the estimator's own checks raise for ``kwargs`` (None when accepted)."""
    import warnings

    est = cls()
    accepted = est.get_params(deep=False)
    if "kernel" in accepted:
        kwargs = {**kwargs, "kernel": "precomputed"}
    try:
        est.set_params(**kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(_Probe(), _Probe())
    except _ParamsChecked:
        return None
    except Exception as exc:  # the estimator's own message is quoted to the user
        return exc
    return None


def _check_method_values(
    cls: type, params: dict[str, Any], grid: dict[str, list[Any]], where: str
) -> None:
    """Refuse parameter values the estimator itself refuses, before anything runs.

    The fixed ``params`` are checked together; each grid value is checked with the fixed
    parameters and the first value of every other grid key (one candidate per value, not the
    whole product).
    """
    exc = _parameter_error(cls, dict(params))
    if exc is not None:
        raise SpecError(f"{where}.params: {cls.__name__} refuses {params}: {exc}")
    first = {k: v[0] for k, v in grid.items()}
    for key, values in grid.items():
        for value in values:
            exc = _parameter_error(cls, {**params, **first, key: value})
            if exc is not None:
                raise SpecError(
                    f"{where}.grid.{key}: {cls.__name__} refuses {key} = {value!r}: {exc}"
                )


def _check_estimator_kind(cls: type, task: str, where: str) -> None:
    """A method must predict labels (classification) or values (regression)."""
    from sklearn.base import is_classifier, is_regressor

    est = cls()
    if not hasattr(est, "predict"):
        raise SpecError(
            f"{where}.estimator: {cls.__name__} is a transformer, not an estimator with "
            "predict(); a study method must be a classifier or regressor (use a method's "
            "n_components parameter for a Nystroem approximation)."
        )
    ok = is_classifier(est) if task == "classification" else is_regressor(est)
    if not ok:
        kind = "classifier" if task == "classification" else "regressor"
        raise SpecError(
            f"{where}.estimator: {cls.__name__} is not a {kind}; study.task = {task!r} needs "
            f"a {kind}."
        )


def _resolve_path(value: Any, base: Path, where: str) -> str:
    text = _str(value, where)
    path = Path(text)
    if not path.is_absolute():
        path = base / path
    if not path.is_file():
        raise SpecError(f"{where}: file {str(path)!r} does not exist.")
    return str(path.resolve())


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _parse_kernels(raw: dict[str, Any]) -> tuple[list[KernelSpec], list[str]]:
    """The ``[[kernels]]`` tables: their specs and labels (checked unique)."""
    kernels_raw = raw.get("kernels", [])
    if not isinstance(kernels_raw, list):
        raise SpecError("kernels must be an array of tables ([[kernels]]).")
    kernels = []
    for i, kr in enumerate(kernels_raw):
        where = f"kernels[{i}]"
        _check_keys(kr, _KERNEL_KEYS, where)
        name = _str(kr.get("name"), f"{where}.name")
        params = _params(kr.get("params"), f"{where}.params")
        grid = _grid(kr.get("grid"), f"{where}.grid")
        scale = kr.get("scale", {})
        if not isinstance(scale, dict):
            raise SpecError(f"{where}.scale must be a table parameter = rule; got {scale!r}.")
        for k, rule in scale.items():
            _str(rule, f"{where}.scale.{k}", SCALE_RULES)
            if k not in params and k not in grid:
                raise SpecError(
                    f"{where}.scale.{k}: {k!r} is neither in params nor in grid; the rule "
                    "multiplies the given value."
                )
        both = sorted(set(params) & set(grid))
        if both:
            raise SpecError(f"{where}: {both[0]!r} is in both params and grid.")
        _check_kernel_params(name, set(params) | set(grid), where)
        label = _str(kr.get("label", name), f"{where}.label")
        kernels.append(KernelSpec(name=name, label=label, params=params, grid=grid, scale=scale))
    labels = [k.label for k in kernels]
    _unique(labels, "kernels: label", "; give each a unique label")
    return kernels, labels


def _parse_datasets(
    raw: dict[str, Any], base: Path, labels: list[str], kernels: list[KernelSpec]
) -> tuple[list[DatasetSpec], dict[Path, str]]:
    """The ``[[datasets]]`` tables: their specs and the data files' hashes (relative paths
    against ``base``; ``labels`` and ``kernels`` are the kernel tables a dataset may name)."""
    datasets_raw = _tables(raw, "datasets")
    datasets, files = [], {}
    for i, dr in enumerate(datasets_raw):
        where = f"datasets[{i}]"
        _check_keys(dr, _DATASET_KEYS, where)
        name = _str(dr.get("name"), f"{where}.name")
        sources = [k for k in ("loader", "features", "kernel") if k in dr]
        if len(sources) != 1:
            raise SpecError(
                f"{where} ({name!r}) needs exactly one of 'loader', 'features' or 'kernel'; got "
                f"{sources or 'none'}."
            )
        loader = features = kernel_path = labels_path = None
        if "loader" in dr:
            loader = _str(dr["loader"], f"{where}.loader")
            if loader not in LOADER_NAMES:
                raise SpecError(
                    f"{where}.loader: unknown loader {loader!r}; expected one of {LOADER_NAMES}."
                )
            if "labels" in dr:
                raise SpecError(f"{where}.labels: a loader brings its own labels.")
        else:
            if "labels" not in dr:
                raise SpecError(f"{where} ({name!r}) needs 'labels' (a .npy/.csv/.txt file).")
            labels_path = _resolve_path(dr["labels"], base, f"{where}.labels")
            files[labels_path] = _sha256(labels_path)
            if "features" in dr:
                features = _resolve_path(dr["features"], base, f"{where}.features")
                files[features] = _sha256(features)
            else:
                kernel_path = _resolve_path(dr["kernel"], base, f"{where}.kernel")
                files[kernel_path] = _sha256(kernel_path)
        standardize = dr.get("standardize")
        if standardize is not None and not isinstance(standardize, bool):
            raise SpecError(f"{where}.standardize must be true or false; got {standardize!r}.")
        precomputed = kernel_path is not None or (loader in LOADERS_WITH_KERNEL)
        if precomputed and standardize:
            raise SpecError(f"{where}.standardize: a precomputed kernel has no features.")
        dk = dr.get("kernels")
        if dk is not None:
            if precomputed:
                raise SpecError(f"{where}.kernels: a precomputed kernel takes no [[kernels]].")
            if not isinstance(dk, list) or not all(isinstance(x, str) for x in dk):
                raise SpecError(f"{where}.kernels must be a list of kernel labels; got {dk!r}.")
            for x in dk:
                if x not in labels:
                    raise SpecError(
                        f"{where}.kernels: no [[kernels]] entry is labelled {x!r}; labels are "
                        f"{labels}."
                    )
            dk = tuple(dk)
        elif not precomputed and not kernels:
            raise SpecError(
                f"{where} ({name!r}) has features but the spec has no [[kernels]] table."
            )
        max_samples = dr.get("max_samples")
        if max_samples is not None:
            max_samples = _int(max_samples, f"{where}.max_samples", 4)
        options = _params(dr.get("options"), f"{where}.options")
        delimiter = dr.get("delimiter")
        if delimiter is not None:
            delimiter = _str(delimiter, f"{where}.delimiter")
        split = dr.get("split")
        if split is not None:
            split = _str(split, f"{where}.split", SPLITS)
            if split == "given" and loader not in LOADERS_WITH_SPLIT:
                source = f"loader {loader!r}" if loader is not None else "a data file"
                raise SpecError(
                    f"{where}.split = 'given' ({name!r}): {source} has no given train/test "
                    f"split; only the loaders {list(LOADERS_WITH_SPLIT)} have one (use "
                    "split = 'folds', the study's outer folds)."
                )
            if split == "folds":
                split = None  # the default, stored as absent (spec hash unchanged)
        datasets.append(
            DatasetSpec(
                name=name,
                loader=loader,
                features=features,
                kernel=kernel_path,
                labels=labels_path,
                standardize=standardize,
                kernels=dk,
                max_samples=max_samples,
                options=options,
                delimiter=delimiter,
                split=split,
            )
        )
    _unique([d.name for d in datasets], "datasets: name")
    return datasets, files


def _parse_methods(
    raw: dict[str, Any], task: str, scoring: str, metrics: list[Any]
) -> list[MethodSpec]:
    """The ``[[methods]]`` tables, each checked against the task and the study's measures."""
    methods_raw = _tables(raw, "methods")
    methods = []
    for i, mr in enumerate(methods_raw):
        where = f"methods[{i}]"
        _check_keys(mr, _METHOD_KEYS, where)
        est = _str(mr.get("estimator"), f"{where}.estimator")
        try:
            cls = estimator_class(est)
        except SpecError as exc:
            raise SpecError(f"{where}.estimator: {exc}") from None
        params = _params(mr.get("params"), f"{where}.params")
        grid = _grid(mr.get("grid"), f"{where}.grid")
        both = sorted(set(params) & set(grid))
        if both:
            raise SpecError(f"{where}: {both[0]!r} is in both params and grid.")
        _check_method_params(cls, set(params) | set(grid), where)
        _check_estimator_kind(cls, task, where)
        _check_method_values(cls, params, grid, where)
        label = _str(mr.get("label", est), f"{where}.label")
        methods.append(MethodSpec(estimator=est, label=label, params=params, grid=grid))
    _unique([m.label for m in methods], "methods: label", "; set a unique 'label' for each method")
    from indefsvm.studies.scoring import check_measure_for_method

    for i, m in enumerate(methods):
        est = estimator_class(m.estimator)().set_params(**m.params)
        for j, name in enumerate([scoring, *metrics]):
            why = check_measure_for_method(name, est)
            if why is not None:
                where = "study.scoring" if j == 0 else f"study.metrics[{j - 1}]"
                raise SpecError(f"{where}: {why} (methods[{i}], label {m.label!r}).")
    return methods


def parse_spec(raw: dict[str, Any], base: Path | str = ".", default_name: str = "study") -> Study:
    """Validate a parsed TOML document and return the :class:`Study`.

    Parameters
    ----------
    raw : dict
        The TOML document (``tomllib.loads``).
    base : path
        Directory that relative data paths are relative to (the spec file's directory).
    default_name : str
        Study name when ``[study].name`` is absent.

    Raises
    ------
    SpecError
        With a message naming the bad key and what was expected.
    """
    from indefsvm.studies.scoring import check_scoring

    base = Path(base)
    _check_keys(raw, _TOP_KEYS, "spec")
    st = _check_keys(raw.get("study", {}), _STUDY_KEYS, "study")
    task = _str(st.get("task", "classification"), "study.task", TASKS)
    scoring = _str(st.get("scoring", "accuracy" if task == "classification" else "r2"),
                   "study.scoring")  # fmt: skip
    metrics = st.get("metrics", [])
    if not isinstance(metrics, list):
        raise SpecError(f"study.metrics must be a list of measure names; got {metrics!r}.")
    for i, m in enumerate([scoring, *metrics]):
        where = "study.scoring" if i == 0 else f"study.metrics[{i - 1}]"
        try:
            check_scoring(_str(m, where), task)
        except ValueError as exc:
            raise SpecError(f"{where}: {exc}") from None
    search = _str(st.get("search", "grid"), "study.search", SEARCHES)
    n_iter = st.get("n_iter")
    if search == "random":
        n_iter = _int(n_iter, "study.n_iter (needed by search = 'random')", 1)
    elif n_iter is not None:
        raise SpecError("study.n_iter is only used with search = 'random'.")
    alpha = st.get("alpha", 0.05)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise SpecError(f"study.alpha must be a number in (0, 1); got {alpha!r}.")

    kernels, labels = _parse_kernels(raw)
    datasets, files = _parse_datasets(raw, base, labels, kernels)
    methods = _parse_methods(raw, task, scoring, metrics)

    study = Study(
        name=_str(st.get("name", default_name), "study.name"),
        # scikit-learn and numpy's legacy seeding take seeds below 2**32.
        seed=_int(st.get("seed", 0), "study.seed", 0, 2**32 - 1),
        outer_folds=_int(st.get("outer_folds", 5), "study.outer_folds", 2),
        inner_folds=_int(st.get("inner_folds", 3), "study.inner_folds", 2),
        scoring=scoring,
        metrics=tuple(metrics),
        task=task,
        search=search,
        n_iter=n_iter,
        significance=_str(
            st.get("significance", DEFAULT_SIGNIFICANCE), "study.significance", SIGNIFICANCE_TESTS
        ),  # fmt: skip
        alpha=float(alpha),
        datasets=tuple(datasets),
        kernels=tuple(kernels),
        methods=tuple(methods),
        files=files,
    )
    for d in study.datasets:
        if not study.kernels_for(d):
            raise SpecError(f"dataset {d.name!r} has no kernel to use.")
    return study


def load_spec(path: str | Path) -> Study:
    """Read and validate a TOML study spec (relative paths are relative to the file)."""
    path = Path(path)
    if not path.is_file():
        raise SpecError(f"spec file {str(path)!r} does not exist.")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    return parse_spec(raw, base=path.resolve().parent, default_name=path.stem)


#: Objects per data set in a smoke run (:func:`smoke_study`): enough for stratified 2 x 2 folds.
SMOKE_SAMPLES = 40


def restrict_study(
    study: Study,
    *,
    datasets: list[str] | tuple[str, ...] | None = None,
    methods: list[str] | tuple[str, ...] | None = None,
) -> Study:
    """The same study on a subset of its data sets and methods (``study run --datasets/--methods``).

    Everything else (folds, grids, kernels, seed) is unchanged, so each kept record is the
    record the whole study would compute; the stored spec (and its hash) is the restricted one.

    Parameters
    ----------
    study : Study
    datasets, methods : list of str, optional
        Data set names and method labels to keep (default: all).

    Returns
    -------
    Study

    Raises
    ------
    SpecError
        A name that is not in the spec (the message lists the names that are).
    """
    changes: dict[str, Any] = {}
    for what, wanted, present in (
        ("datasets", datasets, [d.name for d in study.datasets]),
        ("methods", methods, [m.label for m in study.methods]),
    ):
        if wanted is None:
            continue
        unknown = [w for w in wanted if w not in present]
        if unknown or not wanted:
            raise SpecError(
                f"--{what}: {unknown or wanted!r} not in the spec; its {what} are {present}."
            )
        items = study.datasets if what == "datasets" else study.methods
        changes[what] = tuple(
            x for x in items if (x.name if what == "datasets" else x.label) in wanted
        )
    return replace(study, **changes)


def smoke_study(study: Study, n_samples: int = SMOKE_SAMPLES) -> Study:
    """A small slice of ``study`` that goes through every data set, kernel and method in seconds.

    Used by ``indefsvm study run SPEC --smoke`` and the test suite, so that a spec cannot rot
    unnoticed: every loader, kernel and estimator of the spec is exercised, on a seeded,
    stratified subsample of ``n_samples`` objects per data set, with 2 outer and 2 inner folds,
    the first value of every kernel grid and the first value of every method grid except the
    first key (in sorted order), which keeps its first two values so that the inner selection
    runs too; ``search = "random"`` draws at most 2 candidates. The numbers of a smoke run mean
    nothing; the study's name gets the suffix `` (smoke)``.

    Parameters
    ----------
    study : Study
    n_samples : int
        Objects per data set (a smaller ``max_samples`` of the spec is kept).

    Returns
    -------
    Study
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 8:
        raise SpecError(f"smoke n_samples must be an integer >= 8; got {n_samples!r}.")

    def first(grid: dict[str, list[Any]], keep_two: bool) -> dict[str, list[Any]]:
        keys = sorted(grid)
        return {k: list(grid[k][: 2 if keep_two and k == keys[0] else 1]) for k in keys}

    return replace(
        study,
        name=f"{study.name} (smoke)",
        outer_folds=2,
        inner_folds=2,
        n_iter=None if study.n_iter is None else min(study.n_iter, 2),
        datasets=tuple(
            replace(d, max_samples=min(n_samples, d.max_samples or n_samples))
            for d in study.datasets
        ),
        kernels=tuple(replace(k, grid=first(k.grid, False)) for k in study.kernels),
        methods=tuple(replace(m, grid=first(m.grid, True)) for m in study.methods),
    )
