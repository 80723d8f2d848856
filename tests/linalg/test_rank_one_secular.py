"""The secular-equation pieces of ``indefsvm.linalg.rank_one`` on small inputs, in seconds.

The input checks of :func:`secular_root` (anchored messages), the relative accuracy of
``delta = d - lambda`` for one and two poles (the closed forms of LAPACK ``dlaed5``, checked
against 60-digit decimal arithmetic), the bookkeeping of :class:`SecularWarmStart` (exact guesses
from stored roots), and the threaded LAPACK path over several blocks of roots (bitwise equal to
one thread, and equal to dense ``eigh``). Written for mutants that survived
``tests/linalg/test_rank_one.py`` (docs/mutation.md); the first file of the ``rank_one``
mutation run. Kept beside that file because it runs every test on both secular engines.
"""

from __future__ import annotations

from decimal import Decimal, getcontext

import numpy as np
import pytest

import indefsvm.linalg.rank_one as R
from indefsvm.linalg.rank_one import SecularWarmStart, rank_one_eigh, secular_root

# -- secular_root: input checks ------------------------------------------------------------------


def test_secular_root_input_messages_name_the_argument():
    z1 = np.array([1.0])
    with pytest.raises(ValueError, match=r"^d must be a 1-D vector; got shape \(1, 1\)\.$"):
        secular_root([[1.0]], z1, 1.0, 0)
    with pytest.raises(ValueError, match=r"^z_unit must be a 1-D vector; got shape \(1, 1\)\.$"):
        secular_root([1.0], [[1.0]], 1.0, 0)
    with pytest.raises(TypeError, match=r"^z_unit must be a numeric vector, got dtype <U1\.$"):
        secular_root([1.0], ["a"], 1.0, 0)
    with pytest.raises(ValueError, match=r"^d must have at least one entry; got an empty array\.$"):
        secular_root([], [], 1.0, 0)
    msg = r"^d must be strictly increasing for dlaed4; deflate equal entries first\.$"
    z2 = np.array([0.6, 0.8])
    with pytest.raises(ValueError, match=msg):
        secular_root([1.0, 1.0], z2, 1.0, 0)  # equal entries are not strictly increasing
    with pytest.raises(ValueError, match=msg):
        secular_root([2.0, 1.0], z2, 1.0, 0)
    msg = r"^z_unit must have no zero entries \(they are deflated pairs \(d_j, e_j\)\)\.$"
    with pytest.raises(ValueError, match=msg):
        secular_root([1.0, 2.0], [0.0, 1.0], 1.0, 0)
    with pytest.raises(ValueError, match=r"^rho must be finite and > 0; got 0\.0\.$"):
        secular_root([1.0, 2.0], z2, 0.0, 0)
    msg = r"^i must be an integer in \[0, 1\]; got "
    for bad in (2, -1, True, 1.0, 0.5):
        with pytest.raises(ValueError, match=msg + __import__("re").escape(repr(bad)) + r"\.$"):
            secular_root([1.0, 2.0], z2, 1.0, bad)
    assert secular_root([1.0, 2.0], z2, 1.0, np.int64(1))[0] > 2.0


def test_secular_root_unit_norm_tolerance_scales_with_n():
    """``| ||z|| - 1 | <= 1e-12 max(1, n)``: the edge for n = 1 and for n = 4."""
    msg = r"^z_unit must have unit Euclidean norm; got \|\|z_unit\|\| = "
    secular_root([0.0], [1.0 + 0.9e-12], 1.0, 0)
    with pytest.raises(ValueError, match=msg):
        secular_root([0.0], [1.0 + 1.5e-12], 1.0, 0)
    z = np.full(4, 0.5) * (1.0 + 3e-12)  # 3e-12 off: inside 4e-12, outside 1e-12 / 4
    secular_root([0.0, 1.0, 2.0, 3.0], z, 1.0, 2)
    with pytest.raises(ValueError, match=msg):
        secular_root([0.0, 1.0, 2.0, 3.0], np.full(4, 0.5) * (1.0 + 5e-12), 1.0, 2)


# -- secular_root: accuracy of delta for one and two poles (dlaed5's closed forms) ----------------

getcontext().prec = 60


def _exact_two_by_two(d, z, rho):
    """Eigenvalues of diag(d) + rho z z' (2 x 2) and ``d_j - lambda_i`` in 60-digit decimals."""
    d1, d2, z1, z2, r = (Decimal(float(v)) for v in (d[0], d[1], z[0], z[1], rho))
    a, c, b = d1 + r * z1 * z1, d2 + r * z2 * z2, r * z1 * z2
    mid, rad = (a + c) / 2, (((a - c) / 2) ** 2 + b * b).sqrt()
    out = []
    for lam in (mid - rad, mid + rad):
        out.append((float(lam), np.array([float(d1 - lam), float(d2 - lam)])))
    return out


# (d, z, rho): roots near either pole, b of either sign, with and without cancellation
TWO_POLE_CASES = [
    ([0.0, 1.0], [0.6, 0.8], 1.0),
    ([0.0, 1.0], [0.8, 0.6], 1e-10),  # both roots within 1e-10 of a pole
    ([0.0, 1.0], [0.6, 0.8], 1e-10),
    ([0.0, 1e-8], [0.8, 0.6], 1.0),  # first root near d_2 (branch 2, b > 0)
    ([0.0, 1e-9], [0.8, 0.6], 0.5),  # b = 0.5 - 1e-9: 0 < b < 1
    ([0.0, 1.0], [0.8, 0.6], 3.0),
    ([-1.0, 2.0], [-0.28, 0.96], 0.01),  # b < 0, second root near d_2
    ([-1.0, 2.0], [0.96, -0.28], 1e-6),
    ([5.0, 5.5], [0.6, -0.8], 1e3),
    ([0.0, 1.5], [1.0, 1e-4], 1.0),  # first root in branch 2 with b < 0 and b^2 >> c
    # far from the midpoint test's threshold, where the wrong branch loses accuracy (found by
    # a random search against the decimal reference)
    ([0.0, 0.005568005543648332], [0.9999996491416937, -0.0008376851971986592], 10.562007904198),
    ([0.0, 375.5133010778697], [0.9999999999999994, -3.416017368299336e-08], 0.002491695571611462),
    ([0.0, 0.03266075220188192], [0.9998115947963262, 0.019410690632405622], 0.03189278360482477),
    ([0.0, 193.51606341576303], [-0.7075095079426827, 0.7067038249300076], 0.1348471043054923),
]


@pytest.mark.parametrize(("d", "z", "rho"), TWO_POLE_CASES)
def test_two_pole_deltas_have_full_relative_accuracy(d, z, rho):
    d, z = np.array(d), np.array(z)
    z = z / np.linalg.norm(z)
    for i, (lam_ref, delta_ref) in enumerate(_exact_two_by_two(d, z, rho)):
        lam, delta = secular_root(d, z, rho, i)
        assert lam == pytest.approx(lam_ref, rel=4e-16, abs=4e-16 * np.abs(d).max())
        # every entry to a few ulps of itself: no cancellation even when tiny
        np.testing.assert_allclose(delta, delta_ref, rtol=1e-14, atol=0)


def test_one_pole_delta_is_minus_rho_z_squared():
    z = np.array([1.0 + 5e-13])  # inside the unit-norm tolerance
    lam, delta = secular_root([2.0], z, 3.0, 0)
    assert delta[0] == -3.0 * z[0] * z[0]
    assert lam == pytest.approx(2.0 + 3.0 * z[0] ** 2, rel=1e-15)


@pytest.mark.parametrize(("d", "z", "rho"), TWO_POLE_CASES[:6])
def test_two_by_two_eigh_through_the_lapack_path(d, z, rho):
    """``rank_one_eigh`` on two poles (k = 2 after deflation: dlaed4 + the small-delta forms)."""
    d, z = np.array(d), np.array(z)
    res = rank_one_eigh(d, z, rho, engine="lapack")
    M = np.diag(d) + rho * np.outer(z, z)
    w, V = np.linalg.eigh(M)
    np.testing.assert_allclose(res.eigenvalues, w, rtol=0, atol=4e-16 * np.abs(w).max())
    assert np.allclose(np.abs(res.eigenvectors.T @ V), np.eye(2), atol=1e-12)


# -- SecularWarmStart bookkeeping ------------------------------------------------------------------


def test_fresh_warm_start_has_no_guesses_and_zero_counters():
    warm = SecularWarmStart()
    assert warm.guesses(4, 1, np.arange(4)) is None
    assert (warm.n_calls, warm.n_sweeps, warm.n_roots) == (0, 0, 0)
    assert warm.last_root_state is None and warm.offsets is None


def test_warm_start_guesses_from_stored_roots():
    warm = SecularWarmStart()
    kept = np.array([0, 2, 3, 5])
    # root j = d[kept[origin[j]]] + tau[j]: origin j (lower pole) or j + 1 (upper pole)
    origin = np.array([0, 2, 2, 3])
    tau = np.array([0.1, -0.2, 0.3, 0.4])
    warm.store(6, 1, kept, origin, tau)
    side, guess = warm.guesses(6, 1, kept)
    assert side.dtype == np.int64
    assert side.tolist() == [0, 1, 0, 0] and guess.tolist() == tau.tolist()
    # pole 1 kept now (its guess is unknown), pole 4 kept last (origin -1 as its upper is -1)
    side, guess = warm.guesses(6, 1, np.array([0, 1, 2, 3, 4]))
    assert side.tolist() == [0, -1, 1, 0, -1]
    assert guess[[0, 2, 3]].tolist() == [0.1, -0.2, 0.3]
    # another size or sign: no guesses; after reset: none
    assert warm.guesses(5, 1, kept) is None
    assert warm.guesses(6, -1, kept) is None
    # a store for another size or sign replaces the table (and its key)
    warm.store(4, 1, np.array([0, 1, 3]), np.array([1, 1, 2]), np.array([-0.5, 0.5, 0.25]))
    assert warm.guesses(6, 1, kept) is None
    side, guess = warm.guesses(4, 1, np.array([0, 1, 3]))
    assert side.tolist() == [1, 0, 0] and guess.tolist() == [-0.5, 0.5, 0.25]
    side, _ = warm.guesses(4, 1, np.array([0, 1, 2, 3]))
    assert side.tolist() == [1, 0, -1, 0]  # pole 2 was not kept: filled with -1, no guess
    warm.store(4, -1, np.array([0, 1, 3]), np.array([0, 1, 2]), np.array([1.0, 2.0, 3.0]))
    assert warm.guesses(4, 1, np.array([0, 1, 3])) is None
    side, guess = warm.guesses(4, -1, np.array([0, 1, 3]))
    assert side.tolist() == [0, 0, 0] and guess.tolist() == [1.0, 2.0, 3.0]
    warm.reset()
    assert warm.guesses(4, -1, np.array([0, 1, 3])) is None and warm.offsets is None
    # the last two roots both from their upper pole
    warm.store(6, 1, kept, np.array([0, 2, 3, 3]), tau)
    side, _ = warm.guesses(6, 1, kept)
    assert side.tolist() == [0, 1, 1, 0]


# -- LAPACK path over several blocks and threads ---------------------------------------------------


@pytest.mark.parametrize("which", ["all", "below"])
def test_lapack_path_with_blocks_and_threads_matches_dense(which):
    """k = 300 poles: blocks of max(8, 32768 // 300) = 109 rows, so three blocks and two worker
    threads; bitwise equal to one thread, and equal to dense eigh."""
    rng = np.random.default_rng(5)
    n = 300
    d = np.sort(rng.normal(size=n))
    z = rng.normal(size=n)
    one = rank_one_eigh(d, z, 0.3, which=which, engine="lapack")
    two = rank_one_eigh(d, z, 0.3, which=which, engine="lapack", n_threads=2)
    assert np.array_equal(one.eigenvalues, two.eigenvalues)
    assert np.array_equal(one.eigenvectors, two.eigenvectors)
    assert one.n_deflated == two.n_deflated == 0  # distinct poles, no tiny weight
    auto = rank_one_eigh(d, z, 0.3, which=which)
    assert auto.n_deflated == 0
    w, V = np.linalg.eigh(np.diag(d) + 0.3 * np.outer(z, z))
    scale = np.abs(w).max()  # dense eigh is accurate to a few eps ||M||
    if which == "below":
        w, V = w[w < 0], V[:, w < 0]
    np.testing.assert_allclose(one.eigenvalues, w, rtol=0, atol=4e-15 * scale)
    overlap = np.abs(one.eigenvectors.T @ V)
    np.testing.assert_allclose(overlap, np.eye(w.size), atol=1e-9)


def test_lapack_failure_in_a_worker_thread_is_raised(monkeypatch):
    """A failure inside a worker thread is re-raised in the caller and stops the other worker
    from taking a new block. k = 300: blocks of 109 roots (1-based 1-109, 110-218, 219-300); the
    first root of block 1 fails, block 0 waits for that failure before finishing, so block 2
    must never be started."""
    import ctypes
    import threading

    rng = np.random.default_rng(6)
    d, z = np.sort(rng.normal(size=300)), rng.normal(size=300)
    real = R._dlaed4()
    failed = threading.Event()
    seen = []

    def failing(p_n, p_i, *rest):
        i = ctypes.c_int.from_address(p_i).value
        seen.append(i)
        if i == 110:
            failed.set()
            raise RuntimeError("dlaed4 crashed")
        if i == 100:
            assert failed.wait(10.0)
        return real(p_n, p_i, *rest)

    monkeypatch.setattr(R, "_dlaed4", lambda: failing)
    with pytest.raises(RuntimeError, match="^dlaed4 crashed$"):
        rank_one_eigh(d, z, 0.3, engine="lapack", n_threads=2)
    assert max(seen) == 110 and len(seen) == 110


# -- rank_one_eigh: input checks and trivial paths -------------------------------------------------


def test_rank_one_eigh_input_messages(monkeypatch):
    import re

    d2, z2 = np.array([1.0, 2.0]), np.array([1.0, 1.0])
    cases = [
        ({"d": [[1.0, 2.0]]}, ValueError, r"d must be a 1-D vector; got shape (1, 2)."),
        ({"z": [[1.0, 1.0]]}, ValueError, r"z must be a 1-D vector; got shape (1, 2)."),
        ({"d": np.array([1.0, None])}, TypeError, "d must be a numeric vector, got dtype object."),
        ({"z": [1j, 1.0]}, TypeError, "z must be real; got complex values."),
        ({"z": [np.inf, 1.0]}, ValueError, "z contains NaN or inf; expected finite values."),
        ({"z": [1.0]}, ValueError, "z must have the shape of d (2,); got shape (1,)."),
        (
            {"d": [2.0, 1.0]},
            ValueError,
            "d must be sorted in ascending order (eigenvalues as returned by numpy.linalg.eigh);"
            " sort d and permute z (and the eigenvectors of K0) accordingly.",
        ),
        ({"sigma": np.nan}, ValueError, "sigma must be finite; got nan."),
        ({"which": "neg"}, ValueError, "which must be one of ('all', 'below'); got 'neg'."),
        ({"which": "below", "upper": np.nan}, ValueError, "upper must not be NaN."),
        ({"n_threads": True}, ValueError, "n_threads must be a positive integer; got True."),
        ({"n_threads": 2.0}, ValueError, "n_threads must be a positive integer; got 2.0."),
        ({"n_threads": 0}, ValueError, "n_threads must be a positive integer; got 0."),
        (
            {"engine": "fortran"},
            ValueError,
            "engine must be one of ('auto', 'numba', 'lapack'); got 'fortran'.",
        ),
        (
            {"d": [1e200, 2e200], "z": [1e200, 1.0], "sigma": 1e200},
            ValueError,
            "sigma * ||z||^2 overflows (sigma = 1e+200, ||z|| = 1e+200).",
        ),
    ]
    for change, error, message in cases:
        kw = {"d": d2, "z": z2, "sigma": 1.0} | change
        d, z, sigma = kw.pop("d"), kw.pop("z"), kw.pop("sigma")
        with pytest.raises(error, match="^" + re.escape(message) + "$"):
            rank_one_eigh(d, z, sigma, **kw)
    # "below" defaults to upper = 0: the negative eigenvalues only
    d4 = np.array([-2.0, -1.0, 0.25, 3.0])
    assert rank_one_eigh(d4, np.zeros(4), 1.0, which="below").eigenvalues.tolist() == [-2.0, -1.0]
    # NaN upper is only an error where it is used; "all" ignores it; ints and bools are numbers
    assert rank_one_eigh(d2, z2, 1.0, which="all", upper=np.nan).eigenvalues.size == 2
    assert rank_one_eigh([1, 2], [True, True], 1, n_threads=np.int64(2)).eigenvalues.size == 2
    monkeypatch.setattr(R, "numba_available", lambda: False)
    with pytest.raises(
        ValueError, match=r"^engine='numba' needs the numba package \(pip install numba\)\.$"
    ):
        rank_one_eigh(d2, z2, 1.0, engine="numba")
    # "auto" without numba is the LAPACK path (no warm-start bookkeeping)
    warm = SecularWarmStart()
    d5, z5 = np.arange(5.0), np.ones(5)
    rank_one_eigh(d5, z5, 1.0, warm_start=warm)
    assert warm.n_calls == 0


@pytest.mark.skipif(not R.numba_available(), reason="compiled engine only")
def test_auto_engine_is_the_compiled_one_and_feeds_the_warm_start():
    warm = SecularWarmStart()
    d5, z5 = np.arange(5.0), np.ones(5)
    first = rank_one_eigh(d5, z5, 1.0, warm_start=warm)
    assert warm.n_calls == 1 and warm.n_roots == 5 and warm.offsets is not None
    cold = warm.n_sweeps
    again = rank_one_eigh(d5, z5, 1.0, warm_start=warm)
    # the same problem again: started at its own roots, each passes the test at once
    assert warm.n_calls == 2 and warm.n_roots == 10 and cold < warm.n_sweeps < 2 * cold
    np.testing.assert_allclose(again.eigenvalues, first.eigenvalues, rtol=0, atol=1e-15)
    lapack = rank_one_eigh(d5, z5, 1.0, engine="lapack", warm_start=warm)
    assert warm.n_calls == 2  # the LAPACK engine does not use it
    numba = rank_one_eigh(d5, z5, 1.0, engine="numba")
    np.testing.assert_allclose(numba.eigenvalues, first.eigenvalues, rtol=0, atol=1e-15)
    # the compiled engine from k = 3 kept poles on
    rank_one_eigh(np.arange(3.0), np.ones(3), 1.0, warm_start=warm)
    assert warm.n_calls == 3
    np.testing.assert_allclose(lapack.eigenvalues, first.eigenvalues, rtol=0, atol=4e-15)


def test_vector_norm_neither_overflows_nor_underflows():
    assert R._vector_norm(np.array([3e200, -4e200])) == pytest.approx(5e200, rel=1e-15)
    assert R._vector_norm(np.array([3e-200, 4e-200])) == pytest.approx(5e-200, rel=1e-15)
    assert R._vector_norm(np.array([0.0, 0.0])) == 0.0
    assert R._vector_norm(np.array([])) == 0.0
    assert R._vector_norm(np.array([-2.0])) == 2.0


@pytest.mark.parametrize("sigma", [0.0, 1.0, -1.0])
def test_zero_update_and_empty_input_return_the_diagonal(sigma):
    d = np.array([-2.0, -1.0, 0.5, 3.0])
    z = np.zeros(4) if sigma else np.array([1.0, 2.0, 3.0, 4.0])
    res = rank_one_eigh(d, z, sigma)
    assert res.eigenvalues.tolist() == d.tolist() and res.n_deflated == 4
    assert np.array_equal(res.eigenvectors, np.eye(4))
    below = rank_one_eigh(d, z, sigma, which="below", upper=0.5)  # open window: 0.5 excluded
    assert below.eigenvalues.tolist() == [-2.0, -1.0]
    assert np.array_equal(below.eigenvectors, np.eye(4)[:, :2])
    empty = rank_one_eigh([], [], sigma)
    assert empty.eigenvalues.shape == (0,) and empty.eigenvectors.shape == (0, 0)


@pytest.mark.parametrize("sigma", [0.7, -0.7])
@pytest.mark.parametrize("upper", [-0.5, 0.0, 1.5])
def test_below_window_is_open_and_matches_dense(sigma, upper):
    """Eigenvalues strictly below ``upper``, for both signs of sigma (the negated problem)."""
    rng = np.random.default_rng(8)
    d = np.sort(rng.normal(size=12))
    z = rng.normal(size=12)
    z[3] = 0.0  # a deflated pair
    w, V = np.linalg.eigh(np.diag(d) + sigma * np.outer(z, z))
    for engine in ("lapack", "auto"):
        res = rank_one_eigh(d, z, sigma, which="below", upper=upper, engine=engine)
        keep = w < upper
        np.testing.assert_allclose(res.eigenvalues, w[keep], rtol=0, atol=1e-14)
        assert np.allclose(np.abs(res.eigenvectors.T @ V[:, keep]), np.eye(keep.sum()), atol=1e-10)
        assert res.n_deflated == 1
    # an eigenvalue exactly at upper is excluded (open window): the deflated d_3 itself
    res = rank_one_eigh(d, z, sigma, which="below", upper=d[3])
    assert d[3] not in res.eigenvalues.tolist()
    res = rank_one_eigh(d, z, sigma, which="below", upper=np.nextafter(d[3], np.inf))
    assert d[3] in res.eigenvalues.tolist()


def test_numba_available_tells_whether_numba_imports():
    import importlib.util

    assert R.numba_available() == (importlib.util.find_spec("numba") is not None)


@pytest.mark.skipif(not R.numba_available(), reason="compiled engine only")
def test_one_failed_compiled_root_falls_back_and_is_logged(monkeypatch, caplog):
    """A root that fails the compiled convergence test: logged (DEBUG, its index), the whole
    problem is solved by dlaed4, and the warm start is cleared (its roots are not trusted)."""
    kernel = R._numba_kernel()

    class OneRootFails:
        N_CHUNKS = kernel.N_CHUNKS
        secular_vectors = kernel.secular_vectors
        secular_vectors_serial = kernel.secular_vectors_serial

        @staticmethod
        def secular_roots_serial(*args):
            kernel.secular_roots_serial(*args)
            args[8][2] = -1  # status of root 2

        secular_roots = secular_roots_serial

    rng = np.random.default_rng(9)
    d, z = np.sort(rng.normal(size=5)), rng.normal(size=5)
    warm = SecularWarmStart()
    rank_one_eigh(d, z, 0.6, warm_start=warm)
    assert warm.offsets is not None
    monkeypatch.setattr(R, "_numba_kernel", lambda: OneRootFails())
    with caplog.at_level("DEBUG", logger="indefsvm.linalg.rank_one"):
        res = rank_one_eigh(d, z, 0.6, warm_start=warm)
    assert [r.getMessage() for r in caplog.records] == [
        "compiled secular solver: root 2 of 5 failed the convergence test; using dlaed4"
    ]
    assert warm.offsets is None and warm.n_calls == 2
    w = np.linalg.eigvalsh(np.diag(d) + 0.6 * np.outer(z, z))
    np.testing.assert_allclose(res.eigenvalues, w, rtol=0, atol=1e-14)


@pytest.mark.parametrize("engine", ["lapack", "auto"])
@pytest.mark.parametrize("sigma", [0.7, -0.7])
def test_window_excludes_a_secular_root_exactly_at_upper(engine, sigma):
    rng = np.random.default_rng(10)
    d, z = np.sort(rng.normal(size=9)), rng.normal(size=9)
    roots = rank_one_eigh(d, z, sigma, engine=engine).eigenvalues
    for j in (2, 6):
        r = roots[j]
        below = rank_one_eigh(d, z, sigma, which="below", upper=r, engine=engine)
        assert below.eigenvalues.tolist() == roots[:j].tolist()
        assert below.eigenvectors.shape == (9, j)
        above = rank_one_eigh(d, z, sigma, which="below", upper=np.nextafter(r, np.inf),
                              engine=engine)  # fmt: skip
        assert above.eigenvalues.tolist() == roots[: j + 1].tolist()
    none = rank_one_eigh(d, z, sigma, which="below", upper=roots[0], engine=engine)
    assert none.eigenvalues.size == 0 and none.eigenvectors.shape == (9, 0)


def test_deflation_tolerance_is_inclusive():
    """``rho |z_j| <= 8 eps max(|d|_max, rho)`` deflates (dlaed2's test): with d_max = rho = 1 a
    component exactly 8 eps is dropped, 9 eps is kept."""
    eps = np.finfo(float).eps
    d = np.array([0.0, 0.5, 1.0])
    for zj, deflated in ((8 * eps, 1), (9 * eps, 0)):
        z = np.array([zj, 0.6, 0.8])
        assert np.linalg.norm(z) == 1.0
        for engine in ("lapack", "auto"):
            assert rank_one_eigh(d, z, 1.0, engine=engine).n_deflated == deflated


def _failing_dlaed4(real, fail_index, info_value):
    """LAPACK dlaed4 that reports INFO = ``info_value`` for the root of 1-based index
    ``fail_index`` (arguments are addresses: n, i, d, z, delta, rho, lam, info)."""
    import ctypes

    def func(p_n, p_i, *rest):
        real(p_n, p_i, *rest)
        if ctypes.c_int.from_address(p_i).value == fail_index:
            ctypes.c_int.from_address(rest[-1]).value = info_value

    return func


def test_dlaed4_failures_are_reported_with_the_root_and_info(monkeypatch):
    failing = _failing_dlaed4(R._dlaed4(), 4, 2)
    monkeypatch.setattr(R, "_dlaed4", lambda: failing)
    d, z = np.arange(5.0), np.full(5, 1 / np.sqrt(5))
    msg = r"^LAPACK dlaed4 failed to converge for secular root 3 of 5 \(info = 2\)\.$"
    with pytest.raises(RuntimeError, match=msg):
        rank_one_eigh(d, z, 1.0, engine="lapack")
    with pytest.raises(RuntimeError, match=r"^LAPACK dlaed4 failed for root 3 of 5: info = 2\.$"):
        secular_root(d, z, 1.0, 3)
    assert secular_root(d, z, 1.0, 2)[0] > 2.0  # another root: no failure


def test_nearly_equal_poles_are_merged_by_a_givens_rotation():
    """Poles 1.5 tol apart with equal weights (c = s = 1/sqrt(2)): the rotation leaves an
    off-diagonal |(d_q - d_p) c s| = 0.75 tol <= tol, so the pair is merged (dlaed2)."""
    eps = np.finfo(float).eps
    tol = 8 * eps  # max(|d|_max, rho) = 1
    d = np.array([0.0, 1.5 * tol, 1.0])
    z = np.array([0.6, 0.6, np.sqrt(1 - 0.72)])
    for engine in ("lapack", "auto"):
        res = rank_one_eigh(d, z, 1.0, engine=engine)
        assert res.n_deflated == 1
        w = np.linalg.eigvalsh(np.diag(d) + np.outer(z, z))
        np.testing.assert_allclose(res.eigenvalues, w, rtol=0, atol=2e-15)
        V = res.eigenvectors
        assert np.allclose(V.T @ V, np.eye(3), atol=1e-15)


@pytest.mark.parametrize("engine", ["lapack", "numba"])
def test_a_repeated_pole_with_only_two_weights_left_is_merged(engine):
    """A pole repeated exactly, and the third weight zero (deflated): the pair is the only two
    candidates of the rotation and must still be merged, else the secular equation has a double
    pole and the eigenvectors come out NaN (found by hypothesis in the session-6 mutation run,
    ``rank_one._deflate`` with ``candidates.size > 2``)."""
    d = np.array([0.34558419, 0.34558419, 0.82161814])
    z = np.array([0.90535587, 0.44637457, 0.0])
    sigma = -2.7524725014885667
    res = rank_one_eigh(d, z, sigma, engine=engine)
    assert res.n_deflated == 2
    w, U = np.linalg.eigh(np.diag(d) + sigma * np.outer(z, z))
    np.testing.assert_allclose(res.eigenvalues, w, rtol=0, atol=1e-14)
    V = res.eigenvectors
    assert np.all(np.isfinite(V))
    np.testing.assert_allclose(V.T @ V, np.eye(3), rtol=0, atol=1e-14)
    np.testing.assert_allclose(np.abs(U.T @ V), np.eye(3), rtol=0, atol=1e-12)


def test_integer_and_boolean_inputs_are_converted_to_float64():
    """Integer poles and weights reach LAPACK through ctypes as float64 buffers."""
    d, z = [1, 2, 4], [1, 2, 2]
    w = np.linalg.eigvalsh(np.diag(d) + 0.5 * np.outer(z, z))
    for engine in ("lapack", "auto"):
        res = rank_one_eigh(d, z, 0.5, engine=engine)
        np.testing.assert_allclose(res.eigenvalues, w, rtol=0, atol=1e-14)
    lam, delta = secular_root([1, 2, 4], np.array(z) / 3.0, 4.5, 1)
    assert lam == pytest.approx(w[1], rel=1e-15)
    np.testing.assert_allclose(delta, np.array(d) - w[1], rtol=1e-14)
    res = rank_one_eigh(np.array([0, 1]), np.array([True, False]), 1.0)
    assert res.eigenvalues.tolist() == [1.0, 1.0] and res.n_deflated == 1


# -- rank_one_eigvals_below: eigenvalues only (the lean objective evaluation) ----------------------
# Written for the re-run of the mutation testing on the lean evaluations (issue 15): the values
# are checked against dense eigh and against rank_one_eigh's "below" eigenvalues, which use the
# same deflation and the same per-root iteration (so they agree bitwise); the bookkeeping
# (engine, roots computed, warm-start prefix) against what the docstrings promise.


def test_eigvals_below_input_messages(monkeypatch):
    import re

    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    d2, z2 = np.array([1.0, 2.0]), np.array([1.0, 1.0])
    cases = [
        ({"d": [[1.0, 2.0]]}, ValueError, "d must be a 1-D vector; got shape (1, 2)."),
        ({"z": [[1.0, 1.0]]}, ValueError, "z must be a 1-D vector; got shape (1, 2)."),
        ({"z": [1.0]}, ValueError, "z must have the shape of d (2,); got shape (1,)."),
        (
            {"d": [2.0, 1.0]},
            ValueError,
            "d must be sorted in ascending order (eigenvalues of numpy.linalg.eigh).",
        ),
        ({"upper": np.nan}, ValueError, "upper must not be NaN."),
        ({"n_threads": True}, ValueError, "n_threads must be a positive integer; got True."),
        ({"n_threads": 2.0}, ValueError, "n_threads must be a positive integer; got 2.0."),
        ({"n_threads": 0}, ValueError, "n_threads must be a positive integer; got 0."),
        (
            {"engine": "fortran"},
            ValueError,
            "engine must be one of ('auto', 'numba', 'lapack'); got 'fortran'.",
        ),
        (
            {"d": [1e200, 2e200], "z": [1e200, 1.0], "sigma": 1e200},
            ValueError,
            "sigma * ||z||^2 overflows (sigma = 1e+200, ||z|| = 1e+200).",
        ),
        # a sigma that is not a finite non-negative number goes to rank_one_eigh
        ({"sigma": np.nan}, ValueError, "sigma must be finite; got nan."),
        ({"sigma": np.inf}, ValueError, "sigma must be finite; got inf."),
    ]
    for change, error, message in cases:
        kw = {"d": d2, "z": z2, "sigma": 1.0} | change
        d, z, sigma = kw.pop("d"), kw.pop("z"), kw.pop("sigma")
        with pytest.raises(error, match="^" + re.escape(message) + "$"):
            rank_one_eigvals_below(d, z, sigma, **kw)
    # equal poles are sorted; ints, bools and numpy integers are accepted
    np.testing.assert_allclose(
        rank_one_eigvals_below([1.0, 1.0], z2, 1.0, upper=5.0), [1.0, 3.0], rtol=0, atol=1e-15
    )
    lam = rank_one_eigvals_below([1, 2], [True, True], 1, upper=5, n_threads=np.int64(2))
    assert lam.dtype == np.float64
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(np.diag([1.0, 2.0]) + 1.0), atol=1e-15)
    monkeypatch.setattr(R, "numba_available", lambda: False)
    with pytest.raises(
        ValueError, match=r"^engine='numba' needs the numba package \(pip install numba\)\.$"
    ):
        rank_one_eigvals_below(d2, z2, 1.0, engine="numba")
    # "auto" without numba: the LAPACK path (the warm start is not used)
    warm = SecularWarmStart()
    d5, z5 = np.arange(5.0) - 2.0, np.ones(5)
    lam = rank_one_eigvals_below(d5, z5, 1.0, warm_start=warm)
    assert warm.n_calls == 0 and warm.offsets is None
    w = np.linalg.eigvalsh(np.diag(d5) + np.outer(z5, z5))
    np.testing.assert_allclose(lam, w[w < 0], rtol=0, atol=1e-14)


def _spy(monkeypatch, name):
    calls = []
    real = getattr(R, name)

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(R, name, spy)
    return calls


@pytest.mark.parametrize("sigma", [0.6, -0.6])
@pytest.mark.parametrize("upper", [-0.4, 0.0, 0.9, 10.0])
def test_eigvals_below_match_dense_and_the_eigenpair_path(sigma, upper):
    """Deflated poles (a zero weight, a Givens merge of equal poles) and secular roots below
    ``upper``, ascending: dense eigh, and bitwise the eigenvalues of rank_one_eigh."""
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    rng = np.random.default_rng(11)
    d = np.sort(rng.normal(size=10))
    d[6] = d[5]  # merged by a rotation
    z = rng.normal(size=10)
    z[2] = 0.0  # deflated as is
    w = np.linalg.eigvalsh(np.diag(d) + sigma * np.outer(z, z))
    for engine in ("lapack", "numba", "auto"):
        lam = rank_one_eigvals_below(d, z, sigma, upper=upper, engine=engine)
        assert lam.dtype == np.float64 and lam.shape == (np.count_nonzero(w < upper),)
        np.testing.assert_allclose(lam, w[w < upper], rtol=0, atol=1e-14)
        assert np.all(np.diff(lam) >= 0)
        pairs = rank_one_eigh(d, z, sigma, which="below", upper=upper, engine=engine)
        assert lam.tolist() == pairs.eigenvalues.tolist()
        assert pairs.n_deflated == 2


@pytest.mark.parametrize("engine", ["lapack", "numba"])
def test_eigvals_below_window_is_open_at_roots_and_poles(engine):
    """Eigenvalues strictly below ``upper``: a secular root or a deflated pole exactly at
    ``upper`` is left out, the next float up takes it in."""
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    rng = np.random.default_rng(12)
    d = np.sort(rng.normal(size=9))
    z = rng.normal(size=9)
    z[4] = 0.0
    roots = rank_one_eigh(d, z, 0.8, engine=engine).eigenvalues
    for j in (0, 2, 6, 8):
        r = roots[j]
        below = rank_one_eigvals_below(d, z, 0.8, upper=r, engine=engine)
        assert below.tolist() == roots[:j].tolist()
        above = rank_one_eigvals_below(d, z, 0.8, upper=np.nextafter(r, np.inf), engine=engine)
        assert above.tolist() == roots[: j + 1].tolist()
    j = roots.tolist().index(d[4])  # the deflated pole, exactly at upper and just above
    assert (
        rank_one_eigvals_below(d, z, 0.8, upper=d[4], engine=engine).tolist() == roots[:j].tolist()
    )
    above = rank_one_eigvals_below(d, z, 0.8, upper=np.nextafter(d[4], np.inf), engine=engine)
    assert above.tolist() == roots[: j + 1].tolist()
    # the zero update: the poles below upper (open), as float64 copies
    d_int = np.array([-2, -1, 0, 3])
    lam = rank_one_eigvals_below(d_int, np.zeros(4), 1.0, upper=0.0, engine=engine)
    assert lam.dtype == np.float64 and lam.tolist() == [-2.0, -1.0]
    lam = rank_one_eigvals_below(d, np.zeros(9), 0.0, upper=d[5], engine=engine)
    assert lam.tolist() == d[:5].tolist()
    assert rank_one_eigvals_below([], [], 1.0, engine=engine).shape == (0,)


@pytest.mark.parametrize("sigma", [0.5, 3.0])
def test_eigvals_below_with_one_or_two_kept_poles(sigma):
    """Fewer than three kept poles: the closed forms (dlaed5) of the eigenpair path, for every
    engine (the compiled kernel needs k >= 3)."""
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    d = np.array([-3.0, -1.0, 0.5, 2.0])
    for z in ([0.0, 0.8, 0.0, 0.0], [0.0, 0.6, 0.0, 0.8], [0.6, 0.0, 0.8, 0.0]):
        z = np.array(z)
        w = np.linalg.eigvalsh(np.diag(d) + sigma * np.outer(z, z))
        for engine in ("lapack", "numba"):
            for upper in (-2.0, 0.0, 1.0, 100.0):
                lam = rank_one_eigvals_below(d, z, sigma, upper=upper, engine=engine)
                np.testing.assert_allclose(lam, w[w < upper], rtol=0, atol=1e-14)


@pytest.mark.skipif(not R.numba_available(), reason="compiled engine only")
def test_eigvals_below_engine_choice_and_roots_computed(monkeypatch):
    """``m = #{kept d_j < upper}`` roots, by the compiled kernel for k >= 3 unless
    engine='lapack'; counted in the warm start (calls, roots, sweeps)."""
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    numba_calls = _spy(monkeypatch, "_secular_values_numba")
    lapack_calls = _spy(monkeypatch, "_secular_values_lapack")
    d = np.array([-3.0, -2.0, -1.0, 0.0, 1.0, 2.0])
    z = np.full(6, 1.0 / np.sqrt(6.0))
    w = np.linalg.eigvalsh(np.diag(d) + 0.5 * np.outer(z, z))
    warm = SecularWarmStart()
    lam = rank_one_eigvals_below(d, z, 0.5, upper=0.0, warm_start=warm)
    np.testing.assert_allclose(lam, w[w < 0], rtol=0, atol=4e-15)
    # upper = d_3 exactly: the roots of the intervals of d_0, d_1, d_2 only (m = 3)
    assert len(numba_calls) == 1 and numba_calls[0][3] == 3 and not lapack_calls
    assert (warm.n_calls, warm.n_roots) == (1, 3) and 3 <= warm.n_sweeps <= 3 * 30
    sweeps = warm.n_sweeps
    # the same problem again: each root starts at its stored value and passes at once
    again = rank_one_eigvals_below(d, z, 0.5, upper=0.0, warm_start=warm)
    assert again.tolist() == lam.tolist()
    assert (warm.n_calls, warm.n_roots) == (2, 6) and warm.n_sweeps - sweeps < sweeps
    assert warm.n_sweeps - sweeps >= 3
    lap = rank_one_eigvals_below(d, z, 0.5, upper=0.0, engine="lapack", warm_start=warm)
    assert len(lapack_calls) == 1 and lapack_calls[0][3] == 3 and len(numba_calls) == 2
    assert warm.n_calls == 2
    np.testing.assert_allclose(lap, lam, rtol=0, atol=4e-15)
    # the compiled kernel from k = 3 kept poles on
    rank_one_eigvals_below(d[:3], np.full(3, 1 / np.sqrt(3.0)), 0.5, upper=10.0, warm_start=warm)
    assert len(numba_calls) == 3 and warm.n_calls == 3 and warm.n_roots == 9
    # threads: the parallel kernel gives the same roots bitwise
    par = rank_one_eigvals_below(d, z, 0.5, upper=1.5, n_threads=2)
    ser = rank_one_eigvals_below(d, z, 0.5, upper=1.5, n_threads=1)
    assert par.tolist() == ser.tolist() and par.size == 5
    np.testing.assert_allclose(par, w[w < 1.5], rtol=0, atol=4e-15)


@pytest.mark.skipif(not R.numba_available(), reason="compiled engine only")
def test_eigvals_below_failed_compiled_root_falls_back_to_dlaed4(monkeypatch):
    """A root that fails the compiled test: the values come from dlaed4 and the warm start keeps
    what it had (nothing of the failed call is stored); the call is still counted."""
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    kernel = R._numba_kernel()

    class OneRootFails:
        @staticmethod
        def secular_roots_prefix_serial(*args):
            kernel.secular_roots_prefix_serial(*args)
            args[8][1] = -1  # status of root 1

        secular_roots_prefix = secular_roots_prefix_serial

    rng = np.random.default_rng(13)
    d, z = np.sort(rng.normal(size=8)), rng.normal(size=8)
    warm = SecularWarmStart()
    rank_one_eigh(d, z, 0.6, warm_start=warm)
    stored = warm.offsets.copy()
    monkeypatch.setattr(R, "_numba_kernel", lambda: OneRootFails())
    lapack_calls = _spy(monkeypatch, "_secular_values_lapack")
    lam = rank_one_eigvals_below(d, 1.5 * z, 0.6, upper=d[4], warm_start=warm)
    assert len(lapack_calls) == 1 and warm.n_calls == 2 and warm.n_roots == 8 + 4
    assert np.array_equal(warm.offsets, stored)
    w = np.linalg.eigvalsh(np.diag(d) + 0.6 * 2.25 * np.outer(z, z))
    np.testing.assert_allclose(lam, w[w < d[4]], rtol=0, atol=1e-14)


def test_eigvals_below_dlaed4_failures_are_reported(monkeypatch):
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    failing = _failing_dlaed4(R._dlaed4(), 2, 3)
    monkeypatch.setattr(R, "_dlaed4", lambda: failing)
    d, z = np.arange(5.0) - 2.0, np.full(5, 1 / np.sqrt(5))
    msg = r"^LAPACK dlaed4 failed to converge for secular root 1 of 5 \(info = 3\)\.$"
    with pytest.raises(RuntimeError, match=msg):
        rank_one_eigvals_below(d, z, 1.0, upper=0.5, engine="lapack")
    # a failure of a root that is not computed is not seen
    lam = rank_one_eigvals_below(d, z, 1.0, upper=-1.0, engine="lapack")
    w = np.linalg.eigvalsh(np.diag(d) + np.outer(z, z))
    np.testing.assert_allclose(lam, w[w < -1.0], rtol=0, atol=1e-14)


def test_warm_start_prefix_store():
    """``store_prefix`` writes the first ``m`` roots only: the others keep their guesses, and a
    first store (or one for another size or sign) leaves them without one."""
    warm = SecularWarmStart()
    kept = np.array([0, 2, 3, 5])
    origin = np.array([0, 2, 2, 3])
    tau = np.array([0.1, -0.2, 0.3, 0.4])
    warm.store_prefix(6, 1, kept, origin, tau, 2)
    side, guess = warm.guesses(6, 1, kept)
    assert side.tolist() == [0, 1, -1, -1] and guess[:2].tolist() == [0.1, -0.2]
    side, _ = warm.guesses(6, 1, np.arange(6))
    assert side.tolist() == [0, -1, 1, -1, -1, -1]  # root 1 is stored under pole 2
    warm.store(6, 1, kept, origin, tau)
    warm.store_prefix(6, 1, kept, np.array([1, 1, 2, 3]), np.array([-0.5, 0.6, 9.0, 9.0]), 2)
    side, guess = warm.guesses(6, 1, kept)
    assert side.tolist() == [1, 0, 0, 0] and guess.tolist() == [-0.5, 0.6, 0.3, 0.4]
    warm.store_prefix(6, -1, kept, origin, tau, 1)
    assert warm.guesses(6, 1, kept) is None
    side, _ = warm.guesses(6, -1, kept)
    assert side.tolist() == [0, -1, -1, -1]
    warm.store_prefix(4, -1, np.array([1, 2, 3]), np.array([0, 1, 2]), np.ones(3), 3)
    side, _ = warm.guesses(4, -1, np.arange(4))
    assert side.tolist() == [-1, 0, 0, 0]
    # m = 0 stores nothing, but keys the table
    warm.store_prefix(7, 1, kept, origin, tau, 0)
    side, _ = warm.guesses(7, 1, np.arange(7))
    assert side.tolist() == [-1] * 7


def test_values_positive_reports_the_number_deflated():
    """``_rank_one_values_positive`` returns the eigenvalues below ``upper`` and the number of
    deflated poles (a zero weight and a Givens merge of equal poles; all of them for a zero
    update or an empty problem)."""
    rng = np.random.default_rng(14)
    d = np.sort(rng.normal(size=8))
    d[4] = d[3]
    z = rng.normal(size=8)
    z[1] = 0.0
    w = np.linalg.eigvalsh(np.diag(d) + 0.6 * np.outer(z, z))
    for engine in ("lapack", "numba"):
        lam, n_deflated = R._rank_one_values_positive(d, z, 0.6, 0.0, 1, engine, None)
        np.testing.assert_allclose(lam, w[w < 0], rtol=0, atol=1e-14)
        assert n_deflated == 2
        lam, n_deflated = R._rank_one_values_positive(d, np.zeros(8), 0.6, 0.0, 1, engine, None)
        assert lam.tolist() == d[d < 0].tolist() and n_deflated == 8
        lam, n_deflated = R._rank_one_values_positive(d[:0], z[:0], 0.6, 0.0, 1, engine, None)
        assert lam.shape == (0,) and n_deflated == 0


@pytest.mark.skipif(not R.numba_available(), reason="compiled engine only")
def test_use_threads_picks_the_parallel_build_for_more_than_one_thread(monkeypatch):
    import numba

    assert R._use_threads(1) is False and R._use_threads(0) is False
    if numba.config.NUMBA_NUM_THREADS >= 2:
        numba.set_num_threads(1)
        assert R._use_threads(2) is True and numba.get_num_threads() == 2
        assert R._use_threads(10**6) is True
        assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    # never more threads than Numba was started with
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 1)
    assert R._use_threads(2) is False
    side, tau = R._initial_guess(3, None)
    assert side.tolist() == [-1, -1, -1] and tau.tolist() == [0.0, 0.0, 0.0]
    guess = (np.array([0, 1, -1]), np.array([0.5, -0.5, 0.0]))
    assert R._initial_guess(3, guess) is guess


@pytest.mark.parametrize("engine", ["lapack", "numba"])
def test_eigvals_below_of_one_pole_and_of_a_fully_deflated_update(engine, monkeypatch):
    """n = 1: the eigenvalue is d + sigma z^2 (not the pole); every weight below dlaed2's
    tolerance (rho > 0 but nothing kept): the poles; k = 3 kept poles: one dlaed4 call per
    root below ``upper`` (the values-only LAPACK path)."""
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    lam = rank_one_eigvals_below([0.5], [2.0], 0.25, upper=10.0, engine=engine)
    assert lam.tolist() == [1.5]
    assert rank_one_eigvals_below([0.5], [2.0], 0.25, upper=1.5, engine=engine).size == 0
    d = np.array([-1.0, 0.5, 2.0])
    lam = rank_one_eigvals_below(d, np.full(3, 1e-30), 1.0, upper=1.0, engine=engine)
    assert lam.tolist() == [-1.0, 0.5]
    lapack_calls = _spy(monkeypatch, "_secular_values_lapack")
    z = np.array([0.6, 0.0, 0.8, 0.5])
    d4 = np.array([-1.0, 0.0, 0.5, 2.0])
    w = np.linalg.eigvalsh(np.diag(d4) + 0.7 * np.outer(z, z))
    lam = rank_one_eigvals_below(d4, z, 0.7, upper=0.6, engine="lapack")
    np.testing.assert_allclose(lam, w[w < 0.6], rtol=0, atol=1e-15)
    assert len(lapack_calls) == 1 and lapack_calls[0][3] == 2  # kept poles -1, 0.5 below 0.6


def test_eigvals_below_hands_a_negative_sigma_to_rank_one_eigh_with_every_setting(monkeypatch):
    from indefsvm.linalg.rank_one import rank_one_eigvals_below

    seen = []
    real = R.rank_one_eigh

    def spy(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(R, "rank_one_eigh", spy)
    rng = np.random.default_rng(15)
    d, z = np.sort(rng.normal(size=7)), rng.normal(size=7)
    warm = SecularWarmStart()
    lam = rank_one_eigvals_below(d, z, -0.4, upper=0.2, n_threads=2, engine="lapack",
                                 warm_start=warm)  # fmt: skip
    (kw,) = seen
    assert kw == {"which": "below", "upper": 0.2, "n_threads": 2, "engine": "lapack",
                  "warm_start": warm}  # fmt: skip
    assert kw["warm_start"] is warm
    w = np.linalg.eigvalsh(np.diag(d) - 0.4 * np.outer(z, z))
    np.testing.assert_allclose(lam, w[w < 0.2], rtol=0, atol=1e-14)
    # sigma >= 0 (zero included) is solved here, not handed over
    assert rank_one_eigvals_below(d, z, 0.0, upper=0.2).tolist() == d[d < 0.2].tolist()
    assert len(seen) == 1


def test_poles_exactly_two_tolerances_apart_with_equal_weights_are_merged():
    """The prefilter ``gap <= 2 tol`` is inclusive: at a gap of exactly 2 tol with equal weights
    (|c s| = 1/2 rounded down) dlaed2's test |(d_q - d_p) c s| <= tol merges the pair."""
    eps = np.finfo(float).eps
    tol = 8 * eps  # max(|d|_max, rho) = 1
    d = np.array([0.0, 2 * tol, 1.0])
    z = np.array([0.6, 0.6, np.sqrt(1 - 0.72)])
    for engine in ("lapack", "auto"):
        res = rank_one_eigh(d, z, 1.0, engine=engine)
        assert res.n_deflated == 1
        w = np.linalg.eigvalsh(np.diag(d) + np.outer(z, z))
        np.testing.assert_allclose(res.eigenvalues, w, rtol=0, atol=2e-15)


# -- which secular engine runs ---------------------------------------------------------------------


def _engine_recorder(monkeypatch):
    """Wrap both compiled secular entry points so a test sees which engine ran."""
    calls: list[str] = []
    for name in ("_secular_eigenpairs_numba", "_secular_values_numba"):
        compiled = getattr(R, name)

        def wrapper(*args, _compiled=compiled, _name=name, **kwargs):
            calls.append(_name)
            return _compiled(*args, **kwargs)

        monkeypatch.setattr(R, name, wrapper)
    return calls


def _dense_below(d, z, sigma, upper=0.0):
    w = np.linalg.eigvalsh(np.diag(d) + sigma * np.outer(z, z))
    return w[w < upper]


@pytest.mark.skipif(not R.numba_available(), reason="numba is not installed")
@pytest.mark.parametrize("n", [3, 12])
def test_engine_lapack_never_runs_the_compiled_kernel(monkeypatch, n):
    """``engine="lapack"`` is the reference path: it must not reach the compiled engine even
    when Numba is importable (a wrong resolution would silently compare the engine with
    itself in every cross-check)."""
    calls = _engine_recorder(monkeypatch)
    rng = np.random.default_rng(n)
    d = np.sort(rng.standard_normal(n))
    z = rng.standard_normal(n)
    for sigma in (0.7, -0.7):
        eig = rank_one_eigh(d, z, sigma, engine="lapack")
        w = np.linalg.eigvalsh(np.diag(d) + sigma * np.outer(z, z))
        np.testing.assert_allclose(eig.eigenvalues, w, atol=1e-12)
    below = R.rank_one_eigvals_below(d, z, 0.7, engine="lapack")
    np.testing.assert_allclose(below, _dense_below(d, z, 0.7), atol=1e-12)
    assert calls == []


@pytest.mark.skipif(not R.numba_available(), reason="numba is not installed")
def test_engine_numba_runs_the_compiled_kernel_from_three_poles(monkeypatch):
    """The compiled engine takes every secular equation with three or more kept poles (below
    that the LAPACK path is used: the compiled kernel needs ``k >= 3``)."""
    calls = _engine_recorder(monkeypatch)
    d = np.array([-1.0, 0.5, 2.0])
    z = np.array([0.6, 0.5, 0.62])
    eig = rank_one_eigh(d, z, 0.9, engine="numba")
    np.testing.assert_allclose(
        eig.eigenvalues, np.linalg.eigvalsh(np.diag(d) + 0.9 * np.outer(z, z)), atol=1e-12
    )
    assert calls == ["_secular_eigenpairs_numba"]
    calls.clear()
    d4 = np.array([-2.0, -1.0, 0.5, 2.0])
    z4 = np.array([0.3, 0.6, 0.5, 0.55])
    below = R.rank_one_eigvals_below(d4, z4, 0.9, engine="numba")
    np.testing.assert_allclose(below, _dense_below(d4, z4, 0.9), atol=1e-12)
    assert calls == ["_secular_values_numba"]


@pytest.mark.parametrize("engine", ["lapack", "auto"])
@pytest.mark.parametrize(
    ("d", "z"),
    [
        ([1.0, 1.0], [0.6, 0.8]),  # the only two components sit on one pole
        ([-1.0, 2.0, 2.0], [0.0, 0.6, 0.8]),  # a zero weight leaves the equal pair alone
    ],
)
@pytest.mark.parametrize("sigma", [0.5, -0.5])
def test_a_lone_pair_of_equal_poles_is_merged(d, z, sigma, engine):
    """Two equal poles must be merged by a rotation even when they are the only components
    left: the secular equation has no root between them, and without the merge the Loewner
    vectors divide by their zero gap (NaN eigenvectors)."""
    d, z = np.array(d), np.array(z)
    A = np.diag(d) + sigma * np.outer(z, z)
    eig = rank_one_eigh(d, z, sigma, engine=engine)
    V, w = eig.eigenvectors, eig.eigenvalues
    np.testing.assert_allclose(w, np.linalg.eigvalsh(A), atol=1e-14)
    np.testing.assert_allclose(V.T @ V, np.eye(d.size), atol=1e-14)
    np.testing.assert_allclose((V * w) @ V.T, A, atol=1e-14)
    assert eig.n_deflated == np.count_nonzero(np.asarray(z) == 0) + 1


class _KernelSpy:
    """The compiled kernel module, recording which of its loops are called."""

    def __init__(self, kernel, used):
        self._kernel, self._used = kernel, used

    def __getattr__(self, name):
        attr = getattr(self._kernel, name)
        if callable(attr) and name.startswith("secular_"):
            self._used.append(name)
        return attr


@pytest.mark.skipif(not R.numba_available(), reason="numba is not installed")
@pytest.mark.parametrize("n_threads", [1, 2])
def test_thread_count_picks_the_serial_or_the_threaded_build(monkeypatch, n_threads):
    """``n_threads=1`` runs the serial loops and leaves Numba's thread count alone; more
    threads run the parallel loops with that many threads (issue 22: a solver must not spin
    an OpenMP pool it was not asked for)."""
    import numba

    if n_threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("Numba has fewer threads on this machine")
    used: list[str] = []
    set_calls: list[int] = []
    kernel = R._numba_kernel()
    monkeypatch.setattr(R, "_numba_kernel", lambda: _KernelSpy(kernel, used))
    real_set = numba.set_num_threads
    monkeypatch.setattr(numba, "set_num_threads", lambda k: (set_calls.append(k), real_set(k)))
    rng = np.random.default_rng(3)
    d = np.sort(rng.standard_normal(30))
    z = rng.standard_normal(30)
    eig = rank_one_eigh(d, z, 0.8, engine="numba", n_threads=n_threads)
    np.testing.assert_allclose(
        eig.eigenvalues, np.linalg.eigvalsh(np.diag(d) + 0.8 * np.outer(z, z)), atol=1e-12
    )
    R.rank_one_eigvals_below(d, z, 0.8, engine="numba", n_threads=n_threads)
    serial = n_threads == 1
    assert used and all(name.endswith("_serial") == serial for name in used), used
    if serial:
        assert set_calls == []
    else:
        assert n_threads in set_calls


def test_overflowing_weight_is_refused_with_its_values():
    with pytest.raises(
        ValueError, match=r"^sigma \* \|\|z\|\|\^2 overflows \(sigma = 1e\+300, \|\|z\|\| = "
    ):
        rank_one_eigh(np.array([0.0, 1.0, 2.0]), np.array([1e10, 1e10, 1e10]), 1e300)
