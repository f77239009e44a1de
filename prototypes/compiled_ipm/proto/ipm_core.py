# ---- the interior point of ONE instance (caspar's lockstep batch path, B = 1) ------
# Port of caspar_backend/batch/{ipm,linesearch,quantities,nlp,kkt}.py row by row, and
# QDLDL's factorization/solve (QDLDL's own loops on QDLDL's permuted matrix).  Rare paths
# return status -reason (EJECT_REASONS numbering of batch/state.py); the product would
# then run the general path.  No allocation: every array is a slice of the caller's
# work arrays (so the same source could be a CUDA device function, one thread per
# instance).  Uses ev_zeroth / ev_first / ev_hess of the module it is compiled in.
import math

import numpy as np
from numba import njit

_EPS = 2.220446049250313e-16
_TINY = 5e-324
G_THETA, G_PHI, DELTA, S_THETA, S_PHI, ETA_PHI, ALPHA_MIN_FRAC = \
    1e-5, 1e-8, 1.0, 1.1, 2.3, 1e-8, 0.05
TINY_STEP_MAX_THETA = 1e-4
RESIDUAL_RATIO_SINGULAR = 1e-6
PIVOTING_SWITCH_DELTA_W = 1e6
SLOW_REFINEMENT_EPS_FLOOR = 1e-12
DENSE_PIVOTING_MAX_N = 1000


# ================================================================ slack problem
@njit(cache=True, _nrt=False, error_model="numpy")
def set_x(E, S, W):
    x = E[19]
    nx = S[0][3]
    for i in range(nx):
        x[i] = W[i]


@njit(cache=True, _nrt=False, error_model="numpy")
def nlp_zeroth(E, S, V, W, H):
    """f (returned) and h at W (batch/nlp.py zeroth)."""
    SI = S[0]
    nx, ns, m = SI[3], SI[4], SI[1]
    set_x(E, S, W)
    g = V[0]
    f = ev_zeroth(E, g)
    df, dc, goff = V[1][0], V[2], V[3]
    for i in range(m):
        H[i] = dc[i] * (g[i] - goff[i])
    sr = S[1]
    for k in range(ns):
        H[sr[k]] = H[sr[k]] - W[nx + k]
    return df * f


@njit(cache=True, _nrt=False, error_model="numpy")
def nlp_first(E, S, V, W, G, JV):
    SI = S[0]
    nx, nw, nju, nj = SI[3], SI[2], SI[8], SI[7]
    set_x(E, S, W)
    gradf, jv = V[4], V[5]
    ev_first(E, gradf, jv)
    df, dcj = V[1][0], V[6]
    for i in range(nx):
        G[i] = df * gradf[i]
    for i in range(nx, nw):
        G[i] = 0.0
    for k in range(nju):
        JV[k] = dcj[k] * jv[k]
    for k in range(nju, nj):
        JV[k] = -1.0


@njit(cache=True, _nrt=False, error_model="numpy")
def nlp_hess(E, S, V, W, Y, HV):
    SI = S[0]
    m = SI[1]
    set_x(E, S, W)
    lam = V[7]
    dc = V[2]
    for i in range(m):
        lam[i] = dc[i] * Y[i]
    ev_hess(E, lam, V[1][0] * 1.0, HV)


# ================================================================ QDLDL
@njit(cache=True, _nrt=False, error_model="numpy")
def ldl_factor(S, K, L):
    """QDLDL_factor on C = P K P^T (values scattered through cmap); returns
    (n_pos, n_neg, n_zero) as caspar's single path counts them."""
    SI = S[0]
    n = SI[10]
    Cp, Ci, cmap, Lp, etree, Lnz = S[23], S[24], S[25], S[27], S[28], S[29]
    Cx, Lx, D, Dinv, yVals = L[0], L[1], L[2], L[3], L[4]
    Li, yMark, yIdx, elim, nxt = L[5], L[6], L[7], L[8], L[9]
    for p in range(cmap.shape[0]):
        Cx[cmap[p]] = K[p]
    for i in range(n):
        yMark[i] = 0
        yVals[i] = 0.0
        D[i] = 0.0
        nxt[i] = Lp[i]
    D[0] = Cx[0]
    if D[0] == 0.0:
        return 0, 0, n
    Dinv[0] = 1.0 / D[0]
    for k in range(1, n):
        nnzY = 0
        for i in range(Cp[k], Cp[k + 1]):
            bidx = Ci[i]
            if bidx == k:
                D[k] = Cx[i]
                continue
            yVals[bidx] = Cx[i]
            nidx = bidx
            if yMark[nidx] == 0:
                yMark[nidx] = 1
                elim[0] = nidx
                nnzE = 1
                nidx = etree[bidx]
                while nidx != -1 and nidx < k:
                    if yMark[nidx] == 1:
                        break
                    yMark[nidx] = 1
                    elim[nnzE] = nidx
                    nnzE += 1
                    nidx = etree[nidx]
                while nnzE > 0:
                    nnzE -= 1
                    yIdx[nnzY] = elim[nnzE]
                    nnzY += 1
        for i in range(nnzY - 1, -1, -1):
            cidx = yIdx[i]
            tmp = nxt[cidx]
            yv = yVals[cidx]
            for j in range(Lp[cidx], tmp):
                yVals[Li[j]] -= Lx[j] * yv
            Li[tmp] = k
            Lx[tmp] = yv * Dinv[cidx]
            D[k] -= yv * Lx[tmp]
            nxt[cidx] += 1
            yVals[cidx] = 0.0
            yMark[cidx] = 0
        if D[k] == 0.0:
            return 0, 0, n
        Dinv[k] = 1.0 / D[k]
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


@njit(cache=True, _nrt=False, error_model="numpy")
def ldl_solve(S, L, b, x):
    """x = K^{-1} b through the factors (qdldl-python: permute, QDLDL_solve, back)."""
    n = S[0][10]
    perm, Lp = S[26], S[27]
    Lx, Dinv, Li, t = L[1], L[3], L[5], L[10]
    for i in range(n):
        t[i] = b[perm[i]]
    for i in range(n):
        v = t[i]
        for j in range(Lp[i], Lp[i + 1]):
            t[Li[j]] -= Lx[j] * v
    for i in range(n):
        t[i] *= Dinv[i]
    for i in range(n - 1, -1, -1):
        v = t[i]
        for j in range(Lp[i], Lp[i + 1]):
            v -= Lx[j] * t[Li[j]]
        t[i] = v
    for i in range(n):
        x[perm[i]] = t[i]


# ================================================================ KKT
@njit(cache=True, _nrt=False, error_model="numpy")
def kkt_build(S, O, KT, JV, HV, sigma, delta_w, delta_c):
    """batch/kkt.py build: values (KT[0]) and the static terms (dstat = KT[1])."""
    SI = S[0]
    nw, m, nh, nj = SI[2], SI[1], SI[9], SI[7]
    values, dstat, src, ew, ec, csq, priv = KT[0], KT[1], KT[2], KT[3], KT[4], KT[5], KT[6]
    eps = O[27]
    jr, hoff, cidx, kmap = S[9], S[14], S[15], S[13]
    # primal static term ew_j = eps min(1, |K_j|_2) while delta_w = 0
    for j in range(nw):
        ew[j] = 0.0
    if eps != 0.0 and delta_w == 0.0:
        q = 0
        for k in range(nh):
            csq[q] = HV[k] * HV[k]
            q += 1
        for k in range(hoff.shape[0]):
            csq[q] = HV[hoff[k]] * HV[hoff[k]]
            q += 1
        for k in range(nj):
            csq[q] = JV[k] * JV[k]
            q += 1
        for k in range(nw):
            csq[q] = sigma[k] * sigma[k]
            q += 1
        for k in range(q):
            ew[cidx[k]] += csq[k]
        for j in range(nw):
            ew[j] = nmin(math.sqrt(ew[j]), 1.0) * eps
    for i in range(m):
        ec[i] = 0.0
    if eps != 0.0:
        for k in range(nj):
            ec[jr[k]] += JV[k] * JV[k]
        for i in range(m):
            ec[i] = nmin(ec[i], 1.0) * eps
        if delta_c == 0.0:
            pe, pc, pr, pn = S[16], S[17], S[18], S[19]
            for i in range(m):
                priv[i] = 0.0
            for k in range(pe.shape[0]):
                v = JV[pe[k]]
                v = v * v
                d = sigma[pc[k]] + delta_w
                d = nmax(d, 1e-30)
                priv[pr[k]] += v / d
            for i in range(m):
                ec[i] = nmin(ec[i], priv[i] * O[53] + pn[i])
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
    nnz = SI[11]
    for k in range(nnz):
        values[k] = 0.0
    for k in range(q):
        values[kmap[k]] += src[k]


@njit(cache=True, _nrt=False, error_model="numpy")
def kkt_matvec(S, values, x, out, lo):
    """(U + U^T - D) x as scipy's csc_matvec + csr_matvec (QDLDLSolver.matvec)."""
    n = S[0][10]
    Kp, Ki, dpos = S[20], S[21], S[22]
    for i in range(n):
        out[i] = 0.0
    for j in range(n):
        xj = x[j]
        for p in range(Kp[j], Kp[j + 1]):
            out[Ki[p]] += values[p] * xj
    for j in range(n):
        s = 0.0
        for p in range(Kp[j], Kp[j + 1]):
            s += values[p] * x[Ki[p]]
        lo[j] = s
    for i in range(n):
        out[i] = (out[i] + lo[i]) - values[dpos[i]] * x[i]


@njit(cache=True, _nrt=False, error_model="numpy")
def kkt_solve(S, O, KT, L, rhs_w, rhs_c, dw, dy):
    """batch/kkt.py solve for one instance: refined against K; returns (ratio, rho)."""
    SI = S[0]
    nw, m, n = SI[2], SI[1], SI[10]
    values, dstat = KT[0], KT[1]
    b, x, res, corr, kv, lo = KT[7], KT[8], KT[9], KT[10], KT[11], KT[12]
    for i in range(nw):
        b[i] = rhs_w[i]
    for i in range(m):
        b[nw + i] = rhs_c[i]
    ldl_solve(S, L, b, x)
    steps = int(O[25])
    ratio = 0.0
    rho = 0.0
    if steps > 0:
        go = True
        converged = False
        bnorm = -1.0
        rn = 0.0
        for step in range(steps + 1):
            kkt_matvec(S, values, x, kv, lo)
            for i in range(n):
                res[i] = (b[i] - kv[i]) + dstat[i] * x[i]
            if step == 0:
                ldl_solve(S, L, res, corr)
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
            conv = go and finite and ratio <= O[26]
            if conv:
                converged = True
            go = go and finite and not conv
            if step == steps or not go:
                break
            ldl_solve(S, L, res, corr)
            for i in range(n):
                x[i] += corr[i]
        if O[27] > 0.0 and not converged:
            ratio = rn / bnorm if bnorm > 0.0 else 0.0
    for i in range(nw):
        dw[i] = x[i]
    for i in range(m):
        dy[i] = x[nw + i]
    return ratio, rho


# ================================================================ quantities
@njit(cache=True, _nrt=False, error_model="numpy")
def slacks(S, V, W, sL, sU):
    iL, iU, wL, wU = S[3], S[4], V[8], V[9]
    for k in range(iL.shape[0]):
        sL[k] = W[iL[k]] - wL[iL[k]]
    for k in range(iU.shape[0]):
        sU[k] = wU[iU[k]] - W[iU[k]]


@njit(cache=True, _nrt=False, error_model="numpy")
def aty(S, JV, Y, out):
    jr, jc = S[9], S[10]
    for j in range(out.shape[0]):
        out[j] = 0.0
    for k in range(jr.shape[0]):
        out[jc[k]] += JV[k] * Y[jr[k]]


@njit(cache=True, _nrt=False, error_model="numpy")
def ftb(s, ds, sign, tau, n):
    """fraction_to_boundary(s, sign * ds) (min(1, min over ds < 0 of -tau s / ds))."""
    r = np.inf
    for i in range(n):
        d = sign * ds[i]
        if d < 0.0:
            v = (-tau * s[i]) / d
            r = nmin(r, v)
    return nmin(1.0, r)


@njit(cache=True, _nrt=False, error_model="numpy")
def ftb_idx(s, dW, idx, sign, tau):
    r = np.inf
    for i in range(idx.shape[0]):
        d = sign * dW[idx[i]]
        if d < 0.0:
            v = (-tau * s[i]) / d
            r = nmin(r, v)
    return nmin(1.0, r)


@njit(cache=True, _nrt=False, error_model="numpy")
def barrier_phi(S, O, V, F, W, mu, sL, sU, tmp):
    """(phi, safe) at W with objective F (quantities.barrier_sums + phi)."""
    nL, nU = S[0][5], S[0][6]
    slacks(S, V, W, sL, sU)
    smin = np.inf
    first = True
    if nL > 0:
        m1 = sL[0]
        for i in range(nL):
            if sL[i] != sL[i]:
                m1 = np.nan
                break
            if sL[i] < m1:
                m1 = sL[i]
        smin = m1
        first = False
    if nU > 0:
        m2 = sU[0]
        for i in range(nU):
            if sU[i] != sU[i]:
                m2 = np.nan
                break
            if sU[i] < m2:
                m2 = sU[i]
        smin = m2 if first else nmin(smin, m2)
    for i in range(nL):
        tmp[i] = math.log(sL[i]) if sL[i] > 0.0 else (-np.inf if sL[i] == 0.0 else np.nan)
    lL = pairwise_sum(tmp, 0, nL)
    for i in range(nU):
        tmp[i] = math.log(sU[i]) if sU[i] > 0.0 else (-np.inf if sU[i] == 0.0 else np.nan)
    lU = pairwise_sum(tmp, 0, nU)
    idL, idU = S[7], S[8]
    for i in range(idL.shape[0]):
        tmp[i] = sL[idL[i]]
    dL = pairwise_sum(tmp, 0, idL.shape[0])
    for i in range(idU.shape[0]):
        tmp[i] = sU[idU[i]]
    dU = pairwise_sum(tmp, 0, idU.shape[0])
    safe = (smin < _EPS * min(1.0, mu)) and O[45] > 0.0
    kd = O[11] * mu
    phi = (F - mu * (lL + lU)) + kd * (dL + dU)
    if not smin > 0.0:
        phi = np.inf
    return phi, safe


@njit(cache=True, _nrt=False, error_model="numpy")
def sum_abs(a, n, tmp):
    for i in range(n):
        tmp[i] = abs(a[i])
    return pairwise_sum(tmp, 0, n)


@njit(cache=True, _nrt=False, error_model="numpy")
def errors(S, O, V, Q, W, Y, ZL, ZU, H, G, JV, mu):
    """quantities.errors: (E0, Emu, udual, uconstr, ucompl, wmax)."""
    SI = S[0]
    m, nw, nx, ns, nL, nU = SI[1], SI[2], SI[3], SI[4], SI[5], SI[6]
    rd, sL, sU, tmp = Q[0], Q[1], Q[2], Q[3]
    aty(S, JV, Y, rd)
    iL, iU = S[3], S[4]
    for i in range(nw):
        rd[i] = G[i] + rd[i]
    for k in range(nL):
        rd[iL[k]] -= ZL[k]
    for k in range(nU):
        rd[iU[k]] += ZU[k]
    slacks(S, V, W, sL, sU)
    dual = amax_abs(rd, nw)
    constr = amax_abs(H, m)
    # nlp_constr_viol
    wL, wU = V[8], V[9]
    sr = S[1]
    if m == 0:
        nconstr = 0.0
    elif ns == 0:
        nconstr = constr
    else:
        vmax = 0.0
        for k in range(ns):
            gI = H[sr[k]] + W[nx + k]
            v = nmax(nmax(wL[nx + k] - gI, gI - wU[nx + k]), 0.0)
            if v != v:
                vmax = np.nan
                break
            if k == 0 or v > vmax:
                vmax = v
        nconstr = vmax
        if ns < m:
            enf = S[30]
            e2 = 0.0
            for k in range(enf.shape[0]):
                v = abs(H[enf[k]])
                if v != v:
                    e2 = np.nan
                    break
                if k == 0 or v > e2:
                    e2 = v
            nconstr = nmax(vmax, e2)
    c1 = 0.0
    c2 = 0.0
    cm1 = 0.0
    cm2 = 0.0
    for k in range(nL):
        v = sL[k] * ZL[k]
        w = abs(v - mu)
        c1 = v if k == 0 else nmax(c1, v)
        cm1 = w if k == 0 else nmax(cm1, w)
    for k in range(nU):
        v = sU[k] * ZU[k]
        w = abs(v - mu)
        c2 = v if k == 0 else nmax(c2, v)
        cm2 = w if k == 0 else nmax(cm2, w)
    compl = nmax(c1, c2)
    compl_mu = nmax(cm1, cm2)
    zsum = pairwise_sum(ZL, 0, nL) + pairwise_sum(ZU, 0, nU)
    ysum = sum_abs(Y, m, tmp)
    wmax = amax_abs(W, nw)
    # unscaled_constr_viol
    uconstr = 0.0
    if m > 0:
        dc, goff, dci, lbg, ubg, eqm = V[2], V[3], V[10], V[11], V[12], S[2]
        g = tmp
        for i in range(m):
            g[i] = H[i] / dc[i] + goff[i]
        for k in range(ns):
            g[sr[k]] += W[nx + k] / dci[k]
        for i in range(m):
            if eqm[i] == 1:
                v = abs(g[i] - lbg[i])
            else:
                v = nmax(0.0, nmax(lbg[i] - g[i], g[i] - ubg[i]))
            if v != v:
                uconstr = np.nan
                break
            if i == 0 or v > uconstr:
                uconstr = v
    smax = 100.0
    nz = nL + nU
    sd = nmax(smax, (ysum + zsum) / max(1, m + nz)) / smax
    sc = nmax(smax, zsum / max(1, nz)) / smax
    df = V[1][0]
    E0 = nmax(nmax(dual / sd, nconstr), compl / sc)
    Emu = nmax(nmax(dual / sd, constr), compl_mu / sc)
    return E0, Emu, dual / df, uconstr, compl / df, wmax


# ================================================================ inertia correction
@njit(cache=True, _nrt=False, error_model="numpy")
def factorize_ic(S, O, KT, L, JV, HV, sigma, mu, st):
    """_factorize_with_inertia_correction; st = [delta_w_last]; returns 0 or -reason."""
    SI = S[0]
    nw, m, N = SI[2], SI[1], SI[10]
    delta_w = 0.0
    delta_c = 0.0
    kkt_build(S, O, KT, JV, HV, sigma, delta_w, delta_c)
    npos, nneg, nzero = ldl_factor(S, KT[0], L)
    ok = nzero == 0 and npos == nw and nneg == m
    if ok:
        return 0
    if nzero > 0:
        return -3
    dwl = st[0]
    delta_w = O[28] if dwl == 0.0 else max(O[29], O[33] * dwl)
    pivoting = N <= DENSE_PIVOTING_MAX_N
    while True:
        kkt_build(S, O, KT, JV, HV, sigma, delta_w, delta_c)
        npos, nneg, nzero = ldl_factor(S, KT[0], L)
        ok = nzero == 0 and npos == nw and nneg == m
        if ok:
            st[0] = delta_w
            return 0
        zp = nzero > 0
        set_c = zp and delta_c == 0.0
        if set_c:
            delta_c = O[34] * mu ** O[35]
        if pivoting:
            if (not set_c) and ((zp and delta_w > 0.0) or delta_w > PIVOTING_SWITCH_DELTA_W):
                return -4
        delta_w = delta_w * (O[31] if st[0] == 0.0 else O[32])
        if delta_w > O[30]:
            return -5


# ================================================================ filter
@njit(cache=True, _nrt=False, error_model="numpy")
def filter_reset(FT, FI):
    for k in range(FT.shape[1]):
        FT[0, k] = np.inf
        FT[1, k] = np.inf
    FI[0] = 0     # rejected_by_filter
    FI[1] = 0     # filter_rejections


@njit(cache=True, _nrt=False, error_model="numpy")
def filter_acceptable(FT, theta, phi):
    for k in range(FT.shape[1]):
        if theta >= FT[0, k] and phi >= FT[1, k]:
            return False
    return True


@njit(cache=True, _nrt=False, error_model="numpy")
def filter_add(FT, theta, phi):
    """Returns False when the filter is full (-> ejected)."""
    free = -1
    for k in range(FT.shape[1]):
        if FT[0, k] >= theta and FT[1, k] >= phi:
            FT[0, k] = np.inf
            FT[1, k] = np.inf
    for k in range(FT.shape[1]):
        if FT[0, k] == np.inf:
            free = k
            break
    if free < 0:
        return False
    FT[0, free] = theta
    FT[1, free] = phi
    return True


@njit(cache=True, _nrt=False, error_model="numpy")
def le_(a, b, ref):
    return a - b <= 10.0 * _EPS * abs(ref)


@njit(cache=True, _nrt=False, error_model="numpy")
def acceptable(O, FT, FI, LS, theta, phi, gBD, alpha, theta_t, phi_t):
    """LineSearch._acceptable: 0 rejected, 1 'f', 2 'h'."""
    theta_min, theta_max = LS[0], LS[1]
    live = math.isfinite(phi_t) and not (theta_t > theta_max)
    switching = gBD < 0 and alpha * (-gBD) ** S_PHI > DELTA * theta ** S_THETA
    armijo = le_(phi_t - phi, ETA_PHI * alpha * gBD, phi)
    inc = phi_t - phi
    big = phi_t > phi and math.log10(inc if inc > 0 else 1.0) > O[41] + (
        math.log10(abs(phi)) if abs(phi) > 10.0 else 1.0)
    suff = (not big) and (le_(theta_t, (1 - G_THETA) * theta, theta)
                          or le_(phi_t, phi - G_PHI * theta, phi))
    ok = armijo if (theta <= theta_min and switching) else suff
    if not live:
        return 0
    if not ok:
        FI[0] = 0
        return 0
    if not filter_acceptable(FT, theta_t, phi_t):
        FI[0] = 1
        return 0
    # note_acceptance
    if FI[2] < O[42]:
        if FI[0] == 1:
            FI[1] += 1
            if FI[1] >= O[43]:
                filter_reset(FT, FI)
                FI[2] += 1
        else:
            FI[1] = 0
    FI[0] = 0
    return 1 if (switching and armijo) else 2


# ================================================================ the solve
@njit(cache=True, _nrt=False, error_model="numpy")
def bound_mult_steps(S, dW, ZL, ZU, sL, sU, mu, dzL, dzU):
    iL, iU = S[3], S[4]
    for k in range(iL.shape[0]):
        dzL[k] = ((mu - ZL[k] * sL[k]) - ZL[k] * dW[iL[k]]) / sL[k]
    for k in range(iU.shape[0]):
        dzU[k] = ((mu - ZU[k] * sU[k]) + ZU[k] * dW[iU[k]]) / sU[k]


@njit(cache=True, _nrt=False, error_model="numpy")
def accept(S, O, V, Q, IT, alpha, alpha_z, wt, f_t, h_t, dY, dzL, dzU, mu):
    SI = S[0]
    nw, m, nL, nU = SI[2], SI[1], SI[5], SI[6]
    W, Y, ZL, ZU, H = IT[0], IT[1], IT[2], IT[3], IT[5]
    for i in range(nw):
        W[i] = wt[i]
    IT[4][0] = f_t
    for i in range(m):
        H[i] = h_t[i]
        Y[i] = Y[i] + alpha * dY[i]
    for k in range(nL):
        ZL[k] = ZL[k] + alpha_z * dzL[k]
    for k in range(nU):
        ZU[k] = ZU[k] + alpha_z * dzU[k]
    sL, sU = Q[1], Q[2]
    slacks(S, V, W, sL, sU)
    ks = O[12]
    for k in range(nL):
        ZL[k] = min(max(ZL[k], mu / (ks * sL[k])), ks * mu / sL[k])
    for k in range(nU):
        ZU[k] = min(max(ZU[k], mu / (ks * sU[k])), ks * mu / sU[k])


@njit(cache=True, _nrt=False, error_model="numpy")
def trial(E, S, O, V, Q, W, alpha, dW, wt, ht, mu):
    """(f, ok, theta, phi, safe) at wt = W + alpha dW."""
    nw, m = S[0][2], S[0][1]
    for i in range(nw):
        wt[i] = W[i] + alpha * dW[i]
    f = nlp_zeroth(E, S, V, wt, ht)
    ok = math.isfinite(f) and isfinite_all(ht, m)
    theta = sum_abs(ht, m, Q[3])
    phi, safe = barrier_phi(S, O, V, f, wt, mu, Q[4], Q[5], Q[3])
    return f, ok, theta, phi, safe


@njit(cache=True, _nrt=False, error_model="numpy")
def setup_instance(E, S, O, V, IT, Q, x0, lbx, ubx, lbg, ubg):
    """The slack problem of this instance: scaling, relaxed bounds, pushed start."""
    SI = S[0]
    n, m, nw, nx, ns, nL, nU = SI[0], SI[1], SI[2], SI[3], SI[4], SI[5], SI[6]
    N = SI[10]
    nju = SI[8]
    x = E[19]
    W, Y, ZL, ZU, Fa, H, G, JV, HV = IT[0], IT[1], IT[2], IT[3], IT[4], IT[5], IT[6], IT[7], IT[8]
    df_a, dc, goff, gradf, jv, dcj = V[1], V[2], V[3], V[4], V[5], V[6]
    wL, wU, dci = V[8], V[9], V[10]
    sr, eqm, iL, iU = S[1], S[2], S[3], S[4]
    sL, sU, tmp = Q[1], Q[2], Q[3]
    # ---------------------------------------------------------------- slack problem
    for i in range(n):
        if lbx[i] == ubx[i]:
            return -20          # fixed variables: not in the prototype
        x[i] = x0[i]
    for i in range(m):
        V[11][i] = lbg[i]
        V[12][i] = ubg[i]
        if (eqm[i] == 1) != (lbg[i] == ubg[i]):
            return -20          # another structure than the compiled one
    # gradient-based scaling at x0 (SlackNLP._compute_scaling)
    df = O[24]
    for i in range(m):
        dc[i] = 1.0
    if O[21] == 1.0:
        gmax, gmin = O[22], O[23]
        ev_first(E, gradf, jv)
        gf = amax_abs(gradf, nx) if nx > 0 else 0.0
        if math.isfinite(gf) and gf > gmax:
            df *= max(gmin, gmax / gf)
        if m > 0:
            ujr = S[31]
            rowmax = tmp
            for i in range(m):
                rowmax[i] = 0.0
            for k in range(nju):
                rowmax[ujr[k]] = nmax(rowmax[ujr[k]], abs(jv[k]))
            for i in range(m):
                if math.isfinite(rowmax[i]) and rowmax[i] > gmax:
                    dc[i] = max(gmin, gmax / rowmax[i])
    df_a[0] = df
    ujr = S[31]
    for k in range(nju):
        dcj[k] = dc[ujr[k]]
    for k in range(ns):
        dci[k] = dc[sr[k]]
    # relaxed bounds (solver/nlp.py relaxed_bounds)
    brf, cvt = O[17], O[2]
    for j in range(nw):
        if j < nx:
            bl, bu, fac = lbx[j], ubx[j], brf
        else:
            r = sr[j - nx]
            bl, bu = lbg[r], ubg[r]
            fac = O[18] if eqm[r] == 1 else brf
        if math.isfinite(bl):
            bl = bl + -1.0 * min(cvt, fac * max(1.0, abs(bl)))
        if math.isfinite(bu):
            bu = bu + 1.0 * min(cvt, fac * max(1.0, abs(bu)))
        if j >= nx:
            bl = bl * dci[j - nx]
            bu = bu * dci[j - nx]
        wL[j] = bl
        wU[j] = bu
    for i in range(m):
        goff[i] = lbg[i] if eqm[i] == 1 else 0.0
    # initial w, pushed into the bounds
    for i in range(nx):
        W[i] = x[i]
    if ns > 0:
        ev_zeroth(E, V[0])
        for k in range(ns):
            W[nx + k] = dci[k] * V[0][sr[k]]
    for j in range(nw):
        k1 = O[13] if j < nx else O[15]
        k2 = O[14] if j < nx else O[16]
        a, b = wL[j], wU[j]
        fa, fb = math.isfinite(a), math.isfinite(b)
        pL = min(k1 * max(1.0, abs(a)), k2 * (b - a)) if fb else k1 * max(1.0, abs(a))
        pU = min(k1 * max(1.0, abs(b)), k2 * (b - a)) if fa else k1 * max(1.0, abs(b))
        lo = a + pL if fa else -np.inf
        hi = b - pU if fb else np.inf
        if lo > hi:
            W[j] = 0.5 * (a + b)
        else:
            W[j] = min(max(W[j], lo), hi)
    if SI[13] > nx:
        return -21
    return 0


@njit(cache=True, _nrt=False, error_model="numpy")
def initialize(E, S, O, V, IT, Q, KT, L, DR, FT, FI):
    """Starting iterate: f, h, derivatives, z, least-squares y, line-search state."""
    SI = S[0]
    n, m, nw, nx, ns, nL, nU = SI[0], SI[1], SI[2], SI[3], SI[4], SI[5], SI[6]
    N = SI[10]
    nju = SI[8]
    x = E[19]
    W, Y, ZL, ZU, Fa, H, G, JV, HV = IT[0], IT[1], IT[2], IT[3], IT[4], IT[5], IT[6], IT[7], IT[8]
    df_a, dc, goff, gradf, jv, dcj = V[1], V[2], V[3], V[4], V[5], V[6]
    wL, wU, dci = V[8], V[9], V[10]
    sr, eqm, iL, iU = S[1], S[2], S[3], S[4]
    sL, sU, tmp = Q[1], Q[2], Q[3]
    # ---------------------------------------------------------------- initialize
    Fa[0] = nlp_zeroth(E, S, V, W, H)
    if not (math.isfinite(Fa[0]) and isfinite_all(H, m)):
        return -1
    nlp_first(E, S, V, W, G, JV)
    if not (isfinite_all(G, nw) and isfinite_all(JV, SI[7])):
        return -2
    for k in range(nL):
        ZL[k] = O[20]
    for k in range(nU):
        ZU[k] = O[20]
    sigma = DR[6]
    st = DR[12]          # [delta_w_last]
    st[0] = 0.0
    if m > 0:
        rd = Q[0]
        for i in range(nw):
            rd[i] = G[i]
        for k in range(nL):
            rd[iL[k]] -= ZL[k]
        for k in range(nU):
            rd[iU[k]] += ZU[k]
        for k in range(SI[9]):
            HV[k] = 0.0
        for i in range(nw):
            sigma[i] = 0.0
            rd[i] = -rd[i]
        for i in range(m):
            tmp[i] = 0.0
        y = DR[1]
        for i in range(m):
            y[i] = 0.0
        for dcv in (0.0, 1e-10):
            kkt_build(S, O, KT, JV, HV, sigma, 1.0, dcv)
            npos, nneg, nzero = ldl_factor(S, KT[0], L)
            if nzero == 0 and npos == nw and nneg == m:
                kkt_solve(S, O, KT, L, rd, tmp, DR[0], y)
                break
        ymax = amax_abs(y, m)
        keep = math.isfinite(ymax) and ymax <= O[19]
        for i in range(m):
            Y[i] = y[i] if keep else 0.0
    theta0 = sum_abs(H, m, tmp)
    LS = DR[13]          # theta_min, theta_max, last_mu, shortened, tiny_step
    LS[1] = O[36] * max(1.0, theta0)
    LS[0] = O[37] * max(1.0, theta0)
    LS[2] = np.nan
    LS[3] = 0.0
    LS[4] = 0.0
    filter_reset(FT, FI)
    FI[2] = 0
    return 0


@njit(cache=True, _nrt=False, error_model="numpy")
def second_order(E, S, O, V, IT, Q, KT, L, DR, FT, FI, alpha, theta, phi, gBD, theta_t,
                 mu, tau):
    """IPOPT's second-order corrections after a rejected first trial: (accepted, status)."""
    SI = S[0]
    n, m, nw, nx, ns, nL, nU = SI[0], SI[1], SI[2], SI[3], SI[4], SI[5], SI[6]
    N = SI[10]
    nju = SI[8]
    x = E[19]
    W, Y, ZL, ZU, Fa, H, G, JV, HV = IT[0], IT[1], IT[2], IT[3], IT[4], IT[5], IT[6], IT[7], IT[8]
    df_a, dc, goff, gradf, jv, dcj = V[1], V[2], V[3], V[4], V[5], V[6]
    wL, wU, dci = V[8], V[9], V[10]
    sr, eqm, iL, iU = S[1], S[2], S[3], S[4]
    sL, sU, tmp = Q[1], Q[2], Q[3]
    dW, dY, dzL, dzU, gphi, rhs_w, rhs_c = DR[0], DR[1], DR[2], DR[3], DR[4], DR[5], DR[7]
    wt, ht, c_soc, dws, dys, h2 = DR[8], DR[9], DR[10], DR[14], DR[15], DR[16]
    dzL2, dzU2 = DR[17], DR[18]
    LS = DR[13]
    # ---------------------------------------- second-order correction
    for i in range(m):
        c_soc[i] = alpha * H[i] + ht[i]
    theta_old = theta_t
    for _k in range(int(O[39])):
        for i in range(m):
            tmp[i] = -c_soc[i]
        kkt_solve(S, O, KT, L, rhs_w, tmp, dws, dys)
        if not isfinite_all(dws, nw):
            break
        a_soc = min(ftb_idx(sL, dws, iL, 1.0, tau),
                    ftb_idx(sU, dws, iU, -1.0, tau))
        f2, ok2, theta2, phi2, safe2 = trial(E, S, O, V, Q, W, a_soc, dws,
                                             wt, h2, mu)
        if not ok2:
            break
        if safe2:
            return False, -8
        kind = acceptable(O, FT, FI, LS, theta, phi, gBD, alpha, theta2, phi2)
        if kind > 0:
            bound_mult_steps(S, dws, ZL, ZU, sL, sU, mu, dzL2, dzU2)
            az = min(ftb(ZL, dzL2, 1.0, tau, nL), ftb(ZU, dzU2, 1.0, tau, nU))
            if kind == 2:
                if not filter_add(FT, (1 - G_THETA) * theta,
                                  phi - G_PHI * theta):
                    return False, -20
            accept(S, O, V, Q, IT, a_soc, az, wt, f2, h2, dys, dzL2, dzU2, mu)
            return True, 0
        if theta2 > O[40] * theta_old:
            break
        theta_old = theta2
        for i in range(m):
            c_soc[i] = a_soc * c_soc[i] + h2[i]
    return False, 0


@njit(cache=True, _nrt=False, error_model="numpy")
def line_search(E, S, O, V, IT, Q, KT, L, DR, FT, FI, mu, tau):
    """The filter line search along DR's direction: 0 (moved) or -reason."""
    SI = S[0]
    n, m, nw, nx, ns, nL, nU = SI[0], SI[1], SI[2], SI[3], SI[4], SI[5], SI[6]
    N = SI[10]
    nju = SI[8]
    x = E[19]
    W, Y, ZL, ZU, Fa, H, G, JV, HV = IT[0], IT[1], IT[2], IT[3], IT[4], IT[5], IT[6], IT[7], IT[8]
    df_a, dc, goff, gradf, jv, dcj = V[1], V[2], V[3], V[4], V[5], V[6]
    wL, wU, dci = V[8], V[9], V[10]
    sr, eqm, iL, iU = S[1], S[2], S[3], S[4]
    sL, sU, tmp = Q[1], Q[2], Q[3]
    dW, dY, dzL, dzU, gphi, rhs_w, rhs_c = DR[0], DR[1], DR[2], DR[3], DR[4], DR[5], DR[7]
    wt, ht, c_soc, dws, dys, h2 = DR[8], DR[9], DR[10], DR[14], DR[15], DR[16]
    dzL2, dzU2 = DR[17], DR[18]
    LS = DR[13]
    # ------------------------------------------------------------ line search
    if LS[2] != mu:
        LS[3] = 0.0
    LS[2] = mu
    ap = min(ftb_idx(sL, dW, iL, 1.0, tau), ftb_idx(sU, dW, iU, -1.0, tau))
    ad = min(ftb(ZL, dzL, 1.0, tau, nL), ftb(ZU, dzU, 1.0, tau, nU))
    for i in range(nw):
        tmp[i] = gphi[i] * dW[i]
    gBD = pairwise_sum(tmp, 0, nw)
    rel = 0.0
    for i in range(nw):
        v = abs(dW[i] / (1.0 + abs(W[i])))
        rel = v if i == 0 else nmax(rel, v)
    theta = sum_abs(H, m, tmp)
    phi, safe = barrier_phi(S, O, V, Fa[0], W, mu, Q[4], Q[5], tmp)
    if safe:
        return -8
    tiny = rel < 10.0 * _EPS and theta <= TINY_STEP_MAX_THETA
    if O[44] > 0 and (not tiny) and LS[3] >= O[44]:
        return -9
    moved = False
    LS[4] = 0.0
    if tiny:
        f_t, ok, _t, _p, _s = trial(E, S, O, V, Q, W, ap, dW, wt, ht, mu)
        if ok:
            accept(S, O, V, Q, IT, ap, ad, wt, f_t, ht, dY, dzL, dzU, mu)
            LS[3] = 0.0
            LS[4] = 1.0
            moved = True
    if not moved:
        if gBD < 0:
            if theta <= LS[0]:
                amin = min(min(G_THETA, G_PHI * theta / -gBD),
                           DELTA * theta ** S_THETA / (-gBD) ** S_PHI)
            else:
                amin = min(G_THETA, G_PHI * theta / -gBD)
        else:
            amin = G_THETA
        amin *= ALPHA_MIN_FRAC
        alpha = ap
        ntr = 0
        r_ = O[38]
        if 0.0 < r_ < 1.0:
            last = int(math.ceil(math.log(_TINY / alpha) / math.log(r_)) + 1) \
                if alpha > _TINY else 1
        else:
            last = 1
        all_invalid = True
        ej = 0
        while True:
            if not ((amin <= alpha and alpha > 0.0 and ntr < last) or ntr == 0):
                break
            ntr += 1
            f_t, ok, theta_t, phi_t, safe_t = trial(E, S, O, V, Q, W, alpha, dW, wt, ht, mu)
            if ok and safe_t:
                ej = -8
                break
            if ok:
                all_invalid = False
                kind = acceptable(O, FT, FI, LS, theta, phi, gBD, alpha, theta_t, phi_t)
                if kind > 0:
                    if kind == 2:
                        if not filter_add(FT, (1 - G_THETA) * theta, phi - G_PHI * theta):
                            ej = -20
                            break
                    accept(S, O, V, Q, IT, alpha, ad, wt, f_t, ht, dY, dzL, dzU, mu)
                    LS[3] = 0.0 if ntr == 1 else LS[3] + 1.0
                    moved = True
                    break
            if O[39] > 0 and ok and ntr == 1 and theta_t >= theta:
                done, ej = second_order(E, S, O, V, IT, Q, KT, L, DR, FT, FI, alpha, theta,
                                        phi, gBD, theta_t, mu, tau)
                if ej != 0:
                    break
                if done:
                    LS[3] = 0.0 if ntr == 1 else LS[3] + 1.0
                    moved = True
                    break
            alpha = alpha * O[38]
        if ej != 0:
            return ej
        if not moved:
            return -11 if all_invalid else -10
    return 0


@njit(cache=True, _nrt=False, error_model="numpy")
def solve_instance(E, S, O, V, IT, Q, KT, L, DR, FT, FI, x0, lbx, ubx, lbg, ubg, out):
    """One solve.  Returns (status, iterations); out[0] = f(x); x in E[19]."""
    SI = S[0]
    n, m, nw, nx, ns, nL, nU = SI[0], SI[1], SI[2], SI[3], SI[4], SI[5], SI[6]
    N = SI[10]
    nju = SI[8]
    x = E[19]
    W, Y, ZL, ZU, Fa, H, G, JV, HV = IT[0], IT[1], IT[2], IT[3], IT[4], IT[5], IT[6], IT[7], IT[8]
    df_a, dc, goff, gradf, jv, dcj = V[1], V[2], V[3], V[4], V[5], V[6]
    wL, wU, dci = V[8], V[9], V[10]
    sr, eqm, iL, iU = S[1], S[2], S[3], S[4]
    sL, sU, tmp = Q[1], Q[2], Q[3]
    r = setup_instance(E, S, O, V, IT, Q, x0, lbx, ubx, lbg, ubg)
    if r < 0:
        return r, 0
    r = initialize(E, S, O, V, IT, Q, KT, L, DR, FT, FI)
    if r < 0:
        return r, 0
    LS = DR[13]
    sigma = DR[6]
    st = DR[12]
    df = df_a[0]
    mu = O[6]
    tau = max(O[10], 1.0 - O[6])
    acc_count = 0
    last_obj = np.nan
    it = 0
    dW, dY, dzL, dzU, gphi, rhs_w, rhs_c = DR[0], DR[1], DR[2], DR[3], DR[4], DR[5], DR[7]
    wt, ht, c_soc, dws, dys, h2 = DR[8], DR[9], DR[10], DR[14], DR[15], DR[16]
    dzL2, dzU2 = DR[17], DR[18]
    status = -99
    while True:
        # ------------------------------------------------------------ termination
        E0, Emu, udual, uconstr, ucompl, wmax = errors(S, O, V, Q, W, Y, ZL, ZU, H, G, JV, mu)
        if E0 <= O[0] and udual <= O[1] and uconstr <= O[2] and ucompl <= O[3]:
            status = 0
            break
        prev = last_obj
        last_obj = Fa[0]
        objchg = np.inf if prev != prev else abs(Fa[0] - prev) / max(1.0, abs(Fa[0]))
        acc = (O[5] > 0 and E0 <= O[4] and udual <= O[50] and uconstr <= O[51]
               and ucompl <= O[52] and objchg <= O[49])
        acc_count = acc_count + 1 if acc else 0
        if acc and acc_count >= O[5]:
            status = 1
            break
        if wmax > O[48]:
            status = 2
            break
        if it >= O[47]:
            status = 3
            break
        # ------------------------------------------------------------ mu update
        floor = min(O[0], O[3] * df) / (O[9] + 1.0)
        tiny = LS[4] == 1.0
        changed = False
        active = True
        first = True
        while True:
            active = active and mu > floor
            if not active:
                break
            if not first:
                E0, Emu, udual, uconstr, ucompl, wmax = errors(S, O, V, Q, W, Y, ZL, ZU, H,
                                                               G, JV, mu)
            first = False
            dec = active and (Emu <= O[9] * mu or tiny)
            if dec:
                mu = nmax(floor, nmin(O[7] * mu, mu ** O[8]))
                tau = max(O[10], 1.0 - mu)
                changed = True
            active = dec and not tiny
        if changed:
            filter_reset(FT, FI)
        # ------------------------------------------------------------ direction
        slacks(S, V, W, sL, sU)
        for i in range(nw):
            sigma[i] = 0.0
        for k in range(nL):
            sigma[iL[k]] += ZL[k] / sL[k]
        for k in range(nU):
            sigma[iU[k]] += ZU[k] / sU[k]
        nlp_hess(E, S, V, W, Y, HV)
        if not isfinite_all(HV, SI[9]):
            status = -2
            break
        kd = O[11] * mu
        dampL, dampU = S[5], S[6]
        for i in range(nw):
            gphi[i] = G[i]
        for k in range(nL):
            gphi[iL[k]] += -mu / sL[k] + kd * dampL[k]
        for k in range(nU):
            gphi[iU[k]] += mu / sU[k] + (-kd) * dampU[k]
        aty(S, JV, Y, rhs_w)
        for i in range(nw):
            rhs_w[i] = -(gphi[i] + rhs_w[i])
        for i in range(m):
            rhs_c[i] = -H[i]
        r = factorize_ic(S, O, KT, L, JV, HV, sigma, mu, st)
        if r < 0:
            status = r
            break
        ratio, rho = kkt_solve(S, O, KT, L, rhs_w, rhs_c, dW, dY)
        eps = O[27]
        slow = rho > O[46] and eps > SLOW_REFINEMENT_EPS_FLOOR and ratio <= RESIDUAL_RATIO_SINGULAR
        if slow or ratio > RESIDUAL_RATIO_SINGULAR or not math.isfinite(ratio):
            status = -6
            break
        if not (isfinite_all(dW, nw) and isfinite_all(dY, m)):
            status = -7
            break
        bound_mult_steps(S, dW, ZL, ZU, sL, sU, mu, dzL, dzU)
        r = line_search(E, S, O, V, IT, Q, KT, L, DR, FT, FI, mu, tau)
        if r < 0:
            status = r
            break
        # ------------------------------------------------------------ derivatives
        nlp_first(E, S, V, W, DR[19], DR[20])
        if not (isfinite_all(DR[19], nw) and isfinite_all(DR[20], SI[7])):
            status = -2
            break
        for i in range(nw):
            G[i] = DR[19][i]
        for k in range(SI[7]):
            JV[k] = DR[20][k]
        it += 1
    # ---------------------------------------------------------------- result
    set_x(E, S, W)
    out[0] = ev_zeroth(E, V[0])
    return status, it


@njit(cache=True, _nrt=False, error_model="numpy")
def solve_many(E, S, O, V, IT, Q, KT, L, DR, FT, FI, X0, P, lbx, ubx, lbg, ubg, out,
               status, iters, Xout, fout):
    """B instances one after the other in one call (the CPU batch: no Python per
    instance).  On a GPU this loop is the grid: one thread per instance, each with its
    own work arrays."""
    n = S[0][0]
    p = E[20]
    x = E[19]
    for b in range(X0.shape[0]):
        for j in range(p.shape[0]):
            p[j] = P[b, j]
        st, it = solve_instance(E, S, O, V, IT, Q, KT, L, DR, FT, FI, X0[b], lbx, ubx, lbg,
                                ubg, out)
        status[b] = st
        iters[b] = it
        fout[b] = out[0]
        for j in range(n):
            Xout[b, j] = x[j]
