"""Is the per-call cost the flattened tuple arguments?  ldl_factor(S, K, L) (S: 32
arrays, L: 11) against the same body taking only the 14 arrays it reads."""
import time, inspect, textwrap
import numpy as np
from numba import njit
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik
from proto.builder import SmallSolver
nlp, b = arm_ik(); problem = caspar_backend.from_casadi(nlp, **b)
s = SmallSolver(problem, b["lbx"], b["ubx"], b["lbg"], b["ubg"])
src = open("proto/ipm_core.py").read()
body = src[src.index("def ldl_factor(S, K, L):"):src.index("@njit", src.index("def ldl_factor"))]
ns = {"math": __import__("math"), "np": np, "njit": njit}
flat = body.replace("def ldl_factor(S, K, L):", "def ldl_factor_flat(n, Cp, Ci, cmap, Lp, etree, Lnz, K, Cx, Lx, D, Dinv, yVals, Li, yMark, yIdx, elim, nxt):")
flat = flat.replace("    SI = S[0]\n    n = SI[10]\n", "").replace("    Cp, Ci, cmap, Lp, etree, Lnz = S[23], S[24], S[25], S[27], S[28], S[29]\n", "")
flat = flat.replace("    Cx, Lx, D, Dinv, yVals = L[0], L[1], L[2], L[3], L[4]\n    Li, yMark, yIdx, elim, nxt = L[5], L[6], L[7], L[8], L[9]\n", "")
exec('@njit(_nrt=False, error_model="numpy")\n' + body, ns)
exec('@njit(_nrt=False, error_model="numpy")\n' + flat, ns)
f1, f2 = ns["ldl_factor"], ns["ldl_factor_flat"]
@njit(_nrt=False, error_model="numpy")
def loop1(S, K, L, k):
    for _ in range(k): f1(S, K, L)
@njit(_nrt=False, error_model="numpy")
def loop2(S, K, L, k):
    n = S[0][10]
    for _ in range(k): f2(n, S[23], S[24], S[25], S[27], S[28], S[29], K, L[0], L[1], L[2], L[3], L[4], L[5], L[6], L[7], L[8], L[9])
S, L = s.S, s.L
K = np.abs(np.random.default_rng(0).standard_normal(len(s.KT[0]))) + 1.0
loop1(S, K, L, 1); loop2(S, K, L, 1)
for _ in range(2):
    t=time.perf_counter(); loop1(S, K, L, 100000); a=(time.perf_counter()-t)/1e5
    t=time.perf_counter(); loop2(S, K, L, 100000); c=(time.perf_counter()-t)/1e5
    print(f"ldl_factor N={S[0][10]}: tuples {a*1e9:.0f} ns/call, only the arrays it reads {c*1e9:.0f} ns/call")
