"""Host study: solve_batch(device='cpu') of small IK batches, by threads (JSON lines)."""
import json, os, sys, time
import numpy as np
sys.path.insert(0, os.getcwd())
from benchmarks.bench_batch import ik_workload
import benchmarks.batch_measure as bm
import numba
w = ik_workload(4096, seed=2)
P, _ = bm.compile_caspar(w, "cpu")
env = {k: os.environ.get(k, "") for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "NUMBA_THREADING_LAYER")}
for B in (1, 2, 4, 5, 8, 10, 16, 32, 64, 256, 1024):
    for T in (1, 2, 4, 8, 16):
        if T > 1 and B <= 4:
            continue
        ts = []
        for r in range(15):
            a = (r * B) % 2048
            t = time.perf_counter()
            P.solve_batch(p=w.params[a:a + B], print_level=0, tol=1e-8, threads=T)
            ts.append(time.perf_counter() - t)
            time.sleep(0.002)     # a service's gap between batches
        print(json.dumps(dict(B=B, threads=T, min_ms=round(1e3 * min(ts), 3),
                              med_ms=round(1e3 * float(np.median(ts)), 3), env=env,
                              layer=numba.threading_layer(), cores=len(os.sched_getaffinity(0)))),
              flush=True)
