"""The termination test of one iteration (solver/termination.py ``Termination.check``) and
a square problem's feasibility multipliers (solver/ipm.py ``_feasibility_multipliers``,
IPOPT's ComputeFeasibilityMultipliers), which runs that test twice more after every
accepted step.
"""
import numpy as np

from ._jit import _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .kkt import least_squares_y
from .quantities import errors
from .resume_state import store_acceptable

#: :func:`termination`'s answer when no test fires
GOES_ON = -1


@kernel
def termination(Fb, FO, Ib, IO, O, W, Y, ZL, ZU, f, E0, udual, uconstr, ucompl, wmax, it,
                requested, last_obj, acc_count):
    """``Termination.check`` of the iterate (W, Y, ZL, ZU) with scaled objective ``f``
    and its errors: ``(status, last_obj, acc_count)`` -- status 0 Solve_Succeeded, 1
    Solved_To_Acceptable_Level (the acceptable iterate stored in slot F_ACCEPTABLE each
    time the acceptable test holds), 2 Diverging_Iterates, 3 Maximum_Iterations_Exceeded,
    5 / 6 the wall-clock / CPU limit (``requested``, the stop slot: .deadline), or
    :data:`GOES_ON`; ``last_obj`` the objective the next test's change is measured from."""
    if (E0 <= O[OPT_TOL] and udual <= O[OPT_DUAL_INF_TOL]
            and uconstr <= O[OPT_CONSTR_VIOL_TOL] and ucompl <= O[OPT_COMPL_INF_TOL]):
        return 0, last_obj, acc_count
    prev = last_obj
    last_obj = f
    objchg = np.inf if prev != prev else abs(f - prev) / max(1.0, abs(f))
    acc = (O[OPT_ACCEPTABLE_ITER] > 0 and E0 <= O[OPT_ACCEPTABLE_TOL]
           and udual <= O[OPT_ACCEPTABLE_DUAL_INF_TOL]
           and uconstr <= O[OPT_ACCEPTABLE_CONSTR_VIOL_TOL]
           and ucompl <= O[OPT_ACCEPTABLE_COMPL_INF_TOL]
           and objchg <= O[OPT_ACCEPTABLE_OBJ_CHANGE_TOL])
    acc_count = acc_count + 1 if acc else 0
    if acc:
        store_acceptable(Fb, FO, Ib, IO, W, Y, ZL, ZU)
    if acc and acc_count >= O[OPT_ACCEPTABLE_ITER]:
        return 1, last_obj, acc_count
    if wmax > O[OPT_DIVERGING_ITERATES_TOL]:
        return 2, last_obj, acc_count
    if it >= O[OPT_MAX_ITER]:
        return 3, last_obj, acc_count
    if requested == 2:          # .deadline's WALL
        return 5, last_obj, acc_count
    if requested == 3:          # .deadline's CPU
        return 6, last_obj, acc_count
    return GOES_ON, last_obj, acc_count


@kernel
def is_square(Ib, IO):
    """IPOPT's IsSquareProblem (solver/structure.py is_square): as many free variables as
    equality rows, at least one."""
    SI = _i(Ib, IO, I_SIZES)
    return SI[SZ_NEQ] > 0 and SI[SZ_NEQ] == SI[SZ_NX]


@kernel
def feasibility_multipliers(Fb, FO, Ib, IO, O, W, Y, ZL, ZU, H, G, JV, f, mu, it,
                            requested, last_obj, acc_count, eps):
    """After an accepted step of a square problem: once the iterate is feasible
    (unscaled violation <= constr_viol_tol) and the termination test does not end the
    solve, try the bound multipliers at zero and the least-squares y (no limit; the
    inertia correction's current static term ``eps``), and keep them only where the
    test then says Solve_Succeeded or Solved_To_Acceptable_Level; else (or where the
    least-squares system is singular, without that test) the multipliers go back.  Both tests count as the loop's (the acceptable count, the objective
    change).  Returns ``(last_obj, acc_count)``.  HV and the KKT factors are
    overwritten (the iteration recomputes them)."""
    SI = _i(Ib, IO, I_SIZES)
    m, nL, nU = SI[SZ_M], SI[SZ_NL], SI[SZ_NU]
    E0, Emu, udual, uconstr, ucompl, wmax, nconstr, sdual, scompl = errors(
        Fb, FO, Ib, IO, O, W, Y, ZL, ZU, H, G, JV, mu)
    if uconstr > O[OPT_CONSTR_VIOL_TOL]:
        return last_obj, acc_count
    st, last_obj, acc_count = termination(Fb, FO, Ib, IO, O, W, Y, ZL, ZU, f, E0, udual,
                                          uconstr, ucompl, wmax, it, requested, last_obj,
                                          acc_count)
    if st != GOES_ON:
        return last_obj, acc_count
    saved = _f(Fb, FO, F_SAVED_MULTS)          # [y | zL | zU]
    for i in range(m):
        saved[i] = Y[i]
    for k in range(nL):
        saved[m + k] = ZL[k]
        ZL[k] = 0.0
    for k in range(nU):
        saved[m + nL + k] = ZU[k]
        ZU[k] = 0.0
    # (a singular least-squares system: the multipliers back at once, IPOPT's)
    if least_squares_y(Fb, FO, Ib, IO, O, G, ZL, ZU, _f(Fb, FO, F_SCRATCH), Y, eps,
                       np.inf):
        E0, Emu, udual, uconstr, ucompl, wmax, nconstr, sdual, scompl = errors(
            Fb, FO, Ib, IO, O, W, Y, ZL, ZU, H, G, JV, mu)
        st, last_obj, acc_count = termination(Fb, FO, Ib, IO, O, W, Y, ZL, ZU, f, E0,
                                              udual, uconstr, ucompl, wmax, it, requested,
                                              last_obj, acc_count)
        if st == 0 or st == 1:
            return last_obj, acc_count
    for i in range(m):
        Y[i] = saved[i]
    for k in range(nL):
        ZL[k] = saved[m + k]
    for k in range(nU):
        ZU[k] = saved[m + nL + k]
    return last_obj, acc_count
