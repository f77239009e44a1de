"""The structural work of a compiled problem's solves, kept for its next solves.

A solve of ``min f(x; p) s.t. lbg <= g(x; p) <= ubg, lbx <= x <= ubx`` builds index
structures (column maps, COO patterns in the solver's space, index sets of the finite
bounds, the KKT matrix's assembly map, the linear solver's symbolic analysis) that are
functions of

* the compiled problem's sparsity (the evaluator's Jacobian and Hessian COO),
* three discrete facts of the solve's data: which variables are fixed (``lbx == ubx``),
  which rows are equalities (``lbg == ubg``), which bounds are finite,
* the options that change the structure: ``kkt_system``, ``hessian_approximation`` with
  ``limited_memory_max_history``, ``linear_solver``, and the device,

and of nothing else -- not of ``p``, ``x0`` or the bounds' values.  A
:class:`StructureCache` (one per compiled evaluator, shared by the evaluators
:meth:`~caspar_backend.evaluators.base.Evaluator.bound` makes from it) keeps them under a
key of exactly those facts, so that a re-solve with new parameters, bounds or starting
point builds only what depends on values: the scaling (a function of ``x0`` and ``p``),
the relaxed bounds, the iterate and the work buffers.

Rules for a cached value, which make a re-solve equal to a first solve bit for bit and
the cache safe under concurrent solves:

* it is a deterministic function of its key (a cached one equals a fresh one);
* nothing writes to it after it is built.  A convention, which the tests check (every
  array of the cached structures keeps its bytes through later solves): NumPy's
  ``take`` and SciPy's sparse kernels copy an index array flagged read-only on every
  call, which would cost the iterations what the cache saves the setup;
* it holds no per-solve state.  The one exception are pools of idle objects that a
  solve borrows whole (the qdldl factorization objects of
  :class:`~caspar_backend.linsolve.qdldl.QDLDLSymbolic`): each pool hands an object to
  one solve at a time, under its own lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np


def mask_key(mask) -> tuple:
    """A hashable key of a host boolean vector: ``(length, packed bits)``."""
    mask = np.asarray(mask, bool)
    return len(mask), np.packbits(mask).tobytes()


_MISSING = object()


class StructureCache:
    """Final.  A map ``key -> structure`` of at most ``max_entries`` entries, the least
    recently used dropped first (a solve that finds its entry gone rebuilds it: only
    time is lost).  Thread-safe: lookups and insertions hold a lock; a build runs outside
    it, so that a long build blocks no other key's solves.  A thread that misses a key
    another thread is building waits for that build and takes its value (the first
    solves of several threads on one compiled problem build each structure once), unless
    it is building a structure itself: it then builds this one too, so that two builds
    needing each other's keys cannot wait on each other; of two values built at once the
    first inserted is kept and both callers get it.  A build that raises wakes its
    waiters, and the next of them builds."""

    #: a configuration (fixed set, equality rows, finite bounds, options) takes about
    #: eight entries: the slack structure, the bound index sets, the KKT pattern and the
    #: linear solver's analysis, each again for the restoration problem
    MAX_ENTRIES = 64

    def __init__(self, max_entries: int = MAX_ENTRIES):
        self.max_entries = int(max_entries)
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict = {}           # key -> Event set when its build ends
        self._depth = threading.local()     # .n: builds running in this thread
        #: lookups answered from the cache (a wait for another thread's build included)
        #: and lookups that built (for tests and measurements)
        self.hits = self.misses = 0

    def get(self, key, build):
        """The structure under ``key`` (hashable), made by ``build()`` when absent."""
        while True:
            with self._lock:
                value = self._entries.get(key, _MISSING)
                if value is not _MISSING:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return value
                running = self._building.get(key)
                if running is None or getattr(self._depth, "n", 0):
                    self.misses += 1
                    mine = None if running is not None else threading.Event()
                    if mine is not None:
                        self._building[key] = mine
                    break
            running.wait()          # then look again: its value, or build if it failed
        self._depth.n = getattr(self._depth, "n", 0) + 1
        try:
            value = build()
        except BaseException:
            self._finish(key, mine)
            raise
        finally:
            self._depth.n -= 1
        with self._lock:
            value = self._entries.setdefault(key, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        self._finish(key, mine)     # (inserted first: its waiters find the value)
        return value

    def _finish(self, key, mine) -> None:
        """End this thread's build of ``key`` (``mine``: its event, None when it built
        beside another thread's build): wake the threads waiting for it."""
        if mine is not None:
            with self._lock:
                del self._building[key]
            mine.set()

    def clear(self) -> None:
        """Drop every entry (their memory goes once no solve uses them)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
