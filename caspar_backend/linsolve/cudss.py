"""LDL^T with inertia on the GPU: cuDSS through nvmath-python's ``DirectSolver``.

Input (see :mod:`.base`): an ``N x N`` symmetric matrix by its **upper triangle in CSC**
(int64 ``indptr``/``indices``, 0-based, sorted, every diagonal present) and float64
values on the device.  The upper triangle in CSC *is* the lower triangle in CSR (entry
``(i, j), i <= j`` of column ``j`` is entry ``(j, i)`` of row ``j``), so cuDSS receives
the same index arrays (as int32, which cuDSS requires) as a ``cupyx.scipy.sparse``
CSR matrix with

    sparse_system_type = SYMMETRIC,   sparse_system_view = LOWER.

Phases, matching the interface:

* ``analyse``: builds the CSR operand, a device right-hand side buffer and the
  ``DirectSolver``; the symbolic analysis (reordering, ``plan()``) runs once, at the
  first :meth:`factorize`, and is timed separately (:attr:`plan_seconds`).
* ``factorize(values)``: copies ``values`` into the operand's data array **in place**
  (nvmath keeps pointers to GPU operands, so the next ``factorize()`` sees the new
  values: nvmath's in-place update path, no ``reset_operands``), refactorizes
  numerically and reads ``info`` and ``inertia = (n_pos, n_neg)`` back from the
  factorization result; ``n_zero = N - n_pos - n_neg``.  ``info != 0`` (a zero pivot
  or failure) is reported as singular.
* ``solve(rhs)``: copies ``rhs`` into the right-hand side buffer and solves.

cuDSS's symmetric-indefinite LDL^T pivots only *statically* (tiny pivots are replaced
by +-eps rather than exchanged), so a singular or badly conditioned matrix can factorize
with a plausible inertia.  The caller therefore refines iteratively against the true
matrix and checks the residual (:meth:`AugmentedKKT.solve
<caspar_backend.kkt.augmented.AugmentedKKT.solve>`); :meth:`matvec` computes ``K x``
with both triangles by a deterministic CSR kernel (one thread per row, no atomics, no
allocation when ``out`` is given).

nvmath-python and cuDSS are imported lazily; when they are missing,
:class:`~caspar_backend.errors.DeviceError` names the pip extra to install.
"""

from __future__ import annotations

import logging
import os
import sys
import time

import numpy as np

from .base import Factorization, LinearSolver, SparseStructure


_THREADS = 256


def _import_nvmath():
    from ..device import INSTALL_HINT
    from ..errors import DeviceError

    try:
        import nvmath.sparse.advanced as adv
        from nvmath.bindings import cudss

        cudss.get_property(0)         # loads libcudss now: a missing library fails here
    except Exception as e:   # ImportError, or the cuDSS shared library failing to load
        raise DeviceError(f"the cuDSS linear solver needs nvmath-python and cuDSS "
                          f"({type(e).__name__}: {e}); {INSTALL_HINT}") from e
    return adv


def cudss_problem() -> str | None:
    """``None`` when nvmath-python with cuDSS imports, else why not."""
    try:
        _import_nvmath()
    except Exception as e:
        return str(e)
    return None


def _mtlayer_path() -> str | None:
    """cuDSS's OpenMP threading layer shipped in the cuDSS wheel (speeds up planning);
    ``CUDSS_THREADING_LIB`` overrides."""
    env = os.environ.get("CUDSS_THREADING_LIB")
    if env:
        return env if os.path.isfile(env) else None
    for base in sys.path:
        p = os.path.join(base or ".", "nvidia", "cu13", "lib", "libcudss_mtlayer_gomp.so.0")
        if os.path.isfile(p):
            return p
    return None


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


class CudssSolver(LinearSolver):
    """Final.  ``hybrid_memory``: keep the factors in host memory (cuDSS hybrid memory
    mode) for systems whose factors do not fit on the device."""

    name = "cudss"

    def __init__(self, hybrid_memory: bool = False):
        self._adv = _import_nvmath()
        import cupy as cp

        self.cp = cp
        self.hybrid_memory = bool(hybrid_memory)
        self.structure = None
        self._solver = None
        self.plan_seconds = 0.0
        self.planned = False

    def analyse(self, structure: SparseStructure) -> None:
        import cupyx.scipy.sparse as csp

        cp = self.cp
        n = structure.n
        if structure.nnz >= 2 ** 31:
            from ..errors import DeviceError

            raise DeviceError("KKT matrix has more than 2^31 entries: beyond cuDSS int32 "
                              "indices")
        self.structure = structure
        # upper CSC read as lower CSR (same arrays)
        self._A = csp.csr_matrix(
            (cp.zeros(structure.nnz), cp.asarray(structure.indices.astype(np.int32)),
             cp.asarray(structure.indptr.astype(np.int32))), shape=(n, n))
        self._b = cp.zeros(n)
        self._full = full_symmetric_csr(structure, cp)
        # the refinement's K x: the upper-triangle values read through the full CSR
        from ..kkt.arrays import _indexed_matvec_kernel

        self._mv = _indexed_matvec_kernel(cp)
        self._grid = (max(1, (n + _THREADS - 1) // _THREADS),)
        self._solver = self._make_solver(_mtlayer_path())
        self.planned = False

    def _make_solver(self, mtlib):
        adv = self._adv
        from nvmath.bindings import cudss

        opts = adv.DirectSolverOptions(
            sparse_system_type=cudss.MatrixType.SYMMETRIC,
            sparse_system_view=cudss.MatrixViewType.LOWER,
            multithreading_lib=mtlib,
            # nvmath logs each phase at INFO on the root logger by default
            logger=logging.getLogger("caspar_backend.cudss"))
        execution = "cuda" if not self.hybrid_memory else adv.ExecutionCUDA(
            hybrid_memory_mode_options=adv.HybridMemoryModeOptions(hybrid_memory_mode=True))
        try:
            return adv.DirectSolver(self._A, self._b, options=opts, execution=execution)
        except Exception:
            if mtlib is None:
                raise
            # the threading layer is an optimization: never fail because of it
            return self._make_solver(None)

    def factorize(self, values) -> Factorization:
        cp = self.cp
        n = self.structure.n
        cp.copyto(self._A.data, values)
        if not self.planned:
            t = time.perf_counter()
            self._solver.plan()
            cp.cuda.get_current_stream().synchronize()
            self.plan_seconds += time.perf_counter() - t
            self.planned = True
        fi = self._solver.factorize()
        # reading info/inertia copies from cuDSS's device data: wait for the factorization
        cp.cuda.get_current_stream().synchronize()
        if int(fi.info) != 0:
            return Factorization(False, 0, 0, n)
        pos, neg = (int(v) for v in np.asarray(fi.inertia).reshape(-1)[:2])
        zero = n - pos - neg
        return Factorization(zero == 0, pos, neg, zero)

    def solve(self, rhs, out=None):
        self.cp.copyto(self._b, rhs)
        x = self._solver.solve()
        if out is None:
            return x
        out[...] = x
        return out

    def matvec(self, x, out=None):
        if out is None:
            out = self.cp.empty(self.structure.n)
        ptr, col, src = self._full
        self._mv(self._grid, (_THREADS,), (ptr, col, src, self._A.data, x, out,
                                           np.int32(self.structure.n)))
        return out

    def free(self) -> None:
        if self._solver is not None:
            self._solver.free()
            self._solver = None

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass
