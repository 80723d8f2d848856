"""Default threads against every explicit thread setting, per problem size (issue 22).

For each size n and estimator, times whole warm fits (a fresh clone per fit on the same data, as
in a GridSearchCV) with the package's default threads (:mod:`indefsvm.threads`) and with every
explicit setting of 1 or 2 threads for each pool the estimator uses (BLAS, the Numba engine,
LIBSVM's OpenMP; the other pools at 1), and prints per size the default time, the best explicit
setting and the ratio default / best. The settings are interleaved round by round (the machine
is shared: a burst of load hits every setting alike); fits shorter than 0.12 s are repeated
until each setting has about 0.6 s of fits (at most 21), because the best of several noisy
medians is biased low. To keep a run within minutes, for fits of 0.5 s or more: an explicit
setting's fit is abandoned once it takes 1.5x the fastest fit so far (two threads on busy cores
can be 5-10x slower), and a setting 1.15x slower than the fastest fit after the first round
or than the best median after the second is not timed further. The defaults and the explicit
setting equal to their choice are always timed in full. ``--sizes 1000 3000`` took 14 minutes
at load 1-2.5 on 2 cores (n = 3000 three quarters of it); ``--sizes`` and ``--only`` split a run.

Estimators: IndefiniteSVC, SpectrumSVC and KreinSVC on a precomputed sigmoid kernel (dense), and
IndefiniteSVC and KreinSquaredHingeSVC with ``n_components = min(n, 200)`` on the sigmoid kernel
of the features (low-rank).

The issue's target: with the defaults every fit takes at most 1.2x the best setting's time, on
an idle machine and at load 2 (``--load 2`` starts two busy-loop processes for the run).

Run: ``python benchmarks/bench_threads.py [--load 2] [--sizes 50 200 1000 3000] [--repeats 5]
[--out table.md]``; ``--smoke`` runs one tiny size in seconds
(tests/benchmarks/test_bench_threads.py);
``--first-call`` times the first fit of a fresh process with an empty and a warm Numba cache.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import signal
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_line, machine_line, markdown_header, markdown_row  # noqa: E402

from indefsvm import IndefiniteSVC  # noqa: E402
from indefsvm import threads as threads_module  # noqa: E402
from indefsvm.krein.models import KreinSquaredHingeSVC, KreinSVC  # noqa: E402
from indefsvm.proxy.baselines import SpectrumSVC  # noqa: E402

POOLS = ("blas", "engine", "openmp")
#: Sigmoid kernel ``tanh(GAMMA <x, x'> + COEF0)`` on 10-dimensional Gaussian data.
GAMMA, COEF0, DIM = 0.1, -0.5, 10
#: After two rounds a setting is dropped when its fastest fit exceeds this multiple of the best
#: median (it cannot be the best; the defaults are always timed to the end).
PRUNE = 1.15
#: After the first round (one fit each) a long setting this much slower than the fastest is dropped.
FIRST_ROUND_PRUNE = 1.15
#: A fit of an explicit setting is abandoned once it runs this multiple of the fastest fit so far.
ABANDON = 1.5
#: ... when the fastest fit so far took at least this long (seconds).
ABANDON_FROM = 0.5
#: Fits shorter than this are repeated more often (``repeats`` is the minimum).
SECONDS_PER_SETTING = 0.6
MAX_REPEATS = 21


def _problem(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, DIM))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    K = np.tanh(GAMMA * (X @ X.T) + COEF0)
    return X, y, K


def _estimators(n: int) -> list[tuple[str, Callable[[], Any], str, tuple[str, ...], int | None]]:
    """``(label, factory, input, pools used, rank)``; input "K" precomputed or "X" features."""
    m = min(n, 200)
    sigmoid = {"kernel": "sigmoid", "gamma": GAMMA, "coef0": COEF0}
    return [
        (
            "IndefiniteSVC",
            lambda: IndefiniteSVC(kernel="precomputed"),
            "K",
            ("blas", "engine"),
            None,
        ),
        (
            f"IndefiniteSVC m={m}",
            lambda: IndefiniteSVC(**sigmoid, n_components=m, random_state=0),
            "X",
            ("blas",),  # the low-rank operator's secular loop is serial
            m,
        ),
        ("SpectrumSVC", lambda: SpectrumSVC(kernel="precomputed"), "K", ("blas", "openmp"), None),
        ("KreinSVC", lambda: KreinSVC(kernel="precomputed"), "K", ("blas",), None),
        (
            f"KreinSquaredHingeSVC m={m}",
            lambda: KreinSquaredHingeSVC(**sigmoid, n_components=m, random_state=0),
            "X",
            ("blas",),
            m,
        ),
    ]


def _settings(pools: tuple[str, ...], max_threads: int) -> list[dict[str, int] | None]:
    """None (the defaults) and every explicit 1..max_threads choice for ``pools`` (others 1)."""
    counts = range(1, max_threads + 1)
    explicit = []
    for choice in itertools.product(counts, repeat=len(pools)):
        setting = dict.fromkeys(POOLS, 1)
        setting.update(zip(pools, choice, strict=True))
        explicit.append(setting)
    return [None, *explicit]


def _label(setting: dict[str, int] | None, pools: tuple[str, ...]) -> str:
    if setting is None:
        return "default"
    return " ".join(f"{pool}={setting[pool]}" for pool in pools)


class _Abandoned(Exception):
    """A fit ran past its time limit (it cannot be the best setting)."""


def _abandon(signum: int, frame: Any) -> None:
    raise _Abandoned


def _fit_once(
    factory: Callable[[], Any],
    data: np.ndarray,
    y: np.ndarray,
    setting: Any,
    limit: float | None = None,
) -> float:
    """Wall time of one fit; inf when it ran past ``limit`` seconds (abandoned by SIGALRM).

    The alarm is delivered when the fit returns to Python (after a running LAPACK call), and
    the fit's own ``finally`` clauses restore the thread settings.
    """
    use_alarm = limit is not None and hasattr(signal, "setitimer")
    threads_module.set_config(n_threads=setting)
    previous = signal.signal(signal.SIGALRM, _abandon) if use_alarm else None
    # An alarm that lands in a ctypes callback (LIBSVM's print function) cannot propagate; the
    # fit then runs to its end and is discarded below. Keep that out of the output.
    unraisable = sys.unraisablehook
    sys.unraisablehook = lambda info: (
        None if isinstance(info.exc_value, _Abandoned) else unraisable(info)
    )
    try:
        estimator = factory()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, max(limit, 1e-3))
            estimator.fit(data, y)
            elapsed = time.perf_counter() - start
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
            return math.inf if limit is not None and elapsed > limit else elapsed
    except _Abandoned:
        return math.inf
    finally:
        sys.unraisablehook = unraisable
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        threads_module.set_config(n_threads=None)


def time_settings(
    factory: Callable[[], Any],
    data: np.ndarray,
    y: np.ndarray,
    settings: list[dict[str, int] | None],
    repeats: int,
    abandon: bool = True,
    keep: frozenset[int] = frozenset({0}),
) -> list[list[float]]:
    """Fit times of every setting, interleaved round by round (module docstring).

    ``abandon=False`` (``--smoke``): exactly ``repeats`` rounds, nothing abandoned or dropped.
    The settings in ``keep`` (the defaults, index 0, and the explicit setting equal to their
    choice) are never abandoned or dropped: a burst of load on one of their fits must not drop
    the honest baseline and flatter the defaults.
    """
    times: list[list[float]] = [[] for _ in settings]
    active = list(range(len(settings)))
    rng = np.random.default_rng(0)
    round_ = 0
    while round_ < repeats:
        # The kept settings first in the first round, in random order (the others then have a
        # time limit); then a new order every round, so no setting always runs after another.
        if round_ == 0:
            first = [int(i) for i in rng.permutation(sorted(keep))]
            order = first + [i for i in active if i not in keep]
        else:
            order = [int(i) for i in rng.permutation(active)]
        for index in order:
            done = [t for i in active for t in times[i] if t < math.inf]
            # Only long fits are abandoned (that is where the time goes); short ones are noisy.
            long = abandon and done and min(done) >= ABANDON_FROM
            limit = ABANDON * min(done) if index not in keep and long else None
            times[index].append(_fit_once(factory, data, y, settings[index], limit))
        best = min(statistics.median(times[i]) for i in active)
        if round_ >= 1 and abandon and best >= ABANDON_FROM:
            # The default (index 0) is always timed to the end.
            active = [i for i in active if i in keep or min(times[i]) <= PRUNE * best]
        elif abandon:  # (not in --smoke)
            # One fit each: what was abandoned is dropped, and among long fits what is far off.
            far = FIRST_ROUND_PRUNE * best if best >= ABANDON_FROM else math.inf
            active = [i for i in active if i in keep or times[i][0] <= far]
            # Short fits are noisy and the best of several settings' medians is biased low: time
            # them for about SECONDS_PER_SETTING each (at most MAX_REPEATS fits).
            repeats = max(repeats, min(MAX_REPEATS, math.ceil(SECONDS_PER_SETTING / best)))
        round_ += 1
    return times


_FIRST_CALL = """
import time
start = time.perf_counter()
import numpy as np
from indefsvm import IndefiniteSVC
imported = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.normal(size=(60, 10))
y = np.where(X[:, 0] > 0, 1, -1)
K = np.tanh(0.1 * X @ X.T - 0.5)
times = []
for _ in range(2):
    begin = time.perf_counter()
    IndefiniteSVC(kernel="precomputed").fit(K, y)
    times.append(time.perf_counter() - begin)
print(f"import {imported - start:.2f} s, first fit {times[0]:.2f} s, second fit {times[1]:.3f} s")
"""


def first_call() -> None:
    """First ``IndefiniteSVC.fit`` in fresh processes: empty Numba cache, then warm.

    The cache is a new ``NUMBA_CACHE_DIR`` (empty: every compiled function is compiled; second
    process: loaded from it), so the package's own cache is neither used nor changed.
    """
    import tempfile

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
        for label in ("empty cache", "warm cache"):
            result = subprocess.run(
                [sys.executable, "-c", _FIRST_CALL],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            print(f"{label}: {result.stdout.strip()}   [{load_line()}]", flush=True)


def _busy_loops(count: int) -> list[subprocess.Popen]:
    code = "while True:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    max_threads = min(2, threads_module.usable_cores())
    rows = []
    warm: set[str] = set()
    for n in args.sizes:
        X, y, K = _problem(n)
        for label, factory, kind, pools, m in _estimators(n):
            if args.only and not any(word in label for word in args.only):
                continue
            data = K if kind == "K" else X
            settings = _settings(pools, max_threads)
            family = label.split(" m=")[0]
            if family not in warm:
                # Compilation and imports, once per estimator, on a small problem of its kind.
                X_warm, y_warm, K_warm = _problem(min(n, 60))
                _fit_once(factory, K_warm if kind == "K" else X_warm, y_warm, None)
                warm.add(family)
            if n <= 1000 or m is not None:
                # One untimed fit on this problem: the first one also pays for page faults and
                # cold caches (not worth its time for a dense fit at n = 3000: seconds).
                _fit_once(factory, data, y, None)
            chosen = {pool: threads_module.threads_for(n, pool, m=m) for pool in pools}
            # The explicit setting equal to the defaults' choice: default / it is the noise.
            matches = [
                i
                for i in range(1, len(settings))
                if all(settings[i][p] == chosen[p] for p in pools)
            ]
            same = matches[0] if matches else None
            keep = frozenset({0} if same is None else {0, same})
            times = time_settings(factory, data, y, settings, args.repeats, not args.smoke, keep)
            medians = [statistics.median(t) for t in times]
            # Every explicit setting competes with the median of the fits it got (an abandoned
            # fit counts as infinitely slow).
            best = min(range(1, len(settings)), key=lambda i: (medians[i], -len(times[i])))
            row = {
                "same": medians[same] if same is not None else math.nan,
                "n": n,
                "estimator": label,
                "default": medians[0],
                "default_threads": " ".join(f"{p}={chosen[p]}" for p in pools),
                "best": medians[best],
                "best_setting": _label(settings[best], pools),
                "ratio": medians[0] / medians[best],
                "settings": {
                    _label(s, pools): (statistics.median(t), len(t))
                    for s, t in zip(settings, times, strict=True)
                },
            }
            rows.append(row)
            print(
                f"n={n:5d} {label:28s} default {row['default'] * 1e3:9.1f} ms "
                f"({row['default_threads']}) best {row['best'] * 1e3:9.1f} ms "
                f"({row['best_setting']}) ratio {row['ratio']:.2f}   [{load_line()}]",
                flush=True,
            )
    return rows


def table(rows: list[dict[str, Any]], header: str) -> str:
    lines = [
        header,
        "",
        markdown_header(
            [
                "n",
                "estimator",
                "default (ms)",
                "default threads",
                "best explicit (ms)",
                "best setting",
                "default / best",
                "same setting, explicit (ms)",
            ]
        ),
    ]
    for row in rows:
        ratio = f"{row['ratio']:.2f}"
        lines.append(
            markdown_row(
                [
                    row["n"],
                    row["estimator"],
                    f"{row['default'] * 1e3:.1f}",
                    row["default_threads"],
                    f"{row['best'] * 1e3:.1f}",
                    row["best_setting"],
                    f"**{ratio}**" if row["ratio"] > 1.2 else ratio,
                    f"{row['same'] * 1e3:.1f}",
                ]
            )
        )
    worst = max(row["ratio"] for row in rows) if rows else float("nan")
    lines += [
        "",
        f'Largest default / best: {worst:.2f} (target <= 1.2). "same setting, explicit": the '
        "explicit setting equal to the defaults' choice; its distance from the default column "
        "is the run's noise (the code paths are the same).",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 1000, 3000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--load", type=int, default=0, help="busy-loop processes during the run")
    parser.add_argument("--out", type=Path, help="write the markdown table here")
    parser.add_argument("--only", nargs="+", help="estimators whose label contains a word")
    parser.add_argument("--smoke", action="store_true", help="one tiny size, 2 repeats")
    parser.add_argument(
        "--first-call",
        action="store_true",
        help="only time the first fit of fresh processes, with an empty and a warm Numba cache",
    )
    args = parser.parse_args(argv)
    if args.first_call:
        first_call()
        return []
    if args.smoke:
        args.sizes, args.repeats = [40], 2
    if args.repeats < 1 or any(n < 8 for n in args.sizes) or args.load < 0:
        parser.error("--repeats must be >= 1, --sizes >= 8 and --load >= 0")
    loops = _busy_loops(args.load)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    first_load = load_line()
    try:
        rows = run(args)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    header = (
        f"bench_threads.py {' '.join(argv if argv is not None else sys.argv[1:])}: {started}, "
        f"{machine_line()}, usable cores {threads_module.usable_cores()}, busy loops "
        f"{args.load}; {first_load} at the start, {load_line()} at the end (pid {os.getpid()})"
    )
    text = table(rows, header)
    print()
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return rows


if __name__ == "__main__":
    main()
