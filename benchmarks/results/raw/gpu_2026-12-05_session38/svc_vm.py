"""Service sweep on the CPU of the GPU host: workers x max_wait x kernel threads, 64 clients, IK."""
import os, sys, time, json
sys.path.insert(0, os.getcwd())
import numpy as np
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import ik_workload
work = ik_workload(3000, seed=2)
P, _ = bm.compile_caspar(work, 'cpu')
bm.caspar_service(P, work.head(500), 'cpu', 1e-8, 64, 1024, 0.002)
for workers in (1, 2):
    for wait in (0.002,):
        for kt in (1, 2):
            o = bm.caspar_service(P, work, 'cpu', 1e-8, 64, 1024, wait, workers, kt)
            e = o.extra
            print(json.dumps(dict(workers=workers, max_wait=wait, kernel_threads=kt, per_s=round(3000 / o.total_s), p50=round(e['p50_ms'], 2), p99=round(e['p99_ms'], 2), batch=round(e['mean_batch'], 1), solve_ms=round(e['solve_ms'], 2), queue_ms=round(e['queue_ms'], 2), solved=int(sum(s == 'Solve_Succeeded' for s in o.status)))), flush=True)
