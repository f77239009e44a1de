"""One launch of the CUDA batch kernel, compiled with line information, on the pickled
Van der Pol layout (kernel_alone_pickled.py's), for Nsight Compute.  argv: pickle, mode
('compile': 4 instances, to fill the line-info cache; 'profile'), B, lanes."""
import lzma
import os
import pickle
import sys
import time

os.environ["CASPAR_CACHE_DIR"] = "/tmp/cc_lineinfo"
os.environ["CASPAR_BACKGROUND_COMPILE"] = "0"
from numba import cuda  # noqa: E402

_jit = cuda.jit


def _with_lines(*a, **k):
    k.setdefault("lineinfo", True)
    return _jit(*a, **k)


cuda.jit = _with_lines
sys.path.insert(0, os.getcwd())
import numpy as np  # noqa: E402

from caspar_backend.compiled.cuda.group import COLUMNS  # noqa: E402
from caspar_backend.compiled.cuda.launch import solve_on_device  # noqa: E402
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces  # noqa: E402

pkl, mode, B, lanes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
d = pickle.loads(lzma.decompress(open(pkl, "rb").read()))
ws = DeviceWorkspaces(d["lay"], d["x0"][:B], d["p"][:B], d["lbx"][:B], d["ubx"][:B],
                      d["lbg"][:B], d["ubg"][:B], interleaved=COLUMNS, shared_structure=True)
t = time.perf_counter()
r = solve_on_device(ws, d["O"], lanes=lanes)
print(f"{mode} B={B} lanes={lanes}: {1e3 * (time.perf_counter() - t):.1f} ms, iterations "
      f"{int(np.asarray(r.iters).sum())}", flush=True)
