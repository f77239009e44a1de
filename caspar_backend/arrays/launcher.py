"""Kernel launches through the driver with a reusable parameter buffer.

A CuPy ``Function`` call costs ~8-9 us of host time per launch (H100, session 43,
``gpu_2026-12-05_session43_h100/launch_costs.log``): it boxes every argument (a pointer
or scalar object each, with its checks) before ``cuLaunchKernel``.  The fused kernels'
parameters (:mod:`.fused_cuda`) are all 8-byte values -- device pointers, doubles,
64-bit integers -- but pack's 32-bit count, so a :class:`Launcher` writes each
argument's bits into a slot of a per-thread buffer of 8-byte slots and calls
``cuLaunchKernel`` with the slots' addresses (``kernelParams``, one pointer per
parameter; the driver reads each parameter's size from the kernel and copies the
values during the call, so the buffer is free again when it returns).

Arguments, by type: ``numpy.float64`` -> a double; ``numpy.int64`` / ``numpy.int32``
-> a 64-bit integer (a 32-bit parameter reads the slot's low half: little-endian, and
the counts are non-negative); anything else -> a device array, passed as its
``data.ptr``.  The caller converts its scalars to these types (the kernels' ``double``
and ``long long`` parameters), as it did for CuPy.  Per thread, because the driver call
releases the GIL: another thread filling the same buffer meanwhile would change this
launch's parameters.
"""

from __future__ import annotations

import threading

import numpy as np

#: parameters per launch at most (the fused kernels take at most ~20)
SLOTS = 64

_F64 = np.float64
_INTS = (np.int64, np.int32)


class _Buffer:
    """Final.  One thread's parameter slots: their bits three ways, and the slots'
    addresses as the ``kernelParams`` array."""

    __slots__ = ("bits", "ints", "reals", "addresses", "params")

    def __init__(self):
        self.bits = np.zeros(SLOTS, dtype=np.uint64)
        self.ints = self.bits.view(np.int64)
        self.reals = self.bits.view(np.float64)
        base = self.bits.ctypes.data
        self.addresses = np.arange(base, base + 8 * SLOTS, 8, dtype=np.uint64)
        self.params = int(self.addresses.ctypes.data)


class Launcher:
    """Final.  ``launcher(fptr, blocks, threads, args)``: one launch of the kernel at
    ``fptr`` (a ``CUfunction``) on ``blocks`` x ``threads`` on the current stream of
    ``xp`` (module doc for ``args``)."""

    def __init__(self, xp, launch_kernel):
        self.xp = xp
        self._launch = launch_kernel
        self._local = threading.local()

    def buffer(self) -> _Buffer:
        """This thread's parameter buffer."""
        buf = getattr(self._local, "buf", None)
        if buf is None:
            buf = self._local.buf = _Buffer()
        return buf

    def __call__(self, fptr: int, blocks: int, threads: int, args: tuple) -> None:
        if len(args) > SLOTS:
            raise ValueError(f"a launch takes at most {SLOTS} parameters, got {len(args)}")
        buf = self.buffer()
        bits, ints, reals = buf.bits, buf.ints, buf.reals
        for j, a in enumerate(args):
            t = type(a)
            if t is _F64:
                reals[j] = a
            elif t in _INTS:
                ints[j] = a
            else:
                bits[j] = a.data.ptr
        self._launch(fptr, blocks, 1, 1, threads, 1, 1, 0,
                     self.xp.cuda.get_current_stream().ptr, buf.params, 0)


def launcher(xp) -> Launcher | None:
    """The :class:`Launcher` of ``xp`` where it has the driver's ``launchKernel`` (CuPy),
    else None (the caller launches through the module's functions).  One per array
    module (its buffers are per thread)."""
    drv = getattr(getattr(xp, "cuda", None), "driver", None)
    launch = getattr(drv, "launchKernel", None)
    if launch is None:
        return None
    key = id(xp)
    got = _LAUNCHERS.get(key)
    if got is None or got.xp is not xp:
        got = _LAUNCHERS[key] = Launcher(xp, launch)
    return got


_LAUNCHERS: dict = {}


class _Launched:
    """Final.  A CuPy function called as CuPy's (``f(grid, block, args)``, 1-D) through a
    :class:`Launcher`."""

    __slots__ = ("function", "ptr", "go")

    def __init__(self, function, go: Launcher):
        self.function, self.ptr, self.go = function, function.ptr, go

    def __call__(self, grid: tuple, block: tuple, args: tuple) -> None:
        self.go(self.ptr, grid[0], block[0], args)


def fast(xp, function):
    """``function`` (a CuPy ``Function``) launched through ``xp``'s :class:`Launcher`
    where there is one and the function exposes its ``CUfunction``; else ``function``
    itself.  Its arguments must be of the module doc's types (every caller's are)."""
    go = launcher(xp)
    if go is None or not hasattr(function, "ptr"):
        return function
    return _Launched(function, go)
