"""The primal-dual interior-point iteration (Waechter & Biegler 2006, IPOPT's algorithm).

It solves a :class:`~caspar_backend.solver.nlp.BarrierNLP`

    min f(w)  s.t.  h(w) = 0,  wL <= w <= wU

through the barrier problems

    min phi_mu(w) = f(w) - mu sum_{i in L} ln(w_i - wL_i) - mu sum_{i in U} ln(wU_i - w_i)
                    + kappa_d mu (sum_{L only} (w_i - wL_i) + sum_{U only} (wU_i - w_i))
    s.t. h(w) = 0

for a decreasing sequence mu.  Iterates: primal ``w`` (nw), constraint multipliers ``y``
(m, Lagrangian ``L = f + y^T h - zL^T (w - wL)_L + zU^T (w - wU)_U``), bound multipliers
``zL`` / ``zU`` over the index sets ``iL`` / ``iU`` of finite bounds (int64 arrays).

Each iteration: convergence test (scaled overall NLP error E_0 with s_d, s_c, plus the
unscaled tolerances), barrier update (:mod:`.mu`), Newton step from the KKT system with
inertia correction (delta_w, delta_c), fraction-to-the-boundary, filter line search with
second-order corrections (:mod:`.linesearch`), restoration phase if the line search fails
(:mod:`.restoration`).  The same class runs the restoration problem, recursively.

Arrays: every vector lives in the NLP's array module ``xp`` (numpy, or cupy with a CUDA
evaluator and the cuDSS solver); the index sets ``iL``/``iU`` and the damping index
sets are device int64 arrays; the host sees only the scalars the algorithm branches on
(norms, step sizes, filter values), read in batches through
:func:`~caspar_backend.arrays.scalars`.  Work arrays are allocated in ``__init__``;
an iteration allocates no array of the size of the Jacobian or Hessian (vector-sized
temporaries come from CuPy's memory pool and go back to it).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..kkt import make_kkt_system
from ..arrays import fused
from ..arrays import (amax_abs, errstate, host, is_host, scalars, segment_sum,
                          synchronize)
from ..errors import OptionError
from ..linsolve import make_linear_solver
from .filter import Filter
from .watchdog import Watchdog

_EPS = np.finfo(float).eps
#: relative KKT residual (after refinement) above which a solve counts as failed
#: (IPOPT's residual_ratio_singular role; caspar's ratio is ||K x - b||_inf / ||b||_inf)
RESIDUAL_RATIO_SINGULAR = 1e-6
#: delta_w above which a wrong inertia is taken as the non-pivoting factorization's error
#: rather than missing curvature: the factorization is switched to its pivoting mode
#: where it has one (a small system: dense Bunch-Kaufman) and the inertia retried.
#: IPOPT (MUMPS, exact inertia) stays below 1e4 on CasADi's race-car OCP, where qdldl's
#: inertia after element growth drove delta_w to 1e12 and 197 iterations (IPOPT's 35)
PIVOTING_SWITCH_DELTA_W = 1e6
#: the smallest static term a slow (not failed) refinement lowers it to
SLOW_REFINEMENT_EPS_FLOOR = 1e-12
#: barrier-term stand-in that holds the slack of a relaxed equality in place in the
#: least-squares multiplier estimate (its step is O(1/weight)), so that the estimate is
#: the equality's, as without relaxation, up to ~1e-8 relative; the resulting D = 1e8
#: of the condensed system is within what its factorization resolves
RELAXED_SLACK_LS_WEIGHT = 1e8


class SolverStop(Exception):
    """Raised internally to end the solve with a status."""

    def __init__(self, status, message=""):
        super().__init__(status)
        self.status, self.message = status, message


class Shared:
    """State shared by an interior-point run and its nested restoration runs."""

    def __init__(self, opts, counter, log, t0):
        self.opts, self.counter, self.log, self.t0 = opts, counter, log, t0
        self.iter = 0
        self.t_factor = 0.0
        self.t_build = 0.0
        self.t_solve = 0.0
        self.linear_solver = opts.linear_solver
        self.iter_hook = None          # called with the InteriorPoint once per iteration
        self.history = []
        self.n_resto = 0
        # IPOPT's first_iter_resto_: the first mu update of the solve's first restoration
        # phase keeps mu (MonotoneMuUpdate, set once when the restoration is initialized)
        self.resto_mu_kept = False


class InteriorPoint:
    """Final.  ``resto=True`` marks the restoration phase (log tag 'r', no nested
    restoration)."""

    def __init__(self, nlp, shared: Shared, resto=False):
        from .lbfgs import LBFGS

        self.nlp, self.sh, self.opts, self.resto = nlp, shared, shared.opts, resto
        o = self.opts
        xp = self.xp = getattr(nlp, "xp", np)
        nw, m = self.nw, self.m = nlp.nw, nlp.m
        wL, wU = host(nlp.wL), host(nlp.wU)
        iL, iU = np.flatnonzero(np.isfinite(wL)), np.flatnonzero(np.isfinite(wU))
        self.iL, self.iU = xp.asarray(iL), xp.asarray(iU)
        self.nL, self.nU = len(iL), len(iU)
        dampL, dampU = ~np.isfinite(wU[iL]), ~np.isfinite(wL[iU])
        # 0/1 floats (kd * damp as with the booleans) and the index sets (gathers, not
        # boolean masks: a mask's size is data-dependent, which costs a device sync)
        self.dampL, self.dampU = xp.asarray(dampL.astype(float)), xp.asarray(dampU.astype(float))
        self.idampL = xp.asarray(np.flatnonzero(dampL))
        self.idampU = xp.asarray(np.flatnonzero(dampU))
        self.wLL, self.wUU = nlp.wL[self.iL], nlp.wU[self.iU]
        # IPOPT's safe slacks (CalculateSafeSlack) in every slack from the first one lost
        # to rounding on (see phi); off until then, so that no solve pays for them
        self.safe_slack_mode = False
        self.relaxed_slacks = xp.asarray(nlp.relaxed_equality_slacks)
        self.lbfgs = None
        nlow = 0
        if o.hessian_approximation == "limited-memory":
            self.lbfgs = LBFGS(nlp.nx, o.limited_memory_max_history,
                               o.limited_memory_max_skipping, xp=xp)
            nlow = 2 * o.limited_memory_max_history
        # the restoration problem keeps the slack structure of the problem it restores
        # (its p and n columns are elastic columns of the condensed system), so it runs
        # on the same kind of KKT system
        self.kkt = make_kkt_system(o.kkt_system, nlp,
                                   make_linear_solver(shared.linear_solver, xp), xp,
                                   n_lowrank=nlow, max_refinement_steps=o.max_refinement_steps,
                                   residual_ratio_max=o.residual_ratio_max,
                                   static_regularization=o.kkt_static_regularization)
        if o.inertia_correction_method == "inertia-free":
            if self.kkt.name != "augmented" or self.lbfgs is not None:
                raise OptionError("inertia_correction_method 'inertia-free' needs "
                                  "kkt_system 'augmented' and the exact Hessian")
            self.kkt.check_inertia = False
            self._zero_w = xp.zeros(nw)
        jr, jc = np.asarray(nlp.jac_rows, np.int64), np.asarray(nlp.jac_cols, np.int64)
        self.jr, self.nnz_j = xp.asarray(jr), len(jr)
        # A^T y = segment sum over the Jacobian columns of jv * y[jr]
        self._aty_sum = segment_sum(xp, jc, nw)
        self._jt = xp.zeros(len(jr))        # jv * y[jr]
        self._aty = xp.zeros(nw)
        # iterate and its function values, preallocated
        self.w, self.y = xp.zeros(nw), xp.zeros(m)
        # the current iterate's slacks, formed once per iterate (:meth:`slacks`); every
        # write to self.w calls :meth:`iterate_moved`
        self._w_version = 0
        self._slack_cache = None
        self.zL, self.zU = xp.zeros(self.nL), xp.zeros(self.nU)
        self.gradf, self.hv = xp.zeros(nw), xp.zeros(m)
        self.jv = xp.zeros(len(jr))
        self.f = 0.0
        # trial buffers (line search)
        self.w_t, self.h_t = xp.zeros(nw), xp.zeros(m)
        # finiteness checks without a temporary of the Jacobian's/Hessian's size
        self._fin = xp.zeros(max(len(jr), len(nlp.hess_rows), nw, m, 1), dtype=bool)
        self.filter = Filter()
        self.mu = o.mu_init
        self.tau = max(o.tau_min, 1.0 - self.mu)
        self.delta_w_last = 0.0
        # delta_c from the first factorization on where the KKT system asks for it
        self.delta_c_used = self.kkt.regularize_constraints_always
        self.eps_restore = None     # static regularization to restore next iteration
        # the static term before a slow refinement lowered it (None: not lowered), and
        # whether lowering for slowness is off for the rest of the solve (it once led to
        # a failed refinement)
        self.eps_before_slow = None
        self.slow_rule_off = False
        self.tiny_step_last = False
        self.watchdog = Watchdog()
        self.soft_resto = False        # in IPOPT's soft restoration phase (linesearch.py)
        self.soft_resto_count = 0
        self.acceptable_count = 0
        self.acceptable_point = None   # (w, y, zL, zU) of the latest acceptable iterate
        self.last_obj = None
        self.prev_obj = None
        self.stop_hook = None          # restoration's convergence test
        self.mu_state = None           # adaptive mu bookkeeping (mu.py)
        self.info = dict(alpha_du=0.0, alpha_pr=0.0, ls=0, d_norm=0.0, delta_w=0.0,
                         tag=" ")

    # ================================================================ vector helpers
    def slacks(self, w):
        """(w[iL] - wL, wU - w[iU]), IPOPT's safe slacks in safe-slack mode; new arrays
        that callers do not modify.  Those of the current iterate are formed once (on the
        device each is four launches, and an iteration asks ~7 times)."""
        current = w is self.w and not self.safe_slack_mode
        c = self._slack_cache           # (version, w, (sL, sU))
        if current and c is not None and c[0] == self._w_version and c[1] is w:
            return c[2]
        xp = self.xp
        sL = fused.call(xp, "gather_slack", w, self.iL, self.wLL, 1.0)
        sU = fused.call(xp, "gather_slack", w, self.iU, self.wUU, -1.0)
        if self.safe_slack_mode:
            return self.safe_slacks(sL, sU)
        if current:
            self._slack_cache = (self._w_version, w, (sL, sU))
        return sL, sU

    def iterate_moved(self):
        """self.w was written: its slacks are formed anew."""
        self._w_version += 1

    def Aty(self, jv, y, out=None):
        """A^T y with A in COO (jr, jc, jv), into ``out`` (default: a work vector that the
        next call overwrites)."""
        xp = self.xp
        if not self.nnz_j:            # no Jacobian entry (m = 0): nothing to gather
            out = self._aty if out is None else out
            out[:] = 0.0
            return out
        xp.take(y, self.jr, out=self._jt)
        xp.multiply(jv, self._jt, out=self._jt)
        return self._aty_sum(self._jt, self._aty if out is None else out)

    def allfinite(self, *vs) -> bool:
        """Every entry of the arrays ``vs`` finite, with one host read for all of them
        (on the device each read synchronizes; the reductions queue in stream order, so
        the shared buffer is read before the next array overwrites it)."""
        ok = None
        for v in vs:
            ok = self._finite_flag(v) if ok is None else ok & self._finite_flag(v)
        return bool(ok)

    def _finite_flag(self, v):
        """All of ``v`` finite, as a 0-d device bool (not read back)."""
        if not is_host(self.xp):
            return fused.call(self.xp, "all_finite", v)
        buf = self._fin[:v.size]
        self.xp.isfinite(v, out=buf)
        return buf.all()

    def theta(self, h):
        return scalars(self.xp, self.xp.sum(self.xp.abs(h)))[0]

    def phi(self, w, f, mu=None, sums=None):
        """The barrier function at ``w`` (objective value ``f``); ``sums``: the
        :meth:`_barrier_terms` at ``w``, already read back."""
        mu = self.mu if mu is None else mu
        smin, lL, lU, dL, dU = self._barrier_sums(w) if sums is None else sums
        if smin < self.safe_slack_min() and self.opts.slack_move > 0 \
                and not self.safe_slack_mode:
            # a slack lost to rounding (w agrees with its bound to machine precision,
            # a bound of magnitude 1e8 resolves slacks of 1.5e-8 only): IPOPT's safe
            # slacks from now on, wherever slacks are formed
            self.safe_slack_mode = True
            smin, lL, lU, dL, dU = self._barrier_sums(w)
        if not smin > 0:
            return math.inf
        kd = self.opts.kappa_d * mu
        return (f - mu * (lL + lU)) + kd * (dL + dU)

    def _barrier_sums(self, w):
        """(smallest slack, sum log sL, sum log sU, damped sums of sL and sU) at ``w``,
        with one transfer."""
        return scalars(self.xp, *self._barrier_terms(w))

    def _barrier_terms(self, w):
        """The five :meth:`_barrier_sums` as 0-d arrays, not read back."""
        xp = self.xp
        sL, sU = self.slacks(w)
        with errstate(xp):
            return [_min_pos(xp, sL, sU), fused.call(xp, "sum_log", sL),
                    fused.call(xp, "sum_log", sU),
                    xp.sum(sL[self.idampL]), xp.sum(sU[self.idampU])]

    def trial_point(self, w, hout):
        """``(f, ok, theta, phi)`` at ``w`` (the constraints into ``hout``): as
        :meth:`eval_zeroth`, :meth:`theta` and :meth:`phi` one after the other, with one
        host read for the finiteness of h, theta and the barrier sums (the objective is
        read by the evaluator).  ``theta`` and ``phi`` are meaningless when not ``ok``."""
        xp = self.xp
        f = self.nlp.f(w)
        self.nlp.h(w, hout)
        fin, theta, *sums = scalars(xp, self._finite_flag(hout), xp.sum(xp.abs(hout)),
                                    *self._barrier_terms(w))
        if not (math.isfinite(f) and fin):
            return f, False, math.nan, math.nan
        return f, True, theta, self.phi(w, f, sums=sums)

    def safe_slack_min(self) -> float:
        return _EPS * min(1.0, self.mu)

    def safe_slacks(self, sL, sU):
        """IPOPT's CalculateSafeSlack: a slack s below s_min = eps min(1, mu) is replaced
        by min(max(mu / z, s_min), max(s, 0) + slack_move max(1, |bound|)) (z its bound
        multiplier at the current iterate), the others kept; new arrays.  IPOPT also moves
        the bound to match; a bound of magnitude 1e8 cannot hold a slack of 1e-9 that
        way, so the slacks are corrected wherever they are formed instead."""
        xp, mu, smin = self.xp, self.mu, self.safe_slack_min()
        move = self.opts.slack_move
        out = []
        with errstate(xp):
            for s, z, b in ((sL, self.zL, self.wLL), (sU, self.zU, self.wUU)):
                pos = xp.maximum(s, 0.0)
                new = xp.minimum(xp.maximum(mu / z, smin),
                                 pos + move * xp.maximum(1.0, xp.abs(b)))
                out.append(xp.where(s < smin, new, s))
        return out

    def grad_phi(self):
        sL, sU = self.slacks(self.w)
        g = self.gradf.copy()  # vector-sized; kept by the direction
        kd = self.opts.kappa_d * self.mu
        xp = self.xp
        fused.call(xp, "add_barrier", self.iL, -self.mu, sL, kd, self.dampL, g)
        fused.call(xp, "add_barrier", self.iU, self.mu, sU, -kd, self.dampU, g)
        return g

    # ================================================================ evaluations
    def eval_first_order(self, w):
        """f, h at w are current; evaluate grad and Jacobian (raise on NaN/Inf)."""
        self.nlp.grad(w, self.gradf)
        self.nlp.jac(w, self.jv)
        if not self.allfinite(self.gradf, self.jv):
            self.invalid(w, "derivative")

    def eval_zeroth(self, w, hout):
        f = self.nlp.f(w)
        self.nlp.h(w, hout)
        ok = math.isfinite(f) and self.allfinite(hout)
        return f, ok

    def invalid(self, w, what):
        desc = self.nlp.describe_nonfinite(w)
        msg = f"NaN or Inf in a {what} evaluation"
        raise SolverStop("Invalid_Number_Detected", msg + (f": {desc}" if desc else ""))

    # ================================================================ initialisation
    def push_into_bounds(self, w, kappa1, kappa2, slack_kappa1, slack_kappa2):
        """Once per solve, on the host (NumPy in, NumPy out)."""
        wL, wU, nx = host(self.nlp.wL), host(self.nlp.wU), self.nlp.nx
        k1 = np.full(self.nw, kappa1)
        k2 = np.full(self.nw, kappa2)
        k1[nx:], k2[nx:] = slack_kappa1, slack_kappa2
        with np.errstate(invalid="ignore"):
            pL = np.where(np.isfinite(wU), np.minimum(k1 * np.maximum(1, np.abs(wL)),
                                                      k2 * (wU - wL)),
                          k1 * np.maximum(1, np.abs(wL)))
            pU = np.where(np.isfinite(wL), np.minimum(k1 * np.maximum(1, np.abs(wU)),
                                                      k2 * (wU - wL)),
                          k1 * np.maximum(1, np.abs(wU)))
            lo = np.where(np.isfinite(wL), wL + pL, -np.inf)
            hi = np.where(np.isfinite(wU), wU - pU, np.inf)
        out = np.minimum(np.maximum(w, lo), hi)
        # interval too narrow for both pushes: midpoint
        bad = lo > hi
        out[bad] = 0.5 * (wL[bad] + wU[bad])
        return out

    def initialize(self, w0, y0=None, zL0=None, zU0=None, push=True, ls_mult=True,
                   bound_push=None):
        """``bound_push``: (push, frac, slack_push, slack_frac), default the bound_push,
        bound_frac, slack_bound_push, slack_bound_frac options."""
        o, xp = self.opts, self.xp
        if push:
            if bound_push is None:
                bound_push = (o.bound_push, o.bound_frac, o.slack_bound_push,
                              o.slack_bound_frac)
            w = self.push_into_bounds(host(w0).astype(float), *bound_push)
            self.w[:] = xp.asarray(w)
            self.iterate_moved()
        else:
            self.w[:] = w0
            self.iterate_moved()
        self.f, ok = self.eval_zeroth(self.w, self.hv)
        if not ok:
            self.invalid(self.w, "function")
        self.eval_first_order(self.w)
        self.zL[:] = o.bound_mult_init_val if zL0 is None else zL0
        self.zU[:] = o.bound_mult_init_val if zU0 is None else zU0
        if y0 is not None:
            self.y[:] = y0
        elif ls_mult and self.m:
            self.y[:] = self.least_squares_y()
        th = self.theta(self.hv)
        self.theta_max = o.theta_max_fact * max(1.0, th)
        self.theta_min = o.theta_min_fact * max(1.0, th)

    def least_squares_y(self, max_norm=None):
        """y minimizing ||grad f + A^T y - zL + zU||_2 through [[I, A^T], [A, 0]]; zero if
        that is singular or its max-norm exceeds ``max_norm`` (default
        constr_mult_init_max; IPOPT's least_square_mults).  The
        slacks of relaxed equalities are held in place (RELAXED_SLACK_LS_WEIGHT): as
        variables of the estimate their rows would add ``y_i^2`` to it (their two bound
        multipliers start equal), shrinking the equality multipliers towards zero (a
        ridge estimate: AC-OPF case1354 then took 58 iterations instead of 37)."""
        k = self.kkt
        rd = self._add_bound_multipliers(self.gradf.copy(), self.zL, self.zU)
        xp = self.xp
        k.hess_values[:] = 0.0
        k.jac_values[:] = self.jv
        k.sigma[:] = 0.0
        if self.relaxed_slacks.size:
            k.sigma[self.relaxed_slacks] = RELAXED_SLACK_LS_WEIGHT
        if k.r:
            k.lowrank_Q[:] = 0.0
            k.lowrank_c[:] = -1.0
        y = xp.zeros(self.m)
        for dc in (0.0, 1e-10):
            k.delta_w, k.delta_c = 1.0, dc
            fact, ok = self._factor()
            if ok:
                t = time.perf_counter()
                _, y = k.solve(-rd, xp.zeros(self.m))
                synchronize(xp)
                self.sh.t_solve += time.perf_counter() - t
                break
        ymax, = scalars(xp, amax_abs(xp, y))
        limit = self.opts.constr_mult_init_max if max_norm is None else max_norm
        if not math.isfinite(ymax) or ymax > limit:
            y = xp.zeros(self.m)
        return y

    # ================================================================ errors
    def lagrangian_gradient(self, gradf, jv, y, zL, zU):
        """grad f + A^T y - zL + zU (zL, zU on their bounded entries), a new array."""
        return self._add_bound_multipliers(gradf + self.Aty(jv, y), zL, zU)

    def _add_bound_multipliers(self, rd, zL, zU):
        """rd - zL + zU on the bounded entries, in place (iL and iU hold no duplicates)."""
        fused.call(self.xp, "add_scaled", self.iL, -1.0, zL, rd)
        fused.call(self.xp, "add_scaled", self.iU, 1.0, zU, rd)
        return rd

    def errors(self, mu=0.0):
        """Scaled (dual, constr, compl) max-norms, s_d, s_c, and the barrier error
        (one device-to-host transfer)."""
        xp = self.xp
        rd = self.lagrangian_gradient(self.gradf, self.jv, self.y, self.zL, self.zU)
        sL, sU = self.slacks(self.w)
        zL, zU = self.zL, self.zU
        viol = getattr(self.nlp, "nlp_constr_viol", None)
        nlp_constr = viol(self.w, self.hv) if viol is not None else amax_abs(xp, self.hv)
        # the user's (unscaled) constraint violation, for the log and constr_viol_tol,
        # read with the rest
        uviol = getattr(self.nlp, "unscaled_constr_viol_term", None)
        # slacks and bound multipliers are positive: |s z| = s z and |z| = z
        (dual, constr, nconstr, cLm, cUm, cLmu, cUmu, zLs, zUs, ys, wmax, *uconstr) = scalars(
            xp, amax_abs(xp, rd), amax_abs(xp, self.hv), nlp_constr,
            fused.call(xp, "max_prod", sL, zL), fused.call(xp, "max_prod", sU, zU),
            fused.call(xp, "max_abs_shift", sL, zL, mu),
            fused.call(xp, "max_abs_shift", sU, zU, mu), xp.sum(self.zL),
            xp.sum(self.zU), xp.sum(xp.abs(self.y)), amax_abs(xp, self.w),
            *([uviol(self.w, self.hv)] if uviol is not None else []))
        self.wmax = wmax
        compl = max(cLm, cUm)
        compl_mu = max(cLmu, cUmu)
        smax = 100.0
        nz = self.nL + self.nU
        zsum = zLs + zUs
        sd = max(smax, (ys + zsum) / max(1, self.m + nz)) / smax
        sc = max(smax, zsum / max(1, nz)) / smax
        # E_0 measures the constraints as IPOPT's curr_nlp_error does (inequalities by
        # their bound violation, not by g - s); E_mu keeps the primal infeasibility of the
        # barrier problem (curr_barrier_error)
        return dict(dual=dual, constr=constr, nlp_constr=nconstr, compl=compl,
                    compl_mu=compl_mu, sd=sd, sc=sc,
                    uconstr=uconstr[0] if uconstr else None,
                    E0=max(dual / sd, nconstr, compl / sc),
                    Emu=max(dual / sd, constr, compl_mu / sc))

    def primal_dual_error(self, mu, w=None, y=None, zL=None, zU=None, gradf=None, jv=None,
                          hv=None):
        """IPOPT's primal-dual system error (curr_/trial_primal_dual_system_error): the
        1-norms of the Lagrangian gradient, the constraint residual and the relaxed
        complementarity S z - mu, each divided by its length (one transfer).  The
        current iterate's, or the point given by the keyword arrays."""
        xp = self.xp
        w = self.w if w is None else w
        y = self.y if y is None else y
        zL = self.zL if zL is None else zL
        zU = self.zU if zU is None else zU
        gradf = self.gradf if gradf is None else gradf
        jv = self.jv if jv is None else jv
        hv = self.hv if hv is None else hv
        rd = self.lagrangian_gradient(gradf, jv, y, zL, zU)
        sL, sU = self.slacks(w)
        dual, primal, cL, cU = scalars(xp, xp.sum(xp.abs(rd)), xp.sum(xp.abs(hv)),
                                       xp.sum(xp.abs(sL * zL - mu)),
                                       xp.sum(xp.abs(sU * zU - mu)))
        nz = self.nL + self.nU
        return (dual / max(self.nw, 1) + (primal / self.m if self.m else 0.0)
                + ((cL + cU) / nz if nz else 0.0))

    def unscaled(self, e):
        nlp = self.nlp
        df = getattr(nlp, "df", 1.0)
        constr = e["constr"] if e.get("uconstr") is None else e["uconstr"]
        return dict(dual=e["dual"] / df, constr=constr, compl=e["compl"] / df)

    # ================================================================ main loop
    def run(self):
        """Iterate until a termination test fires; returns the status name."""
        from .linesearch import line_search
        from .mu import update_mu

        o, sh = self.opts, self.sh
        self.start_iter = sh.iter
        while True:
            if sh.iter_hook is not None:
                sh.iter_hook(self)
            e = self.errors(self.mu)
            ue = self.unscaled(e)
            self.log_iteration(e, ue)
            self.final_errors = (e, ue)
            if self.stop_hook is not None and sh.iter > self.start_iter:
                st = self.stop_hook(self)
                if st is not None:
                    return st
            st = self.check_termination(e, ue)
            if st is not None:
                return st
            if o.start_with_resto and not self.resto and sh.iter == 0 and sh.n_resto == 0 \
                    and self.m > 0:
                from .restoration import restoration_phase

                restoration_phase(self)
                continue
            update_mu(self, e)
            d = self.compute_direction()
            if d is None:
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
            accepted = line_search(self, d)
            if not accepted:
                if self.resto:
                    raise SolverStop("Restoration_Failed", "line search failed in the "
                                     "restoration phase")
                self._line_search_failed()
                continue
            sh.iter += 1

    def _line_search_failed(self):
        """IPOPT's fall-backs when the line search (and the soft restoration) found no
        step (BacktrackingLineSearch::FindAcceptableTrialPoint): an acceptable current
        iterate ends Solved_To_Acceptable_Level; at an almost feasible one (theta <=
        1e-2 tol and the user's violation <= 0.1 constr_viol_tol) the restoration phase
        has nothing to do -- the last acceptable iterate is restored
        (Solved_To_Acceptable_Level) or the solve ends Error_In_Step_Computation;
        otherwise the restoration phase runs.  The current iterate is the one the search
        ended at (the watchdog may have restored an earlier one)."""
        o = self.opts
        e = self.errors(self.mu)
        ue = self.unscaled(e)
        if self._acceptable(e, ue, self._obj_change(update=False)):
            self.final_errors = (e, ue)
            raise SolverStop("Solved_To_Acceptable_Level",
                             "restoration phase called at an acceptable point")
        if self.theta(self.hv) <= 1e-2 * o.tol and ue["constr"] <= 0.1 * o.constr_viol_tol:
            if self._restore_acceptable_point():
                raise SolverStop("Solved_To_Acceptable_Level",
                                 "restoration phase called at an almost feasible point; "
                                 "the last acceptable iterate restored")
            self.final_errors = (e, ue)
            raise SolverStop("Error_In_Step_Computation",
                             "line search failed at an almost feasible point: no fall-back")
        self._restore()

    def _restore_acceptable_point(self) -> bool:
        """Make the last acceptable iterate (kept by :meth:`check_termination`) the
        current one, with its errors; False when there is none."""
        if self.acceptable_point is None:
            return False
        w, y, zL, zU = self.acceptable_point
        self.w[:], self.y[:], self.zL[:], self.zU[:] = w, y, zL, zU
        self.iterate_moved()
        self.f, _ = self.eval_zeroth(self.w, self.hv)
        self.eval_first_order(self.w)
        e = self.errors(self.mu)
        self.final_errors = (e, self.unscaled(e))
        return True

    def _restore(self):
        """Run the restoration phase from the current iterate (it counts its own
        iterations) and restart the line-search safeguards after it."""
        from .restoration import restoration_phase

        restoration_phase(self)
        self.watchdog.reset()
        self.soft_resto, self.soft_resto_count = False, 0

    def check_termination(self, e, ue):
        o, sh = self.opts, self.sh
        if True:
            if (e["E0"] <= o.tol and ue["dual"] <= o.dual_inf_tol
                    and ue["constr"] <= o.constr_viol_tol and ue["compl"] <= o.compl_inf_tol):
                return "Solve_Succeeded"
            if self._acceptable(e, ue, self._obj_change(update=True)):
                # IPOPT keeps the latest acceptable iterate for a failed line search
                # (StoreAcceptablePoint / RestoreAcceptablePoint)
                if self.acceptable_point is None:      # buffers, allocated once
                    self.acceptable_point = (self.w.copy(), self.y.copy(),
                                             self.zL.copy(), self.zU.copy())
                else:
                    for buf, v in zip(self.acceptable_point,
                                      (self.w, self.y, self.zL, self.zU)):
                        buf[:] = v
                self.acceptable_count += 1
                if self.acceptable_count >= o.acceptable_iter:
                    return "Solved_To_Acceptable_Level"
            else:
                self.acceptable_count = 0
        if self.wmax > o.diverging_iterates_tol:
            return "Diverging_Iterates"
        if sh.iter >= o.max_iter:
            return "Maximum_Iterations_Exceeded"
        if time.perf_counter() - sh.t0 > o.max_wall_time:
            return "Maximum_WallTime_Exceeded"
        return None

    def _obj_change(self, update: bool) -> float:
        """|f - f_prev| / max(1, |f|), f_prev the objective at the previous iteration's
        check.  ``update``: this is the iteration's check (its f is kept for the next);
        otherwise a later test within the same iteration (IPOPT's CurrentIsAcceptable
        compares with the previous iteration's objective too)."""
        if update:
            self.prev_obj, self.last_obj = self.last_obj, self.f
        ref = self.prev_obj
        return abs(self.f - ref) / max(1.0, abs(self.f)) if ref is not None else math.inf

    def _acceptable(self, e, ue, objchg) -> bool:
        """IPOPT's CurrentIsAcceptable: the acceptable_* tolerances all hold."""
        o = self.opts
        return (o.acceptable_iter > 0 and e["E0"] <= o.acceptable_tol
                and ue["dual"] <= o.acceptable_dual_inf_tol
                and ue["constr"] <= o.acceptable_constr_viol_tol
                and ue["compl"] <= o.acceptable_compl_inf_tol
                and objchg <= o.acceptable_obj_change_tol)

    # ================================================================ Newton step
    def compute_direction(self):
        """Solve the primal-dual system with inertia correction; returns the direction
        dict (dw, dy, dzL, dzU, grad_phi) or None when regularization failed."""
        k = self.kkt
        if self.eps_restore is not None:
            # an eps raised for one iteration goes back, unless the KKT system has since
            # switched to a pivoting factorization (eps 0 from then on: K itself)
            if k.static_regularization > 0.0:
                k.static_regularization = self.eps_restore
            self.eps_restore = None
        sL, sU = self.slacks(self.w)
        k.sigma[:] = 0.0
        # iL and iU hold no duplicates: a plain indexed add is numpy.add.at here
        fused.call(self.xp, "add_ratio", self.iL, self.zL, sL, k.sigma)
        fused.call(self.xp, "add_ratio", self.iU, self.zU, sU, k.sigma)
        k.jac_values[:] = self.jv
        if self.lbfgs is None:
            self.nlp.hess(self.w, self.y, 1.0, k.hess_values)
            if not self.allfinite(k.hess_values):
                self.invalid(self.w, "Hessian")
        else:
            self.lbfgs.fill_kkt(k, self.nw)
        gphi = self.grad_phi()
        rhs_w = -(gphi + self.Aty(self.jv, self.y))
        rhs_c = -self.hv
        if not self.regularize_and_factorize():
            return None
        dw, dy = self._solve(rhs_w, rhs_c)
        # Refinement against K failed (IPOPT's PDFullSpaceSolver::Solve): first (once) the
        # same matrix with a smaller static term, which is what a K with eigenvalues
        # below eps needs; then ask the linear algebra for a more stable factorization
        # and redo the inertia correction with it (a factorization with huge element
        # growth also misreports inertia);
        # when it cannot do better, K is taken as (numerically) singular, once, and
        # perturbed as IPOPT's PerturbForSingularity does.  A KKT system whose inertia
        # test rounding can fool (the condensed one) then goes on raising delta_w, as
        # MadNLP does after a failed Richardson iteration.
        pretended = False
        smaller_tried = False
        # refinement_contraction_max: the residual test passed, but at a slow rate the
        # directions where K's eigenvalues lie below the static term are not resolved
        # (the collocation OCP with 10^5 intervals: ~0.4 per step at eps = 1e-9, a first
        # step far from Newton's; 0.01 at 1e-12, Newton's step)
        if (k.last_contraction > self.opts.refinement_contraction_max
                and k.static_regularization > SLOW_REFINEMENT_EPS_FLOOR
                and k.last_residual_ratio <= RESIDUAL_RATIO_SINGULAR
                and self.eps_restore is None and not self.slow_rule_off):
            # converged, but slowly: the same matrix with a smaller static term, kept
            # for the solve only when its refinement is no longer slow (where it is, the
            # smaller term buys no accuracy and costs the factorization stability: COPS
            # glider(1000) lost its solve to eps drifting between 1e-14 and 1e-6)
            smaller_tried = True
            eps = k.static_regularization
            solved = self._solve_with_smaller_static_term(
                rhs_w, rhs_c, max_contraction=self.opts.refinement_contraction_max)
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
            dw, dy = self._solve(rhs_w, rhs_c)
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
            elif k.factorize_accurate():
                # no static term made the factors accurate: they are the trouble, not K
                # (element growth without pivoting; Pyomo's lqcp, n = 100, refinement
                # stagnating at every eps, inf_pr stuck at 1.5e-7 and "acceptable" 2.6e-3
                # from IPOPT's objective): this iteration's solves with a pivoting
                # factorization of K itself, as IPOPT's linear solvers pivot, the
                # inertia still from the one above.  Its direction is taken even where
                # K is too ill-conditioned for refinement to pass (lqcp's iteration 24,
                # cond ~1e36): K is not taken as singular while it factorizes, since the
                # delta_c that brings stays for the rest of the solve and leaves every
                # later step off the linearized constraints by delta_c |dy|
                dw, dy = self._solve(rhs_w, rhs_c)
                break
            elif not pretended and k.delta_w == 0.0:
                pretended = True
                ok = self.regularize_and_factorize(singular=True)
            elif k.inaccurate_solve_means_wrong_inertia:
                ok = self._next_delta_w() and self._perturb_until_inertia()
            else:
                break
            if not ok:
                return None
            dw, dy = self._solve(rhs_w, rhs_c)
        if not k.check_inertia:
            solved = self._curvature_corrected(rhs_w, rhs_c, dw, dy)
            if solved is None:
                return None
            dw, dy = solved
        if not self.allfinite(dw, dy):
            return None
        dzL, dzU = self.bound_multiplier_steps(dw, sL, sU)
        return dict(dw=dw, dy=dy, dzL=dzL, dzU=dzU, gphi=gphi, rhs_w=rhs_w)

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
            nrm = self._solve(self._zero_w, rhs_c)[0] if self.m else self._zero_w
            t = dw - nrm
            ht = k.primal_matvec(t)
            tht, thn, bn, tt = scalars(xp, xp.dot(t, ht), xp.dot(ht, nrm), xp.dot(rhs_w, nrm),
                                       xp.dot(t, t))
            if math.isfinite(tht) and tht + max(thn + bn, 0.0) >= o.inertia_free_tol * tt:
                break
            # Algorithm IC's schedule within one direction; without the inertia test its
            # loop stops at the first successful factorization (and records delta_w)
            self.delta_w_last = last
            if not (self._next_delta_w() and self._perturb_until_inertia()):
                return None
            dw, dy = self._solve(rhs_w, rhs_c)
        return dw, dy

    def _solve_with_smaller_static_term(self, rhs_w, rhs_c, max_contraction=None):
        """After a failed or slow (``refinement_contraction_max``) refinement, once per
        direction: factorize the same matrix
        (same delta_w, delta_c) with a smaller static regularization and solve again.
        Refinement against K converges only while eps is small against K's smallest
        eigenvalues, so where those lie below eps (the OCP with 10^6 intervals: eps =
        1e-9 turns the first step away from IPOPT's, eps = 1e-12 gives it) a smaller eps
        is what helps, not a larger one.  Returns ``(dw, dy)`` and keeps the smaller eps
        for the solve when the inertia is right and the refinement converges; otherwise
        restores eps and its factorization and returns None.  ``max_contraction``: the
        refinement must also contract by at most this (kkt/refinement.py)."""
        k = self.kkt
        eps = k.decrease_static_regularization()
        if eps is None:
            return None
        ratio = k.last_residual_ratio
        _, ok = self._factor()
        if ok:
            dw, dy = self._solve(rhs_w, rhs_c)
            if k.last_residual_ratio <= RESIDUAL_RATIO_SINGULAR and (
                    max_contraction is None or k.last_contraction <= max_contraction):
                return dw, dy
        k.static_regularization = eps
        self._factor()
        k.last_residual_ratio = ratio
        return None

    def bound_multiplier_steps(self, dw, sL=None, sU=None):
        """(dzL, dzU) of the primal step ``dw``: the eliminated rows of the primal-dual
        system, Z dw + S dz = mu e - S z, at the current slacks."""
        if sL is None:
            sL, sU = self.slacks(self.w)
        xp = self.xp
        dzL = fused.call(xp, "bound_mult_step", self.mu, self.zL, sL, dw, self.iL, 1.0)
        dzU = fused.call(xp, "bound_mult_step", self.mu, self.zU, sU, dw, self.iU, -1.0)
        return dzL, dzU

    def _solve(self, rhs_w, rhs_c):
        t = time.perf_counter()
        dw, dy = self.kkt.solve(rhs_w, rhs_c)
        synchronize(self.xp)
        self.sh.t_solve += time.perf_counter() - t
        return dw, dy

    def _factor(self):
        t = time.perf_counter()
        self.kkt.build()
        synchronize(self.xp)
        t1 = time.perf_counter()
        fact, ok = self.kkt.factorize()
        t2 = time.perf_counter()
        self.sh.t_build += t1 - t
        self.sh.t_factor += t2 - t1
        return fact, ok

    def regularize_and_factorize(self, singular=False):
        """IPOPT's inertia correction (Waechter & Biegler Algorithm IC).  ``singular``:
        the unperturbed matrix is known to be singular; start perturbing at once."""
        o, k = self.opts, self.kkt
        k.delta_w, k.delta_c = 0.0, 0.0
        if self.delta_c_used:
            # the Jacobian was found degenerate before: regularize from the start
            k.delta_c = o.jacobian_regularization_value * self.mu ** \
                o.jacobian_regularization_exponent
        self.info["delta_w"] = 0.0
        if singular:
            ok = False
            fact = type("F", (), {"n_zero": 1})()
        else:
            fact, ok = self._factor()
        # a zero pivot of a factorization without pivoting need not mean a singular K
        # (catmix(20), iteration 8: K has the required inertia, min |eig| 9e-7, and
        # qdldl breaks down); as IPOPT's linear solver would pivot, first try more
        # stable factorizations before perturbing K itself.  The raised eps is for this
        # iteration only (restored by compute_direction): kept for the rest of the solve
        # it costs accuracy on badly scaled problems (case1803_snem: eps 1e-6 from
        # iteration 2 on, 1547 iterations instead of ~200; IPOPT 123)
        eps = k.static_regularization
        while not ok and not singular and fact.n_zero > 0 and k.increase_quality():
            if self.eps_restore is None:
                self.eps_restore = eps
            fact, ok = self._factor()
        if ok:
            return True
        if fact.n_zero > 0 and k.delta_c == 0.0 and self.m > 0:
            k.delta_c = o.jacobian_regularization_value * self.mu ** \
                o.jacobian_regularization_exponent
            self.delta_c_used = True
            fact, ok = self._factor()
            if ok:
                return True
        self._next_delta_w()
        return self._perturb_until_inertia()

    def _next_delta_w(self) -> bool:
        """The next trial delta_w of Algorithm IC: the first one (from delta_w_last) when
        there is none yet, else the current one times kappa_w^+ (bar on the first
        perturbation of the solve); False when it exceeds delta_w^max."""
        o, k = self.opts, self.kkt
        if k.delta_w == 0.0:
            if self.delta_w_last == 0.0:
                k.delta_w = o.first_hessian_perturbation
            else:
                k.delta_w = max(o.min_hessian_perturbation,
                                o.perturb_dec_fact * self.delta_w_last)
            return True
        k.delta_w *= o.perturb_inc_fact_first if self.delta_w_last == 0.0 \
            else o.perturb_inc_fact
        return k.delta_w <= o.max_hessian_perturbation

    def _perturb_until_inertia(self) -> bool:
        """Factorize with the current delta_w, raising it until the inertia is right
        (the loop of Algorithm IC); False when delta_w exceeds delta_w^max."""
        o, k = self.opts, self.kkt
        while True:
            fact, ok = self._factor()
            if ok:
                self.delta_w_last = k.delta_w
                self.info["delta_w"] = k.delta_w
                return True
            if fact.n_zero > 0 and k.delta_c == 0.0:
                k.delta_c = o.jacobian_regularization_value * self.mu ** \
                    o.jacobian_regularization_exponent
            elif fact.n_zero > 0 and k.delta_w > 0.0 and k.enable_pivoting():
                # with delta_w > 0 and delta_c > 0 an exact zero pivot is a numerical
                # artefact (a delta_w below the factorization's resolution cancelled
                # away), not a sign of missing curvature: raising delta_w would stall it
                # at that floor (min y s.t. y >= x, y <= x - 1: delta_w stuck near 1e-10,
                # iterates growing linearly instead of diverging as in IPOPT); retry the
                # same delta_w with a pivoting factorization (IPOPT's MUMPS pivots)
                continue
            elif k.delta_w > PIVOTING_SWITCH_DELTA_W and k.enable_pivoting():
                # the inertia of an unpivoted factorization is not to be trusted this
                # far: Algorithm IC again from delta_w = 0 with exact inertia
                k.delta_w = 0.0
                continue
            if not self._next_delta_w():
                return False

    def fraction_to_boundary(self, dw, tau):
        """max alpha in (0, 1] with s + alpha ds >= (1 - tau) s (one transfer; the
        ratios are those of the entries with ds < 0, others are +inf)."""
        return min([1.0] + scalars(self.xp, *self._ftb_primal(dw, tau)))

    def fraction_to_boundary_z(self, dzL, dzU, tau):
        return min([1.0] + scalars(self.xp, *self._ftb_dual(dzL, dzU, tau)))

    def step_bounds(self, d, tau):
        """(fraction_to_boundary(dw), fraction_to_boundary_z(dzL, dzU)) of the step ``d``
        from the current iterate, with one transfer for both; kept in ``d`` (a direction
        belongs to the iterate it was computed at, also when the watchdog restores both),
        keyed by tau and the safe-slack mode the slacks were formed in."""
        hit = d.get("step_bounds")
        if hit is not None and hit[0] == (tau, self.safe_slack_mode):
            return hit[1]
        pending = self.step_bound_terms(d, tau)
        return self.keep_step_bounds(d, pending, scalars(self.xp, *pending[2]))

    def step_bound_terms(self, d, tau):
        """``(key, n_primal, minima)``: the 0-d minima :meth:`step_bounds` takes, not read
        back, the primal ones first."""
        p = self._ftb_primal(d["dw"], tau)
        z = self._ftb_dual(d["dzL"], d["dzU"], tau)
        return (tau, self.safe_slack_mode), len(p), p + z

    def keep_step_bounds(self, d, pending, values):
        """Record in ``d`` the step bounds from the read-back ``values`` of the minima of
        ``pending`` (:meth:`step_bound_terms`); returns them."""
        key, k, terms = pending
        bounds = (min([1.0] + values[:k]), min([1.0] + values[k:len(terms)]))
        d["step_bounds"] = (key, bounds)
        return bounds

    def _ftb_primal(self, dw, tau):
        sL, sU = self.slacks(self.w)
        return self._ftb_mins(((sL, dw[self.iL], 1.0), (sU, dw[self.iU], -1.0)), tau)

    def _ftb_dual(self, dzL, dzU, tau):
        return self._ftb_mins(((self.zL, dzL, 1.0), (self.zU, dzU, 1.0)), tau)

    def _ftb_mins(self, pairs, tau):
        """min over i with sign ds_i < 0 of -tau s_i / (sign ds_i) for each nonempty
        triple (s, ds, sign), as 0-d arrays (not read back)."""
        return [fused.call(self.xp, "ftb_min", s, ds, tau, sign)
                for s, ds, sign in pairs if s.size]

    # ================================================================ log
    def log_iteration(self, e, ue):
        from .result import IterationRecord

        info = self.info
        nlp = self.nlp
        obj = self.f / getattr(nlp, "df", 1.0)
        constr = ue["constr"]
        if self.resto and hasattr(nlp, "original_objective"):
            # IPOPT's log during restoration: the original problem's objective and
            # constraint violation, the restoration problem's dual infeasibility
            obj = nlp.original_objective(self.w)
            constr = nlp.original_constr_viol(self.w, self.hv)
        rec = IterationRecord(self.sh.iter, obj, constr, e["dual"], self.mu, info["d_norm"],
                              info["delta_w"], info["alpha_du"], info["alpha_pr"],
                              info["ls"], info["tag"], self.resto)
        self.sh.history.append(rec)
        if self.sh.log is not None:
            self.sh.log.iteration(rec)


def _min_pos(xp, sL, sU):
    """min over both slack vectors (+inf when both are empty), a 0-d array."""
    parts = [xp.min(v) for v in (sL, sU) if v.size]
    if not parts:
        return xp.full((), np.inf)
    return parts[0] if len(parts) == 1 else xp.minimum(parts[0], parts[1])
