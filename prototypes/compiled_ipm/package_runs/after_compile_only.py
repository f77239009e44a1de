# "after": caspar_backend.compiled (flat buffers), cold compile into a fresh CASPAR_CACHE_DIR
import os, sys, time
import numpy as np
c0, w0 = time.process_time(), time.perf_counter()
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from caspar_backend.compiled import solve_compiled
nlp, b = arm_ik()
pr = caspar_backend.from_casadi(nlp, **b)
c1, w1 = time.process_time(), time.perf_counter()
r = solve_compiled(pr, [0.1, 0.2, 0.3], arm_targets(1)[0], print_level=0)
c2, w2 = time.process_time(), time.perf_counter()
print(f"after(flat): setup {w1-w0:.2f}s wall; first solve {w2-w1:.1f}s wall / {c2-c1:.1f}s CPU; "
      f"{None if r is None else (r.status, r.iterations)}; load {os.getloadavg()[0]:.1f}", flush=True)
