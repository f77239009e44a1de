"""Quantities of B barrier problems at B points: :mod:`caspar_backend.solver.quantities`
row by row.

With the shared finite-bound index sets ``iL``, ``iU`` (host int64, no duplicates) and
per-instance arrays (``xp``, row b = instance b):

    sL = W[:, iL] - wL[:, iL]  (B, nL),   sU = wU[:, iU] - W[:, iU]  (B, nU)
    phi_b = f_b - mu_b (sum ln sL_b + sum ln sU_b) + kappa_d mu_b (damped slack sums)
    theta_b = ||h_b||_1,   grad L_b = grad f_b + A_b^T y_b - zL_b + zU_b

Every reduction is along axis 1 and returns a (B,) array; nothing is read back here
(the lockstep loop reads what it branches on).  An instance whose slack would need
IPOPT's safe slacks is reported (``safe_slack_needed``) and leaves the batch: the
lockstep path implements the common iteration only.
"""

from __future__ import annotations

import numpy as np

from .scatter import ScatterSum

_EPS = np.finfo(float).eps


class BatchQuantities:
    """Final.  ``nlp``: the :class:`~.nlp.BatchSlackNLP`."""

    def __init__(self, nlp, opts):
        self.nlp, self.opts = nlp, opts
        xp = self.xp = nlp.xp
        self.B, self.nw, self.m = nlp.B, nlp.nw, nlp.m
        wL0, wU0 = (np.asarray(a.get() if hasattr(a, "get") else a)[0]
                    for a in (nlp.wL, nlp.wU))
        iL, iU = np.flatnonzero(np.isfinite(wL0)), np.flatnonzero(np.isfinite(wU0))
        self.iL_h, self.iU_h = iL, iU
        self.iL, self.iU = xp.asarray(iL), xp.asarray(iU)
        self.nL, self.nU = len(iL), len(iU)
        self.dampL = xp.asarray((~np.isfinite(wU0[iL])).astype(float))
        self.dampU = xp.asarray((~np.isfinite(wL0[iU])).astype(float))
        self.idampL = xp.asarray(np.flatnonzero(~np.isfinite(wU0[iL])))
        self.idampU = xp.asarray(np.flatnonzero(~np.isfinite(wL0[iU])))
        self.wLL, self.wUU = nlp.wL[:, self.iL], nlp.wU[:, self.iU]
        self.aty_sum = ScatterSum(xp, nlp.jac_cols, self.nw)
        self.jr = xp.asarray(nlp.jac_rows)
        self._aty = xp.zeros((self.B, self.nw))

    # ================================================================ vectors
    def slacks(self, W):
        return W[:, self.iL] - self.wLL, self.wUU - W[:, self.iU]

    def Aty(self, JV, Y, out=None):
        out = self._aty if out is None else out
        if JV.shape[1] == 0:
            out.fill(0.0)
            return out
        return self.aty_sum(JV * Y[:, self.jr], out)

    def lagrangian_gradient(self, G, JV, Y, ZL, ZU):
        rd = G + self.Aty(JV, Y)
        rd[:, self.iL] -= ZL
        rd[:, self.iU] += ZU
        return rd

    def grad_phi(self, G, sL, sU, mu):
        """The barrier gradient (B, nw), a new array (single: add_barrier)."""
        g = G.copy()
        kd = (self.opts.kappa_d * mu)[:, None]
        m1 = mu[:, None]
        g[:, self.iL] += -m1 / sL + kd * self.dampL
        g[:, self.iU] += m1 / sU + (-kd) * self.dampU
        return g

    def bound_multiplier_steps(self, dW, ZL, ZU, sL, sU, mu):
        m1 = mu[:, None]
        dzL = (m1 - ZL * sL - ZL * dW[:, self.iL]) / sL
        dzU = (m1 - ZU * sU + ZU * dW[:, self.iU]) / sU
        return dzL, dzU

    # ================================================================ merit
    def barrier_sums(self, W):
        """(smin, sum ln sL, sum ln sU, damped sL sum, damped sU sum), each (B,)."""
        xp = self.xp
        sL, sU = self.slacks(W)
        B = self.B
        mins = [xp.min(v, axis=1) for v in (sL, sU) if v.shape[1]]
        smin = (xp.full(B, np.inf) if not mins else
                mins[0] if len(mins) == 1 else xp.minimum(mins[0], mins[1]))
        lL = xp.sum(xp.log(sL), axis=1)
        lU = xp.sum(xp.log(sU), axis=1)
        dL = xp.sum(sL[:, self.idampL], axis=1)
        dU = xp.sum(sU[:, self.idampU], axis=1)
        return smin, lL, lU, dL, dU

    def phi(self, F, sums, mu):
        """(phi (B,), safe (B,) bool): the barrier function, +inf where a slack is not
        positive; ``safe`` marks the instances whose smallest slack is below IPOPT's
        safe-slack threshold (they switch to safe slacks in the single path)."""
        xp = self.xp
        smin, lL, lU, dL, dU = sums
        safe = (smin < _EPS * xp.minimum(1.0, mu)) & (self.opts.slack_move > 0)
        kd = self.opts.kappa_d * mu
        with np.errstate(all="ignore"):
            phi = (F - mu * (lL + lU)) + kd * (dL + dU)
        return xp.where(smin > 0, phi, np.inf), safe

    # ================================================================ errors
    def errors(self, it, mu):
        """IPOPT's scaled errors per instance and the unscaled ones (dict of (B,)
        arrays), :meth:`BarrierQuantities.errors <caspar_backend.solver.quantities.
        BarrierQuantities.errors>` row by row."""
        xp, nlp = self.xp, self.nlp
        rd = self.lagrangian_gradient(it.G, it.JV, it.Y, it.ZL, it.ZU)
        sL, sU = self.slacks(it.W)
        m1 = mu[:, None]
        B = self.B

        def amax(v):
            return xp.max(v, axis=1) if v.shape[1] else xp.zeros(B)

        dual = amax(xp.abs(rd))
        constr = amax(xp.abs(it.H))
        nconstr = nlp.nlp_constr_viol(it.W, it.H)
        compl = xp.maximum(amax(sL * it.ZL), amax(sU * it.ZU))
        compl_mu = xp.maximum(amax(xp.abs(sL * it.ZL - m1)), amax(xp.abs(sU * it.ZU - m1)))
        zsum = xp.sum(it.ZL, axis=1) + xp.sum(it.ZU, axis=1)
        ysum = xp.sum(xp.abs(it.Y), axis=1)
        wmax = amax(xp.abs(it.W))
        uconstr = nlp.unscaled_constr_viol(it.W, it.H)
        smax = 100.0
        nz = self.nL + self.nU
        sd = xp.maximum(smax, (ysum + zsum) / max(1, self.m + nz)) / smax
        sc = xp.maximum(smax, zsum / max(1, nz)) / smax
        df = nlp.df_d
        return dict(dual=dual, constr=constr, nlp_constr=nconstr, compl=compl,
                    compl_mu=compl_mu, wmax=wmax,
                    E0=xp.maximum(xp.maximum(dual / sd, nconstr), compl / sc),
                    Emu=xp.maximum(xp.maximum(dual / sd, constr), compl_mu / sc),
                    udual=dual / df, uconstr=uconstr, ucompl=compl / df)

    # ================================================================ step bounds
    def fraction_to_boundary(self, s, ds, tau):
        """min(1, min over ds < 0 of -tau s / ds) per instance, (B,)."""
        xp = self.xp
        if s.shape[1] == 0:
            return xp.ones(self.B)
        neg = ds < 0
        with np.errstate(all="ignore"):
            r = xp.where(neg, -tau[:, None] * s / xp.where(neg, ds, -1.0), np.inf)
        return xp.minimum(1.0, xp.min(r, axis=1))

    def step_bounds(self, W, dW, ZL, ZU, dzL, dzU, tau):
        """(alpha_primal_max, alpha_dual_max), each (B,)."""
        xp = self.xp
        sL, sU = self.slacks(W)
        ap = xp.minimum(self.fraction_to_boundary(sL, dW[:, self.iL], tau),
                        self.fraction_to_boundary(sU, -dW[:, self.iU], tau))
        ad = xp.minimum(self.fraction_to_boundary(ZL, dzL, tau),
                        self.fraction_to_boundary(ZU, dzU, tau))
        return ap, ad
