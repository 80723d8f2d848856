"""One problem class for dense and low-rank K0: the operator protocol and the solvers' needs.

Issue 23 item 2: ``make_operator`` is the one place that looks at the form of ``K0``; problems
talk to a :class:`~indefsvm.proxy.protocols.KernelOperator`; solvers declare ``needs`` and are
refused before any work where the operator lacks them. The references are independent: the dense
operator (an ``eigh`` of the n x n kernel) against the factored one (an m x m basis, theory.md §11).
"""

from __future__ import annotations

import numpy as np
import pytest

import indefsvm
from indefsvm.linalg.factor import LowRankKernel
from indefsvm.proxy import lowrank
from indefsvm.proxy.lowrank import LowRankProxyOperator
from indefsvm.proxy.operators import ProxyKernelOperator
from indefsvm.proxy.problems import PROBLEM_TYPES, make_operator, make_problem
from indefsvm.proxy.protocols import KernelOperator

KINDS = ("svc", "svr", "oneclass", "perturb")


def _factor(n=40, m=5, seed=0, psd=False):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(n, m))
    s = np.ones(m) if psd else np.array([1.0, 1.0, -1.0, 1.0, -1.0])[:m]
    return Phi, s, rng


def _targets(kind, n, rng):
    if kind == "oneclass":
        return None
    if kind == "svr":
        return rng.normal(size=n)
    return np.where(rng.normal(size=n) > 0, 1.0, -1.0)


def _pair(kind, vector_rho, n=40):
    Phi, s, rng = _factor(n=n, psd=kind == "perturb")
    y = _targets(kind, n, rng)
    rho = rng.uniform(0.3, 3.0, n) if vector_rho else 0.7
    lrk = LowRankKernel(Phi, s)
    low = make_problem(kind, lrk, y, rho=rho)
    dense = make_problem(kind, (Phi * s) @ Phi.T, y, rho=rho)
    return low, dense, rng


def test_both_operators_follow_the_protocol():
    Phi, s, _ = _factor()
    dense = make_operator((Phi * s) @ Phi.T, 0.25)
    low = make_operator(LowRankKernel(Phi, s), 0.25)
    assert type(dense) is ProxyKernelOperator and type(low) is LowRankProxyOperator
    assert isinstance(dense, KernelOperator) and isinstance(low, KernelOperator)
    assert not dense.low_rank and low.low_rank
    assert dense.provides >= {"n_by_n", "eigenbasis", "objective_only"}
    assert low.provides == {"n_by_n", "eigenbasis", "factor"}


def test_make_operator_refuses_options_of_the_other_form():
    Phi, s, _ = _factor()
    K = (Phi * s) @ Phi.T
    with pytest.raises(ValueError, match="^eigh does not apply to a LowRankKernel"):
        make_operator(LowRankKernel(Phi, s), 0.25, eigh=np.linalg.eigh(K))
    with pytest.raises(ValueError, match="^rcond applies to a LowRankKernel only"):
        make_operator(K, 0.25, rcond=1e-8)
    with pytest.raises(ValueError, match="^a precomputed eigh of K0 cannot be used with a vector"):
        make_operator(K, 0.25, eigh=np.linalg.eigh(K), row_scale=np.ones(K.shape[0]))


@pytest.mark.parametrize("vector_rho", [False, True], ids=["scalar_rho", "vector_rho"])
@pytest.mark.parametrize("kind", KINDS)
def test_one_class_per_problem_gives_the_dense_values_on_a_factor(kind, vector_rho):
    low, dense, rng = _pair(kind, vector_rho)
    assert type(low) is type(dense) is PROBLEM_TYPES[kind]
    assert low.low_rank and not dense.low_rank
    alpha = low.project(rng.uniform(0.0, 0.5, low.n))
    a, b = low.evaluate(alpha), dense.evaluate(alpha)
    scale = max(1.0, abs(b.objective))
    assert a.objective == pytest.approx(b.objective, abs=1e-9 * scale)
    assert a.upper_bound == pytest.approx(b.upper_bound, abs=1e-9 * scale)
    np.testing.assert_allclose(a.gradient, b.gradient, atol=1e-9 * np.abs(b.gradient).max())
    assert low.baseline_objective == pytest.approx(dense.baseline_objective, rel=1e-9, abs=1e-12)
    # the result kernel: a factor for the low-rank problem, the same matrix once densified
    K_low = low.kernel_from_state(a.state)
    assert isinstance(K_low, lowrank.LowRankProxyKernel)
    K_dense = dense.kernel_from_state(b.state)
    np.testing.assert_allclose(K_low.toarray(), K_dense, atol=1e-9 * np.abs(K_dense).max())


def test_perturb_on_a_factor_refuses_a_negative_signature():
    Phi, s, rng = _factor()
    y = _targets("svc", Phi.shape[0], rng)
    with pytest.raises(ValueError, match=r"^problem='perturb' \(PerturbSVM, paper 004 Sect"):
        make_problem("perturb", LowRankKernel(Phi, s), y)


def test_solvers_needs_are_checked_before_any_evaluation(monkeypatch):
    low, dense, _ = _pair("svc", False, n=30)
    calls = []
    evaluate = type(low).evaluate

    def spy(self, *args, **kwargs):
        calls.append(1)
        return evaluate(self, *args, **kwargs)

    monkeypatch.setattr(type(low), "evaluate", spy)
    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 10)  # n = 30 is now "large"
    assert low.operator.provides == {"factor"}
    for method in ("accpm", "siqclp"):
        with pytest.raises(ValueError, match=rf"^method='{method}' needs n x n matrices"):
            indefsvm.solve_problem(low, method=method)
    assert calls == []  # refused before the first evaluation
    # the same solvers run on the dense form, and on the factor below the limit
    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 5000)
    ref = indefsvm.solve_problem(dense, method="accpm", tol=1e-7)
    res = indefsvm.solve_problem(low, method="accpm", tol=1e-7)
    assert res.objective == pytest.approx(ref.objective, rel=1e-6)


def test_a_solver_needing_what_no_operator_provides_is_refused(monkeypatch):
    from indefsvm.proxy import api

    def teleporting_solver(problem, monitor):  # pragma: no cover - never runs
        raise AssertionError("a refused solver ran")

    teleporting_solver.needs = frozenset({"teleportation"})
    module = type(api)("fake_solvers")
    module.teleporting_solver = teleporting_solver
    monkeypatch.setitem(__import__("sys").modules, "fake_solvers", module)
    monkeypatch.setitem(api.SOLVERS, "teleport", "fake_solvers:teleporting_solver")
    low, dense, _ = _pair("svc", False, n=20)
    with pytest.raises(ValueError, match=r"^method='teleport' needs teleportation, which this"):
        indefsvm.solve_problem(dense, method="teleport")
    with pytest.raises(ValueError, match=r"^method='teleport' needs teleportation, which the"):
        indefsvm.solve_problem(low, method="teleport")


def test_feature_coef_needs_a_factor():
    low, dense, rng = _pair("svc", False)
    alpha = low.project(rng.uniform(0.0, 0.5, low.n))
    assert low.feature_coef(alpha).shape == (5,)
    message = (
        r"^feature_coef needs a factored kernel K0 = Phi diag\(s\) Phi' \(a LowRankKernel, e\.g\. "
        r"from IndefiniteNystroem\); this problem was built on a dense n x n K0\. Use "
        r"out_of_sample_rows with the new points' kernel rows instead\.$"
    )
    with pytest.raises(TypeError, match=message):
        dense.feature_coef(alpha)


def test_refusals_say_what_is_missing_and_the_way_out(monkeypatch):
    """``check_solver`` names every missing capability (the size limit first) and the way out;
    ``check_options`` refuses a LIBSVM check that only a linear (LIBLINEAR) form could run,
    above the limit, for the problems without one; all of it before any work."""
    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 10)
    low, dense, _ = _pair("svc", False)
    n_by_n = (
        "n x n matrices (ACCPM: the Newton system of its analytic centers; SIQCLP: dense "
        "kernels in its conic program)"
    )
    eigenbasis = "a dense eigendecomposition of K0"
    with pytest.raises(ValueError) as info:
        low.check_solver("siqclp", frozenset({"eigenbasis", "n_by_n", "teleport"}))
    assert str(info.value) == (
        f"method='siqclp' needs {n_by_n}; {eigenbasis}; teleport, which the low-rank problem "
        "forms only up to n = 10; here n = 40. Use method='pg' (O(nm) per iteration)."
    )
    with pytest.raises(ValueError) as info:
        dense.check_solver("x", frozenset({"factor"}))
    assert str(info.value) == (
        "method='x' needs a factored K0 (a LowRankKernel, e.g. Nystroem features and "
        "signature), which this problem's kernel operator (ProxyKernelOperator) does not "
        "provide. Use method='pg'."
    )
    for kind in ("svc", "svr", "perturb"):  # a linear check exists above the limit
        _pair(kind, False)[0].check_options(method="pg", libsvm_every=5)
    oneclass = _pair("oneclass", False)[0]
    oneclass.check_options(method="pg", libsvm_every=None)
    with pytest.raises(ValueError) as info:
        oneclass.check_options(method="pg", libsvm_every=5)
    assert str(info.value) == (
        "libsvm_every needs a LIBSVM check of the one-class problem on the n x n proxy kernel, "
        "which the low-rank problem forms only up to n = 10; here n = 40, and above the limit "
        "only classification and regression have the linear (LIBLINEAR) check. Leave "
        "libsvm_every=None: the certified gap does not need it."
    )
    monkeypatch.setattr(lowrank, "DENSE_LIMIT", 100)  # under the limit every check runs
    _pair("oneclass", False)[0].check_options(method="pg", libsvm_every=5)
