"""A/B in one process: QDLDL's factor (symbolic walk per row) vs the scheduled one, on the
KKT pattern of a problem's layout; checks equal bits."""
import sys, time, numpy as np
from numba import njit
sys.path.insert(0, '.')
from benchmarks.bench_batch import vdp_workload, ik_workload
from caspar_backend.casadi import nlpsol
from caspar_backend.compiled.solve import layout_for
from caspar_backend.compiled.kernels import slots as S

@njit(cache=False, nogil=True, error_model="numpy")
def classic(n, Cp, Ci, Cx, Lp, etree, Li, Lx, D, Dinv, yVals, yMark, yIdx, elim, nxt):
    for i in range(n):
        yMark[i] = 0; yVals[i] = 0.0; D[i] = 0.0; nxt[i] = Lp[i]
    D[0] = Cx[0]
    Dinv[0] = 1.0 / D[0]
    for k in range(1, n):
        nnzY = 0
        for i in range(Cp[k], Cp[k + 1]):
            bidx = Ci[i]
            if bidx == k:
                D[k] = Cx[i]; continue
            yVals[bidx] = Cx[i]
            nidx = bidx
            if yMark[nidx] == 0:
                yMark[nidx] = 1; elim[0] = nidx; nnzE = 1; nidx = etree[bidx]
                while nidx != -1 and nidx < k:
                    if yMark[nidx] == 1: break
                    yMark[nidx] = 1; elim[nnzE] = nidx; nnzE += 1; nidx = etree[nidx]
                while nnzE > 0:
                    nnzE -= 1; yIdx[nnzY] = elim[nnzE]; nnzY += 1
        for i in range(nnzY - 1, -1, -1):
            cidx = yIdx[i]; tmp = nxt[cidx]; yv = yVals[cidx]
            for j in range(Lp[cidx], tmp):
                yVals[Li[j]] -= Lx[j] * yv
            Li[tmp] = k; Lx[tmp] = yv * Dinv[cidx]; D[k] -= yv * Lx[tmp]
            nxt[cidx] += 1; yVals[cidx] = 0.0; yMark[cidx] = 0
        Dinv[k] = 1.0 / D[k]

@njit(cache=False, nogil=True, error_model="numpy")
def sched(n, Cp, Ci, Cx, Lp, Li, Rp, Rc, Rt, Lx, D, Dinv, yVals):
    for i in range(n):
        yVals[i] = 0.0; D[i] = 0.0
    D[0] = Cx[0]
    Dinv[0] = 1.0 / D[0]
    for k in range(1, n):
        for i in range(Cp[k], Cp[k + 1]):
            bidx = Ci[i]
            if bidx == k: D[k] = Cx[i]
            else: yVals[bidx] = Cx[i]
        for q in range(Rp[k], Rp[k + 1]):
            cidx = Rc[q]; tmp = Rt[q]; yv = yVals[cidx]
            for j in range(Lp[cidx], tmp):
                yVals[Li[j]] -= Lx[j] * yv
            Lx[tmp] = yv * Dinv[cidx]; D[k] -= yv * Lx[tmp]; yVals[cidx] = 0.0
        Dinv[k] = 1.0 / D[k]

w = vdp_workload(8) if sys.argv[1] == 'vdp' else ik_workload(8)
Sv = nlpsol("S", "caspar", w.nlp)
c = Sv._core
a = w.args
f = lambda v, k: np.broadcast_to(np.asarray(v, float).ravel(), (k,)).copy() if np.size(v) in (1, k) else np.asarray(v, float)
lay = layout_for(c.problem, f(a['lbx'], c.n), f(a['ubx'], c.n), f(a['lbg'], c.m), f(a['ubg'], c.m))
I = lambda k: lay.Ib[lay.IO[k]:lay.IO[k + 1]].copy()
n = int(lay.sizes['nkkt']); Cp, Ci, Lp, et = I(S.I_C_INDPTR), I(S.I_C_INDICES), I(S.I_L_INDPTR), I(S.I_ETREE)
Li_s, Rp, Rc, Rt = I(S.I_L_INDICES), I(S.I_LDL_ROW_PTR), I(S.I_LDL_ROW_COL), I(S.I_LDL_ROW_POS)
rng = np.random.default_rng(0)
Cx = rng.standard_normal(Ci.size)
diag = np.array([Cp[k + 1] - 1 for k in range(n)])
Cx[diag] = np.where(np.arange(n) % 2 == 0, 10.0, -10.0)   # a nonzero diagonal
nnzL = Lp[-1]
z = lambda: np.zeros(n)
Lx1, D1, Di1, y1 = np.zeros(nnzL), z(), z(), z(); Li1 = np.zeros(nnzL, np.int64)
ints = [np.zeros(n, np.int64) for _ in range(4)]
Lx2, D2, Di2, y2 = np.zeros(nnzL), z(), z(), z()
classic(n, Cp, Ci, Cx, Lp, et, Li1, Lx1, D1, Di1, y1, *ints)
sched(n, Cp, Ci, Cx, Lp, Li_s, Rp, Rc, Rt, Lx2, D2, Di2, y2)
print("equal bits:", np.array_equal(Lx1, Lx2), np.array_equal(D1, D2), np.array_equal(Li1, Li_s), "n", n, "nnzL", nnzL)
R = 3000 if n < 2000 else 300
for rep in range(4):
    t = time.perf_counter()
    for _ in range(R): classic(n, Cp, Ci, Cx, Lp, et, Li1, Lx1, D1, Di1, y1, *ints)
    t1 = (time.perf_counter() - t) / R
    t = time.perf_counter()
    for _ in range(R): sched(n, Cp, Ci, Cx, Lp, Li_s, Rp, Rc, Rt, Lx2, D2, Di2, y2)
    t2 = (time.perf_counter() - t) / R
    print("classic %.2f us  scheduled %.2f us  ratio %.2f" % (t1 * 1e6, t2 * 1e6, t1 / t2))
