"""The structural part of the KKT systems: what they compute from the COO structures alone.

A KKT system of :mod:`.augmented` or :mod:`.condensed` is its *pattern* (this module:
assembly maps, the linear solver's matrix structure, segment-sum plans, index sets on
the device) plus per-solve values (buffers, regularization, the linear solver's
factors).  A pattern is a deterministic function of its arguments ``(nw, m, [nx,]
hess_rows, hess_cols, jac_rows, jac_cols, [r,] xp)``, holds no per-solve state and is
never written after construction, so one pattern may serve any number of solves at
once: the solver keeps it in the compiled problem's
:class:`~caspar_backend.structure_cache.StructureCache` (see
:func:`caspar_backend.kkt.make_kkt_system`).  The formulas the maps implement are those
of the two modules' docs.
"""

from __future__ import annotations

import numpy as np

from ..arrays import csc_pattern, indexed_matvec, segment_sum, stable_order, unique_inverse
from ..linsolve.base import SparseStructure


def row_pairs(rows):
    """All pairs ``(p, q)``, ``p <= q``, of entries with the same row, for entries given
    by their rows (host int64).  Returns ``(p, q)`` int64 index arrays into ``rows``,
    grouped by row (rows in increasing order, entries of a row in their given order)."""
    rows = np.asarray(rows, np.int64)
    k = len(rows)
    if k == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = stable_order(rows, int(rows.max()) + 1)
    r = rows[order]
    starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    counts = np.diff(np.r_[starts, k])
    pos = np.arange(k) - np.repeat(starts, counts)        # position within the row
    lengths = np.repeat(counts, counts) - pos              # partners at or after it
    total = int(lengths.sum())
    first = np.repeat(np.arange(k), lengths)               # sorted index of p
    offset = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return order[first], order[first + offset]


def _structure(n, indptr, indices) -> SparseStructure:
    return SparseStructure(n, np.asarray(indptr, np.int64), np.asarray(indices, np.int64))


class AugmentedPattern:
    """Final.  The pattern of :class:`~.augmented.AugmentedKKT` (order ``N = nw + m +
    r``): ``map`` from the source vector ``src = [hess_values, Sigma + delta_w,
    jac_values, -delta_c, Q column-major, -c]`` (block offsets ``off``) to the ``nnz``
    positions of the upper-triangle CSC ``structure``; the segment sums of the assembly
    and of the static terms (``row_sq``: |A_i|^2 per row; ``col_sq``: |K_j|_2^2 per
    column, over ``[W^2, W_off^2 (at positions hoff), A^2, Sigma^2]``); the private
    columns (``priv_entry``: their Jacobian entries, ``priv_col``: their columns,
    ``priv_row_sum``: summed per row, ``priv_none``: +inf on rows without one).
    ``singletons_private=False`` leaves out the one column of a singleton row unless it
    is private itself: the pattern of a system whose rows have eliminated private
    columns of their own (:mod:`.restoration`), in which no row is a singleton."""

    def __init__(self, nw, m, hess_rows, hess_cols, jac_rows, jac_cols, r=0, xp=np,
                 singletons_private=True):
        nw, m, r = int(nw), int(m), int(r)
        self.nw, self.m, self.r = nw, m, r
        N = self.N = nw + m + r
        hr, hc = np.asarray(hess_rows, np.int64), np.asarray(hess_cols, np.int64)
        jr, jc = np.asarray(jac_rows, np.int64), np.asarray(jac_cols, np.int64)
        self.nnz_h, self.nnz_j = len(hr), len(jr)
        dw, dc, dr = np.arange(nw), nw + np.arange(m), nw + m + np.arange(r)
        qrow = np.tile(np.arange(nw), r)
        qcol = np.repeat(nw + m + np.arange(r), nw)
        # upper-triangle (row <= col) coordinates of every source entry
        rows = np.concatenate([np.minimum(hr, hc), dw, jc, dc, qrow, dr])
        cols = np.concatenate([np.maximum(hr, hc), dw, nw + jr, dc, qcol, dr])
        key = cols * N + rows
        uniq, smap = unique_inverse(xp, key)
        self.map = smap
        ucol, urow = uniq // N, uniq % N
        indptr = np.zeros(N + 1, np.int64)
        np.cumsum(np.bincount(ucol, minlength=N), out=indptr[1:])
        self.structure = _structure(N, indptr, urow)
        self.nnz = len(uniq)
        self.off = np.cumsum([0, len(hr), nw, len(jr), m, nw * r, r])
        self.assemble = segment_sum(xp, smap, self.nnz)
        self.row_sq = segment_sum(xp, jr, m)
        off = np.flatnonzero(hr != hc)
        self.n_off = len(off)
        self.hoff = xp.asarray(off)
        self.col_sq = segment_sum(xp, np.concatenate([hr, hc[off], jc, dw]), nw)
        # private columns: one Jacobian entry, no Hessian entry (none with a low-rank
        # block, which couples every column) ...
        count = np.bincount(jc, minlength=nw)
        in_hess = np.zeros(nw, bool)
        in_hess[hr], in_hess[hc] = True, True
        # ... and the entry of a singleton row
        single = ((np.bincount(jr, minlength=m) == 1)[jr] if singletons_private
                  else np.zeros(len(jr), bool))
        priv = np.flatnonzero(((count[jc] == 1) & ~in_hess[jc]) | single) if r == 0 \
            else np.zeros(0, np.int64)
        self.n_priv = len(priv)
        self.priv_entry, self.priv_col = (xp.asarray(a) for a in (priv, jc[priv]))
        self.priv_row_sum = segment_sum(xp, jr[priv], m)
        self.priv_none = xp.asarray(np.where(np.bincount(jr[priv], minlength=m) > 0,
                                             0.0, np.inf))


class CondensedPattern:
    """Final.  The pattern of :class:`~.condensed.CondensedKKT`: the positions of the
    Jacobian's x, slack and elastic entries (``xpos``, ``spos``, ``epos``), the
    pairs of x-entries of a row (``pair_a``, ``pair_b``) and K_c's upper-triangle CSC
    ``structure`` with the assembly plan from ``[hess_values, Sx + dw, pair
    products]``; the full Newton matrix (``kmv``) and Jx, Jx^T (``jmv``, ``jtmv``) as
    indexed products (templates: a solve takes :meth:`~caspar_backend.arrays.
    IndexedMatVec.fresh` copies, whose values are its own)."""

    def __init__(self, nw, m, nx, hess_rows, hess_cols, jac_rows, jac_cols, xp=np):
        nw, m, nx = int(nw), int(m), int(nx)
        self.nw, self.m, self.nx = nw, m, nx
        ne = self.ne = nw - nx - m
        hr, hc = np.asarray(hess_rows, np.int64), np.asarray(hess_cols, np.int64)
        jr, jc = np.asarray(jac_rows, np.int64), np.asarray(jac_cols, np.int64)
        self._check_structure(hr, hc, jr, jc)
        # ---- Jacobian parts (positions into jac_values)
        xpos = np.flatnonzero(jc < nx)
        spos = np.empty(m, np.int64)
        is_s = (jc >= nx) & (jc < nx + m)
        spos[jc[is_s] - nx] = np.flatnonzero(is_s)
        epos = np.empty(ne, np.int64)
        is_e = jc >= nx + m
        epos[jc[is_e] - nx - m] = np.flatnonzero(is_e)
        jxr, jxc = jr[xpos], jc[xpos]
        # ---- condensed matrix K_c: upper-triangle CSC of order nx
        pa, pb = row_pairs(jxr)
        rows = np.concatenate([np.minimum(hr, hc), np.arange(nx),
                               np.minimum(jxc[pa], jxc[pb])])
        cols = np.concatenate([np.maximum(hr, hc), np.arange(nx),
                               np.maximum(jxc[pa], jxc[pb])])
        indptr, indices, cmap = csc_pattern(rows, cols, nx)
        self.structure = _structure(nx, indptr, indices)
        self.nnz = len(indices)
        self.n_pairs = len(pa)
        nh = self.nh = len(hr)
        self.nnz_j = len(jr)
        self.assemble = segment_sum(xp, cmap, self.nnz)
        self.pair_a, self.pair_b = xp.asarray(pa), xp.asarray(pb)
        # ---- the full Newton matrix as (out, in, value) triples, for refinement:
        # value source src = [hess_values, jac_values, Sigma + dw (nw), -dc (m)]
        N = self.N = nw + m
        nj = len(jr)
        off = hr != hc
        kh, kj = np.arange(nh), nh + np.arange(nj)
        kd = nh + nj + np.arange(N)
        mv_out = np.concatenate([hr, hc[off], nw + jr, jc, np.arange(N)])
        mv_in = np.concatenate([hc, hr[off], jc, nw + jr, np.arange(N)])
        mv_val = np.concatenate([kh, kh[off], kj, kj, kd])
        self.kmv = indexed_matvec(xp, mv_out, mv_in, mv_val, N)
        # ---- Jx and Jx^T products, per-row and per-entry index vectors
        self.jmv = indexed_matvec(xp, jxr, jxc, xpos, m)
        self.jtmv = indexed_matvec(xp, jxc, jxr, xpos, nx)
        self.n_jx = len(xpos)
        self.jx_pos, self.jx_row = xp.asarray(xpos), xp.asarray(jxr)
        self.s_pos, self.e_pos = xp.asarray(spos), xp.asarray(epos)
        self.e_row = xp.asarray(jr[epos])
        self.e_sum = segment_sum(xp, jr[epos], m)

    def _check_structure(self, hr, hc, jr, jc):
        nw, m, nx, ne = self.nw, self.m, self.nx, self.ne
        if ne < 0:
            raise ValueError(f"condensed KKT: nw = {nw} < nx + m = {nx + m}: not every "
                             f"constraint row has a slack")
        if len(hr) and max(hr.max(), hc.max()) >= nx:
            raise ValueError("condensed KKT: Hessian entries outside the x block")
        cols = jc[jc >= nx]
        counts = np.bincount(cols - nx, minlength=m + ne) if len(cols) else np.zeros(m + ne)
        if len(counts) != m + ne or np.any(counts != 1):
            raise ValueError("condensed KKT: every slack/elastic column needs exactly one "
                             "Jacobian entry")
        s = (jc >= nx) & (jc < nx + m)
        if np.any(jr[s] != jc[s] - nx):
            raise ValueError("condensed KKT: column nx + i must be the slack of row i")
