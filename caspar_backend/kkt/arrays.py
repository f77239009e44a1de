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
        got = xp.stack([values[i].reshape(()).astype(xp.float64) for i in dev]).get()
        for i, g in zip(dev, got):
            out[i] = float(g)
    return [float(v) for v in out]


def errstate(xp):
    return np.errstate(all="ignore") if is_host(xp) else contextlib.nullcontext()


def synchronize(xp) -> None:
    """Wait for the device (timers read the clock after this); no-op on the host."""
    if not is_host(xp):
        xp.cuda.get_current_stream().synchronize()


def amax(xp, a):
    """max(a) as a 0-d array, 0.0 for an empty ``a`` (NumPy's ``initial=0.0`` for
    nonnegative data; CuPy's max has no ``initial``)."""
    return xp.max(a) if a.size else xp.zeros(())


def amax_abs(xp, a):
    return xp.max(xp.abs(a)) if a.size else xp.zeros(())


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
        from ..evaluators.layout import SegmentPlan

        plan = SegmentPlan.of(np.asarray(idx, np.int64), int(size))
        self.cp = cp
        self.perm, self.ptr, self.dst = (cp.asarray(plan.perm), cp.asarray(plan.ptr),
                                         cp.asarray(plan.dst))
        self.n = len(plan.dst)
        self.kernel = _segment_kernel(cp)
        self.grid = (max(1, (self.n + self.THREADS - 1) // self.THREADS),)

    def __call__(self, v, out):
        if self.n:
            self.kernel(self.grid, (self.THREADS,),
                        (v, self.perm, self.ptr, self.dst, out, np.int32(self.n)))
        return out


def segment_sum(xp, idx, size) -> SegmentSum:
    return HostSegmentSum(idx, size) if is_host(xp) else DeviceSegmentSum(xp, idx, size)
