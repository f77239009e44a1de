"""The device buffers of B instances of one (problem, bound structure).

From a :class:`~caspar_backend.compiled.workspace_layout.WorkspaceLayout` (float template
``Fb0`` of length LF with offsets ``FO``; int array ``Ib`` of length LI with offsets ``IO``)
and B instances, on the GPU (CuPy arrays, C order):

    Fall  float64 (B, LF)   row b = instance b's float workspace: Fb0, with its
                            parameters p_b in slot F_P
    Iall  int64   (B, LI)   row b = a copy of Ib (its int scratch slots -- QDLDL's work
                            arrays, the filter counters -- are written by the solve)
    FO, IO int64  (.,)      the layout's offsets, shared
    X0    float64 (B, n')   starting points;  LBX, UBX (B, n'), LBG, UBG (B, m') bounds,
                            n' = max(n, 1), m' = max(m, 1) (a zero-width array would have
                            no data pointer; the kernels read n and m from Ib)

Thread b solves on the row views ``Fall[b]`` and ``Iall[b]``: contiguous, as on the CPU.
Interleaving the instances (column views of (L, B) buffers, one 256-byte access per warp
and slot entry) would coalesce the loads; the kernels now index every slot 1-D (no
``reshape``, which Numba compiles for contiguous arrays only), so strided column views
are the next step to measure.  ``Ib`` is copied per instance rather
than shared because its scratch slots sit between shared slots in one offset table.

Allocation: once per call, 8 (LF + LI) B bytes plus the inputs; nothing during the solve.
"""
from __future__ import annotations

import numpy as np

from ..kernels import slots


class DeviceWorkspaces:
    """Final.  The buffers above for ``lay`` and the (B, k) host inputs ``x0, p, lbx,
    ubx, lbg, ubg`` (float64), in CuPy arrays, or NumPy arrays with ``xp=numpy`` (the
    CPU batch, :mod:`caspar_backend.compiled.batch_cpu`)."""

    def __init__(self, lay, x0, p, lbx, ubx, lbg, ubg, xp=None):
        if xp is None:
            import cupy as xp
        self.xp = cp = xp
        B = x0.shape[0]
        self.lay, self.B = lay, B
        self.FO, self.IO = cp.asarray(lay.FO), cp.asarray(lay.IO)
        self.Fall = cp.empty((B, lay.Fb0.size))
        self.Fall[...] = cp.asarray(lay.Fb0)[None, :]
        self.Iall = cp.empty((B, lay.Ib.size), np.int64)
        self.Iall[...] = cp.asarray(lay.Ib)[None, :]
        sp = self.cols("P")
        if sp.stop > sp.start:
            self.Fall[:, sp] = cp.asarray(np.asarray(p, np.float64))
        self.X0, self.LBX, self.UBX = (self._rows(a, lay.n) for a in (x0, lbx, ubx))
        self.LBG, self.UBG = (self._rows(a, lay.m) for a in (lbg, ubg))

    def _rows(self, a, k):
        out = np.zeros((self.B, max(k, 1)))
        out[:, :k] = a
        return self.xp.asarray(out)

    def cols(self, name) -> slice:
        """The columns of ``Fall`` holding float slot ``name`` (slots.FLOAT_SLOTS)."""
        k = slots.FLOAT_SLOTS.index(name)
        return slice(int(self.lay.FO[k]), int(self.lay.FO[k + 1]))

    def slot(self, name) -> np.ndarray:
        """Float slot ``name`` of every instance, on the host: (B, size) float64."""
        a = self.Fall[:, self.cols(name)]
        return a if self.xp is np else self.xp.asnumpy(a)
