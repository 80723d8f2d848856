"""indefsvm.solve against an independent SDP of problem (3), statuses, bounds and validation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import sigmoid_problem
from reference import dense_objective_eq7, psd_part, sdp_optimum, svm_dual_value
from sklearn.exceptions import ConvergenceWarning

import indefsvm

CASES = [(12, 0, 1.0, 1.0), (20, 1, 10.0, 0.1), (20, 2, 0.5, 10.0), (25, 3, 3.0, 0.01)]


@pytest.mark.parametrize("n,seed,C,rho", CASES)
def test_solve_matches_sdp_of_problem_3(n, seed, C, rho):
    K0, y = sigmoid_problem(n, seed)
    opt, K_sdp = sdp_optimum(K0, y, C, rho)
    res = indefsvm.solve(K0, y, C=C, rho=rho, tol=1e-8)
    assert res.status == "converged" and res.converged
    # the SDP solver is accurate to ~1e-8 relative; our bracket is certified
    assert abs(res.objective - opt) <= 1e-6 * max(1.0, abs(opt))
    assert res.objective <= res.upper_bound
    assert res.gap == pytest.approx(res.upper_bound - res.objective)
    assert np.allclose(res.kernel, K_sdp, atol=1e-4 * max(1.0, np.abs(K_sdp).max()))
    f_ref, Ks = dense_objective_eq7(K0, y, res.alpha, rho)
    assert res.objective == pytest.approx(f_ref, rel=1e-10)
    assert np.allclose(res.kernel, Ks, atol=1e-10 * np.abs(Ks).max())
    assert abs(y @ res.alpha) < 1e-10 and res.alpha.min() >= 0 and res.alpha.max() <= C


@pytest.mark.parametrize("step", ["accelerated", "paper"])
def test_reported_gap_never_below_true_suboptimality(step):
    K0, y = sigmoid_problem(18, 5)
    C, rho = 2.0, 0.5
    opt, _ = sdp_optimum(K0, y, C, rho)
    slack = 1e-6 * abs(opt)  # accuracy of the SDP reference
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = indefsvm.solve(K0, y, C=C, rho=rho, tol=1e-9, max_iter=300, step=step, libsvm_every=7)
    h = res.history
    assert len(h["iteration"]) == res.n_iter
    assert np.all(h["upper_bound"] >= opt - slack)
    assert np.all(h["best_objective"] <= opt + slack)
    assert np.all(h["gap"] >= (opt - h["best_objective"]) - slack)
    assert np.all(np.diff(h["upper_bound"]) <= 0) and np.all(np.diff(h["best_objective"]) >= 0)
    lib = h["libsvm_upper_bound"][np.isfinite(h["libsvm_upper_bound"])]
    assert lib.size >= 1 and np.all(lib >= opt - slack)


def test_iteration_limit_is_reported_not_hidden():
    K0, y = sigmoid_problem(30, 6)
    with pytest.warns(ConvergenceWarning, match="NOT certified"):
        res = indefsvm.solve(K0, y, C=5.0, rho=0.1, tol=1e-14, max_iter=3)
    assert res.status == "max_iter" and not res.converged and res.n_iter == 3
    assert res.relative_gap > 1e-14
    with pytest.warns(ConvergenceWarning):
        res = indefsvm.solve(K0, y, step="paper", smoothing=1e-4, max_iter=5, tol=1e-12)
    assert res.status == "max_iter"
    # the reported objective is the exact eq. (7), even with the smoothed gradient
    assert res.objective == pytest.approx(dense_objective_eq7(K0, y, res.alpha, 1.0)[0], rel=1e-10)


def test_paper_policy_converges_eventually_and_agrees():
    K0, y = sigmoid_problem(15, 7)
    fast = indefsvm.solve(K0, y, C=1.0, rho=1.0, tol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        slow = indefsvm.solve(K0, y, C=1.0, rho=1.0, tol=1e-4, step="paper", max_iter=20000)
    assert slow.status == "converged"
    assert slow.objective <= fast.upper_bound + 1e-12
    assert fast.objective - slow.objective <= slow.gap + 1e-12


def test_large_rho_tends_to_svm_on_clipped_kernel():
    """Paper 004 Sect. 2.3: rho -> inf gives the SVM with (K0)_+."""
    K0, y = sigmoid_problem(20, 8)
    C = 1.0
    omega, _ = svm_dual_value(psd_part(K0), y, C)
    res = indefsvm.solve(K0, y, C=C, rho=1e6, tol=1e-12, max_iter=20000)
    u = y * res.alpha
    svm_value = res.alpha.sum() - 0.5 * u @ psd_part(K0) @ u
    assert svm_value == pytest.approx(omega, rel=1e-5)


def test_libsvm_checks_recorded_and_valid():
    K0, y = sigmoid_problem(40, 9)
    res = indefsvm.solve(K0, y, C=1.0, rho=1.0, libsvm_every=5, tol=1e-7)
    assert np.isfinite(res.libsvm_upper_bound)
    assert res.libsvm_upper_bound >= res.objective - 1e-9
    assert res.upper_bound <= res.libsvm_upper_bound


def test_labels_of_any_type_and_callback():
    K0, y = sigmoid_problem(16, 10)
    ref = indefsvm.solve(K0, y)
    res = indefsvm.solve(K0, np.where(y > 0, "spam", "ham"))
    assert list(res.classes) == ["ham", "spam"]
    assert np.allclose(res.alpha, ref.alpha)
    res01 = indefsvm.solve(K0, (y > 0).astype(int))
    assert np.allclose(res01.alpha, ref.alpha)
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = indefsvm.solve(K0, y, tol=1e-14, callback=lambda info: seen.append(info) or True)
    assert res.status == "callback" and len(seen) == 1 and res.n_iter == 1


def test_deterministic():
    K0, y = sigmoid_problem(25, 11)
    a = indefsvm.solve(K0, y, C=2.0)
    b = indefsvm.solve(K0, y, C=2.0)
    assert np.array_equal(a.alpha, b.alpha) and a.n_iter == b.n_iter


@pytest.mark.parametrize(
    "K0,y,kwargs,exc,match",
    [
        (np.ones((3, 4)), [1, -1, 1], {}, ValueError, "square"),
        (np.array([[1.0, 2.0], [0.0, 1.0]]), [1, -1], {}, ValueError, "not symmetric"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), [1, -1], {}, ValueError, "non-finite"),
        (np.eye(3), [1, 1, 1], {}, ValueError, "exactly two classes"),
        (np.eye(3), [0, 1, 2], {}, ValueError, "exactly two classes"),
        (np.eye(3), [1, -1], {}, ValueError, "2 labels but the kernel has 3 rows"),
        (np.eye(3), [1, -1, 1], {"C": 0.0}, ValueError, "C must be finite and > 0"),
        (np.eye(3), [1, -1, 1], {"rho": -1.0}, ValueError, "rho must be finite and > 0"),
        (np.eye(3), [1, -1, 1], {"C": np.inf}, ValueError, "C must be finite"),
        (np.eye(1), [1], {}, ValueError, "at least 2 rows"),
        (np.eye(3), [1, -1, 1], {"method": "newton"}, ValueError, "method must be one of"),
        (np.eye(3), [1, -1, 1], {"max_iter": 0}, ValueError, "max_iter"),
        (np.eye(3), [1, -1, 1], {"step": "newton"}, ValueError, "step must be one of"),
        (np.eye(3), [1, -1, 1], {"smoothing": 1e-4}, ValueError, "step='paper'"),
    ],
)
def test_bad_input_gets_clear_error(K0, y, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        indefsvm.solve(K0, y, **kwargs)


def test_symmetrize_option():
    K0, y = sigmoid_problem(10, 12)
    noise = np.triu(np.full_like(K0, 1e-3), 1)
    res = indefsvm.solve(K0 + noise, y, symmetrize=True)
    ref = indefsvm.solve(K0 + (noise + noise.T) / 2, y)
    assert np.allclose(res.alpha, ref.alpha)
