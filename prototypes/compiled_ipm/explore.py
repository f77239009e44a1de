import numpy as np, time, caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
nlp, bounds = arm_ik()
print(bounds)
problem = caspar_backend.from_casadi(nlp, **bounds)
print(type(problem))
T = arm_targets(5)
x0 = np.array([0.1,0.2,0.3])
for t in T:
    r = problem.solve(x0=x0, p=t)
    print(r.status, r.iterations, r.f, r.x)
print(problem.objective_groups, problem.constraint_groups)
for g in problem.objective_groups + problem.constraint_groups:
    print(g)
    print(vars(g).keys())
