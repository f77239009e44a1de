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

Adaptive (Nocedal, Waechter & Waltz 2009; IPOPT's AdaptiveMuUpdate): the run starts at
mu = 1, tau = 0 in *free* mode, where every iteration takes

    mu = min(max(sigma avg, mu_min), mu_max),   tau = max(tau_min, 1 - E_0),

``avg`` the average complementarity, ``mu_max = 1000 avg`` at the first update unless
set, ``mu_min = min(1e-11, tol/2, compl_inf_tol df/2)`` unless set, and sigma from the
oracle (``mu_oracle``): 'quality-function' (IPOPT's default) and 'probing', from the
affine-scaling and centering steps solved with the iteration's factorization
(:mod:`.mu_oracles`, :mod:`.newton`); 'loqo', ``sigma = 0.1 min(0.05 (1-xi)/xi, 2)^3``
with xi = min/avg.  Free mode
lasts while the iterate makes progress (``adaptive_mu_globalization``): 'kkt-error', the
KKT error ``q = ||grad L||^2/nw + ||h||^2/m + ||S z||^2/n_z`` at most 0.9999 times one of
the last 4 accepted (fewer kept: progress); 'obj-constr-filter' (IPOPT's default),
``(f, theta)`` plus the margin ``filter_margin_fact min(filter_max_margin, E_0)``
acceptable to the filter of the accepted ``(f, theta)``; 'never-monotone-mode', always.
Otherwise (or after a tiny step) *fixed* mode: mu = 0.8 avg, then one monotone decrease
per iteration whenever the barrier problem is solved to kappa_eps mu, until an iterate
makes progress again.  The filter is reset whenever mu is set (every free
iteration); in free mode the bound multipliers' safeguard measures against the average
complementarity (at most 1e3) instead of mu.  Without bounds mu stays at mu_min.
"""

from __future__ import annotations

from .iterate import BarrierParameter
from .mu_oracles import probing_sigma, quality_function_sigma
from .status import SolverStop

#: IPOPT's adaptive update constants caspar implements (solver/ipopt_options.py):
#: adaptive_mu_kkterror_red_iters, adaptive_mu_kkterror_red_fact,
#: adaptive_mu_monotone_init_factor, mu_max_fact
KKT_ERROR_REFS, KKT_ERROR_RED_FACT = 4, 0.9999
ADAPTIVE_MONOTONE_INIT_FACTOR, MU_MAX_FACT = 0.8, 1000.0


class MuUpdate:
    """Final.  The barrier update of one interior-point run: ``resto`` marks the
    restoration phase (its own run of the same strategy); ``shared`` is the solve's
    :class:`~.ipm.Shared` (whose ``resto_mu_kept`` flag spans restoration phases)."""

    def __init__(self, opts, resto: bool, shared):
        self.opts, self.resto, self.shared = opts, resto, shared
        self.refs: list = []        # adaptive: accepted KKT errors, or (f, theta) filter
        self.mu_max = None          # adaptive: set at the first update (IPOPT's mu_max)

    def update(self, barrier: BarrierParameter, e, tiny_step: bool, calc,
               newton=None) -> bool:
        """Update ``barrier`` in place from the current iterate's errors ``e`` (at the
        current mu); ``tiny_step``: the last step was tiny (IPOPT's DetectTinyStep);
        ``calc``: the run's :class:`~.quantities.BarrierQuantities` (errors at another mu,
        complementarity); ``newton``: the run's :class:`~.newton.IterationKKT` (the
        oracles' affine and centering steps).  Returns True when the line-search filter
        is to be reset."""
        if self.opts.mu_strategy == "adaptive":
            mu0 = barrier.mu
            reset = self._adaptive(barrier, e, tiny_step, calc, newton)
            if self.resto and barrier.mu != mu0:
                self._follow_mu(calc, barrier.mu)
            return reset
        return self._monotone(barrier, e, tiny_step, calc)

    def mu_floor(self, df: float) -> float:
        """IPOPT's lower bound on a monotone decrease of mu (MonotoneMuUpdate, and the
        adaptive update's fixed mode): min(tol, compl_inf_tol df) / (barrier_tol_factor +
        1), df the objective scaling factor of the problem solved."""
        o = self.opts
        return min(o.tol, o.compl_inf_tol * float(df)) / (o.barrier_tol_factor + 1.0)

    def _decreased(self, mu, floor) -> float:
        """The monotone decrease: max(floor, min(kappa_mu mu, mu^theta_mu))."""
        o = self.opts
        return max(floor, min(o.mu_linear_decrease_factor * mu,
                              mu ** o.mu_superlinear_decrease_power))

    @staticmethod
    def _follow_mu(calc, mu) -> None:
        """The restoration objective's proximity term is weighted by sqrt(mu) (IPOPT's
        Eta(mu)): its value at the iterate changes with mu, its derivatives there do not
        (RestorationNLP.set_mu)."""
        calc.nlp.set_mu(mu)
        it = calc.it
        it.f, _ = calc.eval_zeroth(it.w, it.h)

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
        while True:
            if changed:
                e = calc.errors(barrier.mu)
            if not (e["Emu"] <= o.barrier_tol_factor * barrier.mu or tiny):
                break
            new = self._decreased(barrier.mu, floor)
            if new == barrier.mu:
                # (IPOPT's MonotoneMuUpdate: mu at its floor; after a flagged tiny step
                # the problem is solved to the best possible accuracy)
                if tiny:
                    raise SolverStop("Search_Direction_Becomes_Too_Small",
                                     "problem solved to the best possible accuracy")
                break
            barrier.mu = new
            barrier.tau = max(o.tau_min, 1.0 - barrier.mu)
            changed = True
            if self.resto:
                self._follow_mu(calc, barrier.mu)
            tiny = False        # the tiny step's decrease is one; then the barrier test's
        return changed

    def _adaptive(self, barrier, e, tiny, calc, newton=None) -> bool:
        """IPOPT's AdaptiveMuUpdate::UpdateBarrierParameter (module doc): the oracle's
        sigma from ``newton``'s affine and centering steps where it needs them."""
        o, df = self.opts, calc.nlp.df
        # IPOPT's adaptive mu_min when not set: min(mu_min, tol/2, compl_inf_tol df / 2),
        # mu_min 100 times larger in the restoration phase
        mu_min = o.mu_min if "mu_min" in o.user else min(
            o.mu_min * (100.0 if self.resto else 1.0),
            0.5 * min(o.tol, o.compl_inf_tol * float(df)))
        avg, mn = calc.complementarity_mean_min()
        if self.mu_max is None:
            self.mu_max = o.mu_max if "mu_max" in o.user else MU_MAX_FACT * avg
        if calc.nL + calc.nU == 0:
            # no bounds: the barrier plays no role, mu at its floor
            barrier.mu, barrier.tau = mu_min, o.tau_min
            return False
        reset = False
        never = o.adaptive_mu_globalization == "never-monotone-mode"
        if not barrier.free:
            if self._progress(calc, e) and not tiny:
                barrier.free = True
                self._remember(calc)
            elif e["Emu"] <= o.barrier_tol_factor * barrier.mu or tiny:
                mu = barrier.mu
                new = self._decreased(mu, self.mu_floor(df))
                if tiny and new == mu:
                    raise SolverStop("Search_Direction_Becomes_Too_Small",
                                     "problem solved to the best possible accuracy")
                barrier.mu, barrier.tau = new, max(o.tau_min, 1.0 - mu)
                reset = True
        elif self._progress(calc, e) and (never or not tiny):
            self._remember(calc)
        else:
            barrier.free = False
            new = min(max(ADAPTIVE_MONOTONE_INIT_FACTOR * avg, mu_min), self.mu_max)
            if tiny and new == barrier.mu:
                raise SolverStop("Search_Direction_Becomes_Too_Small",
                                 "problem solved to the best possible accuracy")
            barrier.mu, barrier.tau = new, max(o.tau_min, 1.0 - new)
            reset = True
        if barrier.free:
            # the oracle's mu, the step-to-boundary factor from the overall error
            barrier.tau = max(o.tau_min, 1.0 - e["E0"])
            if o.mu_oracle == "loqo":
                xi = mn / avg
                sigma = 0.1 * min(0.05 * (1.0 - xi) / max(xi, 1e-300), 2.0) ** 3
            else:
                dw_aff = newton.affine_step()
                dw_cen = (newton.centering_step(avg) if dw_aff is not None
                          and o.mu_oracle == "quality-function" else None)
                if dw_aff is None or (dw_cen is None and o.mu_oracle != "probing"):
                    return reset            # no step: IPOPT's emergency mode
                sigma = (probing_sigma(calc, avg, dw_aff, o.sigma_max)
                         if o.mu_oracle == "probing" else quality_function_sigma(
                             calc, avg, dw_aff, dw_cen, barrier.tau, mu_min, self.mu_max, o))
            barrier.mu = min(max(sigma * avg, mu_min), self.mu_max)
            reset = True
        return reset

    def _progress(self, calc, e) -> bool:
        """IPOPT's CheckSufficientProgress of the current iterate (errors ``e``) by
        adaptive_mu_globalization: kkt-error -- with the last ``KKT_ERROR_REFS``
        accepted KKT errors kept, the current one is at most ``KKT_ERROR_RED_FACT``
        times one of them (fewer kept: progress); obj-constr-filter -- (f + margin,
        theta + margin) acceptable to the filter of accepted (f, theta), margin =
        filter_margin_fact min(filter_max_margin, E0); never-monotone-mode: always."""
        o = self.opts
        g = o.adaptive_mu_globalization
        if g == "kkt-error":
            if len(self.refs) < KKT_ERROR_REFS:
                return True
            q = calc.kkt_error_quality()
            return any(q <= KKT_ERROR_RED_FACT * r for r in self.refs)
        if g == "obj-constr-filter":
            margin = o.filter_margin_fact * min(o.filter_max_margin, e["E0"])
            f, theta = calc.it.f + margin, calc.theta(calc.it.h) + margin
            # acceptable: better than every entry in one coordinate (IPOPT's Filter)
            return all(f <= fe or theta <= te for fe, te in self.refs)
        return True

    def _remember(self, calc) -> None:
        """IPOPT's RememberCurrentPointAsAccepted: the KKT error kept (kkt-error), or
        (f, theta) added to the filter, the entries it dominates removed."""
        g = self.opts.adaptive_mu_globalization
        if g == "kkt-error":
            self.refs.append(calc.kkt_error_quality())
            del self.refs[:-KKT_ERROR_REFS]
        elif g == "obj-constr-filter":
            f, theta = calc.it.f, calc.theta(calc.it.h)
            self.refs = [(fe, te) for fe, te in self.refs if not (f <= fe and theta <= te)]
            self.refs.append((f, theta))

