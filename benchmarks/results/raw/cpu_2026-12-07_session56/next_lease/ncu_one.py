"""One launch of the CUDA batch kernel (from the kernel cache s56a.sh filled; no line
information) on the pickled Van der Pol layout, for Nsight Compute: argv pickle, B, lanes,
shared (0/1).  The SASS keeps the out-of-line kernels (ldl_eliminate, ldl_forward, ...)
as functions of their own, so per-instruction counters add up per kernel."""
import lzma
import os
import pickle
import sys
import time

sys.path.insert(0, os.getcwd())
import numpy as np  # noqa: E402

from caspar_backend.compiled.cuda.group import COLUMNS  # noqa: E402
from caspar_backend.compiled.cuda.launch import solve_on_device  # noqa: E402
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces  # noqa: E402

pkl, B, lanes, shared = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), bool(int(sys.argv[4]))
d = pickle.loads(lzma.decompress(open(pkl, "rb").read()))
ws = DeviceWorkspaces(d["lay"], d["x0"][:B], d["p"][:B], d["lbx"][:B], d["ubx"][:B],
                      d["lbg"][:B], d["ubg"][:B], interleaved=COLUMNS, shared_structure=True)
t = time.perf_counter()
r = solve_on_device(ws, d["O"], lanes=lanes, shared=shared)
print(f"B={B} lanes={lanes} shared={shared}: {1e3 * (time.perf_counter() - t):.1f} ms, "
      f"iterations {int(np.asarray(r.iters).sum())}", flush=True)
