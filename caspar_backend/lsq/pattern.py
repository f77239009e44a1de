"""The Jacobian pattern a least-squares solve works on: the compiled evaluator's COO
without the columns of held variables (``lbx == ubx``), columns renumbered over the free
variables.  :class:`ReducedPattern` on the host; its GPU twin is
:class:`~caspar_backend.lsq.device_pattern.DevicePattern`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ReducedPattern:
    """The Jacobian pattern the minimizer works on (final): the evaluator's COO without
    the columns of constant variables, columns renumbered over the free variables.

    ``rows``, ``cols`` int64 (nnz,), 0-based, no duplicates; ``keep`` int64 (nnz,):
    position of each entry in the evaluator's ``jac_values``; ``free`` int64 (n_free,):
    the variable of each reduced column; ``m`` rows."""

    rows: np.ndarray
    cols: np.ndarray
    keep: np.ndarray
    free: np.ndarray
    m: int

    @property
    def n(self) -> int:
        return len(self.free)

    @property
    def nnz(self) -> int:
        return len(self.rows)
