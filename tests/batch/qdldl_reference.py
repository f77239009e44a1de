"""QDLDL's factorization and solve, one scalar operation at a time (the test reference).

The operations of osqp/qdldl's ``QDLDL_etree`` / ``QDLDL_factor`` / ``QDLDL_solve`` as
the ``qdldl`` Python package drives them (its ``symperm``, ``permute_x``,
``permutet_x``), rewritten in Python: Python floats are IEEE doubles and every
``a - b * c`` below is a product rounded, then a difference rounded (no fused
multiply-add), so the numbers are QDLDL's bit for bit -- for any elimination order,
where the package itself only ever uses its AMD order.  The tests check this reference
against ``qdldl.Solver`` in AMD's order and then use it for other orders.

Input: the upper triangle of K in CSC (``SparseStructure``: ``indptr``, ``indices``;
``values`` (nnz,) in the same order) and ``perm`` (``perm[k]`` = the original index
eliminated k-th).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ReferenceFactors:
    """``C = P K P^T = (I + L) D (I + L)^T``.  ``lp``, ``li``, ``lx``: L (strictly lower)
    in CSC, rows increasing within a column; ``d``, ``dinv`` (n,) in elimination order
    (``dinv = 1 / d``); ``failed_at``: the first k with ``d_k == 0`` (QDLDL stops there:
    later pivots stay 0, later rows of L are not computed), -1 when none."""

    lp: np.ndarray
    li: np.ndarray
    lx: np.ndarray
    d: np.ndarray
    dinv: np.ndarray
    perm: np.ndarray
    failed_at: int

    def dense_l(self) -> np.ndarray:
        n = len(self.d)
        L = np.zeros((n, n))
        L[self.li, np.repeat(np.arange(n), np.diff(self.lp))] = self.lx
        return L


def permuted_columns(indptr, indices, values, perm) -> list:
    """Column k of C's upper triangle as ``[(i, value), ...]`` in QDLDL's order: K's
    entries taken by original column, then position, each appended to column
    ``max(pinv[r], pinv[c])`` with row ``min(...)`` (qdldl's ``symperm``: no sort)."""
    n = len(perm)
    pinv = np.empty(n, np.int64)
    pinv[perm] = np.arange(n)
    cols = [[] for _ in range(n)]
    for j in range(n):
        for p in range(int(indptr[j]), int(indptr[j + 1])):
            i = int(indices[p])
            if i > j:
                continue
            a, b = int(pinv[i]), int(pinv[j])
            cols[max(a, b)].append((min(a, b), float(values[p])))
    return cols


def etree(cols) -> list:
    """QDLDL_etree: ``parent[i]`` (-1 for a root) and the column counts of L."""
    n = len(cols)
    parent, lnz, work = [-1] * n, [0] * n, [-1] * n
    for j in range(n):
        work[j] = j
        for i, _ in cols[j]:
            while work[i] != j:
                if parent[i] == -1:
                    parent[i] = j
                lnz[i] += 1
                work[i] = j
                i = parent[i]
    return parent, lnz


def factor(indptr, indices, values, perm) -> ReferenceFactors:
    """QDLDL_factor on ``P K P^T`` (module doc)."""
    perm = np.asarray(perm, np.int64)
    cols = permuted_columns(indptr, indices, values, perm)
    n = len(cols)
    parent, lnz = etree(cols)
    lp = [0] * (n + 1)
    for i in range(n):
        lp[i + 1] = lp[i] + lnz[i]
    li, lx = [0] * lp[n], [0.0] * lp[n]
    nxt = lp[:n]
    d, dinv = [0.0] * n, [0.0] * n
    y, used = [0.0] * n, [False] * n
    failed_at = -1
    for k in range(n):
        # the reach of column k through the elimination tree, in QDLDL's yIdx order
        y_idx = []
        for b, v in cols[k]:
            if b == k:
                d[k] = v
                continue
            y[b] = v
            if used[b]:
                continue
            path, x = [], b
            while x != -1 and x < k and not used[x]:
                used[x] = True
                path.append(x)
                x = parent[x]
            y_idx.extend(reversed(path))
        for c in reversed(y_idx):
            yc = y[c]
            for j in range(lp[c], nxt[c]):
                y[li[j]] = y[li[j]] - lx[j] * yc
            li[nxt[c]] = k
            lx[nxt[c]] = yc * dinv[c]
            d[k] = d[k] - yc * lx[nxt[c]]
            nxt[c] += 1
            y[c] = 0.0
            used[c] = False
        if d[k] == 0.0:
            failed_at = k
            break
        dinv[k] = 1.0 / d[k]
    return ReferenceFactors(np.asarray(lp, np.int64), np.asarray(li, np.int64),
                            np.asarray(lx), np.asarray(d), np.asarray(dinv), perm,
                            failed_at)


def solve(f: ReferenceFactors, b) -> np.ndarray:
    """``K^-1 b`` as qdldl's Solver.solve: permute, QDLDL_Lsolve (column by column),
    ``x *= dinv``, QDLDL_Ltsolve (columns from the last), permute back."""
    lp, li, lx, dinv, perm = f.lp, f.li.tolist(), f.lx.tolist(), f.dinv.tolist(), f.perm
    n = len(perm)
    x = [float(b[perm[j]]) for j in range(n)]
    for i in range(n):
        val = x[i]
        for j in range(lp[i], lp[i + 1]):
            x[li[j]] = x[li[j]] - lx[j] * val
    for i in range(n):
        x[i] = x[i] * dinv[i]
    for i in range(n - 1, -1, -1):
        val = x[i]
        for j in range(lp[i], lp[i + 1]):
            val = val - lx[j] * x[li[j]]
        x[i] = val
    out = np.empty(n)
    out[perm] = x
    return out


def inertia(f: ReferenceFactors) -> tuple:
    """(pos, neg, zero) of the pivots before QDLDL stopped (the rest count as zero)."""
    n = len(f.d)
    head = f.d[:f.failed_at] if f.failed_at >= 0 else f.d
    pos, neg = int((head > 0).sum()), int((head < 0).sum())
    return pos, neg, n - pos - neg
