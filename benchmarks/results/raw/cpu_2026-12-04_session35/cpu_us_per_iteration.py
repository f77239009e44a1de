import os, sys, time, json, numpy as np
sys.path.insert(0, os.getcwd())
from benchmarks.bench_batch import vdp_workload, ik_workload
import benchmarks.batch_measure as bm
case = sys.argv[1]
w = vdp_workload(64) if case == "vdp" else ik_workload(256, seed=2)
P, _ = bm.compile_caspar(w, "cpu")
best = 1e9
for r in range(5):
    t = time.perf_counter(); res = P.solve_batch(p=w.params, print_level=0, tol=1e-8, threads=1); dt = time.perf_counter() - t
    best = min(best, dt)
it = int(np.sum(res.iterations))
print(json.dumps(dict(tree=os.path.basename(os.getcwd()), case=case, best_s=round(best, 4), iterations=it, us_per_iteration=round(1e6 * best / it, 2))))
