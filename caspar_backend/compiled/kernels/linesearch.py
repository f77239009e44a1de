"""batch/linesearch.py for one instance: the filter, the acceptance tests, the trial
point and the step acceptance.
"""
import math

import numpy as np

from .constants import DELTA, EPS, ETA_PHI, G_PHI, G_THETA, S_PHI, S_THETA
from ._jit import U, _f, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .pairwise import pairwise_sum
from .quantities import barrier_phi
from .step_parts import accept_step, trial_point, zeroth_rows
from .tape_eval import eval_zeroth


# The filter FT (2K,): FT[k] is entry k's theta, FT[K + k] its phi (1-D: a 2-D view
# would reshape, which the CUDA build cannot cache)


@kernel
def filter_reset(FT, FI):
    K = FT.shape[0] // 2
    for k in range(K):
        FT[k] = np.inf
        FT[K + k] = np.inf
    FI[0] = 0     # rejected_by_filter
    FI[1] = 0     # filter_rejections


@kernel
def filter_acceptable(FT, theta, phi):
    K = FT.shape[0] // 2
    for k in range(K):
        if theta >= FT[k] and phi >= FT[K + k]:
            return False
    return True


@kernel
def filter_add(FT, theta, phi):
    """Returns False when the filter is full (-> ejected)."""
    free = -1
    K = FT.shape[0] // 2
    for k in range(K):
        if FT[k] >= theta and FT[K + k] >= phi:
            FT[k] = np.inf
            FT[K + k] = np.inf
    for k in range(K):
        if FT[k] == np.inf:
            free = k
            break
    if free < 0:
        return False
    FT[free] = theta
    FT[K + free] = phi
    return True


@kernel
def le_(a, b, ref):
    return a - b <= 10.0 * EPS * abs(ref)


@kernel
def acceptable(O, FT, FI, LS, theta, phi, gBD, alpha, theta_t, phi_t):
    """LineSearch._acceptable: 0 rejected, 1 'f', 2 'h' (theta_min, theta_max set
    at the first call, from ``theta``)."""
    if LS[1] < 0.0:
        LS[1] = O[OPT_THETA_MAX_FACT] * max(1.0, theta)
        LS[0] = O[OPT_THETA_MIN_FACT] * max(1.0, theta)
    theta_min, theta_max = LS[0], LS[1]
    live = math.isfinite(phi_t) and not (theta_t > theta_max)
    switching = gBD < 0 and alpha * (-gBD) ** S_PHI > DELTA * theta ** S_THETA
    armijo = le_(phi_t - phi, ETA_PHI * alpha * gBD, phi)
    inc = phi_t - phi
    big = phi_t > phi and math.log10(inc if inc > 0 else 1.0) > O[OPT_OBJ_MAX_INC] + (
        math.log10(abs(phi)) if abs(phi) > 10.0 else 1.0)
    suff = (not big) and (le_(theta_t, (1 - G_THETA) * theta, theta)
                          or le_(phi_t, phi - G_PHI * theta, phi))
    ok = armijo if (theta <= theta_min and switching) else suff
    if not live:
        return 0
    if not ok:
        FI[0] = 0
        return 0
    if not filter_acceptable(FT, theta_t, phi_t):
        FI[0] = 1
        return 0
    # note_acceptance
    if FI[2] < O[OPT_MAX_FILTER_RESETS]:
        if FI[0] == 1:
            FI[1] += 1
            if FI[1] >= O[OPT_FILTER_RESET_TRIGGER]:
                filter_reset(FT, FI)
                FI[2] += 1
        else:
            FI[1] = 0
    FI[0] = 0
    return 1 if (switching and armijo) else 2




@kernel
def bound_mult_steps(Fb, FO, Ib, IO, dW, ZL, ZU, sL, sU, mu, dzL, dzU):
    iL, iU = _i(Ib, IO, I_LOWER_IDX), _i(Ib, IO, I_UPPER_IDX)
    for k in range(iL.shape[0]):
        dzL[k] = ((mu - ZL[k] * sL[k]) - ZL[k] * dW[U(iL[k])]) / sL[k]
    for k in range(iU.shape[0]):
        dzU[k] = ((mu - ZU[k] * sU[k]) + ZU[k] * dW[U(iU[k])]) / sU[k]


@kernel
def accept(Fb, FO, Ib, IO, O, alpha, alpha_z, f_t, h_slot, dy_slot, dzl_slot, dzu_slot, mu):
    """The trial point (slot F_W_TRIAL, f ``f_t``, h in float slot ``h_slot``) becomes
    the iterate, the multipliers step by ``alpha`` (y, direction in ``dy_slot``) and
    ``alpha_z`` (z_L, z_U, directions in ``dzl_slot``, ``dzu_slot``), the slacks follow,
    the bound multipliers kept near mu / s (:func:`.step_parts.accept_step`, a team
    job)."""
    _f(Fb, FO, F_F_CUR)[0] = f_t
    accept_step(Fb, FO, Ib, IO, O, alpha, alpha_z, h_slot, dy_slot, dzl_slot, dzu_slot, mu)


@kernel
def trial(Fb, FO, Ib, IO, O, alpha, dw_slot, h_slot, mu):
    """(f, ok, theta, phi, safe) at w_t = w + alpha d_w (F_W_TRIAL; d_w in float slot
    ``dw_slot``), h there into float slot ``h_slot``: the point and the rows are team
    jobs (:mod:`.step_parts`), theta the pairwise sum of |h| they leave in F_SCRATCH."""
    m = _i(Ib, IO, I_SIZES)[SZ_M]
    trial_point(Fb, FO, Ib, IO, alpha, dw_slot)
    f = eval_zeroth(Fb, FO, Ib, IO)
    finite = zeroth_rows(Fb, FO, Ib, IO, F_W_TRIAL, h_slot, 1)
    f = _f(Fb, FO, F_OBJ_SCALE)[0] * f
    ok = math.isfinite(f) and finite
    theta = pairwise_sum(_f(Fb, FO, F_SCRATCH), 0, m)
    phi, safe = barrier_phi(Fb, FO, Ib, IO, O, f, F_W_TRIAL, mu)
    return f, ok, theta, phi, safe
