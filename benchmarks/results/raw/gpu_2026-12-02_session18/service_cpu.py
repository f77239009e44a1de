"""Issue 22 on the H200 host: the IK service on the CPU cores (kernel path), by
configuration; solve_batch time per call by B; Python share."""
import sys, time, json, threading, os
import numpy as np
sys.path.insert(0, '.')
from benchmarks.bench_batch import ik_workload
import benchmarks.batch_measure as bm
import caspar_backend.compiled as cc
t = time.perf_counter(); cc.warmup(); print("warmup", time.perf_counter() - t, flush=True)
w = ik_workload(20000)
P, _ = bm.compile_caspar(w, 'cpu')
for B in (16, 32, 64, 128, 256):
    P.solve_batch(p=w.params[:B], print_level=0)
    n = 0; t = time.perf_counter(); c = time.process_time()
    for k in range(0, 4096, B):
        r = P.solve_batch(p=w.params[k:k + B], print_level=0); n += 1
    dt = time.perf_counter() - t
    print(f"solve_batch B={B}: {dt / n * 1e3:.2f} ms/call {dt / (n * B) * 1e6:.1f} us/inst "
          f"{n * B / dt:.0f}/s path {set(r.path)}", flush=True)
ref = bm.caspar_batch(P, w.head(10000), 'cpu', 1e-8)
for si in (None, 0.0005):
    if si:
        sys.setswitchinterval(si)
    for workers, mw in ((1, 0.002), (2, 0.002), (1, 0.0005), (4, 0.001)):
        o = bm.caspar_service(P, w.head(10000), 'cpu', 1e-8, 64, 1024, mw, workers)
        same = sum(a == b for a, b in zip(o.status, ref.status))
        print(f"service switch={sys.getswitchinterval()} workers={workers} max_wait={mw}: "
              f"{10000 / o.total_s:.0f}/s p50 {o.extra['p50_ms']:.2f} p99 "
              f"{o.extra['p99_ms']:.2f} ms batch {o.extra['mean_batch']:.1f} same {same}",
              flush=True)
