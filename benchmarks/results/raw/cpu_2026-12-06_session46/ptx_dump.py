import os, types, sys
from pathlib import Path
import numpy as np
root = Path("/usr/local/cuda")
os.environ["CUDA_HOME"] = str(root)
if not hasattr(np, "row_stack"): np.row_stack = np.vstack
from numba import cuda
from numba.cuda import config
import numba.cuda.cudadrv.nvvm as nvvm
import numba.cuda.dispatcher as dispatcher
CC = (9, 0)
libdevice = str(root / "nvvm" / "libdevice" / "libdevice.10.bc")
config.FORCE_CUDA_CC = CC
dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=CC)
nvvm.get_libdevice = lambda: libdevice
nvvm.open_libdevice = lambda: Path(libdevice).read_bytes()
from caspar_backend.compiled.cuda import launch
from caspar_backend.compiled.cuda.retarget import device_version
k = device_version(launch._solve_rows, cache=False)
ptx, _ = cuda.compile_ptx(k.py_func, launch.signature(), cc=CC)
Path(sys.argv[1]).write_text(ptx)
print(len(ptx.splitlines()), "PTX lines")
