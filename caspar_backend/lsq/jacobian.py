"""The Jacobian the minimizer works on: fixed COO pattern, values per evaluation.

:class:`SparseJacobian` holds the :class:`~caspar_backend.lsq.pattern.ReducedPattern`
(``m`` rows, ``n`` free columns, COO ``rows``/``cols`` int64 0-based, no duplicates)
and the permutation that orders its entries as CSR, computed once; per evaluation it
gives ``J v`` (m,), ``J^T w`` (n,) and the squared column norms ``sum_r J_rc^2`` (n,)
of a values vector ``vals`` (nnz,) in the pattern's order.

:class:`NormalPattern` maps J's values to the values of ``A = J^T J`` in a fixed upper
CSC pattern (every diagonal entry present): each pair of entries (a, b) of one row with
``col_a <= col_b`` adds ``v_a v_b`` to ``A[col_a, col_b]``; the pairs and their targets
are computed once, the sums are one ``np.bincount`` per evaluation.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def segment_pairs(group: np.ndarray, order: np.ndarray | None = None):
    """All pairs ``(a, b)`` of entries with ``group[a] == group[b]`` and ``a`` not after
    ``b`` in ``order`` (pairs with a == b included); int64 arrays.  ``order``: a
    permutation sorting ``group`` (default: a stable argsort).  Vectorized: entry k of a
    group of size L at position j pairs with the L - j entries from itself on."""
    group = np.asarray(group, dtype=np.int64)
    if order is None:
        order = np.argsort(group, kind="stable")
    g = group[order]
    K = len(g)
    if K == 0:
        z = np.zeros(0, np.int64)
        return z, z
    start = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    size = np.diff(np.r_[start, K])
    first = np.repeat(start, size)                 # group start of each sorted position
    pos = np.arange(K) - first                     # position within the group
    count = np.repeat(size, size) - pos            # pairs each position starts
    a_sorted = np.repeat(np.arange(K), count)
    off = np.arange(len(a_sorted)) - np.repeat(np.cumsum(count) - count, count)
    b_sorted = a_sorted + off
    return order[a_sorted].astype(np.int64), order[b_sorted].astype(np.int64)


def csr_order(rows, cols, m, n):
    """``(order, indptr, indices)``: the permutation taking COO entries (no duplicates)
    to CSR order, rows ascending and columns ascending within a row, with the CSR index
    arrays (a linear-time pair sort, :mod:`.pair_sort`)."""
    from .pair_sort import pair_order

    order, indptr = pair_order(rows, cols, m, n)
    return order, indptr, np.asarray(cols, dtype=np.int64)[order]


class SparseJacobian:
    """Products with J of a fixed pattern (final).  See the module docstring."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.m, self.n = pattern.m, pattern.n
        rows, cols = pattern.rows, pattern.cols
        self.order, self.indptr, self.indices = csr_order(rows, cols, self.m, self.n)
        self.rows, self.cols = rows, cols

    def csr(self, vals) -> sp.csr_matrix:
        """J as a CSR matrix (m, n) over the shared index arrays."""
        return sp.csr_matrix((vals[self.order], self.indices, self.indptr),
                             shape=(self.m, self.n))

    def matvec(self, vals, v) -> np.ndarray:
        """``J v`` (m,)."""
        return np.bincount(self.rows, weights=vals * v[self.cols], minlength=self.m)

    def rmatvec(self, vals, w) -> np.ndarray:
        """``J^T w`` (n,)."""
        return np.bincount(self.cols, weights=vals * w[self.rows], minlength=self.n)

    def column_norms_sq(self, vals) -> np.ndarray:
        """``sum_r J_rc^2`` (n,)."""
        return np.bincount(self.cols, weights=vals * vals, minlength=self.n)


class NormalPattern:
    """The upper CSC pattern of ``J^T J`` and the map from J's values (final).

    ``indptr`` int64 (n+1,), ``indices`` int64 (nnz_A,), sorted within columns, every
    diagonal present; ``diag_pos`` int64 (n,): position of each diagonal entry."""

    def __init__(self, pattern):
        n = pattern.n
        a, b = segment_pairs(pattern.rows)
        ca, cb = pattern.cols[a], pattern.cols[b]
        lo, hi = np.minimum(ca, cb), np.maximum(ca, cb)
        diag = np.arange(n, dtype=np.int64)
        key = np.r_[hi * n + lo, diag * n + diag]
        uniq, inv = np.unique(key, return_inverse=True)     # CSC order: column, then row
        self.n = n
        self.a, self.b = a, b
        self.target = inv[:len(a)].astype(np.int64)
        self.indices = (uniq % max(n, 1)).astype(np.int64)
        col = uniq // max(n, 1)
        self.indptr = np.r_[0, np.cumsum(np.bincount(col, minlength=n))].astype(np.int64)
        self.diag_pos = np.searchsorted(uniq, diag * n + diag).astype(np.int64)
        self.nnz = len(uniq)

    def values(self, vals, diag_add=None) -> np.ndarray:
        """Values of ``J^T J + diag(diag_add)`` in the pattern's order."""
        out = np.bincount(self.target, weights=vals[self.a] * vals[self.b], minlength=self.nnz)
        if diag_add is not None:
            out[self.diag_pos] += diag_add
        return out

    def dense(self, vals, diag_add=None) -> np.ndarray:
        """``J^T J + diag(diag_add)`` as a dense symmetric (n, n) array."""
        A = sp.csc_matrix((self.values(vals, diag_add), self.indices, self.indptr),
                          shape=(self.n, self.n)).toarray()
        return A + np.triu(A, 1).T
