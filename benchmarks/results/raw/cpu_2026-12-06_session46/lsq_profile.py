import time, sys, numpy as np
sys.path.insert(0, "/work/main")
from benchmarks.cases import lsq_problem
import caspar_backend as cb
nlp, args, _ = lsq_problem(1000)
P = cb.from_casadi(nlp, **args)
for i in range(2):
    t=time.perf_counter(); r = P.solve(tol=1e-8, print_level=0, device="cpu", compiled_path="no", timing_statistics="yes"); print("solve", time.perf_counter()-t, r.iterations, r.status)
print({k: v for k, v in r.extra.items() if "tim" in k or "phase" in k})
import cProfile, pstats
cProfile.run("P.solve(tol=1e-8, print_level=0, device='cpu', compiled_path='no')", "/tmp/lsq.prof")
pstats.Stats("/tmp/lsq.prof").sort_stats("tottime").print_stats(15)
