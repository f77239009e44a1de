"""Result arrays of the fused kernels, reused once nothing else holds them.

A fused launch on the device writes its result into a new CuPy array: the memory pool's
allocation and the ndarray object cost ~5-8 us of host time (H100: ``cupy.empty`` 8.5 us
under cProfile, 22 per interior-point iteration of case9241_pegase; raw
``gpu_2026-12-05_session43_h100/profile_9241.log``), and on the device the host's time
between launches is the iteration's floor.  :class:`OutputPool` hands out, per key
(an op's name and the result's shape), an array of an earlier launch that no Python
object references any more -- its reference count is the pool's own -- and makes a new
one otherwise.

Why reuse is safe: a result's caller sees a fresh array (its contents are the launch's);
an array is handed out again only when nothing holds it or a view of it (a view
references its base), and the launches of one thread run in stream order, so the next
kernel that writes it runs after every kernel that read it.  Pools are per thread
(a thread's launches are ordered; two threads' are not), at most :data:`SLOTS` arrays
per key and :data:`MAX_KEYS` keys per thread (past that the thread's pools are dropped:
a process that solves problems of many sizes keeps no dead arrays).  Where reference
counts cannot be trusted (a free-threaded interpreter) every call allocates.
"""

from __future__ import annotations

import sys
import threading

#: arrays kept per key and thread
SLOTS = 4
#: keys (op, shape) kept per thread before its pools are dropped
MAX_KEYS = 256


def _free_count() -> int:
    """The reference count ``sys.getrefcount(pool[j])`` reports for an entry only the
    pool holds (the list's reference and the call's argument)."""
    pool = [object()]
    return sys.getrefcount(pool[0])


#: the count of an entry nothing else references
FREE = _free_count()
#: reference counts are exact only with the GIL (a free-threaded build defers them)
ENABLED = getattr(sys, "_is_gil_enabled", lambda: True)()


class OutputPool:
    """Final.  Reusable result arrays of one array module ``xp`` (module doc)."""

    def __init__(self, xp):
        self.xp = xp
        self._local = threading.local()

    def take(self, key, shape: tuple, dtype):
        """An array of ``shape`` and ``dtype`` (contents undefined) that no one but the
        pool references: one of ``key``'s earlier arrays, or a new one."""
        if not ENABLED:
            return self.xp.empty(shape, dtype=dtype)
        pools = getattr(self._local, "pools", None)
        if pools is None:
            pools = self._local.pools = {}
        pool = pools.get(key)
        if pool is None:
            if len(pools) >= MAX_KEYS:
                pools.clear()
            pool = pools[key] = []
        refs = sys.getrefcount
        for j in range(len(pool)):
            if refs(pool[j]) == FREE:
                return pool[j]
        out = self.xp.empty(shape, dtype=dtype)
        if len(pool) < SLOTS:
            pool.append(out)
        return out

    def held(self) -> int:
        """Arrays this thread's pools keep (for tests)."""
        pools = getattr(self._local, "pools", None) or {}
        return sum(len(p) for p in pools.values())
