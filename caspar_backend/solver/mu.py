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
from .iterate import BarrierParameter


class MuUpdate:
    """Final.  The barrier update of one interior-point run: ``resto`` marks the
    restoration phase (always monotone); ``shared`` is the solve's
    :class:`~.ipm.Shared` (whose ``resto_mu_kept`` flag spans restoration phases)."""

    def __init__(self, opts, resto: bool, shared):
        self.opts, self.resto, self.shared = opts, resto, shared
        self.free = True            # adaptive: free (oracle) or fixed (monotone) mode
        self.refs: list = []        # adaptive: the last accepted KKT errors
        self.fixed_start = None

    def update(self, barrier: BarrierParameter, e, tiny_step: bool, calc) -> bool:
        """Update ``barrier`` in place from the current iterate's errors ``e`` (at the
        current mu); ``tiny_step``: the last step was tiny (IPOPT's DetectTinyStep);
        ``calc``: the run's :class:`~.quantities.BarrierQuantities` (errors at another mu,
        complementarity).  Returns True when the line-search filter is to be reset."""
        if self.opts.mu_strategy == "adaptive" and not self.resto:
            return self._adaptive(barrier, e, tiny_step, calc)
        return self._monotone(barrier, e, tiny_step, calc)

    def mu_floor(self, df: float) -> float:
        """IPOPT's lower bound on mu (MonotoneMuUpdate::CalcNewMuAndTau, and the adaptive
        update's ``mu_min`` when the user did not set it): min(tol, compl_inf_tol df) /
        (barrier_tol_factor + 1), df the objective scaling factor of the problem solved."""
        o = self.opts
        return min(o.tol, o.compl_inf_tol * float(df)) / (o.barrier_tol_factor + 1.0)

    def _mu_min(self, df) -> float:
        return self.opts.mu_min if "mu_min" in self.opts.user else self.mu_floor(df)

    def _monotone(self, barrier, e, tiny, calc) -> bool:
        """IPOPT's monotone (Fiacco-McCormick) update: while the barrier problem is solved
        to kappa_eps mu, decrease mu.  ``e``: the errors of the current iterate at the
        current mu (the convergence test's); they are recomputed only for a decreased
        mu."""
        o = self.opts
        if self.resto and not self.shared.resto_mu_kept:
            # IPOPT keeps mu at the first restoration iteration of a solve: the
            # restoration problem's first step is taken at the mu it starts with
            # (MonotoneMuUpdate's first_iter_resto_)
            self.shared.resto_mu_kept = True
            return False
        changed = False
        floor = self.mu_floor(calc.nlp.df)
        while barrier.mu > floor:
            if changed:
                e = calc.errors(barrier.mu)
            if not (e["Emu"] <= o.barrier_tol_factor * barrier.mu or tiny):
                break
            barrier.mu = max(floor, min(o.mu_linear_decrease_factor * barrier.mu,
                                        barrier.mu ** o.mu_superlinear_decrease_power))
            barrier.tau = max(o.tau_min, 1.0 - barrier.mu)
            changed = True
            if self.resto:
                # the restoration objective's proximity term is weighted by sqrt(mu)
                # (IPOPT's Eta(mu)): its value at the iterate changes with mu, its
                # derivatives there do not (RestorationNLP.set_mu)
                calc.nlp.set_mu(barrier.mu)
                it = calc.it
                it.f, _ = calc.eval_zeroth(it.w, it.h)
            if tiny:
                break
        return changed

    def _adaptive(self, barrier, e, tiny, calc) -> bool:
        o = self.opts
        df = calc.nlp.df
        kkt = e["dual"] ** 2 + e["constr"] ** 2 + e["compl"] ** 2
        avg, mn = _avg_compl(calc)
        if avg == 0.0:
            # no bounds at all: the barrier plays no role, take mu to its floor
            new = max(self._mu_min(df), self.mu_floor(df))
            if new != barrier.mu:
                barrier.mu = new
                return True
            return False
        if self.free:
            refs = self.refs
            if not refs or kkt <= 0.9999 * max(refs):
                refs.append(kkt)
                del refs[:-4]
            else:
                self.free = False
                barrier.mu = min(o.mu_max, max(self._mu_min(df), 0.8 * avg))
                barrier.tau = max(o.tau_min, 1.0 - barrier.mu)
                self.fixed_start = kkt
                return True
            xi = mn / avg
            sigma = 0.1 * min(0.05 * (1.0 - xi) / max(xi, 1e-300), 2.0) ** 3
            new = min(o.mu_max, max(self._mu_min(df), sigma * avg))
            if new != barrier.mu:
                barrier.mu = new
                barrier.tau = max(o.tau_min, 1.0 - barrier.mu)
                return True
            return False
        if kkt <= 0.9999 * max(self.refs or [self.fixed_start]):
            self.free = True
            self.refs = [kkt]
            return False
        return self._monotone(barrier, e, tiny, calc)


def _avg_compl(calc):
    """(mean, min) of the complementarity products s z at the current iterate."""
    xp, it = calc.xp, calc.it
    sL, sU = calc.slacks(it.w)
    c = xp.concatenate([sL * it.zL, sU * it.zU])
    if c.size == 0:
        return 0.0, 0.0
    mean, mn = scalars(xp, xp.mean(c), xp.min(c))
    return mean, mn
