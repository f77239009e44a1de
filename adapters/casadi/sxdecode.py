"""An SXFunction's instruction list as NumPy arrays, decoded in bulk.

casadi's Python API hands out the instruction program one instruction at a time
(``instruction_id(k)``, ``instruction_input(k)``, ``instruction_output(k)``: three
SWIG calls, 1-3.5 us each).  Its C++ side can write the whole program at once as
text: ``Function.export_code('matlab')`` prints one line per instruction, in
instruction order, about 0.5 us each,

    w<o> = argin_<i>(<nz+1>);             OP_INPUT
    w<o> = <constant, %.16e>;             OP_CONST
    w<o> = <op printed over w<a>, w<b>>;  unary and binary ops: (w3+w7), sin(w2), ...
    argout_<i>{<nz+1>} = w<a>;            OP_OUTPUT

and :func:`decode` reads that text in one compiled pass (:mod:`.sxscan`, Numba), none
per line in Python:

* **forms**: a line's *skeleton* -- the line with its digits deleted
  (``  w = (w+w);``), one per op -- is hashed (64 bits, with its length) and looked
  up in a table *calibrated* at first use against casadi itself (a probe Function
  holding every op caspar reads, exported and compared with ``instruction_id``): its
  op, how many digit runs its lines hold and which runs are the operands.  Ops that
  casadi prints alike (``OP_POW``, ``OP_CONSTPOW``: ``w1.^w2``) share a skeleton only
  where caspar builds them alike;
* **numbers**: the line's digit runs, parsed as the hash is taken; their count must
  be the form's, and the form names which are the slot written and the operands;
* **constants** are parsed by NumPy from their ``%.16e`` text (fixed width),
  which round-trips doubles exactly.

The result is checked against casadi's per-instruction API on a sample of
instructions (the first and last ones and a spread in between).  Any surprise --
export refused (a Function holding calls), a skeleton not in the table, a count
or a sample that differs -- returns None, and the caller reads the program the
per-instruction way.

:class:`Algorithm` (all arrays int64 of length K = number of instructions, -1
where a field does not apply): ``op`` the casadi op code (the first code of its
skeleton), ``w`` the work slot written, ``a``/``b`` the work slots read,
``idx``/``nz`` the input (OP_INPUT) or output (OP_OUTPUT) index and nonzero,
``value`` float64 (K,) the constant of OP_CONST (0 elsewhere).
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
def _body(text: bytes) -> memoryview | None:
    """The instruction lines of a MATLAB export (each ending in a newline), a view of
    ``text`` (no copy)."""
    head = text.rfind(b"= nonzeros_gen(varargin{")
    if head < 0:
        return None
    lo = text.find(b"\n", head) + 1
    # the last instruction writes an output (every value feeds one): the body ends
    # with the last 'argout_<i>{...} = w<a>;' line, whatever trailer follows
    last = text.rfind(b"\n  argout_")
    hi = text.find(b"\n", last + 1) + 1 if last >= lo else 0
    if lo <= 0 or hi <= 0:
        return None
    return memoryview(text)[lo:hi]


# ---------------------------------------- the NumPy decoder (smaller programs)
#: bytes of a skeleton line in its key (with the length; the table check is exact)
_KEYW = 24
_PAD = 64
_DIGITS = b"0123456789"
_BLANK_ALL_BUT_DIGITS = bytes(c if 48 <= c <= 57 else 32 for c in range(256))


def _line_starts(buf: np.ndarray) -> np.ndarray:
    """Start of every line of ``buf`` (each line ends in a newline), int64."""
    ends = np.flatnonzero(buf == 10)
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1] + 1
    return starts


def _windows(buf: np.ndarray, pos, width: int) -> np.ndarray:
    """(len(pos), width) uint8: ``buf[pos + j]`` (``buf`` ends in _PAD zero bytes)."""
    view = np.lib.stride_tricks.as_strided(buf, (buf.size - _PAD, width), (1, 1))
    return view[pos]


def _skeleton_keys(skel: bytes):
    """``(keys uint64, starts, lengths)`` of the lines of the digit-free body."""
    buf = np.frombuffer(skel + bytes(_PAD), np.uint8)
    starts = _line_starts(buf[:-_PAD])
    lens = np.diff(np.append(starts, len(skel))) - 1      # without the newline
    parts = _windows(buf, starts, _KEYW).view("<u8")      # (L, 3), past the line: 0'd
    key = lens.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for j, m in enumerate((0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)):
        keep = np.clip(lens - 8 * j, 0, 8).astype(np.uint64) * np.uint64(8)  # bits
        mask = np.where(keep >= 64, ~np.uint64(0),
                        (np.uint64(1) << np.minimum(keep, np.uint64(63))) - np.uint64(1))
        key = (key ^ ((parts[:, j] & mask) * np.uint64(m))) * np.uint64(0xFF51AFD7ED558CCD)
        key ^= key >> np.uint64(29)
    return key, starts, lens


def _distinct(key: np.ndarray):
    """``(first, inv)``: the first line of each distinct key and each line's key
    number.  A program has a few dozen line forms: their keys are binned by 16 of
    their bits (linear time, no sort) and checked to be one key per bin; only
    where two forms share a bin does it sort (``numpy.unique``)."""
    b = (key >> np.uint64(48)).astype(np.int64)
    n = key.size
    first_of_bin = np.full(1 << 16, n, np.int64)
    first_of_bin[b[::-1]] = np.arange(n - 1, -1, -1)     # last write wins: the first
    used = np.flatnonzero(first_of_bin < n)
    if np.array_equal(key, key[first_of_bin[b]]):
        number = np.zeros(1 << 16, np.int64)
        number[used] = np.arange(used.size)
        return first_of_bin[used], number[b]
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return first, inv.reshape(-1)


# --------------------------------------------------------------- calibration
_TABLE: dict | None = None


def _probe_function():
    """An SXFunction with one instruction of every op caspar reads, plus constants of
    each printed form."""
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    outs = []
    for name in list(T.DIRECT) + list(T.COMPOSED) + list(T.ALIAS):
        c = T.CODES[name]
        two = T.KIND[c] == T.K_BINARY or T.ALIAS.get(name) == 2
        outs.append(ca.SX.binary(c, x, y) if two else ca.SX.unary(c, x))
    outs += [ca.SX(v) for v in (1.5, -2.25e-300, 2.5e-7, -3.0e8, np.inf, -np.inf, np.nan)]
    return ca.Function("caspar_probe", [x, y], outs)


def _form(line: str, op: int) -> tuple:
    """``(op, runs, i_a, i_b, i_idx, i_nz)`` of a line: its digit-run count and the
    run numbers (within the line) of operand a, operand b, index, nonzero (-1: none)."""
    runs = list(re.finditer(r"\d+", line))
    after_w = [k for k, r in enumerate(runs) if line[r.start() - 1] == "w"]
    if op == _OUTPUT:                    # argout_<i>{<nz+1>} = w<a>;
        return (op, len(runs), after_w[0], -1, 0, 1)
    if op == _INPUT:                     # w<o> = argin_<i>(<nz+1>);
        return (op, len(runs), -1, -1, 1, 2)
    if op == _CONST:
        return (op, len(runs), -1, -1, -1, -1)
    ops = after_w[1:]                    # after_w[0] is o
    return (op, len(runs), ops[0], ops[1] if len(ops) > 1 else -1, -1, -1)


def _calibrate() -> dict:
    """skeleton line -> :func:`_form` of every line form the probe prints."""
    fn = _probe_function()
    body = _body(program_text(fn))
    lines = bytes(body).decode("ascii").splitlines()
    ids = [fn.instruction_id(k) for k in range(fn.n_instructions())]
    if len(lines) != len(ids):
        raise RuntimeError("casadi's MATLAB export does not print one line per instruction")
    table: dict = {}
    for line, op in zip(lines, ids):
        form = _form(line, op)
        skel = re.sub(r"\d", "", line)
        old = table.setdefault(skel, form)
        if old != form and (_caspar_op(old[0]) != _caspar_op(op) or old[1:] != form[1:]):
            table[skel] = None  # printed alike, read differently: never decoded
    return table


def _caspar_op(code: int):
    name = T.NAMES.get(code, "")
    return T.DIRECT.get(name) or name


def _table() -> dict:
    global _TABLE
    if _TABLE is None:
        _TABLE = _calibrate()
    return _TABLE


_FORMS = None


def _form_table():
    """:func:`_table` as the compiled loop's :class:`.sxscan.FormTable`."""
    global _FORMS
    if _FORMS is None:
        from .sxscan import FormTable

        _FORMS = FormTable.build(_table())
    return _FORMS


# -------------------------------------------------------------------- decode
def program_text(fn) -> bytes | None:
    """``fn.export_code('matlab')``, UTF-8 encoded: every instruction of SXFunction
    ``fn`` as text (the input of :func:`decode`), or None where casadi cannot export
    it."""
    try:
        return fn.export_code("matlab").encode()
    except RuntimeError:
        return None


def decode(fn, text: bytes | None = None, compiled: bool = False) -> Algorithm | None:
    """The instruction program of SXFunction ``fn`` as an :class:`Algorithm`, or None
    where the bulk decoding does not apply (module docstring); ``text``: its
    :func:`program_text` when the caller has it already; ``compiled``: by the compiled
    pass (:mod:`.sxscan`), else by NumPy passes (:func:`_decode_numpy`), the same
    result."""
    K = fn.n_instructions()
    if K == 0 or fn.n_in() == 0:
        return None
    if text is None:
        text = program_text(fn)
    if text is None:
        return None
    body = _body(text)
    del text
    if body is None:
        return None
    alg = _decode(body, K) if compiled else _decode_numpy(bytes(body), K)
    return alg if alg is not None and _agrees(fn, alg) else None


def _decode(body: memoryview, K: int) -> Algorithm | None:
    from .sxscan import OK, decode_lines

    forms = _form_table()
    buf = np.frombuffer(body, np.uint8)
    status, _, op, w, a, b, idx, nz, starts = decode_lines(
        buf, K, forms.slot_key, forms.slot_form, forms.op, forms.runs, forms.ia, forms.ib,
        forms.ii, forms.inz, _OUTPUT)
    if status != OK:
        return None
    value = np.zeros(K)
    ci = np.flatnonzero(op == _CONST)
    if ci.size:
        value[ci] = _constants(buf, starts, w[ci], ci)
    return Algorithm(op, w, a, b, idx, nz, value)


def _decode_numpy(body: bytes, K: int) -> Algorithm | None:
    """:func:`_decode` by NumPy passes (programs below the compiled threshold):
    the digits blanked for ``numpy.fromstring``, the skeletons keyed by their first
    bytes and length, the distinct keys binned (:func:`_distinct`)."""
    skel = body.translate(None, _DIGITS)
    key, sstart, slen = _skeleton_keys(skel)
    if key.size != K:
        return None
    first, inv = _distinct(key)
    table = _table()
    forms = []
    for i in first.tolist():
        s = int(sstart[i])
        forms.append(table.get(skel[s:s + int(slen[i])].decode("ascii")))
    del skel
    if any(f is None for f in forms):
        return None
    op_f, nrun_f, ia_f, ib_f, ii_f, inz_f = (np.array(c, np.int64) for c in zip(*forms))
    tok = np.fromstring(body.translate(_BLANK_ALL_BUT_DIGITS), dtype=np.int64, sep=" ")
    nrun = nrun_f[inv]
    off = np.cumsum(nrun) - nrun                     # the line's first run
    if int(nrun.sum()) != tok.size:
        return None

    def run(i_f):
        i = i_f[inv]
        return np.where(i >= 0, np.take(tok, off + i, mode="clip"), -1)

    op = op_f[inv]
    out = op == _OUTPUT
    w = np.where(out, -1, tok[np.minimum(off, tok.size - 1)])
    idx = run(ii_f)
    nz = np.where(inz_f[inv] >= 0, run(inz_f) - 1, -1)
    value = np.zeros(K)
    ci = np.flatnonzero(op == _CONST)
    if ci.size:
        buf = np.frombuffer(body, np.uint8)
        value[ci] = _constants(buf, _line_starts(buf), w[ci], ci)
    return Algorithm(op, w, run(ia_f), run(ib_f), idx, nz, value)


def _constants(buf: np.ndarray, starts, o: np.ndarray, lines: np.ndarray) -> np.ndarray:
    """Values of the constant lines ``lines`` (``  w<o> = <value>;``, never the last
    line: the program ends with an output), float64; ``starts`` every line's first
    byte."""
    e = starts[lines] + 3 + (np.searchsorted(10 ** np.arange(1, 19), o, side="right")
                             + 1) + 3              # after '  w<o> = '
    end = starts[lines + 1] - 2                      # before ';\n'
    width = 26
    W = buf[np.minimum(e[:, None] + np.arange(width), buf.size - 1)]
    W = np.where(np.arange(width) < (end - e)[:, None], W, 0).astype(np.uint8)
    return np.ascontiguousarray(W).view(f"S{width}").reshape(-1).astype(np.float64)


def _agrees(fn, alg: Algorithm) -> bool:
    """The decoded program against casadi's per-instruction API on a sample."""
    K = alg.size
    head = np.arange(min(K, _SAMPLE // 3))
    tail = np.arange(max(0, K - _SAMPLE // 3), K)
    mid = np.linspace(0, K - 1, _SAMPLE // 3).astype(np.int64)
    for k in np.unique(np.concatenate([head, tail, mid])).tolist():
        op = fn.instruction_id(k)
        if _caspar_op(op) != _caspar_op(int(alg.op[k])):
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
