"""The primal-dual interior-point iteration (Waechter & Biegler 2006, IPOPT's algorithm).

It solves a :class:`~caspar_backend.solver.nlp.BarrierNLP`

    min f(w)  s.t.  h(w) = 0,  wL <= w <= wU

through the barrier problems

    min phi_mu(w) = f(w) - mu sum_{i in L} ln(w_i - wL_i) - mu sum_{i in U} ln(wU_i - w_i)
                    + kappa_d mu (sum_{L only} (w_i - wL_i) + sum_{U only} (wU_i - w_i))
    s.t. h(w) = 0

for a decreasing sequence mu.  The state of a run is explicit (:mod:`.iterate`): the
current :class:`~.iterate.Iterate` ``(w, y, zL, zU)`` with its function values, the
:class:`~.iterate.BarrierParameter` ``(mu, tau)`` and the log's
:class:`~.iterate.StepInfo`.  Each component receives the pieces it works on:

* :class:`~.quantities.BarrierQuantities` -- slacks, phi, theta, errors, step bounds;
* :class:`~.termination.Termination` -- the convergence tests;
* :class:`~.mu.MuUpdate` -- the barrier update;
* :class:`~.inertia.InertiaCorrector` -- the Newton step with inertia correction;
* :class:`~.linesearch.LineSearch` -- the filter line search (it moves the iterate);
* :func:`~.restoration.restoration_phase` -- runs a nested :class:`InteriorPoint` on the
  restoration problem (``resto=True``: log tag 'r', no nested restoration).

Arrays: every vector lives in the NLP's array module ``xp`` (numpy, or cupy with a CUDA
evaluator and the cuDSS solver); the host sees only the scalars the algorithm branches on
(norms, step sizes, filter values), read in batches through
:func:`~caspar_backend.arrays.scalars`.  Work arrays are allocated at construction; an
iteration allocates no array of the size of the Jacobian or Hessian (vector-sized
temporaries come from CuPy's memory pool and go back to it).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..arrays import host, is_host
from ..errors import OptionError
from ..kkt import make_kkt_system
from ..linsolve import make_linear_solver
from .evalcounter import timed_phases
from .inertia import InertiaCorrector
from .initial import default_start, least_squares_duals, least_squares_y, push_into_bounds
from .iterate import BarrierParameter, Direction, Iterate, StepInfo, Timers
from .linesearch import LineSearch
from .log import iteration_record
from .newton import IterationKKT
from .mu import MuUpdate
from .quantities import BarrierQuantities
from .feasibility import CONVERGED, try_feasibility_multipliers
from .restoration import FEASIBLE_POINT, restoration_phase
from .resume import HandBack, kernel_can_go_on, state_point
from .status import SolverStop
from .structure import is_square
from .termination import Termination

__all__ = ["InteriorPoint", "Shared", "SolverStop"]


class Shared:
    """Final.  State shared by an interior-point run and its nested restoration runs:
    options, evaluation counter, log, start time, the iteration count, the linear-algebra
    timers, the per-iteration callback and the iteration history."""

    def __init__(self, opts, counter, log, t0, cpu0=None):
        self.opts, self.counter, self.log, self.t0 = opts, counter, log, t0
        # max_cpu_time: CPU seconds since here (or since the caller's start, cpu0)
        self.cpu0 = time.process_time() if cpu0 is None else cpu0
        self.iter = 0
        self.timers = Timers(device_sync=timed_phases(opts))
        self.linear_solver = opts.linear_solver
        self.iter_hook = None          # called with the InteriorPoint once per iteration
        self.history = []
        self.n_resto = 0
        # a stop was requested (SIGINT, :mod:`.interrupt`); read once per iteration
        self.interrupted = False
        # IPOPT's first_iter_resto_: the first mu update of the solve's first restoration
        # phase keeps mu (MonotoneMuUpdate, set once when the restoration is initialized)
        self.resto_mu_kept = False


class InteriorPoint:
    """Final.  One interior-point run on ``nlp``; ``resto=True`` marks the restoration
    phase.  ``it``, ``barrier`` and ``info`` are the run's state (see the module doc);
    ``w``, ``y``, ``zL``, ``zU`` are the current iterate's arrays (for the
    ``iteration_callback``).  ``hand_back_after``: an iteration number for a run resumed
    from the compiled kernels, which then hands the solve back to them (raises
    :class:`~.resume.HandBack`) at the first later iteration whose state they can take;
    None: never."""

    def __init__(self, nlp, shared: Shared, resto=False, hand_back_after=None,
                 expect_infeasible=False):
        from .lbfgs import LBFGS

        self.nlp, self.sh, self.opts, self.resto = nlp, shared, shared.opts, resto
        o, xp = self.opts, nlp.xp
        self.xp, self.nw, self.m = xp, nlp.nw, nlp.m
        self.barrier = (BarrierParameter(1.0, 0.0, free=True) if o.mu_strategy == "adaptive"
                        and not resto else BarrierParameter(o.mu_init, max(o.tau_min,
                                                                         1.0 - o.mu_init)))
        self.info = StepInfo()
        n_finite = [int(np.count_nonzero(np.isfinite(b))) for b in nlp.host_bounds()]
        self.it = Iterate.zeros(xp, nlp.nw, nlp.m, *n_finite, len(nlp.jac_rows))
        self.calc = BarrierQuantities(nlp, o, self.it, self.barrier)
        self.lbfgs = None
        nlow = 0
        if o.hessian_approximation == "limited-memory":
            self.lbfgs = LBFGS(nlp.nx, o.limited_memory_max_history,
                               o.limited_memory_max_skipping, xp=xp)
            nlow = 2 * o.limited_memory_max_history
        # the restoration problem keeps the slack structure of the problem it restores
        # (its p and n columns are elastic columns of the condensed system), so it runs
        # on the same kind of KKT system
        solver = make_linear_solver(shared.linear_solver, xp, o)
        self.kkt = make_kkt_system(o.kkt_system, nlp, solver, xp,
                                   n_lowrank=nlow, max_refinement_steps=o.max_refinement_steps,
                                   residual_ratio_max=o.residual_ratio_max,
                                   static_regularization=o.kkt_static_regularization)
        # a factorization that pivots needs no static term (left to the user where set):
        # a solver that always pivots, or one that pivots for this K (qdldl's small K,
        # known once the structure is analysed)
        if solver.pivots and "kkt_static_regularization" not in o.user:
            self.kkt.static_regularization = 0.0
        if o.inertia_correction_method == "inertia-free":
            if self.kkt.name != "augmented" or self.lbfgs is not None:
                raise OptionError("inertia_correction_method 'inertia-free' needs "
                                  "kkt_system 'augmented' and the exact Hessian")
            self.kkt.check_inertia = False
        self.inertia = InertiaCorrector(self.kkt, o, nlp.m, self.barrier, shared.timers,
                                        self.info, xp)
        self.termination = Termination(o)
        self.mu_update = MuUpdate(o, resto, shared)
        self.square = not resto and is_square(nlp.nx, int(np.count_nonzero(host(nlp.eq))))
        self.line_search = LineSearch(o, self.calc, self.it, self.barrier, self.kkt,
                                      self.lbfgs, self.info, resto, shared.log,
                                      square=self.square, resto_expect=expect_infeasible)
        self.relaxed_slacks = xp.asarray(nlp.relaxed_equality_slacks)
        self.final_errors, self.held_line = None, None   # held_line: run's held record
        #: a square problem's iterate multipliers, kept while its feasibility multipliers
        #: are tried (allocated once)
        self._saved_mults = ((xp.empty_like(self.it.y), xp.empty_like(self.it.zL),
                              xp.empty_like(self.it.zU)) if self.square else None)
        self._stepped = False           # a trial point was accepted since the last test
        self._counted_unchecked = False  # counted a step whose derivatives are not yet read
        self.newton = IterationKKT(self.kkt, self.inertia, self.calc, self.lbfgs)
        # the restoration phase just returned its point: the next pass of the loop records
        # it (history, callback) but prints no line, as IPOPT's log shows the point once,
        # as the restoration's last line, while its intermediate callback sees it again
        self._unprinted = False
        self.hand_back_after = hand_back_after

    def release(self) -> None:
        """End the run: its KKT system's linear solver gives back what it borrowed from
        the compiled problem's shared symbolic analysis (:meth:`~caspar_backend.kkt.
        KKTSystem.release`); the run is not continued afterwards."""
        self.kkt.release()

    #: the current iterate's log line is not printed (the restoration phase just returned
    #: it, as its own last line): a turn that continues the log skips it
    line_unprinted = property(lambda self: self._unprinted)

    # the current iterate's arrays, for callbacks
    w = property(lambda self: self.it.w)
    y = property(lambda self: self.it.y)
    zL = property(lambda self: self.it.zL)
    zU = property(lambda self: self.it.zU)

    # ================================================================ initialisation
    def initialize_default(self, x0):
        """IPOPT's DefaultIterateInitializer::SetInitialIterates from the user's ``x0``:
        ``w`` by :func:`~.initial.default_start` (x pushed, ``s = d(x)`` at the pushed
        x, pushed), whose constraint evaluation is the first iterate's h (g evaluated
        once); z = bound_mult_init_val, the least-squares y."""
        o = self.opts
        jv0 = None
        if o.least_square_init_duals and not self.resto:
            # IPOPT's least-squares duals read the Jacobian at the unpushed x0
            jv0 = self.nlp.jac(self.nlp.initial_w(x0, slacks=False), self.xp.empty_like(
                self.it.jv))
        w = default_start(self.nlp, x0, self.it.h, o.bound_push, o.bound_frac,
                          o.slack_bound_push, o.slack_bound_frac)
        self.initialize(w, push=False, h_done=True, ls_duals_jac=jv0)

    def initialize_warm(self, x0, y0, zL0, zU0, bound_push):
        """IPOPT's WarmStartIterateInitializer from the user's ``x0`` and multipliers:
        ``w = (x0, d(x0))`` (one constraint evaluation, at the unpushed x0), x and s
        pushed with ``bound_push`` (:func:`~.initial.push_into_bounds`).  Where the push
        leaves x as it was, that evaluation is the first iterate's h, as IPOPT evaluates
        c and d once at an unchanged x; else (or without inequalities, where no d was
        evaluated) h is evaluated at the pushed x."""
        nlp, nx = self.nlp, self.nlp.nx
        w0 = nlp.initial_w(x0)             # evaluates g only where there are slacks
        w = push_into_bounds(nlp, host(w0).astype(float), *bound_push)
        if not nlp.ns or not np.array_equal(w[:nx], host(w0[:nx])):
            self.initialize(self.xp.asarray(w), y0, zL0, zU0, push=False)
            return
        w = self.xp.asarray(w)
        nlp.h_of_last_g(w, self.it.h)
        self.initialize(w, y0, zL0, zU0, push=False, h_done=True)

    def initialize(self, w0, y0=None, zL0=None, zU0=None, push=True, ls_mult=True,
                   bound_push=None, h_done=False, ls_duals_jac=None):
        """The starting iterate from ``w0`` (pushed inside the bounds unless ``push`` is
        False) and the multipliers given, else ``bound_mult_init_val`` for z and the
        least-squares y (``ls_mult``).  ``bound_push``: (push, frac, slack_push,
        slack_frac), default the bound_push, bound_frac, slack_bound_push,
        slack_bound_frac options.  ``h_done``: ``it.h`` already holds ``h(w0)``
        (``push`` False), only f is evaluated.  ``ls_duals_jac``: with
        least_square_init_duals, the Jacobian values at the unpushed x0 for
        :func:`~.initial.least_squares_duals` (all multipliers at once; the least-squares
        y where it fails)."""
        o, xp, it, calc = self.opts, self.xp, self.it, self.calc
        if push:
            if bound_push is None:
                bound_push = (o.bound_push, o.bound_frac, o.slack_bound_push,
                              o.slack_bound_frac)
            w = push_into_bounds(self.nlp, host(w0).astype(float), *bound_push)
            it.w[:] = xp.asarray(w)
        else:
            it.w[:] = w0
        it.moved()
        if h_done:
            it.f = self.nlp.f(it.w)
            ok = math.isfinite(it.f) and calc.allfinite(it.h)
        else:
            it.f, ok = calc.eval_zeroth(it.w, it.h)
        if not ok:
            calc.invalid(it.w, "function")
        calc.eval_first_order(it)
        it.zL[:] = o.bound_mult_init_val if zL0 is None else zL0
        it.zU[:] = o.bound_mult_init_val if zU0 is None else zU0
        if zL0 is None and o.bound_mult_init_method == "mu-based":
            sL, sU = calc.slacks(it.w)          # IPOPT: z = mu_init / s
            it.zL[:], it.zU[:] = o.mu_init / sL, o.mu_init / sU
        if y0 is not None:
            it.y[:] = y0
        elif ls_mult and ls_duals_jac is not None and \
                least_squares_duals(self.inertia, calc, it, ls_duals_jac):
            pass        # IPOPT's CalculateLeastSquareDuals: y, zL and zU together
        elif ls_mult and self.m and not self.square:
            it.y[:] = self.least_squares_y()[0]
        elif ls_mult and self.m:
            # IPOPT's least_square_mults: a square problem's multipliers start at zero
            it.y[:] = 0.0

    def resume(self, point) -> None:
        """Continue a run at the start of one of its iterations instead of initializing:
        ``point`` (a :class:`~.resume.ResumePoint`) holds the run's whole state there
        (the iterate with its function values, mu, the filter, the line search's and the
        inertia correction's state, the termination test's objective, the iteration
        count and the log's records so far); :meth:`run` then takes the steps the run
        would have taken.  The evaluation counts are the caller's (the driver's
        counter)."""
        xp, it = self.xp, self.it
        it.w[:] = xp.asarray(point.w)
        it.moved()
        it.y[:], it.zL[:], it.zU[:] = (xp.asarray(point.y), xp.asarray(point.zL),
                                       xp.asarray(point.zU))
        it.f = float(point.f)
        it.h[:], it.gradf[:], it.jv[:] = (xp.asarray(point.h), xp.asarray(point.gradf),
                                          xp.asarray(point.jv))
        self.barrier.mu, self.barrier.tau = point.mu, point.tau
        ls = self.line_search
        flt = ls.filter
        flt.reset()
        flt.theta = [t for t, _ in point.filter_entries]
        flt.phi = [p for _, p in point.filter_entries]
        flt.rejected_by_filter = point.rejected_by_filter
        flt.filter_rejections = point.filter_rejections
        flt.n_resets = point.filter_resets
        ls.theta_min, ls.theta_max = point.theta_min, point.theta_max
        ls.watchdog.last_mu = point.last_mu
        ls.watchdog.shortened = point.shortened
        ls.tiny_step, ls.tiny_last = point.tiny_step, point.tiny_last
        ic = self.inertia
        ic.delta_w_last = point.delta_w_last
        ic.degeneracy.set_state(point.degeneracy)
        ic.eps_restore = point.eps_restore
        ic.eps_before_slow = point.eps_before_slow
        ic.slow_rule_off = point.slow_rule_off
        self.kkt.static_regularization = point.static_regularization
        term = self.termination
        term.last_obj = point.last_obj
        term.acceptable_count = point.acceptable_count
        term.acceptable_point = (None if point.acceptable_point is None else
                                 tuple(xp.asarray(a).copy() for a in point.acceptable_point))
        self.info.take(point.info)
        self.sh.iter = point.iteration
        self.sh.history = point.history         # the solve's list, adopted
        self.sh.n_resto, self.sh.resto_mu_kept = point.n_resto, point.resto_mu_kept
        # this iteration's line handled already (a restoration phase's returned point,
        # printed as its last line, then handed to the kernels and straight back)
        self._unprinted = point.logged > len(point.history)

    def least_squares_y(self, limit=None):
        """``(y, solved)``: the least-squares multipliers at the current iterate
        (:mod:`.initial`), zero above ``limit`` (default constr_mult_init_max) or where
        their system is singular (``solved`` False)."""
        return least_squares_y(self.inertia, self.calc, self.it, self.relaxed_slacks,
                               self.opts.constr_mult_init_max if limit is None else limit)

    # ================================================================ main loop
    def run(self, stop_test=None):
        """Iterate until a termination test fires; returns the status name.
        ``stop_test(it)``: an extra test of the current iterate from the second
        iteration of this run on (the restoration phase's return to the original
        problem); a status it returns ends the run."""
        o, sh, calc = self.opts, self.sh, self.calc
        start_iter = sh.iter
        while True:
            if self._stepped:
                self._stepped = False
                if self.square:
                    try_feasibility_multipliers(self.opts, sh, calc, self.termination,
                                                self.barrier.mu, self._saved_mults,
                                                self.least_squares_y)
            if (self.hand_back_after is not None and sh.iter > self.hand_back_after
                    and kernel_can_go_on(self)):
                # resumed from the kernels, and past what they could not do: theirs again
                raise HandBack(state_point(self))
            unprinted, self._unprinted = self._unprinted, False
            if sh.iter_hook is not None:
                sh.iter_hook(self)
            try:
                e = calc.errors(self.barrier.mu)
            except SolverStop:
                if self._counted_unchecked:
                    # the last step's new point had non-finite derivatives: that step is
                    # not counted, as where they are checked at the step (the host)
                    sh.iter -= 1
                raise
            self._counted_unchecked = False
            ue = calc.unscaled(e)
            self.final_errors = (e, ue)
            st = self._termination(e, ue, stop_test, start_iter)
            # IPOPT's restoration run tests its iterate before the line: a solved
            # restoration problem ends it by an exception (local infeasibility), the line
            # unprinted -- restoration_phase prints it where the phase goes on
            held = self.resto and st in CONVERGED
            self.log_iteration(e, ue, printed=not (unprinted or held))
            self.held_line = sh.history[-1] if held and not unprinted else None
            if st == "User_Requested_Stop":
                raise SolverStop(st)
            if st is not None:
                return st
            self.newton.new_iteration()
            if self.mu_update.update(self.barrier, e, self.line_search.tiny_step, calc,
                                     self.newton):
                self.line_search.filter.reset()
            d = self.compute_direction()
            # the direction's finiteness is read with the search's reference values
            reference = None if d is None else self.line_search.reference(d)
            if isinstance(reference, Direction):
                # the solve's refinement went on past the test read with the reference
                # values: the direction it gave, referenced anew
                d = reference
                reference = self.line_search.reference(d)
            if reference is None:
                calc.settle_now()        # a non-finite Hessian ends the solve first
                if self.resto:
                    raise SolverStop("Restoration_Failed", "step computation failed in "
                                     "the restoration phase")
                if self.m == 0:
                    raise SolverStop("Error_In_Step_Computation",
                                     "the KKT system could not be regularized")
                # IPOPT's emergency mode (ActivateFallbackMechanism): with constraints,
                # a failed step computation sends the iterate to the restoration phase
                self._restore()
                continue
            if o.start_with_resto and not self.resto and sh.iter == 0 and sh.n_resto == 0 \
                    and self.m > 0:
                # IPOPT: after the barrier update and the step, in place of the search
                self.info.alpha_pr, self.info.ls = 0.0, 1
                self._restoration_phase()
                self._unprinted = True
                continue
            if not self.line_search.search(d, reference):
                if self.resto:
                    raise SolverStop("Restoration_Failed", "line search failed in the "
                                     "restoration phase")
                self._line_search_failed()
                continue
            if calc.unread_checks() and (o.recalc_y or self.square or sh.iter_hook is not None
                                         or self.hand_back_after is not None):
                # the new point's derivatives are read with the next norms (the device):
                # what comes before those needs them checked
                calc.settle_now()
            if o.recalc_y and self.m and calc.theta(self.it.h) < o.recalc_y_feas_tol:
                # IPOPT's recalc_y: skipped where the least-squares system is singular
                y, solved = self.least_squares_y(limit=math.inf)
                if solved:
                    self.it.y[:] = y
            sh.iter += 1
            self._stepped = True
            self._counted_unchecked = bool(calc.unread_checks())

    def _termination(self, e, ue, stop_test, start_iter):
        """The status the current iterate (errors ``e``, ``ue``) ends the run with, or
        None: Ctrl-C (where IPOPT asks its intermediate callback), ``stop_test`` (see
        :meth:`run`), the termination tests."""
        sh = self.sh
        if sh.interrupted:
            return "User_Requested_Stop"
        if stop_test is not None and sh.iter > start_iter:
            st = stop_test(self.it)
            if st is not None:
                return st
        return self.termination.check(e, ue, self.it, sh.iter, sh.t0, sh.cpu0)

    def log_held_line(self) -> None:
        """Print the line a solved restoration problem's run held back (:meth:`run`;
        its record is in the history: IPOPT's callback saw the point)."""
        if self.held_line is not None and self.sh.log is not None:
            self.sh.log.iteration(self.held_line)

    def compute_direction(self):
        """The Newton step at the current iterate (:meth:`.newton.IterationKKT.direction`)."""
        # on the device the solve's refinement test is read with the reference values
        return self.newton.direction(deferred=not is_host(self.xp))

    def _line_search_failed(self):
        """IPOPT's fall-backs when the line search (and the soft restoration) found no
        step (BacktrackingLineSearch::FindAcceptableTrialPoint): an acceptable current
        iterate ends Solved_To_Acceptable_Level; at an almost feasible one (theta <=
        1e-2 tol and the user's violation <= 0.1 constr_viol_tol) the restoration phase
        has nothing to do -- the last acceptable iterate is restored
        (Solved_To_Acceptable_Level) or the solve ends Error_In_Step_Computation;
        otherwise the restoration phase runs.  The current iterate is the one the search
        ended at (the watchdog may have restored an earlier one)."""
        o, calc, term = self.opts, self.calc, self.termination
        e = calc.errors(self.barrier.mu)
        ue = calc.unscaled(e)
        if term.acceptable(e, ue, term.obj_change(self.it.f, update=False)):
            self.final_errors = (e, ue)
            raise SolverStop("Solved_To_Acceptable_Level",
                             "restoration phase called at an acceptable point")
        if calc.theta(self.it.h) <= 1e-2 * o.tol and ue["constr"] <= 0.1 * o.constr_viol_tol:
            if self._restore_acceptable_point():
                raise SolverStop("Solved_To_Acceptable_Level",
                                 "restoration phase called at an almost feasible point; "
                                 "the last acceptable iterate restored")
            self.final_errors = (e, ue)
            raise SolverStop("Error_In_Step_Computation",
                             "line search failed at an almost feasible point: no fall-back")
        self._restore()

    def _restore_acceptable_point(self) -> bool:
        """Make the last acceptable iterate (kept by the termination test) the current
        one, with its errors; False when there is none."""
        point = self.termination.acceptable_point
        if point is None:
            return False
        self.it.set_primal_dual(*point)
        self.calc.reevaluate(self.it)
        e = self.calc.errors(self.barrier.mu)
        self.final_errors = (e, self.calc.unscaled(e))
        return True

    def _restoration_phase(self):
        """The restoration phase from iteration k: IPOPT counts the iteration whose
        search failed, so the phase's first line (its starting point) is k + 1 and its
        iterations go on from there; the point it returns is its last line, and the next
        step of this run is the iteration after it."""
        self.sh.iter += 1
        try:
            restoration_phase(opts=self.opts, shared=self.sh, calc=self.calc,
                              filter=self.line_search.filter, info=self.info,
                              make_inner=lambda nlp: InteriorPoint(
                                  nlp, self.sh, resto=True, expect_infeasible=self.square
                                  and self.opts.expect_infeasible_problem),
                              least_squares_y=self.least_squares_y, square=self.square)
        except SolverStop as stop:
            if stop.status == FEASIBLE_POINT:     # its multipliers set: report its errors
                e = self.calc.errors(self.barrier.mu)
                self.final_errors = (e, self.calc.unscaled(e))
            raise

    def _restore(self):
        """Run the restoration phase from the current iterate (it counts its own
        iterations) and restart the line-search safeguards after it."""
        self._restoration_phase()
        self.line_search.reset_safeguards()
        # IPOPT accepts the restoration phase's point as a trial point (and then, for a
        # square problem, tries its feasibility multipliers)
        self._stepped = True
        self._unprinted = True

    # ================================================================ log
    def log_iteration(self, e, ue, printed: bool = True):
        """The iteration's record in the history, and its line in the log when
        ``printed`` (:func:`.log.iteration_record`)."""
        rec = iteration_record(self, e, ue)
        self.sh.history.append(rec)
        if printed and self.sh.log is not None:
            self.sh.log.iteration(rec)
