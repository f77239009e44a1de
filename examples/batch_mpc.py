"""Batched MPC steps: the Van der Pol optimal control problem from 1,000 initial states.

    python examples/batch_mpc.py [--states 1000] [--N 50] [--device cpu|cuda|auto]

The oscillator x1' = (1 - x2^2) x1 - x2 + u, x2' = x1 on [0, 10], minimizing
int x1^2 + x2^2 + u^2 dt with x1 >= -0.25 and -1 <= u <= 1, by direct collocation on N
intervals (``caspar_backend.adapters.casadi.models.vanderpol_collocation``, the
benchmarks' ``vanderpol_colloc`` model) with the initial state as the parameter p: one
MPC step per measured state.  The problem is compiled once; ``solve_batch`` solves all
states in one call, p as a (B, 2) array.  Each instance's first control is what an MPC
loop would apply; the next sample's steps start warm from these answers and multipliers
(IPOPT's ``warm_start_init_point``, which the compiled kernels do per instance).
"""

import argparse
import collections
import time

import numpy as np

import caspar_backend as cb
from caspar_backend.adapters.casadi.models import vanderpol_collocation

ap = argparse.ArgumentParser(description="B Van der Pol MPC steps in one call")
ap.add_argument("--states", type=int, default=1000, help="number of initial states B")
ap.add_argument("--N", type=int, default=50, help="collocation intervals")
ap.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu")
args = ap.parse_args()

nlp, bounds = vanderpol_collocation(args.N, initial_state_param=True)
problem = cb.from_casadi(nlp, **bounds)
print(problem)

# measured states around the nominal (0, 1), all of them feasible starts
rng = np.random.default_rng(0)
states = np.stack([rng.uniform(-0.2, 0.6, args.states), rng.uniform(-0.8, 1.2, args.states)],
                  axis=1)
opts = dict(print_level=0, tol=1e-8, device=args.device)

t0 = time.perf_counter()
res = problem.solve_batch(p=states, **opts)
dt = time.perf_counter() - t0
print(f"{len(res)} MPC steps on {args.device} in {dt:.3f} s ({1e3 * dt / len(res):.2f} ms "
      f"each); statuses: {dict(collections.Counter(res.status))}; iterations median "
      f"{np.median(res.iterations):.0f}, max {res.iterations.max()}")

# the control sequence U[0..N-1] is the last N variables; an MPC loop applies U[0]
u0 = res.x[:, -args.N]
print(f"first control u(0): min {u0.min():+.3f}, median {np.median(u0):+.3f}, "
      f"max {u0.max():+.3f}; cost median {np.median(res.f):.4f}")

# the next sample: each state measured again (here: with noise), each step warm-started
# from its previous answer and multipliers
states_next = states + 0.01 * rng.standard_normal(states.shape)
warm = dict(warm_start_init_point=True, warm_start_bound_push=1e-6,
            warm_start_mult_bound_push=1e-6)
t0 = time.perf_counter()
nxt = problem.solve_batch(x0=res.x, p=states_next, lam_g0=res.lam_g, lam_x0=res.lam_x,
                          **warm, **opts)
dt = time.perf_counter() - t0
print(f"next sample, warm-started: {dt:.3f} s; statuses: "
      f"{dict(collections.Counter(nxt.status))}; iterations median "
      f"{np.median(nxt.iterations):.0f}, max {nxt.iterations.max()}")

s = problem.solve(p=states[0], **opts)
print(f"state 0 alone: {s.status}, {s.iterations} it, f = {s.f:.8f} (batch: "
      f"{res.status[0]}, {res.iterations[0]} it, f = {res.f[0]:.8f})")
