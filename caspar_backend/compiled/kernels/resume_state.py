"""The interior point's state as an iteration begins, saved for a general path that
resumes a handed-over solve there, and read back when a general path hands a solve back
(:mod:`caspar_backend.compiled.resume`).

Slot F_RESUME holds, in these entries (solver/ipm.py's names in brackets), what an
iteration may change before a hand-over leaves it.  The iterate itself (F_W, F_Y, F_ZL,
F_ZU, F_F_CUR, F_H, F_GRAD_W, F_JV) is not copied: every hand-over inside an iteration
leaves before a step is accepted, and ``R_CLEAN`` says so (the loop clears it where the
iterate moves).
"""
from ._jit import _f, _i, kernel
from .slots import (F_ACCEPTABLE, I_SIZES, IC_STATE_SIZE, SZ_M, SZ_NL, SZ_NU, SZ_NW,
                    WD_ACTIVE, WD_TRIALS)

R_CLEAN = 0             # 1: the workspace's iterate is still the saved iteration's
R_ITER = 1              # the iteration [sh.iter]
R_MU = 2                # [barrier.mu]
R_TAU = 3               # [barrier.tau]
R_ACC_COUNT = 4         # acceptable iterates in a row before this one [termination]
R_LAST_OBJ = 5          # the previous iteration's f, NaN: none [termination.last_obj]
R_D_NORM = 6            # the log line's values of the step that led here [info]
R_DELTA_W = 7
R_ALPHA_DU = 8
R_ALPHA_PR = 9
R_N_LS = 10
R_TAG = 11              # record.TAGS index
R_COUNTS = 12           # evaluation counts: obj, grad, cons, jac, hess, invalid (6)
R_WD_ACTIVE = 18        # the watchdog running [line_search.watchdog.active]
R_FILTER_STATE = 19     # the filter's counters (3): rejected_by_filter,
                        # filter_rejections, resets [line_search.filter]
R_LS_STATE = 22         # slot F_LS_STATE (5): theta_min, theta_max, last mu,
                        # shortened steps, tiny step [line_search, its watchdog]
R_IC_STATE = 27         # slot F_IC_STATE (IC_STATE_SIZE) [inertia]
R_START = R_IC_STATE + IC_STATE_SIZE   # input: 1 makes the next solve start from this
                        # state (a general path handing the solve back), instead of from x0
R_FILTER = R_START + 1  # slot F_FILTER: [theta_1..theta_K, phi_1..phi_K], inf: empty
RESUME_FIXED_SIZE = R_FILTER


@kernel
def save_state(RS, it, mu, tau, acc_count, last_obj, d_norm, delta_w, alpha_du, alpha_pr,
               n_ls, tag, n_obj, n_grad, n_cons, n_jac, n_hess, n_invalid, WD, FI, LS, st,
               FT):
    """Write the state as iteration ``it`` begins into ``RS`` (slot F_RESUME) and mark the
    iterate clean."""
    RS[R_CLEAN] = 1.0
    RS[R_ITER] = it
    RS[R_MU] = mu
    RS[R_TAU] = tau
    RS[R_ACC_COUNT] = acc_count
    RS[R_LAST_OBJ] = last_obj
    RS[R_D_NORM] = d_norm
    RS[R_DELTA_W] = delta_w
    RS[R_ALPHA_DU] = alpha_du
    RS[R_ALPHA_PR] = alpha_pr
    RS[R_N_LS] = n_ls
    RS[R_TAG] = tag
    RS[R_COUNTS] = n_obj
    RS[R_COUNTS + 1] = n_grad
    RS[R_COUNTS + 2] = n_cons
    RS[R_COUNTS + 3] = n_jac
    RS[R_COUNTS + 4] = n_hess
    RS[R_COUNTS + 5] = n_invalid
    RS[R_WD_ACTIVE] = WD[WD_ACTIVE]
    for k in range(3):
        RS[R_FILTER_STATE + k] = FI[k]
    for k in range(5):
        RS[R_LS_STATE + k] = LS[k]
    for k in range(IC_STATE_SIZE):
        RS[R_IC_STATE + k] = st[k]
    for k in range(FT.shape[0]):
        RS[R_FILTER + k] = FT[k]


@kernel
def load_state(RS, WD, FI, LS, st, FT):
    """:func:`save_state`'s inverse: the filter, line-search and inertia-correction slots
    from ``RS`` (the watchdog not running); returns the loop's values ``(it, mu, tau,
    acc_count, last_obj, d_norm, delta_w, alpha_du, alpha_pr, n_ls, tag, n_obj, n_grad,
    n_cons, n_jac, n_hess, n_invalid)``."""
    WD[WD_ACTIVE] = 0.0
    WD[WD_TRIALS] = 0.0
    for k in range(3):
        FI[k] = int(RS[R_FILTER_STATE + k])
    for k in range(5):
        LS[k] = RS[R_LS_STATE + k]
    for k in range(IC_STATE_SIZE):
        st[k] = RS[R_IC_STATE + k]
    for k in range(FT.shape[0]):
        FT[k] = RS[R_FILTER + k]
    return (int(RS[R_ITER]), RS[R_MU], RS[R_TAU], int(RS[R_ACC_COUNT]), RS[R_LAST_OBJ],
            RS[R_D_NORM], RS[R_DELTA_W], RS[R_ALPHA_DU], RS[R_ALPHA_PR], int(RS[R_N_LS]),
            int(RS[R_TAG]), int(RS[R_COUNTS]), int(RS[R_COUNTS + 1]),
            int(RS[R_COUNTS + 2]), int(RS[R_COUNTS + 3]), int(RS[R_COUNTS + 4]),
            int(RS[R_COUNTS + 5]))


@kernel
def store_acceptable(Fb, FO, Ib, IO, W, Y, ZL, ZU):
    """Keep the iterate (W, Y, ZL, ZU), found acceptable, in slot F_ACCEPTABLE as
    ``[w | y | zL | zU]``: the latest acceptable point the general path keeps for a
    failed line search (solver/termination.py), which a resumed general path takes
    over."""
    SI = _i(Ib, IO, I_SIZES)
    nw, m, nL, nU = SI[SZ_NW], SI[SZ_M], SI[SZ_NL], SI[SZ_NU]
    A = _f(Fb, FO, F_ACCEPTABLE)
    for i in range(nw):
        A[i] = W[i]
    for i in range(m):
        A[nw + i] = Y[i]
    for i in range(nL):
        A[nw + m + i] = ZL[i]
    for i in range(nU):
        A[nw + m + nL + i] = ZU[i]
