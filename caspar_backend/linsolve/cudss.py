"""LDL^T with inertia on the GPU: cuDSS through nvmath-python's low-level bindings.

Input (see :mod:`.base`): an ``N x N`` symmetric matrix by its **upper triangle in CSC**
(int64 ``indptr``/``indices``, 0-based, sorted, every diagonal present) and float64
values on the device.  The upper triangle in CSC *is* the lower triangle in CSR (entry
``(i, j), i <= j`` of column ``j`` is entry ``(j, i)`` of row ``j``), so cuDSS receives
the same index arrays (as int32, which cuDSS requires) as a CSR matrix with

    matrix type = SYMMETRIC,   matrix view = LOWER.

The cuDSS objects live in a :class:`~.cudss_handle.CudssHandle` (the C API only); this
module keeps caspar's side.  Phases, matching the interface:

* ``analyse``: allocates, once, the device arrays cuDSS keeps pointers to (the CSR
  values, the right-hand side ``b`` and the solution ``x``) and creates the handle; the
  symbolic analysis (reordering, cuDSS's ANALYSIS phase) runs once, at the first
  :meth:`factorize`, and is timed separately (:attr:`plan_seconds`).  With a shared
  analysis (:meth:`CudssSolver.symbolic`, :mod:`.cudss_symbolic`) the handle and its
  arrays are borrowed already analysed when an earlier solve of the structure gave
  them back (:meth:`CudssSolver.release`): ``plan_seconds`` stays 0.  An analysis
  afresh takes the ordering of an earlier analysis of the same pattern, in this process
  or an earlier one, instead of cuDSS's reordering (:mod:`.cudss_ordering`;
  :attr:`CudssSolver.ordering_reused`).
* ``factorize(values)``: copies ``values`` into the CSR values array **in place** (the
  next phase reads the new values through the same pointer), refactorizes numerically,
  waits for the stream and reads ``inertia = (n_pos, n_neg)`` back, and ``info`` where
  the inertia misses pivots; ``n_zero = N - n_pos - n_neg``.  ``info != 0`` (a zero
  pivot) is reported as singular.
* ``solve(rhs, out=None)``: copies ``rhs`` into ``b``, solves into ``x``, and returns a
  copy of ``x`` (or writes it into ``out``): the caller's iterative refinement keeps the
  first solution while it solves for corrections.

Pivoting depends on the loaded cuDSS (:attr:`CudssSolver.pivoting`).  cuDSS 0.8's
symmetric-indefinite LDL^T pivots only *statically* (tiny pivots are replaced by +-eps
rather than exchanged), so a singular or badly conditioned matrix can factorize with a
plausible inertia.  From cuDSS 1.0 on, caspar selects Bunch-Kaufman pivoting (1x1 and
2x2 pivots chosen by magnitude, ``CUDSS_PIVOT_BUNCH_KAUFMAN``; ``pivoting = True``),
which keeps pivots that a fixed elimination order loses to cancellation and reads the
inertia off a pivoting factorization; an *exactly* zero pivot it perturbs rather than
reports (info 0), so even then a singular K shows in the refinement's residual, not in
``info``.  Either way the caller refines iteratively
against the true matrix and checks the residual (:meth:`AugmentedKKT.solve
<caspar_backend.kkt.augmented.AugmentedKKT.solve>`); :meth:`matvec` computes ``K x``
with both triangles by a deterministic CSR kernel (one thread per row, no atomics, no
allocation when ``out`` is given).

Since cuDSS replaces a tiny pivot by +-eps with or without Bunch-Kaufman
(:attr:`CudssSolver.perturbs_pivots`), a small system (``N <= DENSE_MAX_N``) can be
switched for the rest of the solve to the dense eigendecomposition on the device
(:class:`~.dense_eigen.DenseEigenSolver`, cuSOLVER ``syevd``: exact inertia, a zero
eigenvalue reported as zero) by :meth:`enable_pivoting`, which the KKT system calls when
the refinement fails against a factorization with a replaced pivot or when the
factorization reports a zero pivot with delta_w > 0.  Reason: where delta_w falls below
cuDSS's pivot epsilon (an unbounded LP), the replaced pivot caps the step, so the iterates
grow linearly instead of diverging and the solve never reports unboundedness.

Supported cuDSS versions: :data:`~.cudss_handle.SUPPORTED_CUDSS` (0.8.x and 1.x).  The
install extras ask for 1.x: nvmath-python loads cuDSS through cuda-pathfinder, which
finds ``libcudss.so.1`` from version 1.9 on (before, ``libcudss.so.0`` only), so the extras
pin ``cuda-pathfinder>=1.9`` too.  The measurements behind these choices, with dates:
``docs/cudss.md``.  nvmath-python and cuDSS are imported lazily; when they are missing, or the loaded cuDSS
is of another version, :class:`~caspar_backend.errors.DeviceError` says so and names the
pip extra to install.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from ..arrays import fused
from ..arrays.xp import copy_into
from . import cudss_handle, cudss_ordering
from .base import Factorization, LinearSolver, SparseStructure
from .cudss_symbolic import CudssPlan, CudssSymbolic, full_symmetric_csr  # noqa: F401
from .dense_eigen import DENSE_MAX_N, DenseEigenSolver


_THREADS = 256


def _import_nvmath() -> tuple:
    """``(major, minor, patch)`` of the loaded cuDSS, after checking that nvmath-python's
    cuDSS bindings import, the library loads and its version is supported."""
    from ..errors import DeviceError
    from ..gpu_install import INSTALL_HINT

    try:
        version = cudss_handle.cudss_version()   # loads libcudss: a missing one fails here
    except Exception as e:   # ImportError, or the cuDSS shared library failing to load
        raise DeviceError(f"the cuDSS linear solver needs nvmath-python and cuDSS "
                          f"({type(e).__name__}: {e}); {INSTALL_HINT}") from e
    if not cudss_handle.supported(version):
        raise DeviceError(f"the loaded cuDSS is version {'.'.join(map(str, version))}, "
                          f"caspar supports cuDSS {cudss_handle.SUPPORTED_TEXT}; "
                          f"{INSTALL_HINT}")
    return version


def cudss_problem() -> str | None:
    """``None`` when nvmath-python with a supported cuDSS imports, else why not."""
    try:
        _import_nvmath()
    except Exception as e:
        return str(e)
    return None


#: sonames of cuDSS's OpenMP threading layer: ``.so.<cuDSS major version>``
_MTLAYER = "libcudss_mtlayer_gomp.so.{}"
_MTLAYER_MAJORS = (0, 1)


def _mtlayer_path(major: int | None = None) -> str | None:
    """cuDSS's OpenMP threading layer shipped in the cuDSS wheel (speeds up planning),
    under ``nvidia/cu13/lib`` or ``nvidia/cu12/lib`` on ``sys.path``: the soname of the
    loaded cuDSS's ``major`` version first (cuDSS 0.x ships ``.so.0``, 1.x ``.so.1``);
    ``CUDSS_THREADING_LIB`` overrides.  ``None`` when there is none."""
    env = os.environ.get("CUDSS_THREADING_LIB")
    if env:
        return env if os.path.isfile(env) else None
    for m in sorted(_MTLAYER_MAJORS, key=lambda m: m != major):
        for base in sys.path:
            for cu in ("cu13", "cu12"):
                p = os.path.join(base or ".", "nvidia", cu, "lib", _MTLAYER.format(m))
                if os.path.isfile(p):
                    return p
    return None


#: ``cudaMemPoolAttrReleaseThreshold`` (CUDA's driver_types.h)
_RELEASE_THRESHOLD = 4


def _workspace_pool(cp) -> int | None:
    """The device's current CUDA memory pool, for cuDSS's workspace (stream-ordered
    ``cudaMallocFromPoolAsync`` instead of ``cudaMalloc``/``cudaFree``, which
    synchronize), as nvmath-python's ``DirectSolver`` sets it up.  Like the cuda.core
    memory resource nvmath-python takes it from, a pool that releases everything at
    each synchronization (threshold 0, CUDA's default) is made to keep its memory:
    otherwise every factorization would map its workspace afresh.  ``None`` when the
    device has no memory pools (cuDSS's default allocator then)."""
    rt = cp.cuda.runtime
    try:
        pool = rt.deviceGetMemPool(cp.cuda.Device().id)
    except Exception:
        return None
    try:
        if int(rt.memPoolGetAttribute(pool, _RELEASE_THRESHOLD)) == 0:
            rt.memPoolSetAttribute(pool, _RELEASE_THRESHOLD, 2 ** 64 - 1)
    except Exception:
        pass            # only a speed-up
    return pool


def _factorization(info: int, n_pos: int, n_neg: int, n: int) -> Factorization:
    """The :class:`Factorization` of cuDSS's ``info`` and inertia ``(n_pos, n_neg)``:
    ``info != 0`` (zero pivot, failure) is singular with unknown inertia."""
    if info != 0:
        return Factorization(False, 0, 0, n)
    zero = n - n_pos - n_neg
    return Factorization(zero == 0, n_pos, n_neg, zero)


#: :attr:`CudssSolver.row_static_factor` while cuDSS pivots (Bunch-Kaufman): the rows'
#: static term 1e-13 min(1, |A_i|^2) at the default eps.  Measured on an H100 (session
#: 49, cuDSS 1.0; raw gpu_2026-12-06_session49_h100/static_term_parts): the bank's
#: statuses and degenerate_duplicate_constraints' one iteration kept (with no rows' term:
#: 7), Van der Pol collocation 10^4 at IPOPT's objective (1e-5 below it with the full
#: term), case1803_snem 126 iterations and case1888_rte 293-352 (IPOPT 123 and 268; the
#: full term 205-251 and 479-527: cuDSS's sums are not bit-reproducible), case9241_pegase
#: 57 as before (no rows' term: 136)
PIVOTING_ROW_STATIC_FACTOR = 1e-4


class CudssSolver(LinearSolver):
    """Final.  ``hybrid_memory``: keep the factors in host memory (cuDSS hybrid memory
    mode) for systems whose factors do not fit on the device.  :attr:`pivoting`: whether
    the factorization pivots (Bunch-Kaufman, cuDSS >= 1; see the module doc);
    :attr:`version`: the loaded cuDSS's ``(major, minor, patch)``."""

    name = "cudss"

    def __init__(self, hybrid_memory: bool = False):
        self.version = _import_nvmath()
        import cupy as cp

        self.cp = cp
        self.hybrid_memory = bool(hybrid_memory)
        self.pivoting = cudss_handle.pivots(self.version)
        self.structure = None
        self._handle = None
        self._dense = None      # the DenseEigenSolver once enable_pivoting switched to it
        self._symbolic = None
        self._plan = None
        self._sym = None
        self.plan_seconds = 0.0
        #: the last ANALYSIS took a stored ordering instead of reordering
        self.ordering_reused = False

    @property
    def row_static_factor(self) -> float:
        """:data:`PIVOTING_ROW_STATIC_FACTOR` while the factorization pivots, else 1
        (cuDSS 0.8's static pivoting needs the full term: see the base class)."""
        return PIVOTING_ROW_STATIC_FACTOR if self.pivoting else 1.0

    def symbolic(self, structure: SparseStructure) -> CudssSymbolic:
        return CudssSymbolic(structure, self.cp)

    def analyse(self, structure: SparseStructure, symbolic=None) -> None:
        cp = self.cp
        n = structure.n
        if structure.nnz >= 2 ** 31:
            from ..errors import DeviceError

            raise DeviceError("KKT matrix has more than 2^31 entries: beyond cuDSS int32 "
                              "indices")
        self.free()
        self.structure = structure
        # upper CSC read as lower CSR (same arrays); cuDSS keeps pointers to all five.
        # A shared analysis (cudss_symbolic) lends an analysed plan when one is idle
        sym = symbolic if symbolic is not None else CudssSymbolic(structure, cp)
        self._symbolic = symbolic
        self._sym = sym
        self._indptr, self._indices, self._full = sym.indptr, sym.indices, sym.full
        plan = sym.take(self.hybrid_memory, self.pivoting) if symbolic is not None else None
        if plan is None:
            values, b, x = cp.zeros(structure.nnz), cp.zeros(n), cp.zeros(n)
            plan = CudssPlan(self._make_handle(values, b, x), values, b, x)
        self._plan = plan
        self._handle = plan.handle
        self._values, self._b, self._x = plan.values, plan.b, plan.x
        # the refinement's K x: the upper-triangle values read through the full CSR
        from ..arrays import indexed_matvec_kernel

        self._mv = indexed_matvec_kernel(cp)
        self._grid = (max(1, (n + _THREADS - 1) // _THREADS),)
        self._dense = None

    def release(self) -> None:
        """Give the analysed plan back to the shared analysis (module
        :mod:`.cudss_symbolic`); without one, free it."""
        self.free()

    @property
    def planned(self) -> bool:
        """Whether the current system's ANALYSIS phase has run (here or in an earlier
        solve that gave its plan back)."""
        return self._plan is not None and self._plan.analysed

    @property
    def perturbs_pivots(self) -> bool:
        """cuDSS replaces a tiny pivot by +-eps with or without Bunch-Kaufman (module
        doc): only the dense eigendecomposition, once switched to, reports it."""
        return self._dense is None

    def enable_pivoting(self) -> bool:
        """Switch a small system (``N <= DENSE_MAX_N``) on a statically pivoting cuDSS to
        the dense eigendecomposition on the device; False when cuDSS pivots itself, the
        system is larger, or the switch was made already."""
        if not self.perturbs_pivots or self.structure is None \
                or self.structure.n > DENSE_MAX_N:
            return False
        self._dense = DenseEigenSolver(self.cp)
        self._dense.analyse(self.structure)
        return True

    def _make_handle(self, values, b, x):
        return cudss_handle.CudssHandle(
            self._indptr, self._indices, values, b, x,
            pivoting=self.pivoting, hybrid_memory=self.hybrid_memory,
            threading_lib=_mtlayer_path(self.version[0]),
            workspace_pool=_workspace_pool(self.cp))

    def factorize(self, values) -> Factorization:
        if self._dense is not None:
            return self._dense.factorize(values)
        return self._factorize_cudss(values)

    def solve(self, rhs, out=None):
        if self._dense is not None:
            return self._dense.solve(rhs, out)
        return self._solve_cudss(rhs, out)

    def solve_add(self, rhs, x) -> None:
        """``x += A^{-1} rhs`` from cuDSS's solution buffer (no copy of it: one launch,
        the same sum as ``x += solve(rhs)``)."""
        if self._dense is not None:
            x += self._dense.solve(rhs)
            return
        self._solve_add_cudss(rhs, x)

    def _solve_add_cudss(self, rhs, x) -> None:
        copy_into(self.cp, self._b, rhs)
        self._handle.solve(self.cp.cuda.get_current_stream().ptr)
        fused.call(self.cp, "axpy", 1.0, self._x, x)

    def matvec(self, x, out=None):
        if self._dense is not None:
            return self._dense.matvec(x, out)
        return self._matvec_cudss(x, out)

    def _factorize_cudss(self, values) -> Factorization:
        cp = self.cp
        stream = cp.cuda.get_current_stream()
        copy_into(cp, self._values, values)
        if not self._plan.analysed:
            t = time.perf_counter()
            self._analyse_plan(stream)
            self.plan_seconds += time.perf_counter() - t
            self._plan.analysed = True
        self._handle.factorize(stream.ptr)
        # info and inertia are copied from cuDSS's device data: wait for the factorization
        stream.synchronize()
        n = self.structure.n
        return _factorization(*self._handle.info_inertia(n), n)

    def _analyse_plan(self, stream) -> None:
        """cuDSS's ANALYSIS of the plan's handle, with the structure's ordering from an
        earlier analysis where the store has one (:mod:`.cudss_ordering`), else with
        cuDSS's reordering, whose ordering the store then keeps."""
        h = self._handle
        key = (self._sym.ordering_key(h.pivoting, h.nd_levels, self.version)
               if cudss_ordering.enabled() else None)
        found = None if key is None else cudss_ordering.ORDERINGS.get(key, h.n)
        try:
            h.analyse(stream.ptr, found)
        except Exception:
            if found is None:
                raise
            # cuDSS refused the stored ordering: it is dropped, and a new handle (this
            # one holds the ordering) reorders
            cudss_ordering.ORDERINGS.discard(key)
            h.free()
            h = self._handle = self._plan.handle = self._make_handle(
                self._values, self._b, self._x)
            found = None
            h.analyse(stream.ptr)
        stream.synchronize()
        self.ordering_reused = found is not None
        if key is not None and found is None:
            made = h.ordering()
            if made is not None:
                cudss_ordering.ORDERINGS.put(key, made)

    def _solve_cudss(self, rhs, out):
        copy_into(self.cp, self._b, rhs)
        self._handle.solve(self.cp.cuda.get_current_stream().ptr)
        if out is None:
            return self._x.copy()
        copy_into(self.cp, out, self._x)
        return out

    def _matvec_cudss(self, x, out):
        if out is None:
            out = self.cp.empty(self.structure.n)
        ptr, col, src = self._full
        self._mv(self._grid, (_THREADS,), (ptr, col, src, self._values, x, out,
                                           np.int32(self.structure.n)))
        return out

    def free(self) -> None:
        plan, self._plan = self._plan, None
        self._handle = None
        if plan is None:
            return
        # cuDSS may still be working on the plan's buffers in the stream
        self.cp.cuda.get_current_stream().synchronize()
        if self._symbolic is not None:
            self._symbolic.give(plan)
        else:
            plan.handle.free()

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass
