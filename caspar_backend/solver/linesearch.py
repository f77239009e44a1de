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

expect_infeasible_problem (IPOPT's heuristics for a problem likely infeasible): while on,
an iterate whose constraint multipliers exceed ``expect_infeasible_problem_ytol`` (max
norm) goes to the restoration phase without a trial, a search after five shortened steps
in a row goes there at its first rejected trial, and neither the watchdog nor the soft
restoration runs; it ends once an accepted step starts from infeasibility (1-norm) <=
``expect_infeasible_problem_ctol`` (0 for a square problem) and after a restoration
phase.  A restoration run's search has it off (on for a square problem's, as IPOPT's
``resto.`` options inherit it) and theta_max_fact 1e8.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..arrays import amax_abs, copy_into, fused, scalars
from .filter import Filter, _max_trials, compare_le, ieee_pow  # noqa: F401 (compare_le: resto)
from .iterate import BarrierParameter, Direction, Iterate, StepInfo
from .watchdog import Watchdog

G_THETA, G_PHI, DELTA, S_THETA, S_PHI, ETA_PHI, ALPHA_MIN_FRAC = \
    1e-5, 1e-8, 1.0, 1.1, 2.3, 1e-8, 0.05
#: IPOPT's restoration runs: theta_max_fact 1e8 (MinC_1NrmRestorationPhase sets
#: resto.theta_max_fact, which caspar's options cannot name)
RESTO_THETA_MAX_FACT = 1e8
#: IPOPT's DetectTinyStep: no tiny step while the constraint violation (1-norm) exceeds this
TINY_STEP_MAX_THETA = 1e-4


class LineSearch:
    """Final.  The line search of one interior-point run and its state: the filter, the
    watchdog, the soft-restoration phase, ``theta_min``/``theta_max`` (-1 until
    :meth:`set_theta_bounds`) and whether the last accepted step was tiny (``tiny_step``, which the
    barrier update reads).  An accepted step moves ``it`` (the run's current
    :class:`~.iterate.Iterate`) and records its step lengths in ``info``.

    ``calc``: the run's :class:`~.quantities.BarrierQuantities`; ``kkt``: the KKT system
    holding the current factorization (second-order corrections solve with it);
    ``lbfgs``: the quasi-Newton memory or None (updated by the iteration's assembly:
    :mod:`.newton`); ``resto``: the
    restoration phase's own search (no soft restoration; ``resto_expect``: with
    expect_infeasible_problem); ``square``: the problem is square; ``log``: the run's
    :class:`~.log.IterationLog` (None: no output), where a trial point with an evaluation
    error is reported as IPOPT reports it, with the component that failed."""

    def __init__(self, opts, calc, it: Iterate, barrier: BarrierParameter, kkt, lbfgs,
                 info: StepInfo, resto: bool, log=None, square=False, resto_expect=False):
        self.opts, self.calc, self.it, self.barrier = opts, calc, it, barrier
        self.kkt, self.lbfgs, self.info, self.resto = kkt, lbfgs, info, resto
        self.log = log
        self.xp = calc.xp
        self.filter = Filter()
        self.watchdog = Watchdog()
        self.soft_resto = False        # in IPOPT's soft restoration phase
        self.soft_resto_count = 0
        self.tiny_step = False
        # the last step was tiny with a small multiplier step (IPOPT's
        # tiny_step_last_iteration_): a tiny step now sets tiny_step
        self.tiny_last = False
        # set at the first trial point's test (IPOPT's FilterLSAcceptor: a restoration
        # phase before any search, start_with_resto or a failed first step, leaves them
        # to its point; until then the smallest step size has no theta_min term)
        self.theta_min = self.theta_max = -1.0
        # IPOPT's expect_infeasible_problem heuristics (module doc), while on: a
        # restoration run's from ``resto_expect``; the accepted steps in a row whose
        # first trial was rejected
        self.expect_infeasible = resto_expect if resto else opts.expect_infeasible_problem
        self.expect_ctol = 0.0 if square else opts.expect_infeasible_problem_ctol
        self.shortened_steps = 0
        # trial buffers
        self.w_t, self.h_t = self.xp.zeros(calc.nw), self.xp.zeros(calc.m)

    def set_theta_bounds(self, theta: float) -> None:
        """theta_max and theta_min from the reference infeasibility ``theta`` of the
        first trial point's test; a restoration run's theta_max_fact is 1e8 (IPOPT's
        resto.theta_max_fact)."""
        o = self.opts
        self.theta_max = (RESTO_THETA_MAX_FACT if self.resto
                          else o.theta_max_fact) * max(1.0, theta)
        self.theta_min = o.theta_min_fact * max(1.0, theta)

    def reset_safeguards(self) -> None:
        """After a restoration phase: the watchdog and the soft restoration start over;
        the expect_infeasible_problem heuristics end."""
        self.watchdog.reset()
        self.soft_resto, self.soft_resto_count = False, 0
        self.expect_infeasible, self.shortened_steps = False, 0

    # ================================================================ the search
    def reference(self, d: Direction):
        """``((theta, phi, gphi^T dw), |dw|, |dw / (1 + |w|)|)`` at the current iterate
        for :meth:`search`, with the step bounds of ``d`` and its ``finite`` flag in the
        same transfer; None when ``d`` is not finite (no usable step).  Where ``d`` is
        ``unsettled`` and its refinement goes on past the test read here, the direction
        that comes of it (a :class:`Direction` to reference in place of ``d``) or None."""
        xp, calc, it = self.xp, self.calc, self.it
        reference, barrier, bounds = calc.reference_terms(d, self.barrier.tau)
        flag = [] if d.finite is None else [d.finite]
        unread = calc.unread_checks()
        pending = d.unsettled.columns if d.unsettled is not None else ()
        gBD, d_norm, rel, theta, *rest = scalars(xp, *reference, *barrier, *bounds[2],
                                                 *flag, *unread, *pending)
        tested = rest[len(rest) - len(pending):]
        del rest[len(rest) - len(pending):]
        # the evaluations' finiteness before the direction's (a non-finite Hessian ends
        # the solve, as when checked at its evaluation)
        calc.settle(rest[len(rest) - len(unread):])
        del rest[len(rest) - len(unread):]
        if pending:
            finish, d.unsettled = d.unsettled.finish, None
            done = finish(tested)
            if done is not d:
                return done
        if flag:
            if not rest.pop():
                return None
            d.finite = None
        k = len(barrier)
        calc.keep_step_bounds(d, bounds, rest[k:])
        # (should phi switch to safe slacks, the bounds kept are recomputed from those)
        return (theta, calc.phi(it.w, it.f, sums=rest[:k]), gBD), d_norm, rel

    def search(self, d: Direction, reference) -> bool:
        """Find and take a step along ``d`` (``reference``: :meth:`reference` of ``d``);
        False when none was found (the caller's fall-backs and the restoration phase
        decide)."""
        o, calc, it, tau = self.opts, self.calc, self.it, self.barrier.tau
        wd = self.watchdog
        if wd.last_mu != self.barrier.mu:
            wd.reset()
            wd.last_mu = self.barrier.mu
        ref, d_norm, rel = reference
        theta = ref[0]
        self.info.d_norm = d_norm

        # a tiny step (IPOPT's DetectTinyStep) only near feasibility: at a large constraint
        # violation it is a stationary point of the infeasibility, which the restoration
        # phase decides.  expect_infeasible_problem: large multipliers send the iterate
        # to the restoration phase at once (no trial: IPOPT's log shows alpha 0, 1 trial)
        to_resto = (self.expect_infeasible and self.it.y.size > 0 and scalars(
            self.xp, self.xp.max(self.xp.abs(self.it.y)))[0] > o.expect_infeasible_problem_ytol)
        tiny = (not to_resto and o.tiny_step_tol > 0 and rel <= o.tiny_step_tol
                and theta <= TINY_STEP_MAX_THETA)
        soc = True
        amin_gBD = None
        if (tiny or to_resto) and wd.active:
            # a tiny step (or one bound for the restoration phase) while the watchdog
            # runs: resume from the stored iterate instead
            d, ref, amin_gBD = self._stop_watchdog(d)
            tiny, soc, to_resto = False, False, False   # no factorization: no corrections
        elif (o.watchdog_shortened_iter_trigger > 0 and not wd.active and not tiny
              and not to_resto and not self.soft_resto and not self.expect_infeasible
              and wd.shortened >= o.watchdog_shortened_iter_trigger):
            wd.start(it, d, ref)
        if to_resto:
            self.tiny_last = False
            self.info.alpha_pr, self.info.ls = 0.0, 1
            return False
        self.tiny_step = False
        if tiny:
            if self._tiny_step(d, theta):
                return True
        else:
            self.tiny_last = False

        if self.soft_resto:
            self.soft_resto_count += 1
            kind = None
            if self.soft_resto_count <= o.max_soft_resto_iters:
                kind = self._soft_resto_step(d, ref)
            if kind == "S":
                self.soft_resto, self.soft_resto_count = False, 0
            return kind is not None      # a failure goes to the restoration phase

        skip_first = False
        while True:
            status, n_trials, f_t = self._backtrack(d, ref, skip_first,
                                                    soc and not skip_first,
                                                    single=wd.active, amin_gBD=amin_gBD)
            if not wd.active:
                break
            if status == "accepted":           # the watchdog succeeded
                wd.active, wd.saved = False, None
                break
            wd.trials += 1
            if status == "invalid" or wd.trials > o.watchdog_trial_iter_max:
                d, ref, amin_gBD = self._stop_watchdog(d)
                skip_first = True
                continue
            # take the rejected full step (still in w_t, h_t) unchecked, without
            # augmenting the filter
            alpha_max, alpha_z = calc.step_bounds(d, tau)
            self._accept(d, alpha_max, alpha_z, self.w_t, f_t, 1, "w", None)
            self._count_step(theta)
            return True
        if status != "accepted":
            if (self.resto or o.soft_resto_pderror_reduction_factor == 0.0
                    or self.expect_infeasible):
                return False
            theta, phi = ref[0], ref[1]
            self.filter.add((1 - G_THETA) * theta, phi - G_PHI * theta)
            kind = self._soft_resto_step(d, ref)
            if kind == "s":
                self.soft_resto, self.soft_resto_count = True, 0
            return kind is not None
        wd.shortened = 0 if n_trials == 1 else wd.shortened + 1
        self._count_step(theta)
        return True

    def _count_step(self, theta) -> None:
        """After an accepted step from an iterate of infeasibility ``theta``: the
        shortened steps in a row (IPOPT's count_successive_shortened_steps_); the
        expect_infeasible_problem heuristics end at theta <= expect_ctol."""
        self.shortened_steps = 0 if self.info.ls == 1 else self.shortened_steps + 1
        if self.expect_infeasible and theta <= self.expect_ctol:
            self.expect_infeasible = False

    def _soft_resto_step(self, d: Direction, ref):
        """One soft-restoration trial (see the module docstring): 'S' (acceptable to the
        filter and the current iterate), 's' (reduces the primal-dual error) or None
        (rejected; the iterate is unchanged)."""
        calc, it, mu = self.calc, self.it, self.barrier.mu
        theta, phi, gBD = ref
        alpha = min(calc.step_bounds(d, self.barrier.tau))
        wt = it.w + alpha * d.dw
        f_t, ok = calc.eval_zeroth(wt, self.h_t)
        if not ok:
            return None
        if self._acceptable(theta, phi, gBD, 0.0, calc.theta(self.h_t), calc.phi(wt, f_t)):
            self._accept(d, alpha, alpha, wt, f_t, 1, "S", None)
            return "S"
        # the trial point's primal-dual error, before anything moves (IPOPT measures it
        # before the bound-multiplier correction; and a rejected trial must leave no
        # trace, e.g. in the L-BFGS memory that _accept updates)
        xp = self.xp
        grad_t, jac_t = xp.empty_like(it.gradf), xp.empty_like(it.jv)
        calc.nlp.grad_and_jac(wt, grad_t, jac_t)
        if not calc.allfinite(grad_t, jac_t):
            return None           # an evaluation error rejects the soft step (IPOPT)
        err = calc.primal_dual_error(mu)
        err_t = calc.primal_dual_error(
            mu, w=wt, y=it.y + alpha * d.dy, zL=it.zL + alpha * d.dzL,
            zU=it.zU + alpha * d.dzU, gradf=grad_t, jv=jac_t, hv=self.h_t)
        if err_t <= self.opts.soft_resto_pderror_reduction_factor * err:
            self._accept(d, alpha, alpha, wt, f_t, 1, "s", None, first_order=(grad_t, jac_t))
            return "s"
        return None

    def _stop_watchdog(self, d_latest: Direction):
        """Restore the watchdog's stored iterate; returns its (direction, reference
        values) and the ``gphi^T dw`` that IPOPT's smallest step size is computed from
        afterwards: the restored iterate's barrier gradient times the *latest*
        direction, ``d_latest`` (IPOPT's StopWatchDog hands the stored direction to the
        search but leaves the latest one as the current delta, which CalculateAlphaMin
        reads).  So a restored search gives up at alpha_min_frac gamma_theta where that
        product is >= 0, instead of backtracking to ~1e-20."""
        d, ref = self.watchdog.stop(self.it, self.calc)
        # (summed as gphi^T dw is in reference(): pairwise, the compiled kernels' sum)
        return d, ref, scalars(self.xp, self.xp.sum(d.gphi * d_latest.dw))[0]

    def _backtrack(self, d: Direction, ref, skip_first, soc, single, amin_gBD=None):
        """Backtracking from the fraction-to-the-boundary step along ``d``, each trial
        tested against the reference values ``ref = (theta, phi, gphi^T dw)``.
        ``skip_first``: start at the second trial step; ``soc``: second-order
        corrections allowed; ``single``: the first trial only (the watchdog);
        ``amin_gBD``: the ``gphi^T dw`` for the smallest step size in place of ``ref``'s
        (:meth:`_stop_watchdog`).  Returns ``(status, n_trials, f_t)``: status
        'accepted', 'rejected' or 'invalid' (no trial point could be evaluated), and the
        objective of the last trial point (which ``w_t`` / ``h_t`` still hold)."""
        o, xp, calc = self.opts, self.xp, self.calc
        w, dw = self.it.w, d.dw
        theta, phi, gBD = ref
        alpha_max, alpha_z = calc.step_bounds(d, self.barrier.tau)
        if single:
            amin = alpha_max
        else:
            g = gBD if amin_gBD is None else amin_gBD
            if g < 0:
                if theta <= self.theta_min:
                    amin = min(G_THETA, G_PHI * theta / -g,
                               DELTA * theta ** S_THETA / ieee_pow(-g, S_PHI))
                else:
                    amin = min(G_THETA, G_PHI * theta / -g)
            else:
                amin = G_THETA
            amin *= ALPHA_MIN_FRAC

        alpha = alpha_max * (o.alpha_red_factor if skip_first else 1.0)
        n_trials = 1 if skip_first else 0
        first = n_trials
        all_invalid = True
        # ends: alpha below amin (the rule), and -- what makes it finite for amin = 0
        # -- alpha no longer positive or _max_trials trials made
        last = first + _max_trials(alpha, o.alpha_red_factor)
        while (amin <= alpha and alpha > 0.0 and n_trials < last) or n_trials == first:
            n_trials += 1
            wt = self.w_t
            fused.call(xp, "axpy_into", w, alpha, dw, wt)
            f_t, ok, theta_t, phi_t = calc.trial_point(wt, self.h_t)
            if ok:
                all_invalid = False
                kind = self._acceptable(theta, phi, gBD, alpha, theta_t, phi_t)
                if kind:
                    self._accept(d, alpha, alpha_z, wt, f_t, n_trials, kind,
                                 (theta, phi))
                    return "accepted", n_trials, f_t
                if single:
                    return "rejected", n_trials, f_t
            elif single:
                return "invalid", n_trials, None
            elif self.log is not None:
                self.log.write("Warning: Cutting back alpha due to evaluation error: NaN or "
                               f"Inf in {calc.nlp.describe_nonfinite(wt)}")
            if self.expect_infeasible and self.shortened_steps >= 5:
                # expect_infeasible_problem: to the restoration phase at once (the log's
                # values: this trial's step and count)
                self.info.alpha_pr, self.info.ls = alpha, n_trials
                return "rejected", n_trials, None
            if ok and n_trials == 1 and soc and theta_t >= theta and o.max_soc > 0:
                if self._second_order_correction(d, alpha, theta, phi, gBD, n_trials,
                                                 theta_t):
                    return "accepted", n_trials, None
            alpha *= o.alpha_red_factor
        if all_invalid:
            calc.invalid(w + alpha_max * dw, "function")
        # the failed search in the log's values as IPOPT's restoration line shows them:
        # the step after the last reduction (not tried) and the trials plus one
        self.info.alpha_pr, self.info.ls = alpha, n_trials + 1
        return "rejected", n_trials, None

    def _acceptable(self, theta, phi, gBD, alpha, theta_t, phi_t):
        """'f' (Armijo step), 'h' (filter step) or '' (rejected), in IPOPT's order
        (CheckAcceptabilityOfTrialPoint): theta_max, then the test against the current
        iterate, then the filter; an acceptance runs the filter reset heuristic."""
        if self.theta_max < 0.0:
            self.set_theta_bounds(theta)
        if not math.isfinite(phi_t) or theta_t > self.theta_max:
            return ""
        o = self.opts
        flt = self.filter
        switching = gBD < 0 and alpha * ieee_pow(-gBD, S_PHI) > DELTA * theta ** S_THETA
        armijo = compare_le(phi_t - phi, ETA_PHI * alpha * gBD, phi)
        if theta <= self.theta_min and switching:
            ok = armijo
        else:
            ok = not (phi_t > phi and math.log10(phi_t - phi) > o.obj_max_inc + (
                math.log10(abs(phi)) if abs(phi) > 10.0 else 1.0)) and (
                compare_le(theta_t, (1 - G_THETA) * theta, theta) or
                compare_le(phi_t, phi - G_PHI * theta, phi))
        if not ok:
            flt.rejected_by_filter = False
            return ""
        if not flt.acceptable(theta_t, phi_t):
            flt.rejected_by_filter = True
            return ""
        flt.note_acceptance(o.max_filter_resets, o.filter_reset_trigger)
        # IPOPT labels (and keeps out of the filter) every step meeting both the
        # switching and the Armijo condition, whichever test accepted it
        return "f" if (switching and armijo) else "h"

    def _second_order_correction(self, d: Direction, alpha, theta, phi, gBD, n_trials,
                                 theta_t):
        """IPOPT's TrySecondOrderCorrection: each correction must reduce the
        infeasibility of the trial point before it (the rejected first trial point for
        the first one) by kappa_soc for the next to be tried."""
        o, calc, it, tau = self.opts, self.calc, self.it, self.barrier.tau
        w = it.w
        c_soc = alpha * it.h + self.h_t
        theta_old = theta_t
        for _ in range(o.max_soc):
            dw_soc, dy_soc = self.kkt.solve(d.rhs_w, -c_soc)
            if not calc.allfinite(dw_soc):
                return False
            a_soc = calc.fraction_to_boundary(dw_soc, tau)
            wt = w + a_soc * dw_soc
            f_t, ok, theta_t, phi_t = calc.trial_point(wt, self.h_t)
            if not ok:
                return False
            kind = self._acceptable(theta, phi, gBD, alpha, theta_t, phi_t)
            if kind:
                # the corrected step replaces the whole direction, duals included, and
                # the dual step length is recomputed for it (IPOPT: actual_delta =
                # delta_soc)
                dzL, dzU = calc.bound_multiplier_steps(dw_soc)
                alpha_z = calc.fraction_to_boundary_z(dzL, dzU, tau)
                d = replace(d, dw=dw_soc, dy=dy_soc, dzL=dzL, dzU=dzU)
                self._accept(d, a_soc, alpha_z, wt, f_t, n_trials, kind.upper(),
                             (theta, phi))
                return True
            if theta_t > o.kappa_soc * theta_old:
                return False
            theta_old = theta_t
            c_soc = a_soc * c_soc + self.h_t
        return False

    def _tiny_step(self, d: Direction, theta) -> bool:
        """IPOPT's tiny step: the step to the boundary taken unchecked (ls 0) where its
        trial point evaluates; tagged 'T' and flagging the barrier update (``tiny_step``:
        mu decreases, or the solve ends with Search_Direction_Becomes_Too_Small at mu's
        floor) only after a tiny step whose |dy|_inf was below tiny_step_y_tol
        (``tiny_last``, set here whether or not the trial evaluates).  True: taken."""
        calc, wt = self.calc, self.w_t
        alpha_max, alpha_z = calc.step_bounds(d, self.barrier.tau)
        fused.call(self.xp, "axpy_into", self.it.w, alpha_max, d.dw, wt)
        # (a slack lost to rounding switches to safe slacks, as at any trial point)
        f_t, ok, _, _ = calc.trial_point(wt, self.h_t)
        flag = self.tiny_last
        self.tiny_last = (scalars(self.xp, amax_abs(self.xp, d.dy))[0]
                          < self.opts.tiny_step_y_tol)
        if not ok:
            return False
        self.tiny_step = flag
        self._accept(d, alpha_max, alpha_z, wt, f_t, 0, "T" if flag else " ", None)
        self.watchdog.shortened = 0
        self._count_step(theta)
        return True

    def _accept(self, d: Direction, alpha, alpha_z, wt, f_t, ls, kind, filter_pair,
                first_order=None):
        """Move to the trial point; augment the filter for h-type steps; dual step.
        ``first_order``: the trial point's (gradient, Jacobian values) when the caller
        has already evaluated them (finite), else they are evaluated here."""
        it, calc = self.it, self.calc
        if filter_pair is not None and kind in ("h", "H"):
            theta, phi = filter_pair
            self.filter.add((1 - G_THETA) * theta, phi - G_PHI * theta)
        copy_into(self.xp, it.w, wt)
        it.moved()
        it.f = f_t
        copy_into(self.xp, it.h, self.h_t)
        # the multipliers' step, each z then within kappa_sigma of mu / slack (W&B eq.
        # 16; in the free mu mode mu is the new point's mean complementarity, at most 1e3,
        # read after the step; none below kappa_sigma 1, as IPOPT): one launch unless a
        # read or safe slacks come in between.  In that launch's case the new point's
        # derivatives are read with the next iteration's norms (on the device) and gate
        # the step: where they are not finite the solve ends with the multipliers unmoved
        xp = self.xp
        ks, mu = self.opts.kappa_sigma, self.barrier.mu
        clip = ks >= 1.0
        free = self.barrier.free and calc.nL + calc.nU
        one_launch = not clip or not (free or calc.safe_slack_mode)
        gate = calc.first_order_of_step(it, first_order, later=one_launch)
        if one_launch:
            sL, sU = calc.slacks(it.w) if clip else (it.zL[:0], it.zU[:0])
            fused.call(xp, "step_duals", alpha, d.dy, alpha_z, d.dzL, sL, d.dzU, sU, mu, ks,
                       float(clip), gate, it.y, it.zL, it.zU)
        else:
            e = it.zL[:0]
            fused.call(xp, "step_duals", alpha, d.dy, alpha_z, d.dzL, e, d.dzU, e, mu, ks,
                       0.0, gate, it.y, it.zL, it.zU)
            sL, sU = calc.slacks(it.w)
            if free:
                mu = min(calc.complementarity_mean_min()[0], 1e3)
            fused.call(xp, "clip_ratio", sL, mu, ks, it.zL)
            fused.call(xp, "clip_ratio", sU, mu, ks, it.zU)
        info = self.info
        info.alpha_pr, info.alpha_du, info.ls, info.tag = alpha, alpha_z, ls, kind[:1]
