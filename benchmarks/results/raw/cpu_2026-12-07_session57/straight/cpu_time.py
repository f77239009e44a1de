"""The straight-line elimination and solve (gen_ldl.py) against their loop forms on one VM
core (g++ -O2, no contraction, __restrict on the structure): microseconds per call, best of
five means of 2,000 calls, on Van der Pol's pattern.  argv: the pickle (default
.stage/x/vdp_new.pkl.xz); run from the root of the tree."""
import ctypes
import lzma
import os
import pickle
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.getcwd())
from gen_ldl import (LOOP_SOURCE, SOLVE_LOOP_SOURCE, pattern, solve_pattern,  # noqa: E402
                     straight_solve_source, straight_source, test_values)

path = sys.argv[1] if len(sys.argv) > 1 else ".stage/x/vdp_new.pkl.xz"
lay = pickle.loads(lzma.decompress(open(path, "rb").read()))["lay"]
pat, spat = pattern(lay), solve_pattern(lay)
n, nnzL = len(pat[2]) - 1, len(pat[3])
BENCH = r"""
#include <chrono>
typedef const long long* S;
extern "C" double bench(int which, int reps, long long n, S Cp, S Ci, S Lp, S Li, S Rp, S Rc,
                        S Rt, S p, S Fp, S Fc, S Fq, const double* Cx, double* Lx, double* D,
                        double* Di, double* Y, const double* b, double* x, double* t) {
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) {
    if (which == 0) loop_e(n, Cp, Ci, Lp, Li, Rp, Rc, Rt, Cx, Lx, D, Di, Y);
    else if (which == 1) gen_eliminate(Cx, Lx, D, Di);
    else if (which == 2) loop_s(n, p, Lp, Li, Fp, Fc, Fq, b, x, Lx, Di, t);
    else gen_solve(b, x, Lx, Di, t);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}
"""
src = ("#define DEV static\n#define DEV_NOINLINE __attribute__((noinline)) static\n"
       "#define SR __restrict\n#define IDX long long\n#define LOOP_NAME loop_e\n"
       "#define SOLVE_NAME loop_s\n" + LOOP_SOURCE + SOLVE_LOOP_SOURCE
       + straight_source(*pat, chunk=64) + straight_solve_source(*spat, chunk=128) + BENCH)
tmp = tempfile.mkdtemp()
open(f"{tmp}/t.cpp", "w").write(src)
subprocess.run(["g++", "-O2", "-ffp-contract=off", "-shared", "-fPIC", f"{tmp}/t.cpp", "-o",
                f"{tmp}/t.so"], check=True)
so = ctypes.CDLL(f"{tmp}/t.so")
so.bench.restype = ctypes.c_double


def P(a):
    return ctypes.c_void_p(a.ctypes.data)


Cx = test_values(pat[0], pat[1], 1)[0]
Lx, D, Di, Y, x, t = np.zeros(nnzL), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), \
    np.zeros(n)
b = np.random.default_rng(0).standard_normal(n)
args = ([ctypes.c_longlong(n)] + [P(a) for a in pat]
        + [P(spat[0]), P(spat[3]), P(spat[4]), P(spat[5])]
        + [P(a) for a in (Cx, Lx, D, Di, Y, b, x, t)])
for which, name in enumerate(("elim loop", "elim straight", "solve loop", "solve straight")):
    ts = [so.bench(which, 2000, *args) for _ in range(5)]
    print(f"{name:16s} {1e6 * min(ts):7.2f} us")
