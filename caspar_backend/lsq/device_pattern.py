"""The Jacobian pattern of a GPU least-squares solve, built and kept on the device.

:class:`DevicePattern` is :class:`~caspar_backend.lsq.pattern.ReducedPattern` (the
evaluator's COO without the columns of held variables) and the parts of
:class:`~caspar_backend.lsq.jacobian.SparseJacobian` a GPU solve needs -- the CSR order
and the products ``J v``, ``J^T w``, ``sum_r J_rc^2`` -- as CuPy arrays made from the GPU
evaluator's own COO: no copy of the pattern through the host and no host sort (the CSR
order is one stable device sort of the rows).
"""

from __future__ import annotations

import numpy as np


class DevicePattern:
    """See the module docstring (final).  Attributes (``xp`` arrays, int64): ``free``
    (n,) the variable of each column; ``keep`` (nnz,) each entry's position in the
    evaluator's ``jac_values``; ``rows``, ``cols`` (nnz,); ``order`` (nnz,) the entries
    in CSR order (by row, stable), ``indptr`` (m + 1,), ``indices`` (nnz,) the columns
    in that order; ``m`` rows, ``n`` columns."""

    def __init__(self, ev, lbx, ubx, m: int, xp):
        self.xp = xp
        fixed = np.asarray(lbx) == np.asarray(ubx)
        self._free_host = np.flatnonzero(~fixed).astype(np.int64)
        self.free = xp.asarray(self._free_host)
        newcol = xp.full(fixed.size, -1, dtype=xp.int64)
        newcol[self.free] = xp.arange(self.free.size, dtype=xp.int64)
        rows, cols = xp.asarray(ev.jac_rows), xp.asarray(ev.jac_cols)
        self.keep = xp.flatnonzero(~xp.asarray(fixed)[cols])
        self.rows, self.cols = rows[self.keep], newcol[cols[self.keep]]
        self.m, self.n = int(m), int(self.free.size)
        self.order = xp.argsort(self.rows, kind="stable")
        self.indptr = xp.concatenate([xp.zeros(1, dtype=xp.int64),
                                      xp.cumsum(xp.bincount(self.rows, minlength=self.m))])
        self.indices = self.cols[self.order]

    @property
    def nnz(self) -> int:
        return int(self.rows.size)

    def host(self):
        """The same pattern as a host :class:`~caspar_backend.lsq.pattern.ReducedPattern`."""
        from ..arrays.xp import host
        from .pattern import ReducedPattern

        return ReducedPattern(host(self.rows), host(self.cols), host(self.keep),
                              self._free_host, self.m)

    # ------------------------------------------------------------ products
    def matvec(self, vals, v):
        """``J v`` (m,)."""
        return self.xp.bincount(self.rows, weights=vals * v[self.cols], minlength=self.m)

    def rmatvec(self, vals, w):
        """``J^T w`` (n,)."""
        return self.xp.bincount(self.cols, weights=vals * w[self.rows], minlength=self.n)

    def column_norms_sq(self, vals):
        """``sum_r J_rc^2`` (n,)."""
        return self.xp.bincount(self.cols, weights=vals * vals, minlength=self.n)
