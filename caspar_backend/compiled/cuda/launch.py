"""One CUDA kernel launch solving B instances: thread b runs
:func:`caspar_backend.compiled.kernels.ipm.solve_instance` on instance b's workspace,
column b of the (L, B) buffers of :class:`.workspaces.DeviceWorkspaces` (coalesced: a
warp's threads read neighbouring addresses).

The global kernel :func:`_solve_columns` is written here in plain Python and compiled by
:func:`.retarget.device_version`, which binds ``solve_instance`` (and everything it
calls) to the CUDA versions of the CPU kernels -- the same source.  Compiled on the
first launch for the argument types (minutes of NVVM and ptxas: the kernel is one
inlined body), then loaded from the disk cache (:mod:`.cache`).

The result: :class:`..rows.KernelResult` (its module says the array formats).
"""
from __future__ import annotations

import threading

import numpy as np

from numba import cuda

from ..kernels.ipm import solve_instance
from ..kernels.record import HIST_COLUMNS, OUT_SIZE
from ..rows import KernelResult, result_rows

#: threads per block (the kernel is register-bound; 64 keeps several blocks per SM)
THREADS = 64

_compiled = None
_compile_lock = threading.Lock()


def _solve_columns(Fall, FO, Iall, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters,
                   fval):
    """Thread b solves instance b on column b of each (L, B) buffer (stride B)."""
    b = cuda.grid(1)
    if b < code.shape[0]:
        c, it, f = solve_instance(Fall[:, b], FO, Iall[:, b], IO, O, X0[:, b], LBX[:, b],
                                  UBX[:, b], LBG[:, b], UBG[:, b], Hist, Outs[:, b])
        code[b] = c
        iters[b] = it
        fval[b] = f


def kernel():
    """The compiled global kernel (built on first use)."""
    global _compiled
    with _compile_lock:
        if _compiled is None:
            from .cache import install
            from .retarget import device_version

            if not hasattr(np, "row_stack"):
                # numba-cuda <= 0.30 registers an overload of np.row_stack, which NumPy
                # 2.5 removed (its alias of np.vstack): without it no kernel compiles
                np.row_stack = np.vstack

            _compiled = device_version(_solve_columns, cache=install())
        return _compiled


def solve_on_device(ws, O) -> KernelResult:
    """Launch the kernel over the B instances of ``ws`` (a
    :class:`.workspaces.DeviceWorkspaces`) with the option vector ``O``
    (:func:`caspar_backend.compiled.options.option_vector`) and read the results back
    (the only device-to-host transfers).  ``ws`` must hold the instances in columns
    (``interleaved=True``)."""
    import cupy as cp

    if not ws.interleaved:
        raise ValueError("the CUDA kernel reads instances from columns (interleaved=True)")
    B = ws.B
    code, iters = cp.empty(B, np.int64), cp.empty(B, np.int64)
    fval = cp.empty(B)
    # no iteration history on the GPU (0 rows: nothing is written), the statistics of
    # each instance in its own row
    hist = cp.empty((0, HIST_COLUMNS))
    outs = cp.empty((OUT_SIZE, B))
    k = kernel()
    blocks = (B + THREADS - 1) // THREADS
    k[blocks, THREADS](ws.Fall, ws.FO, ws.Iall, ws.IO, cp.asarray(O), ws.X0, ws.LBX,
                       ws.UBX, ws.LBG, ws.UBG, hist, outs, code, iters, fval)
    cuda.synchronize()
    return result_rows(ws, cp.asnumpy(code), cp.asnumpy(iters), cp.asnumpy(fval))
