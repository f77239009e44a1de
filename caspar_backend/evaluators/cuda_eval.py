"""The GPU evaluator: generated CUDA kernels, one thread per group instance.

The problem's templates are one generated module (:mod:`caspar_backend.codegen_cuda`)
and each evaluation kind is one launch over all groups (a group table per kind).  Same COO structures as every evaluator (:mod:`.layout`).  Everything lives in
device memory: index tables (int32, slot-major), data tables, parameter
vector, the objective-term and gradient-term buffers.  Inputs ``x``/``lam``
and outputs are CuPy float64 arrays; evaluations launch kernels only and
allocate nothing (``obj`` returns one host scalar, which the line search
needs anyway).  The objective gradient is a deterministic segment sum over a
precomputed CSR of the gradient terms (``kernels/segment_sum.cu``).
"""

from __future__ import annotations

import numpy as np

from ..arrays import fused
from ..codegen_cuda import generate_cuda_source, kernel_file
from ..cuda_compile import compile_module
from ..device import resolve_device
from ..structure_cache import StructureCache
from .base import Evaluator
from .group_table import blocks as _group_blocks
from .group_table import group_table
from .layout import Layout, SegmentPlan

_THREADS = 256


def _upload(cp, tables: list, dtype) -> list:
    """``tables`` (host arrays, C order) on the device as flat ``dtype`` arrays: one
    concatenation, conversion and copy for all of them (a copy per table costs more
    than the bytes), views of one device buffer.  Converted on the host: in a new
    process CuPy's conversion kernel is first run through NVRTC's preprocessor (~20 ms
    on the H200 host even with its kernel cache warm), more than the host's pass."""
    flat = [np.ascontiguousarray(t).reshape(-1) for t in tables]
    if not flat:
        return []
    buf = cp.asarray(np.concatenate(flat).astype(dtype, copy=False))
    cuts = np.cumsum([0] + [f.size for f in flat])
    return [buf[a:b] for a, b in zip(cuts[:-1], cuts[1:])]


class _DeviceGroup:
    """A pattern group's device tables (internal): ``vt``, ``pt``, ``dst`` int32,
    ``dt`` float64."""

    def __init__(self, group, vt, pt, dt, dst):
        self.group, self.N = group, group.size
        self.vt, self.pt, self.dt, self.dst = vt, pt, dt, dst
        self.val_dst = self.dst
        self.jac_base = self.hess_base = 0
        self.direct = True

    @staticmethod
    def upload(cp, groups: list) -> list:
        """The :class:`_DeviceGroup` of each of ``groups``, their tables uploaded together."""
        ints = []
        for g in groups:
            ints += [g.var_table, g.param_table, g.rows if len(g.rows) else np.arange(g.size)]
        ints = _upload(cp, ints, cp.int32)
        floats = _upload(cp, [np.asarray(g.data_table, dtype=np.float64) for g in groups],
                         cp.float64)
        return [_DeviceGroup(g, *ints[3 * k:3 * k + 2], floats[k], ints[3 * k + 2])
                for k, g in enumerate(groups)]

    def entry(self, dst):
        return dict(vt=self.vt, pt=self.pt, dt=self.dt, dst=dst, N=self.N,
                    jac_base=self.jac_base, hess_base=self.hess_base, direct=int(self.direct))


class _Dispatch:
    """One dispatch kernel of the problem module over one group table (internal)."""

    def __init__(self, cp, module, kernel, entries):
        self.name = kernel
        self.kernel = module.get_function(kernel)
        rec, self.n_blocks = group_table(entries, _THREADS)
        self.ng = np.int32(len(rec))
        self.table = cp.asarray(rec.view(np.uint8))

    def __call__(self, x, p, *args):
        if self.ng:
            self.kernel((self.n_blocks,), (_THREADS,), (x, p, self.table, self.ng) + args)


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
        devs = _DeviceGroup.upload(cp, problem.objective_groups + problem.constraint_groups)
        self._obj, self._con = devs[:len(problem.objective_groups)], \
            devs[len(problem.objective_groups):]
        # every template of the problem in one module: one NVRTC call (cached on disk)
        self.source = generate_cuda_source(problem.objective_groups, problem.constraint_groups)
        self.module, self._cached = compile_module(self.source, "caspar_problem.cu")
        # a caller that knows the layout already (the batch's replicated problem tiles
        # it from one instance's) saves its sorts
        lay = Layout.of(problem, host_jacobian=False) if layout is None else layout
        if lay.jac_rows is None:
            self.jac_rows, self.jac_cols = self._jacobian_pattern()
        else:
            self.jac_rows, self.jac_cols = cp.asarray(lay.jac_rows), cp.asarray(lay.jac_cols)
        self.hess_rows, self.hess_cols = cp.asarray(lay.hess_rows), cp.asarray(lay.hess_cols)
        for b, jb, hb, d, tb in zip(self._con, lay.con_jac_base, lay.con_hess_base,
                                    lay.con_direct, lay.con_term_base):
            b.jac_base, b.hess_base, b.direct = jb, hb, d
            if not d:  # split rows: values go to the term buffer, summed into rows
                b.val_dst = cp.asarray(np.arange(tb, tb + b.N, dtype=np.int32))
                b.direct = False
        self._term_buf = cp.zeros(max(len(lay.term_rows), 1))
        # (the segment sums' plans sorted on the host: on the device each sort, unique
        # and count is a CuPy kernel of its own to load in every process, which costs
        # more than the host's sorts at 10^6 entries)
        self._terms = self._plan(SegmentPlan.of(lay.term_rows)) if len(lay.term_rows) else None
        self._raw_jac = (cp.zeros(len(lay.raw_jac_rows)) if lay.jac_map is not None else None)
        self._jac_plan = None
        if lay.jac_map is not None:
            self._jac_plan = self._plan(lay.jac_plan if lay.jac_plan is not None
                                        else SegmentPlan.of(lay.jac_map, len(lay.jac_rows)))
        pos = 0
        for b, gb, hb in zip(self._obj, lay.obj_grad_base, lay.obj_hess_base):
            b.jac_base, b.hess_base = gb, hb
            # the objective terms buffer (made on the host: no CuPy kernel to load)
            b.dst = cp.asarray(np.arange(pos, pos + b.N, dtype=np.int32))
            pos += b.N
        self._obj_buf = cp.zeros(max(pos, 1))
        # one launch per evaluation kind (group tables: kernels/caspar_groups.cuh)
        mod = self.module
        self._obj_val = _Dispatch(cp, mod, "caspar_obj_val", [b.entry(b.dst) for b in self._obj])
        self._obj_jac = _Dispatch(cp, mod, "caspar_obj_jac", [b.entry(b.dst) for b in self._obj])
        self._con_val = _Dispatch(cp, mod, "caspar_con_val",
                                  [b.entry(b.val_dst) for b in self._con])
        self._con_jac = _Dispatch(cp, mod, "caspar_con_jac", [b.entry(b.dst) for b in self._con])
        self._hess = _Dispatch(cp, mod, "caspar_hess",
                               [b.entry(b.dst) for b in self._obj + self._con])
        self._grad_buf = cp.zeros(max(len(lay.grad_idx), 1))
        # through caspar's cubin cache like the problem module: CuPy's own cache would
        # first compile an empty file per process to learn NVRTC's version
        self._segsum = compile_module(kernel_file("segment_sum.cu"), "segment_sum.cu")[0] \
            .get_function("caspar_segment_sum")
        self._grad_plan = self._plan(SegmentPlan.of(lay.grad_idx, self.n))
        self._dummy_d = cp.zeros(1)
        self.p = cp.zeros(max(self.n_params, 1))
        self.set_params(problem.p)
        # the solves' structures, shared with every evaluator bound() makes from this one
        self.structure_cache = StructureCache()

    def _jacobian_pattern(self):
        """``(jac_rows, jac_cols)`` int64 on the device: each constraint group's
        ``jac_structure()`` (entry e of instance i at ``e N + i``: row ``rows[i]``, column
        ``var_table[slot_e, i]``) stacked in group order, built from the uploaded tables
        -- the layout's arrays when every group owns its rows (Layout.of's
        ``host_jacobian=False``)."""
        cp = self.xp
        rows, cols = [], []
        for b in self._con:
            slots = [s for s, _ in b.group.grad]
            if not slots or not b.N:
                continue
            vt = b.vt.reshape(-1, b.N)
            cols.append(vt[cp.asarray(slots)].reshape(-1).astype(cp.int64))
            rows.append(cp.tile(b.dst, len(slots)).astype(cp.int64))
        if not rows:
            z = cp.zeros(0, dtype=cp.int64)
            return z, z.copy()
        return cp.concatenate(rows), cp.concatenate(cols)

    def _plan(self, plan):
        cp = self.xp
        return (cp.asarray(plan.perm), cp.asarray(plan.ptr), cp.asarray(plan.dst), len(plan.dst))

    def _segment_sum(self, plan, v, out):
        perm, ptr, dst, k = plan
        self._segsum((_group_blocks(k, _THREADS),), (_THREADS,),
                     (v, perm, ptr, dst, out, np.int32(k)))

    @property
    def compiled_from_cache(self) -> bool:
        return self._cached

    def kernel_attributes(self) -> list:
        """Per dispatch kernel: name, registers per thread, static shared, local and
        constant memory (bytes) and the largest block it can run (CUDA's function
        attributes, as CuPy reads them)."""
        out = []
        for d in (self._obj_val, self._obj_jac, self._con_val, self._con_jac, self._hess):
            k = d.kernel
            out.append(dict(name=d.name, registers=int(k.num_regs),
                            shared_bytes=int(k.shared_size_bytes),
                            local_bytes=int(k.local_size_bytes),
                            const_bytes=int(k.const_size_bytes),
                            max_threads_per_block=int(k.max_threads_per_block)))
        return out

    def cuda_source(self) -> str:
        return self.source

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
        return float(self.obj_unread(x, p))

    def obj_unread(self, x, p=None):
        """The objective as a 0-d device array, not read back (the solver reads it with
        the other values of a trial point: one host read)."""
        self._bind(p)
        x = self._dev(x)
        self._obj_val(x, self.p, self._obj_buf)
        # a fused reduction's column: ~12 us of host time where CuPy's sum takes ~24
        return fused.call(self.xp, "total", self._obj_buf)[0]

    def grad(self, x, out=None, p=None):
        self._bind(p)
        x = self._dev(x)
        self._obj_jac(x, self.p, self._grad_buf)
        if out is None:
            out = self.xp.empty(self.n)
        self._segment_sum(self._grad_plan, self._grad_buf, out)
        return out

    def cons(self, x, out=None, p=None):
        self._bind(p)
        x = self._dev(x)
        if out is None:
            out = self.xp.empty(self.m)
        self._con_val(x, self.p, out, self._term_buf)
        if self._terms is not None:
            self._segment_sum(self._terms, self._term_buf, out)
        return out

    def jac_values(self, x, out=None, p=None):
        self._bind(p)
        x = self._dev(x)
        if out is None:
            out = self.xp.empty(self.nnz_jac)
        raw = out if self._raw_jac is None else self._raw_jac
        self._con_jac(x, self.p, raw)
        if self._jac_plan is not None:
            self._segment_sum(self._jac_plan, raw, out)
        return out

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        self._bind(p)
        x = self._dev(x)
        lam = self._dev(lam) if self.m else self._dummy_d
        if out is None:
            out = self.xp.empty(self.nnz_hess)
        self._hess(x, self.p, out, lam, np.float64(obj_factor))
        return out
