"""Time limits for the compiled interior point: a daemon thread sets a running solve's
stop slot once its ``max_wall_time`` or ``max_cpu_time`` has passed.

The kernel reads no clock.  It reads its stop slot once per iteration
(:func:`.kernels.ipm.solve_instance`) and ends with Maximum_WallTime_Exceeded when the
slot holds :data:`WALL`, Maximum_CpuTime_Exceeded for :data:`CPU`, at the point of the
iteration where the general path tests its clocks (solver/termination.py): the first
test after the limit passed, as there.  The kernel releases the GIL, so this module's one
thread runs while kernels do.

Rules:

* wall time: the slot is set once ``time.perf_counter() - t0 > max_wall_time``, ``t0``
  the solve's start;
* CPU time (this process's, ``time.process_time()``, as the general path and IPOPT
  count it): the process's CPU time grows at most ``cores`` seconds per wall second, so
  the thread looks again after ``remaining / cores`` seconds (at least
  :data:`CPU_POLL_MIN`) until the limit has passed;
* :func:`watch` arms a watch and returns it, :func:`unwatch` disarms it (under the
  module's lock, so no slot is written after its solve returned: the slot belongs to a
  workspace the next solve reuses).

Cost: a solve with no limit below :data:`WATCHED_MAX` arms nothing; with one, a lock, a heap push and a
notify (microseconds).
"""
from __future__ import annotations

import heapq
import itertools
import math
import os
import threading
import time

from .cores import usable_cores

#: the stop slot's values (kernels/ipm.py: 1 is Ctrl-C)
WALL = 2
CPU = 3
#: shortest wait between two looks at the process's CPU time (seconds)
CPU_POLL_MIN = 0.0005
#: limits of at least this many seconds are not watched: a compiled run ends within its
#: iteration budget (``solve.TIME_BUDGET``, 0.5 s of a typical core) and the general path
#: that takes over answers the limit; IPOPT's defaults (max_cpu_time 1e6, max_wall_time
#: 1e20) are among them
WATCHED_MAX = 1e5

_cond = threading.Condition()
_heap: list = []                 # (wake-up time on perf_counter, sequence, _Watch)
_seq = itertools.count()
_thread: threading.Thread | None = None


class _Watch:
    """Final.  One solve's limits: its stop slots (``flag``, an int array whose every
    entry is set: a single solve's slot, or a CPU batch's column of them), the
    wall-clock end (perf_counter), the CPU end (process_time) or inf, and whether it is
    still armed."""

    __slots__ = ("flag", "wall_end", "cpu_end", "armed")

    def __init__(self, flag, wall_end: float, cpu_end: float):
        self.flag, self.wall_end, self.cpu_end, self.armed = flag, wall_end, cpu_end, True

    def next_look(self, now: float, cores: int) -> float:
        """When to look again (perf_counter time): the wall end, or sooner where the CPU
        limit could pass first."""
        wake = self.wall_end
        if math.isfinite(self.cpu_end):
            left = self.cpu_end - time.process_time()
            wake = min(wake, now + max(CPU_POLL_MIN, left / cores))
        return wake


def watch(flag, t0: float, cpu0: float, max_wall_time: float, max_cpu_time: float):
    """Arm a watch over ``flag`` (module doc) for a solve that started at ``t0``
    (perf_counter) and ``cpu0`` (process_time); None when neither limit is below
    :data:`WATCHED_MAX`."""
    wall_end = t0 + max_wall_time if max_wall_time < WATCHED_MAX else math.inf
    cpu_end = cpu0 + max_cpu_time if max_cpu_time < WATCHED_MAX else math.inf
    if math.isinf(wall_end) and math.isinf(cpu_end):
        return None
    w = _Watch(flag, wall_end, cpu_end)
    # a limit passed already (max_cpu_time=1e-12): set now, so that the kernel stops at
    # its first test, as the general path does
    if time.perf_counter() > wall_end:
        flag[...], w.armed = WALL, False
        return w
    if time.process_time() > cpu_end:
        flag[...], w.armed = CPU, False
        return w
    global _thread
    with _cond:
        if _thread is None:
            _thread = threading.Thread(target=_run, name="caspar-time-limits", daemon=True)
            _thread.start()
        entry = (w.next_look(time.perf_counter(), usable_cores()), next(_seq), w)
        heapq.heappush(_heap, entry)
        if _heap[0] is entry:       # the thread sleeps until a later look: wake it
            _cond.notify()
    return w


def unwatch(w) -> None:
    """Disarm ``w`` (a :func:`watch` result, or None); its slot is not written after."""
    if w is not None:
        with _cond:
            w.armed = False


def _after_fork_in_child() -> None:
    """A forked child has no watch thread (only the forking thread survives a fork) and
    inherits its parent's watches and lock state: start afresh."""
    global _cond, _heap, _thread
    _cond, _heap, _thread = threading.Condition(), [], None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _run() -> None:
    """The thread: sleeps until the earliest watch's look, sets the slots whose limit
    has passed, re-arms the CPU watches whose limit has not."""
    cores = usable_cores()
    with _cond:
        while True:
            while _heap and not _heap[0][2].armed:
                heapq.heappop(_heap)
            if not _heap:
                _cond.wait()
                continue
            now = time.perf_counter()
            wake = _heap[0][0]
            if wake > now:
                _cond.wait(wake - now)
                continue
            _, _, w = heapq.heappop(_heap)
            if now > w.wall_end:
                w.flag[...], w.armed = WALL, False
            elif time.process_time() > w.cpu_end:
                w.flag[...], w.armed = CPU, False
            else:
                heapq.heappush(_heap, (w.next_look(now, cores), next(_seq), w))
