"""An SXFunction's instruction list as NumPy arrays, straight from casadi's C++ API.

casadi's public ``Function::instruction_id / _input / _output / _constant`` describe
instruction k; from Python each is a SWIG call of 1-3.5 us.  ``sxexport.cpp`` makes
the same calls in one C++ loop (about 0.1 us an instruction) and writes the fields of
the :class:`~.sxdecode.Algorithm` the text decoder (:func:`.sxdecode.decode`) gives,
with ``in``/``out`` the instruction's input and output lists (-1: no such field):

=============  ======  =====  =====  ======  ======
op             w       a      b      idx     nz
=============  ======  =====  =====  ======  ======
OP_INPUT       out0    -1     -1     in0     in1
OP_OUTPUT      -1      in0    -1     out0    out1
others         out0    in0    in1    -1      -1
=============  ======  =====  =====  ======  ======

and ``value`` the constant of OP_CONST (0 elsewhere).  A program of at least
:data:`THREADED_MIN` instructions is read by up to :data:`MAX_THREADS` threads, one
range of instructions each (the calls only read the Function): 8 * 10^6 instructions
1.9 s -> 1.1-1.3 s on the 2-core VM.

The op codes are mapped, in the C++ loop, to the code the text decoder reports (ops
casadi prints alike decode as one: :func:`.sxdecode._calibrate`; ``x^2.5`` is
OP_CONSTPOW, read as OP_POW).  That map is made once per process on a probe (:func:`_map_probe`: every op
caspar reads, binary ones also with a constant argument), read both ways: an op is
mapped only where every one of its probe instructions reads the same both ways, so a
program holding any other op -- or a call (more than two inputs or outputs) -- gives
None here and the caller decodes the exported text, as before.

The library is built once per machine with the C++ compiler that builds caspar's
casadi loader (:func:`.casadi_loader.build`, cached under ``$CASPAR_CACHE_DIR/casadi``);
without one, :func:`read` gives None (the text path).  The casadi Function reaches C++
as SWIG's pointer to it (``int(fn.this)``), the arrays as their data pointers.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path

import numpy as np

from . import optable as T

SOURCE = Path(__file__).with_name("sxexport.cpp")
LIBRARY = "libcaspar_sx_export" + (".dylib" if sys.platform == "darwin" else ".so")

#: programs of at least this many instructions are read by several threads, at most
#: this many (and no more than the process may run on)
THREADED_MIN, MAX_THREADS = 200_000, 4

_INPUT, _OUTPUT, _CONST = (T.CODES[k] for k in ("OP_INPUT", "OP_OUTPUT", "OP_CONST"))
_P = ctypes.c_void_p
_lock = threading.Lock()
#: the loaded library (False: cannot be had in this process) and the op map
_state: dict = {"lib": None, "canon": None}


def library():
    """The ctypes library (built if missing), or None where it cannot be built."""
    with _lock:
        if _state["lib"] is None:
            from .casadi_loader import LoaderError, build

            try:
                lib = ctypes.CDLL(str(build(SOURCE, LIBRARY, "-O2", ("-pthread",))))
                fn = lib.caspar_sx_instructions
                fn.restype = ctypes.c_int64
                fn.argtypes = [_P, ctypes.c_int64] + [_P] * 7 + [ctypes.c_int64] * 4 \
                    + [_P, ctypes.c_int64]
                _state["lib"] = lib
            except (LoaderError, OSError, AttributeError):
                _state["lib"] = False
        return _state["lib"] or None


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:              # macOS
        return os.cpu_count() or 1


def raw(fn, canon=None):
    """The :class:`~.sxdecode.Algorithm` of SXFunction ``fn`` with casadi's own op
    codes (module docstring), or None (no library, a call, casadi refused); ``canon``
    (int64): each code mapped through it as it is read, None where a code is outside
    it or maps to -1."""
    from .sxdecode import Algorithm

    lib = library()
    if lib is None:
        return None
    K = int(fn.n_instructions())
    arrays = [np.empty(K, np.int64) for _ in range(6)] + [np.empty(K)]
    threads = min(MAX_THREADS, _cpus()) if K >= THREADED_MIN else 1
    canon = None if canon is None else np.ascontiguousarray(canon, np.int64)
    status = lib.caspar_sx_instructions(int(fn.this), K, *[a.ctypes.data for a in arrays],
                                        _INPUT, _OUTPUT, _CONST, threads,
                                        None if canon is None else canon.ctypes.data,
                                        0 if canon is None else canon.size)
    return Algorithm(*arrays) if status == 0 else None


def _map_probe():
    """An SXFunction with an instruction of every op caspar reads, binary ops also with
    a constant first or second argument (casadi then writes some as other ops:
    OP_CONSTPOW), and constants of each printed form."""
    import casadi as ca

    x, y, c = ca.SX.sym("x"), ca.SX.sym("y"), ca.SX(2.5)
    outs = []
    for name in list(T.DIRECT) + list(T.COMPOSED) + list(T.ALIAS):
        code = T.CODES[name]
        if T.KIND[code] == T.K_BINARY or T.ALIAS.get(name) == 2:
            outs += [ca.SX.binary(code, x, y), ca.SX.binary(code, x, c),
                     ca.SX.binary(code, c, x)]
        else:
            outs.append(ca.SX.unary(code, x))
    outs += [ca.SX(v) for v in (1.5, -2.25e-300, 2.5e-7, -3.0e8, np.inf, -np.inf, np.nan)]
    return ca.Function("caspar_map_probe", [x, y], outs)


def _canonical_ops() -> np.ndarray:
    """int64 (C,): for each casadi op code the code the text decoder reports for it,
    -1 where the probe's instructions of that op do not read alike both ways (or the
    op is not in the probe)."""
    from .sxdecode import decode

    probe = _map_probe()
    text = decode(probe)
    direct = raw(probe)
    C = max(T.CODES.values()) + 1
    canon = np.full(C, -1, np.int64)
    if text is None or direct is None:
        return canon
    same = np.ones(text.size, bool)
    for name in ("w", "a", "b", "idx", "nz"):
        same &= getattr(text, name) == getattr(direct, name)
    v, u = text.value, direct.value
    same &= (v == u) | (np.isnan(v) & np.isnan(u))
    codes = direct.op
    bad = np.zeros(C, bool)
    bad[codes[~same]] = True
    # one text op per casadi op (the probe holds each op once or alike)
    canon[codes] = text.op
    for c in np.unique(codes).tolist():
        if np.unique(text.op[codes == c]).size != 1:
            bad[c] = True
    canon[bad] = -1
    return canon


def canonical_ops() -> np.ndarray:
    """:func:`_canonical_ops`, made once per process."""
    with _lock:
        canon = _state["canon"]
    if canon is None:
        canon = _canonical_ops()
        with _lock:
            _state["canon"] = canon
    return canon


def read(fn):
    """The instruction program of SXFunction ``fn`` as an :class:`~.sxdecode.Algorithm`,
    as :func:`.sxdecode.decode` reads it from the exported text; None where this path
    does not apply (module docstring) and the caller decodes the text."""
    if fn.n_instructions() == 0 or fn.n_in() == 0:
        return None
    return raw(fn, canonical_ops())         # the codes mapped as they are read


def program(fn, text: bytes | None = None, compiled: bool = False):
    """The :class:`~.sxdecode.Algorithm` of SXFunction ``fn``: :func:`read` where it
    applies, else its exported ``text`` (exported here when None) decoded
    (:func:`.sxdecode.decode`, ``compiled`` as there); None where neither reads it."""
    from .sxdecode import decode

    alg = read(fn) if text is None else None
    return alg if alg is not None else decode(fn, text, compiled)
