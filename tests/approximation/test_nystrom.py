"""IndefiniteNystroem (paper 003, eq. (3) and Sect. 2.2-2.3) against dense references."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sla
from helpers import three_classes
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

import indefsvm.utils.blocks as blocks_module
from indefsvm.approximation.nystrom import IndefiniteNystroem, select_landmarks
from indefsvm.kernels import difference_of_gaussians_kernel, sigmoid_kernel


def _X(n=80, d=4, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _dense_nystroem(K_XZ, K_ZZ, K_YZ=None, rcond=1e-10):
    """``K_YZ K_ZZ^+ K_ZX`` with the same eigenvalue cut-off, from a dense eigh."""
    d, U = np.linalg.eigh(K_ZZ)
    keep = np.abs(d) > rcond * np.max(np.abs(d))
    pinv = (U[:, keep] / d[keep]) @ U[:, keep].T
    K_YZ = K_XZ if K_YZ is None else K_YZ
    return K_YZ @ pinv @ K_XZ.T


SIG = {"gamma": 0.3, "coef0": -0.4}
DOG = {"gamma1": 1.0, "gamma2": 0.2, "weight": 0.8}


@pytest.mark.parametrize(
    ("kernel", "params", "func"),
    [
        ("sigmoid", SIG, sigmoid_kernel),
        ("difference_of_gaussians", DOG, difference_of_gaussians_kernel),
    ],
)
@pytest.mark.parametrize("factorization", ["one-shot", "plain"])
def test_all_points_as_landmarks_reproduce_K(kernel, params, func, factorization):
    X = _X()
    K = func(X, **params)
    assert np.linalg.eigvalsh(K)[0] < -1e-3  # really indefinite
    ny = IndefiniteNystroem(
        kernel,
        kernel_params=params,
        n_components=len(X),
        landmarks=np.arange(len(X)),
        factorization=factorization,
    )
    Phi = ny.fit_transform(X)
    K_hat = (Phi * ny.signature_) @ Phi.T
    # Eigenvalues below rcond * max|d| are dropped (pseudo-inverse), so agreement is to ~1e-9.
    assert np.linalg.norm(K - K_hat) <= 1e-8 * np.linalg.norm(K)
    # The signature has the inertia of K (on the kept eigenvalues).
    d = np.linalg.eigvalsh(K)
    kept = np.abs(d) > 1e-10 * np.max(np.abs(d))
    assert np.sum(ny.signature_ < 0) == np.sum(d[kept] < 0)


def test_one_shot_matches_dense_eigh_of_nystroem_on_its_range():
    X = _X(120, 3, seed=1)
    m = 25
    ny = IndefiniteNystroem(
        "sigmoid", **SIG, n_components=m, random_state=3, factorization="one-shot"
    ).fit(X)
    Z = X[ny.landmarks_]
    K_XZ = sigmoid_kernel(X, Z, **SIG)
    K_ZZ = sigmoid_kernel(Z, **SIG)
    K_nys = _dense_nystroem(K_XZ, K_ZZ)
    w, V = np.linalg.eigh(K_nys)
    top = np.argsort(-np.abs(w))[: ny.n_components_]
    # Eigenvalues: the r non-zero eigenvalues of K_X|Z, sorted by magnitude.
    np.testing.assert_allclose(ny.eigenvalues_, w[top], rtol=1e-8, atol=1e-9 * np.abs(w).max())
    # Rest of the spectrum of K_X|Z is zero (rank r).
    rest = np.setdiff1d(np.arange(len(w)), top)
    assert np.max(np.abs(w[rest])) < 1e-9 * np.abs(w).max()
    Phi = ny.transform(X)
    U = Phi / np.sqrt(np.abs(ny.eigenvalues_))
    # Orthonormal columns (A P of Sect. 2.2) ...
    np.testing.assert_allclose(U.T @ U, np.eye(ny.n_components_), atol=1e-9)
    # ... spanning the same range as the dense eigenvectors, eigenvector by eigenvector
    # (the spectrum of this kernel is simple, so vectors agree up to sign).
    gaps = np.min(np.abs(np.subtract.outer(w[top], w[top])) + np.eye(len(top)), axis=1)
    assert np.min(gaps) > 1e-6
    for j in range(ny.n_components_):
        assert abs(abs(U[:, j] @ V[:, top[j]]) - 1.0) < 1e-7
    np.testing.assert_allclose(U @ (ny.eigenvalues_[:, None] * U.T), K_nys, atol=1e-9)


def test_out_of_sample_is_eq3_with_new_rows():
    X = _X(100, 3, seed=2)
    Y = _X(30, 3, seed=5)
    ny = IndefiniteNystroem(
        "difference_of_gaussians", kernel_params=DOG, n_components=20, random_state=0
    ).fit(X)
    Z = ny.landmark_points_
    K_ZZ = difference_of_gaussians_kernel(Z, **DOG)
    ref = _dense_nystroem(
        difference_of_gaussians_kernel(X, Z, **DOG),
        K_ZZ,
        difference_of_gaussians_kernel(Y, Z, **DOG),
    )
    np.testing.assert_allclose(ny.approximate_kernel(Y, X), ref, atol=1e-9)


def test_fit_transform_equals_fit_then_transform_and_blocks(monkeypatch):
    X = _X(257, 4, seed=4)
    ny = IndefiniteNystroem(
        "sigmoid", **SIG, n_components=30, random_state=1, factorization="one-shot"
    )
    Phi = ny.fit_transform(X)
    # Tiny blocks: many TSQR steps, including blocks with fewer rows than columns.
    monkeypatch.setattr(blocks_module, "BLOCK_BYTES", 8 * 30 * 7)
    ny2 = clone(ny)
    Phi2 = ny2.fit(X).transform(X)
    np.testing.assert_allclose(np.abs(Phi), np.abs(Phi2), atol=1e-9)
    np.testing.assert_allclose(ny.eigenvalues_, ny2.eigenvalues_, rtol=1e-10)


def test_singular_landmark_block_gives_fewer_columns():
    # A kernel of exact rank 3 (x' S y with S = diag(1, 1, -1)): K_ZZ has rank 3 for m = 10.
    S = np.array([1.0, 1.0, -1.0])

    def krein_linear(A, B):
        return (A * S) @ B.T

    X = _X(60, 3, seed=7)
    ny = IndefiniteNystroem(krein_linear, n_components=10, random_state=0)
    Phi = ny.fit_transform(X)
    assert ny.n_components_ == 3 and Phi.shape == (60, 3)
    assert sorted(ny.signature_) == [-1.0, 1.0, 1.0]
    np.testing.assert_allclose((Phi * ny.signature_) @ Phi.T, krein_linear(X, X), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(15, 60),
    p=st.integers(1, 8),
    n_neg=st.integers(0, 8),
    extra=st.integers(0, 6),
    seed=st.integers(0, 2**31 - 1),
    landmarks=st.sampled_from(["uniform", "kmeans++", "leverage"]),
)
def test_property_exact_on_finite_rank_indefinite_kernels(n, p, n_neg, extra, seed, landmarks):
    """Random kernel ``k(x, y) = f(x)' S f(y)`` of rank p with a random signature: any m >= p
    landmarks in general position reproduce K exactly, with the inertia of K."""
    rng = np.random.default_rng(seed)
    n_neg = min(n_neg, p)
    sig = np.ones(p)
    sig[:n_neg] = -1.0
    A = rng.normal(size=(3, p))
    scale = rng.uniform(0.5, 2.0, size=p)

    def kernel(X, Y):
        FX, FY = np.tanh(X @ A) * scale, np.tanh(Y @ A) * scale
        return (FX * sig) @ FY.T

    X = rng.normal(size=(n, 3))
    m = min(n, p + extra)
    ny = IndefiniteNystroem(kernel, n_components=m, landmarks=landmarks, random_state=seed)
    Phi = ny.fit_transform(X)
    K = kernel(X, X)
    assert np.linalg.norm(K - (Phi * ny.signature_) @ Phi.T) <= 1e-7 * max(1.0, np.linalg.norm(K))
    assert ny.n_components_ <= p
    d = np.linalg.eigvalsh(K)
    big = np.abs(d) > 1e-7 * np.abs(d).max()
    # Every eigen-direction of K that the fit resolves carries its sign.
    if ny.n_components_ == np.sum(big):
        assert np.sum(ny.signature_ < 0) == np.sum(d[big] < 0)
    Y = rng.normal(size=(7, 3))
    np.testing.assert_allclose(
        ny.approximate_kernel(Y, X), kernel(Y, X), atol=1e-7 * max(1.0, np.abs(K).max())
    )


def test_leverage_scores_are_those_of_the_dense_sketch():
    X = _X(150, 3, seed=3)

    def rows(A, B):
        return sigmoid_kernel(A, B, **SIG)

    rng = np.random.default_rng(0)
    # Reproduce the sketch and the scores by hand from a dense eigh of K_X|S: the leverage
    # sketch is a uniform one-shot Nystroem fit drawn from the same generator state.
    sk = IndefiniteNystroem(
        "sigmoid", **SIG, n_components=20, landmarks="uniform",
        random_state=np.random.default_rng(0), factorization="one-shot",
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        sk.fit(X)
    K_nys = _dense_nystroem(
        sigmoid_kernel(X, sk.landmark_points_, **SIG), sigmoid_kernel(sk.landmark_points_, **SIG)
    )
    w, V = np.linalg.eigh(K_nys)
    top = np.argsort(-np.abs(w))[: sk.n_components_]
    lev_dense = np.sum(V[:, top] ** 2, axis=1)
    U = sk.transform(X) / np.sqrt(np.abs(sk.eigenvalues_))
    np.testing.assert_allclose(np.sum(U**2, axis=1), lev_dense, atol=1e-9)
    np.testing.assert_allclose(lev_dense.sum(), sk.n_components_, rtol=1e-9)
    idx, sketch = select_landmarks(X, 30, rows, method="leverage", sketch_size=20, rng=rng)
    np.testing.assert_array_equal(sketch, sk.landmarks_)
    assert len(np.unique(idx)) == 30 and idx.min() >= 0 and idx.max() < len(X)


def test_kmeanspp_seeds_every_well_separated_cluster():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [30.0, 0.0], [0.0, 30.0], [30.0, 30.0]])
    X = np.vstack([c + 0.05 * rng.normal(size=(40, 2)) for c in centres])
    for seed in range(5):
        ny = IndefiniteNystroem(
            "difference_of_gaussians",
            kernel_params={"gamma1": 0.01, "gamma2": 0.001, "weight": 0.5},
            n_components=4,
            landmarks="kmeans++",
            sketch_size=40,
            random_state=seed,
        ).fit(X)
        assert sorted(ny.landmarks_ // 40) == [0, 1, 2, 3]


def test_seeded_and_deterministic():
    X = _X(200, 3)
    for scheme in ["uniform", "kmeans++", "leverage"]:
        a = IndefiniteNystroem("sigmoid", **SIG, n_components=15, landmarks=scheme, random_state=4)
        b = clone(a)
        np.testing.assert_array_equal(a.fit(X).landmarks_, b.fit(X).landmarks_)
        assert len(np.unique(a.landmarks_)) == 15


def test_dtype_float32_and_errors():
    X = _X(50, 3)
    ny = IndefiniteNystroem("sigmoid", **SIG, n_components=10, dtype="float32", random_state=0)
    Phi = ny.fit_transform(X)
    assert Phi.dtype == np.float32 and ny.transform(X).dtype == np.float32
    with pytest.raises(ValueError, match="precomputed"):
        IndefiniteNystroem("precomputed", n_components=10).fit(X)
    with pytest.raises(ValueError, match="unknown kernel"):
        IndefiniteNystroem("nope", n_components=10).fit(X)
    with pytest.raises(ValueError, match="n_components must be a positive integer"):
        IndefiniteNystroem("sigmoid", n_components=0).fit(X)
    with pytest.raises(ValueError, match="landmarks must be one of"):
        IndefiniteNystroem("sigmoid", n_components=10, landmarks="random").fit(X)
    with pytest.raises(ValueError, match="distinct"):
        IndefiniteNystroem("sigmoid", n_components=2, landmarks=[1, 1]).fit(X)
    with pytest.raises(ValueError, match="must lie in"):
        IndefiniteNystroem("sigmoid", landmarks=[0, 50]).fit(X)
    with pytest.raises(ValueError, match="features"):
        ny.transform(X[:, :2])
    with pytest.raises(ValueError, match="dtype"):
        IndefiniteNystroem("sigmoid", n_components=10, dtype="int8").fit(X)
    with pytest.warns(UserWarning, match="using all 50 points"):
        IndefiniteNystroem("sigmoid", **SIG, n_components=80).fit(X)
    with pytest.raises(TypeError, match="failed"):
        IndefiniteNystroem("sigmoid", n_components=10, kernel_params={"sigma": 1.0}).fit(X)


def test_thin_svd_of_L_agrees_with_tsqr_factor():
    """``singular_values_`` are those of ``L = K_XZ U |D|^{-1/2}`` (thin SVD of Sect. 2.2)."""
    X = _X(90, 3, seed=8)
    ny = IndefiniteNystroem(
        "sigmoid", **SIG, n_components=12, random_state=2, factorization="one-shot"
    ).fit(X)
    K_ZZ = sigmoid_kernel(ny.landmark_points_, **SIG)
    d, U = np.linalg.eigh(K_ZZ)
    L = sigmoid_kernel(X, ny.landmark_points_, **SIG) @ (U / np.sqrt(np.abs(d)))
    np.testing.assert_allclose(ny.singular_values_, sla.svdvals(L), rtol=1e-9)


def test_nystroem_sketch_size_and_landmark_count():
    X, _, _ = three_classes()
    with pytest.raises(ValueError, match="sketch_size must be a positive integer"):
        IndefiniteNystroem("sigmoid", **SIG, n_components=10, sketch_size=-3).fit(X)
    with pytest.warns(UserWarning, match="sketch_size = 20 is ignored"):
        IndefiniteNystroem(
            "sigmoid", **SIG, landmarks=np.arange(10), sketch_size=20, random_state=0
        ).fit(X)
    with pytest.raises(ValueError, match="n_components = 7 but 5 landmark indices"):
        IndefiniteNystroem("sigmoid", **SIG, n_components=7, landmarks=np.arange(5)).fit(X)
    # n_components defaults to the number of explicit indices.
    ny = IndefiniteNystroem("sigmoid", **SIG, landmarks=np.arange(5)).fit(X)
    assert np.array_equal(ny.landmarks_, np.arange(5))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"dtype": "bogus"}, r"dtype must be 'float64' or 'float32'; got 'bogus'"),
        ({"dtype": None}, r"dtype must be 'float64' or 'float32'; got None"),
        ({"rcond": "x"}, r"rcond must be a real number in \[0, 1\) or None; got 'x'"),
        ({"rcond": 2.0}, r"rcond must be in \[0, 1\)"),
        ({"factorization": ["plain"]}, "factorization must be one of"),
        ({"n_components": "5"}, "n_components must be a positive integer"),
        ({"landmarks": 3.5}, "landmarks must be one of"),
    ],
)
def test_nystroem_parameters_validated_when_fit_starts(params, match):
    """Item 16: bad parameters get a message naming the parameter and the allowed values,
    before any data is read (X here is not even valid)."""
    with pytest.raises(ValueError, match=match):
        IndefiniteNystroem("sigmoid", **{"n_components": 5, **params}).fit("not data")


def test_near_singular_landmark_block_is_not_amplified():
    """A saturated sigmoid of integer features has a +-1 landmark block that is singular up to
    1e-9: the pseudo-inverse kept that direction and the map had an eigenvalue of 6e13 against
    n max|k| = 1e5 (the solvers then stalled at the precision limit for minutes). The map now
    drops such directions, with a warning: its eigenvalues stay within the Gershgorin bound and
    its error is on the kernel's scale (dense reference: K itself)."""
    import warnings

    from sklearn.datasets import make_classification

    from indefsvm.kernels import sigmoid_kernel

    X, _ = make_classification(n_samples=3000, n_features=20, random_state=0)
    X = (X * 10).astype(int)
    with pytest.warns(UserWarning, match="nearly singular"):
        nys = IndefiniteNystroem(
            "sigmoid", n_components=10, random_state=18, factorization="one-shot"
        ).fit(X)
    K = sigmoid_kernel(X.astype(float))
    n = X.shape[0]
    bound = n * np.max(np.abs(K))
    assert np.max(np.abs(nys.eigenvalues_)) <= bound
    Phi = nys.transform(X)
    approx = (Phi * nys.signature_) @ Phi.T
    # the plain pseudo-inverse (cut-off 1e-10, the map's rcond) blows up on these landmarks
    Z = nys.landmarks_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pinv = np.linalg.pinv(K[np.ix_(Z, Z)], rcond=1e-10, hermitian=True)
    plain = K[:, Z] @ pinv @ K[Z]
    # its spectral radius: the nonzero eigenvalues of A P A' are those of P A'A (m x m)
    radius = np.max(np.abs(np.linalg.eigvals(pinv @ (K[:, Z].T @ K[:, Z]))))
    assert radius > 100 * bound
    # (ten landmarks approximate a +-1 kernel only roughly, but on the kernel's own scale)
    assert np.linalg.norm(K - approx) < 1e-3 * np.linalg.norm(K - plain)
    assert np.linalg.norm(K - approx) < 3 * np.linalg.norm(K)


def test_plain_fit_transform_refits_one_shot_beyond_the_bound():
    """The default plain map checks its features against the one-shot map's bound: on the
    saturated kernel above its approximation has an eigenvalue far beyond ``n max|k|``
    (dense reference: the eigenvalues of the pseudo-inverse Nystroem matrix), so
    ``fit_transform`` refits one-shot, with the warning, and the map stays within the bound;
    on a benign kernel the plain features are kept and reproduce the one-shot ``K_X|Z``."""
    from sklearn.datasets import make_classification

    from indefsvm.kernels import sigmoid_kernel

    X, _ = make_classification(n_samples=3000, n_features=20, random_state=0)
    X = (X * 10).astype(int)
    K = sigmoid_kernel(X.astype(float))
    n = X.shape[0]
    bound = n * np.max(np.abs(K))
    nys = IndefiniteNystroem("sigmoid", n_components=10, random_state=18)
    with pytest.warns(UserWarning, match="nearly singular"):
        Phi = nys.fit_transform(X)
    assert nys.factorization == "plain" and nys.factorization_ == "one-shot"
    approx = (Phi * nys.signature_) @ Phi.T
    assert np.max(np.abs(np.linalg.eigvalsh(approx))) <= 10 * bound
    # the plain map of the same landmarks (fit alone cannot check) is far beyond it
    plain = IndefiniteNystroem("sigmoid", n_components=10, random_state=18).fit(X)
    assert plain.factorization_ == "plain"
    P = plain.transform(X)
    assert np.max(np.abs(np.linalg.eigvalsh((P * plain.signature_) @ P.T))) > 100 * bound

    Xb = _X(300, 3, seed=6)
    ny = IndefiniteNystroem("sigmoid", **SIG, n_components=25, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        Phi = ny.fit_transform(Xb)
    assert ny.factorization_ == "plain"
    one = IndefiniteNystroem(
        "sigmoid", **SIG, n_components=25, random_state=0, factorization="one-shot"
    )
    Phi1 = one.fit_transform(Xb)
    np.testing.assert_array_equal(ny.landmarks_, one.landmarks_)
    np.testing.assert_allclose(
        (Phi * ny.signature_) @ Phi.T, (Phi1 * one.signature_) @ Phi1.T, atol=1e-9
    )
    # the eigenvalue helper against a dense eigendecomposition of Phi S Phi'
    from indefsvm.approximation.nystrom import factor_eigenvalues

    dense = np.linalg.eigvalsh((Phi * ny.signature_) @ Phi.T)
    lam = factor_eigenvalues(Phi, ny.signature_)
    largest = np.sort(dense[np.argsort(np.abs(dense))[-len(lam) :]])
    np.testing.assert_allclose(np.sort(lam), largest, atol=1e-9)


def test_check_columns_is_the_fit_transform_check_for_shared_maps():
    """One-vs-one models fit the map once (``fit``: landmarks only) and share its columns:
    ``check_columns`` refits one-shot from them on the saturated kernel, as ``fit_transform``
    does (the same map), and keeps a benign plain map as it is."""
    from sklearn.datasets import make_classification

    X, _ = make_classification(n_samples=3000, n_features=20, random_state=0)
    X = (X * 10).astype(int)
    ref = IndefiniteNystroem("sigmoid", n_components=10, random_state=18)
    with pytest.warns(UserWarning, match="nearly singular"):
        P_ref = ref.fit_transform(X)
    nys = IndefiniteNystroem("sigmoid", n_components=10, random_state=18).fit(X)
    assert nys.factorization_ == "plain"
    with pytest.warns(UserWarning, match="nearly singular"):
        P = nys.check_columns(nys.landmark_columns(X))
    assert nys.factorization_ == "one-shot"
    # the features it returns are those of the refitted map (the same kernel as fit_transform)
    K_ref = (P_ref * ref.signature_) @ P_ref.T
    K_got = (P * nys.signature_) @ P.T
    assert np.max(np.abs(K_got - K_ref)) <= 1e-8 * np.max(np.abs(K_ref))
    np.testing.assert_allclose(nys.eigenvalues_, ref.eigenvalues_, rtol=1e-9)
    np.testing.assert_allclose(np.abs(nys.components_), np.abs(ref.components_), rtol=1e-7)

    Xb = _X(200, 3, seed=2)
    ok = IndefiniteNystroem("sigmoid", **SIG, n_components=20, random_state=0).fit(Xb)
    before = ok.components_.copy()
    P = ok.check_columns(ok.landmark_columns(Xb))
    assert ok.factorization_ == "plain"
    np.testing.assert_allclose(P, ok.transform(Xb), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(ok.components_, before)
