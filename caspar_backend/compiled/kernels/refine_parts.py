"""The iterative refinement's vector work (:func:`.kkt.kkt_solve`) split over a team's
lanes (:mod:`.team`): per refinement step the residual ``r = (b - K x) + d_s x`` with
the max-norms of r, x and b, and the correction ``x += c``.  On one thread (the CPU
kernels, a lone leader) these are the parts at ``(lane, lanes) = (0, 1)``.

Slots: b F_KKT_RHS, x F_KKT_SOL, r F_KKT_RES, c F_KKT_CORR, K x F_KKT_KX, the static term
d_s F_K_STATIC, all of K's N = SZ_NKKT rows.  A norm is :func:`.pairwise.amax_abs`'s:
max_i |v_i|, NaN if any v_i is NaN, 0 for no entries -- a maximum, so each lane's share
(F_TEAM_PARTIALS, :data:`.team.PARTIALS` values per lane) combined in any order gives the
one-pass value bit for bit.
"""
import numpy as np

from ._jit import U, _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .team import PARTIALS, lane_share

#: which norms a residual step takes: none (the first step), r and x, r, x and b
NORMS_NONE = 0
NORMS_RX = 1
NORMS_RXB = 2


@kernel
def _amax_step(r, v):
    """The running max |.| with ``v = |a_i|``: NumPy's NaN once a NaN is seen (as
    amax_abs answers), else the larger."""
    if r != r or v != v:
        return np.nan
    return v if v > r else r


@kernel
def refine_residual_part(Fb, FO, Ib, IO, norms, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of ``r_i = (b_i - (K x)_i) + d_i x_i`` and, by
    ``norms`` (NORMS_*), of max |r|, max |x|, max |b| into F_TEAM_PARTIALS[PARTIALS
    lane ..] (0 where not taken)."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    b, x, res = _f(Fb, FO, F_KKT_RHS), _f(Fb, FO, F_KKT_SOL), _f(Fb, FO, F_KKT_RES)
    kv, dstat = _f(Fb, FO, F_KKT_KX), _f(Fb, FO, F_K_STATIC)
    s0, s1 = lane_share(n, lane, lanes)
    rn, xn, bn = 0.0, 0.0, 0.0
    if norms == NORMS_NONE:
        for i in range(U(s0), U(s1)):
            res[i] = (b[i] - kv[i]) + dstat[i] * x[i]
    else:
        for i in range(U(s0), U(s1)):
            r = (b[i] - kv[i]) + dstat[i] * x[i]
            res[i] = r
            rn = _amax_step(rn, abs(r))
            xn = _amax_step(xn, abs(x[i]))
        if norms == NORMS_RXB:
            for i in range(U(s0), U(s1)):
                bn = _amax_step(bn, abs(b[i]))
    out = _f(Fb, FO, F_TEAM_PARTIALS)
    k = U(PARTIALS) * U(lane)
    out[k] = rn
    out[k + U(1)] = xn
    out[k + U(2)] = bn


@kernel
def combined_norms(Fb, FO, lanes):
    """(max |r|, max |x|, max |b|) from the ``lanes`` lanes' partials (the order does not
    matter: a maximum; NaN if any lane's is)."""
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    rn, xn, bn = P[0], P[1], P[2]
    for lane in range(1, lanes):
        k = PARTIALS * lane
        rn = _amax_step(rn, P[k])
        xn = _amax_step(xn, P[k + 1])
        bn = _amax_step(bn, P[k + 2])
    return rn, xn, bn


@kernel
def refine_residual(Fb, FO, Ib, IO, norms):
    """The refinement step's residual into F_KKT_RES and the norms ``norms`` asks for:
    (max |r|, max |x|, max |b|), 0 where not asked (one lane: the part at (0, 1); the
    CUDA build's team launch splits it, :mod:`..cuda.team`)."""
    refine_residual_part(Fb, FO, Ib, IO, norms, U(0), U(1))
    return combined_norms(Fb, FO, 1)


@kernel
def refine_update_part(Fb, FO, Ib, IO, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of ``x += c`` (slots F_KKT_SOL, F_KKT_CORR)."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    x, corr = _f(Fb, FO, F_KKT_SOL), _f(Fb, FO, F_KKT_CORR)
    s0, s1 = lane_share(n, lane, lanes)
    for i in range(U(s0), U(s1)):
        x[i] += corr[i]


@kernel
def refine_update(Fb, FO, Ib, IO):
    """The refinement's correction ``x += c`` (one lane: the part at (0, 1))."""
    refine_update_part(Fb, FO, Ib, IO, U(0), U(1))

