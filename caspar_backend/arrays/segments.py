"""Fixed-order scatter-adds and sparse patterns built once on the host.

* :class:`SegmentSum` is the fixed-order scatter-add ``out[r] = sum_{k: idx[k] = r} v[k]``
  in increasing ``k``: on the host through a CSR matrix-vector product into ``out``
  (bitwise equal to ``numpy.bincount(idx, weights=v, minlength=size)``, without
  allocating), on the device through the deterministic kernel of
  ``kernels/segment_sum.cu`` (no atomics, so repeated runs are bitwise identical);
* :func:`unique_inverse`, :func:`stable_order`, :func:`csr_rows` and :func:`csc_pattern`
  build index
  structures (host int64 in and out); :func:`distinct` is ``numpy.unique`` of an
  integer array by one sort.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from .raw_kernels import raw_kernel
from .xp import host, is_host


class SegmentSum(ABC):
    """Abstract fixed-order scatter-add ``out[r] = sum_{k: idx[k] = r} v[k]`` (k increasing),
    ``idx`` int64 in ``[0, size)`` fixed at construction; ``out`` (float64, length
    ``size``) is overwritten, entries with no k become 0.  Implementations are final."""

    @abstractmethod
    def __call__(self, v, out): ...


class HostSegmentSum(SegmentSum):
    """Final.  ``out = S v`` with ``S`` the 0/1 CSR matrix ``(size, K)`` whose row r lists
    the k with ``idx[k] = r`` in increasing order: SciPy's CSR kernel accumulates
    ``out[r] = ((0 + v[k1]) + v[k2]) + ...``, exactly numpy.bincount's order."""

    def __init__(self, idx, size):
        idx = np.asarray(idx, np.int64)
        self.size, self.K = int(size), len(idx)
        self.idx = idx
        self.indptr = np.zeros(self.size + 1, np.int64)
        np.cumsum(np.bincount(idx, minlength=self.size), out=self.indptr[1:])
        self.indices = np.argsort(idx, kind="stable").astype(np.int64)
        self.ones = np.ones(self.K)
        try:
            from scipy.sparse import _sparsetools

            self._matvec = _sparsetools.csr_matvec
        except Exception:          # private SciPy API gone: bincount (allocates)
            self._matvec = None

    def __call__(self, v, out):
        if self._matvec is None:
            out[:] = np.bincount(self.idx, weights=v, minlength=self.size)
            return out
        out[:] = 0.0
        self._matvec(self.size, self.K, self.indptr, self.indices, self.ones, v, out)
        return out


class DeviceSegmentSum(SegmentSum):
    """Final.  One CUDA thread per output entry sums its inputs in the order of a stable
    sort of ``idx`` (:class:`~caspar_backend.evaluators.layout.SegmentPlan`, every output
    a segment, empty ones 0)."""

    THREADS = 256

    def __init__(self, cp, idx, size):
        # the plan of SegmentPlan.of(idx, size), built on the device (a host argsort of
        # 10^7 entries takes seconds, once per solve): sorting the distinct keys
        # idx * K + k gives the stable order whatever sort the device uses
        self.cp = cp
        idx = cp.asarray(np.asarray(idx, np.int64))
        K, size = int(idx.size), int(size)
        self.perm = cp.argsort(idx * max(K, 1) + cp.arange(K, dtype=cp.int64)) if K \
            else cp.zeros(0, cp.int64)
        self.ptr = cp.zeros(size + 1, cp.int64)
        if K:
            cp.cumsum(cp.bincount(idx, minlength=size), out=self.ptr[1:])
        self.dst = cp.arange(size, dtype=cp.int64)
        self.n = size
        self.kernel = raw_kernel(cp, "segment_sum.cu", "caspar_segment_sum")
        self.grid = (max(1, (self.n + self.THREADS - 1) // self.THREADS),)

    def __call__(self, v, out):
        if self.n:
            self.kernel(self.grid, (self.THREADS,),
                        (v, self.perm, self.ptr, self.dst, out, np.int32(self.n)))
        return out


def unique_inverse(xp, key):
    """``numpy.unique(key, return_inverse=True)`` (host int64 in, host int64 out),
    sorted on ``xp``'s device when it has one (the KKT structure of a 10^6-row problem:
    seconds on the host, milliseconds on a GPU)."""
    key = np.asarray(key, np.int64)
    if is_host(xp) or key.size == 0:
        uniq, inv = np.unique(key, return_inverse=True)
        return uniq.astype(np.int64), inv.astype(np.int64).reshape(-1)
    k = xp.asarray(key)
    order = xp.argsort(k)
    ks = k[order]
    new = xp.ones(ks.size, dtype=bool)
    new[1:] = ks[1:] != ks[:-1]
    pos = xp.cumsum(new) - 1
    inv = xp.empty_like(pos)
    inv[order] = pos
    return np.asarray(host(ks[new]), np.int64), np.asarray(host(inv), np.int64)


def distinct(a) -> np.ndarray:
    """``numpy.unique(a)`` of a host integer array (sorted distinct values, flattened,
    ``a``'s dtype) by one sort: NumPy >= 2.3 answers the plain call by hashing, about 30x
    slower than sorting on 10^6 distinct values (0.5 s against 0.02 s).  Other dtypes go
    to ``numpy.unique`` (its NaN rules)."""
    a = np.asarray(a).reshape(-1)
    if a.dtype.kind not in "iub":
        return np.unique(a)
    s = np.sort(a)
    if s.size > 1:
        s = s[np.concatenate(([True], s[1:] != s[:-1]))]
    return s


def segment_sum(xp, idx, size) -> SegmentSum:
    return HostSegmentSum(idx, size) if is_host(xp) else DeviceSegmentSum(xp, idx, size)


def stable_order(keys, size) -> np.ndarray:
    """The permutation sorting ``keys`` (host int64 in ``[0, size)``) stably: a counting
    sort (SciPy's COO-to-CSR kernel keeps the input order within a row), O(len + size)
    instead of a comparison sort's O(len log len); ``numpy.argsort(kind='stable')`` (the
    same permutation) where that private kernel is missing."""
    keys = np.asarray(keys, np.int64)
    k = len(keys)
    try:
        from scipy.sparse import _sparsetools

        ptr, col, order = (np.zeros(int(size) + 1, np.int64), np.zeros(k, np.int64),
                           np.zeros(k, np.int64))
        _sparsetools.coo_tocsr(int(size), 1, k, keys, np.zeros(k, np.int64),
                               np.arange(k, dtype=np.int64), ptr, col, order)
        return order
    except Exception:              # private SciPy API gone
        return np.argsort(keys, kind="stable")


def csr_rows(rows, n) -> tuple:
    """``(indptr, order)``: the CSR grouping of entries by row -- ``order`` (int64) lists
    the entries of row 0, then row 1, ... each in increasing position (:func:`stable_order`),
    row i's being ``order[indptr[i]:indptr[i + 1]]`` -- for ``rows`` host int64 in
    ``[0, n)``."""
    rows = np.asarray(rows, np.int64)
    indptr = np.zeros(int(n) + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=int(n)), out=indptr[1:])
    return indptr, stable_order(rows, n)


def csc_pattern(rows, cols, n):
    """The distinct positions of the COO pattern ``(rows, cols)`` (host int64, n x n) as
    CSC ``(indptr, indices)`` (rows sorted within each column) and, for every input
    entry, the index of its position in ``indices`` (int64)."""
    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    order = stable_order(rows, n)
    order = order[stable_order(cols[order], n)]          # by (col, row)
    r, c = rows[order], cols[order]
    new = np.ones(len(order), bool)
    new[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
    where = np.empty(len(order), np.int64)
    where[order] = np.cumsum(new) - 1
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(c[new], minlength=n), out=indptr[1:])
    return indptr, r[new], where


