"""The slack problem of B instances: :class:`~caspar_backend.solver.nlp.SlackNLP` with a
leading batch dimension.

The B instances share the compiled problem and the *structure* of their slack problems:
the fixed variables (``lbx == ubx``), the equality rows (``lbg == ubg``) and which bounds
are finite (:func:`structure_key`; :mod:`.solve` groups instances by it).  Each instance
has its own bound values, scaling and parameters.  For instance b, with ``free`` the
free variables and ``slack_rows`` the inequality rows (both shared):

    w_b = [x_b[free] (nx); s_b (ns)],
    h_b = dc_b (g_b(x_b) - lbg_b) on equality rows,  dc_b g_b(x_b) - s_b on the others,
    f_b(w) = df_b f(x_b; p_b),

exactly as SlackNLP builds one instance (relaxed bounds, gradient-based scaling at x0).
Arrays (``xp``, float64, row b = instance b): ``wL``, ``wU`` (B, nw), ``df`` (B,),
``dc`` (B, m).  Index structures are shared host int64 arrays in w-space: the Jacobian
COO ``(jac_rows, jac_cols)`` (the user's entries in free columns, then one ``-1`` per
slack) and the Hessian lower COO ``(hess_rows, hess_cols)``, as SlackNLP's.

Evaluations go through a :class:`~.evaluator.BatchEvaluator` (all instances in one
call); they write into preallocated outputs.
"""

from __future__ import annotations

import numpy as np

from ..arrays import host
from ..solver.relaxation import relaxed_bounds
from .scatter import rank_passes


def structure_key(lbx, ubx, lbg, ubg) -> tuple:
    """The slack-problem structure of one instance's bounds (host 1-D arrays): fixed
    variables, equality rows and the finite sides.  Instances with equal keys share one
    lockstep run."""
    return (np.packbits(lbx == ubx).tobytes(), np.packbits(lbg == ubg).tobytes(),
            np.packbits(np.isfinite(lbx)).tobytes(), np.packbits(np.isfinite(ubx)).tobytes(),
            np.packbits(np.isfinite(lbg)).tobytes(), np.packbits(np.isfinite(ubg)).tobytes())


class BatchSlackNLP:
    """Final.  See the module doc.  ``ev``: a BatchEvaluator with its parameters set;
    ``lbx, ubx, lbg, ubg, x0``: host float64 (B, n) / (B, m) arrays of instances with
    one :func:`structure_key`."""

    def __init__(self, ev, lbx, ubx, lbg, ubg, x0, opts):
        self.ev = ev
        xp = self.xp = ev.xp
        B, n, m = x0.shape[0], ev.n, ev.m
        self.B, self.n_full, self.m = B, n, m
        fixed = lbx[0] == ubx[0]
        self.fixed = fixed
        self.free = np.flatnonzero(~fixed)
        self.nx = nx = len(self.free)
        self.all_free = nx == n
        self.eq = lbg[0] == ubg[0]
        if opts.kkt_system != "augmented":
            raise ValueError("the lockstep interior point runs kkt_system 'augmented'")
        self.slack_rows = np.flatnonzero(~self.eq)
        self.ns = ns = len(self.slack_rows)
        self.nw = nx + ns
        x_full = np.array(x0, dtype=float)
        x_full[:, fixed] = lbx[:, fixed]
        self.x_full = xp.asarray(x_full)
        jr, jc = (np.asarray(host(a), np.int64) for a in (ev.jac_rows, ev.jac_cols))
        hr, hc = (np.asarray(host(a), np.int64) for a in (ev.hess_rows, ev.hess_cols))
        colmap = -np.ones(n, np.int64)
        colmap[self.free] = np.arange(nx)
        self._jkeep = np.flatnonzero(colmap[jc] >= 0)
        self._hkeep = np.flatnonzero((colmap[hr] >= 0) & (colmap[hc] >= 0))
        self.hess_rows, self.hess_cols = colmap[hr[self._hkeep]], colmap[hc[self._hkeep]]
        self.jac_rows = np.concatenate([jr[self._jkeep], self.slack_rows])
        self.jac_cols = np.concatenate([colmap[jc[self._jkeep]], nx + np.arange(ns)])
        self._nj_user = len(self._jkeep)
        self._jall = self._nj_user == len(jr)
        self._hall = len(self._hkeep) == len(hr)
        self._free_d = xp.asarray(self.free)
        self._slack_d = xp.asarray(self.slack_rows)
        self._jkeep_d, self._hkeep_d = xp.asarray(self._jkeep), xp.asarray(self._hkeep)
        # evaluation buffers of the user's (full) problem
        self._f = xp.zeros(B)
        self._g = xp.zeros((B, m))
        self._gradf = xp.zeros((B, n))
        self._jv = xp.zeros((B, len(jr)))
        self._hv = xp.zeros((B, len(hr)))
        self._objf = xp.zeros(B)
        self._lam = xp.zeros((B, m))
        self._scaling(opts, jr)
        dci = self.dc[:, self.slack_rows]
        r = relaxed_bounds(lbx[:, self.free], lbg[:, self.slack_rows], ubx[:, self.free],
                           ubg[:, self.slack_rows], self.eq[self.slack_rows], dci, opts)
        self.wL, self.wU = xp.asarray(r[:, :self.nw]), xp.asarray(r[:, self.nw:])
        self.g_offset = xp.asarray(np.where(self.eq, lbg, 0.0))
        self.df_d = xp.asarray(self.df)
        self.dc_d = xp.asarray(self.dc)
        self._dci_d = xp.asarray(dci)
        self._dcj_d = xp.asarray(self.dc[:, self.jac_rows[:self._nj_user]])
        self._enforced_d = xp.asarray(np.flatnonzero(self.eq))

    # ------------------------------------------------------------------ scaling
    def _scaling(self, opts, jr):
        """SlackNLP._compute_scaling for every instance (host): ``df`` (B,), ``dc``
        (B, m)."""
        B, m = self.B, self.m
        df = np.full(B, float(opts.obj_scaling_factor))
        dc = np.ones((B, m))
        if opts.nlp_scaling_method == "gradient-based":
            gmax, gmin = opts.nlp_scaling_max_gradient, opts.nlp_scaling_min_value
            self.ev.first(self.x_full, self._gradf, self._jv)
            gradf = host(self._gradf)
            with np.errstate(invalid="ignore"):
                gf = np.max(np.abs(gradf[:, self.free]), axis=1) if self.nx else np.zeros(B)
            big = np.isfinite(gf) & (gf > gmax)
            df[big] *= np.maximum(gmin, gmax / gf[big])
            if m:
                jv = np.abs(host(self._jv)[:, self._jkeep])
                rows = jr[self._jkeep]
                rowmax = np.zeros((B, m))
                with np.errstate(invalid="ignore"):
                    for k in rank_passes(rows):
                        # rows[k] holds no duplicates: a plain fancy-index maximum
                        rowmax[:, rows[k]] = np.maximum(rowmax[:, rows[k]], jv[:, k])
                bigr = np.isfinite(rowmax) & (rowmax > gmax)
                dc[bigr] = np.maximum(gmin, gmax / rowmax[bigr])
        self.df, self.dc = df, dc

    # ------------------------------------------------------------------ subsets
    #: per-instance arrays (first axis = instance), kept by :meth:`take`
    _PER_INSTANCE = ("x_full", "df", "dc", "wL", "wU", "g_offset", "df_d", "dc_d",
                     "_dci_d", "_dcj_d")
    #: per-instance work buffers, reallocated by :meth:`take`
    _BUFFERS = ("_f", "_g", "_gradf", "_jv", "_hv", "_objf", "_lam")

    #: device copies of shared index structures (moved by :meth:`take` to the host)
    _STRUCTURES = ("_free_d", "_slack_d", "_jkeep_d", "_hkeep_d", "_enforced_d")

    def take(self, idx, make_evaluator, device=None) -> "BatchSlackNLP":
        """The slack problem of the instances ``idx`` (host int64) of this one: a copy
        sharing the structures, with the instances' rows of every per-instance array, new
        work buffers and a new evaluator ``make_evaluator(problem, len(idx), device)``
        bound to their parameters.  ``device='cpu'`` moves it to the host (NumPy)."""
        import copy

        new = copy.copy(self)
        device = device or self.ev.device
        to_host = device == "cpu" and self.xp is not np
        xp = np if to_host else self.xp
        move = (lambda a: np.asarray(host(a))) if to_host else (lambda a: a)
        ev = make_evaluator(self.ev.problem, len(idx), device)
        ev.set_params(self.ev.parameters()[idx])
        new.ev, new.B, new.xp = ev, len(idx), xp
        rows = self.xp.asarray(idx)
        for name in self._PER_INSTANCE:
            a = getattr(self, name)
            setattr(new, name, a[idx] if isinstance(a, np.ndarray) else move(a[rows]))
        for name in self._STRUCTURES:
            setattr(new, name, move(getattr(self, name)))
        for name in self._BUFFERS:
            a = getattr(self, name)
            setattr(new, name, xp.zeros((len(idx),) + a.shape[1:]))
        return new

    # ------------------------------------------------------------------ maps
    def set_x(self, W):
        self.x_full[:, self._free_d] = W[:, :self.nx]
        return self.x_full

    #: the rows of h with a slack (xp), :attr:`slack_rows` on the device
    slack_rows_d = property(lambda self: self._slack_d)

    def initial_w(self):
        """(B, nw) unpushed: x0's free entries, zero slacks (no evaluation; IPOPT's
        default initializer takes s = d(x) at the pushed x:
        :meth:`~.ipm.LockstepIPM.initialize`)."""
        W = self.xp.zeros((self.B, self.nw))
        W[:, :self.nx] = self.x_full[:, self._free_d]
        return W

    # ------------------------------------------------------------------ evaluations
    def zeroth(self, W, f_out, h_out):
        """f (B,) and h (B, m) at W."""
        xp = self.xp
        self.ev.zeroth(self.set_x(W), self._f, self._g)
        xp.multiply(self.df_d, self._f, out=f_out)
        xp.subtract(self._g, self.g_offset, out=h_out)
        xp.multiply(self.dc_d, h_out, out=h_out)
        if self.ns:
            h_out[:, self._slack_d] -= W[:, self.nx:]
        return f_out, h_out

    def first(self, W, grad_out, jac_out):
        """grad f (B, nw) and the Jacobian values (B, nnz_j) at W."""
        xp = self.xp
        self.ev.first(self.set_x(W), self._gradf, self._jv)
        xp.multiply(self.df_d[:, None], self._gradf[:, self._free_d], out=grad_out[:, :self.nx])
        grad_out[:, self.nx:] = 0.0
        k = self._nj_user
        jv = self._jv if self._jall else self._jv[:, self._jkeep_d]
        xp.multiply(self._dcj_d, jv, out=jac_out[:, :k])
        jac_out[:, k:] = -1.0
        return grad_out, jac_out

    def hess(self, W, Y, obj_factor, out):
        """The Lagrangian Hessian values (B, nnz_h) of ``obj_factor_b f_b + Y_b^T h_b``."""
        xp = self.xp
        xp.multiply(self.dc_d, Y, out=self._lam)
        xp.multiply(self.df_d, obj_factor, out=self._objf)
        self.ev.hess(self.set_x(W), self._lam, self._objf, self._hv)
        if self._hall:
            out[...] = self._hv
        else:
            out[...] = self._hv[:, self._hkeep_d]
        return out

    # ------------------------------------------------------------------ violations
    def slack_bound_viol(self, W, H):
        """SlackNLP.slack_bound_viol per instance, (B, ns): the inequality rows' scaled
        violation of their relaxed bounds, max(wL - d, d - wU, 0) with d = h + s."""
        xp = self.xp
        gI = H[:, self._slack_d] + W[:, self.nx:]
        return xp.maximum(xp.maximum(self.wL[:, self.nx:] - gI, gI - self.wU[:, self.nx:]),
                          0.0)

    def nlp_constr_viol(self, W, H):
        """SlackNLP.nlp_constr_viol per instance, (B,)."""
        xp = self.xp
        B = self.B
        if self.m == 0:
            return xp.zeros(B)
        if not self.ns:
            return xp.max(xp.abs(H), axis=1)
        vmax = xp.max(self.slack_bound_viol(W, H), axis=1)
        if self.ns == self.m:
            return vmax
        return xp.maximum(vmax, xp.max(xp.abs(H[:, self._enforced_d]), axis=1))

    def unscaled_constr_viol(self, W, H):
        """SlackNLP.unscaled_constr_viol_term per instance, (B,): IPOPT's
        unscaled_curr_nlp_constraint_violation, max(|h_E| / dc_E, v_I / dc_I) with v =
        :meth:`slack_bound_viol` (the inequalities against their sides relaxed by
        bound_relax_factor, the equalities not relaxed)."""
        xp = self.xp
        if self.m == 0:
            return xp.zeros(self.B)
        v = xp.abs(H) / self.dc_d
        if self.ns:
            v[:, self._slack_d] = self.slack_bound_viol(W, H) / self._dci_d
        return xp.max(v, axis=1)

    # ------------------------------------------------------------------ results
    def unscale(self, W, Y, ZL, ZU, iL, iU):
        """Host (x (B, n), lam_g (B, m), lam_x (B, n)) in CasADi's convention, as
        SlackNLP.unscale per instance."""
        x = host(self.set_x(W)).copy()
        W, Y, ZL, ZU = (host(a) for a in (W, Y, ZL, ZU))
        lam_g = Y * self.dc / self.df[:, None]
        zw = np.zeros((self.B, self.nw))
        zw[:, iU] += ZU
        zw[:, iL] -= ZL
        lam_x = np.zeros((self.B, self.n_full))
        lam_x[:, self.free] = zw[:, :self.nx] / self.df[:, None]
        if self.fixed.any():
            xd = self.xp.asarray(x)
            self.ev.first(xd, self._gradf, self._jv)
            jr, jc = (np.asarray(host(a), np.int64) for a in (self.ev.jac_rows,
                                                               self.ev.jac_cols))
            r = host(self._gradf).copy()
            contrib = host(self._jv) * lam_g[:, jr]
            for k in rank_passes(jc):
                r[:, jc[k]] += contrib[:, k]
            lam_x[:, self.fixed] = -r[:, self.fixed]
        return x, lam_g, lam_x
