import time, numpy as np, sys, os
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import vdp_workload, ik_workload
res = {}
for name, w, B, reps in (("vdp", vdp_workload(64), 64, 5), ("ik", ik_workload(2048), 2048, 5)):
    P, _ = bm.compile_caspar(w, "cpu")
    r = P.solve_batch(p=w.params[:B], print_level=0, tol=1e-8)
    ts = []
    for i in range(reps):
        t = time.perf_counter(); r = P.solve_batch(p=w.params[:B], print_level=0, tol=1e-8); ts.append(time.perf_counter() - t)
    it = int(np.sum(r.iterations))
    print(os.path.basename(os.getcwd()), name, "B", B, "median s", round(float(np.median(ts)), 4), "min", round(min(ts), 4), "us/iter", round(1e6 * min(ts) / it, 2), "iters", it, "fsum", repr(float(np.sum(r.f))), set(r.path), flush=True)
