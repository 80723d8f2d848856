"""Issue 22 (hardening 2), Krein-side items: degenerate transformed spectra (item 5) and the
low-rank precomputed path the docs once said did not exist (item 22)."""

from __future__ import annotations

import numpy as np
import pytest

from indefsvm.krein.lowrank import lowrank_variance_constrained
from indefsvm.krein.models import (
    KreinClassifier,
    KreinKernelRidge,
    KreinRegressor,
    KreinSquaredHingeSVC,
)
from indefsvm.linalg.spectrum import spectrum_transform
from indefsvm.proxy.baselines import SpectrumSVC


def _negative_definite(n: int = 30, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    # -(X X') - I: every eigenvalue <= -1, so clipping leaves only rounding noise.
    return -(X @ X.T) - np.eye(n), y


# ------------------------------------------------------------------- item 5: nothing to clip


@pytest.mark.parametrize("n_components", [None, 30])
def test_clip_without_positive_eigenvalue_is_refused(n_components):
    """Before: the dense fit returned ||alpha|| ~ 1e16 (rounding noise, predictions several
    times the range of y, no warning); the low-rank fit crashed inside numpy."""
    K, y = _negative_definite()
    assert np.linalg.eigvalsh(K).max() < 0  # independent check of the premise
    with pytest.raises(ValueError, match="clipped kernel is zero"):
        KreinRegressor(formulation="clip", n_components=n_components).fit(K, y)
    with pytest.raises(ValueError, match="clipped kernel is zero"):
        KreinClassifier(formulation="clip", n_components=n_components).fit(
            K, np.where(y > 0, 1, -1)
        )


def test_clip_error_names_the_alternatives():
    K, y = _negative_definite()
    with pytest.raises(ValueError, match="'flip'") as info:
        KreinRegressor(formulation="clip").fit(K, y)
    assert "no positive eigenvalue" in str(info.value)


def test_other_formulations_still_fit_the_negative_definite_kernel():
    """flip/square/krein/omcs keep the negative part: a sensible fit, predictions in range."""
    K, y = _negative_definite()
    for formulation in ("flip", "square", "krein", "omcs"):
        for n_components in (None, 30):
            pred = (
                KreinRegressor(formulation=formulation, n_components=n_components)
                .fit(K, y)
                .predict(K)
            )
            assert np.ptp(pred) < 1.5 * np.ptp(y), (formulation, n_components)


def test_shift_to_a_zero_kernel_is_refused():
    """-I shifted by its default -lambda_min is the zero matrix."""
    K = -np.eye(20)
    y = np.linspace(-1.0, 1.0, 20)
    with pytest.raises(ValueError, match="shift-transformed kernel is numerically zero"):
        KreinRegressor(formulation="shift", center=False).fit(K, y)


def test_zero_kernel_is_refused_by_every_transform():
    K = np.zeros((20, 20))
    y = np.linspace(-1.0, 1.0, 20)
    for formulation in ("clip", "flip", "square", "shift"):
        with pytest.raises(ValueError, match="zero"):
            KreinRegressor(formulation=formulation).fit(K, y)


def test_spectrum_svc_clip_without_positive_eigenvalue_is_refused():
    K, y = _negative_definite()
    labels = np.where(y > 0, 1, -1)
    with pytest.raises(ValueError, match=r"SpectrumSVC\(spectrum='clip'\).*clipped kernel is zero"):
        SpectrumSVC("clip").fit(K, labels)
    # flip is a legitimate PSD kernel here and must keep working
    assert SpectrumSVC("flip").fit(K, labels).score(K, labels) > 0.8


def test_spectrum_transform_active_uses_the_original_scale():
    """A relative tolerance on the CLIPPED spectrum keeps noise as signal; on the original
    spectrum it does not (dense eigh as reference)."""
    K, _ = _negative_definite()
    tr = spectrum_transform(K, "clip")
    lam = np.linalg.eigvalsh(K)
    noise = 30 * np.finfo(float).eps * np.abs(lam).max()
    assert not np.any(tr.active() & (tr.transformed_eigenvalues <= noise))
    assert not np.any(tr.active())


def test_zero_factor_in_low_rank_solver_is_a_clear_error():
    y = np.arange(5.0)
    for F in (np.zeros((5, 0)), np.zeros((5, 2))):
        with pytest.raises(ValueError, match="numerically zero"):
            lowrank_variance_constrained(F, y, np.ones(F.shape[1]), 1.0)


def test_zero_kernel_ridge_and_sh_svm_fit_the_zero_function():
    """No transform: on a zero kernel the minimiser IS f = 0 (not noise) -- checked, left as is."""
    K = np.zeros((20, 20))
    y = np.linspace(-1.0, 1.0, 20)
    assert np.all(KreinKernelRidge().fit(K, y).predict(K) == 0.0)
    labels = np.where(y > 0, 1, -1)
    assert np.allclose(
        KreinSquaredHingeSVC(fit_intercept=False).fit(K, labels).decision_function(K), 0
    )


# --------------------------------------------- item 22: precomputed kernels with n_components


def _sigmoid(A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
    B = A if B is None else B
    return np.tanh(0.5 * A @ B.T - 0.3)


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: KreinRegressor(formulation="krein", **kw),
        lambda **kw: KreinRegressor(formulation="omcs", **kw),
        lambda **kw: KreinRegressor(formulation="flip", **kw),
        lambda **kw: KreinRegressor(formulation="square", **kw),
        lambda **kw: KreinKernelRidge(**kw),
    ],
)
def test_precomputed_kernel_with_n_components_equals_the_callable(make):
    """The docs said n_components needs a kernel name or a callable. A precomputed kernel
    works: same landmarks, same predictions as the callable kernel on the raw points."""
    rng = np.random.default_rng(3)
    X, Xt = rng.normal(size=(60, 3)), rng.normal(size=(15, 3))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=60)
    landmarks = np.arange(0, 60, 3)
    pre = make(kernel="precomputed", n_components=20, landmarks=landmarks).fit(_sigmoid(X), y)
    raw = make(kernel=_sigmoid, n_components=20, landmarks=landmarks).fit(X, y)
    np.testing.assert_allclose(pre.predict(_sigmoid(Xt, X)), raw.predict(Xt), atol=1e-9)


def test_precomputed_sh_svm_with_n_components_equals_the_callable():
    rng = np.random.default_rng(4)
    X, Xt = rng.normal(size=(60, 3)), rng.normal(size=(15, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    landmarks = np.arange(0, 60, 2)
    pre = KreinSquaredHingeSVC(kernel="precomputed", n_components=30, landmarks=landmarks)
    raw = KreinSquaredHingeSVC(kernel=_sigmoid, n_components=30, landmarks=landmarks)
    pre.fit(_sigmoid(X), y)
    raw.fit(X, y)
    np.testing.assert_allclose(
        pre.decision_function(_sigmoid(Xt, X)), raw.decision_function(Xt), atol=1e-9
    )


def test_docstrings_no_longer_say_precomputed_excludes_n_components():
    assert 'not ``"precomputed"``' not in KreinRegressor.__doc__
    assert '``kernel="precomputed"`` only with ``n_components=None``' not in (
        KreinSquaredHingeSVC.__doc__
    )
