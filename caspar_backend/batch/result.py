"""The result of a batched solve: one entry per instance, stacked.

For B instances of a problem with n variables and m constraints:

    x       float64 (B, n)     primal solutions (user's space)
    f       float64 (B,)       objective values
    g       float64 (B, m)     constraint values
    lam_g   float64 (B, m)     constraint multipliers (CasADi's sign convention)
    lam_x   float64 (B, n)     bound multipliers (CasADi's sign convention)
    status  list[str] (B)      IPOPT status names (:mod:`caspar_backend.solver.status`)
    iterations int64 (B,)      interior-point iterations of each instance
    path    list[str] (B)      how each instance was solved: 'lockstep' (the vectorized
                               interior point), 'kernel' (the compiled interior point,
                               one CUDA thread per instance: device='cuda') or
                               'single' (its own solve; ``reason``
                               says why); on a Dask cluster also 'failed' (its chunk
                               failed on the cluster: :mod:`.distributed`)
    reason  list[str] (B)      '' for 'lockstep' and 'kernel', else why the instance left the batch
                               (or, for 'failed', '<exception type>: <text>')

``timings`` holds the batch's wall-clock seconds ('setup', 'lockstep', 'single',
'total'); ``result[i]`` is instance i as a :class:`~caspar_backend.solver.result.SolveResult`.
``extra``: empty, or on a Dask cluster ``worker``, ``device`` (per instance) and
``chunks`` (:mod:`.distributed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..solver.result import SolveResult
from ..solver.status import STATUSES


@dataclass(frozen=True)
class BatchResult:
    """Final.  See the module doc for the fields' formats."""

    x: np.ndarray
    f: np.ndarray
    g: np.ndarray
    lam_g: np.ndarray
    lam_x: np.ndarray
    status: list
    iterations: np.ndarray
    message: list
    path: list
    reason: list
    timings: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.status)

    @property
    def success(self) -> np.ndarray:
        """bool (B,): the instance ended with a successful status."""
        return np.array([STATUSES[s].success for s in self.status], dtype=bool)

    def __getitem__(self, i: int) -> SolveResult:
        i = range(len(self))[i]
        return self._instance(i, float(self.f[i]), int(self.iterations[i]))

    def __iter__(self):
        """``self[i]`` for i = 0, 1, ..., B - 1 (the scalars converted once for all)."""
        f, it = np.asarray(self.f).tolist(), np.asarray(self.iterations).tolist()
        return (self._instance(i, f[i], it[i]) for i in range(len(self)))

    def _instance(self, i: int, f: float, iterations: int) -> SolveResult:
        """Instance i's result (copies of its rows) with its objective and iterations
        already converted to Python numbers."""
        return SolveResult(x=self.x[i].copy(), f=f, g=self.g[i].copy(),
                           lam_g=self.lam_g[i].copy(), lam_x=self.lam_x[i].copy(),
                           status=self.status[i], iterations=iterations,
                           message=self.message[i],
                           extra=dict(path=self.path[i], reason=self.reason[i]))
