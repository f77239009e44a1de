"""Kernel launches and host reads of a GPU run, counted at the CUDA API.

    python -m benchmarks.cuda_counters build      # prints the library's path
    LD_PRELOAD=<that path> python -m benchmarks ...

``benchmarks/cuda_counters.c`` wraps the CUDA driver's launch, copy and synchronize entry
points however the process reaches them (linked, ``dlsym`` on libcuda as CuPy does, or
``cuGetProcAddress`` as the statically linked CUDA runtime of CuPy and cuDSS does), so
every launch of CuPy, of the generated evaluator and of cuDSS is counted; and the CUDA
runtime's own copy and synchronize functions (CuPy's ``get()`` and stream
synchronizations go through libcudart, which reaches the driver for them by a private
route: on the H200 the driver-level copy and synchronize counts stayed 0).
:func:`snapshot` reads the counters (``None`` without the library; a counter whose
entry points the process never reached through a wrapped route is ``None`` too, not 0),
so the runner records per-iteration figures only where they were counted:

* ``launches``: ``cuLaunchKernel``, ``cuLaunchKernelEx``, ``cuLaunchCooperativeKernel``;
* ``reads``: device-to-host copies (``cuMemcpyDtoH``, ``cuMemcpyDtoHAsync``, and the
  unified-address copies ``cuMemcpy`` / ``cuMemcpyAsync`` from device to host memory --
  CuPy's ``get()`` -- told apart by the driver's ``cuPointerGetAttribute``);
* ``default_copies``: the other unified-address copies (host to device, device to
  device);
* ``syncs``: stream, event and context synchronizations -- a host read waits on one.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

NAMES = ("launches", "reads", "default_copies", "syncs")
SOURCE = Path(__file__).with_name("cuda_counters.c")


def build(out_dir: str | os.PathLike | None = None) -> Path:
    """Compile the library with the C compiler (``$CC``, default ``cc``)."""
    d = Path(out_dir or os.environ.get("CASPAR_CACHE_DIR", Path.home() / ".cache" / "caspar"))
    d.mkdir(parents=True, exist_ok=True)
    lib = d / "libcaspar_counters.so"
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", str(SOURCE),
                    "-o", str(lib), "-ldl"], check=True)
    return lib


def _reader():
    try:
        fn = ctypes.CDLL(None).caspar_counts
    except AttributeError:
        return None
    fn.restype, fn.argtypes = None, [ctypes.POINTER(ctypes.c_ulonglong)]
    return fn


_READ = _reader()


def snapshot() -> dict | None:
    """The counters now (dict keyed by :data:`NAMES`), or None when the library is not
    preloaded."""
    if _READ is None:
        return None
    buf = (ctypes.c_ulonglong * 5)()
    _READ(buf)
    seen = int(buf[4])
    return {name: (int(buf[i]) if seen >> i & 1 else None) for i, name in enumerate(NAMES)}


def difference(before: dict | None, after: dict | None) -> dict | None:
    if before is None or after is None:
        return None
    return {k: None if after[k] is None else after[k] - (before[k] or 0) for k in NAMES}


if __name__ == "__main__":
    if sys.argv[1:] == ["build"]:
        print(build())
    else:
        sys.exit("usage: python -m benchmarks.cuda_counters build")
