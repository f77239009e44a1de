"""On the GPU: Van der Pol's factorization (the elimination alone) per instance, the loop
form (ldl_eliminate's loops; structure pointers plain or __restrict__, int64 or int32;
working vectors in global or in shared memory) against the straight-line form generated
for the pattern (gen_ldl.py), B instances, one instance per block of ``lanes`` threads
(lane 0 works, as a team's leader).  Prints JSON lines: variant, B, lanes, ms (median of
reps), compile s, and whether Lx, D, 1/D equal the plain loop's bit for bit.  argv: pickle,
chunk, variants (comma list of loop, loop_r, loop_i32, loop_shm, straight)."""
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
from gen_ldl import LOOP_SOURCE, pattern, straight_source, test_values  # noqa: E402

path, chunk = sys.argv[1], int(sys.argv[2])
variants = sys.argv[3].split(",") if len(sys.argv) > 3 else ["loop", "loop_r", "loop_i32",
                                                              "loop_shm", "straight"]
lay = pickle.loads(lzma.decompress(open(path, "rb").read()))["lay"]
pat = pattern(lay)
Cp, Ci, Lp, Li, Rp, Rc, Rt = pat
n, nnzC, nnzL = len(Lp) - 1, len(Ci), len(Li)

HEAD = "#define DEV __device__ __forceinline__\n#define DEV_NOINLINE __device__ __noinline__\n"
LOOPS = "".join(f"#define SR {sr}\n#define LOOP_NAME {name}\n#define IDX {idx}\n"
                + LOOP_SOURCE + "#undef SR\n#undef LOOP_NAME\n#undef IDX\n"
                for name, sr, idx in (("loop_plain", "", "long long"),
                                      ("loop_restrict", "__restrict__", "long long"),
                                      ("loop_i32", "__restrict__", "int")))
KERNELS = r"""
#define ARGS long long B, int lanes, long long n, const long long* Cp, const long long* Ci, \
  const long long* Lp, const long long* Li, const long long* Rp, const long long* Rc, \
  const long long* Rt, const double* Cx, double* Lx, double* D, double* Dinv, double* Y, \
  long long nC, long long nL, int* ok
#define INSTANCE long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; \
  long long b = t / lanes; if (b >= B || t % lanes) return;
extern "C" __global__ void k_loop(ARGS) {
  INSTANCE
  ok[b] = loop_plain(n, Cp, Ci, Lp, Li, Rp, Rc, Rt, Cx + b * nC, Lx + b * nL, D + b * n,
                     Dinv + b * n, Y + b * n);
}
extern "C" __global__ void k_loop_r(ARGS) {
  INSTANCE
  ok[b] = loop_restrict(n, Cp, Ci, Lp, Li, Rp, Rc, Rt, Cx + b * nC, Lx + b * nL, D + b * n,
                        Dinv + b * n, Y + b * n);
}
extern "C" __global__ void k_loop_i32(ARGS, const int* Cp4, const int* Ci4, const int* Lp4,
                                      const int* Li4, const int* Rp4, const int* Rc4,
                                      const int* Rt4) {
  INSTANCE
  ok[b] = loop_i32((int)n, Cp4, Ci4, Lp4, Li4, Rp4, Rc4, Rt4, Cx + b * nC, Lx + b * nL,
                   D + b * n, Dinv + b * n, Y + b * n);
}
extern "C" __global__ void k_loop_shm(ARGS) {
  extern __shared__ double sh[];
  INSTANCE
  double* y = sh + (threadIdx.x / lanes) * 3 * n;
  double* d = y + n;
  double* di = d + n;
  ok[b] = loop_restrict(n, Cp, Ci, Lp, Li, Rp, Rc, Rt, Cx + b * nC, Lx + b * nL, d, di, y);
  for (long long i = 0; i < n; ++i) { D[b * n + i] = d[i]; Dinv[b * n + i] = di[i]; }
}
extern "C" __global__ void k_straight(ARGS) {
  INSTANCE
  ok[b] = gen_eliminate(Cx + b * nC, Lx + b * nL, D + b * n, Dinv + b * n);
}
"""
src = HEAD + LOOPS + (straight_source(*pat, chunk=chunk) if "straight" in variants else
                      "DEV int gen_eliminate(const double*, double*, double*, double*) "
                      "{ return 0; }\n") + KERNELS
t0 = time.perf_counter()
mod = cp.RawModule(code=src, options=("--std=c++17",))
fns = {v: mod.get_function("k_" + v) for v in variants}
compile_s = time.perf_counter() - t0
print(json.dumps(dict(event="compiled", chunk=chunk, s=round(compile_s, 2),
                      regs={v: getattr(f, "num_regs", None) for v, f in fns.items()},
                      local={v: getattr(f, "local_size_bytes", None)
                             for v, f in fns.items()})), flush=True)
S = [cp.asarray(a) for a in pat]
S4 = [cp.asarray(a.astype(np.int32)) for a in pat]
Bmax = 1000
Vh = test_values(Cp, Ci, Bmax)
Cx = cp.asarray(Vh)
ref = None
for B in (132, 1000):
    for lanes in (1, 32):
        outs = {}
        for v in variants:
            Lx, D, Di, Y = (cp.full((B, k), np.nan) for k in (nnzL, n, n, n))
            ok = cp.zeros(B, np.int32)
            shm = 3 * n * 8 if v == "loop_shm" else 0
            args = (np.int64(B), np.int32(lanes), np.int64(n), *S, Cx, Lx, D, Di, Y,
                    np.int64(nnzC), np.int64(nnzL), ok) + (tuple(S4) if v == "loop_i32"
                                                            else ())
            if shm > 48 * 1024:
                fns[v].max_dynamic_shared_size_bytes = shm
            ms, first = timed(fns[v], (B,), (lanes,), args, shared=shm)
            outs[v] = (Lx.get(), D.get(), Di.get(), ok.get())
            base = outs.get("loop", outs[v])
            same = all(np.array_equal(a.view(np.int64), c.view(np.int64))
                       for a, c in zip(outs[v][:3], base[:3]))
            print(json.dumps(dict(variant=v, chunk=chunk, B=B, lanes=lanes,
                                  ms=round(ms, 4),
                                  first_ms=round(first, 4), ok=int(outs[v][3].sum()),
                                  bit_equal_loop=same)), flush=True)
