import time, numpy as np
t0=time.perf_counter()
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import SmallSolver
nlp, bounds = arm_ik()
problem = caspar_backend.from_casadi(nlp, **bounds)
t1=time.perf_counter()
s = SmallSolver(problem, bounds['lbx'], bounds['ubx'], bounds['lbg'], bounds['ubg'])
t2=time.perf_counter()
st,it,x,f = s.solve([0.1,0.2,0.3], arm_targets(1)[0])
t3=time.perf_counter()
print(f"imports+model {t1-t0:.2f}s  SmallSolver {t2-t1:.2f}s  first solve {t3-t2:.2f}s", st, it)
T=arm_targets(200)
ts=[]
for t_ in T:
    a=time.perf_counter(); s.solve([0.1,0.2,0.3], t_); ts.append(time.perf_counter()-a)
print("median us", np.median(ts)*1e6, "p99", np.percentile(ts,99)*1e6)
