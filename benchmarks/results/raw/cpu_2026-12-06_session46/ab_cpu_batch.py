"""IK B = 2,048 and Van der Pol B = 64 through the CPU batch kernel on one thread (the CUDA kernel's per-thread code path, on the CPU): us per instance-iteration, the tree in the cwd."""
import os, sys, time, json
sys.path.insert(0, os.getcwd())
import numpy as np
from benchmarks.bench_batch import ik_workload, vdp_workload
import benchmarks.batch_measure as bm
out = {}
for name, w in (("ik", ik_workload(2048, seed=2)), ("vdp", vdp_workload(64))):
    P, _ = bm.compile_caspar(w, "cpu")
    P.solve_batch(p=w.params, print_level=0, tol=1e-8, threads=1, device="cpu")
    ts = []
    for _ in range(5):
        t = time.perf_counter(); r = P.solve_batch(p=w.params, print_level=0, tol=1e-8, threads=1, device="cpu"); ts.append(time.perf_counter() - t)
    its = int(np.sum(r.iterations))
    out[name] = dict(us_per_it=round(min(ts) / its * 1e6, 3), its=its, fsum=repr(float(np.sum(r.f))), paths=sorted(set(r.path)))
print(json.dumps(out))
