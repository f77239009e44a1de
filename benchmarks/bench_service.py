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

``--python-cpus 0``: the process's Python threads (the clients, the service's worker,
this one) on those cores, the kernel's native threads on the others
(:func:`caspar_backend.batch.placement.split_cores`, called before any client or service
thread exists; ``--threads`` then defaults to one per kernel core).
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
        from caspar_backend.batch.placement import split_cores

        split_cores(a.python_cpus)
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
