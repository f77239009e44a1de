"""QDLDL's factorization and solve (:mod:`.qdldl`) with their independent loops split
over a team's lanes (:mod:`.team`): the scatter of K's values into C and the zeroing of
the elimination's scratch, the inertia count, and the solve's permutation, its scaling
by 1/D and its inverse permutation.  The elimination and the two substitutions -- each
row waiting on earlier rows -- stay the leader's (:func:`.qdldl.ldl_eliminate`,
:func:`.qdldl.ldl_forward`, :func:`.qdldl.ldl_backward`).  Each index's operations are
those of :func:`.qdldl.ldl_factor` and :func:`.qdldl.ldl_solve`, so the factors and
solutions are theirs bit for bit; the counts are integers (exact in any order).

Slots: K's values F_K_VALUES, C's F_C_VALUES (through I_C_MAP), D F_LDL_D, 1/D
F_LDL_DINV, the elimination's row F_LDL_YVALS, the permuted right-hand side F_LDL_T.
"""
from ._jit import U, _f, _fv, _i, kernel
from .qdldl import (inertia_counts, ldl_backward, ldl_eliminate, ldl_forward, load_values,
                    permute, scale, unpermute)
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .team import PARTIALS, lane_share

#: partials of :func:`ldl_inertia_part`
LDL_POS = 0
LDL_NEG = 1


@kernel
def ldl_load_part(Fb, FO, Ib, IO, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of ``C[cmap[p]] = K[p]`` (cmap a bijection) and
    of zeroing F_LDL_YVALS and F_LDL_D."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    cmap = _i(Ib, IO, I_C_MAP)
    K, Cx = _f(Fb, FO, F_K_VALUES), _f(Fb, FO, F_C_VALUES)
    D, yVals = _fv(Fb, FO, Ib, IO, F_LDL_D), _fv(Fb, FO, Ib, IO, F_LDL_YVALS)
    p0, p1 = lane_share(cmap.shape[0], lane, lanes)
    s0, s1 = lane_share(n, lane, lanes)
    load_values(cmap, K, Cx, yVals, D, p0, p1, s0, s1)


@kernel
def ldl_load(Fb, FO, Ib, IO):
    """:func:`ldl_load_part` on one lane (the CUDA build's team launch splits it)."""
    ldl_load_part(Fb, FO, Ib, IO, U(0), U(1))


@kernel
def ldl_inertia_part(Fb, FO, Ib, IO, lane, lanes):
    """Lane ``lane`` of ``lanes``'s count of the positive and negative finite entries of
    D into F_TEAM_PARTIALS[PARTIALS lane + LDL_POS / LDL_NEG]."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    D = _fv(Fb, FO, Ib, IO, F_LDL_D)
    s0, s1 = lane_share(n, lane, lanes)
    npos, nneg = inertia_counts(D, s0, s1)
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    o = U(PARTIALS) * U(lane)
    P[o + U(LDL_POS)] = npos
    P[o + U(LDL_NEG)] = nneg


@kernel
def ldl_inertia_combined(Fb, FO, Ib, IO, lanes):
    """(n_pos, n_neg, n_zero) from the lanes' counts."""
    P = _f(Fb, FO, F_TEAM_PARTIALS)
    npos = 0
    nneg = 0
    for lane in range(lanes):
        npos += int(P[PARTIALS * lane + LDL_POS])
        nneg += int(P[PARTIALS * lane + LDL_NEG])
    return npos, nneg, _i(Ib, IO, I_SIZES)[SZ_NKKT] - npos - nneg


@kernel
def ldl_inertia(Fb, FO, Ib, IO):
    """:func:`ldl_inertia_part` on one lane, combined: (n_pos, n_neg, n_zero)."""
    ldl_inertia_part(Fb, FO, Ib, IO, U(0), U(1))
    return ldl_inertia_combined(Fb, FO, Ib, IO, 1)


@kernel
def ldl_factor_shared(Fb, FO, Ib, IO):
    """:func:`.qdldl.ldl_factor` of K's values in slot F_K_VALUES, its loops over
    independent entries as team jobs: (n_pos, n_neg, n_zero), ``(0, 0, n)`` at an exact
    zero pivot."""
    ldl_load(Fb, FO, Ib, IO)
    if not ldl_eliminate(Fb, FO, Ib, IO):
        return 0, 0, _i(Ib, IO, I_SIZES)[SZ_NKKT]
    return ldl_inertia(Fb, FO, Ib, IO)


@kernel
def ldl_gather_part(Fb, FO, Ib, IO, b_slot, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of ``t[i] = b[perm[i]]`` (b float slot
    ``b_slot``, t F_LDL_T)."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    perm = _i(Ib, IO, I_PERM)
    b, t = _f(Fb, FO, b_slot), _fv(Fb, FO, Ib, IO, F_LDL_T)
    s0, s1 = lane_share(n, lane, lanes)
    permute(perm, b, t, s0, s1)


@kernel
def ldl_gather(Fb, FO, Ib, IO, b_slot):
    """:func:`ldl_gather_part` on one lane (the CUDA build's team launch splits it)."""
    ldl_gather_part(Fb, FO, Ib, IO, b_slot, U(0), U(1))


@kernel
def ldl_scale_part(Fb, FO, Ib, IO, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of ``t_i *= 1 / D_i``."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    t, Dinv = _fv(Fb, FO, Ib, IO, F_LDL_T), _fv(Fb, FO, Ib, IO, F_LDL_DINV)
    s0, s1 = lane_share(n, lane, lanes)
    scale(t, Dinv, s0, s1)


@kernel
def ldl_scale(Fb, FO, Ib, IO):
    """:func:`ldl_scale_part` on one lane (the CUDA build's team launch splits it)."""
    ldl_scale_part(Fb, FO, Ib, IO, U(0), U(1))


@kernel
def ldl_scatter_part(Fb, FO, Ib, IO, x_slot, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of ``x[perm[i]] = t[i]`` (x float slot
    ``x_slot``)."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    perm = _i(Ib, IO, I_PERM)
    x, t = _f(Fb, FO, x_slot), _fv(Fb, FO, Ib, IO, F_LDL_T)
    s0, s1 = lane_share(n, lane, lanes)
    unpermute(perm, t, x, s0, s1)


@kernel
def ldl_scatter(Fb, FO, Ib, IO, x_slot):
    """:func:`ldl_scatter_part` on one lane (the CUDA build's team launch splits it)."""
    ldl_scatter_part(Fb, FO, Ib, IO, x_slot, U(0), U(1))


@kernel
def ldl_solve_shared(Fb, FO, Ib, IO, b_slot, x_slot):
    """:func:`.qdldl.ldl_solve` from float slot ``b_slot`` into float slot ``x_slot``, its
    permutations and scaling as team jobs."""
    ldl_gather(Fb, FO, Ib, IO, b_slot)
    ldl_forward(Fb, FO, Ib, IO)
    ldl_scale(Fb, FO, Ib, IO)
    ldl_backward(Fb, FO, Ib, IO)
    ldl_scatter(Fb, FO, Ib, IO, x_slot)
