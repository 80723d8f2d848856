"""The pole sums of the compiled secular kernel against dlaed4's running sums, written out.

``_lower_sums`` (PSI) and ``_upper_sums`` (PHI) share one compiled loop whose error term weights
term ``j`` by an integer; the reference here accumulates the partial sums one by one in the
order dlaed4 does (PSI upwards, PHI downwards), so a wrong weight in either direction fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.linalg import _secular_numba as kernel


def _running_sums(d, z, dorg, tau, lo, hi, upwards):
    """dlaed4's loop: add each term, then add the running sum to the error accumulator."""
    order = range(lo, hi) if upwards else range(hi - 1, lo - 1, -1)
    s = dsum = e = 0.0
    for j in order:
        delta = (d[j] - dorg) - tau
        temp = z[j] / delta
        s += z[j] * temp
        dsum += temp * temp
        e += s
    return s, dsum, e


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("upwards", [True, False])
def test_pole_sums_match_the_running_sums_of_dlaed4(seed, upwards):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 60))
    d = np.sort(rng.normal(size=k))
    z = rng.normal(size=k)
    z /= np.linalg.norm(z)
    org = int(rng.integers(0, k))
    tau = 0.3 * ((d[org + 1] - d[org]) if org < k - 1 else 1.0)
    lo, hi = (0, org) if upwards else (org + 1, k)
    sums = kernel._lower_sums if upwards else kernel._upper_sums
    got = sums(d, z, d[org], tau, lo, hi)
    want = _running_sums(d, z, d[org], tau, lo, hi, upwards)
    # The compiled loop is reassociated (vectorised): equal up to rounding.
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("sums", [kernel._lower_sums, kernel._upper_sums])
def test_pole_sums_over_no_poles_are_zero(sums):
    d = np.array([0.0, 1.0, 2.0])
    z = np.full(3, 3.0**-0.5)
    assert sums(d, z, d[1], 0.25, 1, 1) == (0.0, 0.0, 0.0)
