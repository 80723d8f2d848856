"""The one progress helper (indefsvm.utils.progress) and the places that draw a bar."""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import numpy as np
import pytest

import indefsvm
from indefsvm.utils.progress import ProgressBar, progress_bar, progress_wanted


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_enabled_none_follows_whether_stderr_is_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert progress_wanted(None) is False
    assert not progress_bar(10, desc="x", unit="it").active
    monkeypatch.setattr("sys.stderr", _Terminal())
    assert progress_wanted(None) is True
    assert progress_wanted(False) is False and progress_wanted(True) is True
    assert not progress_bar(10, desc="x", unit="it", enabled=False).active


def test_a_drawn_bar_goes_to_stderr_with_count_and_time_left(monkeypatch):
    err = io.StringIO()  # not a terminal: enabled=True still draws (a notebook's case)
    monkeypatch.setattr("sys.stderr", err)
    with progress_bar(10, desc="work", unit="task", enabled=True, leave=True) as bar:
        assert bar.active and bar.total == 10 and bar.desc == "work"
        bar.update(3)
        bar.set(7, postfix="note")
        assert bar.n == 7 and bar.postfix == "note"
    text = err.getvalue()
    # tqdm's "n/total [elapsed<remaining, rate]": the time left follows the '<'.
    assert re.search(r"work: .*7/10 \[\d\d:\d\d<\d\d:\d\d", text), text
    assert "task" in text and "note" in text
    assert not bar.active
    bar.close()  # idempotent


def test_a_disabled_bar_is_a_silent_no_op(monkeypatch, capsys):
    bar = progress_bar(5, desc="x", unit="it", enabled=False)
    assert isinstance(bar, ProgressBar) and not bar.active
    bar.update(2)
    bar.set(3, postfix="y")
    bar.close()
    with pytest.raises(AttributeError, match="disabled progress bar has no attribute 'n'"):
        _ = bar.n
    assert capsys.readouterr() == ("", "")


def test_no_other_module_imports_tqdm():
    root = Path(indefsvm.__file__).parent
    users = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if any(n == "tqdm" or n.startswith("tqdm.") for n in names):
                users.append(path.relative_to(root).as_posix())
    assert users == ["utils/progress.py"]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_solver_and_the_nystroem_map_draw_through_it(monkeypatch):
    from indefsvm import IndefiniteNystroem
    from indefsvm.proxy.api import solve

    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    K = X @ X.T - 0.1 * (X**2).sum(1)[:, None]
    K = 0.5 * (K + K.T)
    y = np.where(X[:, 0] > 0, 1, -1)
    solve(K, y, max_iter=3, options={"progress": True})
    assert re.search(r"pg: .*%", err.getvalue())
    # (the default plain map passes over X in fit_transform; its fit reads the landmarks only)
    IndefiniteNystroem(n_components=5, kernel="rbf", verbose=True, random_state=0).fit_transform(X)
    assert "Nystroem factor" in err.getvalue()


@pytest.mark.parametrize("n, shown", [(25_000, True), (2_000, False)])
def test_a_long_default_fit_shows_its_progress_on_a_terminal(monkeypatch, n, shown):
    """A default low-rank fit of 10^5 points printed nothing for a minute (the README promises
    progress): from LONG_FIT_ROWS rows on, the Nystroem passes and the solver draw their bars
    by default when stderr is a terminal; small fits stay silent."""
    from indefsvm import IndefiniteSVC

    err = _Terminal()
    monkeypatch.setattr("sys.stderr", err)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    IndefiniteSVC(kernel="rbf", gamma=0.1, n_components=10, max_iter=5, tol=1e-3).fit(X, y)
    text = err.getvalue()
    assert ("Nystroem factor" in text) is shown
    # the solver's bar is labelled with the solver auto chose (lowrank_newton here)
    assert (re.search(r"(pg|lowrank_newton): .*%", text) is not None) is shown
    # not on a log file (stderr not a terminal)
    log = io.StringIO()
    monkeypatch.setattr("sys.stderr", log)
    IndefiniteSVC(kernel="rbf", gamma=0.1, n_components=10, max_iter=5, tol=1e-3).fit(X, y)
    assert "Nystroem factor" not in log.getvalue()
