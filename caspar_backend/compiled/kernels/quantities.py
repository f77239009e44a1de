"""batch/quantities.py for one instance: fraction to the boundary, the barrier
function phi, the optimality errors.
"""
import math

import numpy as np

from .constants import EPS
from ._jit import U, _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .pairwise import amax_abs, nmax, nmin, pairwise_sum
from .slack_nlp import aty, slacks


@kernel
def ftb(s, ds, sign, tau, n):
    """fraction_to_boundary(s, sign * ds) (min(1, min over ds < 0 of -tau s / ds))."""
    r = np.inf
    for i in range(n):
        d = sign * ds[i]
        if d < 0.0:
            v = (-tau * s[i]) / d
            r = nmin(r, v)
    return nmin(1.0, r)


@kernel
def ftb_idx(s, dW, idx, sign, tau):
    r = np.inf
    for i in range(idx.shape[0]):
        d = sign * dW[U(idx[i])]
        if d < 0.0:
            v = (-tau * s[i]) / d
            r = nmin(r, v)
    return nmin(1.0, r)


@kernel
def barrier_phi(Fb, FO, Ib, IO, O, F, W, mu, sL, sU, tmp):
    """(phi, safe) at W with objective F (quantities.barrier_sums + phi)."""
    SI = _i(Ib, IO, I_SIZES)
    nL, nU = SI[SZ_NL], SI[SZ_NU]
    slacks(Fb, FO, Ib, IO, W, sL, sU)
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
    idL, idU = _i(Ib, IO, I_DAMP_L_IDX), _i(Ib, IO, I_DAMP_U_IDX)
    for i in range(idL.shape[0]):
        tmp[i] = sL[U(idL[i])]
    dL = pairwise_sum(tmp, 0, idL.shape[0])
    for i in range(idU.shape[0]):
        tmp[i] = sU[U(idU[i])]
    dU = pairwise_sum(tmp, 0, idU.shape[0])
    safe = (smin < EPS * min(1.0, mu)) and O[OPT_SLACK_MOVE] > 0.0
    kd = O[OPT_KAPPA_D] * mu
    phi = (F - mu * (lL + lU)) + kd * (dL + dU)
    if not smin > 0.0:
        phi = np.inf
    return phi, safe


@kernel
def sum_abs(a, n, tmp):
    for i in range(n):
        tmp[i] = abs(a[i])
    return pairwise_sum(tmp, 0, n)


@kernel
def errors(Fb, FO, Ib, IO, O, W, Y, ZL, ZU, H, G, JV, mu):
    """quantities.errors: (E0, Emu, udual, uconstr, ucompl, wmax, nconstr, dual, compl) --
    the last three scaled: the slack problem's constraint violation (``nlp_constr``), the
    dual infeasibility and the complementarity.  ``Y`` and ``JV`` are the iterate's slots
    F_Y and F_JV (J^T y reads them there, :func:`.slack_nlp.aty`)."""
    SI = _i(Ib, IO, I_SIZES)
    m, nw, nx, ns, nL, nU = SI[SZ_M], SI[SZ_NW], SI[SZ_NX], SI[SZ_NS], SI[SZ_NL], SI[SZ_NU]
    rd = _f(Fb, FO, F_DUAL_RES)
    sL = _f(Fb, FO, F_SL)
    sU = _f(Fb, FO, F_SU)
    tmp = _f(Fb, FO, F_SCRATCH)
    aty(Fb, FO, Ib, IO, F_DUAL_RES)         # (rd: that slot; JV, Y the iterate's)
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    for i in range(nw):
        rd[i] = G[i] + rd[i]
    for k in range(nL):
        rd[U(iL[k])] -= ZL[k]
    for k in range(nU):
        rd[U(iU[k])] += ZU[k]
    slacks(Fb, FO, Ib, IO, W, sL, sU)
    dual = amax_abs(rd, nw)
    constr = amax_abs(H, m)
    # nlp_constr_viol
    wL, wU = _f(Fb, FO, F_W_LOWER), _f(Fb, FO, F_W_UPPER)
    sr = _i(Ib, IO, I_SLACK_ROWS)
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
            enf = _i(Ib, IO, I_EQ_ROWS)
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
    # unscaled_constr_viol (solver/nlp.py SlackNLP.unscaled_constr_viol_term): IPOPT's
    # unscaled_curr_nlp_constraint_violation -- an inequality by its scaled violation
    # of the relaxed bounds wL, wU divided by dc (unapply_vector_scaling_d), an
    # equality by |h| / dc (unscaled_curr_c); v >= 0, so the max starts at 0
    uconstr = 0.0
    if m > 0:
        dc = _f(Fb, FO, F_CON_SCALE)
        dci = _f(Fb, FO, F_SLACK_SCALE)
        enf = _i(Ib, IO, I_EQ_ROWS)
        for k in range(ns):
            gI = H[sr[k]] + W[nx + k]
            v = nmax(nmax(wL[nx + k] - gI, gI - wU[nx + k]), 0.0) / dci[k]
            if v != v:
                uconstr = np.nan
                break
            if v > uconstr:
                uconstr = v
        if uconstr == uconstr:
            for k in range(enf.shape[0]):
                v = abs(H[enf[k]]) / dc[enf[k]]
                if v != v:
                    uconstr = np.nan
                    break
                if v > uconstr:
                    uconstr = v
    smax = 100.0
    nz = nL + nU
    sd = nmax(smax, (ysum + zsum) / max(1, m + nz)) / smax
    sc = nmax(smax, zsum / max(1, nz)) / smax
    df = _f(Fb, FO, F_OBJ_SCALE)[0]
    E0 = nmax(nmax(dual / sd, nconstr), compl / sc)
    Emu = nmax(nmax(dual / sd, constr), compl_mu / sc)
    return E0, Emu, dual / df, uconstr, compl / df, wmax, nconstr, dual, compl


