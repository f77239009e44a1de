import time, numpy as np, caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import SmallSolver
nlp, bounds = arm_ik()
problem = caspar_backend.from_casadi(nlp, **bounds)
t=time.perf_counter()
s = SmallSolver(problem, bounds['lbx'], bounds['ubx'], bounds['lbg'], bounds['ubg'])
print("build+import", time.perf_counter()-t)
ev = problem.evaluator('cpu')
rng=np.random.default_rng(0)
bad=0
t=time.perf_counter()
for k in range(200):
    x=rng.uniform(-3,3,3); p=rng.uniform(-2,2,2); lam=rng.standard_normal(1); of=rng.uniform(0.1,2)
    f,g,gr,jv,hv = s.eval_all(x,p,lam,of)
    ev.set_params(p)
    F=ev.obj(x); G=ev.cons(x); GR=ev.grad(x); JV=ev.jac_values(x); HV=ev.hess_values(x,lam,of)
    for a,b,nm in [(f,F,'f'),(g,G,'g'),(gr,GR,'grad'),(jv,JV,'jac'),(hv,HV,'hess')]:
        if not np.array_equal(np.asarray(a),np.asarray(b)):
            bad+=1
            if bad<10: print(nm, np.max(np.abs(np.asarray(a)-b)/np.maximum(1e-300,np.abs(b))))
    if k==0: print("first eval (compile)", time.perf_counter()-t)
print("mismatches", bad)
