"""Barrier parameter updates.

Monotone (Fiacco-McCormick, W&B eq. 7): while the barrier problem is solved to
``E_mu <= kappa_eps mu`` (or the last step was tiny),

    mu <- max(mu_floor, min(kappa_mu mu, mu^theta_mu)),   tau <- max(tau_min, 1 - mu)

with IPOPT's ``mu_floor = min(tol, compl_inf_tol df) / (kappa_eps + 1)``: ``compl_inf_tol``
(a bound on the *unscaled* complementarity) posed to the scaled problem through the
objective scaling factor ``df``, so that a problem whose objective is scaled down can
still reach the unscaled tolerance (hs099, f ~ -8e8: floor 4e-12 instead of 9e-10).

and the filter is reset; several decreases in one iteration are allowed (IPOPT's
``mu_allow_fast_monotone_decrease``).

Adaptive (Nocedal, Waechter & Waltz 2009, IPOPT's ``mu_strategy adaptive`` with the LOQO
oracle and the ``kkt-error`` globalization): in *free* mode
``mu = sigma * avg(complementarity)`` with ``sigma = 0.1 min(0.05 (1-xi)/xi, 2)^3`` and
``xi = min(complementarity)/avg``, as long as the KKT error
``dual^2 + constr^2 + compl^2`` decreases to 0.9999 of the largest of the last 4 accepted
values; otherwise *fixed* mode: monotone updates starting from ``0.8 avg`` until the KKT
error makes sufficient progress again.  The filter is reset whenever mu changes.
"""

from __future__ import annotations

from ..arrays import scalars


def update_mu(ipm, e) -> None:
    if ipm.opts.mu_strategy == "adaptive" and not ipm.resto:
        _adaptive(ipm, e)
    else:
        _monotone(ipm, e)


def mu_floor(ipm) -> float:
    """IPOPT's lower bound on mu (MonotoneMuUpdate::CalcNewMuAndTau, and the adaptive
    update's ``mu_min`` when the user did not set it): min(tol, compl_inf_tol df) /
    (barrier_tol_factor + 1), df the objective scaling factor of the problem solved."""
    o = ipm.opts
    df = float(getattr(ipm.nlp, "df", 1.0))
    return min(o.tol, o.compl_inf_tol * df) / (o.barrier_tol_factor + 1.0)


def _mu_min(ipm) -> float:
    return ipm.opts.mu_min if "mu_min" in ipm.opts.user else mu_floor(ipm)


def _monotone_step(ipm):
    o = ipm.opts
    return max(mu_floor(ipm), min(o.mu_linear_decrease_factor * ipm.mu,
                                  ipm.mu ** o.mu_superlinear_decrease_power))


def _monotone(ipm, e):
    """IPOPT's monotone (Fiacco-McCormick) update: while the barrier problem is solved to
    kappa_eps mu, decrease mu.  ``e``: the errors of the current iterate at the current
    mu (the convergence test's); they are recomputed only for a decreased mu."""
    o = ipm.opts
    if ipm.resto and not ipm.sh.resto_mu_kept:
        # IPOPT keeps mu at the first restoration iteration of a solve: the restoration
        # problem's first step is taken at the mu it starts with (Pyomo's car_example:
        # decreasing it there sent the restoration to tf = 0, a stationary point of the
        # infeasibility, and "local infeasibility" where IPOPT solves)
        ipm.sh.resto_mu_kept = True
        return
    tiny = getattr(ipm, "tiny_step", False)
    changed = False
    floor = mu_floor(ipm)
    while ipm.mu > floor:
        if changed:
            e = ipm.errors(ipm.mu)
        if not (e["Emu"] <= o.barrier_tol_factor * ipm.mu or tiny):
            break
        ipm.mu = _monotone_step(ipm)
        ipm.tau = max(o.tau_min, 1.0 - ipm.mu)
        changed = True
        if ipm.resto:
            # the restoration objective's proximity term is weighted by sqrt(mu)
            # (IPOPT's Eta(mu)): its value and gradient at the iterate change with mu
            ipm.nlp.set_mu(ipm.mu)
            ipm.f, _ = ipm.eval_zeroth(ipm.w, ipm.hv)
            ipm.eval_first_order(ipm.w)
        if tiny:
            break
    if changed:
        ipm.filter.reset()


def _avg_compl(ipm):
    xp = ipm.xp
    sL, sU = ipm.slacks(ipm.w)
    c = xp.concatenate([sL * ipm.zL, sU * ipm.zU])
    if c.size == 0:
        return 0.0, 0.0
    mean, mn = scalars(xp, xp.mean(c), xp.min(c))
    return mean, mn


def _adaptive(ipm, e):
    o = ipm.opts
    st = ipm.mu_state
    if st is None:
        st = ipm.mu_state = dict(free=True, refs=[])
    kkt = e["dual"] ** 2 + e["constr"] ** 2 + e["compl"] ** 2
    avg, mn = _avg_compl(ipm)
    if avg == 0.0:
        # no bounds at all: the barrier plays no role, take mu to its floor
        new = max(_mu_min(ipm), mu_floor(ipm))
        if new != ipm.mu:
            ipm.mu = new
            ipm.filter.reset()
        return
    if st["free"]:
        refs = st["refs"]
        if not refs or kkt <= 0.9999 * max(refs):
            refs.append(kkt)
            del refs[:-4]
        else:
            st["free"] = False
            new = 0.8 * avg
            ipm.mu = min(o.mu_max, max(_mu_min(ipm), new))
            ipm.tau = max(o.tau_min, 1.0 - ipm.mu)
            ipm.filter.reset()
            st["fixed_start"] = kkt
            return
        xi = mn / avg
        sigma = 0.1 * min(0.05 * (1.0 - xi) / max(xi, 1e-300), 2.0) ** 3
        new = min(o.mu_max, max(_mu_min(ipm), sigma * avg))
        if new != ipm.mu:
            ipm.mu = new
            ipm.tau = max(o.tau_min, 1.0 - ipm.mu)
            ipm.filter.reset()
    else:
        if kkt <= 0.9999 * max(st["refs"] or [st["fixed_start"]]):
            st["free"] = True
            st["refs"] = [kkt]
            return
        _monotone(ipm, e)
