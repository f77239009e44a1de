"""One replicated evaluator with its gather maps: C instances at once, in the single
problem's layouts.

A :class:`ReplicaEvaluator` owns the evaluator of the replicated problem of C instances
(:mod:`.replicate`), the maps from its outputs to the single problem's layouts
(:mod:`.gather`) and the work buffers; each call is one evaluation of the replicated
problem (one vectorized NumPy sequence / one kernel launch per pattern group) and one
``take`` per output into the caller's (C, k) arrays.  The evaluator may be
:attr:`ReplicaEvaluator.evaluator` or one bound from it (``evaluator.bound(p)``: same
tables, its own parameters), which is how :class:`.evaluator.BatchEvaluator` runs
several chunks of one size through one replica.  The buffers are shared by those calls:
one call at a time.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .gather import GatherMaps
from .replicate import ReplicatedProblem

#: the CUDA kernels index their tables, variables, rows and parameters with int 32
_INT32_MAX = 2**31 - 1


class ReplicaEvaluator:
    """Final.  C instances of ``problem`` through one replicated evaluator (module doc);
    ``single`` is the problem's :class:`~caspar_backend.evaluators.layout.Layout`,
    ``device`` 'cpu' or 'cuda' (resolved)."""

    def __init__(self, problem, size: int, device: str, single):
        rep = self.replicated = ReplicatedProblem(problem, size)
        self.size = size
        maps = GatherMaps.of(rep, single)
        if device == "cuda":
            _check_int32(rep)
            from ..evaluators.cuda_eval import CudaEvaluator as cls
        else:
            from ..evaluators.numpy_eval import NumpyEvaluator as cls
        self.evaluator = cls(rep, layout=rep.layout)
        xp = self.xp = self.evaluator.xp
        m1 = rep.rows_per_instance
        nnz_j, nnz_h = len(rep.layout.jac_rows), len(rep.layout.hess_rows)
        # replicated outputs; rows no instance writes (the objective row of a problem
        # without objective terms) keep these zeros, and so does the Jacobian's last
        # slot, the gradient's 0 (gather.GatherMaps.zero)
        self._G = xp.zeros((size, m1))
        self._J = xp.zeros(nnz_j + 1)
        self._J_out = self._J[:nnz_j]
        self._H = xp.zeros(nnz_h)
        self._lam = xp.zeros((size, m1))  # [obj_factor_b, Y_b] per instance
        self._grad_map = xp.asarray(maps.grad)
        self._jac_map = xp.asarray(maps.jac)
        self._hess_map = xp.asarray(maps.hess)

    def zeroth(self, ev, x, f_out, g_out) -> None:
        """f_out (C,), g_out (C, m) at x = X.reshape(-1) of X (C, n)."""
        ev.cons(x, out=self._G.reshape(-1))
        f_out[...] = self._G[:, 0]
        g_out[...] = self._G[:, 1:]

    def first(self, ev, x, grad_out, jac_out) -> None:
        """grad_out (C, n) dense, jac_out (C, nnz_j) in the single COO order."""
        ev.jac_values(x, out=self._J_out)
        self._take(self._J, self._grad_map, grad_out)
        self._take(self._J, self._jac_map, jac_out)

    def hess(self, ev, x, Y, obj_factor, out) -> None:
        """out (C, nnz_h) in the single COO order; Y (C, m), obj_factor (C,) or scalar."""
        self._lam[:, 0] = obj_factor
        self._lam[:, 1:] = Y
        ev.hess_values(x, self._lam.reshape(-1), 1.0, out=self._H)
        self._take(self._H, self._hess_map, out)

    def _take(self, src, idx, out) -> None:
        # NumPy buffers `out` in its default mode='raise'; the maps are in range
        if self.xp is np:
            np.take(src, idx, out=out, mode="clip")
        else:
            self.xp.take(src, idx, out=out)


def _check_int32(rep: ReplicatedProblem) -> None:
    """The CUDA kernels' int 32 indices (table entry ``slot*N + i``, variable, row,
    parameter) must not overflow for the replicated sizes."""
    worst = max([rep.n, rep.m, rep.n_params]
                + [max(g.var_table.size, g.param_table.size) for g in rep.constraint_groups])
    if worst > _INT32_MAX:
        raise ModelError(f"batch of {rep.batch_size} instances is too large for the CUDA "
                         f"evaluator's 32-bit indices ({worst} entries); split the batch")
