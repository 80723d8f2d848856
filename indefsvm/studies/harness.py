"""The harness: identical folds, kernels, budgets and scoring for every method.

Equal footing is enforced here, not by each experiment:

* **Folds.** The outer folds of a data set (stratified for classification) and the inner
  tuning folds of each outer training part are functions of ``(y, seed)`` only, so every
  method sees exactly the same splits.
* **Kernels.** Every method is fitted with ``kernel="precomputed"`` on the blocks returned by
  :func:`kernel_blocks` (training x training and evaluation x training). Features are
  standardised with the statistics of the fitted part only, and data-dependent parameter units
  (``scale`` rules, e.g. ``gamma / median d^2``) come from the fitted part too. A worker caches
  the blocks it has computed, so a fold's kernel is computed once per worker and shared by the
  methods that run there.
* **Budget.** Kernel and method parameters are tuned jointly in the same inner cross-validation
  by the same rule: the full grid, or ``n_iter`` seeded random draws from it (the same number
  for every method), selected by the same scoring rule (mean inner score; ties go to the first
  candidate in grid order).

A *task* is either an ``inner`` task (one candidate's mean score over the inner folds of one
outer fold) or an ``outer`` task (refit of the selected candidate on the outer training part,
scored on the outer test part). :func:`run_task` executes one; it is what the backends ship.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import platform
import time
import warnings
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from indefsvm.studies.data import StudyData
from indefsvm.studies.scoring import (
    greater_is_better,
    measure,
)
from indefsvm.studies.spec import KernelSpec, MethodSpec, Study, estimator_class
from indefsvm.threads import cap_threads

__all__ = [
    "Task",
    "candidates",
    "inner_splits",
    "kernel_blocks",
    "library_versions",
    "outer_splits",
    "params_key",
    "run_task",
]

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------------
# Folds and candidates
# --------------------------------------------------------------------------------------------


def outer_splits(
    y: NDArray, study: Study, test_mask: NDArray | None = None
) -> list[tuple[NDArray, NDArray]]:
    """Outer (train, test) index pairs: a function of ``y`` and the seed only.

    With ``test_mask`` (a data set's given split, :attr:`StudyData.test_mask`) the one pair
    is that split: ``(train, test)`` where ``test_mask`` is False and True.
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    if test_mask is not None:
        mask = np.asarray(test_mask, dtype=bool)
        return [(np.flatnonzero(~mask), np.flatnonzero(mask))]
    if study.task == "classification":
        cv = StratifiedKFold(study.outer_folds, shuffle=True, random_state=study.seed)
    else:
        cv = KFold(study.outer_folds, shuffle=True, random_state=study.seed)
    return [(np.sort(a), np.sort(b)) for a, b in cv.split(np.zeros(len(y)), y)]


def inner_splits(
    y: NDArray, study: Study, outer_fold: int, test_mask: NDArray | None = None
) -> list[tuple[NDArray, NDArray]]:
    """Inner (train, validation) pairs of one outer training part, in data-set indices.

    Only the training part is split (with a given split too: the test part is never seen by
    the tuning).
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    train, _ = outer_splits(y, study, test_mask)[outer_fold]
    seed = study.seed + 1 + outer_fold
    if study.task == "classification":
        cv = StratifiedKFold(study.inner_folds, shuffle=True, random_state=seed)
    else:
        cv = KFold(study.inner_folds, shuffle=True, random_state=seed)
    return [(train[a], train[b]) for a, b in cv.split(np.zeros(len(train)), y[train])]


def params_key(kernel_params: dict[str, Any], method_params: dict[str, Any]) -> str:
    """Canonical JSON of one candidate (the store's ``params`` column)."""
    return json.dumps({"kernel": kernel_params, "method": method_params}, sort_keys=True)


def _product(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    # Sorted keys: the canonical order of the grid, whatever order the spec (or the JSON kept
    # in the store) lists them in, so that a run and `study status` enumerate -- and randomly
    # draw from -- the same joint grid.
    keys = sorted(grid)
    return [
        dict(zip(keys, values, strict=True))
        for values in itertools.product(*(grid[k] for k in keys))
    ]


def candidates(
    study: Study, dataset: str, kernel: KernelSpec, method: MethodSpec
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The (kernel parameters, method parameters) candidates evaluated for one method.

    The joint grid ``kernel grid x method grid``, each grid enumerated in sorted key order
    (the canonical form: the spec's key order does not matter); with ``search = "random"`` a
    seeded draw of ``n_iter`` of its points without replacement (all of them when the grid is
    smaller), the same budget for every method. ``study run`` and ``study status`` both plan
    through this function.
    """
    kgrid = _product(kernel.grid) if kernel.name != "precomputed" else [{}]
    joint = [(k, m) for k in kgrid for m in _product(method.grid)]
    if study.search == "random" and study.n_iter < len(joint):
        tag = f"{dataset}|{kernel.label}|{method.label}".encode()
        rng = np.random.default_rng([study.seed, zlib.crc32(tag)])
        pick = np.sort(rng.choice(len(joint), size=study.n_iter, replace=False))
        joint = [joint[i] for i in pick]
    return joint


# --------------------------------------------------------------------------------------------
# Kernel blocks
# --------------------------------------------------------------------------------------------

# Worker-side caches. Keys hold the data set's content hash, so they never mix data sets.
_BLOCK_CACHE: OrderedDict[tuple, tuple[NDArray, NDArray]] = OrderedDict()
_BLOCK_CACHE_BYTES = 256 * 2**20
_FULL_CACHE: OrderedDict[tuple, NDArray] = OrderedDict()
_FULL_CACHE_ITEMS = 4


def _cache_put(cache: OrderedDict, key: tuple, value: Any, max_bytes: int | None, max_items: int):
    cache[key] = value
    cache.move_to_end(key)
    if max_bytes is not None:
        while (
            len(cache) > 1
            and sum(
                sum(a.nbytes for a in v) if isinstance(v, tuple) else v.nbytes
                for v in cache.values()
            )
            > max_bytes
        ):
            cache.popitem(last=False)
    while len(cache) > max_items:
        cache.popitem(last=False)


def _full_matrix(data: StudyData, what: str, fn) -> NDArray:
    key = (data.key, what)
    if key in _FULL_CACHE:
        _FULL_CACHE.move_to_end(key)
        return _FULL_CACHE[key]
    value = fn()
    _cache_put(_FULL_CACHE, key, value, None, _FULL_CACHE_ITEMS)
    return value


def _tangent_d2(data: StudyData) -> NDArray:
    """Squared symmetrised one-sided tangent distances over all objects (label-free)."""
    from indefsvm.kernels import one_sided_tangent_distance

    def build():
        D = one_sided_tangent_distance(data.X)
        D = 0.5 * (D + D.T)
        return D * D

    return _full_matrix(data, "tangent_d2", build)


#: Largest data set whose DTW distances over all objects are cached (8 * n^2 bytes).
_DTW_CACHE_MAX_N = 4000


def _dtw_all(data: StudyData, window: Any) -> NDArray:
    """DTW distances over all objects in one Sakoe-Chiba window (label-free, fold-free)."""
    from indefsvm.kernels import dtw_distances

    return _full_matrix(data, f"dtw|{window!r}", lambda: dtw_distances(data.X, window=window))


def _uses_dtw_cache(kernel: KernelSpec, params: dict[str, Any], data: StudyData) -> bool:
    # Raw series (no fold-wise standardisation): DTW does not depend on the fold, so every
    # (gamma, fold) candidate of one window slices the same matrix instead of recomputing it.
    return (
        kernel.name == "dtw"
        and not data.standardize
        and set(params) <= {"gamma", "window"}
        and data.n <= _DTW_CACHE_MAX_N
    )


def _uses_tangent_cache(kernel: KernelSpec, params: dict[str, Any], data: StudyData) -> bool:
    return (
        kernel.name in ("tangent_distance", "tangent")
        and not data.standardize
        and set(params) <= {"gamma"}
    )


def _median_sq_distance(
    kernel: KernelSpec,
    data: StudyData,
    Xf: NDArray,
    fit: NDArray,
    params: dict[str, Any],
    cache: bool = True,
) -> float:
    if kernel.name in ("tangent_distance", "tangent") and not data.standardize:
        D2 = _tangent_d2(data)[np.ix_(fit, fit)]
    elif kernel.name == "dtw":
        # The DTW kernel is exp(-gamma DTW): its natural unit is the median DTW distance (in
        # the candidate's Sakoe-Chiba window).
        from indefsvm.kernels import dtw_distances

        if cache and _uses_dtw_cache(kernel, {**kernel.params, **params}, data):
            D2 = _dtw_all(data, params.get("window"))[np.ix_(fit, fit)]
        else:
            D2 = dtw_distances(Xf, window=params.get("window"))
    else:
        from indefsvm.kernels import squared_euclidean_distances

        D2 = squared_euclidean_distances(Xf)
    off = D2[np.triu_indices(D2.shape[0], k=1)]
    m = float(np.median(off))
    if not m > 0:
        raise ValueError(f"the median squared distance of data set {data.name!r} is {m}.")
    return m


def effective_params(
    kernel: KernelSpec,
    params: dict[str, Any],
    data: StudyData,
    Xf: NDArray,
    fit: NDArray,
    cache: bool = True,
) -> dict[str, Any]:
    """Kernel parameters after the ``scale`` rules, computed on the fitted part only.

    ``cache=False``: no distance matrix over all objects is built (the spec checks' few
    objects must not cost a full DTW matrix).
    """
    out = {**kernel.params, **params}
    median = None
    for name, rule in kernel.scale.items():
        if rule == "inverse_n_features":
            out[name] = out[name] / Xf.shape[1]
        else:
            if median is None:
                median = _median_sq_distance(kernel, data, Xf, fit, out, cache)
            out[name] = out[name] * median if rule == "median" else out[name] / median
    return out


def _block_key(
    data: StudyData, kernel: KernelSpec, params: dict[str, Any], fit: NDArray, evaluate: NDArray
) -> tuple:
    import hashlib

    folds = hashlib.sha256()
    for idx in (fit, evaluate):
        a = np.ascontiguousarray(idx, dtype=np.int64)
        folds.update(len(a).to_bytes(8, "little"))
        folds.update(a.tobytes())
    spec = json.dumps(
        [kernel.name, kernel.params, kernel.scale, params], sort_keys=True, default=repr
    )
    return (data.key, bool(data.standardize), spec, folds.hexdigest())


def kernel_blocks(
    data: StudyData,
    kernel: KernelSpec,
    params: dict[str, Any],
    fit: NDArray,
    evaluate: NDArray,
    fold_tag: tuple = (),
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(K[fit, fit], K[evaluate, fit])`` of one fold, computed from the fitted part only.

    Features are standardised with the mean and standard deviation of ``fit`` (when the data
    set asks for it); ``scale`` rules use ``fit`` only. A precomputed kernel is sliced.

    Parameters
    ----------
    data : StudyData
    kernel : KernelSpec
    params : dict
        The candidate's kernel parameters (grid values, before scale rules).
    fit, evaluate : ndarray of int
        Indices of the fitted and evaluated objects.
    fold_tag : tuple
        Caches the blocks in the worker (empty: no caching, neither of the blocks nor of a
        DTW matrix over all objects, which a non-empty tag computes once per window). The
        cache key is made of what the blocks depend on -- the data (content hash),
        ``standardize``, the kernel's name, fixed parameters and scale rules, the candidate's
        parameters and the exact ``fit`` and ``evaluate`` indices (hence the seed and fold
        layout) -- so two studies sharing a worker never share blocks they should not.
    """
    key = _block_key(data, kernel, params, fit, evaluate)
    if fold_tag and key in _BLOCK_CACHE:
        _BLOCK_CACHE.move_to_end(key)
        return _BLOCK_CACHE[key]
    if data.K is not None:
        blocks = data.K[np.ix_(fit, fit)], data.K[np.ix_(evaluate, fit)]
    else:
        from indefsvm.kernels.registry import resolve_kernel

        Xf, Xe = data.X[fit], data.X[evaluate]
        if data.standardize:
            from indefsvm.datasets import standardize_within_fold

            Xf, Xe = standardize_within_fold(Xf, Xe)
        p = effective_params(kernel, params, data, Xf, fit, cache=bool(fold_tag))
        if _uses_tangent_cache(kernel, p, data):
            # The tangent distances do not depend on the fold: computed once per worker.
            D2 = _tangent_d2(data)
            g = float(p.get("gamma", 1.0))
            blocks = np.exp(-g * D2[np.ix_(fit, fit)]), np.exp(-g * D2[np.ix_(evaluate, fit)])
        elif fold_tag and _uses_dtw_cache(kernel, p, data):
            D = _dtw_all(data, p.get("window"))
            g = float(p.get("gamma", 1.0))
            blocks = np.exp(-g * D[np.ix_(fit, fit)]), np.exp(-g * D[np.ix_(evaluate, fit)])
        else:
            fn = resolve_kernel(kernel.name)
            blocks = (
                np.asarray(fn(Xf, None, **p), dtype=np.float64),
                np.asarray(fn(Xe, Xf, **p), dtype=np.float64),
            )
        Kf = blocks[0]
        blocks = (0.5 * (Kf + Kf.T), blocks[1])
    if fold_tag:
        _cache_put(_BLOCK_CACHE, key, blocks, _BLOCK_CACHE_BYTES, 10**6)
    return blocks


# --------------------------------------------------------------------------------------------
# Fitting one estimator
# --------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def library_versions() -> str:
    """JSON of the versions that a record depends on."""
    import scipy
    import sklearn

    import indefsvm

    return json.dumps(
        {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__,
            "indefsvm": indefsvm.__version__,
        },
        sort_keys=True,
    )


def make_estimator(method: MethodSpec, params: dict[str, Any], seed: int) -> Any:
    """The method's estimator with fixed and candidate parameters and a precomputed kernel."""
    cls = estimator_class(method.estimator)
    est = cls()
    accepted = est.get_params(deep=False)
    kwargs = {**method.params, **params}
    if "kernel" in accepted:
        kwargs["kernel"] = "precomputed"
    if "random_state" in accepted and "random_state" not in kwargs:
        kwargs["random_state"] = seed
    return est.set_params(**kwargs)


def _fit_score(
    method: MethodSpec,
    mparams: dict[str, Any],
    K_fit: NDArray,
    y_fit: NDArray,
    K_eval: NDArray,
    y_eval: NDArray,
    measures: list[str],
    seed: int,
) -> dict[str, Any]:
    out: dict[str, Any] = {"status": "ok", "gap": math.nan, "relative_gap": math.nan}
    caught: list[str] = []
    failed: list[str] = []
    try:
        est = make_estimator(method, mparams, seed)
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            est.fit(K_fit, y_fit)
            t1 = time.perf_counter()
            pred = est.predict(K_eval)
            t2 = time.perf_counter()
            scores = {}
            for m in measures:
                # One measure that fails must not discard the fit's other measures.
                try:
                    scores[m] = measure(m, est, K_eval, y_eval, pred)
                except Exception as exc:  # recorded in the status, not fatal
                    scores[m] = math.nan
                    failed.append(f"measure {m} failed: {type(exc).__name__}: {str(exc)[:120]}")
        caught = sorted({type(x.message).__name__ if isinstance(x.message, Warning)
                         else x.category.__name__ for x in w})  # fmt: skip
        out.update(fit_time=t1 - t0, predict_time=t2 - t1, scores=scores)
        result = getattr(est, "result_", None)
        if result is not None:
            out["status"] = str(getattr(result, "status", "ok"))
            out["gap"] = float(getattr(result, "gap", math.nan))
            out["relative_gap"] = float(getattr(result, "relative_gap", math.nan))
    except Exception as exc:  # a failing candidate is recorded, not fatal
        out.update(
            status=f"error: {type(exc).__name__}: {str(exc)[:200]}",
            fit_time=math.nan,
            predict_time=math.nan,
            scores={m: math.nan for m in measures},
        )
    if failed and not out["status"].startswith("error"):
        out["status"] = "; ".join([out["status"], *failed])
    out["warnings"] = ",".join(caught)
    return out


# --------------------------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One unit of work shipped to a backend (small: no arrays)."""

    kind: str  # "inner" or "outer"
    dataset: str
    kernel: str
    method: str
    outer_fold: int
    kernel_params: dict[str, Any] = field(default_factory=dict)
    method_params: dict[str, Any] = field(default_factory=dict)
    inner_score: float = math.nan

    @property
    def params(self) -> str:
        """Canonical JSON of the candidate."""
        return params_key(self.kernel_params, self.method_params)

    @property
    def key(self) -> tuple:
        """Store key."""
        if self.kind == "inner":
            return (self.dataset, self.kernel, self.method, self.params, self.outer_fold)
        return (self.dataset, self.kernel, self.method, self.outer_fold)


def _spec_items(study: Study, task: Task) -> tuple[KernelSpec, MethodSpec]:
    kernel = next(
        (k for k in study.kernels if k.label == task.kernel),
        KernelSpec(name="precomputed", label="precomputed"),
    )
    method = next(m for m in study.methods if m.label == task.method)
    return kernel, method


def run_task(task: Task, data: StudyData, study: Study, max_threads: int = 1) -> dict[str, Any]:
    """Execute one task on a worker (at most ``max_threads`` threads per pool).

    Returns
    -------
    dict
        ``task`` plus, for an inner task, ``score`` (mean over the inner folds; NaN when a fold
        failed), ``scores``, ``fit_time``, ``status``; for an outer task the measures, times,
        certified gap and solver status, the indefiniteness ``iota`` of the training kernel,
        ``n_train``, ``n_test``, ``warnings`` and ``versions``.
    """
    # Every pool (BLAS, OpenMP, Numba), including those a fit loads later.
    with cap_threads(max_threads):
        return _run_task(task, data, study)


def _run_task(task: Task, data: StudyData, study: Study) -> dict[str, Any]:
    kernel, method = _spec_items(study, task)
    y = data.y
    if task.kind == "inner":
        scores, fit_time, statuses, warns = [], 0.0, [], set()
        splits = inner_splits(y, study, task.outer_fold, data.test_mask)
        for g, (fit, ev) in enumerate(splits):
            Kf, Ke = kernel_blocks(
                data, kernel, task.kernel_params, fit, ev, ("inner", task.outer_fold, g)
            )
            r = _fit_score(method, task.method_params, Kf, y[fit], Ke, y[ev], [study.scoring],
                           study.seed)  # fmt: skip
            scores.append(r["scores"][study.scoring])
            fit_time += r["fit_time"]
            statuses.append(r["status"])
            warns.update(x for x in r["warnings"].split(",") if x)
        return {
            "task": task,
            "score": float(np.mean(scores)),
            "scores": scores,
            "fit_time": fit_time,
            "status": ",".join(sorted(set(statuses))),
            "warnings": ",".join(sorted(warns)),
        }
    from indefsvm.linalg.spectrum import eigen_summary

    fit, ev = outer_splits(y, study, data.test_mask)[task.outer_fold]
    t0 = time.perf_counter()
    Kf, Ke = kernel_blocks(data, kernel, task.kernel_params, fit, ev, ("outer", task.outer_fold))
    kernel_time = time.perf_counter() - t0
    measures = list(dict.fromkeys([study.scoring, *study.metrics]))
    r = _fit_score(method, task.method_params, Kf, y[fit], Ke, y[ev], measures, study.seed)
    iota = float(eigen_summary(Kf).iota)
    return {
        "task": task,
        "score": r["scores"][study.scoring],
        "metrics": {m: r["scores"][m] for m in study.metrics},
        "inner_score": task.inner_score,
        "status": r["status"],
        "gap": r["gap"],
        "relative_gap": r["relative_gap"],
        "iota": iota,
        "n_train": int(len(fit)),
        "n_test": int(len(ev)),
        "seed": study.seed,
        "warnings": r["warnings"],
        "versions": library_versions(),
        "fit_time": r["fit_time"],
        "predict_time": r["predict_time"],
        "kernel_time": kernel_time,
    }


def plan_inner(study: Study) -> list[Task]:
    """Every inner task of the study, ordered so that a worker reuses its kernel blocks."""
    tasks = []
    for d in study.datasets:
        for f in range(study.outer_folds_of(d)):
            for k in study.kernels_for(d):
                for m in study.methods:
                    cands = candidates(study, d.name, k, m)
                    if len(cands) == 1:
                        continue  # nothing to tune
                    for kp, mp in cands:
                        tasks.append(Task("inner", d.name, k.label, m.label, f, kp, mp))
    # Group by (data set, fold, kernel parameters) so that consecutive tasks share blocks.
    tasks.sort(
        key=lambda t: (
            [d.name for d in study.datasets].index(t.dataset),
            t.outer_fold,
            t.kernel,
            json.dumps(t.kernel_params, sort_keys=True),
        )
    )
    return tasks


def plan_outer_keys(study: Study) -> list[tuple[str, str, str, int]]:
    """(data set, kernel, method, outer fold) of every outer record, in report order."""
    return [
        (d.name, k.label, m.label, f)
        for d in study.datasets
        for k in study.kernels_for(d)
        for m in study.methods
        for f in range(study.outer_folds_of(d))
    ]


def select(
    study: Study, dataset: str, kernel: str, method: str, fold: int, inner: dict[str, float]
) -> Task:
    """The outer task of one (data set, kernel, method, fold) from its inner scores.

    ``inner`` maps a candidate's ``params`` JSON to its mean inner score. The best mean wins;
    ties and NaN (failed candidates) go to the first candidate in grid order.
    """
    d = next(x for x in study.datasets if x.name == dataset)
    k = next(x for x in study.kernels_for(d) if x.label == kernel)
    m = next(x for x in study.methods if x.label == method)
    cands = candidates(study, dataset, k, m)
    best, best_score = cands[0], math.nan
    if len(cands) > 1:
        sign = 1.0 if greater_is_better(study.scoring) else -1.0
        for kp, mp in cands:
            s = inner[params_key(kp, mp)]
            if not math.isnan(s) and (math.isnan(best_score) or sign * s > sign * best_score):
                best, best_score = (kp, mp), s
    return Task("outer", dataset, kernel, method, fold, best[0], best[1], best_score)
