"""Estimators of indefsvm.krein: Prop. 2 and Prop. 3 of Oglic & Gaertner (2019), baselines,
scikit-learn API and consistent out-of-sample rows."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from sklearn.base import clone
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC

from indefsvm.kernels import gaussian_combination_kernel, sigmoid_kernel
from indefsvm.krein import (
    KREIN_FORMULATIONS,
    KreinClassifier,
    KreinKernelRidge,
    KreinKernelRidgeClassifier,
    KreinRegressor,
    KreinSVC,
    OngSubspaceRegressor,
    SimilarityRidge,
    SimilarityRidgeClassifier,
    center_kernel_test,
    center_kernel_train,
)
from indefsvm.krein.models import KreinSquaredHingeSVC


def _data(n=70, m=25, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + m, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n + m)
    return X[:n], y[:n], X[n:], y[n:]


def _sig(X, Y=None, gamma=0.4, coef0=-0.5):
    return sigmoid_kernel(X, Y, gamma=gamma, coef0=coef0)


def _flip_map_dense(K):
    """P = K |K|^{-1} with |K| = sqrtm(K^2): Chen et al.'s flip map without eigh."""
    A = np.real(sla.sqrtm(K @ K))
    return A, K @ np.linalg.inv(A)


def test_prop2_krein_kernel_ridge_equals_flip_kernel_ridge():
    """Oglic & Gaertner (2019), Prop. 2: lambda_+ = lambda_- gives flip-spectrum KRR."""
    X, y, Xt, _ = _data()
    K, Kt = _sig(X), _sig(Xt, X)
    n, lam = K.shape[0], 0.03
    krein = KreinKernelRidge(lambda_plus=lam, lambda_minus=lam).fit(K, y)
    A, P = _flip_map_dense(K)
    ref = KernelRidge(alpha=n * lam, kernel="precomputed").fit(A, y)
    assert np.allclose(krein.predict(Kt), ref.predict(Kt @ P), atol=1e-8)
    # With lambda_+ != lambda_- the hypotheses differ.
    other = KreinKernelRidge(lambda_plus=lam, lambda_minus=10 * lam).fit(K, y)
    assert not np.allclose(other.predict(Kt), ref.predict(Kt @ P), atol=1e-4)


def test_prop2_variance_constrained_krein_equals_flip():
    """The same equivalence for eq. (4) vs eq. (2) with the flip-spectrum kernel."""
    X, y, Xt, _ = _data(seed=1)
    lam = 0.02
    a = KreinRegressor(_sig, formulation="krein", lambda_plus=lam, lambda_minus=lam, r=0.8)
    a.fit(X, y)
    b = KreinRegressor(_sig, formulation="flip", lam=lam, r=0.8).fit(X, y)
    assert np.allclose(a.predict(Xt), b.predict(Xt), atol=1e-8)
    assert a.mu_ == pytest.approx(b.mu_, rel=1e-8)


def test_prop3_krein_svm_equals_loosli_form():
    """Oglic & Gaertner (2019), Prop. 3: Krein SVM = SVM on |K| with Chen's test map."""
    X, y, Xt, _ = _data(seed=2)
    labels = np.where(y > np.median(y), "pos", "neg")
    K, Kt = _sig(X), _sig(Xt, X)
    est = KreinSVC(C=2.0, tol=1e-8).fit(K, labels)
    A, P = _flip_map_dense(K)
    ref = SVC(kernel="precomputed", C=2.0, tol=1e-8).fit(A, labels)
    assert np.allclose(est.decision_function(Kt), ref.decision_function(Kt @ P), atol=1e-6)
    # Krein-space form (Loosli et al.): f(x) = k(x)' P (y * a) + b with the original kernel.
    dual = np.zeros(K.shape[0])
    dual[ref.support_] = ref.dual_coef_[0]
    f = Kt @ (P @ dual) + ref.intercept_[0]
    assert np.allclose(est.decision_function(Kt), f, atol=1e-6)
    assert np.array_equal(est.predict(Kt), ref.predict(Kt @ P))
    # On training rows the Chen map reproduces the flip kernel, so training decisions agree.
    assert np.allclose(est.decision_function(K), ref.decision_function(A), atol=1e-6)
    # class_weight is keyed by the user's labels, as in SVC.
    weighted = KreinSVC(C=2.0, class_weight={"pos": 3.0}).fit(K, labels)
    ref_w = SVC(kernel="precomputed", C=2.0, class_weight={"pos": 3.0}).fit(A, labels)
    assert np.allclose(weighted.decision_function(Kt), ref_w.decision_function(Kt @ P), atol=1e-5)


@pytest.mark.parametrize("method", KREIN_FORMULATIONS)
def test_callable_and_precomputed_agree_and_training_rows_are_consistent(method):
    X, y, Xt, _ = _data(seed=3)
    est_c = KreinRegressor(_sig, formulation=method, lambda_plus=0.01, lambda_minus=0.05, lam=0.02)
    est_p = clone(est_c).set_params(kernel="precomputed")
    est_c.fit(X, y)
    est_p.fit(_sig(X), y)
    assert np.allclose(est_c.predict(Xt), est_p.predict(_sig(Xt, X)), atol=1e-10)
    # Training rows through the test maps give the fitted values (exact for linear maps;
    # shift is Wu et al.'s heuristic and drops the diagonal shift on test rows).
    fitted = est_c.solution_.fitted + est_c.intercept_
    pred_train = est_c.predict(X)
    if method == "shift":
        shift = est_c.transform_.shift
        assert np.allclose(pred_train, fitted - shift * est_c.alpha_, atol=1e-8)
    else:
        assert np.allclose(pred_train, fitted, atol=1e-8)
    # Variance of the fitted values on the training set is r^2 (the constraint of eq. 2/4).
    if method in ("krein", "omcs", "flip", "clip", "square"):
        assert np.var(est_c.solution_.fitted) == pytest.approx(np.var(y), rel=1e-8)


def test_centering_of_test_rows_matches_feature_space_centering():
    rng = np.random.default_rng(4)
    F = rng.normal(size=(9, 4))  # explicit features: k = <phi, phi>
    Ft = rng.normal(size=(3, 4))
    K, Kt = F @ F.T, Ft @ F.T
    Kc, col, grand = center_kernel_train(K)
    mean = F.mean(axis=0)
    assert np.allclose(Kc, (F - mean) @ (F - mean).T)
    assert np.allclose(center_kernel_test(Kt, col, grand), (Ft - mean) @ (F - mean).T)


def test_square_wu_heuristic_test_map():
    X, y, Xt, _ = _data(seed=5)
    est = KreinRegressor(_sig, formulation="square", square_test_map="wu", center=False).fit(X, y)
    # Wu et al.: square the kernel of the training set plus the test point, read the test row.
    pred = []
    for x in Xt:
        Z = np.vstack([X, x])
        Kz = _sig(Z)
        Ksq = Kz @ Kz
        pred.append(Ksq[-1, :-1] @ est.alpha_ + est.intercept_)
    assert np.allclose(est.predict(Xt), pred, atol=1e-10)
    with pytest.raises(ValueError, match="callable kernel"):
        KreinRegressor(formulation="square", square_test_map="wu").fit(_sig(X), y)
    # With centring: the augmented kernel of centred features (explicit linear features here).
    rng = np.random.default_rng(12)
    F, Ft, yf = rng.normal(size=(20, 5)), rng.normal(size=(4, 5)), rng.normal(size=20)
    est_c = KreinRegressor(
        lambda A, B=None: A @ (A if B is None else B).T, formulation="square", square_test_map="wu"
    ).fit(F, yf)
    mean = F.mean(axis=0)
    pred_c = []
    for x in Ft:
        Z = np.vstack([F, x]) - mean
        Kaug = Z @ Z.T
        pred_c.append((Kaug @ Kaug)[-1, :-1] @ est_c.alpha_ + est_c.intercept_)
    assert np.allclose(est_c.predict(Ft), pred_c, atol=1e-10)


def test_classifiers_map_labels_and_predict_original_labels():
    X, y, Xt, yt = _data(n=80, m=40, seed=6)
    labels = np.where(y > np.median(y), "high", "low")
    labels_t = np.where(yt > np.median(y), "high", "low")
    for est in (
        KreinClassifier(_sig, lambda_plus=1e-3, lambda_minus=1e-3),
        KreinKernelRidgeClassifier(_sig, lambda_plus=1e-3, lambda_minus=1e-3),
        SimilarityRidgeClassifier(_sig, lam=1e-3),
        KreinSVC(_sig, C=1.0),
    ):
        est.fit(X, labels)
        assert list(est.classes_) == ["high", "low"]
        pred = est.predict(Xt)
        assert set(pred) <= {"high", "low"}
        assert np.mean(pred == labels_t) > 0.6
        # decision > 0 means classes_[1]
        assert np.array_equal(pred == "low", est.decision_function(Xt) > 0)


def test_similarity_ridge_is_ridge_on_kernel_rows():
    X, y, Xt, _ = _data(seed=7)
    K, Kt = _sig(X), _sig(Xt, X)
    est = SimilarityRidge(lam=0.01).fit(K, y)
    n = K.shape[0]
    Kc = K - K.mean(axis=0)
    w = np.linalg.solve(Kc.T @ Kc + n * 0.01 * np.eye(n), Kc.T @ (y - y.mean()))
    b = y.mean() - K.mean(axis=0) @ w
    assert np.allclose(est.predict(Kt), Kt @ w + b, atol=1e-8)


@pytest.mark.parametrize("method", ["tsf", "landweber", "mr2"])
def test_ong_subspace_regressor_runs_and_regularises(method):
    X, y, Xt, yt = _data(n=60, m=30, seed=8)

    def gc(A, B=None):
        return gaussian_combination_kernel(A, B, sigma1=0.8, sigma2=1.2, sigma3=10.0)

    kw = {"n_eigenpairs": 8} if method == "tsf" else {"n_iter": 8}
    est = OngSubspaceRegressor(gc, solver=method, **kw).fit(X, y)
    assert np.all(np.isfinite(est.predict(Xt)))
    # More iterations / components fit the training data at least as well.
    kw_more = {"n_eigenpairs": 30} if method == "tsf" else {"n_iter": 30}
    more = OngSubspaceRegressor(gc, solver=method, **kw_more).fit(X, y)
    err = np.mean((est.predict(X) - y) ** 2)
    err_more = np.mean((more.predict(X) - y) ** 2)
    assert err_more <= err + 1e-12


def test_bad_input_messages():
    X, y, Xt, _ = _data(seed=9)
    K = _sig(X)
    with pytest.raises(ValueError, match="'formulation' parameter of KreinRegressor must be"):
        KreinRegressor(formulation="nope").fit(K, y)
    with pytest.raises(ValueError, match="square"):
        KreinRegressor().fit(K[:, :-1], y)
    with pytest.raises(ValueError, match="kernel between"):
        KreinRegressor().fit(K, y).predict(_sig(Xt, X)[:, :-1])
    with pytest.raises(ValueError, match="lambda_plus"):
        KreinRegressor(lambda_plus=-1.0).fit(K, y)
    with pytest.raises(ValueError, match="exactly two classes"):
        KreinClassifier().fit(K, np.zeros(K.shape[0]))
    with pytest.raises(ValueError, match="targets but the kernel"):
        KreinKernelRidge().fit(K, y[:-1])
    with pytest.raises(ValueError, match="'kernel' parameter of KreinRegressor .* Got 'nope'"):
        KreinRegressor(kernel="nope").fit(K, y)
    with pytest.raises(ValueError, match="pass r > 0"):
        KreinRegressor().fit(K, np.ones(K.shape[0]))


def test_get_set_params_and_clone():
    est = KreinRegressor(_sig, kernel_params={"gamma": 0.3}, formulation="omcs", lam=0.5)
    params = est.get_params()
    assert params["formulation"] == "omcs" and params["lam"] == 0.5
    c = clone(est).set_params(lam=0.1)
    assert c.lam == 0.1 and est.lam == 0.5
    for cls in (KreinKernelRidge, KreinSVC, SimilarityRidge, OngSubspaceRegressor):
        assert clone(cls()).get_params() == cls().get_params()


def test_model_selection_slices_precomputed_kernels():
    from sklearn.base import is_classifier, is_regressor
    from sklearn.model_selection import KFold, cross_val_score

    X, y, _, _ = _data(n=60, seed=10)
    K = _sig(X)
    est = KreinRegressor(lambda_plus=0.01, lambda_minus=0.02)
    cv = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(est, K, y, cv=cv, scoring="neg_mean_squared_error")
    manual = []
    for tr, te in cv.split(y):
        fitted = clone(est).fit(K[np.ix_(tr, tr)], y[tr])
        manual.append(-np.mean((fitted.predict(K[np.ix_(te, tr)]) - y[te]) ** 2))
    assert np.allclose(scores, manual)
    assert is_regressor(est) and is_classifier(KreinClassifier()) and is_classifier(KreinSVC())


def test_kernel_names_resolve_like_the_callables():
    X, y, Xt, _ = _data()
    by_name = KreinRegressor(kernel="sigmoid", kernel_params={"gamma": 0.4, "coef0": -0.5})
    by_callable = KreinRegressor(kernel=_sig)
    np.testing.assert_allclose(
        by_name.fit(X, y).predict(Xt), by_callable.fit(X, y).predict(Xt), rtol=1e-12
    )


def _negative_definite(n: int = 30, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    # -(X X') - I: every eigenvalue <= -1, so clipping leaves only rounding noise.
    return -(X @ X.T) - np.eye(n), y


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


def test_zero_kernel_ridge_and_sh_svm_fit_the_zero_function():
    """No transform: on a zero kernel the minimiser IS f = 0 (not noise) -- checked, left as is."""
    K = np.zeros((20, 20))
    y = np.linspace(-1.0, 1.0, 20)
    assert np.all(KreinKernelRidge().fit(K, y).predict(K) == 0.0)
    labels = np.where(y > 0, 1, -1)
    assert np.allclose(
        KreinSquaredHingeSVC(fit_intercept=False).fit(K, labels).decision_function(K), 0
    )


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
    pre = make(kernel="precomputed", n_components=20, nystroem_params={"landmarks": landmarks}).fit(
        _sigmoid(X), y
    )
    raw = make(kernel=_sigmoid, n_components=20, nystroem_params={"landmarks": landmarks}).fit(X, y)
    np.testing.assert_allclose(pre.predict(_sigmoid(Xt, X)), raw.predict(Xt), atol=1e-9)


def test_precomputed_sh_svm_with_n_components_equals_the_callable():
    rng = np.random.default_rng(4)
    X, Xt = rng.normal(size=(60, 3)), rng.normal(size=(15, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    landmarks = np.arange(0, 60, 2)
    pre = KreinSquaredHingeSVC(
        kernel="precomputed", n_components=30, nystroem_params={"landmarks": landmarks}
    )
    raw = KreinSquaredHingeSVC(
        kernel=_sigmoid, n_components=30, nystroem_params={"landmarks": landmarks}
    )
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
