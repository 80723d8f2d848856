"""The certificate module's own helpers (:mod:`indefsvm.proxy.certificate`).

The bounds themselves are tested through the problem's methods that delegate to this module
(``evaluate``, ``bound_for_kernel*``, ``libsvm_*``: tests/proxy/test_problems.py and
tests/integration/test_gap_certified.py); here are the contracts of helpers whose effect no
public output shows to rounding.
"""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.linalg.factor import LowRankKernel
from indefsvm.proxy import certificate
from indefsvm.proxy.problems import PerturbProblem, make_problem


def test_eigen_scale_is_the_largest_absolute_eigenvalue():
    """The scale of the excesses' error bounds is ``max |lambda(K0)|``, also on a factored K0
    whose most negative eigenvalue dominates (its operator's curvature estimate, the largest
    positive eigenvalue, is smaller), and at least that on the PSD path (a Gershgorin bound)."""
    rng = np.random.default_rng(5)
    Phi = rng.normal(size=(30, 3)) * np.array([1.0, 3.0, 0.5])
    s = np.array([1.0, -1.0, 1.0])
    y = np.where(rng.normal(size=30) > 0, 1.0, -1.0)
    K = (Phi * s) @ Phi.T
    top = np.max(np.abs(np.linalg.eigvalsh(K)))
    for K0 in (K, LowRankKernel(Phi, s)):
        problem = make_problem("svc", K0, y)
        assert certificate.eigen_scale(problem) == pytest.approx(top, rel=1e-10)
    assert make_problem("svc", LowRankKernel(Phi, s), y).operator.spectral_scale() < 0.5 * top
    X = np.random.default_rng(0).normal(size=(9, 3))
    Kp = X @ X.T + 0.1 * np.eye(9)
    labels = np.where(X[:, 0] > 0, 1.0, -1.0)
    labels[:2] = [1.0, -1.0]
    psd = PerturbProblem(Kp, labels)
    assert certificate.eigen_scale(psd) >= np.max(np.linalg.eigvalsh(Kp)) * (1 - 1e-12)
