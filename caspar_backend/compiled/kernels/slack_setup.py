"""The slack problem of one solve from its bounds and starting point (solver/nlp.py
SlackNLP's construction, batch/nlp.py's per instance): x = x0 with the fixed variables
at their bound, the gradient-based scaling at that x, the relaxed bounds of w and the
equality rows' offsets -- into the workspace's slots.
"""
import math

from ._jit import _f, _i, kernel
from .pairwise import amax_abs, nmax
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .tape_eval import eval_first


@kernel
def slack_problem(Fb, FO, Ib, IO, O, x0, lbx, ubx, lbg, ubg):
    """Slots F_X, F_LBG, F_UBG, F_OBJ_SCALE, F_CON_SCALE, F_JAC_SCALE, F_SLACK_SCALE,
    F_W_LOWER, F_W_UPPER and F_G_OFFSET for a solve from ``x0`` with bounds ``lbx, ubx``
    (n,) and ``lbg, ubg`` (m,).  With gradient-based scaling (option entry
    OPT_NLP_SCALING_GRADIENT_BASED) one gradient and Jacobian evaluation at x.  Returns
    0, or -20 where the bounds' fixed variables or equality rows are not the layout's,
    -21 where fewer variables are free than rows are equalities (solve_instance's codes).
    """
    SI = _i(Ib, IO, I_SIZES)
    n, m, nw, nx, ns = SI[SZ_N], SI[SZ_M], SI[SZ_NW], SI[SZ_NX], SI[SZ_NS]
    nju, nfix = SI[SZ_NJU], SI[SZ_NFIX]
    free, fixd, jk = _i(Ib, IO, I_FREE_IDX), _i(Ib, IO, I_FIXED_IDX), _i(Ib, IO, I_JAC_KEEP)
    x = _f(Fb, FO, F_X)
    df_a, dc, goff = _f(Fb, FO, F_OBJ_SCALE), _f(Fb, FO, F_CON_SCALE), _f(Fb, FO, F_G_OFFSET)
    gradf, jv, dcj = _f(Fb, FO, F_GRAD_F), _f(Fb, FO, F_JAC_VALS), _f(Fb, FO, F_JAC_SCALE)
    wL, wU, dci = _f(Fb, FO, F_W_LOWER), _f(Fb, FO, F_W_UPPER), _f(Fb, FO, F_SLACK_SCALE)
    sr, eqm = _i(Ib, IO, I_SLACK_ROWS), _i(Ib, IO, I_EQ_MASK)
    tmp = _f(Fb, FO, F_SCRATCH)
    # x = x0 with the fixed variables at their bound (SlackNLP's x_full)
    for i in range(n):
        x[i] = x0[i]
    for k in range(nx):
        if lbx[free[k]] == ubx[free[k]]:
            return -20          # another structure than the compiled one
    for k in range(nfix):
        if lbx[fixd[k]] != ubx[fixd[k]]:
            return -20
        x[fixd[k]] = lbx[fixd[k]]
    for i in range(m):
        _f(Fb, FO, F_LBG)[i] = lbg[i]
        _f(Fb, FO, F_UBG)[i] = ubg[i]
        if (eqm[i] == 1) != (lbg[i] == ubg[i]):
            return -20          # another structure than the compiled one
    # gradient-based scaling at x0 (SlackNLP._compute_scaling)
    df = O[OPT_OBJ_SCALING_FACTOR]
    for i in range(m):
        dc[i] = 1.0
    if O[OPT_NLP_SCALING_GRADIENT_BASED] == 1.0:
        gmax, gmin = O[OPT_NLP_SCALING_MAX_GRADIENT], O[OPT_NLP_SCALING_MIN_VALUE]
        eval_first(Fb, FO, Ib, IO)
        if nfix == 0:
            gf = amax_abs(gradf, nx) if nx > 0 else 0.0
        else:
            for k in range(nx):
                tmp[k] = gradf[free[k]]
            gf = amax_abs(tmp, nx) if nx > 0 else 0.0
        if math.isfinite(gf) and gf > gmax:
            df *= max(gmin, gmax / gf)
        if m > 0:
            ujr = _i(Ib, IO, I_UJAC_ROWS)
            rowmax = tmp
            for i in range(m):
                rowmax[i] = 0.0
            for k in range(nju):
                e = k if nfix == 0 else jk[k]
                rowmax[ujr[k]] = nmax(rowmax[ujr[k]], abs(jv[e]))
            for i in range(m):
                if math.isfinite(rowmax[i]) and rowmax[i] > gmax:
                    dc[i] = max(gmin, gmax / rowmax[i])
    df_a[0] = df
    ujr = _i(Ib, IO, I_UJAC_ROWS)
    for k in range(nju):
        dcj[k] = dc[ujr[k]]
    for k in range(ns):
        dci[k] = dc[sr[k]]
    # relaxed bounds (solver/relaxation.py relaxed_bounds)
    brf, cvt = O[OPT_BOUND_RELAX_FACTOR], O[OPT_CONSTR_VIOL_TOL]
    for j in range(nw):
        if j < nx:
            bl, bu, fac = lbx[free[j]], ubx[free[j]], brf
        else:
            r = sr[j - nx]
            bl, bu = lbg[r], ubg[r]
            fac = O[OPT_EQUALITY_RELAX_FACTOR] if eqm[r] == 1 else brf
        if math.isfinite(bl):
            bl = bl + -1.0 * min(cvt, fac * max(1.0, abs(bl)))
        if math.isfinite(bu):
            bu = bu + 1.0 * min(cvt, fac * max(1.0, abs(bu)))
        if j >= nx:
            bl = bl * dci[j - nx]
            bu = bu * dci[j - nx]
        wL[j] = bl
        wU[j] = bu
    for i in range(m):
        goff[i] = lbg[i] if eqm[i] == 1 else 0.0
    if SI[SZ_NEQ] > nx:
        return -21
    return 0
