"""The classification problem object: objective, gradient, proxy kernel and certified bound."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import sigmoid_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import (
    dense_objective_eigen_form,
    dense_objective_eq7,
    psd_part,
    random_feasible_alpha,
    svm_dual_value,
)

from indefsvm.proxy.problems import ClassificationProblem, minimize_piecewise_linear


def random_symmetric(n, rng, kind):
    """Random symmetric matrices including clustered and repeated eigenvalues."""
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    if kind == "gaussian":
        A = rng.normal(size=(n, n))
        return (A + A.T) / 2
    if kind == "repeated":
        d = rng.choice([-1.0, 0.0, 0.5, 2.0], size=n)
    elif kind == "clustered":
        centers = rng.choice([-1.0, 1.0], size=n)
        d = centers + 1e-9 * rng.normal(size=n)
    else:  # low rank indefinite
        d = np.zeros(n)
        d[:2] = [-3.0, 5.0]
    return (Q * d) @ Q.T


matrices = st.tuples(
    st.integers(3, 25),
    st.integers(0, 2**31 - 1),
    st.sampled_from(["gaussian", "repeated", "clustered", "lowrank"]),
    st.sampled_from([1e-4, 1e-2, 1.0, 1e2, 1e4]),
)


@settings(max_examples=60, deadline=None)
@given(matrices)
def test_objective_matches_dense_eq7_and_eigen_form(params):
    n, seed, kind, rho = params
    rng = np.random.default_rng(seed)
    K0 = random_symmetric(n, rng, kind)
    y = rng.choice([-1.0, 1.0], size=n)
    y[0], y[1] = 1.0, -1.0
    C = rng.uniform(0.1, 5.0)
    prob = ClassificationProblem(K0, y, C=C, rho=rho)
    alpha = random_feasible_alpha(y, C, rng)
    ev = prob.evaluate(alpha)
    f_ref, Ks = dense_objective_eq7(K0, y, alpha, rho)
    scale = max(1.0, abs(f_ref), alpha.sum(), rho * np.sum(K0**2))
    assert abs(ev.objective - f_ref) <= 1e-9 * scale
    assert abs(ev.objective - dense_objective_eigen_form(K0, y, alpha, rho)) <= 1e-8 * scale
    kscale = max(1.0, np.abs(Ks).max())
    assert np.allclose(prob.proxy_kernel(alpha), Ks, atol=1e-9 * kscale)
    v = rng.normal(size=n)
    assert np.allclose(prob.proxy_kernel_matvec(alpha, v), Ks @ v, atol=1e-9 * kscale * n)
    # gradient of eq. (7) is e - Y K* Y alpha (notes §2)
    assert np.allclose(ev.gradient, 1 - y * (Ks @ (y * alpha)), atol=1e-9 * kscale * n)


def test_gradient_matches_finite_differences(small_indefinite):
    K0, y = small_indefinite
    rng = np.random.default_rng(2)
    for rho in (0.05, 1.0, 20.0):
        prob = ClassificationProblem(K0, y, C=2.0, rho=rho)
        alpha = random_feasible_alpha(y, 2.0, rng)
        g = prob.gradient(alpha)
        h = 1e-6
        fd = np.array(
            [
                (prob.objective(alpha + h * e) - prob.objective(alpha - h * e)) / (2 * h)
                for e in np.eye(len(y))
            ]
        )
        assert np.allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_upper_bound_is_svm_primal_of_proxy_kernel(small_indefinite):
    """UB(alpha) >= omega_C(K*) + rho||K* - K0||^2 (cvxpy) >= f(alpha); gap = UB - f."""
    K0, y = small_indefinite
    rng = np.random.default_rng(4)
    rho, C = 0.5, 1.5
    prob = ClassificationProblem(K0, y, C=C, rho=rho)
    for _ in range(3):
        alpha = random_feasible_alpha(y, C, rng)
        ev = prob.evaluate(alpha)
        Ks = psd_part(K0 + np.outer(y * alpha, y * alpha) / (4 * rho))
        omega, _ = svm_dual_value(Ks, y, C)
        inner = omega + rho * np.sum((Ks - K0) ** 2)
        assert ev.upper_bound >= inner - 1e-6 * abs(inner)
        assert inner >= ev.objective - 1e-9 * abs(inner)
        # direct primal value with the reported intercept
        g = Ks @ (y * alpha)
        primal = 0.5 * (y * alpha) @ g + C * np.sum(np.maximum(0, 1 - y * (g + ev.intercept)))
        assert np.isclose(ev.upper_bound, primal + rho * np.sum((Ks - K0) ** 2), rtol=1e-10)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 40), st.integers(0, 2**31 - 1))
def test_best_intercept_beats_a_fine_grid(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=n)
    y[0], y[1] = 1.0, -1.0
    g = rng.normal(size=n) * 2
    C = rng.uniform(0.1, 2.0, size=n)
    b, val = minimize_piecewise_linear(0.0, C, -y, 1 - y * g)
    loss = lambda bb: np.sum(C * np.maximum(0, 1 - y * (g + bb)))  # noqa: E731
    assert np.isclose(val, loss(b), rtol=1e-12, atol=1e-12)
    grid = np.linspace(-10, 10, 4001)
    assert val <= min(loss(bb) for bb in grid) + 1e-12


def test_class_weight_options():
    K0, y = sigmoid_problem(12, 1)
    n_pos, n_neg = int((y > 0).sum()), int((y < 0).sum())
    p = ClassificationProblem(K0, y, C=2.0, class_weight="paper")
    assert np.allclose(p.box[y > 0], 2.0) and np.allclose(p.box[y < 0], 2.0 * n_pos / n_neg)
    p = ClassificationProblem(K0, y, C=2.0, class_weight="balanced")
    assert np.allclose(p.box[y > 0], 2.0 * 12 / (2 * n_pos))
    labels = np.where(y > 0, "yes", "no")
    p = ClassificationProblem(K0, labels, C=1.0, class_weight={"yes": 3.0})
    assert list(p.classes) == ["no", "yes"]
    assert np.allclose(p.box[y > 0], 3.0) and np.allclose(p.box[y < 0], 1.0)
    with pytest.raises(ValueError, match="not class labels"):
        ClassificationProblem(K0, labels, class_weight={"maybe": 2.0})
    with pytest.raises(ValueError, match="class_weight"):
        ClassificationProblem(K0, y, class_weight="unbalanced")


def test_psd_kernel_needs_no_eigen_work(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(15, 4))
    K0 = X @ X.T + 1e-3 * np.eye(15)  # strictly PSD
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    import indefsvm.proxy.operators as proxy

    def forbidden(*args, **kwargs):
        raise AssertionError("rank-one eigen work on a PSD kernel")

    monkeypatch.setattr(proxy, "rank_one_eigh", forbidden)
    prob = ClassificationProblem(K0, y, C=1.0, rho=0.3)
    alpha = random_feasible_alpha(y, 1.0, rng)
    f_ref, Ks = dense_objective_eq7(K0, y, alpha, 0.3)
    ev = prob.evaluate(alpha)
    assert np.isclose(ev.objective, f_ref, rtol=1e-12)
    # eq. (22): K* = K0 + u u'/(4 rho) exactly
    u = y * alpha
    assert np.allclose(prob.proxy_kernel(alpha), K0 + np.outer(u, u) / 1.2, atol=1e-12)
