import sys, time, numpy as np, os
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import vdp_workload
w = vdp_workload(int(sys.argv[1]))
P, _ = bm.compile_caspar(w, "cuda")
for i in range(int(sys.argv[2])):
    t = time.perf_counter(); r = P.solve_batch(p=w.params, print_level=0, tol=1e-8)
    print(os.getcwd(), "vdp", w.params.shape[0], round(time.perf_counter() - t, 4), set(r.path), int(np.sum(r.iterations)), int(np.max(r.iterations)), repr(float(np.sum(r.f))), flush=True)
