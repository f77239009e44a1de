"""The groups' tapes as straight-line CUDA C generated for one layout.

The kernel evaluates f, g, their gradients and the Lagrangian's Hessian by interpreting
each group's tapes (:func:`..kernels.tape_eval.run_tape`; :mod:`..tape` builds them):
for every instruction it decodes the op code and operands from the layout's arrays, then
applies it to the chunk's instances through the register file in the workspace.  On a
GPU thread the decoding and the register file's loads and stores are chains of dependent
memory accesses.  :func:`source` writes each tape as a C function instead, every op code,
register and constant a literal:

    int caspar_gen_tape(long long ts, long long te, const double* x,
                        const long long* vt, long long vo, const double* p,
                        const long long* pt, long long po, const double* dt,
                        long long do_, long long N, long long i0, long long C,
                        double* reg, long long c0, long long c1)
        run_tape's work for the tape ts:te on the instances i0 + c, c0 <= c < c1: 0;
        -1 where this layout has no tape ts:te (the caller interprets it)

Per instance the tape's registers are C locals, read from ``reg[r C + c]`` first where
the tape reads a register before writing it, and every register the tape writes is
stored back to ``reg[r C + c]`` at the end: the register file ends as the interpreter
leaves it.  Each operation is the interpreter's, on the same operands, in the same order
(instances are independent), and products and sums are the ``_rn`` intrinsics, which a
compiler never contracts into a fused multiply-add (the interpreter's stores between
instructions rule that out too), so the results are the interpreter's bit for bit
wherever the math functions are the same (libdevice on the GPU for both; on the host the
C library's for both: tests/compiled/test_cuda_tape_code.py).  Tapes are ``__noinline__``
functions of at most :data:`CHUNK` instructions each (long tapes split at an instruction
boundary, the live registers passed through ``reg``).
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from .. import tape as T
from ..kernels import slots

#: the generator's version, part of :func:`pattern_key` (bump when the source changes)
VERSION = 1
#: instructions per ``__noinline__`` function
CHUNK = 512
#: the most tape instructions generated (beyond: :data:`STUB`)
MAX_ENTRIES = 100_000

#: the group table's (start, end) column pairs of its value, gradient and Hessian tapes
RANGE_COLUMNS = ((T.G_VS, T.G_VE), (T.G_JS, T.G_JE), (T.G_HS, T.G_HE))

HEADER = ('#define CASPAR_DEV __device__\n'
          '#define CASPAR_DEV_NOINLINE __device__ __noinline__\n'
          '#define CASPAR_INF __longlong_as_double(0x7ff0000000000000LL)\n'
          '#define CASPAR_NAN __longlong_as_double(0x7ff8000000000000LL)\n')

_ARGS = ("const double* __restrict__ x, const long long* __restrict__ vt, long long vo, "
         "const double* __restrict__ p, const long long* __restrict__ pt, long long po, "
         "const double* __restrict__ dt, long long do_, long long N, long long i0, "
         "long long C, double* __restrict__ reg, long long c0, long long c1")
_CALL = "x, vt, vo, p, pt, po, dt, do_, N, i0, C, reg, c0, c1"

STUB = (f'extern "C" __device__ int caspar_gen_tape(long long ts, long long te, {_ARGS}) '
        "{ return -1; }\n")

#: op code -> C expression of its operands a, b, s (registers) and v (the constant)
_UNARY_C = {20: "exp({a})", 23: "sin({a})", 24: "cos({a})", 25: "tan({a})",
            26: "asin({a})", 27: "acos({a})", 28: "atan({a})", 29: "sinh({a})",
            30: "cosh({a})", 31: "tanh({a})", 32: "fabs({a})", 33: "log10({a})",
            34: "expm1({a})", 35: "log1p({a})", 36: "erf({a})", 44: "asinh({a})",
            45: "acosh({a})", 46: "atanh({a})",
            # the interpreter's integer floor and ceil below 2^52 (a zero's sign is +)
            42: "(fabs({a}) < 0x1p52 ? (double)(long long)floor({a}) : {a})",
            43: "(fabs({a}) < 0x1p52 ? (double)(long long)ceil({a}) : {a})",
            21: "({a} > 0.0 ? log({a}) : ({a} == 0.0 ? -CASPAR_INF : CASPAR_NAN))",
            22: "({a} >= 0.0 ? sqrt({a}) : CASPAR_NAN)",
            41: "({a} > 0.0 ? 1.0 : ({a} < 0.0 ? -1.0 : {a}))",
            58: "({a} == 0.0 ? 1.0 : 0.0)", 14: "(-{a})"}
_BINARY_C = {10: "__dadd_rn({a}, {b})", 11: "__dsub_rn({a}, {b})",
             12: "__dmul_rn({a}, {b})", 13: "__ddiv_rn({a}, {b})", 15: "pow({a}, {b})",
             37: "atan2({a}, {b})", 38: "hypot({a}, {b})",
             39: "({a} != {a} ? {b} : ({b} != {b} ? {a} : ({a} <= {b} ? {a} : {b})))",
             40: "({a} != {a} ? {b} : ({b} != {b} ? {a} : ({a} >= {b} ? {a} : {b})))",
             50: "({a} < {b} ? 1.0 : 0.0)", 51: "({a} <= {b} ? 1.0 : 0.0)",
             52: "({a} > {b} ? 1.0 : 0.0)", 53: "({a} >= {b} ? 1.0 : 0.0)",
             54: "({a} == {b} ? 1.0 : 0.0)", 55: "({a} != {b} ? 1.0 : 0.0)",
             56: "({a} != 0.0 && {b} != 0.0 ? 1.0 : 0.0)",
             57: "({a} != 0.0 || {b} != 0.0 ? 1.0 : 0.0)"}
_CONST_C = {4: "__dmul_rn({a}, {v})", 5: "__dadd_rn({a}, {v})", 6: "__dsub_rn({a}, {v})",
            7: "__dsub_rn({v}, {a})", 8: "__ddiv_rn({a}, {v})", 9: "__ddiv_rn({v}, {a})",
            16: "pow({a}, {v})", 0: "{v}"}
_LEAF_C = {1: "x[vt[vo + {col} * N + i0 + c]]", 2: "p[pt[po + {col} * N + i0 + c]]",
           3: "dt[do_ + {col} * N + i0 + c]"}
#: every op code :mod:`..tape` emits has its C form here (tests check the two agree)
OP_CODES = frozenset(_UNARY_C) | frozenset(_BINARY_C) | frozenset(_CONST_C) \
    | frozenset(_LEAF_C) | {T.IF_ELSE}


def _slot_i(lay, k) -> np.ndarray:
    return np.asarray(lay.Ib[lay.IO[k]:lay.IO[k + 1]], np.int64)


def _slot_f(lay, k) -> np.ndarray:
    return np.asarray(lay.Fb0[lay.FO[k]:lay.FO[k + 1]], np.float64)


def program(lay) -> tuple:
    """(op (E,), arg (E, 4), cval (E,), the tapes' (start, end) ranges) of ``lay``: the
    instructions of every group's value, gradient and Hessian tape (non-empty, each
    once, in order)."""
    op = _slot_i(lay, slots.I_TAPE_OP)
    arg = _slot_i(lay, slots.I_TAPE_ARG).reshape(-1, 4)
    cval = _slot_f(lay, slots.F_TAPE_CONST)
    gt = _slot_i(lay, slots.I_GROUPS).reshape(-1, T.G_COLS)
    ranges = sorted({(int(r[s]), int(r[e])) for r in gt for s, e in RANGE_COLUMNS
                     if r[e] > r[s]})
    return op, arg, cval, ranges


def entries(lay) -> int:
    """The instructions :func:`source` would generate for ``lay``."""
    return sum(e - s for s, e in program(lay)[3])


def fits(lay) -> bool:
    """Whether :func:`source` generates code for ``lay`` (:data:`MAX_ENTRIES`)."""
    return entries(lay) <= MAX_ENTRIES


def pattern_key(lay) -> str:
    """A hash of ``lay``'s tapes (op codes, operands, constants' bits, ranges),
    :data:`VERSION` and :data:`CHUNK`: the generated code is a function of these alone."""
    op, arg, cval, ranges = program(lay)
    h = hashlib.sha256(f"{VERSION} {CHUNK}".encode())
    for a in (op, arg, cval.view(np.int64), np.asarray(ranges, np.int64)):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:32]


def _literal(v: float) -> str:
    """``v`` exactly, as a C double literal (hexadecimal: no decimal rounding)."""
    if math.isnan(v):
        return "CASPAR_NAN"
    if math.isinf(v):
        return "CASPAR_INF" if v > 0 else "(-CASPAR_INF)"
    return f"({float(v).hex()})"


def _instruction(o: int, a0: int, a1: int, a2: int, v: float) -> str:
    """The C expression of one instruction (register k is ``r<k>``)."""
    a, b, s = f"r{a0}", f"r{a1}", f"r{a2}"
    if o in _LEAF_C:
        return _LEAF_C[o].format(col=a0)
    if o in _CONST_C:
        return _CONST_C[o].format(a=a, v=_literal(v))
    if o in _UNARY_C:
        return _UNARY_C[o].format(a=a)
    if o in _BINARY_C:
        return _BINARY_C[o].format(a=a, b=b)
    if o == T.IF_ELSE:
        return f"({a} != 0.0 ? {b} : {s})"
    raise ValueError(f"op code {o} has no generated form")


def _part(name, op, arg, cval, s, e) -> list:
    """Instructions s:e as one function over the instances c0 <= c < c1."""
    reads, written, body = [], set(), []
    for t in range(s, e):
        o = int(op[t])
        a0, a1, a2, dst = (int(v) for v in arg[t])
        for r in (a0, a1, a2)[:T.REGISTER_OPERANDS[o]]:
            if r not in written and r not in reads:
                reads.append(r)
        body.append(f"    r{dst} = {_instruction(o, a0, a1, a2, float(cval[t]))};")
        written.add(dst)
    regs = sorted(set(reads) | written)
    out = [f"static CASPAR_DEV_NOINLINE void {name}({_ARGS}) {{",
           "  for (long long c = c0; c < c1; ++c) {"]
    if regs:
        out.append("    double " + ", ".join(f"r{r}" for r in regs) + ";")
    out.extend(f"    r{r} = reg[{r} * C + c];" for r in reads)
    out.extend(body)
    out.extend(f"    reg[{r} * C + c] = r{r};" for r in sorted(written))
    out.append("  }\n}")
    return out


def source(lay, chunk: int = CHUNK) -> str:
    """:func:`caspar_gen_tape` of the module doc for ``lay``'s tapes, after
    :data:`HEADER` (which a host build replaces)."""
    return program_source(*program(lay), chunk=chunk)


def program_source(op, arg, cval, ranges, chunk: int = CHUNK) -> str:
    """:func:`source` of the tapes ``ranges`` ((start, end) pairs) of the instructions
    ``op`` (E,), ``arg`` (E, 4) and ``cval`` (E,) (:func:`program`'s arrays)."""
    out, cases = [], []
    for ts, te in ranges:
        parts = []
        for s in range(ts, te, chunk):
            name = f"caspar_tape_{ts}_{s}"
            out += _part(name, op, arg, cval, s, min(te, s + chunk))
            parts.append(name)
        cases.append(f"    case {ts}: if (te != {te}) return -1;"
                     + "".join(f" {p}({_CALL});" for p in parts) + " return 0;")
    out.append(f'extern "C" CASPAR_DEV int caspar_gen_tape(long long ts, long long te, '
               f"{_ARGS}) {{")
    out.append("  switch (ts) {")
    out.extend(cases)
    out.append("  }\n  return -1;\n}")
    return HEADER + "\n".join(out) + "\n"
