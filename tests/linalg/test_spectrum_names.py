"""One name for the spectrum transformation: ``spectrum=`` (issue 23 item 4)."""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.linalg.spectrum import spectrum_transform


def _kernel(n=12, seed=0):
    A = np.random.default_rng(seed).normal(size=(n, n))
    return (A + A.T) / 2


def test_spectrum_keyword_and_its_former_name_agree_with_a_dense_reference():
    K = _kernel()
    lam, U = np.linalg.eigh(K)
    clipped = (U * np.maximum(lam, 0)) @ U.T  # the Frobenius projection on the PSD cone
    new = spectrum_transform(K, spectrum="clip").kernel
    np.testing.assert_allclose(new, clipped, atol=1e-12)
    np.testing.assert_array_equal(spectrum_transform(K, "clip").kernel, new)
    with pytest.warns(FutureWarning, match=r"spectrum_transform\(method=\.\.\.\) is now"):
        old = spectrum_transform(K, method="clip").kernel
    np.testing.assert_array_equal(old, new)


def test_spectrum_errors_name_the_parameter():
    K = _kernel()
    with pytest.raises(ValueError, match=r"^spectrum must be one of \("):
        spectrum_transform(K, "nope")
    with pytest.raises(ValueError, match=r"^shift is only used by spectrum='shift'"):
        spectrum_transform(K, "clip", shift=1.0)
    with pytest.raises(TypeError, match=r"^spectrum_transform\(\) needs spectrum="):
        spectrum_transform(K)
    with pytest.raises(TypeError, match=r"^give spectrum= only"):
        spectrum_transform(K, "clip", method="clip")
