"""Issue 22 on low-rank problems: SIQCLP/ACCPM within DENSE_LIMIT (item 9), LIBSVM checks refused
before solving (item 14), overflow and JSON of a factored kernel (item 16), and the certified gap
when f(0) swamps the alpha-dependent part (item 1) on the factored operator.

References are independent of the low-rank code: the dense kernel ``K0 = Phi diag(s) Phi'`` solved
by the dense problem (itself checked against cvxpy elsewhere), and a 60-digit mpmath evaluation.
"""

from __future__ import annotations

import functools
import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import indefsvm
from indefsvm.proxy import lowrank
from indefsvm.proxy.lowrank import LowRankKernel
from indefsvm.proxy.solvers._monitor import UNCERTIFIED_STATUSES


def factor(n: int = 50, m: int = 6, seed: int = 3):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(n, m)) / np.sqrt(m)
    s = np.array([1.0, 1.0, 1.0, -1.0, -1.0, 1.0])[:m]
    K = (Phi * s) @ Phi.T
    return Phi, s, 0.5 * (K + K.T), rng


def targets(kind: str, n: int, rng):
    if kind == "svc":
        return np.where(rng.normal(size=n) > 0, 1, -1)
    if kind == "svr":
        return np.sin(np.arange(n) / 3.0)
    return None


# -- item 9: SIQCLP (and ACCPM) on a low-rank problem within DENSE_LIMIT --------------------------
@functools.cache
def dense_reference(kind: str):
    """The dense kernel ``Phi diag(s) Phi'`` solved by PG to a tight certified gap."""
    Phi, s, K, rng = factor()
    return indefsvm.solve(
        K, targets(kind, K.shape[0], rng), problem=kind, method="pg", tol=1e-9, max_iter=50000
    )


@pytest.mark.parametrize("method", ["siqclp", "accpm"])
@pytest.mark.parametrize("kind", ["svc", "svr", "oneclass"])
def test_cutting_plane_solvers_on_low_rank_agree_with_the_dense_kernel(kind, method):
    Phi, s, K, rng = factor()
    y = targets(kind, K.shape[0], rng)
    # was: AttributeError: 'LowRankProxyOperator' object has no attribute 'eigenvectors'
    res = indefsvm.solve(LowRankKernel(Phi, s), y, problem=kind, method=method, tol=1e-6)
    ref = dense_reference(kind)
    assert ref.converged
    assert res.status == "converged", res.message
    scale = max(1.0, abs(ref.objective - ref.baseline_objective))
    # certified: 0 <= gap <= tol * scale, and the optimum lies in both results' brackets
    assert 0.0 <= res.gap <= 1e-6 * scale * (1 + 1e-6)
    assert res.objective <= ref.upper_bound + 1e-9 * scale
    assert ref.objective <= res.objective + res.gap + 1e-9 * scale
    assert res.baseline_objective == pytest.approx(ref.baseline_objective, rel=1e-10)


def test_siqclp_low_rank_uses_the_dense_view_once():
    Phi, s, K, rng = factor()
    problem = indefsvm.make_problem("svc", LowRankKernel(Phi, s), targets("svc", 50, rng))
    d, V = problem.working_eigh
    assert problem.working_eigh[1] is V  # computed once
    np.testing.assert_allclose(d, np.linalg.eigvalsh(K), atol=1e-12)
    np.testing.assert_allclose((V * d) @ V.T, K, atol=1e-12)


def test_dense_view_is_refused_above_the_limit(monkeypatch):
    Phi, s, K, rng = factor()
    problem = indefsvm.make_problem("svc", LowRankKernel(Phi, s), targets("svc", 50, rng))
    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 10)
    with pytest.raises(ValueError, match="eigendecomposition of K0"):
        problem.working_eigh  # noqa: B018


# -- item 14: a LIBSVM check that cannot run is refused before any iteration -----------------------
def test_low_rank_oneclass_libsvm_check_refused_before_solving(monkeypatch):
    Phi, s, K, rng = factor(n=30)
    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 10)
    calls = []
    from indefsvm.proxy.problems import OneClassProblem

    evaluate = OneClassProblem.evaluate

    def spy(self, *args, **kwargs):
        calls.append(1)
        return evaluate(self, *args, **kwargs)

    monkeypatch.setattr(OneClassProblem, "evaluate", spy)
    with pytest.raises(ValueError, match="libsvm_every .* one-class problem"):
        indefsvm.solve(LowRankKernel(Phi, s), problem="oneclass", libsvm_every=5)
    assert calls == []  # nothing was solved and thrown away
    # the other problem types have the linear (LIBLINEAR) check above the limit: they run
    for kind in ("svc", "svr", "perturb"):
        Phi_k, s_k = (np.abs(Phi), np.ones(6)) if kind == "perturb" else (Phi, s)
        y = targets("svc" if kind == "perturb" else kind, 30, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = indefsvm.solve(
                LowRankKernel(Phi_k, s_k), y, problem=kind, libsvm_every=5, tol=1e-4, max_iter=20
            )
        assert np.isfinite(res.libsvm_upper_bound), kind
    # and one-class without the check runs above the limit (pg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        indefsvm.solve(LowRankKernel(Phi, s), problem="oneclass", max_iter=5)


# -- item 16: overflow, to_json ---------------------------------------------------------------
def test_overflowing_factor_gets_the_dense_paths_kind_of_message():
    Phi, s, K, rng = factor(n=30)
    y = targets("svc", 30, rng)
    with pytest.raises(ValueError, match="overflow double precision") as dense:
        indefsvm.solve(K * 1e160, y)
    with pytest.raises(ValueError, match="overflow double precision.*Rescale") as low:
        indefsvm.solve(LowRankKernel(Phi * 1e160, s), y)
    assert "Rescale" in str(dense.value)
    # the same for a factor that is finite but whose kernel is not
    with pytest.raises(ValueError, match="overflow"):
        indefsvm.solve(LowRankKernel(Phi * 1e75, s), y)
    assert "LinAlgError" not in type(low.value).__name__


def test_to_json_with_the_kernel_of_a_low_rank_result(tmp_path):
    Phi, s, K, rng = factor(n=30)
    y = targets("svc", 30, rng)
    res = indefsvm.solve(LowRankKernel(Phi, s), y, tol=1e-6)
    path = tmp_path / "res.json"
    res.to_json(path, include_kernel=True)  # was a raw TypeError
    kernel = json.loads(path.read_text())["kernel"]
    assert kernel["format"] == "factor"
    F = np.asarray(kernel["features"])
    assert F.shape[0] == 30 and F.shape[1] <= 7
    # the factor gives K* = (K0 + u u' / (4 rho))_+ (Theorem 1, rho = 1), by a dense eigh here
    u = y * res.alpha
    lam, V = np.linalg.eigh(K + np.outer(u, u) / 4.0)
    K_star = (V * np.maximum(lam, 0.0)) @ V.T
    np.testing.assert_allclose(F @ F.T, K_star, atol=1e-10)


# -- item 1 on the factored operator: f(0) must not swamp the certified gap ------------------------
@pytest.mark.parametrize("method", ["pg", "accpm", "siqclp"])
def test_low_rank_certified_gap_is_confirmed_by_a_60_digit_reference(method):
    mp = pytest.importorskip("mpmath")  # noqa: F841
    from mp_reference import mp_excess, mp_kernel

    # the reproducer (kernel ~1e5, rho = 1) as an exact-rank factor of rank 8 < n = 12
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=12) > 0, 1, -1)
    K = 9e4 * np.tanh(0.8 * X @ X.T - 0.5)
    d, V = np.linalg.eigh(0.5 * (K + K.T))
    keep = np.argsort(-np.abs(d))[:8]
    Phi, s = V[:, keep] * np.sqrt(np.abs(d[keep])), np.sign(d[keep])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = indefsvm.solve(LowRankKernel(Phi, s), y, rho=1.0, method=method, tol=1e-6)
    K_mp = mp_kernel(factor=(Phi, s))
    excess, ub_excess = mp_excess(K_mp, y, res.alpha, 1.0)
    # a long dense-kernel PG run gives a point at least as good: OPT - f(0) >= its excess
    ref = indefsvm.solve((Phi * s) @ Phi.T, y, rho=1.0, tol=1e-9, max_iter=20000)
    best = max(excess, mp_excess(K_mp, y, ref.alpha, 1.0)[0])
    if res.status == "converged":
        assert res.gap >= 0.0
        assert float(best - excess) <= res.gap + res.gap_error
        assert res.gap <= float(ub_excess - excess) + res.gap_error + 1e-12
    else:
        assert res.status in UNCERTIFIED_STATUSES
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
