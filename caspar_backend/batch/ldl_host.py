"""NumPy numeric phases of the batched LDL^T: level-scheduled, vectorized over the batch.

Every array of the factorization is row-major ``(rows, B)``: row r holds one entry
for all B instances, so each step below is a whole-row gather, an elementwise product
or a fixed-order segment sum over rows of B contiguous floats.  The factorization walks
the elimination tree's levels (:mod:`.ldl_symbolic`); one level costs a fixed number of
NumPy calls:

1. ``G = T[op_t]`` and ``G *= F[op_l]`` (the products ``T_ik L_jk`` of the level's ops,
   sorted by target row then k);
2. ``T[level rows] -= S G`` with S the 0/-1 CSR matrix of the level's targets:
   SciPy's ``csr_matvecs`` subtracts the products of each row in op order,
   ``s = ((C_ij - p_1) - p_2) - ...``, the recurrence of :mod:`.ldl_symbolic`;
3. the level's pivots ``F = T`` and ``F[off rows] = T[off rows] / d[column]``.

So the Python-level work is O(levels), not O(nnz(L)); a level whose ops times B exceed
``WORK_ELEMENTS`` is split into chunks of whole target rows (only the memory of the
product buffer is bounded; the order of every sum is unchanged).  The solves walk the
levels the same way (forward up the tree, backward down it).  The arithmetic is that
of ``kernels/batch_ldl.cu`` operation for operation (no fused multiply-add on either
side), so the two backends agree bit for bit.

Storage for the current factors of all B instances: ``F`` (n_f, B) in the plan's
layout, ``Lrow`` (nnz_l, B) = L's entries in forward-solve order (one gather per
factorization saves one per solve level), ``D`` (n, B) the pivots in level order.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import _sparsetools

from .ldl_symbolic import LDLPlan

#: largest product buffer of one step, in float64 elements (rows times B): 32 MiB
WORK_ELEMENTS = 1 << 22


def _chunks(ptr, lo, hi, cap):
    """Split rows [lo, hi) into runs of whole rows with at most ``cap`` ops each (a
    single row with more ops is a run of its own); ``ptr``: the rows' op pointer.
    Yields ``(ra, rb, ua, ub, local_ptr)`` with local_ptr (rb-ra+1,) int64 from 0."""
    ra = lo
    while ra < hi:
        ua = int(ptr[ra])
        # the last row rb with ptr[rb] - ua <= cap, at least ra + 1
        rb = int(np.searchsorted(ptr[ra:hi + 1], ua + cap, side="right")) - 1 + ra
        rb = min(max(rb, ra + 1), hi)
        ub = int(ptr[rb])
        yield ra, rb, ua, ub, np.ascontiguousarray(ptr[ra:rb + 1] - ua)
        ra = rb


class HostLDL:
    """Final.  The NumPy backend of :class:`~.ldl.BatchLDL` (module doc)."""

    def __init__(self, plan: LDLPlan, batch_size: int,
                 work_elements: int = WORK_ELEMENTS):
        self.plan = pl = plan
        self.B = B = int(batch_size)
        n, n_f, nnz_l = pl.n, pl.n_f, pl.nnz_l
        cap = max(1, int(work_elements) // max(B, 1))
        self._factor_steps, self._fw_steps, self._bw_steps = [], [], []
        gmax = 1
        for lv in range(pl.n_levels):
            t0, t1 = int(pl.row_ptr[lv]), int(pl.row_ptr[lv + 1])
            tc = t0 + int(pl.lev_ptr[lv + 1] - pl.lev_ptr[lv])
            ops = [c for c in _chunks(pl.op_ptr, t0, t1, cap) if c[3] > c[2]]
            div = [(oa, min(oa + cap, t1)) for oa in range(tc, t1, cap)]
            self._factor_steps.append((t0, tc, t1, ops, div))
            r0, r1 = int(pl.lev_ptr[lv]), int(pl.lev_ptr[lv + 1])
            fw = [c for c in _chunks(pl.fw_ptr, r0, r1, cap) if c[3] > c[2]]
            bw = [c for c in _chunks(pl.bw_ptr, r0, r1, cap) if c[3] > c[2]]
            self._fw_steps.append(fw)
            self._bw_steps.append(bw)
            for c in ops + fw + bw:
                gmax = max(gmax, c[3] - c[2])
            gmax = max(gmax, *(b - a for a, b in div)) if div else gmax
        self._minus = -np.ones(gmax)
        self._iota = np.arange(gmax, dtype=np.int64)
        self._gmax = gmax
        # factors of all instances, and the work arrays of one factorization (flat:
        # a factorization of a subset of Ba instances uses their first n_f * Ba entries
        # as contiguous (n_f, Ba) arrays)
        self.F = np.zeros((n_f, B))
        self.Lrow = np.zeros((nnz_l, B))
        self.D = np.zeros((n, B))
        self._T = np.zeros(n_f * B)
        self._F2 = None                 # F of a subset, made at the first such call
        self._G = np.zeros(gmax * B)
        self._G2 = np.zeros(gmax * B)
        self._Y = np.zeros((n, B))
        self._Y2 = np.zeros((n, B))
        self._bad = np.zeros(n * B, bool)
        self._sign = np.zeros(n * B, bool)
        self._key = np.zeros(n * B, np.int64)
        self._elim_of_pos = np.ascontiguousarray(pl.order[:, None])
        self.n_pos = np.zeros(B, np.int64)
        self.n_neg = np.zeros(B, np.int64)
        self.n_zero = np.full(B, n, np.int64)
        self._mv = None                 # matvec's block-diagonal pattern, at first use

    # ------------------------------------------------------------------ factorize
    def factorize(self, values, active=None):
        """``values`` float64 (B, nnz) C-order (structure order); ``active`` None or an
        int64 array of distinct instance indices.  Refactorizes those instances (all
        for None) and updates their inertia; the others keep theirs."""
        pl, B = self.plan, self.B
        n, n_f, nnz_l = pl.n, pl.n_f, pl.nnz_l
        if active is None:
            T = self._T.reshape(n_f, B)
            T[pl.a_row] = values.T
            self._run(T, self.F)
            np.take(self.F, pl.fw_row, axis=0, out=self.Lrow, mode="clip")
            np.take(self.F, pl.diag_row, axis=0, out=self.D, mode="clip")
            self._inertia(self.D, B, self.n_pos, self.n_neg, self.n_zero)
            return
        Ba = len(active)
        if Ba == 0:
            return
        if self._F2 is None:
            self._F2 = np.zeros(n_f * B)
        # the subset's rows of values go through F2's buffer, which the subset's F
        # overwrites once T holds them: no (Ba, nnz) temporary
        sub = self._F2[:Ba * pl.nnz].reshape(Ba, pl.nnz)
        np.take(values, active, axis=0, out=sub, mode="clip")
        T = self._T[:n_f * Ba].reshape(n_f, Ba)
        T[pl.a_row] = sub.T
        F = self._F2[:n_f * Ba].reshape(n_f, Ba)
        self._run(T, F)
        self.F[:, active] = F
        # the subset's Lrow and D through T's buffer (T is not needed any more)
        lrow = self._T[:nnz_l * Ba].reshape(nnz_l, Ba)
        np.take(F, pl.fw_row, axis=0, out=lrow, mode="clip")
        self.Lrow[:, active] = lrow
        d = self._T[:n * Ba].reshape(n, Ba)
        np.take(F, pl.diag_row, axis=0, out=d, mode="clip")
        self.D[:, active] = d
        pos, neg, zero = (np.zeros(Ba, np.int64) for _ in range(3))
        self._inertia(d, Ba, pos, neg, zero)
        self.n_pos[active], self.n_neg[active], self.n_zero[active] = pos, neg, zero

    def _run(self, T, F):
        """Zero T's fill rows, then the level loop (pivots of 0 or inf give inf/nan in
        that instance's columns only: no warnings)."""
        T[self.plan.fill_rows] = 0.0
        with np.errstate(all="ignore"):
            self._levels(T, F, T.shape[1])

    def _levels(self, T, F, Ba):
        """The level loop of the module doc on (n_f, Ba) arrays T (holding C's values
        and zeros at fill rows on entry) and F."""
        for t0, tc, t1, ops, div in self._factor_steps:
            for ra, rb, ua, ub, ptr in ops:
                U = ub - ua
                g = self._G[:U * Ba].reshape(U, Ba)
                g2 = self._G2[:U * Ba].reshape(U, Ba)
                np.take(T, self.plan.op_t[ua:ub], axis=0, out=g, mode="clip")
                np.take(F, self.plan.op_l[ua:ub], axis=0, out=g2, mode="clip")
                g *= g2
                _sparsetools.csr_matvecs(rb - ra, U, Ba, ptr, self._iota[:U],
                                         self._minus[:U], g.ravel(), T[ra:rb].ravel())
            F[t0:tc] = T[t0:tc]
            for oa, ob in div:
                d = self._G[:(ob - oa) * Ba].reshape(ob - oa, Ba)
                np.take(T, self.plan.pivot_row[oa:ob], axis=0, out=d, mode="clip")
                np.divide(T[oa:ob], d, out=F[oa:ob])

    def _inertia(self, D, Ba, pos, neg, zero):
        """Counts of positive / negative pivots before the first pivot (in elimination
        order) that is 0 or not finite; the rest count as zero.  ``D`` (n, Ba) level
        order."""
        n = self.plan.n
        bad = self._bad[:n * Ba].reshape(n, Ba)
        sign = self._sign[:n * Ba].reshape(n, Ba)
        key = self._key[:n * Ba].reshape(n, Ba)
        np.isfinite(D, out=bad)
        np.logical_not(bad, out=bad)
        np.equal(D, 0.0, out=sign)
        bad |= sign
        # the elimination index of the first bad pivot per instance (n when none)
        key.fill(n)
        np.copyto(key, self._elim_of_pos, where=bad)
        first = key.min(axis=0) if n else np.zeros(Ba, np.int64)
        np.less(self._elim_of_pos, first, out=bad)          # bad := counted
        np.greater(D, 0.0, out=sign)
        sign &= bad
        pos[:] = np.count_nonzero(sign, axis=0)
        np.less(D, 0.0, out=sign)
        sign &= bad
        neg[:] = np.count_nonzero(sign, axis=0)
        np.subtract(n - pos, neg, out=zero)

    # ------------------------------------------------------------------ solve
    def solve(self, rhs, out=None):
        """x (B, n) with ``K_b x_b = rhs_b`` (rhs float64 (B, n))."""
        pl, B = self.plan, self.B
        y = self._Y
        np.take(rhs.T, pl.src, axis=0, out=y, mode="clip")
        with np.errstate(all="ignore"):
            for steps in self._fw_steps:
                for ra, rb, ua, ub, ptr in steps:
                    self._step(y, pl.fw_pos[ua:ub], self.Lrow[ua:ub], ra, rb, ptr)
            y /= self.D
            for steps in reversed(self._bw_steps):
                for ra, rb, ua, ub, ptr in steps:
                    f0 = int(pl.bw_row[ua])     # a level's backward rows are contiguous
                    self._step(y, pl.bw_pos[ua:ub], self.F[f0:f0 + ub - ua], ra, rb, ptr)
        np.take(y, pl.dst, axis=0, out=self._Y2, mode="clip")
        if out is None:
            out = np.empty((B, pl.n))
        np.copyto(out, self._Y2.T)
        return out

    def _step(self, y, pos, lvals, ra, rb, ptr):
        """``y[r] -= sum_u lvals[u] * y[pos[u]]`` for the rows r in [ra, rb), u in each
        row's op order (``ptr``)."""
        U, B = len(pos), self.B
        g = self._G[:U * B].reshape(U, B)
        np.take(y, pos, axis=0, out=g, mode="clip")
        g *= lvals
        _sparsetools.csr_matvecs(rb - ra, U, B, ptr, self._iota[:U], self._minus[:U],
                                 g.ravel(), y[ra:rb].ravel())

    # ------------------------------------------------------------------ matvec
    def matvec(self, values, x, out=None):
        """``K_b x_b`` for every b: values float64 (B, nnz) C-order, x (B, n)."""
        pl, B, n = self.plan, self.B, self.plan.n
        if self._mv is None:
            self._mv = _block_diagonal(pl, B)
        ip, ix, y1, y2, dx = self._mv
        v = values.ravel()
        xv = x.ravel()
        N = B * n
        y1.fill(0.0)
        y2.fill(0.0)
        # U x (CSC product) and U^T x (the same arrays read as CSR), block by block
        _sparsetools.csc_matvec(N, N, ip, ix, v, xv, y1.ravel())
        _sparsetools.csr_matvec(N, N, ip, ix, v, xv, y2.ravel())
        np.take(values, pl.diag_pos, axis=1, out=dx, mode="clip")
        dx *= x
        if out is None:
            out = np.empty((B, n))
        np.add(y1, y2, out=out)
        out -= dx
        return out


def _block_diagonal(pl: LDLPlan, B: int):
    """The CSC pattern of ``diag(U_0, ..., U_{B-1})`` (B n x B n) whose data array is
    ``values.ravel()`` (instance b's entries at b*nnz + e), and matvec's work arrays."""
    n, nnz = pl.n, pl.nnz
    idx = np.int32 if max(B * nnz, B * n) < 2 ** 31 - 1 else np.int64
    indptr = np.asarray(pl.indptr, np.int64)
    ip = np.empty(B * n + 1, idx)
    ip[:-1] = (indptr[:-1][None, :] + nnz * np.arange(B)[:, None]).ravel()
    ip[-1] = B * nnz
    ix = (np.asarray(pl.indices, np.int64)[None, :]
          + n * np.arange(B)[:, None]).ravel().astype(idx)
    return ip, ix, np.zeros((B, n)), np.zeros((B, n)), np.zeros((B, n))
