"""Thin, vectorised access to LIBSVM (``libsvm-official``) with precomputed kernels.

LIBSVM reads a precomputed kernel row by position (``x[j].value`` is ``K(i, j)``, with node 0
holding the 1-based serial number), so rows must be dense including explicit zeros. Building the
node arrays from a CSR matrix whose pattern is full keeps the conversion vectorised (the list
path of the bindings loops over every entry in Python).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from indefsvm.threads import limit_openmp


@dataclass
class LibsvmFit:
    """Dual solution returned by LIBSVM, mapped back to all n training points.

    Attributes
    ----------
    coef : ndarray of shape (n,)
        LIBSVM's ``sv_coef`` scattered to all points (zero for non-support vectors), with the sign
        convention ``decision(x) = sum_j coef_j K(x_j, x) + intercept``.
    intercept : float
        ``-rho`` of LIBSVM (so the decision value is ``K coef + intercept``).
    labels : list of int
        LIBSVM's label order (the first label is the positive side of ``coef``).
    """

    coef: NDArray[np.float64]
    intercept: float
    labels: list


def _full_pattern_csr(K: NDArray[np.float64]) -> sp.csr_matrix:
    n_rows, n_cols = K.shape
    data = np.empty((n_rows, n_cols + 1))
    data[:, 0] = np.arange(1, n_rows + 1)
    data[:, 1:] = K
    indices = np.tile(np.arange(n_cols + 1, dtype=np.int32), n_rows)
    indptr = np.arange(0, (n_cols + 1) * n_rows + 1, n_cols + 1, dtype=np.int64)
    # Constructed from (data, indices, indptr) the explicit zeros are kept.
    return sp.csr_matrix((data.ravel(), indices, indptr), shape=(n_rows, n_cols + 1))


@contextlib.contextmanager
def _silence_stdout():
    # LIBSVM's C code prints "*" progress to fd 1 even with -q in some builds; keep output clean.
    try:
        fd = os.dup(1)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
    finally:
        os.dup2(fd, 1)
        os.close(fd)


def train_precomputed(
    K: NDArray[np.float64],
    target: NDArray[np.float64],
    *,
    svm_type: int,
    C: float = 1.0,
    class_weights: dict[int, float] | None = None,
    nu: float = 0.5,
    epsilon: float = 0.1,
    tol: float = 1e-3,
    cache_mb: float = 200.0,
    box: NDArray[np.float64] | None = None,
) -> LibsvmFit:
    """Train LIBSVM on a precomputed kernel.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        PSD kernel (LIBSVM assumes it; on an indefinite kernel it returns a stationary point).
    target : ndarray of shape (n,)
        Labels (±1, ``svm_type=0``), regression targets (``svm_type=3``) or ignored (``2``).
    svm_type : int
        LIBSVM ``-s``: 0 C-SVC, 2 one-class, 3 epsilon-SVR.
    C, class_weights, nu, epsilon, tol, cache_mb
        LIBSVM's ``-c``, ``-wi``, ``-n``, ``-p``, ``-e`` and ``-m``.
    box : ndarray of shape (n,), optional
        Per-point bounds: ``C_i = C * box_i`` (instance weights; for one-class, the bounds of
        the alphas that sum to ``nu * sum(box)``). Bounds that are constant per class (or
        constant) go to LIBSVM's own ``-c``/``-wi``; others to scikit-learn's LIBSVM, which
        takes instance weights (the official one does not).
    """
    n = K.shape[0]
    if box is not None:
        box = np.asarray(box, dtype=np.float64)
        if svm_type == 0 and not class_weights:
            pos, neg = box[target > 0], box[target <= 0]
            if np.all(pos == pos[0]) and np.all(neg == neg[0]):
                class_weights = {1: float(pos[0]), -1: float(neg[0])}
                box = None
        elif np.all(box == box[0]):
            C, box = C * float(box[0]), None
            if svm_type == 2:
                C = 1.0  # the one-class problem has no C: a constant weight changes nothing
    if box is not None:
        return _train_weighted(K, target, svm_type, C * box, nu, epsilon, tol, cache_mb)
    options = f"-s {svm_type} -t 4 -c {C:.17g} -e {tol:.17g} -m {cache_mb:g} -h 0 -q"
    if svm_type == 2:
        options += f" -n {nu:.17g}"
    if svm_type == 3:
        options += f" -p {epsilon:.17g}"
    for label, weight in (class_weights or {}).items():
        options += f" -w{int(label)} {weight:.17g}"
    # Imported here: libsvm's module import is slow (it probes optional packages), and most
    # solves never run a LIBSVM check.
    from libsvm import svmutil

    prob = svmutil.svm_problem(
        np.asarray(target, dtype=np.float64), _full_pattern_csr(K), isKernel=True
    )
    param = svmutil.svm_parameter(options)
    # LIBSVM's OpenMP loops only look kernel entries up here: one thread unless asked for more.
    with _silence_stdout(), limit_openmp(n):
        model = svmutil.svm_train(prob, param)
    sv = np.asarray(model.get_sv_indices(), dtype=np.int64) - 1
    sv_coef = np.array([c[0] for c in model.get_sv_coef()], dtype=np.float64)
    coef = np.zeros(n)
    coef[sv] = sv_coef
    labels = list(model.get_labels()) if svm_type == 0 else []
    return LibsvmFit(coef=coef, intercept=-float(model.rho[0]), labels=labels)


def _train_weighted(
    K: NDArray[np.float64],
    target: NDArray[np.float64],
    svm_type: int,
    weights: NDArray[np.float64],
    nu: float,
    epsilon: float,
    tol: float,
    cache_mb: float,
) -> LibsvmFit:
    """:func:`train_precomputed` with instance weights, by scikit-learn's LIBSVM."""
    from sklearn.svm import SVC, SVR, OneClassSVM

    n = K.shape[0]
    common = {"kernel": "precomputed", "tol": tol, "cache_size": cache_mb, "shrinking": False}
    if svm_type == 0:
        model = SVC(C=1.0, **common).fit(K, target, sample_weight=weights)
    elif svm_type == 3:
        model = SVR(C=1.0, epsilon=epsilon, **common).fit(K, target, sample_weight=weights)
    elif svm_type == 2:
        model = OneClassSVM(nu=nu, **common).fit(K, sample_weight=weights)
    else:
        raise ValueError(f"svm_type must be 0, 2 or 3; got {svm_type}.")
    coef = np.zeros(n)
    coef[model.support_] = model.dual_coef_[0]
    # scikit-learn's decision is positive for its second (larger) label, +1 of target in {-1, 1}
    labels = [1, -1] if svm_type == 0 else []
    return LibsvmFit(coef=coef, intercept=float(model.intercept_[0]), labels=labels)
