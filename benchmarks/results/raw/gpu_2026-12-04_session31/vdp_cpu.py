"""VdP collocation (N = 50) B = 1000 solve_batch on the CPU: median of 3 (and IK B = 4096)."""
import os, sys, time
sys.path.insert(0, os.getcwd())
import numpy as np
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import vdp_workload, ik_workload
B = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
for name, work in (("vdp", vdp_workload(B)), ("ik4096", ik_workload(4096, seed=2))):
    P, _ = bm.compile_caspar(work, "cpu")
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        r = P.solve_batch(p=work.params, print_level=0, tol=1e-8)
        ts.append(time.perf_counter() - t)
    print(os.path.basename(os.getcwd()), name, work.params.shape[0], "median %.3f s" % np.median(ts), [round(x, 3) for x in ts], set(r.path), flush=True)
