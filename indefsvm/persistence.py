"""Saving and loading fitted models in a format that cannot run code.

A pickle (and joblib, which is pickle) runs whatever its ``__reduce__`` entries name while it is
loaded, before any check: a crafted model file is a program. Model files are therefore written
with :mod:`skops.io`, a library made for persisting scikit-learn models safely: the file is a zip
archive holding a JSON description of the objects and their NumPy arrays, and loading only
builds objects of the types it is told to trust. :func:`load_model` trusts exactly
:data:`TRUSTED_TYPES` (indefsvm's own estimators and the state objects they hold) on top of the
NumPy, SciPy and scikit-learn types skops trusts by default; a file naming any other type
(``os.system``, ``builtins.eval``, a user's function) is refused before anything is built.

Pickling keeps working for Python users (``pickle.dumps(clf)`` round-trips); a pickle is loaded
here only with ``allow_pickle=True``, for files whose origin the caller trusts.
"""

from __future__ import annotations

import io
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

#: Marker of the model files written by :func:`save_model` (``indefsvm fit``).
MODEL_FORMAT = "indefsvm-model-2"

#: The types that :func:`load_model` lets :mod:`skops.io` build besides its NumPy, SciPy and
#: scikit-learn defaults: every estimator class of ``indefsvm`` and ``indefsvm.krein`` and the
#: objects their fitted attributes hold (solver results, the Nystroem map, spectrum transforms,
#: Krein solutions; with ``solver_options={"keep_training_state": True}`` also the problem, its
#: operator and the proxy kernel). Computed with :func:`skops.io.get_untrusted_types` on fitted
#: models of every estimator (tests/test_persistence.py keeps it complete) and written out here so
#: that what is trusted is visible and never derived from a file. None of these classes runs code
#: when its attributes are restored.
TRUSTED_TYPES: tuple[str, ...] = (
    # estimators (indefsvm.__all__, indefsvm.krein.__all__)
    "indefsvm.proxy.estimators.IndefiniteSVC",
    "indefsvm.proxy.estimators.IndefiniteSVR",
    "indefsvm.proxy.estimators.IndefiniteOneClassSVM",
    "indefsvm.proxy.estimators.PerturbSVC",
    "indefsvm.proxy.baselines.SpectrumSVC",
    "indefsvm.proxy.baselines.ModSVC",
    "indefsvm.proxy.baselines.DirectSVC",
    "indefsvm.approximation.nystrom.IndefiniteNystroem",
    # kernel="precomputed" with n_components: the landmark-column reader (holds no kernel
    # after fitting, only None; a plain data class, nothing to run on load)
    "indefsvm.base.PrecomputedColumns",
    "indefsvm.krein.models.KreinRegressor",
    "indefsvm.krein.models.KreinClassifier",
    "indefsvm.krein.models.KreinSVC",
    "indefsvm.krein.models.KreinKernelRidge",
    "indefsvm.krein.models.KreinKernelRidgeClassifier",
    "indefsvm.krein.models.KreinSquaredHingeSVC",
    "indefsvm.krein.models.SimilarityRidge",
    "indefsvm.krein.models.SimilarityRidgeClassifier",
    "indefsvm.krein.models.OngSubspaceRegressor",
    # fitted state
    "indefsvm.proxy.result.SolveResult",
    "indefsvm.linalg.spectrum.SpectrumTransform",
    "indefsvm.krein.solver.KernelEigen",
    "indefsvm.krein.solver.VarianceConstrainedSolution",
    "indefsvm.krein.lowrank.LowRankVCSolution",
    "indefsvm.krein.lowrank.SquaredHingeSolution",
    # fingerprints of the training inputs (two arrays and an int)
    "indefsvm.utils.fingerprint.TrainingRows",
    # training state kept with solver_options={"keep_training_state": True}
    "indefsvm.proxy.problems.ClassificationProblem",
    "indefsvm.proxy.problems.RegressionProblem",
    "indefsvm.proxy.problems.OneClassProblem",
    "indefsvm.proxy.problems.PerturbProblem",
    "indefsvm.proxy.operators.ProxyKernelOperator",
    "indefsvm.linalg.rank_one.SecularWarmStart",
    "indefsvm.linalg.factor.LowRankKernel",
    "indefsvm.linalg.factor.NumpyFactor",
    "indefsvm.proxy.lowrank.LowRankProxyKernel",
    "indefsvm.proxy.lowrank.LowRankProxyOperator",
    "indefsvm.proxy.lowrank.LowRankProxyState",
)


class UnsafeModelError(ValueError):
    """A model file that is not in the safe format, or names types that are not trusted."""


def _sklearn_held_types() -> list[type]:
    """The scikit-learn classes indefsvm's estimators keep as fitted attributes
    (``KreinSVC.svc_``, ``SimilarityRidge.ridge_``; tests/test_persistence.py checks that every
    estimator's fitted state holds no other)."""
    from sklearn.linear_model import Ridge
    from sklearn.svm import SVC

    return [SVC, Ridge]


def _skops_io() -> Any:
    """:mod:`skops.io`, imported without importing every scikit-learn estimator.

    skops computes its default-trusted scikit-learn types when it is imported, by calling
    ``sklearn.utils.all_estimators()``, which imports every estimator module of scikit-learn
    (0.6 s of the 1.9 s an ``indefsvm predict`` took on an idle machine, 5 s of 5.6 s on a
    loaded one). The loads here do not rely on those defaults beyond NumPy and SciPy: every
    type a file names must be among :data:`TRUSTED_TYPES` or the scikit-learn classes the
    estimators hold (:func:`_sklearn_held_types`), so skops is given just those for the one
    call it makes while importing. (Where skops was imported before, by the caller, its
    defaults are the full list; a file is then held to the same rule by :func:`_untrusted`.)
    """
    module = sys.modules.get("skops.io")
    if module is not None:
        return module
    import sklearn.utils

    held = _sklearn_held_types()
    original = sklearn.utils.all_estimators
    sklearn.utils.all_estimators = lambda *args, **kwargs: [(c.__name__, c) for c in held]
    try:
        import skops.io
    finally:
        sklearn.utils.all_estimators = original
    return skops.io


def _type_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _untrusted(data: bytes) -> list[str]:
    skops_io = _skops_io()
    trusted = {*TRUSTED_TYPES, *map(_type_name, _sklearn_held_types())}
    return [t for t in skops_io.get_untrusted_types(data=data) if t not in trusted]


def save_model(estimator: Any, path: str | os.PathLike[str]) -> Path:
    """Write a fitted estimator to ``path`` in the safe skops format (atomically).

    Parameters
    ----------
    estimator : estimator
        Any fitted estimator of ``indefsvm`` or ``indefsvm.krein`` (or of scikit-learn).
    path : str or path-like
        The file to write; ``.skops`` is the conventional suffix.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    UnsafeModelError
        If the estimator holds an object that :func:`load_model` would refuse to build (a
        callable ``kernel=``, for instance): such a file could not be loaded safely, so it is not
        written.
    """
    from indefsvm import __version__
    from indefsvm.utils.io import atomic_write

    payload = {"format": MODEL_FORMAT, "indefsvm_version": __version__, "estimator": estimator}
    data = _skops_io().dumps(payload)
    unknown = _untrusted(data)
    if unknown:
        raise UnsafeModelError(
            f"{type(estimator).__name__} holds objects of types {unknown} that are not among "
            "the types load_model trusts (indefsvm.persistence.TRUSTED_TYPES), e.g. a callable "
            "kernel; use a kernel name or kernel='precomputed', or pickle the model yourself."
        )
    return atomic_write(path, lambda fh: fh.write(data), binary=True)


def load_model(path: str | os.PathLike[str], *, allow_pickle: bool = False) -> Any:
    """Load an estimator written by :func:`save_model` (or ``indefsvm fit``) without running code.

    Parameters
    ----------
    path : str or path-like
        A ``.skops`` file. Any type in it outside :data:`TRUSTED_TYPES` and skops' NumPy,
        SciPy and scikit-learn defaults makes the load fail before any object is built.
    allow_pickle : bool
        Also load pickle/joblib files. **A pickle runs arbitrary code while it is loaded**: use
        this only for files whose origin you trust (e.g. models written by indefsvm < 0.2).

    Returns
    -------
    estimator
        The fitted estimator.

    Raises
    ------
    UnsafeModelError
        A pickle without ``allow_pickle``, or a skops file naming untrusted types.
    ValueError
        A missing, unreadable or corrupt file, or one that holds no estimator.
    """
    p = Path(path)
    if not p.exists():
        raise ValueError(f"model file {str(p)!r} does not exist.")
    if p.is_dir():
        raise ValueError(f"model file {str(p)!r} is a directory; expected a model file.")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"could not read model file {str(p)!r}: {exc}") from exc
    if not data:
        raise ValueError(
            f"model file {str(p)!r} is empty (0 bytes): it is corrupt or truncated. Save the "
            "model again (indefsvm fit / save_model)."
        )
    if zipfile.is_zipfile(io.BytesIO(data)):
        obj = _load_skops(data, p)
    elif data[:4] == b"PK\x03\x04" or p.suffix == ".skops":
        # a zip archive's header (or the skops name) without a readable archive: cut short
        raise ValueError(
            f"model file {str(p)!r} is not a readable skops archive: it is corrupt or "
            "truncated. Save the model again (indefsvm fit / save_model)."
        )
    elif allow_pickle:
        import joblib

        try:
            obj = joblib.load(io.BytesIO(data))  # reads plain pickles too
        except Exception as exc:  # noqa: BLE001 - any unreadable file is bad input here
            raise ValueError(f"could not read model file {str(p)!r}: {exc}") from exc
    else:
        raise UnsafeModelError(
            f"model file {str(p)!r} is not in the safe skops format (it looks like a "
            f"{_describe(data)}). Loading a pickle or joblib file can run arbitrary code, so it "
            "is refused: refit with 'indefsvm fit' (which writes .skops), or, only if you trust "
            "where the file comes from, pass --allow-pickle (allow_pickle=True)."
        )
    if isinstance(obj, dict) and obj.get("format") in (MODEL_FORMAT, "indefsvm-model-1"):
        obj = obj.get("estimator")
    name = _type_name(type(obj))
    # The object itself must be one of indefsvm's estimators (its state objects have no fit).
    if name not in TRUSTED_TYPES or not hasattr(obj, "fit"):
        raise ValueError(
            f"{str(p)!r} holds a {name}, not an indefsvm estimator: load_model builds only "
            "indefsvm's estimators (indefsvm.persistence.TRUSTED_TYPES) and the NumPy, SciPy "
            "and scikit-learn objects they hold. Load other models with skops.io yourself."
        )
    return obj


def _load_skops(data: bytes, path: Path) -> Any:
    try:
        unknown = _untrusted(data)
    except Exception as exc:  # noqa: BLE001 - a corrupt archive or schema is bad input
        raise ValueError(
            f"could not read model file {str(path)!r}: it is corrupt or truncated ({exc}). "
            "Save the model again (indefsvm fit / save_model)."
        ) from exc
    if unknown:
        raise UnsafeModelError(
            f"model file {str(path)!r} names types that are not trusted: {unknown}. It was not "
            "written by indefsvm (or was modified); nothing in it was loaded."
        )
    held = [_type_name(cls) for cls in _sklearn_held_types()]
    try:
        return _skops_io().loads(data, trusted=[*TRUSTED_TYPES, *held])
    except Exception as exc:  # noqa: BLE001 - a corrupt archive or schema is bad input
        raise ValueError(
            f"could not read model file {str(path)!r}: it is corrupt or truncated ({exc}). "
            "Save the model again (indefsvm fit / save_model)."
        ) from exc


def _describe(data: bytes) -> str:
    if data[:1] == b"\x80":
        return "pickle or joblib file"
    if data[:2] in (b"\x1f\x8b", b"x\x9c", b"x\xda", b"x^", b"x\x01", b"BZ") or data[:6] in (
        b"\xfd7zXZ\x00",
    ):
        return "compressed joblib file"
    return "file of another format"


__all__ = ["MODEL_FORMAT", "TRUSTED_TYPES", "UnsafeModelError", "load_model", "save_model"]
