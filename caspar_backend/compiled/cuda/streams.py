"""Each calling thread's own CUDA stream for the batch kernel's work, so that batches
solved by different threads (a :class:`~caspar_backend.batch.service.SolverService`'s
workers, an application's threads) overlap on the GPU instead of queueing behind one
another.

CuPy and numba-cuda both issue work on the legacy default stream unless told otherwise,
and that stream serializes with every other blocking stream: two threads' batches then
run one after the other however little of the GPU each kernel fills (an IK batch of 64
instances launches 64 one-thread blocks on a GPU with 132 SMs).  :func:`thread_stream`
gives each thread one non-blocking stream, created on its first use and kept for the
thread's life; :func:`.group.solve_group` makes it current for the whole batch -- the
workspaces' uploads, the launch (:func:`launch_stream`: numba-cuda's handle of the same
stream), the results' read-back -- and waits on that stream alone.  One thread's batches
stay in order on its stream; nothing is shared between the streams but read-only
structure uploaded by each batch itself.
"""
from __future__ import annotations

import threading

_local = threading.local()


def thread_stream():
    """This thread's non-blocking CuPy stream (``cupy.cuda.Stream``; created on first
    use)."""
    s = getattr(_local, "stream", None)
    if s is None:
        import cupy as cp

        s = _local.stream = cp.cuda.Stream(non_blocking=True)
    return s


def launch_stream(stream):
    """numba-cuda's stream for a launch on the CuPy stream ``stream``: 0 (numba-cuda's
    default) for the legacy default stream, else an external stream on the same handle
    (one per CuPy stream, kept with this thread)."""
    ptr = stream.ptr
    if not ptr:
        return 0
    cached = getattr(_local, "numba", None)
    if cached is None or cached[0] != ptr:
        from numba import cuda

        cached = _local.numba = (ptr, cuda.external_stream(ptr))
    return cached[1]
