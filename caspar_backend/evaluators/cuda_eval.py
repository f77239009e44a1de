"""The GPU evaluator: generated CUDA kernels, one thread per group instance.

Same COO structures as every evaluator (:mod:`.layout`).  Everything lives in
device memory: index tables (int32, slot-major), data tables, parameter
vector, the objective-term and gradient-term buffers.  Inputs ``x``/``lam``
and outputs are CuPy float64 arrays; evaluations launch kernels only and
allocate nothing (``obj`` returns one host scalar, which the line search
needs anyway).  The objective gradient is a deterministic segment sum over a
precomputed CSR of the gradient terms (``kernels/segment_sum.cu``).
"""

from __future__ import annotations

import numpy as np

from ..codegen_cuda import generate_cuda_source, kernel_file
from ..cuda_compile import compile_module
from ..device import resolve_device
from ..structure_cache import StructureCache
from .base import Evaluator
from .layout import Layout, SegmentPlan

_THREADS = 256


def _blocks(n: int) -> int:
    return max(1, (n + _THREADS - 1) // _THREADS)


class _DeviceGroup:
    """A pattern group's kernels and device tables (internal)."""

    def __init__(self, cp, group, name):
        self.group, self.N = group, group.size
        self.source = generate_cuda_source(group.root, group.grad, group.hess, name)
        self.module, self.cached = compile_module(self.source, f"{name}.cu")
        self.k_val = self.module.get_function(f"{name}_val")
        self.k_jac = self.module.get_function(f"{name}_jac")
        self.k_hess = self.module.get_function(f"{name}_hess")
        self.vt = cp.asarray(group.var_table.astype(np.int32).reshape(-1))
        self.pt = cp.asarray(group.param_table.astype(np.int32).reshape(-1))
        self.dt = cp.asarray(np.ascontiguousarray(group.data_table, dtype=np.float64).reshape(-1))
        rows = group.rows if len(group.rows) else np.arange(self.N)
        self.dst = cp.asarray(rows.astype(np.int32))
        self.grid = (_blocks(self.N),)
        self.jac_base = self.hess_base = 0

    def args(self, x, p):
        return (x, p, self.vt, self.pt, self.dt, np.int32(self.N))


class CudaEvaluator(Evaluator):
    """Evaluator over CuPy arrays on the current CUDA device (final).

    ``layout``: ``Layout.of(problem)`` when the caller has it already (it must be
    equal; :mod:`caspar_backend.batch.replicate` tiles it from one instance's)."""

    device = "cuda"

    def __init__(self, problem, layout: Layout | None = None):
        resolve_device("cuda")
        import cupy as cp

        self.xp = cp
        self.problem = problem
        self.n, self.m, self.n_params = problem.n, problem.m, problem.n_params
        self._obj = [_DeviceGroup(cp, g, f"o{k}") for k, g in enumerate(problem.objective_groups)]
        self._con = [_DeviceGroup(cp, g, f"c{k}") for k, g in enumerate(problem.constraint_groups)]
        # a caller that knows the layout already (the batch's replicated problem tiles
        # it from one instance's) saves its sorts
        lay = Layout.of(problem) if layout is None else layout
        self.jac_rows, self.jac_cols = cp.asarray(lay.jac_rows), cp.asarray(lay.jac_cols)
        self.hess_rows, self.hess_cols = cp.asarray(lay.hess_rows), cp.asarray(lay.hess_cols)
        for b, jb, hb, d, tb in zip(self._con, lay.con_jac_base, lay.con_hess_base,
                                    lay.con_direct, lay.con_term_base):
            b.jac_base, b.hess_base, b.direct = jb, hb, d
            if not d:  # split rows: values go to the term buffer, summed into rows
                b.val_dst = cp.arange(tb, tb + b.N, dtype=cp.int32)
        self._term_buf = cp.zeros(max(len(lay.term_rows), 1))
        self._terms = self._plan(SegmentPlan.of(lay.term_rows)) if len(lay.term_rows) else None
        self._raw_jac = (cp.zeros(len(lay.raw_jac_rows)) if lay.jac_map is not None else None)
        self._jac_plan = (self._plan(SegmentPlan.of(lay.jac_map, len(lay.jac_rows)))
                          if lay.jac_map is not None else None)
        pos = 0
        for b, gb, hb in zip(self._obj, lay.obj_grad_base, lay.obj_hess_base):
            b.jac_base, b.hess_base = gb, hb
            b.dst = cp.arange(pos, pos + b.N, dtype=cp.int32)  # objective terms buffer
            pos += b.N
        self._obj_buf = cp.zeros(max(pos, 1))
        self._grad_buf = cp.zeros(max(len(lay.grad_idx), 1))
        self._segsum = cp.RawModule(code=kernel_file("segment_sum.cu")).get_function(
            "caspar_segment_sum")
        self._grad_plan = self._plan(SegmentPlan.of(lay.grad_idx, self.n))
        self._dummy_i = cp.zeros(1, dtype=cp.int32)
        self._dummy_d = cp.zeros(1)
        self.p = cp.zeros(max(self.n_params, 1))
        self.set_params(problem.p)
        # the solves' structures, shared with every evaluator bound() makes from this one
        self.structure_cache = StructureCache()

    def _plan(self, plan):
        cp = self.xp
        return (cp.asarray(plan.perm), cp.asarray(plan.ptr), cp.asarray(plan.dst), len(plan.dst))

    def _segment_sum(self, plan, v, out):
        perm, ptr, dst, k = plan
        self._segsum((_blocks(k),), (_THREADS,), (v, perm, ptr, dst, out, np.int32(k)))

    @property
    def compiled_from_cache(self) -> bool:
        return all(b.cached for b in self._obj + self._con)

    def cuda_source(self) -> str:
        return "\n".join(b.source for b in self._obj + self._con)

    # ------------------------------------------------------------------ params
    def set_params(self, p) -> None:
        v = np.asarray(p.get() if hasattr(p, "get") else p, dtype=float).reshape(-1)
        if v.size != self.n_params:
            from ..errors import ModelError

            raise ModelError(f"parameter vector has {v.size} entries, expected {self.n_params}")
        if v.size:
            self.p[: v.size] = self.xp.asarray(v)

    def bound(self, p) -> "CudaEvaluator":
        """A new evaluator for parameters ``p`` sharing the kernels, device tables and
        structures (read-only); the parameter vector and the work buffers (objective
        terms, gradient terms, split-row terms, raw Jacobian) are its own, so evaluators
        from ``bound`` may run in different threads at once (see
        :meth:`NumpyEvaluator.bound <caspar_backend.evaluators.numpy_eval.NumpyEvaluator.bound>`)."""
        import copy

        cp = self.xp
        ev = copy.copy(self)
        ev._obj_buf = cp.zeros_like(self._obj_buf)
        ev._grad_buf = cp.zeros_like(self._grad_buf)
        ev._term_buf = cp.zeros_like(self._term_buf)
        ev._raw_jac = None if self._raw_jac is None else cp.zeros_like(self._raw_jac)
        ev.p = cp.zeros_like(self.p)
        ev.set_params(p)
        return ev

    def _bind(self, p):
        if p is not None:
            self.set_params(p)

    def _dev(self, a):
        return self.xp.ascontiguousarray(self.xp.asarray(a, dtype=self.xp.float64))

    # ------------------------------------------------------------- evaluation
    def obj(self, x, p=None) -> float:
        self._bind(p)
        x = self._dev(x)
        for b in self._obj:
            b.k_val(b.grid, (_THREADS,), b.args(x, self.p) + (self._obj_buf, b.dst))
        return float(self._obj_buf.sum())

    def grad(self, x, out=None, p=None):
        self._bind(p)
        x = self._dev(x)
        for b in self._obj:
            b.k_jac(b.grid, (_THREADS,), b.args(x, self.p) + (self._grad_buf, np.int64(b.jac_base)))
        if out is None:
            out = self.xp.empty(self.n)
        self._segment_sum(self._grad_plan, self._grad_buf, out)
        return out

    def cons(self, x, out=None, p=None):
        self._bind(p)
        x = self._dev(x)
        if out is None:
            out = self.xp.empty(self.m)
        for b in self._con:
            if b.direct:
                b.k_val(b.grid, (_THREADS,), b.args(x, self.p) + (out, b.dst))
            else:
                b.k_val(b.grid, (_THREADS,), b.args(x, self.p) + (self._term_buf, b.val_dst))
        if self._terms is not None:
            self._segment_sum(self._terms, self._term_buf, out)
        return out

    def jac_values(self, x, out=None, p=None):
        self._bind(p)
        x = self._dev(x)
        if out is None:
            out = self.xp.empty(self.nnz_jac)
        raw = out if self._raw_jac is None else self._raw_jac
        for b in self._con:
            b.k_jac(b.grid, (_THREADS,), b.args(x, self.p) + (raw, np.int64(b.jac_base)))
        if self._jac_plan is not None:
            self._segment_sum(self._jac_plan, raw, out)
        return out

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        self._bind(p)
        x = self._dev(x)
        lam = self._dev(lam) if self.m else self._dummy_d
        if out is None:
            out = self.xp.empty(self.nnz_hess)
        for b in self._obj:
            b.k_hess(b.grid, (_THREADS,), b.args(x, self.p) + (
                out, np.int64(b.hess_base), self._dummy_d, self._dummy_i,
                np.float64(obj_factor), np.int32(0)))
        for b in self._con:
            b.k_hess(b.grid, (_THREADS,), b.args(x, self.p) + (
                out, np.int64(b.hess_base), lam, b.dst, np.float64(1.0), np.int32(1)))
        return out
