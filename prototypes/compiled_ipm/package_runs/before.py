# "before": the prototype's tuple-of-arrays SmallSolver, cold compile into a fresh cache dir
import os, sys, time, resource
sys.path.insert(0, "/work/wt_compiled/prototypes/compiled_ipm")
import numpy as np
c0, w0 = time.process_time(), time.perf_counter()
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import SmallSolver
nlp, b = arm_ik()
pr = caspar_backend.from_casadi(nlp, **b)
s = SmallSolver(pr, b['lbx'], b['ubx'], b['lbg'], b['ubg'])
c1, w1 = time.process_time(), time.perf_counter()
st, it, x, f = s.solve([0.1, 0.2, 0.3], arm_targets(1)[0])
c2, w2 = time.process_time(), time.perf_counter()
print(f"before(tuples): setup {w1-w0:.2f}s wall; first solve {w2-w1:.1f}s wall / {c2-c1:.1f}s CPU; status {st} it {it}; load {os.getloadavg()[0]:.1f}", flush=True)
