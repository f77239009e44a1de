"""Session 43: where the host's time goes in a GPU re-solve of case9241_pegase (cProfile,
timing_statistics off), and the per-call host cost of the launch paths."""
import cProfile, io, os, pstats, sys, time
sys.path.insert(0, os.getcwd())
import caspar_backend as cb
from benchmarks.cases import acopf_cases
import cupy as cp

case = sys.argv[1] if len(sys.argv) > 1 else "case9241_pegase"
built = list(acopf_cases(10 ** 6, {case}))[0].build()
p = cb.from_casadi(built[1], **built[2])
opts = dict(tol=1e-6, print_level=0, max_iter=3000, device="cuda", timing_statistics="no")
for k in range(2):
    t = time.perf_counter(); r = p.solve(**opts); cp.cuda.runtime.deviceSynchronize()
    print("solve", k, r.status, r.iterations, round(time.perf_counter() - t, 3), flush=True)
pr = cProfile.Profile()
t = time.perf_counter()
pr.enable(); r = p.solve(**opts); cp.cuda.runtime.deviceSynchronize(); pr.disable()
el = time.perf_counter() - t
print("profiled", r.iterations, round(el, 3), flush=True)
for key in ("tottime", "cumulative"):
    s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats(key).print_stats(45)
    print(s.getvalue()[:12000])
