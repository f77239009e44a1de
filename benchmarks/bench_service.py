"""Benchmark: the SolverService alone -- ``--clients`` threads sending ``--requests`` IK
targets one at a time (closed loop) to one service on ``device='cpu'``.

Each run prints one JSON line: solves/s, p50/p99 latency (ms), mean batch size, and the
answers against caspar's single solve of the same target (= status, = iterations, max
relative objective difference; the single solves are made once and kept in ``--cache``).
``--stub``: ``solve_batch`` replaced by a stand-in returning precomputed rows (answers
not checked), so that the service's own cost -- futures, queue, checking, waking the
clients -- is measured without the kernel.  Run from the root of the tree to measure
(``cd <tree> && python <this file>``: the tree in the current directory is imported), so
that two checkouts can be interleaved on a noisy machine.

    python benchmarks/bench_service.py --repeat 2 [--stub] [--workers W] [--threads T]
        [--max-wait S]

``--threads T``: each batch's kernel calls on T threads (``solve_batch``'s ``threads``;
default every core) -- with T = 1 each worker solves its batches on its own thread alone.

``--python-cpus 0-1``: the process's Python threads (the clients, the service's worker,
this one) on those cores, the kernel's native threads on the others: the kernel's thread
pool is started first, from this thread with its affinity set to the other cores (a
thread starts with its creator's affinity; Numba's 'workqueue' layer, whose pool is one
per process), then this thread moves to the given cores before any client or service
thread exists.  Hand-offs of the GIL between threads on few
cores cost less than between threads spread over many (raw gpu_2026-12-06_session52_h100,
s52d: the kernel stubbed, 22k requests/s on two cores of the H100 host, 11.5-11.9k on
all sixteen).  Pass ``--threads`` with it (the default counts the Python threads' cores).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())

import numpy as np  # noqa: E402


def stub_of(P, params):
    """A ``solve_batch`` stand-in: the first B rows of a batch solved once."""
    from caspar_backend.batch.result import BatchResult

    full = P.solve_batch(p=params[:1024], print_level=0, tol=1e-8)

    def stub(**kw):
        B = kw["p"].shape[0]
        return BatchResult(x=full.x[:B].copy(), f=full.f[:B].copy(), g=full.g[:B].copy(),
                           lam_g=full.lam_g[:B].copy(), lam_x=full.lam_x[:B].copy(),
                           status=full.status[:B], iterations=full.iterations[:B].copy(),
                           message=full.message[:B], path=full.path[:B],
                           reason=full.reason[:B], timings={})
    return stub


def cores_of(spec: str) -> set:
    """The cores of a list like ``0-1,4`` (taskset's form)."""
    out = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def split_cores(python: set) -> None:
    """The kernel's native threads on this process's cores but ``python``, then this
    thread (and every thread it starts after) on ``python`` (module doc)."""
    import numba

    from caspar_backend.compiled.kernels.solve_many import solve_rows_parallel  # noqa: F401

    every = os.sched_getaffinity(0)
    # Numba's 'workqueue' layer: one pool for the process, its threads started here.
    # OpenMP's teams belong to the thread that opens a parallel region, so the service's
    # worker would start its own, on the Python cores (seen on the VM: its threads'
    # affinity was the worker's, the pool started here idle)
    numba.config.THREADING_LAYER = "workqueue"
    if not python < every:
        raise SystemExit(f"--python-cpus {sorted(python)} must be a proper subset of this "
                         f"process's cores {sorted(every)}")
    os.sched_setaffinity(0, every - python)
    _start_pool(numba.config.NUMBA_NUM_THREADS)
    os.sched_setaffinity(0, python)


def _start_pool(threads: int) -> None:
    """Run a parallel loop on ``threads`` threads: the threading layer starts its pool
    (OpenMP and TBB start their threads at the first parallel region)."""
    import numba

    @numba.njit(parallel=True)
    def touch(a):
        for i in numba.prange(a.size):
            a[i] = i

    numba.set_num_threads(threads)
    touch(np.zeros(64 * threads))


def main(argv=None) -> None:
    from benchmarks import batch_measure as bm
    from benchmarks.bench_batch import ik_workload

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--max-wait", type=float, default=0.002)
    ap.add_argument("--stub", action="store_true")
    ap.add_argument("--cache", default="/tmp/caspar_service_single_{n}.npz")
    ap.add_argument("--python-cpus", default="",
                    help="cores of the Python threads, e.g. 0-1 (the kernel's: the rest)")
    a = ap.parse_args(argv)
    if a.python_cpus:
        split_cores(cores_of(a.python_cpus))
    work = ik_workload(a.requests, seed=2)
    P, _ = bm.compile_caspar(ik_workload(2), "cpu")
    single = None
    if a.stub:
        P.solve_batch = stub_of(P, work.params)
    else:
        path = a.cache.format(n=a.requests)
        if os.path.exists(path):
            z = np.load(path, allow_pickle=True)
            single = bm.Outcome(list(z["status"]), z["it"], z["f"], 0.0)
        else:
            single = bm.caspar_single(P, work, "cpu", 1e-8)
            np.savez(path, status=np.array(single.status, dtype=object),
                     it=single.iterations, f=single.f)
    # a warm-up run (kernel threads, first batches)
    bm.caspar_service(P, ik_workload(2000, seed=5), "cpu", 1e-8, a.clients, 1024,
                      a.max_wait, a.workers, a.threads)
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        out = bm.caspar_service(P, work, "cpu", 1e-8, a.clients, 1024, a.max_wait,
                                a.workers, a.threads)
        row = dict(tree=os.path.basename(os.getcwd()), stub=a.stub,
                   per_s=round(a.requests / out.total_s),
                   p50=round(out.extra["p50_ms"], 2), p99=round(out.extra["p99_ms"], 2),
                   batch=round(out.extra["mean_batch"], 1),
                   solve_ms=round(out.extra["solve_ms"], 3),
                   queue_ms=round(out.extra["queue_ms"], 3), note=out.extra["note"],
                   wall_s=round(time.perf_counter() - t0, 2))
        if single is not None:
            c = bm.compare(out, single)
            row.update(st=c["status"], it=c["iter"], df=c["df"])
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
