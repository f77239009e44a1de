"""NumPy numeric phases of the batched LDL^T: level-scheduled, vectorized over the batch.

Every array of the factorization is row-major ``(rows, B)``: row r holds one entry
for all B instances, so each step below is a whole-row gather, an elementwise product
or a fixed-order segment sum over rows of B contiguous floats.  The factorization walks
the elimination tree's levels (:mod:`.ldl_symbolic`); one level costs a fixed number of
NumPy calls:

1. ``G = T[op_t]`` and ``G *= F[op_l]`` (the products ``T_kc L_ic`` of the level's
   ops, sorted by target row, then by the row's processing order);
2. ``T[level rows] -= S G`` with S the 0/-1 CSR matrix of the level's targets:
   SciPy's ``csr_matvecs`` subtracts the products of each row in op order,
   ``s = ((C_ki - p_1) - p_2) - ...``, QDLDL's sequence (:mod:`.ldl_symbolic`);
3. ``F[pivot rows] = 1 / T[pivot rows]`` (the level's ``dinv``, one slice), then
   ``F[off rows] = T[off rows] * dinv[column]`` (gathered, or broadcast when the level
   is one column); after the last level one gather each copies the pivots to ``D``
   and their reciprocals to ``Dinv``.

So the Python-level work is O(levels), not O(nnz(L)); a level whose ops times B exceed
``WORK_ELEMENTS`` is split into chunks of whole target rows (only the memory of the
product buffer is bounded; the order of every sum is unchanged).  The solves walk the
levels the same way (forward up the tree, backward down it).  The arithmetic is that
of ``kernels/batch_ldl.cu`` operation for operation (no fused multiply-add on either
side), so the two backends agree bit for bit.

Storage for the current factors of all B instances: ``F`` (n_f, B) in the plan's
layout (L and dinv), ``Lrow`` (nnz_l, B) = L's entries in forward-solve order (one
gather per factorization saves one per solve level), ``D`` and ``Dinv`` (n, B) the
pivots and their reciprocals in level order (the solve multiplies by ``Dinv``).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import _sparsetools

from .ldl_symbolic import LDLPlan

#: largest product buffer of one step, in float64 elements (rows times B): 32 MiB
WORK_ELEMENTS = 1 << 22
#: the caller's (B, k) arrays are transposed to (k, B) and back in blocks of B_blk
#: instances, B_blk k ~ this many elements (256 KiB: a block's rows stay in cache while
#: its columns are read; NumPy's unblocked strided copy is 2-3x slower at k = 10,
#: B = 10^5).  Where B_blk would be under ``MIN_BLOCK`` (wide rows: each block row
#: would be copied in short pieces) NumPy's own copy is as fast: one call.
TRANSPOSE_ELEMENTS = 1 << 15
MIN_BLOCK = 256


def _block(B: int, k: int) -> int:
    """Instances per transpose block for B rows of k entries (B: a single block)."""
    step = TRANSPOSE_ELEMENTS // max(k, 1)
    return B if step < MIN_BLOCK else step


def to_rows(dst, rows, src) -> None:
    """``dst[rows[i], b] = src[b, i]`` for every b: ``src`` (B, k) C-order into the
    row-major ``dst`` (r, B); ``rows`` an int64 index array (k,) or a slice.  The
    index falls on the destination: no temporary."""
    B = src.shape[0]
    step = _block(B, src.shape[1])
    for b0 in range(0, B, step):
        dst[rows, b0:b0 + step] = src[b0:b0 + step].T


def from_rows(dst, cols, src) -> None:
    """``dst[b, cols[r]] = src[r, b]`` for every b: the row-major ``src`` (n, B) into
    ``dst`` (B, n) (C-order or not); ``cols`` an int64 index array (n,)."""
    B = dst.shape[0]
    step = _block(B, dst.shape[1])
    for b0 in range(0, B, step):
        dst[b0:b0 + step, cols] = src[:, b0:b0 + step].T


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
            scl = [(oa, min(oa + cap, t1)) for oa in range(tc, t1, cap)]
            self._factor_steps.append((t0, tc, t1, ops, scl))
            r0, r1 = int(pl.lev_ptr[lv]), int(pl.lev_ptr[lv + 1])
            fw = [c for c in _chunks(pl.fw_ptr, r0, r1, cap) if c[3] > c[2]]
            bw = [c for c in _chunks(pl.bw_ptr, r0, r1, cap) if c[3] > c[2]]
            self._fw_steps.append(fw)
            self._bw_steps.append(bw)
            for c in ops + fw + bw:
                gmax = max(gmax, c[3] - c[2])
            gmax = max(gmax, *(b - a for a, b in scl)) if scl else gmax
        self._minus = -np.ones(gmax)
        self._iota = np.arange(gmax, dtype=np.int64)
        # factors of all instances, and the work arrays of one factorization (flat:
        # a factorization of a subset of Ba instances uses their first n_f * Ba entries
        # as contiguous (n_f, Ba) arrays)
        self.F = np.zeros((n_f, B))
        self.Lrow = np.zeros((nnz_l, B))
        self.D = np.zeros((n, B))
        self.Dinv = np.zeros((n, B))
        self._T = np.zeros(n_f * B)
        self._F2 = None                 # F of a subset, made at the first such call
        self._G = np.zeros(gmax * B)
        self._G2 = np.zeros(gmax * B)
        self._Y = np.zeros((n, B))      # the solve's work vector; a subset's dinv
        self._Y2 = np.zeros((n, B))     # scratch: a subset's pivots
        self._ok = np.zeros(n * B, bool)
        self._sign = np.zeros(n * B, bool)
        self._key = np.zeros(n * B, np.int64)
        self._elim_of_pos = np.ascontiguousarray(pl.order[:, None])
        self.n_pos = np.zeros(B, np.int64)
        self.n_neg = np.zeros(B, np.int64)
        self.n_zero = np.full(B, n, np.int64)
        self._mv = None                 # matvec's block-diagonal pattern, at first use
        self._full = None               # the all-instance factorization program
        self._fw, self._bw = self._solve_programs()

    # ------------------------------------------------------------------ programs
    # A *program* binds each step of a level to its index slices and to views of the
    # work buffers, built once: running one is a fixed sequence of C calls per level
    # with no slicing or reshaping in the loop.
    def _factor_program(self, T, F, Ba) -> list:
        """Per level ``(updates, pivots, scalings)`` for (n_f, Ba) arrays T and F
        (module doc): an update ``(op_t, g, op_l, g2, csr_args)`` computes ``g =
        T[op_t] * F[op_l]`` and ``T[rows] -= S g``; ``pivots = (d, dinv)``, the level's
        pivot rows of T and F, gets ``dinv = 1 / d``; a scaling ``(rows, g, src, dst)``
        computes ``dst = src * g`` with ``g = F[rows]`` the pivots' reciprocals (rows
        None: g is the level's single dinv row, broadcast)."""
        pl, G, G2 = self.plan, self._G, self._G2
        prog = []
        for t0, tc, t1, ops, scl in self._factor_steps:
            upd = []
            for ra, rb, ua, ub, ptr in ops:
                U = ub - ua
                upd.append((pl.op_t[ua:ub], G[:U * Ba].reshape(U, Ba), pl.op_l[ua:ub],
                            G2[:U * Ba].reshape(U, Ba),
                            (rb - ra, U, Ba, ptr, self._iota[:U], self._minus[:U],
                             G[:U * Ba], T[ra:rb].reshape(-1))))
            if tc - t0 == 1:
                sc = [(None, F[t0:tc], T[tc:t1], F[tc:t1])] if t1 > tc else []
            else:
                sc = [(pl.pivot_row[oa:ob], G[:(ob - oa) * Ba].reshape(ob - oa, Ba),
                       T[oa:ob], F[oa:ob]) for oa, ob in scl]
            prog.append((upd, (T[t0:tc], F[t0:tc]), sc))
        return prog

    def _solve_programs(self):
        """Forward (levels up) and backward (levels down) steps ``(pos, g, lvals,
        csr_args)``: ``g = y[pos] * lvals`` and ``y[rows] -= S g`` on the (n, B) work
        vector ``_Y``, with L's values from ``Lrow`` (forward) and ``F`` (backward)."""
        pl, B, G, y = self.plan, self.B, self._G, self._Y

        def step(ra, rb, ua, ub, ptr, pos, lvals):
            U = ub - ua
            return (pos[ua:ub], G[:U * B].reshape(U, B), lvals,
                    (rb - ra, U, B, ptr, self._iota[:U], self._minus[:U], G[:U * B],
                     y[ra:rb].reshape(-1)))
        fw = [step(*c, pl.fw_pos, self.Lrow[c[2]:c[3]])
              for steps in self._fw_steps for c in steps]
        # a level's backward rows of F are contiguous, in the op order
        bw = [step(*c, pl.bw_pos, self.F[pl.bw_row[c[2]]:pl.bw_row[c[2]] + c[3] - c[2]])
              for steps in reversed(self._bw_steps) for c in steps]
        return fw, bw

    # ------------------------------------------------------------------ factorize
    def factorize(self, values, active=None):
        """``values`` float64 (B, nnz) C-order (structure order); ``active`` None or an
        int64 array of distinct instance indices.  Refactorizes those instances (all
        for None) and updates their inertia; the others keep theirs."""
        pl, B = self.plan, self.B
        n, n_f, nnz_l = pl.n, pl.n_f, pl.nnz_l
        if active is None:
            T = self._T.reshape(n_f, B)
            if self._full is None:
                self._full = self._factor_program(T, self.F, B)
            to_rows(T, pl.a_row, values)
            self._run(self._full, T, self.F, self.D, self.Dinv)
            self.F.take(pl.fw_row, 0, self.Lrow, "clip")
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
        values.take(active, 0, sub, "clip")
        T = self._T[:n_f * Ba].reshape(n_f, Ba)
        to_rows(T, pl.a_row, sub)
        F = self._F2[:n_f * Ba].reshape(n_f, Ba)
        d = self._Y2.reshape(-1)[:n * Ba].reshape(n, Ba)
        dinv = self._Y.reshape(-1)[:n * Ba].reshape(n, Ba)      # solve's scratch
        self._run(self._factor_program(T, F, Ba), T, F, d, dinv)
        self.F[:, active] = F
        self.D[:, active] = d
        self.Dinv[:, active] = dinv
        # the subset's Lrow through T's buffer (T is not needed any more)
        lrow = self._T[:nnz_l * Ba].reshape(nnz_l, Ba)
        F.take(pl.fw_row, 0, lrow, "clip")
        self.Lrow[:, active] = lrow
        pos, neg, zero = (np.zeros(Ba, np.int64) for _ in range(3))
        self._inertia(d, Ba, pos, neg, zero)
        self.n_pos[active], self.n_neg[active], self.n_zero[active] = pos, neg, zero

    def _run(self, prog, T, F, D, Dinv):
        """Run a factorization program on T (C's values at the scattered rows) and F;
        then ``D`` and ``Dinv`` (n, Ba) = the pivots and their reciprocals in level
        order (pivots of 0 or inf give inf/nan in that instance's columns only: no
        warnings)."""
        pl = self.plan
        T[pl.fill_rows] = 0.0
        csr, mul, div = _sparsetools.csr_matvecs, np.multiply, np.divide
        with np.errstate(all="ignore"):
            for upd, (d, dinv), sc in prog:
                for op_t, g, op_l, g2, args in upd:
                    T.take(op_t, 0, g, "clip")
                    F.take(op_l, 0, g2, "clip")
                    mul(g, g2, out=g)
                    csr(*args)
                div(1.0, d, out=dinv)
                for rows, g, src, dst in sc:
                    if rows is not None:
                        F.take(rows, 0, g, "clip")
                    mul(src, g, out=dst)
        T.take(pl.diag_row, 0, D, "clip")
        F.take(pl.diag_row, 0, Dinv, "clip")

    def factor_values(self, b: int):
        """Instance b's L entries in CSC order (nnz_l,) and pivots in elimination
        order (n,), float64 copies."""
        pl = self.plan
        return self.F[pl.off_row, b], self.D[pl.lpos, b]

    def _inertia(self, D, Ba, pos, neg, zero):
        """Counts of positive / negative pivots before the first pivot (in elimination
        order) that is 0 or not finite; the rest count as zero.  ``D`` (n, Ba) level
        order."""
        n = self.plan.n
        ok = self._ok[:n * Ba].reshape(n, Ba)
        sign = self._sign[:n * Ba].reshape(n, Ba)
        np.isfinite(D, out=ok)
        np.not_equal(D, 0.0, out=sign)
        ok &= sign
        np.greater(D, 0.0, out=sign)
        if ok.all():                    # the usual case: every pivot counts
            pos[:] = np.count_nonzero(sign, axis=0)
            np.subtract(n, pos, out=neg)
            zero.fill(0)
            return
        # the elimination index of the first bad pivot per instance (n when none)
        key = self._key[:n * Ba].reshape(n, Ba)
        key.fill(n)
        np.logical_not(ok, out=ok)
        np.copyto(key, self._elim_of_pos, where=ok)
        first = key.min(axis=0)
        np.less(self._elim_of_pos, first, out=ok)           # ok := counted
        sign &= ok
        pos[:] = np.count_nonzero(sign, axis=0)
        np.less(D, 0.0, out=sign)
        sign &= ok
        neg[:] = np.count_nonzero(sign, axis=0)
        np.subtract(n - pos, neg, out=zero)

    # ------------------------------------------------------------------ solve
    def solve(self, rhs, out=None):
        """x (B, n) with ``K_b x_b = rhs_b`` (rhs float64 (B, n))."""
        pl, y = self.plan, self._Y
        to_rows(y, pl.dst, rhs)             # y[dst[q]] = rhs[:, q]: src's inverse
        csr, mul = _sparsetools.csr_matvecs, np.multiply
        with np.errstate(all="ignore"):
            for pos, g, lvals, args in self._fw:
                y.take(pos, 0, g, "clip")
                mul(g, lvals, out=g)
                csr(*args)
            y *= self.Dinv
            for pos, g, lvals, args in self._bw:
                y.take(pos, 0, g, "clip")
                mul(g, lvals, out=g)
                csr(*args)
        if out is None:
            out = np.empty((self.B, pl.n))
        from_rows(out, pl.src, y)
        return out

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
