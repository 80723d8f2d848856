"""SIQCLP with the QCLP (13) compiled once (``compile="parametric"``, issue 14 item 4).

The parametric problem is a DPP problem whose constraint slots hold the collected kernels'
factors as ``cvxpy.Parameter`` values; unused slots are neutralised by their parameter values.
These tests check it against independent references (the SDP of problem (3), the projected
gradient, the rebuilt QCLP) and count the canonicalisations cvxpy actually performs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import kind_problem, sigmoid_problem
from cvxpy.reductions.dcp2cone.dcp2cone import Dcp2Cone
from reference import sdp_optimum
from sklearn.exceptions import ConvergenceWarning

import indefsvm


@pytest.fixture
def count_canonicalisations(monkeypatch):
    """Count cvxpy's DCP-to-cone canonicalisations (what compiling a problem costs)."""
    calls = {"n": 0}
    original = Dcp2Cone.apply

    def counting(self, *args, **kwargs):
        calls["n"] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Dcp2Cone, "apply", counting)
    return calls


def test_parametric_matches_sdp_and_compiles_once(count_canonicalisations):
    K0, y = sigmoid_problem(12, 0)
    opt, _ = sdp_optimum(K0, y, 1.0, 1.0)
    count_canonicalisations["n"] = 0  # the reference SDP above was canonicalised too
    res = indefsvm.solve(
        K0, y, C=1.0, rho=1.0, method="siqclp", master="qclp", tol=1e-6, compile="parametric"
    )
    assert res.converged
    assert res.objective <= opt + 1e-6 * abs(opt)
    assert res.upper_bound >= opt - 1e-6 * abs(opt)
    assert opt - res.objective <= 2e-6 * max(1.0, abs(opt))
    info = res.info
    assert info["compile"] == "parametric"
    # slots come in blocks of 8 and the factors have at most n = 12 columns: one compilation
    # per block of kernels reached, however many QCLPs were solved
    assert info["n_compilations"] == -(-info["max_constraints"] // 8) < res.n_iter
    assert count_canonicalisations["n"] == info["n_compilations"]
    assert info["time_qclp"] >= info["time_solver"] > 0 and info["time_compile"] > 0


def test_rebuild_compiles_every_iteration(count_canonicalisations):
    """The counter itself can fail: the rebuilt QCLP is canonicalised once per iteration."""
    K0, y = sigmoid_problem(10, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = indefsvm.solve(K0, y, method="siqclp", master="qclp", tol=1e-12, max_iter=4)
    assert res.n_iter == 4 and res.info["n_compilations"] == 4
    assert count_canonicalisations["n"] == 4


@pytest.mark.parametrize("n_iter", [1, 3, 6])
def test_parametric_qclp_equals_rebuilt_qclp(n_iter):
    """Same kernels, same QCLP (13): the neutralised slots change neither t nor alpha."""
    K0, y = sigmoid_problem(14, 2)
    runs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for mode in ("rebuild", "parametric"):
            runs.append(
                indefsvm.solve(
                    K0, y, C=0.5, rho=2.0, method="siqclp", master="qclp", tol=1e-12,
                    max_iter=n_iter, compile=mode,
                )
            )  # fmt: skip
    a, b = runs
    t_a, t_b = a.info["relaxation_value"], b.info["relaxation_value"]
    # (pruning may differ where a multiplier is within the solvers' accuracy of prune_tol)
    assert t_b == pytest.approx(t_a, rel=1e-6, abs=1e-6)


def test_built_once_within_one_block(count_canonicalisations):
    """At most 8 kernels (one block of slots): six QCLPs, one canonicalisation."""
    K0, y = sigmoid_problem(16, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = indefsvm.solve(
            K0, y, C=1.0, rho=1.0, method="siqclp", master="qclp", tol=1e-12, max_iter=6,
            compile="parametric",
        )  # fmt: skip
    assert res.n_iter == 6 and res.info["max_constraints"] <= 8
    assert res.info["n_compilations"] == 1
    assert count_canonicalisations["n"] == 1


@pytest.mark.parametrize(
    "kind,kwargs",
    [
        pytest.param("svr", {"C": 1.0, "epsilon": 0.1}, marks=pytest.mark.slow),
        ("oneclass", {"nu": 0.3}),
        ("svc", {"rho": "vec"}),
    ],
)
def test_parametric_other_problem_kinds_agree_with_pg(kind, kwargs):
    K0, y, rho = kind_problem(kind, 12, 8, vector_rho=kwargs.get("rho") == "vec")
    kwargs = dict(kwargs) if rho is None else {**kwargs, "rho": rho}
    pg = indefsvm.solve(K0, y, problem=kind, tol=1e-10, max_iter=50000, **kwargs)
    res = indefsvm.solve(
        K0,
        y,
        problem=kind,
        method="siqclp",
        master="qclp",
        tol=1e-5,
        compile="parametric",
        **kwargs,
    )
    assert res.converged
    assert res.objective <= pg.upper_bound + 1e-9
    assert pg.objective - res.objective <= res.gap + 1e-9
    assert np.isfinite(res.info["time_qclp"])


def test_large_parametric_problem_warns(monkeypatch):
    """Compiling dense parameter factors can exhaust memory at n = 300: the user is warned."""
    import indefsvm.proxy.solvers.siqclp as siqclp

    monkeypatch.setattr(siqclp, "PARAMETRIC_WARN_SIZE", 100)
    K0, y = sigmoid_problem(10, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(ResourceWarning, match="compile='rebuild'"):
            indefsvm.solve(K0, y, method="siqclp", master="qclp", max_iter=2, compile="parametric")
