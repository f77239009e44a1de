"""Tuple-argument build vs flat-buffer build (proto/flatten.py) of the same interpreter
and interior point: identical results? time per IK solve, interleaved."""
import os, sys, time
import numpy as np
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import SmallSolver, FlatSolver
nlp, b = arm_ik(); problem = caspar_backend.from_casadi(nlp, **b)
args = (problem, b["lbx"], b["ubx"], b["lbg"], b["ubg"])
sv = {"tuples": SmallSolver(*args, backend="interp"), "flat": FlatSolver(*args)}
x0 = np.array([0.1, 0.2, 0.3]); T = arm_targets(200)
for s in sv.values():
    s.solve(x0, T[0])
ts = {k: [] for k in sv}; res = {k: [] for k in sv}
for t in T:
    for k, s in sv.items():
        t0 = time.perf_counter(); r = s.solve(x0, t); ts[k].append(time.perf_counter() - t0); res[k].append(r)
ref = [problem.solve(x0=x0, p=t, print_level=0) for t in T]
for k in sv:
    same = sum(int(r[1] == q.iterations and r[3] == q.f and np.array_equal(r[2], q.x)) for r, q in zip(res[k], ref))
    print(f"{k:7s} median {np.median(ts[k]) * 1e6:7.1f} us  identical to caspar (it, f, x): {same}/200  (load {os.getloadavg()[0]:.1f})")
