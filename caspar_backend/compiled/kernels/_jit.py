"""The Numba decorator every kernel of this package uses, the slot accessors, and the
on-disk cache location.

Compile flags (``kernel``), each for a measured reason (docs/compiled-ipm-prototype.md):

* ``error_model='numpy'``: IEEE results (x/0 = inf, log(0) = -inf) instead of Python's
  ZeroDivisionError; the interior point relies on inf/nan like the NumPy path does.
* ``_nrt=False``: no reference counting; nothing is allocated inside a kernel (every array
  is a slice of the caller's buffers), and NRT's incref/decref per array argument doubled
  the time per solve.
* ``nogil=True``: threads may solve concurrently, each with its own float workspace.
* ``parallel=True`` only for :func:`parallel_kernel`'s loops over independent instances
  (``prange``): the batch's instances on Numba's native threads, the GIL released for the
  whole call, no Python thread handed work per call.
* ``fastmath`` stays off: FMA contraction would change the bits of the results.
* ``cache=True``: compiled once per machine, see :class:`KernelCacheLocator`.

Slots: a kernel reads array ``k`` of a buffer as ``buf[off[k]:off[k + 1]]`` (:func:`_f`,
:func:`_i`), ``k`` a module-level constant of :mod:`.slots` (a compile-time
constant for Numba).  Slicing allocates nothing.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit
from numba.core import caching

from ..cache import STAMP as _STAMP
from ..cache import KERNEL_DIR as _PKG_DIR
from ..cache import kernel_cache_dir


class KernelCacheLocator(caching._CacheLocator):
    """Numba cache locator for the kernels of this folder only (other files: ``None``, so
    Numba's own locators apply).  Numba adds its version, the CPU name and features to
    every entry's key itself."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(kernel_cache_dir())

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return _STAMP

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        if Path(py_file).resolve().parent != _PKG_DIR:
            return None
        self = cls(py_func, py_file)
        try:
            self.ensure_cache_path()
        except OSError:         # not writable: Numba falls back to its own locators
            return None
        return self


if KernelCacheLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, KernelCacheLocator)


#: an index read from a structure array, as unsigned (``a[U(idx[k])]``): Numba indexes
#: with a signed integer through a test for a negative index (Python's wraparound) on
#: every access, with an unsigned one directly.  The structure's indices are never
#: negative; in the factorization's inner loop the test was 10-40 % of its time on the CPU,
#: and without it the tape interpreter's chunk loops vectorize
U = np.uint64


def kernel(fn):
    """``numba.njit`` with this package's flags (module docstring)."""
    return njit(cache=True, nogil=True, _nrt=False, error_model="numpy")(fn)


def parallel_kernel(fn):
    """:func:`kernel` with ``parallel=True``: ``fn``'s ``prange`` loop runs on Numba's
    threading layer (module docstring)."""
    return njit(cache=True, nogil=True, _nrt=False, error_model="numpy", parallel=True)(fn)


def _accessor(fn):
    # inlined in Numba's IR: without NRT a compiled function may only return an array
    # that was passed in, not a view of one
    return njit(cache=True, nogil=True, _nrt=False, error_model="numpy",
                inline="always")(fn)


@_accessor
def _f(Fb, FO, k):
    """Float slot ``k``: ``Fb[FO[k]:FO[k + 1]]``."""
    return Fb[FO[k]:FO[k + 1]]


@_accessor
def _fv(Fb, FO, Ib, IO, k):
    """QDLDL's working vector ``k`` (F_LDL_T, F_LDL_YVALS, F_LDL_D, F_LDL_DINV):
    ``Fb[FO[k]:FO[k + 1]]``; the CUDA build may hold it in the team's shared memory
    (:func:`..cuda.accessors.working_vector`), hence ``Ib``."""
    return Fb[FO[k]:FO[k + 1]]


@_accessor
def _i(Ib, IO, k):
    """Int slot ``k``: ``Ib[IO[k]:IO[k + 1]]``."""
    return Ib[IO[k]:IO[k + 1]]
