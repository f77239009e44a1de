"""Where a process's threads run: its Python on a few cores, the CPU kernel's on the rest.

A :class:`~.service.SolverService` on the CPU has two kinds of threads.  Its clients and
its worker run Python and pass the GIL among themselves several times per request; the
batch kernel's native threads (Numba's pool, :mod:`caspar_backend.compiled.batch_cpu`)
solve a batch without the GIL.  Spread over every core, each GIL hand-off is a cross-core
wake-up; kept on one core it is a context switch, several times cheaper.  Measured (H100
host, 16 cores, 64 clients, 10^4 IK requests, raw ``gpu_2026-12-06_session53_h100``): the
service's own Python (``solve_batch`` stubbed) answered 22.7-23.6k requests/s on all
cores and 57.6-71.6k with the Python on one core; with the kernel, all cores gave
13.0-16.2k solves/s (p99 5.6-8.5 ms) and the Python on one core with the kernel's threads
on the other 8-15 cores 12.2-22.3k, half the runs at 20k or more (p99 <= 8.9 ms).

:func:`split_cores` makes that split for the whole process, once, at its start:

    split_cores({0})                     # or "0", "0-1": taskset's list form
    service = SolverService(problem)     # its kernel calls on the other cores' threads
    ... start the client threads ...     # they inherit the calling thread's cores

It (1) chooses Numba's 'workqueue' threading layer, whose pool of native threads is one
per process -- OpenMP's threads belong to the thread that opens a parallel region, so the
service's worker, a Python thread, would start its own on the Python cores; (2) starts
that pool from the calling thread with its affinity set to the kernel cores (a thread
starts with its creator's affinity); (3) moves the calling thread to the Python cores, so
that every thread it starts afterwards runs there.  Threads started before the call keep
their cores.  A service's default kernel threads are then one per kernel core
(:func:`.service.default_kernel_threads`).  The pool can be started only once per
process, so the call must come before the first batch solve; the 'workqueue' layer runs
one parallel kernel call at a time (``batch_cpu`` takes its calls in turn), and a call on
one thread runs on the calling thread, a Python core: split only where several cores
are left to the kernel.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from ..compiled.cores import threading_layer
from ..errors import CasparError, OptionError

#: the split made in this process (:func:`current_split`); None before :func:`split_cores`
_split = None


@dataclass(frozen=True)
class CoreSplit:
    """Final.  The cores of the process's Python threads (``python``) and of the CPU
    kernel's threads (``kernel``), disjoint, as :func:`split_cores` set them."""

    python: frozenset
    kernel: frozenset

    @property
    def kernel_threads(self) -> int:
        """The ``threads`` to give ``solve_batch`` or a SolverService: one per kernel
        core."""
        return len(self.kernel)


def cores_of(spec) -> frozenset:
    """The cores of ``spec``: an iterable of ints, or taskset's list form as a string
    (``"0-1,4"``).  Raises OptionError for anything else."""
    if isinstance(spec, str):
        out = set()
        try:
            for part in spec.split(","):
                a, _, b = part.strip().partition("-")
                lo, hi = int(a), int(b or a)
                if lo < 0 or hi < lo:
                    raise ValueError(part)
                out.update(range(lo, hi + 1))
        except ValueError:
            raise OptionError(f"python_cpus {spec!r} is not a core list like '0-1,4'") \
                from None
        return frozenset(out)
    try:
        cores = frozenset(int(c) for c in spec)
    except (TypeError, ValueError):
        raise OptionError(f"python_cpus must be core numbers or a list like '0-1', got "
                          f"{spec!r}") from None
    if any(c < 0 for c in cores):
        raise OptionError(f"python_cpus holds a negative core: {sorted(cores)}")
    return cores


def split_cores(python_cpus) -> CoreSplit:
    """Put this process's Python threads on ``python_cpus`` and the CPU kernel's threads
    on its other cores (module doc).  ``python_cpus``: a non-empty proper subset of the
    cores this process may run on (:func:`cores_of`'s forms).  Raises OptionError for
    another set, and CasparError when it ran already or once Numba's threading layer has
    started (a batch or parallel kernel already ran) -- its pool cannot be moved."""
    global _split
    import numba

    if _split is not None:
        raise CasparError(f"split_cores ran already in this process: Python on cores "
                          f"{sorted(_split.python)}, the kernel on {sorted(_split.kernel)}")
    if not hasattr(os, "sched_setaffinity"):
        raise CasparError("split_cores needs thread affinities (os.sched_setaffinity: "
                          "Linux); this platform has none")
    every = frozenset(os.sched_getaffinity(0))
    python = cores_of(python_cpus)
    if not python or not python < every:
        raise OptionError(f"python_cpus {sorted(python)} must be a non-empty proper "
                          f"subset of this process's cores {sorted(every)}")
    layer = threading_layer()
    if layer is not None:
        raise CasparError(f"split_cores must run before the first parallel kernel call: "
                          f"Numba's {layer!r} threading layer has started its threads")
    numba.config.THREADING_LAYER = "workqueue"
    kernel = every - python
    os.sched_setaffinity(0, kernel)
    try:
        _start_pool()
    finally:
        os.sched_setaffinity(0, python)
    _split = CoreSplit(python, kernel)
    return _split


def current_split() -> CoreSplit | None:
    """The split :func:`split_cores` made in this process, or None."""
    return _split


def _start_pool() -> None:
    """Launch Numba's threads (the layer's whole pool, NUMBA_NUM_THREADS of them) from
    this thread -- Numba's thread-count functions start the layer first -- and check
    that the layer is the one chosen."""
    import numba

    numba.get_num_threads()
    layer = threading_layer()
    if layer != "workqueue":
        raise CasparError(f"Numba started its {layer!r} threading layer, not 'workqueue'")
