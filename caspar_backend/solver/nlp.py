"""The problem the interior-point method iterates on: ``min f(w) s.t. h(w) = 0, wL <= w <= wU``.

:class:`~.barrier_nlp.BarrierNLP` is the abstract interface; :class:`SlackNLP` builds it
from a user evaluator and :class:`~caspar_backend.solver.restoration.RestorationNLP` from
another BarrierNLP.  For a user problem

    min f(x)  s.t.  lbg <= g(x) <= ubg,  lbx <= x <= ubx

SlackNLP

* removes fixed variables (``lbx == ubx``: IPOPT's ``fixed_variable_treatment =
  make_parameter``) — ``x_free = x[free]``;
* relaxes the remaining bounds and the inequality sides by ``min(constr_viol_tol,
  bound_relax_factor max(1, |bound|))`` (:func:`.relaxation.relaxed_bounds`; the user's constraint
  violation measures the inequalities against these relaxed sides, as IPOPT's
  ``unscaled_curr_nlp_constraint_violation``: :meth:`SlackNLP.unscaled_constr_viol_term`);
* scales ``f`` by ``df`` and each ``g_i`` by ``dc_i`` (gradient-based: the max-norm of the
  scaled gradients at x0 is at most ``nlp_scaling_max_gradient``; user-scaling: the
  user's factors, and the free variables ``x~ = dx x`` by :mod:`.user_scaling`, so that
  ``x_free`` below is ``x~_free``; every argument and result stays in the user's x);
* adds one slack per inequality (``lbg_i < ubg_i``), in constraint order, and writes

      w = [x_free (nx); s (ns)],
      h_E(w) = dc_E (g_E(x) - lbg_E) = 0,      h_I(w) = dc_I g_I(x) - s = 0,
      s bounds: dc_I lbg_I <= s <= dc_I ubg_I.

  ``h`` keeps the user's constraint order (row i of h is constraint i).  With
  ``kkt_system = 'condensed'`` the equalities are relaxed too (MadNLP's
  ``RelaxEquality``): ``b_i - d_i <= g_i <= b_i + d_i`` with ``d_i = min(constr_viol_tol,
  equality_relax_factor * max(1, |b_i|))``, so *every* row gets a slack (``ns = m``,
  ``h = dc g(x) - s``, slack i is column ``nx + i``), the structure
  :class:`~caspar_backend.kkt.condensed.CondensedKKT` condenses.  ``slack_rows`` lists
  the rows with a slack; ``eq`` stays the user's equality rows (the violation reported
  for them is ``|g_i - b_i|``).

Structures (0-based int64 **host** NumPy arrays, w-space): Jacobian COO
``(jac_rows, jac_cols)`` = the user's entries in free columns (renumbered) followed by
one ``-1`` per slack; Hessian lower COO = the user's entries with both indices free.
Slack entries never change, so :meth:`jac` writes them each time only into a
preallocated output.

Array module: ``xp`` is the evaluator's (numpy or cupy).  Vectors (``wL``, ``wU``,
``dc``, the evaluation buffers, every argument and output of ``f/grad/h/jac/hess``)
live in ``xp``; index structures stay on the host, device copies of the gathers the
evaluations need are made once.  Evaluations write into preallocated outputs with
``out=`` arguments: no array of the size of the Jacobian or Hessian is allocated per
call.  Scaling factors are computed once at construction (on the host).

Structure and values: everything above that depends on the fixed set, the equality
rows and the relaxation alone (the column maps, both COO structures, the slack rows,
the device gathers) is a :class:`~.structure.SlackStructure`, taken from the compiled
evaluator's :class:`~caspar_backend.structure_cache.StructureCache` when an earlier
solve built it (:meth:`BarrierNLP.structure`: the solver's other structures, the bound
index sets, KKT patterns and the linear solver's analysis, go through it too).  A solve
builds only what depends on values: the scaling (``x0`` and ``p``), the relaxed bounds,
the offsets and the evaluation buffers.
"""

from __future__ import annotations

import numpy as np

from ..arrays import amax, amax_abs, fused, host, is_host
from .barrier_nlp import BarrierNLP
from .evalcounter import EvalCounter
from .relaxation import slack_bounds
from .scaling import RowNormPlan, free_grad_norm
from .structure import SlackStructure, slack_key
from .user_scaling import ScaledVariables


class SlackNLP(BarrierNLP):
    """Final."""

    def __init__(self, ev, lbx, ubx, lbg, ubg, x0, opts, counter: EvalCounter,
                 keep_fixed: bool = False, user_scaling=None):
        """``user_scaling``: a :class:`~.user_scaling.UserScaling` (its factors used
        with nlp_scaling_method 'user-scaling') or None."""
        self.counter = counter
        xp = self.xp = getattr(ev, "xp", np)
        n, m = ev.n, ev.m
        lbx, ubx = np.asarray(lbx, float), np.asarray(ubx, float)
        lbg, ubg = np.asarray(lbg, float), np.asarray(ubg, float)
        self.n_full, self.m = n, m
        # the structure (module doc) from the compiled problem's cache when it has one
        self._cache = getattr(ev, "structure_cache", None)
        # (keep_fixed: fixed_variable_treatment 'relax_bounds', every variable a variable)
        fixed, eq = (lbx == ubx) & (not keep_fixed), lbg == ubg
        self.user_scaling = user_scaling if opts.nlp_scaling_method == "user-scaling" \
            else None
        # the variables' factors dx (n,) or None; a removed fixed variable is not scaled
        self.dx = None
        if self.user_scaling is not None and self.user_scaling.x is not None:
            dx = np.where(fixed, 1.0, self.user_scaling.x)
            if (dx != 1.0).any():
                self.dx, ev = dx, ScaledVariables(ev, dx)
        self.ev = ev
        relax = opts.kkt_system == "condensed"
        self.structure_key = slack_key(getattr(ev, "device", "cpu"), fixed, eq, relax)
        st = self.structure((), lambda: SlackStructure(ev, fixed, eq, relax, xp))
        self.fixed, self.free, self.nx, self.all_free = st.fixed, st.free, st.nx, st.all_free
        x_full = self.scaled_x(x0)
        x_full[self.fixed] = lbx[self.fixed]
        self.x_full = xp.asarray(x_full)
        self.eq = st.eq
        self.relax_equalities = st.relax_equalities
        self.slack_rows = st.slack_rows
        if self.relax_equalities:           # slack i is column self.nx + i
            self.relaxed_equality_slacks = st.relaxed_equality_slacks
        self.ns, self.nw = st.ns, st.nw
        self._ev_jac_rows, self._ev_jac_cols = st.ev_jac_rows, st.ev_jac_cols
        self._jkeep, self._hkeep = st.jkeep, st.hkeep
        self.hess_rows, self.hess_cols = st.hess_rows, st.hess_cols
        self.jac_rows, self.jac_cols = st.jac_rows, st.jac_cols
        self._nj_user = st.nj_user
        self._hkeep_all = st.hkeep_all
        self._free_d, self._slack_d = st.free_d, st.slack_d
        self._slack_pos_d = st.slack_pos_d
        self._jkeep_d, self._hkeep_d = st.jkeep_d, st.hkeep_d
        # buffers for the user evaluator (full size), allocated once per solve
        self._g = xp.zeros(m)
        self._gradf = xp.zeros(n)
        self._jv = xp.zeros(st.nj_ev)
        self._hv = xp.zeros(0 if self._hkeep_all else st.nh_ev)
        self._lam = xp.zeros(m)
        self.lbg, self.ubg = lbg, ubg
        self.df, self.dc = 1.0, np.ones(m)
        self._compute_scaling(opts)
        rows = self.slack_rows
        dci = self.dc[rows]
        self._dci_d = xp.asarray(dci)
        r = slack_bounds(xp, lbx[self.free], lbg[rows], ubx[self.free], ubg[rows],
                         self.eq[rows], self._dci_d, opts)
        if self.dx is not None:      # relaxed in the user's space, then scaled (IPOPT)
            dxf = xp.asarray(self.dx[self.free])
            r[:self.nx] *= dxf
            r[self.nw:self.nw + self.nx] *= dxf
        self.wL, self.wU = r[:self.nw], r[self.nw:]
        if is_host(xp):
            self._host_bounds = (self.wL, self.wU)     # computed here: no copy back
        g_offset = np.where(st.enforced, lbg, 0.0)   # h_E = dc (g - lbg)
        # device copies of the scaling (dc stays on the host too: driver and results)
        self.dc_d = xp.asarray(self.dc)
        self._dcj_d = xp.asarray(self.dc[self.jac_rows[:self._nj_user]])
        self.g_offset = xp.asarray(g_offset)
        self._eq_d = st.eq_d
        self._enforced_d = st.enforced_d
        self._lbg_d = xp.asarray(lbg)       # the relaxed equalities' |g - b|
        if self.user_scaling is not None:
            # IPOPT's unscaled dual infeasibility: grad_x L~ times dx, grad_s L~ times dc
            dxf = np.ones(self.nx) if self.dx is None else self.dx[self.free]
            self.dual_unscaling_d = xp.asarray(np.concatenate([dxf, dci]))

    def structure(self, key, build):
        """From the evaluator's :class:`~caspar_backend.structure_cache.StructureCache`
        under ``(structure_key, key)`` (:func:`~.structure.slack_key`) when it has one."""
        if self._cache is None:
            return build()
        return self._cache.get((self.structure_key, key), build)

    # ------------------------------------------------------------------ scaling
    def _compute_scaling(self, opts):
        """Once: df, dc (host NumPy) from the gradient and the Jacobian at x0; their
        norms on the evaluator's device (:mod:`.scaling`).  With user-scaling the user's
        factors instead (none given: all ones)."""
        df = opts.obj_scaling_factor
        dc = np.ones(self.m)
        us = self.user_scaling
        if us is not None:
            df *= us.obj
            if us.g is not None:
                dc = us.g.copy()
        elif opts.nlp_scaling_method == "gradient-based":
            gmax, gmin = opts.nlp_scaling_max_gradient, opts.nlp_scaling_min_value
            x = self.x_full
            with self.counter.timed("grad"):
                self.ev.grad(x, self._gradf)
            gf = free_grad_norm(self.xp, self._gradf, self.free, self._free_d, self.all_free)
            if np.isfinite(gf) and gf > gmax:
                df *= max(gmin, gmax / gf)
            if self.m:
                with self.counter.timed("jac"):
                    self.ev.jac_values(x, self._jv)
                keep = None if self._nj_user == len(self._jv) else self._jkeep
                rowmax = self.structure(("row_norms",), lambda: RowNormPlan(
                    self.xp, self._ev_jac_rows, keep, self.m))(self.xp, self._jv)
                big = np.isfinite(rowmax) & (rowmax > gmax)
                dc[big] = np.maximum(gmin, gmax / rowmax[big])
        self.df, self.dc = float(df), dc

    #: the rows of h with a slack (xp), :attr:`slack_rows` on the device
    slack_rows_d = property(lambda self: self._slack_d)

    # ------------------------------------------------------------------ maps
    def set_x(self, w):
        """The evaluator's x of the slack problem's ``w``: without fixed variables the
        view ``w[:nx]`` (no copy: on the device one launch fewer per evaluation), else
        :attr:`x_full` with w's free entries scattered in.  Evaluators read it during
        the call only."""
        if self.all_free:
            return w[:self.nx]
        self.x_full[self._free_d] = w[:self.nx]
        return self.x_full

    def initial_w(self, x0, slacks=True):
        """Unpushed initial w (xp): x0's free entries and slacks ``s = d(x0) = dc_I
        g_I(x0)`` (one constraint evaluation; IPOPT's WarmStartIterateInitializer), or
        zero slacks without an evaluation when ``slacks`` is False (the default
        initializer evaluates d at the pushed x: :func:`~.initial.default_start`)."""
        xp = self.xp
        w = xp.zeros(self.nw)
        w[:self.nx] = xp.asarray(self.scaled_x(x0)[self.free])
        if self.ns and slacks:
            x = self.set_x(w)
            with self.counter.timed("cons"):
                self.ev.cons(x, self._g)
            w[self.nx:] = self._dci_d * self._g[self._slack_d]
        return w

    def scaled_x(self, x):
        """The solver's x of the user's ``x`` (a new host vector (n,)): ``dx x`` with
        user-scaled variables, else a copy."""
        x = np.array(x, dtype=float)
        return x if self.dx is None else x * self.dx

    # ------------------------------------------------------------------ evaluations
    def f(self, w):
        return self._f_at(self.set_x(w))

    def _f_at(self, x):
        with self.counter.timed("obj"):
            return self.df * float(self.ev.obj(x))

    def f_and_h(self, w, hout):
        f = self.f_unread_and_h(w, hout)
        return f if isinstance(f, float) else self.read_f(f)

    def f_unread_and_h(self, w, hout):
        x = self.set_x(w)           # one gather of x (a launch on the device) for both
        pair = getattr(self.ev, "obj_and_cons", None)
        if pair is not None:        # one pass for both (compiled/tape_evaluator.py)
            with self.counter.timed("obj"):
                self.counter.also("cons")
                f = self.df * pair(x, self._g)
            self.h_of_last_g(w, hout)
            return f
        # the objective left on the device where the evaluator can (``obj_unread``)
        unread = getattr(self.ev, "obj_unread", None)
        if unread is None:
            f = self._f_at(x)
        else:
            with self.counter.timed("obj"):
                f = unread(x)
        self._h_at(x, w, hout)
        return f

    def read_f(self, v) -> float:
        """f from the objective value ``v`` of :meth:`f_unread_and_h`, read back."""
        return self.df * float(v)

    def grad_and_jac(self, w, gout, jout):
        x = self.set_x(w)
        pair = getattr(self.ev, "grad_and_jac", None)
        if pair is None:
            self._grad_at(x, gout)
            self._jac_at(x, jout)
            return
        with self.counter.timed("grad"):      # one pass for both
            self.counter.also("jac")
            pair(x, self._gradf, self._jv)
        self._scaled_grad(gout)
        self._scaled_jac(jout)

    def grad(self, w, out):
        return self._grad_at(self.set_x(w), out)

    def _grad_at(self, x, out):
        with self.counter.timed("grad"):
            self.ev.grad(x, self._gradf)
        return self._scaled_grad(out)

    def _scaled_grad(self, out):
        """``out`` = the scaled gradient of the slack problem from the evaluator's last
        gradient (``_gradf``)."""
        xp = self.xp
        if self.all_free:
            fused.call(xp, "scale_pad", self.df, self._gradf, 0.0, out)
            return out
        fused.call(xp, "gather_scale", self._gradf, self._free_d, self.df, out[:self.nx])
        out[self.nx:] = 0.0
        return out

    def h(self, w, out):
        return self._h_at(self.set_x(w), w, out)

    def _h_at(self, x, w, out):
        with self.counter.timed("cons"):
            self.ev.cons(x, self._g)
        return self.h_of_last_g(w, out)

    def h_of_last_g(self, w, out):
        """``h(w)`` from the constraint values of the last evaluation (no evaluation):
        for a ``w`` whose x is the one last evaluated at."""
        fused.call(self.xp, "constraint_residual", self.dc_d, self._g, self.g_offset,
                   self._slack_d, w[self.nx:], self._slack_pos_d, out)
        return out

    def jac(self, w, out):
        return self._jac_at(self.set_x(w), out)

    def _jac_at(self, x, out):
        with self.counter.timed("jac"):
            self.ev.jac_values(x, self._jv)
        return self._scaled_jac(out)

    def _scaled_jac(self, out):
        """``out`` = the slack problem's scaled Jacobian values from the evaluator's
        last values (``_jv``)."""
        xp = self.xp
        k = self._nj_user
        if k == len(self._jv):
            fused.call(xp, "mul_pad", self._dcj_d, self._jv, -1.0, out)
            return out
        fused.call(xp, "gather_mul", self._dcj_d, self._jv, self._jkeep_d, out[:k])
        out[k:] = -1.0
        return out

    def hess(self, w, y, obj_factor, out):
        xp = self.xp
        xp.multiply(self.dc_d, y, out=self._lam)
        with self.counter.timed("hess"):
            if self._hkeep_all:
                # no fixed variable: the evaluator writes the KKT buffer directly
                self.ev.hess_values(self.set_x(w), self._lam, self.df * obj_factor, out)
            else:
                self.ev.hess_values(self.set_x(w), self._lam, self.df * obj_factor,
                                    self._hv)
        if not self._hkeep_all:
            xp.take(self._hv, self._hkeep_d, out=out)
        return out

    def describe_nonfinite(self, w) -> str:
        ev = self.ev
        fn = getattr(ev, "describe_nonfinite", None)
        x = self.set_x(w)
        if fn is None and not is_host(self.xp) and hasattr(ev, "problem"):
            # the device evaluator has no diagnostics: ask the host one (failure path)
            # (one of its own, with this solve's parameters)
            cpu = ev.problem.evaluator("cpu", p=ev.parameters())
            fn, x = cpu.describe_nonfinite, host(x)
        if fn is None:
            return ""
        try:
            return str(fn(x))
        except Exception as exc:     # a diagnostic must never mask the real status
            return f"(describe_nonfinite failed: {exc})"

    def slack_bound_viol(self, w, hv):
        """The inequality rows' violation of their relaxed bounds in the scaled space,
        (ns,) xp:

            v_k = max(wL_k - d_k, d_k - wU_k, 0),   d_k = h_k + s_k = dc_k g_k(x),

        ``wL``, ``wU`` the slacks' bounds (:func:`relaxed_bounds`: the user's sides
        relaxed by bound_relax_factor, then scaled).  IPOPT's d_viol_L / d_viol_U of
        curr_nlp_constraint_violation (and, divided by dc_k, of
        unscaled_curr_nlp_constraint_violation); not the slack residual d - s, which the
        barrier error and the line search use."""
        xp = self.xp
        gI = hv[self._slack_d] + w[self.nx:]
        # (inf - inf on a free side: NaN, dropped by the maximum with the other side;
        # the driver runs the iteration with NumPy's warnings off)
        return xp.maximum(xp.maximum(self.wL[self.nx:] - gI, gI - self.wU[self.nx:]), 0.0)

    def nlp_constr_viol(self, w, hv):
        """IPOPT's ``curr_nlp_constraint_violation`` (max-norm, scaled space), a 0-d
        array: max(|h_E|, :meth:`slack_bound_viol`) -- |h_E| for equalities and, for
        inequalities, how far the scaled g_I lies outside its relaxed bounds.  The
        overall NLP error E_0 of the termination test is built on this one
        (IpOptErrorConvCheck / curr_nlp_error)."""
        xp = self.xp
        if not self.ns:
            return amax_abs(xp, hv)
        vmax = amax(xp, self.slack_bound_viol(w, hv))
        if self.ns == self.m:
            return vmax
        return xp.maximum(vmax, amax_abs(xp, hv[self._enforced_d]))

    def unscaled_constr_viol_term(self, w, hv):
        """:meth:`unscaled_constr_viol` as a 0-d array, not read back (the optimality
        errors read it with their own values).  IPOPT's
        ``unscaled_curr_nlp_constraint_violation`` (max-norm):

            max( max_E |h_i| / dc_i,  max_I v_k / dc_k ),

        v = :meth:`slack_bound_viol`: an inequality is measured against its bounds
        *relaxed* by bound_relax_factor (OrigIpoptNLP::relax_bounds, capped at
        constr_viol_tol), the scaled difference d_L - d(x) divided by dc
        (unapply_vector_scaling_d), an equality by its unscaled residual
        c = g - g_L = h / dc (unscaled_curr_c), not relaxed.  With bound_relax_factor
        = 0 the bounds are the user's.  This is the ``constr_viol`` of the termination
        tests (constr_viol_tol, acceptable_constr_viol_tol), of the log's inf_pr column
        (inf_pr_output = original) and of the final summary's "Constraint violation"
        (unscaled).  A user equality relaxed for the condensed KKT system
        (``relax_equalities``; no IPOPT counterpart) is measured by |g - b|."""
        xp = self.xp
        if self.m == 0:
            return xp.zeros(())
        v = xp.abs(hv) / self.dc_d
        if self.ns:
            v[self._slack_d] = self.slack_bound_viol(w, hv) / self._dci_d
            if self.relax_equalities:
                v = xp.where(self._eq_d, xp.abs(self.user_g(w, hv) - self._lbg_d), v)
        return xp.max(v)

    def constr_viol_terms(self, w, hv):
        """(:meth:`nlp_constr_viol`, :meth:`unscaled_constr_viol_term`) at ``w``, not
        read back: one reduction (``constr_viol``) sharing the bound violation, except
        with relaxed equalities."""
        if self.relax_equalities:
            return super().constr_viol_terms(w, hv)
        nx = self.nx
        return fused.call(self.xp, "constr_viol", hv, self._slack_d, w[nx:], self.wL[nx:],
                          self.wU[nx:], self._enforced_d, self.dc_d, self._dci_d)

    def user_g(self, w, hv):
        """The user's ``g(x)`` at ``w`` (xp) from the residual ``hv = h(w)``, without an
        evaluation: ``hv / dc + lbg`` on enforced equalities, ``(hv + s) / dc`` on the
        rows with a slack ``s``."""
        g = hv / self.dc_d + self.g_offset
        if self.ns:
            g[self._slack_d] += w[self.nx:] / self._dci_d
        return g

    # ------------------------------------------------------------------ results
    def unscale(self, w, y, zL, zU, iL, iU):
        """Primal and CasADi-convention multipliers in the user's full space, as host
        NumPy arrays (the only device-to-host copy of vectors in a solve)."""
        xs = host(self.set_x(w)).copy()      # the solver's x (x~ with user scaling)
        x = xs if self.dx is None else xs / self.dx
        y, zL, zU, iL, iU = (host(a) for a in (y, zL, zU, iL, iU))
        lam_g = y * self.dc / self.df
        zw = np.zeros(self.nw)
        zw[iU] += zU
        zw[iL] -= zL
        lam_x = np.zeros(self.n_full)
        lam_x[self.free] = zw[:self.nx] / self.df
        if self.fixed.any():
            # multiplier of a fixed variable: minus its reduced gradient
            xd = self.xp.asarray(xs)
            with self.counter.timed("grad"):
                self.ev.grad(xd, self._gradf)
            with self.counter.timed("jac"):
                self.ev.jac_values(xd, self._jv)
            jr, jc = self._ev_jac_rows, self._ev_jac_cols
            r = host(self._gradf).copy()
            np.add.at(r, jc, host(self._jv) * lam_g[jr])
            lam_x[self.fixed] = -r[self.fixed]
        if self.dx is not None:        # z = dx z~ (dx = 1 on fixed variables)
            lam_x *= self.dx
        return x, lam_g, lam_x
