"""The problem the interior-point method iterates on: ``min f(w) s.t. h(w) = 0, wL <= w <= wU``.

:class:`BarrierNLP` is the abstract interface; :class:`SlackNLP` builds it from a user
evaluator and :class:`~caspar_backend.solver.restoration.RestorationNLP` from another
BarrierNLP.  For a user problem

    min f(x)  s.t.  lbg <= g(x) <= ubg,  lbx <= x <= ubx

SlackNLP

* removes fixed variables (``lbx == ubx``: IPOPT's ``fixed_variable_treatment =
  make_parameter``) — ``x_free = x[free]``;
* relaxes the remaining bounds and the inequality sides by ``bound_relax_factor *
  max(1, |bound|)``;
* scales ``f`` by ``df`` and each ``g_i`` by ``dc_i`` (gradient-based: the max-norm of the
  scaled gradients at x0 is at most ``nlp_scaling_max_gradient``);
* adds one slack per inequality (``lbg_i < ubg_i``), in constraint order, and writes

      w = [x_free (nx); s (ns)],
      h_E(w) = dc_E (g_E(x) - lbg_E) = 0,      h_I(w) = dc_I g_I(x) - s = 0,
      s bounds: dc_I lbg_I <= s <= dc_I ubg_I.

  ``h`` keeps the user's constraint order (row i of h is constraint i).

Structures (0-based int64, w-space): Jacobian COO ``(jac_rows, jac_cols)`` = the user's
entries in free columns (renumbered) followed by one ``-1`` per slack; Hessian lower
COO = the user's entries with both indices free.  Slack entries never change, so
:meth:`jac` writes them each time only into a preallocated output.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod

import numpy as np


class BarrierNLP(ABC):
    """Abstract; see the module doc.  ``nx`` leading entries of w are the variables whose
    Hessian block is W (L-BFGS approximates that block), the rest have zero Hessian."""

    nw: int
    nx: int
    m: int
    wL: np.ndarray
    wU: np.ndarray
    jac_rows: np.ndarray
    jac_cols: np.ndarray
    hess_rows: np.ndarray
    hess_cols: np.ndarray

    @abstractmethod
    def f(self, w) -> float: ...

    @abstractmethod
    def grad(self, w, out): ...

    @abstractmethod
    def h(self, w, out): ...

    @abstractmethod
    def jac(self, w, out): ...

    @abstractmethod
    def hess(self, w, y, obj_factor, out): ...

    def describe_nonfinite(self, w) -> str:
        return ""


class EvalCounter:
    """Counts and times evaluations (shared by nested problems)."""

    def __init__(self):
        self.counts = dict(obj=0, grad=0, cons=0, jac=0, hess=0)
        self.seconds = 0.0

    def timed(self, kind):
        counter = self

        class _T:
            def __enter__(self):
                counter.counts[kind] += 1
                self.t = time.perf_counter()

            def __exit__(self, *a):
                counter.seconds += time.perf_counter() - self.t

        return _T()


class SlackNLP(BarrierNLP):
    """Final."""

    def __init__(self, ev, lbx, ubx, lbg, ubg, x0, opts, counter: EvalCounter):
        self.ev, self.counter = ev, counter
        n, m = ev.n, ev.m
        lbx, ubx = np.asarray(lbx, float), np.asarray(ubx, float)
        lbg, ubg = np.asarray(lbg, float), np.asarray(ubg, float)
        self.n_full, self.m = n, m
        self.fixed = lbx == ubx
        self.free = np.flatnonzero(~self.fixed)
        self.nx = nx = len(self.free)
        self.x_full = np.array(x0, dtype=float)
        self.x_full[self.fixed] = lbx[self.fixed]
        self.eq = lbg == ubg
        self.ineq = np.flatnonzero(~self.eq)
        self.ns = ns = len(self.ineq)
        self.nw = nx + ns
        colmap = -np.ones(n, np.int64)
        colmap[self.free] = np.arange(nx)
        jr, jc = np.asarray(ev.jac_rows, np.int64), np.asarray(ev.jac_cols, np.int64)
        self._jkeep = np.flatnonzero(colmap[jc] >= 0)
        self.jac_rows = np.concatenate([jr[self._jkeep], self.ineq])
        self.jac_cols = np.concatenate([colmap[jc[self._jkeep]], nx + np.arange(ns)])
        self._nj_user = len(self._jkeep)
        hr, hc = np.asarray(ev.hess_rows, np.int64), np.asarray(ev.hess_cols, np.int64)
        self._hkeep = np.flatnonzero((colmap[hr] >= 0) & (colmap[hc] >= 0))
        self.hess_rows, self.hess_cols = colmap[hr[self._hkeep]], colmap[hc[self._hkeep]]
        # buffers for the user evaluator (full size), allocated once
        self._g = np.zeros(m)
        self._gradf = np.zeros(n)
        self._jv = np.zeros(len(jr))
        self._hv = np.zeros(len(hr))
        self._lam = np.zeros(m)
        self.lbg, self.ubg = lbg, ubg
        self.df, self.dc = 1.0, np.ones(m)
        self._compute_scaling(opts)
        # relaxed bounds (IPOPT relaxes in the unscaled space, at most constr_viol_tol)
        brf = opts.bound_relax_factor

        def relax(b, sign):
            return b + sign * np.minimum(opts.constr_viol_tol, brf * np.maximum(1.0, np.abs(b)))

        xl, xu = lbx[self.free], ubx[self.free]
        gl, gu = lbg[self.ineq], ubg[self.ineq]
        dci = self.dc[self.ineq]
        self.wL = np.concatenate([relax(xl, -1), dci * relax(gl, -1)])
        self.wU = np.concatenate([relax(xu, +1), dci * relax(gu, +1)])
        self.g_offset = np.where(self.eq, lbg, 0.0)   # h_E = dc (g - lbg)

    # ------------------------------------------------------------------ scaling
    def _compute_scaling(self, opts):
        df = opts.obj_scaling_factor
        dc = np.ones(self.m)
        if opts.nlp_scaling_method == "gradient-based":
            gmax, gmin = opts.nlp_scaling_max_gradient, opts.nlp_scaling_min_value
            x = self.x_full
            with self.counter.timed("grad"):
                self.ev.grad(x, self._gradf)
            gf = np.max(np.abs(self._gradf[self.free])) if self.nx else 0.0
            if np.isfinite(gf) and gf > gmax:
                df *= max(gmin, gmax / gf)
            if self.m:
                with self.counter.timed("jac"):
                    self.ev.jac_values(x, self._jv)
                rows = np.asarray(self.ev.jac_rows)[self._jkeep]
                rowmax = np.zeros(self.m)
                with np.errstate(invalid="ignore"):     # NaN rows are left unscaled
                    np.maximum.at(rowmax, rows, np.abs(self._jv[self._jkeep]))
                big = np.isfinite(rowmax) & (rowmax > gmax)
                dc[big] = np.maximum(gmin, gmax / rowmax[big])
        self.df, self.dc = float(df), dc

    # ------------------------------------------------------------------ maps
    def set_x(self, w):
        self.x_full[self.free] = w[:self.nx]
        return self.x_full

    def initial_w(self, x0):
        """Unpushed initial w: x0's free entries and slacks equal to the scaled g(x0)."""
        w = np.zeros(self.nw)
        w[:self.nx] = np.asarray(x0, float)[self.free]
        if self.ns:
            self.set_x(w)
            with self.counter.timed("cons"):
                self.ev.cons(self.x_full, self._g)
            w[self.nx:] = self.dc[self.ineq] * self._g[self.ineq]
        return w

    # ------------------------------------------------------------------ evaluations
    def f(self, w):
        with self.counter.timed("obj"):
            return self.df * float(self.ev.obj(self.set_x(w)))

    def grad(self, w, out):
        with self.counter.timed("grad"):
            self.ev.grad(self.set_x(w), self._gradf)
        out[:self.nx] = self.df * self._gradf[self.free]
        out[self.nx:] = 0.0
        return out

    def h(self, w, out):
        with self.counter.timed("cons"):
            self.ev.cons(self.set_x(w), self._g)
        out[:] = self.dc * (self._g - self.g_offset)
        out[self.ineq] -= w[self.nx:]
        return out

    def jac(self, w, out):
        with self.counter.timed("jac"):
            self.ev.jac_values(self.set_x(w), self._jv)
        k = self._nj_user
        out[:k] = self.dc[self.jac_rows[:k]] * self._jv[self._jkeep]
        out[k:] = -1.0
        return out

    def hess(self, w, y, obj_factor, out):
        self._lam[:] = self.dc * y
        with self.counter.timed("hess"):
            self.ev.hess_values(self.set_x(w), self._lam, self.df * obj_factor, self._hv)
        out[:] = self._hv[self._hkeep]
        return out

    def describe_nonfinite(self, w) -> str:
        fn = getattr(self.ev, "describe_nonfinite", None)
        if fn is None:
            return ""
        try:
            return str(fn(self.set_x(w)))
        except Exception as exc:     # a diagnostic must never mask the real status
            return f"(describe_nonfinite failed: {exc})"

    def unscaled_constr_viol(self, w, hv) -> float:
        """Max-norm violation of the user's constraints (sides, not slacks) at w."""
        if self.m == 0:
            return 0.0
        g = hv / self.dc + self.g_offset
        g[self.ineq] += w[self.nx:] / self.dc[self.ineq]
        v = np.where(self.eq, np.abs(g - self.lbg),
                     np.maximum(0.0, np.maximum(self.lbg - g, g - self.ubg)))
        return float(np.max(v))

    # ------------------------------------------------------------------ results
    def unscale(self, w, y, zL, zU, iL, iU):
        """Primal and CasADi-convention multipliers in the user's full space."""
        x = self.set_x(w).copy()
        lam_g = y * self.dc / self.df
        zw = np.zeros(self.nw)
        zw[iU] += zU
        zw[iL] -= zL
        lam_x = np.zeros(self.n_full)
        lam_x[self.free] = zw[:self.nx] / self.df
        if self.fixed.any():
            # multiplier of a fixed variable: minus its reduced gradient
            with self.counter.timed("grad"):
                self.ev.grad(x, self._gradf)
            with self.counter.timed("jac"):
                self.ev.jac_values(x, self._jv)
            jr = np.asarray(self.ev.jac_rows)
            jc = np.asarray(self.ev.jac_cols)
            r = self._gradf.copy()
            np.add.at(r, jc, self._jv * lam_g[jr])
            lam_x[self.fixed] = -r[self.fixed]
        return x, lam_g, lam_x
