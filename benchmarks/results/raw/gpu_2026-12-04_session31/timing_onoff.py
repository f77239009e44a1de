"""case9241_pegase on the GPU: solve wall time with timing_statistics on / off (the ~8
stream waits per iteration), 3 re-solves each, interleaved."""
import sys, time
import numpy as np
sys.path.insert(0, ".")
from benchmarks.cases import acopf_cases
import caspar_backend as cb
name = sys.argv[1] if len(sys.argv) > 1 else "case9241_pegase"
case = next(acopf_cases(100000, names={name}))
_, nlp, args, extra = case.build()
P = cb.from_casadi(nlp, **{k: v for k, v in args.items() if k in ("lbx", "ubx", "lbg", "ubg")})
x0 = args["x0"]
r = P.solve(x0=x0, device="cuda", tol=1e-6, print_level=0)
print("first", r.status, r.iterations, r.f, flush=True)
for rep in range(3):
    for ts in (True, False):
        t = time.perf_counter()
        r = P.solve(x0=x0, device="cuda", tol=1e-6, print_level=0, timing_statistics=ts)
        dt = time.perf_counter() - t
        print(f"timing_statistics={ts}: {dt:.3f} s, {r.iterations} it, {dt / r.iterations * 1e3:.2f} ms/it, f {r.f:.6f}", flush=True)
