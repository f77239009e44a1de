"""The starting iterate of one instance: IPOPT's DefaultIterateInitializer
(solver/initial.py ``default_start``, solver/ipm.py ``initialize``) and the state every
solve starts with (the inertia correction's, the line search's, the watchdog's, the
filter).
"""
import math

import numpy as np

from ._jit import _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .kkt import least_squares_y
from .linesearch import filter_reset
from .pairwise import isfinite_all
from .quantities import sum_abs
from .slack_nlp import nlp_first, nlp_zeroth, push_entry


@kernel
def start_iterate(Fb, FO, Ib, IO, O):
    """IPOPT's DefaultIterateInitializer::SetInitialIterates (solver/initial.py
    default_start): x pushed (bound_push, bound_frac); s = d(x) = dc_I g_I(x) at the
    pushed x, pushed (slack_bound_push, slack_bound_frac); that one evaluation of f and g
    is the first iterate's, h = d(x) - s on the slack rows; z = bound_mult_init_val, the
    least-squares y; then the inertia correction's, the line search's and the watchdog's
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
    JV, HV = _f(Fb, FO, F_JV), _f(Fb, FO, F_HV)
    wL, wU = _f(Fb, FO, F_W_LOWER), _f(Fb, FO, F_W_UPPER)
    tmp = _f(Fb, FO, F_SCRATCH)
    sigma = _f(Fb, FO, F_SIGMA)
    st = _f(Fb, FO, F_IC_STATE)
    LS = _f(Fb, FO, F_LS_STATE)
    WD = _f(Fb, FO, F_WD_STATE)
    FT = _f(Fb, FO, F_FILTER)
    FI = _i(Ib, IO, I_FILTER_STATE)
    n_obj, n_cons, n_grad, n_jac = 0, 0, 0, 0
    for j in range(nw):
        W[j] = x[free[j]] if j < nx else 0.0
    for j in range(nx):
        W[j] = push_entry(W[j], wL[j], wU[j], O[OPT_BOUND_PUSH], O[OPT_BOUND_FRAC])
    Fa[0] = nlp_zeroth(Fb, FO, Ib, IO, W, H)
    n_obj += 1
    n_cons += 1
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
    for k in range(nL):
        ZL[k] = O[OPT_BOUND_MULT_INIT_VAL]
    for k in range(nU):
        ZU[k] = O[OPT_BOUND_MULT_INIT_VAL]
    for k in range(IC_STATE_SIZE):
        st[k] = 0.0
    st[IC_EPS] = O[OPT_KKT_STATIC_REGULARIZATION]
    st[IC_EPS_RESTORE] = -1.0
    st[IC_EPS_BEFORE_SLOW] = -1.0
    if m > 0:
        least_squares_y(Fb, FO, Ib, IO, O, G, JV, HV, ZL, ZU, sigma, tmp, Y)
    theta0 = sum_abs(H, m, tmp)
    LS[1] = O[OPT_THETA_MAX_FACT] * max(1.0, theta0)
    LS[0] = O[OPT_THETA_MIN_FACT] * max(1.0, theta0)
    LS[2] = np.nan
    LS[3] = 0.0
    LS[4] = 0.0
    WD[WD_ACTIVE] = 0.0
    WD[WD_TRIALS] = 0.0
    filter_reset(FT, FI)
    FI[2] = 0
    return 0, n_obj, n_cons, n_grad, n_jac
