"""The CUDA batch kernel alone on a pickled Van der Pol layout (N = 50, B = 1,000, built
on the VM with this tree's code): no casadi or cuDSS needed.  argv: tree name, pickle,
mode ('compile': one launch of 4 instances; 'time': 3 launches of 1,000 at 32 lanes and
1 at one lane, fresh workspaces each)."""
import json
import lzma
import pickle
import sys
import time

import numpy as np

name, pkl, mode = sys.argv[1], sys.argv[2], sys.argv[3]
d = pickle.loads(lzma.decompress(open(pkl, "rb").read()))
from caspar_backend.compiled.cuda.group import COLUMNS  # noqa: E402
from caspar_backend.compiled.cuda.launch import solve_on_device  # noqa: E402
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces  # noqa: E402


def launch(B, lanes):
    ws = DeviceWorkspaces(d["lay"], d["x0"][:B], d["p"][:B], d["lbx"][:B], d["ubx"][:B],
                          d["lbg"][:B], d["ubg"][:B], interleaved=COLUMNS,
                          shared_structure=True)
    t = time.perf_counter()
    r = solve_on_device(ws, d["O"], lanes=lanes)
    ms = 1e3 * (time.perf_counter() - t)
    it = np.asarray(r.iters)
    print(json.dumps(dict(tree=name, B=B, lanes=lanes, ms=round(ms, 2),
                          iters=int(it.sum()), max_iters=int(it.max()),
                          codes=sorted(set(np.asarray(r.code).tolist())),
                          fsum=float(np.sum(r.fval)))), flush=True)


t0 = time.perf_counter()
if mode == "compile":
    launch(4, 32)
    print(f"{name} compiled+first launch {time.perf_counter() - t0:.0f} s", flush=True)
else:
    launch(4, 32)
    for _ in range(3):
        launch(1000, 32)
    launch(1000, 1)
