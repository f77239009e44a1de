"""Numba-CUDA compiles for a GPU architecture on a machine without a GPU (the VM): the
CUDA toolkit's libnvvm and libdevice (``CUDA_HOME``, default /usr/local/cuda), the target
compute capability forced, numba-cuda's device queries answered with it.  Call
:func:`setup` before importing anything that compiles; then ``cuda.compile_ptx(...,
cc=CC)`` works and ``tool('ptxas')`` names the toolkit's binaries.  Used by the raw
folders' build scripts (e.g. cpu_2026-12-07_session57/cubins/vm_build.py)."""
from __future__ import annotations

import os
import types
from pathlib import Path

CC = (9, 0)


def root() -> Path:
    return Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))


def setup(cc=CC) -> None:
    """Point numba-cuda at the toolkit's NVVM and libdevice and at compute capability
    ``cc`` (the device queries patched: no driver is needed)."""
    import numpy as np

    os.environ.setdefault("CUDA_HOME", str(root()))
    if not hasattr(np, "row_stack"):     # numba-cuda <= 0.30 registers np.row_stack
        np.row_stack = np.vstack
    from numba.cuda import config
    import numba.cuda.codegen as codegen
    import numba.cuda.cudadrv.nvvm as nvvm
    import numba.cuda.dispatcher as dispatcher

    libdevice = str(root() / "nvvm" / "libdevice" / "libdevice.10.bc")
    config.FORCE_CUDA_CC = cc
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    codegen.CUDACodeLibrary._ensure_cc = lambda self, c: c or cc
    nvvm.get_libdevice = lambda: libdevice
    nvvm.open_libdevice = lambda: Path(libdevice).read_bytes()


def tool(name: str) -> str:
    """The toolkit's ``bin/name`` (ptxas, nvcc, nvlink)."""
    return str(root() / "bin" / name)
