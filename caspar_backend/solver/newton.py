"""The Newton steps of one interior-point iteration: the KKT matrix assembled once per
iteration and factorized once (with inertia correction, :mod:`.inertia`), then solved for
each right-hand side the iteration needs -- the affine-scaling step of the adaptive
update's probing oracle first where it runs, then the search direction (IPOPT's
PDFullSpaceSolver reuses its factorization the same way).

At the iterate ``(w, y, zL, zU)`` with slacks ``sL, sU``, the matrix is ``[[W + Sigma,
A^T], [A, -delta_c]]`` with ``Sigma = sum zL/sL + zU/sU`` on the bounded entries, ``W``
the Hessian of the Lagrangian (or the L-BFGS approximation) and ``A`` the Jacobian; the
search direction's right-hand side is ``(-(grad phi + A^T y), -h)``, the affine step's
``(-(grad f + A^T y), -h)`` (the same at mu = 0).
"""

from __future__ import annotations

from ..arrays import copy_into, fused
from .iterate import Direction, Unsettled


class IterationKKT:
    """Final.  ``kkt``: the run's KKT system; ``inertia``: its
    :class:`~.inertia.InertiaCorrector`; ``calc``: the run's
    :class:`~.quantities.BarrierQuantities` (its iterate and NLP); ``lbfgs``: the
    quasi-Newton memory or None (exact Hessian)."""

    def __init__(self, kkt, inertia, calc, lbfgs):
        self.kkt, self.inertia, self.calc, self.lbfgs = kkt, inertia, calc, lbfgs
        self.assembled = False
        self._last = None       # (w, grad f, Jacobian values) at the last assembly (L-BFGS)

    def new_iteration(self) -> None:
        """The iterate moved (or an iteration begins): assemble again when asked."""
        self.assembled = False

    def direction(self, deferred=False):
        """The Newton step at the current iterate (a :class:`~.iterate.Direction`), or
        None when no regularization gives a usable factorization.  Whether the step is
        finite is not read here: :meth:`.LineSearch.reference` reads it (None: not).
        ``deferred``: the solve's refinement test is read there too (the direction's
        ``unsettled``; the device)."""
        calc = self.calc
        it, xp = calc.it, calc.xp
        if not self.assembled:
            self._assemble()
        sL, sU = calc.slacks(it.w)
        gphi = calc.grad_phi()
        rhs_w = fused.call(xp, "neg_sum", gphi, calc.Aty(it.jv, it.y))
        rhs_c = -it.h
        if not deferred:
            solved, first = self.inertia.direction(rhs_w, rhs_c), None
        else:
            solved, first = self.inertia.direction_deferred(rhs_w, rhs_c)
        if solved is None:
            return None
        d = self._step(solved, sL, sU, gphi, rhs_w)
        if first is not None:
            def finish(values):
                done, stands = self.inertia.finish_direction(rhs_w, rhs_c, *solved, first,
                                                             values)
                if stands:
                    return d
                return None if done is None else self._step(done, sL, sU, gphi, rhs_w)
            d.unsettled = Unsettled(first.columns, finish)
        return d

    def _step(self, solved, sL, sU, gphi, rhs_w) -> Direction:
        """The direction of the solve ``solved = (dw, dy)``: the bound multipliers' steps
        and the finiteness flag added."""
        calc = self.calc
        dw, dy = solved
        dzL, dzU = calc.bound_multiplier_steps(dw, sL, sU)
        return Direction(dw=dw, dy=dy, dzL=dzL, dzU=dzU, gphi=gphi, rhs_w=rhs_w,
                         finite=calc.finite_flag(dw, dy))

    def affine_step(self):
        """The affine-scaling step's ``dw`` (the probing oracle's), or None where no
        factorization is usable."""
        calc = self.calc
        it = calc.it
        if not self.assembled:
            self._assemble()
        solved = self.inertia.direction(-(it.gradf + calc.Aty(it.jv, it.y)), -it.h)
        return None if solved is None else solved[0]

    def centering_step(self, avg):
        """The pure centering step's ``dw`` at the average complementarity ``avg``
        (IPOPT's quality-function oracle: right-hand side ``(-(grad phi(avg) - grad f),
        0)``, the part of the Newton step that grows with mu), or None."""
        calc = self.calc
        it, xp = calc.it, calc.xp
        if not self.assembled:
            self._assemble()
        solved = self.inertia.direction(it.gradf - calc.grad_phi(avg), xp.zeros(calc.m))
        return None if solved is None else solved[0]

    def _assemble(self) -> None:
        """The iteration's KKT matrix at the current iterate."""
        k, calc = self.kkt, self.calc
        it, xp = calc.it, calc.xp
        self.assembled = True
        self.inertia.begin_iteration()
        sL, sU = calc.slacks(it.w)
        # sigma = zL / sL on iL plus zU / sU on iU (one launch: ``bound_sigma``)
        fused.call(xp, "bound_sigma", calc.iL, it.zL, sL, calc.iU, it.zU, sU, calc.posL,
                   calc.posU, k.sigma)
        copy_into(xp, k.jac_values, it.jv)
        if self.lbfgs is None:
            calc.nlp.hess(it.w, it.y, 1.0, k.hess_values)
            # read with the line search's reference values (settled first there)
            calc.check_later(calc.finite_flag(k.hess_values), "Hessian")
        else:
            self._update_lbfgs()
            self.lbfgs.fill_kkt(k, calc.nw)

    def _update_lbfgs(self) -> None:
        """IPOPT's LimMemQuasiNewtonUpdater::UpdateHessian at the iteration's start: the
        pair ``s = x - x_last``, ``y = grad L(x, y) - grad L(x_last, y)`` (both with the
        current multipliers -- after recalc_y, across a restoration phase or a watchdog
        restore alike), ``x_last`` the iterate of the run's previous assembly."""
        calc, lb = self.calc, self.lbfgs
        it, nx = calc.it, calc.nlp.nx
        if self._last is None:      # buffers, allocated once
            self._last = (it.w.copy(), it.gradf.copy(), it.jv.copy())
            return
        w0, g0, j0 = self._last
        g_new = (it.gradf + calc.Aty(it.jv, it.y))[:nx]    # (Aty's buffer is reused)
        g_old = (g0 + calc.Aty(j0, it.y))[:nx]
        lb.update(it.w[:nx] - w0[:nx], g_new - g_old)
        for buf, v in zip(self._last, (it.w, it.gradf, it.jv)):
            copy_into(calc.xp, buf, v)
