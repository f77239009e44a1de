"""One CUDA kernel launch solving B instances: thread b runs
:func:`caspar_backend.compiled.kernels.ipm.solve_instance` on instance b's workspace:
row b of the (B, L) buffers of :class:`.workspaces.DeviceWorkspaces`, or column b of the
(L, B) buffers (coalesced: a warp's threads read neighbouring addresses), one global
kernel for each (:data:`.group.COLUMNS` says which ``solve_batch`` uses).

The global kernels :func:`_solve_rows`, :func:`_solve_columns` are written here in plain
Python and compiled by :func:`.retarget.device_version`, which binds ``solve_instance``
(and everything it calls) to the CUDA versions of the CPU kernels -- the same source.
Compiled on the first launch for the argument types (minutes: 202 s on the H200 host for
the rows kernel; 62 s on the 2-core VM for NVVM and ptxas alone), then loaded from the
disk cache (:mod:`.cache`).

The result: :class:`..rows.KernelResult` (its module says the array formats).
"""
from __future__ import annotations

import threading

import numpy as np

from numba import cuda

from ..kernels.ipm import solve_instance
from ..kernels.record import HIST_COLUMNS, OUT_SIZE
from ..rows import KernelResult, result_rows
from .team import LANES, team_finish, team_start, team_worker

#: most threads per block: one warp (the kernel is register-bound)
MAX_THREADS = 32
#: blocks per SM a batch is spread over before blocks grow past a few threads
BLOCKS_PER_SM = 8
#: the dynamic shared memory a block may take without the opt-in attribute (bytes)
SHARED_BYTES = 48 * 1024
#: QDLDL's working vectors in shared memory by default: off until a GPU measurement says
#: it is faster (docs/compiled-ipm-cuda.md, "QDLDL's working vectors in shared memory")
SHARED_DEFAULT = False

_compiled: dict = {}         # columns (bool) -> compiled global kernel
_compile_lock = threading.Lock()


def _solve_rows(Fall, FO, Ishared, Iscratch, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs,
                code, iters, fval, lanes, S):
    """Team b (threads lanes b .. lanes b + lanes - 1: :mod:`.team`) solves instance b on
    row b of each (B, L) buffer (contiguous), its int array the pair (structure, its
    scratch row) of :mod:`.accessors`, QDLDL's working vectors in S float64 of the
    block's dynamic shared memory (none when S = 0); one thread per instance when
    ``lanes`` is 1."""
    t = cuda.grid(1)
    b = t // lanes
    lane = t - b * lanes
    if b < code.shape[0]:
        Ib = (Ishared, Iscratch[b])
        if lane == 0:
            team_start(Ib, IO, lanes, S)
            c, it, f = solve_instance(Fall[b], FO, Ib, IO, O, X0[b], LBX[b], UBX[b],
                                      LBG[b], UBG[b], Hist, Outs[b])
            team_finish(Ib, IO)
            code[b] = c
            iters[b] = it
            fval[b] = f
        else:
            team_worker(Fall[b], FO, Ib, IO, O, lane, lanes)


def _solve_columns(Fall, FO, Ishared, Iscratch, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs,
                   code, iters, fval, lanes, S):
    """Team b solves instance b on column b of each (L, B) buffer (stride B)."""
    t = cuda.grid(1)
    b = t // lanes
    lane = t - b * lanes
    if b < code.shape[0]:
        Ib = (Ishared, Iscratch[:, b])
        if lane == 0:
            team_start(Ib, IO, lanes, S)
            c, it, f = solve_instance(Fall[:, b], FO, Ib, IO, O, X0[:, b], LBX[:, b],
                                      UBX[:, b], LBG[:, b], UBG[:, b], Hist, Outs[:, b])
            team_finish(Ib, IO)
            code[b] = c
            iters[b] = it
            fval[b] = f
        else:
            team_worker(Fall[:, b], FO, Ib, IO, O, lane, lanes)


def signature():
    """The argument types of a launch (every array C-contiguous, as CuPy allocates them):
    Fall, FO, Ishared, Iscratch, IO, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code, iters,
    fval, lanes, S."""
    from numba import types

    F2, I2 = types.float64[:, ::1], types.int64[:, ::1]
    F1, I1 = types.float64[::1], types.int64[::1]
    return (F2, I1, I1, I2, I1, F1, F2, F2, F2, F2, F2, F2, F2, I1, I1, F1, types.int64,
            types.int64)


def kernel(columns: bool):
    """The global kernel for instances in columns or rows, compiled for
    :func:`signature` on first use -- a prebuilt kernel for this GPU where the cache has
    one (:mod:`.prebuilt`), else from numba-cuda's disk cache when a compile is there,
    else by NVVM and ptxas (minutes), after which the cache holds it and
    :func:`.cache.is_ready` says so."""
    with _compile_lock:
        if columns not in _compiled:
            from .cache import install, mark_ready
            from .retarget import device_version

            if not hasattr(np, "row_stack"):
                # numba-cuda <= 0.30 registers an overload of np.row_stack, which NumPy
                # 2.5 removed (its alias of np.vstack): without it no kernel compiles
                np.row_stack = np.vstack
            from . import prebuilt
            from .cache import compute_capability

            fn = _solve_columns if columns else _solve_rows
            k = prebuilt.load(columns, compute_capability(), fn, signature())
            if k is None:
                cached = install()
                k = device_version(fn, cache=cached)
                k.compile(signature())
                if cached:
                    mark_ready(columns)
            _compiled[columns] = k
        return _compiled[columns]


def is_loaded(columns: bool) -> bool:
    """Whether this process holds the compiled kernel (rows or columns)."""
    return columns in _compiled


def threads_per_block(B: int, sms: int) -> int:
    """t = ceil(B / (BLOCKS_PER_SM * sms)), or a full warp (MAX_THREADS) once t > 8.

    A thread's workspace is far larger than its share of an SM's L1 and its solve is a
    chain of dependent loads, so while the batch does not fill the GPU, few threads per
    block (more L1 per thread, no divergence between instances sharing a warp) is
    faster; once it does, full warps.  Measured on the H200 (132 SMs), ms per batch by
    threads per block: Van der Pol N = 50, B = 1000: 655 (1), 638 (2), 749 (4), 854 (8),
    1020 (16), 1352 (64); IK, B = 32: 14.8 (1), 17.6 (4), 22.4 (32); B = 256: 19.5 (1),
    18.2 (2), 19.6 (8), 29.4 (64); B = 10^4: 80 (8), 50 (32), 56 (64)
    (benchmarks/results/raw/gpu_2026-12-02_session16).  Again after the kernels' loops
    became while loops (2026-12-05, raw gpu_2026-12-05_session38, the kernel alone):
    Van der Pol B = 132: 243 (1), 270 (2), 328 (4), 502 (32); B = 1000: 319 (1),
    355 (2), 429 (4), 505 (8), 601 (16), 718 (32); B = 4000: 1007 (1), 787 (2), 622 (4),
    922 (32); IK B = 1000: 19.1 (1), 15.5 (4), 15.2 (8), 20.7 (32); B = 10^4: 166 (1),
    53 (8), 29.8 (32); B = 10^5: 455 (8), 209 (32).  Eight blocks per SM (was four)
    gives Van der Pol's 1,000 instances one thread per block and its 4,000 four, at
    the price of IK's 1,000 (one thread, 19.1 against ~16 ms)."""
    t = -(-B // (BLOCKS_PER_SM * max(sms, 1)))
    return int(max(1, t)) if t <= 8 else MAX_THREADS


def multiprocessors() -> int:
    """The current CUDA device's multiprocessor count (asked once per device: CuPy's
    ``Device.attributes`` queries every attribute, ~0.1 ms, and a service asks per batch)."""
    import cupy as cp

    d = cp.cuda.runtime.getDevice()
    n = _multiprocessors.get(d)
    if n is None:
        n = _multiprocessors[d] = int(cp.cuda.Device(d).attributes["MultiProcessorCount"])
    return n


_multiprocessors: dict = {}     # device id -> multiprocessor count


def shared_layout(FO, threads: int, shared: bool = True) -> tuple[int, int]:
    """(teams per block, S): ``threads`` teams per block, fewer where their
    :data:`.accessors.SHARED_FLOATS` (S float64 each) would pass :data:`SHARED_BYTES`;
    S = 0 (the vectors stay in the workspace rows) where one team's would, or with
    ``shared=False``."""
    from .accessors import shared_floats

    S = shared_floats(FO) if shared else 0
    if S == 0 or 8 * S > SHARED_BYTES:
        return threads, 0
    return max(1, min(threads, SHARED_BYTES // (8 * S))), S


def solve_on_device(ws, O, threads: int | None = None, lanes: int = 1,
                    shared: bool = SHARED_DEFAULT, dispatcher=None) -> KernelResult:
    """Launch the kernel over the B instances of ``ws`` (a
    :class:`.workspaces.DeviceWorkspaces`) with the option vector ``O``
    (:func:`caspar_backend.compiled.options.option_vector`) and read the results back
    (the only device-to-host transfers); ``threads``: instances per block (1 ...
    MAX_THREADS; None: :func:`threads_per_block`'s choice, at most a warp of teams;
    benchmarks/bench_kernel_latency.py compares them); ``lanes``: threads per instance
    (:data:`.team.LANES`; a block is ``threads * lanes`` threads); ``shared``: QDLDL's
    working vectors in shared memory (:func:`shared_layout`); ``dispatcher``: the
    kernel to launch (a pattern's, :mod:`.patterns`; None: :func:`kernel`'s).  Everything
    is issued on CuPy's current stream (the launch too, :func:`.streams.launch_stream`),
    and only that stream is waited for."""
    import cupy as cp

    from .streams import launch_stream

    B = ws.B
    code, iters = cp.empty(B, np.int64), cp.empty(B, np.int64)
    fval = cp.empty(B)
    # no iteration history on the GPU (0 rows: nothing is written), the statistics of
    # each instance in its own row
    hist = cp.empty((0, HIST_COLUMNS))
    outs = cp.empty((OUT_SIZE, B) if ws.interleaved else (B, OUT_SIZE))
    k = kernel(ws.interleaved) if dispatcher is None else dispatcher
    if lanes not in LANES:
        raise ValueError(f"lanes must be one of {LANES}, got {lanes}")
    if threads is None:
        threads = min(threads_per_block(B, multiprocessors()), MAX_THREADS // lanes)
    elif not 1 <= threads <= MAX_THREADS:
        raise ValueError(f"threads per block must be 1 ... {MAX_THREADS}, got {threads}")
    threads, S = shared_layout(ws.lay.FO, threads, shared)
    blocks = (B + threads - 1) // threads
    stream = cp.cuda.get_current_stream()
    k[blocks, threads * lanes, launch_stream(stream), 8 * S * threads](
        ws.Fall, ws.FO, ws.Ishared, ws.Iscratch, ws.IO, cp.asarray(O), ws.X0, ws.LBX,
        ws.UBX, ws.LBG, ws.UBG, hist, outs, code, iters, fval, lanes, S)
    stream.synchronize()
    return result_rows(ws, cp.asnumpy(code), cp.asnumpy(iters), cp.asnumpy(fval))
