"""The Schur complement solve of the LM system (Ceres' DENSE_SCHUR / SPARSE_SCHUR).

With the columns split into eliminated blocks (E: points) and the rest (F: cameras),
:class:`~caspar_backend.lsq.structure.SchurStructure`, the system
``(J^T J + D^2) dx = -J^T r`` is

    [ U    W ] [dx_f]   [-g_f]      U = F^T F + D_f^2,   W = F^T E,
    [ W^T  V ] [dx_e] = [-g_e],     V = E^T E + D_e^2 (block diagonal: V_b, s_e x s_e)

and is solved by eliminating the e-blocks:

    S dx_f = -g_f + W V^{-1} g_e,        S = U - W V^{-1} W^T   (the reduced system),
    dx_e   = -V^{-1} (g_e + W^T dx_f).

E and F are block-sparse matrices in scipy's BSR format, built each iteration from J's
values over index maps computed once: E has one (1 x s_e) block per row that touches
an e-block (at most one: the e-blocks are an independent set), F one (1 x s_f) block
per (row, f-block) incidence; pads (columns -1 of the structure's tables) are zero
columns.  Every product -- ``E^T E`` (block diagonal), ``E^T F``, ``F^T F``,
``W (V^{-1} W^T)`` -- is scipy's block SpGEMM in C++ (measured on the 36,000-observation
bundle adjustment: 2-9 ms each, 3x faster than batched NumPy products over the
(f-block, f-block, e-block) triples and their segment sums); ``V^{-1}`` is one batched
inverse after a batched Cholesky (whose failure means "not positive definite").  The
reduced matrix (pads: 1 on the diagonal) is factorized dense by LAPACK's Cholesky
(DENSE_SCHUR) or as an upper CSC matrix of a fixed pattern by QDLDL, analysed once
(SPARSE_SCHUR).  DENSE_SCHUR builds S and the right-hand side point by point in
compiled loops instead (:mod:`.schur_dense`, the rows renumbered so that each point's
are contiguous): the same system, without the intermediate matrices.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..arrays.segments import distinct
from .pair_sort import row_labels
from .linear_solvers import StepSolver, dense_spd_solve, spd_solver

#: from this many reduced unknowns DENSE_SCHUR's Cholesky runs on ``num_threads`` BLAS
#: threads (below, the one thread of :mod:`caspar_backend.linsolve.blas_threads`):
#: n = 6,000 took 2.25 s on one thread and 1.4 s on two (2-core VM)
THREADED_CHOLESKY_MIN = 2000


def _reduced_cholesky(S, rhs, threads: int):
    """:func:`dense_spd_solve` of the reduced system, on ``threads`` BLAS threads when
    it has at least :data:`THREADED_CHOLESKY_MIN` unknowns."""
    if threads > 1 and S.shape[0] >= THREADED_CHOLESKY_MIN:
        from ..linsolve.blas_threads import limited_blas

        with limited_blas(threads):
            return dense_spd_solve(S, rhs)
    return dense_spd_solve(S, rhs)


def compiled_elimination() -> bool:
    """Whether DENSE_SCHUR eliminates by the compiled loops of :mod:`.schur_dense`
    (Numba importable and ``CASPAR_LSQ_COMPILED`` not ``0``; the BSR products
    otherwise, the same system up to rounding)."""
    import os

    from ..compiled import available

    return os.environ.get("CASPAR_LSQ_COMPILED", "1") != "0" and available()


def _bsr(data, indices, indptr, shape):
    return sp.bsr_matrix((data, indices, indptr), shape=shape)


class SchurComplementSolver(StepSolver):
    """DENSE_SCHUR (``dense=True``) or SPARSE_SCHUR (final).  See the module docstring;
    ``num_threads``: threads of DENSE_SCHUR's compiled elimination."""

    def __init__(self, jac, structure, dense: bool, num_threads: int = 1):
        super().__init__(jac)
        self.name = "DENSE_SCHUR" if dense else "SPARSE_SCHUR"
        self.dense = dense
        self.num_threads = max(1, int(num_threads))
        st = self.structure = structure
        pat = jac.pattern
        m, n = pat.m, pat.n
        rows, cols = pat.rows, pat.cols
        self.s_e, self.s_f = s_e, s_f = st.e_cols.shape[1], st.f_cols.shape[1]
        self.n_eb, self.n_fb = n_eb, n_fb = st.e_cols.shape[0], st.f_cols.shape[0]
        self.N = n_fb * s_f
        # column -> (block, slot) on each side
        col_eb, col_es = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
        b, k = np.nonzero(st.e_cols >= 0)
        col_eb[st.e_cols[b, k]], col_es[st.e_cols[b, k]] = b, k
        col_fb, col_fs = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
        b, k = np.nonzero(st.f_cols >= 0)
        col_fb[st.f_cols[b, k]], col_fs[st.f_cols[b, k]] = b, k
        self.e_valid, self.f_valid = st.e_cols >= 0, st.f_cols >= 0
        # E: one block per row with an e-block, rows in order
        has_e = st.row_eb >= 0
        self.e_shape = (m, n_eb * s_e)
        self.e_indptr = np.r_[0, np.cumsum(has_e)].astype(np.int64)
        self.e_indices = st.row_eb[has_e]
        self.n_erows = int(has_e.sum())
        is_e = col_eb[cols] >= 0
        self.e_entry = np.flatnonzero(is_e)
        self.e_flat = (self.e_indptr[rows[is_e]] * s_e + col_es[cols[is_e]]).astype(np.int64)
        # F: one block per (row, f-block) incidence, rows in order, then f-blocks
        f_entry = np.flatnonzero(~is_e)
        nf1 = max(n_fb, 1)
        self.f_indptr, self.f_indices, pos_csr = row_labels(jac.indptr, jac.indices, col_fb)
        inc_of_entry = np.empty(len(rows), np.int64)
        inc_of_entry[jac.order] = pos_csr
        inc_of_entry = inc_of_entry[f_entry]
        self.f_shape = (m, self.N)
        self.n_inc = len(self.f_indices)
        self.f_entry = f_entry
        self.f_flat = inc_of_entry * s_f + col_fs[cols[f_entry]]
        # E^T and F^T over fixed permutations of the blocks (blocks of a column of E / F
        # in row order): no transposition per iteration
        self.et_perm = np.argsort(self.e_indices, kind="stable")
        self.et_indices = np.flatnonzero(has_e)[self.et_perm]
        self.et_indptr = np.r_[0, np.cumsum(np.bincount(self.e_indices, minlength=n_eb))]
        self.ft_perm = np.argsort(self.f_indices, kind="stable")
        inc_row = np.repeat(np.arange(m, dtype=np.int64), np.diff(self.f_indptr))
        self.ft_indices = inc_row[self.ft_perm]
        self.ft_indptr = np.r_[0, np.cumsum(np.bincount(self.f_indices, minlength=n_fb))]
        self._w_layout = None
        if not dense and self.N:
            # the pattern of S (blocks i <= j), from one symbolic product, and its upper
            # CSC form with the map from the blocks (the dense path needs neither)
            S1 = self._reduced(*self.matrices(np.ones(len(pat.rows))),
                               np.ones((n_eb, s_e, s_e)) * np.eye(s_e))[0]
            bi, bj = self._block_coords(S1)
            up = bi <= bj
            self.block_keys = distinct(np.r_[bi[up] * nf1 + bj[up],
                                             np.arange(n_fb) * (nf1 + 1)])
            self.n_blocks = len(self.block_keys)
            blk_i, blk_j = self.block_keys // nf1, self.block_keys % nf1
            a = np.tile(np.repeat(np.arange(s_f), s_f), self.n_blocks)
            c = np.tile(np.tile(np.arange(s_f), s_f), self.n_blocks)
            R = np.repeat(blk_i, s_f * s_f) * s_f + a
            C = np.repeat(blk_j, s_f * s_f) * s_f + c
            keep = R <= C
            ckey = C[keep] * self.N + R[keep]
            ukey, self.csc_pos = np.unique(ckey, return_inverse=True)
            self.csc_src = np.flatnonzero(keep)
            self.csc_nnz = len(ukey)
            indptr = np.r_[0, np.cumsum(np.bincount(ukey // self.N, minlength=self.N))]
            self._spd = spd_solver(self.N, indptr.astype(np.int64),
                                   (ukey % self.N).astype(np.int64))
        self.f_diag = np.flatnonzero(self.f_valid.reshape(-1))
        self.pad_f = np.flatnonzero(~self.f_valid.reshape(-1))
        self._work = (_DenseWork(self, num_threads) if dense and compiled_elimination()
                      else None)

    # ------------------------------------------------------------- pieces
    def matrices(self, vals):
        """``(E, F, E^T, F^T)`` (BSR) of J's values."""
        s_e, s_f, m = self.s_e, self.s_f, self.jac.m
        Ed = np.zeros(self.n_erows * s_e)
        Ed[self.e_flat] = vals[self.e_entry]
        Fd = np.zeros(self.n_inc * s_f)
        Fd[self.f_flat] = vals[self.f_entry]
        Ed, Fd = Ed.reshape(-1, s_e), Fd.reshape(-1, s_f)
        E = _bsr(Ed[:, None, :], self.e_indices, self.e_indptr, self.e_shape)
        F = _bsr(Fd[:, None, :], self.f_indices, self.f_indptr, self.f_shape)
        Et = _bsr(Ed[self.et_perm][:, :, None], self.et_indices, self.et_indptr,
                  (self.e_shape[1], m))
        Ft = _bsr(Fd[self.ft_perm][:, :, None], self.ft_indices, self.ft_indptr,
                  (self.f_shape[1], m))
        return E, F, Et, Ft

    def _transpose_w(self, Wt):
        """W = (W^T)^T with the block permutation computed once (the product's pattern
        is fixed; checked)."""
        lay = self._w_layout
        if lay is None or not (len(lay[3]) == len(Wt.indices)
                               and np.array_equal(lay[3], Wt.indices)):
            rows = np.repeat(np.arange(self.n_eb), np.diff(Wt.indptr))
            perm = np.argsort(Wt.indices, kind="stable")
            indptr = np.r_[0, np.cumsum(np.bincount(Wt.indices, minlength=self.n_fb))]
            lay = self._w_layout = (perm, rows[perm], indptr, Wt.indices.copy())
        perm, indices, indptr, _ = lay
        return _bsr(np.ascontiguousarray(Wt.data[perm].transpose(0, 2, 1)), indices, indptr,
                    (Wt.shape[1], Wt.shape[0]))

    def _reduced(self, E, F, Et, Ft, Vinv):
        """``(S - D_f^2 as BSR, W)``: the Schur complement of ``V^{-1}`` (n_eb, s_e, s_e)
        without the damping."""
        Wt = (Et @ F).tobsr(blocksize=(self.s_e, self.s_f))
        rows_wt = np.repeat(np.arange(self.n_eb), np.diff(Wt.indptr))
        Tt = _bsr(np.matmul(Vinv[rows_wt], Wt.data), Wt.indices, Wt.indptr, Wt.shape)
        W = self._transpose_w(Wt)
        S = (Ft @ F).tobsr(blocksize=(self.s_f, self.s_f)) - (W @ Tt)
        return S.tobsr(blocksize=(self.s_f, self.s_f)), W

    def _block_coords(self, B):
        return np.repeat(np.arange(B.shape[0] // B.blocksize[0]), np.diff(B.indptr)), B.indices

    # ------------------------------------------------------------------ solve
    def eliminated_blocks(self, vals, d):
        """``(E, F, E^T, F^T, V^{-1})`` with ``V = E^T E + D_e^2`` the (n_eb, s_e, s_e)
        diagonal blocks of the eliminated variables (padding rows: identity), or None
        when a block is not positive definite.  Shared by the direct and the iterative
        Schur solvers."""
        s_e, n_eb = self.s_e, self.n_eb
        E, F, Et, Ft = self.matrices(vals)
        VV = (Et @ E).tobsr(blocksize=(s_e, s_e))
        V = np.zeros((n_eb, s_e, s_e))
        V[self._block_coords(VV)[0]] = VV.data
        dd = np.where(self.e_valid, (d * d)[np.maximum(self.structure.e_cols, 0)], 1.0)
        V += dd[:, :, None] * np.eye(s_e)
        try:
            np.linalg.cholesky(V)
        except np.linalg.LinAlgError:
            return None
        return E, F, Et, Ft, np.linalg.inv(V)

    def solve(self, vals, r, d):
        if self._work is not None:
            return self._work.solve(vals, r, d)
        s_e, s_f, n_eb, n_fb = self.s_e, self.s_f, self.n_eb, self.n_fb
        st = self.structure
        # ---- V = E^T E + D_e^2 (pads: 1) and its inverse
        blocks = self.eliminated_blocks(vals, d)
        if blocks is None:
            return None
        E, F, Et, Ft, Vinv = blocks
        # ---- S = F^T F - W V^{-1} W^T (+ D_f^2), right-hand side
        S, W = self._reduced(E, F, Et, Ft, Vinv)
        g_e = (Et @ r).reshape(n_eb, s_e)
        Vg = np.einsum("bij,bj->bi", Vinv, g_e).reshape(-1)
        rhs = -(Ft @ r) + W @ Vg
        rhs[self.pad_f] = 0.0
        diag = np.ones(self.N)
        diag[self.f_diag] = (d * d)[st.f_cols[self.f_valid]]
        # ---- the reduced system
        if self.N == 0:
            dxf = np.zeros(0)
        elif self.dense:
            Sd = S.toarray()
            Sd[np.arange(self.N), np.arange(self.N)] += diag
            dxf = _reduced_cholesky(Sd, rhs, self.num_threads)
        else:
            nf1 = max(n_fb, 1)
            bi, bj = self._block_coords(S)
            up = bi <= bj
            Sb = np.zeros((self.n_blocks, s_f, s_f))
            Sb[np.searchsorted(self.block_keys, bi[up] * nf1 + bj[up])] = S.data[up]
            Sb[np.searchsorted(self.block_keys, np.arange(n_fb) * (nf1 + 1))] += \
                diag.reshape(n_fb, s_f)[:, :, None] * np.eye(s_f)
            v = np.zeros(self.csc_nnz)
            v[self.csc_pos] = Sb.reshape(-1)[self.csc_src]
            dxf = self._spd(v, rhs)
        if dxf is None:
            return None
        # ---- back substitution
        acc = (Et @ (F @ dxf)).reshape(n_eb, s_e)       # W^T dx_f = E^T (F dx_f)
        dxe = -np.einsum("bij,bj->bi", Vinv, g_e + acc)
        dx = np.zeros(self.jac.n)
        dx[st.f_cols[self.f_valid]] = dxf.reshape(n_fb, s_f)[self.f_valid]
        dx[st.e_cols[self.e_valid]] = dxe[self.e_valid]
        return dx if np.all(np.isfinite(dx)) else None


class _DenseWork:
    """DENSE_SCHUR by :mod:`.schur_dense`: J's rows renumbered e-block by e-block (the
    rows of one point contiguous, so the kernels walk memory in order; rows touching no
    e-block last), E's and F's values scattered straight into that order, and the
    buffers the kernels fill, allocated once per solver (internal).

    With ``threads`` > 1 the e-blocks are cut into that many ranges of about equal work
    (sum over a range of t_b^2, t_b the block's f-block incidences), each eliminated by
    its own thread into its own S and rhs (the kernels release the GIL); the shares are
    added up in a fixed order, so the step does not depend on thread timing."""

    def __init__(self, sol: SchurComplementSolver, threads: int = 1):
        self.sol = sol
        s_e, s_f, n_eb, n_fb, m = sol.s_e, sol.s_f, sol.n_eb, sol.n_fb, sol.jac.m
        # new row order: the e-rows block by block (E^T's order), then the others
        self.rows = np.r_[sol.et_indices, np.flatnonzero(sol.structure.row_eb < 0)]
        new_of_row = np.empty(m, np.int64)
        new_of_row[self.rows] = np.arange(m)
        new_of_epos = np.empty(sol.n_erows, np.int64)
        new_of_epos[sol.et_perm] = np.arange(sol.n_erows)
        self.e_flat = new_of_epos[sol.e_flat // s_e] * s_e + sol.e_flat % s_e
        inc_row = np.repeat(np.arange(m, dtype=np.int64), np.diff(sol.f_indptr))
        order = np.argsort(new_of_row[inc_row], kind="stable")
        new_of_inc = np.empty(sol.n_inc, np.int64)
        new_of_inc[order] = np.arange(sol.n_inc)
        self.f_flat = new_of_inc[sol.f_flat // s_f] * s_f + sol.f_flat % s_f
        self.f_block = sol.f_indices[order]
        counts = np.diff(sol.f_indptr)[self.rows]
        self.f_indptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
        # t_b: the f-block incidences over the rows of each e-block
        per_block = np.zeros(n_eb, np.int64)
        nonempty = np.flatnonzero(np.diff(sol.et_indptr) > 0)
        if nonempty.size:
            per_block[nonempty] = np.add.reduceat(counts[:sol.n_erows],
                                                  sol.et_indptr[nonempty])
        T = max(1, int(per_block.max()) if per_block.size else 1)
        # the threads' shares: block ranges of about equal sum of t_b^2, row ranges
        # their rows (the last share also the rows touching no e-block)
        k = max(1, min(int(threads), n_eb))
        work = np.cumsum(per_block.astype(np.float64) ** 2)
        cut = np.searchsorted(work, work[-1] * np.arange(1, k) / k) if n_eb else []
        bounds = np.r_[0, cut, n_eb].astype(np.int64)
        self.shares = []
        for t in range(len(bounds) - 1):
            b0, b1 = int(bounds[t]), int(bounds[t + 1])
            i0 = int(sol.et_indptr[b0])
            i1 = int(sol.et_indptr[b1]) if t < len(bounds) - 2 else m
            S = np.zeros((sol.N, sol.N))
            self.shares.append((b0, b1, i0, i1, S, np.zeros(sol.N),
                                np.full(max(n_fb, 1), -1, np.int64), np.zeros(T, np.int64),
                                np.zeros((T, s_e, s_f)), np.zeros((T, s_e, s_f)),
                                np.zeros((s_e, s_e)), np.zeros(s_e)))
        self.Vinv = np.zeros((n_eb, s_e, s_e))
        self.g_e = np.zeros((n_eb, s_e))
        self.dxe = np.zeros((n_eb, s_e))
        self.Ed = np.zeros(sol.n_erows * s_e)
        self.Fd = np.zeros(sol.n_inc * s_f)
        self.diag_pos = np.arange(sol.N)

    def _run(self, task):
        """``task(share)`` for every share: on this thread when there is one, else one
        thread per share; returns the results in share order."""
        if len(self.shares) == 1:
            return [task(self.shares[0])]
        import threading

        out = [None] * len(self.shares)

        def run(j):
            out[j] = task(self.shares[j])

        threads = [threading.Thread(target=run, args=(j,)) for j in range(1, len(out))]
        for th in threads:
            th.start()
        run(0)
        for th in threads:
            th.join()
        return out

    def solve(self, vals, r, d):
        from .schur_dense import back_substitute, eliminate

        sol, st = self.sol, self.sol.structure
        s_e, s_f = sol.s_e, sol.s_f
        self.Ed[self.e_flat] = vals[sol.e_entry]
        self.Fd[self.f_flat] = vals[sol.f_entry]
        Ed, Fd = self.Ed.reshape(-1, s_e), self.Fd.reshape(-1, s_f)
        dd = d * d
        dd_e = np.where(sol.e_valid, dd[np.maximum(st.e_cols, 0)], 1.0)
        rr = r[self.rows]

        def elim(sh):
            b0, b1, i0, i1, S, rhs, slot, touched, Wloc, Tloc, L, _ = sh
            return eliminate(Ed, sol.et_indptr, b0, b1, Fd, self.f_indptr, self.f_block, rr,
                             i0, i1, dd_e, S, rhs, self.Vinv, self.g_e, slot, touched, Wloc,
                             Tloc, L)

        if any(self._run(elim)):
            return None
        S, rhs = self.shares[0][4], self.shares[0][5]
        for sh in self.shares[1:]:
            S += sh[4]
            rhs += sh[5]
        diag = np.ones(sol.N)
        diag[sol.f_diag] = dd[st.f_cols[sol.f_valid]]
        S[self.diag_pos, self.diag_pos] += diag
        rhs[sol.pad_f] = 0.0
        if sol.N == 0:
            dxf = np.zeros(0)
        else:
            dxf = _reduced_cholesky(S, rhs, sol.num_threads)
            if dxf is None:
                return None

        def back(sh):
            back_substitute(Ed, sol.et_indptr, sh[0], sh[1], Fd, self.f_indptr, self.f_block,
                            self.Vinv, self.g_e, dxf, self.dxe, sh[11])

        self._run(back)
        dx = np.zeros(sol.jac.n)
        dx[st.f_cols[sol.f_valid]] = dxf.reshape(sol.n_fb, s_f)[sol.f_valid]
        dx[st.e_cols[sol.e_valid]] = self.dxe[sol.e_valid]
        return dx if np.all(np.isfinite(dx)) else None
