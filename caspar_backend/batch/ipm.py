"""The lockstep interior point: B instances of one slack problem, one iteration at a
time for all of them (:mod:`caspar_backend.solver.ipm` with a leading batch axis).

Every vector of the single method carries a leading batch axis and every scalar is a
(B,) array: the barrier parameter ``mu`` and ``tau``, the filters, ``theta_min`` /
``theta_max``, the inertia-correction state (``delta_w``, ``delta_c``,
``delta_w_last``, whether delta_c is in use), the termination counters.  One iteration:

1. the errors and the termination tests of every running instance (IPOPT's statuses);
2. the monotone barrier update (several decreases per iteration, per instance);
3. the Newton step: the KKT systems assembled and factorized together; Algorithm IC
   refactorizes only the instances whose inertia was wrong, with their own delta_w;
   one refined solve (:class:`~.kkt.BatchAugmentedKKT`);
4. the filter line search (:class:`~.linesearch.BatchLineSearch`), one batched trial
   evaluation per backtracking round, then one batched derivative evaluation.

Instances that finish keep their iterate (updates are masked); the arithmetic of each
instance is the single method's, so a lockstep instance takes the iterations of its own
single solve.  Paths the lockstep method does not implement make an instance leave the
batch (:class:`~.state.Fates`); :mod:`.solve` then runs its single solve from the start.
The host reads what the algorithm branches on: a few reductions over the batch per
iteration (any instance left? any inertia wrong?).
"""

from __future__ import annotations

import time

import numpy as np

from ..arrays import host
from ..compiled.deadline import WATCHED_MAX
from ..solver.inertia import PIVOTING_SWITCH_DELTA_W, RESIDUAL_RATIO_SINGULAR, \
    SLOW_REFINEMENT_EPS_FLOOR
from ..solver.initial import pushed
from ..solver.status import STATUSES
from .kkt import BatchAugmentedKKT
from .linesearch import BatchLineSearch
from .quantities import BatchQuantities
from .state import BatchFilter, BatchIterate, Fates

#: statuses a lockstep instance can end with
STATUS_NAMES = tuple(STATUSES)


class LockstepIPM:
    """Final.  ``nlp``: a :class:`~.nlp.BatchSlackNLP`; ``make_ldl(structure, B, xp)``
    the batched factorization."""

    #: the arrays are compacted to the running instances when at most this fraction of
    #: their rows still runs (a batch's slowest instances then iterate alone)
    COMPACT_FRACTION = 0.5
    #: ... and when it drops at least this many rows (rebuilding the evaluator and the
    #: factorization for a new size costs about as much as a few iterations of a
    #: small batch)
    COMPACT_MIN_DROP = 256
    #: on the GPU an iteration costs about the same for any number of rows (launches,
    #: not arithmetic, set its time), so the arrays are not compacted there; once the
    #: running instances' factorization work (rows x (N + nnz(L))) is at most this, they
    #: move to the host, where a few instances iterate in a fraction of a GPU
    #: iteration's time (measured: IK, ~50 ms per GPU iteration at any B <= 10^5 against
    #: ~3 ms + 14 us per instance on the host)
    HOST_TAIL_WORK = 40_000

    def __init__(self, nlp, opts, make_ldl, make_evaluator):
        self.nlp, self.opts = nlp, opts
        self.make_evaluator = make_evaluator
        xp = self.xp = nlp.xp
        B = self.B = nlp.B
        self.nw, self.m = nlp.nw, nlp.m
        self.calc = BatchQuantities(nlp, opts)
        c = self.calc
        self.it = BatchIterate.zeros(xp, B, nlp.nw, nlp.m, c.nL, c.nU, len(nlp.jac_rows))
        self.kkt = BatchAugmentedKKT(B, nlp.nw, nlp.m, nlp.hess_rows, nlp.hess_cols,
                                     nlp.jac_rows, nlp.jac_cols, make_ldl, xp,
                                     opts.max_refinement_steps, opts.residual_ratio_max,
                                     opts.kkt_static_regularization)
        # a factorization that pivots takes no static term unless the user set one (the
        # single path's rule, solver/ipm.py)
        if self.kkt.ldl.pivots and "kkt_static_regularization" not in opts.user:
            self.kkt.static_regularization = 0.0
        self.mu = xp.full(B, float(opts.mu_init))
        self.tau = xp.full(B, max(opts.tau_min, 1.0 - opts.mu_init))
        self.filter = BatchFilter(xp, B)
        self.line_search = BatchLineSearch(self)
        self.delta_w_last = xp.zeros(B)
        self.acceptable_count = xp.zeros(B, np.int64)
        self.last_obj = xp.full(B, np.nan)
        self.fates = Fates(B, STATUS_NAMES)
        self.rows = np.arange(B)        # the instance (fates' numbering) of each row
        # the end points of the instances that finished in lockstep (host, by instance)
        self.final = dict(W=np.zeros((B, nlp.nw)), Y=np.zeros((B, nlp.m)),
                          ZL=np.zeros((B, c.nL)), ZU=np.zeros((B, c.nU)))
        self.needs_first_order = xp.zeros(B, bool)
        self.iteration = 0
        #: ``interrupt.interrupted`` becomes True on Ctrl-C (:mod:`.solve`); read once
        #: per iteration
        self.interrupt = None

    # ================================================================ bookkeeping
    def _instances(self, mask):
        """A bool mask over the run's instances from one over the rows (xp or host)."""
        out = np.zeros(len(self.fates.running), bool)
        out[self.rows[host(mask)]] = True
        return out

    def leave(self, mask, reason):
        """The instances of the rows ``mask`` (xp or host bool) leave the batch."""
        mask = host(mask)
        if mask.any():
            self.fates.leave(self._instances(mask), reason)

    def finish(self, mask, status):
        mask = host(mask)
        if mask.any():
            self.fates.finish(self._instances(mask), status, self.iteration)

    def running_host(self):
        """Host bool over the rows: the row's instance still runs."""
        return self.fates.running[self.rows]

    def running(self):
        return self.xp.asarray(self.running_host())

    def _store_finished(self, rows_mask):
        """Keep the end points of the rows ``rows_mask`` (host bool) whose instance
        finished in lockstep."""
        sel = host(rows_mask) & (self.fates.status[self.rows] >= 0)
        if sel.any():
            inst = self.rows[sel]
            it = self.it
            for name in self.final:
                self.final[name][inst] = host(getattr(it, name)[self.xp.asarray(
                    np.flatnonzero(sel))])

    def _compact(self, keep, to_host=False):
        """Keep only the rows ``keep`` (host int64: those of running instances) in every
        per-instance array (the finished ones' end points are stored first); with
        ``to_host`` the arrays, evaluator and factorization move to the host (NumPy)."""
        self._store_finished(~self.running_host())
        rows = self.xp.asarray(keep)
        xp = np if to_host else self.xp
        move = (lambda a: np.asarray(host(a))) if to_host else (lambda a: a)
        self.nlp = self.nlp.take(keep, self.make_evaluator, "cpu" if to_host else None)
        self.B = len(keep)
        self.calc = BatchQuantities(self.nlp, self.opts)
        self.kkt = self.kkt.resized(self.B, xp)
        self.it = BatchIterate(*(move(a) for a in vars(self.it.take(rows)).values()))
        self.filter.keep(rows, move, xp)
        self.line_search.keep(rows, move, xp)
        for name in ("mu", "tau", "delta_w_last", "acceptable_count",
                     "last_obj", "needs_first_order"):
            setattr(self, name, move(getattr(self, name)[rows]))
        self.rows = self.rows[keep]
        self.xp = xp

    def _first_order(self, mask):
        """Gradient and Jacobian at the moved instances' points (one evaluation of the
        batch); a NaN or Inf makes the instance leave."""
        xp, it = self.xp, self.it
        G, JV = xp.empty_like(it.G), xp.empty_like(it.JV)
        self.nlp.first(it.W, G, JV)
        ok = xp.all(xp.isfinite(G), axis=1) & xp.all(xp.isfinite(JV), axis=1)
        take = mask & ok
        it.G[...] = xp.where(take[:, None], G, it.G)
        it.JV[...] = xp.where(take[:, None], JV, it.JV)
        self.leave(mask & ~ok, "invalid number in a derivative")

    # ================================================================ start
    def initialize(self):
        """The starting iterates of the instances (IPOPT's
        DefaultIterateInitializer::SetInitialIterates, per instance as
        :func:`caspar_backend.solver.initial.default_start`): x = pushed(x0) (bound_push,
        bound_frac), s = pushed(d(x)) (slack_bound_push, slack_bound_frac) with d(x) =
        dc_I g_I(x) at the pushed x, from the one evaluation of f and g that is also
        the first iterate's (h = d(x) - s on the slack rows); z =
        bound_mult_init_val, the least-squares y."""
        o, xp, it, nlp = self.opts, self.xp, self.it, self.nlp
        nx = nlp.nx
        wL, wU = host(nlp.wL), host(nlp.wU)
        W = nlp.initial_w()
        W[:, :nx] = xp.asarray(pushed(host(W[:, :nx]).astype(float), wL[:, :nx],
                                      wU[:, :nx], o.bound_push, o.bound_frac))
        nlp.zeroth(W, it.F, it.H)
        if nlp.ns:
            rows = nlp.slack_rows_d
            d = host(it.H[:, rows]).astype(float)
            W[:, nx:] = xp.asarray(pushed(d, wL[:, nx:], wU[:, nx:], o.slack_bound_push,
                                          o.slack_bound_frac))
            it.H[:, rows] -= W[:, nx:]
        it.W[...] = W
        ok = xp.isfinite(it.F) & xp.all(xp.isfinite(it.H), axis=1)
        self.leave(~ok, "invalid number at the starting point")
        self._first_order(xp.ones(self.B, bool))
        it.ZL.fill(o.bound_mult_init_val)
        it.ZU.fill(o.bound_mult_init_val)
        if self.m:
            self._least_squares_y()
        self.line_search.start(xp.sum(xp.abs(it.H), axis=1))

    def _least_squares_y(self):
        """:func:`caspar_backend.solver.initial.least_squares_y` per instance."""
        xp, it, k, o = self.xp, self.it, self.kkt, self.opts
        rd = it.G.copy()
        rd[:, self.calc.iL] -= it.ZL
        rd[:, self.calc.iU] += it.ZU
        k.hess_values.fill(0.0)
        k.jac_values[...] = it.JV
        k.sigma.fill(0.0)
        k.delta_w.fill(1.0)
        k.delta_c.fill(0.0)
        k.build()
        ok, _, _ = k.factorize()
        y = xp.zeros((self.B, self.m))
        zero_rhs = xp.zeros((self.B, self.m))
        if bool(ok.any()):
            _, y1, _, _ = k.solve(-rd, zero_rhs, rows=ok)
            y = xp.where(ok[:, None], y1, y)
        # (a singular system leaves y = 0: IPOPT's, as the single path's least_squares_y)
        with np.errstate(all="ignore"):
            ymax = xp.max(xp.abs(y), axis=1)
        keep = xp.isfinite(ymax) & (ymax <= o.constr_mult_init_max)
        it.Y[...] = xp.where(keep[:, None], y, 0.0)

    # ================================================================ main loop
    def run(self, t0):
        """Iterate until every instance has finished or left the batch."""
        # (the process's CPU clock costs up to ms while parallel threads wind down: read
        # only for a limit that can pass, as the kernels' deadline.WATCHED_MAX)
        cpu0 = time.process_time() if self.opts.max_cpu_time < WATCHED_MAX else None
        while self.fates.running.any():
            run = self.running()
            e = self.calc.errors(self.it, self.mu)
            if self.interrupt is not None and self.interrupt.interrupted:
                self.finish(run, "User_Requested_Stop")
                break
            self._terminate(e, run, t0, cpu0)
            n_run = int(self.running_host().sum())
            if n_run == 0:
                break
            keep = None
            if self.xp is np:
                if (n_run <= self.COMPACT_FRACTION * self.B
                        and self.B - n_run >= self.COMPACT_MIN_DROP):
                    keep = np.flatnonzero(self.running_host())
                    self._compact(keep)
            elif n_run * (self.kkt.N + self.kkt.ldl.nnz_l) <= self.HOST_TAIL_WORK:
                keep = np.flatnonzero(self.running_host())
                e = {k: host(v) for k, v in e.items()}
                self._compact(keep, to_host=True)
            if keep is not None:
                e = {k: v[self.xp.asarray(keep)] for k, v in e.items()}
            run = self.running()
            if self._mu_update(e, run):
                run = self.running()
            d = self._direction(run)
            run = self.running()
            if not bool(run.any()):
                break
            self.needs_first_order.fill(False)
            self.line_search.search(d, host(run))
            self._first_order(self.needs_first_order & self.running())
            self.iteration += 1
        self.store_finished_all()

    def store_finished_all(self):
        """Keep the end points of every row whose instance finished in lockstep."""
        self._store_finished(np.ones(self.B, bool))

    def _terminate(self, e, run, t0, cpu0):
        """Termination.check per instance, in its order."""
        o, xp, it, k = self.opts, self.xp, self.it, self.iteration
        done = run & (e["E0"] <= o.tol) & (e["udual"] <= o.dual_inf_tol) & \
            (e["uconstr"] <= o.constr_viol_tol) & (e["ucompl"] <= o.compl_inf_tol)
        self.finish(done, "Solve_Succeeded")
        rest = run & ~done
        prev = self.last_obj.copy()
        self.last_obj[...] = xp.where(rest, it.F, self.last_obj)
        with np.errstate(all="ignore"):
            objchg = xp.where(xp.isnan(prev), np.inf,
                              xp.abs(it.F - prev) / xp.maximum(1.0, xp.abs(it.F)))
        acc = rest & (o.acceptable_iter > 0) & (e["E0"] <= o.acceptable_tol) & \
            (e["udual"] <= o.acceptable_dual_inf_tol) & \
            (e["uconstr"] <= o.acceptable_constr_viol_tol) & \
            (e["ucompl"] <= o.acceptable_compl_inf_tol) & (objchg <= o.acceptable_obj_change_tol)
        self.acceptable_count[...] = xp.where(acc, self.acceptable_count + 1,
                                              xp.where(rest, 0, self.acceptable_count))
        self.finish(acc & (self.acceptable_count >= o.acceptable_iter),
                    "Solved_To_Acceptable_Level")
        self.finish(rest & (e["wmax"] > o.diverging_iterates_tol), "Diverging_Iterates")
        if k >= o.max_iter:
            self.finish(self.running_host(), "Maximum_Iterations_Exceeded")
        if time.perf_counter() - t0 > o.max_wall_time:
            self.finish(self.running_host(), "Maximum_WallTime_Exceeded")
        if cpu0 is not None and time.process_time() - cpu0 > o.max_cpu_time:
            self.finish(self.running_host(), "Maximum_CpuTime_Exceeded")

    def _mu_update(self, e, run) -> bool:
        """MuUpdate._monotone per instance; resets the filters of the instances whose mu
        changed.  An instance whose flagged tiny step finds mu at its floor ends with
        Search_Direction_Becomes_Too_Small; returns whether one did."""
        o, xp = self.opts, self.xp
        floor = xp.minimum(o.tol, o.compl_inf_tol * self.nlp.df_d) / (o.barrier_tol_factor + 1.0)
        tiny = self.line_search.tiny_step & run
        changed = xp.zeros(self.B, bool)
        stop = xp.zeros(self.B, bool)
        active = run.copy()
        first = True
        while bool(active.any()):
            if not first:
                e = self.calc.errors(self.it, self.mu)
            first = False
            dec = active & ((e["Emu"] <= o.barrier_tol_factor * self.mu) | tiny)
            new_mu = xp.maximum(floor, xp.minimum(o.mu_linear_decrease_factor * self.mu,
                                                  self.mu ** o.mu_superlinear_decrease_power))
            same = dec & (new_mu == self.mu)
            stop |= same & tiny
            dec &= ~same
            self.mu[...] = xp.where(dec, new_mu, self.mu)
            self.tau[...] = xp.where(dec, xp.maximum(o.tau_min, 1.0 - self.mu), self.tau)
            changed |= dec
            active = dec
            tiny = xp.zeros_like(tiny)   # the tiny step's decrease is one; then the test's
        if bool(changed.any()):
            self.filter.reset(changed)
        if bool(stop.any()):
            self.finish(stop, "Search_Direction_Becomes_Too_Small")
            return True
        return False

    # ================================================================ the step
    def _direction(self, run):
        """The Newton steps of the running instances (dict of (B, .) arrays), Algorithm
        IC per instance; instances without a usable step leave the batch."""
        o, xp, it, k, calc = self.opts, self.xp, self.it, self.kkt, self.calc
        sL, sU = calc.slacks(it.W)
        k.sigma.fill(0.0)
        k.sigma[:, calc.iL] += it.ZL / sL
        k.sigma[:, calc.iU] += it.ZU / sU
        k.jac_values[...] = it.JV
        self.nlp.hess(it.W, it.Y, xp.ones(self.B), k.hess_values)
        self.leave(run & ~xp.all(xp.isfinite(k.hess_values), axis=1),
                   "invalid number in a derivative")
        gphi = calc.grad_phi(it.G, sL, sU, self.mu)
        rhs_w = -(gphi + calc.Aty(it.JV, it.Y))
        rhs_c = -it.H
        self._factorize_with_inertia_correction()
        run = self.running()
        dW, dY, ratio, rho = k.solve(rhs_w, rhs_c, rows=run)
        eps = k.static_regularization
        slow = (rho > o.refinement_contraction_max) & (eps > SLOW_REFINEMENT_EPS_FLOOR) & \
            (ratio <= RESIDUAL_RATIO_SINGULAR)
        self.leave(run & (slow | (ratio > RESIDUAL_RATIO_SINGULAR) | ~xp.isfinite(ratio)),
                   "iterative refinement fall-back")
        run = self.running()
        fin = xp.all(xp.isfinite(dW), axis=1) & xp.all(xp.isfinite(dY), axis=1)
        self.leave(run & ~fin, "step not finite")
        dzL, dzU = calc.bound_multiplier_steps(dW, it.ZL, it.ZU, sL, sU, self.mu)
        return dict(dW=dW, dY=dY, dzL=dzL, dzU=dzU, gphi=gphi, rhs_w=rhs_w)

    def _delta_c(self):
        o = self.opts
        return o.jacobian_regularization_value * self.mu ** o.jacobian_regularization_exponent

    def _factorize_with_inertia_correction(self):
        """InertiaCorrector.regularize_and_factorize per instance, for the instances whose
        matrices are never singular: after the first iteration's (or any wrong
        inertia's) matrix the single path's degeneracy test has both blocks not
        degenerate, and a wrong inertia only raises delta_w (solver/perturbation.py).
        An instance whose matrix is singular leaves the batch (the single path's
        degeneracy test and stabler factorizations), as do those of the paths that
        switch to a pivoting factorization."""
        o, xp, k = self.opts, self.xp, self.kkt
        run = self.running()
        k.delta_w.fill(0.0)
        k.delta_c.fill(0.0)
        k.build()
        ok, singular, failed = k.factorize()
        need = run & ~ok
        self.leave(need & failed, "pivoting switch of the inertia correction")
        need &= self.running()
        self.leave(need & singular, "singular KKT matrix (degeneracy test)")
        need &= self.running()
        if not bool(need.any()):
            return
        dwl = self.delta_w_last
        k.delta_w[...] = xp.where(need, xp.where(dwl == 0.0, o.first_hessian_perturbation,
                                                 xp.maximum(o.min_hessian_perturbation,
                                                            o.perturb_dec_fact * dwl)), 0.0)
        while True:
            k.build()
            ok, singular, failed = k.factorize(xp.flatnonzero(need))
            good = need & ok
            self.delta_w_last[...] = xp.where(good, k.delta_w, self.delta_w_last)
            need &= ~ok
            if not bool(need.any()):
                return
            self.leave(need & singular, "singular KKT matrix (degeneracy test)")
            need &= self.running()
            # where the single path may switch to a pivoting factorization (whether it
            # has one depends on N, the device and MKL): the instance leaves
            switch = need & (failed | (k.delta_w > PIVOTING_SWITCH_DELTA_W))
            self.leave(switch, "pivoting switch of the inertia correction")
            need &= ~switch
            dwl = self.delta_w_last
            k.delta_w[...] = xp.where(need, k.delta_w * xp.where(
                (dwl == 0.0) | (1e5 * dwl < k.delta_w), o.perturb_inc_fact_first,
                o.perturb_inc_fact), k.delta_w)
            over = need & (k.delta_w > o.max_hessian_perturbation)
            self.leave(over, "no regularization gave the right inertia")
            need &= ~over
            if not bool(need.any()):
                return
