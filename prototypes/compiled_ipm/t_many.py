import os, sys, time
import numpy as np
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import SmallSolver, solve_many
nlp, b = arm_ik()
problem = caspar_backend.from_casadi(nlp, **b)
B=1000
T = arm_targets(B, seed=1); X0 = np.tile([0.1, 0.2, 0.3], (B, 1))
s = SmallSolver(problem, b["lbx"], b["ubx"], b["lbg"], b["ubg"], backend="codegen")
solve_many(s, X0[:2], T[:2]); s.solve(X0[0], T[0])
for rep in range(3):
    t0=time.perf_counter(); st,it,X,f=solve_many(s, X0, T); t1=time.perf_counter()
    for i in range(B): s.solve(X0[i], T[i])
    t2=time.perf_counter()
    print(f"solve_many {1e6*(t1-t0)/B:.1f} us/inst   loop of single calls {1e6*(t2-t1)/B:.1f} us/inst  iters mean {it.mean():.1f} load {os.getloadavg()[0]:.1f}")
