"""Symbolic LDL^T of one pattern: ordering, elimination tree, levels and op tables.

Numbering.  ``K`` is N x N, given by its upper triangle in CSC
(:class:`~caspar_backend.linsolve.base.SparseStructure`).  With the ordering ``perm``
(``perm[k]`` = original index eliminated k-th) the factorized matrix is
``C = P K P^T``, ``C[i, j] = K[perm[i], perm[j]]``, and ``C = (I + L) D (I + L)^T``
with L strictly lower triangular, D diagonal.  "Column j" below is an elimination
index.  ``L``'s pattern is stored in CSC (``lp`` (N+1,), ``li`` (nnz_l,), rows sorted,
diagonal excluded): ``R_j = {i > j : L_ij != 0}`` (structurally).

Elimination tree: ``parent(j) = min R_j`` (-1 for a root).  Every k with ``L_jk != 0``
is a descendant of j.  ``level(j) = 0`` for a leaf, else ``1 + max level(children)``,
so every column that column j depends on has a smaller level: all columns of one level
can be computed at once.  *Level order* sorts columns by (level, j); ``lpos[j]`` is
column j's position in it.

QDLDL's operations (osqp/qdldl ``QDLDL_factor`` / ``QDLDL_solve``, driven by the
``qdldl`` Python package), in this exact order; the numeric phases perform every one of
them, on the host and on the device, so that with QDLDL's own permutation the factors
and solutions are QDLDL's bit for bit (the level schedule only regroups independent
work: each value receives the same operations in the same order).

* *Input order* of row k: the entries ``C_ik``, i < k, of C's upper triangle column k
  in the order qdldl's ``symperm`` appends them: K's structure entries in CSC order
  (by original column, then position in it), those whose larger elimination index is k.
* *Processing order* ``sigma_k`` of row k (QDLDL's ``yIdx``, read backwards): for each
  input entry i in input order not yet reached, the tree path ``i, parent(i), ...``
  up to (excluding) k or to the first column already reached is appended reversed to
  a list; ``sigma_k`` is that list read from its end.  It holds every column c < k with
  ``L_kc != 0`` once, descendants before ancestors.  ``rank_k(c)`` is c's position in it.
* factorization, rows k = 0..n-1 (up-looking)::

      T_ki = C_ik for the input entries, 0 for the other i in sigma_k;  d_k = C_kk
      for c in sigma_k:
          for i in R_c with i < k:
              T_ki = T_ki - L_ic * T_kc
          L_kc = T_kc * dinv_c
          d_k  = d_k - T_kc * L_kc
      dinv_k = 1 / d_k

  so each target (row k, column i <= k; i == k: the pivot) receives its products
  ``T_kc L_ic`` in increasing ``rank_k(c)``, each rounded, then subtracted (IEEE
  products commute: the order of the two factors is free; no fused multiply-add);
* forward solve ``(I + L) y = c`` (column by column): ``y_j = c_j - sum_k L_jk y_k``
  with k increasing; diagonal ``z = y * dinv``; backward ``(I + L)^T x = z``:
  ``x_k = z_k - sum_j L_jk x_j`` with j increasing.

Layout of factor arrays (``n_f = N + nnz_l`` rows): level by level, each level's
block holds first the pivots of its columns (level order), then the off-diagonal
entries of its columns (column by column in level order, rows increasing).  Rows of
one level are contiguous, so a level's targets are one slice.  ``diag_row[r]`` is the
row of the pivot at level-order position r, ``off_row[e]`` the row of L's CSC entry e.
The numeric phases keep two arrays of this layout: T (``T_kc`` at off rows, ``d_k`` at
pivot rows) and F (``L_kc`` at off rows, ``dinv_k`` at pivot rows).

Op tables (host int64):

* factorization: ops sorted by (target row, ``rank_k(c)``) for the target (k, i) and
  the product ``T_kc L_ic``; ``op_ptr`` (n_f+1,), ``op_t`` the row of ``T_kc``, ``op_l``
  the row of ``L_ic`` (of ``L_kc`` for a pivot target); ``a_row`` (nnz,) the row each
  structure entry of K is scattered to (rows without one start at 0); ``pivot_row``
  (n_f,) the pivot row of each row's column (itself for a pivot);
* forward: per level-order position r (row j), ``fw_ptr`` (N+1,), ``fw_row`` the row of
  ``L_jk``, ``fw_pos`` = ``lpos[k]``;
* backward: per position r (column k), ``bw_ptr`` (N+1,), ``bw_row`` the row of
  ``L_jk``, ``bw_pos`` = ``lpos[j]``;
* ``src`` (N,): the original index whose right-hand side starts position r;
  ``dst`` (N,): the position holding the solution's original index q;
  ``elim_diag_row`` (N,): the pivot row of elimination index k (inertia in order).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..linsolve.base import SparseStructure
from .ldl_order import minimum_degree


#: ops generated per slice by :func:`plan_ldl` (bounds its temporaries: ~10 int64
#: arrays of this length); the op tables themselves take 16 bytes per op
OPS_SLICE = 1 << 21


def _csr_ptr(keys, size) -> np.ndarray:
    """Row pointer (size+1,) int64 of sorted keys in [0, size)."""
    ptr = np.zeros(size + 1, np.int64)
    np.cumsum(np.bincount(keys, minlength=size), out=ptr[1:])
    return ptr


def factor_pattern(n: int, low_rows: list) -> tuple:
    """Elimination tree and L's CSC pattern from the strictly lower pattern of C by
    column (``low_rows[j]``: the rows i > j where C_ij is an entry).

    ``R_j = low_rows[j] + union over children c of (R_c - {j})`` (a child's column,
    less its parent j, fills column j); ``parent(j) = min R_j``.  Each child's rows
    are merged once, so the work is O(nnz_l) set operations.  Returns
    ``(parent, lp, li)``: int64 (n,), (n+1,), (nnz_l,), li sorted within columns."""
    parent = np.full(n, -1, np.int64)
    kids = [[] for _ in range(n)]
    rows = []
    for j in range(n):
        s = set(low_rows[j])
        for c in kids[j]:
            s.update(rows[c])
        s.discard(j)
        r = sorted(s)
        rows.append(r)
        if r:
            parent[j] = r[0]
            kids[r[0]].append(j)
    lp = np.zeros(n + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=lp[1:])
    li = np.fromiter(itertools.chain.from_iterable(rows), np.int64, count=int(lp[-1]))
    return parent, lp, li


def reach_ranks(n: int, up_rows: list, parent, lp) -> np.ndarray:
    """``rank[e] = rank_k(c)`` (module doc) for every CSC entry e = (k, c) of L, int64
    (nnz_l,), from the input order of each row (``up_rows[k]``: the i < k of C's upper
    column k in input order) and the elimination tree.

    Walks QDLDL's reach exactly as QDLDL_factor does (``mark[c] == k``: c already
    reached in row k).  Row k's columns get their L entries in increasing k, so the
    next free position of column c (``nxt[c]``) is the CSC entry (k, c); every column's
    positions being used up exactly checks that the reach is L's symbolic pattern.
    O(nnz + nnz_l) Python steps."""
    par = parent.tolist()
    nxt = lp[:-1].tolist()
    rank = [0] * int(lp[-1])
    mark = [-1] * n
    for k in range(n):
        paths = []
        for i in up_rows[k]:
            path = []
            while i != -1 and i < k and mark[i] != k:
                mark[i] = k
                path.append(i)
                i = par[i]
            paths.append(path)
        # QDLDL's yIdx holds each path reversed, in input order; sigma_k reads yIdx
        # from its end: the paths in reverse input order, each from its first column up
        r = 0
        for path in reversed(paths):
            for c in path:
                rank[nxt[c]] = r
                nxt[c] += 1
                r += 1
    if nxt != lp[1:].tolist():
        raise RuntimeError("QDLDL's reach differs from the symbolic pattern")
    return np.asarray(rank, np.int64)


def etree_levels(parent) -> np.ndarray:
    """``level(j)`` (module doc), int64 (n,); children precede parents (parent > j)."""
    n = len(parent)
    level = [0] * n
    par = parent.tolist()
    for j in range(n):
        p = par[j]
        if p >= 0 and level[p] < level[j] + 1:
            level[p] = level[j] + 1
    return np.asarray(level, np.int64)


@dataclass(frozen=True)
class LDLPlan:
    """Final.  The symbolic analysis (module doc) of one pattern; host int64 arrays."""

    n: int
    nnz: int
    nnz_l: int
    n_f: int
    perm: np.ndarray
    parent: np.ndarray
    level: np.ndarray
    n_levels: int
    lp: np.ndarray
    li: np.ndarray
    order: np.ndarray
    lpos: np.ndarray
    lev_ptr: np.ndarray         # (n_levels+1,) level-order positions of each level
    row_ptr: np.ndarray         # (n_levels+1,) layout rows of each level's block
    diag_row: np.ndarray
    off_row: np.ndarray
    pivot_row: np.ndarray
    a_row: np.ndarray
    fill_rows: np.ndarray       # layout rows no entry of K is scattered to
    op_ptr: np.ndarray
    op_t: np.ndarray
    op_l: np.ndarray
    fw_ptr: np.ndarray
    fw_row: np.ndarray
    fw_pos: np.ndarray
    bw_ptr: np.ndarray
    bw_row: np.ndarray
    bw_pos: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    elim_diag_row: np.ndarray
    indptr: np.ndarray          # K's structure (upper CSC), for products with K
    indices: np.ndarray
    diag_pos: np.ndarray        # (n,) position of K's diagonal entry j in the structure

    @property
    def n_ops(self) -> int:
        """Multiply-subtracts of one factorization."""
        return len(self.op_t)


def plan_ldl(structure: SparseStructure, perm=None) -> LDLPlan:
    """The :class:`LDLPlan` of ``structure`` under ``perm`` (int64 (n,), a permutation;
    None: :func:`~.ldl_order.minimum_degree`)."""
    n = int(structure.n)
    indptr = np.asarray(structure.indptr, np.int64)
    indices = np.asarray(structure.indices, np.int64)
    nnz = int(indptr[-1])
    if perm is None:
        perm = minimum_degree(n, indptr, indices)
    perm = np.asarray(perm, np.int64)
    if sorted(perm.tolist()) != list(range(n)):
        raise ValueError("perm is not a permutation of 0..n-1")
    pinv = np.empty(n, np.int64)
    pinv[perm] = np.arange(n, dtype=np.int64)
    # every entry of K's upper triangle as (i, j), i >= j, in elimination indices
    ecol = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    a, b = pinv[indices], pinv[ecol]
    ei, ej = np.maximum(a, b), np.minimum(a, b)
    # by column of C's lower (low) and upper (up) triangle, in structure order: the
    # upper columns in qdldl's input order (module doc)
    low = [[] for _ in range(n)]
    up = [[] for _ in range(n)]
    for i, j in zip(ei.tolist(), ej.tolist()):
        if i != j:
            low[j].append(i)
            up[i].append(j)
    parent, lp, li = factor_pattern(n, low)
    nnz_l = int(lp[-1])
    rank = reach_ranks(n, up, parent, lp)
    level = etree_levels(parent)
    n_levels = int(level.max()) + 1 if n else 0
    # level order: by (level, column)
    order = np.lexsort((np.arange(n), level)).astype(np.int64)
    lpos = np.empty(n, np.int64)
    lpos[order] = np.arange(n, dtype=np.int64)
    lev_ptr = _csr_ptr(level, n_levels)
    ccount = np.diff(lp)                              # off-diagonal entries per column
    lev_off = np.bincount(level, weights=ccount, minlength=n_levels).astype(np.int64)
    row_ptr = np.zeros(n_levels + 1, np.int64)
    np.cumsum(np.diff(lev_ptr) + lev_off, out=row_ptr[1:])
    lev_of_pos = level[order]
    diag_row = row_ptr[lev_of_pos] + (np.arange(n) - lev_ptr[lev_of_pos])
    # first off row of each position's column: after the level's pivots, after the
    # columns before it in the level
    cc_lo = ccount[order]
    cs = np.concatenate([[0], np.cumsum(cc_lo)])
    n_piv = np.diff(lev_ptr)
    col_start = (row_ptr[lev_of_pos] + n_piv[lev_of_pos]
                 + cs[:-1] - cs[lev_ptr[lev_of_pos]])
    lcol = np.repeat(np.arange(n, dtype=np.int64), ccount)   # column of each L entry
    off_row = col_start[lpos[lcol]] + (np.arange(nnz_l) - lp[lcol])
    n_f = n + nnz_l
    pivot_row = np.empty(n_f, np.int64)
    pivot_row[diag_row] = diag_row
    pivot_row[off_row] = diag_row[lpos[lcol]]
    # L's entries by key j*n + i are sorted (CSC, sorted rows): positions by search
    lkey = lcol * n + li

    def l_off_row(i, j):
        """Layout row of L_ij for i > j; pairs with i == j get an arbitrary row (the
        callers select the pivot row for those)."""
        if not nnz_l:
            return np.zeros(len(i), np.int64)
        e = np.minimum(np.searchsorted(lkey, j * n + i), nnz_l - 1)
        return off_row[e]

    a_row = np.where(ei == ej, diag_row[lpos[ej]], l_off_row(ei, ej))
    fill = np.ones(n_f, bool)
    fill[a_row] = False
    # factorization ops: in column c, every pair of entries p <= q (positions in li)
    # updates the target (k, i) = (li[q], li[p]) by T(k, c) L(i, c), in row k's
    # processing order: the sort key is (target, rank_k(c) = rank[q]).  Generated
    # entry by entry in slices of about OPS_SLICE ops, which bounds the temporaries.
    cnt = np.repeat(lp[1:], ccount) - np.arange(nnz_l)     # ops with p = each entry
    cum = np.concatenate([[0], np.cumsum(cnt)])
    total = int(cum[-1])
    key = np.empty(total, np.int64)
    op_t = np.empty(total, np.int64)
    op_l = np.empty(total, np.int64)
    per_target = np.zeros(n_f, np.int64)
    e0 = 0
    while e0 < nnz_l:
        e1 = max(int(np.searchsorted(cum, cum[e0] + OPS_SLICE, side="right")) - 1, e0 + 1)
        u0, u1 = int(cum[e0]), int(cum[e1])
        c = cnt[e0:e1]
        p = np.repeat(np.arange(e0, e1, dtype=np.int64), c)
        q = p + (np.arange(u1 - u0, dtype=np.int64) - np.repeat(cum[e0:e1] - u0, c))
        ti, tj = li[q], li[p]
        target = np.where(ti == tj, diag_row[lpos[tj]], l_off_row(ti, tj))
        per_target += np.bincount(target, minlength=n_f)
        # rank_k(c) < n; a target's ranks are distinct (one op per column c)
        key[u0:u1] = target * n + rank[q]
        op_t[u0:u1], op_l[u0:u1] = off_row[q], off_row[p]
        e0 = e1
    srt = np.argsort(key)
    del key
    op_ptr = np.zeros(n_f + 1, np.int64)
    np.cumsum(per_target, out=op_ptr[1:])
    op_t, op_l = op_t[srt], op_l[srt]
    # forward solve: entries (j, k) by (lpos[j], k)
    fsrt = np.lexsort((lcol, lpos[li]))
    fw_ptr = _csr_ptr(lpos[li], n)
    # backward solve: entries (j, k) by (lpos[k], j) = by their layout row
    bsrt = np.argsort(off_row, kind="stable")
    bw_ptr = _csr_ptr(lpos[lcol], n)
    return LDLPlan(
        n=n, nnz=nnz, nnz_l=nnz_l, n_f=n_f, perm=perm, parent=parent, level=level,
        n_levels=n_levels, lp=lp, li=li, order=order, lpos=lpos, lev_ptr=lev_ptr,
        row_ptr=row_ptr, diag_row=diag_row, off_row=off_row, pivot_row=pivot_row,
        a_row=np.asarray(a_row, np.int64), fill_rows=np.flatnonzero(fill),
        op_ptr=op_ptr, op_t=op_t, op_l=op_l,
        fw_ptr=fw_ptr, fw_row=off_row[fsrt], fw_pos=lpos[lcol[fsrt]],
        bw_ptr=bw_ptr, bw_row=off_row[bsrt], bw_pos=lpos[li[bsrt]],
        src=perm[order], dst=lpos[pinv], elim_diag_row=diag_row[lpos],
        indptr=indptr, indices=indices, diag_pos=indptr[1:] - 1)
