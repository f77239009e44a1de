"""One process: build the prototype for the IK problem and time the first solve (the
compile, or the load from Numba's on-disk cache when NUMBA_CACHE_DIR holds it).
Prints one JSON line."""
import json
import os
import sys
import time

t0, c0 = time.perf_counter(), time.process_time()
import numpy as np  # noqa: E402
import caspar_backend  # noqa: E402
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proto.builder import SmallSolver, FlatSolver  # noqa: E402

backend = sys.argv[1]
nlp, bounds = arm_ik()
problem = caspar_backend.from_casadi(nlp, **bounds)
t1, c1 = time.perf_counter(), time.process_time()
s = (FlatSolver(problem, bounds["lbx"], bounds["ubx"], bounds["lbg"], bounds["ubg"])
     if backend == "flat" else
     SmallSolver(problem, bounds["lbx"], bounds["ubx"], bounds["lbg"], bounds["ubg"],
                 backend=backend))
t2, c2 = time.perf_counter(), time.process_time()
st, it, x, f = s.solve([0.1, 0.2, 0.3], arm_targets(1)[0])
t3, c3 = time.perf_counter(), time.process_time()
print(json.dumps(dict(backend=backend, imports_model_s=t1 - t0, build_s=t2 - t1,
                      first_solve_wall_s=t3 - t2, first_solve_cpu_s=c3 - c2,
                      module_import_and_first_solve_wall_s=t3 - t1,
                      status=int(st), iterations=int(it))))
