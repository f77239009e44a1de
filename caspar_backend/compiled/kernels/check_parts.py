"""The iteration's finiteness checks split over a team's lanes (:mod:`.team`): whether
every entry of a float slot's first n is finite (:func:`.pairwise.isfinite_all`'s
answer).  An "and" over the entries, so each lane's partial flag (F_TEAM_PARTIALS,
:data:`.team.PARTIALS` values per lane, the first used) combined in any order gives the
one-thread answer.  On one thread (the CPU kernels, a lone leader) :func:`all_finite` is
the part at ``(lane, lanes) = (0, 1)``.
"""
import math

from ._jit import U, _f, kernel
from .slots import F_TEAM_PARTIALS
from .team import PARTIALS, lane_share


@kernel
def all_finite_part(Fb, FO, Ib, IO, slot, n, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of ``all(isfinite(slot[:n]))``: 1.0 or 0.0 in
    F_TEAM_PARTIALS[PARTIALS lane]."""
    a = _f(Fb, FO, slot)
    s0, s1 = lane_share(n, lane, lanes)
    ok = 1.0
    for i in range(U(s0), U(s1)):
        if not math.isfinite(a[i]):
            ok = 0.0
            break
    _f(Fb, FO, F_TEAM_PARTIALS)[U(PARTIALS) * U(lane)] = ok


@kernel
def all_finite_combined(Fb, FO, lanes):
    """Whether every lane's share was finite."""
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    for lane in range(lanes):
        if P[PARTIALS * lane] != 1.0:
            return False
    return True


@kernel
def all_finite(Fb, FO, Ib, IO, slot, n):
    """Whether float slot ``slot``'s first ``n`` entries are all finite (one lane: the
    part at (0, 1); the CUDA build's team launch splits it, :mod:`..cuda.team`)."""
    all_finite_part(Fb, FO, Ib, IO, slot, n, U(0), U(1))
    return all_finite_combined(Fb, FO, 1)
