"""The cores this process may run on (the CPU batch's threads, the time-limit watch's
polling of the process's CPU time), and the threading layer Numba's threads run under."""
from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def threading_layer() -> str | None:
    """Numba's threading layer once started ('omp', 'tbb', 'workqueue'), else None."""
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return None
