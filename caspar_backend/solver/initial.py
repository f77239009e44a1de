"""The starting point of the interior point (IPOPT's DefaultIterateInitializer).

* :func:`push_into_bounds`: each w_i moved strictly inside its bounds, by
  ``p = min(kappa1 max(1, |bound|), kappa2 (wU - wL))`` (bound_push / bound_frac; the
  slack_* options for the slacks), the midpoint where both pushes cross;
* :func:`least_squares_y`: the constraint multipliers minimizing
  ``||grad f + A^T y - zL + zU||_2``, through the KKT system
  ``[[I, A^T], [A, 0]] [dw; y] = [-(grad f - zL + zU); 0]``, zero when that fails or
  ``max |y|`` exceeds ``constr_mult_init_max``.
"""

from __future__ import annotations

import math

import numpy as np

from ..arrays import amax_abs, host, scalars

#: barrier-term stand-in that holds the slack of a relaxed equality in place in the
#: least-squares multiplier estimate (its step is O(1/weight)), so that the estimate is
#: the equality's, as without relaxation, up to ~1e-8 relative; the resulting D = 1e8
#: of the condensed system is within what its factorization resolves
RELAXED_SLACK_LS_WEIGHT = 1e8


def push_into_bounds(nlp, w, kappa1, kappa2, slack_kappa1, slack_kappa2):
    """``w`` (host float64, nw) pushed inside ``[wL, wU]``; once per solve, on the host
    (NumPy in, NumPy out)."""
    wL, wU, nx, nw = host(nlp.wL), host(nlp.wU), nlp.nx, nlp.nw
    k1 = np.full(nw, kappa1)
    k2 = np.full(nw, kappa2)
    k1[nx:], k2[nx:] = slack_kappa1, slack_kappa2
    with np.errstate(invalid="ignore"):
        pL = np.where(np.isfinite(wU), np.minimum(k1 * np.maximum(1, np.abs(wL)),
                                                  k2 * (wU - wL)),
                      k1 * np.maximum(1, np.abs(wL)))
        pU = np.where(np.isfinite(wL), np.minimum(k1 * np.maximum(1, np.abs(wU)),
                                                  k2 * (wU - wL)),
                      k1 * np.maximum(1, np.abs(wU)))
        lo = np.where(np.isfinite(wL), wL + pL, -np.inf)
        hi = np.where(np.isfinite(wU), wU - pU, np.inf)
    out = np.minimum(np.maximum(w, lo), hi)
    # interval too narrow for both pushes: midpoint
    bad = lo > hi
    out[bad] = 0.5 * (wL[bad] + wU[bad])
    return out


def least_squares_y(corrector, calc, it, relaxed_slacks, limit):
    """The least-squares constraint multipliers at ``it`` (see the module doc; IPOPT's
    least_square_mults), zero when the system is singular or ``max |y| > limit``.  The
    slacks of relaxed equalities are held in place (RELAXED_SLACK_LS_WEIGHT): as
    variables of the estimate their rows would add ``y_i^2`` to it (their two bound
    multipliers start equal), shrinking the equality multipliers towards zero (a ridge
    estimate).  ``corrector``: the :class:`~.inertia.InertiaCorrector` whose KKT system
    is used (its values are overwritten)."""
    k, xp, m = corrector.kkt, calc.xp, calc.m
    rd = calc.add_bound_multipliers(it.gradf.copy(), it.zL, it.zU)
    k.hess_values[:] = 0.0
    k.jac_values[:] = it.jv
    k.sigma[:] = 0.0
    if relaxed_slacks.size:
        k.sigma[relaxed_slacks] = RELAXED_SLACK_LS_WEIGHT
    if k.r:
        k.lowrank_Q[:] = 0.0
        k.lowrank_c[:] = -1.0
    y = xp.zeros(m)
    for dc in (0.0, 1e-10):
        k.delta_w, k.delta_c = 1.0, dc
        _, ok = corrector.factor()
        if ok:
            _, y = corrector.solve(-rd, xp.zeros(m))
            break
    ymax, = scalars(xp, amax_abs(xp, y))
    if not math.isfinite(ymax) or ymax > limit:
        y = xp.zeros(m)
    return y
