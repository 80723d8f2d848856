"""Contract of ``indefsvm.proxy.solvers._mkl`` (the regularised-MKL master of SIQCLP), in seconds.

Written for the mutation run of issue 15 (survivors:
``tools/mutation_survivors/mutation_survivors_solvers_mkl.txt``). Every
function is checked against a reference that does not use the MKL code: cvxpy on the same
quadratic programs (the inner SVM in the original coordinates, the simplex QP, the master
``min_simplex J`` written as the QCLP (13)), LIBSVM on a fixed kernel, numpy's ``eigh`` and
finite differences of ``J`` for the Danskin gradient and the Hessian. A small fake problem (any
equality coefficients, bounds and linear term) reaches the coordinate changes that the package's
problems never use (coefficients other than +-1, negative scales).
"""

from __future__ import annotations

import logging
import time
from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import pytest

from indefsvm.proxy import _libsvm
from indefsvm.proxy.problems import make_problem
from indefsvm.proxy.solvers import _mkl
from indefsvm.proxy.solvers._mkl import MKLMaster, MKLStats, _simplex_qp, _smo
from indefsvm.proxy.solvers.siqclp import _Kernel, _psd_factor


def fake_problem(n=8, seed=0, *, l1=0.0, eq=None, lower=None, upper=None, rhs=0.0):
    """A DenseProblem-like namespace: any equality coefficients, box and linear term."""
    rng = np.random.default_rng(seed)
    eq = rng.choice([-2.0, -0.5, 1.0, 3.0], size=n) if eq is None else np.asarray(eq, float)
    lower = np.full(n, -1.0 if l1 else 0.0) if lower is None else np.asarray(lower, float)
    upper = np.full(n, 1.5) if upper is None else np.asarray(upper, float)
    lin = rng.uniform(0.2, 1.5, size=n)
    u_coef = rng.choice([-1.3, 0.7, 1.0], size=n)

    def initial_point():
        # a feasible point: mid-box moved along eq to reach rhs (rhs 0 and symmetric here)
        a = np.clip(np.zeros(n), lower, upper)
        if lower.max() > 0:
            a = lower.copy()
        return a

    return SimpleNamespace(
        n=n, eq_coef=eq, eq_rhs=rhs, lower=lower, upper=upper, linear_coef=lin,
        l1_weight=l1, u_coef=u_coef, initial_point=initial_point,
    )  # fmt: skip


def psd(n, rank, seed):
    X = np.random.default_rng(seed).normal(size=(n, rank))
    return X @ X.T / rank


def kernel(K, origin, const=0.0):
    return _Kernel(_psd_factor(K), const, origin)


def qp_reference(pb, K, prox=None):
    """``max l(a) - 1/2 u'Ku (- mu/2 ||a - c||^2)`` on the feasible set by cvxpy (value, a)."""
    n = pb.n
    a = cp.Variable(n)
    w, V = np.linalg.eigh(0.5 * (K + K.T))
    L = V * np.sqrt(np.maximum(w, 0.0))
    obj = pb.linear_coef @ a - pb.l1_weight * cp.norm1(a)
    obj = obj - 0.5 * cp.sum_squares(L.T @ cp.multiply(pb.u_coef, a))
    if prox is not None:
        obj = obj - 0.5 * prox[0] * cp.sum_squares(a - prox[1])
    cons = [pb.eq_coef @ a == pb.eq_rhs, a >= pb.lower, a <= pb.upper]
    prob = cp.Problem(cp.Maximize(obj), cons)
    prob.solve(solver="CLARABEL")
    return prob.value, a.value


def dual_value(pb, K, alpha, prox=None):
    u = pb.u_coef * alpha
    v = pb.linear_coef @ alpha - pb.l1_weight * np.abs(alpha).sum() - 0.5 * u @ K @ u
    if prox is not None:
        v -= 0.5 * prox[0] * np.sum((alpha - prox[1]) ** 2)
    return v


def qclp_reference(pb, kernels):
    """The QCLP (13) on the same kernels by cvxpy: ``max t s.t. t <= L_i(a)`` (value, a, mult)."""
    a = cp.Variable(pb.n)
    t = cp.Variable()
    u = cp.multiply(pb.u_coef, a)
    lin = pb.linear_coef @ a - pb.l1_weight * cp.norm1(a)
    quad = [t <= lin - 0.5 * cp.sum_squares(k.factor.T @ u) + k.constant for k in kernels]
    cons = [pb.eq_coef @ a == pb.eq_rhs, a >= pb.lower, a <= pb.upper]
    prob = cp.Problem(cp.Maximize(t), cons + quad)
    prob.solve(solver="CLARABEL")
    return prob.value, a.value, np.array([float(np.asarray(c.dual_value).item()) for c in quad])


def values_at(pb, kernels, alpha):
    u = pb.u_coef * alpha
    lin = pb.linear_coef @ alpha - pb.l1_weight * np.abs(alpha).sum()
    return np.array([lin - 0.5 * u @ k.gram @ u + k.constant for k in kernels])


# -- the compiled SMO and the simplex QP -------------------------------------------------------
def test_smo_reaches_the_box_qp_optimum_of_cvxpy():
    rng = np.random.default_rng(3)
    n = 12
    P = psd(n, 5, 1) + 0.05 * np.eye(n)
    q = rng.normal(size=n)
    lo, hi = -rng.uniform(0.5, 1, n), rng.uniform(0.5, 1, n)
    w0 = np.zeros(n)
    w, G, it, viol = _smo(P, q, lo, hi, w0.copy(), 1e-12, 100000)
    x = cp.Variable(n)
    ref = cp.Problem(
        cp.Minimize(0.5 * cp.quad_form(x, P) - q @ x), [cp.sum(x) == 0, x >= lo, x <= hi]
    )
    ref.solve(solver="CLARABEL")
    assert 0.5 * w @ P @ w - q @ w == pytest.approx(ref.value, abs=1e-8)
    assert np.allclose(G, P @ w - q) and it > 0 and viol <= 1e-12
    assert abs(w.sum()) < 1e-12 and np.all(w >= lo) and np.all(w <= hi)
    # an iteration cap is respected and reported
    w1, _, it1, viol1 = _smo(P, q, lo, hi, w0.copy(), 1e-12, 2)
    assert it1 == 2 and viol1 > 1e-12


@pytest.mark.parametrize("singular", [False, True])
def test_simplex_qp_matches_cvxpy(singular):
    rng = np.random.default_rng(4)
    m = 6
    B = rng.normal(size=(m, 2 if singular else m))
    H = B @ B.T
    c = rng.normal(size=m)
    x = cp.Variable(m)
    ref = cp.Problem(
        cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(H)) + c @ x), [cp.sum(x) == 1, x >= 0]
    )
    ref.solve(solver="CLARABEL")
    for start in (np.full(m, 1.0 / m), np.eye(m)[int(np.argmax(c))]):
        sol = _simplex_qp(H, c, start)
        assert sol.sum() == pytest.approx(1.0, abs=1e-12) and sol.min() >= 0
        val = 0.5 * sol @ H @ sol + c @ sol
        assert ref.value - 1e-7 <= val <= ref.value + 1e-12
        assert start.sum() == pytest.approx(1.0)  # the start is not modified in place
    # an unconstrained optimum inside the simplex is returned exactly
    H2 = np.eye(3)
    assert np.allclose(
        _simplex_qp(H2, -np.array([0.2, 0.3, 0.5]), np.full(3, 1 / 3)), [0.2, 0.3, 0.5]
    )


# -- the master's construction ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"step": "bfgs"},
            r"^mkl_step must be one of \('newton', 'reduced_gradient'\); got 'bfgs'\.$",
        ),
        ({"svm_tol": 0.0}, r"^svm_tol must be a finite number > 0; got 0\.0\.$"),
        ({"svm_tol": np.inf}, r"^svm_tol must be a finite number > 0; got inf\.$"),
        ({"max_steps": 0}, r"^mkl_max_steps must be a positive integer; got 0\.$"),
        ({"max_steps": 1.5}, r"^mkl_max_steps must be a positive integer; got 1\.5\.$"),
    ],
)
def test_bad_options_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MKLMaster(fake_problem(), **kwargs)


def test_bad_problems_are_refused():
    eq = np.ones(8)
    eq[3] = 0.0
    with pytest.raises(
        ValueError, match=r"^the MKL master needs non-zero equality coefficients\.$"
    ):
        MKLMaster(fake_problem(eq=eq))
    msg = r"^the MKL master splits a = a\+ - a- for an l1 term: needs lower <= 0 <= upper\.$"
    with pytest.raises(ValueError, match=msg):
        MKLMaster(fake_problem(l1=0.1, lower=np.full(8, 0.1)))
    with pytest.raises(ValueError, match=msg):
        MKLMaster(fake_problem(l1=0.1, upper=np.full(8, -0.1), lower=np.full(8, -1.0)))
    # bounds touching 0 are accepted
    MKLMaster(fake_problem(l1=0.1, lower=np.zeros(8)))
    MKLMaster(fake_problem(l1=0.1, upper=np.zeros(8), lower=np.full(8, -1.0)))


def test_defaults_and_state():
    pb = fake_problem()
    m = MKLMaster(pb)
    assert m.step == "newton" and m.max_steps == 100 and m.deadline is None and m.prox is None
    assert m.tol == pytest.approx(1e-11 * max(1.0, np.max(np.abs(pb.linear_coef / pb.eq_coef))))
    assert m.lam == {} and isinstance(m.stats, MKLStats) and m.stats.gaps == []
    assert MKLMaster(pb, max_steps=3.0).max_steps == 3 and isinstance(
        MKLMaster(pb, max_steps=3.0).max_steps, int
    )
    st = MKLStats()
    assert (st.svm_solves, st.smo_iterations, st.master_iterations, st.unconverged_svms) == (0,) * 4
    assert (st.time_svm, st.time_master, st.time_bound_svm) == (0.0,) * 3
    assert MKLStats().gaps is not st.gaps
    assert _mkl.MKL_STEPS == ("newton", "reduced_gradient")


@pytest.mark.parametrize(("l1", "lower"), [(0.0, None), (0.3, None), (0.0, -0.4)])
def test_coordinates_map_the_inner_qp_exactly(l1, lower):
    """In ``w`` the equality has all coefficients +1, ``w`` in [w_lo, w_hi] iff ``a`` in the box,
    and ``1/2 w'Pw - w_lin'w`` is ``-(l(a) - 1/2 u'Ku)`` (for a+ a- = 0 with the l1 split).
    Also with a non-zero lower bound (not split), where ``w_lo`` / ``w_hi`` scale both ends."""
    pb = fake_problem(l1=l1, lower=None if lower is None else np.full(8, lower))
    n = pb.n
    m = MKLMaster(pb)
    K = psd(n, 4, 2)
    P = m._P(K)
    rng = np.random.default_rng(5)
    for _ in range(3):
        a = rng.uniform(pb.lower, pb.upper)
        w = m._to_w(a)
        assert np.allclose(m._alpha(w), a, atol=1e-14)
        assert np.all(w >= m.w_lo) and np.all(w <= m.w_hi)
        assert np.sum(w) == pytest.approx(pb.eq_coef @ a, abs=1e-12)
        assert 0.5 * w @ P @ w - m.w_lin @ w == pytest.approx(-dual_value(pb, K, a), abs=1e-12)
        # the proximal quadratic form: ||a||^2 = w'Ew
        assert w @ m.E @ w == pytest.approx(a @ a, abs=1e-12)
        # a = A w with A_{i,v} = [idx_v == i] acoef_v
        assert np.allclose(np.bincount(m.idx, m.acoef * w, minlength=n), a, atol=1e-14)
    # the box corners map to the w box (signs of the equality coefficients swap the ends)
    lo_w, hi_w = m._to_w(pb.lower), m._to_w(pb.upper)
    if l1 == 0:
        assert np.allclose(np.minimum(lo_w, hi_w), m.w_lo) and np.allclose(
            np.maximum(lo_w, hi_w), m.w_hi
        )
        assert m.idx.size == n
    else:
        assert m.idx.size == 2 * n and np.all(m.w_lo <= m.w_hi)
        assert np.allclose(m.w_hi - m.w_lo, np.abs(np.concatenate([pb.upper, -pb.lower]) * m.scale))
    # points outside the box are clipped into it
    far = m._to_w(pb.upper + 5.0)
    assert np.all(far <= m.w_hi) and np.all(far >= m.w_lo)
    assert np.array_equal(m.w, m._to_w(pb.initial_point()))


@pytest.mark.parametrize(("l1", "lower"), [(0.0, None), (0.3, None), (0.0, -0.4)])
@pytest.mark.parametrize("rank", [2, 8])
def test_inner_qp_matches_cvxpy(l1, lower, rank):
    """``_qp`` on a fixed kernel of low or full rank: the optimum of cvxpy's QP in ``a`` (also
    with a non-zero lower bound)."""
    pb = fake_problem(l1=l1, seed=rank, lower=None if lower is None else np.full(8, lower))
    m = MKLMaster(pb)
    K = psd(pb.n, rank, 7)
    w, iters, viol = m._qp(m._P(K), m.w_lin, m.w.copy())
    alpha = m._alpha(w)
    ref, _ = qp_reference(pb, K)
    assert viol <= m.tol and iters >= 0
    assert dual_value(pb, K, alpha) == pytest.approx(ref, abs=1e-7)
    assert dual_value(pb, K, alpha) >= ref - 1e-7
    assert pb.eq_coef @ alpha == pytest.approx(pb.eq_rhs, abs=1e-12)
    assert np.all(alpha >= pb.lower - 1e-15) and np.all(alpha <= pb.upper + 1e-15)


def test_inner_svm_and_kernel_svm_match_libsvm():
    """The SVC on a fixed kernel mixture against LIBSVM (tight tolerance), full and capped."""
    rng = np.random.default_rng(0)
    n = 16
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    pb = make_problem("svc", np.eye(n), y, C=1.5, rho=1.0)
    K = 0.6 * np.tanh(X @ X.T) ** 2 + 0.4 * (X @ X.T)
    K = _psd_factor(K) @ _psd_factor(K).T
    fit = _libsvm.train_precomputed(K, y, svm_type=0, C=1.5, tol=1e-10)
    u_lib = fit.coef if fit.labels[0] == 1 else -fit.coef
    ref = np.abs(u_lib).sum() - 0.5 * u_lib @ K @ u_lib
    m = MKLMaster(pb)
    a = m.kernel_svm(K, pb.initial_point(), full=True)
    assert dual_value(pb, K, a) == pytest.approx(ref, rel=1e-9)
    assert m.stats.smo_iterations > 0 and m.stats.time_bound_svm > 0
    assert m.stats.svm_solves == 0  # kernel_svm is not a master evaluation
    # capped (not full): 4 rounds and 20 n SMO iterations; still feasible, a valid lower value
    m2 = MKLMaster(pb)
    calls = []
    orig = m2._qp

    def spy(P, q, w0, max_smo=None, rounds=30):
        calls.append((max_smo, rounds))
        return orig(P, q, w0, max_smo=max_smo, rounds=rounds)

    m2._qp = spy
    a2 = m2.kernel_svm(K, pb.initial_point())
    assert calls == [(20 * n, 4)]
    assert dual_value(pb, K, a2) <= ref + 1e-12 and abs(y @ a2) < 1e-12
    m2.kernel_svm(K, pb.initial_point(), full=True)
    assert calls[-1] == (None, 30)


def test_qp_rounds_and_final_smo_limit():
    """``_qp`` returns as soon as SMO meets ``tol``; otherwise polishes, and with ``rounds=0``
    runs one SMO to ``tol`` capped at ``max_smo`` iterations."""
    pb = fake_problem(seed=9)
    m = MKLMaster(pb)
    K = psd(pb.n, 3, 4)
    P, q = m._P(K), m.w_lin
    w, iters, viol = m._qp(P, q, m.w.copy(), max_smo=3, rounds=0)
    assert iters == 3 and viol > m.tol
    w, iters, viol = m._qp(P, q, m.w.copy(), max_smo=None, rounds=0)
    assert viol <= m.tol
    ref, _ = qp_reference(pb, K)
    assert dual_value(pb, K, m._alpha(w)) == pytest.approx(ref, abs=1e-7)


@pytest.mark.parametrize("shifted", [False, True])
def test_newton_polish_never_increases_and_solves_singular_qps(shifted):
    """From a loose SMO point on a rank-2 kernel the polish lands on the optimum (cvxpy) without
    leaving the box or the hyperplane; ``shifted``: lower bounds 0.1 and the hyperplane
    ``eq'a = eq'lower != 0`` (``sum w`` is then not 0 and must be kept)."""
    if shifted:
        eq = np.random.default_rng(11).choice([-2.0, -0.5, 1.0, 3.0], size=10)
        lower = np.full(10, 0.1)
        pb = fake_problem(n=10, seed=11, lower=lower, rhs=float(eq @ lower))
        assert abs(pb.eq_rhs) > 0.1 and np.array_equal(pb.eq_coef, eq)
    else:
        pb = fake_problem(n=10, seed=11)
    m = MKLMaster(pb)
    K = psd(pb.n, 2, 5)
    P, q = m._P(K), m.w_lin
    w, G, _, _ = _smo(P, q, m.w_lo, m.w_hi, m.w.copy(), 1e-2, 10**6)
    before = 0.5 * w @ P @ w - q @ w
    w2 = m._newton_polish(P, q, w, G)
    after = 0.5 * w2 @ P @ w2 - q @ w2
    assert after <= before + 1e-14
    assert np.sum(w2) == pytest.approx(np.sum(w), abs=1e-13)
    assert np.all(w2 >= m.w_lo) and np.all(w2 <= m.w_hi)
    ref, _ = qp_reference(pb, K)
    assert -after == pytest.approx(ref, abs=1e-7)
    # w and G are not modified in place
    assert np.allclose(G, P @ w - q)


def test_newton_polish_from_points_with_fewer_than_two_free_variables():
    """With no free variable there is no step and no multiplier to compare: the polish returns
    the vertex unchanged (SMO, not the polish, leaves it). With one free variable there is no
    direction on ``sum d = 0`` either: the polish releases bound variables and then descends,
    never increasing the objective and staying on the box and the hyperplane."""
    pb = fake_problem(n=10, seed=11)
    m = MKLMaster(pb)
    K = psd(pb.n, 2, 5)
    P, q = m._P(K), m.w_lin
    w = m.w.copy()  # a = 0: every w_v is at one of its bounds (lower = 0)
    assert np.all((w == m.w_lo) | (w == m.w_hi))
    assert np.array_equal(m._newton_polish(P, q, w, P @ w - q), w)
    # one free variable: w_3 (equality coefficient -0.5) at its lower end, w_2 (3.0) inside
    assert pb.eq_coef[2] == 3.0 and pb.eq_coef[3] == -0.5
    w1 = w.copy()
    w1[3] = m.w_lo[3]
    w1[2] = -m.w_lo[3]
    assert m.w_lo[2] < w1[2] < m.w_hi[2] and np.sum(w1) == 0.0
    w2 = m._newton_polish(P, q, w1, P @ w1 - q)
    obj = lambda v: 0.5 * v @ P @ v - q @ v  # noqa: E731
    assert obj(w2) < obj(w1) - 1e-3
    assert abs(np.sum(w2)) < 1e-13 and np.all(w2 >= m.w_lo) and np.all(w2 <= m.w_hi)


# -- J, its gradient and Hessian ------------------------------------------------------------
def mixture(kernels, lam):
    return sum(weight * k.gram for weight, k in zip(lam, kernels, strict=True))


def three_kernels(pb, seed=0):
    n = pb.n
    return [kernel(psd(n, r, seed + r), r, 0.3 * r) for r in (2, 3, 5)]


@pytest.mark.parametrize(("prox", "l1"), [(False, 0.0), (True, 0.0), (False, 0.3)])
def test_evaluate_is_the_svm_on_the_mixture(prox, l1):
    pb = fake_problem(seed=1, l1=l1)
    kernels = three_kernels(pb)
    m = MKLMaster(pb)
    lam = np.array([0.5, 0.0, 0.5])
    p = (0.7, np.linspace(-0.2, 0.4, pb.n)) if prox else None
    m.prox = p
    J, values, w, P, extra = m._evaluate(lam, kernels, m.w)
    alpha = m._alpha(w)
    ref, _ = qp_reference(pb, mixture(kernels, lam), p)
    const = lam @ np.array([k.constant for k in kernels])
    assert J == pytest.approx(ref + const, abs=1e-7)
    expect = values_at(pb, kernels, alpha)
    if prox:
        expect = expect - 0.5 * p[0] * np.sum((alpha - p[1]) ** 2)
    assert np.allclose(values, expect, atol=1e-12)
    assert J == pytest.approx(lam @ values, abs=1e-12)
    Pref = m._P(mixture(kernels, lam)) + (p[0] * m.E if prox else 0.0)
    assert np.allclose(P, Pref) and extra is None
    assert m.stats.svm_solves == 1 and m.stats.time_svm > 0 and m.stats.unconverged_svms == 0


def test_unconverged_inner_svm_is_counted(monkeypatch):
    pb = fake_problem(seed=2)
    kernels = three_kernels(pb)
    m = MKLMaster(pb)
    monkeypatch.setattr(m, "_qp", lambda P, q, w0: (w0.copy(), 0, 10 * m.tol))
    m._evaluate(np.full(3, 1 / 3), kernels, m.w)
    assert m.stats.unconverged_svms == 1
    monkeypatch.setattr(m, "_qp", lambda P, q, w0: (w0.copy(), 7, m.tol))
    m._evaluate(np.full(3, 1 / 3), kernels, m.w)
    assert m.stats.unconverged_svms == 1 and m.stats.svm_solves == 2
    assert m.stats.smo_iterations == 7

    def slow(P, q, w0):
        time.sleep(0.01)
        return w0.copy(), 5, 2 * m.tol

    monkeypatch.setattr(m, "_qp", slow)
    t0 = time.perf_counter()
    m.stats.time_svm = 0.0
    m._evaluate(np.full(3, 1 / 3), kernels, m.w)
    m._evaluate(np.full(3, 1 / 3), kernels, m.w)
    assert m.stats.unconverged_svms == 3 and m.stats.smo_iterations == 17
    assert 0.02 <= m.stats.time_svm <= time.perf_counter() - t0


def J_of(pb, kernels, lam):
    ref, _ = qp_reference(pb, mixture(kernels, lam))
    return ref + lam @ np.array([k.constant for k in kernels])


@pytest.mark.parametrize("l1", [0.0, 0.3])
def test_danskin_gradient_and_hessian_match_finite_differences(l1):
    """``dJ/dlambda_i = L_i(a*)`` (Danskin) and ``d values / d lambda = H`` up to a shift common
    to all values (``H - 1 lambda'H``; steps on the simplex see only differences) on a fixed free
    set, by central differences of J and of the values evaluated by the master itself (and J by
    cvxpy independently); ``d'Hd`` is J's second derivative along simplex directions ``d``.
    With an l1 term (the ``a = a+ - a-`` split, 2n inner variables) as well."""
    lower = np.full(10, -50.0) if l1 else None
    pb = fake_problem(n=10, seed=3, upper=np.full(10, 50.0), l1=l1, lower=lower)
    kernels = [kernel(psd(pb.n, 10, s) + 0.5 * np.eye(pb.n), s, 0.1 * s) for s in range(3)]
    m = MKLMaster(pb, svm_tol=1e-13)
    lam = np.array([0.3, 0.5, 0.2])
    J, values, w, P, _ = m._evaluate(lam, kernels, m.w)
    h = 1e-4
    H = m._hessian(kernels, w, P)
    assert np.allclose(H, H.T, atol=1e-10) and np.linalg.eigvalsh(H).min() >= -1e-10
    for i in range(3):
        e = np.eye(3)[i]
        Jp, vp, *_ = m._evaluate(lam + h * e, kernels, w)
        Jm, vm, *_ = m._evaluate(lam - h * e, kernels, w)
        assert (Jp - Jm) / (2 * h) == pytest.approx(values[i], rel=1e-6, abs=1e-8)
        fd = (vp - vm) / (2 * h)
        assert np.allclose(fd - fd.mean(), H[:, i] - H[:, i].mean(), rtol=1e-5, atol=1e-7)
        assert np.allclose(fd, H[:, i] - lam @ H[:, i], rtol=1e-5, atol=1e-7)
    d = np.array([1.0, -0.4, -0.6])
    Jp = m._evaluate(lam + h * d, kernels, w)[0]
    Jm = m._evaluate(lam - h * d, kernels, w)[0]
    assert (Jp - 2 * J + Jm) / h**2 == pytest.approx(d @ H @ d, rel=1e-3)
    assert J_of(pb, kernels, lam) == pytest.approx(J, abs=1e-7)


def test_hessian_is_zero_without_two_free_variables():
    pb = fake_problem(seed=4)
    kernels = three_kernels(pb)
    m = MKLMaster(pb)
    w = m.w_lo.copy()
    assert np.array_equal(m._hessian(kernels, w, m._P(kernels[0].gram)), np.zeros((3, 3)))


# -- the master solve -----------------------------------------------------------------------
def proxy_kernels(problem, seed, count):
    rng = np.random.default_rng(seed)
    K0 = problem.working_kernel
    out = []
    for j in range(count):
        a = problem.project(rng.uniform(problem.lower, problem.upper))
        f = _psd_factor(problem.working_proxy_kernel(problem.evaluate(a).state))
        out.append(_Kernel(f, problem.penalty_rho * float(np.sum((f @ f.T - K0) ** 2)), j))
    return out


def svc_problem(n=12, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    return make_problem("svc", np.tanh(0.8 * X @ X.T - 0.3), y, C=1.0, rho=1.0)


@pytest.mark.parametrize("step", ["newton", "reduced_gradient"])
def test_master_value_and_weights_match_the_cvxpy_qclp(step):
    pb = svc_problem()
    kernels = proxy_kernels(pb, 1, 4)
    t_ref, _, mult = qclp_reference(pb, kernels)
    newton = step == "newton"
    gap_tol = (1e-10 if newton else 1e-6) * max(1.0, abs(t_ref))
    m = MKLMaster(pb, step=step, max_steps=100 if newton else 3000)
    t, alpha, lam, gap = m.solve(kernels, gap_tol)
    assert gap <= gap_tol and m.stats.gaps == [gap]
    assert lam.sum() == pytest.approx(1.0, abs=1e-12) and lam.min() >= 0
    assert t_ref - 1e-7 <= t <= t_ref + gap + 1e-7
    assert np.allclose(lam, mult / mult.sum(), atol=1e-4 if newton else 1e-2)
    vals = values_at(pb, kernels, alpha)
    assert gap == pytest.approx(t - vals.min(), abs=1e-9)
    assert np.allclose(m.last_values, vals, atol=1e-10)
    assert m.lam == {k.origin: float(v) for k, v in zip(kernels, lam, strict=True)}
    assert np.array_equal(m.w, m._to_w(alpha)) or np.allclose(m._alpha(m.w), alpha)
    assert m.stats.master_iterations >= 1 and m.stats.time_master > 0
    if newton:
        assert m.stats.master_iterations <= 10


def test_master_warm_starts_from_the_weights_of_each_kernel_origin():
    pb = svc_problem(seed=2)
    kernels = proxy_kernels(pb, 3, 3)
    m = MKLMaster(pb)
    _, _, lam, _ = m.solve(kernels, 1e-9)
    it = m.stats.master_iterations
    # the same kernels again: already solved, no step
    _, _, lam2, gap2 = m.solve(kernels, 1e-9)
    assert m.stats.master_iterations == it and np.allclose(lam2, lam) and gap2 <= 1e-9
    # a new kernel (weight 0 to start) and one dropped: the others keep their weights
    new = proxy_kernels(pb, 9, 1)[0]
    new.origin = 7
    m.max_steps = 1
    seen = []
    orig = m._evaluate

    def spy(lam_, kernels_, w0):
        seen.append(lam_.copy())
        return orig(lam_, kernels_, w0)

    m._evaluate = spy
    m.lam = {0: 0.3, 1: 0.5, 2: 0.2}  # stored weights of a mixed solution
    m.solve([kernels[0], kernels[2], new], 1e-9)
    start = np.array([0.3, 0.2, 0.0]) / 0.5  # renormalised without kernel 1
    assert np.allclose(seen[0], start)
    # no stored weight at all: uniform
    seen.clear()
    m3 = MKLMaster(pb, max_steps=1)
    m3._evaluate = lambda lam_, k_, w0: (seen.append(lam_.copy()), orig(lam_, k_, w0))[1]
    m3.solve(kernels, 1e-9)
    assert np.allclose(seen[0], np.full(3, 1 / 3))


def test_max_steps_and_deadline_stop_the_master():
    pb = svc_problem(seed=4)
    kernels = proxy_kernels(pb, 5, 4)
    m = MKLMaster(pb, max_steps=1)
    m.solve(kernels, 0.0)
    assert m.stats.master_iterations == 1
    pb2 = svc_problem(seed=2)
    kernels2 = proxy_kernels(pb2, 3, 4)  # a mixed optimum: no step lands on it exactly
    for step in ("newton", "reduced_gradient"):
        for steps in (1, 2):
            m = MKLMaster(pb2, step=step, max_steps=steps)
            *_, gap = m.solve(kernels2, 0.0)
            assert m.stats.master_iterations == steps and gap > 0  # stopped by the limit
    # gap_tol = 0: the steps run until no step decreases J (a step returns None), and the
    # master still returns its point, stats and gap
    for step, calls_of, limit in (
        ("newton", "_newton_step", 100),
        ("reduced_gradient", "_simplemkl_step", 3),
    ):
        m = MKLMaster(pb2, step=step, max_steps=limit)
        used = {"_newton_step": 0, "_simplemkl_step": 0}
        for name in used:
            real = getattr(m, name)

            def counted(*a, _real=real, _name=name, _used=used):
                _used[_name] += 1
                return _real(*a)

            setattr(m, name, counted)
        out = m.solve(kernels2, 0.0)
        assert out is not None and m.stats.gaps == [out[3]]
        assert used[calls_of] == m.stats.master_iterations and sum(used.values()) == used[calls_of]
        if step == "newton":  # stopped by a step that cannot decrease J, near the optimum
            assert 1 <= m.stats.master_iterations < limit and out[3] < 1e-6
        else:
            assert m.stats.master_iterations == limit
    # one kernel: the master's gap is exactly 0, no step even at gap_tol = 0
    m = MKLMaster(pb)
    _, _, lam, gap = m.solve(kernels[:1], 0.0)
    assert gap == 0.0 and m.stats.master_iterations == 0 and lam.tolist() == [1.0]
    m2 = MKLMaster(pb)
    m2.deadline = time.perf_counter() - 1.0
    _, _, lam, gap = m2.solve(kernels, 0.0)
    assert m2.stats.master_iterations == 0 and np.allclose(lam, 0.25) and gap > 0
    assert m2.stats.svm_solves == 1
    assert m2._out_of_time() and not MKLMaster(pb)._out_of_time()


@pytest.mark.parametrize("step", ["newton", "reduced_gradient"])
def test_proximal_master_matches_cvxpy(step):
    """With ``prox = (mu, c)`` the master solves ``max min_i L_i(a) - mu/2 ||a - c||^2`` and
    ``last_values`` are the constraint values without the proximal term."""
    pb = svc_problem(seed=5)
    kernels = proxy_kernels(pb, 6, 3)
    c = pb.project(np.full(pb.n, 0.4))
    mu = 0.5
    a = cp.Variable(pb.n)
    t = cp.Variable()
    u = cp.multiply(pb.u_coef, a)
    pen = 0.5 * mu * cp.sum_squares(a - c)
    quad = [
        t <= pb.linear_coef @ a - 0.5 * cp.sum_squares(k.factor.T @ u) + k.constant - pen
        for k in kernels
    ]
    ref = cp.Problem(
        cp.Maximize(t), [pb.eq_coef @ a == pb.eq_rhs, a >= pb.lower, a <= pb.upper, *quad]
    )
    ref.solve(solver="CLARABEL")
    m = MKLMaster(pb, step=step, max_steps=100 if step == "newton" else 3000)
    J, alpha, lam, gap = m.solve(kernels, 1e-9 if step == "newton" else 1e-6, (mu, c))
    assert ref.value - 1e-7 <= J <= ref.value + gap + 1e-7
    assert np.allclose(m.last_values, values_at(pb, kernels, alpha), atol=1e-10)
    assert np.allclose(alpha, a.value, atol=1e-3)
    assert m.prox == (mu, c)


def test_newton_step_decreases_j_by_armijo_and_falls_back_to_the_best_vertex(monkeypatch):
    pb = svc_problem(seed=6)
    kernels = proxy_kernels(pb, 7, 3)
    m = MKLMaster(pb)
    lam = np.full(3, 1 / 3)
    J, values, w, P, _ = m._evaluate(lam, kernels, m.w)
    out = m._newton_step(lam, J, values, w, P, kernels)
    lam2, J2, values2, w2, P2 = out
    grad = values - values.mean()
    assert J2 <= J + 1e-4 * float(grad @ (lam2 - lam)) + 1e-15
    assert J2 < J and lam2.sum() == pytest.approx(1.0) and lam2.min() >= 0
    Jchk, vchk, *_ = m._evaluate(lam2, kernels, w)
    assert J2 == pytest.approx(Jchk, abs=1e-9) and np.allclose(values2, vchk, atol=1e-8)
    # a model step that is not a descent direction: the best vertex is tried instead
    monkeypatch.setattr(_mkl, "_simplex_qp", lambda H, c, start: start.copy())
    vertex = []
    orig = m._evaluate
    monkeypatch.setattr(
        m, "_evaluate", lambda l_, k_, w0: (vertex.append(l_.copy()), orig(l_, k_, w0))[1]
    )
    out = m._newton_step(lam, J, values, w, P, kernels)
    best = np.eye(3)[int(np.argmin(values))]
    assert out is not None and np.allclose(vertex[0], best)
    # at a solution (vertex with the smallest value already): no step
    assert m._newton_step(best, *m._evaluate(best, kernels, w)[:4], kernels) is None
    # deadline passed: no step
    m.deadline = time.perf_counter() - 1.0
    monkeypatch.undo()
    assert m._newton_step(lam, J, values, w, P, kernels) is None


def test_simplemkl_step_follows_the_reduced_gradient():
    """SimpleMKL's direction (Rakotomamonjy et al. 2008, eq. 12) decreases J, and the returned
    weights' J equals a fresh evaluation; a zero direction or a deadline gives no step."""
    pb = svc_problem(seed=8)
    kernels = proxy_kernels(pb, 8, 3)
    m = MKLMaster(pb, step="reduced_gradient")
    lam = np.array([0.2, 0.5, 0.3])
    J, values, w, P, _ = m._evaluate(lam, kernels, m.w)
    lam2, J2, values2, w2, extra = m._simplemkl_step(lam, J, values, w, kernels)
    assert extra is None and J2 < J and lam2.sum() == pytest.approx(1.0) and lam2.min() >= 0
    assert J2 == pytest.approx(m._evaluate(lam2, kernels, w)[0], abs=1e-9)
    # J along the segment is no better than the step found (golden section on the last piece)
    grad = values - values.mean()
    assert float(grad @ (lam2 - lam)) < 0
    # equal values: zero reduced gradient, no step
    assert m._simplemkl_step(lam, J, np.full(3, 1.0), w, kernels) is None


def test_solve_reports_the_master_gap_and_values_are_the_constraints():
    """The gap ``J - min_i L_i`` bounds ``J - (13)`` (cvxpy) from above at every accuracy."""
    pb = svc_problem(seed=10)
    kernels = proxy_kernels(pb, 11, 4)
    t_ref, _, _ = qclp_reference(pb, kernels)
    for steps in (1, 2, 5):
        m = MKLMaster(pb, max_steps=steps)
        J, alpha, lam, gap = m.solve(kernels, 0.0)
        assert J - t_ref >= -1e-7 and gap >= J - t_ref - 1e-7
        assert J == pytest.approx(lam @ values_at(pb, kernels, alpha), abs=1e-9)


def test_newton_line_search_is_armijo_with_halving(monkeypatch, caplog):
    """Backtracking accepts the first ``s = 1, 1/2, ...`` with ``J(s) <= J + 1e-4 s slope``
    (equality included), and gives up (None) after 40 halvings."""
    pb = svc_problem(seed=6)
    kernels = proxy_kernels(pb, 7, 3)
    m = MKLMaster(pb)
    lam = np.full(3, 1 / 3)
    J, values, w, P, _ = m._evaluate(lam, kernels, m.w)
    target = 0.5 * lam + 0.5 * np.eye(3)[int(np.argmin(values))]
    monkeypatch.setattr(_mkl, "_simplex_qp", lambda H, c, start: target.copy())
    grad = values - values.mean()
    slope = float(grad @ (target - lam))
    assert slope < 0
    script = []

    def fake_evaluate(trial, kernels_, w0):
        s = len(script)
        script.append(trial.copy())
        return J_trials[s], values, w0, P, None

    monkeypatch.setattr(m, "_evaluate", fake_evaluate)
    # s = 1 rises a little (accepted by a sign error), s = 1/2 meets the rule with equality
    J_trials = [J + 1e-5 * abs(slope), J + 1e-4 * 0.5 * slope]
    lam2, J2, *_ = m._newton_step(lam, J, values, w, P, kernels)
    assert len(script) == 2 and J2 == J_trials[1]
    assert np.allclose(lam2, lam + 0.5 * (target - lam))
    assert np.allclose(script[0], target)
    # two rejections: s = 1/4
    script.clear()
    J_trials = [J + 1.0, J + 1.0, J + 1e-4 * 0.25 * slope]
    lam4, J4, *_ = m._newton_step(lam, J, values, w, P, kernels)
    assert len(script) == 3 and np.allclose(lam4, lam + 0.25 * (target - lam))
    # never sufficient: 40 trials, then no step
    script.clear()
    J_trials = [J + 1.0] * 40
    with caplog.at_level(logging.DEBUG, logger="indefsvm.proxy.solvers._mkl"):
        assert m._newton_step(lam, J, values, w, P, kernels) is None and len(script) == 40
    d = target - lam
    assert [r.getMessage() for r in caplog.records] == [
        f"mkl newton: no decrease along d (slope {slope:.3e}, J {J:.12g}, last trial "
        f"{J + 1.0:.12g}, lam {lam}, d {d})"
    ]
    assert caplog.records[0].levelno == logging.DEBUG


def simplemkl_reference(lam, values, J, evaluate):
    """One outer iteration of SimpleMKL (Rakotomamonjy et al. 2008, Algorithm 1 and eq. 12),
    written from the paper: reduced gradient w.r.t. the largest weight, descent to the
    boundary of the simplex while J decreases, golden-section search on the last segment."""
    grad = values - values.mean()
    mu = int(np.argmax(lam))
    D = np.zeros_like(lam)
    for k in range(lam.size):
        if k != mu and (lam[k] > 0 or grad[k] - grad[mu] < 0):
            D[k] = grad[mu] - grad[k]
    D[mu] = -D.sum()
    cur_lam, cur_J = lam, J
    for _ in range(lam.size):
        neg = np.flatnonzero(D < 0)
        if neg.size == 0:
            break
        ratios = -cur_lam[neg] / D[neg]
        nu = int(neg[np.argmin(ratios)])
        trial = np.maximum(cur_lam + ratios.min() * D, 0.0)
        trial[nu] = 0.0
        trial /= trial.sum()
        J2 = evaluate(trial)
        if J2 >= cur_J:
            break
        cur_lam, cur_J = trial, J2
        # the direction stays on the simplex: the base weight's entry is minus the sum of the
        # others (the authors' code; the printed "D_mu - D_nu" has the wrong sign), 0 if the
        # base weight itself reached 0
        D[nu] = 0.0
        D[mu] = 0.0 if nu == mu else -(D.sum() - D[mu])
    neg = np.flatnonzero(D < 0)
    if neg.size == 0:
        return cur_lam, cur_J
    a, b = 0.0, float(np.min(-cur_lam[neg] / D[neg]))
    r = (np.sqrt(5.0) - 1.0) / 2.0
    best = (cur_lam, cur_J)
    for _ in range(12):
        s, t = b - r * (b - a), a + r * (b - a)
        Js = []
        for step in (s, t):
            trial = np.maximum(cur_lam + step * D, 0.0)
            trial /= trial.sum()
            Js.append(evaluate(trial))
            if Js[-1] < best[1]:
                best = (trial, Js[-1])
        if Js[0] <= Js[1]:
            b = t
        else:
            a = s
    return best


@pytest.mark.parametrize("lam", [[0.2, 0.5, 0.3], [0.0, 0.7, 0.3], [0.6, 0.1, 0.3]])
def test_simplemkl_step_replays_the_papers_algorithm(lam):
    """Every weight vector the step evaluates, and the one it returns, are those of SimpleMKL's
    Algorithm 1 replayed with the same J values."""
    pb = svc_problem(seed=8)
    kernels = proxy_kernels(pb, 8, 3) + proxy_kernels(pb, 12, 1)
    kernels[-1].origin = 3
    lam = np.array([*lam, 0.0])
    m = MKLMaster(pb, step="reduced_gradient")
    J, values, w, P, _ = m._evaluate(lam, kernels, m.w)
    trials, Js = [], []
    orig = m._evaluate

    def spy(trial, kernels_, w0):
        out = orig(trial, kernels_, w0)
        trials.append(trial.copy())
        Js.append(out[0])
        return out

    m._evaluate = spy
    out = m._simplemkl_step(lam, J, values, w, kernels)
    replay = iter(range(len(trials)))

    def evaluate(trial):
        i = next(replay)
        assert np.allclose(trial, trials[i], rtol=1e-12, atol=1e-15), i
        return Js[i]

    ref_lam, ref_J = simplemkl_reference(lam, values, J, evaluate)
    assert next(replay, None) is None  # no extra evaluations
    assert out[1] == ref_J and np.allclose(out[0], ref_lam, rtol=1e-12, atol=1e-15)


def synthetic_master(J_of_lam, values_of_lam, log=None):
    """A master whose ``_evaluate`` is a given smooth J on the simplex (``w`` is ``10 + lam``,
    distinct from the values): SimpleMKL's step sees J only through ``_evaluate``."""
    m = MKLMaster(svc_problem(seed=8), step="reduced_gradient")

    def evaluate(lam, kernels, w0):
        if log is not None:
            log.append(lam.copy())
        return float(J_of_lam(lam)), values_of_lam(lam), 10.0 + lam, None, None

    m._evaluate = evaluate
    m.J_of = J_of_lam
    return m


def replay_simplemkl(m, lam, log):
    """The step's output and its evaluated weights against ``simplemkl_reference`` on the same
    J (evaluated independently)."""
    J, values, w, _, _ = m._evaluate(lam, None, None)
    log.clear()
    out = m._simplemkl_step(lam, J, values, w, None)
    ref_log = []

    def evaluate(trial):
        ref_log.append(trial.copy())
        return float(m.J_of(trial))

    ref_lam, ref_J = simplemkl_reference(lam, values, J, evaluate)
    assert len(log) == len(ref_log)
    for i, (a, b) in enumerate(zip(log, ref_log, strict=True)):
        assert np.allclose(a, b, rtol=1e-12, atol=1e-15), i
    assert out[1] == ref_J and np.allclose(out[0], ref_lam, rtol=1e-12, atol=1e-15)
    return out


def test_simplemkl_boundary_steps_keep_the_direction_on_the_simplex():
    """A linear J: the smallest-ratio weight that reaches 0 first is not the base (largest)
    weight, J keeps decreasing, so a second boundary step follows with the updated direction
    ``D_mu = -(sum of the others)`` (sum D = 0, the authors' code). Every trial weight vector is
    the reference's, and the step ends at the best vertex of the linear J."""
    g = np.array([0.0, 1.0, 0.5, -0.2])
    log = []
    m = synthetic_master(lambda lam: g @ lam, lambda lam: g.copy(), log)
    lam = np.array([0.4, 0.1, 0.2, 0.3])
    out = replay_simplemkl(m, lam, log)
    # the first boundary step zeroes weight 1 (ratio 0.1), not the base weight 0
    assert np.isclose(log[0][1], 0.0) and log[0][0] > 0.4 and len(log) >= 2
    assert out[1] < g @ lam


def test_simplemkl_golden_section_moves_both_ends():
    """A quadratic J with its minimum inside the last segment (the boundary step overshoots):
    the golden-section search moves its lower end off 0 and its upper end down; every trial is
    the reference's and the result is within the final bracket of the minimiser."""
    c = np.array([0.55, 0.15, 0.15, 0.15])
    log = []
    m = synthetic_master(lambda lam: 0.5 * np.sum((lam - c) ** 2), lambda lam: lam - c, log)
    lam = np.array([0.7, 0.1, 0.1, 0.1])
    out = replay_simplemkl(m, lam, log)
    assert np.allclose(out[0], c, atol=0.02) and out[1] < 0.5 * np.sum((lam - c) ** 2)


def test_simplemkl_step_without_a_better_trial_returns_the_start():
    """Values that promise a descent which J does not give (J grows away from lam): no trial is
    better, and the step returns the start's weights, J, values and inner solution unchanged."""
    lam = np.array([0.5, 0.3, 0.2])
    v0 = np.array([0.0, 1.0, 2.0])
    log = []
    m = synthetic_master(lambda t: 1.0 + np.sum((t - lam) ** 2), lambda t: v0.copy(), log)
    J, values, w, _, _ = m._evaluate(lam, None, None)
    out = m._simplemkl_step(lam, J, values, w, None)
    assert len(log) > 3  # the boundary trial and the golden-section trials were all worse
    assert np.array_equal(out[0], lam) and out[1] == J
    assert out[2] is values and out[3] is w and out[4] is None


def test_simplemkl_deadline_in_the_golden_section_returns_the_best_so_far():
    """The deadline passing during the golden-section search ends the search, and the step still
    returns the best weights evaluated so far (not "no step")."""
    c = np.array([0.55, 0.15, 0.15, 0.15])
    log = []
    m = synthetic_master(lambda lam: 0.5 * np.sum((lam - c) ** 2), lambda lam: lam - c, log)
    lam = np.array([0.7, 0.1, 0.1, 0.1])
    J, values, w, _, _ = m._evaluate(lam, None, None)
    log.clear()
    real = m._evaluate

    def timed(trial, kernels, w0):
        out = real(trial, kernels, w0)
        if len(log) == 3:  # the boundary trial and one golden-section pair
            m.deadline = time.perf_counter() - 1.0
        return out

    m._evaluate = timed
    out = m._simplemkl_step(lam, J, values, w, None)
    assert len(log) == 3 and out is not None
    Js = [0.5 * np.sum((t - c) ** 2) for t in log]
    k = int(np.argmin(Js))
    assert Js[k] < J and out[1] == Js[k] and np.array_equal(out[0], log[k])


def test_master_returns_its_point_when_a_step_gives_none():
    """A step that returns no new weights (here: the deadline passes inside the Newton step,
    before its line search) ends the solve, which still returns its weights, the inner solution
    and the gap, and records the gap and the step."""
    pb = svc_problem(seed=2)
    kernels = proxy_kernels(pb, 3, 4)
    m = MKLMaster(pb)
    real = m._hessian

    def late(*args):
        m.deadline = time.perf_counter() - 1.0
        return real(*args)

    m._hessian = late
    out = m.solve(kernels, 0.0)
    assert out is not None
    t, alpha, lam, gap = out
    assert np.allclose(lam, 0.25) and gap > 0 and m.stats.gaps == [gap]
    assert m.stats.master_iterations == 1 and m.stats.svm_solves == 1
    assert np.array_equal(alpha, m._alpha(m.w)) and m.lam == dict.fromkeys(range(4), 0.25)


def test_newton_step_solves_the_ridged_model_qp(monkeypatch):
    """The Newton step's model: ``min_x (grad - Hr lam)'x + 1/2 x'Hr x`` on the simplex with
    ``Hr = H + 1e-12 tr(H)/m I`` (H from ``_hessian``), started at lam."""
    X = np.random.default_rng(6).normal(size=(12, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    pb = make_problem("svc", np.tanh(0.8 * X @ X.T - 0.3), y, C=0.2, rho=1.0)
    kernels = proxy_kernels(pb, 7, 3)
    m = MKLMaster(pb)
    lam = np.array([0.5, 0.3, 0.2])
    J, values, w, P, _ = m._evaluate(lam, kernels, m.w)
    H = m._hessian(kernels, w, P)
    ridge = 1e-12 * np.trace(H) / 3
    assert 0 < np.trace(H) / 3 < 0.5  # the ridge's scale (and its floor) matter here
    got = []
    real = _mkl._simplex_qp

    def spy(Hr, c, start):
        got.append((Hr.copy(), c.copy(), start.copy()))
        return real(Hr, c, start)

    monkeypatch.setattr(_mkl, "_simplex_qp", spy)
    m._newton_step(lam, J, values, w, P, kernels)
    Hr, c, start = got[0]
    assert np.allclose(Hr - H, ridge * np.eye(3), rtol=1e-2, atol=1e-3 * ridge)
    grad = values - values.mean()
    assert np.allclose(c, grad - Hr @ lam, rtol=1e-12, atol=1e-15)
    assert np.array_equal(start, lam)


def test_newton_target_minimises_the_quadratic_model_around_lam(monkeypatch):
    """The Newton step's target is ``argmin_x grad'(x - lam) + 1/2 (x - lam)'Hr (x - lam)`` on
    the simplex (cvxpy, written around ``lam``), on data where ``Hr lam`` is far from 0 (for
    the SVC of the test above ``H lam`` vanishes to rounding, so the model's linear term
    ``grad - Hr lam`` cannot be told from ``grad + Hr lam`` there)."""
    pb = fake_problem(n=10, seed=3, upper=np.full(10, 50.0))
    kernels = [kernel(psd(pb.n, 10, s) + 0.5 * np.eye(pb.n), s, 0.1 * s) for s in range(3)]
    m = MKLMaster(pb, svm_tol=1e-13)
    lam = np.array([0.3, 0.5, 0.2])
    J, values, w, P, _ = m._evaluate(lam, kernels, m.w)
    got = []
    real = _mkl._simplex_qp

    def spy(Hr, c, start):
        x = real(Hr, c, start)
        got.append((Hr.copy(), x.copy()))
        return x

    monkeypatch.setattr(_mkl, "_simplex_qp", spy)
    m._newton_step(lam, J, values, w, P, kernels)
    Hr, target = got[0]
    assert np.linalg.norm(Hr @ lam) > 1.0
    grad = values - values.mean()
    x = cp.Variable(3)
    d = x - lam
    model = grad @ d + 0.5 * cp.quad_form(d, cp.psd_wrap(0.5 * (Hr + Hr.T)))
    cp.Problem(cp.Minimize(model), [x >= 0, cp.sum(x) == 1]).solve(solver="CLARABEL")
    assert np.allclose(target, x.value, atol=1e-6)


def test_kernel_svm_stats_accumulate(monkeypatch):
    pb = svc_problem(seed=3)
    m = MKLMaster(pb)
    K = proxy_kernels(pb, 4, 1)[0].gram
    real = m._qp

    def slow(*args, **kwargs):
        time.sleep(0.01)
        return real(*args, **kwargs)

    monkeypatch.setattr(m, "_qp", slow)
    t0 = time.perf_counter()
    m.kernel_svm(K, pb.initial_point(), full=True)
    first = m.stats.smo_iterations
    m.kernel_svm(K, pb.initial_point(), full=True)
    assert first > 0 and m.stats.smo_iterations == 2 * first
    assert 0.02 <= m.stats.time_bound_svm <= time.perf_counter() - t0


@pytest.mark.parametrize("n_free", [2, 5])
def test_hessian_matches_the_pseudo_inverse_formula(n_free):
    """``H = G' Z (Z'P_FF Z)^+ Z'G`` on the free variables (``G`` the columns ``(P_i w)_F``,
    ``Z`` a basis of ``{sum d = 0}``), with eigenvalues of ``Z'P_FF Z`` below ``1e-10`` of the
    largest dropped: a crafted ``P`` whose reduced spectrum is ``1e-3 .. 1e-12`` (the smallest
    kept, since 1e-12 > 1e-10 * 1e-3) and a point with exactly ``n_free`` free variables."""
    pb = fake_problem(n=8, seed=5, eq=np.ones(8), upper=np.full(8, 2.0))
    m = MKLMaster(pb)
    kernels = [kernel(psd(8, 3, s), s) for s in range(3)]
    w = m.w_lo.copy()
    w[-1] = m.w_hi[-1]
    free = np.arange(1, 1 + n_free)
    w[free] = np.linspace(0.3, 1.5, n_free)
    rng = np.random.default_rng(0)
    Z = np.linalg.qr(np.column_stack([np.ones(n_free), rng.normal(size=(n_free, n_free - 1))]))[0]
    spectrum = np.array([1e-3, 1e-12, 4e-4, 2e-5][: n_free - 1])
    P = rng.normal(size=(8, 8)) * 1e-3
    P = P @ P.T
    P[np.ix_(free, free)] = Z[:, 1:] @ np.diag(spectrum) @ Z[:, 1:].T + 0.3 * np.outer(
        Z[:, 0], Z[:, 0]
    )
    H = m._hessian(kernels, w, P)
    G = np.column_stack([(m._P(k.gram) @ w)[free] for k in kernels])
    N = Z[:, 1:]
    R = N.T @ P[np.ix_(free, free)] @ N
    ev, V = np.linalg.eigh(R)
    keep = ev > 1e-10 * ev.max()
    assert keep.sum() == n_free - 1  # 1e-12 is kept
    Rp = V[:, keep] @ np.diag(1 / ev[keep]) @ V[:, keep].T
    ref = G.T @ N @ Rp @ N.T @ G
    # (the 1e-12 eigenvalue amplifies rounding to ~1e-5 relative; dropping it changes H by 1e6)
    assert np.allclose(H, ref, rtol=1e-3, atol=1e-9 * np.abs(ref).max())


@pytest.mark.parametrize(
    ("seed", "ridge"),
    [
        *[(s, 0.0) for s in (0, 1, 2, 4, 5)],
        (3, 1e-12),
        # Regression (found by this test): with an exactly singular H (rank 3 of 12) the
        # least-squares KKT solve of a face whose QP is unbounded below gave a point that
        # passed the (mean-multiplier) optimality check without being optimal: -1.87 against
        # cvxpy's -9.74 (30 of 300 random singular instances wrong). Fixed by following the
        # null-space direction of decrease to the boundary. The Newton step passes
        # H + 1e-12 tr(H)/m I, which the old code solved correctly (the seed-3 case above).
        (3, 0.0),
    ],
)
def test_simplex_qp_random_faces_match_cvxpy(seed, ridge):
    """Optima on small faces of a 12-simplex (the active-set method must drop most weights),
    from the barycentre and from a vertex, singular and regular H."""
    rng = np.random.default_rng(100 + seed)
    m = 12
    B = rng.normal(size=(m, 3 if seed % 2 else m))
    H = B @ B.T * rng.uniform(0.01, 10)
    H = H + ridge * np.trace(H) / m * np.eye(m)
    c = rng.normal(size=m) * rng.uniform(0.1, 10)
    x = cp.Variable(m)
    ref = cp.Problem(
        cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(H)) + c @ x), [cp.sum(x) == 1, x >= 0]
    )
    ref.solve(solver="CLARABEL")
    scale = max(1.0, abs(ref.value))
    for start in (np.full(m, 1.0 / m), np.eye(m)[seed]):
        sol = _simplex_qp(H, c, start)
        assert sol.min() >= 0 and sol.sum() == pytest.approx(1.0, abs=1e-12)
        val = 0.5 * sol @ H @ sol + c @ sol
        assert ref.value - 1e-7 * scale <= val <= ref.value + 1e-9 * scale


def test_master_time_accumulates(monkeypatch):
    pb = svc_problem(seed=2)
    kernels = proxy_kernels(pb, 3, 3)
    m = MKLMaster(pb, max_steps=1)
    real = m._evaluate

    def slow(*a):
        time.sleep(0.01)
        return real(*a)

    monkeypatch.setattr(m, "_evaluate", slow)
    t0 = time.perf_counter()
    m.solve(kernels, 0.0)
    m.solve(kernels, 0.0)
    assert 0.02 <= m.stats.time_master <= time.perf_counter() - t0
    assert m.stats.time_svm <= m.stats.time_master and len(m.stats.gaps) == 2


@pytest.mark.parametrize("seed", range(8))
def test_newton_polish_solves_rank_two_qps_from_a_rough_smo_point(seed):
    """From SMO stopped at a violation of 1 (a rough free set), one polish call reaches the
    optimum of a rank-2 QP (cvxpy): zero-curvature directions followed to a bound, Newton steps
    on the rest, wrong-sign multipliers released."""
    pb = fake_problem(n=10, seed=11 + seed)
    m = MKLMaster(pb)
    K = psd(pb.n, 2, 5 + seed)
    P, q = m._P(K), m.w_lin
    w, G, _, _ = _smo(P, q, m.w_lo, m.w_hi, m.w.copy(), 1.0, 10**6)
    w2 = m._newton_polish(P, q, w, P @ w - q)
    ref, _ = qp_reference(pb, K)
    assert -(0.5 * w2 @ P @ w2 - q @ w2) == pytest.approx(ref, abs=1e-7)
    assert np.all(w2 >= m.w_lo) and np.all(w2 <= m.w_hi)
    assert np.sum(w2) == pytest.approx(np.sum(w), abs=1e-12)
