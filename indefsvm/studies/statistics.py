"""Statistics of a study's report: paired tests, ranks and the critical difference.

* :func:`corrected_resampled_t` -- the corrected resampled t-test of Nadeau & Bengio (2003):
  two methods scored on the same ``J`` train/test splits; the variance of the mean difference is
  inflated by ``n_test / n_train`` because the training parts overlap (the plain paired t-test
  is too liberal on cross-validation folds).
* :func:`wilcoxon_over_datasets` -- two methods across data sets: wins, ties, losses and the
  Wilcoxon signed-rank test of Demšar (2006), Sect. 3.1.3.
* :func:`average_ranks`, :func:`nemenyi_q`, :func:`critical_difference` and
  :func:`cd_groups` -- average ranks over data sets and Nemenyi's critical difference
  ``CD = q_alpha sqrt(k (k + 1) / (6 N))`` (Demšar 2006, Sect. 3.2.2), drawn by
  :func:`draw_cd_diagram`.

References
----------
C. Nadeau and Y. Bengio. Inference for the generalization error. Machine Learning 52 (2003).
J. Demšar. Statistical comparisons of classifiers over multiple data sets. JMLR 7 (2006).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "average_ranks",
    "cd_groups",
    "corrected_resampled_t",
    "critical_difference",
    "draw_cd_diagram",
    "nemenyi_q",
    "wilcoxon_over_datasets",
]


def corrected_resampled_t(
    a: ArrayLike, b: ArrayLike, test_train_ratio: float
) -> tuple[float, float]:
    """Corrected resampled t-test of Nadeau & Bengio (2003) for scores on shared splits.

    With ``d_j = a_j - b_j`` over the ``J`` splits, mean ``m`` and sample variance ``s^2``
    (``ddof=1``), the statistic is ``t = m / sqrt((1 / J + n_test / n_train) s^2)`` with
    ``J - 1`` degrees of freedom (Nadeau & Bengio 2003, Sect. 5; Bouckaert & Frank 2004 for
    k-fold cross-validation, where ``n_test / n_train = 1 / (k - 1)``).

    Parameters
    ----------
    a, b : array-like of shape (J,)
        Scores of two methods on the same splits (finite).
    test_train_ratio : float
        ``n_test / n_train`` of the splits (> 0; the mean over the splits if they differ).

    Returns
    -------
    t : float
    p : float
        Two-sided p-value. Zero variance of the differences: ``p = 1`` if they are all zero,
        else 0 (a constant non-zero difference).

    Raises
    ------
    ValueError
        Different lengths, fewer than two splits, non-finite scores or a ratio that is not a
        positive number.
    """
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be 1-d of equal length; got shapes {a.shape}, {b.shape}.")
    if len(a) < 2:
        raise ValueError(f"the corrected resampled t-test needs >= 2 splits; got {len(a)}.")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a and b must be finite (drop the splits where a fit failed).")
    ratio = float(test_train_ratio)
    if not (math.isfinite(ratio) and ratio > 0):
        raise ValueError(f"test_train_ratio must be a positive number; got {test_train_ratio!r}.")
    d = a - b
    J = len(d)
    mean, var = float(d.mean()), float(d.var(ddof=1))
    if var == 0.0:
        return (0.0, 1.0) if mean == 0.0 else (math.copysign(math.inf, mean), 0.0)
    t = mean / math.sqrt((1.0 / J + ratio) * var)
    return t, float(2.0 * stats.t.sf(abs(t), J - 1))


def wilcoxon_over_datasets(a: ArrayLike, b: ArrayLike, greater: bool = True) -> dict[str, Any]:
    """Two methods compared across data sets: wins, ties, losses and Wilcoxon's test.

    Parameters
    ----------
    a, b : array-like of shape (N,)
        One score per data set (the mean over its folds), NaN where a method has none; only
        the data sets where both have a score count.
    greater : bool
        Greater scores are better (a "win" of ``a``).

    Returns
    -------
    dict
        ``n`` (data sets compared), ``wins``, ``ties``, ``losses`` (of ``a``) and ``p``, the
        two-sided p-value of the Wilcoxon signed-rank test (scipy's, zero differences dropped;
        1.0 when fewer than two differences are non-zero: no evidence).
    """
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be 1-d of equal length; got shapes {a.shape}, {b.shape}.")
    ok = np.isfinite(a) & np.isfinite(b)
    d = a[ok] - b[ok]
    if not greater:
        d = -d
    wins, ties, losses = int(np.sum(d > 0)), int(np.sum(d == 0)), int(np.sum(d < 0))
    p = 1.0
    if wins + losses >= 2:
        p = float(stats.wilcoxon(d, zero_method="wilcox").pvalue)
    return {"n": int(ok.sum()), "wins": wins, "ties": ties, "losses": losses, "p": p}


def average_ranks(scores: ArrayLike, greater: bool = True) -> NDArray[np.float64]:
    """Average rank of each method over the data sets (1 = best, ties share their mean rank).

    Parameters
    ----------
    scores : array-like of shape (N, k)
        Score of method ``j`` on data set ``i`` (finite).
    greater : bool
        Greater scores are better.

    Returns
    -------
    ndarray of shape (k,)
    """
    from scipy.stats import rankdata

    s = np.asarray(scores, dtype=float)
    if s.ndim != 2 or s.shape[0] < 1 or s.shape[1] < 2:
        raise ValueError(f"scores must be (N data sets, k >= 2 methods); got shape {s.shape}.")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite: keep the data sets where every method has one.")
    return rankdata(-s if greater else s, axis=1, method="average").mean(axis=0)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Critical value ``q_alpha`` of the Nemenyi test for ``k`` methods.

    The studentized range statistic for ``k`` means and infinite degrees of freedom divided by
    ``sqrt(2)`` (Demšar 2006, Sect. 3.2.2; his Table 5(a) lists it for ``k <= 10``:
    1.960, 2.343, 2.569, ... at ``alpha = 0.05``).
    """
    from scipy.stats import studentized_range

    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an integer >= 2 (methods compared); got {k!r}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}.")
    return float(studentized_range.ppf(1.0 - alpha, int(k), np.inf) / math.sqrt(2.0))


def critical_difference(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks: ``q_alpha sqrt(k (k + 1) / (6 n))``.

    Two of ``k`` methods compared on ``n`` data sets differ significantly when their average
    ranks differ by at least this much (Demšar 2006, eq. for CD in Sect. 3.2.2).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1 (data sets); got {n!r}.")
    return nemenyi_q(k, alpha) * math.sqrt(k * (k + 1) / (6.0 * n))


def cd_groups(ranks: ArrayLike, cd: float) -> list[tuple[int, ...]]:
    """Maximal groups of methods whose average ranks lie within ``cd`` of each other.

    Returns the groups (indices into ``ranks``, in increasing rank) of two or more methods
    that no larger group contains: the bars of a critical-difference diagram.
    """
    r = np.asarray(ranks, dtype=float)
    order = np.argsort(r, kind="stable")
    groups: list[tuple[int, ...]] = []
    for i in range(len(order)):
        j = i
        while j + 1 < len(order) and r[order[j + 1]] - r[order[i]] < cd:
            j += 1
        if j > i:
            group = tuple(int(x) for x in order[i : j + 1])
            if not any(set(group) <= set(g) for g in groups):
                groups.append(group)
    return groups


def draw_cd_diagram(
    names: list[str],
    ranks: ArrayLike,
    cd: float,
    path: str | Path | None = None,
    *,
    title: str | None = None,
) -> Any:
    """Critical-difference diagram (Demšar 2006, Fig. 1): average ranks on an axis from 1 to
    ``k`` (best on the left), the CD as a bar above it, and a thick line under every group of
    methods that do not differ significantly (:func:`cd_groups`).

    Parameters
    ----------
    names : list of str
    ranks : array-like of shape (k,)
        Average ranks.
    cd : float
        Critical difference.
    path : path, optional
        Write the figure (PNG) here and close it; else return it open.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    r = np.asarray(ranks, dtype=float)
    k = len(names)
    if r.shape != (k,) or k < 2:
        raise ValueError(f"need k >= 2 names and one rank each; got {k} names, {r.shape} ranks.")
    order = np.argsort(r, kind="stable")
    left, right = list(order[: (k + 1) // 2]), list(order[(k + 1) // 2 :])
    groups = cd_groups(r, cd)
    n_side = max(len(left), len(right))
    height = 1.2 + 0.28 * n_side + 0.12 * len(groups)
    fig, ax = plt.subplots(figsize=(7.0, height), layout="constrained")
    lo, hi = 1.0, float(max(k, 2))
    ax.set_xlim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    ax.set_ylim(-0.9 - 0.3 * len(groups) - 0.6 * n_side, 2.2)
    ax.axis("off")
    # axis with integer ticks, best (rank 1) on the left
    ax.plot([lo, hi], [0, 0], color="black", lw=1)
    for t in range(1, k + 1):
        ax.plot([t, t], [0, 0.15], color="black", lw=1)
        ax.text(t, 0.3, str(t), ha="center", va="bottom", fontsize=9)
    # the critical difference as a bar above the axis
    ax.plot([lo, lo + cd], [1.5, 1.5], color="black", lw=1.5)
    for x in (lo, lo + cd):
        ax.plot([x, x], [1.4, 1.6], color="black", lw=1.5)
    ax.text(lo + cd / 2, 1.65, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    # groups of methods not significantly different: thick bars just under the axis
    for g, members in enumerate(groups):
        y = -0.35 - 0.3 * g
        ax.plot([r[members[0]] - 0.03, r[members[-1]] + 0.03], [y, y], color="black", lw=3,
                solid_capstyle="butt")  # fmt: skip
    # methods: elbow lines from their rank to a label at the side
    base = -0.5 - 0.3 * len(groups)
    for i, j in enumerate(left):
        y = base - 0.6 * i
        ax.plot([r[j], r[j], lo - 0.02 * (hi - lo)], [0, y, y], color="0.3", lw=0.8)
        ax.text(lo - 0.04 * (hi - lo), y, f"{names[j]} ({r[j]:.2f})", ha="right", va="center",
                fontsize=9)  # fmt: skip
    for i, j in enumerate(right):
        y = base - 0.6 * (len(right) - 1 - i)
        ax.plot([r[j], r[j], hi + 0.02 * (hi - lo)], [0, y, y], color="0.3", lw=0.8)
        ax.text(hi + 0.04 * (hi - lo), y, f"({r[j]:.2f}) {names[j]}", ha="left", va="center",
                fontsize=9)  # fmt: skip
    if title:
        ax.set_title(title, fontsize=10)
    if path is not None:
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
    return fig
