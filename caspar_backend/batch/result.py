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
                               interior point), 'kernel' (the compiled interior point:
                               one CUDA thread per instance, or on the CPU Numba's
                               threads; ``extra['device']`` says which) or
                               'single' (its own solve; ``reason``
                               says why); on a Dask cluster also 'failed' (its chunk
                               failed on the cluster: :mod:`.distributed`)
    reason  list[str] (B)      '' for 'lockstep' and 'kernel', else why the instance left the batch
                               (or, for 'failed', '<exception type>: <text>')

``timings`` holds the batch's wall-clock seconds ('setup', 'lockstep', 'single',
'total'); ``result[i]`` is instance i as a :class:`~caspar_backend.solver.result.SolveResult`.
``extra['device']``: list[str] (B), where each instance was solved, 'cpu' or 'cuda' (a
lockstep run's device, also for the instances it finished after moving its tail to
the host; '' for one a Ctrl-C stopped before its solve, or whose chunk failed on a
cluster); on a Dask cluster ``extra`` also holds ``worker`` (per instance) and
``chunks`` (:mod:`.distributed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

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
        """``self[i]`` for i = 0, 1, ..., B - 1, made in one pass: the scalars converted
        once, each array field copied once and instance i given row i of the copy (its
        own memory, as ``self[i]``'s copies, shared with no other instance)."""
        cols = [np.array(a).tolist() if k < 2 else list(np.array(a))
                for k, a in enumerate((self.f, self.iterations, self.x, self.g,
                                       self.lam_g, self.lam_x))]
        return map(_solve_result, *cols, self.status, self.message, self.path,
                   self.reason)

    def _instance(self, i: int, f: float, iterations: int) -> SolveResult:
        """Instance i's result (copies of its rows) with its objective and iterations
        already converted to Python numbers."""
        return _solve_result(f, iterations, self.x[i].copy(), self.g[i].copy(),
                             self.lam_g[i].copy(), self.lam_x[i].copy(), self.status[i],
                             self.message[i], self.path[i], self.reason[i])


#: SolveResult's fields; those a batch instance leaves at their (empty) defaults
_FIELDS = frozenset(f.name for f in fields(SolveResult))
_EMPTY = ("timings", "counts", "history", "final_errors", "eval_seconds")
assert _FIELDS == {"x", "f", "g", "lam_g", "lam_x", "status", "iterations", "message",
                   "extra", *_EMPTY} and not hasattr(SolveResult, "__post_init__")


def _solve_result(f, iterations, x, g, lam_g, lam_x, status, message, path, reason):
    """``SolveResult(x=x, f=f, ..., extra=dict(path=path, reason=reason))``, equal to the
    constructor's, in a fifth of its time: the frozen dataclass's ``__init__`` sets each
    of 14 fields through ``object.__setattr__`` (~6 us, paid per answer by a service);
    here the instance's ``__dict__`` is filled at once (the assert above: no other field,
    no ``__post_init__``)."""
    r = object.__new__(SolveResult)
    r.__dict__.update(x=x, f=f, g=g, lam_g=lam_g, lam_x=lam_x, status=status,
                      iterations=iterations, message=message, timings={}, counts={},
                      history=[], final_errors={}, eval_seconds={},
                      extra=dict(path=path, reason=reason))
    return r
