"""Row fingerprints: equal rows match, different rows do not (hypothesis on random rows)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from indefsvm.utils.fingerprint import TrainingRows, row_fingerprints


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 6)),
              elements=st.floats(-1e6, 1e6, allow_nan=False)))  # fmt: skip
def test_equal_rows_have_equal_fingerprints_and_distinct_rows_distinct(A):
    keys = row_fingerprints(A)
    _, first = np.unique(A, axis=0, return_inverse=True)
    first = np.ravel(first)
    for i in range(A.shape[0]):
        for j in range(A.shape[0]):
            assert (keys[i] == keys[j]) == (first[i] == first[j])


def test_value_not_bits_and_order_matters():
    A = np.array([[0.0, 1.0], [-0.0, 1.0], [1.0, 0.0]])
    k = row_fingerprints(A)
    assert k[0] == k[1] and k[0] != k[2]
    assert row_fingerprints(A.astype(np.float32))[0] == k[0]
    assert (
        row_fingerprints(np.array([["ab", "c"], ["ab", "c"], ["a", "bc"]]))[:2].tolist()
        == [row_fingerprints(np.array([["ab", "c"]]))[0]] * 2
    )


def test_training_values_match_members_and_average_duplicates():
    X = np.array([[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])
    rows = TrainingRows.of(X)
    Q = np.array([[9.0, 9.0], [1.0, 2.0], [3.0, 4.0]])
    found, values = rows.training_values(Q, np.array([10.0, 20.0, 30.0]))
    assert found.tolist() == [1, 2]
    np.testing.assert_array_equal(values, [20.0, 20.0])
    assert [m.tolist() for m in rows.match(Q)[1]] == [[0, 2], [1]]


def test_dask_rows_match_numpy_rows():
    da = __import__("pytest").importorskip("dask.array")
    X = np.random.default_rng(0).normal(size=(50, 3))
    a = TrainingRows.of(da.from_array(X, chunks=(7, 2)))
    b = TrainingRows.of(X)
    np.testing.assert_array_equal(a.keys_, b.keys_)
