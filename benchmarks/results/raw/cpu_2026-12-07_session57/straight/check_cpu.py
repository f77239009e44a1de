"""The generated elimination (gen_ldl.py) and its loop form, compiled for the host with g++
(no contraction), against the CPU kernel's own ldl_eliminate on Van der Pol's pattern:
Lx, D and 1/D bit for bit on several value sets.  argv: the pickle, chunk."""
import ctypes
import lzma
import os
import pickle
import subprocess
import sys
import tempfile
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.getcwd())
sys.path.insert(0, here)
from gen_ldl import LOOP_SOURCE, pattern, straight_source, test_values  # noqa: E402
from caspar_backend.compiled.kernels import qdldl, slots  # noqa: E402

path = sys.argv[1] if len(sys.argv) > 1 else ".stage/x/vdp_new.pkl.xz"
chunk = int(sys.argv[2]) if len(sys.argv) > 2 else 64
lay = pickle.loads(lzma.decompress(open(path, "rb").read()))["lay"]
Cp, Ci, Lp, Li, Rp, Rc, Rt = pat = pattern(lay)
n, nnzL = len(Lp) - 1, len(Li)
src = ("#define DEV static\n#define DEV_NOINLINE __attribute__((noinline)) static\n"
       "#define LOOP_NAME loop_eliminate\n#define SR\n#define IDX long long\n"
       + straight_source(*pat, chunk=chunk) + LOOP_SOURCE
       + 'extern "C" int straight(const double* Cx, double* Lx, double* D, double* Di) '
         "{ return gen_eliminate(Cx, Lx, D, Di); }\n"
       + 'extern "C" int loop(long long n, const long long* Cp, const long long* Ci, '
         "const long long* Lp, const long long* Li, const long long* Rp, "
         "const long long* Rc, const long long* Rt, const double* Cx, double* Lx, "
         "double* D, double* Di, double* y) "
         "{ return loop_eliminate(n, Cp, Ci, Lp, Li, Rp, Rc, Rt, Cx, Lx, D, Di, y); }\n")
print("source lines", src.count("\n"), "bytes", len(src))
tmp = tempfile.mkdtemp()


def host_build(name, source):
    """``source`` built by g++ (no contraction) and loaded."""
    open(f"{tmp}/{name}.cpp", "w").write(source)
    t = time.perf_counter()
    subprocess.run(["g++", "-O1", "-ffp-contract=off", "-shared", "-fPIC", f"{tmp}/{name}.cpp",
                    "-o", f"{tmp}/{name}.so"], check=True)
    print(f"g++ {name} {time.perf_counter() - t:.1f} s")
    return ctypes.CDLL(f"{tmp}/{name}.so")


so = host_build("g", src)
P = ctypes.c_void_p


def ptr(a):
    return P(a.ctypes.data)


def slot(F, k):
    return F[lay.FO[k]:lay.FO[k + 1]]


V = test_values(Cp, Ci, 4)
bad = 0
def factored(values):
    """The layout's floats with QDLDL's elimination run on C = ``values``; its status."""
    F = np.array(lay.Fb0, np.float64)
    slot(F, slots.F_C_VALUES)[:] = values
    slot(F, slots.F_LDL_YVALS)[:] = 0.0
    slot(F, slots.F_LDL_D)[:] = 0.0
    return F, qdldl.ldl_eliminate(F, lay.FO, lay.Ib, lay.IO)


for b in range(4):
    F, ok = factored(V[b])
    ref = [slot(F, k).copy() for k in (slots.F_L_VALUES, slots.F_LDL_D, slots.F_LDL_DINV)]
    Lx, D, Di = np.full(nnzL, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    ok_s = so.straight(ptr(V[b]), ptr(Lx), ptr(D), ptr(Di))
    Lx2, D2, Di2, y = (np.full(nnzL, np.nan), np.full(n, np.nan), np.full(n, np.nan),
                       np.full(n, np.nan))
    ok_l = so.loop(ctypes.c_longlong(n), *map(ptr, pat), ptr(V[b]), ptr(Lx2), ptr(D2),
                   ptr(Di2), ptr(y))
    for name, got, okx in (("straight", (Lx, D, Di), ok_s), ("loop", (Lx2, D2, Di2), ok_l)):
        same = all(np.array_equal(g.view(np.int64), r.view(np.int64))
                   for g, r in zip(got, ref))
        bad += (not same) or (bool(okx) != bool(ok))
        print(b, name, "ok", okx, ok, "bit-equal", same)
print("differing", bad)

# --- the solves: straight and loop against the CPU kernel's ldl_solve on the factors above
from gen_ldl import SOLVE_LOOP_SOURCE, solve_pattern, straight_solve_source  # noqa: E402

spat = solve_pattern(lay)
ssrc = ("#define DEV static\n#define DEV_NOINLINE __attribute__((noinline)) static\n"
        "#define SOLVE_NAME loop_solve\n#define SR\n#define IDX long long\n"
        + straight_solve_source(*spat, chunk=chunk) + SOLVE_LOOP_SOURCE
        + 'extern "C" void straight(const double* b, double* x, const double* Lx, '
          "const double* Di, double* t) { gen_solve(b, x, Lx, Di, t); }\n"
        + 'extern "C" void loop(long long n, const long long* p, const long long* Lp, '
          "const long long* Li, const long long* Fp, const long long* Fc, "
          "const long long* Fq, const double* b, double* x, const double* Lx, "
          "const double* Di, double* t) "
          "{ loop_solve(n, p, Lp, Li, Fp, Fc, Fq, b, x, Lx, Di, t); }\n")
print("solve source lines", ssrc.count("\n"), "bytes", len(ssrc))
ss = host_build("s", ssrc)
rng = np.random.default_rng(1)
sbad = 0
for b in range(4):
    F, _ = factored(V[b])
    rhs = rng.standard_normal(n)
    xr = np.full(n, np.nan)
    qdldl.ldl_solve(F, lay.FO, lay.Ib, lay.IO, rhs, xr)
    Lx, Di = slot(F, slots.F_L_VALUES).copy(), slot(F, slots.F_LDL_DINV).copy()
    x1, t1 = np.full(n, np.nan), np.full(n, np.nan)
    ss.straight(ptr(rhs), ptr(x1), ptr(Lx), ptr(Di), ptr(t1))
    x2, t2 = np.full(n, np.nan), np.full(n, np.nan)
    ss.loop(ctypes.c_longlong(n), *map(ptr, spat), ptr(rhs), ptr(x2), ptr(Lx), ptr(Di), ptr(t2))
    for name, got in (("straight", x1), ("loop", x2)):
        same = np.array_equal(got.view(np.int64), xr.view(np.int64))
        sbad += not same
        print(b, "solve", name, "bit-equal", same)
print("solve differing", sbad)

# --- the substitutions alone (the team kernel's serial parts): against ldl_forward /
# ldl_backward on the factors above
from gen_ldl import straight_substitutions_source  # noqa: E402

bsrc = ("#define DEV static\n#define DEV_NOINLINE __attribute__((noinline)) static\n"
        + straight_substitutions_source(*spat[1:], chunk=chunk)
        + 'extern "C" int fwd(const double* L, double* t) { return gen_forward(L, t); }\n'
        + 'extern "C" int bwd(const double* L, double* t) { return gen_backward(L, t); }\n')
bs = host_build("b", bsrc)
bbad = 0
for b in range(4):
    F, _ = factored(V[b])
    t0 = rng.standard_normal(n)
    for name, cpu, gen in (("forward", qdldl.ldl_forward, bs.fwd),
                           ("backward", qdldl.ldl_backward, bs.bwd)):
        slot(F, slots.F_LDL_T)[:] = t0
        cpu(F, lay.FO, lay.Ib, lay.IO)
        ref = slot(F, slots.F_LDL_T).copy()
        t, Lx = t0.copy(), slot(F, slots.F_L_VALUES).copy()
        gen(ptr(Lx), ptr(t))
        same = np.array_equal(t.view(np.int64), ref.view(np.int64))
        bbad += not same
        print(b, name, "bit-equal", same)
print("substitutions differing", bbad)
