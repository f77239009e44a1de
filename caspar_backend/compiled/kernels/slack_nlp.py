"""The scaled slack problem of batch/nlp.py for one instance: w = (x[free], s),
h(w) = d_c * (g(x) - g_off) - [0, s]; its gradient, Jacobian values and Hessian; the
push of a starting value into its bounds.

Fixed variables (lbx == ubx, SZ_NFIX of them; IPOPT's make_parameter as solver/nlp.py
SlackNLP): x keeps them at their bound, w holds the free ones (slot I_FREE_IDX); the
gradient is gathered at the free columns, the Jacobian values at the kept entries
(I_JAC_KEEP), the Hessian's from the evaluator's values (F_HESS_RAW) at I_HESS_KEEP.
Without a fixed variable every map is the identity and no gather is made.
"""
import math

import numpy as np

from ._jit import U, _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .tape_eval import eval_first, eval_zeroth, hess_values
from .team import lane_share
from .step_parts import zeroth_rows


@kernel
def set_x(Fb, FO, Ib, IO, W):
    x = _f(Fb, FO, F_X)
    SI = _i(Ib, IO, I_SIZES)
    nx = SI[SZ_NX]
    if SI[SZ_NFIX] == 0:
        for i in range(nx):
            x[i] = W[i]
    else:
        free = _i(Ib, IO, I_FREE_IDX)
        for i in range(nx):
            x[U(free[i])] = W[i]


@kernel
def nlp_zeroth(Fb, FO, Ib, IO, w_slot, h_slot):
    """f (returned) and h (float slot ``h_slot``) at the w of float slot ``w_slot``
    (batch/nlp.py zeroth; the rows: :func:`.step_parts.zeroth_rows`, a team job)."""
    set_x(Fb, FO, Ib, IO, _f(Fb, FO, w_slot))
    f = eval_zeroth(Fb, FO, Ib, IO)
    zeroth_rows(Fb, FO, Ib, IO, w_slot, h_slot, 0)
    return _f(Fb, FO, F_OBJ_SCALE)[0] * f


@kernel
def nlp_first(Fb, FO, Ib, IO, W, G, JV):
    SI = _i(Ib, IO, I_SIZES)
    nx, nw, nju, nj = SI[SZ_NX], SI[SZ_NW], SI[SZ_NJU], SI[SZ_NJ]
    set_x(Fb, FO, Ib, IO, W)
    gradf, jv = _f(Fb, FO, F_GRAD_F), _f(Fb, FO, F_JAC_VALS)
    eval_first(Fb, FO, Ib, IO)
    df, dcj = _f(Fb, FO, F_OBJ_SCALE)[0], _f(Fb, FO, F_JAC_SCALE)
    if SI[SZ_NFIX] == 0:
        for i in range(nx):
            G[i] = df * gradf[i]
        for k in range(nju):
            JV[k] = dcj[k] * jv[k]
    else:
        free, jk = _i(Ib, IO, I_FREE_IDX), _i(Ib, IO, I_JAC_KEEP)
        for i in range(nx):
            G[i] = df * gradf[U(free[i])]
        for k in range(nju):
            JV[k] = dcj[k] * jv[U(jk[k])]
    for i in range(nx, nw):
        G[i] = 0.0
    for k in range(nju, nj):
        JV[k] = -1.0


@kernel
def nlp_hess(Fb, FO, Ib, IO, W, Y):
    """The Hessian of the Lagrangian at W, Y into slot F_HV (batch/nlp.py hess)."""
    SI = _i(Ib, IO, I_SIZES)
    m = SI[SZ_M]
    set_x(Fb, FO, Ib, IO, W)
    lam = _f(Fb, FO, F_LAMBDA)
    dc = _f(Fb, FO, F_CON_SCALE)
    for i in range(m):
        lam[i] = dc[i] * Y[i]
    if SI[SZ_NFIX] == 0:
        hess_values(Fb, FO, Ib, IO, _f(Fb, FO, F_OBJ_SCALE)[0] * 1.0, F_HV)
    else:
        HV, raw, hk = _f(Fb, FO, F_HV), _f(Fb, FO, F_HESS_RAW), _i(Ib, IO, I_HESS_KEEP)
        hess_values(Fb, FO, Ib, IO, _f(Fb, FO, F_OBJ_SCALE)[0] * 1.0, F_HESS_RAW)
        for k in range(SI[SZ_NH]):
            HV[k] = raw[U(hk[k])]


@kernel
def fixed_multipliers(Fb, FO, Ib, IO, Y):
    """The fixed variables' multipliers into slot F_LAM_X_FIXED at the x of slot F_X:
    minus the reduced gradient ``grad f(x) + J(x)^T lam_g`` (lam_g = y d_c / d_f, the
    user's multipliers), as solver/nlp.py SlackNLP.unscale computes them -- the same
    operations in the same order (np.add.at adds entry by entry in the evaluator's
    order).  One gradient and Jacobian evaluation."""
    SI = _i(Ib, IO, I_SIZES)
    gradf, jv = _f(Fb, FO, F_GRAD_F), _f(Fb, FO, F_JAC_VALS)
    eval_first(Fb, FO, Ib, IO)
    df, dc = _f(Fb, FO, F_OBJ_SCALE)[0], _f(Fb, FO, F_CON_SCALE)
    jr, jc = _i(Ib, IO, I_EV_JAC_ROWS), _i(Ib, IO, I_EV_JAC_COLS)
    for k in range(SI[SZ_NJE]):
        r = U(jr[k])
        gradf[U(jc[k])] += jv[k] * (Y[r] * dc[r] / df)
    fixd, lx = _i(Ib, IO, I_FIXED_IDX), _f(Fb, FO, F_LAM_X_FIXED)
    for k in range(SI[SZ_NFIX]):
        lx[k] = -gradf[fixd[k]]


@kernel
def slacks(Fb, FO, Ib, IO, W, sL, sU):
    iL = _i(Ib, IO, I_LOWER_IDX)
    iU = _i(Ib, IO, I_UPPER_IDX)
    wL = _f(Fb, FO, F_W_LOWER)
    wU = _f(Fb, FO, F_W_UPPER)
    for k in range(iL.shape[0]):
        j = U(iL[k])
        sL[k] = W[j] - wL[j]
    for k in range(iU.shape[0]):
        j = U(iU[k])
        sU[k] = wU[j] - W[j]


@kernel
def aty(Fb, FO, Ib, IO, out_slot):
    """J^T y into float slot ``out_slot`` (nw entries; J's values in F_JV, y in F_Y):
    :func:`aty_one` (in the CUDA build's team launch, :func:`aty_part` on the instance's
    team: :mod:`.team`)."""
    aty_one(Fb, FO, Ib, IO, out_slot)


@kernel
def aty_one(Fb, FO, Ib, IO, out_slot):
    """J^T y as the scatter ``out[col_k] += J_k y[row_k]``, k = 0, 1, ... from zeros."""
    jr, jc = _i(Ib, IO, I_JAC_ROWS), _i(Ib, IO, I_JAC_COLS)
    JV, Y, out = _f(Fb, FO, F_JV), _f(Fb, FO, F_Y), _f(Fb, FO, out_slot)
    for j in range(out.shape[0]):
        out[j] = 0.0
    for k in range(jr.shape[0]):
        out[U(jc[k])] += JV[k] * Y[U(jr[k])]


@kernel
def aty_part(Fb, FO, Ib, IO, out_slot, lane, lanes):
    """Lane ``lane`` of ``lanes``'s columns of J^T y: each column's terms summed from
    zero in increasing k (slots I_JAC_COL_PTR / _ORDER), the scatter's order, so
    :func:`aty_one`'s bits."""
    jr = _i(Ib, IO, I_JAC_ROWS)
    cp, co = _i(Ib, IO, I_JAC_COL_PTR), _i(Ib, IO, I_JAC_COL_ORDER)
    JV, Y, out = _f(Fb, FO, F_JV), _f(Fb, FO, F_Y), _f(Fb, FO, out_slot)
    s0, s1 = lane_share(out.shape[0], lane, lanes)
    for j in range(U(s0), U(s1)):
        s = 0.0
        for r in range(U(cp[j]), U(cp[j + 1])):
            k = U(co[r])
            s += JV[k] * Y[U(jr[k])]
        out[j] = s


@kernel
def push_entry(v, a, b, k1, k2):
    """``v`` moved inside ``[a, b]`` (IPOPT's push_variables; solver/initial.py pushed):
    ``min(max(v, a + pL), b - pU)``, ``pL = min(k1 max(1, |a|), k2 (b - a))`` (the k1
    term alone when b is infinite; pU likewise), the midpoint when the pushes cross."""
    fa, fb = math.isfinite(a), math.isfinite(b)
    pL = min(k1 * max(1.0, abs(a)), k2 * (b - a)) if fb else k1 * max(1.0, abs(a))
    pU = min(k1 * max(1.0, abs(b)), k2 * (b - a)) if fa else k1 * max(1.0, abs(b))
    lo = a + pL if fa else -np.inf
    hi = b - pU if fb else np.inf
    if lo > hi:
        return 0.5 * (a + b)
    return min(max(v, lo), hi)
