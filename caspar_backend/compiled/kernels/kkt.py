"""The augmented KKT system of batch/kkt.py for one instance: assembly with the static
regularization terms, solve with iterative refinement, and Algorithm IC (inertia
correction).
"""
import math

from .constants import (DENSE_PIVOTING_MAX_N, PIVOTING_SWITCH_DELTA_W,
                        STATIC_REGULARIZATION_MAX)
from ._jit import U, _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .pairwise import amax_abs, nmax, nmin
from .qdldl import ldl_factor, ldl_solve


@kernel
def kkt_build(Fb, FO, Ib, IO, O, JV, HV, sigma, eps, delta_w, delta_c):
    """batch/kkt.py build: the KKT values (slot F_K_VALUES, the pattern's entry order)
    and the static terms (F_K_STATIC), for the static regularization ``eps`` and the
    regularizations delta_w, delta_c."""
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
    # primal static term ew_j = eps min(1, |K_j|_2) while delta_w = 0
    for j in range(nw):
        ew[j] = 0.0
    if eps != 0.0 and delta_w == 0.0:
        q = 0
        for k in range(nh):
            csq[q] = HV[k] * HV[k]
            q += 1
        for k in range(hoff.shape[0]):
            h = HV[U(hoff[k])]
            csq[q] = h * h
            q += 1
        for k in range(nj):
            csq[q] = JV[k] * JV[k]
            q += 1
        for k in range(nw):
            csq[q] = sigma[k] * sigma[k]
            q += 1
        for k in range(q):
            ew[U(cidx[k])] += csq[k]
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
    # src = [hess, Sigma + delta_w + ew, jac, -ec - delta_c], summed in input order
    q = 0
    for k in range(nh):
        src[q] = HV[k]
        q += 1
    for j in range(nw):
        src[q] = (sigma[j] + delta_w) + ew[j]
        q += 1
    for k in range(nj):
        src[q] = JV[k]
        q += 1
    for i in range(m):
        src[q] = ec[i] * -1.0 - delta_c
        q += 1
    nnz = SI[SZ_NNZK]
    for k in range(nnz):
        values[k] = 0.0
    for k in range(q):
        values[U(kmap[k])] += src[k]


@kernel
def kkt_matvec(Fb, FO, Ib, IO, values, x, out, lo):
    """(U + U^T - D) x as scipy's csc_matvec + csr_matvec (QDLDLSolver.matvec), both in
    one pass over U's columns: ``out`` (U x) accumulates each row over the columns in
    order as csc_matvec does, ``lo[j]`` (U^T x) sums column j in order as csr_matvec
    does, so every sum is the same as theirs bit for bit."""
    SI = _i(Ib, IO, I_SIZES)
    n = SI[SZ_NKKT]
    Kp, Ki, dpos = _i(Ib, IO, I_K_INDPTR), _i(Ib, IO, I_K_INDICES), _i(Ib, IO, I_K_DIAG_POS)
    for i in range(n):
        out[i] = 0.0
    for j in range(n):
        xj = x[j]
        s = 0.0
        for p in range(U(Kp[j]), U(Kp[j + 1])):
            i = U(Ki[p])
            v = values[p]
            out[i] += v * xj
            s += v * x[i]
        lo[j] = s
    for i in range(n):
        out[i] = (out[i] + lo[i]) - values[dpos[i]] * x[i]


@kernel
def kkt_solve(Fb, FO, Ib, IO, O, rhs_w, rhs_c, dw, dy):
    """batch/kkt.py solve for one instance: refined against K; returns (ratio, rho)."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m, n = SI[SZ_NW], SI[SZ_M], SI[SZ_NKKT]
    values, dstat = _f(Fb, FO, F_K_VALUES), _f(Fb, FO, F_K_STATIC)
    b = _f(Fb, FO, F_KKT_RHS)
    x = _f(Fb, FO, F_KKT_SOL)
    res = _f(Fb, FO, F_KKT_RES)
    corr = _f(Fb, FO, F_KKT_CORR)
    kv = _f(Fb, FO, F_KKT_KX)
    lo = _f(Fb, FO, F_KKT_LOWER)
    for i in range(nw):
        b[i] = rhs_w[i]
    for i in range(m):
        b[nw + i] = rhs_c[i]
    ldl_solve(Fb, FO, Ib, IO, b, x)
    steps = int(O[OPT_MAX_REFINEMENT_STEPS])
    ratio = 0.0
    rho = 0.0
    if steps > 0:
        go = True
        converged = False
        bnorm = -1.0
        rn = 0.0
        for step in range(steps + 1):
            kkt_matvec(Fb, FO, Ib, IO, values, x, kv, lo)
            for i in range(n):
                res[i] = (b[i] - kv[i]) + dstat[i] * x[i]
            if step == 0:
                ldl_solve(Fb, FO, Ib, IO, res, corr)
                for i in range(n):
                    x[i] += corr[i]
                continue
            rn_new = amax_abs(res, n)
            xn = amax_abs(x, n)
            if bnorm < 0.0:
                bnorm = amax_abs(b, n)
            elif go:
                rho = rn_new / rn if rn > 0.0 else 0.0
            if go:
                rn = rn_new
                ratio = rn / ((1.0 + bnorm) + nmin(xn, 1e6 * bnorm))
            finite = math.isfinite(ratio)
            conv = go and finite and ratio <= O[OPT_RESIDUAL_RATIO_MAX]
            if conv:
                converged = True
            go = go and finite and not conv
            if step == steps or not go:
                break
            ldl_solve(Fb, FO, Ib, IO, res, corr)
            for i in range(n):
                x[i] += corr[i]
        if O[OPT_KKT_STATIC_REGULARIZATION] > 0.0 and not converged:
            ratio = rn / bnorm if bnorm > 0.0 else 0.0
    for i in range(nw):
        dw[i] = x[i]
    for i in range(m):
        dy[i] = x[nw + i]
    return ratio, rho




@kernel
def factorize_ic(Fb, FO, Ib, IO, O, JV, HV, sigma, mu, st):
    """InertiaCorrector.regularize_and_factorize (solver/inertia.py) for the kernels'
    paths; st = IC_STATE: [delta_w_last, delta_w of this factorization (0: none), the
    static regularization eps of this iteration, 1.0 if eps was raised for this
    iteration (the general path's eps_restore), 1.0 once delta_c is used from the start
    of every factorization (delta_c_used)]; returns 0 or -reason (batch/state.py's
    EJECT_REASONS: the pivoting switch, no regularization).

    A zero pivot at delta_w = 0 first raises eps tenfold (up to
    STATIC_REGULARIZATION_MAX) for this iteration while the pivot stays zero; still
    zero, delta_c for the rest of the solve; then delta_w as Algorithm IC."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m, N = SI[SZ_NW], SI[SZ_M], SI[SZ_NKKT]
    st[1] = 0.0
    # begin_iteration: an eps raised in the previous iteration goes back
    eps = O[OPT_KKT_STATIC_REGULARIZATION]
    st[2] = eps
    st[3] = 0.0
    delta_w = 0.0
    delta_c = 0.0
    dc = O[OPT_JACOBIAN_REGULARIZATION_VALUE] * mu ** O[OPT_JACOBIAN_REGULARIZATION_EXPONENT]
    if st[4] != 0.0:
        delta_c = dc
    kkt_build(Fb, FO, Ib, IO, O, JV, HV, sigma, eps, delta_w, delta_c)
    npos, nneg, nzero = ldl_factor(Fb, FO, Ib, IO, _f(Fb, FO, F_K_VALUES))
    ok = nzero == 0 and npos == nw and nneg == m
    # a zero pivot of a factorization without pivoting need not mean a singular K: a
    # larger static term for this iteration first (AugmentedKKT.increase_quality)
    while (not ok) and nzero > 0 and 0.0 < eps < STATIC_REGULARIZATION_MAX:
        eps = min(10.0 * eps, STATIC_REGULARIZATION_MAX)
        st[2] = eps
        st[3] = 1.0
        kkt_build(Fb, FO, Ib, IO, O, JV, HV, sigma, eps, delta_w, delta_c)
        npos, nneg, nzero = ldl_factor(Fb, FO, Ib, IO, _f(Fb, FO, F_K_VALUES))
        ok = nzero == 0 and npos == nw and nneg == m
    if ok:
        return 0
    if nzero > 0 and delta_c == 0.0 and m > 0:
        delta_c = dc
        st[4] = 1.0
        kkt_build(Fb, FO, Ib, IO, O, JV, HV, sigma, eps, delta_w, delta_c)
        npos, nneg, nzero = ldl_factor(Fb, FO, Ib, IO, _f(Fb, FO, F_K_VALUES))
        if nzero == 0 and npos == nw and nneg == m:
            return 0
    dwl = st[0]
    if dwl == 0.0:
        delta_w = O[OPT_FIRST_HESSIAN_PERTURBATION]
    else:
        delta_w = max(O[OPT_MIN_HESSIAN_PERTURBATION], O[OPT_PERTURB_DEC_FACT] * dwl)
    pivoting = N <= DENSE_PIVOTING_MAX_N
    while True:
        kkt_build(Fb, FO, Ib, IO, O, JV, HV, sigma, eps, delta_w, delta_c)
        npos, nneg, nzero = ldl_factor(Fb, FO, Ib, IO, _f(Fb, FO, F_K_VALUES))
        ok = nzero == 0 and npos == nw and nneg == m
        if ok:
            st[0] = delta_w
            st[1] = delta_w
            return 0
        zp = nzero > 0
        set_c = zp and delta_c == 0.0
        if set_c:
            delta_c = dc
        if pivoting:
            if (not set_c) and ((zp and delta_w > 0.0) or delta_w > PIVOTING_SWITCH_DELTA_W):
                return -4
        delta_w = delta_w * (O[OPT_PERTURB_INC_FACT_FIRST] if st[0] == 0.0 else O[OPT_PERTURB_INC_FACT])
        if delta_w > O[OPT_MAX_HESSIAN_PERTURBATION]:
            return -5
