"""On the device (staged: casadi): the SolverService on device='cuda' with 1, 2 and 3
workers, interleaved over rounds -- 64 client threads sending 10,000 IK targets one at a
time (benchmarks.batch_measure.caspar_service, bench_batch's ik_service row).  With each
thread's batches on its own stream (compiled/cuda/streams.py) a second worker's kernel can
run while the first worker's Python builds answers.  Prints one JSON line per run:
solves/s, p50/p99 ms, mean batch, ms per solve_batch call, and the largest difference of
f from the first run's (each instance's solve is independent of its batch: 0 expected).
argv: rounds (default 3)."""
import json
import sys
import time

import numpy as np

sys.path.insert(0, ".")
from benchmarks import batch_measure as bm  # noqa: E402
from benchmarks.bench_batch import ik_workload  # noqa: E402

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
work = ik_workload(10000, seed=2)
P, build = bm.compile_caspar(ik_workload(2), "cuda")
bm.caspar_batch(P, ik_workload(256, seed=1), "cuda", 1e-8)     # the kernel loaded
ref = None
for r in range(rounds):
    for w in (1, 2, 3):
        t = time.perf_counter()
        o = bm.caspar_service(P, work, "cuda", 1e-8, 64, 1024, 0.002, workers=w)
        if ref is None:
            ref = o.f
        x = o.extra
        print(json.dumps(dict(round=r, workers=w, per_s=round(work.size / o.total_s),
                              p50_ms=round(x["p50_ms"], 2), p99_ms=round(x["p99_ms"], 2),
                              mean_batch=round(x["mean_batch"], 1),
                              solve_ms=round(x["solve_ms"], 2),
                              solved=int(np.sum(np.asarray(o.status) == "Solve_Succeeded")),
                              df=float(np.nanmax(np.abs(o.f - ref))),
                              wall=round(time.perf_counter() - t, 1))), flush=True)
