"""Loading the GPU solver's stack in a thread of its own while the problem's CUDA evaluator
is built.

A process's first GPU solve imports nvmath-python's cuDSS bindings and loads libcudss
(:func:`~.cudss.cudss_problem`): nvmath's package initialisation opens the CUDA math
libraries (cuBLAS, cuFFT, cuSOLVER, cuSPARSE, ...), 0.25-0.33 s on an H100 host with its
modules byte-compiled (0.7-0.9 s without).  That work is mostly the dynamic loader's and
leaves the interpreter to other threads (measured: a Python loop beside the import in a
thread keeps its pace; raw ``benchmarks/results/raw/gpu_2026-12-07_session61_h100``), so
:meth:`caspar_backend.problem.Problem.evaluator` starts it here before it generates and
loads the problem's CUDA kernels, and the solve's own check of the stack
(:func:`caspar_backend.device.gpu_problem`) then finds the modules imported -- or waits on
Python's import lock for the rest of the import, never importing twice.

:func:`start` is idempotent and never raises: what failed to load is reported, and
raised, by the caller's own check, as without the preload.  The thread is not a daemon:
an interpreter that exits during the import waits for it (well under a second) rather
than stop an extension module half initialised.
"""

from __future__ import annotations

import threading

_lock = threading.Lock()
_thread: threading.Thread | None = None


def start() -> None:
    """Begin importing nvmath-python's cuDSS bindings and loading cuDSS in a thread,
    once per process; nothing when that was started or done already."""
    global _thread
    from . import cudss_handle

    with _lock:
        if _thread is not None or cudss_handle.bindings_loaded():
            return
        _thread = threading.Thread(target=_load, name="caspar-cudss-preload")
        _thread.start()


def wait(timeout: float | None = None) -> None:
    """Wait for a started load to end (tests; the solve waits on the import lock)."""
    t = _thread
    if t is not None:
        t.join(timeout)


def _load() -> None:
    from .cudss import cudss_problem

    cudss_problem()      # a failure is a string here; the caller's check raises it
