"""``y = M x`` for a sparse ``M`` whose entries are entries of a value vector.

:class:`IndexedMatVec` sums each row in a fixed order: a CSR product on the host, the
kernel of ``kernels/indexed_matvec.cu`` on the device (also used directly by the cuDSS
solver's refinement product, :func:`indexed_matvec_kernel`).
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod

import numpy as np

from .raw_kernels import raw_kernel
from .segments import csr_rows
from .xp import is_host


def indexed_matvec_kernel(cp):
    """The raw CUDA kernel ``caspar_indexed_matvec(ptr, col, src, val, x, out, n)``:
    ``out[i] = sum_{k in [ptr[i], ptr[i+1])} val[src[k]] x[col[k]]`` (int64 index
    arrays, float64 values, one thread per row ``i < n``)."""
    return raw_kernel(cp, "indexed_matvec.cu", "caspar_indexed_matvec")


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
        ptr, order = csr_rows(rows, n_rows)
        return ptr, np.asarray(cols, np.int64)[order], np.asarray(src, np.int64)[order]

    @abstractmethod
    def update(self, val) -> None: ...

    @abstractmethod
    def fresh(self) -> "IndexedMatVec":
        """A product with this one's triples (shared, read-only) and value state of its
        own (what :meth:`update` sets), so that a pattern built once serves several
        systems at a time."""

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

    def fresh(self) -> "HostIndexedMatVec":
        c = copy.copy(self)
        c.data = np.zeros(len(self.src))
        return c

    def __call__(self, x, out):
        out[:] = 0.0
        if len(self.data):
            self._matvec(self.n, self.n_cols, self.ptr, self.col, self.data, x, out)
        return out


class DeviceIndexedMatVec(IndexedMatVec):
    """Final.  One CUDA thread per row reads ``val[src[k]]`` directly: :meth:`update`
    only records which array holds the values (no copy)."""

    THREADS = 256

    def __init__(self, cp, rows, cols, src, n_rows):
        self.cp, self.n = cp, int(n_rows)
        self.ptr, self.col, self.src = (cp.asarray(a) for a in self._csr(rows, cols, src,
                                                                         n_rows))
        self.val = None
        self.kernel = indexed_matvec_kernel(cp)
        self.grid = (max(1, (self.n + self.THREADS - 1) // self.THREADS),)

    def update(self, val) -> None:
        self.val = val

    def fresh(self) -> "DeviceIndexedMatVec":
        c = copy.copy(self)
        c.val = None
        return c

    def __call__(self, x, out):
        if self.n:
            self.kernel(self.grid, (self.THREADS,),
                        (self.ptr, self.col, self.src, self.val, x, out, np.int32(self.n)))
        return out


def indexed_matvec(xp, rows, cols, src, n_rows) -> IndexedMatVec:
    if is_host(xp):
        return HostIndexedMatVec(rows, cols, src, n_rows)
    return DeviceIndexedMatVec(xp, rows, cols, src, n_rows)
