"""Compiled loops of the bulk SX reader without Numba's start: C++ (``sxnative.cpp``).

The Numba loops (:mod:`.sxwalks`) pay a start in every fresh process (Numba's import
and its cached machine code: 0.5-1.5 s), so programs below
:data:`.bulk.COMPILED_MIN_INSTRUCTIONS` walk the DAG by NumPy passes
(:mod:`.sxwalks_numpy`), one per tree level.  The passes whose level count makes them
the costly ones there have a C++ twin here, built once per machine with the C++
compiler that builds caspar's casadi loader (:func:`.casadi_loader.build`) and loaded
by ctypes in about a millisecond; the NumPy passes use it when it can be had:

* :func:`hash_trees` -- :func:`.sxwalks.hash_trees`, the same arguments, results and
  in-place updates (SX polar case9241, 874,233 instructions: 0.4-0.5 s of NumPy
  passes -> about 0.02 s).

Without a compiler, :func:`library` is None and the NumPy passes run.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).with_name("sxnative.cpp")
LIBRARY = "libcaspar_sx_native" + (".dylib" if sys.platform == "darwin" else ".so")

_P, _I = ctypes.c_void_p, ctypes.c_int64
_lock = threading.Lock()
_state: dict = {"lib": None}


def library():
    """The ctypes library (built if missing), or None where it cannot be built."""
    with _lock:
        if _state["lib"] is None:
            from .casadi_loader import LoaderError, build

            try:
                lib = ctypes.CDLL(str(build(SOURCE, LIBRARY, "-O2")))
                fn = lib.caspar_hash_trees
                fn.restype = None
                fn.argtypes = [_I] + [_P] * 4 + [_I] + [_P] * 6 + [_I] * 3 + [_P] * 2
                _state["lib"] = lib
            except (LoaderError, OSError, AttributeError):
                _state["lib"] = False
        return _state["lib"] or None


def _in(a, dtype) -> int:
    """The data pointer of input ``a`` as a contiguous ``dtype`` array (kept alive by
    the caller's ``keep``)."""
    return np.ascontiguousarray(a, dtype).ctypes.data


def fits(*arrays_and_types) -> bool:
    """Whether each ``(array, dtype)`` pair is a contiguous array of that dtype (what
    the loops update in place)."""
    return all(isinstance(a, np.ndarray) and a.dtype == t and a.flags.c_contiguous
               for a, t in arrays_and_types)


def hash_trees(lib, op, a0, a1, leaf, not_leaf, h, vh, size, bake, bits, roots,
               max_depth, big):
    """:func:`.sxwalks.hash_trees` (module docstring) by ``lib`` (:func:`library`);
    ``h``, ``vh`` (uint64) and ``size`` (int64) contiguous (:func:`fits`)."""
    K = op.size
    keep = [np.ascontiguousarray(x, t) for x, t in (
        (op, np.int64), (a0, np.int64), (a1, np.int64), (leaf, np.int8), (bake, np.bool_),
        (bits, np.uint64), (roots, np.int64))]
    op, a0, a1, leaf, bake, bits, roots = keep
    inner = np.empty(K, np.bool_)
    height = np.empty(K, np.int64)
    lib.caspar_hash_trees(
        K, op.ctypes.data, a0.ctypes.data, a1.ctypes.data, leaf.ctypes.data, int(not_leaf),
        h.ctypes.data, vh.ctypes.data, size.ctypes.data, bake.ctypes.data, bits.ctypes.data,
        roots.ctypes.data, roots.size, int(max_depth), int(big), inner.ctypes.data,
        height.ctypes.data)
    return inner, height
