"""A solve stopped before its first iteration (max_iter=0: the solve's setup, the least-
squares multipliers' factorization and so cuDSS's analysis) ahead of the first real solve.
python prepared.py CASE"""
import os, sys, time
os.environ["CASPAR_PROBLEM_CACHE"] = "0"
sys.path.insert(0, os.getcwd())
case = sys.argv[1]
import caspar_backend as cb
from benchmarks.cases import acopf_cases
built = list(acopf_cases(10 ** 6, {case}))[0].build()
t = time.perf_counter()
problem = cb.from_casadi(built[1], **built[2])
problem.evaluator("cuda")
b = time.perf_counter() - t
kw = dict(device="cuda", tol=1e-6, print_level=0, max_iter=3000)
t = time.perf_counter(); r0 = problem.solve(**{**kw, "max_iter": 0}); p0 = time.perf_counter() - t
out = [f"{case}: build {b:.3f} prepare(max_iter=0) {p0:.3f} (setup {r0.timings.get('setup', 0):.3f} "
       f"analysis {r0.extra.get('analysis_seconds', 0):.3f})"]
for k in range(3):
    t = time.perf_counter(); r = problem.solve(**kw); s = time.perf_counter() - t
    out.append(f"solve{k} {s:.3f} it {r.iterations} {r.status} f {r.f:.10g} setup "
               f"{r.timings.get('setup', 0):.3f} analysis {r.extra.get('analysis_seconds', 0):.3f}")
print("PREPARED " + " | ".join(out), flush=True)
