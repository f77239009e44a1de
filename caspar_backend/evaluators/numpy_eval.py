"""The CPU evaluator: generated NumPy code, vectorized over each pattern group.

Structures are computed once at construction (see
:mod:`caspar_backend.patterns` for the COO layout):

* Jacobian: COO ``(jac_rows, jac_cols)``, int64, 0-based, no duplicates,
  constraint groups in order, entry e of instance i of a group at
  ``offset + e*N + i``;
* Lagrangian Hessian: lower-triangle COO ``(hess_rows, hess_cols)``, int64,
  0-based, objective groups first, then constraint groups; duplicates are
  summed by whoever assembles it;
* objective gradient: per-term values in the same layout, summed into the
  dense gradient by one ``np.bincount`` over a precomputed index.
"""

from __future__ import annotations

import copy

import numpy as np

from ..arrays.segments import distinct
from ..codegen_numpy import compile_fused, compile_group
from ..expr import to_str
from ..structure_cache import StructureCache
from .base import Evaluator
from .layout import Layout


class _Bound:
    """A pattern group with its compiled functions and offsets (internal)."""

    __slots__ = ("group", "fn", "N", "rows", "rows_slice", "jac_base", "hess_base", "P",
                 "direct", "term_base")

    def __init__(self, group, name):
        self.group = group
        self.fn = compile_group(group.root, group.grad, group.hess, name)
        self.N = group.size
        self.rows = group.rows
        r = group.rows
        contiguous = len(r) > 0 and r[-1] - r[0] == len(r) - 1 and np.all(np.diff(r) == 1)
        self.rows_slice = slice(int(r[0]), int(r[-1]) + 1) if contiguous else None
        self.P = np.zeros((group.param_table.shape[0], self.N))

    def with_params(self, p) -> "_Bound":
        """A copy sharing the group and its compiled functions, with ``P =
        p[param_table]`` of its own."""
        b = copy.copy(self)
        b.P = p[self.group.param_table]
        return b


class NumpyEvaluator(Evaluator):
    """Evaluator over NumPy arrays (final).

    ``layout``: ``Layout.of(problem)`` when the caller has it already (it must be
    equal; :mod:`caspar_backend.batch.replicate` tiles it from one instance's)."""

    xp = np
    device = "cpu"

    def __init__(self, problem, layout: Layout | None = None):
        self.problem = problem
        self.n, self.m, self.n_params = problem.n, problem.m, problem.n_params
        self._obj = [_Bound(g, f"objective group {k}") for k, g in
                     enumerate(problem.objective_groups)]
        self._con = [_Bound(g, f"constraint group {k}") for k, g in
                     enumerate(problem.constraint_groups)]
        # a caller that knows the layout already (the batch's replicated problem tiles
        # it from one instance's) saves its sorts
        lay = Layout.of(problem) if layout is None else layout
        self.jac_rows, self.jac_cols = lay.jac_rows, lay.jac_cols
        self.hess_rows, self.hess_cols = lay.hess_rows, lay.hess_cols
        self._grad_idx = lay.grad_idx
        self._grad_buf = np.zeros(len(lay.grad_idx))
        # split rows: per-instance values summed into rows; duplicate Jacobian pairs summed
        self._term_rows = lay.term_rows
        self._term_buf = np.zeros(len(lay.term_rows))
        self._acc_rows = distinct(lay.term_rows)
        self._jac_map = lay.jac_map
        self._raw_jac = np.zeros(len(lay.raw_jac_rows)) if lay.jac_map is not None else None
        for b, jb, hb, d, tb in zip(self._con, lay.con_jac_base, lay.con_hess_base,
                                    lay.con_direct, lay.con_term_base):
            b.jac_base, b.hess_base, b.direct, b.term_base = jb, hb, d, tb
        for b, gb, hb in zip(self._obj, lay.obj_grad_base, lay.obj_hess_base):
            b.jac_base, b.hess_base = gb, hb
        # constraint groups of one graph over equal tables (the components of a vector
        # template block, e.g. a residual's x and y) are evaluated by one fused function
        self._con_fused = _fused_sets(self._con)
        self.set_params(problem.p)
        # the solves' structures, shared with every evaluator bound() makes from this one
        self.structure_cache = StructureCache()

    # ------------------------------------------------------------------ params
    def set_params(self, p) -> None:
        p = self._checked(p)
        self.p = p.copy()
        for b in self._obj + self._con:
            b.P = p[b.group.param_table]

    def _checked(self, p) -> np.ndarray:
        p = np.asarray(p, dtype=float).reshape(-1)
        if p.size != self.n_params:
            from ..errors import ModelError

            raise ModelError(f"parameter vector has {p.size} entries, expected {self.n_params}")
        return p

    def bound(self, p) -> "NumpyEvaluator":
        """A new evaluator for parameters ``p``: the compiled functions, tables and
        structures are shared (read-only), the mutable evaluation state is its own --
        the parameter vector, each group's gathered ``P`` and the work buffers (gradient
        terms, split-row terms, raw Jacobian).  Evaluators from ``bound`` may run in
        different threads at once; one evaluator is never safe to share between
        threads (its buffers are written by every call)."""
        p = self._checked(p)
        ev = copy.copy(self)
        ev.p = p.copy()
        ev._obj = [b.with_params(p) for b in self._obj]
        ev._con = [b.with_params(p) for b in self._con]
        ev._grad_buf = np.zeros_like(self._grad_buf)
        ev._term_buf = np.zeros_like(self._term_buf)
        ev._raw_jac = None if self._raw_jac is None else np.zeros_like(self._raw_jac)
        return ev

    def _bind(self, p):
        if p is not None:
            self.set_params(p)

    @staticmethod
    def _x(x, b):
        return x[b.group.var_table]

    # ------------------------------------------------------------- evaluation
    def obj(self, x, p=None) -> float:
        self._bind(p)
        x = np.asarray(x, dtype=float)
        total = 0.0
        with np.errstate(all="ignore"):
            for b in self._obj:
                total += float(np.sum(b.fn.val(self._x(x, b), b.P, b.group.data_table, b.N)))
        return total

    def grad(self, x, out=None, p=None):
        self._bind(p)
        x = np.asarray(x, dtype=float)
        buf = self._grad_buf
        with np.errstate(all="ignore"):
            for b in self._obj:
                b.fn.jac(self._x(x, b), b.P, b.group.data_table, buf, b.jac_base, b.N)
        g = np.bincount(self._grad_idx, weights=buf, minlength=self.n)
        if out is None:
            return g
        out[:] = g
        return out

    def cons(self, x, out=None, p=None):
        self._bind(p)
        x = np.asarray(x, dtype=float)
        if out is None:
            out = np.empty(self.m)
        with np.errstate(all="ignore"):
            for idx, fused in self._con_fused:
                b = self._con[idx[0]]
                if fused is None:
                    self._put_values(b, b.fn.val(self._x(x, b), b.P, b.group.data_table, b.N),
                                     out)
                    continue
                vals = fused.val(self._x(x, b), b.P, b.group.data_table, b.N)
                for i, v in zip(idx, vals):
                    self._put_values(self._con[i], v, out)
        if len(self._acc_rows):
            out[self._acc_rows] = np.bincount(self._term_rows, weights=self._term_buf,
                                              minlength=self.m)[self._acc_rows]
        return out

    def _put_values(self, b, v, out) -> None:
        """Group ``b``'s values ``v`` into g (direct rows) or the split-row term buffer."""
        if not b.direct:
            self._term_buf[b.term_base:b.term_base + b.N] = v
        elif b.rows_slice is not None:
            out[b.rows_slice] = v
        else:
            out[b.rows] = v

    def jac_values(self, x, out=None, p=None):
        self._bind(p)
        x = np.asarray(x, dtype=float)
        if out is None:
            out = np.empty(self.nnz_jac)
        raw = out if self._jac_map is None else self._raw_jac
        with np.errstate(all="ignore"):
            for idx, fused in self._con_fused:
                b = self._con[idx[0]]
                if fused is None:
                    b.fn.jac(self._x(x, b), b.P, b.group.data_table, raw, b.jac_base, b.N)
                else:
                    fused.jac(self._x(x, b), b.P, b.group.data_table, raw,
                              [self._con[i].jac_base for i in idx], b.N)
        if self._jac_map is not None:
            out[:] = np.bincount(self._jac_map, weights=raw, minlength=self.nnz_jac)
        return out

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        self._bind(p)
        x = np.asarray(x, dtype=float)
        lam = np.asarray(lam, dtype=float)
        if out is None:
            out = np.empty(self.nnz_hess)
        with np.errstate(all="ignore"):
            for b in self._obj:
                b.fn.hess(self._x(x, b), b.P, b.group.data_table, float(obj_factor), out,
                          b.hess_base, b.N)
            for b in self._con:
                w = lam[b.rows_slice] if b.rows_slice is not None else lam[b.rows]
                b.fn.hess(self._x(x, b), b.P, b.group.data_table, w, out, b.hess_base, b.N)
        return out

    # ------------------------------------------------------------- diagnostics
    def describe_nonfinite(self, x) -> str:
        """Name the first objective/constraint whose value or derivatives at ``x``
        are not finite, with its expression in readable form."""
        model = self.problem.model
        x = np.asarray(x, dtype=float)
        if not np.isfinite(self.obj(x)) or not np.all(np.isfinite(self.grad(x))):
            return f"objective: {to_str(model.objective, 300)}"
        c = self.cons(x)
        bad = np.flatnonzero(~np.isfinite(c))
        if bad.size == 0:
            jv = self.jac_values(x)
            bad = np.unique(np.asarray(self.jac_rows)[~np.isfinite(jv)])
        if bad.size:
            k = int(bad[0])
            return f"constraint {model.describe(k)}"
        return "no non-finite value at this point"


def _fused_sets(bounds) -> list:
    """``[(indices, FusedGroups or None)]`` covering ``bounds`` in order: groups of one
    template graph whose variable, parameter and data tables are equal form a set with
    one fused function (shared subexpressions computed once); every other group is a
    set of its own (None).  A set is evaluated where its first group is."""
    sets, seen = [], {}
    for k, b in enumerate(bounds):
        g = b.group
        key = (id(g.graph), g.size, g.var_table.shape, g.param_table.shape, g.data_table.shape)
        for idx in seen.get(key, ()):
            h = bounds[idx[0]].group
            if all(u is v or np.array_equal(u, v) for u, v in
                   ((g.var_table, h.var_table), (g.param_table, h.param_table),
                    (g.data_table, h.data_table))):
                idx.append(k)
                break
        else:
            idx = [k]
            seen.setdefault(key, []).append(idx)
            sets.append(idx)
    out = []
    for idx in sets:
        if len(idx) == 1:
            out.append((idx, None))
        else:
            parts = [(bounds[i].group.root, bounds[i].group.grad) for i in idx]
            out.append((idx, compile_fused(parts, f"constraint groups {idx}")))
    return out
