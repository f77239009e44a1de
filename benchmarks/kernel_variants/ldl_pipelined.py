"""``qdldl.ldl_factor`` and ``qdldl.ldl_solve`` with their next step's structure loaded
ahead: the same operations in the same order as the kernels' (the same bits), the loads a
GPU thread waits on issued earlier.

The factorization's update q (Van der Pol: 4,438 per factorization, ~1,000 cycles each on
an H200 thread) walks a chain of dependent loads -- ``Rc[q]`` -> ``Lp[cidx]`` and
``yVals[cidx]`` -> ``Li[j]`` -> ``yVals[Li[j]]`` -- and the compiler may not move the next
update's loads above this one's stores (every array may alias every other as far as it
knows).  Here update q + 1's structure (``Rc``, ``Rt``, ``Lp``, never written) and its
``Dinv`` entry are loaded before update q's stores, the pivot accumulates in a register
(alone 4-5 % on an H200, session 50), and the elimination's inner loop goes two entries
at a time, both loads first (a column's rows differ).  ``yVals[cidx]`` itself must wait: update
q may change it.  The solves load the next row's right-hand side and bounds before
storing the current row.
"""
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
        q = U(Rp[k])
        qe = U(Rp[k + 1])
        if q < qe:
            cidx = U(Rc[q])
            tmp = U(Rt[q])
            j0 = U(Lp[cidx])
            dinv = Dinv[cidx]
            while True:
                qn = q + U(1)
                cn, tn, jn, dn = cidx, tmp, j0, dinv
                if qn < qe:             # the next update's structure, before our stores
                    cn = U(Rc[qn])
                    tn = U(Rt[qn])
                    jn = U(Lp[cn])
                    dn = Dinv[cn]
                yv = yVals[cidx]
                j = j0
                while j + U(2) <= tmp:
                    r0 = U(Li[j])
                    r1 = U(Li[j + U(1)])
                    l0 = Lx[j]
                    l1 = Lx[j + U(1)]
                    y0 = yVals[r0]
                    y1 = yVals[r1]
                    yVals[r0] = y0 - l0 * yv
                    yVals[r1] = y1 - l1 * yv
                    j += U(2)
                if j < tmp:
                    r0 = U(Li[j])
                    yVals[r0] -= Lx[j] * yv
                lv = yv * dinv
                Lx[tmp] = lv
                dk -= yv * lv
                yVals[cidx] = 0.0
                if qn >= qe:
                    break
                q, cidx, tmp, j0, dinv = qn, cn, tn, jn, dn
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


def ldl_solve(Fb, FO, Ib, IO, b, x):
    SI = _i(Ib, IO, I_SIZES)
    n = SI[SZ_NKKT]
    perm, Lp = _i(Ib, IO, I_PERM), _i(Ib, IO, I_L_INDPTR)
    Lx = _f(Fb, FO, F_L_VALUES)
    Dinv = _f(Fb, FO, F_LDL_DINV)
    Li = _i(Ib, IO, I_L_INDICES)
    Rp, Rc, Rq = _i(Ib, IO, I_L_ROW_PTR), _i(Ib, IO, I_L_ROW_COL), _i(Ib, IO, I_L_ROW_POS)
    t = _f(Fb, FO, F_LDL_T)
    if n == 0:
        return
    bn = b[U(perm[0])]
    k0 = U(Rp[0])
    for i in range(n):
        v = bn
        k1 = U(Rp[i + 1])
        if i + 1 < n:                   # the next row's right-hand side, before our store
            bn = b[U(perm[i + 1])]
        for k in range(U(k0), U(k1)):
            v -= Lx[U(Rq[k])] * t[U(Rc[k])]
        t[i] = v
        k0 = k1
    for i in range(n):
        t[i] *= Dinv[i]
    vn = t[n - 1]
    j1 = U(Lp[n])
    for i in range(n - 1, -1, -1):
        v = vn
        j0 = U(Lp[i])
        if i > 0:                       # t[i - 1] is not this row's to change
            vn = t[i - 1]
        for j in range(U(j0), U(j1)):
            v -= Lx[j] * t[U(Li[j])]
        t[i] = v
        j1 = j0
    for i in range(n):
        x[U(perm[i])] = t[i]
