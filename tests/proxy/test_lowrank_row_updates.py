"""Row-update paths of the low-rank operator used by the Newton solver (issue 24, letter ratio):
the Gram of most rows from the set-up's Gram, and ``basis_gram_masked``'s products updated by
the rows that changed sides instead of a pass over the factor.

Reference: the explicit basis ``E = [U q]`` (``apply_basis`` of the identity, n x (m'+1)) and
numpy products over the selected rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.linalg.factor import LowRankKernel
from indefsvm.proxy import lowrank
from indefsvm.proxy.problems import make_problem


def _problem(n=400, m=12, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    Phi = (rng.normal(size=(n, m)) * np.geomspace(3.0, 0.1, m)).astype(dtype)
    s = np.where(rng.uniform(size=m) < 0.3, -1.0, 1.0)
    y = np.where(rng.normal(size=n) > 0, 1.0, -1.0)
    problem = make_problem("svc", LowRankKernel(Phi, s), y, C=1.0, rho=0.5)
    alpha = problem.project(rng.uniform(0.0, 1.0, n))
    return problem, problem.state(alpha), rng


def _explicit_basis(op, state):
    return op.apply_basis(state, np.eye(op.rank + 1))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gram_of_most_rows_from_the_setup_gram(dtype):
    problem, _, rng = _problem(dtype=dtype)
    op = problem.operator
    U = np.asarray(op.Phi, dtype=np.float64) @ op.T
    for fraction in (1.0, 0.9, 0.6):  # all rows, then most rows: set-up Gram minus the others
        op.reset_warm_start()
        mask = rng.uniform(size=op.n) < fraction
        before = op.n_gram_passes
        G = op.basis_factor_gram(mask)
        expected = U[mask].T @ U[mask]
        assert np.allclose(G, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
        # rows read: only those left out (none when every row is in)
        assert op.n_gram_passes - before == pytest.approx(np.count_nonzero(~mask) / op.n)


@pytest.mark.parametrize("small_factor_pass", [False, True], ids=["updates", "small-pass"])
def test_masked_products_updated_by_changed_rows_match_explicit_basis(
    small_factor_pass, monkeypatch
):
    # The row updates switch on from 2^20 entries; here from any size, or (small-pass) never.
    monkeypatch.setattr(lowrank, "_MIN_UPDATE_ENTRIES", 10**12 if small_factor_pass else 0)
    problem, state, rng = _problem()
    op = problem.operator
    y = problem.y
    E = _explicit_basis(op, state)
    vectors = [y * rng.normal(size=op.n), y * rng.normal(size=op.n), np.ones(op.n)]
    free = rng.uniform(size=op.n) < 0.7
    upper = ~free & (rng.uniform(size=op.n) < 0.5)
    lower = ~free & ~upper
    for step in range(6):
        columns = [(vectors[0], upper), (vectors[1], lower), (vectors[2], free)]
        passes = op.n_passes
        gram, adj = op.basis_gram_masked(state, free, columns)
        # the first call reads the factor once; later ones update by the rows that moved
        assert op.n_passes - passes == (1 if step == 0 or small_factor_pass else 0)
        V = np.column_stack([vec * mk for vec, mk in columns])
        assert np.allclose(gram, E[free].T @ E[free], rtol=0, atol=1e-10)
        assert np.allclose(adj, E.T @ V, rtol=0, atol=1e-10)
        # a few rows change sides (an active-set step)
        moved = rng.choice(op.n, size=15, replace=False)
        free[moved] = ~free[moved]
        upper[moved] = ~free[moved] & (rng.uniform(size=15) < 0.5)
        lower[moved] = ~free[moved] & ~upper[moved]
    # new vectors (another model): a fresh pass, same values as the one-pass method
    fresh = [(v.copy(), mk) for v, mk in columns]
    passes = op.n_passes
    gram, adj = op.basis_gram_masked(state, free, fresh)
    assert op.n_passes - passes == 1
    ref_gram, ref_adj = op.basis_gram_rows(
        state, free, np.column_stack([v * mk for v, mk in fresh])
    )
    assert np.allclose(gram, ref_gram, rtol=0, atol=1e-12)
    assert np.allclose(adj, ref_adj, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_basis_gram_kept_in_the_basis_matches_the_explicit_rows_through_many_updates(dtype):
    """``U_I'U_I`` (``U = Phi_w T``) kept and updated by rows, against numpy's product of the
    explicit basis rows, through a sequence of masks like an active-set run's (few rows move),
    a jump to most rows and one to few rows."""
    problem, state, rng = _problem(n=500, m=10, dtype=dtype)
    op = problem.operator
    U = np.asarray(op.Phi, dtype=np.float64) @ op.T
    mask = rng.uniform(size=op.n) < 0.4
    masks = [mask]
    for _ in range(12):
        mask = mask.copy()
        flip = rng.choice(op.n, 7, replace=False)
        mask[flip] = ~mask[flip]
        masks.append(mask)
    masks += [rng.uniform(size=op.n) < 0.95, rng.uniform(size=op.n) < 0.1]
    for mask in masks:
        W = op.basis_factor_gram(mask)
        ref = U[mask].T @ U[mask]
        np.testing.assert_allclose(W, ref, rtol=0, atol=1e-11 * np.abs(ref).max())
    # and the (m'+1)-dimensional Gram of [U q] over the rows, as the explicit basis gives it
    E = _explicit_basis(op, state)
    free = masks[-1]
    gram = op.basis_gram_rows(state, free)
    ref = E[free].T @ E[free]
    np.testing.assert_allclose(gram, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
