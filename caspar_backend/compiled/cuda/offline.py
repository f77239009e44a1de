"""The CUDA batch kernels compiled on a machine without a GPU: numba-cuda's typing and
lowering, the CUDA toolkit's NVVM (to PTX) and ptxas (to a cubin for one compute
capability), nothing that needs a driver.

numba-cuda asks the driver twice while it compiles a kernel: for the current device's
compute capability (the kernel's target and the device functions') and, through NVVM, for
libdevice's location.  :func:`target` answers both for the duration of a ``with`` block
(the capability given, libdevice from the toolkit: ``CUDA_HOME``, else /usr/local/cuda);
:func:`kernel_object` then builds numba-cuda's own kernel object for
:func:`.launch.signature` -- the same typing, lowering and NVVM options as a compile on
the GPU machine -- and puts ptxas's cubin in its code library, where a launch on a GPU of
that capability finds it instead of linking; :func:`prebuild` stores both kernels
(:mod:`.prebuilt`).  Used by
``python -m caspar_backend.compiled --cuda-prebuild``, the raw benchmark scripts that
build kernels for the GPU machine, and tests/compiled/test_cuda_compiles.py.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
import types
from contextlib import contextmanager
from pathlib import Path

#: the H100's and H200's compute capability
CC = (9, 0)


def toolkit() -> Path | None:
    """The CUDA toolkit with libdevice (``CUDA_HOME``, else /usr/local/cuda), or None."""
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and (Path(root) / "nvvm" / "libdevice" / "libdevice.10.bc").is_file():
            return Path(root)
    return None


def ptxas_path(root: Path) -> Path | None:
    """The toolkit's ptxas, or None."""
    p = root / "bin" / "ptxas"
    return p if p.is_file() else None


@contextmanager
def target(cc: tuple[int, int] = CC, root: Path | None = None):
    """numba-cuda compiles for compute capability ``cc`` with the toolkit ``root``'s
    libdevice inside the block, no driver asked; everything patched is restored after.
    Raises ``RuntimeError`` where no toolkit is found."""
    import numpy as np

    root = root or toolkit()
    if root is None:
        raise RuntimeError("no CUDA toolkit with libdevice (set CUDA_HOME)")
    if not hasattr(np, "row_stack"):     # numba-cuda <= 0.30 registers np.row_stack
        np.row_stack = np.vstack
    from numba.cuda import config
    import numba.cuda.codegen as codegen
    import numba.cuda.cudadrv.nvvm as nvvm
    import numba.cuda.dispatcher as dispatcher

    libdevice = str(root / "nvvm" / "libdevice" / "libdevice.10.bc")
    patches = [
        (config, "FORCE_CUDA_CC", cc),
        (dispatcher, "get_current_device",
         lambda: types.SimpleNamespace(compute_capability=cc)),
        (codegen.CUDACodeLibrary, "_ensure_cc", lambda self, c: c or cc),
        (nvvm, "get_libdevice", lambda: libdevice),
        (nvvm, "open_libdevice", lambda: Path(libdevice).read_bytes()),
    ]
    saved = [(obj, name, obj.__dict__.get(name, _ABSENT)) for obj, name, _ in patches]
    env = os.environ.get("CUDA_HOME")
    os.environ["CUDA_HOME"] = str(root)
    try:
        for obj, name, value in patches:
            setattr(obj, name, value)
        yield root
    finally:
        for obj, name, value in saved:
            if value is _ABSENT:
                delattr(obj, name)
            else:
                setattr(obj, name, value)
        if env is None:
            os.environ.pop("CUDA_HOME", None)
        else:
            os.environ["CUDA_HOME"] = env


_ABSENT = object()


def ptx(columns: bool, cc: tuple[int, int] = CC, chains: str = "loops") -> str:
    """The rows (``columns`` False) or columns kernel's PTX for ``cc`` (inside
    :func:`target`); ``chains`` 'extern': QDLDL's chains calling per-pattern code
    (:mod:`.chains`; rows only), to be linked (:mod:`.link`)."""
    from numba import cuda

    from . import launch
    from .retarget import device_version

    d = device_version(launch._solve_columns if columns else launch._solve_rows,
                       chains=chains, cache=False)
    text, _ = cuda.compile_ptx(d.py_func, launch.signature(), cc=cc)
    return text


def assemble(ptx_text: str, cc: tuple[int, int], root: Path) -> bytes:
    """ptxas -O3 of ``ptx_text`` for ``sm_<cc>``: the cubin's bytes."""
    exe = ptxas_path(root)
    if exe is None:
        raise RuntimeError(f"no ptxas in {root / 'bin'}")
    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d) / "k.ptx", Path(d) / "k.cubin"
        src.write_text(ptx_text)
        r = subprocess.run([str(exe), f"-arch=sm_{cc[0]}{cc[1]}", "-O3", str(src), "-o",
                            str(out)], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"ptxas failed: {r.stderr[-2000:]}")
        return out.read_bytes()


def kernel_object(columns: bool, cc: tuple[int, int] = CC):
    """numba-cuda's kernel object (``numba.cuda.dispatcher._Kernel``) of the rows or
    columns kernel for :func:`.launch.signature`, its code library holding the cubin for
    ``cc`` (so a launch on such a GPU loads it without linking).  Inside :func:`target`."""
    from . import launch
    from .prebuilt import kernel_object as unassembled

    k = unassembled(launch._solve_columns if columns else launch._solve_rows,
                    launch.signature())
    lib = k._codelibrary
    if lib._linking_files:
        raise RuntimeError(f"the kernel links {sorted(map(str, lib._linking_files))}: "
                           "not buildable offline")
    lib._cubin_cache[cc] = assemble(lib.get_asm_str(cc=cc), cc, toolkit())
    return k


def prebuild(cc: tuple[int, int], columns_kinds=(False, True),
             extern: bool = True) -> list[Path]:
    """Compile the kernels for ``cc`` on this machine (the CUDA toolkit, no GPU) and save
    them as prebuilt files in the kernel cache (:func:`.prebuilt.save`), and with
    ``extern`` the extern variant's rows kernel that each layout's pattern kernel links
    against (:func:`.patterns.kernel_state`: a GPU machine then links a new pattern in
    seconds instead of compiling it first); their paths."""
    from . import patterns
    from .prebuilt import save

    out = []
    with target(cc):
        for columns in columns_kinds:
            out.append(save(kernel_object(columns, cc), columns, cc))
        if extern:
            patterns.kernel_state(cc)
            out.append(patterns.kernel_path(cc))
    return out
