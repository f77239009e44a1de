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

That runtime's copies and synchronizations reach the driver through its export table
(CuPy's and cuDSS's runtime is linked statically), past every wrapped entry point: on
the H200 ``reads`` and ``syncs`` stayed 0.  Where CUPTI's header and library are found
(:func:`cupti_paths`), the library is built with ``cuda_counters_cupti.c`` and those two
counters come from CUPTI's activity records instead (device-to-host copies;
stream, event and context synchronizations), which see the work however it was asked
for; :func:`counted_by` says which.
"""

from __future__ import annotations

import ctypes
import glob
import os
import subprocess
import sys
from pathlib import Path

NAMES = ("launches", "reads", "default_copies", "syncs")
SOURCE = Path(__file__).with_name("cuda_counters.c")


CUPTI_SOURCE = Path(__file__).with_name("cuda_counters_cupti.c")


def cupti_paths() -> tuple[list[str], str] | None:
    """(include folders, library folder) of a CUDA toolkit with CUPTI (``$CUDA_HOME``,
    ``$CUDA_PATH``, /usr/local/cuda*), or None."""
    roots = [os.environ.get(k) for k in ("CUDA_HOME", "CUDA_PATH")]
    roots += ["/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    for root in filter(None, roots):
        r = Path(root)
        incs = [r / "include", r / "targets/x86_64-linux/include", r / "extras/CUPTI/include"]
        libs = [r / "extras/CUPTI/lib64", r / "targets/x86_64-linux/lib", r / "lib64"]
        header = next((i for i in incs if (i / "cupti.h").exists()), None)
        lib = next((d for d in libs if (d / "libcupti.so").exists()), None)
        if header is not None and lib is not None and any((i / "cuda.h").exists() for i in incs):
            return [str(i) for i in incs if i.exists()], str(lib)
    return None


def build(out_dir: str | os.PathLike | None = None) -> Path:
    """Compile the library with the C compiler (``$CC``, default ``cc``), with CUPTI's
    counters where :func:`cupti_paths` finds CUPTI."""
    d = Path(out_dir or os.environ.get("CASPAR_CACHE_DIR", Path.home() / ".cache" / "caspar"))
    d.mkdir(parents=True, exist_ok=True)
    lib = d / "libcaspar_counters.so"
    cmd = [os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC", str(SOURCE)]
    cupti = cupti_paths()
    if cupti is None:
        subprocess.run(cmd + ["-o", str(lib), "-ldl"], check=True)
        return lib
    incs, libdir = cupti
    cmd += ["-DCASPAR_CUPTI", str(CUPTI_SOURCE), *(f"-I{i}" for i in incs),
            f"-L{libdir}", f"-Wl,-rpath,{libdir}", "-lcupti", "-o", str(lib), "-ldl"]
    # the newest kernel record struct the header declares (the timeline reads its name
    # and stream); without one the library counts but keeps no kernels
    for struct in KERNEL_RECORDS:
        if subprocess.run(cmd + [f"-DCASPAR_KERNEL_RECORD={struct}"],
                          capture_output=True).returncode == 0:
            return lib
    subprocess.run(cmd, check=True)
    return lib


#: CUPTI's kernel activity record structs, newest first (the header of CUDA 12 declares
#: up to 9 or 10, later toolkits more)
KERNEL_RECORDS = tuple(f"CUpti_ActivityKernel{v}" for v in range(12, 3, -1))


def counted_by() -> str | None:
    """'cupti' when reads and syncs are CUPTI's counts, 'wrappers' when the API
    wrappers', None without the library."""
    try:
        fn = ctypes.CDLL(None).caspar_counts_from_cupti
    except AttributeError:
        return None
    return "cupti" if fn() else "wrappers"


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
