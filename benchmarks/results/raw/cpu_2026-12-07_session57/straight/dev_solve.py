"""On the GPU: Van der Pol's solve through the factors (permute, L, 1/D, L^T, unpermute)
per instance, the loop form (ldl_solve's loops; int64 structure, plain or __restrict__)
against the straight-line form generated for the pattern (gen_ldl.py), B instances, one
per block of ``lanes`` threads (lane 0 works).  The factors: the loop elimination's on
gen_ldl.test_values.  JSON lines as dev_ldl.py.  argv: pickle, chunk."""
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
                     straight_solve_source, test_values)

path, chunk = sys.argv[1], int(sys.argv[2])
lay = pickle.loads(lzma.decompress(open(path, "rb").read()))["lay"]
pat, spat = pattern(lay), solve_pattern(lay)
n, nnzC, nnzL = len(pat[2]) - 1, len(pat[1]), len(pat[3])
src = ("#define DEV __device__ __forceinline__\n#define DEV_NOINLINE __device__ __noinline__\n"
       "#define SR\n#define LOOP_NAME loop_plain\n#define IDX long long\n" + LOOP_SOURCE
       + "#define SOLVE_NAME solve_plain\n" + SOLVE_LOOP_SOURCE
       + "#undef SR\n#undef SOLVE_NAME\n#define SR __restrict__\n#define SOLVE_NAME solve_r\n"
       + SOLVE_LOOP_SOURCE + straight_solve_source(*spat, chunk=chunk) + r"""
#define INSTANCE long long tt = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
  long long b = tt / lanes; if (b >= B || tt % lanes) return;
extern "C" __global__ void k_factor(long long B, int lanes, long long n, const long long* Cp,
    const long long* Ci, const long long* Lp, const long long* Li, const long long* Rp,
    const long long* Rc, const long long* Rt, const double* Cx, double* Lx, double* D,
    double* Dinv, double* Y, long long nC, long long nL) {
  INSTANCE
  loop_plain(n, Cp, Ci, Lp, Li, Rp, Rc, Rt, Cx + b * nC, Lx + b * nL, D + b * n,
             Dinv + b * n, Y + b * n);
}
#define SARGS long long B, int lanes, long long n, const long long* p, const long long* Lp, \
  const long long* Li, const long long* Fp, const long long* Fc, const long long* Fq, \
  const double* rhs, double* X, const double* Lx, const double* Dinv, double* T, long long nL
extern "C" __global__ void k_solve_loop(SARGS) {
  INSTANCE
  solve_plain(n, p, Lp, Li, Fp, Fc, Fq, rhs + b * n, X + b * n, Lx + b * nL, Dinv + b * n,
              T + b * n);
}
extern "C" __global__ void k_solve_loop_r(SARGS) {
  INSTANCE
  solve_r(n, p, Lp, Li, Fp, Fc, Fq, rhs + b * n, X + b * n, Lx + b * nL, Dinv + b * n,
          T + b * n);
}
extern "C" __global__ void k_solve_straight(SARGS) {
  INSTANCE
  gen_solve(rhs + b * n, X + b * n, Lx + b * nL, Dinv + b * n, T + b * n);
}
""")
t0 = time.perf_counter()
mod = cp.RawModule(code=src, options=("--std=c++17",))
variants = ("solve_loop", "solve_loop_r", "solve_straight")
fns = {v: mod.get_function("k_" + v) for v in variants}
fac = mod.get_function("k_factor")
print(json.dumps(dict(event="compiled", chunk=chunk, s=round(time.perf_counter() - t0, 2),
                      regs={v: getattr(f, "num_regs", None) for v, f in fns.items()})),
      flush=True)
S, SS = [cp.asarray(a) for a in pat], [cp.asarray(a) for a in spat]
Bmax = 1000
Cx = cp.asarray(test_values(pat[0], pat[1], Bmax))
Lx, D, Di, Y = (cp.zeros((Bmax, k)) for k in (nnzL, n, n, n))
fac((Bmax,), (1,), (np.int64(Bmax), np.int32(1), np.int64(n), *S, Cx, Lx, D, Di, Y,
                    np.int64(nnzC), np.int64(nnzL)))
rhs = cp.asarray(np.random.default_rng(2).standard_normal((Bmax, n)))
for B in (132, 1000):
    for lanes in (1, 32):
        base = None
        for v in variants:
            X, T = cp.full((B, n), np.nan), cp.full((B, n), np.nan)
            args = (np.int64(B), np.int32(lanes), np.int64(n), *SS, rhs, X, Lx, Di, T,
                    np.int64(nnzL))
            ms, first = timed(fns[v], (B,), (lanes,), args, shared=0)
            xh = X.get()
            base = xh if base is None else base
            print(json.dumps(dict(variant=v, chunk=chunk, B=B, lanes=lanes,
                                  ms=round(ms, 4),
                                  first_ms=round(first, 4),
                                  bit_equal_loop=bool(np.array_equal(xh.view(np.int64),
                                                                     base.view(np.int64))))),
                  flush=True)
