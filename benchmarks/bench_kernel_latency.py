"""Benchmark (issue 22): the CUDA batch kernel's time, whole and alone, on Van der Pol
collocation (N = 50) and the three-link arm IK.

    python benchmarks/bench_kernel_latency.py [--case vdp|ik] [--sizes 1,132,1000]
        [--repeats 3] [--same]

For each size B, one JSON line:

* ``solve_batch_s``: ``solve_batch(..., device='cuda')`` of B instances, warm (the best
  of ``--repeats``; the call's set-up, launch and read-back included), checked to have
  run every instance in the kernel on the GPU (``result.path`` 'kernel' and
  ``result.extra['device']`` 'cuda': ``solve_batch``'s default device is the CPU);
* ``kernel_ms``: the kernel's launch on fresh workspaces and its result's read-back
  (``cuda.launch.solve_on_device``; the best of ``--repeats``), with
  ``ms_per_max_iteration`` = kernel_ms / the most iterations any instance took: one
  thread's pace, since a launch lasts as long as its slowest thread;
* the iterations (sum, max, mean) and the objective sum, to compare trees.

``--same``: B copies of the first instance instead of B different ones (every thread
the same work).  ``--threads 1,8,32``: the kernel alone once per instances-per-block value
(one JSON line each; default the launch's own choice); ``--lanes 1,8,32``: the kernel
alone once per team size (threads per instance, ``caspar_backend.compiled.cuda.team``); ``--columns``: the kernel alone
on workspaces with the instances in columns (``interleaved``: a warp's loads of one
entry coalesced; its kernel is compiled on first use, minutes) instead of
``solve_batch``'s arrangement.  Run from the root of the tree to measure (``cd <tree> && python
<this file>``: the tree in the current directory is imported), so that two checkouts
can be interleaved in one session.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())

import numpy as np  # noqa: E402


def workload(case: str, B: int):
    from benchmarks.bench_batch import ik_workload, vdp_workload

    return vdp_workload(B) if case == "vdp" else ik_workload(B, seed=2)


def kernel_alone(problem, params, repeats: int, threads=None, columns=None, x0=None,
                 lanes: int = 1):
    """(best ms, its KernelResult) of :func:`caspar_backend.compiled.cuda.launch.
    solve_on_device` on fresh workspaces: the kernel's launch and its result's read-back,
    without ``solve_batch``'s checking, grouping and answer building; ``threads`` per
    block (None: the launch's choice), instances in columns or rows (None: as
    ``solve_batch`` arranges them), starting at ``x0`` (None: the problem's), ``lanes``
    threads per instance (``cuda.team``)."""
    from caspar_backend.batch.inputs import batch_inputs
    from caspar_backend.compiled.cuda.group import COLUMNS, kernel_plan
    from caspar_backend.compiled.cuda.launch import solve_on_device
    from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces
    from caspar_backend.compiled.options import option_vector

    sub = batch_inputs(problem, params.shape[0], p=params,
                       **({} if x0 is None else {"x0": x0}))
    plan = kernel_plan(problem, {"tol": 1e-8}, sub)
    if plan.reason:
        raise RuntimeError(plan.reason)
    O = option_vector(plan.opts)
    best, res = float("inf"), None
    for _ in range(repeats):
        ws = DeviceWorkspaces(plan.layout, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg,
                              sub.ubg, interleaved=COLUMNS if columns is None else columns,
                              shared_structure=True)
        t = time.perf_counter()
        # (without threads or lanes: a tree whose launch has no such argument can be
        # timed too)
        kw = {} if lanes == 1 else {"lanes": lanes}
        r = solve_on_device(ws, O, **kw) if threads is None else \
            solve_on_device(ws, O, threads, **kw)
        best = min(best, 1e3 * (time.perf_counter() - t))
        res = r
    return best, res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", choices=("vdp", "ik"), default="vdp")
    ap.add_argument("--sizes", default="1,132,1000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--same", action="store_true")
    ap.add_argument("--threads", default="", help="threads per block, comma-separated")
    ap.add_argument("--columns", action="store_true")
    ap.add_argument("--lanes", default="1", help="threads per instance, comma-separated")
    a = ap.parse_args(argv)
    from benchmarks import batch_measure as bm

    sizes = [int(s) for s in a.sizes.split(",")]
    pool = workload(a.case, max(sizes)).params
    P, _ = bm.compile_caspar(workload(a.case, 2), "cuda")
    for B in sizes:
        params = np.repeat(pool[:1], B, axis=0) if a.same else pool[:B]
        P.solve_batch(p=params, print_level=0, tol=1e-8, device="cuda")
        best = float("inf")
        for _ in range(a.repeats):
            t = time.perf_counter()
            r = P.solve_batch(p=params, print_level=0, tol=1e-8, device="cuda")
            best = min(best, time.perf_counter() - t)
        where = set(zip(r.path, r.extra["device"]))
        if where != {("kernel", "cuda")}:
            raise RuntimeError(f"not every instance ran in the CUDA kernel: {where}")
        for threads, lanes in [(t, c) for t in [int(t) for t in a.threads.split(",") if t]
                               or [None] for c in [int(c) for c in a.lanes.split(",")]]:
            ms, k = kernel_alone(P, params, a.repeats, threads, a.columns or None,
                                 lanes=lanes)
            iters = k.iters
            print(json.dumps(dict(
                tree=os.path.basename(os.getcwd()), case=a.case, B=B, same=a.same,
                solve_batch_s=round(best, 4), columns=a.columns, threads=threads,
                lanes=lanes,
                kernel_ms=round(ms, 2), iterations=int(iters.sum()),
                max_iterations=int(iters.max()), mean_iterations=round(float(iters.mean()), 2),
                ms_per_max_iteration=round(ms / max(1, int(iters.max())), 3),
                objective_sum=float(np.sum(r.f)),
                # the kernel alone's answers against solve_batch's (same instances)
                kernel_same_iterations=bool(np.array_equal(iters, r.iterations)),
                kernel_max_rel_df=float(np.max(np.abs(k.f - r.f) / np.maximum(1.0, np.abs(r.f))))
            )), flush=True)


if __name__ == "__main__":
    main()
