"""Backtracking filter line search with second-order corrections (W&B 2006, sec. 2.3-2.4).

Constants are IPOPT's: gamma_theta = 1e-5, gamma_phi = 1e-8, delta = 1, s_theta = 1.1,
s_phi = 2.3, eta_phi = 1e-8, alpha_min_frac = 0.05.  theta is the 1-norm of h.

A trial point ``w + alpha dw`` is accepted when it is acceptable to the filter,
``theta <= theta_max``, and either

* (f-type) the switching condition ``gphi^T dw < 0 and
  alpha (-gphi^T dw)^s_phi > delta theta^s_theta`` holds with ``theta <= theta_min`` and
  the Armijo condition ``phi_t <= phi + eta_phi alpha gphi^T dw`` holds, or
* (h-type) ``theta_t <= (1 - gamma_theta) theta`` or ``phi_t <= phi - gamma_phi theta``;
  the filter is then augmented with ``((1-gamma_theta) theta, phi - gamma_phi theta)``.

If the first trial is rejected with ``theta_t >= theta``, up to ``max_soc`` second-order
corrections ``A dw_soc = -c_soc``, ``c_soc <- alpha_soc c_soc + h(w_soc)`` are tried with the
same factorization; an accepted correction replaces the whole direction (its dy, the
bound-multiplier steps of dw_soc and their own fraction-to-boundary step, as IPOPT's
``actual_delta = delta_soc``).  A trial whose f or h is NaN/Inf is rejected and the step is
cut.  The search fails (restoration) below ``alpha_min``.  A sufficient-reduction (h-type)
test also rejects a barrier objective that grows by more than ``obj_max_inc`` orders of
magnitude.

Watchdog (:mod:`.watchdog`): after ``watchdog_shortened_iter_trigger`` shortened
iterations in a row, up to ``watchdog_trial_iter_max`` unchecked full steps (tag ``w``),
then either acceptance against the stored reference or a return to the stored iterate.

Soft restoration (IPOPT's TrySoftRestoStep): when backtracking fails, the filter is
augmented with the current point and the direction is tried once more with one step
length for primal and dual variables, ``alpha = min(alpha_primal_max, alpha_dual_max)``.
A trial point acceptable to the filter and to the current iterate (sufficient reduction,
no Armijo test) is taken and ends the phase (tag ``S``); otherwise it is taken (tag
``s``) when it reduces the primal-dual system error

    E(w, y, z; mu) = ||grad L||_1 / n_w + ||h||_1 / m + ||S z - mu||_1 / n_z

by the factor ``soft_resto_pderror_reduction_factor``, and the following iterations keep
taking such steps (at most ``max_soft_resto_iters`` in a row) until one meets the
original criterion.  Only when no soft step is possible does the restoration phase start.
"""

from __future__ import annotations

import math

import numpy as np

from ..arrays import fused
from ..arrays import amax_abs, scalars

G_THETA, G_PHI, DELTA, S_THETA, S_PHI, ETA_PHI, ALPHA_MIN_FRAC = \
    1e-5, 1e-8, 1.0, 1.1, 2.3, 1e-8, 0.05
_EPS = np.finfo(float).eps
#: IPOPT's DetectTinyStep: no tiny step while the constraint violation (1-norm) exceeds this
TINY_STEP_MAX_THETA = 1e-4


def _le(a, b, ref):
    """a <= b up to IPOPT's relative round-off allowance."""
    return a - b <= 10.0 * _EPS * abs(ref)


def _reference(ipm, d):
    """(theta, phi, gphi^T dw) at the current iterate, and the step norms; the step
    bounds of ``d`` (:meth:`~.ipm.InteriorPoint.step_bounds`) in the same transfer."""
    xp = ipm.xp
    dw = d["dw"]
    bounds = ipm.step_bound_terms(d, ipm.tau)
    barrier = ipm._barrier_terms(ipm.w)
    gBD, d_norm, rel, theta, *rest = scalars(
        xp, d["gphi"] @ dw, amax_abs(xp, dw), amax_abs(xp, dw / (1.0 + xp.abs(ipm.w))),
        xp.sum(xp.abs(ipm.hv)), *barrier, *bounds[2])
    k = len(barrier)
    ipm.keep_step_bounds(d, bounds, rest[k:])
    # (should phi switch to safe slacks, the bounds kept are recomputed from those)
    return (theta, ipm.phi(ipm.w, ipm.f, sums=rest[:k]), gBD), d_norm, rel


def line_search(ipm, d) -> bool:
    o = ipm.opts
    w, dw = ipm.w, d["dw"]
    tau = ipm.tau
    wd = ipm.watchdog
    if wd.last_mu != ipm.mu:
        wd.reset()
        wd.last_mu = ipm.mu
    ref, d_norm, rel = _reference(ipm, d)
    theta = ref[0]
    ipm.info["d_norm"] = d_norm

    # tiny step: accept the full step without line search (IPOPT's tiny_step_tol), but
    # only near feasibility: a tiny step at a large constraint violation means the
    # iterate is (close to) a stationary point of the infeasibility, and accepting it
    # would loop forever; IPOPT's DetectTinyStep then lets the line search fail and the
    # restoration phase decide (feasible point, or local infeasibility)
    tiny = rel < 10.0 * _EPS and theta <= TINY_STEP_MAX_THETA
    soc = True
    amin_gBD = None
    if tiny and wd.active:
        # a tiny step while the watchdog runs: resume from the stored iterate instead
        d, ref, amin_gBD = _stop_watchdog(ipm, d)
        tiny, soc = False, False        # its factorization is gone: no corrections
    elif (o.watchdog_shortened_iter_trigger > 0 and not wd.active and not tiny
          and not ipm.soft_resto and wd.shortened >= o.watchdog_shortened_iter_trigger):
        wd.start(ipm, d, ref)
    if tiny:
        alpha_max, alpha_z = ipm.step_bounds(d, tau)
        f_t, ok = ipm.eval_zeroth(w + alpha_max * dw, ipm.h_t)
        if ok:
            ipm.tiny_step = True
            _accept(ipm, d, alpha_max, alpha_z, w + alpha_max * dw, f_t, 1, "T", None)
            wd.shortened = 0
            return True
    ipm.tiny_step = False

    if ipm.soft_resto:
        ipm.soft_resto_count += 1
        kind = None
        if ipm.soft_resto_count <= o.max_soft_resto_iters:
            kind = _soft_resto_step(ipm, d, ref)
        if kind == "S":
            ipm.soft_resto, ipm.soft_resto_count = False, 0
        return kind is not None      # a failure goes to the restoration phase

    skip_first = False
    while True:
        status, n_trials, f_t = _backtrack(ipm, d, ref, skip_first,
                                           soc and not skip_first, single=wd.active,
                                           amin_gBD=amin_gBD)
        if not wd.active:
            break
        if status == "accepted":           # the watchdog succeeded
            wd.active, wd.saved = False, None
            break
        wd.trials += 1
        if status == "invalid" or wd.trials > o.watchdog_trial_iter_max:
            d, ref, amin_gBD = _stop_watchdog(ipm, d)
            skip_first = True
            continue
        # take the rejected full step (still in w_t, h_t) unchecked, without
        # augmenting the filter
        alpha_max, alpha_z = ipm.step_bounds(d, tau)
        _accept(ipm, d, alpha_max, alpha_z, ipm.w_t.copy(), f_t, 1, "w", None)
        return True
    if status != "accepted":
        if ipm.resto or o.soft_resto_pderror_reduction_factor == 0.0:
            return False
        theta, phi = ref[0], ref[1]
        ipm.filter.add((1 - G_THETA) * theta, phi - G_PHI * theta)
        kind = _soft_resto_step(ipm, d, ref)
        if kind == "s":
            ipm.soft_resto, ipm.soft_resto_count = True, 0
        return kind is not None
    wd.shortened = 0 if n_trials == 1 else wd.shortened + 1
    return True


def _soft_resto_step(ipm, d, ref):
    """One soft-restoration trial (see the module docstring): 'S' (acceptable to the
    filter and the current iterate), 's' (reduces the primal-dual error) or None
    (rejected; the iterate is unchanged)."""
    theta, phi, gBD = ref
    tau = ipm.tau
    alpha = min(ipm.step_bounds(d, tau))
    wt = ipm.w + alpha * d["dw"]
    f_t, ok = ipm.eval_zeroth(wt, ipm.h_t)
    if not ok:
        return None
    if _acceptable(ipm, theta, phi, gBD, 0.0, ipm.theta(ipm.h_t), ipm.phi(wt, f_t)):
        _accept(ipm, d, alpha, alpha, wt, f_t, 1, "S", None)
        return "S"
    # the trial point's primal-dual error, before anything moves (IPOPT measures it
    # before the bound-multiplier correction; and a rejected trial must leave no trace,
    # e.g. in the L-BFGS memory that _accept updates)
    xp = ipm.xp
    grad_t, jac_t = xp.empty_like(ipm.gradf), xp.empty_like(ipm.jv)
    ipm.nlp.grad(wt, grad_t)
    ipm.nlp.jac(wt, jac_t)
    if not ipm.allfinite(grad_t, jac_t):
        return None           # an evaluation error rejects the soft step (IPOPT)
    err = ipm.primal_dual_error(ipm.mu)
    err_t = ipm.primal_dual_error(
        ipm.mu, w=wt, y=ipm.y + alpha * d["dy"], zL=ipm.zL + alpha * d["dzL"],
        zU=ipm.zU + alpha * d["dzU"], gradf=grad_t, jv=jac_t, hv=ipm.h_t)
    if err_t <= ipm.opts.soft_resto_pderror_reduction_factor * err:
        _accept(ipm, d, alpha, alpha, wt, f_t, 1, "s", None, first_order=(grad_t, jac_t))
        return "s"
    return None


def _stop_watchdog(ipm, d_latest):
    """Restore the watchdog's stored iterate; returns its (direction, reference values)
    and the ``gphi^T dw`` that IPOPT's smallest step size is computed from afterwards:
    the restored iterate's barrier gradient times the *latest* direction, ``d_latest``
    (IPOPT's StopWatchDog hands the stored direction to the search but leaves the
    latest one as the current delta, which CalculateAlphaMin reads).  So a restored
    search gives up at alpha_min_frac gamma_theta where that product is >= 0, instead
    of backtracking to ~1e-20 (a nonsmooth objective at its kink: IPOPT's
    Error_In_Step_Computation after 24 iterations, not max_iter)."""
    d, ref = ipm.watchdog.stop(ipm)
    return d, ref, scalars(ipm.xp, d["gphi"] @ d_latest["dw"])[0]


def _backtrack(ipm, d, ref, skip_first, soc, single, amin_gBD=None):
    """Backtracking from the fraction-to-the-boundary step along ``d``, each trial tested
    against the reference values ``ref = (theta, phi, gphi^T dw)``.  ``skip_first``:
    start at the second trial step; ``soc``: second-order corrections allowed;
    ``single``: the first trial only (the watchdog); ``amin_gBD``: the ``gphi^T dw``
    for the smallest step size in place of ``ref``'s (:func:`_stop_watchdog`).
    Returns ``(status, n_trials, f_t)``:
    status 'accepted', 'rejected' or 'invalid' (no trial point could be evaluated), and
    the objective of the last trial point (which ``ipm.w_t`` / ``ipm.h_t`` still hold)."""
    o = ipm.opts
    xp = ipm.xp
    w, dw = ipm.w, d["dw"]
    tau = ipm.tau
    theta, phi, gBD = ref
    alpha_max, alpha_z = ipm.step_bounds(d, tau)
    if single:
        amin = alpha_max
    else:
        g = gBD if amin_gBD is None else amin_gBD
        if g < 0:
            if theta <= ipm.theta_min:
                amin = min(G_THETA, G_PHI * theta / -g,
                           DELTA * theta ** S_THETA / (-g) ** S_PHI)
            else:
                amin = min(G_THETA, G_PHI * theta / -g)
        else:
            amin = G_THETA
        amin *= ALPHA_MIN_FRAC

    alpha = alpha_max * (o.alpha_red_factor if skip_first else 1.0)
    n_trials = 1 if skip_first else 0
    first = n_trials
    all_invalid = True
    while alpha >= amin or n_trials == first:
        n_trials += 1
        wt = ipm.w_t
        xp.add(w, alpha * dw, out=wt)
        f_t, ok, theta_t, phi_t = ipm.trial_point(wt, ipm.h_t)
        if ok:
            all_invalid = False
            kind = _acceptable(ipm, theta, phi, gBD, alpha, theta_t, phi_t)
            if kind:
                _accept(ipm, d, alpha, alpha_z, wt.copy(), f_t, n_trials, kind,
                        (theta, phi))
                return "accepted", n_trials, f_t
            if single:
                return "rejected", n_trials, f_t
            if n_trials == 1 and soc and theta_t >= theta and o.max_soc > 0:
                if _second_order_correction(ipm, d, alpha, alpha_z, theta, phi, gBD,
                                            n_trials, theta_t):
                    return "accepted", n_trials, None
        elif single:
            return "invalid", n_trials, None
        alpha *= o.alpha_red_factor
    ipm.line_search_all_invalid = all_invalid
    if all_invalid:
        ipm.invalid(w + alpha_max * dw, "function")
    return "rejected", n_trials, None


def _acceptable(ipm, theta, phi, gBD, alpha, theta_t, phi_t):
    """'f' (Armijo step), 'h' (filter step) or '' (rejected), in IPOPT's order
    (CheckAcceptabilityOfTrialPoint): theta_max, then the test against the current
    iterate, then the filter; an acceptance runs the filter reset heuristic."""
    if not math.isfinite(phi_t) or theta_t > ipm.theta_max:
        return ""
    o = ipm.opts
    flt = ipm.filter
    switching = gBD < 0 and alpha * (-gBD) ** S_PHI > DELTA * theta ** S_THETA
    armijo = _le(phi_t - phi, ETA_PHI * alpha * gBD, phi)
    if theta <= ipm.theta_min and switching:
        ok = armijo
    else:
        ok = not (phi_t > phi and math.log10(phi_t - phi) > o.obj_max_inc + (
            math.log10(abs(phi)) if abs(phi) > 10.0 else 1.0)) and (
            _le(theta_t, (1 - G_THETA) * theta, theta) or
            _le(phi_t, phi - G_PHI * theta, phi))
    if not ok:
        flt.rejected_by_filter = False
        return ""
    if not flt.acceptable(theta_t, phi_t):
        flt.rejected_by_filter = True
        return ""
    flt.note_acceptance(o.max_filter_resets, o.filter_reset_trigger)
    # IPOPT labels (and keeps out of the filter) every step meeting both the switching
    # and the Armijo condition, whichever test accepted it
    return "f" if (switching and armijo) else "h"


def _second_order_correction(ipm, d, alpha, alpha_z, theta, phi, gBD, n_trials, theta_t):
    """IPOPT's TrySecondOrderCorrection: each correction must reduce the infeasibility of
    the trial point before it (the rejected first trial point for the first one) by
    kappa_soc for the next to be tried."""
    o = ipm.opts
    w = ipm.w
    c_soc = alpha * ipm.hv + ipm.h_t
    theta_old = theta_t
    for _ in range(o.max_soc):
        dw_soc, dy_soc = ipm.kkt.solve(d["rhs_w"], -c_soc)
        if not ipm.allfinite(dw_soc):
            return False
        a_soc = ipm.fraction_to_boundary(dw_soc, ipm.tau)
        wt = w + a_soc * dw_soc
        f_t, ok, theta_t, phi_t = ipm.trial_point(wt, ipm.h_t)
        if not ok:
            return False
        kind = _acceptable(ipm, theta, phi, gBD, alpha, theta_t, phi_t)
        if kind:
            # the corrected step replaces the whole direction, duals included, and the
            # dual step length is recomputed for it (IPOPT: actual_delta = delta_soc)
            dzL, dzU = ipm.bound_multiplier_steps(dw_soc)
            alpha_z = ipm.fraction_to_boundary_z(dzL, dzU, ipm.tau)
            d = dict(d, dw=dw_soc, dy=dy_soc, dzL=dzL, dzU=dzU)
            _accept(ipm, d, a_soc, alpha_z, wt, f_t, n_trials, kind.upper(),
                    (theta, phi))
            return True
        if theta_t > o.kappa_soc * theta_old:
            return False
        theta_old = theta_t
        c_soc = a_soc * c_soc + ipm.h_t
    return False


def _accept(ipm, d, alpha, alpha_z, wt, f_t, ls, kind, filter_pair, first_order=None):
    """Move to the trial point; augment the filter for h-type steps; dual step.
    ``first_order``: the trial point's (gradient, Jacobian values) when the caller has
    already evaluated them (finite), else they are evaluated here."""
    if filter_pair is not None and kind in ("h", "H"):
        theta, phi = filter_pair
        ipm.filter.add((1 - G_THETA) * theta, phi - G_PHI * theta)
    if ipm.lbfgs is not None:       # the pair (s, y) of the quasi-Newton update
        w_old, gold, jold = ipm.w.copy(), ipm.gradf.copy(), ipm.jv.copy()
    ipm.w[:] = wt
    ipm.iterate_moved()
    ipm.f = f_t
    ipm.hv[:] = ipm.h_t
    if first_order is None:
        ipm.eval_first_order(ipm.w)
    else:
        ipm.gradf[:], ipm.jv[:] = first_order
    ipm.y += alpha * d["dy"]
    ipm.zL += alpha_z * d["dzL"]
    ipm.zU += alpha_z * d["dzU"]
    # keep each z within a factor kappa_sigma of mu / slack (W&B eq. 16)
    ks, mu = ipm.opts.kappa_sigma, ipm.mu
    sL, sU = ipm.slacks(ipm.w)
    xp = ipm.xp
    fused.call(xp, "clip_ratio", sL, mu, ks, ipm.zL)
    fused.call(xp, "clip_ratio", sU, mu, ks, ipm.zU)
    if ipm.lbfgs is not None:
        nx = ipm.nlp.nx
        s = ipm.w[:nx] - w_old[:nx]
        gnew = (ipm.gradf + ipm.Aty(ipm.jv, ipm.y))[:nx]  # new array: Aty's buffer reused
        gold_ = (gold + ipm.Aty(jold, ipm.y))[:nx]
        ipm.lbfgs.update(s, gnew - gold_)
    ipm.info.update(alpha_pr=alpha, alpha_du=alpha_z, ls=ls, tag=kind[:1])
