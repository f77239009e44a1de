import time, cProfile, pstats, sys
import numpy as np
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import ik_workload
work = ik_workload(4096, seed=2)
P, _ = bm.compile_caspar(ik_workload(2), "cpu")
P.solve_batch(p=work.params[:64], print_level=0, tol=1e-8)
for B in (1, 8, 18, 64, 256, 1024, 4096):
    ts = []
    for r in range(30 if B < 256 else 5):
        t = time.perf_counter(); res = P.solve_batch(p=work.params[:B], print_level=0, tol=1e-8); l = list(res); ts.append(time.perf_counter() - t)
    print(B, "median ms %.3f  per inst us %.1f" % (np.median(ts)*1e3, np.median(ts)/B*1e6), flush=True)
if len(sys.argv) > 1:
    B = int(sys.argv[1])
    pr = cProfile.Profile(); pr.enable()
    for r in range(200):
        list(P.solve_batch(p=work.params[:B], print_level=0, tol=1e-8))
    pr.disable()
    pstats.Stats(pr).sort_stats("cumulative").print_stats(45)
