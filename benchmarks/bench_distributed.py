"""Benchmark: the IK batch on a Dask cluster against the single-process batch.

    python -m benchmarks.bench_distributed [--B 10000,100000] [--workers 2] [--gpus 0]
        [--device cpu|cuda|auto] [--scheduler ADDRESS] [--chunk-size N] [--repeats 3]
        [--dask-malloc]

The three-link IK of ``benchmarks/bench_small.py`` (p = the target, every instance from
x0 = (0.1, 0.2, 0.3)), for each B of ``--B``:

* ``single-process``: ``Problem.solve_batch`` here, on ``--device`` (resolved here);
* ``dask``: ``Problem.solve_batch(..., client=...)`` on the cluster, ``device`` resolved
  on each worker; ``first`` is the first call (sending the problem, compiling on each
  worker), the median over ``--repeats`` calls after it is the row's time.

The cluster: ``--scheduler`` an address to connect to (``dask scheduler`` / ``dask
worker`` started by hand); else ``--gpus N`` > 0 starts N local worker processes, one
per GPU (each with its own ``CUDA_VISIBLE_DEVICES``); else ``--workers`` local worker
processes with one thread each; local workers start without Dask's
``MALLOC_TRIM_THRESHOLD_=65536`` unless ``--dask-malloc`` keeps it.  Printed per B:
seconds (median), milliseconds per instance, the speed-up over the single-process
batch, whether the two results are
identical bit for bit (else the largest |x difference|), the longest chunk's seconds
on its worker (the batch's critical path, without Dask's own costs), and CPU seconds
(single-process: per call, the mean; dask: the workers' per chunk, summed and the
largest) -- on a machine shared with other work, the CPU seconds are the comparison
that waiting for a core does not distort.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

if __package__ in (None, ""):      # run as a file: the checkout root on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.bench_small import ik_problem, ik_targets  # noqa: E402

X0 = [0.1, 0.2, 0.3]


def gpu_cluster(n: int):
    """N local worker processes, worker i seeing GPU i only (its nanny sets
    CUDA_VISIBLE_DEVICES before the process starts), one thread each."""
    from distributed import Nanny, Scheduler, SpecCluster

    workers = {f"gpu{i}": {"cls": Nanny, "options": {
        "nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": str(i)}}} for i in range(n)}
    return SpecCluster(workers=workers, scheduler={
        "cls": Scheduler, "options": {"dashboard_address": None}})


def cluster_and_client(args):
    import dask
    from distributed import Client, LocalCluster

    if not args.dask_malloc:
        # Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which hands
        # every large NumPy temporary back to the OS (docs/batch.md, "On a Dask cluster")
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    if args.scheduler:
        return None, Client(args.scheduler)
    if args.gpus:
        cluster = gpu_cluster(args.gpus)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                               processes=True, dashboard_address=None)
    return cluster, Client(cluster)


def timed(fn, repeats: int):
    """(first seconds, median seconds of ``repeats`` further calls, the last result)."""
    t = time.perf_counter()
    res = fn()
    first = time.perf_counter() - t
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        res = fn()
        times.append(time.perf_counter() - t)
    return first, statistics.median(times) if times else first, res


def identical(a, b) -> str:
    same = all(np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True)
               for k in ("x", "f", "g", "lam_g", "lam_x", "iterations"))
    if same and a.status == b.status and a.path == b.path:
        return "identical"
    return f"max |dx| {np.nanmax(np.abs(a.x - b.x)):.1e}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--B", default="10000", help="batch sizes, comma-separated")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--gpus", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--scheduler", default="")
    ap.add_argument("--chunk-size", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dask-malloc", action="store_true",
                    help="keep Dask's MALLOC_TRIM_THRESHOLD_=65536 in local workers")
    args = ap.parse_args(argv)

    from caspar_backend import from_casadi

    nlp, bounds = ik_problem()
    problem = from_casadi(nlp, **bounds)
    cluster, client = cluster_and_client(args)
    try:
        client.wait_for_workers(max(1, args.gpus or (0 if args.scheduler else args.workers)))
        nw = len(client.nthreads())
        print(f"cluster: {nw} workers ({client.scheduler.address}); device={args.device}")
        print(f"{'B':>8} {'mode':>15} {'first s':>8} {'median s':>9} {'ms/inst':>8} "
              f"{'speed-up':>8}  result")
        for B in [int(b) for b in args.B.split(",")]:
            T = ik_targets(B)
            c0 = time.process_time()
            _, t_ref, ref = timed(lambda: problem.solve_batch(
                x0=X0, p=T, print_level=0, device=args.device), args.repeats)
            cpu_ref = (time.process_time() - c0) / (args.repeats + 1)
            print(f"{B:>8} {'single-process':>15} {'':>8} {t_ref:>9.3f} "
                  f"{1e3 * t_ref / B:>8.4f} {1.0:>8.2f}")
            first, t, res = timed(lambda: problem.solve_batch(
                x0=X0, p=T, print_level=0, device=args.device, client=client,
                chunk_size=args.chunk_size), args.repeats)
            chunks = res.extra["chunks"]
            devices = sorted(set(res.extra["device"]))
            longest = max(c["seconds"] for c in chunks)
            cpu = [c["cpu_seconds"] for c in chunks]
            print(f"{B:>8} {f'dask x{nw}':>15} {first:>8.3f} {t:>9.3f} {1e3 * t / B:>8.4f} "
                  f"{t_ref / t:>8.2f}  {identical(res, ref)}; {len(chunks)} chunks on "
                  f"{'/'.join(devices)}, the longest {longest:.3f} s on its worker; "
                  f"CPU s: {cpu_ref:.3f} single-process, {sum(cpu):.3f} on all workers, "
                  f"{max(cpu):.3f} the most on one chunk")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
