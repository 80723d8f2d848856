"""Scale-free rho (issue 26, item 11): rho_scale="spectral" of the proxy-kernel estimators."""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm import IndefiniteOneClassSVM, IndefiniteSVC, IndefiniteSVR, PerturbSVC
from indefsvm.kernels import dtw_distances
from indefsvm.linalg.spectrum import spectral_scale


def _dtw_task(n=30, seed=0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 2 * np.pi, 20)
    y = np.repeat([0, 1], n // 2)
    X = np.sin(t[None, :] - rng.uniform(-1, 1, size=(n, 1)))
    X[y == 1] = np.sign(X[y == 1])
    D = dtw_distances(X + 0.3 * rng.normal(size=X.shape))
    return D, y


def test_spectral_rho_is_rho_times_box_bound_over_spectral_norm():
    D, y = _dtw_task()
    K = np.exp(-D / np.median(D))
    two_norm = np.linalg.norm(K, 2)  # independent reference: the largest singular value
    clf = IndefiniteSVC(C=3.0, rho=0.5, rho_scale="spectral").fit(K, y)
    assert clf.effective_rho_ == pytest.approx(0.5 * len(y) * 3.0**2 / two_norm, rel=1e-10)
    # default: rho is absolute, as in the paper
    assert IndefiniteSVC(C=3.0, rho=0.5).fit(K, y).effective_rho_ == 0.5
    svr = IndefiniteSVR(C=2.0, rho=1.0, rho_scale="spectral").fit(K, y.astype(float))
    assert svr.effective_rho_ == pytest.approx(len(y) * 4.0 / two_norm, rel=1e-10)
    oc = IndefiniteOneClassSVM(nu=0.5, rho=1.0, rho_scale="spectral").fit(K)
    assert oc.effective_rho_ == pytest.approx(len(y) / (0.5 * len(y)) ** 2 / two_norm, rel=1e-10)
    vec = np.linspace(0.5, 2.0, len(y))
    per_point = IndefiniteSVC(C=1.0, rho=vec, rho_scale="spectral").fit(K, y)
    assert np.allclose(per_point.effective_rho_, vec * len(y) / two_norm, rtol=1e-10)


@pytest.mark.parametrize("cls", [IndefiniteSVC, PerturbSVC])
def test_spectral_rho_makes_the_classifier_invariant_to_the_kernel_scale(cls):
    """(c K0, C / c) at the same rho: the same classifier (eq. (3) is invariant under
    K0 -> c K0, alpha -> alpha / c, rho -> rho / c^3); absolute rho is not."""
    D, y = _dtw_task(seed=1)
    K = -D / np.median(D)  # negative-distance kernel: strongly indefinite
    if cls is PerturbSVC:
        K = np.exp(-D / np.median(D))
        K = K - 1.01 * min(0.0, np.linalg.eigvalsh(K)[0]) * np.eye(len(y))  # PSD for eq. (21)
    c = 250.0
    kw = {"tol": 1e-9, "max_iter": 20000}
    a = cls(C=1.0, rho=1.0, rho_scale="spectral", **kw).fit(K, y)
    b = cls(C=1.0 / c, rho=1.0, rho_scale="spectral", **kw).fit(c * K, y)
    assert b.effective_rho_ == pytest.approx(a.effective_rho_ / c**3, rel=1e-10)
    assert np.allclose(b.alpha_ * c, a.alpha_, atol=1e-4 * a.alpha_.max())
    assert np.allclose(b.decision_function(c * K), a.decision_function(K), atol=1e-4)
    plain_a = cls(C=1.0, rho=1.0, **kw).fit(K, y)
    plain_b = cls(C=1.0 / c, rho=1.0, **kw).fit(c * K, y)
    if cls is IndefiniteSVC:
        assert not np.allclose(plain_b.alpha_ * c, plain_a.alpha_, atol=1e-3 * a.alpha_.max())


def test_spectral_scale_paths_match_the_two_norm():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(700, 700))
    K = A + A.T  # n > 600: the Lanczos path
    assert spectral_scale(K) == pytest.approx(np.linalg.norm(K, 2), rel=1e-9)
    from indefsvm.linalg.factor import LowRankKernel

    Phi, s = rng.normal(size=(50, 6)), np.array([1, 1, -1, 1, -1, -1.0])
    dense = (Phi * s) @ Phi.T
    assert spectral_scale(LowRankKernel(Phi, s)) == pytest.approx(
        np.linalg.norm(dense, 2), rel=1e-10
    )


def test_rho_scale_is_validated():
    D, y = _dtw_task(n=10)
    with pytest.raises(ValueError, match="rho_scale"):
        IndefiniteSVC(rho_scale="auto").fit(np.exp(-D), y)
    with pytest.raises(ValueError, match="training kernel is zero"):
        IndefiniteSVC(rho_scale="spectral").fit(np.zeros((10, 10)), y)


def test_spectral_units_cost_one_eigendecomposition_and_match_the_effective_rho(monkeypatch):
    # rho only sets sigma = 1/(4 rho): the problem is re-scaled in place (set_penalty), so a fit
    # in spectral units makes one eigh of K0, and equals a fit at the effective rho built afresh.
    import indefsvm.proxy.operators as operators

    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 3))
    K = np.tanh(0.6 * X @ X.T - 0.3)
    y = np.where(X[:, 1] > 0, 1, -1)
    calls = []
    eigh = np.linalg.eigh

    def counting_eigh(*args, **kwargs):
        calls.append(1)
        return eigh(*args, **kwargs)

    monkeypatch.setattr(operators.np.linalg, "eigh", counting_eigh)
    scaled = IndefiniteSVC(C=1.0, rho=0.3, rho_scale="spectral", tol=1e-9).fit(K, y)
    assert len(calls) == 1
    plain = IndefiniteSVC(C=1.0, rho=scaled.effective_rho_, tol=1e-9).fit(K, y)
    np.testing.assert_allclose(scaled.dual_coef_, plain.dual_coef_, rtol=0, atol=1e-12)
    lam = np.linalg.eigvalsh(K)
    assert scaled.effective_rho_ == pytest.approx(0.3 * 50 / np.abs(lam).max(), rel=1e-12)
