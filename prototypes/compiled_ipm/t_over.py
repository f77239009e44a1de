import time, numpy as np
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import SmallSolver
nlp, bounds = arm_ik()
problem = caspar_backend.from_casadi(nlp, **bounds)
s = SmallSolver(problem, bounds['lbx'], bounds['ubx'], bounds['lbg'], bounds['ubg'])
T=arm_targets(200)
def bench(label):
    ts=[]
    for t_ in T:
        a=time.perf_counter(); r=s.solve([0.1,0.2,0.3], t_); ts.append(time.perf_counter()-a)
    print(label, "median us %.1f"%(np.median(ts)*1e6), r[:2])
bench("full")
s.O[47]=0
bench("max_iter=0")
s.O[47]=3000
bench("full")
