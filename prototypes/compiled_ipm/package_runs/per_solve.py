# per-solve time, same process, interleaved: prototype (tuples) vs package (flat) vs
# Problem.solve vs IPOPT, 200 IK targets; both compiled modules loaded from their caches.
import os, sys, time
import numpy as np
sys.path.insert(0, "/work/wt_compiled/prototypes/compiled_ipm")
import casadi as ca
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from caspar_backend.compiled import solve_compiled
from proto.builder import SmallSolver
nlp, b = arm_ik()
pr = caspar_backend.from_casadi(nlp, **b)
x0 = np.array([0.1, 0.2, 0.3])
T = arm_targets(200)
t0 = time.process_time()
s = SmallSolver(pr, b['lbx'], b['ubx'], b['lbg'], b['ubg'])
s.solve(x0, T[0])
t1 = time.process_time()
solve_compiled(pr, x0, T[0], print_level=0)
t2 = time.process_time()
print(f"cache load + first call CPU: prototype {t1-t0:.2f}s, package {t2-t1:.2f}s")
S = ca.nlpsol("S", "ipopt", nlp, {"ipopt.print_level": 0, "print_time": 0, "ipopt.sb": "yes"})
tim = {k: [] for k in ("proto", "pkg", "caspar", "ipopt")}
same = 0
for t in T:
    a = time.perf_counter(); st, it, x, f = s.solve(x0, t); tim["proto"].append(time.perf_counter() - a)
    a = time.perf_counter(); r = solve_compiled(pr, x0, t, print_level=0); tim["pkg"].append(time.perf_counter() - a)
    a = time.perf_counter(); S(x0=x0, p=t, lbx=b['lbx'], ubx=b['ubx'], lbg=b['lbg'], ubg=b['ubg']); tim["ipopt"].append(time.perf_counter() - a)
    if len(tim["caspar"]) < 50:
        a = time.perf_counter(); e = pr.solve(x0=x0, p=t, print_level=0); tim["caspar"].append(time.perf_counter() - a)
    same += (it == r.iterations and f == r.f and np.array_equal(x, r.x))
ip = np.median(tim["ipopt"])
for k, v in tim.items():
    print(f"{k:7s} median {np.median(v)*1e6:9.0f} us  p99 {np.percentile(v, 99)*1e6:9.0f} us  median/IPOPT {np.median(v)/ip:.4f}  (n={len(v)})")
print(f"package == prototype (iterations, x, f bit for bit): {same}/200; load {os.getloadavg()[0]:.1f}")
