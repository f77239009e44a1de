"""CPU batch: B IK instances in one Numba call (one core) against caspar's lockstep
solve_batch (NumPy, vectorized over instances) and IPOPT called once per target (a
subsample, scaled).  Checks each instance against caspar's batch result."""
import os, sys, time
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import casadi as ca
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from proto.builder import SmallSolver, solve_many

B = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
nlp, b = arm_ik()
problem = caspar_backend.from_casadi(nlp, **b)
T = arm_targets(B, seed=1)
X0 = np.tile([0.1, 0.2, 0.3], (B, 1))
res = {}
for backend in ("interp", "codegen"):
    s = SmallSolver(problem, b["lbx"], b["ubx"], b["lbg"], b["ubg"], backend=backend)
    solve_many(s, X0[:2], T[:2])
    t0 = time.perf_counter()
    res[backend] = solve_many(s, X0, T)
    res[backend + "_t"] = time.perf_counter() - t0
t0 = time.perf_counter()
r = problem.solve_batch(x0=X0, p=T)
t_cb = time.perf_counter() - t0
S = ca.nlpsol("S", "ipopt", nlp, {"ipopt.print_level": 0, "print_time": 0})
k = min(B, 300)
t0 = time.perf_counter()
for i in range(k):
    S(x0=X0[i], p=T[i], lbx=b["lbx"], ubx=b["ubx"], lbg=b["lbg"], ubg=b["ubg"])
t_ip = (time.perf_counter() - t0) / k * B
print(f"IK batch, B = {B} (load avg {os.getloadavg()[0]:.1f}, 2 cores; all single-threaded)")
for backend in ("interp", "codegen"):
    st, it, X, f = res[backend]
    same = np.sum(it == r.iterations)
    rel = np.max(np.abs(f - r.f) / np.abs(r.f))
    print(f"  prototype {backend:8s}: {res[backend + '_t']:.3f} s  ({res[backend + '_t'] / B * 1e6:.1f} us/instance), "
          f"status 0: {np.sum(st == 0)}, ejected: {np.sum(st < 0)}, iterations = caspar batch: {same}/{B}, "
          f"max rel f diff {rel:.1e}, x identical: {np.sum(np.all(X == r.x, axis=1))}")
print(f"  caspar solve_batch (lockstep NumPy): {t_cb:.3f} s  ({t_cb / B * 1e6:.1f} us/instance); "
      f"paths: {dict(zip(*np.unique(r.path, return_counts=True)))}")
print(f"  IPOPT sequential (from {k} solves): {t_ip:.1f} s  ({t_ip / B * 1e6:.0f} us/instance)")
