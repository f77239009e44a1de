"""caspar end to end (build + solve) in one process: model untimed, then from_casadi +
evaluator('cuda') (build) and the solve, as benchmarks/measure.py times them."""
import json, sys, time
sys.path.insert(0, '.')
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
name = sys.argv[1]
d = acopf_data(load_pglib(name))
nlp, args = acopf_casadi(d); args.pop("data", None)
t0 = time.perf_counter()
import caspar_backend as cb
P = cb.from_casadi(nlp, **args); P.evaluator("cuda")
build = time.perf_counter() - t0
t = time.perf_counter()
r = P.solve(tol=1e-6, print_level=0, device="cuda", max_wall_time=150)
solve = time.perf_counter() - t
print(json.dumps(dict(case=name, build=build, solve=solve, total=build + solve, status=r.status,
                      it=int(r.iterations), f=float(r.f),
                      analysis=r.extra.get("analysis_seconds"))))
