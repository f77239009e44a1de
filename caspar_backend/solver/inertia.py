"""Inertia correction and the fall-backs of a failed refinement (IPOPT's
PDPerturbationHandler and PDFullSpaceSolver; MadNLP's inertia correctors).

The Newton step solves the primal-dual system through a KKT system
(:mod:`caspar_backend.kkt`) whose matrix, with the perturbations ``delta_w`` and
``delta_c``,

    K = [ W + Sigma + delta_w I      A^T     ]
        [ A                      -delta_c I  ]

must have the inertia ``(nw, m, 0)``.  :class:`InertiaCorrector` runs Waechter &
Biegler's Algorithm IC on it:

1. factorize with ``delta_w = 0`` and ``delta_c = 0`` -- or with them from the start
   where IPOPT's degeneracy test (:mod:`.perturbation`) found the Hessian or the Jacobian
   structurally degenerate;
2. a zero pivot: first a more stable factorization of the same K (a larger static term
   for this iteration, the KKT system's ``increase_quality``); a singular K (a zero
   pivot; with exact inertia also too few negative eigenvalues) then gets the
   degeneracy test's perturbation: ``delta_c = jacobian_regularization_value
   mu^jacobian_regularization_exponent`` and / or ``delta_w`` (for this matrix);
3. a wrong inertia raises ``delta_w`` from ``max(min_hessian_perturbation,
   perturb_dec_fact delta_w_last)`` (first: ``first_hessian_perturbation``) by
   ``perturb_inc_fact`` (``perturb_inc_fact_first`` the first time, and again where
   delta_w passed 1e5 delta_w_last) until the inertia is right, ``delta_c`` as the last
   resort past ``max_hessian_perturbation`` (IPOPT's PDPerturbationHandler); above
   :data:`PIVOTING_SWITCH_DELTA_W` the unpivoted inertia is not trusted and the
   factorization switches to its pivoting mode where it has one (docs/pivoting-switch.md).

After the solve, a refinement that did not reach :data:`RESIDUAL_RATIO_SINGULAR` (or
converged slowly, ``refinement_contraction_max``) goes through the fall-backs of
:meth:`InertiaCorrector.direction` (docs/kkt-regularization-and-refinement.md).  With
``inertia_correction_method = 'inertia-free'`` the factorization's inertia is not used
and a curvature test accepts the direction instead (:meth:`_curvature_corrected`).
"""

from __future__ import annotations

import math
import time

from ..arrays import scalars, synchronize
from .iterate import BarrierParameter, StepInfo, Timers
from .perturbation import CLEAR_C, SET_C, DegeneracyTest

#: relative KKT residual (after refinement) above which a solve counts as failed
#: (IPOPT's residual_ratio_singular role; caspar's ratio is ||K x - b||_inf / ||b||_inf)
RESIDUAL_RATIO_SINGULAR = 1e-6
#: delta_w above which a wrong inertia is taken as the non-pivoting factorization's error
#: rather than missing curvature: the factorization is switched to its pivoting mode
#: where it has one (a small system: dense Bunch-Kaufman) and the inertia retried.
#: IPOPT with an exactly pivoting solver stays far below this on problems whose
#: unpivoted inertia drives delta_w towards its maximum
PIVOTING_SWITCH_DELTA_W = 1e6
#: the smallest static term a slow (not failed) refinement lowers it to
SLOW_REFINEMENT_EPS_FLOOR = 1e-12


class InertiaCorrector:
    """Final.  Owns the perturbation state of one interior-point run: ``delta_w_last``
    (the last nonzero delta_w), the degeneracy test (:mod:`.perturbation`), and the
    static regularization changes made for one iteration or for the rest of the
    solve."""

    def __init__(self, kkt, opts, m: int, barrier: BarrierParameter, timers: Timers,
                 info: StepInfo, xp):
        self.kkt, self.opts, self.m, self.barrier = kkt, opts, m, barrier
        self.timers, self.info, self.xp = timers, info, xp
        self.delta_w_last = 0.0
        #: IPOPT's structural-degeneracy test (delta_c on every matrix where the KKT
        #: system asks for it: the condensed one)
        self.degeneracy = DegeneracyTest(always_cd=kkt.regularize_constraints_always)
        self.eps_restore = None     # static regularization to restore next iteration
        # the static term before a slow refinement lowered it (None: not lowered), and
        # whether lowering for slowness is off for the rest of the solve (it once led to
        # a failed refinement)
        self.eps_before_slow = None
        self.slow_rule_off = False
        self.factored = False       # the iteration's matrix factorized (direction)
        self._zero_w = xp.zeros(kkt.nw) if not kkt.check_inertia else None

    def _delta_c(self) -> float:
        o = self.opts
        return o.jacobian_regularization_value * self.barrier.mu ** \
            o.jacobian_regularization_exponent

    # ================================================================ timed calls
    def solve(self, rhs_w, rhs_c):
        return self._timed_solve(self.kkt.solve, rhs_w, rhs_c)

    def _timed_solve(self, call, *args):
        """``call(*args)`` (a solve phase of the KKT system), counted in the solve time."""
        t = time.perf_counter()
        out = call(*args)
        if self.timers.device_sync:
            synchronize(self.xp)
        self.timers.solve += time.perf_counter() - t
        return out

    def factor(self):
        """Assemble and factorize the KKT system; ``(factorization, inertia ok)``."""
        self.factored = False       # (direction sets it for the iteration's matrix)
        t = time.perf_counter()
        self.kkt.build()
        if self.timers.device_sync:
            synchronize(self.xp)
        t1 = time.perf_counter()
        fact, ok = self.kkt.factorize()
        t2 = time.perf_counter()
        self.timers.build += t1 - t
        self.timers.factor += t2 - t1
        return fact, ok

    # ================================================================ the direction
    def begin_iteration(self) -> None:
        """A pivoting mode that costs far more than the unpivoted factorization (qdldl's
        dense Bunch-Kaufman at N >= 500) is left: each iteration tries the unpivoted one
        first, and the switching rules of :meth:`direction` and
        :meth:`_perturb_until_inertia` switch again where it fails
        (docs/pivoting-switch.md).  An eps
        raised for one iteration goes back, unless the KKT system is still in a pivoting
        factorization (eps 0 there: K itself)."""
        k = self.kkt
        self.factored = False
        k.leave_pivoting()
        if self.eps_restore is not None:
            if k.static_regularization > 0.0:
                k.static_regularization = self.eps_restore
            self.eps_restore = None

    def direction(self, rhs_w, rhs_c):
        """Factorize the assembled KKT system with inertia correction and solve for
        ``(dw, dy)``; None when no regularization gives a usable factorization.

        Refinement against K failed (IPOPT's PDFullSpaceSolver::Solve): first (once) the
        same matrix with a smaller static term, which is what a K with eigenvalues below
        eps needs; then ask the linear algebra for a more stable factorization and redo
        the inertia correction with it (a factorization with huge element growth also
        misreports inertia); when it cannot do better, its pivoting mode for the rest of
        the solve, the inertia correction redone; where there is none, an accurate
        (pivoting) factorization of K itself for this iteration's solves; failing that,
        K is taken as (numerically) singular, once, and perturbed as IPOPT's
        PerturbForSingularity does.  A KKT system whose inertia test rounding can fool
        (the condensed one) then goes on raising delta_w, as MadNLP does after a failed
        Richardson iteration."""
        if not self._factored():
            return None
        dw, dy = self.solve(rhs_w, rhs_c)
        return self._after_solve(rhs_w, rhs_c, dw, dy)

    def _factored(self) -> bool:
        """The iteration's matrix factorized with inertia correction (False: no
        regularization gives a usable factorization).  A second right-hand side of the
        iteration (the adaptive update's affine step first) reuses the factorization,
        as IPOPT's PDFullSpaceSolver does."""
        if not self.factored:
            if not self.regularize_and_factorize():
                return False
            self.factored = True
        return True

    def direction_deferred(self, rhs_w, rhs_c):
        """:meth:`direction` with the first solve's refinement test left unread (one
        host read fewer on the device: its norms travel with the line search's
        reference values): ``(solved, first)``; where ``first`` (a
        :class:`~caspar_backend.kkt.refinement.FirstTest`) is not None, ``solved`` is
        the tentative ``(dw, dy)`` and :meth:`finish_direction` ends the direction once
        ``first``'s norms are read, else ``solved`` is :meth:`direction`'s answer."""
        if not self.kkt.check_inertia:
            return self.direction(rhs_w, rhs_c), None
        if not self._factored():
            return None, None
        dw, dy, first = self._timed_solve(self.kkt.solve_deferred, rhs_w, rhs_c)
        if first is None:
            return self._after_solve(rhs_w, rhs_c, dw, dy), None
        return (dw, dy), first

    def finish_direction(self, rhs_w, rhs_c, dw, dy, first, values):
        """End a :meth:`direction_deferred` from ``first``'s norms as read (``values``):
        ``(solved, stands)`` -- :meth:`direction`'s answer, and whether it is the
        tentative ``(dw, dy)`` unchanged (the first test passed and nothing followed)."""
        passed = self._timed_solve(self.kkt.settle_refinement, first, values)
        solved = self._after_solve(rhs_w, rhs_c, dw, dy)
        return solved, (passed and solved is not None and solved[0] is dw
                        and solved[1] is dy)

    def _after_solve(self, rhs_w, rhs_c, dw, dy):
        """:meth:`direction` after its first solve ``(dw, dy)`` of the factorized
        matrix: what a slow or failed refinement calls for (see :meth:`direction`)."""
        k, o = self.kkt, self.opts
        pretended = False
        smaller_tried = False
        # refinement_contraction_max: the residual test passed, but at a slow rate the
        # directions where K's eigenvalues lie below the static term are not resolved
        if (k.last_contraction > o.refinement_contraction_max
                and k.static_regularization > SLOW_REFINEMENT_EPS_FLOOR
                and k.last_residual_ratio <= RESIDUAL_RATIO_SINGULAR
                and self.eps_restore is None and not self.slow_rule_off):
            # converged, but slowly: the same matrix with a smaller static term, kept
            # for the solve only when its refinement is no longer slow (where it is, the
            # smaller term buys no accuracy and costs the factorization stability)
            smaller_tried = True
            eps = k.static_regularization
            solved = self._solve_with_smaller_static_term(
                rhs_w, rhs_c, max_contraction=o.refinement_contraction_max)
            if solved is not None:
                dw, dy = solved
                if self.eps_before_slow is None:
                    self.eps_before_slow = eps
        if (k.last_residual_ratio > RESIDUAL_RATIO_SINGULAR
                and self.eps_before_slow is not None
                and k.static_regularization < self.eps_before_slow):
            # a refinement failing under the term a slow one lowered: back to the former
            # term, and no more lowering for slowness
            k.static_regularization = self.eps_before_slow
            self.eps_before_slow, self.slow_rule_off = None, True
            if not self.regularize_and_factorize():
                return None
            dw, dy = self.solve(rhs_w, rhs_c)
        while k.last_residual_ratio > RESIDUAL_RATIO_SINGULAR:
            if not smaller_tried and self.eps_restore is None:
                smaller_tried = True
                solved = self._solve_with_smaller_static_term(rhs_w, rhs_c)
                if solved is not None:
                    dw, dy = solved
                    break
            if k.increase_quality():
                self.eps_restore = None     # a refinement failure raises eps for good
                ok = self.regularize_and_factorize()
            elif k.enable_pivoting():
                # no static term made the factors accurate: they are the trouble, not K
                # (element growth without pivoting), and so may be the inertia they
                # reported.  The linear solver's pivoting mode from now on (its inertia
                # exact, no static term), Algorithm IC again from delta_w = 0, as
                # IPOPT's pivoting solvers would have factorized from the start
                self.eps_restore = None
                ok = self.regularize_and_factorize()
            elif k.factorize_accurate():
                # no pivoting mode (a large system without MKL): this iteration's solves
                # go through a pivoting factorization of K itself, the inertia still
                # from the one above; its direction is taken even where K is too
                # ill-conditioned for refinement to pass.  K is not taken as singular
                # while it factorizes: the delta_c that brings stays for the rest of the
                # solve and leaves every later step off the linearized constraints by
                # delta_c |dy|
                dw, dy = self.solve(rhs_w, rhs_c)
                break
            elif not pretended and k.delta_w == 0.0:
                pretended = True
                ok = self.regularize_and_factorize(singular=True)
            elif k.inaccurate_solve_means_wrong_inertia:
                ok = self._perturb_until_inertia(False)
            else:
                break
            if not ok:
                return None
            dw, dy = self.solve(rhs_w, rhs_c)
        if not k.check_inertia:
            return self._curvature_corrected(rhs_w, rhs_c, dw, dy)
        return dw, dy

    def _curvature_corrected(self, rhs_w, rhs_c, dw, dy):
        """The inertia-free acceptance of a factorization (Chiang & Zavala 2016; MadNLP's
        InertiaFree), with ``inertia_correction_method = 'inertia-free'``: with the normal
        step ``n`` (the solve of ``[0, rhs_c]``), ``t = dw - n``, ``H = W + Sigma +
        delta_w I`` and ``g = -rhs_w`` (the barrier Lagrangian's gradient), accept the
        direction ``(dw, dy)`` when

            t'Ht + max(t'Hn - g'n, 0) >= inertia_free_tol t't,

        else raise delta_w as Algorithm IC does (from the previous iteration's delta_w)
        and solve again.  Returns the accepted ``(dw, dy)``, or None when delta_w exceeds
        its maximum (one transfer per test)."""
        k, xp, o = self.kkt, self.xp, self.opts
        last = self.delta_w_last
        while True:
            nrm = self.solve(self._zero_w, rhs_c)[0] if self.m else self._zero_w
            t = dw - nrm
            ht = k.primal_matvec(t)
            tht, thn, bn, tt = scalars(xp, xp.dot(t, ht), xp.dot(ht, nrm), xp.dot(rhs_w, nrm),
                                       xp.dot(t, t))
            if math.isfinite(tht) and tht + max(thn + bn, 0.0) >= o.inertia_free_tol * tt:
                break
            # Algorithm IC's schedule within one direction; without the inertia test its
            # loop stops at the first successful factorization (and records delta_w)
            self.delta_w_last = last
            if not self._perturb_until_inertia(False):
                return None
            dw, dy = self.solve(rhs_w, rhs_c)
        return dw, dy

    def _solve_with_smaller_static_term(self, rhs_w, rhs_c, max_contraction=None):
        """After a failed or slow (``refinement_contraction_max``) refinement, once per
        direction: factorize the same matrix (same delta_w, delta_c) with a smaller
        static regularization and solve again.  Refinement against K converges only
        while eps is small against K's smallest eigenvalues, so where those lie below
        eps a smaller eps is what helps, not a larger one.  Returns ``(dw, dy)`` and
        keeps the smaller eps for the solve when the inertia is right and the refinement
        converges; otherwise restores eps and its factorization and returns None.
        ``max_contraction``: the refinement must also contract by at most this
        (kkt/refinement.py)."""
        k = self.kkt
        eps = k.decrease_static_regularization()
        if eps is None:
            return None
        ratio = k.last_residual_ratio
        _, ok = self.factor()
        if ok:
            dw, dy = self.solve(rhs_w, rhs_c)
            if k.last_residual_ratio <= RESIDUAL_RATIO_SINGULAR and (
                    max_contraction is None or k.last_contraction <= max_contraction):
                return dw, dy
        k.static_regularization = eps
        self.factor()
        k.last_residual_ratio = ratio
        return None

    # ================================================================ Algorithm IC
    def regularize_and_factorize(self, singular=False) -> bool:
        """IPOPT's inertia correction (Waechter & Biegler Algorithm IC with IPOPT's
        degeneracy test, :mod:`.perturbation`) for a new matrix: delta_c from the start
        where the Jacobian is degenerate, delta_w where the Hessian is.  ``singular``:
        the current matrix is taken as singular (a refinement that failed at delta_w = 0,
        IPOPT's pretend-singular): perturbed from where it is, not a new matrix."""
        k = self.kkt
        if singular:
            return self._perturb_until_inertia(True)
        with_c, with_w = self.degeneracy.new_system()
        k.delta_w, k.delta_c = 0.0, (self._delta_c() if with_c else 0.0)
        self.info.delta_w = 0.0
        if with_w and not self._next_delta_w():
            return False
        fact, ok = self.factor()
        # a zero pivot of a factorization without pivoting need not mean a singular K
        # (K may have the required inertia with a small eigenvalue): as IPOPT's linear
        # solver would pivot, first try more stable factorizations before perturbing K
        # itself.  The raised eps is for this iteration only (restored by
        # begin_iteration): kept for the rest of the solve it costs accuracy on badly
        # scaled problems
        eps = k.static_regularization
        while not ok and fact.n_zero > 0 and k.increase_quality():
            if self.eps_restore is None:
                self.eps_restore = eps
            fact, ok = self.factor()
        if not ok and self._unpivoted_failure(fact) and k.enable_pivoting():
            fact, ok = self.factor()
        if ok:
            return self._accepted()
        return self._perturb_until_inertia(self._singular(fact))

    def _unpivoted_failure(self, fact) -> bool:
        """Whether an unpivoted factorization (no pivoting mode on) reported fewer
        negative eigenvalues than the factorized matrix must have: with a negative
        diagonal in every constraint row, ``-(delta_c + eps_i) < 0``, Haynsworth's
        additivity gives it at least m (the constraint block's), whatever the rest; so
        fewer is the element growth of a fixed elimination order, not K's inertia
        (Pyomo's parmest semibatch: (892, 884) for K's (890, 886))."""
        k = self.kkt
        s = k.solver
        return (fact.ok and not s.pivots and not s.pivoting
                and fact.n_neg < k.m and k.constraint_block_negative())

    def _singular(self, fact) -> bool:
        """Whether a factorization counts as singular: a zero pivot, or (exact inertia:
        the factorization pivots) fewer negative eigenvalues than K must have (IPOPT's
        "too few negative eigenvalues": a rank-deficient Jacobian)."""
        k = self.kkt
        return fact.n_zero > 0 or (k.check_inertia and k.solver.pivots
                                   and fact.n_neg < k.expected_inertia()[1])

    def _accepted(self) -> bool:
        k = self.kkt
        if k.delta_w > 0.0:
            self.delta_w_last = k.delta_w
        self.info.delta_w = k.delta_w
        return True

    def _next_delta_w(self) -> bool:
        """The next trial delta_w of Algorithm IC: the first one (from delta_w_last) when
        there is none yet, else the current one times kappa_w^+ (bar on the first
        perturbation of the solve, and again where delta_w has grown past 1e5 times the
        last one: IPOPT's rule); False when it exceeds delta_w^max (delta_w_last then
        forgotten, as IPOPT does)."""
        o, k = self.opts, self.kkt
        if k.delta_w == 0.0:
            if self.delta_w_last == 0.0:
                k.delta_w = o.first_hessian_perturbation
            else:
                k.delta_w = max(o.min_hessian_perturbation,
                                o.perturb_dec_fact * self.delta_w_last)
        elif self.delta_w_last == 0.0 or 1e5 * self.delta_w_last < k.delta_w:
            k.delta_w *= o.perturb_inc_fact_first
        else:
            k.delta_w *= o.perturb_inc_fact
        if k.delta_w > o.max_hessian_perturbation:
            self.delta_w_last = 0.0
            return False
        return True

    def _perturb(self, singular: bool) -> bool:
        """One step of the perturbation (IPOPT's PerturbForSingularity /
        PerturbForWrongInertia) after a factorization that was ``singular`` or of the
        wrong inertia; False when no perturbation is left."""
        k = self.kkt
        if singular and self.m > 0:
            c, raise_w = self.degeneracy.singular(k.delta_c > 0.0)
            if c == SET_C:
                k.delta_c = self._delta_c()
            elif c == CLEAR_C:
                k.delta_c = 0.0
            return self._next_delta_w() if raise_w else True
        self.degeneracy.wrong_inertia()
        if self._next_delta_w():
            return True
        if k.delta_c != 0.0:
            return False
        # delta_w exhausted without delta_c: delta_c, and delta_w again from its start
        k.delta_c = self._delta_c()
        k.delta_w = 0.0
        self.degeneracy.delta_w_exhausted()
        return self._next_delta_w()

    def _perturb_until_inertia(self, singular: bool) -> bool:
        """Perturb after the current factorization (``singular`` or of the wrong inertia)
        and factorize again until the inertia is right (the loop of Algorithm IC);
        False when no perturbation is left."""
        k = self.kkt
        perturb = True
        while True:
            if perturb and not self._perturb(singular):
                return False
            perturb = True
            fact, ok = self.factor()
            if ok:
                return self._accepted()
            if fact.n_zero > 0 and k.delta_w > 0.0 and k.enable_pivoting():
                # with delta_w > 0 and delta_c > 0 an exact zero pivot is a numerical
                # artefact (a delta_w below the factorization's resolution cancelled
                # away), not a sign of missing curvature: raising delta_w would stall it
                # at that floor; retry the same delta_w with a pivoting factorization
                # (IPOPT's MUMPS pivots)
                perturb = False
            elif self._unpivoted_failure(fact) and k.enable_pivoting():
                # fewer negative eigenvalues than the constraint block forces: the
                # factors, not K, are wrong (element growth); Algorithm IC again from
                # delta_w = 0 with exact inertia
                k.delta_w = 0.0
                perturb = False
            elif k.delta_w > PIVOTING_SWITCH_DELTA_W and k.enable_pivoting():
                # the inertia of an unpivoted factorization is not to be trusted this
                # far: Algorithm IC again from delta_w = 0 with exact inertia
                k.delta_w = 0.0
                perturb = False
            singular = self._singular(fact)
