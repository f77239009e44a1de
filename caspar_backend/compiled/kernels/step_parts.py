"""The line search's vector work split over a team's lanes (:mod:`.team`): a trial
point, the constraint rows of an evaluation, the barrier function's terms, and the
accepted step.  On one thread (the CPU kernels, a lone leader) each piece is its part
at ``(lane, lanes) = (0, 1)``; each index's operations are those of the one-pass loops
they replace, in the same order.

* :func:`trial_point_part`: ``w_t = w + alpha d_w`` (slot F_W_TRIAL) and the model's x
  from it (slot F_X: :func:`.slack_nlp.set_x`'s rule), one pass;
* :func:`zeroth_rows_part`: ``h = d_c (g - g_off)`` then ``h_r -= s_k`` on the slack
  rows (distinct rows: one lane each), and, where asked, ``|h|`` into F_SCRATCH with a
  finiteness flag (a trial point's measures);
* :func:`barrier_terms_part`: the slacks at a point (slots F_SL_TRIAL, F_SU_TRIAL),
  their minima, ``log s`` (IPOPT's rule at 0 and below) and the damped slacks gathered
  into F_BARRIER_TERMS ``[log s_L | log s_U | s_L[damped] | s_U[damped]]`` for the
  leader's pairwise sums;
* :func:`accept_step_part`: the iterate moved to the trial point, the multipliers stepped,
  the slacks and the bound multipliers' safeguard (IPOPT's kappa_sigma).

Minima are folded like the maxima of :mod:`.errors_parts`: "NaN once any is NaN, else
replaced only by a strictly smaller entry", each lane's from +inf, in lane order -- the
first entry attaining the minimum, the one-pass value bit for bit.  A finiteness flag is
an "and".
"""
import math

import numpy as np

from ._jit import U, _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .errors_parts import fold_max, max_step
from .pairwise import nmin
from .team import PARTIALS, lane_share, team_sync

#: partials of :func:`barrier_terms_part` and :func:`zeroth_rows_part`
BAR_MIN_L = 0       # min s_L
BAR_MIN_U = 1       # min s_U
ROWS_FINITE = 2     # 1.0 if every h_i is finite


@kernel
def min_step(r, v):
    """The running minimum's step: NaN once either is NaN, else ``v`` only if strictly
    smaller (the first entry attaining the minimum is kept)."""
    if r != r or v != v:
        return np.nan
    return v if v < r else r


@kernel
def fold_min(P, k, lanes, start):
    """Partial ``k`` (of F_TEAM_PARTIALS ``P``) of ``lanes`` lanes folded in lane order from
    ``start`` by :func:`min_step`."""
    r = start
    for lane in range(lanes):
        r = min_step(r, P[PARTIALS * lane + k])
    return r


@kernel
def log_barrier(s):
    """log s, -inf at 0, NaN below (NumPy's log of a slack)."""
    return math.log(s) if s > 0.0 else (-np.inf if s == 0.0 else np.nan)


@kernel
def trial_point_part(Fb, FO, Ib, IO, alpha, dw_slot, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of ``w_t = w + alpha d_w`` (d_w in float slot
    ``dw_slot``) into F_W_TRIAL and of x = w_t's first nx entries into F_X (through
    I_FREE_IDX where variables are fixed)."""
    SI = _i(Ib, IO, I_SIZES)
    nw, nx = SI[SZ_NW], SI[SZ_NX]
    W, dW, wt, x = _f(Fb, FO, F_W), _f(Fb, FO, dw_slot), _f(Fb, FO, F_W_TRIAL), _f(Fb, FO, F_X)
    s0, s1 = lane_share(nw, lane, lanes)
    e = min(s1, nx)
    if SI[SZ_NFIX] == 0:
        for i in range(U(s0), U(e)):
            v = W[i] + alpha * dW[i]
            wt[i] = v
            x[i] = v
    else:
        free = _i(Ib, IO, I_FREE_IDX)
        for i in range(U(s0), U(e)):
            v = W[i] + alpha * dW[i]
            wt[i] = v
            x[U(free[i])] = v
    for i in range(U(max(s0, nx)), U(s1)):
        wt[i] = W[i] + alpha * dW[i]


@kernel
def trial_point(Fb, FO, Ib, IO, alpha, dw_slot):
    """:func:`trial_point_part` on one lane (the CUDA build's team launch splits it)."""
    trial_point_part(Fb, FO, Ib, IO, alpha, dw_slot, U(0), U(1))


@kernel
def zeroth_rows_part(Fb, FO, Ib, IO, w_slot, h_slot, measures, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of the constraint rows h (float slot
    ``h_slot``) from g (F_G) at w (slot ``w_slot``): ``h_i = d_c,i (g_i - g_off,i)``, then
    ``h_r -= w[nx + k]`` on slack row r = I_SLACK_ROWS[k]; with ``measures`` 1, ``|h_i|``
    into F_SCRATCH and whether its h_i are finite (F_TEAM_PARTIALS[PARTIALS lane +
    ROWS_FINITE])."""
    SI = _i(Ib, IO, I_SIZES)
    m, nx, ns = SI[SZ_M], SI[SZ_NX], SI[SZ_NS]
    H, W, g = _f(Fb, FO, h_slot), _f(Fb, FO, w_slot), _f(Fb, FO, F_G)
    dc, goff = _f(Fb, FO, F_CON_SCALE), _f(Fb, FO, F_G_OFFSET)
    m0, m1 = lane_share(m, lane, lanes)
    for i in range(U(m0), U(m1)):
        H[i] = dc[i] * (g[i] - goff[i])
    if ns > 0:
        team_sync(Ib, IO)
        sr = _i(Ib, IO, I_SLACK_ROWS)
        n0, n1 = lane_share(ns, lane, lanes)
        for k in range(U(n0), U(n1)):
            r = U(sr[k])
            H[r] = H[r] - W[U(nx + k)]
    if measures == 1:
        if ns > 0:
            team_sync(Ib, IO)
        tmp = _f(Fb, FO, F_SCRATCH)
        ok = 1.0
        for i in range(U(m0), U(m1)):
            v = H[i]
            if not math.isfinite(v):
                ok = 0.0
            tmp[i] = abs(v)
        _f(Fb, FO, F_TEAM_PARTIALS)[U(PARTIALS) * U(lane) + U(ROWS_FINITE)] = ok


@kernel
def rows_finite(Fb, FO, lanes):
    """Whether every lane's rows were finite (:func:`zeroth_rows_part`'s flags)."""
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    for lane in range(lanes):
        if P[PARTIALS * lane + ROWS_FINITE] != 1.0:
            return False
    return True


@kernel
def zeroth_rows(Fb, FO, Ib, IO, w_slot, h_slot, measures):
    """:func:`zeroth_rows_part` on one lane; with ``measures`` 1, whether h is finite
    (else True)."""
    zeroth_rows_part(Fb, FO, Ib, IO, w_slot, h_slot, measures, U(0), U(1))
    return rows_finite(Fb, FO, 1) if measures == 1 else True


@kernel
def barrier_terms_part(Fb, FO, Ib, IO, w_slot, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of the barrier function's terms at w (float
    slot ``w_slot``): the slacks into F_SL_TRIAL, F_SU_TRIAL, their logs and the damped
    slacks into F_BARRIER_TERMS (module docstring), min s_L and min s_U into
    F_TEAM_PARTIALS[PARTIALS lane + BAR_MIN_*]."""
    SI = _i(Ib, IO, I_SIZES)
    nL, nU = SI[SZ_NL], SI[SZ_NU]
    W, wL, wU = _f(Fb, FO, w_slot), _f(Fb, FO, F_W_LOWER), _f(Fb, FO, F_W_UPPER)
    sL, sU, T = _f(Fb, FO, F_SL_TRIAL), _f(Fb, FO, F_SU_TRIAL), _f(Fb, FO, F_BARRIER_TERMS)
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    l0, l1 = lane_share(nL, lane, lanes)
    m1 = np.inf
    for k in range(U(l0), U(l1)):
        j = U(iL[k])
        s = W[j] - wL[j]
        sL[k] = s
        m1 = min_step(m1, s)
        T[k] = log_barrier(s)
    u0, u1 = lane_share(nU, lane, lanes)
    m2 = np.inf
    for k in range(U(u0), U(u1)):
        j = U(iU[k])
        s = wU[j] - W[j]
        sU[k] = s
        m2 = min_step(m2, s)
        T[U(nL) + k] = log_barrier(s)
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    o = U(PARTIALS) * U(lane)
    P[o + U(BAR_MIN_L)] = m1
    P[o + U(BAR_MIN_U)] = m2
    team_sync(Ib, IO)
    idL, idU = _i(Ib, IO, I_DAMP_L_IDX), _i(Ib, IO, I_DAMP_U_IDX)
    o = U(nL + nU)
    d0, d1 = lane_share(idL.shape[0], lane, lanes)
    for i in range(U(d0), U(d1)):
        T[o + i] = sL[U(idL[i])]
    o = U(nL + nU + idL.shape[0])
    d0, d1 = lane_share(idU.shape[0], lane, lanes)
    for i in range(U(d0), U(d1)):
        T[o + i] = sU[U(idU[i])]


@kernel
def barrier_minima(Fb, FO, lanes):
    """(min s_L, min s_U) from the lanes' partials, folded in lane order (+inf for a
    side without slacks)."""
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    return fold_min(P, BAR_MIN_L, lanes, np.inf), fold_min(P, BAR_MIN_U, lanes, np.inf)


@kernel
def barrier_terms(Fb, FO, Ib, IO, w_slot):
    """:func:`barrier_terms_part` on one lane; (min s_L, min s_U)."""
    barrier_terms_part(Fb, FO, Ib, IO, w_slot, U(0), U(1))
    return barrier_minima(Fb, FO, 1)


@kernel
def accept_step_part(Fb, FO, Ib, IO, O, alpha, alpha_z, h_slot, dy_slot, dzl_slot, dzu_slot,
                     mu, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of the accepted step: w = w_t (F_W_TRIAL),
    h = h_t (slot ``h_slot``), ``y += alpha d_y``, ``z += alpha_z d_z`` per side, then
    the slacks at the new w (F_SL, F_SU) and, where kappa_sigma >= 1, each z_k kept in
    ``[mu / (kappa_sigma s_k), kappa_sigma mu / s_k]``."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m, nL, nU = SI[SZ_NW], SI[SZ_M], SI[SZ_NL], SI[SZ_NU]
    W, wt, Y, H = _f(Fb, FO, F_W), _f(Fb, FO, F_W_TRIAL), _f(Fb, FO, F_Y), _f(Fb, FO, F_H)
    ZL, ZU, ht = _f(Fb, FO, F_ZL), _f(Fb, FO, F_ZU), _f(Fb, FO, h_slot)
    dY, dzL, dzU = _f(Fb, FO, dy_slot), _f(Fb, FO, dzl_slot), _f(Fb, FO, dzu_slot)
    s0, s1 = lane_share(nw, lane, lanes)
    for i in range(U(s0), U(s1)):
        W[i] = wt[i]
    m0, m1 = lane_share(m, lane, lanes)
    for i in range(U(m0), U(m1)):
        H[i] = ht[i]
        Y[i] = Y[i] + alpha * dY[i]
    l0, l1 = lane_share(nL, lane, lanes)
    for k in range(U(l0), U(l1)):
        ZL[k] = ZL[k] + alpha_z * dzL[k]
    u0, u1 = lane_share(nU, lane, lanes)
    for k in range(U(u0), U(u1)):
        ZU[k] = ZU[k] + alpha_z * dzU[k]
    team_sync(Ib, IO)
    sL, sU = _f(Fb, FO, F_SL), _f(Fb, FO, F_SU)
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    wL, wU = _f(Fb, FO, F_W_LOWER), _f(Fb, FO, F_W_UPPER)
    for k in range(U(l0), U(l1)):
        j = U(iL[k])
        sL[k] = W[j] - wL[j]
    for k in range(U(u0), U(u1)):
        j = U(iU[k])
        sU[k] = wU[j] - W[j]
    ks = O[OPT_KAPPA_SIGMA]
    if ks < 1.0:            # IPOPT: no correction of the bound multipliers below 1
        return
    for k in range(U(l0), U(l1)):
        ZL[k] = min(max(ZL[k], mu / (ks * sL[k])), ks * mu / sL[k])
    for k in range(U(u0), U(u1)):
        ZU[k] = min(max(ZU[k], mu / (ks * sU[k])), ks * mu / sU[k])


@kernel
def accept_step(Fb, FO, Ib, IO, O, alpha, alpha_z, h_slot, dy_slot, dzl_slot, dzu_slot, mu):
    """:func:`accept_step_part` on one lane (the CUDA build's team launch splits it)."""
    accept_step_part(Fb, FO, Ib, IO, O, alpha, alpha_z, h_slot, dy_slot, dzl_slot, dzu_slot,
                     mu, U(0), U(1))


@kernel
def sigma_terms_part(Fb, FO, Ib, IO, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of the primal-dual barrier term's diagonal
    ``sigma = P_L (z_L / s_L) + P_U (z_U / s_U)`` (slot F_SIGMA) with the slacks at w
    (F_SL, F_SU) first; three phases (a variable may have both bounds)."""
    SI = _i(Ib, IO, I_SIZES)
    nw, nL, nU = SI[SZ_NW], SI[SZ_NL], SI[SZ_NU]
    W, wL, wU = _f(Fb, FO, F_W), _f(Fb, FO, F_W_LOWER), _f(Fb, FO, F_W_UPPER)
    sL, sU, sigma = _f(Fb, FO, F_SL), _f(Fb, FO, F_SU), _f(Fb, FO, F_SIGMA)
    ZL, ZU = _f(Fb, FO, F_ZL), _f(Fb, FO, F_ZU)
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    l0, l1 = lane_share(nL, lane, lanes)
    for k in range(U(l0), U(l1)):
        j = U(iL[k])
        sL[k] = W[j] - wL[j]
    u0, u1 = lane_share(nU, lane, lanes)
    for k in range(U(u0), U(u1)):
        j = U(iU[k])
        sU[k] = wU[j] - W[j]
    s0, s1 = lane_share(nw, lane, lanes)
    for i in range(U(s0), U(s1)):
        sigma[i] = 0.0
    team_sync(Ib, IO)
    for k in range(U(l0), U(l1)):
        sigma[U(iL[k])] += ZL[k] / sL[k]
    team_sync(Ib, IO)
    for k in range(U(u0), U(u1)):
        sigma[U(iU[k])] += ZU[k] / sU[k]


@kernel
def sigma_terms(Fb, FO, Ib, IO):
    """:func:`sigma_terms_part` on one lane (the CUDA build's team launch splits it)."""
    sigma_terms_part(Fb, FO, Ib, IO, U(0), U(1))


@kernel
def newton_rhs_part(Fb, FO, Ib, IO, O, mu, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of the barrier gradient ``grad phi = G - mu /
    s_L + kappa_d mu damp_L`` on the lower and ``+ mu / s_U - kappa_d mu damp_U`` on the
    upper bounds (slot F_GRAD_PHI) and the Newton system's right-hand side ``r_w =
    -(grad phi + J^T y)`` (J^T y already in F_RHS_W), ``r_c = -h`` (F_RHS_C)."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m, nL, nU = SI[SZ_NW], SI[SZ_M], SI[SZ_NL], SI[SZ_NU]
    G, gphi, H = _f(Fb, FO, F_GRAD_W), _f(Fb, FO, F_GRAD_PHI), _f(Fb, FO, F_H)
    sL, sU = _f(Fb, FO, F_SL), _f(Fb, FO, F_SU)
    dampL, dampU = _f(Fb, FO, F_DAMP_L), _f(Fb, FO, F_DAMP_U)
    rhs_w, rhs_c = _f(Fb, FO, F_RHS_W), _f(Fb, FO, F_RHS_C)
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    kd = O[OPT_KAPPA_D] * mu
    s0, s1 = lane_share(nw, lane, lanes)
    for i in range(U(s0), U(s1)):
        gphi[i] = G[i]
    team_sync(Ib, IO)
    l0, l1 = lane_share(nL, lane, lanes)
    for k in range(U(l0), U(l1)):
        gphi[U(iL[k])] += -mu / sL[k] + kd * dampL[k]
    team_sync(Ib, IO)
    u0, u1 = lane_share(nU, lane, lanes)
    for k in range(U(u0), U(u1)):
        gphi[U(iU[k])] += mu / sU[k] + (-kd) * dampU[k]
    team_sync(Ib, IO)
    for i in range(U(s0), U(s1)):
        rhs_w[i] = -(gphi[i] + rhs_w[i])
    m0, m1 = lane_share(m, lane, lanes)
    for i in range(U(m0), U(m1)):
        rhs_c[i] = -H[i]


@kernel
def newton_rhs(Fb, FO, Ib, IO, O, mu):
    """:func:`newton_rhs_part` on one lane (the CUDA build's team launch splits it)."""
    newton_rhs_part(Fb, FO, Ib, IO, O, mu, U(0), U(1))


#: partials of :func:`step_measures_part`
STEP_AP_L = 0       # fraction to the boundary of s_L along P_L^T d_w
STEP_AP_U = 1
STEP_AD_L = 2       # of z_L along d_zL
STEP_AD_U = 3
STEP_REL = 4        # max |d_w,i / (1 + |w_i|)|
STEP_DNORM = 5      # max |d_w,i|


@kernel
def step_measures_part(Fb, FO, Ib, IO, mu, tau, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of a direction's measures (d_w in F_DW): the
    bound multipliers' steps ``d_z = ((mu - z s) -+ z d_w) / s`` (F_DZL, F_DZU), the
    fractions to the boundary (:func:`.quantities.ftb_idx`, :func:`.quantities.ftb`:
    ``min over d < 0 of -tau s / d``) and the relative and absolute step sizes into
    F_TEAM_PARTIALS (STEP_*), ``grad phi_i d_w,i`` into F_SCRATCH and ``|h_i|`` into
    F_BARRIER_TERMS for the leader's pairwise sums."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m, nL, nU = SI[SZ_NW], SI[SZ_M], SI[SZ_NL], SI[SZ_NU]
    W, dW, gphi, H = _f(Fb, FO, F_W), _f(Fb, FO, F_DW), _f(Fb, FO, F_GRAD_PHI), _f(Fb, FO, F_H)
    ZL, ZU, sL, sU = _f(Fb, FO, F_ZL), _f(Fb, FO, F_ZU), _f(Fb, FO, F_SL), _f(Fb, FO, F_SU)
    dzL, dzU = _f(Fb, FO, F_DZL), _f(Fb, FO, F_DZU)
    tmp, T = _f(Fb, FO, F_SCRATCH), _f(Fb, FO, F_BARRIER_TERMS)
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    l0, l1 = lane_share(nL, lane, lanes)
    apL, adL = np.inf, np.inf
    for k in range(U(l0), U(l1)):
        d = dW[U(iL[k])]
        dzL[k] = ((mu - ZL[k] * sL[k]) - ZL[k] * d) / sL[k]
        if 1.0 * d < 0.0:
            apL = min_step(apL, (-tau * sL[k]) / (1.0 * d))
        e = 1.0 * dzL[k]
        if e < 0.0:
            adL = min_step(adL, (-tau * ZL[k]) / e)
    u0, u1 = lane_share(nU, lane, lanes)
    apU, adU = np.inf, np.inf
    for k in range(U(u0), U(u1)):
        d = dW[U(iU[k])]
        dzU[k] = ((mu - ZU[k] * sU[k]) + ZU[k] * d) / sU[k]
        if -1.0 * d < 0.0:
            apU = min_step(apU, (-tau * sU[k]) / (-1.0 * d))
        e = 1.0 * dzU[k]
        if e < 0.0:
            adU = min_step(adU, (-tau * ZU[k]) / e)
    s0, s1 = lane_share(nw, lane, lanes)
    rel, dn = -np.inf, 0.0
    for i in range(U(s0), U(s1)):
        d = dW[i]
        tmp[i] = gphi[i] * d
        rel = max_step(rel, abs(d / (1.0 + abs(W[i]))))
        dn = max_step(dn, abs(d))
    m0, m1 = lane_share(m, lane, lanes)
    for i in range(U(m0), U(m1)):
        T[i] = abs(H[i])
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    o = U(PARTIALS) * U(lane)
    P[o + U(STEP_AP_L)] = apL
    P[o + U(STEP_AP_U)] = apU
    P[o + U(STEP_AD_L)] = adL
    P[o + U(STEP_AD_U)] = adU
    P[o + U(STEP_REL)] = rel
    P[o + U(STEP_DNORM)] = dn


@kernel
def step_measures_combined(Fb, FO, Ib, IO, lanes):
    """(alpha_primal, alpha_dual, rel, d_norm) from the lanes' partials: each fraction to
    the boundary ``min(1, min)`` (:func:`.quantities.ftb`), the primal and dual ones the
    smaller of their sides (``min`` as the one-pass code takes it), rel 0 without
    variables."""
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    apL, apU = fold_min(P, STEP_AP_L, lanes, np.inf), fold_min(P, STEP_AP_U, lanes, np.inf)
    adL, adU = fold_min(P, STEP_AD_L, lanes, np.inf), fold_min(P, STEP_AD_U, lanes, np.inf)
    rel, dn = fold_max(P, STEP_REL, lanes, -np.inf), fold_max(P, STEP_DNORM, lanes, 0.0)
    ap = min(nmin(1.0, apL), nmin(1.0, apU))
    ad = min(nmin(1.0, adL), nmin(1.0, adU))
    if _i(Ib, IO, I_SIZES)[SZ_NW] == 0:
        rel = 0.0
    return ap, ad, rel, dn


@kernel
def step_measures(Fb, FO, Ib, IO, mu, tau):
    """:func:`step_measures_part` on one lane, combined: (alpha_primal, alpha_dual, rel,
    d_norm)."""
    step_measures_part(Fb, FO, Ib, IO, mu, tau, U(0), U(1))
    return step_measures_combined(Fb, FO, Ib, IO, 1)
