"""The adaptive barrier update's oracles for the centering parameter sigma (mu = sigma
avg, avg the average complementarity s z), IPOPT's ProbingMuOracle and
QualityFunctionMuOracle (the LOQO rule is a formula: :mod:`.mu`).

Both start from the affine-scaling step ``d_aff`` (the Newton step at mu = 0); the
quality function also from the centering step ``d_cen`` (its part that grows with mu:
the Newton step at mu is ``d_aff + sigma d_cen``), both solved with the iteration's
factorization (:mod:`.newton`).  On the slacks and bound multipliers (``ds_L = dw[iL]``,
``ds_U = -dw[iU]``; ``dz`` from ``S dz + Z dw = r``, r = -S z for the affine step and
avg for the centering step; the step lengths are the run's fraction to the boundary,
:meth:`~.quantities.BarrierQuantities.fraction_to_boundary`):

* probing (Mehrotra): ``sigma = min((mu_aff / avg)^3, sigma_max)``, mu_aff the average
  complementarity after the affine step cut to the boundary (tau = 1, primal and dual
  apart);
* quality function (2-norm-squared, no centrality or balancing term: IPOPT's
  defaults): ``q(sigma) = (1-a_d)^2 ||grad L||^2/n_w + (1-a_p)^2 ||h||^2/m +
  ||(s + a_p ds)(z + a_d dz)||^2/n_z`` along ``d_aff + sigma d_cen`` cut to the
  boundary at the iteration's tau, minimized by IPOPT's golden-section search: above 1
  when q(0.99) > q(1) (up to min(sigma_max, mu_max/avg)), else between
  max(sigma_min, mu_min/avg) and 0.99, at most quality_function_max_section_steps
  sections to quality_function_section_sigma_tol.
"""

from __future__ import annotations

import math

from ..arrays import scalars

#: IPOPT's golden-section fraction
_GFAC = (3.0 - math.sqrt(5.0)) / 2.0
#: IPOPT's marker of a bracket end whose quality is not known
_UNKNOWN = -100.0


class _Steps:
    """Final.  The affine and centering steps at ``calc``'s iterate (``dw`` and the bound
    multipliers' ``dz``), and what the quality function reads there."""

    def __init__(self, calc, dw_aff, dw_cen, avg):
        xp, it = calc.xp, calc.it
        self.xp, self.calc = xp, calc
        self.sL, self.sU = calc.slacks(it.w)
        self.dw_a = dw_aff
        self.dzL_a, self.dzU_a = calc.bound_multiplier_steps(dw_aff, self.sL, self.sU,
                                                             mu=0.0)
        if dw_cen is not None:
            self.dw_c = dw_cen
            dzL, dzU = calc.bound_multiplier_steps(dw_cen, self.sL, self.sU, mu=avg)
            self.dzL_c, self.dzU_c = dzL + it.zL, dzU + it.zU
            rd = calc.lagrangian_gradient(it.gradf, it.jv, it.y, it.zL, it.zU)
            self.d2, self.p2 = scalars(xp, xp.sum(rd * rd), xp.sum(it.h * it.h))
        self.n_dual, self.n_pri = calc.nw, calc.m
        self.n_comp = calc.nL + calc.nU

    def _compl(self, dw, dzL, dzU, tau):
        """The complementarity products after the step ``(dw, dzL, dzU)`` cut to the
        boundary at ``tau`` (primal and dual apart): ``(cL, cU, a_p, a_d)``."""
        calc, it = self.calc, self.calc.it
        ap = calc.fraction_to_boundary(dw, tau)
        ad = calc.fraction_to_boundary_z(dzL, dzU, tau)
        cL = (self.sL + ap * dw[calc.iL]) * (it.zL + ad * dzL)
        cU = (self.sU - ap * dw[calc.iU]) * (it.zU + ad * dzU)
        return cL, cU, ap, ad

    def affine_mu(self) -> float:
        """The average complementarity after the affine step cut at tau = 1."""
        xp = self.xp
        cL, cU, _, _ = self._compl(self.dw_a, self.dzL_a, self.dzU_a, 1.0)
        return scalars(xp, xp.mean(xp.concatenate([cL, cU])))[0]

    def quality(self, sigma, tau) -> float:
        """IPOPT's CalculateQualityFunction (module doc) at ``sigma``."""
        xp = self.xp
        cL, cU, ap, ad = self._compl(self.dw_a + sigma * self.dw_c,
                                     self.dzL_a + sigma * self.dzL_c,
                                     self.dzU_a + sigma * self.dzU_c, tau)
        c2 = scalars(xp, xp.sum(cL * cL) + xp.sum(cU * cU))[0]
        q = (1.0 - ad) ** 2 * self.d2 / self.n_dual + c2 / self.n_comp
        if self.n_pri:
            q += (1.0 - ap) ** 2 * self.p2 / self.n_pri
        return q


def probing_sigma(calc, avg, dw_aff, sigma_max) -> float:
    """Mehrotra's sigma (module doc) from the affine step ``dw_aff``."""
    return min((_Steps(calc, dw_aff, None, avg).affine_mu() / avg) ** 3, sigma_max)


def quality_function_sigma(calc, avg, dw_aff, dw_cen, tau, mu_min, mu_max, o) -> float:
    """The sigma minimizing the quality function (module doc; IPOPT's
    QualityFunctionMuOracle::CalculateMu and PerformGoldenSection)."""
    st = _Steps(calc, dw_aff, dw_cen, avg)

    def q(sigma):
        return st.quality(sigma, tau)

    sig_tol = o.quality_function_section_sigma_tol
    q1 = q(1.0)
    s1m = 1.0 - max(1e-4, sig_tol)
    q1m = q(s1m)
    if q1m > q1:
        up, lo = min(o.sigma_max, mu_max / avg), 1.0
        if lo >= up:
            return up
        return _golden(q, up, _UNKNOWN, lo, q1, sig_tol, o)
    lo = max(o.sigma_min, mu_min / avg)
    up = min(max(lo, s1m), mu_max / avg)
    if lo >= up:
        return lo
    return _golden(q, up, q1m, lo, _UNKNOWN, sig_tol, o)


def _golden(q, up_in, q_up, lo_in, q_lo, sig_tol, o) -> float:
    """IPOPT's golden-section search for the smallest quality between ``lo_in`` and
    ``up_in`` (end qualities ``q_lo``, ``q_up``, _UNKNOWN where not evaluated)."""
    qf_tol = o.quality_function_section_qf_tol
    up, lo = up_in, lo_in
    m1 = lo + _GFAC * (up - lo)
    m2 = lo + (1.0 - _GFAC) * (up - lo)
    q1, q2 = q(m1), q(m2)

    def spread():
        return 1.0 - min(q_lo, q_up, q1, q2) / max(q_lo, q_up, q1, q2)

    n = 0
    while (up - lo) >= sig_tol * up and spread() >= qf_tol \
            and n < o.quality_function_max_section_steps:
        n += 1
        if q1 > q2:
            lo, q_lo, m1, q1 = m1, q1, m2, q2
            m2 = lo + (1.0 - _GFAC) * (up - lo)
            q2 = q(m2)
        else:
            up, q_up, m2, q2 = m2, q2, m1, q1
            m1 = lo + _GFAC * (up - lo)
            q1 = q(m1)
    if (up - lo) >= sig_tol * up and spread() < qf_tol:
        qmin = min(q_lo, q_up, q1, q2)
        return lo if qmin == q_lo else m1 if qmin == q1 else m2 if qmin == q2 else up
    sigma, qs = (m1, q1) if q1 < q2 else (m2, q2)
    if up == up_in:
        qt = q(up) if q_up < 0.0 else q_up
        if qt < qs:
            sigma = up
    elif lo == lo_in:
        qt = q(lo) if q_lo < 0.0 else q_lo
        if qt < qs:
            sigma = lo
    return sigma
