"""The optimality errors' vector work (:func:`.quantities.errors`) split over a team's
lanes (:mod:`.team`): after J^T y is in slot F_DUAL_RES,

* the dual residual ``r_d = (G + J^T y) - P_L z_L + P_U z_U`` (three phases: a variable
  may have both bounds), the slacks ``s_L``, ``s_U`` at W;
* the maxima max |r_d|, max |h|, the slack problem's constraint violation, the
  complementarity ``max s z`` and ``max |s z - mu|`` per side, max |w|, the unscaled
  violation -- each lane's partial in F_TEAM_PARTIALS (:data:`ERR_*` of :data:`.team.
  PARTIALS` per lane), combined by :func:`errors_combined`;
* ``|y_i|`` into F_SCRATCH for the leader's pairwise sum.

The iterate is the solve's own (slots F_W, F_Y, F_ZL, F_ZU, F_H, F_GRAD_W).

Why a combination of partials is the one-pass value bit for bit: each maximum is taken
with the one-pass rule "NaN once any entry is NaN, else replaced only by a strictly
larger entry" (:func:`max_step`), so it is the first entry attaining the maximum; a
lane's partial is the first in its share, and the partials folded in lane order (the
shares are consecutive and in lane order) give the first overall -- the same bits, the
sign of a zero included.  A loop that starts from its first entry starts here from
``-inf`` (which any entry replaces, and which an empty share leaves); one that starts
from 0.0 starts the fold from 0.0.
"""
import numpy as np

from ._jit import U, _f, _i, kernel
from .pairwise import nmax
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .team import PARTIALS, lane_share, team_sync

#: partials of :func:`errors_terms_part` (offsets in a lane's PARTIALS values)
ERR_DUAL = 0        # max |r_d|
ERR_CONSTR = 1      # max |h|
ERR_SLACK_VIOL = 2  # max over slack rows of the relaxed bounds' violation
ERR_EQ_VIOL = 3     # max |h| over the equality rows (slack rows present)
ERR_COMPL_L = 4     # max s_L z_L
ERR_COMPL_MU_L = 5  # max |s_L z_L - mu|
ERR_COMPL_U = 6
ERR_COMPL_MU_U = 7
ERR_WMAX = 8        # max |w|
ERR_UCONSTR = 9     # the unscaled violation (both kinds of rows)
ERR_PARTIALS = 10


@kernel
def max_step(r, v):
    """The running maximum's step: NaN once either is NaN, else ``v`` only if strictly
    larger (so the first entry attaining the maximum is kept)."""
    if r != r or v != v:
        return np.nan
    return v if v > r else r


@kernel
def errors_terms_part(Fb, FO, Ib, IO, mu, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of the errors' vector work (module docstring):
    J^T y already in F_DUAL_RES; r_d there after, s_L, s_U in F_SL, F_SU, |y| in
    F_SCRATCH, the partials in F_TEAM_PARTIALS[PARTIALS lane ..]."""
    SI = _i(Ib, IO, I_SIZES)
    m, nw, nx, ns, nL, nU = SI[SZ_M], SI[SZ_NW], SI[SZ_NX], SI[SZ_NS], SI[SZ_NL], SI[SZ_NU]
    rd = _f(Fb, FO, F_DUAL_RES)
    G, W, Y = _f(Fb, FO, F_GRAD_W), _f(Fb, FO, F_W), _f(Fb, FO, F_Y)
    ZL, ZU, H = _f(Fb, FO, F_ZL), _f(Fb, FO, F_ZU), _f(Fb, FO, F_H)
    sL, sU, tmp = _f(Fb, FO, F_SL), _f(Fb, FO, F_SU), _f(Fb, FO, F_SCRATCH)
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    wL, wU = _f(Fb, FO, F_W_LOWER), _f(Fb, FO, F_W_UPPER)
    s0, s1 = lane_share(nw, lane, lanes)
    for i in range(U(s0), U(s1)):
        rd[i] = G[i] + rd[i]
    team_sync(Ib, IO)
    l0, l1 = lane_share(nL, lane, lanes)
    for k in range(U(l0), U(l1)):
        rd[U(iL[k])] -= ZL[k]
    team_sync(Ib, IO)
    u0, u1 = lane_share(nU, lane, lanes)
    for k in range(U(u0), U(u1)):
        rd[U(iU[k])] += ZU[k]
    team_sync(Ib, IO)
    dual, wmax = 0.0, 0.0
    for i in range(U(s0), U(s1)):
        dual = max_step(dual, abs(rd[i]))
        wmax = max_step(wmax, abs(W[i]))
    c1, cm1 = -np.inf, -np.inf
    for k in range(U(l0), U(l1)):
        j = U(iL[k])
        s = W[j] - wL[j]
        sL[k] = s
        v = s * ZL[k]
        c1 = max_step(c1, v)
        cm1 = max_step(cm1, abs(v - mu))
    c2, cm2 = -np.inf, -np.inf
    for k in range(U(u0), U(u1)):
        j = U(iU[k])
        s = wU[j] - W[j]
        sU[k] = s
        v = s * ZU[k]
        c2 = max_step(c2, v)
        cm2 = max_step(cm2, abs(v - mu))
    m0, m1 = lane_share(m, lane, lanes)
    constr = 0.0
    for i in range(U(m0), U(m1)):
        constr = max_step(constr, abs(H[i]))
        tmp[i] = abs(Y[i])
    vmax, e2, uc = -np.inf, -np.inf, -np.inf
    if ns > 0:
        sr = _i(Ib, IO, I_SLACK_ROWS)
        dci = _f(Fb, FO, F_SLACK_SCALE)
        n0, n1 = lane_share(ns, lane, lanes)
        for k in range(U(n0), U(n1)):
            gI = H[U(sr[k])] + W[U(nx + k)]
            v = nmax(nmax(wL[U(nx + k)] - gI, gI - wU[U(nx + k)]), 0.0)
            vmax = max_step(vmax, v)
            uc = max_step(uc, v / dci[k])
    if m > 0:
        dc = _f(Fb, FO, F_CON_SCALE)
        enf = _i(Ib, IO, I_EQ_ROWS)
        e0, e1 = lane_share(enf.shape[0], lane, lanes)
        for k in range(U(e0), U(e1)):
            r = U(enf[k])
            e2 = max_step(e2, abs(H[r]))
            uc = max_step(uc, abs(H[r]) / dc[r])
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    o = U(PARTIALS) * U(lane)
    P[o + U(ERR_DUAL)] = dual
    P[o + U(ERR_CONSTR)] = constr
    P[o + U(ERR_SLACK_VIOL)] = vmax
    P[o + U(ERR_EQ_VIOL)] = e2
    P[o + U(ERR_COMPL_L)] = c1
    P[o + U(ERR_COMPL_MU_L)] = cm1
    P[o + U(ERR_COMPL_U)] = c2
    P[o + U(ERR_COMPL_MU_U)] = cm2
    P[o + U(ERR_WMAX)] = wmax
    P[o + U(ERR_UCONSTR)] = uc


@kernel
def fold_max(P, k, lanes, start):
    """Partial ``k`` (of F_TEAM_PARTIALS ``P``) of ``lanes`` lanes folded in lane order from
    ``start`` by :func:`max_step`."""
    r = start
    for lane in range(lanes):
        r = max_step(r, P[PARTIALS * lane + k])
    return r


@kernel
def errors_combined(Fb, FO, Ib, IO, lanes):
    """(dual, constr, nconstr, compl, compl_mu, wmax, uconstr) from the lanes' partials,
    as :func:`.quantities.errors` computes them in one pass."""
    SI = _i(Ib, IO, I_SIZES)
    m, ns, nL, nU = SI[SZ_M], SI[SZ_NS], SI[SZ_NL], SI[SZ_NU]
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    dual = fold_max(P, ERR_DUAL, lanes, 0.0)
    constr = fold_max(P, ERR_CONSTR, lanes, 0.0)
    if m == 0:
        nconstr = 0.0
    elif ns == 0:
        nconstr = constr
    else:
        nconstr = fold_max(P, ERR_SLACK_VIOL, lanes, -np.inf)
        if ns < m:
            nconstr = nmax(nconstr, fold_max(P, ERR_EQ_VIOL, lanes, -np.inf))
    c1 = fold_max(P, ERR_COMPL_L, lanes, -np.inf) if nL > 0 else 0.0
    cm1 = fold_max(P, ERR_COMPL_MU_L, lanes, -np.inf) if nL > 0 else 0.0
    c2 = fold_max(P, ERR_COMPL_U, lanes, -np.inf) if nU > 0 else 0.0
    cm2 = fold_max(P, ERR_COMPL_MU_U, lanes, -np.inf) if nU > 0 else 0.0
    wmax = fold_max(P, ERR_WMAX, lanes, 0.0)
    uconstr = fold_max(P, ERR_UCONSTR, lanes, 0.0) if m > 0 else 0.0
    return dual, constr, nconstr, nmax(c1, c2), nmax(cm1, cm2), wmax, uconstr


@kernel
def errors_terms(Fb, FO, Ib, IO, mu):
    """The errors' vector work on one lane (the part at (0, 1); the CUDA build's team
    launch splits it, :mod:`..cuda.team`), combined: (dual, constr, nconstr, compl,
    compl_mu, wmax, uconstr)."""
    errors_terms_part(Fb, FO, Ib, IO, mu, U(0), U(1))
    return errors_combined(Fb, FO, Ib, IO, 1)
