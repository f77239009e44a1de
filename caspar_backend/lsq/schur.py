"""The Schur complement solve of the LM system (Ceres' DENSE_SCHUR / SPARSE_SCHUR).

With the columns split into eliminated blocks (E: points) and the rest (F: cameras),
:class:`~caspar_backend.lsq.structure.SchurStructure`, the system
``(J^T J + D^2) dx = -J^T r`` is

    [ U    W ] [dx_f]   [-g_f]      U = F^T F + D_f^2,   W = F^T E,
    [ W^T  V ] [dx_e] = [-g_e],     V = E^T E + D_e^2 (block diagonal: V_b, s_e x s_e)

and is solved by eliminating the e-blocks:

    S dx_f = -g_f + W V^{-1} g_e,        S = U - W V^{-1} W^T   (the reduced system),
    dx_e   = -V^{-1} (g_e + W^T dx_f).

All of it is array work over precomputed index maps (no loop over points or cameras):

* per row r a dense e-row ``E_r`` (s_e,) and, per (row, f-block) incidence k, a dense
  f-row ``F_k`` (s_f,), scattered from J's values;
* ``V_b = sum_{r in b} E_r E_r^T + D_b^2``, ``g_e,b = sum_r E_r r_r`` -- segment sums
  (rows sorted by e-block once); ``V_b^{-1}`` by one batched inverse (after a batched
  Cholesky, whose failure means "not positive definite");
* ``W_{ib} = sum_{k: (r, i), r in b} F_k E_r^T`` for each (f-block i, e-block b) pair,
  ``T_{ib} = W_{ib} V_b^{-1}``;
* ``S_ij = sum_{rows} F_k F_l^T - sum_b T_ib W_jb^T`` over the block pairs i <= j that
  occur (the pattern of S is fixed: computed once); the second sum is the product of
  two block-sparse matrices (T and W^T in scipy's BSR format, blocks s_f x s_e and
  s_e x s_f), scipy's C++ block SpGEMM -- measured 3x faster than batched NumPy
  products over the (i, j, b) triples and their segment sums;
* S (padded to s_f columns per f-block; a pad has 1 on the diagonal) is factorized
  dense by LAPACK's Cholesky (DENSE_SCHUR), or as an upper CSC matrix by QDLDL with
  the analysis done once (SPARSE_SCHUR).
"""

from __future__ import annotations

import numpy as np

from .jacobian import segment_pairs
from .linear_solvers import StepSolver, dense_spd_solve, spd_solver


def _groups(key):
    """``(order, starts, uniq)``: a stable sort of ``key``, the start of each run of
    equal keys in the sorted order, and the run's key (for np.add.reduceat)."""
    order = np.argsort(key, kind="stable")
    k = key[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if k.size else np.zeros(0, np.int64)
    return order.astype(np.int64), starts.astype(np.int64), k[starts]


class SchurComplementSolver(StepSolver):
    """DENSE_SCHUR (``dense=True``) or SPARSE_SCHUR (final).  See the module docstring."""

    def __init__(self, jac, structure, dense: bool):
        super().__init__(jac)
        self.name = "DENSE_SCHUR" if dense else "SPARSE_SCHUR"
        self.dense = dense
        st = self.structure = structure
        pat = jac.pattern
        m, n = pat.m, pat.n
        rows, cols = pat.rows, pat.cols
        self.s_e, self.s_f = st.e_cols.shape[1], st.f_cols.shape[1]
        s_e, s_f = self.s_e, self.s_f
        n_eb, n_fb = st.e_cols.shape[0], st.f_cols.shape[0]
        self.n_eb, self.n_fb = n_eb, n_fb
        # column -> (block, slot) on each side
        col_eb = np.full(n, -1, np.int64)
        col_es = np.full(n, -1, np.int64)
        eb, es = np.nonzero(st.e_cols >= 0)
        col_eb[st.e_cols[eb, es]], col_es[st.e_cols[eb, es]] = eb, es
        col_fb = np.full(n, -1, np.int64)
        col_fs = np.full(n, -1, np.int64)
        fb, fs = np.nonzero(st.f_cols >= 0)
        col_fb[st.f_cols[fb, fs]], col_fs[st.f_cols[fb, fs]] = fb, fs
        self.e_valid = st.e_cols >= 0
        self.f_valid = st.f_cols >= 0
        # ---- E rows: entry -> flat (row, slot)
        is_e = col_eb[cols] >= 0
        self.e_entry = np.flatnonzero(is_e)
        self.e_flat = rows[is_e] * s_e + col_es[cols[is_e]]
        # rows with an e-block, grouped by it (every e-block has rows)
        self.erows = np.flatnonzero(st.row_eb >= 0)
        order, self.v_starts, _ = _groups(st.row_eb[self.erows])
        self.erows = self.erows[order]
        # ---- F incidences (row, f-block): entry -> flat (incidence, slot)
        f_entry = np.flatnonzero(~is_e)
        key = rows[f_entry] * max(n_fb, 1) + col_fb[cols[f_entry]]
        inc, inc_of_entry = np.unique(key, return_inverse=True)
        self.inc_row, self.inc_fb = inc // max(n_fb, 1), inc % max(n_fb, 1)
        self.f_entry = f_entry
        self.f_flat = inc_of_entry.reshape(-1) * s_f + col_fs[cols[f_entry]]
        self.n_inc = len(inc)
        # ---- W pairs (f-block i, e-block b): incidences on rows with an e-block
        inc_eb = st.row_eb[self.inc_row]
        wi = np.flatnonzero(inc_eb >= 0)
        pkey = inc_eb[wi] * max(n_fb, 1) + self.inc_fb[wi]       # sorted by e-block
        order, self.w_starts, pk = _groups(pkey)
        self.w_inc = wi[order]
        self.pair_eb, self.pair_fb = pk // max(n_fb, 1), pk % max(n_fb, 1)
        # ---- W^T and T = W V^{-1} as block-sparse (BSR) matrices: the product T W^T
        # (scipy's block SpGEMM, C++) is the Schur update; W^T's blocks are the pairs in
        # their own (e-block, f-block) order, T's in (f-block, e-block) order
        import scipy.sparse as sp

        self.wt_indptr = np.r_[0, np.cumsum(np.bincount(self.pair_eb, minlength=n_eb))]
        self.t_perm = np.lexsort((self.pair_eb, self.pair_fb)).astype(np.int64)
        self.t_indices = self.pair_eb[self.t_perm]
        self.t_indptr = np.r_[0, np.cumsum(np.bincount(self.pair_fb, minlength=n_fb))]
        # ---- blocks of S (i <= j): the diagonal, F^T F (rows touching two f-blocks) and
        # co-visibility (f-blocks sharing an e-block), fixed for all iterations
        ia, ib = segment_pairs(self.inc_row)
        swap = self.inc_fb[ia] > self.inc_fb[ib]
        ia, ib = np.where(swap, ib, ia), np.where(swap, ia, ib)
        inc_fe = sp.csr_matrix((np.ones(len(self.pair_eb)), (self.pair_fb, self.pair_eb)),
                               shape=(n_fb, n_eb))
        covis = (inc_fe @ inc_fe.T).tocoo()
        up = covis.row <= covis.col
        nf1 = max(n_fb, 1)
        diag = np.arange(n_fb, dtype=np.int64)
        bkey_rows = self.inc_fb[ia] * nf1 + self.inc_fb[ib]
        self.block_keys, inv = np.unique(
            np.r_[diag * nf1 + diag, bkey_rows,
                  covis.row[up].astype(np.int64) * nf1 + covis.col[up]], return_inverse=True)
        inv = inv.reshape(-1)
        self.blk_i, self.blk_j = self.block_keys // nf1, self.block_keys % nf1
        self.n_blocks = len(self.block_keys)
        self.diag_block = inv[:n_fb]
        order, self.rp_starts, self.rp_target = _groups(inv[n_fb:n_fb + len(ia)])
        self.rp_a, self.rp_b = ia[order], ib[order]
        # ---- the reduced matrix: dense, or upper CSC with a map from the blocks
        N = n_fb * s_f
        self.N = N
        if not dense:
            bi = np.repeat(self.blk_i, s_f * s_f)
            bj = np.repeat(self.blk_j, s_f * s_f)
            a = np.tile(np.repeat(np.arange(s_f), s_f), self.n_blocks)
            b = np.tile(np.tile(np.arange(s_f), s_f), self.n_blocks)
            R, C = bi * s_f + a, bj * s_f + b
            up = R <= C
            ckey = C[up] * max(N, 1) + R[up]
            ukey, self.csc_pos = np.unique(ckey, return_inverse=True)
            self.csc_src = np.flatnonzero(up)
            self.csc_nnz = len(ukey)
            indptr = np.r_[0, np.cumsum(np.bincount(ukey // max(N, 1), minlength=N))]
            self._spd = spd_solver(N, indptr.astype(np.int64),
                                   (ukey % max(N, 1)).astype(np.int64))
        self.pad_f = np.flatnonzero(~self.f_valid.reshape(-1))
        self.pad_e = ~self.e_valid

    # ------------------------------------------------------------------ solve
    def solve(self, vals, r, d):
        s_e, s_f, n_eb, n_fb = self.s_e, self.s_f, self.n_eb, self.n_fb
        st = self.structure
        m = self.jac.m
        E = np.zeros(m * s_e)
        E[self.e_flat] = vals[self.e_entry]
        E = E.reshape(m, s_e)
        Fk = np.zeros(self.n_inc * s_f)
        Fk[self.f_flat] = vals[self.f_entry]
        Fk = Fk.reshape(self.n_inc, s_f)
        # ---- V_b, g_e and V^{-1}
        Er = E[self.erows]
        V = np.add.reduceat(Er[:, :, None] * Er[:, None, :], self.v_starts, axis=0) \
            if n_eb else np.zeros((0, s_e, s_e))
        g_e = np.add.reduceat(Er * r[self.erows][:, None], self.v_starts, axis=0) \
            if n_eb else np.zeros((0, s_e))
        dd = np.where(self.e_valid, (d * d)[np.maximum(st.e_cols, 0)], 1.0)
        V += dd[:, :, None] * np.eye(s_e)
        try:
            np.linalg.cholesky(V)
        except np.linalg.LinAlgError:
            return None
        Vinv = np.linalg.inv(V)
        # ---- W and T = W V^{-1}
        ke = Fk[self.w_inc][:, :, None] * E[self.inc_row[self.w_inc]][:, None, :]
        W = np.add.reduceat(ke, self.w_starts, axis=0) if len(ke) else np.zeros((0, s_f, s_e))
        T = np.matmul(W, Vinv[self.pair_eb])
        # ---- S blocks: F^T F, minus W V^{-1} W^T = T W^T (block SpGEMM)
        Sb = np.zeros((self.n_blocks, s_f, s_f))
        if len(self.rp_a):
            Sb[self.rp_target] = np.add.reduceat(
                Fk[self.rp_a][:, :, None] * Fk[self.rp_b][:, None, :], self.rp_starts, axis=0)
        if len(W):
            import scipy.sparse as sp

            Tb = sp.bsr_matrix((T[self.t_perm], self.t_indices, self.t_indptr),
                               shape=(n_fb * s_f, n_eb * s_e))
            Wt = sp.bsr_matrix((np.ascontiguousarray(W.transpose(0, 2, 1)), self.pair_fb,
                                self.wt_indptr), shape=(n_eb * s_e, n_fb * s_f))
            prod = Tb @ Wt
            if not isinstance(prod, sp.bsr_matrix) or prod.blocksize != (s_f, s_f):
                prod = sp.bsr_matrix(prod, blocksize=(s_f, s_f))
            bi = np.repeat(np.arange(n_fb), np.diff(prod.indptr))
            bj = prod.indices
            up = bi <= bj
            pos = np.searchsorted(self.block_keys, bi[up] * max(n_fb, 1) + bj[up])
            Sb[pos] -= prod.data[up]
        df = np.where(self.f_valid, (d * d)[np.maximum(st.f_cols, 0)], 1.0)
        Sb[self.diag_block] += df[:, :, None] * np.eye(s_f)
        # ---- right-hand side
        g_f = np.bincount((self.inc_fb[:, None] * s_f + np.arange(s_f)).reshape(-1),
                          weights=(Fk * r[self.inc_row][:, None]).reshape(-1),
                          minlength=n_fb * s_f)
        tg = np.einsum("pfe,pe->pf", T, g_e[self.pair_eb]) if len(T) else np.zeros((0, s_f))
        rhs = -g_f + np.bincount((self.pair_fb[:, None] * s_f + np.arange(s_f)).reshape(-1),
                                 weights=tg.reshape(-1), minlength=n_fb * s_f)
        rhs[self.pad_f] = 0.0
        # ---- the reduced system
        if self.N == 0:
            dxf = np.zeros(0)
        elif self.dense:
            S4 = np.zeros((n_fb, s_f, n_fb, s_f))
            S4[self.blk_i, :, self.blk_j, :] = Sb
            dxf = dense_spd_solve(S4.reshape(self.N, self.N), rhs)
        else:
            v = np.zeros(self.csc_nnz)
            v[self.csc_pos] = Sb.reshape(-1)[self.csc_src]
            dxf = self._spd(v, rhs)
        if dxf is None:
            return None
        # ---- back substitution
        dfb = dxf.reshape(n_fb, s_f)
        wt = np.einsum("pfe,pf->pe", W, dfb[self.pair_fb]) if len(W) else np.zeros((0, s_e))
        acc = np.bincount((self.pair_eb[:, None] * s_e + np.arange(s_e)).reshape(-1),
                          weights=wt.reshape(-1), minlength=n_eb * s_e).reshape(n_eb, s_e)
        dxe = -np.einsum("bij,bj->bi", Vinv, g_e + acc)
        dx = np.zeros(self.jac.n)
        dx[st.f_cols[self.f_valid]] = dfb[self.f_valid]
        dx[st.e_cols[self.e_valid]] = dxe[self.e_valid]
        return dx if np.all(np.isfinite(dx)) else None
