"""Convergence and timing figures: statistics against direct numpy, files written, bad input."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from helpers import sigmoid_problem  # noqa: E402

import indefsvm  # noqa: E402
from indefsvm.plotting import (  # noqa: E402
    gap_statistics,
    plot_convergence,
    plot_solve,
    plot_timing,
    timing_statistics,
)
from indefsvm.proxy.result import HISTORY_KEYS, SolveResult  # noqa: E402


def fake_result(gaps, objective=10.0, libsvm=None, dt=0.5):
    k = len(gaps)
    hist = {key: np.zeros(k) for key in HISTORY_KEYS}
    hist["iteration"] = np.arange(1, k + 1, dtype=float)
    hist["time"] = dt * hist["iteration"]
    hist["best_objective"] = np.full(k, objective)
    hist["gap"] = np.asarray(gaps, dtype=float)
    hist["upper_bound"] = objective + hist["gap"]
    hist["libsvm_upper_bound"] = np.full(k, np.nan) if libsvm is None else np.asarray(libsvm)
    return SolveResult(
        alpha=np.zeros(2),
        objective=objective,
        upper_bound=objective + gaps[-1],
        gap=gaps[-1],
        relative_gap=gaps[-1] / objective,
        kernel=None,
        intercept=0.0,
        n_iter=k,
        status="converged",
        message="",
        method="pg",
        problem="svc",
        history=hist,
    )


def test_gap_statistics_are_log_mean_and_std_of_step_functions():
    a = fake_result([1.0, 0.1, 0.01, 0.001])
    b = fake_result([10.0, 1.0, 0.1])  # stopped earlier: keeps its final gap
    grid, mean, std, count = gap_statistics([a, b], grid=np.array([1.0, 2.0, 3.0, 4.0]))
    rel_a = np.log10(np.array([1.0, 0.1, 0.01, 0.001]) / 10.0)
    rel_b = np.log10(np.array([10.0, 1.0, 0.1, 0.1]) / 10.0)
    both = np.vstack([rel_a, rel_b])
    assert np.allclose(mean, both.mean(0)) and np.allclose(std, both.std(0))
    assert list(count) == [2, 2, 2, 2]
    _, mean_lin, std_lin, _ = gap_statistics(
        [a, b], grid=np.array([2.5]), relative=False, log_stats=False
    )
    assert mean_lin[0] == pytest.approx(np.mean([0.1, 1.0]))
    assert std_lin[0] == pytest.approx(np.std([0.1, 1.0]))
    # against time: run a has dt = 0.5, so t = 1.2 is after its 2nd iteration
    _, mean_t, _, _ = gap_statistics([a], x="time", grid=np.array([1.2]), relative=False)
    assert mean_t[0] == pytest.approx(np.log10(0.1))


def test_libsvm_gap_uses_only_checked_iterations():
    r = fake_result([1.0, 0.5, 0.2], libsvm=[np.nan, 10.3, np.nan])
    grid, mean, _, count = gap_statistics(
        [r], kind="libsvm", relative=False, grid=np.array([1.0, 2.0, 3.0])
    )
    assert count[0] == 0 and np.isnan(mean[0])
    assert mean[1] == pytest.approx(np.log10(0.3)) and mean[2] == pytest.approx(np.log10(0.3))
    with pytest.raises(ValueError, match="no finite 'libsvm'"):
        gap_statistics([fake_result([1.0])], kind="libsvm")


def test_plot_convergence_draws_mean_and_band(tmp_path):
    runs = {
        "accpm": [fake_result([1, 0.1, 0.01]), fake_result([2, 0.3, 0.02])],
        "pg": fake_result([1, 0.5, 0.4], libsvm=[np.nan, 10.45, np.nan]),
    }
    path = tmp_path / "gap.png"
    fig = plot_convergence(runs, x="time", path=path)
    assert path.exists() and path.stat().st_size > 1000
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    labels = [line.get_label() for line in ax.get_lines()]
    assert "accpm" in labels and "pg" in labels and "pg (LIBSVM)" in labels
    assert sum(line.get_linestyle() == "--" for line in ax.get_lines()) == 2  # accpm ± std
    plt.close(fig)


def test_timing_statistics_and_figure(tmp_path):
    rows = [
        {"method": "pg", "n": 50, "time": 1.0, "time_per_iter": 0.1},
        {"method": "pg", "n": 50, "time": 3.0, "time_per_iter": 0.3},
        {"method": "pg", "n": 100, "time": 5.0, "time_per_iter": 0.5},
        {"method": "siqclp", "n": 50, "time": 9.0, "time_per_iter": float("nan")},
    ]
    stats = timing_statistics(rows, value="time")
    ns, mean, std = stats["pg"]
    assert list(ns) == [50, 100] and np.allclose(mean, [2.0, 5.0]) and np.allclose(std, [1, 0])
    assert timing_statistics(rows, value="time_per_iter")["siqclp"][0].size == 0
    fig = plot_timing(rows, path=tmp_path / "t.png", per_iteration_methods=["pg"])
    assert (tmp_path / "t.png").exists() and len(fig.axes) == 2
    plt.close(fig)


def test_plot_solve_on_a_real_run(tmp_path):
    K0, y = sigmoid_problem(20, 1)
    res = indefsvm.solve(K0, y, options={"libsvm_every": 5})
    fig = plot_solve(res, tmp_path / "solve.png")
    assert (tmp_path / "solve.png").exists() and len(fig.axes) == 2
    plt.close(fig)


def test_bad_arguments():
    r = fake_result([1.0, 0.1])
    with pytest.raises(ValueError, match="x must be one of"):
        gap_statistics([r], x="epoch")
    with pytest.raises(ValueError, match="kind must be one of"):
        gap_statistics([r], kind="primal")
    with pytest.raises(ValueError, match="at least one run"):
        gap_statistics([])


def test_cli_solve_plot_and_compare(tmp_path, capsys, kernel_files):
    from indefsvm.cli import main

    K, labels = kernel_files.kernel, kernel_files.labels_txt
    png = tmp_path / "gap.png"
    code = main(
        [
            "solve",
            K,
            labels,
            "--method",
            "accpm",
            "--plot",
            str(png),
            "--quiet",
        ]
    )
    assert code == 0 and png.exists()
    png2 = tmp_path / "cmp.png"
    code = main(
        [
            "compare",
            K,
            labels,
            "--methods",
            "pg",
            "accpm",
            "--plot",
            str(png2),
            "--tol",
            "1e-6",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and png2.exists()
    lines = [ln.split() for ln in out.splitlines() if ln.strip().startswith(("pg", "accpm"))]
    objectives = {ln[0]: float(ln[2]) for ln in lines}
    assert set(objectives) == {"pg", "accpm"}
    assert abs(objectives["pg"] - objectives["accpm"]) <= 1e-5 * abs(objectives["pg"])
    code = main(["solve", K, labels, "--method", "accpm", "--step", "paper"])
    assert code == 2 and "--method pg only" in capsys.readouterr().err
