"""Batched solves: inverse kinematics of a three-link planar arm for many targets at once.

    python examples/batch_ik.py [--batch 1000] [--device cpu|cuda|auto]

Joint angles q (3), target t = (tx, ty) as the parameter, link lengths 1.0, 0.8, 0.6:

    min_q  (x_e(q) - tx)^2 + (y_e(q) - ty)^2 + 1e-3 |q|^2
    s.t.   -pi <= q_i <= pi,   q_1 + q_2 + q_3 <= 2.5,

x_e = sum_k l_k cos(q_1 + ... + q_k), y_e likewise with sin.  The problem is compiled
once; ``solve_batch`` solves it for B targets (p as a (B, 2) array) in one call, and a
few single solves show that each instance is the single solve's answer.
"""

import argparse
import collections
import time

import casadi as ca
import numpy as np

import caspar_backend as cb

ap = argparse.ArgumentParser(description="three-link arm IK for B targets in one call")
ap.add_argument("--batch", type=int, default=1000, help="number of targets B")
ap.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu")
args = ap.parse_args()

links = (1.0, 0.8, 0.6)
q, t = ca.SX.sym("q", 3), ca.SX.sym("t", 2)
ang, xe, ye = 0, 0, 0
for k, lk in enumerate(links):
    ang += q[k]
    xe += lk * ca.cos(ang)
    ye += lk * ca.sin(ang)
nlp = {"x": q, "p": t, "f": (xe - t[0]) ** 2 + (ye - t[1]) ** 2 + 1e-3 * ca.sumsqr(q),
       "g": q[0] + q[1] + q[2]}
problem = cb.from_casadi(nlp, lbx=[-np.pi] * 3, ubx=[np.pi] * 3, lbg=-np.inf, ubg=2.5)

# B reachable targets (reach 2.4): radius in [0.3, 2.2], any direction
rng = np.random.default_rng(0)
r, a = rng.uniform(0.3, 2.2, args.batch), rng.uniform(-np.pi, np.pi, args.batch)
targets = np.stack([r * np.cos(a), r * np.sin(a)], axis=1)
x0 = [0.1, 0.2, 0.3]
opts = dict(print_level=0, device=args.device)

t0 = time.perf_counter()
res = problem.solve_batch(x0=x0, p=targets, **opts)
dt = time.perf_counter() - t0
print(f"{len(res)} targets on {args.device} in {dt:.3f} s ({1e3 * dt / len(res):.3f} ms "
      f"each); statuses: {dict(collections.Counter(res.status))}; iterations "
      f"median {np.median(res.iterations):.0f}, max {res.iterations.max()}")
print("solved how:", dict(collections.Counter(res.path)),
      "where:", dict(collections.Counter(res.extra["device"])))

# the arm's tip against the target: the objective's first two terms
q_all = np.cumsum(res.x, axis=1)
tip = np.stack([(np.asarray(links) * np.cos(q_all)).sum(1),
                (np.asarray(links) * np.sin(q_all)).sum(1)], axis=1)
print(f"tip-to-target distance: median {np.median(np.linalg.norm(tip - targets, axis=1)):.2e}")

print("instance  batch (status, it, f)          single solve (status, it, f)     s")
for i in range(min(3, len(res))):
    t0 = time.perf_counter()
    s = problem.solve(x0=x0, p=targets[i], **opts)
    ts = time.perf_counter() - t0
    print(f"{i:8d}  {res.status[i]:16s} {res.iterations[i]:3d} {res.f[i]:.6e}   "
          f"{s.status:16s} {s.iterations:3d} {s.f:.6e}  {ts:.4f}")
