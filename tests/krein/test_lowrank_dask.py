"""Low-rank Krein learners and estimators on row-chunked dask arrays (issue 25), against the
in-memory fit on the same data."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from helpers import dask_client, dask_cluster  # noqa: F401 - pytest fixtures
from sklearn.base import clone

from indefsvm.krein import lowrank, models
from indefsvm.linalg.factor import as_factor

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

CHUNKS = 600  # n = 2503: five chunks, the last one 103 rows


def _factor(n=2503, r=12, seed=0):
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(n, r))
    y = np.where(F[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    s = np.where(np.arange(r) % 3 == 0, -1.0, 1.0)
    return F, y, s


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(np.asarray(a))))


@pytest.mark.usefixtures("dask_client")
def test_lowrank_krein_ridge_matches_in_memory():
    F, y, s = _factor()
    z = lowrank.lowrank_krein_ridge(F, s, y, lambda_plus=0.1, lambda_minus=0.3)
    zd = lowrank.lowrank_krein_ridge(
        da.from_array(F, chunks=CHUNKS), s, y, lambda_plus=0.1, lambda_minus=0.3
    )
    assert _rel(z, zd) <= 1e-8


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.usefixtures("dask_client")
def test_lowrank_variance_constrained_matches_in_memory(dtype):
    F, y, s = _factor()
    F = F.astype(dtype)
    reg = np.where(s > 0, 0.1, 0.3)
    ref = lowrank.lowrank_variance_constrained(F, y, reg, 0.7)
    got = lowrank.lowrank_variance_constrained(
        da.from_array(F, chunks=CHUNKS), da.from_array(y, chunks=CHUNKS), reg, 0.7
    )
    # float32 too: every chunk's F'y is accumulated in float64, as the in-memory row blocks are.
    tol = 1e-8
    assert _rel(ref.z, got.z) <= tol
    assert got.mu == pytest.approx(ref.mu, rel=tol)
    assert got.objective == pytest.approx(ref.objective, rel=tol)


@pytest.mark.usefixtures("dask_client")
def test_squared_hinge_svm_matches_in_memory_and_keeps_n_vectors_on_the_workers():
    F, y, s = _factor()
    reg = np.where(s > 0, 1e-3, 3e-3)
    ref = lowrank.squared_hinge_svm(F, y, reg)
    # y with other chunks than F: realigned, not refused.
    got = lowrank.squared_hinge_svm(
        da.from_array(F, chunks=CHUNKS), da.from_array(y, chunks=1000), reg
    )
    assert ref.n_iter > 1  # the line search ran
    assert got.converged and got.n_iter == ref.n_iter
    assert _rel(ref.z, got.z) <= 1e-8
    assert got.intercept == pytest.approx(ref.intercept, rel=1e-8)
    assert got.objective == pytest.approx(ref.objective, rel=1e-8)
    assert isinstance(got.active, da.Array)
    np.testing.assert_array_equal(got.active.compute(), ref.active)


@pytest.mark.parametrize("seed", range(40))
def test_distributed_line_search_equals_the_sorted_walk(monkeypatch, seed):
    # Three order statistics per chunk force several bracketing rounds.
    monkeypatch.setattr(lowrank, "_SEARCH_SAMPLES", 3)
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 400))
    a, c = rng.normal(size=m), rng.normal(size=m)
    if seed % 3 == 0:
        a[: m // 3] = 0.0  # terms at the kink at t = 0
    if seed % 5 == 0:
        c[: m // 4] = 0.0  # terms that do not move
    q0, q1 = 3.0 * rng.normal(), abs(rng.normal()) * (seed % 2)
    ref = lowrank.exact_line_search(a, c, q0, q1)
    chunks = max(1, m // 5)
    rows = as_factor(da.from_array(np.zeros((m, 1)), chunks=(chunks, 1)))  # the row chunks
    got = lowrank._exact_line_search_rows(
        rows, da.from_array(a, chunks=chunks), da.from_array(c, chunks=chunks), q0, q1
    )
    assert got == pytest.approx(ref, rel=1e-12, abs=1e-14)


def test_bad_targets_are_refused():
    F, y, s = _factor(n=700)
    Fd = da.from_array(F, chunks=300)
    with pytest.raises(ValueError, match="y has shape \\(699,\\) but X has 700 rows"):
        lowrank.lowrank_krein_ridge(Fd, s, y[:-1], lambda_plus=0.1, lambda_minus=0.1)
    yd = da.from_array(y, chunks=300)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        lowrank.squared_hinge_svm(Fd, yd[yd > -5], np.ones(F.shape[1]))
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        lowrank.squared_hinge_svm(Fd[Fd[:, 0] > -50], y, np.ones(F.shape[1]))
    bad = F.copy()
    bad[5, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or inf"):
        lowrank.lowrank_krein_ridge(
            da.from_array(bad, chunks=300), s, y, lambda_plus=0.1, lambda_minus=0.1
        )


# ------------------------------------------------------------------------------ estimators

KERNEL = {"kernel": "sigmoid", "gamma": 0.2, "coef0": -0.3, "n_components": 40}


def _data(n=2503, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    target = X[:, 0] - 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    labels = np.where(target > 0, "pos", "neg")
    return X, target, labels


ESTIMATORS = [
    (models.KreinKernelRidge(**KERNEL, center=True, random_state=3), "regression"),
    (models.KreinRegressor(**KERNEL, random_state=3), "regression"),
    (models.KreinRegressor(**KERNEL, formulation="square", random_state=3), "regression"),
    pytest.param(
        models.KreinSquaredHingeSVC(**KERNEL, center=True, random_state=3),
        "labels",
        marks=pytest.mark.slow,  # ~10 s: some 30 passes, each a round trip to the scheduler
    ),
    (models.KreinKernelRidgeClassifier(**KERNEL, random_state=3), "labels"),
    (models.KreinClassifier(**KERNEL, random_state=3), "labels"),
]


def _scores(est, X):
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


@pytest.mark.parametrize(
    ("estimator", "kind"), ESTIMATORS, ids=lambda e: getattr(type(e), "__name__", e)
)
@pytest.mark.usefixtures("dask_client")
def test_estimator_on_a_cluster_matches_in_memory_fit(estimator, kind):
    X, target, labels = _data()
    y = target if kind == "regression" else labels
    ref = clone(estimator).fit(X, y)
    Xd = da.from_array(X, chunks=CHUNKS)
    est = clone(estimator).fit(Xd, da.from_array(y, chunks=CHUNKS))
    # Feature columns are eigenvectors: defined up to sign, and so are the coefficients.
    assert _rel(np.abs(ref.coef_), np.abs(est.coef_)) <= 1e-8
    scores = _scores(est, Xd)
    assert isinstance(scores, da.Array) and scores.chunks[0] == Xd.chunks[0]
    assert _rel(_scores(ref, X), scores.compute()) <= 1e-8
    predicted = est.predict(Xd)
    assert isinstance(predicted, da.Array)
    computed = predicted.compute()
    if kind == "labels":
        np.testing.assert_array_equal(computed, ref.predict(X))
    # Fitted on the cluster: pickles and predicts numpy input in memory.
    again = pickle.loads(pickle.dumps(est))
    in_memory = again.predict(X)
    assert isinstance(in_memory, np.ndarray)
    if kind == "labels":
        np.testing.assert_array_equal(in_memory, computed)
    else:
        np.testing.assert_allclose(in_memory, computed, rtol=1e-12, atol=1e-12)


def test_estimator_on_the_local_scheduler_without_client():
    from indefsvm.utils.dask_rows import active_client

    assert active_client() is None
    X, _, labels = _data(n=1201)
    est = models.KreinSquaredHingeSVC(**KERNEL, random_state=1)
    ref = clone(est).fit(X, labels)
    got = est.fit(da.from_array(X, chunks=400), labels)  # numpy y with a dask X
    assert _rel(np.abs(ref.coef_), np.abs(got.coef_)) <= 1e-8
    np.testing.assert_array_equal(
        got.predict(da.from_array(X, chunks=400)).compute(), ref.predict(X)
    )


def test_estimator_bad_input():
    X, target, labels = _data(n=900)
    Xd = da.from_array(X, chunks=400)
    with pytest.raises(ValueError, match="y has 899 targets but the kernel has 900 rows"):
        models.KreinKernelRidge(**KERNEL).fit(Xd, target[:-1])
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        models.KreinKernelRidge(**KERNEL).fit(Xd[Xd[:, 0] > -50], target)
    three = np.array(["a", "b", "c"])[np.arange(900) % 3]
    with pytest.raises(ValueError, match="exactly two classes; got 3"):
        models.KreinSquaredHingeSVC(**KERNEL).fit(Xd, da.from_array(three, chunks=400))
    K = np.tanh(X[:50] @ X[:50].T)
    with pytest.raises(ValueError, match="kernel='precomputed' with a dask array"):
        models.KreinKernelRidge(kernel="precomputed", n_components=10).fit(
            da.from_array(K, chunks=20), target[:50]
        )


def test_one_progress_bar_counts_the_chunks_of_every_pass(monkeypatch):
    from indefsvm.utils import dask_rows

    F, y, s = _factor(n=900)
    Fd = da.from_array(F, chunks=200)  # 5 chunks
    with dask_rows.fit_progress("fit", enabled=True) as bar:
        with dask_rows.fit_progress("inner", enabled=True) as inner:
            assert inner is bar  # nested fits share the outer bar
        lowrank.lowrank_krein_ridge(Fd, s, y, lambda_plus=0.1, lambda_minus=0.1)
        assert bar.n == 2 * Fd.npartitions  # the Gram pass and the F'y pass

    shown = []
    monkeypatch.setattr(dask_rows, "progress_bar", lambda *a, **k: shown.append(k) or bar)
    X, target, _ = _data(n=900)
    models.KreinKernelRidge(**KERNEL).fit(da.from_array(X, chunks=400), target)
    assert len(shown) == 1 and shown[0]["desc"] == "KreinKernelRidge fit"


@pytest.mark.slow  # ~40 s on the loaded 2-core machine: two worker processes start and import
def test_fit_on_worker_processes_matches_in_memory():
    # Worker processes serialise every summary (the in-process cluster above does not): the
    # client must solve with what arrives (possibly unaligned buffers) and the workers must
    # unpickle the kernel rows and the Nystroem map.
    from distributed import LocalCluster

    X, _, labels = _data(n=1500)
    est = models.KreinSquaredHingeSVC(**KERNEL, center=True, random_state=2)
    ref = clone(est).fit(X, labels)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as local,
        distributed.Client(local),
    ):
        Xd = da.from_array(X, chunks=400)
        got = est.fit(Xd, da.from_array(labels, chunks=400))
        scores = got.decision_function(Xd).compute()
    assert _rel(np.abs(ref.coef_), np.abs(got.coef_)) <= 1e-8
    assert _rel(ref.decision_function(X), scores) <= 1e-8


@pytest.mark.usefixtures("dask_client")
@pytest.mark.parametrize("cls", [models.SimilarityRidge, models.SimilarityRidgeClassifier])
def test_sf_lsm_on_a_cluster_matches_scikit_learn_ridge(cls):
    X, target, labels = _data()
    y = target if cls is models.SimilarityRidge else labels
    est = cls(**KERNEL, lam=1e-3, random_state=3)
    ref = clone(est).fit(X, y)  # scikit-learn's Ridge on the in-memory landmark similarities
    Xd = da.from_array(X, chunks=CHUNKS)
    got = clone(est).fit(Xd, da.from_array(y, chunks=CHUNKS))
    assert _rel(ref.ridge_.coef_, got.ridge_.coef_) <= 1e-8
    assert got.ridge_.intercept_ == pytest.approx(ref.ridge_.intercept_, rel=1e-8, abs=1e-12)
    scores = (
        got.decision_function(Xd) if cls is models.SimilarityRidgeClassifier else got.predict(Xd)
    )
    assert isinstance(scores, da.Array) and scores.chunks[0] == Xd.chunks[0]
    expected = (
        ref.decision_function(X) if cls is models.SimilarityRidgeClassifier else ref.predict(X)
    )
    assert _rel(expected, scores.compute()) <= 1e-8
    again = pickle.loads(pickle.dumps(got))
    np.testing.assert_array_equal(again.predict(X), got.predict(Xd).compute())


def test_full_rank_models_refuse_dask_arrays():
    X, target, _ = _data(n=300)
    with pytest.raises(ValueError, match="a dask array needs the low-rank model"):
        models.KreinKernelRidge(kernel="sigmoid").fit(da.from_array(X, chunks=100), target)
    fitted = models.KreinKernelRidge(kernel="sigmoid").fit(X, target)
    with pytest.raises(ValueError, match="a dask array needs the low-rank model"):
        fitted.predict(da.from_array(X, chunks=100))
