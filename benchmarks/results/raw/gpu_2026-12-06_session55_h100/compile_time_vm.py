"""The whole CUDA rows kernel compiled for sm_90 on a machine without a GPU: Numba + NVVM
(``cuda.compile_ptx``), then ``ptxas -O3``; prints both times and the PTX's length.
argv: PTX output path, a label.  Run from the root of the tree to time (PYTHONPATH=.)."""
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np

root = Path("/usr/local/cuda")
os.environ["CUDA_HOME"] = str(root)
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack
from numba import cuda  # noqa: E402
from numba.cuda import config  # noqa: E402
import numba.cuda.cudadrv.nvvm as nvvm  # noqa: E402
import numba.cuda.dispatcher as dispatcher  # noqa: E402

CC = (9, 0)
libdevice = str(root / "nvvm" / "libdevice" / "libdevice.10.bc")
config.FORCE_CUDA_CC = CC
dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=CC)
nvvm.get_libdevice = lambda: libdevice
nvvm.open_libdevice = lambda: Path(libdevice).read_bytes()
t0 = time.time()
from caspar_backend.compiled.cuda import launch  # noqa: E402
from caspar_backend.compiled.cuda.retarget import device_version  # noqa: E402

k = device_version(launch._solve_rows, cache=False)
ptx, _ = cuda.compile_ptx(k.py_func, launch.signature(), cc=CC)
t1 = time.time()
out = sys.argv[1]
Path(out).write_text(ptx)
r = subprocess.run([str(root / "bin/ptxas"), "-arch=sm_90", "-O3", out, "-o", out + ".cubin"],
                   capture_output=True, text=True)
t2 = time.time()
print(f"{sys.argv[2]}: ptx {t1 - t0:.0f} s ({len(ptx.splitlines())} lines), ptxas "
      f"{t2 - t1:.0f} s rc {r.returncode} {r.stderr[-300:]}", flush=True)
