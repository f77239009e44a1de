import time, numpy as np
from numba import njit
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import SmallSolver
nlp, bounds = arm_ik()
problem = caspar_backend.from_casadi(nlp, **bounds)
s = SmallSolver(problem, bounds['lbx'], bounds['ubx'], bounds['lbg'], bounds['ubg'])
s.solve([0.1,0.2,0.3], arm_targets(1)[0])
m = s.mod
ev_zeroth, ev_first, ev_hess, run_tape, ldl_factor, kkt_build, kkt_solve, errors = m.ev_zeroth, m.ev_first, m.ev_hess, m.run_tape, m.ldl_factor, m.kkt_build, m.kkt_solve, m.errors
@njit(_nrt=False, error_model="numpy")
def loop_z(E, g, k):
    t = 0.0
    for _ in range(k): t += ev_zeroth(E, g)
    return t
@njit(_nrt=False, error_model="numpy")
def loop_f(E, gr, jv, k):
    for _ in range(k): ev_first(E, gr, jv)
@njit(_nrt=False, error_model="numpy")
def loop_h(E, lam, hv, k):
    for _ in range(k): ev_hess(E, lam, 1.0, hv)
@njit(_nrt=False, error_model="numpy")
def loop_fac(S, K, L, k):
    for _ in range(k): ldl_factor(S, K, L)
@njit(_nrt=False, error_model="numpy")
def loop_build(S, O, KT, JV, HV, sig, k):
    for _ in range(k): kkt_build(S, O, KT, JV, HV, sig, 0.0, 0.0)
@njit(_nrt=False, error_model="numpy")
def loop_solve(S, O, KT, L, rw, rc, dw, dy, k):
    for _ in range(k): kkt_solve(S, O, KT, L, rw, rc, dw, dy)
@njit(_nrt=False, error_model="numpy")
def loop_err(S, O, V, Q, IT, k):
    for _ in range(k): errors(S, O, V, Q, IT[0], IT[1], IT[2], IT[3], IT[5], IT[6], IT[7], 0.1)
E,S,O,V,IT,Q,KT,L,D = s.E,s.S,s.O,s.V,s.IT,s.Q,s.KT,s.L,s.D
g=np.zeros(1); gr=np.zeros(3); jv=np.zeros(3); hv=np.zeros(len(s.model['hess_rows'])); lam=np.ones(1)
K=10000
for name, fn, args in [("zeroth", loop_z, (E,g)), ("first", loop_f, (E,gr,jv)), ("hess", loop_h, (E,lam,hv)),
    ("build", loop_build, (S,O,KT,IT[7],IT[8],D[6])), ("factor", loop_fac, (S,KT[0],L)),
    ("solve+refine", loop_solve, (S,O,KT,L,D[5],D[7],D[0],D[1])), ("errors", loop_err, (S,O,V,Q,IT))]:
    fn(*args, 1)
    t=time.perf_counter(); fn(*args, K); dt=(time.perf_counter()-t)/K
    print(f"{name:14s} {dt*1e6:.2f} us")
print("tape lengths", [(r[9]-r[8], r[12]-r[11], r[16]-r[15]) for r in s.model['gt']])
