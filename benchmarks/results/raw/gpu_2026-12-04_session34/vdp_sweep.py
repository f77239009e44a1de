import sys, time, numpy as np, os
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import vdp_workload
from caspar_backend.compiled.cuda import launch
tpb = os.environ.get("TPB")
if tpb:
    launch.threads_per_block = lambda B, sms: int(tpb)
W = vdp_workload(4000)
P, _ = bm.compile_caspar(vdp_workload(1), "cuda")
for B in [int(a) for a in sys.argv[1:]]:
    p = W.params[:B]
    P.solve_batch(p=p, print_level=0, tol=1e-8)
    ts = []
    for rep in range(3):
        t = time.perf_counter(); r = P.solve_batch(p=p, print_level=0, tol=1e-8); ts.append(time.perf_counter() - t)
    it = np.asarray(r.iterations)
    print("sweep tpb", tpb, "B", B, "times", [round(x, 4) for x in ts], "maxit", it.max(), "meanit", round(it.mean(), 2), set(r.path), "ms/maxit", round(1e3 * min(ts) / it.max(), 2), flush=True)
