"""``qdldl.ldl_factor`` with row k's pivot accumulated in a register (``dk``) and L's new
entry reused from one (``lv``) instead of stored and loaded again: the same operations
in the same order, so the same bits.  On a GPU thread each ``D[k] -= yv * Lx[tmp]`` is
a load after a store through the cache (the slots are views of one buffer, so the
compiler cannot keep them in registers); Van der Pol's factorization makes 4,438 such
updates."""
import math

from caspar_backend.compiled.kernels._jit import U, _f, _i
from caspar_backend.compiled.kernels.slots import *  # noqa: F401,F403


def ldl_factor(Fb, FO, Ib, IO, K):
    SI = _i(Ib, IO, I_SIZES)
    n = SI[SZ_NKKT]
    Cp = _i(Ib, IO, I_C_INDPTR)
    Ci = _i(Ib, IO, I_C_INDICES)
    cmap = _i(Ib, IO, I_C_MAP)
    Lp = _i(Ib, IO, I_L_INDPTR)
    Li = _i(Ib, IO, I_L_INDICES)
    Rp = _i(Ib, IO, I_LDL_ROW_PTR)
    Rc = _i(Ib, IO, I_LDL_ROW_COL)
    Rt = _i(Ib, IO, I_LDL_ROW_POS)
    Cx = _f(Fb, FO, F_C_VALUES)
    Lx = _f(Fb, FO, F_L_VALUES)
    D = _f(Fb, FO, F_LDL_D)
    Dinv = _f(Fb, FO, F_LDL_DINV)
    yVals = _f(Fb, FO, F_LDL_YVALS)
    for p in range(cmap.shape[0]):
        Cx[U(cmap[p])] = K[p]
    for i in range(n):
        yVals[i] = 0.0
        D[i] = 0.0
    d0 = Cx[0]
    D[0] = d0
    if d0 == 0.0:
        return 0, 0, n
    Dinv[0] = 1.0 / d0
    for k in range(1, n):
        dk = 0.0
        for i in range(U(Cp[k]), U(Cp[k + 1])):
            bidx = U(Ci[i])
            if bidx == U(k):
                dk = Cx[i]
            else:
                yVals[bidx] = Cx[i]
        for q in range(U(Rp[k]), U(Rp[k + 1])):
            cidx = U(Rc[q])
            tmp = U(Rt[q])
            yv = yVals[cidx]
            for j in range(U(Lp[cidx]), U(tmp)):
                yVals[U(Li[j])] -= Lx[j] * yv
            lv = yv * Dinv[cidx]
            Lx[tmp] = lv
            dk -= yv * lv
            yVals[cidx] = 0.0
        D[k] = dk
        if dk == 0.0:
            return 0, 0, n
        Dinv[k] = 1.0 / dk
    npos = 0
    nneg = 0
    for i in range(n):
        d = D[i]
        if math.isfinite(d):
            if d > 0.0:
                npos += 1
            elif d < 0.0:
                nneg += 1
    return npos, nneg, n - npos - nneg
