"""The augmented KKT systems of B instances with one pattern.

For each instance b the matrix of :class:`~caspar_backend.kkt.augmented.AugmentedKKT`
(no low-rank block):

    K_b = [ W_b + Sigma_b + delta_w,b I      A_b^T         ]
          [ A_b                         -delta_c,b I    ]

factorized with the same static regularization ``eps`` (one value for the batch: an
instance whose path would change it leaves the batch) and solved with iterative
refinement against K_b itself, every formula as in AugmentedKKT.build/solve applied row
by row: ``ew_j = eps min(1, |K_j|_2)`` while ``delta_w,b = 0``, ``ec_i = eps min(1,
|A_i|^2)`` bounded by ``kappa p_i`` (private columns) while ``delta_c,b = 0``, then
``max(ec_i - delta_c,b, 0)``.

Arrays (``xp``, float64, row b = instance b): ``hess_values`` (B, nnz_h), ``jac_values``
(B, nnz_j), ``sigma`` (B, nw), ``delta_w``/``delta_c`` (B,), ``values`` (B, nnz) in the
upper-CSC order of ``structure`` (the same structure and assembly map as the single
system's: its :class:`~caspar_backend.kkt.pattern.AugmentedPattern` is built once for
them).  Segment sums run through :class:`~.scatter.ScatterSum` (the single path's
order).
"""

from __future__ import annotations

import numpy as np

from ..kkt.augmented import AugmentedKKT
from ..kkt.pattern import AugmentedPattern
from .scatter import ScatterSum


def qdldl_order(structure, nw: int):
    """The elimination order QDLDL (the single CPU path's factorization) uses for
    ``structure``: its AMD permutation, read from a factorization of a quasi-definite
    matrix of that pattern (identity first block, minus identity second, zeros
    elsewhere: AMD reads only the pattern).  In this order the batched factorization
    performs QDLDL's operations in QDLDL's order (:mod:`.ldl_symbolic`): its factors and
    solves are the single path's bit for bit; None without qdldl."""
    try:
        import qdldl
    except ImportError:
        return None
    import scipy.sparse as sp

    n = structure.n
    col = np.repeat(np.arange(n), np.diff(structure.indptr))
    row = np.asarray(structure.indices)
    vals = np.where(row == col, np.where(col < nw, 1.0, -1.0), 0.0)
    a = sp.csc_matrix((vals, row.astype(np.int32), structure.indptr.astype(np.int32)),
                      shape=(n, n))
    return np.asarray(qdldl.Solver(a, upper=True).factors()[2], np.int64)


class BatchAugmentedKKT:
    """Final.  See the module doc.  ``make_ldl(structure, B, xp, perm)`` builds the
    batched factorization (:class:`.ldl.BatchLDL`) in the elimination order ``perm``."""

    def __init__(self, B, nw, m, hess_rows, hess_cols, jac_rows, jac_cols, make_ldl, xp,
                 max_refinement_steps, residual_ratio_max, static_regularization,
                 ldl_like=None):
        self.xp, self.B, self.nw, self.m = xp, B, int(nw), int(m)
        self._args = (nw, m, hess_rows, hess_cols, jac_rows, jac_cols, make_ldl, xp,
                      max_refinement_steps, residual_ratio_max, static_regularization)
        single = AugmentedPattern(nw, m, hess_rows, hess_cols, jac_rows, jac_cols)
        self.structure = single.structure
        self.N, self.nnz = single.N, single.nnz
        self.private_pivot_fraction = AugmentedKKT.PRIVATE_PIVOT_FRACTION
        o = single.off
        self._off = o
        hr, hc = np.asarray(hess_rows, np.int64), np.asarray(hess_cols, np.int64)
        jr, jc = np.asarray(jac_rows, np.int64), np.asarray(jac_cols, np.int64)
        self._assemble = ScatterSum(xp, single.map, self.nnz)
        self._src = xp.zeros((B, int(o[4])))
        self.hess_values = self._src[:, o[0]:o[1]]
        self._diag_w = self._src[:, o[1]:o[2]]
        self.jac_values = self._src[:, o[2]:o[3]]
        self._diag_c = self._src[:, o[3]:o[4]]
        # factorize's 'failed' where the factorization pivots: never (read-only use)
        self._never_failed = xp.zeros(B, bool)
        self.sigma = xp.zeros((B, nw))
        self.delta_w, self.delta_c = xp.zeros(B), xp.zeros(B)
        self.values = xp.zeros((B, self.nnz))
        self.static_regularization = float(static_regularization)
        self.max_refinement_steps = max_refinement_steps
        self.residual_ratio_max = residual_ratio_max
        # the static terms' row/column sums (AugmentedKKT.__init__)
        off = np.flatnonzero(hr != hc)
        self._hoff = xp.asarray(off)
        self._row_sq = ScatterSum(xp, jr, m)
        self._col_sq = ScatterSum(xp, np.concatenate([hr, hc[off], jc, np.arange(nw)]), nw)
        self._csq = xp.zeros((B, len(hr) + len(off) + len(jc) + nw))
        nh, noff, nj = len(hr), len(off), len(jc)
        self._q_h = self._csq[:, :nh]
        self._q_off = self._csq[:, nh:nh + noff]
        self._jsq = self._csq[:, nh + noff:nh + noff + nj]
        self._q_sig = self._csq[:, nh + noff + nj:]
        self._ew, self._ec = xp.zeros((B, nw)), xp.zeros((B, m))
        self.dstat = xp.zeros((B, self.N))
        count = np.bincount(jc, minlength=nw)
        in_hess = np.zeros(nw, bool)
        in_hess[hr], in_hess[hc] = True, True
        single_row = (np.bincount(jr, minlength=m) == 1)[jr]
        priv = np.flatnonzero(((count[jc] == 1) & ~in_hess[jc]) | single_row)
        self._priv_entry, self._priv_col = xp.asarray(priv), xp.asarray(jc[priv])
        self._priv_sum = ScatterSum(xp, jr[priv], m)
        self._priv = xp.zeros((B, m))
        self._priv_none = xp.asarray(np.where(np.bincount(jr[priv], minlength=m) > 0,
                                              0.0, np.inf))
        if ldl_like is None:
            self.ldl = make_ldl(self.structure, B, xp, qdldl_order(self.structure, self.nw))
        else:   # the symbolic analysis of another batch size's factorization, its kind
            self.ldl = make_ldl(self.structure, B, xp, plan=ldl_like.plan,
                                dense=ldl_like.dense)
        self._rhs = xp.zeros((B, self.N))
        self._kv = xp.zeros((B, self.N))

    def resized(self, B: int, xp=None) -> "BatchAugmentedKKT":
        """The same system for ``B`` instances (values not kept: they are assembled
        every iteration), reusing the factorization's symbolic analysis; ``xp``: another
        array module."""
        args = list(self._args)
        if xp is not None:
            args[7] = xp
        out = BatchAugmentedKKT(B, *args, ldl_like=self.ldl)
        out.static_regularization = self.static_regularization
        return out

    # ------------------------------------------------------------------ values
    def build(self) -> None:
        """AugmentedKKT.build for every instance (its comments give the reasons)."""
        xp, eps = self.xp, self.static_regularization
        if eps != 0.0:
            xp.multiply(self.jac_values, self.jac_values, out=self._jsq)
        ew = self._primal_static_term(eps)
        ec = self._ec
        if eps == 0.0:
            ec.fill(0.0)
        else:
            self._row_sq(self._jsq, ec)
            xp.minimum(ec, 1.0, out=ec)
            ec *= eps
            free_c = (self.delta_c == 0.0)[:, None]
            xp.copyto(ec, xp.minimum(ec, self._private_pivots()), where=free_c)
        ec -= self.delta_c[:, None]
        xp.maximum(ec, 0.0, out=ec)
        self.dstat[:, :self.nw] = ew
        xp.multiply(ec, -1.0, out=self.dstat[:, self.nw:])
        xp.add(self.sigma, self.delta_w[:, None], out=self._diag_w)
        self._diag_w += ew
        xp.multiply(ec, -1.0, out=self._diag_c)
        self._diag_c -= self.delta_c[:, None]
        self._assemble(self._src, self.values)

    def _primal_static_term(self, eps):
        """``ew_j = eps min(1, |K_j|_2)`` for the instances with delta_w = 0, 0 for the
        others, (B, nw)."""
        xp, ew = self.xp, self._ew
        if eps == 0.0:
            ew.fill(0.0)
            return ew
        xp.multiply(self.hess_values, self.hess_values, out=self._q_h)
        self._q_off[...] = self._q_h[:, self._hoff]
        xp.multiply(self.sigma, self.sigma, out=self._q_sig)
        self._col_sq(self._csq, ew)
        xp.sqrt(ew, out=ew)
        xp.minimum(ew, 1.0, out=ew)
        ew *= eps
        ew *= (self.delta_w == 0.0)[:, None]
        return ew

    def _private_pivots(self):
        xp = self.xp
        v = self.jac_values[:, self._priv_entry]
        v *= v
        d = self.sigma[:, self._priv_col] + self.delta_w[:, None]
        xp.maximum(d, 1e-30, out=d)
        v /= d
        self._priv_sum(v, self._priv)
        self._priv *= self.private_pivot_fraction
        self._priv += self._priv_none
        return self._priv

    # ------------------------------------------------------------------ factor / solve
    def factorize(self, active=None):
        """Factorize the assembled values of the instances ``active`` (all when None);
        returns ``(ok, singular, failed)`` (B,) for every instance's current factors: ok =
        the inertia is (nw, m, 0); singular = a zero pivot or, where the factorization
        pivots (exact inertia), fewer than m negative eigenvalues
        (InertiaCorrector._singular); failed = an unpivoted factorization with fewer than
        m negative eigenvalues although every constraint row's diagonal is negative
        (InertiaCorrector._unpivoted_failure: the single path's pivoting switch)."""
        n_pos, n_neg, n_zero = self.ldl.factorize(self.values, active)
        ok = (n_zero == 0) & (n_pos == self.nw) & (n_neg == self.m)
        singular = n_zero > 0
        if self.ldl.pivots and self.m > 0:
            return ok, singular | (n_neg < self.m), self._never_failed
        failed = (n_zero == 0) & (n_neg < self.m) & self.xp.all(self._diag_c < 0.0, axis=1)
        return ok, singular, failed

    def solve(self, rhs_w, rhs_c, rows=None):
        """``(dw (B, nw), dy (B, m), ratio (B,), contraction (B,))``: each instance's
        solve refined against K_b as :func:`~caspar_backend.kkt.refinement.refine` does
        for one (the same stopping rule per instance).  ``rows``: bool (B,) of the
        instances that need the solve (others' rows are not refined; their values are
        meaningless)."""
        xp, nw, B = self.xp, self.nw, self.B
        b = self._rhs
        b[:, :nw], b[:, nw:] = rhs_w, rhs_c
        x = self.ldl.solve(b)
        ratio_out, rho = xp.zeros(B), xp.zeros(B)
        steps = self.max_refinement_steps
        if not steps:
            return x[:, :nw].copy(), x[:, nw:].copy(), ratio_out, rho
        go = xp.ones(B, bool) if rows is None else xp.asarray(rows).copy()
        converged = xp.zeros(B, bool)
        bnorm = None
        rn = xp.zeros(B)
        ratio = xp.zeros(B)
        for step in range(steps + 1):
            res = self._residual(b, x)
            if step == 0:
                x += self.ldl.solve(res)
                continue
            rn_new = xp.max(xp.abs(res), axis=1)
            xn = xp.max(xp.abs(x), axis=1)
            if bnorm is None:
                bnorm = xp.max(xp.abs(b), axis=1)
            else:
                rho = xp.where(go, xp.where(rn > 0, rn_new / xp.where(rn > 0, rn, 1.0), 0.0),
                               rho)
            rn = xp.where(go, rn_new, rn)
            new_ratio = rn / (1.0 + bnorm + xp.minimum(xn, 1e6 * bnorm))
            ratio = xp.where(go, new_ratio, ratio)
            finite = xp.isfinite(ratio)
            conv = go & finite & (ratio <= self.residual_ratio_max)
            converged |= conv
            go &= finite & ~conv
            if step == steps or not bool(go.any()):
                break
            corr = self.ldl.solve(res)
            x += xp.where(go[:, None], corr, 0.0)
        if self.static_regularization > 0:
            with np.errstate(all="ignore"):
                reg = xp.where(bnorm > 0, rn / xp.where(bnorm > 0, bnorm, 1.0), 0.0)
            ratio = xp.where(converged, ratio, reg)
        return x[:, :nw].copy(), x[:, nw:].copy(), ratio, rho

    def _residual(self, b, x):
        """b - K x per instance (K without the static term: the factorized values
        minus ``dstat``), as the single path's ``residual_static``."""
        kv = self.ldl.matvec(self.values, x, out=self._kv)
        return b - kv + self.dstat * x
