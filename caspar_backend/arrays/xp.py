"""Where NumPy and CuPy differ: the array module ``xp`` the solver is written against.

The interior point, the KKT systems and the linear solvers are written once against an
array module ``xp`` -- :mod:`numpy` on the CPU, :mod:`cupy` on a CUDA device -- taken
from the evaluator (``evaluator.xp``).  Vectors and value arrays live in ``xp``;
*structures* (COO/CSC index patterns) are computed once on the host with NumPy.

* :func:`host` copies to a NumPy array (once per solve, never inside the iteration);
* :func:`scalars` reads several 0-d device values back in **one** device-to-host
  transfer (each transfer is a synchronisation, so the method batches the scalars it
  branches on);
* :func:`errstate` silences NumPy's floating-point warnings (CuPy has none);
* :func:`synchronize` waits for the device before a clock is read;
* :func:`gather` is ``out[:] = a[idx]`` without a temporary;
* :func:`amax` is ``max(a)`` with 0 for an empty array;
* :func:`asum` is ``xp.sum(a)``, on the host the ufunc reduction itself (``np.sum`` is
  ``np.add.reduce`` behind a Python dispatch layer: the same pairwise sum, bit for bit,
  at a third of the cost on the tiny vectors of a small problem).
"""

from __future__ import annotations

import contextlib

import numpy as np

from . import fused, fused_cuda


def is_host(xp) -> bool:
    return xp is np


def host(a) -> np.ndarray:
    """``a`` as a NumPy array (a device array is copied to the host)."""
    if hasattr(a, "get") and not isinstance(a, np.ndarray):
        return a.get()
    return np.asarray(a)


def scalars(xp, *values) -> list:
    """Python floats of the 0-d arrays / numbers ``values``, with at most one
    device-to-host transfer."""
    if is_host(xp):
        return [float(v) for v in values]
    dev = [i for i, v in enumerate(values) if hasattr(v, "get")]
    out = [v if i not in dev else None for i, v in enumerate(values)]
    if dev:
        got = _gathered(xp, [values[i] for i in dev]).get()
        for i, g in zip(dev, got):
            out[i] = float(g)
    return [float(v) for v in out]


def _gathered(xp, values):
    """The 0-d device values as one float64 device vector: one launch of the fused
    module's pack kernel (a stack is a concatenate with ~100 us of host work)."""
    if len(values) <= fused_cuda.PACK_MAX and hasattr(xp, "RawModule"):
        # (a fused reduction's columns are 0-d already: no view made for them)
        packed = fused_cuda.pack(xp, fused.SPECS,
                                 [v if v.ndim == 0 else v.reshape(()) for v in values])
        if packed is not None:
            return packed
    # astype without a copy: each copy of a float64 value would be one more launch
    return xp.stack([(v.view() if type(v) is fused_cuda.Column else v.reshape(()))
                     .astype(xp.float64, copy=False) for v in values])


def errstate(xp):
    return np.errstate(all="ignore") if is_host(xp) else contextlib.nullcontext()


def synchronize(xp) -> None:
    """Wait for the device (timers read the clock after this); no-op on the host."""
    if not is_host(xp):
        xp.cuda.get_current_stream().synchronize()


def copy_into(xp, dst, src) -> None:
    """``dst[...] = src`` for C-contiguous float64 vectors of one length.  On the device
    one device-to-device copy on the current stream: no kernel, and none of the host
    work of CuPy's ``__setitem__`` (index parsing, a copy kernel's launch), which an
    iteration pays ~10 times."""
    mem = getattr(dst.data, "copy_from_device_async", None)
    if is_host(xp) or mem is None or dst.size != src.size or dst.dtype != src.dtype \
            or not (fused_cuda._c_order(dst) and fused_cuda._c_order(src)):
        dst[...] = src
    elif dst.size:
        mem(src.data, dst.nbytes)


def gather(xp, a, idx, out):
    """``out[:] = a[idx]`` (``idx`` int64 in range, an ``xp`` array), in place.  NumPy's
    ``take`` copies through a buffer when it must check the indices (``mode='raise'``);
    the indices here are structures built in range, so the host clips instead."""
    if is_host(xp):
        return np.take(a, idx, out=out, mode="clip")
    return xp.take(a, idx, out=out)


_add_reduce = np.add.reduce


def asum(xp, a):
    """sum(a) as a 0-d value (module doc)."""
    if xp is np:
        return _add_reduce(a)
    return xp.sum(a)


def amax(xp, a):
    """max(a) as a 0-d array, 0.0 for an empty ``a`` (NumPy's ``initial=0.0`` for
    nonnegative data; CuPy's max has no ``initial``)."""
    return xp.max(a) if a.size else xp.zeros(())
