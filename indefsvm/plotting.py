"""Convergence and timing figures of paper 004 (Fig. 1 and Fig. 2) with plain matplotlib.

* :func:`plot_convergence`: certified gap (and the LIBSVM gap where checks ran) against the
  iteration or the time, on a log scale, for one or several methods; with several runs per method
  the line is the mean and the dashed lines are plus and minus one standard deviation (Fig. 1).
* :func:`plot_timing`: total time and time per iteration against the dimension n for several
  methods, mean and one standard deviation over repetitions (Fig. 2).

The statistics of gaps are taken over ``log10`` of the gap (the figures are on a log scale, and a
linear standard deviation of quantities spanning decades would cross zero); pass
``log_stats=False`` for the linear mean and standard deviation (clipped to the smallest positive
gap for drawing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from indefsvm.proxy.result import SolveResult

AXES = ("iteration", "time")
GAPS = ("gap", "libsvm")


def _pyplot():
    # Imported lazily so importing indefsvm does not load matplotlib; without a display
    # matplotlib falls back to the Agg backend by itself.
    import matplotlib.pyplot as plt

    return plt


def gap_series(
    result: SolveResult, *, kind: str = "gap", relative: bool = True
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Iterations, times and gaps of one run.

    Parameters
    ----------
    result : SolveResult
    kind : {"gap", "libsvm"}
        ``"gap"``: the certified gap (best bounds so far). ``"libsvm"``: LIBSVM bound minus the
        best objective at the iterations where a check ran.
    relative : bool
        Divide by ``max(1, |best objective - f(0)|)`` (the stopping rule's scale).
    """
    if kind not in GAPS:
        raise ValueError(f"kind must be one of {GAPS}; got {kind!r}.")
    h = result.history
    it, t, best = h["iteration"], h["time"], h["best_objective"]
    gap = h["gap"] if kind == "gap" else h["libsvm_upper_bound"] - best
    if relative:
        gap = gap / np.maximum(1.0, np.abs(best - result.baseline_objective))
    keep = np.isfinite(gap)
    return it[keep], t[keep], gap[keep]


def gap_statistics(
    runs: Sequence[SolveResult],
    *,
    x: str = "iteration",
    kind: str = "gap",
    relative: bool = True,
    log_stats: bool = True,
    grid: NDArray[np.float64] | None = None,
    floor: float = 1e-16,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
    """Mean and standard deviation of the gap over several runs on a common grid.

    Each run's gap is a step function of the iteration (or time): its value at a grid point is the
    gap after the last iteration at or before it (gaps are non-increasing). Grid points past the
    end of a run use the run's final gap (the run had stopped with it). Gaps below ``floor``
    (including the zero or slightly negative gaps that rounding gives at convergence) count as
    ``floor``.

    Returns
    -------
    grid, mean, std, count
        ``mean`` and ``std`` of ``log10(gap)`` when ``log_stats`` (so the band is
        ``10**(mean ± std)``), else of the gap; ``count`` is the number of runs that had started
        by each grid point.
    """
    if x not in AXES:
        raise ValueError(f"x must be one of {AXES}; got {x!r}.")
    if len(runs) == 0:
        raise ValueError("need at least one run.")
    series = []
    for res in runs:
        it, t, gap = gap_series(res, kind=kind, relative=relative)
        if gap.size:
            series.append((it if x == "iteration" else t, gap))
    if not series:
        raise ValueError(f"no finite {kind!r} values in the runs (did LIBSVM checks run?).")
    if grid is None:
        end = max(float(s[0][-1]) for s in series)
        start = min(float(s[0][0]) for s in series)
        grid = (
            np.unique(np.round(np.linspace(start, end, 200)))
            if x == "iteration"
            else (np.linspace(start, end, 200))
        )
    grid = np.asarray(grid, dtype=np.float64)
    values = np.full((len(series), grid.size), np.nan)
    for r, (xs, gap) in enumerate(series):
        idx = np.searchsorted(xs, grid, side="right") - 1
        ok = idx >= 0
        v = np.maximum(gap[np.clip(idx, 0, None)], floor)
        if log_stats:
            v = np.log10(v)
        values[r, ok] = v[ok]
    count = np.sum(np.isfinite(values), axis=0)
    cols = [col[np.isfinite(col)] for col in values.T]
    mean = np.array([c.mean() if c.size else np.nan for c in cols])
    std = np.array([c.std() if c.size else np.nan for c in cols])
    return grid, mean, std, count


def plot_convergence(
    runs: Mapping[str, SolveResult | Sequence[SolveResult]],
    *,
    x: str = "iteration",
    gaps: Sequence[str] = ("gap", "libsvm"),
    relative: bool = True,
    log_stats: bool = True,
    ax: Any = None,
    title: str | None = None,
    path: str | Path | None = None,
):
    """Gap against iteration or time on a log scale, one line (mean ± std band) per method.

    Parameters
    ----------
    runs : mapping of label -> SolveResult or list of SolveResult
        One or several runs per method (several runs: mean and ± one standard deviation dashed,
        paper 004 Fig. 1).
    x : {"iteration", "time"}
    gaps : sequence of {"gap", "libsvm"}
        Which gaps to draw; the LIBSVM gap is drawn only where checks ran.
    relative : bool
        Gaps relative to ``max(1, |objective - f(0)|)`` (the stopping rule's scale).
    log_stats : bool
        Statistics of ``log10(gap)`` (see the module docstring).
    ax : matplotlib Axes, optional
        Draw into this axes (default: a new figure).
    title : str, optional
    path : str or Path, optional
        Save the figure there.

    Returns
    -------
    matplotlib.figure.Figure
    """
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 4.2))
    else:
        fig = ax.figure
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for j, (label, group) in enumerate(runs.items()):
        group = [group] if isinstance(group, SolveResult) else list(group)
        color = colors[j % len(colors)]
        for kind in gaps:
            try:
                grid, mean, std, _ = gap_statistics(
                    group, x=x, kind=kind, relative=relative, log_stats=log_stats
                )
            except ValueError:
                continue  # e.g. no LIBSVM checks in these runs
            style = "-" if kind == "gap" else ":"
            name = label if kind == "gap" else f"{label} (LIBSVM)"
            if log_stats:
                center, lo, hi = 10**mean, 10 ** (mean - std), 10 ** (mean + std)
            else:
                floor = np.nanmin(mean[mean > 0]) if np.any(mean > 0) else 1e-16
                center = np.maximum(mean, floor)
                lo, hi = np.maximum(mean - std, floor), np.maximum(mean + std, floor)
            ax.plot(grid, center, style, color=color, label=name)
            if len(group) > 1:
                ax.plot(grid, lo, "--", color=color, linewidth=0.8)
                ax.plot(grid, hi, "--", color=color, linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("iteration" if x == "iteration" else "time (s)")
    ax.set_ylabel("relative duality gap" if relative else "duality gap")
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path)
    return fig


def save_figure(fig: Any, path: str | Path, *, dpi: int = 120) -> None:
    """Save ``fig`` atomically: the image file is complete or untouched (indefsvm.utils.io)."""
    from indefsvm.utils.io import atomic_open

    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, dpi=dpi, format=fmt)


def plot_solve(result: SolveResult, path: str | Path | None = None):
    """Gap against iteration and against time for one run (the CLI's ``--plot``)."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    runs = {result.method: result}
    plot_convergence(runs, x="iteration", ax=axes[0])
    plot_convergence(runs, x="time", ax=axes[1])
    fig.suptitle(f"{result.problem}, {result.method}: {result.status}")
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path)
    return fig


def timing_statistics(
    rows: Sequence[Mapping[str, Any]], *, value: str
) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]]:
    """Per method: sizes, mean and standard deviation of ``value`` over the rows of each size.

    ``rows`` are mappings with keys ``method``, ``n`` and ``value`` (e.g. ``"time"``,
    ``"time_per_iter"``); rows whose value is missing or NaN are ignored.
    """
    out: dict[str, tuple] = {}
    methods = list(dict.fromkeys(str(r["method"]) for r in rows))
    for m in methods:
        sel = [r for r in rows if str(r["method"]) == m and r.get(value) is not None]
        sizes = sorted({int(r["n"]) for r in sel})
        mean, std, ns = [], [], []
        for n in sizes:
            v = np.array([float(r[value]) for r in sel if int(r["n"]) == n])
            v = v[np.isfinite(v)]
            if v.size:
                ns.append(n)
                mean.append(v.mean())
                std.append(v.std())
        out[m] = (np.array(ns, dtype=np.float64), np.array(mean), np.array(std))
    return out


def plot_timing(
    rows: Sequence[Mapping[str, Any]],
    *,
    title: str | None = None,
    path: str | Path | None = None,
    per_iteration_methods: Sequence[str] | None = None,
):
    """Total time and time per iteration against n (paper 004 Fig. 2).

    Parameters
    ----------
    rows : sequence of mappings
        One per run, with ``method``, ``n``, ``time`` (total seconds) and ``time_per_iter``.
    per_iteration_methods : sequence of str, optional
        Methods drawn in the right panel (default: all; the paper omits SIQCLP there).
    """
    plt = _pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0))
    for ax, value, label in (
        (axes[0], "time", "total time (s)"),
        (axes[1], "time_per_iter", "time per iteration (s)"),
    ):
        for method, (ns, mean, std) in timing_statistics(rows, value=value).items():
            if value == "time_per_iter" and per_iteration_methods is not None:
                if method not in per_iteration_methods:
                    continue
            if ns.size == 0:
                continue
            ax.errorbar(ns, mean, yerr=std, marker="o", capsize=3, label=method)
        ax.set_yscale("log")
        ax.set_xlabel("n (training points)")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path)
    return fig


__all__ = [
    "gap_series",
    "gap_statistics",
    "plot_convergence",
    "plot_solve",
    "plot_timing",
    "timing_statistics",
]
