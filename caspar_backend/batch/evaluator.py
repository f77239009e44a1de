"""Evaluation of B instances of one problem at once, in the single problem's layouts.

For instances b = 0..B-1 of a compiled problem (n variables, m constraints, q
parameters), each with its own parameters p_b, a :class:`BatchEvaluator` computes, with
every array of its module ``xp`` (numpy, or cupy for ``device='cuda'``), float64, C order:

    zeroth(X, f_out, g_out)        f_out[b] = f(x_b; p_b),  g_out[b] = g(x_b; p_b)
    first(X, grad_out, jac_out)    grad_out[b] = grad f(x_b; p_b)    (dense)
                                   jac_out[b, k] = dg_r/dx_c at (x_b; p_b), (r, c) =
                                   (jac_rows[k], jac_cols[k]) the single problem's COO
    hess(X, Y, obj_factor, out)    out[b, k] = entry k of the lower-triangle COO
                                   (hess_rows, hess_cols) of
                                   obj_factor[b] grad^2 f + sum_i Y[b, i] grad^2 g_i

with X (B, n), f_out (B,), g_out (B, m), grad_out (B, n), jac_out (B, nnz_j), Y (B, m),
obj_factor (B,) or a scalar, out (B, nnz_h).  The COO structures are the single
problem's (``problem.evaluator('cpu').jac_rows`` etc., host int64), duplicates of the
Hessian included: entry k of instance b holds what the single evaluator writes at k, so
whatever is built once for the single problem's structures (the KKT assembly map)
serves every instance.

How: one evaluator of the replicated problem (:mod:`.replicate`), so each call runs one
vectorized NumPy sequence / one kernel launch per pattern group for all B instances,
then one ``take`` per output into the caller's array through maps computed once
(:mod:`.gather`).  Calls allocate no (B, k) arrays of their own beyond what the
replicated evaluator's generated code allocates on the CPU.

Agreement with the single evaluator (``problem.evaluator('cpu', p=p_b)``): the same
formulas on the same operands, so the values are equal bit for bit except where a sum
runs in another order -- the objective value f_b when f has several terms (single: a
pairwise ``np.sum`` per group, then groups in order; here: the terms summed in order by
the split-row machinery), about 1e-16 relative.
"""

from __future__ import annotations

import numpy as np

from ..device import resolve_device
from ..errors import ModelError
from ..evaluators.layout import Layout
from .gather import GatherMaps
from .replicate import ReplicatedProblem

#: the CUDA kernels index their tables, variables and rows with int 32
_INT32_MAX = 2**31 - 1


class BatchEvaluator:
    """Final.  B instances of ``problem`` (a :class:`~caspar_backend.problem.Problem`)
    evaluated at once (module doc); parameters start as the problem's current ``p``
    in every instance (:meth:`set_params` binds others).

    Attributes: ``xp``, ``device``, ``n``, ``m``, ``n_params`` (one instance's sizes),
    ``batch_size``, ``jac_rows``/``jac_cols`` and ``hess_rows``/``hess_cols`` (the single
    problem's COO, host int64), ``replicated`` (the :class:`.replicate.ReplicatedProblem`)
    and ``evaluator`` (its evaluator)."""

    def __init__(self, problem, batch_size: int, device: str = "cpu"):
        self.device = resolve_device(device)
        self.problem = problem
        rep = self.replicated = ReplicatedProblem(problem, batch_size)
        self.batch_size = B = rep.batch_size
        self.n, self.m, self.n_params = problem.n, problem.m, problem.n_params
        single = Layout.of(problem)
        self.jac_rows, self.jac_cols = single.jac_rows, single.jac_cols
        self.hess_rows, self.hess_cols = single.hess_rows, single.hess_cols
        maps = GatherMaps.of(rep, single)
        if self.device == "cuda":
            _check_int32(rep)
            from ..evaluators.cuda_eval import CudaEvaluator as cls
        else:
            from ..evaluators.numpy_eval import NumpyEvaluator as cls
        self.evaluator = ev = cls(rep, layout=rep.layout)
        xp = self.xp = ev.xp
        m1 = rep.rows_per_instance
        nnz_j, nnz_h = len(rep.layout.jac_rows), len(rep.layout.hess_rows)
        # replicated outputs; rows no instance writes (the objective row of a problem
        # without objective terms) keep these zeros, and so does the Jacobian's last
        # slot, the gradient's 0 (gather.GatherMaps.zero)
        self._G = xp.zeros((B, m1))
        self._J = xp.zeros(nnz_j + 1)
        self._J_out = self._J[:nnz_j]
        self._H = xp.zeros(nnz_h)
        self._lam = xp.zeros((B, m1))  # [obj_factor_b, Y_b] per instance
        self._grad_map = xp.asarray(maps.grad)
        self._jac_map = xp.asarray(maps.jac)
        self._hess_map = xp.asarray(maps.hess)
        self._p = np.tile(np.asarray(problem.p, dtype=np.float64).reshape(-1), (B, 1))

    # ------------------------------------------------------------------ params
    def set_params(self, P) -> None:
        """Bind instance b's parameters to ``P[b]``: P (B, n_params), host or xp (a
        vector of length n_params is every instance's)."""
        v = np.asarray(P.get() if hasattr(P, "get") else P, dtype=np.float64)
        try:
            v = np.broadcast_to(v, (self.batch_size, self.n_params))
        except ValueError:
            raise ModelError(f"batch parameters have shape {v.shape}, expected "
                             f"({self.batch_size}, {self.n_params})") from None
        self._p = v.copy()
        self.evaluator.set_params(self._p.reshape(-1))

    def parameters(self) -> np.ndarray:
        """The bound parameters, a new host float64 (B, n_params) array."""
        return self._p.copy()

    # ------------------------------------------------------------- evaluation
    def _x(self, X):
        """X (B, n) as the replicated problem's x_all (a view when X is C-ordered)."""
        if X.shape != (self.batch_size, self.n):
            raise ModelError(f"X has shape {X.shape}, expected ({self.batch_size}, {self.n})")
        return X.reshape(-1)

    def zeroth(self, X, f_out, g_out) -> None:
        """``f_out[b] = f(x_b)``, ``g_out[b] = g(x_b)``: f_out (B,), g_out (B, m)."""
        self.evaluator.cons(self._x(X), out=self._G.reshape(-1))
        f_out[...] = self._G[:, 0]
        g_out[...] = self._G[:, 1:]

    def first(self, X, grad_out, jac_out) -> None:
        """``grad_out[b]`` = the dense gradient of f at x_b, (B, n); ``jac_out[b]`` =
        the Jacobian values at x_b in the single COO order, (B, nnz_j)."""
        self.evaluator.jac_values(self._x(X), out=self._J_out)
        self._take(self._J, self._grad_map, grad_out)
        self._take(self._J, self._jac_map, jac_out)

    def hess(self, X, Y, obj_factor, out) -> None:
        """``out[b]`` = the Lagrangian Hessian values of instance b in the single COO
        order (duplicates as written), (B, nnz_h); Y (B, m), obj_factor (B,) or scalar."""
        self._lam[:, 0] = obj_factor
        self._lam[:, 1:] = Y
        self.evaluator.hess_values(self._x(X), self._lam.reshape(-1), 1.0, out=self._H)
        self._take(self._H, self._hess_map, out)

    def _take(self, src, idx, out) -> None:
        # NumPy buffers `out` in its default mode='raise'; the maps are in range
        if self.xp is np:
            np.take(src, idx, out=out, mode="clip")
        else:
            self.xp.take(src, idx, out=out)

    # ------------------------------------------------------------- diagnostics
    def describe_nonfinite(self, x, b: int) -> str:
        """What the single evaluator says of instance b at ``x`` (its objective or
        constraint whose value or derivatives are not finite), with instance b's
        parameters; the replicated evaluator's own rows would be the replicated ones."""
        x = np.asarray(x.get() if hasattr(x, "get") else x, dtype=np.float64)
        return self.problem.evaluator("cpu", p=self._p[b]).describe_nonfinite(x)


def _check_int32(rep: ReplicatedProblem) -> None:
    """The CUDA kernels' int 32 indices (table entry ``slot*N + i``, variable, row,
    parameter) must not overflow for the replicated sizes."""
    worst = max([rep.n, rep.m, rep.n_params]
                + [max(g.var_table.size, g.param_table.size) for g in rep.constraint_groups])
    if worst > _INT32_MAX:
        raise ModelError(f"batch of {rep.batch_size} instances is too large for the CUDA "
                         f"evaluator's 32-bit indices ({worst} entries); split the batch")
