"""The buffers of B instances of one (problem, bound structure), on the GPU or the host.

From a :class:`~caspar_backend.compiled.workspace_layout.WorkspaceLayout` (float template
``Fb0`` of length LF with offsets ``FO``; int array ``Ib`` of length LI with offsets ``IO``)
and B instances, in one of two arrangements (C order both):

    rows (default)                  columns (``interleaved=True``)
    Fall  float64 (B, LF)           Fall  float64 (LF, B)
    Iall  int64   (B, LI)           Iall  int64   (LI, B)
    X0, LBX, UBX  (B, n')           X0, LBX, UBX  (n', B)
    LBG, UBG      (B, m')           LBG, UBG      (m', B)

Instance b's float workspace is Fb0 with its parameters p_b in slot F_P; its int array a
copy of Ib.  FO, IO: int64, the layout's offsets, shared.  n' = max(n, 1), m' = max(m, 1)
(a zero-width array has no data pointer; the kernels read n and m from Ib).

With ``shared_structure=True`` (the CUDA launches) the int arrays are split at slot
I_FIRST_SCRATCH (:mod:`.accessors`): the structure once, the scratch per instance,

    Ishared  int64 (LS,)  = Ib[:LS]     LS = IO[I_FIRST_SCRATCH]
    Iscratch int64 (B, LI - LS) rows, (LI - LS, B) columns: copies of Ib[LS:]

and no ``Iall``.

Instance b's solve indexes 1-D views: ``Fall[b]`` (a contiguous row) or ``Fall[:, b]``
(a column, stride B).  Columns suit a GPU: thread b reads entry k of its slot where
threads b+1, b+2, ... read theirs, so a warp's 32 loads of one entry are one 256-byte
access instead of 32 cache lines (not yet measured; ``cuda.group.COLUMNS`` says which
arrangement the GPU batch uses, rows for now).  Rows suit the CPU: one instance's data in
one stretch of cache.  :meth:`slot` reads a float slot of every instance as (B, size) in
either arrangement.

Allocation: once per call, 8 (LF + LI) B bytes plus the inputs; nothing during the solve.
"""
from __future__ import annotations

import numpy as np

from ..kernels import slots


class DeviceWorkspaces:
    """Final.  The buffers above for ``lay`` and the (B, k) host inputs ``x0, p, lbx,
    ubx, lbg, ubg`` (float64): CuPy arrays, or NumPy arrays with ``xp=numpy`` (numba-cuda's
    simulator; the CPU batch holds a workspace per thread instead,
    :mod:`caspar_backend.compiled.thread_workspaces`); instances in rows, or in columns
    with ``interleaved=True``; the int structure shared with ``shared_structure=True``;
    a warm start's ``lam_g0`` (B, m) and ``lam_x0`` (B, n) in slots F_LAM_G0 and F_LAM_X0
    (None: zeros)."""

    def __init__(self, lay, x0, p, lbx, ubx, lbg, ubg, xp=None, interleaved=False,
                 shared_structure=False, lam_g0=None, lam_x0=None):
        if xp is None:
            import cupy as xp
        self.xp = cp = xp
        self.interleaved = interleaved
        B = x0.shape[0]
        self.lay, self.B = lay, B
        self.FO, self.IO = cp.asarray(lay.FO), cp.asarray(lay.IO)
        self.Fall = self._copies(lay.Fb0)
        for name, rows in (("P", p), ("LAM_G0", lam_g0), ("LAM_X0", lam_x0)):
            sp = self.cols(name)
            if rows is not None and sp.stop > sp.start:
                self.Fall[self._index(sp)] = self._orient(
                    cp.asarray(np.asarray(rows, np.float64)))
        if shared_structure:
            LS = int(lay.IO[slots.I_FIRST_SCRATCH])
            self.Ishared = cp.asarray(lay.Ib[:LS])
            self.Iscratch = self._copies(lay.Ib[LS:])
        else:
            self.Iall = self._copies(lay.Ib)
        self.X0, self.LBX, self.UBX = (self._inputs(a, lay.n) for a in (x0, lbx, ubx))
        self.LBG, self.UBG = (self._inputs(a, lay.m) for a in (lbg, ubg))

    def _orient(self, a):
        """A (B, k) array in this arrangement: itself, or its transpose."""
        return a.T if self.interleaved else a

    def _index(self, cols: slice):
        """The index of columns ``cols`` of the (B, L) picture in this arrangement."""
        return (cols, slice(None)) if self.interleaved else (slice(None), cols)

    def _copies(self, template: np.ndarray):
        """B copies of the 1-D ``template``, filled on ``xp``'s device."""
        xp, L = self.xp, template.size
        out = xp.empty((L, self.B) if self.interleaved else (self.B, L), template.dtype)
        t = xp.asarray(template)
        out[...] = t[:, None] if self.interleaved else t[None, :]
        return out

    def _stack(self, rows: np.ndarray):
        """The (B, L) host array ``rows`` on ``xp``, in this arrangement (C order)."""
        return self.xp.asarray(np.ascontiguousarray(self._orient(rows)))

    def _inputs(self, a, k):
        """The (B, k) host input ``a`` as (B, max(k, 1)) float64, C order (zeros for
        k = 0), on ``xp``; a row every instance shares (row stride 0, ``batch_inputs``'
        broadcast) is sent once and copied on the device."""
        from ...batch.inputs import shared_row

        if not k:
            return self._stack(np.zeros((self.B, 1)))
        a = np.asarray(a)
        if a.shape[0] > 1 and shared_row(a):
            return self._copies(np.asarray(a[0], np.float64))
        return self._stack(np.array(a, np.float64, order="C"))

    def cols(self, name) -> slice:
        """The columns of ``Fall`` holding float slot ``name`` (slots.FLOAT_SLOTS)."""
        return self.lay.float_slice(name)

    def slot(self, name, copy: bool = True) -> np.ndarray:
        """Float slot ``name`` of every instance, on the host: (B, size) float64; with
        ``copy=False`` on the host (NumPy workspaces) a view of ``Fall``, to be read
        before the workspaces are written again."""
        a = self._orient(self.Fall[self._index(self.cols(name))])
        if self.xp is np:
            return np.array(a) if copy else a
        return self.xp.asnumpy(a)
