"""Exact projection onto {a'x = t, lower <= x <= upper} (theory.md §6) vs cvxpy and KKT."""

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


# Contract of ``project_hyperplane_box`` beyond the SVM label hyperplanes (mutation testing).
#
# The existing tests use normals ``a = ±1`` and ``lower = 0``; these use a general non-zero
# normal, general boxes, the l1 prox with active box constraints, the exact ends of the feasible
# range and the input checks, each against cvxpy or a closed form (docs/mutation.md lists the
# mutants these kill).


def reference_weighted_projection(v, a, t, lower, upper, l1=None):
    """cvxpy QP in units of max|v| (so Clarabel's absolute tolerances are relative)."""
    s = max(float(np.abs(v).max()), 1e-300)
    x = cp.Variable(v.shape[0])
    obj = 0.5 * cp.sum_squares(x - v / s)
    if l1 is not None:
        w = np.broadcast_to(np.asarray(l1, dtype=np.float64), v.shape) / s
        obj = obj + cp.sum(cp.multiply(w, cp.abs(x)))
    cons = [a @ x == t / s, x >= np.asarray(lower) / s, x <= np.asarray(upper) / s]
    cp.Problem(cp.Minimize(obj), cons).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
    )
    return s * x.value


def _kkt_residual(x, v, a, lower, upper, l1=None):
    """Max violation of the KKT conditions of the (prox-)projection for the best tau."""
    # stationarity: x - v + tau a + l1 * s + (box multipliers) = 0 with s in sign(x)
    free = (x > lower + 1e-12) & (x < upper - 1e-12) & (np.abs(x) > 1e-12)
    if not np.any(free):
        return 0.0
    g = v - x - (0.0 if l1 is None else l1 * np.sign(x))
    taus = g[free] / a[free]
    return float(np.max(np.abs(taus - taus.mean())))


METHODS = pytest.mark.parametrize("method", ["newton", "sort"])


@METHODS
@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(2, 20),
    seed=st.integers(0, 2**31 - 1),
    with_l1=st.booleans(),
)
def test_general_normal_and_box_match_qp(method, n, seed, with_l1):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.3, 3.0, size=n) * rng.choice([-1.0, 1.0], size=n)
    lower = -rng.uniform(0.1, 2.0, size=n)
    upper = rng.uniform(0.1, 2.0, size=n)
    lo_val = float(np.sum(np.where(a > 0, a * lower, a * upper)))
    hi_val = float(np.sum(np.where(a > 0, a * upper, a * lower)))
    t = lo_val + rng.uniform(0.1, 0.9) * (hi_val - lo_val)
    v = 2.0 * rng.normal(size=n)
    l1 = float(rng.uniform(0.05, 1.0)) if with_l1 else None
    x = project_hyperplane_box(v, a, t, lower, upper, l1=l1, method=method)
    assert x.dtype == np.float64
    assert abs(a @ x - t) <= 1e-9 * max(1.0, abs(t), np.abs(a).sum())
    assert np.all(x >= lower) and np.all(x <= upper)
    ref = reference_weighted_projection(v, a, t, lower, upper, l1=l1)
    # the exact projection is at least as good as the conic solver's, and close to it
    w = 0.0 if l1 is None else l1

    def obj(z):
        return 0.5 * float(np.sum((z - v) ** 2)) + w * float(np.abs(z).sum())

    assert obj(x) <= obj(ref) + 1e-8 * max(1.0, obj(ref))
    assert np.allclose(x, ref, atol=1e-5)
    assert _kkt_residual(x, v, a, lower, upper, l1) <= 1e-8


@METHODS
def test_l1_prox_with_active_box_and_positive_lower_range(method):
    rng = np.random.default_rng(7)
    n = 12
    a = rng.uniform(0.5, 2.0, size=n)
    lower, upper = np.full(n, -0.3), np.full(n, 0.4)
    v = 3.0 * rng.normal(size=n)  # many components clipped at the box after shrinkage
    t = 0.25 * float(a @ upper)
    for l1 in (0.0, 0.2, np.linspace(0.0, 1.0, n)):
        x = project_hyperplane_box(v, a, t, lower, upper, l1=l1, method=method)
        ref = reference_weighted_projection(v, a, t, lower, upper, l1=np.asarray(l1))
        assert np.allclose(x, ref, atol=1e-5)
        assert np.any(x == upper) and np.any(x == lower)


@METHODS
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_ends_of_the_feasible_range_give_the_box_corner(sign, method):
    n = 6
    a = sign * np.array([1.0, 2.0, 0.5, 3.0, 1.5, 0.7])
    lower, upper = np.full(n, -0.5), np.full(n, 1.5)
    v = np.linspace(-3, 3, n)
    hi_corner = np.where(a > 0, upper, lower)
    lo_corner = np.where(a > 0, lower, upper)
    for l1 in (None, 0.3):
        kw = {"l1": l1, "method": method}
        x_hi = project_hyperplane_box(v, a, float(a @ hi_corner), lower, upper, **kw)
        x_lo = project_hyperplane_box(v, a, float(a @ lo_corner), lower, upper, **kw)
        assert np.allclose(x_hi, hi_corner, atol=1e-12)
        assert np.allclose(x_lo, lo_corner, atol=1e-12)


def test_feasible_range_check_uses_the_box():
    a = np.array([1.0, -1.0, 2.0])
    lower, upper = np.array([0.0, 0.0, -1.0]), np.array([2.0, 3.0, 0.5])
    lo_val, hi_val = -3.0 - 2.0, 2.0 + 1.0  # a'x over the box: [-5, 3]
    for t in (lo_val, hi_val, lo_val + 0.01, hi_val - 0.01):
        x = project_hyperplane_box(np.zeros(3), a, t, lower, upper)
        assert a @ x == pytest.approx(t, abs=1e-12)
    # within rounding (1e-13 relative) of an end: accepted
    project_hyperplane_box(np.zeros(3), a, hi_val * (1 + 1e-13), lower, upper)
    # exactly at the tolerance (1e-12 * max(1, 5, 3) = 5e-12 beyond an end): still accepted
    project_hyperplane_box(np.zeros(3), a, lo_val - 1e-12 * 5.0, lower, upper)
    project_hyperplane_box(np.zeros(3), a, hi_val + 1e-12 * 5.0, lower, upper)
    for t in (lo_val - 0.01, hi_val + 0.01, lo_val - 0.6, hi_val + 0.6):
        with pytest.raises(ValueError, match=r"feasible set .* is empty: a'x ranges over"):
            project_hyperplane_box(np.zeros(3), a, t, lower, upper)
    # the tolerance is 1e-12 * max(1, |lo|, |hi|): absolute for a small range ...
    ones, tiny = np.ones(3), np.full(3, 1e-4)
    project_hyperplane_box(np.zeros(3), ones, 3e-4 + 5e-13, 0.0, tiny)
    project_hyperplane_box(np.zeros(3), ones, -3e-4 - 5e-13, -tiny, 0.0)
    with pytest.raises(ValueError, match="is empty"):
        project_hyperplane_box(np.zeros(3), ones, 3e-4 + 1.5e-12, 0.0, tiny)
    with pytest.raises(ValueError, match="is empty"):
        project_hyperplane_box(np.zeros(3), ones, -3e-4 - 1.5e-12, -tiny, 0.0)
    # ... and relative to the larger end, whichever side it is on
    lop, hip = np.array([-1e6, 0.0, 0.0]), np.array([0.0, 0.2, 0.3])
    project_hyperplane_box(np.zeros(3), ones, 0.5 + 1e-8, lop, hip)  # |lo| = 1e6 sets the scale
    project_hyperplane_box(np.zeros(3), ones, -0.5 - 1e-8, -hip, -lop)  # |hi| = 1e6
    # a large scale: the tolerance is relative to max(1, |range|)
    big = 1e6
    project_hyperplane_box(np.zeros(3), a, big * hi_val + 1e-8, lower * big, upper * big)
    project_hyperplane_box(np.zeros(3), a, big * lo_val - 1e-8, lower * big, upper * big)
    with pytest.raises(ValueError, match="is empty"):
        project_hyperplane_box(np.zeros(3), a, big * hi_val + 1.0, lower * big, upper * big)
    with pytest.raises(ValueError, match="is empty"):
        project_hyperplane_box(np.zeros(3), a, big * lo_val - 1.0, lower * big, upper * big)


def test_input_checks_and_dtypes():
    with pytest.raises(ValueError, match=r"^the hyperplane normal a must have non-zero entries\.$"):
        project_hyperplane_box(np.zeros(2), np.array([1.0, 0.0]), 0.0, -1.0, 1.0)
    msg = r"^the l1 prox needs non-negative weights and lower <= 0 <= upper\.$"
    with pytest.raises(ValueError, match=msg):
        project_hyperplane_box(np.zeros(2), np.ones(2), 0.0, -1.0, 1.0, l1=-0.1)
    with pytest.raises(ValueError, match=msg):
        project_hyperplane_box(np.zeros(2), np.ones(2), 1.0, 0.5, 1.0, l1=0.1)
    with pytest.raises(ValueError, match=msg):
        project_hyperplane_box(np.zeros(2), np.ones(2), -1.0, -1.0, -0.5, l1=0.1)
    # bounds touching zero are valid with the l1 prox
    x = project_hyperplane_box(np.array([0.4, -0.9]), np.ones(2), -0.5, -1.0, 0.0, l1=0.1)
    assert np.allclose(x, [0.0, -0.5])
    x = project_hyperplane_box(np.array([0.9, -0.4]), np.ones(2), 0.5, 0.0, 1.0, l1=0.1)
    assert np.allclose(x, [0.5, 0.0])
    # a zero l1 weight and bounds inside (-1, 1) are valid
    x = project_hyperplane_box(np.array([0.9, -0.2]), np.ones(2), 0.1, -0.5, 0.5, l1=0.0)
    assert np.allclose(x, project_hyperplane_box(np.array([0.9, -0.2]), np.ones(2), 0.1, -0.5, 0.5))
    # list inputs are accepted and give a float64 result
    x = project_hyperplane_box([0.3, -1.7, 2.2], [1, 2, 1], 1, [0, 0, 0], [1, 1, 1], l1=0.1)
    assert x.dtype == np.float64 and float(np.array([1, 2, 1]) @ x) == pytest.approx(1.0)


def _numpy_prox_point(v, a, tau, lower, upper, l1):
    w = v - tau * a
    if l1 is not None:
        w = np.sign(w) * np.maximum(np.abs(w) - l1, 0.0)
    return np.clip(w, lower, upper)


@METHODS
@pytest.mark.parametrize("with_l1", [False, True])
def test_returned_multiplier_reproduces_the_point_and_warm_starts_agree(method, with_l1):
    # the multiplier returned with return_tau=True is the tau of the KKT conditions:
    # x = clip(soft(v - tau a, l1), lower, upper), and the free components give tau directly
    rng = np.random.default_rng(11)
    n = 40
    a = rng.uniform(0.3, 3.0, size=n) * rng.choice([-1.0, 1.0], size=n)
    lower, upper = -rng.uniform(0.1, 2.0, size=n), rng.uniform(0.1, 2.0, size=n)
    v = 2.0 * rng.normal(size=n)
    l1 = rng.uniform(0.0, 0.4, size=n) if with_l1 else None
    lo_val = float(np.sum(np.where(a > 0, a * lower, a * upper)))
    hi_val = float(np.sum(np.where(a > 0, a * upper, a * lower)))
    t = lo_val + 0.37 * (hi_val - lo_val)
    ref = reference_weighted_projection(v, a, t, lower, upper, l1=l1)
    cold = project_hyperplane_box(v, a, t, lower, upper, l1=l1, method=method)
    x, tau = project_hyperplane_box(v, a, t, lower, upper, l1=l1, method=method, return_tau=True)
    assert isinstance(tau, float)
    assert np.array_equal(x, cold) and np.allclose(x, ref, atol=1e-6)
    assert np.allclose(_numpy_prox_point(v, a, tau, lower, upper, l1), x, atol=1e-12)
    free = (x > lower + 1e-9) & (x < upper - 1e-9) & (np.abs(x) > 1e-9)
    assert free.sum() >= 3
    g = v - x - (0.0 if l1 is None else l1 * np.sign(x))
    assert np.allclose(g[free] / a[free], tau, atol=1e-10)
    for tau0 in (tau, tau + 0.5, -7.0, 0.0):
        xw, tw = project_hyperplane_box(
            v, a, t, lower, upper, l1=l1, method=method, tau0=tau0, return_tau=True
        )
        assert np.allclose(xw, x, atol=1e-12) and tw == pytest.approx(tau, abs=1e-10)


def test_unknown_method_is_refused_with_the_choices():
    with pytest.raises(
        ValueError, match=r"^method must be one of \('newton', 'sort'\); got 'x'\.$"
    ):
        project_hyperplane_box(np.zeros(3), np.ones(3), 0.0, -1.0, 1.0, method="x")


def test_newton_is_the_default_method_and_receives_the_warm_start(monkeypatch):
    # the default is the O(n) Newton method: the sorting method is not called, and tau0 reaches
    # the compiled loop as its starting guess (NaN: no guess)
    from indefsvm.linalg import _linear_time
    from indefsvm.linalg import projection as module

    guesses = []
    newton = _linear_time.newton_multiplier

    def recording(v, a, t, lower, upper, soft, has_soft, guess, hi_val, lo_val):
        guesses.append(guess)
        return newton(v, a, t, lower, upper, soft, has_soft, guess, hi_val, lo_val)

    def no_sort(*args):
        raise AssertionError("the sorting method ran")

    monkeypatch.setattr(_linear_time, "newton_multiplier", recording)
    monkeypatch.setattr(module, "_sort_projection", no_sort)
    v, a = np.array([0.3, -1.2, 2.0, 0.7]), np.array([1.0, -1.0, 2.0, 1.0])
    x = project_hyperplane_box(v, a, 0.5, -1.0, 1.0)
    project_hyperplane_box(v, a, 0.5, -1.0, 1.0, tau0=1.5)
    assert len(guesses) == 2 and np.isnan(guesses[0]) and guesses[1] == 1.5
    assert np.allclose(
        x, reference_weighted_projection(v, a, 0.5, -np.ones(4), np.ones(4)), atol=1e-6
    )
