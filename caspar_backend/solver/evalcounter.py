"""Evaluation counts and times of a solve (shared by nested problems: the
restoration phase evaluates the original problem through the same counter)."""

from __future__ import annotations

import time

import numpy as np

from ..arrays import synchronize


def timed_phases(opts) -> bool:
    """Whether a solve's phase timers wait for the device: the option
    ``timing_statistics``, or ``print_timing_statistics``, which prints them."""
    return bool(opts.timing_statistics or opts.print_timing_statistics)


class EvalCounter:
    """Counts and times evaluations (shared by nested problems).  ``xp``: with ``sync``
    (the option ``timing_statistics``) a device is synchronized before the clock is
    read, so device evaluations are timed whole; without it an evaluation's time is
    the host's (its kernels' launches), its device work counted where the host next
    waits."""

    def __init__(self, xp=np, sync: bool = True):
        self.counts = dict(obj=0, grad=0, cons=0, jac=0, hess=0)
        self.seconds = 0.0
        #: kind -> [wall seconds, process seconds] of its timed calls
        self.by_kind = {k: [0.0, 0.0] for k in self.counts}
        self.xp = xp
        self.sync = bool(sync) and xp is not np
        self._timers = {}

    def also(self, kind) -> None:
        """Count one ``kind`` evaluation done within the current :meth:`timed` call (an
        evaluator that computes two kinds in one pass; its time is that call's)."""
        self.counts[kind] += 1

    def timed(self, kind):
        """A context manager counting one ``kind`` evaluation and adding its seconds
        (one per kind, made at the first use: an iteration times ~10 evaluations)."""
        t = self._timers.get(kind)
        if t is None:
            t = self._timers[kind] = _Timed(self, kind)
        return t


class _Timed:
    """Final.  :meth:`EvalCounter.timed`'s context manager for one kind (not
    reentrant: evaluations do not nest)."""

    __slots__ = ("counter", "kind", "t", "p", "acc")

    def __init__(self, counter: EvalCounter, kind: str):
        self.counter, self.kind, self.t, self.p = counter, kind, 0.0, 0.0
        self.acc = counter.by_kind.setdefault(kind, [0.0, 0.0])

    def __enter__(self):
        self.counter.counts[self.kind] += 1
        self.p = time.process_time()
        self.t = time.perf_counter()

    def __exit__(self, *a):
        c = self.counter
        if c.sync:
            synchronize(c.xp)
        dt = time.perf_counter() - self.t
        c.seconds += dt
        acc = self.acc
        acc[0] += dt
        acc[1] += time.process_time() - self.p
