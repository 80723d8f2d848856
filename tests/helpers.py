"""Shared test data: small indefinite kernels with known structure.

Test files import these directly (``from helpers import sigmoid_problem``); ``tests/`` is on
``sys.path`` because pytest inserts the folder of the root ``conftest.py`` (rootdir-based
``prepend`` import mode). ``conftest.py`` keeps only fixtures and hooks, which call these.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str, name: str | None = None) -> ModuleType:
    """Import a script of ``tools/`` or ``benchmarks/`` (not packages) by its path in the
    repository; its own folder is on ``sys.path`` while it loads (for ``from _common import``)."""
    path = ROOT / relative
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    # experiments/ and benchmarks/ both have a _common module: a worker that imported the other
    # folder's must not hand it to this script. Taken out while the script loads, put back after
    # (the script keeps references to its own).
    own = {p.stem for p in path.parent.glob("_*.py")}
    shadowed = {
        key: sys.modules.pop(key)
        for key in own
        if key in sys.modules
        and Path(getattr(sys.modules[key], "__file__", "") or "").parent != path.parent
    }
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
        sys.modules.update(shadowed)
    return module


#: Set (to 1) where an extra is installed on purpose, e.g. a CI job with ``pip install -e
#: ".[test,timeseries]"``: a test that needs that extra's packages then fails instead of
#: skipping, so that a broken install or a renamed module cannot pass unnoticed.
REQUIRE_ENV = {"timeseries": "INDEFSVM_REQUIRE_TIMESERIES"}


def optional_available(module: str, extra: str) -> bool:
    """Whether the optional ``module`` (of the ``extra``) can be imported.

    False when it is missing, unless the extra is declared installed
    (``INDEFSVM_REQUIRE_TIMESERIES=1`` for ``timeseries``): then the calling test fails,
    naming the module and the variable.
    """
    if importlib.util.find_spec(module) is not None:
        return True
    var = REQUIRE_ENV[extra]
    if os.environ.get(var, "").strip().lower() in ("1", "true", "yes"):
        pytest.fail(
            f"{var} is set (the {extra!r} extra is declared installed) but {module!r} cannot be "
            f"imported: pip install -e '.[{extra}]'."
        )
    return False


def require_optional(module: str, extra: str) -> None:
    """Skip the calling test without the optional ``module``; fail instead when its extra is
    declared installed (:func:`optional_available`)."""
    if not optional_available(module, extra):
        pytest.skip(f"needs the optional package {module} (extra {extra!r})")


def sigmoid_problem(n: int, seed: int, *, a: float = 0.8, b: float = -0.3, d: int = 3):
    """A sigmoid kernel ``tanh(a <x, x'> + b)`` (indefinite) with noisy linear labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    if np.all(y == y[0]):
        y[0] = -y[0]
    K0 = np.tanh(a * X @ X.T + b)
    return K0, y


def regression_problem(n: int, seed: int):
    """A sigmoid kernel with smooth regression targets (SVR) or none (one-class)."""
    K0, _ = sigmoid_problem(n, seed)
    rng = np.random.default_rng(seed + 100)
    y = np.sin(np.arange(n) / 3.0) + 0.1 * rng.normal(size=n)
    return K0, y


def kind_problem(kind: str, n: int, seed: int, *, vector_rho: bool = False):
    """Data of one problem kind of paper 004 (eq. 7, 15, 19, 22): ``(K0, y, rho or None)``.

    A sigmoid kernel ``tanh(0.8 XX' - 0.3)`` (indefinite), or ``XX' + 0.1 I`` (PSD) for
    PerturbSVM; labels ``sign(x_1)``, regression targets ``x_1 + noise`` for svr, none for
    one-class; with ``vector_rho`` one rho per sample drawn from ``U(0.2, 3)``.
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    K0 = X @ X.T + 0.1 * np.eye(n) if kind == "perturb" else np.tanh(0.8 * X @ X.T - 0.3)
    y = {"svr": X[:, 0] + 0.1 * rng.normal(size=n), "oneclass": None}.get(
        kind, np.where(X[:, 0] > 0, 1.0, -1.0)
    )
    rho = rng.uniform(0.2, 3.0, size=n) if vector_rho else None
    return K0, y, rho


def three_classes(n_per=30, n_test=15, seed=0):
    """Three Gaussian classes shifted along the first of 3 features: ``(X, y, X_test)``."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n_per)
    X = rng.normal(size=(3 * n_per, 3))
    X[:, 0] += 1.2 * y
    Xt = rng.normal(size=(n_test, 3))
    Xt[:, 0] += rng.integers(0, 3, size=n_test) * 1.2
    return X, y, Xt


# Study fixtures on disk: a small two-class data set and a spec that tunes SpectrumSVC on it.


def write_small_study_data(tmp_path, n=40, d=3, seed=0, n_classes=2):
    """Features ``X.npy`` and integer labels ``y.txt`` in ``tmp_path``: noisy linear classes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if n_classes == 2:
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    else:
        y = np.digitize(X[:, 0] + 0.3 * rng.normal(size=n), [-0.5, 0.5])
    np.save(tmp_path / "X.npy", X)
    np.savetxt(tmp_path / "y.txt", y, fmt="%d")
    return X, y


SMALL_STUDY = """
[study]
seed = 0
outer_folds = 2
inner_folds = 2

[[datasets]]
name = "mine"
features = "X.npy"
labels = "y.txt"

[[kernels]]
name = "sigmoid"
params = { coef0 = -0.5 }
grid = { gamma = [0.5, 1.0] }
scale = { gamma = "inverse_n_features" }

[[methods]]
estimator = "SpectrumSVC"
params = { spectrum = "clip" }
grid = { C = [0.1, 1.0] }
"""


def write_study_spec(tmp_path, text=SMALL_STUDY, name="study.toml"):
    """Write ``text`` (a study spec in TOML) to ``tmp_path / name``; returns the path."""
    path = tmp_path / name
    path.write_text(text)
    return path


def count_store_records(out):
    """(inner records, outer records) in the study store at ``out``."""
    con = sqlite3.connect(out / "study.sqlite")
    try:
        return tuple(
            con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("inner_records", "outer_records")
        )
    finally:
        con.close()


@pytest.fixture(scope="module")
def dask_cluster():
    """A two-worker in-process ``distributed.LocalCluster`` (one thread each; the dashboard on a
    free port) for the tests of one fit on a Dask cluster (issue 25); see :func:`dask_client`."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0"
    ) as cluster:
        yield cluster


@pytest.fixture
def dask_client(dask_cluster):
    """A ``distributed.Client`` of :func:`dask_cluster`, closed after the test (tests without it
    run on dask's local scheduler)."""
    from distributed import Client

    with Client(dask_cluster) as client:
        yield client


def record_calls(monkeypatch, owner, name: str) -> list:
    """Replace ``owner.name`` by a pass-through that records each call's positional arguments;
    returns the list they are appended to."""
    calls: list = []
    real = getattr(owner, name)

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(owner, name, spy)
    return calls
