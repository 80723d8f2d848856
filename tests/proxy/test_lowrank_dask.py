"""The low-rank proxy-kernel SVM on a factor held by Dask workers (issue 25).

Reference: the same problems, solvers and estimators on the numpy factor in memory (the path
the rest of the suite checks against dense problems), and plain numpy products. The cluster is
a two-process ``LocalCluster`` (one thread each); some tests use Dask's local scheduler (no
Client). Row chunks are uneven (600, 600, 600, 200) so a chunk boundary is never a multiple of
anything the code could assume.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import indefsvm  # noqa: E402
from indefsvm.approximation.nystrom import IndefiniteNystroem  # noqa: E402
from indefsvm.linalg.factor import LowRankKernel  # noqa: E402
from indefsvm.proxy.estimators import (  # noqa: E402
    IndefiniteOneClassSVM,
    IndefiniteSVC,
    IndefiniteSVR,
)
from indefsvm.proxy.problems import make_problem  # noqa: E402

N, CHUNK, M = 2000, 600, 30
KERNEL = {"kernel": "sigmoid", "gamma": 0.2, "coef0": -1.0}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    with cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(N + 300, 5))
    f = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=N + 300)
    y = np.where(f > 0, 1.0, -1.0)
    nys = IndefiniteNystroem(n_components=M, random_state=0, **KERNEL).fit(X[:N])
    return X[:N], y[:N], X[N:], y[N:], nys.transform(X[:N]), nys.signature_


def local_scheduler():
    """Dask's threaded scheduler, even while the module's Client is the default one."""
    return dask.config.set(scheduler="threads")


def _solve(Phi, s, y, method, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a max_iter stop warns identically on both paths
        return indefsvm.solve(LowRankKernel(Phi, s), y, method=method, **kw)


def _same_result(r0, r1, alpha_rtol):
    assert r1.n_iter == r0.n_iter
    assert r1.status == r0.status
    scale = np.max(np.abs(r0.alpha))
    np.testing.assert_allclose(r1.alpha, r0.alpha, rtol=0, atol=alpha_rtol * scale)
    np.testing.assert_allclose(r1.objective, r0.objective, rtol=1e-11)
    assert abs(r1.gap - r0.gap) <= 1e-8 + 1e-3 * abs(r0.gap)
    assert r1.intercept == pytest.approx(r0.intercept, rel=1e-8, abs=1e-8)


def test_spectral_scale_of_a_dask_factor(data):
    """rho_scale="spectral" with a vector rho: ||K0||_2 from the Gram pass on the workers."""
    from indefsvm.linalg.spectrum import spectral_scale

    Phi, s = data[4], data[5]
    dense = np.max(np.abs(np.linalg.eigvalsh((Phi * s) @ Phi.T)))
    with local_scheduler():
        value = spectral_scale(LowRankKernel(da.from_array(Phi, chunks=(CHUNK, -1)), s))
    assert value == pytest.approx(dense, rel=1e-10)


# -- solves: the same result on the cluster as in memory -------------------------------------------
@pytest.mark.slow  # 20 s on a loaded 2-core machine (a pass is a cluster round trip)
@pytest.mark.parametrize(
    ("method", "rho", "kw", "alpha_rtol"),
    [
        ("lowrank_newton", 1.0, {"tol": 1e-8}, 1e-10),
        ("pg", 1.0, {"tol": 1e-4, "max_iter": 6}, 1e-11),
    ],
)
def test_solve_on_cluster_equals_numpy_factor(client, data, method, rho, kw, alpha_rtol):
    _, y, _, _, Phi, s = data
    r0 = _solve(Phi, s, y, method, C=1.0, rho=rho, **kw)
    r1 = _solve(da.from_array(Phi, chunks=(CHUNK, -1)), s, y, method, C=1.0, rho=rho, **kw)
    _same_result(r0, r1, alpha_rtol)
    assert r0.status == ("max_iter" if "max_iter" in kw else "converged")


def test_solve_vector_rho_local_scheduler_equals_numpy_factor(data):
    """A vector rho (the row scaling of every pass) on Dask's local scheduler (no Client)."""
    _, y, _, _, Phi, s = data
    rho = np.random.default_rng(1).uniform(0.5, 2.0, size=N)
    kw = {"C": 1.0, "rho": rho, "tol": 1e-5, "max_iter": 60}
    r0 = _solve(Phi, s, y, "pg", **kw)
    with local_scheduler():
        r1 = _solve(da.from_array(Phi, chunks=(CHUNK, -1)), s, y, "pg", **kw)
    _same_result(r0, r1, 1e-9)


def test_pass_counters_equal(data):
    _, y, _, _, Phi, s = data
    counts = []
    for F in (Phi, da.from_array(Phi, chunks=(CHUNK, -1))):
        with warnings.catch_warnings(), local_scheduler():
            warnings.simplefilter("ignore")
            problem = make_problem("svc", LowRankKernel(F, s), y, C=1.0, rho=1.0)
            indefsvm.solve_problem(problem, method="lowrank_newton", tol=1e-8)
        op = problem.operator
        counts.append((op.n_passes, op.n_gram_passes, op.n_linear_z))
    assert counts[0] == counts[1]
    assert counts[0][0] > 0 and counts[0][1] > 0


# -- estimators ----------------------------------------------------------------------------------
def _svc(**kw):
    return IndefiniteSVC(n_components=M, random_state=0, C=1.0, **KERNEL, **kw)


@pytest.mark.slow  # 20 s on a loaded 2-core machine (a pass is a cluster round trip)
def test_svc_dask_fit_predict_equals_numpy(client, data):
    X, y, Xt, _, _, _ = data
    labels = np.where(y > 0, "pos", "neg")
    m0 = _svc(solver="lowrank_newton", tol=1e-8).fit(X, labels)
    m1 = _svc(solver="lowrank_newton", tol=1e-8).fit(
        da.from_array(X, chunks=CHUNK), da.from_array(labels, chunks=CHUNK)
    )
    assert m1.n_iter_ == m0.n_iter_
    np.testing.assert_allclose(m1.feature_coef_, m0.feature_coef_, rtol=1e-9, atol=1e-12)
    assert m1.intercept_ == pytest.approx(m0.intercept_, rel=1e-9, abs=1e-12)
    Xt_dask = da.from_array(Xt, chunks=120)  # uneven: 120, 120, 60
    d1 = m1.decision_function(Xt_dask)
    p1 = m1.predict(Xt_dask)
    assert isinstance(d1, da.Array) and isinstance(p1, da.Array)
    assert d1.chunks == ((120, 120, 60),) and p1.chunks == ((120, 120, 60),)
    np.testing.assert_allclose(d1.compute(), m0.decision_function(Xt), rtol=1e-9, atol=1e-10)
    np.testing.assert_array_equal(p1.compute(), m0.predict(Xt))
    assert p1.dtype == m0.predict(Xt).dtype
    # The fitted model holds nothing of the cluster: it pickles and predicts numpy in memory.
    m2 = pickle.loads(pickle.dumps(m1))
    d2 = m2.decision_function(Xt)
    assert isinstance(d2, np.ndarray)
    np.testing.assert_allclose(d2, m0.decision_function(Xt), rtol=1e-9, atol=1e-10)


def test_svc_pg_local_scheduler_equals_numpy(data):
    X, y, Xt, _, _, _ = data
    kw = {"solver": "pg", "tol": 1e-4, "prediction_params": {"intercept": "paper"}}
    m0 = _svc(**kw).fit(X, y)
    with local_scheduler():
        m1 = _svc(**kw).fit(da.from_array(X, chunks=CHUNK), y)
        d1 = m1.decision_function(da.from_array(Xt, chunks=100)).compute()
    assert m1.n_iter_ == m0.n_iter_
    np.testing.assert_allclose(d1, m0.decision_function(Xt), rtol=1e-8, atol=1e-8)


def test_svr_and_one_class_on_dask_equal_numpy(data):
    """The other low-rank proxy estimators (local scheduler): same fit, dask out."""
    X, y, Xt, _, _, _ = data
    target = X[:, 0] + 0.1 * y
    common = {"n_components": M, "random_state": 0, "tol": 1e-3, "max_iter": 40, **KERNEL}
    Xd, Xtd = da.from_array(X, chunks=CHUNK), da.from_array(Xt, chunks=100)
    with warnings.catch_warnings(), local_scheduler():
        warnings.simplefilter("ignore")
        r0 = IndefiniteSVR(C=1.0, epsilon=0.1, **common).fit(X, target)
        r1 = IndefiniteSVR(C=1.0, epsilon=0.1, **common).fit(
            Xd, da.from_array(target, chunks=CHUNK)
        )
        o0 = IndefiniteOneClassSVM(nu=0.2, **common).fit(X)
        o1 = IndefiniteOneClassSVM(nu=0.2, **common).fit(Xd)
        pred = r1.predict(Xtd)
        assert isinstance(pred, da.Array)
        np.testing.assert_allclose(pred.compute(), r0.predict(Xt), rtol=1e-8, atol=1e-8)
        assert o1.offset_ == pytest.approx(o0.offset_, rel=1e-8, abs=1e-10)
        np.testing.assert_allclose(
            o1.decision_function(Xtd).compute(), o0.decision_function(Xt), rtol=1e-8, atol=1e-8
        )
        np.testing.assert_array_equal(o1.predict(Xtd).compute(), o0.predict(Xt))


# -- what is refused -----------------------------------------------------------------------------
def test_bad_dask_input_is_refused_with_reasons(data):
    X, y, Xt, _, Phi, s = data
    with local_scheduler():
        _check_refusals(X, y, Phi, s)


def _check_refusals(X, y, Phi, s):
    Xd = da.from_array(X, chunks=CHUNK)
    with pytest.raises(ValueError, match="rows but y has 1999"):
        _svc().fit(Xd, y[:-1])
    with pytest.raises(ValueError, match="precomputed"):
        IndefiniteSVC(n_components=M).fit(da.from_array(np.eye(N), chunks=CHUNK), y)
    with pytest.raises(ValueError, match="probability=True"):
        _svc(probability=True).fit(Xd, y)
    three = np.arange(N) % 3
    with pytest.raises(ValueError, match="fits one binary problem"):
        _svc().fit(Xd, three)
    unknown = da.from_array(Phi, chunks=(CHUNK, -1))
    unknown = unknown[da.from_array(np.ones(N, dtype=bool), chunks=CHUNK)]
    with pytest.raises(ValueError, match="unknown row chunk sizes"):
        LowRankKernel(unknown, s)
    bad = Phi.copy()
    bad[1234, 3] = np.nan
    with pytest.raises(ValueError, match="NaN or inf"):
        LowRankKernel(da.from_array(bad, chunks=(CHUNK, -1)), s)
    problem = make_problem(
        "svc", LowRankKernel(da.from_array(Phi, chunks=(CHUNK, -1)), s), y, rho=1.0
    )
    with pytest.raises(ValueError, match="accpm") as refusal:
        indefsvm.solve_problem(problem, method="accpm", max_iter=2)
    # the reason is the factor's place, not a size (before: "forms only up to n = 5000; here
    # n = 2000")
    assert "no n x n arrays at any n" in str(refusal.value)
    assert "5000" not in str(refusal.value)
    with pytest.raises(ValueError, match="Dask workers"):
        problem.operator.proxy_features(problem.state(np.zeros(N)))


def test_dask_prediction_refuses_test_test_block(data):
    X, y, Xt, _, _, _ = data
    model = _svc(solver="lowrank_newton").fit(X, y)
    with pytest.raises(ValueError, match="K_test_test"):
        model.decision_function(da.from_array(Xt, chunks=100), np.eye(len(Xt)))


def test_import_indefsvm_does_not_import_dask():
    code = (
        "import sys, indefsvm, indefsvm.proxy.estimators, indefsvm.proxy.lowrank, indefsvm.base;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=None)


@pytest.mark.parametrize("method", ["lowrank_newton", "pg"])
def test_float32_factor_on_dask_equals_numpy_float32_factor(data, method):
    """float32 storage: the numpy path's compiled float64-accumulating products against the
    workers' chunk-by-chunk conversion (local scheduler); the same stored values, same fit."""
    _, y, _, _, Phi, s = data
    Phi32 = Phi.astype(np.float32)
    kw = {"C": 1.0, "rho": 1.0, "tol": 1e-6, "max_iter": 40}
    r0 = _solve(Phi32, s, y, method, **kw)
    with local_scheduler():
        r1 = _solve(da.from_array(Phi32, chunks=(CHUNK, -1)), s, y, method, **kw)
    _same_result(r0, r1, 1e-9)


def test_dense_kernel_of_a_dask_factor_is_the_numpy_one(data):
    """``toarray`` (within DENSE_LIMIT) brings the factor's rows here once: the same n x n
    kernel as the in-memory factor, against ``Phi diag(s) Phi'`` formed directly."""
    _, _, _, _, Phi, s = data
    expected = (Phi * s) @ Phi.T
    with local_scheduler():
        K = LowRankKernel(da.from_array(Phi, chunks=(Phi.shape[0] // 3 + 1, -1)), s).toarray()
    assert isinstance(K, np.ndarray)
    np.testing.assert_allclose(K, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    np.testing.assert_allclose(LowRankKernel(Phi, s).toarray(), K, rtol=0, atol=0)


def test_training_rows_of_a_dask_fit_get_their_k_star_rows(data):
    """A training point passed to predict (as numpy or dask rows) gets (K* u)_i + b, as in
    memory: the fingerprints of a dask X are computed on its chunks."""
    X, y, _, _, _, _ = data
    with local_scheduler():
        m0 = _svc(tol=1e-8).fit(X, y)
        m1 = _svc(tol=1e-8).fit(da.from_array(X, chunks=CHUNK), y)
        d1 = m1.decision_function(da.from_array(X[:300], chunks=120)).compute()
    np.testing.assert_allclose(m1.train_scores_, m0.train_scores_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(d1, m0.train_scores_[:300] + m0.intercept_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(
        m1.decision_function(X[:300]), d1, rtol=0, atol=1e-12 * np.max(np.abs(d1))
    )


def test_n_components_above_n_warns_on_dask_too(data):
    X, y, _, _, _, _ = data
    small = da.from_array(X[:60], chunks=20)
    with local_scheduler(), pytest.warns(UserWarning, match=r"n_components = 80 > n = 60"):
        IndefiniteSVC(n_components=80, random_state=0, max_iter=3, **KERNEL).fit(small, y[:60])
