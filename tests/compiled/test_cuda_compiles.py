"""The CUDA batch kernel compiles for the H200 (sm_90) on a machine without a GPU:
numba-cuda types and lowers the global kernel and every kernel it calls (the CPU
kernels' source, :mod:`caspar_backend.compiled.cuda.retarget`), NVVM turns it into PTX
and ptxas into SASS.  This catches what only the GPU machine would otherwise show -- a
construct numba-cuda cannot type, a libdevice call NVVM rejects -- before device time is
spent on it (~40 s NVVM + ~20 s ptxas on the 2-core VM; marked slow).

Without a GPU, numba-cuda would still ask the driver for the device's compute capability
(device functions) and NVRTC for the architectures it supports: both answers are given
here (sm_90; libdevice and ptxas from the CUDA toolkit in CUDA_HOME or /usr/local/cuda).
Skips where numba-cuda, libNVVM, libdevice or ptxas is missing.

    pytest -m slow tests/compiled/test_cuda_compiles.py
"""
import os
import shutil
import subprocess
import types
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow

CC = (9, 0)


def _toolkit() -> Path:
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and (Path(root) / "nvvm" / "libdevice" / "libdevice.10.bc").is_file():
            return Path(root)
    pytest.skip("no CUDA toolkit with libdevice (CUDA_HOME, /usr/local/cuda)")


def test_rows_kernel_compiles_to_sm90_without_a_gpu(tmp_path, monkeypatch):
    pytest.importorskip("numba_cuda")
    root = _toolkit()
    ptxas = shutil.which("ptxas") or str(root / "bin" / "ptxas")
    if not Path(ptxas).is_file():
        pytest.skip("no ptxas")
    if not hasattr(np, "row_stack"):
        monkeypatch.setattr(np, "row_stack", np.vstack, raising=False)
    monkeypatch.setenv("CUDA_HOME", str(root))
    from numba import cuda
    from numba.cuda import config
    import numba.cuda.cudadrv.nvvm as nvvm
    import numba.cuda.dispatcher as dispatcher
    from numba.cuda.cudadrv.error import NvvmSupportError

    libdevice = str(root / "nvvm" / "libdevice" / "libdevice.10.bc")
    monkeypatch.setattr(config, "FORCE_CUDA_CC", CC)
    monkeypatch.setattr(dispatcher, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=CC))
    monkeypatch.setattr(nvvm, "get_libdevice", lambda: libdevice)
    monkeypatch.setattr(nvvm, "open_libdevice", lambda: Path(libdevice).read_bytes())
    from caspar_backend.compiled.cuda import launch
    from caspar_backend.compiled.cuda.retarget import device_version

    try:
        k = device_version(launch._solve_rows, cache=False)
        ptx, _ = cuda.compile_ptx(k.py_func, launch.signature(), cc=CC)
    except NvvmSupportError as exc:     # libNVVM itself missing
        pytest.skip(f"libNVVM not loadable: {exc}")
    assert "_solve_rows" in ptx
    path = tmp_path / "rows.ptx"
    path.write_text(ptx)
    out = subprocess.run([ptxas, f"-arch=sm_{CC[0]}{CC[1]}", str(path), "-o",
                          str(tmp_path / "rows.cubin")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "rows.cubin").stat().st_size > 0
