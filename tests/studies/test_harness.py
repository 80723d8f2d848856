"""Tests of indefsvm.studies.harness: the kernel cache and the scoring of one fit."""

from __future__ import annotations

import math

import numpy as np
from helpers import SMALL_STUDY, write_small_study_data, write_study_spec

from indefsvm.studies import run_study
from indefsvm.studies.data import StudyData, load_dataset
from indefsvm.studies.harness import Task, kernel_blocks, outer_splits, run_task
from indefsvm.studies.spec import DatasetSpec, KernelSpec, MethodSpec, Study


def test_kernel_cache_distinguishes_folds_seeds_and_standardize(tmp_path):
    from indefsvm.kernels import sigmoid_kernel

    write_small_study_data(tmp_path)
    data = load_dataset(DatasetSpec(name="m", features=str(tmp_path / "X.npy"),
                                    labels=str(tmp_path / "y.txt")))  # fmt: skip
    kernel = KernelSpec(name="sigmoid", label="sigmoid", params={"coef0": -0.5})
    params = {"gamma": 0.7}

    def reference(fit, ev, standardize):
        Xf, Xe = data.X[fit], data.X[ev]
        if standardize:
            mu, sd = Xf.mean(axis=0), Xf.std(axis=0)
            Xf, Xe = (Xf - mu) / sd, (Xe - mu) / sd
        return sigmoid_kernel(Xf, None, gamma=0.7, coef0=-0.5), sigmoid_kernel(
            Xe, Xf, gamma=0.7, coef0=-0.5
        )

    # Two studies with different seeds: same fold tag ("outer", 0), different fold layouts.
    for seed in (0, 1):
        study = Study(name="s", seed=seed, outer_folds=2, inner_folds=2, scoring="accuracy",
                      metrics=(), task="classification", search="grid", n_iter=None,
                      significance="welch", alpha=0.05, datasets=(), kernels=(kernel,),
                      methods=())  # fmt: skip
        fit, ev = outer_splits(data.y, study)[0]
        for standardize in (True, False):
            data.standardize = standardize
            Kf, Ke = kernel_blocks(data, kernel, params, fit, ev, ("outer", 0))
            Rf, Re = reference(fit, ev, standardize)
            np.testing.assert_allclose(Kf, Rf, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(Ke, Re, rtol=1e-12, atol=1e-12)


def test_second_study_in_one_process_does_not_reuse_the_first_ones_kernels(tmp_path):
    from indefsvm.studies import harness

    write_small_study_data(tmp_path, n=40)
    first = write_study_spec(tmp_path, SMALL_STUDY, "a.toml")
    second = write_study_spec(tmp_path, SMALL_STUDY.replace("seed = 0", "seed = 5"), "b.toml")
    run_study(first, tmp_path / "a", report=False, progress=False)
    run_study(second, tmp_path / "b", report=False, progress=False)
    harness._BLOCK_CACHE.clear()
    run_study(second, tmp_path / "fresh", report=False, progress=False)
    assert (tmp_path / "b" / "results.csv").read_bytes() == (
        tmp_path / "fresh" / "results.csv"
    ).read_bytes()


def test_a_failing_measure_keeps_the_others():
    from sklearn.metrics import accuracy_score

    from indefsvm import SpectrumSVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(45, 2))
    y = np.digitize(X[:, 0], [-0.4, 0.4])  # three classes: the binary f1 fails
    K = X @ X.T + 1.0
    data = StudyData(name="d", y=y, X=None, K=K, standardize=False, key="d", description="")
    kernel = KernelSpec(name="precomputed", label="precomputed")
    method = MethodSpec("SpectrumSVC", "s", params={"spectrum": "clip"})
    study = Study(name="s", seed=0, outer_folds=3, inner_folds=2, scoring="accuracy",
                  metrics=("f1",), task="classification", search="grid", n_iter=None,
                  significance="welch", alpha=0.05, datasets=(), kernels=(kernel,),
                  methods=(method,))  # fmt: skip
    task = Task("outer", "d", "precomputed", "s", 0)
    r = run_task(task, data, study)
    fit, ev = outer_splits(y, study)[0]
    pred = SpectrumSVC(kernel="precomputed", spectrum="clip").fit(K[np.ix_(fit, fit)], y[fit])
    assert r["score"] == accuracy_score(y[ev], pred.predict(K[np.ix_(ev, fit)]))
    assert math.isnan(r["metrics"]["f1"]) and "measure f1 failed" in r["status"]
