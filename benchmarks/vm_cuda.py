"""Numba-CUDA compiles for a GPU architecture on a machine without a GPU (the VM), for
the raw folders' build scripts (e.g. cpu_2026-12-07_session57/cubins/vm_build.py), which
may compile an older tree of the library: :func:`setup` enters this checkout's
``caspar_backend/compiled/cuda/offline.target`` (loaded by path, so the tree on
``sys.path`` need not have it) for the rest of the process; then
``cuda.compile_ptx(..., cc=CC)`` works and :func:`tool` names the toolkit's binaries."""
from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "caspar_offline", Path(__file__).resolve().parents[1] / "caspar_backend" / "compiled"
    / "cuda" / "offline.py")
offline = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(offline)

CC = offline.CC


def root() -> Path:
    """The CUDA toolkit (``CUDA_HOME``, else /usr/local/cuda)."""
    r = offline.toolkit()
    if r is None:
        raise RuntimeError("no CUDA toolkit with libdevice (set CUDA_HOME)")
    return r


def setup(cc=CC) -> None:
    """Compile for compute capability ``cc`` with the toolkit's NVVM and libdevice from
    here on (``offline.target`` entered for the rest of the process)."""
    offline.target(cc, root()).__enter__()


def tool(name: str) -> str:
    """The toolkit's ``bin/name`` (ptxas, nvcc, nvlink)."""
    return str(root() / "bin" / name)
