"""One name for the spectrum transformation: ``spectrum=``, as ``SpectrumSVC(spectrum=...)``."""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.linalg.spectrum import spectrum_transform


def _kernel(n=12, seed=0):
    A = np.random.default_rng(seed).normal(size=(n, n))
    return (A + A.T) / 2


def test_spectrum_keyword_agrees_with_a_dense_reference():
    K = _kernel()
    lam, U = np.linalg.eigh(K)
    clipped = (U * np.maximum(lam, 0)) @ U.T  # the Frobenius projection on the PSD cone
    new = spectrum_transform(K, spectrum="clip").kernel
    np.testing.assert_allclose(new, clipped, atol=1e-12)
    np.testing.assert_array_equal(spectrum_transform(K, "clip").kernel, new)


def test_spectrum_errors_name_the_parameter():
    K = _kernel()
    with pytest.raises(ValueError, match=r"^spectrum must be one of \("):
        spectrum_transform(K, "nope")
    with pytest.raises(ValueError, match=r"^shift is only used by spectrum='shift'"):
        spectrum_transform(K, "clip", shift=1.0)
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'spectrum'"):
        spectrum_transform(K)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'method'"):
        spectrum_transform(K, "clip", method="clip")
