"""The line search's watchdog for one instance (solver/watchdog.py; IPOPT's
BacktrackingLineSearch): the stored iterate and direction live in the float slots
F_WD_*, the procedure's state in F_WD_STATE (entries ``slots.WD_*``).
"""
from ._jit import _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .pairwise import pairwise_sum
from .quantities import ftb, ftb_idx
from .slack_nlp import nlp_first, nlp_zeroth, slacks


@kernel
def watchdog_start(Fb, FO, Ib, IO, W, Y, ZL, ZU, dW, dY, dzL, dzU, gphi, theta, phi, gBD):
    """Watchdog.start: store the iterate (W, Y, ZL, ZU), its direction with its barrier
    gradient ``gphi`` and its reference values; the watchdog runs from here."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m, nL, nU = SI[SZ_NW], SI[SZ_M], SI[SZ_NL], SI[SZ_NU]
    _copy(W, _f(Fb, FO, F_WD_W), nw)
    _copy(Y, _f(Fb, FO, F_WD_Y), m)
    _copy(ZL, _f(Fb, FO, F_WD_ZL), nL)
    _copy(ZU, _f(Fb, FO, F_WD_ZU), nU)
    _copy(dW, _f(Fb, FO, F_WD_DW), nw)
    _copy(dY, _f(Fb, FO, F_WD_DY), m)
    _copy(dzL, _f(Fb, FO, F_WD_DZL), nL)
    _copy(dzU, _f(Fb, FO, F_WD_DZU), nU)
    _copy(gphi, _f(Fb, FO, F_WD_GRAD_PHI), nw)
    WD = _f(Fb, FO, F_WD_STATE)
    WD[WD_ACTIVE] = 1.0
    WD[WD_TRIALS] = 0.0
    WD[WD_THETA] = theta
    WD[WD_PHI] = phi
    WD[WD_GBD] = gBD


@kernel
def watchdog_stop(Fb, FO, Ib, IO, W, Y, ZL, ZU, dW, dY, dzL, dzU, sL, sU, tau, tmp, LS):
    """LineSearch._stop_watchdog: the stored iterate back into (W, Y, ZL, ZU), f, h, the
    gradient and the Jacobian evaluated there (slots F_F_CUR, F_H, F_GRAD_W, F_JV), its
    slacks into (sL, sU), its direction into (dW, dY, dzL, dzU); the watchdog off, no
    shortened steps.  Returns ``(g, alpha_max, alpha_z, theta, phi, gBD)``: the stored
    barrier gradient times the *latest* dW (the one in dW on entry), the ``gphi^T dw``
    of the smallest step size from here (pairwise, as gphi^T dw); the stored
    direction's fraction-to-the-boundary steps from the restored iterate; the stored
    reference values."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m, nL, nU = SI[SZ_NW], SI[SZ_M], SI[SZ_NL], SI[SZ_NU]
    gp = _f(Fb, FO, F_WD_GRAD_PHI)
    for i in range(nw):
        tmp[i] = gp[i] * dW[i]
    g = pairwise_sum(tmp, 0, nw)
    _copy(_f(Fb, FO, F_WD_W), W, nw)
    _copy(_f(Fb, FO, F_WD_Y), Y, m)
    _copy(_f(Fb, FO, F_WD_ZL), ZL, nL)
    _copy(_f(Fb, FO, F_WD_ZU), ZU, nU)
    _copy(_f(Fb, FO, F_WD_DW), dW, nw)
    _copy(_f(Fb, FO, F_WD_DY), dY, m)
    _copy(_f(Fb, FO, F_WD_DZL), dzL, nL)
    _copy(_f(Fb, FO, F_WD_DZU), dzU, nU)
    Fa = _f(Fb, FO, F_F_CUR)
    Fa[0] = nlp_zeroth(Fb, FO, Ib, IO, F_W, F_H)
    nlp_first(Fb, FO, Ib, IO, W, _f(Fb, FO, F_GRAD_W), _f(Fb, FO, F_JV))
    WD = _f(Fb, FO, F_WD_STATE)
    WD[WD_ACTIVE] = 0.0
    LS[3] = 0.0
    slacks(Fb, FO, Ib, IO, W, sL, sU)
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    ap = min(ftb_idx(sL, dW, iL, 1.0, tau), ftb_idx(sU, dW, iU, -1.0, tau))
    ad = min(ftb(ZL, dzL, 1.0, tau, nL), ftb(ZU, dzU, 1.0, tau, nU))
    return g, ap, ad, WD[WD_THETA], WD[WD_PHI], WD[WD_GBD]


@kernel
def _copy(src, dst, n):
    for i in range(n):
        dst[i] = src[i]
