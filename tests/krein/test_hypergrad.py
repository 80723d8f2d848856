"""Hyperparameter gradients of paper 000, Sect. 3.3, against central finite differences."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
import scipy.optimize
from sklearn.model_selection import KFold

from indefsvm.kernels import gaussian_combination_kernel
from indefsvm.krein import (
    KreinRegressor,
    center_kernel_test,
    center_kernel_train,
    hypergrad,
    krein_least_squares,
    omcs_krein_least_squares,
    tune_variance_constrained,
    validation_hypergradient,
)


def _affine_problem(seed, n=12, m=7):
    rng = np.random.default_rng(seed)
    A, B = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    K0, K1 = (A + A.T) / 2, (B + B.T) / 2
    V0, V1 = rng.normal(size=(m, n)), rng.normal(size=(m, n))
    return K0, K1, V0, V1, rng.normal(size=n), rng.normal(size=m)


def _loss(K0, K1, V0, V1, y, yv, method, theta, **kw):
    eta = theta["eta"]
    return validation_hypergradient(
        K0 + eta * K1,
        y,
        V0 + eta * V1,
        yv,
        formulation=method,
        intercept=0.3,
        lambda_plus=theta.get("lambda_plus"),
        lambda_minus=theta.get("lambda_minus"),
        lam=theta.get("lam"),
        r=theta["r"],
        dK={"eta": K1},
        dK_val={"eta": V1},
        **kw,
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("method", ["krein", "omcs"])
def test_gradient_matches_finite_differences(seed, method):
    K0, K1, V0, V1, y, yv = _affine_problem(seed)
    rng = np.random.default_rng(100 + seed)
    theta = {"r": float(rng.uniform(0.3, 1.5)), "eta": float(rng.uniform(-0.5, 0.5))}
    if method == "krein":
        theta.update(
            lambda_plus=float(rng.uniform(0.01, 0.3)), lambda_minus=float(rng.uniform(0.01, 0.3))
        )
    else:
        theta["lam"] = float(rng.uniform(0.01, 0.3))
    hg = _loss(K0, K1, V0, V1, y, yv, method, theta)
    for name in theta:
        h = 1e-6 * max(1.0, abs(theta[name]))
        up, down = dict(theta), dict(theta)
        up[name] += h
        down[name] -= h
        fd = (
            _loss(K0, K1, V0, V1, y, yv, method, up).loss
            - _loss(K0, K1, V0, V1, y, yv, method, down).loss
        ) / (2 * h)
        assert hg.grad[name] == pytest.approx(fd, rel=1e-5, abs=1e-6 * max(1.0, hg.loss)), name


def test_dmu_matches_finite_differences():
    K0, K1, V0, V1, y, yv = _affine_problem(9)
    theta = {"lambda_plus": 0.1, "lambda_minus": 0.05, "r": 0.9, "eta": 0.2}
    hg = _loss(K0, K1, V0, V1, y, yv, "krein", theta)
    for name in theta:
        h = 1e-6
        up, down = dict(theta), dict(theta)
        up[name] += h
        down[name] -= h
        fd = (
            _loss(K0, K1, V0, V1, y, yv, "krein", up).mu
            - _loss(K0, K1, V0, V1, y, yv, "krein", down).mu
        ) / (2 * h)
        assert hg.dmu[name] == pytest.approx(fd, rel=1e-5, abs=1e-7)


def test_paper_kernel_gradient_omits_projector_derivative():
    """Paper 000's kernel-parameter formula treats P_+- as constant; the exact one does not."""
    K0, K1, V0, V1, y, yv = _affine_problem(3)
    theta = {"lambda_plus": 0.05, "lambda_minus": 0.2, "r": 0.8, "eta": 0.3}
    exact = _loss(K0, K1, V0, V1, y, yv, "krein", theta).grad["eta"]
    paper = _loss(K0, K1, V0, V1, y, yv, "krein", theta, projector_derivative=False).grad["eta"]
    h = 1e-6
    up, down = dict(theta, eta=0.3 + h), dict(theta, eta=0.3 - h)
    fd = (
        _loss(K0, K1, V0, V1, y, yv, "krein", up).loss
        - _loss(K0, K1, V0, V1, y, yv, "krein", down).loss
    ) / (2 * h)
    assert exact == pytest.approx(fd, rel=1e-6)
    assert abs(paper - fd) > 0.05 * abs(fd)


def test_gradient_of_a_real_kernel_parameter_with_centering():
    rng = np.random.default_rng(5)
    X, Xv = rng.normal(size=(30, 2)), rng.normal(size=(10, 2))
    y, yv = np.sin(X[:, 0]), np.sin(Xv[:, 0])

    def pieces(s1):
        K = gaussian_combination_kernel(X, sigma1=s1, sigma2=3.0, sigma3=1.5)
        Kv = gaussian_combination_kernel(Xv, X, sigma1=s1, sigma2=3.0, sigma3=1.5)
        Kc, col, grand = center_kernel_train(K)
        return Kc, center_kernel_test(Kv, col, grand)

    def dpieces(s1):
        # Analytic derivative of exp(-d^2/s1) in s1: (d^2/s1^2) exp(-d^2/s1).
        d2 = ((X[:, None] - X[None]) ** 2).sum(-1)
        d2v = ((Xv[:, None] - X[None]) ** 2).sum(-1)
        dK, dKv = d2 / s1**2 * np.exp(-d2 / s1), d2v / s1**2 * np.exp(-d2v / s1)
        dKc, dcol, dgrand = center_kernel_train(dK)
        return dKc, center_kernel_test(dKv, dcol, dgrand)

    def run(s1):
        Kc, Kvc = pieces(s1)
        dK, dKv = dpieces(s1)
        return validation_hypergradient(
            Kc,
            y - y.mean(),
            Kvc,
            yv,
            lambda_plus=1e-3,
            lambda_minus=1e-2,
            r=0.5,
            intercept=y.mean(),
            dK={"s1": dK},
            dK_val={"s1": dKv},
        )

    s1, h = 0.8, 1e-6
    fd = (run(s1 + h).loss - run(s1 - h).loss) / (2 * h)
    assert run(s1).grad["s1"] == pytest.approx(fd, rel=1e-5)
    # The validation loss equals that of the estimator with the same hyperparameters.
    est = KreinRegressor(
        lambda kA, kB=None: gaussian_combination_kernel(kA, kB, sigma1=s1, sigma2=3.0, sigma3=1.5),
        lambda_plus=1e-3,
        lambda_minus=1e-2,
        r=0.5,
    ).fit(X, y)
    assert run(s1).loss == pytest.approx(np.mean((est.predict(Xv) - yv) ** 2), rel=1e-10)


def test_hard_case_is_reported():
    K = np.diag([2.0, 1.0, -1.0])
    y = np.array([0.0, 1e-3, 1e-3])  # vanishes on the bottom of D = n lambda / |sigma|
    with pytest.raises(ValueError, match="hard case"):
        validation_hypergradient(
            K, y, np.ones((2, 3)), np.ones(2), lambda_plus=1.0, lambda_minus=1.0, r=1.0
        )


def test_tuner_decreases_inner_validation_loss_and_is_seeded():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=60)

    def gc(A, B=None, sigma1=1.0):
        return gaussian_combination_kernel(A, B, sigma1=sigma1, sigma2=3.0, sigma3=1.5)

    res = tune_variance_constrained(
        X,
        y,
        kernel=gc,
        kernel_params={"sigma1": 1.0},
        tune_kernel_params=["sigma1"],
        random_state=1,
        max_iter=15,
    )
    assert res.loss <= res.history[0]
    assert set(res.params) == {"lambda_plus", "lambda_minus", "r", "sigma1"}
    again = tune_variance_constrained(
        X,
        y,
        kernel=gc,
        kernel_params={"sigma1": 1.0},
        tune_kernel_params=["sigma1"],
        random_state=1,
        max_iter=15,
    )
    assert again.params == res.params
    pre = tune_variance_constrained(gc(X), y, formulation="omcs", random_state=1, max_iter=10)
    assert set(pre.params) == {"lam", "r"} and pre.loss <= pre.history[0]
    with pytest.raises(ValueError, match="callable kernel"):
        tune_variance_constrained(gc(X), y, tune_kernel_params=["sigma1"])


@pytest.mark.parametrize("formulation", ["krein", "clip"])
def test_tuner_objective_equals_estimator_cross_validation(formulation):
    """The tuner's inner loss is the CV error of KreinRegressor on the same folds."""
    from sklearn.model_selection import KFold

    rng = np.random.default_rng(2)
    X = rng.normal(size=(45, 2))
    y = np.cos(X[:, 0]) + 0.1 * rng.normal(size=45)
    K = gaussian_combination_kernel(X, sigma1=0.5, sigma2=3.0, sigma3=1.5)
    res = tune_variance_constrained(
        K,
        y,
        formulation=formulation,
        lambda_plus=0.02,
        lambda_minus=0.03,
        lam=0.02,
        r=0.4,
        random_state=3,
        max_iter=1,
    )
    est = KreinRegressor(
        formulation=formulation, lambda_plus=0.02, lambda_minus=0.03, lam=0.02, r=0.4
    )
    errs = []
    for tr, va in KFold(3, shuffle=True, random_state=3).split(y):
        est.fit(K[np.ix_(tr, tr)], y[tr])
        errs.append(np.mean((est.predict(K[np.ix_(va, tr)]) - y[va]) ** 2))
    assert res.history[0] == pytest.approx(np.mean(errs), rel=1e-9)


def _formulation_data(n=36, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    K = np.tanh(0.7 * X @ X.T - 0.3)
    return K, np.cos(X[:, 0]) + 0.1 * rng.normal(size=n)


def test_formulation_clip_transforms_the_inner_training_kernels():
    """The tuner names a spectrum-transformed problem as KreinRegressor does."""
    K, y = _formulation_data()
    common = dict(lam=0.05, r=0.5, random_state=0, max_iter=3)
    new = tune_variance_constrained(K, y, formulation="clip", **common)
    # not plain OMCS: the transformation reached the inner folds
    omcs = tune_variance_constrained(K, y, formulation="omcs", **common)
    assert omcs.loss != new.loss
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'transform'"):
        tune_variance_constrained(K, y, formulation="omcs", transform="clip", **common)


def test_unknown_formulation_lists_the_spectrum_ones():
    K, y = _formulation_data()
    with pytest.raises(ValueError, match=r"^formulation must be one of \('krein', 'omcs', "):
        tune_variance_constrained(K, y, formulation="nope")


# Contract of ``indefsvm.krein.hypergrad``: input checks, tuner plumbing, in seconds.
#
# Written for the surviving mutants of the mutation run of issue 15 (see
# ``tools/mutation_survivors/mutation_survivors_krein_hypergrad.txt``):
# anchored error messages, the user-supplied
# ``kernel_grad`` path, ``random_state`` given as a Generator, the centring of the inner folds
# (checked against a plain numpy ``H K H`` reference), the finite-difference step of
# ``_kernel_derivative_fd`` and the arguments handed to SciPy's L-BFGS-B.


def _small(seed=0, n=8, m=5):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n))
    return (A + A.T) / 2, rng.normal(size=n), rng.normal(size=(m, n)), rng.normal(size=m)


KREIN = {"lambda_plus": 0.1, "lambda_minus": 0.2, "r": 0.7}


_NEEDS_BOTH = r"^formulation='krein' needs lambda_plus and lambda_minus\.$"


_UNKNOWN = r"^formulation must be 'krein' or 'omcs'; got 'OMCS'\.$"


OMCS = {"formulation": "omcs", "r": 0.7}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lambda_plus": 0.1, "r": 0.7}, _NEEDS_BOTH),
        ({"lambda_minus": 0.1, "r": 0.7}, _NEEDS_BOTH),
        ({**KREIN, "lambda_plus": -1.0}, r"^lambda_plus must be finite and > 0; got -1\.0\.$"),
        ({**KREIN, "lambda_minus": 0.0}, r"^lambda_minus must be finite and > 0; got 0\.0\.$"),
        ({"formulation": "omcs", "r": 0.7}, r"^formulation='omcs' needs lam\.$"),
        ({**OMCS, "lam": -2.0}, r"^lam must be finite and > 0; got -2\.0\.$"),
        ({**KREIN, "formulation": "OMCS"}, _UNKNOWN),
        ({**KREIN, "hard_case": "x"}, r"^hard_case must be 'raise' or 'branch'; got 'x'\.$"),
        (
            {**KREIN, "dK": {"s": np.zeros((8, 8))}},
            r"^dK and dK_val must have the same keys; got \{'s'\} and set\(\)\.$",
        ),
        (
            {**KREIN, "dK_val": {"s": np.zeros((5, 8))}},
            r"^dK and dK_val must have the same keys; got set\(\) and \{'s'\}\.$",
        ),
    ],
)
def test_validation_hypergradient_refuses_bad_hyperparameters(kwargs, message):
    K, y, Kv, yv = _small()
    with pytest.raises(ValueError, match=message):
        validation_hypergradient(K, y, Kv, yv, **kwargs)


@pytest.mark.parametrize("name", ["lambda_plus", "lambda_minus", "lam", "r"])
def test_kernel_parameter_names_must_not_clash(name):
    K, y, Kv, yv = _small()
    with pytest.raises(
        ValueError,
        match=rf"^kernel parameter names \{{'{name}'\}} clash with hyperparameter names\.$",
    ):
        validation_hypergradient(
            K, y, Kv, yv, **KREIN, dK={name: np.zeros((8, 8))}, dK_val={name: np.zeros((5, 8))}
        )


def test_validation_hypergradient_checks_the_validation_data():
    K, y, Kv, yv = _small()
    bad = Kv.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"^K_val contains NaN or inf; expected finite values\.$"):
        validation_hypergradient(K, y, bad, yv, **KREIN)
    with pytest.raises(ValueError, match=r"^y_val contains NaN or inf; expected finite values\.$"):
        validation_hypergradient(K, y, Kv, np.r_[yv[:-1], np.inf], **KREIN)
    with pytest.raises(
        ValueError, match=r"^K_val must have shape \(len\(y_val\), n\) = \(4, 8\); got \(5, 8\)\.$"
    ):
        validation_hypergradient(K, y, Kv, yv[:4], **KREIN)


def test_kernel_parameter_derivatives_are_checked_one_by_one():
    K, y, Kv, yv = _small()
    good, good_v = np.zeros((8, 8)), np.zeros((5, 8))
    nan, nan_v = good.copy(), good_v.copy()
    nan[1, 1] = nan_v[1, 1] = np.nan
    with pytest.raises(ValueError, match=r"^dK\['s'\] contains NaN or inf"):
        validation_hypergradient(K, y, Kv, yv, **KREIN, dK={"s": nan}, dK_val={"s": good_v})
    with pytest.raises(ValueError, match=r"^dK_val\['s'\] contains NaN or inf"):
        validation_hypergradient(K, y, Kv, yv, **KREIN, dK={"s": good}, dK_val={"s": nan_v})
    # Either shape alone being wrong is refused.
    msg = r"^dK\['s'\] must be \(8, 8\) and dK_val\['s'\] \(5, 8\); got \(7, 7\) and \(5, 8\)\.$"
    with pytest.raises(ValueError, match=msg):
        validation_hypergradient(
            K, y, Kv, yv, **KREIN, dK={"s": np.zeros((7, 7))}, dK_val={"s": good_v}
        )
    msg = r"^dK\['s'\] must be \(8, 8\) and dK_val\['s'\] \(5, 8\); got \(8, 8\) and \(5, 7\)\.$"
    with pytest.raises(ValueError, match=msg):
        validation_hypergradient(
            K, y, Kv, yv, **KREIN, dK={"s": good}, dK_val={"s": np.zeros((5, 7))}
        )


def test_default_intercept_is_zero_and_enters_the_loss():
    K, y, Kv, yv = _small(1)
    default = validation_hypergradient(K, y, Kv, yv, **KREIN)
    zero = validation_hypergradient(K, y, Kv, yv, **KREIN, intercept=0.0)
    shifted = validation_hypergradient(K, y, Kv, yv + 0.5, **KREIN, intercept=0.5)
    assert default.loss == zero.loss
    assert shifted.loss == pytest.approx(zero.loss, rel=1e-12)


def test_rcond_is_passed_to_the_eigendecomposition():
    """A large ``rcond`` drops small eigenpairs: the result is that of the truncated kernel."""
    rng = np.random.default_rng(3)
    Q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    d = np.array([3.0, 2.0, 1.5, -1.0, -2.0, 1e-3, -2e-3, 5e-4])
    K = (Q * d) @ Q.T
    K_trunc = (Q[:, :5] * d[:5]) @ Q[:, :5].T
    _, y, Kv, yv = _small(3)
    got = validation_hypergradient(K, y, Kv, yv, **KREIN, rcond=1e-2)
    ref = validation_hypergradient(K_trunc, y, Kv, yv, **KREIN)
    full = validation_hypergradient(K, y, Kv, yv, **KREIN)
    assert got.loss == pytest.approx(ref.loss, rel=1e-9)
    assert abs(full.loss - ref.loss) > 1e-6 * ref.loss


def test_near_hard_case_is_differentiable():
    """``hard_tol=0``: a tiny (not zero) component on the bottom eigenspace is differentiable;
    the solver's default ``hard_tol`` would declare it the hard case and refuse."""
    K = np.diag([2.0, 1.0, -1.0])
    y = np.array([1e-18, 1e-3, 1e-3])  # ||y_0|| / ||y|| = 7e-16 < 1e-14
    hg = validation_hypergradient(
        K, y, np.ones((2, 3)), np.ones(2), lambda_plus=1.0, lambda_minus=1.0, r=1.0
    )
    assert not hg.hard_case


def test_divided_differences_raise_no_floating_point_warning():
    K, y, Kv, yv = _small(2)
    rng = np.random.default_rng(2)
    B = rng.normal(size=(8, 8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validation_hypergradient(
            K, y, Kv, yv, **KREIN, dK={"s": B + B.T}, dK_val={"s": rng.normal(size=(5, 8))}
        )


# --------------------------------------------------------------------------------- the tuner
def _data(seed=0, n=24):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + 2.0 + 0.1 * rng.normal(size=n)


def _rbf(A, B=None, *, gamma):
    B = A if B is None else B
    return np.exp(-gamma * ((A[:, None] - B[None]) ** 2).sum(-1))


def _rbf_grad(A, B, *, gamma):  # no default for B: the tuner must pass it
    B = A if B is None else B
    d2 = ((A[:, None] - B[None]) ** 2).sum(-1)
    return {"gamma": -d2 * np.exp(-gamma * d2)}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"formulation": "x"}, r"^formulation must be one of \('krein', 'omcs', 'clip', "),
        ({"kernel": "rbf"}, r"^kernel must be 'precomputed' or callable; got 'rbf'\.$"),
        ({"tune_kernel_params": ["g"]}, r"^tune_kernel_params needs a callable kernel\.$"),
        ({"n_folds": 1}, r"^n_folds must be an integer >= 2; got 1\.$"),
        ({"n_folds": 2.0}, r"^n_folds must be an integer >= 2; got 2\.0\.$"),
        ({"r": -1.0}, r"^r must be finite and > 0; got -1\.0\.$"),
        ({"lambda_minus": 0.0}, r"^lambda_minus must be finite and > 0; got 0\.0\.$"),
        ({"formulation": "omcs", "lam": -1.0}, r"^lam must be finite and > 0; got -1\.0\.$"),
    ],
)
def test_tuner_refuses_bad_arguments_precomputed(kwargs, message):
    X, y = _data()
    with pytest.raises(ValueError, match=message):
        tune_variance_constrained(_rbf(X, gamma=1.0), y, **kwargs)


def test_tuner_refuses_bad_data():
    X, y = _data()
    K = _rbf(X, gamma=1.0)
    with pytest.raises(
        ValueError,
        match=r"^tune_kernel_params cannot be combined with a spectrum transform\.$",
    ):
        tune_variance_constrained(
            X,
            y,
            kernel=_rbf,
            kernel_params={"gamma": 1.0},
            tune_kernel_params=["gamma"],
            formulation="clip",
        )
    with pytest.raises(ValueError, match=r"^y contains NaN or inf; expected finite values\.$"):
        tune_variance_constrained(K, np.r_[y[:-1], np.nan])
    K_asym = K.copy()
    K_asym[0, 1] += 1.0
    with pytest.raises(ValueError, match=r"^K \(precomputed kernel\) "):
        tune_variance_constrained(K_asym, y)
    with pytest.raises(ValueError, match=r"^X contains NaN or inf; expected finite values\.$"):
        tune_variance_constrained(np.full((24, 2), np.nan), y, kernel=_rbf, kernel_params={})
    with pytest.raises(ValueError, match=r"^X has 24 rows but y has 23 entries\.$"):
        tune_variance_constrained(X, y[:23], kernel=_rbf, kernel_params={"gamma": 1.0})
    with pytest.raises(
        ValueError, match=r"^kernel parameter 'gamma' has no initial value in kernel_params\.$"
    ):
        tune_variance_constrained(X, y, kernel=_rbf, tune_kernel_params=["gamma"])
    with pytest.raises(ValueError, match=r"^kernel_params\['gamma'\] must be finite and > 0"):
        tune_variance_constrained(
            X, y, kernel=_rbf, kernel_params={"gamma": -1.0}, tune_kernel_params=["gamma"]
        )
    with pytest.raises(ValueError, match=r"^y is constant; pass r > 0\.$"):
        tune_variance_constrained(K, np.ones(24))


def test_two_folds_are_accepted():
    X, y = _data()
    res = tune_variance_constrained(_rbf(X, gamma=1.0), y, n_folds=2, max_iter=1, random_state=0)
    assert np.isfinite(res.loss)


class _MinimizeSpy:
    def __init__(self):
        self.calls = []
        self.results = []

    def __call__(self, fun, x0, **kwargs):
        self.calls.append((np.array(x0), kwargs))
        res = scipy.optimize.minimize(fun, x0, **kwargs)
        self.results.append(res)
        return res


def test_tuner_hands_lbfgsb_its_defaults_and_reports_its_result(monkeypatch):
    X, y = _data()
    spy = _MinimizeSpy()
    monkeypatch.setattr(hypergrad, "minimize", spy)
    res = tune_variance_constrained(_rbf(X, gamma=1.0), y, r=0.5, random_state=0)
    ((z0, kwargs),) = spy.calls
    (sres,) = spy.results
    np.testing.assert_allclose(z0, np.log([1e-2, 1e-2, 0.5]), rtol=1e-12)
    assert kwargs["method"] == "L-BFGS-B"
    assert kwargs["jac"] is True
    assert kwargs["bounds"] == [(-12.0, 6.0)] * 3
    assert kwargs["options"] == {"maxiter": 50}
    assert res.n_evaluations == sres.nfev == len(res.history)
    assert res.success is bool(sres.success)
    assert res.message == str(sres.message) and res.message != "None"
    assert res.loss == float(sres.fun)
    names = ["lambda_plus", "lambda_minus", "r"]
    assert res.params == dict(zip(names, np.exp(sres.x), strict=True))
    spy = _MinimizeSpy()
    monkeypatch.setattr(hypergrad, "minimize", spy)
    tune_variance_constrained(_rbf(X, gamma=1.0), y, formulation="omcs", random_state=0, max_iter=2)
    ((z0, kwargs),) = spy.calls
    np.testing.assert_allclose(z0, np.log([1e-2, np.std(y)]), rtol=1e-12)
    assert kwargs["options"] == {"maxiter": 2}


def test_each_fold_is_decomposed_once_without_kernel_parameters(monkeypatch):
    X, y = _data()
    calls = []
    real = hypergrad.kernel_eigen

    def counting(K, **kw):
        calls.append(K.shape)
        return real(K, **kw)

    monkeypatch.setattr(hypergrad, "kernel_eigen", counting)
    res = tune_variance_constrained(_rbf(X, gamma=1.0), y, max_iter=3, random_state=0)
    assert res.n_evaluations > 1 and len(calls) == 3
    calls.clear()
    res = tune_variance_constrained(
        X, y, kernel=_rbf, kernel_params={"gamma": 0.7}, max_iter=3, random_state=0
    )
    assert res.n_evaluations > 1 and len(calls) == 3
    assert res.history[0] == pytest.approx(
        tune_variance_constrained(_rbf(X, gamma=0.7), y, max_iter=1, random_state=0).history[0],
        rel=1e-12,
    )


def test_generator_random_state_draws_the_fold_seed():
    X, y = _data()
    K = _rbf(X, gamma=1.0)
    seed = int(np.random.default_rng(7).integers(2**31 - 1))
    a = tune_variance_constrained(K, y, max_iter=1, random_state=np.random.default_rng(7))
    b = tune_variance_constrained(K, y, max_iter=1, random_state=seed)
    c = tune_variance_constrained(K, y, max_iter=1, random_state=seed + 1)
    assert a.history == b.history
    assert a.history != c.history


def _fold_loss_reference(K, y, theta, seed, center):
    """Inner-CV loss with numpy centring ``H K H`` and ``validation_hypergradient`` per fold."""
    losses = []
    for tr, va in KFold(3, shuffle=True, random_state=seed).split(y):
        Ktr, Kva, ytr = K[np.ix_(tr, tr)], K[np.ix_(va, tr)], y[tr]
        b = 0.0
        if center:
            n = len(tr)
            H = np.eye(n) - np.ones((n, n)) / n
            Kva = (Kva - Ktr.mean(axis=0)[None, :]) @ H
            Ktr = H @ Ktr @ H
            b = ytr.mean()
        hg = validation_hypergradient(Ktr, ytr - b, Kva, y[va], **theta, intercept=b)
        losses.append(hg.loss)
    return float(np.mean(losses))


@pytest.mark.parametrize("center", [True, False])
def test_tuner_objective_with_and_without_centring(center):
    X, y = _data(4)
    K = _rbf(X, gamma=0.5)
    theta = {"lambda_plus": 0.05, "lambda_minus": 0.03, "r": 0.6}
    res = tune_variance_constrained(K, y, **theta, center=center, max_iter=1, random_state=2)
    ref = _fold_loss_reference(K, y, theta, 2, center)
    assert res.history[0] == pytest.approx(ref, rel=1e-9)
    other = _fold_loss_reference(K, y, theta, 2, not center)
    assert abs(other - ref) > 1e-3 * ref


def test_kernel_grad_path_matches_finite_differences():
    """A user-supplied analytic ``kernel_grad`` gives the finite-difference default's gradient."""
    X, y = _data(5)
    spy_fd, spy_an = [], []

    def run(grad, spy):
        def objective_spy(fun, x0, **kwargs):
            spy.append(fun(np.asarray(x0)))
            return scipy.optimize.minimize(fun, x0, **{**kwargs, "options": {"maxiter": 1}})

        import unittest.mock

        with unittest.mock.patch.object(hypergrad, "minimize", objective_spy):
            tune_variance_constrained(
                X,
                y,
                kernel=_rbf,
                kernel_params={"gamma": 0.8},
                tune_kernel_params=["gamma"],
                kernel_grad=grad,
                random_state=1,
            )

    run(None, spy_fd)
    run(_rbf_grad, spy_an)
    (loss_fd, g_fd), (loss_an, g_an) = spy_fd[0], spy_an[0]
    assert loss_an == loss_fd
    np.testing.assert_allclose(g_an, g_fd, rtol=1e-5, atol=1e-9)
    assert abs(g_an[-1]) > 1e-4  # the kernel parameter's gradient is not trivially 0


def test_finite_difference_step_and_parameters():
    """``_kernel_derivative_fd``: central difference with h = 1e-6 max(1, |value|), all other
    parameters kept."""
    seen = []

    def kern(A, B=None, *, p, q):
        seen.append((p, q))
        return np.full((2, 2), p**2 * q)

    X = np.zeros((2, 1))
    for value in (0.5, 1e3):
        seen.clear()
        d = hypergrad._kernel_derivative_fd(kern, X, None, {"p": value, "q": 3.0}, "p")
        h = 1e-6 * max(1.0, value)
        assert seen == [(value + h, 3.0), (value - h, 3.0)]
        np.testing.assert_allclose(d, 6.0 * value, rtol=1e-6)


def test_verbose_logs_one_line_per_evaluation(caplog):
    X, y = _data()
    K = _rbf(X, gamma=1.0)
    with caplog.at_level(logging.INFO, logger="indefsvm.krein.hypergrad"):
        res = tune_variance_constrained(K, y, max_iter=2, random_state=0)
        assert not [r for r in caplog.records if "[tune" in r.getMessage()]
        res = tune_variance_constrained(K, y, max_iter=2, random_state=0, verbose=1)
    lines = [r.getMessage() for r in caplog.records if "[tune" in r.getMessage()]
    assert len(lines) == res.n_evaluations
    assert lines[0].startswith("[tune   1] val MSE ")
    assert "lambda_plus=0.01, lambda_minus=0.01, r=" in lines[0]


def test_hard_case_error_message():
    K = np.diag([2.0, 1.0, -1.0])
    y = np.array([0.0, 1e-3, 1e-3])
    with pytest.raises(
        ValueError,
        match=r"^the solution is in the hard case \(multiplier at its bracket end, y vanishes "
        r"on the eigenspace of min D\); the implicit derivative of the validation loss "
        r"does not exist there\. Pass hard_case='branch' for the derivative of the "
        r"returned branch of minimisers\.$",
    ):
        validation_hypergradient(
            K, y, np.ones((2, 3)), np.ones(2), lambda_plus=1.0, lambda_minus=1.0, r=1.0
        )


def _hard(method, r):
    """Diagonal K: y vanishes exactly on the bottom eigenvector of D (the hard case)."""
    rng = np.random.default_rng(11)
    K = np.diag([3.0, -2.0, 1.0, -0.5, 2.5])
    # KREIN with lambda_+ = lambda_-: D = n lambda/|sigma|, bottom at sigma = 3 (index 0);
    # OMCS: D = n lam/sigma, bottom at sigma = -0.5 (index 3).
    y = rng.normal(size=5) * 1e-2
    y[0 if method == "krein" else 3] = 0.0
    theta = {"r": r}
    theta.update({"lambda_plus": 0.1, "lambda_minus": 0.1} if method == "krein" else {"lam": 0.1})
    return K, y, rng.normal(size=(4, 5)), rng.normal(size=4), theta


@pytest.mark.parametrize("method", ["krein", "omcs"])
def test_hard_case_branch_with_a_short_bottom_component(method):
    """Branch derivative against central differences when the bottom component s < 1, with the
    kernel-parameter entries reported as 0 and every key in ``dmu``."""
    K, y, Kv, yv, theta = _hard(method, r=0.2)  # radius sqrt(5) 0.2 = 0.45: s < 1
    dK = {"s": np.eye(5)}
    dKv = {"s": np.ones((4, 5))}

    def hg_at(th):
        return validation_hypergradient(
            K, y, Kv, yv, formulation=method, intercept=0.1, hard_case="branch", dK=dK, dK_val=dKv,
            **th,
        )  # fmt: skip

    hg = hg_at(theta)
    assert hg.hard_case
    assert set(hg.grad) == set(hg.dmu) == {*theta, "s"}
    assert hg.grad["s"] == 0.0 and hg.dmu["s"] == 0.0
    assert hg.dmu["r"] == 0.0  # mu = min D does not depend on r
    for name in theta:
        h = 1e-6 * theta[name]
        up, down = dict(theta), dict(theta)
        up[name] += h
        down[name] -= h
        fd = (hg_at(up).loss - hg_at(down).loss) / (2 * h)
        assert hg.grad[name] == pytest.approx(fd, rel=1e-5, abs=1e-9), name
        fd_mu = (hg_at(up).mu - hg_at(down).mu) / (2 * h)
        assert hg.dmu[name] == pytest.approx(fd_mu, rel=1e-5, abs=1e-9), name


def test_log_bounds_and_max_iter_are_checked():
    X, y = _data()
    K = _rbf(X, gamma=1.0)
    with pytest.raises(
        ValueError, match=r"^log_bounds must be a pair \(low, high\) of numbers; got \(1\.0,\)\.$"
    ):
        tune_variance_constrained(K, y, log_bounds=(1.0,))
    with pytest.raises(
        ValueError, match=r"^log_bounds must be finite with low < high; got \(1\.0, 1\.0\)\.$"
    ):
        tune_variance_constrained(K, y, log_bounds=(1.0, 1.0))
    for bad in (True, 2.5, 0):
        with pytest.raises(ValueError, match=rf"^max_iter must be an integer >= 1; got {bad!r}\.$"):
            tune_variance_constrained(K, y, max_iter=bad)


def test_initial_values_outside_the_bounds_are_clipped_with_a_warning(monkeypatch, caplog):
    X, y = _data()
    K = _rbf(X, gamma=1.0)
    spy = _MinimizeSpy()
    monkeypatch.setattr(hypergrad, "minimize", spy)
    lo, hi = np.log(0.01), np.log(0.5)  # lambda_minus = 0.01 and r = 0.5 sit exactly on them
    with caplog.at_level(logging.WARNING, logger="indefsvm.krein.hypergrad"):
        tune_variance_constrained(
            K, y, lambda_plus=1.0, lambda_minus=0.01, r=0.5, log_bounds=(lo, hi), max_iter=1,
            random_state=0,
        )  # fmt: skip
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert record.getMessage() == (
        "tune_variance_constrained: initial value(s) of ['lambda_plus'] lie outside "
        "[0.01, 0.5] (exp of log_bounds); starting from the nearest bound."
    )
    np.testing.assert_allclose(spy.calls[0][0], [hi, lo, hi], rtol=1e-15)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="indefsvm.krein.hypergrad"):
        tune_variance_constrained(
            K, y, lambda_plus=0.1, lambda_minus=0.01, r=0.5, log_bounds=(lo, hi), max_iter=1,
            random_state=0,
        )  # fmt: skip
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]


def test_first_hard_case_warns_with_the_exact_message(monkeypatch, caplog):
    """One evaluation with exactly one hard fold: the (first) hard case is a WARNING."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    K = _rbf(X, gamma=0.5)
    train0, _ = next(iter(KFold(2, shuffle=True, random_state=0).split(np.arange(20))))
    y = rng.normal(size=20)
    y[train0] = 1.0  # fold 0 trains on constant targets: zero after centring

    def once(fun, x0, **kwargs):
        fun(np.asarray(x0))
        return scipy.optimize.OptimizeResult(x=np.asarray(x0), fun=0.0, nfev=1, success=True,
                                             message="stub")  # fmt: skip

    monkeypatch.setattr(hypergrad, "minimize", once)
    with caplog.at_level(logging.WARNING, logger="indefsvm.krein.hypergrad"):
        res = tune_variance_constrained(K, y, n_folds=2, r=0.5, random_state=0)
    assert res.n_hard_case == 1
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "tune_variance_constrained: fold 0 at lambda_plus=0.01, lambda_minus=0.01, r=0.5 is in "
        "the hard case of the secular equation (targets vanish on the bottom eigenspace, e.g. "
        "constant targets on the inner training fold); using the loss of the returned minimiser "
        "and the derivative of its branch (count in n_hard_case)."
    )


def test_hard_case_warning_names_the_zeroed_kernel_parameter_gradient(monkeypatch, caplog):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    train0, _ = next(iter(KFold(2, shuffle=True, random_state=0).split(np.arange(20))))
    y = rng.normal(size=20)
    y[train0] = 1.0

    def once(fun, x0, **kwargs):
        fun(np.asarray(x0))
        return scipy.optimize.OptimizeResult(x=np.asarray(x0), fun=0.0, nfev=1, success=True,
                                             message="stub")  # fmt: skip

    monkeypatch.setattr(hypergrad, "minimize", once)
    with caplog.at_level(logging.WARNING, logger="indefsvm.krein.hypergrad"):
        tune_variance_constrained(
            X, y, kernel=_rbf, kernel_params={"gamma": 0.5}, tune_kernel_params=["gamma"],
            n_folds=2, r=0.5, random_state=0,
        )  # fmt: skip
    (record,) = caplog.records
    assert record.getMessage().endswith(
        "and the derivative of its branch (kernel-parameter gradient of this fold set to 0) "
        "(count in n_hard_case)."
    )


def _hard_problem(seed, method):
    """Training targets that vanish exactly on the bottom eigenvector of D.

    A diagonal K (in shuffled order) keeps the eigenvectors exact unit vectors, so the
    component of y on the bottom one is exactly 0 (with a rotated K it would be ~1e-18: the
    near-hard case, which the ordinary formula handles).
    """
    rng = np.random.default_rng(seed)
    n, m = 10, 6
    sigma = np.array([-3.0, -1.5, -0.7, -0.2, 0.3, 0.8, 1.2, 2.0, 4.0, 6.0])
    order = rng.permutation(n)
    K = np.diag(sigma[order])
    # min D: KREIN (lambda_+ = lambda_-, D = n lambda/|sigma|) at sigma = 6.0; OMCS
    # (D = n lam/sigma) at the negative eigenvalue closest to zero, sigma = -0.2.
    y = rng.normal(size=n) * 1e-2
    y[order == (9 if method == "krein" else 3)] = 0.0
    return K, y, rng.normal(size=(m, n)), rng.normal(size=m)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("method", ["krein", "omcs"])
def test_hard_case_branch_gradient_matches_finite_differences(seed, method):
    K, y, Kv, yv = _hard_problem(seed, method)
    theta = {"r": 0.9}
    theta.update(
        {"lambda_plus": 0.05, "lambda_minus": 0.05} if method == "krein" else {"lam": 0.05}
    )

    def solve(th):
        if method == "krein":
            return krein_least_squares(
                K, y, lambda_plus=th["lambda_plus"], lambda_minus=th["lambda_minus"], r=th["r"]
            )
        return omcs_krein_least_squares(K, y, lam=th["lam"], r=th["r"])

    def loss(th):
        sol = solve(th)
        assert sol.hard_case  # the branch persists under the perturbation
        return float(np.mean((Kv @ sol.alpha + 0.2 - yv) ** 2))

    with pytest.raises(ValueError, match="hard case"):
        validation_hypergradient(K, y, Kv, yv, formulation=method, intercept=0.2, **theta)
    hg = validation_hypergradient(
        K, y, Kv, yv, formulation=method, intercept=0.2, hard_case="branch", **theta
    )
    assert hg.hard_case
    assert hg.loss == pytest.approx(loss(theta), rel=1e-12)
    assert hg.mu == pytest.approx(solve(theta).mu, rel=1e-12)
    for name in theta:
        h = 1e-6 * theta[name]
        up, down = dict(theta), dict(theta)
        up[name] += h
        down[name] -= h
        fd = (loss(up) - loss(down)) / (2 * h)
        assert hg.grad[name] == pytest.approx(fd, rel=1e-5, abs=1e-8), name
