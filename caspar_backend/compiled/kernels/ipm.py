"""The interior point of one instance: caspar's lockstep batch path with B = 1, plus
the single path's zero-pivot and static-term steps (:mod:`.kkt`) and its watchdog
(:mod:`.watchdog`), which the lockstep code hands over.
"""
import math

import numpy as np

from .constants import (ALPHA_MIN_FRAC, DELTA, G_PHI, G_THETA, S_PHI, S_THETA,
                        STATUS_TINY_STEP, TINY, TINY_STEP_MAX_THETA)
from ._jit import _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .kkt import direction_fallbacks, factorize_ic, kkt_solve
from .linesearch import accept, acceptable, bound_mult_steps, filter_add, filter_reset, trial
from .pairwise import amax_abs, nmax, nmin, pairwise_sum
from .check_parts import all_finite
from .quantities import barrier_phi, errors, ftb, ftb_idx
from .record import *  # noqa: F401,F403 (Out fields, step tags)
from .history import history_row
from .resume_state import R_CLEAN, R_START, load_state, save_state
from .termination import GOES_ON, feasibility_multipliers, is_square, termination
from .start import start_iterate
from .slack_setup import slack_problem
from .slack_nlp import aty, fixed_multipliers, nlp_first, nlp_hess, set_x
from .step_parts import newton_rhs, sigma_terms, step_measures
from .tape_eval import eval_zeroth
from .watchdog import watchdog_start, watchdog_stop


@kernel
def solve_instance(Fb, FO, Ib, IO, O, x0, lbx, ubx, lbg, ubg, Hist, Out):
    """One solve from ``x0`` with bounds ``lbx, ubx`` (n,) and ``lbg, ubg`` (m,), the
    parameters already in slot F_P and the options in ``O`` (slots.OPTION_NAMES order).
    The iteration history goes into ``Hist`` (R, HIST_COLUMNS), the evaluation counts
    and final errors into ``Out`` (OUT_SIZE,) (:mod:`.record`).

    Returns ``(status, iterations, f)``: status 0 Solve_Succeeded, 1
    Solved_To_Acceptable_Level, 2 Diverging_Iterates, 3 Maximum_Iterations_Exceeded, 4
    User_Requested_Stop, 5 Maximum_WallTime_Exceeded, 6 Maximum_CpuTime_Exceeded (slot
    I_STOP was set, see below), or
    ``-reason`` where the general path must solve instead: 1..11 as batch/state.py's
    EJECT_REASONS, 20 a bound structure other than the layout's (finite sides aside:
    the caller's key) or a full filter, 21 fewer free variables than equality rows.  x
    is left in slot F_X, f = f(x) unscaled (the model's sense aside), the fixed
    variables' multipliers in slot F_LAM_X_FIXED.

    Stop request: another thread may set ``Ib``'s slot I_STOP while this runs: 1 for
    Ctrl-C (:mod:`caspar_backend.compiled.solve`), 2 and 3 when the wall-clock or CPU time
    limit passed (:mod:`caspar_backend.compiled.deadline`).  It is read once per
    iteration where the general path reads its interrupt flag (solver/ipm.py: after the
    iterate's errors and log line, before the termination tests); a Ctrl-C ends the
    solve there, a time limit after the tests before it (solver/termination.py's order),
    so either stop ends at the same point with the same statistics.  The loop writes
    ``Ib`` (the filter counters), so the compiler cannot keep the slot's value in a
    register across iterations.
    """
    SI = _i(Ib, IO, I_SIZES)
    FT = _f(Fb, FO, F_FILTER)        # [theta_1..theta_K, phi_1..phi_K]
    FI = _i(Ib, IO, I_FILTER_STATE)
    stop = _i(Ib, IO, I_STOP)
    m = SI[SZ_M]
    nw = SI[SZ_NW]
    nL = SI[SZ_NL]
    nU = SI[SZ_NU]
    nfix = SI[SZ_NFIX]
    W = _f(Fb, FO, F_W)
    Y = _f(Fb, FO, F_Y)
    ZL = _f(Fb, FO, F_ZL)
    ZU = _f(Fb, FO, F_ZU)
    Fa = _f(Fb, FO, F_F_CUR)
    H = _f(Fb, FO, F_H)
    G = _f(Fb, FO, F_GRAD_W)
    JV = _f(Fb, FO, F_JV)
    df_a = _f(Fb, FO, F_OBJ_SCALE)
    iL = _i(Ib, IO, I_LOWER_IDX)
    iU = _i(Ib, IO, I_UPPER_IDX)
    sL, sU, tmp = _f(Fb, FO, F_SL), _f(Fb, FO, F_SU), _f(Fb, FO, F_SCRATCH)
    n_obj = 0
    n_grad = 0
    n_cons = 0
    n_jac = 0
    n_hess = 0
    n_invalid = 0
    RS = _f(Fb, FO, F_RESUME)           # the iteration's starting state (.resume_state)
    RS[R_CLEAN] = 0.0                   # (the workspace may hold an earlier solve's)
    # ---------------------------------------------------------------- slack problem
    code = slack_problem(Fb, FO, Ib, IO, O, x0, lbx, ubx, lbg, ubg)
    if code != 0:
        return code, 0, np.nan
    if O[OPT_NLP_SCALING_GRADIENT_BASED] == 1.0:       # the scaling's evaluation at x0
        n_grad += 1
        n_jac += 1 if m > 0 else 0
    df = df_a[0]
    st = _f(Fb, FO, F_IC_STATE)          # the inertia correction's state (slots.IC_*)
    LS = _f(Fb, FO, F_LS_STATE)          # theta_min, theta_max, last_mu, shortened, tiny_step
    WD = _f(Fb, FO, F_WD_STATE)          # the watchdog's state (slots.WD_*)
    # the log line's values of the step that led to the current iterate
    d_norm, delta_w, alpha_du, alpha_pr, n_ls, tag = 0.0, 0.0, 0.0, 0.0, 0, TAG_NONE
    mu = O[OPT_MU_INIT]
    tau = max(O[OPT_TAU_MIN], 1.0 - O[OPT_MU_INIT])
    acc_count = 0
    last_obj = np.nan
    it = 0
    if RS[R_START] == 1.0:
        # a general path handed the solve back at an iteration's start: its state is in
        # the iterate's slots and slot F_RESUME (compiled/resume.py)
        RS[R_START] = 0.0
        (it, mu, tau, acc_count, last_obj, d_norm, delta_w, alpha_du, alpha_pr, n_ls, tag,
         n_obj, n_grad, n_cons, n_jac, n_hess, n_invalid) = load_state(RS, WD, FI, LS, st, FT)
    else:
        code, k_obj, k_cons, k_grad, k_jac = start_iterate(Fb, FO, Ib, IO, O)
        n_obj, n_cons, n_grad, n_jac = n_obj + k_obj, n_cons + k_cons, n_grad + k_grad, \
            n_jac + k_jac
        if code != 0:
            return code, 0, np.nan
    dW = _f(Fb, FO, F_DW)
    dY = _f(Fb, FO, F_DY)
    dzL = _f(Fb, FO, F_DZL)
    dzU = _f(Fb, FO, F_DZU)
    gphi = _f(Fb, FO, F_GRAD_PHI)
    rhs_w = _f(Fb, FO, F_RHS_W)
    rhs_c = _f(Fb, FO, F_RHS_C)
    ht = _f(Fb, FO, F_H_TRIAL)
    c_soc = _f(Fb, FO, F_C_SOC)
    dws = _f(Fb, FO, F_DW_SOC)
    dys = _f(Fb, FO, F_DY_SOC)
    h2 = _f(Fb, FO, F_H_SOC)
    dzL2, dzU2 = _f(Fb, FO, F_DZL_SOC), _f(Fb, FO, F_DZU_SOC)
    status = -99
    square = is_square(Ib, IO)
    stepped = False                     # a step was accepted since the last test
    while True:
        if stepped and square:
            last_obj, acc_count = feasibility_multipliers(
                Fb, FO, Ib, IO, O, W, Y, ZL, ZU, H, G, JV, Fa[0], mu, it, stop[0],
                last_obj, acc_count, st[IC_EPS])
        stepped = False
        # ------------------------------------------------------------ saved state
        # what this iteration may change before a hand-over leaves it, for a general
        # path that resumes the solve here (compiled/resume.py)
        save_state(RS, it, mu, tau, acc_count, last_obj, d_norm, delta_w, alpha_du,
                   alpha_pr, n_ls, tag, n_obj, n_grad, n_cons, n_jac, n_hess, n_invalid,
                   WD, FI, LS, st, FT)
        # ------------------------------------------------------------ termination
        E0, Emu, udual, uconstr, ucompl, wmax, nconstr, sdual, scompl = errors(
            Fb, FO, Ib, IO, O, W, Y, ZL, ZU, H, G, JV, mu)
        history_row(Hist, it, Fa[0] / df_a[0], uconstr, sdual, mu, d_norm, delta_w, alpha_du,
                    alpha_pr, n_ls, tag)
        requested = stop[0]
        if requested == 1:
            status = 4
            break
        status, last_obj, acc_count = termination(
            Fb, FO, Ib, IO, O, W, Y, ZL, ZU, Fa[0], E0, udual, uconstr, ucompl, wmax, it,
            requested, last_obj, acc_count)
        if status != GOES_ON:
            break
        # ------------------------------------------------------------ mu update
        floor = min(O[OPT_TOL], O[OPT_COMPL_INF_TOL] * df) / (O[OPT_BARRIER_TOL_FACTOR] + 1.0)
        # LS[4]: 1 the last step was a flagged tiny step (IPOPT's tiny_step_flag), plus 2
        # when it was tiny with a small multiplier step (tiny_step_last_iteration_)
        tiny = (int(LS[4]) & 1) == 1
        changed = False
        first = True
        while True:
            if not first:
                E0, Emu, udual, uconstr, ucompl, wmax, nconstr, sdual, scompl = errors(
                    Fb, FO, Ib, IO, O, W, Y, ZL, ZU, H, G, JV, mu)
            first = False
            # one exit, its outcome data rather than control flow: a loop whose two exits
            # lead to different ends keeps the CUDA kernel's threads that leave it apart
            # for the rest of the solve (docs/compiled-ipm-cuda.md)
            new_mu = nmax(floor, nmin(O[OPT_MU_LINEAR_DECREASE_FACTOR] * mu, mu ** O[OPT_MU_SUPERLINEAR_DECREASE_POWER]))
            decrease = (Emu <= O[OPT_BARRIER_TOL_FACTOR] * mu) | tiny
            at_floor = decrease & tiny & (new_mu == mu)
            if not (decrease & (new_mu != mu)):
                break
            mu = new_mu
            tau = max(O[OPT_TAU_MIN], 1.0 - mu)
            changed = True
            tiny = False
        if at_floor:
            # a flagged tiny step at mu's floor: solved to the best possible accuracy
            status = STATUS_TINY_STEP
            break
        if changed:
            filter_reset(FT, FI)
        # ------------------------------------------------------------ direction
        sigma_terms(Fb, FO, Ib, IO)                 # (the slacks at w first)
        nlp_hess(Fb, FO, Ib, IO, W, Y)
        n_hess += 1
        if not all_finite(Fb, FO, Ib, IO, F_HV, SI[SZ_NH]):
            status = -2
            break
        aty(Fb, FO, Ib, IO, F_RHS_W)                  # (rhs_w: that slot)
        newton_rhs(Fb, FO, Ib, IO, O, mu)             # grad phi, rhs_w, rhs_c
        # InertiaCorrector.begin_iteration: an eps raised for one iteration goes back
        if st[IC_EPS_RESTORE] >= 0.0:
            st[IC_EPS] = st[IC_EPS_RESTORE]
            st[IC_EPS_RESTORE] = -1.0
        r = factorize_ic(Fb, FO, Ib, IO, O, mu, st)
        if r < 0:
            status = r
            break
        ratio, rho = kkt_solve(Fb, FO, Ib, IO, O, rhs_w, rhs_c, dW, dY)
        r = direction_fallbacks(Fb, FO, Ib, IO, O, mu, st, rhs_w, rhs_c, dW, dY, dws, dys,
                                ratio, rho)
        if r < 0:
            status = r
            break
        delta_w = st[IC_DW]
        if not (all_finite(Fb, FO, Ib, IO, F_DW, nw) and all_finite(Fb, FO, Ib, IO, F_DY, m)):
            status = -7
            break
        # d_z, the fractions to the boundary, the step sizes; gphi^T dw's terms in tmp,
        # |h| in slot F_BARRIER_TERMS (a team job)
        ap, ad, rel, d_norm = step_measures(Fb, FO, Ib, IO, mu, tau)
        # ------------------------------------------------------------ line search
        # (LineSearch.search; a change of mu resets the watchdog)
        if LS[2] != mu:
            LS[3] = 0.0
            WD[WD_ACTIVE] = 0.0
            WD[WD_TRIALS] = 0.0
        LS[2] = mu
        gBD = pairwise_sum(tmp, 0, nw)
        theta = pairwise_sum(_f(Fb, FO, F_BARRIER_TERMS), 0, m)
        phi, safe = barrier_phi(Fb, FO, Ib, IO, O, Fa[0], F_W, mu)
        if safe:
            status = -8
            break
        tiny = (O[OPT_TINY_STEP_TOL] > 0.0 and rel <= O[OPT_TINY_STEP_TOL]
                and theta <= TINY_STEP_MAX_THETA)
        soc = True
        g_amin = gBD            # the gphi^T dw of the smallest step size
        if tiny and WD[WD_ACTIVE] == 1.0:
            # a tiny step while the watchdog runs: resume from the stored iterate (its
            # factorization is gone: no corrections)
            RS[R_CLEAN] = 0.0           # the stored iterate replaces this one
            g_amin, ap, ad, theta, phi, gBD = watchdog_stop(
                Fb, FO, Ib, IO, W, Y, ZL, ZU, dW, dY, dzL, dzU, sL, sU, tau, tmp, LS)
            n_obj, n_cons, n_grad, n_jac = n_obj + 1, n_cons + 1, n_grad + 1, n_jac + 1
            tiny = False
            soc = False
        elif (O[OPT_WATCHDOG_SHORTENED_ITER_TRIGGER] > 0 and WD[WD_ACTIVE] == 0.0 and (not tiny)
              and LS[3] >= O[OPT_WATCHDOG_SHORTENED_ITER_TRIGGER]):
            watchdog_start(Fb, FO, Ib, IO, W, Y, ZL, ZU, dW, dY, dzL, dzU, gphi, theta, phi,
                           gBD)
        moved = False
        tiny_last = (int(LS[4]) & 2) == 2
        LS[4] = 0.0
        if tiny:
            f_t, ok, _t, _p, _s = trial(Fb, FO, Ib, IO, O, ap, F_DW, F_H_TRIAL, mu)
            n_obj += 1
            n_cons += 1
            n_invalid += 0 if ok else 1
            # IPOPT's tiny-step rule (solver/linesearch.py): taken unchecked (ls 0), 'T'
            # and the barrier update's flag only after a tiny step with a small dy
            latch = 2.0 if amax_abs(dY, m) < O[OPT_TINY_STEP_Y_TOL] else 0.0
            LS[4] = latch
            if ok:
                accept(Fb, FO, Ib, IO, O, ap, ad, f_t, F_H_TRIAL, F_DY, F_DZL, F_DZU, mu)
                alpha_pr, alpha_du, n_ls = ap, ad, 0
                tag = TAG_TINY if tiny_last else TAG_NONE
                LS[3] = 0.0
                LS[4] = latch + (1.0 if tiny_last else 0.0)
                moved = True
        skip_first = False
        ej = 0
        all_invalid = True
        while not moved:
            # the watchdog's single trial (the full step, no correction) or a search
            single = WD[WD_ACTIVE] == 1.0
            if g_amin < 0:
                if theta <= LS[0]:
                    amin = min(min(G_THETA, G_PHI * theta / -g_amin),
                               DELTA * theta ** S_THETA / (-g_amin) ** S_PHI)
                else:
                    amin = min(G_THETA, G_PHI * theta / -g_amin)
            else:
                amin = G_THETA
            amin *= ALPHA_MIN_FRAC
            all_invalid = True
            r_ = O[OPT_ALPHA_RED_FACTOR]
            alpha = ap * (r_ if skip_first else 1.0)
            first = 1 if skip_first else 0
            ntr = first
            if single:
                last = 1
            elif 0.0 < r_ < 1.0:
                last = first + (int(math.ceil(math.log(TINY / alpha) / math.log(r_)) + 1)
                                if alpha > TINY else 1)
            else:
                last = first + 1
            while True:
                if not ((amin <= alpha and alpha > 0.0 and ntr < last) or ntr == first):
                    break
                ntr += 1
                f_t, ok, theta_t, phi_t, safe_t = trial(Fb, FO, Ib, IO, O, alpha, F_DW, F_H_TRIAL, mu)
                n_obj += 1
                n_cons += 1
                n_invalid += 0 if ok else 1
                if ok and safe_t:
                    ej = -8
                    break
                if ok:
                    all_invalid = False
                    kind = acceptable(O, FT, FI, LS, theta, phi, gBD, alpha, theta_t, phi_t)
                    if kind > 0:
                        if kind == 2:
                            if not filter_add(FT, (1 - G_THETA) * theta, phi - G_PHI * theta):
                                ej = -20
                                break
                        accept(Fb, FO, Ib, IO, O, alpha, ad, f_t, F_H_TRIAL, F_DY, F_DZL, F_DZU, mu)
                        alpha_pr, alpha_du, n_ls = alpha, ad, ntr
                        tag = TAG_F if kind == 1 else TAG_H
                        LS[3] = 0.0 if ntr == 1 else LS[3] + 1.0
                        WD[WD_ACTIVE] = 0.0         # (a watchdog trial accepted: it ends)
                        moved = True
                        break
                if (soc and (not single) and (not skip_first) and O[OPT_MAX_SOC] > 0 and ok
                        and ntr == 1 and theta_t >= theta):
                    # ---------------------------------------- second-order correction
                    for i in range(m):
                        c_soc[i] = alpha * H[i] + ht[i]
                    theta_old = theta_t
                    done = False
                    for _k in range(int(O[OPT_MAX_SOC])):
                        for i in range(m):
                            tmp[i] = -c_soc[i]
                        kkt_solve(Fb, FO, Ib, IO, O, rhs_w, tmp, dws, dys)
                        if not all_finite(Fb, FO, Ib, IO, F_DW_SOC, nw):   # (dws)
                            break
                        a_soc = min(ftb_idx(sL, dws, iL, 1.0, tau),
                                    ftb_idx(sU, dws, iU, -1.0, tau))
                        f2, ok2, theta2, phi2, safe2 = trial(Fb, FO, Ib, IO, O, a_soc, F_DW_SOC, F_H_SOC, mu)
                        n_obj += 1
                        n_cons += 1
                        n_invalid += 0 if ok2 else 1
                        if not ok2:
                            break
                        if safe2:
                            ej = -8
                            break
                        kind = acceptable(O, FT, FI, LS, theta, phi, gBD, alpha, theta2, phi2)
                        if kind > 0:
                            bound_mult_steps(Fb, FO, Ib, IO, dws, ZL, ZU, sL, sU, mu, dzL2, dzU2)
                            az = min(ftb(ZL, dzL2, 1.0, tau, nL), ftb(ZU, dzU2, 1.0, tau, nU))
                            if kind == 2:
                                if not filter_add(FT, (1 - G_THETA) * theta,
                                                  phi - G_PHI * theta):
                                    ej = -20
                                    break
                            accept(Fb, FO, Ib, IO, O, a_soc, az, f2, F_H_SOC, F_DY_SOC, F_DZL_SOC, F_DZU_SOC, mu)
                            alpha_pr, alpha_du, n_ls = a_soc, az, ntr
                            tag = TAG_SOC_F if kind == 1 else TAG_SOC_H
                            done = True
                            break
                        if theta2 > O[OPT_KAPPA_SOC] * theta_old:
                            break
                        theta_old = theta2
                        for i in range(m):
                            c_soc[i] = a_soc * c_soc[i] + h2[i]
                    if ej != 0:
                        break
                    if done:
                        LS[3] = 0.0 if ntr == 1 else LS[3] + 1.0
                        moved = True
                        break
                alpha = alpha * O[OPT_ALPHA_RED_FACTOR]
            if ej != 0 or moved or not single:
                break
            WD[WD_TRIALS] += 1.0
            if all_invalid or WD[WD_TRIALS] > O[OPT_WATCHDOG_TRIAL_ITER_MAX]:
                RS[R_CLEAN] = 0.0
                g_amin, ap, ad, theta, phi, gBD = watchdog_stop(
                    Fb, FO, Ib, IO, W, Y, ZL, ZU, dW, dY, dzL, dzU, sL, sU, tau, tmp, LS)
                n_obj, n_cons, n_grad, n_jac = n_obj + 1, n_cons + 1, n_grad + 1, n_jac + 1
                skip_first = True
                continue
            # the rejected full step (still in wt, ht), taken unchecked, the filter as it is
            accept(Fb, FO, Ib, IO, O, ap, ad, f_t, F_H_TRIAL, F_DY, F_DZL, F_DZU, mu)
            alpha_pr, alpha_du, n_ls, tag = ap, ad, 1, TAG_WATCHDOG
            moved = True
        if ej != 0:
            status = ej
            break
        if not moved:
            status = -11 if all_invalid else -10
            break
        # ------------------------------------------------------------ derivatives
        RS[R_CLEAN] = 0.0           # a step was accepted: the iterate moved
        nlp_first(Fb, FO, Ib, IO, W, _f(Fb, FO, F_GRAD_W_NEW), _f(Fb, FO, F_JV_NEW))
        n_grad += 1
        n_jac += 1
        if not (all_finite(Fb, FO, Ib, IO, F_GRAD_W_NEW, nw)
                and all_finite(Fb, FO, Ib, IO, F_JV_NEW, SI[SZ_NJ])):
            status = -2
            break
        for i in range(nw):
            G[i] = _f(Fb, FO, F_GRAD_W_NEW)[i]
        for k in range(SI[SZ_NJ]):
            JV[k] = _f(Fb, FO, F_JV_NEW)[k]
        it += 1
        stepped = True
    # ---------------------------------------------------------------- result
    set_x(Fb, FO, Ib, IO, W)
    f = eval_zeroth(Fb, FO, Ib, IO)
    if nfix > 0:
        fixed_multipliers(Fb, FO, Ib, IO, Y)
        n_grad += 1
        n_jac += 1
    Out[OUT_N_OBJ] = n_obj
    Out[OUT_N_GRAD] = n_grad
    Out[OUT_N_CONS] = n_cons
    Out[OUT_N_JAC] = n_jac
    Out[OUT_N_HESS] = n_hess
    Out[OUT_S_OBJ] = Fa[0]
    Out[OUT_S_DUAL] = sdual
    Out[OUT_S_CONSTR] = nconstr
    Out[OUT_S_COMPL] = scompl
    Out[OUT_S_E0] = E0
    Out[OUT_U_DUAL] = udual
    Out[OUT_U_CONSTR] = uconstr
    Out[OUT_U_COMPL] = ucompl
    Out[OUT_N_INVALID] = n_invalid
    return status, it, f
