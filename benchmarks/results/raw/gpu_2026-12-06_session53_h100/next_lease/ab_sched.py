"""A/B on one machine, interleaved: the CPU batch's instances handed out one at a time
(solve_many.solve_rows_shared, the tree's) against one static share per thread (the
previous kernel, solve_rows_parallel, rebuilt here): solve_batch of IK batches alone and
the service (64 clients, 10^4 IK requests, its Python on core 0 by split_cores, the
kernel's threads on the rest).  One JSON line per measurement."""
import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())
import numpy as np  # noqa: E402
from numba import get_thread_id, prange  # noqa: E402

from caspar_backend.batch.placement import split_cores  # noqa: E402
from caspar_backend.compiled.kernels import solve_many  # noqa: E402
from caspar_backend.compiled.kernels._jit import parallel_kernel  # noqa: E402

PY = sys.argv[1] if len(sys.argv) > 1 else "0"
THREADS = [int(t) for t in (sys.argv[2] if len(sys.argv) > 2 else "15,10").split(",")]
split = split_cores(PY)
shared = solve_many.solve_rows_shared
solve_pooled = solve_many.solve_pooled


@parallel_kernel
def solve_rows_static(counter, threads, Fb0, FO, Ib0, IO, Fbuf, Ibuf, ready, put, In,
                      keep, Kept, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters,
                      fval):
    for b in prange(code.shape[0]):
        solve_pooled(b, get_thread_id(), Fb0, FO, Ib0, IO, Fbuf, Ibuf, ready, put, In,
                     keep, Kept, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters, fval)


from benchmarks import batch_measure as bm  # noqa: E402
from benchmarks.bench_batch import ik_workload  # noqa: E402

work = ik_workload(10000, seed=2)
P, _ = bm.compile_caspar(ik_workload(2), "cpu")
VARIANTS = {"shared": shared, "static": solve_rows_static}
ref = None
for name, fn in VARIANTS.items():       # compile / warm both, answers equal
    solve_many.solve_rows_shared = fn
    r = P.solve_batch(p=work.params[:512], print_level=0, tol=1e-8,
                      threads=max(THREADS))
    if ref is None:
        ref = r
    assert (r.iterations == ref.iterations).all() and (r.f == ref.f).all(), name
    bm.caspar_service(P, ik_workload(2000, seed=5), "cpu", 1e-8, 64, 1024, 0.002, None,
                      max(THREADS))
print(json.dumps(dict(split=[sorted(split.python), len(split.kernel)], equal=True)), flush=True)
for rep in range(3):
    for name, fn in VARIANTS.items():
        solve_many.solve_rows_shared = fn
        for T in THREADS:
            row = dict(variant=name, threads=T, rep=rep)
            for B in (16, 64, 256):
                ts = []
                for r in range(30):
                    a = (r * B) % (10000 - B)
                    t = time.perf_counter()
                    P.solve_batch(p=work.params[a:a + B], print_level=0, tol=1e-8, threads=T)
                    ts.append(time.perf_counter() - t)
                row[f"ik{B}_ms"] = round(1e3 * float(np.median(ts)), 3)
            out = bm.caspar_service(P, work, "cpu", 1e-8, 64, 1024, 0.002, None, T)
            row.update(per_s=round(10000 / out.total_s), p50=round(out.extra["p50_ms"], 2),
                       p99=round(out.extra["p99_ms"], 2),
                       batch=round(out.extra["mean_batch"], 1),
                       solve_ms=round(out.extra["solve_ms"], 3))
            print(json.dumps(row), flush=True)
