"""The filter line search of B instances in lockstep (:mod:`caspar_backend.solver.
linesearch` row by row).

Each instance backtracks from its own fraction-to-the-boundary step ``alpha_max_b``
with its own reference values ``(theta_b, phi_b, gphi_b^T dw_b)``, filter, ``theta_min``
and ``theta_max``; one *round* evaluates the trial points of every instance still
searching in one batched evaluation.  Second-order corrections run for the instances
whose first trial was rejected with ``theta_t >= theta`` (up to ``max_soc`` rounds,
each a batched refined solve with the iteration's factorization and a batched trial
evaluation).  The tiny-step rule is kept.  What the lockstep path does not implement
makes the instance leave the batch (:class:`~.state.Fates`): the start of the
watchdog, the soft restoration and restoration phases after a failed search, a trial
point that needs safe slacks, and a search whose every trial point was invalid.
"""

from __future__ import annotations

import math

import numpy as np

from ..arrays import host
from ..solver.linesearch import (ALPHA_MIN_FRAC, DELTA, ETA_PHI, G_PHI, G_THETA, S_PHI,
                                 S_THETA, TINY_STEP_MAX_THETA)

_EPS = np.finfo(float).eps
_TINY = float(np.finfo(float).smallest_subnormal)
#: step kinds as stored per instance (index), IPOPT's log tags
KINDS = ("", "f", "h", "F", "H", "T")


def max_trials(xp, alpha, r: float):
    """:func:`caspar_backend.solver.filter._max_trials` per instance, (B,) int."""
    if not 0.0 < r < 1.0:
        return xp.ones(alpha.shape, np.int64)
    with np.errstate(all="ignore"):
        k = xp.ceil(xp.log(_TINY / alpha) / math.log(r)) + 1
    return xp.where(alpha > _TINY, k, 1).astype(np.int64)


def _le(xp, a, b, ref):
    return a - b <= 10.0 * _EPS * xp.abs(ref)


class BatchLineSearch:
    """Final.  ``ipm``: the :class:`~.ipm.LockstepIPM` whose iterate, quantities, KKT
    system, filters and fates the search works on."""

    def __init__(self, ipm):
        self.ipm = ipm
        xp = self.xp = ipm.xp
        B = ipm.B
        self.theta_min = xp.zeros(B)
        self.theta_max = xp.zeros(B)
        self.shortened = xp.zeros(B, np.int64)
        self.last_mu = xp.full(B, np.nan)
        self.tiny_step = xp.zeros(B, bool)
        self.tiny_last = xp.zeros(B, bool)
        self.w_t = xp.zeros((B, ipm.nw))
        self.f_t, self.h_t = xp.zeros(B), xp.zeros((B, ipm.m))

    def keep(self, rows, move=lambda a: a, xp=None) -> None:
        """Keep the state of the instances ``rows`` (an index array), in that order,
        passed through ``move`` (to another array module ``xp``)."""
        for name in ("theta_min", "theta_max", "shortened", "last_mu", "tiny_step",
                     "tiny_last"):
            setattr(self, name, move(getattr(self, name)[rows]))
        self.xp = xp = self.xp if xp is None else xp
        B = len(rows)
        self.w_t = xp.zeros((B, self.ipm.nw))
        self.f_t, self.h_t = xp.zeros(B), xp.zeros((B, self.ipm.m))

    def start(self, theta0):
        """theta_min, theta_max unset (-1): each instance's first trial point's test
        sets them (:meth:`_acceptable`), as the general path's search."""
        self.theta_max[...] = -1.0
        self.theta_min[...] = -1.0

    # ================================================================ trial points
    def _trial(self, W):
        """(f, ok, theta, phi, safe) at the rows of W (all instances evaluated)."""
        ipm, xp = self.ipm, self.xp
        ipm.nlp.zeroth(W, self.f_t, self.h_t)
        ok = xp.isfinite(self.f_t) & xp.all(xp.isfinite(self.h_t), axis=1)
        theta = xp.sum(xp.abs(self.h_t), axis=1)
        phi, safe = ipm.calc.phi(self.f_t, ipm.calc.barrier_sums(W), ipm.mu)
        return self.f_t.copy(), ok, theta, phi, safe

    def _acceptable(self, mask, ref, alpha, theta_t, phi_t):
        """:meth:`LineSearch._acceptable <caspar_backend.solver.linesearch.LineSearch.
        _acceptable>` for the instances of ``mask``: the kind code (0 rejected, 1 'f',
        2 'h') per instance, with the filters' bookkeeping."""
        xp, o, flt = self.xp, self.ipm.opts, self.ipm.filter
        theta, phi, gBD = ref
        first = mask & (self.theta_max < 0.0)
        self.theta_max[...] = xp.where(first, o.theta_max_fact * xp.maximum(1.0, theta),
                                       self.theta_max)
        self.theta_min[...] = xp.where(first, o.theta_min_fact * xp.maximum(1.0, theta),
                                       self.theta_min)
        with np.errstate(all="ignore"):
            live = mask & xp.isfinite(phi_t) & ~(theta_t > self.theta_max)
            switching = (gBD < 0) & (alpha * (-gBD) ** S_PHI > DELTA * theta ** S_THETA)
            armijo = _le(xp, phi_t - phi, ETA_PHI * alpha * gBD, phi)
            inc = phi_t - phi
            big = (phi_t > phi) & (xp.log10(xp.where(inc > 0, inc, 1.0)) > o.obj_max_inc + xp.where(
                xp.abs(phi) > 10.0, xp.log10(xp.abs(phi)), 1.0))
            suff = ~big & (_le(xp, theta_t, (1 - G_THETA) * theta, theta)
                           | _le(xp, phi_t, phi - G_PHI * theta, phi))
        ok = xp.where((theta <= self.theta_min) & switching, armijo, suff)
        failed = live & ~ok
        flt.rejected_by_filter &= ~failed
        test = live & ok
        fin = flt.acceptable(theta_t, phi_t)
        blocked = test & ~fin
        flt.rejected_by_filter |= blocked
        acc = test & fin
        if bool(acc.any()):
            flt.note_acceptance(acc, o.max_filter_resets, o.filter_reset_trigger)
        return xp.where(acc, xp.where(switching & armijo, 1, 2), 0)

    # ================================================================ the search
    def search(self, d, run):
        """Take a step along the direction ``d`` (dict of (B, .) arrays: dW, dY, dzL,
        dzU, gphi, rhs_w) for the instances of ``run`` (host bool (B,)); instances the
        lockstep path cannot finish leave the batch.  Returns host bool (B,) of the
        instances that moved."""
        ipm, xp, o = self.ipm, self.xp, self.ipm.opts
        it, calc, mu, tau = ipm.it, ipm.calc, ipm.mu, ipm.tau
        runx = xp.asarray(run)
        new_mu = self.last_mu != mu
        self.shortened[...] = xp.where(new_mu, 0, self.shortened)
        self.last_mu[...] = mu
        dW = d["dW"]
        ap, ad = calc.step_bounds(it.W, dW, it.ZL, it.ZU, d["dzL"], d["dzU"], tau)
        gBD = xp.sum(d["gphi"] * dW, axis=1)
        d_norm = xp.max(xp.abs(dW), axis=1) if ipm.nw else xp.zeros(ipm.B)
        rel = xp.max(xp.abs(dW / (1.0 + xp.abs(it.W))), axis=1) if ipm.nw else d_norm
        theta = xp.sum(xp.abs(it.H), axis=1)
        phi, safe = calc.phi(it.F, calc.barrier_sums(it.W), mu)
        ref = (theta, phi, gBD)
        ipm.leave(runx & safe, "safe slacks")
        tiny = (o.tiny_step_tol > 0) & (rel <= o.tiny_step_tol) & (theta <= TINY_STEP_MAX_THETA)
        trig = o.watchdog_shortened_iter_trigger
        if trig > 0:
            ipm.leave(runx & ~tiny & (self.shortened >= trig), "watchdog")
        runx = xp.asarray(ipm.running_host()) & runx
        moved = xp.zeros(ipm.B, bool)
        # tiny steps: the full step, no line search (near feasibility only)
        tiny &= runx
        self.tiny_step[...] = False
        # IPOPT's tiny-step rule (LineSearch.search): a tiny step flags the barrier
        # update when the one before was tiny with |dy|_inf < tiny_step_y_tol
        flag = self.tiny_last & tiny
        self.tiny_last[...] = self.tiny_last & ~runx
        if bool(tiny.any()):
            # (the multiplier steps' norms only where a step is tiny: not every iteration)
            dy_small = (xp.max(xp.abs(d["dY"]), axis=1) < o.tiny_step_y_tol if ipm.m
                        else xp.ones(ipm.B, bool))
            self.tiny_last |= tiny & dy_small
            wt = xp.where(tiny[:, None], it.W + ap[:, None] * dW, it.W)
            f_t, ok, _, _, _ = self._trial(wt)
            take = tiny & ok
            self._accept(take, ap, ad, wt, f_t, d["dY"], d["dzL"], d["dzU"])
            self.shortened[...] = xp.where(take, 0, self.shortened)
            self.tiny_step |= take & flag
            moved |= take
        bt = runx & ~moved
        # the smallest step size
        with np.errstate(all="ignore"):
            amin_neg = xp.where(theta <= self.theta_min,
                                xp.minimum(xp.minimum(G_THETA, G_PHI * theta / -gBD),
                                           DELTA * theta ** S_THETA / (-gBD) ** S_PHI),
                                xp.minimum(G_THETA, G_PHI * theta / -gBD))
        amin = xp.where(gBD < 0, amin_neg, G_THETA) * ALPHA_MIN_FRAC
        alpha = ap.copy()
        n = xp.zeros(ipm.B, np.int64)
        last = max_trials(xp, alpha, o.alpha_red_factor)
        all_invalid = bt.copy()
        searching = bt.copy()
        while True:
            searching &= (((amin <= alpha) & (alpha > 0.0) & (n < last)) | (n == 0))
            if not bool(searching.any()):
                break
            n += searching
            wt = xp.where(searching[:, None], it.W + alpha[:, None] * dW, it.W)
            f_t, ok, theta_t, phi_t, safe_t = self._trial(wt)
            h_t = self.h_t.copy()
            okx = searching & ok
            gone = okx & safe_t
            if bool(gone.any()):
                ipm.leave(gone, "safe slacks")
                searching &= ~gone
                okx &= ~gone
            all_invalid &= ~okx
            kind = self._acceptable(okx, ref, alpha, theta_t, phi_t)
            acc = kind > 0
            if bool(acc.any()):
                self._filter_add(acc & (kind == 2), theta, phi)
                self._accept(acc, alpha, ad, wt, f_t, d["dY"], d["dzL"], d["dzU"], h_t)
                self._shorten(acc, n)
                moved |= acc
                searching &= ~acc
            soc = searching & okx & (n == 1) & (theta_t >= theta)
            if o.max_soc > 0 and bool(soc.any()):
                done = self._second_order_correction(soc, d, ref, alpha, theta_t, h_t)
                self._shorten(done, n)
                moved |= done
                searching &= ~done
            alpha = xp.where(searching, alpha * o.alpha_red_factor, alpha)
        failed = bt & ~moved & xp.asarray(ipm.running_host())
        ipm.leave(failed & all_invalid, "invalid number at every trial point")
        ipm.leave(failed, "line search failed (soft restoration / restoration phase)")
        return host(moved)

    def _shorten(self, mask, n):
        xp = self.xp
        self.shortened[...] = xp.where(mask, xp.where(n == 1, 0, self.shortened + 1),
                                       self.shortened)

    def _filter_add(self, mask, theta, phi):
        if bool(mask.any()):
            self.ipm.filter.add(mask, (1 - G_THETA) * theta, phi - G_PHI * theta)

    def _second_order_correction(self, soc, d, ref, alpha, theta_t, h_t):
        """IPOPT's second-order corrections for the instances of ``soc`` (host logic of
        LineSearch._second_order_correction per instance); returns the (B,) bool of the
        instances whose corrected step was accepted."""
        ipm, xp, o = self.ipm, self.xp, self.ipm.opts
        it, calc, tau = ipm.it, ipm.calc, ipm.tau
        theta, phi, _ = ref
        c_soc = alpha[:, None] * it.H + h_t
        theta_old = theta_t
        active = soc.copy()
        done = xp.zeros(ipm.B, bool)
        sL, sU = calc.slacks(it.W)
        for _ in range(o.max_soc):
            dw_soc, dy_soc, _, _ = ipm.kkt.solve(d["rhs_w"], -c_soc, rows=active)
            active &= xp.all(xp.isfinite(dw_soc), axis=1)
            if not bool(active.any()):
                break
            a_soc = xp.minimum(calc.fraction_to_boundary(sL, dw_soc[:, calc.iL], tau),
                               calc.fraction_to_boundary(sU, -dw_soc[:, calc.iU], tau))
            wt = xp.where(active[:, None], it.W + a_soc[:, None] * dw_soc, it.W)
            f2, ok, theta2, phi2, safe2 = self._trial(wt)
            h2 = self.h_t.copy()
            active &= ok
            gone = active & safe2
            if bool(gone.any()):
                ipm.leave(gone, "safe slacks")
                active &= ~gone
            kind = self._acceptable(active, ref, alpha, theta2, phi2)
            acc = kind > 0
            if bool(acc.any()):
                dzL, dzU = calc.bound_multiplier_steps(dw_soc, it.ZL, it.ZU, sL, sU, ipm.mu)
                az = xp.minimum(calc.fraction_to_boundary(it.ZL, dzL, tau),
                                calc.fraction_to_boundary(it.ZU, dzU, tau))
                self._filter_add(acc & (kind == 2), theta, phi)
                self._accept(acc, a_soc, az, wt, f2, dy_soc, dzL, dzU, h2)
                done |= acc
                active &= ~acc
            active &= ~(theta2 > o.kappa_soc * theta_old)
            theta_old = theta2
            c_soc = a_soc[:, None] * c_soc + h2
            if not bool(active.any()):
                break
        return done

    def _accept(self, mask, alpha, alpha_z, wt, f_t, dY, dzL, dzU, h_t=None):
        """Move the instances of ``mask`` to their trial points (W, F, H; the derivatives
        are evaluated once after the search) and take the dual steps, z kept within
        kappa_sigma of mu / slack (LineSearch._accept)."""
        ipm, xp = self.ipm, self.xp
        it, calc = ipm.it, ipm.calc
        h_t = self.h_t if h_t is None else h_t
        m2 = mask[:, None]
        it.W[...] = xp.where(m2, wt, it.W)
        it.F[...] = xp.where(mask, f_t, it.F)
        it.H[...] = xp.where(m2, h_t, it.H)
        it.Y[...] = xp.where(m2, it.Y + alpha[:, None] * dY, it.Y)
        it.ZL[...] = xp.where(m2, it.ZL + alpha_z[:, None] * dzL, it.ZL)
        it.ZU[...] = xp.where(m2, it.ZU + alpha_z[:, None] * dzU, it.ZU)
        ks, mu = ipm.opts.kappa_sigma, ipm.mu[:, None]
        sL, sU = calc.slacks(it.W)
        with np.errstate(all="ignore"):
            if ks >= 1.0:   # (IPOPT: no correction below 1)
                it.ZL[...] = xp.where(m2, xp.clip(it.ZL, mu / (ks * sL), ks * mu / sL), it.ZL)
                it.ZU[...] = xp.where(m2, xp.clip(it.ZU, mu / (ks * sU), ks * mu / sU), it.ZU)
        ipm.needs_first_order |= mask
