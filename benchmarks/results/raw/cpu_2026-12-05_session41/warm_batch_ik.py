"""Warm-started IK batches (an MPC-like loop: every instance starts from its previous
answer and multipliers): one ``solve_batch`` of B = 200 on the CPU kernel against the
same 200 warm starts as single ``Problem.solve`` calls and IPOPT's nlpsol; best of 3."""
import time

import casadi as ca
import numpy as np

from caspar_backend import from_casadi
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from caspar_backend.compiled import dispatch

dispatch.kernels_ready(wait=True)
nlp, bounds = arm_ik()
P = from_casadi(nlp, **bounds)
B = 200
T0, T1 = arm_targets(B, seed=1), arm_targets(B, seed=2)
warm = dict(warm_start_init_point=True, warm_start_bound_push=1e-6,
            warm_start_mult_bound_push=1e-6)
first = P.solve_batch(x0=[0.1, 0.2, 0.3], p=T0, print_level=0)
best = {}
for rep in range(3):
    t = time.perf_counter()
    r = P.solve_batch(x0=first.x, p=T1, lam_g0=first.lam_g, lam_x0=first.lam_x,
                      print_level=0, **warm)
    best["caspar solve_batch"] = min(best.get("caspar solve_batch", 9), time.perf_counter() - t)
    t = time.perf_counter()
    singles = [P.solve(x0=first.x[b], p=T1[b], lam_g0=first.lam_g[b],
                       lam_x0=first.lam_x[b], print_level=0, **warm) for b in range(B)]
    best["caspar Problem.solve x200"] = min(best.get("caspar Problem.solve x200", 9),
                                            time.perf_counter() - t)
S = ca.nlpsol("S", "ipopt", nlp, {"ipopt": dict(print_level=0, sb="yes",
                                                warm_start_init_point="yes",
                                                warm_start_bound_push=1e-6,
                                                warm_start_mult_bound_push=1e-6),
                                  "print_time": False})
its = []
for rep in range(3):
    t = time.perf_counter()
    out = [S(x0=first.x[b], p=T1[b], lam_g0=first.lam_g[b], lam_x0=first.lam_x[b],
             **bounds) for b in range(B)]
    best["ipopt nlpsol x200"] = min(best.get("ipopt nlpsol x200", 9), time.perf_counter() - t)
    its = [S.stats()["iter_count"]]
same = sum(int(r.iterations[b] == singles[b].iterations and r.f[b] == singles[b].f)
           for b in range(B))
print("paths", sorted(set(r.path)), "batch = singles (iterations, f):", same, "/", B)
print("max |f - f_ipopt|", max(abs(float(out[b]["f"]) - r.f[b]) for b in range(B)))
for k, v in best.items():
    print(f"{k:28s} {v * 1e3:8.2f} ms   {v / best['ipopt nlpsol x200']:.3f}x IPOPT")
