"""ITERATIVE_SCHUR on the GPU: the reduced camera system by preconditioned conjugate
gradients over block-sparse products, for scenes whose W does not fit dense.

The algebra is that of the CPU's :mod:`caspar_backend.lsq.iterative_schur` (Ceres'
ITERATIVE_SCHUR with SCHUR_JACOBI); with the split of :mod:`caspar_backend.lsq.schur`
(E: the rows' e-block values, F: their f-block values, V block diagonal)

    S v  = F^T (F v - E V^{-1} E^T F v) + D_f^2 v               (never formed)
    M_c  = (F^T F)_cc + D_c^2 - sum_b W_bc^T V_b^{-1} W_bc       (its block diagonal)
    b    = -F^T r + F^T E V^{-1} E^T r,  dx_e = -V^{-1} (E^T r + E^T F dx_f)

and CG stops by Nash and Sofer's rule on ``Q(x) = x^T S x - 2 b^T x`` as there (the
same loop, :func:`~caspar_backend.lsq.iterative_schur.truncated_pcg`).  Here
every piece is array work on ``xp`` (CuPy on the GPU, NumPy to test it on the host),
built from index maps computed once per structure:

* E, E^T, F, F^T: CSR matrices of fixed patterns (``xp``'s sparse module: cuSPARSE on
  the GPU) whose values are gathered from J's each solve; each row's entries sorted by
  column;
* the blocks of V and of the preconditioner: per-row outer products ``E_i E_i^T``,
  ``E_i F_ic^T`` and ``F_ic F_ic^T`` (``F_ic``: row i's values in f-block c, one
  *incidence* per (row, f-block)) summed into blocks by 0/1 aggregation matrices
  (a sparse-times-dense product: fixed order, no atomics), the sums over points
  ``W_bc^T V_b^{-1} W_bc`` batched products over the (e-block, f-block) *pairs*;
* V^{-1} and M^{-1}: batched inverses of s_e x s_e and s_f x s_f blocks.

Host reads: two per CG iteration (the step length, then the model value with the next
``r^T z``) and one for the finiteness of the step.
"""

from __future__ import annotations

import numpy as np

from .iterative_schur import truncated_pcg
from .linear_solvers import StepSolver

#: the CG stop of the GPU's automatic choice, where ITERATIVE_SCHUR stands in for a
#: direct Schur solve: at Nash and Sofer's ``i (Q_i - Q_{i-1}) / Q_i < 1e-10`` the step
#: is the direct one to ~1e-9, so LM takes the direct solve's iterations (Ceres' 0.1
#: leaves a step inexact by design, and LM may stop at a cost 1e-6 above the direct
#: run's: measured 1.4e-6 on the 1,000-image scene)
DIRECT_ETA = 1e-10


def _sparse(xp):
    if xp is np:
        import scipy.sparse as sparse
    else:
        import cupyx.scipy.sparse as sparse
    return sparse


def _group_ids(xp, key):
    """``(ids, first)``: for int64 keys, the rank of each key among the distinct keys
    (ascending) and the position of each distinct key's first occurrence in a stable
    sort (a ``unique(return_inverse)`` from a sort)."""
    order = xp.argsort(key, kind="stable")
    sk = key[order]
    new = xp.ones(sk.size, dtype=bool)
    if sk.size:
        new[1:] = sk[1:] != sk[:-1]
    rank = xp.cumsum(new) - 1
    ids = xp.empty_like(rank)
    ids[order] = rank
    return ids, order[xp.flatnonzero(new)]


def _aggregation(xp, sparse, group, n_groups):
    """The 0/1 CSR matrix (n_groups, len(group)) whose row g sums the entries k with
    ``group[k] == g`` in increasing k (``group`` int64 in [0, n_groups))."""
    k = xp.argsort(group, kind="stable")
    indptr = xp.zeros(n_groups + 1, dtype=xp.int64)
    if group.size:
        indptr[1:] = xp.cumsum(xp.bincount(group, minlength=n_groups))
    return sparse.csr_matrix((xp.ones(group.size), k.astype(xp.int32),
                              indptr.astype(xp.int32)), shape=(n_groups, group.size))


class _Gathered:
    """A CSR matrix of a fixed pattern whose values are ``vals[src]`` (internal): the
    COO entries ``(r, c)`` sorted by row, then column."""

    def __init__(self, xp, sparse, r, c, src, shape):
        order = xp.argsort(r * shape[1] + c, kind="stable")
        self.src = src[order]
        indptr = xp.zeros(shape[0] + 1, dtype=xp.int64)
        if r.size:
            indptr[1:] = xp.cumsum(xp.bincount(r, minlength=shape[0]))
        self.M = sparse.csr_matrix((xp.zeros(r.size), c[order].astype(xp.int32),
                                    indptr.astype(xp.int32)), shape=shape)
        self.xp = xp

    def fill(self, vals):
        self.xp.take(vals, self.src, out=self.M.data)
        return self.M


class DeviceIterativeSchur(StepSolver):
    """ITERATIVE_SCHUR on ``xp`` arrays (final).  See the module docstring.
    ``solve(vals, r, d)`` takes and returns ``xp`` arrays; ``last_iterations``: the CG
    iterations of the last solve."""

    name = "ITERATIVE_SCHUR"

    def __init__(self, jac, structure, xp, eta=0.1, min_iterations=0, max_iterations=500):
        """``jac``: the pattern with COO ``rows``, ``cols`` (pattern order), ``m``, ``n``
        (a :class:`~caspar_backend.lsq.device_pattern.DevicePattern`, or a host
        :class:`~caspar_backend.lsq.jacobian.SparseJacobian` whose ``pattern`` has them);
        ``structure``'s tables NumPy or ``xp`` arrays."""
        super().__init__(jac)
        self.xp = xp
        self.eta, self.min_it, self.max_it = float(eta), int(min_iterations), int(max_iterations)
        self.last_iterations = 0
        sparse = _sparse(xp)
        pat = jac if hasattr(jac, "rows") else jac.pattern
        rows, cols = xp.asarray(pat.rows, dtype=xp.int64), xp.asarray(pat.cols, dtype=xp.int64)
        m, n = int(jac.m), int(jac.n)
        f_cols, e_cols = xp.asarray(structure.f_cols), xp.asarray(structure.e_cols)
        s_e, s_f = e_cols.shape[1], f_cols.shape[1]
        n_eb, n_fb = e_cols.shape[0], f_cols.shape[0]
        self.s_e, self.s_f, self.n_eb, self.n_fb = s_e, s_f, n_eb, n_fb
        self.N, self.n_E = N, n_E = n_fb * s_f, n_eb * s_e
        # column -> slot: f-slot in [0, N), N + e-slot, -1 (none)
        slot_of_col = xp.full(n, -1, dtype=xp.int64)
        self.f_slot = xp.flatnonzero((f_cols >= 0).reshape(-1))
        self.f_col = f_cols.reshape(-1)[self.f_slot]
        slot_of_col[self.f_col] = self.f_slot
        self.e_slot = xp.flatnonzero((e_cols >= 0).reshape(-1))
        self.e_col = e_cols.reshape(-1)[self.e_slot]
        slot_of_col[self.e_col] = N + self.e_slot
        self.pad_f = xp.flatnonzero((f_cols < 0).reshape(-1))
        self.n = n
        slot = slot_of_col[cols]
        ent = xp.arange(rows.size, dtype=xp.int64)
        ise, isf = slot >= N, (slot >= 0) & (slot < N)
        er, es, esrc = rows[ise], slot[ise] - N, ent[ise]
        fr, fs, fsrc = rows[isf], slot[isf], ent[isf]
        self.E = _Gathered(xp, sparse, er, es, esrc, (m, n_E))
        self.Et = _Gathered(xp, sparse, es, er, esrc, (n_E, m))
        self.F = _Gathered(xp, sparse, fr, fs, fsrc, (m, N))
        self.Ft = _Gathered(xp, sparse, fs, fr, fsrc, (N, m))
        # per-row e-values Ed (m, s_e) and per-incidence f-values Fd (n_inc, s_f)
        self.ed_pos, self.ed_src = er * s_e + es % s_e, esrc
        inc, first = _group_ids(xp, fr * max(n_fb, 1) + fs // s_f)
        n_inc = int(first.size)
        self.fd_pos, self.fd_src = inc * s_f + fs % s_f, fsrc
        inc_row, inc_fb = fr[first], fs[first] // s_f
        self.Ed = xp.zeros((m, s_e))
        self.Fd = xp.zeros((n_inc, s_f))
        # aggregations: rows -> e-blocks (V), incidences -> f-blocks (F^T F diagonal),
        # incidences of rows with an e-block -> (e-block, f-block) pairs -> f-blocks
        row_eb = xp.asarray(structure.row_eb, dtype=xp.int64)
        has_e = xp.flatnonzero(row_eb >= 0)
        self.V_of_rows = _aggregation(xp, sparse, row_eb[has_e], n_eb)
        self.rows_e = has_e
        self.FF_of_inc = _aggregation(xp, sparse, inc_fb, n_fb)
        inc_e = xp.flatnonzero(row_eb[inc_row] >= 0)
        pair, pfirst = _group_ids(xp, row_eb[inc_row[inc_e]] * max(n_fb, 1) + inc_fb[inc_e])
        self.inc_e, self.inc_e_row = inc_e, inc_row[inc_e]
        self.W_of_inc = _aggregation(xp, sparse, pair, int(pfirst.size))
        self.pair_eb = row_eb[inc_row[inc_e[pfirst]]]
        self.M_of_pairs = _aggregation(xp, sparse, inc_fb[inc_e[pfirst]], n_fb)
        self._eye_e, self._eye_f = xp.eye(s_e), xp.eye(s_f)

    # ------------------------------------------------------------------ blocks
    def _values(self, vals):
        """E, E^T, F, F^T and the per-row / per-incidence block values of ``vals``."""
        self.Ed.reshape(-1)[self.ed_pos] = vals[self.ed_src]
        self.Fd.reshape(-1)[self.fd_pos] = vals[self.fd_src]
        return self.E.fill(vals), self.Et.fill(vals), self.F.fill(vals), self.Ft.fill(vals)

    def _v_inverse(self, dd):
        """V^{-1} (n_eb, s_e, s_e) with V_b = sum_i E_i E_i^T + D_b^2 (pads: 1)."""
        xp, s_e = self.xp, self.s_e
        Er = self.Ed[self.rows_e]
        V = (self.V_of_rows @ (Er[:, :, None] * Er[:, None, :]).reshape(-1, s_e * s_e))
        V = xp.asarray(V).reshape(self.n_eb, s_e, s_e)
        diag = xp.ones(self.n_E)
        diag[self.e_slot] = dd[self.e_col]
        V += diag.reshape(self.n_eb, s_e)[:, :, None] * self._eye_e
        return xp.linalg.inv(V)

    def _preconditioner(self, Vinv, dd):
        """M^{-1} (n_fb, s_f, s_f) of SCHUR_JACOBI (see the module docstring)."""
        xp, s_e, s_f = self.xp, self.s_e, self.s_f
        Fd = self.Fd
        M = xp.asarray(self.FF_of_inc @ (Fd[:, :, None] * Fd[:, None, :]).reshape(-1, s_f * s_f))
        if self.inc_e.size:
            Winc = self.Ed[self.inc_e_row][:, :, None] * Fd[self.inc_e][:, None, :]
            W = xp.asarray(self.W_of_inc @ Winc.reshape(-1, s_e * s_f)).reshape(-1, s_e, s_f)
            C = xp.matmul(W.transpose(0, 2, 1), xp.matmul(Vinv[self.pair_eb], W))
            M -= xp.asarray(self.M_of_pairs @ C.reshape(-1, s_f * s_f))
        diag = xp.ones(self.N)
        diag[self.f_slot] = dd[self.f_col]
        M = M.reshape(self.n_fb, s_f, s_f) + diag.reshape(self.n_fb, s_f)[:, :, None] * \
            self._eye_f
        return xp.linalg.inv(M)

    # ------------------------------------------------------------------ solve
    def solve(self, vals, r, d):
        xp = self.xp
        s_e, s_f, n_eb, n_fb = self.s_e, self.s_f, self.n_eb, self.n_fb
        E, Et, F, Ft = self._values(vals)
        dd = d * d
        Vinv = self._v_inverse(dd)
        Minv = self._preconditioner(Vinv, dd)
        df = xp.ones(self.N)
        df[self.f_slot] = dd[self.f_col]

        def vinv(y):
            return xp.matmul(Vinv, y.reshape(n_eb, s_e, 1)).reshape(-1)

        def apply_s(v):
            fv = F @ v
            return Ft @ (fv - E @ vinv(Et @ fv)) + df * v

        def precond(v):
            return xp.matmul(Minv, v.reshape(n_fb, s_f, 1)).reshape(-1)

        g_e = Et @ r
        b = Ft @ (E @ vinv(g_e)) - Ft @ r
        b[self.pad_f] = 0.0
        x, self.last_iterations = truncated_pcg(xp, apply_s, precond, b, self.eta, self.min_it,
                                                self.max_it)
        # ---- back substitution
        dxe = -vinv(g_e + Et @ (F @ x))
        dx = xp.zeros(self.n)
        dx[self.f_col] = x[self.f_slot]
        dx[self.e_col] = dxe[self.e_slot]
        return dx if bool(xp.all(xp.isfinite(dx))) else None

