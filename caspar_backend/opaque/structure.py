"""The structures of a composed evaluation, built once per compiled problem.

Notation of :mod:`caspar_backend.opaque`: ``z = (x, y)`` (n + ny), the extended
problem's Jacobian ``Jz`` ((m + na) x (n + ny)) split into ``G_x, G_y`` (rows of g) and
``A_x, A_y`` (rows of the arguments), ``D = dy/da`` (ny x na, block diagonal over the
calls), ``Y = dy/dx`` (ny x n).  This module finds, from sparsity alone:

* the *levels* of the calls: a call whose arguments read no result is on level 0, else
  one above the highest call it reads from; the calls of one level are independent and
  are evaluated together (one host call per function and level);
* the sparsity of ``Y`` (``Y = D (A_x + A_y Y)``, exact after as many rounds as there
  are levels), of the composed Jacobian ``J = G_x + G_y Y`` and of the composed
  Lagrangian Hessian ``Z^T M Z`` (``Z = [I; Y]``, ``M`` of
  :class:`~caspar_backend.opaque.evaluator.ComposedEvaluator`), as fixed COO patterns.

Structural products use all-ones values (no cancellation), so every numeric product
of the same matrices lands inside these patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..arrays.segments import distinct
from ..errors import ModelError


def ones(rows, cols, shape) -> sp.csr_matrix:
    """The 0/1 CSR matrix of a COO structure (duplicates merged)."""
    rows = np.asarray(rows, dtype=np.int64)
    m = sp.csr_matrix((np.ones(len(rows)), (rows, np.asarray(cols, dtype=np.int64))),
                      shape=shape)
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def boolean(m) -> sp.csr_matrix:
    """``m`` with every stored entry 1 (a structural product's result)."""
    m = sp.csr_matrix(m)
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def symmetric(rows, cols, values, size) -> sp.csr_matrix:
    """The symmetric matrix of a lower-triangle COO (duplicates summed)."""
    low = sp.coo_matrix((values, (rows, cols)), shape=(size, size)).tocsr()
    return (low + low.T - sp.diags(low.diagonal())).tocsr()


@dataclass(frozen=True)
class Pattern:
    """A fixed COO pattern (final): ``rows``, ``cols`` int64, 0-based, sorted by
    (row, col), no duplicates; :meth:`gather` reads a sparse matrix's values into it."""

    rows: np.ndarray
    cols: np.ndarray
    ncols: int

    @classmethod
    def of(cls, m, lower: bool = False) -> "Pattern":
        c = sp.coo_matrix(m)
        r, k = c.row.astype(np.int64), c.col.astype(np.int64)
        if lower:
            keep = r >= k
            r, k = r[keep], k[keep]
        key = distinct(r * max(m.shape[1], 1) + k)
        nc = max(m.shape[1], 1)
        return cls(key // nc, key % nc, nc)

    @property
    def keys(self) -> np.ndarray:
        return self.rows * self.ncols + self.cols

    def gather(self, m, lower: bool = False) -> np.ndarray:
        """Values of ``m`` (sparse, or a dense ndarray) at the pattern (entries of ``m``
        outside it must be structural zeros: they are dropped)."""
        if isinstance(m, np.ndarray):
            return m[self.rows, self.cols]       # the pattern holds the lower triangle
        c = sp.coo_matrix(m)
        r, k, v = c.row.astype(np.int64), c.col.astype(np.int64), c.data
        if lower:
            keep = r >= k
            r, k, v = r[keep], k[keep], v[keep]
        keys = self.keys
        pos = np.searchsorted(keys, r * self.ncols + k)
        pos = np.minimum(pos, max(len(keys) - 1, 0))
        hit = keys[pos] == r * self.ncols + k if len(keys) else np.zeros(len(r), bool)
        return np.bincount(pos[hit], weights=v[hit], minlength=len(keys))


class CSRMap:
    """A fixed sparse structure filled from COO values by one ``bincount`` (final).

    ``rows``, ``cols`` int64 (k,) with duplicates allowed (summed), or -- with
    ``symmetric`` -- one triangle of a symmetric matrix, mirrored.  :meth:`matrix`
    turns the k values into a CSR matrix of ``shape`` without sorting anything."""

    def __init__(self, rows, cols, shape, symmetric: bool = False):
        rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
        src = np.arange(len(rows), dtype=np.int64)
        if symmetric:  # an off-diagonal entry also lands at its mirror position
            off = rows != cols
            rows, cols = np.concatenate([rows, cols[off]]), np.concatenate([cols, rows[off]])
            src = np.concatenate([src, src[off]])
        nc = max(shape[1], 1)
        key = rows * nc + cols
        uniq, pos = np.unique(key, return_inverse=True)
        self.shape = shape
        self.src, self.pos, self.nnz = src, pos.reshape(-1), len(uniq)
        r = uniq // nc
        self.indices = (uniq % nc).astype(np.int32 if nc < 2 ** 31 else np.int64)
        self.indptr = np.searchsorted(r, np.arange(shape[0] + 1)).astype(self.indices.dtype)

    def matrix(self, values) -> sp.csr_matrix:
        data = np.bincount(self.pos, weights=np.asarray(values, float)[self.src],
                           minlength=self.nnz)
        return sp.csr_matrix((data, self.indices, self.indptr), shape=self.shape)


def pattern_matrix(mp: CSRMap) -> sp.csr_matrix:
    """The 0/1 CSR matrix of a :class:`CSRMap`'s structure (its data order)."""
    return sp.csr_matrix((np.ones(mp.nnz), mp.indices, mp.indptr), shape=mp.shape)


def stack_identity(Y, n) -> sp.csr_matrix:
    """``Z = [I_n; Y]`` as CSR, assembled from Y's arrays (no vstack)."""
    Y = sp.csr_matrix(Y)
    idx = np.concatenate([np.arange(n), Y.indices]).astype(np.int64)
    ptr = np.concatenate([np.arange(n + 1), n + Y.indptr[1:]]).astype(np.int64)
    data = np.concatenate([np.ones(n), Y.data])
    return sp.csr_matrix((data, idx, ptr), shape=(n + Y.shape[0], n))


def levels(calls, Ay, n_inst_offsets) -> np.ndarray:
    """Level of every call instance (groups concatenated, int64).

    ``Ay`` (na x ny): structure of the arguments' dependence on the results;
    ``n_inst_offsets``: first global instance of each group."""
    n_inst = n_inst_offsets[-1]
    na, ny = Ay.shape
    producer = np.zeros(ny, dtype=np.int64)
    ri, ci = [], []
    for grp, off in zip(calls.groups, n_inst_offsets[:-1]):
        inst = off + np.arange(grp.size, dtype=np.int64)
        producer[grp.out_aux] = inst[None, :]
        ri.append(np.broadcast_to(inst, grp.arg_rows.shape).ravel())
        ci.append(grp.arg_rows.ravel())
    S = ones(np.concatenate(ri), np.concatenate(ci), (n_inst, na))
    C = boolean(S @ Ay)                  # instance -> results its arguments read
    lev = np.zeros(n_inst, dtype=np.int64)
    rows = np.flatnonzero(np.diff(C.indptr))
    for _ in range(n_inst + 1):
        new = np.zeros(n_inst, dtype=np.int64)
        if rows.size:
            above = lev[producer[C.indices]] + 1
            new[rows] = np.maximum.reduceat(above, C.indptr[rows])
        if np.array_equal(new, lev):
            return lev
        lev = new
    raise ModelError("the opaque calls depend on each other in a cycle")


def schedule(lev, offsets) -> list:
    """``[(level, group, instance indices int64)]`` sorted by level, then group: the
    host calls of one evaluation (``lev``: level per global instance, ``offsets``: the
    first global instance of each group and the total)."""
    out = []
    for k in range(len(offsets) - 1):
        lk = lev[offsets[k]:offsets[k + 1]]
        order = np.argsort(lk, kind="stable")
        ells, starts = np.unique(lk[order], return_index=True)
        out += [(int(e), k, idx) for e, idx in zip(ells, np.split(order, starts[1:]))]
    out.sort(key=lambda t: (t[0], t[1]))
    return out


def rounds(n_levels: int) -> int:
    """K with ``2^K >= n_levels``: the factors of ``(I - P)^{-1} = prod_k (I + P^(2^k))``
    for ``P = D A_y``, nilpotent (``P^L = 0``: a chain of dependences crosses at most
    ``L - 1`` levels)."""
    return max(int(n_levels - 1).bit_length(), 0)


def neumann(B, P, n_levels: int, cast=lambda m: m) -> tuple:
    """``(I - P)^{-1} B`` by ``rounds(n_levels)`` doublings, and the powers
    ``P^(2^k)`` used (for the transposed solve).  ``cast`` is applied to every product
    (``boolean`` for structures)."""
    Y, Pk, powers = B, P, []
    for k in range(rounds(n_levels)):
        powers.append(Pk)
        Y = cast(Y + Pk @ Y)
        if k + 1 < rounds(n_levels):
            Pk = cast(Pk @ Pk)
    return Y, powers


def y_structure(D, Ax, Ay, n_levels: int, E=None) -> sp.csr_matrix:
    """Structure of ``Y = dy/dx`` (ny x n): ``Y = D A_x + (D A_y) Y``; ``E`` (ny x (n +
    ny)): the entries of ``D A`` given directly (seeded groups, :mod:`.seeds`)."""
    B, P = D @ Ax, D @ Ay
    if E is not None:
        n = Ax.shape[1]
        B, P = B + E[:, :n], P + E[:, n:]
    return neumann(boolean(B), boolean(P), n_levels, boolean)[0]


def z_map(Y, n) -> sp.csr_matrix:
    """``Z = [I; Y]`` ((n + ny) x n): the derivative of ``z = (x, y(x))``."""
    return stack_identity(Y, n)
