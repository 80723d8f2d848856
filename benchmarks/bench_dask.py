"""One low-rank proxy-kernel SVM fit on a Dask cluster (issue 25, the must targets).

Setting (default): n = 300,000 training points, d = 20, the sigmoid kernel and the labelling rule
of ``bench_lowrank.py`` (``tanh(0.05 x'z - 1)``), m = 300 landmarks, so the float64 Nystroem
factor is 300,000 x 300 x 8 B = 720 MB. A scheduler and two workers are started from the shell
(``dask scheduler``; ``dask worker ADDRESS --memory-limit 700MB --nthreads 1``, each in its own
process, all stopped on exit, also after an error); the data are generated ON the workers
(``dask.array`` random numbers with a seed), so the client never holds X or the factor. The
fit is ``IndefiniteSVC(n_components=300)`` (``solver="auto"``: ``"lowrank_newton"``) on the
dask arrays (the default, ``--path estimator``: Nystroem map, factor and solver passes on the
workers) or the functional path (``--path functional``: the Nystroem map fitted on the 300
landmark rows gathered to the client and applied to X chunk by chunk on the workers
(``map_blocks``), then
``indefsvm.solve(LowRankKernel(Phi, signature), method="lowrank_newton")``: the solver alone,
without the estimator). The output says which path ran.

Reported (one JSON object; ``--markdown`` also prints a table for docs/benchmarks.md):

* ``success``; ``worker_restarts``: workers whose (name, pid) changed between before and after
  the fit, plus workers lost/added (the scheduler's view); ``client_peak_rss_mb`` (this
  process's ``ru_maxrss``) against ``factor_mb``;
* ``predictions_equal``: the labels of 20,000 test points (generated the same way, seed + 1)
  from the cluster fit against those of an in-memory ``IndefiniteSVC`` fit on the same data
  with the same landmarks, run in a separate subprocess (so this process's peak memory is the
  cluster fit's alone); also the largest decision difference;
* ``pass_cluster_s`` / ``pass_memory_s``: median of 5 of one pass over the factor
  (``Phi' v`` and ``Phi w``) on the cluster (this process) and in memory (the subprocess, same
  factor values, numpy backend), and their ratio (target: at most 3).

Worker memory: a worker holds half the factor, 360 MB, 51 % of its 700 MB limit, and the
worker process itself takes about 150 MB (Python, numpy, dask, the package), so Dask's default
thresholds (spill at 60-70 % of the limit, pause at 80 %) would write the factor to disk during
the fit. The shell workers therefore get ``target, spill, pause = 0.8, 0.85, 0.9``
(``--worker-memory``; the limit and the restart at 95 % stay); the report gives each worker's
peak RSS and the bytes it spilled.

Chunks: ``--chunk-rows`` (default 12,500: a 30 MB float64 chunk of the factor, 24 chunks, 12 per
worker). Smaller chunks cost scheduling: every pass pays the scheduler's per-task cost (a few ms)
once per chunk, against about 5 ms to read a 30 MB chunk. Larger chunks cost worker memory: a
worker holds its 360 MB share of the factor, the process itself (about 140 MB) and the
temporaries of the chunk being built (its kernel block against the landmarks and the product).
Measured at n = 100,000 (a 120 MB share per worker, this machine): workers' peak RSS 382 and
324 MB with 25,000-row chunks, 304 and 307 MB with 12,500-row chunks, i.e. about 100 MB and
45 MB of temporaries; at n = 300,000 that is about 600 MB against 545 MB, and the first is at
the spill threshold below (595 MB) while the second leaves room. The pass times were the same
within this machine's noise (0.18 / 0.21 s for ``Phi'v``).

Commands (docs/benchmarks.md):

    OMP_NUM_THREADS=1 python benchmarks/bench_dask.py --markdown        # n = 300,000, m = 300
    python benchmarks/bench_dask.py --smoke                             # n = 20,000, LocalCluster

``--smoke``: n = 20,000, m = 50, 4 chunks, a ``LocalCluster`` of two 1-thread worker processes
(no shell processes), a few seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import median_time  # also puts this checkout's indefsvm first on sys.path
from bench_lowrank import COEF0, DIM, GAMMA

ROOT = Path(__file__).resolve().parents[1]
N_TEST = 20_000


# -- data, generated identically on the cluster and in memory -----------------------------------
def make_dask_data(n: int, chunk_rows: int, seed: int):
    """``X`` (n, 20) and labels ``y`` as dask arrays: generated where the chunks are computed."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.normal(size=(n, DIM), chunks=(chunk_rows, DIM))
    noise = rng.normal(size=(n,), chunks=(chunk_rows,))
    f = da.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * (X[:, 3] ** 2 - 1) + 0.3 * X[:, 4]
    y = da.where(f + 0.3 * noise > 0, 1.0, -1.0)
    return X, y


def landmark_indices(n: int, m: int, seed: int) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).choice(n, size=m, replace=False))


def pass_time(f) -> float:
    """Median of 5 calls after one warm-up (graph caches, compiled kernels)."""
    f()
    return median_time(f, 5)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KB on Linux


# -- the in-memory reference (a subprocess) ------------------------------------------------------
def in_memory(args: argparse.Namespace) -> None:
    """Fit in memory on the same data and landmarks; write decisions and pass times."""
    import dask

    from indefsvm.linalg.factor import LowRankKernel
    from indefsvm.proxy.estimators import IndefiniteSVC

    with dask.config.set(scheduler="threads"):
        X, y = (a.compute() for a in make_dask_data(args.n, args.chunk_rows, args.seed))
        Xt, _ = (a.compute() for a in make_dask_data(N_TEST, N_TEST, args.seed + 1))
    idx = landmark_indices(args.n, args.m, args.seed)
    t = time.perf_counter()
    model = IndefiniteSVC(**estimator_params(args, idx)).fit(X, y)
    fit_s = time.perf_counter() - t
    decision = model.decision_function(Xt)
    K = LowRankKernel(model.nystroem_.transform(X), model.nystroem_.signature_)
    v, w = np.ones(args.n), np.ones(args.m)
    out = {
        "fit_s": fit_s,
        "n_iter": int(model.n_iter_),
        "gap": float(model.result_.relative_gap),
        "rmat_s": pass_time(lambda: K.backend.rmat(v)),
        "mat_s": pass_time(lambda: K.backend.mat(w)),
    }
    np.save(args.out + ".npy", decision)
    Path(args.out + ".json").write_text(json.dumps(out))


def estimator_params(args: argparse.Namespace, idx: np.ndarray) -> dict:
    return {
        "kernel": "sigmoid",
        "gamma": GAMMA,
        "coef0": COEF0,
        "n_components": args.m,
        "nystroem_params": {
            "landmarks": idx,
            **({"dtype": args.dtype} if args.dtype != "float64" else {}),
        },
        # solver left at its default ("auto": the Newton method on a factor), as a user fits
        "C": args.C,
        "rho": 1.0,
        "tol": args.tol,
    }


# -- the cluster -------------------------------------------------------------------------------
class ShellCluster:
    """``dask scheduler`` and ``dask worker`` processes started here, stopped on exit."""

    def __init__(
        self, n_workers: int, memory_limit: str, workdir: str, fractions: dict[str, str]
    ) -> None:
        self.procs: list[subprocess.Popen] = []
        self.workdir = workdir
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        for key, value in fractions.items():
            env[f"DASK_DISTRIBUTED__WORKER__MEMORY__{key.upper()}"] = value
        dask_cli = shutil.which("dask") or "dask"
        scheduler_file = os.path.join(workdir, "scheduler.json")
        self._start(
            [dask_cli, "scheduler", "--scheduler-file", scheduler_file, "--port", "0",
             "--dashboard-address", ":0", "--no-show"], env, "scheduler",
        )  # fmt: skip
        deadline = time.time() + 60
        while not os.path.exists(scheduler_file):
            if time.time() > deadline or self.procs[0].poll() is not None:
                raise RuntimeError("the dask scheduler did not start (see scheduler.log)")
            time.sleep(0.2)
        time.sleep(0.5)  # the file is written before the listener is ready on slow machines
        self.address = json.loads(Path(scheduler_file).read_text())["address"]
        for i in range(n_workers):
            self._start(
                [dask_cli, "worker", self.address, "--memory-limit", memory_limit,
                 "--nthreads", "1", "--nworkers", "1", "--name", f"w{i}",
                 "--local-directory", workdir, "--no-dashboard"], env, f"worker{i}",
            )  # fmt: skip

    def _start(self, cmd: list[str], env: dict, name: str) -> None:
        log = open(os.path.join(self.workdir, f"{name}.log"), "w")  # noqa: SIM115
        # Own process group: stopping it stops the worker's nanny and its child together.
        self.procs.append(
            subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)
        )

    def close(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def _worker_memory(dask_worker) -> dict:
    """Peak RSS and spilled bytes of one worker process (run on the worker)."""
    spilled = getattr(getattr(dask_worker, "data", None), "spilled_total", None)
    return {
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "spilled_mb": (spilled.disk / 1e6) if spilled is not None else None,
    }


def worker_identities(client) -> dict:
    """``{address: (name, pid)}`` of the workers as the scheduler and the workers say."""
    pids = client.run(os.getpid)
    info = client.scheduler_info(n_workers=-1)["workers"]
    return {a: (w.get("name"), pids.get(a)) for a, w in info.items()}


def fit_on_cluster(args: argparse.Namespace, client) -> dict:

    import indefsvm
    from indefsvm.approximation.nystrom import IndefiniteNystroem
    from indefsvm.linalg.factor import LowRankKernel
    from indefsvm.proxy.estimators import IndefiniteSVC
    from indefsvm.proxy.problems import make_problem

    X, y = make_dask_data(args.n, args.chunk_rows, args.seed)
    X, y = client.persist([X, y])  # generated on the workers, kept there
    Xt, _ = make_dask_data(N_TEST, N_TEST, args.seed + 1)
    Xt = Xt.compute()  # 3 MB of test points
    idx = landmark_indices(args.n, args.m, args.seed)
    path = args.path
    before = worker_identities(client)
    t = time.perf_counter()
    if path == "estimator":
        model = IndefiniteSVC(
            **estimator_params(args, idx), solver_options={"keep_training_state": True}
        ).fit(X, y)
        K = model.problem_.operator.factor
        result, n_iter = model.result_, model.n_iter_
        decision = model.decision_function(Xt)
    else:
        Z = X[idx].compute()  # the m landmark rows come to the client
        nys = IndefiniteNystroem(
            kernel="sigmoid", gamma=GAMMA, coef0=COEF0, landmarks=np.arange(args.m)
        ).fit(Z)
        Phi = X.map_blocks(
            nys.transform, chunks=(X.chunks[0], (args.m,)), dtype=np.float64
        ).persist()
        K = LowRankKernel(Phi, nys.signature_)
        problem = make_problem("svc", K, y.compute(), C=args.C, rho=1.0)
        result = indefsvm.solve_problem(problem, method="lowrank_newton", tol=args.tol)
        n_iter = result.n_iter
        coef = problem.feature_coef(result.alpha, state=problem.state(result.alpha))
        decision = nys.transform(Xt) @ coef + result.intercept
    fit_s = time.perf_counter() - t
    after = worker_identities(client)
    restarts = sorted(
        set(a for a in before if after.get(a) != before[a]) | (set(after) - set(before))
    )
    v, w = np.ones(args.n), np.ones(args.m)
    timing = {"rmat_s": pass_time(lambda: K.backend.rmat(v))}
    timing["mat_s"] = pass_time(lambda: K.backend.mat(w))
    memory = client.run(_worker_memory)
    return {
        **timing,
        "workers": [memory[a] for a in sorted(memory)],
        "path": path,
        "fit_s": fit_s,
        "n_iter": int(n_iter),
        "gap": float(result.relative_gap),
        "status": result.status,
        "worker_restarts": len(restarts),
        "workers_before": len(before),
        "workers_after": len(after),
        "decision": decision,
    }


def run(args: argparse.Namespace) -> dict:
    from distributed import Client, LocalCluster

    workdir = tempfile.mkdtemp(prefix="bench_dask_")
    ref_out = os.path.join(workdir, "in_memory")
    cluster = None
    try:
        if args.smoke:
            cluster = LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                memory_limit=args.memory_limit,
            )  # fmt: skip
            address = cluster.scheduler_address
        else:
            names = ("target", "spill", "pause")
            fractions = dict(zip(names, args.worker_memory.split(","), strict=True))
            cluster = ShellCluster(args.workers, args.memory_limit, workdir, fractions)
            address = cluster.address
        with Client(address, timeout=120) as client:
            client.wait_for_workers(2 if args.smoke else args.workers, timeout=120)
            try:
                cl = fit_on_cluster(args, client)
                success, error = True, None
            except Exception as exc:  # noqa: BLE001 - the benchmark reports the failure
                cl, success, error = {}, False, f"{type(exc).__name__}: {exc}"
        client_peak = peak_rss_mb()
    finally:
        if cluster is not None:
            cluster.close()
    mem, ref_decision = None, None
    if not args.no_reference:
        cmd = [sys.executable, __file__, "--in-memory", "--out", ref_out]
        cmd += ["--n", str(args.n), "--m", str(args.m), "--chunk-rows", str(args.chunk_rows)]
        cmd += ["--seed", str(args.seed), "--C", str(args.C), "--tol", str(args.tol)]
        cmd += ["--dtype", args.dtype]
        subprocess.run(cmd, check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        mem = json.loads(Path(ref_out + ".json").read_text())
        ref_decision = np.load(ref_out + ".npy")
    shutil.rmtree(workdir, ignore_errors=True)
    out = {
        "n": args.n,
        "m": args.m,
        "chunk_rows": args.chunk_rows,
        "memory_limit": args.memory_limit,
        "cluster": "LocalCluster"
        if args.smoke
        else f"dask scheduler + {args.workers} dask worker processes",
        "success": success,
        "error": error,
        "factor_mb": args.n * args.m * np.dtype(args.dtype).itemsize / 1e6,
        "client_peak_rss_mb": round(client_peak, 1),
    }
    if success:
        decision = cl.pop("decision")
        out.update({k: cl[k] for k in ("path", "status", "n_iter", "gap", "fit_s")})
        out["worker_restarts"] = cl["worker_restarts"]
        out["workers_peak_rss_mb"] = [round(w["peak_rss_mb"]) for w in cl["workers"]]
        out["workers_spilled_mb"] = [w["spilled_mb"] for w in cl["workers"]]
        out["workers_before_after"] = [cl["workers_before"], cl["workers_after"]]
        for key in ("rmat_s", "mat_s"):
            out[f"{key[:-2]}_cluster_s"] = cl[key]
        if mem is None:
            return out
        out["memory_n_iter"], out["memory_gap"], out["memory_fit_s"] = (
            mem["n_iter"], mem["gap"], mem["fit_s"],
        )  # fmt: skip
        out["predictions_equal"] = bool(np.array_equal(decision > 0, ref_decision > 0))
        out["max_decision_difference"] = float(np.max(np.abs(decision - ref_decision)))
        for key in ("rmat_s", "mat_s"):
            out[f"{key[:-2]}_memory_s"] = mem[key]
            out[f"{key[:-2]}_ratio"] = cl[key] / mem[key]
    return out


def markdown(out: dict) -> str:
    rows = [
        ("cluster", out["cluster"]),
        ("n, m, chunk rows", f"{out['n']:,}, {out['m']}, {out['chunk_rows']:,}"),
        ("worker memory limit", out["memory_limit"]),
        ("fit succeeded", out["success"] if out["success"] else out["error"]),
    ]
    if out["success"] and "memory_fit_s" not in out:
        rows += [
            ("status, iterations, certified relative gap",
             f"{out['status']}, {out['n_iter']}, {out['gap']:.2e}"),
            ("fit time (s)", f"{out['fit_s']:.1f}"),
            ("worker restarts", out["worker_restarts"]),
            ("worker peak RSS (MB) / spilled to disk (MB)",
             f"{out['workers_peak_rss_mb']} / {out['workers_spilled_mb']}"),
            ("client peak RSS / factor (MB)",
             f"{out['client_peak_rss_mb']:.0f} / {out['factor_mb']:.0f}"),
            ("pass Phi'v, Phi w on the cluster (s)",
             f"{out['rmat_cluster_s']:.3f}, {out['mat_cluster_s']:.3f}"),
        ]  # fmt: skip
    elif out["success"]:
        rows += [
            ("path", out["path"]),
            ("status, iterations, certified relative gap", f"{out['status']}, {out['n_iter']}, "
             f"{out['gap']:.2e} (in memory: {out['memory_n_iter']}, {out['memory_gap']:.2e})"),
            ("fit time (s), cluster / in memory",
             f"{out['fit_s']:.1f} / {out['memory_fit_s']:.1f}"),
            ("worker restarts", out["worker_restarts"]),
            ("worker peak RSS (MB) / spilled to disk (MB)",
             f"{out['workers_peak_rss_mb']} / {out['workers_spilled_mb']}"),
            ("client peak RSS / factor (MB)",
             f"{out['client_peak_rss_mb']:.0f} / {out['factor_mb']:.0f}"),
            ("predictions equal to the in-memory fit",
             f"{out['predictions_equal']} "
             f"(max decision diff {out['max_decision_difference']:.1e})"),
            ("pass Phi'v (s), cluster / memory / ratio",
             f"{out['rmat_cluster_s']:.4f} / {out['rmat_memory_s']:.4f} / {out['rmat_ratio']:.2f}"),
            ("pass Phi w (s), cluster / memory / ratio",
             f"{out['mat_cluster_s']:.4f} / {out['mat_memory_s']:.4f} / {out['mat_ratio']:.2f}"),
        ]  # fmt: skip
    lines = ["| quantity | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=300_000)
    parser.add_argument("--m", type=int, default=300)
    parser.add_argument("--chunk-rows", type=int, default=12_500)
    parser.add_argument("--memory-limit", default="700MB")
    parser.add_argument(
        "--worker-memory",
        default="0.8,0.85,0.9",
        help="the shell workers' target,spill,pause fractions of --memory-limit (Dask's "
        "defaults are 0.6,0.7,0.8; terminate stays 0.95)",
    )
    parser.add_argument("--workers", type=int, default=2, help="shell worker processes")
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the in-memory fit (sizes that do not fit one process)",
    )
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--path", choices=("estimator", "functional"), default="estimator")
    parser.add_argument("--smoke", action="store_true", help="n = 20,000 on a LocalCluster")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--in-memory", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_memory:
        in_memory(args)
        return
    if args.smoke:
        args.n, args.m, args.chunk_rows = 20_000, 50, 6_000  # 4 chunks, the last one short
    out = run(args)
    print(json.dumps(out, indent=1))
    if args.markdown:
        print(markdown(out))


if __name__ == "__main__":
    main()
