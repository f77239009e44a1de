"""On the GPU: an iteration's linear algebra per instance -- Van der Pol's elimination then
three solves (the general path's factorizations and solves per iteration: 14 iterations,
15 factorizations, 45 solves) -- in the loop forms against the straight-line forms, both
codes in one kernel (the instruction cache holding both, as the batch kernel would).  B
instances, one per block of ``lanes`` threads (lane 0 works).  JSON lines as dev_ldl.py;
the three solutions checked bit for bit against the loop kernel's.  argv: pickle."""
import json
import lzma
import os
import pickle
import sys
import time

import cupy as cp
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.getcwd())
sys.path.insert(0, here)
from devtime import timed  # noqa: E402
from gen_ldl import (LOOP_SOURCE, SOLVE_LOOP_SOURCE, pattern, solve_pattern,  # noqa: E402
                     straight_solve_source, straight_source, test_values)

lay = pickle.loads(lzma.decompress(open(sys.argv[1], "rb").read()))["lay"]
pat, spat = pattern(lay), solve_pattern(lay)
n, nnzC, nnzL = len(pat[2]) - 1, len(pat[1]), len(pat[3])
src = ("#define DEV __device__ __forceinline__\n#define DEV_NOINLINE __device__ __noinline__\n"
       "#define SR\n#define LOOP_NAME loop_plain\n#define IDX long long\n#define SOLVE_NAME "
       "solve_plain\n" + LOOP_SOURCE + SOLVE_LOOP_SOURCE + straight_source(*pat, chunk=64)
       + straight_solve_source(*spat, chunk=128) + r"""
#define INSTANCE long long tt = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
  long long b = tt / lanes; if (b >= B || tt % lanes) return;
#define IARGS long long B, int lanes, long long n, const long long* Cp, const long long* Ci, \
  const long long* Lp, const long long* Li, const long long* Rp, const long long* Rc, \
  const long long* Rt, const long long* p, const long long* Fp, const long long* Fc, \
  const long long* Fq, const double* Cx, double* Lx, double* D, double* Dinv, double* Y, \
  const double* rhs, double* X, double* T, long long nC, long long nL
extern "C" __global__ void k_iter_loop(IARGS) {
  INSTANCE
  loop_plain(n, Cp, Ci, Lp, Li, Rp, Rc, Rt, Cx + b * nC, Lx + b * nL, D + b * n,
             Dinv + b * n, Y + b * n);
  for (int r = 0; r < 3; ++r)
    solve_plain(n, p, Lp, Li, Fp, Fc, Fq, rhs + (3 * b + r) * n, X + (3 * b + r) * n,
                Lx + b * nL, Dinv + b * n, T + b * n);
}
extern "C" __global__ void k_iter_straight(IARGS) {
  INSTANCE
  gen_eliminate(Cx + b * nC, Lx + b * nL, D + b * n, Dinv + b * n);
  for (int r = 0; r < 3; ++r)
    gen_solve(rhs + (3 * b + r) * n, X + (3 * b + r) * n, Lx + b * nL, Dinv + b * n,
              T + b * n);
}
""")
t0 = time.perf_counter()
mod = cp.RawModule(code=src, options=("--std=c++17",))
variants = ("iter_loop", "iter_straight")
fns = {v: mod.get_function("k_" + v) for v in variants}
print(json.dumps(dict(event="compiled", s=round(time.perf_counter() - t0, 2),
                      regs={v: getattr(f, "num_regs", None) for v, f in fns.items()})),
      flush=True)
S = [cp.asarray(a) for a in pat] + [cp.asarray(a) for a in (spat[0], *spat[3:])]
Bmax = 1000
Cx = cp.asarray(test_values(pat[0], pat[1], Bmax))
rhs = cp.asarray(np.random.default_rng(3).standard_normal((3 * Bmax, n)))
for B in (132, 1000):
    for lanes in (1, 32):
        base = None
        for v in variants:
            Lx, D, Di, Y, T = (cp.full((B, k), np.nan) for k in (nnzL, n, n, n, n))
            X = cp.full((3 * B, n), np.nan)
            args = (np.int64(B), np.int32(lanes), np.int64(n), *S, Cx, Lx, D, Di, Y, rhs, X,
                    T, np.int64(nnzC), np.int64(nnzL))
            ms, first = timed(fns[v], (B,), (lanes,), args, shared=0)
            xh = X.get()
            base = xh if base is None else base
            print(json.dumps(dict(variant=v, chunk=64, B=B, lanes=lanes,
                                  ms=round(ms, 4),
                                  first_ms=round(first, 4),
                                  bit_equal_loop=bool(np.array_equal(xh.view(np.int64),
                                                                     base.view(np.int64))))),
                  flush=True)
