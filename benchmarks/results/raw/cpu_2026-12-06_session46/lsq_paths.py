import time, sys, numpy as np
sys.path.insert(0, "/work/main")
from benchmarks.cases import lsq_problem
import caspar_backend as cb
nlp, args, _ = lsq_problem(int(sys.argv[1]))
P = cb.from_casadi(nlp, **args)
for cp in ["yes", "no", "yes", "no", "yes", "no"]:
    t=time.perf_counter(); r = P.solve(tol=1e-8, print_level=0, device="cpu", compiled_path=cp); print(cp, round(time.perf_counter()-t, 3), r.iterations, r.status, r.extra.get("path"), repr(r.f))
