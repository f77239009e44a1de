"""Quantities of the barrier problem at a point (IPOPT's IpoptCalculatedQuantities).

For the :class:`~caspar_backend.solver.nlp.BarrierNLP` ``min f(w) s.t. h(w) = 0,
wL <= w <= wU`` with finite-bound index sets ``iL``, ``iU`` (int64, no duplicates) and
the current :class:`~.iterate.Iterate` and :class:`~.iterate.BarrierParameter`:

    slacks          sL = w[iL] - wL[iL],  sU = wU[iU] - w[iU]
    barrier         phi(w) = f(w) - mu (sum ln sL + sum ln sU)
                             + kappa_d mu (sum_{L only} sL + sum_{U only} sU)
    infeasibility   theta(w) = ||h(w)||_1
    optimality      grad L = grad f + A^T y - zL + zU  (bounded entries), the scaled
                    errors E_0 and E_mu of the convergence test
    step bounds     the fraction-to-the-boundary step lengths of a direction

Every method takes the point it works at, or works at the current iterate when it says
so; none changes the iterate.  Host reads are batched: each public quantity is at most
one device-to-host transfer (:func:`~caspar_backend.arrays.scalars`).  The object owns
the work buffers of these computations and the safe-slack mode (IPOPT's safe slacks
from the first slack lost to rounding on).
"""

from __future__ import annotations

import math

import numpy as np

from ..arrays import amax_abs, asum, errstate, fused, is_host, scalars
from .iterate import BarrierParameter, Direction, Iterate
from .structure import BoundStructure
from .status import SolverStop

_EPS = np.finfo(float).eps


class BarrierQuantities:
    """Final."""

    def __init__(self, nlp, opts, it: Iterate, barrier: BarrierParameter):
        self.nlp, self.opts, self.it, self.barrier = nlp, opts, it, barrier
        xp = self.xp = nlp.xp
        self.nw, self.m = nlp.nw, nlp.m
        # the index sets depend on which bounds are finite alone: the problem's cached
        # ones (:class:`~.structure.BoundStructure`)
        finL, finU = (np.isfinite(b) for b in nlp.host_bounds())
        st = nlp.structure(BoundStructure.key(finL, finU), lambda: BoundStructure(
            finL, finU, nlp.jac_rows, nlp.jac_cols, self.nw, xp))
        self.iL, self.iU = st.iL, st.iU
        self.posL, self.posU = st.posL, st.posU
        self.nL, self.nU = st.nL, st.nU
        self.dampL, self.dampU = st.dampL, st.dampU
        self.idampL, self.idampU = st.idampL, st.idampU
        self.wLL, self.wUU = nlp.wL[self.iL], nlp.wU[self.iU]
        # both index sets and bounds end to end: both slack vectors in one launch
        self._iLU = xp.concatenate([self.iL, self.iU])
        self._bLU = xp.concatenate([self.wLL, self.wUU])
        # IPOPT's safe slacks (CalculateSafeSlack) in every slack from the first one lost
        # to rounding on (see phi); off until then, so that no solve pays for them
        self.safe_slack_mode = False
        self.jr, self.nnz_j = st.jr, st.nnz_j
        self._aty_sum = st.aty_sum
        self._jt = xp.zeros(st.nnz_j)       # jv * y[jr]
        self._aty = xp.zeros(self.nw)
        # finiteness checks without a temporary of the Jacobian's/Hessian's size
        self._fin = xp.zeros(max(st.nnz_j, len(nlp.hess_rows), self.nw, self.m, 1),
                             dtype=bool)
        self._slack_cache = None            # (version, w, (sL, sU)) of the iterate
        self._unread = []                   # (flag, what) of check_later, not yet read
        #: the open gate of ``step_duals`` (its ``ok``): a step with checked derivatives
        self.step_gate = xp.ones(1)

    # ================================================================ vectors
    def slacks(self, w):
        """(w[iL] - wL, wU - w[iU]), IPOPT's safe slacks in safe-slack mode; new arrays
        that callers do not modify.  Those of the current iterate are formed once per
        version of its ``w`` (an iteration asks ~7 times); both are views of one vector
        (one launch: ``gather_slacks``)."""
        it = self.it
        current = w is it.w and not self.safe_slack_mode
        c = self._slack_cache
        if current and c is not None and c[0] == it.version and c[1] is w:
            return c[2]
        xp = self.xp
        s = fused.call(xp, "gather_slacks", w, self._iLU, self._bLU, float(self.nL))
        sL, sU = s[:self.nL], s[self.nL:]
        if self.safe_slack_mode:
            return self.safe_slacks(sL, sU)
        if current:
            self._slack_cache = (it.version, w, (sL, sU))
        return sL, sU

    def safe_slack_min(self) -> float:
        return _EPS * min(1.0, self.barrier.mu)

    def safe_slacks(self, sL, sU):
        """IPOPT's CalculateSafeSlack: a slack s below s_min = eps min(1, mu) is replaced
        by min(max(mu / z, s_min), max(s, 0) + slack_move max(1, |bound|)) (z its bound
        multiplier at the current iterate), the others kept; new arrays.  IPOPT also moves
        the bound to match; a bound of magnitude 1e8 cannot hold a slack of 1e-9 that
        way, so the slacks are corrected wherever they are formed instead."""
        xp, mu, smin = self.xp, self.barrier.mu, self.safe_slack_min()
        move = self.opts.slack_move
        out = []
        with errstate(xp):
            for s, z, b in ((sL, self.it.zL, self.wLL), (sU, self.it.zU, self.wUU)):
                pos = xp.maximum(s, 0.0)
                new = xp.minimum(xp.maximum(mu / z, smin),
                                 pos + move * xp.maximum(1.0, xp.abs(b)))
                out.append(xp.where(s < smin, new, s))
        return out

    def Aty(self, jv, y, out=None):
        """A^T y with A in COO (jr, jc, jv), into ``out`` (default: a work vector that the
        next call overwrites)."""
        xp = self.xp
        if not self.nnz_j:            # no Jacobian entry (m = 0): nothing to gather
            out = self._aty if out is None else out
            out[:] = 0.0
            return out
        fused.call(xp, "gather_mul", jv, y, self.jr, self._jt)
        return self._aty_sum(self._jt, self._aty if out is None else out)

    def add_bound_multipliers(self, rd, zL, zU):
        """rd - zL + zU on the bounded entries, in place (iL and iU hold no duplicates)."""
        fused.call(self.xp, "add_scaled", self.iL, -1.0, zL, rd)
        fused.call(self.xp, "add_scaled", self.iU, 1.0, zU, rd)
        return rd

    def lagrangian_gradient(self, gradf, jv, y, zL, zU):
        """grad f + A^T y - zL + zU (zL, zU on their bounded entries), a new array (one
        launch besides A^T y's: ``lagrangian_residual``)."""
        return fused.call(self.xp, "lagrangian_residual", gradf, self.Aty(jv, y), self.iL,
                          zL, self.iU, zU, self.posL, self.posU)

    def grad_phi(self, mu=None):
        """The barrier gradient at the current iterate (at ``mu``: the barrier
        parameter's unless given), a new array."""
        it = self.it
        mu = self.barrier.mu if mu is None else mu
        sL, sU = self.slacks(it.w)
        kd = self.opts.kappa_d * mu
        # vector-sized, kept by the direction; one launch (``barrier_gradient``)
        return fused.call(self.xp, "barrier_gradient", it.gradf, self.iL, sL, self.dampL,
                          self.iU, sU, self.dampU, -mu, kd, mu, -kd, self.posL, self.posU)

    def bound_multiplier_steps(self, dw, sL=None, sU=None, mu=None):
        """(dzL, dzU) of the primal step ``dw`` at the current iterate: the eliminated
        rows of the primal-dual system, Z dw + S dz = mu e - S z (``mu``: the barrier
        parameter's unless given)."""
        it = self.it
        mu = self.barrier.mu if mu is None else mu
        if sL is None:
            sL, sU = self.slacks(it.w)
        xp = self.xp
        dzL = fused.call(xp, "bound_mult_step", mu, it.zL, sL, dw, self.iL, 1.0)
        dzU = fused.call(xp, "bound_mult_step", mu, it.zU, sU, dw, self.iU, -1.0)
        return dzL, dzU

    # ================================================================ finiteness
    def allfinite(self, *vs) -> bool:
        """Every entry of the arrays ``vs`` finite, with one host read for all of them
        (on the device each read synchronizes; the reductions queue in stream order, so
        the shared buffer is read before the next array overwrites it).  On the device a
        pair is one reduction (``all_finite2``)."""
        if len(vs) == 2 and not is_host(self.xp):
            return bool(self.finite_flag(*vs))
        ok = None
        for v in vs:
            ok = self._finite_flag(v) if ok is None else ok & self._finite_flag(v)
        return bool(ok)

    def finite_flag(self, a, b=None):
        """Both arrays (or ``a`` alone) finite, as a 0-d array not read back (on the
        device one reduction: ``all_finite2``, ``all_finite``)."""
        if b is None:
            return self._finite_flag(a)
        if not is_host(self.xp):
            return fused.call(self.xp, "all_finite2", a, b)[0]
        return self._finite_flag(a) & self._finite_flag(b)

    def _finite_flag(self, v):
        """All of ``v`` finite, as a 0-d device bool (not read back)."""
        if not is_host(self.xp):
            return fused.call(self.xp, "all_finite", v)
        buf = self._fin[:v.size]
        np.isfinite(v, out=buf)
        return np.logical_and.reduce(buf)     # buf.all() without its dispatch layer

    # ------------------------------------------------ finiteness read with a later read
    def check_later(self, flag, what: str) -> None:
        """The finiteness ``flag`` (0-d, not read back) of a ``what`` evaluation at the
        current iterate.  On the device it is read with the next read that joins
        :meth:`unread_checks` (the line search's reference values read the Hessian's)
        rather than by a read of its own, and :meth:`settle` then ends the solve as
        :meth:`invalid` would have at the evaluation.  Only for an evaluation after which
        nothing changes the iterate, the iteration count or any state a result reports
        before that read (or :meth:`settle_now` on the way to a decision without it).
        On the host it is checked at once."""
        if is_host(self.xp):
            if not bool(flag):
                self.invalid(self.it.w, what)
            return
        self._unread.append((flag, what))

    def unread_checks(self) -> list:
        """The flags :meth:`check_later` left unread, for a batched read."""
        return [flag for flag, _ in self._unread]

    def settle(self, values) -> None:
        """The :meth:`unread_checks` as read back (``values``, in their order): a
        non-finite evaluation ends the solve."""
        checks, self._unread = self._unread, []
        for (_, what), ok in zip(checks, values):
            if not ok:
                self.invalid(self.it.w, what)

    def settle_now(self) -> None:
        """Read the :meth:`unread_checks` on their own (one read; none when there are
        none): before a decision the flags must precede."""
        if self._unread:
            self.settle(scalars(self.xp, *self.unread_checks()))

    def invalid(self, w, what):
        """End the solve: a NaN or Inf in a ``what`` evaluation at ``w``."""
        desc = self.nlp.describe_nonfinite(w)
        msg = f"NaN or Inf in a {what} evaluation"
        raise SolverStop("Invalid_Number_Detected", msg + (f": {desc}" if desc else ""))

    # ================================================================ evaluations
    def eval_zeroth(self, w, hout):
        """``(f(w), ok)`` with h(w) into ``hout``; ok: both finite."""
        f = self.nlp.f_and_h(w, hout)
        ok = math.isfinite(f) and self.allfinite(hout)
        return f, ok

    def eval_first_order(self, it: Iterate):
        """The gradient and Jacobian values of ``it`` at its ``w`` (f and h are current);
        a NaN or Inf ends the solve."""
        self.nlp.grad_and_jac(it.w, it.gradf, it.jv)
        if not self.allfinite(it.gradf, it.jv):
            self.invalid(it.w, "derivative")

    def first_order_of_step(self, it: Iterate, first_order, later: bool):
        """The derivatives of an accepted step's new point: ``first_order`` (its
        gradient and Jacobian values, evaluated and checked by the caller) or evaluated
        here, checked at once or, with ``later``, read later (:meth:`eval_first_order_later`).
        Returns the ``ok`` gate of the step's ``step_duals``."""
        if first_order is not None:
            it.gradf[:], it.jv[:] = first_order
        elif later:
            return self.eval_first_order_later(it)
        else:
            self.eval_first_order(it)
        return self.step_gate

    def eval_first_order_later(self, it: Iterate):
        """:meth:`eval_first_order` for an accepted step's new point, its finiteness read
        with the next iteration's norms (:meth:`errors`) on the device: returns the
        ``ok`` vector for the step's ``step_duals``, so that the multipliers move only
        where the derivatives are finite, as on the host, where they are checked here
        (and :attr:`step_gate` is returned).  The main loop counts the iteration before
        that read and takes the count back where the check fails
        (:meth:`.InteriorPoint.run`)."""
        if is_host(self.xp):
            self.eval_first_order(it)
            return self.step_gate
        self.nlp.grad_and_jac(it.w, it.gradf, it.jv)
        flag = self.finite_flag(it.gradf, it.jv)
        self._unread.append((flag, "derivative"))
        return flag.vec         # all_finite2's one column: its result vector is the flag

    def reevaluate(self, it: Iterate):
        """f, h, gradient and Jacobian of ``it`` at its ``w`` (after its w was set)."""
        it.f, _ = self.eval_zeroth(it.w, it.h)
        self.eval_first_order(it)

    # ================================================================ merit
    def theta(self, h):
        return scalars(self.xp, asum(self.xp, self.xp.abs(h)))[0]

    def phi(self, w, f, mu=None, sums=None):
        """The barrier function at ``w`` (objective value ``f``); ``sums``: the
        :meth:`barrier_terms` at ``w``, already read back."""
        mu = self.barrier.mu if mu is None else mu
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
        return scalars(self.xp, *self.barrier_terms(w))

    def barrier_terms(self, w):
        """The five :meth:`_barrier_sums` as 0-d arrays, not read back (one reduction:
        ``barrier_sums``)."""
        sL, sU = self.slacks(w)
        # (log of a slack <= 0: NaN / -inf, phi rejects it; the driver runs the
        # iteration with NumPy's warnings off)
        return list(fused.call(self.xp, "barrier_sums", sL, self.idampL, sU, self.idampU))

    def trial_point(self, w, hout):
        """``(f, ok, theta, phi)`` at ``w`` (the constraints into ``hout``): as
        :meth:`eval_zeroth`, :meth:`theta` and :meth:`phi` one after the other, with one
        host read for the objective (where the evaluator leaves it on the device), the
        finiteness of h, theta and the barrier sums.  ``theta`` and ``phi`` are
        meaningless when not ``ok``."""
        xp, nlp = self.xp, self.nlp
        f = nlp.f_unread_and_h(w, hout)
        unread = not isinstance(f, float)
        sL, sU = self.slacks(w)
        # (finite_abs_sum's and barrier_sums's columns in one launch)
        fin, theta, *sums = scalars(xp, *fused.call(xp, "trial_sums", hout, sL, self.idampL,
                                                    sU, self.idampU),
                                    *([f] if unread else []))
        if unread:
            f = nlp.read_f(sums.pop())
        if not (math.isfinite(f) and fin):
            return f, False, math.nan, math.nan
        return f, True, theta, self.phi(w, f, sums=sums)

    # ================================================================ errors
    def errors(self, mu=0.0):
        """At the current iterate: scaled (dual, constr, compl) max-norms, s_d, s_c, the
        overall errors E0 and Emu, the unscaled constraint violation, max |w| and, where
        the problem has :attr:`~.barrier_nlp.BarrierNLP.dual_unscaling_d`, the dual
        infeasibility's norm in the user's space before 1/df (one device-to-host
        transfer)."""
        xp, it, nlp = self.xp, self.it, self.nlp
        rd = self.lagrangian_gradient(it.gradf, it.jv, it.y, it.zL, it.zU)
        sL, sU = self.slacks(it.w)
        zL, zU = it.zL, it.zU
        nconstr, uviol = nlp.constr_viol_terms(it.w, it.h)
        u = getattr(nlp, "dual_unscaling_d", None)
        udual = [] if u is None else [amax_abs(xp, rd * u)]
        # slacks and bound multipliers are positive: |s z| = s z and |z| = z
        unread = self.unread_checks()
        (dual, constr, cLm, cUm, cLmu, cUmu, zLs, zUs, ys, wmax, nconstr, *rest) = scalars(
            xp, *fused.call(xp, "optimality_norms", rd, it.h, it.y, it.w, sL, zL, sU, zU, mu),
            nconstr, *udual, *([uviol] if uviol is not None else []), *unread)
        if unread:
            # the evaluations' finiteness first (a non-finite derivative ends the solve)
            self.settle(rest[len(rest) - len(unread):])
            del rest[len(rest) - len(unread):]
        udual = rest.pop(0) if udual else None
        uconstr = rest
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
                    compl_mu=compl_mu, sd=sd, sc=sc, wmax=wmax,
                    uconstr=uconstr[0] if uconstr else None, udual=udual,
                    E0=max(dual / sd, nconstr, compl / sc),
                    Emu=max(dual / sd, constr, compl_mu / sc))

    def complementarity_mean_min(self):
        """(mean, min) of the complementarity products s z at the current iterate; (0, 0)
        without bounds (one transfer)."""
        xp, it = self.xp, self.it
        sL, sU = self.slacks(it.w)
        c = xp.concatenate([sL * it.zL, sU * it.zU])
        if c.size == 0:
            return 0.0, 0.0
        mean, mn = scalars(xp, xp.mean(c), xp.min(c))
        return mean, mn

    def kkt_error_quality(self) -> float:
        """IPOPT's quality_function_pd_system (2-norm-squared) at the current iterate:
        ||grad L||^2 / nw + ||h||^2 / m + ||S z||^2 / (nL + nU), each term where its
        dimension is positive."""
        xp, it = self.xp, self.it
        rd = self.lagrangian_gradient(it.gradf, it.jv, it.y, it.zL, it.zU)
        sL, sU = self.slacks(it.w)
        d2, p2, cL, cU = scalars(xp, xp.sum(rd * rd), xp.sum(it.h * it.h),
                                 xp.sum((sL * it.zL) ** 2), xp.sum((sU * it.zU) ** 2))
        nz = self.nL + self.nU
        return (d2 / max(1, self.nw) + (p2 / self.m if self.m else 0.0)
                + ((cL + cU) / nz if nz else 0.0))

    def unscaled(self, e):
        """The user's (unscaled) dual, constraint and complementarity errors of ``e``."""
        df = self.nlp.df
        constr = e["constr"] if e.get("uconstr") is None else e["uconstr"]
        dual = e["dual"] if e.get("udual") is None else e["udual"]
        return dict(dual=dual / df, constr=constr, compl=e["compl"] / df)

    def primal_dual_error(self, mu, w=None, y=None, zL=None, zU=None, gradf=None, jv=None,
                          hv=None):
        """IPOPT's primal-dual system error (curr_/trial_primal_dual_system_error): the
        1-norms of the Lagrangian gradient, the constraint residual and the relaxed
        complementarity S z - mu, each divided by its length (one transfer).  The
        current iterate's, or the point given by the keyword arrays."""
        xp, it = self.xp, self.it
        w = it.w if w is None else w
        y = it.y if y is None else y
        zL = it.zL if zL is None else zL
        zU = it.zU if zU is None else zU
        gradf = it.gradf if gradf is None else gradf
        jv = it.jv if jv is None else jv
        hv = it.h if hv is None else hv
        rd = self.lagrangian_gradient(gradf, jv, y, zL, zU)
        sL, sU = self.slacks(w)
        dual, primal, cL, cU = scalars(xp, asum(xp, xp.abs(rd)), asum(xp, xp.abs(hv)),
                                       asum(xp, xp.abs(sL * zL - mu)),
                                       asum(xp, xp.abs(sU * zU - mu)))
        nz = self.nL + self.nU
        return (dual / max(self.nw, 1) + (primal / self.m if self.m else 0.0)
                + ((cL + cU) / nz if nz else 0.0))

    # ================================================================ step bounds
    def fraction_to_boundary(self, dw, tau):
        """max alpha in (0, 1] with s + alpha ds >= (1 - tau) s at the current iterate
        (one transfer; the ratios are those of the entries with ds < 0, others +inf):
        the primal half of the ``step_bounds`` reduction, its dual half empty."""
        sL, sU = self.slacks(self.it.w)
        z = self.it.zL[:0]
        return self._bound_of((sL, self.iL, sU, self.iU, dw, z, z, z, z, tau), 0)

    def fraction_to_boundary_z(self, dzL, dzU, tau):
        """The same for the bound multipliers' step ``(dzL, dzU)`` (the dual half)."""
        it = self.it
        s, i = it.zL[:0], self.iL[:0]
        return self._bound_of((s, i, s, i, s, it.zL, dzL, it.zU, dzU, tau), 2)

    def _bound_of(self, args, first: int):
        """min(1, the two minima of ``step_bounds(*args)`` from column ``first``); the
        other half's arrays are empty (their minima +inf, not read back)."""
        terms = fused.call(self.xp, "step_bounds", *args)
        return min([1.0] + scalars(self.xp, *terms[first:first + 2]))

    def step_bounds(self, d: Direction, tau):
        """(fraction_to_boundary(dw), fraction_to_boundary_z(dzL, dzU)) of the step ``d``
        from the current iterate, with one transfer for both; cached in ``d``."""
        hit = d.step_bounds
        if hit is not None and hit[0] == (tau, self.safe_slack_mode):
            return hit[1]
        pending = self.step_bound_terms(d, tau)
        return self.keep_step_bounds(d, pending, scalars(self.xp, *pending[2]))

    def keep_step_bounds(self, d: Direction, pending, values):
        """Record in ``d`` the step bounds from the read-back ``values`` of the minima of
        ``pending`` (:meth:`step_bound_terms`); returns them."""
        key, k, terms = pending
        bounds = (min([1.0] + values[:k]), min([1.0] + values[k:len(terms)]))
        d.step_bounds = (key, bounds)
        return bounds

    def reference_terms(self, d: Direction, tau):
        """For the line search's reference values at the current iterate, one launch
        (``reference_sums``): ``(step_reference's four, the barrier_terms, the
        step_bound_terms)``, none read back."""
        sL, sU = self.slacks(self.it.w)
        it = self.it
        cols = fused.call(self.xp, "reference_sums", d.gphi, d.dw, it.w, it.h, sL,
                          self.idampL, sU, self.idampU, self.iL, self.iU, it.zL, d.dzL,
                          it.zU, d.dzU, tau)
        return (list(cols[:4]), list(cols[4:9]),
                ((tau, self.safe_slack_mode), 2, list(cols[9:13])))

    def step_bound_terms(self, d: Direction, tau):
        """``(key, n_primal, minima)``: the 0-d minima :meth:`step_bounds` takes, not read
        back, the primal ones first (one reduction: ``step_bounds``; an empty bound set's
        minimum is +inf, which the bound 1 absorbs)."""
        sL, sU = self.slacks(self.it.w)
        it = self.it
        return (tau, self.safe_slack_mode), 2, list(fused.call(
            self.xp, "step_bounds", sL, self.iL, sU, self.iU, d.dw, it.zL, d.dzL, it.zU,
            d.dzU, tau))


