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
``actual_delta = delta_soc``).  A trial whose f or h is NaN/Inf is rejected and the step is cut.  The
search fails (restoration) below ``alpha_min``.
"""

from __future__ import annotations

import math

import numpy as np

from ..kkt.arrays import amax_abs, scalars

G_THETA, G_PHI, DELTA, S_THETA, S_PHI, ETA_PHI, ALPHA_MIN_FRAC = \
    1e-5, 1e-8, 1.0, 1.1, 2.3, 1e-8, 0.05
_EPS = np.finfo(float).eps
#: IPOPT's DetectTinyStep: no tiny step while the constraint violation (1-norm) exceeds this
TINY_STEP_MAX_THETA = 1e-4


def _le(a, b, ref):
    """a <= b up to IPOPT's relative round-off allowance."""
    return a - b <= 10.0 * _EPS * abs(ref)


def line_search(ipm, d) -> bool:
    o = ipm.opts
    xp = ipm.xp
    w, dw = ipm.w, d["dw"]
    tau = ipm.tau
    alpha_max = ipm.fraction_to_boundary(dw, tau)
    alpha_z = ipm.fraction_to_boundary_z(d["dzL"], d["dzU"], tau)
    theta = ipm.theta(ipm.hv)
    phi = ipm.phi(w, ipm.f)
    # one transfer for the directional derivative and the two step norms
    gBD, d_norm, rel = scalars(xp, d["gphi"] @ dw, amax_abs(xp, dw),
                               amax_abs(xp, dw / (1.0 + xp.abs(w))))
    info = ipm.info
    info["d_norm"] = d_norm

    # tiny step: accept the full step without line search (IPOPT's tiny_step_tol), but
    # only near feasibility: a tiny step at a large constraint violation means the
    # iterate is (close to) a stationary point of the infeasibility, and accepting it
    # would loop forever; IPOPT's DetectTinyStep then lets the line search fail and the
    # restoration phase decide (feasible point, or local infeasibility)
    if rel < 10.0 * _EPS and theta <= TINY_STEP_MAX_THETA:
        f_t, ok = ipm.eval_zeroth(w + alpha_max * dw, ipm.h_t)
        if ok:
            ipm.tiny_step = True
            _accept(ipm, d, alpha_max, alpha_z, w + alpha_max * dw, f_t, 1, "T", None)
            return True
    ipm.tiny_step = False

    if gBD < 0:
        if theta <= ipm.theta_min:
            amin = min(G_THETA, G_PHI * theta / -gBD, DELTA * theta ** S_THETA / (-gBD) ** S_PHI)
        else:
            amin = min(G_THETA, G_PHI * theta / -gBD)
    else:
        amin = G_THETA
    amin *= ALPHA_MIN_FRAC

    alpha = alpha_max
    n_trials = 0
    all_invalid = True
    while alpha >= amin or n_trials == 0:
        n_trials += 1
        wt = ipm.w_t
        xp.add(w, alpha * dw, out=wt)
        f_t, ok = ipm.eval_zeroth(wt, ipm.h_t)
        if ok:
            all_invalid = False
            theta_t = ipm.theta(ipm.h_t)
            phi_t = ipm.phi(wt, f_t)
            kind = _acceptable(ipm, theta, phi, gBD, alpha, theta_t, phi_t)
            if kind:
                _accept(ipm, d, alpha, alpha_z, wt.copy(), f_t, n_trials, kind,
                        (theta, phi))
                return True
            if n_trials == 1 and theta_t >= theta and o.max_soc > 0:
                if _second_order_correction(ipm, d, alpha, alpha_z, theta, phi, gBD,
                                            n_trials):
                    return True
        alpha *= o.alpha_red_factor
    ipm.line_search_all_invalid = all_invalid
    if all_invalid:
        ipm.invalid(w + alpha_max * dw, "function")
    return False


def _acceptable(ipm, theta, phi, gBD, alpha, theta_t, phi_t):
    """'f' (Armijo step), 'h' (filter step) or '' (rejected)."""
    if not math.isfinite(phi_t) or theta_t > ipm.theta_max:
        return ""
    if not ipm.filter.acceptable(theta_t, phi_t):
        return ""
    switching = gBD < 0 and alpha * (-gBD) ** S_PHI > DELTA * theta ** S_THETA
    armijo = _le(phi_t - phi, ETA_PHI * alpha * gBD, phi)
    if theta <= ipm.theta_min and switching:
        return "f" if armijo else ""
    if _le(theta_t, (1 - G_THETA) * theta, theta) or _le(phi_t, phi - G_PHI * theta, phi):
        # IPOPT labels (and keeps out of the filter) every step meeting both the switching
        # and the Armijo condition, whichever test accepted it
        return "f" if (switching and armijo) else "h"
    return ""


def _second_order_correction(ipm, d, alpha, alpha_z, theta, phi, gBD, n_trials):
    o = ipm.opts
    w = ipm.w
    c_soc = alpha * ipm.hv + ipm.h_t
    theta_old = theta
    for _ in range(o.max_soc):
        dw_soc, dy_soc = ipm.kkt.solve(d["rhs_w"], -c_soc)
        if not ipm.allfinite(dw_soc):
            return False
        a_soc = ipm.fraction_to_boundary(dw_soc, ipm.tau)
        wt = w + a_soc * dw_soc
        f_t, ok = ipm.eval_zeroth(wt, ipm.h_t)
        if not ok:
            return False
        theta_t = ipm.theta(ipm.h_t)
        phi_t = ipm.phi(wt, f_t)
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


def _accept(ipm, d, alpha, alpha_z, wt, f_t, ls, kind, filter_pair):
    """Move to the trial point; augment the filter for h-type steps; dual step."""
    if filter_pair is not None and kind in ("h", "H"):
        theta, phi = filter_pair
        ipm.filter.add((1 - G_THETA) * theta, phi - G_PHI * theta)
    w_old = ipm.w.copy()
    ipm.w[:] = wt
    ipm.f = f_t
    ipm.hv[:] = ipm.h_t
    if ipm.lbfgs is not None:
        gold, jold = ipm.gradf.copy(), ipm.jv.copy()
    ipm.eval_first_order(ipm.w)
    ipm.y += alpha * d["dy"]
    ipm.zL += alpha_z * d["dzL"]
    ipm.zU += alpha_z * d["dzU"]
    # keep each z within a factor kappa_sigma of mu / slack (W&B eq. 16)
    ks, mu = ipm.opts.kappa_sigma, ipm.mu
    sL, sU = ipm.slacks(ipm.w)
    xp = ipm.xp
    xp.clip(ipm.zL, mu / (ks * sL), ks * mu / sL, out=ipm.zL)
    xp.clip(ipm.zU, mu / (ks * sU), ks * mu / sU, out=ipm.zU)
    if ipm.lbfgs is not None:
        nx = ipm.nlp.nx
        s = ipm.w[:nx] - w_old[:nx]
        gnew = (ipm.gradf + ipm.Aty(ipm.jv, ipm.y))[:nx]  # new array: Aty's buffer reused
        gold_ = (gold + ipm.Aty(jold, ipm.y))[:nx]
        ipm.lbfgs.update(s, gnew - gold_)
    ipm.info.update(alpha_pr=alpha, alpha_du=alpha_z, ls=ls, tag=kind[:1])
