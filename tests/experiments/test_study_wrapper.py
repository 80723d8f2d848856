"""``experiments/_study_wrapper.py``: combining stores run one data set each (``--from``).

Reference: hand-made ``summary.csv`` files whose table, bold marks and ranks are known; the
wrapper must carry the study's bold marks and ranks through unchanged (it does no statistics of
its own: the study ranks in the measure's direction, ties averaged) and draw one panel per data
set.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ["dataset", "kernel", "method", "measure", "mean", "std", "n_folds", "n_failed", "rank",
          "bold", "p_vs_best"]  # fmt: skip


@pytest.fixture
def wrapper(monkeypatch):
    """``experiments/_study_wrapper.py`` imported in-process. ``benchmarks/`` has a ``_common``
    module too: both names are taken out of ``sys.modules`` for the test and put back after, so
    neither folder's scripts see the other's."""
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    names = ("_common", "_study_wrapper")
    saved = {name: sys.modules.pop(name) for name in names if name in sys.modules}
    try:
        import _study_wrapper

        yield _study_wrapper
    finally:
        for name in names:
            sys.modules.pop(name, None)
        sys.modules.update(saved)


def _store(
    directory: Path, dataset: str, cells: dict[tuple[str, str], tuple[float, str, float]]
) -> Path:
    directory.mkdir()
    with open(directory / "summary.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        writer.writeheader()
        for (kernel, method), (mean, bold, rank) in cells.items():
            row = {"dataset": dataset, "kernel": kernel, "method": method, "mean": mean,
                   "std": 0.01, "n_folds": 10, "n_failed": 0, "rank": rank, "bold": bold,
                   "p_vs_best": 1.0}  # fmt: skip
            writer.writerow({**row, "measure": "error_rate"})
            writer.writerow({**row, "measure": "accuracy", "mean": 1 - mean})
    return directory


def _rows_store(directory: Path, rows: list[dict[str, str]]) -> Path:
    """A results directory whose ``summary.csv`` holds ``rows``."""
    directory.mkdir()
    with open(directory / "summary.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return directory


def test_from_combines_stores_run_one_data_set_each(wrapper, tmp_path):
    # error rates with the study's ranks (lower is better; a tie shares rank 1.5); the accuracy
    # rows are 1 - error with the same ranks (higher is better)
    a = _store(tmp_path / "a", "alpha", {
        ("sig", "A"): (0.10, "1", 1.0), ("sig", "B"): (0.20, "0", 2.0),
        ("rbf", "A"): (0.30, "1", 1.5), ("rbf", "B"): (0.30, "1", 1.5),
    })  # fmt: skip
    b = _store(
        tmp_path / "b", "beta", {("sig", "A"): (0.05, "1", 1.0), ("sig", "B"): (0.40, "0", 2.0)}
    )
    out = tmp_path / "out"
    paper = {("alpha", "sig"): {"A": 11.0}, ("beta", "sig"): {"A": 44.0}}
    spec = ROOT / "experiments" / "table3_000.toml"  # not run: --from reads the stores only
    code = wrapper.run(spec, "unused", paper, "error_rate", ["--from", str(a), str(b),
                       "--out", str(out)], "note")  # fmt: skip
    assert code == 0
    table = (out / "methods.md").read_text().splitlines()
    assert "| data set / kernel | A | B | paper, A |" in table
    assert "| alpha / sig | **10.00 ± 1.00** | 20.00 ± 1.00 | 11.00 |" in table
    assert "| alpha / rbf | **30.00 ± 1.00** | **30.00 ± 1.00** | – |" in table
    assert "| beta / sig | **5.00 ± 1.00** | 40.00 ± 1.00 | 44.00 |" in table
    # ranks: A 1, 1.5, 1 -> 1.17; B 2, 1.5, 2 -> 1.83 (a tie shares its rank)
    assert table[-1] == "Average rank over the 3 rows (ties share their rank): A 1.17, B 1.83."
    comparison = (out / "paper_comparison.md").read_text()
    assert "| alpha / sig | 10.00 (11.00) |" in comparison
    assert "| beta / sig | 5.00 (44.00) |" in comparison
    assert (out / "methods.png").stat().st_size > 10_000
    # a measure where higher is better: the ranks are the study's, not re-derived from the means
    out_acc = tmp_path / "out_accuracy"
    code = wrapper.run(spec, "unused", paper, "accuracy", ["--from", str(a), str(b),
                       "--out", str(out_acc)], "note")  # fmt: skip
    assert code == 0
    table = (out_acc / "methods.md").read_text().splitlines()
    assert "| alpha / sig | **90.00 ± 1.00** | 80.00 ± 1.00 | 11.00 |" in table
    assert table[-1] == "Average rank over the 3 rows (ties share their rank): A 1.17, B 1.83."


def test_a_given_split_is_one_score_without_std_and_bars_stop_at_100(
    wrapper, tmp_path, monkeypatch
):
    """One official split: the table shows the score (no "± nan"), the title says so; a mean
    near 100 % with a large std draws no bar above 100 %."""
    import matplotlib.pyplot as plt

    rows = [
        {"dataset": "ts", "kernel": "dtw", "method": m, "measure": "accuracy", "mean": mean,
         "std": "nan", "n_folds": "1", "n_failed": "0", "rank": rank, "bold": bold,
         "p_vs_best": "nan"}
        for m, mean, rank, bold in (("A", "0.9", "1.0", "1"), ("B", "0.8", "2.0", "0"))
    ]  # fmt: skip
    spec = ROOT / "experiments" / "table3_000.toml"  # not run: --from reads the stores only
    given, out = _rows_store(tmp_path / "given", rows), tmp_path / "out"
    assert wrapper.run(spec, "unused", {}, "accuracy", ["--from", str(given), "--out", str(out)],
                       "note") == 0  # fmt: skip
    table = (out / "methods.md").read_text()
    assert "| ts / dtw | **90.00** | 80.00 |" in table and "nan" not in table
    assert table.startswith("# Every method (accuracy, %, test score on the given split)")
    folds = [{**r, "std": "0.05", "n_folds": "5", "mean": "0.98"} for r in rows]
    kept, close = [], plt.close
    monkeypatch.setattr(plt, "close", kept.append)  # keep the figure to look at its bars
    store, out = _rows_store(tmp_path / "folds", folds), tmp_path / "out_folds"
    assert wrapper.run(spec, "unused", {}, "accuracy", ["--from", str(store), "--out", str(out)],
                       "note") == 0  # fmt: skip
    (fig,) = (f for f in kept if hasattr(f, "axes"))
    tops = [seg[:, 1].max() for c in fig.axes[0].collections for seg in c.get_segments()]
    assert tops and max(tops) <= 100.0 + 1e-9  # 98 % + 5 % stops at 100 %
    assert (out / "methods.png").stat().st_size > 1000
    assert "mean ± std over the outer folds" in " ".join(t.get_text() for t in fig.texts)
    close(fig)
