"""caspar's pattern groups -> the tables the tape interpreter reads (once per problem).

The interpreter (:mod:`.kernels.tape_eval`) is compiled once per machine; the model is
data, so a new model never recompiles.  Tables (:func:`build_model`'s dict):

* ``gt`` (n_groups, 24) int64, one row per pattern group (objective groups first), the
  columns ``G_*`` below: kind, instance count N, var/param/data table heights, their
  offsets in ``vt``/``pt``/``dt``, the [start, end) of the value, gradient and Hessian
  tapes, where their outputs are in ``outs``, and where the results go (gradient/Jacobian
  and Hessian base in caspar's evaluator :class:`~caspar_backend.evaluators.layout.Layout`,
  constraint rows, direct rows or summed terms);
* ``op`` (T,) int64 op codes, ``arg`` (T, 3) int64 argument registers (or the var/param/
  data column for a leaf), ``cval`` (T,) float64 constants: the instructions of all tapes;
* ``vt``, ``pt``, ``dt``: the groups' var/param/data tables, each (k, N) table flattened
  row-major (``vt[voff + a*N + i]`` is variable a of instance i).

Every tape instruction t writes register t (relative to its tape's start).  Leaves are
instructions too (LOADX/LOADP/LOADD/CONST).  n-ary sums/lincombs become left-to-right
chains of binary ops: the order NumPy's generated code evaluates them in
(codegen_numpy: "(a + b + c)" is ((a + b) + c)); small integer powers are product chains
as _powi_np writes them.
"""
from __future__ import annotations

import numpy as np

from caspar_backend.arrays.segments import distinct
from caspar_backend.expr import topo_order
from caspar_backend.evaluators.layout import Layout

# op codes
CONST, LOADX, LOADP, LOADD = 0, 1, 2, 3
ADD, SUB, MUL, DIV, NEG, POW, POWF = 10, 11, 12, 13, 14, 15, 16
UNARY = {"exp": 20, "log": 21, "sqrt": 22, "sin": 23, "cos": 24, "tan": 25, "asin": 26,
         "acos": 27, "atan": 28, "sinh": 29, "cosh": 30, "tanh": 31, "abs": 32,
         "log10": 33, "expm1": 34, "log1p": 35, "erf": 36, "sign": 41, "floor": 42,
         "ceil": 43, "asinh": 44, "acosh": 45, "atanh": 46, "not": 58}
BINARY = {"atan2": 37, "hypot": 38, "fmin": 39, "fmax": 40, "lt": 50, "le": 51,
          "gt": 52, "ge": 53, "eq": 54, "ne": 55, "and": 56, "or": 57}
IF_ELSE = 59


class Unsupported(Exception):
    """An expression node the tape has no op code for (the general path solves)."""


class TapeBuilder:
    def __init__(self):
        self.op, self.a0, self.a1, self.a2, self.c = [], [], [], [], []

    def _emit(self, start, op, a0=0, a1=0, a2=0, c=0.0):
        self.op.append(op)
        self.a0.append(a0)
        self.a1.append(a1)
        self.a2.append(a2)
        self.c.append(float(c))
        return len(self.op) - 1 - start

    def tape(self, roots):
        """Emit one tape for ``roots`` (a loop over the template's nodes, not over its
        instances); returns (start, end, [register of each root])."""
        start = len(self.op)
        reg = {}
        for n in topo_order(roots):
            if not n.args:
                if n.op == "const":
                    reg[n.id] = self._emit(start, CONST, c=n.attr)
                else:
                    code = {"var": LOADX, "param": LOADP, "data": LOADD}[n.op]
                    reg[n.id] = self._emit(start, code, a0=int(n.attr))
                continue
            a = [reg[x.id] for x in n.args]
            op = n.op
            if op == "add":
                r = self._emit(start, ADD, a[0], a[1])
            elif op == "sub":
                r = self._emit(start, SUB, a[0], a[1])
            elif op == "mul":
                r = self._emit(start, MUL, a[0], a[1])
            elif op == "div":
                r = self._emit(start, DIV, a[0], a[1])
            elif op == "neg":
                r = self._emit(start, NEG, a[0])
            elif op == "sum":
                r = self._emit(start, ADD, a[0], a[1])
                for t in a[2:]:
                    r = self._emit(start, ADD, r, t)
            elif op == "lincomb":
                r = self._emit(start, MUL, a[0], a[1])
                for k in range(2, len(a), 2):
                    p = self._emit(start, MUL, a[k], a[k + 1])
                    r = self._emit(start, ADD, r, p)
            elif op == "powi":
                e = int(n.attr)
                if 1 <= abs(e) <= 8:
                    r = a[0]
                    for _ in range(abs(e) - 1):
                        r = self._emit(start, MUL, r, a[0])
                    if e < 0:
                        one = self._emit(start, CONST, c=1.0)
                        r = self._emit(start, DIV, one, r)
                else:
                    r = self._emit(start, POWF, a[0], c=float(e))
            elif op == "pow":
                r = self._emit(start, POW, a[0], a[1])
            elif op in UNARY:
                r = self._emit(start, UNARY[op], a[0])
            elif op in BINARY:
                r = self._emit(start, BINARY[op], a[0], a[1])
            elif op == "if_else":
                r = self._emit(start, IF_ELSE, a[0], a[1], a[2])
            else:
                raise Unsupported(op)
            reg[n.id] = r
        return start, len(self.op), [reg[r.id] for r in roots]


# group table columns
(G_KIND, G_N, G_K, G_Q, G_R, G_VOFF, G_POFF, G_DOFF, G_VS, G_VE, G_VOUT, G_JS, G_JE,
 G_JOUT, G_NJ, G_HS, G_HE, G_HOUT, G_NH, G_JBASE, G_HBASE, G_ROFF, G_DIRECT,
 G_TBASE) = range(24)
G_COLS = 24


def build_model(problem):
    """Flat arrays describing the evaluation of ``problem`` (one instance)."""
    lay = Layout.of(problem)
    tb = TapeBuilder()
    groups = [(0, g) for g in problem.objective_groups] + \
             [(1, g) for g in problem.constraint_groups]
    gt = np.zeros((len(groups), G_COLS), np.int64)
    vt, pt, dt, rows, outs = [], [], [], [], []
    voff = poff = doff = roff = 0
    nobj = len(problem.objective_groups)
    for k, (kind, g) in enumerate(groups):
        N = g.size
        row = gt[k]
        row[G_KIND], row[G_N] = kind, N
        row[G_K], row[G_Q], row[G_R] = g.var_table.shape[0], g.param_table.shape[0], \
            g.data_table.shape[0]
        row[G_VOFF], row[G_POFF], row[G_DOFF] = voff, poff, doff
        vt.append(np.asarray(g.var_table, np.int64).ravel())
        pt.append(np.asarray(g.param_table, np.int64).ravel())
        dt.append(np.asarray(g.data_table, np.float64).ravel())
        voff += g.var_table.size
        poff += g.param_table.size
        doff += g.data_table.size
        s, e, r = tb.tape([g.root])
        row[G_VS], row[G_VE], row[G_VOUT] = s, e, r[0]
        s, e, r = tb.tape([x for _, x in g.grad]) if g.grad else (0, 0, [])
        row[G_JS], row[G_JE], row[G_JOUT], row[G_NJ] = s, e, len(outs), len(r)
        outs += r
        s, e, r = tb.tape([x for _, x in g.hess]) if g.hess else (0, 0, [])
        row[G_HS], row[G_HE], row[G_HOUT], row[G_NH] = s, e, len(outs), len(r)
        outs += r
        if kind == 0:
            row[G_JBASE], row[G_HBASE] = lay.obj_grad_base[k], lay.obj_hess_base[k]
        else:
            c = k - nobj
            row[G_JBASE], row[G_HBASE] = lay.con_jac_base[c], lay.con_hess_base[c]
            row[G_DIRECT], row[G_TBASE] = int(lay.con_direct[c]), lay.con_term_base[c]
            row[G_ROFF] = roff
            rows.append(np.asarray(g.rows, np.int64))
            roff += len(g.rows)
    cat = lambda a, dt_=np.int64: np.concatenate(a).astype(dt_) if a else np.zeros(0, dt_)
    tape_a = np.stack([np.asarray(tb.a0, np.int64), np.asarray(tb.a1, np.int64),
                       np.asarray(tb.a2, np.int64)], axis=1)
    tape_a = tape_a.reshape(-1, 3)
    # the longest tape: the register file's size
    lengths = gt[:, [G_VE, G_JE, G_HE]] - gt[:, [G_VS, G_JS, G_HS]]
    max_tape = max(1, int(lengths.max(initial=0)))
    nraw = len(lay.raw_jac_rows)
    jac_map = (np.asarray(lay.jac_map, np.int64) if lay.jac_map is not None
               else np.zeros(0, np.int64))
    acc_rows = distinct(lay.term_rows).astype(np.int64)
    model = dict(
        n=problem.n, m=problem.m, nobj=nobj, ngroups=len(groups),
        gt=gt, op=np.asarray(tb.op, np.int64), arg=tape_a, cval=np.asarray(tb.c, np.float64),
        outs=np.asarray(outs, np.int64), vt=cat(vt), pt=cat(pt), dt=cat(dt, np.float64),
        rows=cat(rows), grad_idx=np.asarray(lay.grad_idx, np.int64),
        term_rows=np.asarray(lay.term_rows, np.int64), acc_rows=acc_rows,
        jac_map=jac_map, has_jac_map=lay.jac_map is not None, nraw=nraw,
        jac_rows=np.asarray(lay.jac_rows, np.int64),
        jac_cols=np.asarray(lay.jac_cols, np.int64),
        hess_rows=np.asarray(lay.hess_rows, np.int64),
        hess_cols=np.asarray(lay.hess_cols, np.int64),
        max_tape=max_tape,
        sense=problem.model.sense, groups=groups)
    return model
