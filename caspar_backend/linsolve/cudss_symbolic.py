"""cuDSS's symbolic analysis of one KKT structure, shared by the solves of a compiled problem.

cuDSS's ANALYSIS phase (nested-dissection reordering on the host, symbolic factorization
on the device) costs about as much as the rest of a GPU solve of a large AC-OPF: 0.47 s
of the 0.98 s of case9241_pegase on the H200 (docs/cudss.md).  It depends on the
structure alone, and the structure is a function of the compiled problem and the KKT
options (:func:`caspar_backend.kkt.make_kkt_system` keys it so), so it is done once per
structure and kept, as :class:`~.qdldl.QDLDLSymbolic` keeps qdldl's:

* :class:`CudssSymbolic` holds what every solver of the structure reads and nobody
  writes -- the CSR index arrays cuDSS points to (``indptr`` (N+1,), ``indices`` (nnz,)
  int32 on the device) and both triangles as CSR for the matrix-vector product
  (:func:`full_symmetric_csr`) -- and the idle analysed systems;
* a :class:`CudssPlan` is one analysed system: the handle and the three arrays it alone
  points to (``values`` (nnz,), ``b`` and ``x`` (N,) float64).  A solver takes one at
  :meth:`~.cudss.CudssSolver.analyse`, factorizes and solves through it, and gives it
  back at :meth:`~.cudss.CudssSolver.release`; a plan serves one solve at a time.

A system analysed afresh (a concurrent solve, a new Problem of the same model, a later
process) takes the ordering an earlier analysis of the structure chose
(:mod:`.cudss_ordering`, keyed by :meth:`CudssSymbolic.ordering_key`) instead of
reordering again.

A later solve refactorizes the same analysed handle with its own values (what every
iteration already does): the same iterations and the first solve's answer to rounding
(case9241_pegase on the H200: 57 iterations, objective equal to 12 digits, 0.98 s ->
0.50 s).  Not to the bit: cuDSS's factorizations of one matrix on two handles agree in
all but the last bits.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from .base import SparseStructure
from .cudss_ordering import ordering_key


def full_symmetric_csr(structure: SparseStructure, xp=np):
    """Both triangles of the matrix given by its upper CSC, as CSR ``(ptr, col, src)``
    (int64 arrays of ``xp``, computed there): ``src[k]`` is the position of entry k in
    the upper-triangle values."""
    n = structure.n
    indptr, rows = xp.asarray(structure.indptr), xp.asarray(structure.indices)
    pos = xp.arange(rows.size, dtype=xp.int64)
    cols = xp.searchsorted(indptr, pos, side="right") - 1     # column of each entry
    off = rows != cols
    r = xp.concatenate([rows, cols[off]])
    c = xp.concatenate([cols, rows[off]])
    s = xp.concatenate([pos, pos[off]])
    order = xp.argsort(r * n + c)          # distinct keys: (row, col) order
    ptr = xp.zeros(n + 1, xp.int64)
    if r.size:
        xp.cumsum(xp.bincount(r, minlength=n), out=ptr[1:])
    return ptr, c[order], s[order]


@dataclass
class CudssPlan:
    """Final.  One cuDSS system of a structure: ``handle``
    (:class:`~.cudss_handle.CudssHandle`) and the device arrays it points to besides the
    shared indices (``values`` (nnz,), ``b``, ``x`` (N,) float64); ``analysed``: whether
    its ANALYSIS phase has run."""

    handle: object
    values: object
    b: object
    x: object
    analysed: bool = False


class CudssSymbolic:
    """Final.  The shared part of cuDSS's work on ``structure`` (module doc), on the
    device of CuPy module ``cp``."""

    #: idle analysed systems kept: each holds a factorization's device memory between
    #: solves (gigabytes at 10^5 buses), so one; concurrent solves beyond it analyse
    #: their own
    MAX_IDLE = 1

    def __init__(self, structure: SparseStructure, cp):
        self.structure = structure
        self.cp = cp
        self.indptr = cp.asarray(structure.indptr.astype(np.int32))
        self.indices = cp.asarray(structure.indices.astype(np.int32))
        self.full = full_symmetric_csr(structure, cp)
        self._idle = []
        self._lock = threading.Lock()
        self._keys = {}

    def ordering_key(self, pivoting: bool, levels: int, version: tuple) -> str:
        """The :func:`~.cudss_ordering.ordering_key` of this structure under these
        settings (hashed once per setting)."""
        settings = (bool(pivoting), int(levels), tuple(version))
        with self._lock:
            key = self._keys.get(settings)
        if key is None:
            s = self.structure
            key = ordering_key(s.indptr, s.indices, s.n, *settings)
            with self._lock:
                self._keys[settings] = key
        return key

    def take(self, hybrid_memory: bool, pivoting: bool) -> CudssPlan | None:
        """An idle analysed plan made with these settings, now the caller's; None when
        there is none."""
        with self._lock:
            for i, plan in enumerate(self._idle):
                h = plan.handle
                if h.hybrid_memory == bool(hybrid_memory) and h.pivoting == bool(pivoting):
                    return self._idle.pop(i)
        return None

    def give(self, plan: CudssPlan) -> None:
        """Take back ``plan`` (taken from here or made on this structure's arrays) once
        its work is done (the caller synchronized its stream); a plan never analysed, or
        one beyond :attr:`MAX_IDLE`, is freed."""
        if plan.analysed:
            with self._lock:
                if len(self._idle) < self.MAX_IDLE:
                    self._idle.append(plan)
                    return
        plan.handle.free()
