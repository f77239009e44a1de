"""The starting point of the interior point (IPOPT's DefaultIterateInitializer).

* :func:`pushed`: each v_i moved strictly inside its bounds, by
  ``p = min(kappa1 max(1, |bound|), kappa2 (wU - wL))`` (IPOPT's push_variables), the
  midpoint where both pushes cross; :func:`push_into_bounds` applies it to a whole
  ``w = (x, s)`` (bound_push / bound_frac on x, the slack_* options on s);
* :func:`default_start`: IPOPT's DefaultIterateInitializer::SetInitialIterates,

      x = push(x0),   s = push_s(d(x)),   d(x) = dc_I g_I(x) at the pushed x,

  one constraint evaluation, which is also h of the first iterate (the warm start,
  IPOPT's WarmStartIterateInitializer, takes ``s = d(x0)`` at the unpushed x0 and
  pushes w whole: :func:`push_into_bounds` on :meth:`~.nlp.SlackNLP.initial_w`);
* :func:`least_squares_y`: the constraint multipliers minimizing
  ``||grad f + A^T y - zL + zU||_2``, through the KKT system
  ``[[I, A^T], [A, 0]] [dw; y] = [-(grad f - zL + zU); 0]``, zero when that system is
  singular or has the wrong inertia (no regularization of its constraint rows: IPOPT's)
  or ``max |y|`` exceeds ``constr_mult_init_max``;
* :func:`least_squares_duals`: with ``least_square_init_duals``, IPOPT's estimate of
  every multiplier (y and the bound multipliers) at once.
"""

from __future__ import annotations

import math

import numpy as np

from ..arrays import amax_abs, fused, is_host, scalars

#: barrier-term stand-in that holds the slack of a relaxed equality in place in the
#: least-squares multiplier estimate (its step is O(1/weight)), so that the estimate is
#: the equality's, as without relaxation, up to ~1e-8 relative; the resulting D = 1e8
#: of the condensed system is within what its factorization resolves
RELAXED_SLACK_LS_WEIGHT = 1e8


def pushed(v, wL, wU, kappa1, kappa2):
    """``v`` (host float64, any shape) moved inside ``[wL, wU]`` (same shape) entry by
    entry (IPOPT's DefaultIterateInitializer::push_variables):

        v_i <- min(max(v_i, wL_i + pL_i), wU_i - pU_i),
        pL_i = min(kappa1 max(1, |wL_i|), kappa2 (wU_i - wL_i))   (kappa1 term alone
        when wU_i is infinite; pU_i likewise), the midpoint (wL_i + wU_i) / 2 when
        wL_i + pL_i > wU_i - pU_i.

    ``kappa1``, ``kappa2``: scalars or arrays broadcasting to ``v``."""
    with np.errstate(invalid="ignore"):
        pL = np.where(np.isfinite(wU), np.minimum(kappa1 * np.maximum(1, np.abs(wL)),
                                                  kappa2 * (wU - wL)),
                      kappa1 * np.maximum(1, np.abs(wL)))
        pU = np.where(np.isfinite(wL), np.minimum(kappa1 * np.maximum(1, np.abs(wU)),
                                                  kappa2 * (wU - wL)),
                      kappa1 * np.maximum(1, np.abs(wU)))
        lo = np.where(np.isfinite(wL), wL + pL, -np.inf)
        hi = np.where(np.isfinite(wU), wU - pU, np.inf)
    out = np.minimum(np.maximum(v, lo), hi)
    # interval too narrow for both pushes: midpoint
    bad = lo > hi
    out[bad] = 0.5 * (wL[bad] + wU[bad])
    return out


def push_into_bounds(nlp, w, kappa1, kappa2, slack_kappa1, slack_kappa2):
    """``w`` (host float64, (..., nw)) pushed inside ``[wL, wU]`` by :func:`pushed`,
    ``kappa1``, ``kappa2`` on the x entries and ``slack_kappa1``, ``slack_kappa2`` on
    the slacks; once per solve, on the host (NumPy in, NumPy out)."""
    nx, nw = nlp.nx, nlp.nw
    k1 = np.full(nw, kappa1)
    k2 = np.full(nw, kappa2)
    k1[nx:], k2[nx:] = slack_kappa1, slack_kappa2
    return pushed(w, *nlp.host_bounds(), k1, k2)


def default_start(nlp, x0, hout, kappa1, kappa2, slack_kappa1, slack_kappa2):
    """IPOPT's DefaultIterateInitializer::SetInitialIterates (without the least-square
    primals): the starting ``w = (x, s)`` (xp) of a :class:`~.nlp.SlackNLP`,

        x = pushed(x0_free; kappa1, kappa2),
        s = pushed(d(x); slack_kappa1, slack_kappa2),   d(x) = dc_I g_I(x)

    with d at the *pushed* x (IpCq().trial_d()), and ``h(w)`` written into ``hout``
    from that one constraint evaluation: ``h`` is affine in s, ``h(x, s) = h(x, 0) -
    [0; s]`` on the slack rows, and ``h(x, 0)`` is ``d(x)`` there."""
    xp, nx = nlp.xp, nlp.nx
    w = nlp.initial_w(x0, slacks=False)
    if not is_host(xp):
        return _default_start_on_device(nlp, w, hout, kappa1, kappa2, slack_kappa1,
                                        slack_kappa2)
    wL, wU = nlp.host_bounds()
    w[:nx] = pushed(w[:nx], wL[:nx], wU[:nx], kappa1, kappa2)
    nlp.h(w, hout)
    if nlp.ns:
        rows = nlp.slack_rows_d
        w[nx:] = pushed(hout[rows], wL[nx:], wU[nx:], slack_kappa1, slack_kappa2)
        hout[rows] -= w[nx:]
    return w


def _default_start_on_device(nlp, w, hout, kappa1, kappa2, slack_kappa1, slack_kappa2):
    """:func:`default_start`'s pushes as the fused ``push_bounds`` kernel, in place on
    the device (the same formula as :func:`pushed`, bit for bit)."""
    nx = nlp.nx
    fused.call(nlp.xp, "push_bounds", nlp.wL[:nx], nlp.wU[:nx], kappa1, kappa2, w[:nx])
    nlp.h(w, hout)
    if nlp.ns:
        rows = nlp.slack_rows_d
        d = hout[rows]
        fused.call(nlp.xp, "push_bounds", nlp.wL[nx:], nlp.wU[nx:], slack_kappa1,
                   slack_kappa2, d)
        w[nx:] = d
        hout[rows] -= d
    return w


def _zero_hessian_system(k, jv) -> None:
    """The KKT system ``k``'s values for a least-squares estimate: Hessian and barrier
    diagonal zero, Jacobian values ``jv``, no low-rank (L-BFGS) block."""
    k.hess_values[:] = 0.0
    k.jac_values[:] = jv
    k.sigma[:] = 0.0
    if k.r:
        k.lowrank_Q[:] = 0.0
        k.lowrank_c[:] = -1.0


def least_squares_y(corrector, calc, it, relaxed_slacks, limit):
    """The least-squares constraint multipliers at ``it`` (see the module doc; IPOPT's
    least_square_mults) as ``(y, solved)``: y zero when the system is singular or
    ``max |y| > limit``, ``solved`` False where it was singular (IPOPT's
    CalculateMultipliers returning false: its callers differ -- the start takes y = 0,
    recalc_y keeps the current y, a square problem's feasibility multipliers keep the
    iterate's).  The slacks of relaxed equalities are held in place
    (RELAXED_SLACK_LS_WEIGHT): as variables of the estimate their rows would add
    ``y_i^2`` to it (their two bound multipliers start equal), shrinking the equality
    multipliers towards zero (a ridge estimate).  ``corrector``: the
    :class:`~.inertia.InertiaCorrector` whose KKT system is used (its values are
    overwritten)."""
    k, xp, m = corrector.kkt, calc.xp, calc.m
    rd = calc.add_bound_multipliers(it.gradf.copy(), it.zL, it.zU)
    _zero_hessian_system(k, it.jv)
    if relaxed_slacks.size:
        k.sigma[relaxed_slacks] = RELAXED_SLACK_LS_WEIGHT
    y = xp.zeros(m)
    # no regularization of the constraint rows: a singular system (a rank-deficient
    # Jacobian) or a wrong inertia is a failure, as IPOPT's LeastSquareMultipliers (its
    # augmented solve with delta_c = 0 reports it)
    k.delta_w, k.delta_c = 1.0, 0.0
    _, ok = corrector.factor()
    if ok:
        _, y = corrector.solve(-rd, xp.zeros(m))
    ymax, = scalars(xp, amax_abs(xp, y))
    if not math.isfinite(ymax) or ymax > limit:
        y = xp.zeros(m)
    return y, bool(ok)


def least_squares_duals(corrector, calc, it, jv0) -> bool:
    """IPOPT's CalculateLeastSquareDuals (``least_square_init_duals = yes``): every
    multiplier at once from the augmented system with the Hessian zero, the barrier
    diagonal ``D = -(number of finite bounds of w_i)`` and no regularization,

        [[D, A0^T], [A0, 0]] [u; y'] = [grad f; 0],   y = -y',  zL = -u[iL],  zU = u[iU],

    accepted only with the inertia ``(m, nw, 0)``; then ``y`` is the iterate's and the
    bound multipliers are raised to at least their current values (bound_mult_init_val).
    ``grad f`` is the starting iterate's, but ``A0`` (values ``jv0``, the scaled slack
    problem's Jacobian) is taken at the user's x0 *before* the bound push: IPOPT reads
    ``curr_jac_c``/``curr_jac_d`` there, whose current point is still the unpushed one
    (an evaluation of its own).  Returns False, changing nothing of ``it``, where the
    factorization or its inertia fails (the caller falls back on
    :func:`least_squares_y`).  ``corrector``'s KKT values are overwritten."""
    k, xp, m = corrector.kkt, calc.xp, calc.m
    nw = it.w.size
    _zero_hessian_system(k, jv0)
    # iL and iU hold no duplicates: plain indexed updates
    k.sigma[calc.iL] -= 1.0
    k.sigma[calc.iU] -= 1.0
    k.delta_w, k.delta_c = 0.0, 0.0
    fact, _ = corrector.factor()
    if not fact.ok or fact.inertia != (m, nw, 0):
        return False
    u, yp = corrector.solve(it.gradf, xp.zeros(m))
    if not calc.allfinite(u, yp):
        return False
    it.y[:] = -yp
    it.zL[:] = xp.maximum(-u[calc.iL], it.zL)
    it.zU[:] = xp.maximum(u[calc.iU], it.zU)
    return True


def warm_start_pushes(opts) -> tuple:
    """``(push, frac, slack_push, slack_frac)`` of a warm start, as IPOPT's
    WarmStartIterateInitializer::InitializeImpl reads them: each ``warm_start_*`` value
    the user set, else the value of ``bound_push`` (the pushes) or ``bound_frac`` (the
    fractions) -- the user's or its default -- not the warm_start_* defaults."""
    def pick(name, fallback):
        return opts[name] if name in opts.user else opts[fallback]

    return (pick("warm_start_bound_push", "bound_push"),
            pick("warm_start_bound_frac", "bound_frac"),
            pick("warm_start_slack_bound_push", "bound_push"),
            pick("warm_start_slack_bound_frac", "bound_frac"))
