"""Iteration-count distribution under roundoff-size perturbations of the initial T:
python dist.py SOLVER K [key=value ...] -> solves with T0 = 1 + k*1e-15, k = -K..K (in one process)"""
import sys, numpy as np, casadi as ca
from numpy import pi
from caspar_backend.casadi import Opti
import os
if os.environ.get("DENSE_BK"):   # experiment: dense Bunch-Kaufman (pivoting, exact inertia, no static term) from the first factorization, K up to 2000 rows
    import caspar_backend.linsolve.qdldl as _q, caspar_backend.linsolve.dense_kkt as _d
    _d.SMALL_PIVOTING_MAX_N = 2000
    _q.small_k = lambda n: 0 < n <= 2000
solver, K = sys.argv[1], int(sys.argv[2])
extra = {}
for a in sys.argv[3:]:
    k, v = a.split("=", 1)
    try: v = eval(v)
    except Exception: pass
    extra[k] = v
N = 100
opti = Opti()
X = opti.variable(2, N+1); pos = X[0, :]; speed = X[1, :]
U = opti.variable(1, N); T = opti.variable()
opti.minimize(T)
f = lambda x, u: ca.vertcat(x[1], u - x[1])
dt = T/N
for k in range(N):
    k1 = f(X[:, k], U[:, k]); k2 = f(X[:, k]+dt/2*k1, U[:, k])
    k3 = f(X[:, k]+dt/2*k2, U[:, k]); k4 = f(X[:, k]+dt*k3, U[:, k])
    opti.subject_to(X[:, k+1] == X[:, k] + dt/6*(k1+2*k2+2*k3+k4))
limit = lambda pos: 1-ca.sin(2*pi*pos)/2
opti.subject_to(speed <= limit(pos)); opti.subject_to(opti.bounded(0, U, 1))
opti.subject_to(pos[0] == 0); opti.subject_to(speed[0] == 0); opti.subject_to(pos[-1] == 1)
opti.subject_to(T >= 0)
opti.solver(solver, {"print_time": False}, dict({"print_level": 0}, **extra))
its, Ts, st, nreg, nresto = [], [], [], [], []; first_resto, last_resto = [], []
for k in range(-K, K+1):
    opti.set_initial(X, 0); opti.set_initial(U, 0)
    opti.set_initial(speed, 1); opti.set_initial(T, 1 + k*1e-15)
    try: opti.solve()
    except Exception: pass
    s = opti.stats(); its.append(s["iter_count"]); st.append(s["return_status"]); Ts.append(float(opti.debug.value(T)))
    itr = s.get("iterations", {}); rs = np.array(itr.get("regularization_size", [0])); mu = np.array(itr.get("mu", [0]))
    nreg.append(int(np.count_nonzero(rs > 0))); nresto.append(int(np.count_nonzero(mu > 0.5)) - 1)
    r = np.flatnonzero(mu[1:] > 0.5) + 1
    if len(r): first_resto.append(int(r[0])); last_resto.append(len(mu) - 1 - int(r[-1]))
its = np.array(its)
print(f"{solver} {extra}: n={len(its)} mean={its.mean():.1f} median={np.median(its):.0f} min={its.min()} max={its.max()} "
      f"fail={sum(x != 'Solve_Succeeded' for x in st)} T range=[{min(Ts):.9f},{max(Ts):.9f}]\n  {its.tolist()}\n  mean iterations with delta_w>0: {np.mean(nreg):.1f}; mean iterations with mu>0.5 (restoration, minus iter 0): {np.mean(nresto):.1f}; solves entering restoration: {sum(x>0 for x in nresto)}\n  median first restoration iteration: {np.median(first_resto):.0f} (mean {np.mean(first_resto):.1f}); median iterations after the last restoration iteration: {np.median(last_resto):.0f} (mean {np.mean(last_resto):.1f})")
