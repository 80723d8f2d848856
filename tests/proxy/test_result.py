"""``SolveResult``: its fields against independent computations, SciPy-style access, JSON.

One pg solve of the shared reference case (``conftest.svc_reference``) is checked field by
field: the objective against eq. (7) evaluated densely, the kernel against ``(K0 + Y a a'Y /
(4 rho))_+`` from dense eigh, the bound against the SDP optimum of problem (3), the relative gap
against its definition with ``f(0) = rho ||(K0)_-||_F^2``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from reference import dense_objective_eq7
from sklearn.exceptions import ConvergenceWarning

import indefsvm
from indefsvm.proxy.result import HISTORY_KEYS, SolveResult


@pytest.fixture(scope="module")
def solved(svc_reference):
    case = svc_reference
    return indefsvm.solve(
        case.K0, case.y, C=case.C, rho=case.rho, tol=1e-8, options={"libsvm_every": 5}
    )


def test_fields_match_independent_computations(solved, svc_reference):
    case, res = svc_reference, solved
    assert isinstance(res, SolveResult)
    f_dense, K_dense = dense_objective_eq7(case.K0, case.y, res.alpha, case.rho)
    assert res.objective == pytest.approx(f_dense, rel=1e-10)
    np.testing.assert_allclose(res.kernel, K_dense, atol=1e-10)
    # certified: lower bound <= SDP optimum <= upper bound, and the gap is what it says
    assert res.objective <= case.optimum + 1e-6 and res.upper_bound >= case.optimum - 1e-6
    assert res.gap == pytest.approx(res.upper_bound - res.objective)
    f0 = case.rho * np.sum(np.minimum(np.linalg.eigvalsh(case.K0), 0) ** 2)
    assert res.baseline_objective == pytest.approx(f0, rel=1e-12)
    assert res.relative_gap == pytest.approx(res.gap / max(1.0, abs(res.objective - f0)))
    # feasibility of alpha: y'alpha = 0, 0 <= alpha <= C
    assert abs(case.y @ res.alpha) <= 1e-10 and np.all((res.alpha >= 0) & (res.alpha <= case.C))
    assert res.method == "pg" and res.problem == "svc"
    np.testing.assert_array_equal(res.classes, [-1.0, 1.0])
    assert res.libsvm_upper_bound >= case.optimum - 1e-6


def test_scipy_style_status_and_repr(solved, svc_reference):
    """``success``/``converged``/``status``/``message`` as scipy.optimize.OptimizeResult."""
    assert solved.status == "converged" and solved.converged and solved.success
    case = svc_reference
    with pytest.warns(ConvergenceWarning):
        early = indefsvm.solve(case.K0, case.y, C=case.C, rho=case.rho, tol=1e-12, max_iter=2)
    assert early.status == "max_iter" and not early.converged and not early.success
    assert "certified relative gap" in solved.message
    text = repr(solved)
    assert text.startswith("SolveResult(method='pg', problem='svc', status='converged'")
    assert f"n_iter={solved.n_iter}" in text


def test_history_is_consistent_with_the_final_fields(solved):
    h = solved.history
    assert tuple(h) == HISTORY_KEYS
    assert all(v.shape == (solved.n_iter,) for v in h.values())
    assert h["best_objective"][-1] == solved.objective
    assert h["upper_bound"][-1] == solved.upper_bound
    assert np.all(np.diff(h["best_objective"]) >= 0) and np.all(np.diff(h["upper_bound"]) <= 0)
    assert np.isfinite(h["libsvm_upper_bound"][-1])  # the final LIBSVM check


def test_to_dict_and_json_round_trip(solved, tmp_path):
    d = solved.to_dict()
    assert "kernel" not in d and "kernel" in solved.to_dict(include_kernel=True)
    path = tmp_path / "result.json"
    solved.to_json(path)
    back = json.loads(path.read_text())  # strict JSON: NaN became null
    assert set(back) == set(d)
    np.testing.assert_array_equal(back["alpha"], solved.alpha)
    for key in ("objective", "upper_bound", "gap", "relative_gap", "baseline_objective"):
        assert back[key] == getattr(solved, key)
    assert back["status"] == "converged" and back["n_iter"] == solved.n_iter
    lib = back["history"]["libsvm_upper_bound"]
    assert [x is None for x in lib] == [math.isnan(x) for x in solved.history["libsvm_upper_bound"]]
    solved.to_json(path, include_kernel=True)
    np.testing.assert_array_equal(json.loads(path.read_text())["kernel"], solved.kernel)


def test_objective_excess_is_formed_without_the_constant():
    """f(alpha) - f(0) from the solver equals the dense difference where f(0) is small, and
    stays accurate where f(0) swamps it (rho 1e10: f(0) ~ 1e11, whose ulp is 1.5e-5)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    import indefsvm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    K0 = np.tanh(0.5 * X @ X.T - 0.3)
    res = indefsvm.solve(K0, y, C=1.0, rho=0.5, tol=1e-10, max_iter=20000)
    assert abs(res.objective_excess - (res.objective - res.baseline_objective)) <= 1e-12 * max(
        1.0, abs(res.baseline_objective)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        big = indefsvm.solve(K0, y, C=1.0, rho=1e10, tol=1e-8, max_iter=20000)
    # rho -> inf: the SVM dual on (K0)_+ (LIBSVM via scikit-learn as the reference)
    from sklearn.svm import SVC

    lam, V = np.linalg.eigh(K0)
    Kp = (V * np.maximum(lam, 0)) @ V.T
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-12).fit(Kp, y)
    coef = np.zeros(40)
    coef[svc.support_] = svc.dual_coef_[0]
    dual = np.abs(coef).sum() - 0.5 * coef @ Kp @ coef
    assert abs(big.baseline_objective) > 1e10
    assert abs(big.objective_excess - dual) <= 1e-6 * dual
    assert "objective_excess" in res.to_dict()
