"""Where a fresh process's first GPU solve goes: build, then the first solve under cProfile.
python first_profile.py CASE OUTDIR"""
import cProfile, io, os, pstats, sys, time
os.environ["CASPAR_PROBLEM_CACHE"] = "0"
sys.path.insert(0, os.getcwd())
case, out = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
import caspar_backend as cb
from benchmarks.cases import acopf_cases
built = list(acopf_cases(10 ** 6, {case}))[0].build()
t1 = time.perf_counter()
problem = cb.from_casadi(built[1], **built[2])
problem.evaluator("cuda")
t2 = time.perf_counter()
pr = cProfile.Profile()
pr.enable()
r = problem.solve(device="cuda", tol=1e-6, print_level=0, max_iter=3000)
pr.disable()
t3 = time.perf_counter()
r2 = problem.solve(device="cuda", tol=1e-6, print_level=0, max_iter=3000)
t4 = time.perf_counter()
print(f"{case}: model {t1-t0:.3f} build {t2-t1:.3f} first(profiled) {t3-t2:.3f} "
      f"re {t4-t3:.3f} it {r.iterations}/{r2.iterations} status {r.status}", flush=True)
s = io.StringIO()
st = pstats.Stats(pr, stream=s); st.sort_stats("cumulative").print_stats(70)
st.sort_stats("tottime").print_stats(40)
open(os.path.join(out, f"first_{case}.prof.txt"), "w").write(s.getvalue())
pr.dump_stats(os.path.join(out, f"first_{case}.prof"))
