"""IndefiniteNystroem on row-chunked dask arrays (issue 25), against the in-memory fit."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest
from helpers import dask_local_cluster

from indefsvm.approximation.nystrom import IndefiniteNystroem

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

KERNEL = {"kernel": "sigmoid", "gamma": 0.15, "coef0": -0.4}


@pytest.fixture(scope="module")
def cluster():
    with dask_local_cluster() as local:
        yield local


@pytest.fixture
def client(cluster):
    with distributed.Client(cluster) as c:
        yield c


def _data(n=2350, d=4, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return X, da.from_array(X, chunks=500)  # uneven last chunk (350 rows)


def _align(A, B):
    """``B`` with its columns' signs matched to ``A`` (eigenvectors are defined up to sign)."""
    return B * np.sign(np.sum(A * B, axis=0))


@pytest.mark.parametrize("factorization", ["one-shot", "plain"])
def test_fit_transform_matches_in_memory_fit(client, factorization):
    X, Xd = _data()
    params = {**KERNEL, "n_components": 60, "random_state": 4, "factorization": factorization}
    ref = IndefiniteNystroem(**params)
    P = ref.fit_transform(X)
    ny = IndefiniteNystroem(**params)
    Pd = ny.fit_transform(Xd)
    np.testing.assert_array_equal(ny.landmarks_, ref.landmarks_)
    np.testing.assert_allclose(ny.eigenvalues_, ref.eigenvalues_, rtol=1e-10)
    np.testing.assert_array_equal(ny.signature_, ref.signature_)
    got = _align(P, np.asarray(Pd.compute()))
    assert np.max(np.abs(got - P)) <= 1e-10 * np.max(np.abs(P))
    K_ref = (P * ref.signature_) @ P.T
    K_got = (got * ny.signature_) @ got.T
    assert np.max(np.abs(K_got - K_ref)) <= 1e-10 * np.max(np.abs(K_ref))


def test_features_are_row_chunked_and_stay_on_the_workers(client):
    X, Xd = _data()
    Pd = IndefiniteNystroem(**KERNEL, n_components=40, random_state=1).fit_transform(Xd)
    assert isinstance(Pd, da.Array)
    assert Pd.chunks[0] == Xd.chunks[0]
    # Persisted: one future per chunk, no kernel evaluation left in the graph.
    assert len(distributed.futures_of(Pd)) == Pd.npartitions
    assert len(Pd.dask) == Pd.npartitions
    T = IndefiniteNystroem(**KERNEL, n_components=40, random_state=1).fit(Xd).transform(Xd)
    assert len(distributed.futures_of(T)) == T.npartitions


def test_float32_features(client):
    X, Xd = _data()
    params = {**KERNEL, "n_components": 50, "random_state": 2}
    P = IndefiniteNystroem(**params).fit_transform(X)
    Pd = IndefiniteNystroem(**params, dtype="float32").fit_transform(Xd)
    assert Pd.dtype == np.float32
    got = np.asarray(Pd.compute())
    assert got.dtype == np.float32
    assert np.max(np.abs(_align(P, got.astype(np.float64)) - P)) <= 1e-6 * np.max(np.abs(P))


def test_fitted_map_pickles_and_transforms_numpy(client):
    X, Xd = _data()
    ny = IndefiniteNystroem(**KERNEL, n_components=30, random_state=5).fit(Xd)
    again = pickle.loads(pickle.dumps(ny))
    X_new = np.random.default_rng(9).normal(size=(17, X.shape[1]))
    out = again.transform(X_new)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, ny.transform(da.from_array(X_new, chunks=5)).compute())


def test_local_scheduler_without_client():
    from indefsvm.utils.dask_rows import active_client

    assert active_client() is None
    X, Xd = _data(n=1203)
    params = {**KERNEL, "n_components": 30, "random_state": 7}
    P = IndefiniteNystroem(**params).fit_transform(X)
    Pd = IndefiniteNystroem(**params).fit_transform(Xd)
    assert isinstance(Pd, da.Array) and Pd.chunks[0] == Xd.chunks[0]
    assert np.max(np.abs(_align(P, Pd.compute()) - P)) <= 1e-10 * np.max(np.abs(P))


def test_explicit_landmarks_and_callable_kernel():
    X, Xd = _data(n=900)

    def kernel(A, B, scale=0.3):
        return np.tanh(scale * A @ B.T - 0.2)

    idx = np.arange(0, 900, 30)
    P = IndefiniteNystroem(kernel=kernel, landmarks=idx).fit_transform(X)
    Pd = IndefiniteNystroem(kernel=kernel, landmarks=idx).fit_transform(Xd).compute()
    assert np.max(np.abs(_align(P, Pd) - P)) <= 1e-10 * np.max(np.abs(P))


def test_unknown_chunk_sizes_are_refused():
    _, Xd = _data(n=600)
    Xn = Xd[Xd[:, 0] > -10]  # boolean indexing: NaN chunk sizes
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        IndefiniteNystroem(**KERNEL, n_components=10).fit(Xn)


@pytest.mark.parametrize("scheme", ["kmeans++", "leverage"])
def test_sequential_landmark_schemes_are_refused_with_the_alternatives(scheme):
    _, Xd = _data(n=600)
    with pytest.raises(ValueError, match=r"not available for a dask X.*\('uniform',\)"):
        IndefiniteNystroem(**KERNEL, n_components=10, landmarks=scheme).fit(Xd)


def test_transform_checks_the_number_of_features():
    _, Xd = _data(n=600)
    ny = IndefiniteNystroem(**KERNEL, n_components=10, random_state=0).fit(Xd)
    with pytest.raises(ValueError, match="X has 3 features, but IndefiniteNystroem was fitted"):
        ny.transform(Xd[:, :3])


def test_import_indefsvm_does_not_import_dask():
    code = (
        "import sys, indefsvm, indefsvm.approximation.nystrom, indefsvm.krein.models, "
        "indefsvm.krein.lowrank; assert 'dask' not in sys.modules, 'dask imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
