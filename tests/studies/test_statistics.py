"""indefsvm.studies.statistics against independent references: a hand-computed corrected
resampled t-test, scipy.stats (t distribution, Wilcoxon, ranks) and Demšar's (2006) table of
the Nemenyi critical values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from indefsvm.studies.statistics import (
    average_ranks,
    cd_groups,
    corrected_resampled_t,
    critical_difference,
    draw_cd_diagram,
    nemenyi_q,
    wilcoxon_over_datasets,
)


def test_corrected_resampled_t_by_hand():
    # d = a - b = (0.05, 0, 0.05, 0.05, -0.05): mean 0.02, sample variance 0.008 / 4 = 0.002;
    # 5-fold CV, n_test / n_train = 1/4: t = 0.02 / sqrt((1/5 + 1/4) 0.002) = 0.02 / 0.03 = 2/3
    a = np.array([0.90, 0.80, 0.85, 0.95, 0.70])
    b = np.array([0.85, 0.80, 0.80, 0.90, 0.75])
    t, p = corrected_resampled_t(a, b, 0.25)
    assert t == pytest.approx(2.0 / 3.0, rel=1e-12)
    assert p == pytest.approx(2.0 * stats.t.sf(2.0 / 3.0, 4), rel=1e-12)
    assert p == pytest.approx(0.5415, abs=5e-4)  # t table, 4 degrees of freedom
    # antisymmetric in (a, b)
    t2, p2 = corrected_resampled_t(b, a, 0.25)
    assert t2 == pytest.approx(-t, rel=1e-12) and p2 == pytest.approx(p, rel=1e-12)
    # the correction only widens: the plain paired t-test (ratio -> 0) is scipy's ttest_rel
    plain = stats.ttest_rel(a, b)
    t0, p0 = corrected_resampled_t(a, b, 1e-300)
    assert t0 == pytest.approx(plain.statistic, rel=1e-12) and p0 == pytest.approx(plain.pvalue)
    assert p > p0


def test_corrected_resampled_t_degenerate_and_bad_input():
    assert corrected_resampled_t([0.5, 0.6], [0.5, 0.6], 0.25) == (0.0, 1.0)
    t, p = corrected_resampled_t([0.6, 0.7], [0.5, 0.6], 0.25)  # constant difference
    assert t == math.inf and p == 0.0
    with pytest.raises(ValueError, match="needs >= 2 splits"):
        corrected_resampled_t([0.5], [0.4], 0.25)
    with pytest.raises(ValueError, match="equal length"):
        corrected_resampled_t([0.5, 0.4], [0.4], 0.25)
    with pytest.raises(ValueError, match="finite"):
        corrected_resampled_t([0.5, np.nan], [0.4, 0.3], 0.25)
    with pytest.raises(ValueError, match="test_train_ratio must be a positive number"):
        corrected_resampled_t([0.5, 0.4], [0.4, 0.2], 0.0)


def test_wilcoxon_over_datasets_against_scipy():
    rng = np.random.default_rng(3)
    a = rng.uniform(0.6, 0.9, size=12)
    b = a - rng.normal(0.005, 0.03, size=12)
    b[[2, 7]] = a[[2, 7]]  # two ties
    b[5] = np.nan  # a data set where b has no score
    res = wilcoxon_over_datasets(a, b)
    ok = np.isfinite(b)
    d = a[ok] - b[ok]
    assert res["n"] == 11
    assert (res["wins"], res["ties"], res["losses"]) == (
        int(np.sum(d > 0)), 2, int(np.sum(d < 0))
    )  # fmt: skip
    assert res["p"] == pytest.approx(stats.wilcoxon(a[ok], b[ok]).pvalue, rel=1e-12)
    # smaller is better: wins and losses swap, p does not change
    low = wilcoxon_over_datasets(a, b, greater=False)
    assert (low["wins"], low["losses"]) == (res["losses"], res["wins"])
    assert low["p"] == pytest.approx(res["p"], rel=1e-12)
    # one non-zero difference: no evidence
    assert wilcoxon_over_datasets([0.5, 0.6], [0.5, 0.5])["p"] == 1.0


def test_average_ranks_with_ties():
    scores = [[0.9, 0.8, 0.8], [0.7, 0.9, 0.6]]
    # row 1: ranks 1, 2.5, 2.5; row 2: 2, 1, 3
    assert average_ranks(scores).tolist() == [1.5, 1.75, 2.75]
    assert average_ranks(scores, greater=False).tolist() == [2.5, 2.25, 1.25]
    ref = np.mean([stats.rankdata(-np.array(r)) for r in scores], axis=0)
    assert np.allclose(average_ranks(scores), ref)
    with pytest.raises(ValueError, match="k >= 2 methods"):
        average_ranks([[0.5], [0.4]])


# Demšar (2006), Table 5(a): critical values q_0.05 of the two-tailed Nemenyi test.
DEMSAR_Q05 = {2: 1.960, 3: 2.343, 4: 2.569, 5: 2.728, 6: 2.850, 7: 2.949, 8: 3.031, 9: 3.102,
              10: 3.164}  # fmt: skip
DEMSAR_Q10 = {2: 1.645, 3: 2.052, 4: 2.291, 5: 2.459, 6: 2.589, 7: 2.693, 8: 2.780, 9: 2.855,
              10: 2.920}  # fmt: skip


# The table has three decimals (2.343 for 2.3437, 2.949 for 2.9483): agreement to 1e-3.
@pytest.mark.parametrize("k", range(2, 11))
def test_nemenyi_q_is_demsars_table(k):
    assert nemenyi_q(k, 0.05) == pytest.approx(DEMSAR_Q05[k], abs=1e-3)
    assert nemenyi_q(k, 0.10) == pytest.approx(DEMSAR_Q10[k], abs=1e-3)


def test_critical_difference_of_demsars_example():
    # Demšar (2006), Sect. 3.2.4: four methods on 14 data sets, CD = 2.569 sqrt(4 5 / (6 14))
    assert critical_difference(4, 14) == pytest.approx(2.569 * math.sqrt(20 / 84), abs=1e-3)
    assert critical_difference(4, 14) == pytest.approx(1.25, abs=5e-3)
    with pytest.raises(ValueError, match="k must be an integer >= 2"):
        critical_difference(1, 14)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        critical_difference(3, 0)


def test_cd_groups_are_the_maximal_cliques_within_cd():
    ranks = [1.0, 1.5, 2.4, 3.0, 3.9]
    # within 1.0: {1.0, 1.5}, {1.5, 2.4}, {2.4, 3.0}, {3.0, 3.9}; 2.4 - 1.0 = 1.4 is not
    assert cd_groups(ranks, 1.0) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert cd_groups(ranks, 1.5) == [(0, 1, 2), (2, 3), (3, 4)]  # 3.0 - 1.5 is not < 1.5
    assert cd_groups(ranks, 0.1) == []
    assert cd_groups([2.0, 1.0, 3.0], 10.0) == [(1, 0, 2)]


def test_cd_diagram_draws_every_method_and_the_cd(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = draw_cd_diagram(["A", "B", "C", "D"], [1.2, 2.0, 3.1, 3.7], 1.25, title="t")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "CD = 1.25" in texts
    assert any(t.startswith("A (1.20)") for t in texts) and any("D" in t for t in texts)
    plt.close(fig)
    draw_cd_diagram(["A", "B"], [1.0, 2.0], 1.0, tmp_path / "cd.png")
    assert (tmp_path / "cd.png").stat().st_size > 1000
