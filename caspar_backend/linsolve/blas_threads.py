"""BLAS/LAPACK on one thread for caspar's small dense factorizations.

OpenBLAS's worker threads busy-wait: on a machine whose cores are busy (other jobs, a
batch's kernel threads, a second solve) a dense factorization of a few hundred rows
slows from milliseconds to seconds -- measured on the 2-core VM under load: Bunch-Kaufman
(``dsytrf``) of n = 1,400 0.06 s on one thread, 0.9-2.3 s on two; a Cholesky of n = 348
1.5 ms against ~1 s.  The systems caspar factorizes densely are small (the general
path's dense KKT systems up to 3,000 rows, least squares' reduced systems), where a
second thread gains little on an idle machine, so they run on one.
"""
from __future__ import annotations

import contextlib
import threading

_controller = None
_lock = threading.Lock()


def single_threaded_blas():
    """A context in which BLAS/LAPACK run on one thread (threadpoolctl, when installed;
    else no change)."""
    return limited_blas(1)


def limited_blas(threads: int):
    """A context in which BLAS/LAPACK run on at most ``threads`` threads (threadpoolctl,
    when installed; else no change).  Nested inside :func:`single_threaded_blas`, it
    lifts that limit for a factorization large enough to gain from more threads."""
    global _controller
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return contextlib.nullcontext()
    if _controller is None:
        with _lock:
            if _controller is None:
                # threadpoolctl limits the BLAS libraries loaded when its controller is
                # made (a scan of the process's libraries, ~20 ms: made once): load
                # SciPy's LAPACK first, the library these factorizations call
                import scipy.linalg  # noqa: F401

                _controller = ThreadpoolController()
    return _controller.limit(limits=max(1, int(threads)), user_api="blas")
