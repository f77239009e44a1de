"""Which functions the first call spends its compile time in (Numba's compile events;
nested compiles are included in their caller's time, so 'self' subtracts children)."""
import sys, time
import numpy as np
from numba.core import event as ev
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import FlatSolver
nlp, b = arm_ik(); problem = caspar_backend.from_casadi(nlp, **b)
s = FlatSolver(problem, b["lbx"], b["ubx"], b["lbg"], b["ubg"])
rec = ev.RecordingListener()
ev.register("numba:compile", rec)
c0 = time.process_time()
s.solve([0.1, 0.2, 0.3], arm_targets(1)[0])
print("total CPU", time.process_time() - c0)
stack, tot = [], {}
for ts, e in rec.buffer:
    name = e.data["dispatcher"].py_func.__name__ if "dispatcher" in e.data else str(e.data)[:30]
    if e.is_start:
        stack.append([name, ts, 0.0])
    else:
        n, t0, child = stack.pop()
        d = ts - t0
        tot[n] = tot.get(n, 0) + d - child
        if stack:
            stack[-1][2] += d
for n, t in sorted(tot.items(), key=lambda kv: -kv[1])[:15]:
    print(f"{n:24s} self {t:6.1f} s wall")
