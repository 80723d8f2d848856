"""Problem-level quantities at a solver's optimum, against independent references.

These need a solved problem (an estimator fit or a solve), so they are kept out of the fast
problem tests that the ``problems`` mutation run selects:

* vector-rho out-of-sample rows keep their ``Ds`` scaling: dense eigh of the scaled problem;
* LIBSVM's bound check is tight at convergence (within a LIBSVM-tolerance-sized amount of the
  certified optimum, not merely valid), for both signs of the first label.

Each test names the deliberate bug (mutation) it catches.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import sigmoid_problem
from reference import psd_part

import indefsvm
from indefsvm.proxy.estimators import IndefiniteSVC, IndefiniteSVR
from indefsvm.proxy.problems import make_problem


def _dense_vector_rho_rows(K0, u, rho, R):
    """Inductive rows for a vector rho, from a dense eigh of the scaled problem (theory.md §7-8).

    The working problem is the scalar one with rho = 1 on ``Ds K0 Ds`` and ``Ds^-1 u``; its
    ``M_s = Ds K0 Ds + (Ds^-1 u)(Ds^-1 u)'/4`` has the projector ``P_+``; a row ``k_x`` in
    ``K0`` scale maps to ``(P_+ (Ds k_x)) / Ds``, which on training rows gives ``K*``.
    """
    ds = rho**0.25
    us = u / ds
    Ms = (ds[:, None] * K0) * ds[None, :] + np.outer(us, us) / 4.0
    lam, V = np.linalg.eigh(Ms)
    Vp = V[:, lam >= 0]
    P = Vp @ Vp.T
    K_star = (psd_part(Ms) / ds[:, None]) / ds[None, :]
    return ((R * ds[None, :]) @ P) / ds[None, :], K_star


@pytest.mark.parametrize("estimator", ["svc", "svr"])
def test_vector_rho_out_of_sample_rows_keep_ds_scaling(estimator):
    """Catches mutation 1 (``out_of_sample_rows`` without ``Ds`` for a vector rho)."""
    K, y = sigmoid_problem(40, 11)
    tr, te = np.arange(28), np.arange(28, 40)
    Ktr, Kte = K[np.ix_(tr, tr)], K[np.ix_(te, tr)]
    rho = np.linspace(0.2, 5.0, tr.size)  # strongly non-constant: Ds is far from a multiple of I
    if estimator == "svc":
        est = IndefiniteSVC(
            C=1.0, rho=rho, tol=1e-8, max_iter=20000, solver_options={"keep_training_state": True}
        ).fit(Ktr, y[tr])
        u = y[tr] * est.alpha_
        decision = est.decision_function
    else:
        target = np.sin(np.arange(tr.size) / 4.0)
        est = IndefiniteSVR(
            C=1.0, rho=rho, tol=1e-8, max_iter=20000, solver_options={"keep_training_state": True}
        ).fit(Ktr, target)
        u = est.alpha_
        decision = est.predict
    rows_ref, K_star = _dense_vector_rho_rows(Ktr, u, rho, Kte)
    scale = max(1.0, np.abs(K_star).max())
    # the solver's proxy kernel is the dense reference's
    assert np.allclose(est.proxy_kernel_, K_star, atol=1e-9 * scale)
    # training rows of M (= K0 rows for a vector rho's map, in K0 scale) give back K* exactly:
    # prediction on the training points equals the in-sample decision values K* u + b.
    M_rows = Ktr + np.outer(u, u) / (4.0 * np.sqrt(np.outer(rho, rho)))
    rows_train = est.problem_.out_of_sample_rows(est.alpha_, M_rows)
    assert np.allclose(rows_train, K_star, atol=1e-9 * scale)
    assert np.allclose(decision(M_rows), K_star @ u + est.intercept_, atol=1e-8 * scale)
    # test rows and test predictions against the dense reference
    assert np.allclose(est.proxy_rows(Kte), rows_ref, atol=1e-9 * scale)
    assert np.allclose(decision(Kte), rows_ref @ u + est.intercept_, atol=1e-8 * scale)


def test_vector_rho_rows_reduce_to_scalar_rows_for_a_constant_vector():
    K, y = sigmoid_problem(24, 12)
    a = indefsvm.solve(K, y, C=1.0, rho=0.7, tol=1e-10).alpha
    scalar = make_problem("svc", K, y, C=1.0, rho=0.7)
    vector = make_problem("svc", K, y, C=1.0, rho=np.full(24, 0.7))
    R = np.random.default_rng(0).normal(size=(5, 24))
    assert np.allclose(scalar.out_of_sample_rows(a, R), vector.out_of_sample_rows(a, R), atol=1e-10)


def _problem_data(kind, first_label):
    K, y = sigmoid_problem(30, 4)
    if first_label < 0:
        y = -y  # LIBSVM's first label follows the first sample: exercise both label orders
    if kind == "perturb":
        K = K @ K / 30.0
    if kind == "svr":
        y = np.sin(np.arange(30) / 3.0) * first_label
    if kind == "oneclass":
        y = None
    return K, y


@pytest.mark.parametrize("first_label", [1.0, -1.0])
@pytest.mark.parametrize("kind", ["svc", "svr", "oneclass", "perturb"])
def test_libsvm_bound_is_tight_at_convergence(kind, first_label):
    """Catches mutation 3 (sign of LIBSVM's solution in ``_libsvm_solution`` /
    ``libsvm_upper_bound``): a flipped solution gives a valid but useless bound."""
    K, y = _problem_data(kind, first_label)
    problem = make_problem(kind, K, y, C=None if kind == "oneclass" else 1.0, rho=0.5)
    res = indefsvm.solve_problem(problem, tol=1e-8, max_iter=20000)
    assert res.converged
    ev = problem.evaluate(res.alpha)
    f0 = problem.objective(problem.project(np.zeros(problem.n)))
    scale = max(1.0, abs(ev.objective - f0))
    lib_tol = 1e-6
    ub, _, alpha_lib = problem.libsvm_upper_bound(ev, tol=lib_tol)
    # valid ...
    assert ub >= ev.upper_bound - 1e-9 * scale or ub >= ev.objective - 1e-9 * scale
    # ... and tight: LIBSVM at tolerance 1e-6 on the optimal K* is within ~1e-3 relative
    # (measured: 2e-6 to 4e-6 absolute on f - f0 ~ 5; a flipped solution is off by O(f)).
    assert ub - ev.objective <= 1e3 * lib_tol * scale
    # LIBSVM's solution is feasible for the same problem
    assert np.all(alpha_lib >= problem.lower - 1e-9) and np.all(alpha_lib <= problem.upper + 1e-9)
    assert problem.eq_coef @ alpha_lib == pytest.approx(problem.eq_rhs, abs=1e-6)


@pytest.mark.parametrize("first_label", [1.0, -1.0])
def test_libsvm_check_of_a_solve_is_tight(first_label):
    K, y = _problem_data("svc", first_label)
    res = indefsvm.solve(
        K, y, C=1.0, rho=0.5, tol=1e-8, options={"libsvm_every": 25, "libsvm_tol": 1e-6}
    )
    assert res.converged and np.isfinite(res.libsvm_upper_bound)
    assert res.libsvm_upper_bound >= res.upper_bound
    assert res.libsvm_upper_bound - res.objective <= 1e-3 * max(1.0, abs(res.objective))
