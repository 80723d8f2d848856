"""IndefiniteNystroem on row-chunked dask arrays (issue 25), against the in-memory fit."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest
from helpers import dask_client, dask_cluster  # noqa: F401 - pytest fixtures

from indefsvm.approximation.nystrom import IndefiniteNystroem

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

KERNEL = {"kernel": "sigmoid", "gamma": 0.15, "coef0": -0.4}


def _data(n=2350, d=4, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return X, da.from_array(X, chunks=500)  # uneven last chunk (350 rows)


def _align(A, B):
    """``B`` with its columns' signs matched to ``A`` (eigenvectors are defined up to sign)."""
    return B * np.sign(np.sum(A * B, axis=0))


@pytest.mark.parametrize("factorization", ["one-shot", "plain"])
@pytest.mark.usefixtures("dask_client")
def test_fit_transform_matches_in_memory_fit(factorization):
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


@pytest.mark.usefixtures("dask_client")
def test_plain_map_beyond_the_bound_refits_one_shot_as_in_memory():
    """A saturated sigmoid (integer features): the plain map's check runs on the workers and
    refits one-shot as the in-memory fit does, with the same warning and map."""
    from sklearn.datasets import make_classification

    X, _ = make_classification(n_samples=3000, n_features=20, random_state=0)
    X = (X * 10).astype(int).astype(float)
    params = {"kernel": "sigmoid", "n_components": 10, "random_state": 18}
    ref = IndefiniteNystroem(**params)
    with pytest.warns(UserWarning, match="nearly singular"):
        P = ref.fit_transform(X)
    ny = IndefiniteNystroem(**params)
    with pytest.warns(UserWarning, match="nearly singular"):
        Pd = np.asarray(ny.fit_transform(da.from_array(X, chunks=700)).compute())
    assert ref.factorization_ == ny.factorization_ == "one-shot"
    np.testing.assert_allclose(ny.eigenvalues_, ref.eigenvalues_, rtol=1e-8)
    K_ref = (P * ref.signature_) @ P.T
    K_got = (Pd * ny.signature_) @ Pd.T
    assert np.max(np.abs(K_got - K_ref)) <= 1e-8 * np.max(np.abs(K_ref))


@pytest.mark.usefixtures("dask_client")
def test_features_are_row_chunked_and_stay_on_the_workers():
    X, Xd = _data()
    Pd = IndefiniteNystroem(**KERNEL, n_components=40, random_state=1).fit_transform(Xd)
    assert isinstance(Pd, da.Array)
    assert Pd.chunks[0] == Xd.chunks[0]
    # Persisted: one future per chunk, no kernel evaluation left in the graph.
    assert len(distributed.futures_of(Pd)) == Pd.npartitions
    assert len(Pd.dask) == Pd.npartitions
    T = IndefiniteNystroem(**KERNEL, n_components=40, random_state=1).fit(Xd).transform(Xd)
    assert len(distributed.futures_of(T)) == T.npartitions


@pytest.mark.usefixtures("dask_client")
def test_float32_features():
    X, Xd = _data()
    params = {**KERNEL, "n_components": 50, "random_state": 2}
    P = IndefiniteNystroem(**params).fit_transform(X)
    Pd = IndefiniteNystroem(**params, dtype="float32").fit_transform(Xd)
    assert Pd.dtype == np.float32
    got = np.asarray(Pd.compute())
    assert got.dtype == np.float32
    assert np.max(np.abs(_align(P, got.astype(np.float64)) - P)) <= 1e-6 * np.max(np.abs(P))


@pytest.mark.usefixtures("dask_client")
def test_fitted_map_pickles_and_transforms_numpy():
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


def test_kmeanspp_landmarks_are_refused_with_the_alternatives():
    _, Xd = _data(n=600)
    with pytest.raises(ValueError, match=r"not available for a dask X.*\('uniform', 'leverage'\)"):
        IndefiniteNystroem(**KERNEL, n_components=10, landmarks="kmeans++").fit(Xd)


@pytest.mark.usefixtures("dask_client")
def test_leverage_landmarks_on_a_dask_array():
    X, Xd = _data()
    params = {**KERNEL, "n_components": 40, "random_state": 3, "landmarks": "leverage"}
    ref = IndefiniteNystroem(**params).fit(X)
    ny = IndefiniteNystroem(**params).fit(Xd)
    # The same sketch as in memory (same seed); the weighted draw is another sample.
    np.testing.assert_array_equal(ny.sketch_landmarks_, ref.sketch_landmarks_)
    assert np.unique(ny.landmarks_).size == 40 and ny.landmarks_.max() < X.shape[0]
    np.testing.assert_array_equal(IndefiniteNystroem(**params).fit(Xd).landmarks_, ny.landmarks_)
    # The map on those landmarks is the in-memory map on the same landmarks.
    explicit = {**KERNEL, "landmarks": ny.landmarks_}
    P = IndefiniteNystroem(**explicit).fit_transform(X)
    got = _align(P, ny.transform(Xd).compute())
    assert np.max(np.abs(got - P)) <= 1e-10 * np.max(np.abs(P))


@pytest.mark.parametrize(
    ("weights", "m"), [([0.5, 1.0, 2.0, 3.0, 0.0, 4.0, 0.2], 3), ([0.0, 0.0, 1.0, 0.0, 0.0], 2)]
)
def test_weighted_keys_sample_like_numpy_choice(weights, m):
    # Inclusion frequencies of the per-chunk keys merged across two chunks against numpy's
    # sequential choice(replace=False, p) (in memory: fewer positive weights than m take them
    # all and fill uniformly). 4000 draws: a frequency's standard error is <= 0.008.
    from indefsvm.approximation import nystrom

    w = np.asarray(weights)
    n, reps = w.size, 4000
    index = np.arange(n)
    rng = np.random.default_rng(0)
    ours = np.zeros(n)
    for _ in range(reps):
        seed = int(rng.integers(2**62))
        left = nystrom._block_top_keys(w[:3], index[:3], m, seed)
        right = nystrom._block_top_keys(w[3:], index[3:], m, seed)
        ours[nystrom._merge_top_keys(left, right, m)[2]] += 1
    theirs = np.zeros(n)
    for _ in range(reps):
        theirs[nystrom._sample_without_replacement(rng, n, m, w)] += 1
    assert ours.sum() == theirs.sum() == m * reps
    np.testing.assert_allclose(ours / reps, theirs / reps, atol=0.045)
    if np.count_nonzero(w) >= m:
        assert ours[w == 0].sum() == 0


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
