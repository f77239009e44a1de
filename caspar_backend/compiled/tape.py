"""caspar's pattern groups -> the tables the tape interpreter reads (once per problem).

The interpreter (:mod:`.kernels.tape_eval`) is compiled once per machine; the model is
data, so a new model never recompiles.  Tables (:func:`build_model`'s dict):

* ``gt`` (n_groups, 24) int64, one row per pattern group (objective groups first), the
  columns ``G_*`` below: kind, instance count N, var/param/data table heights, their
  offsets in ``vt``/``pt``/``dt``, the [start, end) of the value, gradient and Hessian
  tapes, where their outputs are in ``outs``, and where the results go (gradient/Jacobian
  and Hessian base in caspar's evaluator :class:`~caspar_backend.evaluators.layout.Layout`,
  constraint rows, direct rows or summed terms);
* ``op`` (T,) int64 op codes, ``arg`` (T, 4) int64: three argument registers (or the
  var/param/data column for a leaf; unused ones 0) and the destination register,
  ``cval`` (T,) float64 constants: the instructions of all tapes;
* ``vt``, ``pt``, ``dt``: the groups' var/param/data tables, each (k, N) table flattened
  row-major (``vt[voff + a*N + i]`` is variable a of instance i).

Registers are allocated by liveness (:meth:`TapeBuilder.tape`): instruction t writes
register ``dst[t]``, a register free at t -- one no operand of t uses and whose value no
later instruction reads -- so a tape needs as many registers as values live at once
(bundle adjustment's Hessian tape: 2,533 instructions, 191 registers), and the chunk of
instances per pass grows accordingly.  Outputs stay live to the tape's end.  Leaves are
instructions too (LOADX/LOADP/LOADD, and CONST where a constant is not folded into the
instruction using it: :meth:`TapeBuilder.tape`).  n-ary sums/lincombs become left-to-right
chains of binary ops: the order NumPy's generated code evaluates them in
(codegen_numpy: "(a + b + c)" is ((a + b) + c)); small integer powers are product chains
as _powi_np writes them.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from caspar_backend.arrays.segments import distinct
from caspar_backend.expr import topo_order
from caspar_backend.evaluators.layout import Layout
from caspar_backend.compiled.kernels.slots import TAPE_CHUNK

#: the register file of one pass over a tape, in float64 entries: the chunk of instances
#: per pass shrinks for tapes with many live values, so that a workspace (one per
#: instance in a batch) grows by at most 32 KB for it
TAPE_REGISTERS = 4096

# op codes
CONST, LOADX, LOADP, LOADD = 0, 1, 2, 3
# with a constant operand c (cval): x c, x + c, x - c, c - x, x / c, c / x
MULC, ADDC, SUBC, CSUB, DIVC, CDIV = 4, 5, 6, 7, 8, 9
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


#: register operands of each op code: the leading ones of (a0, a1, a2); a leaf's a0 is a
#: var/param/data column, not a register
REGISTER_OPERANDS = {CONST: 0, LOADX: 0, LOADP: 0, LOADD: 0,
                     MULC: 1, ADDC: 1, SUBC: 1, CSUB: 1, DIVC: 1, CDIV: 1, NEG: 1, POWF: 1,
                     ADD: 2, SUB: 2, MUL: 2, DIV: 2, POW: 2, IF_ELSE: 3,
                     **{code: 1 for code in UNARY.values()},
                     **{code: 2 for code in BINARY.values()}}


#: REGISTER_OPERANDS as an array indexed by op code
_ARITY = np.zeros(max(REGISTER_OPERANDS) + 1, np.int64)
_ARITY[list(REGISTER_OPERANDS)] = list(REGISTER_OPERANDS.values())


#: tapes from this many instructions on find their values' last uses with NumPy (below,
#: NumPy's per-call cost exceeds a plain loop's)
VECTOR_LAST_USES_MIN = 256


def _last_uses(op, args, start, L, roots):
    """``(last, arity)`` of the tape ``start .. start + L``: ``last[v]`` the last
    instruction reading value v (L for a root, -1 for none), ``arity[t]`` instruction
    t's register operands (lists)."""
    if L < VECTOR_LAST_USES_MIN:
        arity = [REGISTER_OPERANDS[o] for o in op[start:]]
        last = [-1] * L
        for t in range(L):
            for a in args[:arity[t]]:
                last[a[start + t]] = t
    else:
        arity = _ARITY[np.asarray(op[start:], np.int64)]
        last = np.full(L, -1, np.int64)
        t_all = np.arange(L)
        for need, a in enumerate(args, start=1):
            m = arity >= need
            if m.any():
                np.maximum.at(last, np.asarray(a[start:], np.int64)[m], t_all[m])
        last, arity = last.tolist(), arity.tolist()
    for v in roots:
        last[v] = L
    return last, arity


class Tape(NamedTuple):
    """Final.  One tape of :meth:`TapeBuilder.tape`: its instructions ``[start, end)``
    of the builder's lists, the register of each root (``outputs``), and the registers
    it needs (``registers``: its register file for one instance)."""

    start: int
    end: int
    outputs: list
    registers: int


class TapeBuilder:
    def __init__(self):
        self.op, self.a0, self.a1, self.a2, self.dst, self.c = [], [], [], [], [], []

    def _emit(self, start, op, a0=0, a1=0, a2=0, c=0.0):
        self.op.append(op)
        self.a0.append(a0)
        self.a1.append(a1)
        self.a2.append(a2)
        self.dst.append(0)
        self.c.append(float(c))
        return len(self.op) - 1 - start

    def _allocate(self, start, roots):
        """Rewrite the operands of the instructions from ``start`` (value numbers: the
        producing instruction's index in the tape) as registers and set each one's
        destination: a free register (the one freed last; a new one only when none is
        free, so the tape needs as many as values are live at once), taken before the
        operands whose last use this is are freed (a destination never aliases an
        operand).  Returns (the roots' registers, the registers used)."""
        A0, A1, A2, dst = self.a0, self.a1, self.a2, self.dst
        L = len(self.op) - start
        last, arity = _last_uses(self.op, (A0, A1, A2), start, L, roots)
        reg_of, free, used = [0] * L, [], 0
        for t in range(L):
            k = start + t
            n = arity[t]
            if n:
                v0 = A0[k]
                A0[k] = reg_of[v0]
                if n > 1:
                    v1 = A1[k]
                    A1[k] = reg_of[v1]
                    if n > 2:
                        v2 = A2[k]
                        A2[k] = reg_of[v2]
            if free:
                r = free.pop()
            else:
                r, used = used, used + 1
            reg_of[t] = dst[k] = r
            if n:
                if last[v0] == t:
                    free.append(reg_of[v0])
                if n > 1:
                    if v1 != v0 and last[v1] == t:
                        free.append(reg_of[v1])
                    if n > 2 and v2 != v0 and v2 != v1 and last[v2] == t:
                        free.append(reg_of[v2])
            if last[t] < 0:                 # a value nothing reads
                free.append(r)
        return [reg_of[v] for v in roots], used

    def tape(self, roots):
        """Emit one tape for ``roots`` (a loop over the template's nodes, not over its
        instances) and allocate its registers; returns its :class:`Tape`.

        A constant operand of +, *, -, / and pow is folded into the instruction (ADDC,
        MULC, SUBC, CSUB, DIVC, CDIV, POWF: the constant in ``cval``); a constant gets a
        register (CONST) only where another use or a root needs one.  The same IEEE
        operation on the same values (x + c = c + x and x c = c x exactly), one
        instruction fewer per folded constant."""
        start = len(self.op)
        reg, cv = {}, {}

        def r(x):                           # the register of node x
            if x.id not in reg:
                reg[x.id] = self._emit(start, CONST, c=cv[x.id])
            return reg[x.id]

        def commutative(code, folded, x, y):
            if y.id in cv:
                return self._emit(start, folded, r(x), c=cv[y.id])
            if x.id in cv:
                return self._emit(start, folded, r(y), c=cv[x.id])
            return self._emit(start, code, r(x), r(y))

        def ordered(code, left_c, right_c, x, y):
            if y.id in cv and right_c is not None:
                return self._emit(start, right_c, r(x), c=cv[y.id])
            if x.id in cv and left_c is not None:
                return self._emit(start, left_c, r(y), c=cv[x.id])
            return self._emit(start, code, r(x), r(y))

        for n in topo_order(roots):
            if not n.args:
                if n.op == "const":
                    cv[n.id] = float(n.attr)
                else:
                    code = {"var": LOADX, "param": LOADP, "data": LOADD}[n.op]
                    reg[n.id] = self._emit(start, code, a0=int(n.attr))
                continue
            args = n.args
            op = n.op
            if op in ("add", "sum"):
                v = commutative(ADD, ADDC, args[0], args[1])
                for t in args[2:]:
                    v = self._emit(start, ADDC, v, c=cv[t.id]) if t.id in cv else \
                        self._emit(start, ADD, v, r(t))
            elif op == "sub":
                v = ordered(SUB, CSUB, SUBC, args[0], args[1])
            elif op == "mul":
                v = commutative(MUL, MULC, args[0], args[1])
            elif op == "div":
                v = ordered(DIV, CDIV, DIVC, args[0], args[1])
            elif op == "neg":
                v = self._emit(start, NEG, r(args[0]))
            elif op == "lincomb":
                v = commutative(MUL, MULC, args[0], args[1])
                for k in range(2, len(args), 2):
                    q = commutative(MUL, MULC, args[k], args[k + 1])
                    v = self._emit(start, ADD, v, q)
            elif op == "powi":
                e = int(n.attr)
                if 1 <= abs(e) <= 8:
                    v = r(args[0])
                    for _ in range(abs(e) - 1):
                        v = self._emit(start, MUL, v, r(args[0]))
                    if e < 0:
                        v = self._emit(start, CDIV, v, c=1.0)
                else:
                    v = self._emit(start, POWF, r(args[0]), c=float(e))
            elif op == "pow":
                v = ordered(POW, None, POWF, args[0], args[1])
            elif op in UNARY:
                v = self._emit(start, UNARY[op], r(args[0]))
            elif op in BINARY:
                v = self._emit(start, BINARY[op], r(args[0]), r(args[1]))
            elif op == "if_else":
                v = self._emit(start, IF_ELSE, r(args[0]), r(args[1]), r(args[2]))
            else:
                raise Unsupported(op)
            reg[n.id] = v
        out = [r(x) for x in roots]        # (a constant root's value emitted here)
        out, used = self._allocate(start, out)
        return Tape(start, len(self.op), out, used)


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
    max_registers = 1
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
        t = tb.tape([g.root])
        row[G_VS], row[G_VE], row[G_VOUT] = t.start, t.end, t.outputs[0]
        max_registers = max(max_registers, t.registers)
        for cols, entries in (((G_JS, G_JE, G_JOUT, G_NJ), g.grad),
                              ((G_HS, G_HE, G_HOUT, G_NH), g.hess)):
            t = tb.tape([x for _, x in entries]) if entries else Tape(0, 0, [], 0)
            row[list(cols)] = t.start, t.end, len(outs), len(t.outputs)
            outs += t.outputs
            max_registers = max(max_registers, t.registers)
        if kind == 0:
            row[G_JBASE], row[G_HBASE] = lay.obj_grad_base[k], lay.obj_hess_base[k]
        else:
            c = k - nobj
            row[G_JBASE], row[G_HBASE] = lay.con_jac_base[c], lay.con_hess_base[c]
            row[G_DIRECT], row[G_TBASE] = int(lay.con_direct[c]), lay.con_term_base[c]
            row[G_ROFF] = roff
            rows.append(np.asarray(g.rows, np.int64))
            roff += len(g.rows)
    cat = lambda a, dt_=np.int64: (np.concatenate(a).astype(dt_, copy=False) if a
                                   else np.zeros(0, dt_))
    tape_a = np.stack([np.asarray(a, np.int64) for a in (tb.a0, tb.a1, tb.a2, tb.dst)],
                      axis=1).reshape(-1, 4)
    # instances per pass over a tape (kernels/tape_eval.py): at most the largest group,
    # and the register file (the widest tape's registers per instance) at most
    # TAPE_REGISTERS where the tapes allow a chunk of one
    max_instances = max(1, int(gt[:, G_N].max(initial=1)))
    chunk = int(max(1, min(TAPE_CHUNK, max_instances, TAPE_REGISTERS // max_registers)))
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
        max_registers=max_registers, chunk=chunk, max_instances=max_instances,
        sense=problem.model.sense, groups=groups)
    return model


def eval_int_slots(model) -> dict:
    """The int slots the evaluation kernels read (:mod:`.kernels.tape_eval`), from
    :func:`build_model`'s tables: {slot name: int64 array}."""
    ints = dict(GROUPS=model["gt"], TAPE_OP=model["op"], TAPE_ARG=model["arg"],
                TAPE_OUT=model["outs"], VAR_TABLE=model["vt"], PARAM_TABLE=model["pt"],
                CON_ROWS=model["rows"], GRAD_IDX=model["grad_idx"],
                TERM_ROWS=model["term_rows"], ACC_ROWS=model["acc_rows"],
                JAC_MAP=model["jac_map"])
    ints["EVAL_SIZES"] = np.array([model["n"], model["m"], model["nobj"], len(model["gt"]),
                                   int(model["has_jac_map"]), model["chunk"]], np.int64)
    return ints


def eval_float_slots(model, n_params: int) -> dict:
    """The float slots the evaluation kernels use: {slot name: its content (the tape
    constants, the data tables) or its size (scratch: registers of the widest tape for
    a chunk of instances, every objective group's terms, x and p, the gradient buffer,
    the constraint terms, the raw Jacobian before jac_map, row accumulators)}."""
    obj_terms = int(model["gt"][:model["nobj"], G_N].sum())
    return dict(REGISTERS=model["max_registers"] * model["chunk"],
                OBJ_TERMS=max(1, obj_terms), X=model["n"], P=int(n_params),
                GRAD_BUF=len(model["grad_idx"]), CON_TERMS=len(model["term_rows"]),
                JAC_RAW=model["nraw"], ROW_ACC=model["m"], TAPE_CONST=model["cval"],
                DATA_TABLE=model["dt"])


def model_digest(model: dict, n_params: int) -> bytes:
    """A digest of :func:`build_model`'s ``model`` (every array, to the bit, and every
    scalar; not the group objects) and ``n_params``: two problems with one digest have
    the same tables, tapes and constants, so the same workspace layout for one bound
    structure (:func:`caspar_backend.compiled.solve.layout_for`)."""
    import hashlib

    h = hashlib.blake2b(digest_size=20)
    h.update(b"%d\0" % n_params)
    for k in sorted(model):
        v = model[k]
        if k == "groups":
            continue
        if isinstance(v, np.ndarray):
            a = np.ascontiguousarray(v)
            h.update(f"{k}:{a.dtype.str}:{a.shape}\0".encode())
            h.update(a.view(np.uint8) if a.size else b"")
        else:
            h.update(f"{k}={v!r}\0".encode())
    return h.digest()
