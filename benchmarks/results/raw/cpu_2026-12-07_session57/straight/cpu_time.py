"""The straight-line elimination and solve (gen_ldl.py) against their loop forms on one VM
core (g++ -O2, no contraction, __restrict on the structure): microseconds per call, best of
five means of 2,000 calls, on Van der Pol's pattern.  Run from the root with the pickle at
.stage/x/vdp_new.pkl.xz."""
import ctypes, lzma, os, pickle, subprocess, sys, time, numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__))); sys.path.insert(0, ".")
from gen_ldl import *
lay = pickle.loads(lzma.decompress(open(".stage/x/vdp_new.pkl.xz","rb").read()))["lay"]
pat, spat = pattern(lay), solve_pattern(lay)
n, nnzL = len(pat[2]) - 1, len(pat[3])
src = ("#define DEV static\n#define DEV_NOINLINE __attribute__((noinline)) static\n#define SR __restrict\n#define IDX long long\n#define LOOP_NAME loop_e\n#define SOLVE_NAME loop_s\n"
       + LOOP_SOURCE + SOLVE_LOOP_SOURCE + straight_source(*pat, chunk=64) + straight_solve_source(*spat, chunk=128) + r'''
#include <chrono>
extern "C" double bench(int which, int reps, long long n, const long long* Cp, const long long* Ci, const long long* Lp, const long long* Li, const long long* Rp, const long long* Rc, const long long* Rt, const long long* p, const long long* Fp, const long long* Fc, const long long* Fq, const double* Cx, double* Lx, double* D, double* Di, double* Y, const double* b, double* x, double* t) {
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) {
    if (which == 0) loop_e(n, Cp, Ci, Lp, Li, Rp, Rc, Rt, Cx, Lx, D, Di, Y);
    else if (which == 1) gen_eliminate(Cx, Lx, D, Di);
    else if (which == 2) loop_s(n, p, Lp, Li, Fp, Fc, Fq, b, x, Lx, Di, t);
    else gen_solve(b, x, Lx, Di, t);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}''')
open("/tmp/s57/t.cpp","w").write(src)
subprocess.run(["g++","-O2","-ffp-contract=off","-shared","-fPIC","/tmp/s57/t.cpp","-o","/tmp/s57/t.so"],check=True)
so = ctypes.CDLL("/tmp/s57/t.so"); so.bench.restype = ctypes.c_double
P = lambda a: ctypes.c_void_p(a.ctypes.data)
Cx = test_values(pat[0], pat[1], 1)[0]
Lx, D, Di, Y, x, t = np.zeros(nnzL), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
b = np.random.default_rng(0).standard_normal(n)
args = [ctypes.c_longlong(n)] + [P(a) for a in pat] + [P(spat[0]), P(spat[3]), P(spat[4]), P(spat[5])] + [P(a) for a in (Cx, Lx, D, Di, Y, b, x, t)]
for which, name in enumerate(("elim loop", "elim straight", "solve loop", "solve straight")):
    ts = [so.bench(which, 2000, *args) for _ in range(5)]
    print(f"{name:16s} {1e6*min(ts):7.2f} us")
