"""K's assembly and K x split over a team's lanes (:mod:`.team`): the CUDA kernel's team
launch runs these where :mod:`.kkt` runs ``kkt_build_one`` and ``kkt_matvec_one`` on one
thread -- the same sums in the same order (gathers over each target's terms in the
scatters' order, slots I_*_PTR / I_*_ORDER and K's row form I_K_ROW_*), so the same bits.
"""
import math

from ._jit import U, _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .pairwise import nmax, nmin
from .team import lane_share, team_sync


@kernel
def kkt_matvec_part(Fb, FO, Ib, IO, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of (U + U^T - D) x, U K's upper triangle: the
    sums of QDLDLSolver.matvec (scipy's csc_matvec + csr_matvec) bit for bit --
    ``lo[j]`` (U^T x) sums column j in order as csr_matvec does; then, after the
    team's barrier, row i of U x accumulates over its columns in increasing order
    (K's row form, slots I_K_ROW_*) as csc_matvec's pass over the columns does.
    The lane's share of the columns and of the rows (:func:`.team.lane_share`)."""
    SI = _i(Ib, IO, I_SIZES)
    n = SI[SZ_NKKT]
    values, x = _f(Fb, FO, F_K_VALUES), _f(Fb, FO, F_KKT_SOL)
    out, lo = _f(Fb, FO, F_KKT_KX), _f(Fb, FO, F_KKT_LOWER)
    Kp, Ki, dpos = _i(Ib, IO, I_K_INDPTR), _i(Ib, IO, I_K_INDICES), _i(Ib, IO, I_K_DIAG_POS)
    Rp, Rc, Rq = _i(Ib, IO, I_K_ROW_PTR), _i(Ib, IO, I_K_ROW_COL), _i(Ib, IO, I_K_ROW_POS)
    s0, s1 = lane_share(n, lane, lanes)
    for j in range(U(s0), U(s1)):
        s = 0.0
        for p in range(U(Kp[j]), U(Kp[j + 1])):
            s += values[p] * x[U(Ki[p])]
        lo[j] = s
    team_sync(Ib, IO)
    s0, s1 = lane_share(n, lane, lanes)
    for i in range(U(s0), U(s1)):
        s = 0.0
        for k in range(U(Rp[i]), U(Rp[i + 1])):
            s += values[U(Rq[k])] * x[U(Rc[k])]
        out[i] = (s + lo[i]) - values[U(dpos[i])] * x[i]


@kernel
def kkt_build_part(Fb, FO, Ib, IO, O, eps, delta_w, delta_c, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of :func:`.kkt.kkt_build` (of the columns, the rows
    and K's entries: :func:`.team.lane_share`; :mod:`.team`).

    The static terms: ew_j = eps min(1, |K_j|_2) while delta_w = 0 (the squares of
    column j's entries, F_COL_SQ, summed), ec_i = min(eps min(1, |J_i|^2), the private
    pivot's bound) - delta_c, at least 0; K's entries are sums of their sources
    ``[hess, Sigma + delta_w + ew, jac, -ec - delta_c]`` (F_K_SOURCE).  Each sum is a
    gather over its terms in increasing term order (slots I_COL_SQ_*, I_JAC_ROW_*,
    I_PRIV_ROW_*, I_KKT_MAP_*) -- the order of the scatters ``t[idx[k]] += v_k`` these
    were, so every value is theirs bit for bit."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m, nh, nj = SI[SZ_NW], SI[SZ_M], SI[SZ_NH], SI[SZ_NJ]
    JV, HV, sigma = _f(Fb, FO, F_JV), _f(Fb, FO, F_HV), _f(Fb, FO, F_SIGMA)
    values = _f(Fb, FO, F_K_VALUES)
    dstat = _f(Fb, FO, F_K_STATIC)
    src = _f(Fb, FO, F_K_SOURCE)
    ew = _f(Fb, FO, F_EW)
    ec = _f(Fb, FO, F_EC)
    csq = _f(Fb, FO, F_COL_SQ)
    priv = _f(Fb, FO, F_PRIV_SUM)
    hoff = _i(Ib, IO, I_HESS_OFFDIAG)
    nho = hoff.shape[0]
    columns = eps != 0.0 and delta_w == 0.0
    # the squares of each column's entries, in COL_SQ_IDX's order: the Hessian's
    # (upper, then mirrored off-diagonal), the Jacobian's, Sigma's; the sources that
    # need no static term
    if columns:
        s0, s1 = lane_share(nh, lane, lanes)
        for k in range(U(s0), U(s1)):
            csq[k] = HV[k] * HV[k]
        s0, s1 = lane_share(nho, lane, lanes)
        for k in range(U(s0), U(s1)):
            h = HV[U(hoff[k])]
            csq[U(nh) + k] = h * h
        s0, s1 = lane_share(nj, lane, lanes)
        for k in range(U(s0), U(s1)):
            csq[U(nh + nho) + k] = JV[k] * JV[k]
        s0, s1 = lane_share(nw, lane, lanes)
        for k in range(U(s0), U(s1)):
            csq[U(nh + nho + nj) + k] = sigma[k] * sigma[k]
    s0, s1 = lane_share(nh, lane, lanes)
    for k in range(U(s0), U(s1)):
        src[k] = HV[k]
    s0, s1 = lane_share(nj, lane, lanes)
    for k in range(U(s0), U(s1)):
        src[U(nh + nw) + k] = JV[k]
    team_sync(Ib, IO)
    cp, co = _i(Ib, IO, I_COL_SQ_PTR), _i(Ib, IO, I_COL_SQ_ORDER)
    s0, s1 = lane_share(nw, lane, lanes)
    for j in range(U(s0), U(s1)):
        e = 0.0
        if columns:
            for r in range(U(cp[j]), U(cp[j + 1])):
                e += csq[U(co[r])]
            e = nmin(math.sqrt(e), 1.0) * eps
        ew[j] = e
        dstat[j] = e
        src[U(nh) + j] = (sigma[j] + delta_w) + e
    jp, jo = _i(Ib, IO, I_JAC_ROW_PTR), _i(Ib, IO, I_JAC_ROW_ORDER)
    pp, po = _i(Ib, IO, I_PRIV_ROW_PTR), _i(Ib, IO, I_PRIV_ROW_ORDER)
    pe, pc = _i(Ib, IO, I_PRIV_ENTRY), _i(Ib, IO, I_PRIV_COL)
    pn = _f(Fb, FO, F_PRIV_NONE)
    s0, s1 = lane_share(m, lane, lanes)
    for i in range(U(s0), U(s1)):
        e = 0.0
        if eps != 0.0:
            for r in range(U(jp[i]), U(jp[i + 1])):
                k = U(jo[r])
                e += JV[k] * JV[k]
            e = nmin(e, 1.0) * eps
            if delta_c == 0.0:
                s = 0.0
                for r in range(U(pp[i]), U(pp[i + 1])):
                    k = U(po[r])
                    v = JV[U(pe[k])]
                    v = v * v
                    d = sigma[U(pc[k])] + delta_w
                    d = nmax(d, 1e-30)
                    s += v / d
                priv[i] = s
                e = nmin(e, s * O[OPT_PRIVATE_PIVOT_FRACTION] + pn[i])
        e = nmax(e - delta_c, 0.0)
        ec[i] = e
        dstat[U(nw) + i] = e * -1.0
        src[U(nh + nw + nj) + i] = e * -1.0 - delta_c
    team_sync(Ib, IO)
    kp, ko = _i(Ib, IO, I_KKT_MAP_PTR), _i(Ib, IO, I_KKT_MAP_ORDER)
    s0, s1 = lane_share(SI[SZ_NNZK], lane, lanes)
    for t in range(U(s0), U(s1)):
        v = 0.0
        for r in range(U(kp[t]), U(kp[t + 1])):
            v += src[U(ko[r])]
        values[t] = v
