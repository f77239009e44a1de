"""Array-module helpers shared by the interior-point method and the KKT systems.

The method is written once against an array module ``xp`` — :mod:`numpy` on the CPU,
:mod:`cupy` on a CUDA device — taken from the evaluator (``evaluator.xp``).  Vectors and
value arrays live in ``xp``; *structures* (COO/CSC index patterns) are computed once on
the host with NumPy.  The helpers here hide the few places where the two modules differ:

* :func:`host` copies to a NumPy array (once per solve, never inside the iteration);
* :func:`scalars` reads several 0-d device values back in **one** device-to-host
  transfer (each transfer is a synchronisation, so the method batches the scalars it
  branches on);
* :func:`errstate` silences NumPy's floating-point warnings (CuPy has none);
* :func:`gather` is ``out[:] = a[idx]`` without a temporary (NumPy's ``take`` buffers
  ``out`` unless told not to check the indices);
* :class:`IndexedMatVec` is ``y = M x`` for a sparse M whose entries are entries of a
  value vector, in a fixed summation order (a CSR product on the host, the kernel of
  ``kernels/indexed_matvec.cu`` on the device);
* :class:`SegmentSum` is the fixed-order scatter-add ``out[r] = sum_{k: idx[k] = r} v[k]``
  in increasing ``k``: on the host through a CSR matrix-vector product into ``out``
  (bitwise equal to ``numpy.bincount(idx, weights=v, minlength=size)``, without
  allocating), on the device through the deterministic kernel of
  ``kernels/segment_sum.cu`` (no atomics, so repeated runs are bitwise identical).
"""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod

import numpy as np


def is_host(xp) -> bool:
    return xp is np


def host(a) -> np.ndarray:
    """``a`` as a NumPy array (a device array is copied to the host)."""
    if hasattr(a, "get") and not isinstance(a, np.ndarray):
        return a.get()
    return np.asarray(a)


def scalars(xp, *values) -> list:
    """Python floats of the 0-d arrays / numbers ``values``, with at most one
    device-to-host transfer."""
    if is_host(xp):
        return [float(v) for v in values]
    dev = [i for i, v in enumerate(values) if hasattr(v, "get")]
    out = [v if i not in dev else None for i, v in enumerate(values)]
    if dev:
        # astype without a copy: each copy of a float64 value would be one more launch
        got = xp.stack([values[i].reshape(()).astype(xp.float64, copy=False)
                        for i in dev]).get()
        for i, g in zip(dev, got):
            out[i] = float(g)
    return [float(v) for v in out]


def errstate(xp):
    return np.errstate(all="ignore") if is_host(xp) else contextlib.nullcontext()


def synchronize(xp) -> None:
    """Wait for the device (timers read the clock after this); no-op on the host."""
    if not is_host(xp):
        xp.cuda.get_current_stream().synchronize()


def gather(xp, a, idx, out):
    """``out[:] = a[idx]`` (``idx`` int64 in range, an ``xp`` array), in place.  NumPy's
    ``take`` copies through a buffer when it must check the indices (``mode='raise'``);
    the indices here are structures built in range, so the host clips instead."""
    if is_host(xp):
        return np.take(a, idx, out=out, mode="clip")
    return xp.take(a, idx, out=out)


def amax(xp, a):
    """max(a) as a 0-d array, 0.0 for an empty ``a`` (NumPy's ``initial=0.0`` for
    nonnegative data; CuPy's max has no ``initial``)."""
    return xp.max(a) if a.size else xp.zeros(())


def amax_abs(xp, a):
    """max |a| as a 0-d array (0.0 for an empty ``a``); one fused kernel on the device."""
    from .fused import call     # fused reads is_host from here

    return call(xp, "amax_abs", a)


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


_MODULES: dict = {}


def _segment_kernel(cp):
    k = _MODULES.get("segsum")
    if k is None:
        from ..codegen_cuda import kernel_file

        k = _MODULES["segsum"] = cp.RawModule(code=kernel_file("segment_sum.cu")).get_function(
            "caspar_segment_sum")
    return k


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
        self.kernel = _segment_kernel(cp)
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


class IndexedMatVec(ABC):
    """Abstract ``y = M x`` for a sparse ``M`` (``n_rows`` rows) whose entries are entries
    of a value vector ``val``: entry k is ``val[src[k]]`` at ``(rows[k], cols[k])``, the
    triples fixed at construction (host int64; several k may share a position, they
    are summed).  Row i is summed in increasing k among its entries (the order of a
    stable sort by row).  :meth:`update` takes the current ``val`` (an ``xp`` array);
    ``__call__(x, out)`` overwrites ``out`` (float64, length ``n_rows``).
    Implementations are final."""

    @staticmethod
    def _csr(rows, cols, src, n_rows):
        rows = np.asarray(rows, np.int64)
        order = stable_order(rows, n_rows)
        ptr = np.zeros(int(n_rows) + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=int(n_rows)), out=ptr[1:])
        return ptr, np.asarray(cols, np.int64)[order], np.asarray(src, np.int64)[order]

    @abstractmethod
    def update(self, val) -> None: ...

    @abstractmethod
    def __call__(self, x, out): ...


class HostIndexedMatVec(IndexedMatVec):
    """Final.  :meth:`update` gathers the entries into a CSR data array once; each
    product is SciPy's CSR kernel (``y[i] = ((0 + a_k1 x_c1) + a_k2 x_c2) + ...``)."""

    def __init__(self, rows, cols, src, n_rows):
        self.n = int(n_rows)
        self.ptr, self.col, self.src = self._csr(rows, cols, src, n_rows)
        self.data = np.zeros(len(self.src))
        self.n_cols = int(self.col.max()) + 1 if len(self.col) else 0
        from scipy.sparse import _sparsetools

        self._matvec = _sparsetools.csr_matvec

    def update(self, val) -> None:
        np.take(val, self.src, out=self.data, mode="clip")

    def __call__(self, x, out):
        out[:] = 0.0
        if len(self.data):
            self._matvec(self.n, self.n_cols, self.ptr, self.col, self.data, x, out)
        return out


def _indexed_matvec_kernel(cp):
    k = _MODULES.get("indexed_matvec")
    if k is None:
        from ..codegen_cuda import kernel_file

        k = _MODULES["indexed_matvec"] = cp.RawModule(
            code=kernel_file("indexed_matvec.cu")).get_function("caspar_indexed_matvec")
    return k


class DeviceIndexedMatVec(IndexedMatVec):
    """Final.  One CUDA thread per row reads ``val[src[k]]`` directly: :meth:`update`
    only records which array holds the values (no copy)."""

    THREADS = 256

    def __init__(self, cp, rows, cols, src, n_rows):
        self.cp, self.n = cp, int(n_rows)
        self.ptr, self.col, self.src = (cp.asarray(a) for a in self._csr(rows, cols, src,
                                                                         n_rows))
        self.val = None
        self.kernel = _indexed_matvec_kernel(cp)
        self.grid = (max(1, (self.n + self.THREADS - 1) // self.THREADS),)

    def update(self, val) -> None:
        self.val = val

    def __call__(self, x, out):
        if self.n:
            self.kernel(self.grid, (self.THREADS,),
                        (self.ptr, self.col, self.src, self.val, x, out, np.int32(self.n)))
        return out


def indexed_matvec(xp, rows, cols, src, n_rows) -> IndexedMatVec:
    if is_host(xp):
        return HostIndexedMatVec(rows, cols, src, n_rows)
    return DeviceIndexedMatVec(xp, rows, cols, src, n_rows)
