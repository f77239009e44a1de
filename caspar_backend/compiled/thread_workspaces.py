"""The CPU batch's buffers: a workspace per thread, not per instance.

For B instances of one (problem, bound structure) layout (float template ``Fb0`` of
length LF with offsets ``FO``, int template ``Ib`` of length LI with offsets ``IO``) solved
on threads with Numba ids 0 ... NT - 1 (:mod:`.kernels.solve_many`):

    Fbuf   float64 (NT, LF)    a float workspace per thread (np.empty: pages only for
                               the threads that run)
    Irows  int64 (NT + 1, LI)  an int array per thread (filled at its first instance),
                               row NT the template the instances copy their scratch from
    ready  int64 (NT,)         whether thread t's int array holds the structure yet
    put    int64 (k,)          the float slots set per instance: P, LAM_G0, LAM_X0 (those
                               given, of nonzero size)
    In     float64 (B, sum)    their values, slot after slot
    keep   int64 (KEPT,)       the float slots a result is built from (:data:`KEPT`)
    Kept   float64 (B, sum)    their values after each solve, slot after slot
    X0, LBX, UBX  (B, n')      LBG, UBG  (B, m')   (n' = max(n, 1), m' = max(m, 1))

So a batch holds NT workspaces (Van der Pol collocation N = 50: 62,045 floats and
79,024 ints each) instead of B, and each thread solves its instances in one stretch of
cache.  :meth:`slot` reads a kept slot of every instance as (B, size), as
:meth:`.cuda.workspaces.DeviceWorkspaces.slot` does for the GPU's rows
(:func:`.rows.result_rows` reads either).
"""
from __future__ import annotations

import numpy as np

from .kernels import slots

#: the float slots kept per instance: what :func:`.rows.result_rows` reads
KEPT = ("X", "G", "Y", "CON_SCALE", "ZL", "ZU", "LAM_X_FIXED", "OBJ_SCALE")


class ThreadWorkspaces:
    """Final.  The buffers above for ``lay`` (a
    :class:`~caspar_backend.compiled.workspace_layout.WorkspaceLayout`), the (B, k) host
    inputs ``x0, p, lbx, ubx, lbg, ubg`` and a warm start's ``lam_g0`` (B, m) and
    ``lam_x0`` (B, n) (None: the template's zeros), for ``threads`` Numba thread ids."""

    def __init__(self, lay, x0, p, lbx, ubx, lbg, ubg, threads: int, lam_g0=None,
                 lam_x0=None):
        B = x0.shape[0]
        self.lay, self.B = lay, B
        self.FO, self.IO = lay.FO, lay.IO
        self.Fb0 = lay.Fb0
        self.Fbuf = np.empty((threads, lay.Fb0.size))
        self.Irows = np.empty((threads + 1, lay.Ib.size), np.int64)
        self.Irows[threads] = lay.Ib
        self.Ib0, self.Ibuf = self.Irows[threads], self.Irows[:threads]
        self.ready = np.zeros(threads, np.int64)
        given = [(name, rows) for name, rows in (("P", p), ("LAM_G0", lam_g0),
                                                 ("LAM_X0", lam_x0))
                 if rows is not None and _size(lay, name) > 0]
        self.put = np.array([slots.FLOAT_SLOTS.index(k) for k, _ in given], np.int64)
        self.In = (np.hstack([np.asarray(r, np.float64).reshape(B, -1) for _, r in given])
                   if given else np.zeros((B, 0)))
        self.keep = np.array([slots.FLOAT_SLOTS.index(k) for k in KEPT], np.int64)
        sizes = [_size(lay, k) for k in KEPT]
        self._kept_at = dict(zip(KEPT, np.cumsum([0] + sizes)[:-1]))
        self._sizes = dict(zip(KEPT, sizes))
        self.Kept = np.empty((B, sum(sizes)))
        self.X0, self.LBX, self.UBX = (_inputs(a, lay.n, B) for a in (x0, lbx, ubx))
        self.LBG, self.UBG = (_inputs(a, lay.m, B) for a in (lbg, ubg))

    def args(self, r: slice, O, hist, outs, code, iters, fval) -> tuple:
        """The arguments of :func:`.kernels.solve_many.solve_rows` (and its parallel twin)
        for instances ``r``: the option vector ``O``, the history ``hist`` and the
        instances' outputs ``outs, code, iters, fval`` (already sliced to ``r``)."""
        return (self.Fb0, self.FO, self.Ib0, self.IO, self.Fbuf, self.Ibuf, self.ready,
                self.put, self.In[r], self.keep, self.Kept[r], O, self.X0[r], self.LBX[r],
                self.UBX[r], self.LBG[r], self.UBG[r], hist, outs, code, iters, fval)

    def stop_slots(self):
        """The view of slot I_STOP in every thread's int array and the template's (a
        deadline sets them all: a running instance stops at its next test, a later one
        at its first)."""
        return self.lay.stop_slots(self.Irows)

    def slot(self, name: str, copy: bool = True) -> np.ndarray:
        """Kept float slot ``name`` of every instance: (B, size); with ``copy=False`` a
        view of ``Kept``."""
        a = self._kept_at[name]
        v = self.Kept[:, a:a + self._sizes[name]]
        return np.array(v) if copy else v


def _size(lay, name: str) -> int:
    s = lay.float_slice(name)
    return s.stop - s.start


def _inputs(a, k: int, B: int) -> np.ndarray:
    """The (B, k) input ``a`` as (B, max(k, 1)) float64, C order (zeros for k = 0)."""
    return np.array(a, np.float64, order="C") if k else np.zeros((B, 1))
