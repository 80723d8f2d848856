"""Exact projection onto {a'x = t, lower <= x <= upper} (notes §6) vs cvxpy and KKT."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indefsvm.linalg.projection import project_hyperplane_box


def reference_projection(v, a, t, lower, upper, l1=None):
    # Solve in units of s = max|v| so the conic solver's absolute tolerances are relative ones.
    s = max(float(np.abs(v).max()), 1e-300)
    x = cp.Variable(v.shape[0])
    obj = 0.5 * cp.sum_squares(x - v / s)
    if l1 is not None:
        obj = obj + (l1 / s) * cp.norm1(x)
    cons = [a @ x == t / s, x >= np.asarray(lower) / s, x <= np.asarray(upper) / s]
    # Tight tolerances: at Clarabel's defaults the reference can be infeasible by ~1e-6 * s,
    # enough to look closer to v than the exact projection (hypothesis found n=23, seed=62336).
    prob = cp.Problem(cp.Minimize(obj), cons)
    try:
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    except cp.error.SolverError:
        # Clarabel occasionally fails at 1e-12 on tiny instances (hypothesis: n=3, seed=593,
        # scale=1e-3); 1e-10 is still far below the comparison's tolerance.
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return s * x.value


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 30),
    seed=st.integers(0, 2**31 - 1),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
)
def test_label_hyperplane_projection_matches_qp(n, seed, scale):
    rng = np.random.default_rng(seed)
    a = rng.choice([-1.0, 1.0], size=n)
    upper = rng.uniform(0.1, 2.0, size=n)
    v = scale * rng.normal(size=n)
    x = project_hyperplane_box(v, a, 0.0, np.zeros(n), upper)
    assert abs(a @ x) <= 1e-10 * max(1.0, np.abs(v).max())
    assert np.all(x >= 0) and np.all(x <= upper)
    ref = reference_projection(v, a, 0.0, np.zeros(n), upper)
    # The conic solver is the weaker party: ours must be at least as close to v, and the
    # minimiser is unique, so the points agree to the solver's accuracy.
    assert np.sum((x - v) ** 2) <= np.sum((ref - v) ** 2) + 1e-9 * np.sum(v**2)
    assert np.allclose(x, ref, atol=1e-2 * np.sqrt(np.sum(v**2)) / np.sqrt(n))
    # KKT certificate: one tau reproduces x
    free = (x > 1e-9 * upper) & (x < upper * (1 - 1e-9))
    if free.any():
        tau = np.median((v[free] - x[free]) / a[free])
        assert np.allclose(x, np.clip(v - tau * a, 0, upper), atol=1e-10 * np.abs(v).max())


def test_projection_kkt_exact():
    # KKT: x = clip(v - tau a) for one tau; free coordinates share the same tau exactly.
    rng = np.random.default_rng(3)
    n = 200
    a = rng.choice([-1.0, 1.0], size=n)
    v = rng.normal(size=n)
    C = np.full(n, 0.7)
    x = project_hyperplane_box(v, a, 0.0, np.zeros(n), C)
    free = (x > 1e-12) & (x < C - 1e-12)
    taus = (v[free] - x[free]) / a[free]
    assert np.ptp(taus) < 1e-12
    tau = taus.mean()
    assert np.allclose(x, np.clip(v - tau * a, 0, C), atol=1e-12)
    assert abs(a @ x) < 1e-12


def test_simplex_like_set_and_l1_prox_match_qp():
    rng = np.random.default_rng(5)
    n = 15
    e = np.ones(n)
    v = rng.normal(size=n)
    # one-class set {e'x = 1, 0 <= x <= 1/(nu n)}
    x = project_hyperplane_box(v, e, 1.0, np.zeros(n), np.full(n, 1 / (0.5 * n)))
    assert np.allclose(x, reference_projection(v, e, 1.0, 0, 1 / (0.5 * n)), atol=1e-6)
    # SVR prox {e'x = 0, -C <= x <= C} with an l1 term
    x = project_hyperplane_box(v, e, 0.0, -np.ones(n), np.ones(n), l1=0.3)
    assert np.allclose(x, reference_projection(v, e, 0.0, -1, 1, l1=0.3), atol=1e-6)


def test_empty_set_is_an_error():
    with pytest.raises(ValueError, match="empty"):
        project_hyperplane_box(np.zeros(3), np.ones(3), 10.0, np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="non-zero"):
        project_hyperplane_box(np.zeros(3), np.array([1.0, 0.0, 1.0]), 0.0, 0, 1)
