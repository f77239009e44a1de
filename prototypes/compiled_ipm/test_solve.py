import time, sys, numpy as np, caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import SmallSolver
backend = sys.argv[1] if len(sys.argv) > 1 else "interp"
nlp, bounds = arm_ik()
problem = caspar_backend.from_casadi(nlp, **bounds)
s = SmallSolver(problem, bounds['lbx'], bounds['ubx'], bounds['lbg'], bounds['ubg'], backend=backend)
x0=np.array([0.1,0.2,0.3])
T=arm_targets(200)
t=time.perf_counter()
st,it,x,f = s.solve(x0, T[0])
print("first solve (compile)", time.perf_counter()-t, st, it, f)
nbad=0; worst=0
for k,t_ in enumerate(T):
    st,it,x,f = s.solve(x0,t_)
    r = problem.solve(x0=x0, p=t_, print_level=0)
    rel = abs(f-r.f)/max(abs(r.f),1e-300)
    worst=max(worst,rel)
    if it!=r.iterations or st!=0 or rel>1e-12:
        nbad+=1
        if nbad<10: print(k, st, it, r.status, r.iterations, f, r.f, rel, np.max(np.abs(x-r.x)))
print("bad", nbad, "worst rel", worst)
