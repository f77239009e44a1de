"""One cuDSS sparse LDL^T solve through nvmath-python's low-level bindings.

:class:`CudssHandle` owns the cuDSS objects of one system ``A x = b`` with

* ``A``: ``N x N`` symmetric, given by **one triangle in CSR** (0-based, int32 row
  offsets and column indices, float64 values, on the device), read as
  ``CUDSS_MTYPE_SYMMETRIC`` with ``CUDSS_MVIEW_LOWER``;
* ``b`` and ``x``: fixed device vectors (float64, length N), dense column-major N x 1.

cuDSS keeps the *pointers* of these arrays: new values are written into the same arrays
(never reallocated) and the next phase reads them.  The phases, on the stream given to
each call (``cudssSetStream`` first, as nvmath-python does):

=============  =====================================================  ============
phase          computes                                               when
=============  =====================================================  ============
ANALYSIS       reordering and symbolic factorization of A's pattern  once
FACTORIZATION  numerical ``P A P^T = L D L^T`` with A's values        every update
SOLVE          ``x = A^{-1} b``                                        every rhs
=============  =====================================================  ============

After a factorization, :meth:`CudssHandle.info_inertia` reads ``CUDSS_DATA_INERTIA``
(numbers of positive and negative eigenvalues of D, in the index type, int32) and, where
they do not add up to the order, ``CUDSS_DATA_INFO`` (0: success; otherwise a zero
pivot).

Pivoting: cuDSS 0.8's LDL^T pivots only statically (a tiny pivot is replaced by
``+-eps``); cuDSS 1.x adds Bunch-Kaufman pivoting (1x1 and 2x2 pivots by magnitude,
``CUDSS_PIVOT_BUNCH_KAUFMAN``), set through ``CUDSS_CONFIG_PIVOT_TYPE`` before ANALYSIS
when ``pivoting`` is requested.  :func:`pivots` says which versions have it.

nvmath-python's high-level ``DirectSolver`` runs only with cuDSS 0.8; its bindings
(``nvmath.bindings.cudss``) have no version gate, so this wrapper runs with every
version in :data:`SUPPORTED_CUDSS`.  Every call copies the argument order of nvmath-python
1.0's ``DirectSolver`` (the combination that ran on cuDSS 0.8 and 1.0); the table of
calls is :data:`CALL_SEQUENCE`.
"""

from __future__ import annotations

import numpy as np

#: cuDSS versions caspar runs on, as ``(major, minor)`` with ``None`` for any minor:
#: 0.8 is the one nvmath-python 1.0 was built against, 1.x adds Bunch-Kaufman pivoting
SUPPORTED_CUDSS = ((0, 8), (1, None))
#: :data:`SUPPORTED_CUDSS` in words, for error messages
SUPPORTED_TEXT = "0.8.x or 1.x"
#: first cuDSS major version with Bunch-Kaufman pivoting for symmetric indefinite LDL^T
BUNCH_KAUFMAN_SINCE_MAJOR = 1

#: nested-dissection levels of cuDSS's reordering (``CUDSS_CONFIG_ND_NLEVELS``: the least
#: number of levels; cuDSS's default is 10) by the system's order N, as ``(N below, levels)``
#: rows and a last ``(None, levels)``.  Measured on the H200 with cuDSS 1.0 (factorization
#: ms per iteration of the benchmark suite's AC-OPF KKT systems, levels 10 / 12 / 14 / 16;
#: raw gpu_2026-12-04_session29): N = 59,332: 2.45 / 2.31 / 2.42 / -; 264,541: 5.35 / 4.72 /
#: 4.77 / 5.33; 565,395: 15.9 / 14.9 / 14.8 / 15.7; 621,978: 15.5 / 14.5 / 15.0 / 16.2;
#: 2,091,250: 35.8 / 32.8 / 31.9 / 32.5 (18: 36.1); below ~10^4 no difference.
ND_LEVELS = ((1_000_000, 12), (None, 14))

#: ``cudaDataType_t`` values (CUDA's library_types.h; nvmath's NAME_TO_DATA_TYPE maps
#: 'float64' and 'int32' to them)
CUDA_R_64F = 1
CUDA_R_32I = 10

#: the binding calls this module makes, in order (``c`` is ``nvmath.bindings.cudss``)
CALL_SEQUENCE = (
    "create()",
    "config_create()",
    "data_create(handle)",
    "set_threading_layer(handle, path)            [optional; failure ignored]",
    "config_set(config, HYBRID_MEMORY_MODE, ptr, nbytes)",
    "config_set(config, USE_CUDA_REGISTER_MEMORY, ptr, nbytes)",
    "config_set(config, PIVOT_TYPE, ptr, nbytes)  [pivoting only: BUNCH_KAUFMAN]",
    "config_set(config, ND_NLEVELS, ptr, nbytes)  [where the bindings have it: nd_levels(N)]",
    "set_async_workspace_allocator(handle, pool)  [optional; failure ignored]",
    "matrix_create_csr(N, N, nnz, indptr, 0, indices, values, CUDA_R_32I, CUDA_R_32I, "
    "CUDA_R_64F, SYMMETRIC, LOWER, ZERO)",
    "matrix_create_dn(N, 1, N, b, CUDA_R_64F, COL_MAJOR)",
    "matrix_create_dn(N, 1, N, x, CUDA_R_64F, COL_MAJOR)",
    "set_stream(handle, stream); execute(handle, phase, config, data, A, x, b)",
    "data_set(handle, data, USER_PERM | USER_ND_PARTITION_TREE, ptr, nbytes)  [a reused "
    "ordering, before ANALYSIS]",
    "data_get(handle, data, PERM_REORDER_ROW | ND_PARTITION_TREE, 0, 0, size_ptr) then "
    "(ptr, that size, size_written_ptr)  [after a first ANALYSIS: the exact size]",
    "data_get(handle, data, INFO | INERTIA, ptr, nbytes, size_written_ptr)",
    "matrix_destroy(x), matrix_destroy(b), matrix_destroy(A)",
    "data_destroy(handle, data)",
    "config_destroy(config)",
    "destroy(handle)",
)

_CUDSS = None        # nvmath.bindings.cudss once imported (tests put a fake here)


def bindings():
    """The ``nvmath.bindings.cudss`` module (imported on first use)."""
    global _CUDSS
    if _CUDSS is None:
        from nvmath.bindings import cudss

        _CUDSS = cudss
    return _CUDSS


def bindings_loaded() -> bool:
    """Whether :func:`bindings` has imported nvmath's cuDSS module in this process."""
    return _CUDSS is not None


def cudss_version() -> tuple:
    """``(major, minor, patch)`` of the loaded cuDSS library (loading it now: a missing
    library raises here)."""
    c = bindings()
    return tuple(int(c.get_property(i)) for i in range(3))


def supported(version) -> bool:
    """Whether caspar runs on cuDSS ``version`` (see :data:`SUPPORTED_CUDSS`)."""
    major, minor = int(version[0]), int(version[1])
    return any(major == ma and (mi is None or minor == mi) for ma, mi in SUPPORTED_CUDSS)


def pivots(version) -> bool:
    """Whether cuDSS ``version`` has Bunch-Kaufman pivoting (caspar then uses it)."""
    return int(version[0]) >= BUNCH_KAUFMAN_SINCE_MAJOR


def nd_levels(n: int) -> int:
    """The nested-dissection levels for a system of order ``n`` (:data:`ND_LEVELS`)."""
    return next(levels for below, levels in ND_LEVELS if below is None or n < below)


def _ptr(a) -> int:
    """Device pointer of a CuPy array."""
    return int(a.data.ptr)


class CudssHandle:
    """Final.  The cuDSS handle, configuration, data and matrix objects of one system
    (module doc).  ``indptr`` (N+1), ``indices`` (nnz) int32 and ``values`` (nnz)
    float64: one triangle of A in CSR, viewed LOWER; ``rhs`` and ``sol`` float64
    (N): the fixed b and x buffers.  All are contiguous device arrays that must outlive
    the handle (it keeps references).  ``pivoting``: Bunch-Kaufman (cuDSS >= 1 only);
    ``hybrid_memory``: factors in host memory; ``threading_lib``: path of cuDSS's
    threading layer (faster ANALYSIS; ``None``, or one that fails to load: without);
    ``workspace_pool``: a ``cudaMemPool_t`` for cuDSS's workspace (stream-ordered
    allocation instead of cudaMalloc/cudaFree; ``None``: cuDSS's default)."""

    def __init__(self, indptr, indices, values, rhs, sol, *, pivoting: bool = False,
                 hybrid_memory: bool = False, threading_lib: str | None = None,
                 workspace_pool: int | None = None):
        c = self._c = bindings()
        self.n = int(rhs.size)
        self.nnz = int(values.size)
        self.pivoting = bool(pivoting)
        self.hybrid_memory = bool(hybrid_memory)
        self.nd_levels = nd_levels(self.n)
        self.threading_lib = None
        # cuDSS holds raw pointers into these: keep them alive as long as the handle
        self._arrays = (indptr, indices, values, rhs, sol)
        self._handle = self._config = self._data = None
        self._matrices = []          # A, b, x: destroyed in reverse order
        # host buffers data_get writes into (allocated once)
        self._info = np.zeros(1, dtype=c.get_data_param_dtype(c.DataParam.INFO))
        self._inertia = np.zeros(2, dtype=np.int32)    # the index type, as nvmath reads it
        self._written = np.zeros(1, dtype=np.uint64)
        try:
            self._create(threading_lib, workspace_pool)
        except BaseException:
            self.free()
            raise

    def _create(self, threading_lib, workspace_pool) -> None:
        c = self._c
        indptr, indices, values, rhs, sol = self._arrays
        n = self.n
        self._handle = c.create()
        self._config = c.config_create()
        self._data = c.data_create(self._handle)
        if threading_lib is not None:
            try:
                c.set_threading_layer(self._handle, threading_lib)
                self.threading_lib = threading_lib
            except Exception:
                pass    # an optimization of ANALYSIS only: never fail because of it
        self._config_set(c.ConfigParam.HYBRID_MEMORY_MODE, int(self.hybrid_memory))
        self._config_set(c.ConfigParam.USE_CUDA_REGISTER_MEMORY, 1)
        if self.pivoting:
            # before ANALYSIS: the symbolic phase plans for the pivoting factorization
            self._config_set(c.ConfigParam.PIVOT_TYPE, c.PivotType.PIVOT_BUNCH_KAUFMAN)
        if hasattr(c.ConfigParam, "ND_NLEVELS"):
            # before ANALYSIS: the reordering's depth (a faster factorization; the same
            # factors up to rounding)
            self._config_set(c.ConfigParam.ND_NLEVELS, self.nd_levels)
        if workspace_pool is not None:
            try:
                c.set_async_workspace_allocator(self._handle, int(workspace_pool))
            except Exception:
                pass    # cuDSS's synchronous default allocator then
        self._matrices.append(c.matrix_create_csr(
            n, n, self.nnz, _ptr(indptr), 0, _ptr(indices), _ptr(values),
            CUDA_R_32I, CUDA_R_32I, CUDA_R_64F, c.MatrixType.SYMMETRIC,
            c.MatrixViewType.LOWER, c.IndexBase.ZERO))
        for v in (rhs, sol):
            self._matrices.append(c.matrix_create_dn(n, 1, n, _ptr(v), CUDA_R_64F,
                                                     c.Layout.COL_MAJOR))

    def _config_set(self, param, value) -> None:
        v = np.zeros(1, dtype=self._c.get_config_param_dtype(param))
        v[0] = value
        self._c.config_set(self._config, param, v.ctypes.data, v.dtype.itemsize)

    def _execute(self, phase, stream: int) -> None:
        c = self._c
        a, b, x = self._matrices
        c.set_stream(self._handle, int(stream))
        c.execute(self._handle, phase, self._config, self._data, a, x, b)

    def analyse(self, stream: int = 0, ordering=None) -> None:
        """Reordering and symbolic factorization (reads A's pattern and values).
        ``ordering``: an :class:`~.cudss_ordering.Ordering` of this pattern from an
        earlier analysis, given to cuDSS (``USER_PERM``, ``USER_ND_PARTITION_TREE``)
        instead of its nested-dissection reordering."""
        c = self._c
        if ordering is not None:
            self._data_set(c.DataParam.USER_PERM, ordering.perm)
            if ordering.tree.size:
                self._data_set(c.DataParam.USER_ND_PARTITION_TREE, ordering.tree)
        self._execute(c.Phase.ANALYSIS, stream)

    def ordering(self):
        """The last ANALYSIS's :class:`~.cudss_ordering.Ordering` (``PERM_REORDER_ROW``
        (N,) and ``ND_PARTITION_TREE`` (2^levels - 1,), read to the host), or None where
        the bindings or the library do not give them."""
        from .cudss_ordering import Ordering

        c = self._c
        try:
            perm = self._data_array(c.DataParam.PERM_REORDER_ROW)
        except Exception:
            return None
        try:
            tree = self._data_array(c.DataParam.ND_PARTITION_TREE)   # 2^levels - 1
        except Exception:
            tree = np.zeros(0, np.int32)        # a permutation alone still skips ND
        found = Ordering(perm, tree)
        return found if found.valid_for(self.n) else None

    def _data_set(self, param, array) -> None:
        a = np.ascontiguousarray(array, dtype=np.int32)
        self._c.data_set(self._handle, self._data, param, a.ctypes.data, a.nbytes)

    def _data_array(self, param):
        """An int32 array data parameter: its size asked first (a null buffer of size 0),
        then read into a buffer of exactly that size -- cuDSS 1.0 refuses a larger one
        with INVALID_VALUE (measured on the nested-dissection tree, docs/cudss.md)."""
        c = self._c
        c.data_get(self._handle, self._data, param, 0, 0, self._written.ctypes.data)
        out = np.zeros(int(self._written[0]) // 4, np.int32)
        if out.size:
            c.data_get(self._handle, self._data, param, out.ctypes.data, out.nbytes,
                       self._written.ctypes.data)
        return out

    def factorize(self, stream: int = 0) -> None:
        """Numerical factorization of A's current values (asynchronous on ``stream``)."""
        self._execute(self._c.Phase.FACTORIZATION, stream)

    def solve(self, stream: int = 0) -> None:
        """``x = A^{-1} b`` into the solution buffer (asynchronous on ``stream``)."""
        self._execute(self._c.Phase.SOLVE, stream)

    def info_inertia(self, n: int | None = None) -> tuple:
        """``(info, n_pos, n_neg)`` of the last factorization; the caller synchronizes
        the stream first.  With the order ``n``, ``info`` is read only where the inertia
        misses pivots (``n_pos + n_neg < n``) and is 0 otherwise: a zero pivot, the one
        thing ``info`` reports, is neither positive nor negative, so a complete inertia
        has none -- one device read per factorization instead of two (each ~30 us of an
        iteration's host time on an H100, raw gpu_2026-12-05_session44_h100/c)."""
        c = self._c
        self._get(c.DataParam.INERTIA, self._inertia)
        n_pos, n_neg = int(self._inertia[0]), int(self._inertia[1])
        if n is not None and n_pos + n_neg >= n:
            return 0, n_pos, n_neg
        self._get(c.DataParam.INFO, self._info)
        return int(self._info[0]), n_pos, n_neg

    def _get(self, param, buf) -> None:
        self._c.data_get(self._handle, self._data, param, buf.ctypes.data, buf.nbytes,
                         self._written.ctypes.data)

    def free(self) -> None:
        """Destroy the matrices, data, configuration and handle (reverse order of
        creation); idempotent."""
        c = self._c
        while self._matrices:
            c.matrix_destroy(self._matrices.pop())
        if self._data is not None:
            data, self._data = self._data, None
            c.data_destroy(self._handle, data)
        if self._config is not None:
            config, self._config = self._config, None
            c.config_destroy(config)
        if self._handle is not None:
            handle, self._handle = self._handle, None
            c.destroy(handle)
        self._arrays = ()

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass
