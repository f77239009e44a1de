"""case9241_pegase GPU re-solve: phase timings and a cProfile by own time (where the host's
"other" milliseconds go)."""
import cProfile, pstats, sys, time
sys.path.insert(0, ".")
from benchmarks.cases import acopf_cases
import caspar_backend as cb
case = next(acopf_cases(100000, names={"case9241_pegase"}))
_, nlp, args, extra = case.build()
P = cb.from_casadi(nlp, **{k: v for k, v in args.items() if k in ("lbx", "ubx", "lbg", "ubg")})
x0 = args["x0"]
for _ in range(2):
    r = P.solve(x0=x0, device="cuda", tol=1e-6, print_level=0)
print(r.status, r.iterations, {k: round(v / r.iterations * 1e3, 3) for k, v in r.timings.items()}, "ms/it", flush=True)
pr = cProfile.Profile()
pr.enable()
r = P.solve(x0=x0, device="cuda", tol=1e-6, print_level=0)
pr.disable()
print("under cProfile:", {k: round(v / r.iterations * 1e3, 3) for k, v in r.timings.items()}, "ms/it")
st = pstats.Stats(pr)
st.sort_stats("tottime").print_stats(60)
st.sort_stats("cumulative").print_stats(70)
