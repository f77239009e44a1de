"""batch/quantities.py for one instance: fraction to the boundary, the barrier
function phi, the optimality errors.
"""
import numpy as np

from .constants import EPS
from ._jit import U, _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .pairwise import nmax, nmin, pairwise_sum
from .slack_nlp import aty
from .errors_parts import errors_terms
from .step_parts import barrier_terms


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
def barrier_phi(Fb, FO, Ib, IO, O, F, w_slot, mu):
    """(phi, safe) at the w of float slot ``w_slot`` with objective F
    (quantities.barrier_sums + phi); the slacks there into F_SL_TRIAL, F_SU_TRIAL (the
    terms: :func:`.step_parts.barrier_terms`, a team job)."""
    SI = _i(Ib, IO, I_SIZES)
    nL, nU = SI[SZ_NL], SI[SZ_NU]
    m1, m2 = barrier_terms(Fb, FO, Ib, IO, w_slot)
    smin = np.inf
    if nL > 0:
        smin = m1
    if nU > 0:
        smin = m2 if nL == 0 else nmin(smin, m2)
    T = _f(Fb, FO, F_BARRIER_TERMS)         # [log s_L | log s_U | damped s_L | damped s_U]
    ndl = _i(Ib, IO, I_DAMP_L_IDX).shape[0]
    lL = pairwise_sum(T, 0, nL)
    lU = pairwise_sum(T, nL, nU)
    dL = pairwise_sum(T, nL + nU, ndl)
    dU = pairwise_sum(T, nL + nU + ndl, _i(Ib, IO, I_DAMP_U_IDX).shape[0])
    safe = (smin < EPS * min(1.0, mu)) and O[OPT_SLACK_MOVE] > 0.0
    kd = O[OPT_KAPPA_D] * mu
    phi = (F - mu * (lL + lU)) + kd * (dL + dU)
    if not smin > 0.0:
        phi = np.inf
    return phi, safe


@kernel
def errors(Fb, FO, Ib, IO, O, W, Y, ZL, ZU, H, G, JV, mu):
    """quantities.errors: (E0, Emu, udual, uconstr, ucompl, wmax, nconstr, dual, compl) --
    the last three scaled: the slack problem's constraint violation (``nlp_constr``), the
    dual infeasibility and the complementarity.  ``W, Y, ZL, ZU, H, G, JV`` are the
    iterate's slots F_W, F_Y, F_ZL, F_ZU, F_H, F_GRAD_W, F_JV: J^T y
    (:func:`.slack_nlp.aty`) and the vector work (:func:`.errors_parts.errors_terms`, a
    team job) read them there."""
    SI = _i(Ib, IO, I_SIZES)
    m, nL, nU = SI[SZ_M], SI[SZ_NL], SI[SZ_NU]
    aty(Fb, FO, Ib, IO, F_DUAL_RES)         # (J^T y: JV, Y the iterate's)
    dual, constr, nconstr, compl, compl_mu, wmax, uconstr = errors_terms(Fb, FO, Ib, IO,
                                                                         mu)
    zsum = pairwise_sum(ZL, 0, nL) + pairwise_sum(ZU, 0, nU)
    ysum = pairwise_sum(_f(Fb, FO, F_SCRATCH), 0, m)        # (|y|: errors_terms')
    smax = 100.0
    nz = nL + nU
    sd = nmax(smax, (ysum + zsum) / max(1, m + nz)) / smax
    sc = nmax(smax, zsum / max(1, nz)) / smax
    df = _f(Fb, FO, F_OBJ_SCALE)[0]
    E0 = nmax(nmax(dual / sd, nconstr), compl / sc)
    Emu = nmax(nmax(dual / sd, constr), compl_mu / sc)
    return E0, Emu, dual / df, uconstr, compl / df, wmax, nconstr, dual, compl


