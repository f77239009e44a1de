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

How: the evaluator of a replicated problem (:mod:`.replicate`, :mod:`.replica`) runs one
vectorized NumPy sequence / one kernel launch per pattern group for many instances at
once, then one ``take`` per output into the caller's array through maps computed once
(:mod:`.gather`).  On the GPU that is the whole batch in one replica.  On the CPU the
batch is cut into chunks of ``chunk_size`` consecutive instances, run one after the
other through one replica of that size (and one for the remainder), each chunk with
its own parameters (an evaluator bound from the replica's): NumPy streams every
intermediate array through memory, and arrays of a few 10^4 entries stay in cache where
arrays of the whole batch do not.  Measured (shared 2-core machine): the IK problem at
B = 10^5 evaluates 1.5 to 2.5 times as fast in chunks of 8192 to 32768 instances as in
one; a 10^4-variable control problem at B = 10^3 twice as fast in chunks of 6, with a
quarter of the memory and a 15th of the build time (:data:`CPU_CHUNK_ENTRIES`).  The
Python loop runs over chunks, each of at least that much work in its widest group (or
one instance when one instance is more).  Calls allocate no (B, k) arrays of their own
beyond what the replicated evaluator's generated code allocates on the CPU.

Agreement with the single evaluator (``problem.evaluator('cpu', p=p_b)``): the same
formulas on the same operands, so the values are equal bit for bit except where a sum
runs in another order -- the objective value f_b when f has several terms (single: a
pairwise ``np.sum`` per group, then groups in order; here: the terms summed in order by
the split-row machinery), 1e-16 to 1e-15 relative in the tests (it grows with the
number of terms).
"""

from __future__ import annotations

import numpy as np

from ..device import resolve_device
from ..errors import ModelError
from ..evaluators.layout import Layout
from .replica import ReplicaEvaluator

#: the CPU's chunk: as many instances as make the largest pattern group's arrays this
#: long (its instances times the chunk size), at least one instance.  Measured (2 cores,
#: NumPy 2.4): the IK problem (groups of 1 instance) is fastest at chunks of 8192 to
#: 32768 instances, a 10^4-variable control problem (groups of 5000) at chunks of 4 to 16
CPU_CHUNK_ENTRIES = 2**15


def default_chunk(problem) -> int:
    """Instances per CPU chunk for ``problem`` (:data:`CPU_CHUNK_ENTRIES`)."""
    widest = max((g.size for g in problem.objective_groups + problem.constraint_groups),
                 default=1)
    return max(1, CPU_CHUNK_ENTRIES // widest)


class BatchEvaluator:
    """Final.  B instances of ``problem`` (a :class:`~caspar_backend.problem.Problem`)
    evaluated at once (module doc); parameters start as the problem's current ``p``
    in every instance (:meth:`set_params` binds others).  ``chunk_size``: instances per
    chunk on the CPU (default :func:`default_chunk`; the GPU runs the whole batch as
    one).  One call at a time: the work buffers are the evaluator's.

    Attributes: ``xp``, ``device``, ``n``, ``m``, ``n_params`` (one instance's sizes),
    ``batch_size``, ``chunk_size``, ``jac_rows``/``jac_cols`` and
    ``hess_rows``/``hess_cols`` (the single problem's COO, host int64)."""

    def __init__(self, problem, batch_size: int, device: str = "cpu", chunk_size=None):
        self.device = resolve_device(device)
        self.problem = problem
        B = self.batch_size = int(batch_size)
        if B < 1:
            raise ModelError(f"batch size must be at least 1, got {batch_size}")
        C = B if self.device == "cuda" else min(B, int(chunk_size or default_chunk(problem)))
        if C < 1:
            raise ModelError(f"chunk size must be at least 1, got {chunk_size}")
        self.chunk_size = C
        self.n, self.m, self.n_params = problem.n, problem.m, problem.n_params
        single = Layout.of(problem)
        self.jac_rows, self.jac_cols = single.jac_rows, single.jac_cols
        self.hess_rows, self.hess_cols = single.hess_rows, single.hess_cols
        # chunks: [c0, c0 + size) through the replica of that size (C, and the remainder)
        replicas = {C: ReplicaEvaluator(problem, C, self.device, single)}
        if B % C:
            replicas[B % C] = ReplicaEvaluator(problem, B % C, self.device, single)
        self.xp = replicas[C].xp
        self._p = np.tile(np.asarray(problem.p, dtype=np.float64).reshape(-1), (B, 1))
        starts = range(0, B, C)
        sizes = [min(C, B - c0) for c0 in starts]
        uses = {size: sizes.count(size) for size in replicas}
        # (instances, replica, evaluator) per chunk: a replica's own evaluator when one
        # chunk uses it, else one bound from it per chunk (its own parameters)
        self._chunks = []
        for c0, size in zip(starts, sizes):
            rp, s = replicas[size], slice(c0, c0 + size)
            ev = (rp.evaluator if uses[size] == 1
                  else rp.evaluator.bound(self._p[s].reshape(-1)))
            self._chunks.append((s, rp, ev))
        self.set_params(self._p)

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
        for s, _, ev in self._chunks:
            ev.set_params(self._p[s].reshape(-1))

    def parameters(self) -> np.ndarray:
        """The bound parameters, a new host float64 (B, n_params) array."""
        return self._p.copy()

    # ------------------------------------------------------------- evaluation
    def _check(self, X) -> None:
        if X.shape != (self.batch_size, self.n):
            raise ModelError(f"X has shape {X.shape}, expected ({self.batch_size}, {self.n})")

    def zeroth(self, X, f_out, g_out) -> None:
        """``f_out[b] = f(x_b)``, ``g_out[b] = g(x_b)``: f_out (B,), g_out (B, m)."""
        self._check(X)
        for s, rp, ev in self._chunks:
            rp.zeroth(ev, X[s].reshape(-1), f_out[s], g_out[s])

    def first(self, X, grad_out, jac_out) -> None:
        """``grad_out[b]`` = the dense gradient of f at x_b, (B, n); ``jac_out[b]`` =
        the Jacobian values at x_b in the single COO order, (B, nnz_j)."""
        self._check(X)
        for s, rp, ev in self._chunks:
            rp.first(ev, X[s].reshape(-1), grad_out[s], jac_out[s])

    def hess(self, X, Y, obj_factor, out) -> None:
        """``out[b]`` = the Lagrangian Hessian values of instance b in the single COO
        order (duplicates as written), (B, nnz_h); Y (B, m), obj_factor (B,) or scalar."""
        self._check(X)
        scalar = np.ndim(obj_factor) == 0
        for s, rp, ev in self._chunks:
            rp.hess(ev, X[s].reshape(-1), Y[s], obj_factor if scalar else obj_factor[s],
                    out[s])

    # ------------------------------------------------------------- diagnostics
    def describe_nonfinite(self, x, b: int) -> str:
        """What the single evaluator says of instance b at ``x`` (its objective or
        constraint whose value or derivatives are not finite), with instance b's
        parameters; the replicated evaluator's own rows would be the replicated ones."""
        x = np.asarray(x.get() if hasattr(x, "get") else x, dtype=np.float64)
        return self.problem.evaluator("cpu", p=self._p[b]).describe_nonfinite(x)
