"""``method="auto"`` (the default): the policy's choices, and the same optimum as the references.

References are independent of the choice: the dense problem (the factor's n x n kernel with its
own eigendecomposition) solved by the projected gradient, and the named solvers themselves.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import indefsvm
from indefsvm.linalg.factor import LowRankKernel
from indefsvm.proxy.api import solve_problem
from indefsvm.proxy.estimators import IndefiniteOneClassSVM, IndefiniteSVC, IndefiniteSVR
from indefsvm.proxy.problems import make_problem


def factor_data(n: int = 120, m: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Phi = np.tanh(X @ rng.normal(size=(5, m)) / 2.0) / np.sqrt(m)
    s = np.where(np.arange(m) < m // 3, -1.0, 1.0)
    y = np.where(X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, Phi, s, y


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(*args, **kw)


def test_auto_is_the_default_of_solve_and_of_the_estimators():
    import inspect

    assert inspect.signature(indefsvm.solve).parameters["method"].default == "auto"
    assert inspect.signature(solve_problem).parameters["method"].default == "auto"
    for cls in (IndefiniteSVC, IndefiniteSVR, IndefiniteOneClassSVM, indefsvm.PerturbSVC):
        assert cls().solver == "auto", cls.__name__


def test_a_factored_classification_problem_gets_the_second_order_method_and_its_optimum():
    _, Phi, s, y = factor_data()
    res = indefsvm.solve(LowRankKernel(Phi, s), y, C=1.0, rho=1.0, tol=1e-9)
    assert res.method == "lowrank_newton" and res.status == "converged"
    assert "factored" in res.info["auto"]
    # Reference: the dense n x n kernel of the same factor, its own eigh, projected gradient.
    K0 = LowRankKernel(Phi, s).toarray()
    dense = indefsvm.solve(K0, y, C=1.0, rho=1.0, method="pg", tol=1e-10, max_iter=100000)
    assert abs(res.objective_excess - dense.objective_excess) <= 1e-7 * max(
        1.0, abs(dense.objective_excess)
    )


@pytest.mark.parametrize(
    "case, expected_reason",
    [
        ("dense", "dense"),
        ("svr", "problem='svr'"),
    ],
)
def test_everything_else_gets_the_projected_gradient(case, expected_reason):
    _, Phi, s, y = factor_data(60, 6)
    factor = LowRankKernel(Phi, s)
    if case == "dense":
        problem = make_problem("svc", factor.toarray(), y)
    else:
        problem = make_problem("svr", factor, y * 0.7)
    res = quiet(solve_problem, problem, tol=1e-5)
    assert res.method == "pg"
    assert expected_reason in res.info["auto"]


def test_options_narrow_the_choice_to_the_solvers_that_take_them():
    _, Phi, s, y = factor_data(60, 6)
    factor = LowRankKernel(Phi, s)
    # step is the projected gradient's option: auto does not pick the Newton method for it.
    res = quiet(indefsvm.solve, factor, y, options={"step": "paper"}, max_iter=50)
    assert res.method == "pg"
    res = quiet(indefsvm.solve, factor, y, options={"max_inner": 7}, tol=1e-6)
    assert res.method == "lowrank_newton"
    with pytest.raises(ValueError, match="options \\['max_inner'\\] are lowrank_newton's"):
        indefsvm.solve(factor.toarray(), y, options={"max_inner": 7})


def test_the_paper_preset_keeps_the_papers_projected_gradient():
    _, Phi, s, y = factor_data(60, 6)
    res = quiet(indefsvm.solve, LowRankKernel(Phi, s), y, options={"preset": "paper"}, max_iter=30)
    assert res.method == "pg"
    assert "preset='paper'" in res.info["auto"]


def test_estimators_at_defaults_run_the_policys_solver():
    X, _, _, y = factor_data(200, 8)
    kw = {"kernel": "sigmoid", "gamma": 0.3, "coef0": -0.5, "random_state": 0}
    low = quiet(IndefiniteSVC(n_components=30, **kw).fit, X, y)
    assert low.result_.method == "lowrank_newton"
    dense = quiet(IndefiniteSVC(**kw).fit, X, y)
    assert dense.result_.method == "pg"
    # The same classifier as the named solver (certified to the same tol).
    named = quiet(IndefiniteSVC(n_components=30, solver="pg", **kw).fit, X, y)
    assert np.mean(low.predict(X) == named.predict(X)) >= 0.99
    reg = quiet(IndefiniteSVR(n_components=30, **kw).fit, X, X[:, 0])
    assert reg.result_.method == "pg"


def test_one_vs_one_pairs_of_a_low_rank_fit_use_the_second_order_method():
    X, _, _, _ = factor_data(240, 8, seed=2)
    labels = np.digitize(X[:, 0], [-0.5, 0.5])
    kw = {"kernel": "sigmoid", "gamma": 0.3, "coef0": -0.5, "random_state": 0}
    clf = quiet(IndefiniteSVC(n_components=30, **kw).fit, X, labels)
    methods = {est.result_.method for est in clf.estimators_}
    assert methods == {"lowrank_newton"}


def test_cli_solve_defaults_to_auto(tmp_path):
    from indefsvm.cli import build_parser

    args = build_parser().parse_args(["solve", "k.npy", "y.txt"])
    assert args.method == "auto"


def _sigmoid_dense(n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 10))
    w = rng.normal(size=10)
    y = np.where(X @ w + 0.5 * rng.normal(size=n) * np.linalg.norm(w) > 0, 1.0, -1.0)
    return np.tanh(X @ X.T), y


@pytest.mark.parametrize("rho", [1e8, 1e10])
def test_near_the_clip_limit_one_exchange_certifies_the_projected_gradients_optimum(rho):
    """rho so large that K* = (K0)_+ to rounding: auto's SIQCLP probe (the SVM on the clipped
    kernel) certifies, and its objective is the projected gradient's (named, independent)."""
    K0, y = _sigmoid_dense()
    res = indefsvm.solve(K0, y, rho=rho, tol=1e-7)
    assert res.method == "siqclp" and res.status == "converged"
    assert "clip limit" in res.info["auto"]
    ref = quiet(indefsvm.solve, K0, y, rho=rho, method="pg", tol=1e-9, max_iter=100000)
    assert abs(res.objective_excess - ref.objective_excess) <= 2e-7 * max(
        1.0, abs(ref.objective_excess)
    )


@pytest.mark.parametrize("kind", ["oneclass", "vector_rho", "svr"])
def test_the_clip_probe_takes_every_kind_in_working_coordinates(kind):
    """One-class, a componentwise rho and SVR near the clip limit: the ratio is formed in the
    working coordinates (``u = u_coef * alpha``, the kernel ``Ds K0 Ds``), so the probe runs
    and certifies the projected gradient's optimum; a rho 1e8 times smaller is not probed."""
    K0, y = _sigmoid_dense()
    n = len(y)
    spread = np.geomspace(0.2, 5.0, n)[np.random.default_rng(1).permutation(n)]
    common = {"tol": 1e-7}
    if kind == "oneclass":
        args, kw = (K0, None), {"problem": "oneclass", "nu": 0.3}
    elif kind == "svr":
        args, kw = (K0, y * 0.5), {"problem": "svr", "epsilon": 0.1}
    else:
        args, kw = (K0, y), {}
    for rho, probed in ((1e10, True), (1e-2, False)):
        rho_arg = rho * spread if kind == "vector_rho" else rho
        # (far from the limit only the choice is checked: a few iterations)
        limit = {} if probed else {"max_iter": 20}
        res = quiet(indefsvm.solve, *args, rho=rho_arg, **kw, **common, **limit)
        assert ("clip limit" in res.info["auto"]) is probed, res.info["auto"]
        if not probed:
            assert res.method == "pg"
            continue
        assert res.status == "converged"
        if kind == "oneclass":
            # the one-class QP on (K0)_+ by cvxpy (the limit; the projected gradient needs
            # thousands of iterations here): min 1/2 ||L'a||^2, 1'a = 1, 0 <= a <= 1/(nu n)
            import cvxpy as cp

            lam, V = np.linalg.eigh(K0)
            L = V * np.sqrt(np.maximum(lam, 0.0))
            a = cp.Variable(n)
            qp = cp.Problem(
                cp.Minimize(0.5 * cp.sum_squares(L.T @ a)),
                [cp.sum(a) == 1, a >= 0, a <= 1 / (0.3 * n)],
            )
            qp.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12)
            expected, slack = -qp.value, 1e-8
        else:
            ref = quiet(
                indefsvm.solve, *args, rho=rho_arg, method="pg", tol=1e-7, max_iter=20000, **kw
            )
            expected, slack = ref.objective_excess, ref.gap
        assert abs(res.objective_excess - expected) <= res.gap + slack + 1e-9 * max(
            1.0, abs(expected)
        )


def test_a_probe_that_does_not_certify_hands_over_to_the_projected_gradient():
    """At the edge of the probe's range the one exchange does not certify (measured): the
    projected gradient continues from its point and certifies the optimum of a cold run."""
    from indefsvm.proxy.solvers.auto import CLIP_PROBE_RATIO, clip_ratio

    K0, y = _sigmoid_dense()
    problem = make_problem("svc", K0, y)
    rho = clip_ratio(problem) / CLIP_PROBE_RATIO  # the ratio at exactly the threshold
    res = indefsvm.solve(K0, y, rho=rho, tol=1e-8)
    assert res.status == "converged" and res.method == "pg"
    # the clipped kernel's SVM is 1.4e-4 from the optimum here (relative), far above tol
    assert res.info["probe"]["method"] == "siqclp"
    assert res.info["probe"]["status"] != "converged"
    ref = quiet(indefsvm.solve, K0, y, rho=rho, method="pg", tol=1e-10, max_iter=100000)
    assert abs(res.objective_excess - ref.objective_excess) <= 1e-7 * max(
        1.0, abs(ref.objective_excess)
    )
    # a problem far from the limit is not probed
    far = indefsvm.solve(K0, y, rho=1.0, tol=1e-6)
    assert far.method == "pg" and "probe" not in far.info
