"""The starting iterate of one instance: IPOPT's DefaultIterateInitializer
(solver/initial.py ``default_start``, solver/ipm.py ``initialize``) or, with option entry
OPT_WARM_START_INIT_POINT, its WarmStartIterateInitializer (solver/ipm.py
``initialize_warm``, solver/driver.py ``_warm_multipliers``), and the state every solve
starts with (the inertia correction's, the line search's, the watchdog's, the filter).
"""
import math

import numpy as np

from ._jit import _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .kkt import least_squares_y, static_term_option
from .linesearch import filter_reset
from .pairwise import isfinite_all, nmax, nmin
from .slack_nlp import nlp_first, nlp_zeroth, push_entry


@kernel
def warm_primal(Fb, FO, Ib, IO, O, W, H, Fa):
    """IPOPT's WarmStartIterateInitializer's primal point from ``W`` = (x0's free
    entries, 0) (solver/ipm.py ``initialize_warm``): s = d(x0) at the unpushed x0 (one
    evaluation, where there are slacks), then x and s pushed with the warm start's pushes
    (option entries OPT_WARM_START_*: :func:`~caspar_backend.solver.initial.
    warm_start_pushes` resolved them); where the push left x as it was, that evaluation
    is the iterate's f and h (h = d - s on the slack rows), else f and h are evaluated at
    the pushed w.  Writes ``W``, ``H`` and ``Fa[0]``; returns the (objective, constraint)
    evaluations as the general path counts them (its first evaluation is of the
    constraints alone)."""
    SI = _i(Ib, IO, I_SIZES)
    nx, ns = SI[SZ_NX], SI[SZ_NS]
    sr = _i(Ib, IO, I_SLACK_ROWS)
    wL, wU = _f(Fb, FO, F_W_LOWER), _f(Fb, FO, F_W_UPPER)
    push, frac = O[OPT_WARM_START_BOUND_PUSH], O[OPT_WARM_START_BOUND_FRAC]
    spush, sfrac = O[OPT_WARM_START_SLACK_BOUND_PUSH], O[OPT_WARM_START_SLACK_BOUND_FRAC]
    if ns == 0:
        for j in range(nx):
            W[j] = push_entry(W[j], wL[j], wU[j], push, frac)
        Fa[0] = nlp_zeroth(Fb, FO, Ib, IO, F_W, F_H)
        return 1, 1
    f0 = nlp_zeroth(Fb, FO, Ib, IO, F_W, F_H)          # h(x0, 0): d(x0) on the slack rows
    moved = False
    for j in range(nx):
        v = push_entry(W[j], wL[j], wU[j], push, frac)
        if not (v == W[j]):                          # (NaN: moved, as np.array_equal)
            moved = True
        W[j] = v
    for k in range(ns):
        j = nx + k
        W[j] = push_entry(H[sr[k]], wL[j], wU[j], spush, sfrac)
    if moved:
        Fa[0] = nlp_zeroth(Fb, FO, Ib, IO, F_W, F_H)
        return 1, 2
    for k in range(ns):
        H[sr[k]] = H[sr[k]] - W[nx + k]
    Fa[0] = f0
    return 1, 1


@kernel
def warm_multipliers(Fb, FO, Ib, IO, O, Y, ZL, ZU):
    """IPOPT's warm-start multipliers (solver/driver.py ``_warm_multipliers``) from the
    CasADi-convention ``lam_g0`` (m) and ``lam_x0`` (n) in slots F_LAM_G0 and F_LAM_X0:
    y = clip(lam_g0 df / dc, +-warm_start_mult_init_max); the bound multipliers of x
    from lam_x0 df (lower: its negative part, upper: its positive part), those of the
    slacks from y (s >= gL: -y, s <= gU: y), capped at warm_start_mult_init_max, then
    raised to at least warm_start_mult_bound_push; a cap <= 0 caps nothing (IPOPT's)."""
    SI = _i(Ib, IO, I_SIZES)
    m, nx, nL, nU = SI[SZ_M], SI[SZ_NX], SI[SZ_NL], SI[SZ_NU]
    free, sr = _i(Ib, IO, I_FREE_IDX), _i(Ib, IO, I_SLACK_ROWS)
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    lg, lx = _f(Fb, FO, F_LAM_G0), _f(Fb, FO, F_LAM_X0)
    df = _f(Fb, FO, F_OBJ_SCALE)[0]
    dc = _f(Fb, FO, F_CON_SCALE)
    cap, push = O[OPT_WARM_START_MULT_INIT_MAX], O[OPT_WARM_START_MULT_BOUND_PUSH]
    if cap <= 0.0:
        cap = math.inf
    for i in range(m):
        Y[i] = nmin(nmax(lg[i] * df / dc[i], -cap), cap)
    for k in range(nL):
        j = iL[k]
        zw = lx[free[j]] * df if j < nx else Y[sr[j - nx]]
        ZL[k] = nmax(nmin(-zw, cap), push)
    for k in range(nU):
        j = iU[k]
        zw = lx[free[j]] * df if j < nx else Y[sr[j - nx]]
        ZU[k] = nmax(nmin(zw, cap), push)


@kernel
def start_iterate(Fb, FO, Ib, IO, O):
    """IPOPT's DefaultIterateInitializer::SetInitialIterates (solver/initial.py
    default_start): x pushed (bound_push, bound_frac); s = d(x) = dc_I g_I(x) at the
    pushed x, pushed (slack_bound_push, slack_bound_frac); that one evaluation of f and g
    is the first iterate's, h = d(x) - s on the slack rows; z = bound_mult_init_val, the
    least-squares y.  With option entry OPT_WARM_START_INIT_POINT the warm start instead:
    :func:`warm_primal` and :func:`warm_multipliers`.  Then the inertia correction's, the line search's and the watchdog's
    starting state and an empty filter.  Returns ``(code, n_obj, n_cons, n_grad,
    n_jac)``: code 0, or -1 / -2 for an invalid number in f, g or the derivatives at the
    starting point (the solve's ejection codes); the evaluations it made."""
    SI = _i(Ib, IO, I_SIZES)
    m, nw, nx, ns = SI[SZ_M], SI[SZ_NW], SI[SZ_NX], SI[SZ_NS]
    nL, nU = SI[SZ_NL], SI[SZ_NU]
    free = _i(Ib, IO, I_FREE_IDX)
    sr = _i(Ib, IO, I_SLACK_ROWS)
    x = _f(Fb, FO, F_X)
    W, Y, ZL, ZU = _f(Fb, FO, F_W), _f(Fb, FO, F_Y), _f(Fb, FO, F_ZL), _f(Fb, FO, F_ZU)
    Fa, H, G = _f(Fb, FO, F_F_CUR), _f(Fb, FO, F_H), _f(Fb, FO, F_GRAD_W)
    JV = _f(Fb, FO, F_JV)
    wL, wU = _f(Fb, FO, F_W_LOWER), _f(Fb, FO, F_W_UPPER)
    tmp = _f(Fb, FO, F_SCRATCH)
    st = _f(Fb, FO, F_IC_STATE)
    LS = _f(Fb, FO, F_LS_STATE)
    WD = _f(Fb, FO, F_WD_STATE)
    FT = _f(Fb, FO, F_FILTER)
    FI = _i(Ib, IO, I_FILTER_STATE)
    warm = O[OPT_WARM_START_INIT_POINT] == 1.0
    n_grad, n_jac = 0, 0
    for j in range(nw):
        W[j] = x[free[j]] if j < nx else 0.0
    if warm:
        n_obj, n_cons = warm_primal(Fb, FO, Ib, IO, O, W, H, Fa)
    else:
        for j in range(nx):
            W[j] = push_entry(W[j], wL[j], wU[j], O[OPT_BOUND_PUSH], O[OPT_BOUND_FRAC])
        Fa[0] = nlp_zeroth(Fb, FO, Ib, IO, F_W, F_H)
        n_obj, n_cons = 1, 1
        for k in range(ns):
            j = nx + k
            W[j] = push_entry(H[sr[k]], wL[j], wU[j], O[OPT_SLACK_BOUND_PUSH],
                              O[OPT_SLACK_BOUND_FRAC])
            H[sr[k]] = H[sr[k]] - W[j]
    if not (math.isfinite(Fa[0]) and isfinite_all(H, m)):
        return -1, n_obj, n_cons, n_grad, n_jac
    nlp_first(Fb, FO, Ib, IO, W, G, JV)
    n_grad += 1
    n_jac += 1
    if not (isfinite_all(G, nw) and isfinite_all(JV, SI[SZ_NJ])):
        return -2, n_obj, n_cons, n_grad, n_jac
    if warm:
        warm_multipliers(Fb, FO, Ib, IO, O, Y, ZL, ZU)
    else:
        for k in range(nL):
            ZL[k] = O[OPT_BOUND_MULT_INIT_VAL]
        for k in range(nU):
            ZU[k] = O[OPT_BOUND_MULT_INIT_VAL]
    for k in range(IC_STATE_SIZE):
        st[k] = 0.0
    st[IC_EPS] = static_term_option(O, SI)
    st[IC_EPS_RESTORE] = -1.0
    st[IC_EPS_BEFORE_SLOW] = -1.0
    if m > 0 and not warm:
        if SI[SZ_NEQ] > 0 and SI[SZ_NEQ] == nx:
            # a square problem's multipliers start at zero (IPOPT's least_square_mults;
            # solver/ipm.py initialize)
            for i in range(m):
                Y[i] = 0.0
        else:
            least_squares_y(Fb, FO, Ib, IO, O, G, ZL, ZU, tmp, Y, st[IC_EPS],
                            O[OPT_CONSTR_MULT_INIT_MAX])
    # theta_min, theta_max: set at the first trial point's test (linesearch.acceptable)
    LS[1] = -1.0
    LS[0] = -1.0
    LS[2] = np.nan
    LS[3] = 0.0
    LS[4] = 0.0
    WD[WD_ACTIVE] = 0.0
    WD[WD_TRIALS] = 0.0
    filter_reset(FT, FI)
    FI[2] = 0
    return 0, n_obj, n_cons, n_grad, n_jac

