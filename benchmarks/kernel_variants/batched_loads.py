"""The kernels' vector loops with their loads batched: four elements' loads issued before
any of their stores.

Why it may pay on a GPU thread (session 50, H200, ``bench_kernel_parts_cuda.py``): the
pieces of Van der Pol's iteration take one thread 40-230 times a CPU core's time, the
factorization ~1,000 cycles per elimination update.  Every slot is a view of one buffer,
so the compiler may not move a load above an earlier store, and a thread issues in
order: in ``a[i] = f(b[i])`` the store waits for its load, and the next element's load
issues only after that store -- one full memory latency per element, where a CPU core's
out-of-order execution overlaps them.  Here each group of four loads first, computes,
then stores; a scatter into targets that may repeat (``a[idx[k]] += v``) does so only
when the group's four targets are distinct, else one by one.  Each output receives the
same operations in the same order as in the kernels' own source, so the results are the
same bits (checked by the harness on the CPU).
"""
import math

from caspar_backend.compiled.kernels._jit import U, _f, _i
from caspar_backend.compiled.kernels.pairwise import nmax, nmin
from caspar_backend.compiled.kernels.slots import *  # noqa: F401,F403


def kkt_matvec(Fb, FO, Ib, IO, values, x, out, lo):
    SI = _i(Ib, IO, I_SIZES)
    n = SI[SZ_NKKT]
    Kp, Ki, dpos = _i(Ib, IO, I_K_INDPTR), _i(Ib, IO, I_K_INDICES), _i(Ib, IO, I_K_DIAG_POS)
    for i in range(n):
        out[i] = 0.0
    for j in range(n):
        xj = x[j]
        s = 0.0
        p = U(Kp[j])
        pe = U(Kp[j + 1])
        while p + U(4) <= pe:            # a column's rows are distinct
            i0, i1, i2, i3 = U(Ki[p]), U(Ki[p + U(1)]), U(Ki[p + U(2)]), U(Ki[p + U(3)])
            v0, v1, v2, v3 = values[p], values[p + U(1)], values[p + U(2)], values[p + U(3)]
            o0, o1, o2, o3 = out[i0], out[i1], out[i2], out[i3]
            y0, y1, y2, y3 = x[i0], x[i1], x[i2], x[i3]
            out[i0] = o0 + v0 * xj
            out[i1] = o1 + v1 * xj
            out[i2] = o2 + v2 * xj
            out[i3] = o3 + v3 * xj
            s += v0 * y0
            s += v1 * y1
            s += v2 * y2
            s += v3 * y3
            p += U(4)
        while p < pe:
            i = U(Ki[p])
            v = values[p]
            out[i] += v * xj
            s += v * x[i]
            p += U(1)
        lo[j] = s
    i = U(0)
    while i + U(4) <= U(n):
        a0, a1, a2, a3 = out[i], out[i + U(1)], out[i + U(2)], out[i + U(3)]
        b0, b1, b2, b3 = lo[i], lo[i + U(1)], lo[i + U(2)], lo[i + U(3)]
        d0, d1 = values[U(dpos[i])], values[U(dpos[i + U(1)])]
        d2, d3 = values[U(dpos[i + U(2)])], values[U(dpos[i + U(3)])]
        x0, x1, x2, x3 = x[i], x[i + U(1)], x[i + U(2)], x[i + U(3)]
        out[i] = (a0 + b0) - d0 * x0
        out[i + U(1)] = (a1 + b1) - d1 * x1
        out[i + U(2)] = (a2 + b2) - d2 * x2
        out[i + U(3)] = (a3 + b3) - d3 * x3
        i += U(4)
    while i < U(n):
        out[i] = (out[i] + lo[i]) - values[U(dpos[i])] * x[i]
        i += U(1)


def ldl_solve(Fb, FO, Ib, IO, b, x):
    SI = _i(Ib, IO, I_SIZES)
    n = SI[SZ_NKKT]
    perm, Lp = _i(Ib, IO, I_PERM), _i(Ib, IO, I_L_INDPTR)
    Lx = _f(Fb, FO, F_L_VALUES)
    Dinv = _f(Fb, FO, F_LDL_DINV)
    Li = _i(Ib, IO, I_L_INDICES)
    Rp, Rc, Rq = _i(Ib, IO, I_L_ROW_PTR), _i(Ib, IO, I_L_ROW_COL), _i(Ib, IO, I_L_ROW_POS)
    t = _f(Fb, FO, F_LDL_T)
    for i in range(n):
        v = b[U(perm[i])]
        for k in range(U(Rp[i]), U(Rp[i + 1])):
            v -= Lx[U(Rq[k])] * t[U(Rc[k])]
        t[i] = v
    i = U(0)
    while i + U(4) <= U(n):
        t0, t1, t2, t3 = t[i], t[i + U(1)], t[i + U(2)], t[i + U(3)]
        e0, e1, e2, e3 = Dinv[i], Dinv[i + U(1)], Dinv[i + U(2)], Dinv[i + U(3)]
        t[i] = t0 * e0
        t[i + U(1)] = t1 * e1
        t[i + U(2)] = t2 * e2
        t[i + U(3)] = t3 * e3
        i += U(4)
    while i < U(n):
        t[i] *= Dinv[i]
        i += U(1)
    for i in range(n - 1, -1, -1):
        v = t[i]
        for j in range(U(Lp[i]), U(Lp[i + 1])):
            v -= Lx[j] * t[U(Li[j])]
        t[i] = v
    i = U(0)
    while i + U(4) <= U(n):              # a permutation: distinct targets
        q0, q1, q2, q3 = U(perm[i]), U(perm[i + U(1)]), U(perm[i + U(2)]), U(perm[i + U(3)])
        t0, t1, t2, t3 = t[i], t[i + U(1)], t[i + U(2)], t[i + U(3)]
        x[q0] = t0
        x[q1] = t1
        x[q2] = t2
        x[q3] = t3
        i += U(4)
    while i < U(n):
        x[U(perm[i])] = t[i]
        i += U(1)


def kkt_build(Fb, FO, Ib, IO, O, JV, HV, sigma, eps, delta_w, delta_c):
    SI = _i(Ib, IO, I_SIZES)
    nw, m, nh, nj = SI[SZ_NW], SI[SZ_M], SI[SZ_NH], SI[SZ_NJ]
    values = _f(Fb, FO, F_K_VALUES)
    dstat = _f(Fb, FO, F_K_STATIC)
    src = _f(Fb, FO, F_K_SOURCE)
    ew = _f(Fb, FO, F_EW)
    ec = _f(Fb, FO, F_EC)
    csq = _f(Fb, FO, F_COL_SQ)
    priv = _f(Fb, FO, F_PRIV_SUM)
    jr = _i(Ib, IO, I_JAC_ROWS)
    hoff = _i(Ib, IO, I_HESS_OFFDIAG)
    cidx = _i(Ib, IO, I_COL_SQ_IDX)
    kmap = _i(Ib, IO, I_KKT_MAP)
    for j in range(nw):
        ew[j] = 0.0
    if eps != 0.0 and delta_w == 0.0:
        q = U(0)
        for k in range(nh):
            csq[q] = HV[k] * HV[k]
            q += U(1)
        for k in range(hoff.shape[0]):
            h = HV[U(hoff[k])]
            csq[q] = h * h
            q += U(1)
        for k in range(nj):
            csq[q] = JV[k] * JV[k]
            q += U(1)
        for k in range(nw):
            csq[q] = sigma[k] * sigma[k]
            q += U(1)
        for kq in range(q):
            ew[U(cidx[kq])] += csq[kq]
        for j in range(nw):
            ew[j] = nmin(math.sqrt(ew[j]), 1.0) * eps
    for i in range(m):
        ec[i] = 0.0
    if eps != 0.0:
        for k in range(nj):
            ec[U(jr[k])] += JV[k] * JV[k]
        for i in range(m):
            ec[i] = nmin(ec[i], 1.0) * eps
        if delta_c == 0.0:
            pe = _i(Ib, IO, I_PRIV_ENTRY)
            pc = _i(Ib, IO, I_PRIV_COL)
            pr = _i(Ib, IO, I_PRIV_ROW)
            pn = _f(Fb, FO, F_PRIV_NONE)
            for i in range(m):
                priv[i] = 0.0
            for k in range(pe.shape[0]):
                v = JV[U(pe[k])]
                v = v * v
                d = sigma[U(pc[k])] + delta_w
                d = nmax(d, 1e-30)
                priv[U(pr[k])] += v / d
            for i in range(m):
                ec[i] = nmin(ec[i], priv[i] * O[OPT_PRIVATE_PIVOT_FRACTION] + pn[i])
    for i in range(m):
        ec[i] = nmax(ec[i] - delta_c, 0.0)
    for j in range(nw):
        dstat[j] = ew[j]
    for i in range(m):
        dstat[nw + i] = ec[i] * -1.0
    q = U(0)
    k = U(0)
    while k + U(4) <= U(nh):
        h0, h1, h2, h3 = HV[k], HV[k + U(1)], HV[k + U(2)], HV[k + U(3)]
        src[q], src[q + U(1)], src[q + U(2)], src[q + U(3)] = h0, h1, h2, h3
        q += U(4)
        k += U(4)
    while k < U(nh):
        src[q] = HV[k]
        q += U(1)
        k += U(1)
    for j in range(nw):
        src[q] = (sigma[j] + delta_w) + ew[j]
        q += U(1)
    k = U(0)
    while k + U(4) <= U(nj):
        j0, j1, j2, j3 = JV[k], JV[k + U(1)], JV[k + U(2)], JV[k + U(3)]
        src[q], src[q + U(1)], src[q + U(2)], src[q + U(3)] = j0, j1, j2, j3
        q += U(4)
        k += U(4)
    while k < U(nj):
        src[q] = JV[k]
        q += U(1)
        k += U(1)
    for i in range(m):
        src[q] = ec[i] * -1.0 - delta_c
        q += U(1)
    nnz = SI[SZ_NNZK]
    for k2 in range(nnz):
        values[k2] = 0.0
    kq = U(0)
    while kq + U(4) <= q:
        a0, a1, a2, a3 = U(kmap[kq]), U(kmap[kq + U(1)]), U(kmap[kq + U(2)]), \
            U(kmap[kq + U(3)])
        if a0 != a1 and a0 != a2 and a0 != a3 and a1 != a2 and a1 != a3 and a2 != a3:
            s0, s1, s2, s3 = src[kq], src[kq + U(1)], src[kq + U(2)], src[kq + U(3)]
            w0, w1, w2, w3 = values[a0], values[a1], values[a2], values[a3]
            values[a0] = w0 + s0
            values[a1] = w1 + s1
            values[a2] = w2 + s2
            values[a3] = w3 + s3
        else:
            values[a0] += src[kq]
            values[a1] += src[kq + U(1)]
            values[a2] += src[kq + U(2)]
            values[a3] += src[kq + U(3)]
        kq += U(4)
    while kq < q:
        values[U(kmap[kq])] += src[kq]
        kq += U(1)
