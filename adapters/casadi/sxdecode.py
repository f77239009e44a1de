"""An SXFunction's instruction list as NumPy arrays, decoded in bulk.

casadi's Python API hands out the instruction program one instruction at a time
(``instruction_id(k)``, ``instruction_input(k)``, ``instruction_output(k)``: three
SWIG calls, 1-3.5 us each).  Its C++ side can write the whole program at once as
text: ``Function.export_code('matlab')`` prints one line per instruction, in
instruction order, about 0.5 us each,

    w<o> = argin_<i>(<nz+1>);           OP_INPUT
    w<o> = <constant, %.16e>;           OP_CONST
    w<o> = <op printed over w<a>, w<b>>;  unary and binary ops, e.g. (w3+w7), sin(w2)
    argout_<i>{<nz+1>} = w<a>;          OP_OUTPUT

and NumPy decodes that text without a Python step per line (:func:`decode`):

* a line's *op* is read off a key of 8 bytes: the first 6 characters of its
  expression and the 2 after the expression's first digit run, digits written as
  ``#`` (``(w#+w#`` + ``+w``: add).  The key -> op table is *calibrated* at first
  use against casadi itself: a probe Function holding every op caspar reads is
  exported, its lines re-rendered with operand numbers of 1..10 digits, and each
  line's key checked against ``instruction_id`` of the probe.  Ops that casadi
  prints alike (``OP_POW`` and ``OP_CONSTPOW``: ``w1.^w2``) are one class, read as
  the class's first code; only ops that caspar builds alike may share a class.
* operands are the digit runs after a ``w``; input and output indices the runs
  after ``_``, ``(`` and ``{``; constants are parsed by NumPy from their fixed-width
  ``%.16e`` text, which round-trips doubles exactly.

The result is checked against casadi's per-instruction API on a sample of
instructions (the first and last ones and a spread in between).  Any surprise --
export refused (a Function holding calls), a line of unknown form, a count or a
sample that differs -- returns None, and the caller reads the program the
per-instruction way.

:class:`Algorithm` (all arrays int64 of length K = number of instructions, -1
where a field does not apply): ``op`` the casadi op code (class representative),
``w`` the work slot written, ``a``/``b`` the work slots read, ``idx``/``nz`` the
input (OP_INPUT) or output (OP_OUTPUT) index and nonzero, ``value`` float64 (K,)
the constant of OP_CONST (0 elsewhere).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

import casadi as ca

from . import optable as T

_INPUT, _OUTPUT, _CONST = (T.CODES[k] for k in ("OP_INPUT", "OP_OUTPUT", "OP_CONST"))

#: instructions compared with casadi's per-instruction API after decoding
_SAMPLE = 96

_W, _US, _LP, _LB = (ord(c) for c in "w_({")
_NL, _SP, _HASH = 10, 32, ord("#")


@dataclass(eq=False)
class Algorithm:
    """An SX instruction program as arrays (final; see the module docstring)."""

    op: np.ndarray
    w: np.ndarray
    a: np.ndarray
    b: np.ndarray
    idx: np.ndarray
    nz: np.ndarray
    value: np.ndarray

    @property
    def size(self) -> int:
        return self.op.size


# ------------------------------------------------------------------ the text
def _lines(text: str):
    """``(buf, starts, ends)`` of the body lines (one per instruction): ``buf`` the
    text as uint8, ``starts``/``ends`` int64 positions (``ends``: the newline)."""
    head = text.rfind("= nonzeros_gen(varargin{")
    if head < 0:
        return None
    lo = text.find("\n", head) + 1
    hi = text.find("\n  varargout{", lo)
    if lo <= 0 or hi < 0:
        return None
    buf = np.frombuffer(text.encode("ascii"), np.uint8)
    ends = lo + np.flatnonzero(buf[lo:hi + 1] == _NL)
    starts = np.empty_like(ends)
    starts[0:1] = lo
    starts[1:] = ends[:-1] + 1
    return buf, starts, ends


def _runs(buf, lo, hi):
    """Digit runs in ``buf[lo:hi]``: ``(start, end)`` int64 positions (end exclusive)."""
    d = (buf[lo:hi] - 48) < 10              # uint8 wraps below '0'
    edge = np.flatnonzero(d[1:] != d[:-1]) + 1
    first = bool(d[0]) if d.size else False
    edge = np.concatenate([[0], edge]) if first else edge
    last = bool(d[-1]) if d.size else False
    edge = np.concatenate([edge, [d.size]]) if last else edge
    return edge[0::2] + lo, edge[1::2] + lo


def _values(buf, rs, re_):
    """Decimal values of digit runs ``buf[rs:re_]`` (int64), read right to left."""
    n = re_ - rs
    v = np.zeros(rs.size, np.int64)
    p = 1
    for j in range(int(n.max()) if n.size else 0):
        d = buf[np.maximum(re_ - 1 - j, 0)].astype(np.int64) - 48
        v += np.where(n > j, d, 0) * p
        p *= 10
    return v


def _window(buf, pos, end, width):
    """``width`` characters from ``pos`` (int64 array) as an (len, width) uint8 array,
    digits as ``#`` and positions at or past ``end`` as 0."""
    j = np.arange(width)
    p = pos[:, None] + j
    c = buf[np.minimum(p, buf.size - 1)]
    c = np.where((c - 48) < 10, _HASH, c)
    return np.where(p < end[:, None], c, 0).astype(np.uint8)


def _keys(buf, starts, ends, rs, re_, run_line):
    """Per normal line: ``(key uint64, expression start, index of its first run)``.

    A normal line is ``  w<o> = <expr>;``: its first run is ``o`` (at column 3), its
    expression starts 3 characters after that run."""
    first = np.searchsorted(run_line, np.arange(starts.size))   # first run of each line
    e = re_[np.minimum(first, re_.size - 1)] + 3
    head = _window(buf, e, ends, 6)
    nxt = first + 1
    has2 = (nxt < rs.size) & (run_line[np.minimum(nxt, rs.size - 1)] == np.arange(starts.size))
    tpos = np.where(has2, re_[np.minimum(nxt, re_.size - 1)], ends)
    tail = _window(buf, tpos, ends, 2)
    key = np.concatenate([head, tail], axis=1).view("<u8").reshape(-1)
    return key, e, first


# --------------------------------------------------------------- calibration
_TABLE: dict | None = None


def _probe_function():
    """An SXFunction with one instruction of every op caspar reads, plus constants of
    each printed form."""
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    outs = []
    for name in list(T.DIRECT) + list(T.COMPOSED):
        c = T.CODES[name]
        outs.append(ca.SX.binary(c, x, y) if T.KIND[c] == T.K_BINARY else ca.SX.unary(c, x))
    outs += [ca.SX(v) for v in (1.5, -2.25e-300, np.inf, -np.inf, np.nan)]
    return ca.Function("caspar_probe", [x, y], outs)


def _calibrate() -> dict:
    """key -> casadi op code of every normal line form (module docstring)."""
    fn = _probe_function()
    text = fn.export_code("matlab")
    ids = [fn.instruction_id(k) for k in range(fn.n_instructions())]
    lo = text.rfind("= nonzeros_gen(varargin{")
    lo = text.find("\n", lo) + 1
    hi = text.find("\n  varargout{", lo) + 1
    body = text[lo:hi].splitlines()
    if len(body) != len(ids):
        raise RuntimeError("casadi's MATLAB export does not print one line per instruction")
    table: dict = {}
    for digits in range(1, 11):
        lines = [re.sub(r"w(\d+)", lambda m: "w" + str(10 ** (digits - 1) + int(m.group(1))), s)
                 for s in body]
        keep = [k for k, s in enumerate(lines) if s.startswith("  w")]
        txt = "function\n  argin_0 = nonzeros_gen(varargin{1});\n" + \
            "\n".join(lines[k] for k in keep) + "\n  varargout{1} = 0;\n"
        buf, starts, ends = _lines(txt)
        rs, re_ = _runs(buf, int(starts[0]), int(ends[-1]))
        run_line = np.searchsorted(starts, rs, side="right") - 1
        key, _e, _f = _keys(buf, starts, ends, rs, re_, run_line)
        for k, kk in zip(keep, key.tolist()):
            op = ids[k]
            old = table.setdefault(kk, op)
            if old != op and _caspar_op(old) != _caspar_op(op):
                table[kk] = -1  # printed alike, built differently: never decoded
    return table


def _caspar_op(code: int):
    name = T.NAMES.get(code, "")
    return T.DIRECT.get(name) or name


def _table() -> dict:
    global _TABLE
    if _TABLE is None:
        _TABLE = _calibrate()
    return _TABLE


# -------------------------------------------------------------------- decode
def decode(fn) -> Algorithm | None:
    """The instruction program of SXFunction ``fn`` as an :class:`Algorithm`, or None
    where the bulk decoding does not apply (module docstring)."""
    K = fn.n_instructions()
    if K == 0 or fn.n_in() == 0:
        return None
    try:
        text = fn.export_code("matlab")
    except RuntimeError:
        return None
    got = _lines(text)
    if got is None:
        return None
    buf, starts, ends = got
    del text
    if starts.size != K:
        return None
    rs, re_ = _runs(buf, int(starts[0]), int(ends[-1]))
    run_line = np.searchsorted(starts, rs, side="right") - 1
    third = buf[starts + 2]
    is_out = third == ord("a")
    if not np.all(is_out | (third == _W)):
        return None
    key, e, first = _keys(buf, starts, ends, rs, re_, run_line)
    table = _table()
    uk, inv = np.unique(key, return_inverse=True)
    codes = np.array([table.get(k, -1) for k in uk.tolist()], np.int64)
    op = codes[inv.reshape(-1)]
    op[is_out] = _OUTPUT
    if np.any(op < 0):
        return None
    # operands: the runs after a 'w', in order, o first on normal lines
    pc = buf[rs - 1]
    val = np.zeros(rs.size, np.int64)
    need = (pc == _W) | (pc == _US) | (pc == _LP) | (pc == _LB)
    is_const = op == _CONST
    need &= ~(is_const[run_line] & (rs >= e[run_line]))   # a constant's own digits
    val[need] = _values(buf, rs[need], re_[need])
    wrun = np.flatnonzero(pc == _W)
    wl = run_line[wrun]
    rank = np.arange(wrun.size) - np.searchsorted(wl, wl)     # position among the line's w-runs
    slots = np.full((K, 3), -1, np.int64)
    ok = rank < 3
    slots[wl[ok], rank[ok]] = val[wrun[ok]]
    n = np.full(K, -1, np.int64)
    w = np.where(is_out, -1, slots[:, 0])
    a = np.where(is_out, slots[:, 0], slots[:, 1])
    b = np.where(is_out, -1, slots[:, 2])
    idx, nz = n.copy(), n.copy()
    for ch, dest in ((_US, idx), (_LP, nz), (_LB, nz)):
        r = np.flatnonzero(pc == ch)
        r = r[np.r_[True, run_line[r][1:] != run_line[r][:-1]]] if r.size else r
        dest[run_line[r]] = val[r]
    io = is_out | (op == _INPUT)
    idx = np.where(io, idx, -1)
    nz = np.where(io, nz - 1, -1)
    value = np.zeros(K)
    ci = np.flatnonzero(is_const)
    if ci.size:
        width = 26
        txt = _window_raw(buf, e[ci], ends[ci] - 1, width)   # without the ';'
        value[ci] = txt.view(f"S{width}").reshape(-1).astype(np.float64)
    alg = Algorithm(op, w, a, b, idx, nz, value)
    return alg if _agrees(fn, alg) else None


def _window_raw(buf, pos, end, width):
    j = np.arange(width)
    p = pos[:, None] + j
    c = buf[np.minimum(p, buf.size - 1)]
    return np.ascontiguousarray(np.where(p < end[:, None], c, 0).astype(np.uint8))


def _agrees(fn, alg: Algorithm) -> bool:
    """The decoded program against casadi's per-instruction API on a sample."""
    K = alg.size
    head = np.arange(min(K, _SAMPLE // 3))
    tail = np.arange(max(0, K - _SAMPLE // 3), K)
    mid = np.linspace(0, K - 1, _SAMPLE // 3).astype(np.int64)
    for k in np.unique(np.concatenate([head, tail, mid])).tolist():
        op = fn.instruction_id(k)
        if _canon(op) != _canon(int(alg.op[k])):
            return False
        ins, outs = fn.instruction_input(k), fn.instruction_output(k)
        if op == _INPUT:
            want_in, want_out = [alg.idx[k], alg.nz[k]], [alg.w[k]]
        elif op == _OUTPUT:
            want_in, want_out = [alg.a[k]], [alg.idx[k], alg.nz[k]]
        elif op == _CONST:
            want_in, want_out = [], [alg.w[k]]
            c = fn.instruction_constant(k)
            if not (c == alg.value[k] or (c != c and alg.value[k] != alg.value[k])):
                return False
        else:
            want_in = [alg.a[k]] + ([alg.b[k]] if alg.b[k] >= 0 else [])
            want_out = [alg.w[k]]
        if list(ins) != [int(v) for v in want_in] or list(outs) != [int(v) for v in want_out]:
            return False
    return True


def _canon(code: int):
    return _caspar_op(code)
