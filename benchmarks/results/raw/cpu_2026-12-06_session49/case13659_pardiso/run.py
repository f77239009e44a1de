import sys, os, time
sys.path.insert(0, os.getcwd())
from benchmarks.cases import acopf_cases
import caspar_backend as cb
name = sys.argv[1]; solver = sys.argv[2]
case = next(acopf_cases(100000, names={name}))
kind, nlp, args, extra = case.build()
P = cb.from_casadi(nlp, **args)
t = time.perf_counter()
opts = dict(tol=1e-6, print_level=5, device="cpu", max_wall_time=1500)
if solver != "default":
    opts["linear_solver"] = solver
r = P.solve(**opts)
print("RESULT", name, solver, r.status, r.iterations, repr(float(r.f)), f"{time.perf_counter() - t:.1f}s", flush=True)
