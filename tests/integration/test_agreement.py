"""pg, accpm and siqclp reach one optimum and one proxy kernel, checked against the SDP of (3).

Random symmetric indefinite kernels (hypothesis: spread, clustered and repeated eigenvalues) and a
near-PSD kernel; the independent reference is the SDP of problem (3) in ``tests/reference.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from reference import dense_objective_eq7, sdp_optimum

import indefsvm

TOLS = {"pg": 1e-8, "accpm": 1e-7, "siqclp": 1e-6}


def kernel_with_spectrum(eigenvalues: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(eigenvalues.size, eigenvalues.size)))
    K = (Q * eigenvalues) @ Q.T
    return 0.5 * (K + K.T)


def labels(n: int, seed: int) -> np.ndarray:
    y = np.where(np.random.default_rng(seed + 1).uniform(size=n) < 0.5, -1.0, 1.0)
    y[0], y[1] = 1.0, -1.0
    return y


def check_agreement(K0, y, C, rho):
    opt, K_sdp = sdp_optimum(K0, y, C, rho)
    sdp_slack = 1e-6 * max(1.0, abs(opt))
    results = {m: indefsvm.solve(K0, y, C=C, rho=rho, method=m, tol=t) for m, t in TOLS.items()}
    scale = max(1.0, np.abs(K_sdp).max())
    for method, res in results.items():
        assert res.converged, method
        # each certified bracket contains the independent optimum
        assert res.objective <= opt + sdp_slack, method
        assert res.upper_bound >= opt - sdp_slack, method
        f_ref, K_ref = dense_objective_eq7(K0, y, res.alpha, rho)
        assert res.objective == pytest.approx(f_ref, rel=1e-9, abs=1e-12), method
        assert np.allclose(res.kernel, K_ref, atol=1e-9 * scale), method
        atol = {"pg": 1e-3, "accpm": 1e-3, "siqclp": 2e-2}[method] * scale
        assert np.allclose(res.kernel, K_sdp, atol=atol), method
    for a in results:
        for b in results:
            ra, rb = results[a], results[b]
            assert abs(ra.objective - rb.objective) <= ra.gap + rb.gap + 1e-12, (a, b)
    return results


spectra = st.one_of(
    # spread eigenvalues of both signs
    st.lists(st.floats(-2.0, 3.0), min_size=10, max_size=10),
    # two clusters, one negative, with repeated values
    st.tuples(st.floats(-1.5, -0.1), st.floats(0.2, 3.0), st.integers(2, 6)).map(
        lambda t: [t[0]] * t[2] + [t[1]] * (10 - t[2])
    ),
)


@pytest.mark.slow
@settings(
    # 10 derandomised examples (issue 15: 3 were too few to cover both spectra and both C
    # regimes); about 5 s each on 2 cores.
    max_examples=10,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # each example solves 4 problems: no shrinking
    suppress_health_check=[HealthCheck.too_slow],
)
@given(eigenvalues=spectra, seed=st.integers(0, 1000), C=st.sampled_from([0.05, 0.5, 2.0]))
def test_three_methods_agree_on_random_indefinite_kernels(eigenvalues, seed, C):
    lam = np.asarray(eigenvalues, dtype=np.float64)
    if lam.min() > -0.05:
        lam[0] = -0.5  # keep the kernel indefinite
    check_agreement(kernel_with_spectrum(lam, seed), labels(lam.size, seed), C, 1.0)


def test_three_methods_agree_on_a_near_psd_kernel():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 4))
    K = X @ X.T / 4
    w, V = np.linalg.eigh(K)
    w[0] = -1e-6  # one tiny negative eigenvalue, as from rounding or mild noise
    K0 = 0.5 * ((V * w) @ V.T + ((V * w) @ V.T).T)
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=12) > 0, 1.0, -1.0)
    results = check_agreement(K0, y, 1.0, 0.5)
    assert np.linalg.eigvalsh(results["accpm"].kernel)[0] > -1e-8
