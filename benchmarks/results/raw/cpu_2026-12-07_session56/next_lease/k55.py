"""The CUDA batch kernel alone on a pickled Van der Pol layout (N = 50, built on the VM):
no casadi or cuDSS needed.  argv: tree name ('main': no ``shared`` argument), pickle, mode
('compile': one launch of 4 instances; 'time': launches of 1,000 and 132 instances at 32
lanes and 1,000 at one lane, each with QDLDL's vectors in shared memory and without,
interleaved; fresh workspaces each)."""
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


def launch(B, lanes, shared=None):
    ws = DeviceWorkspaces(d["lay"], d["x0"][:B], d["p"][:B], d["lbx"][:B], d["ubx"][:B],
                          d["lbg"][:B], d["ubg"][:B], interleaved=COLUMNS,
                          shared_structure=True)
    kw = {} if shared is None else dict(shared=shared)
    t = time.perf_counter()
    r = solve_on_device(ws, d["O"], lanes=lanes, **kw)
    ms = 1e3 * (time.perf_counter() - t)
    it = np.asarray(r.iters)
    print(json.dumps(dict(tree=name, shared=shared, B=B, lanes=lanes, ms=round(ms, 2),
                          iters=int(it.sum()), max_iters=int(it.max()),
                          codes=sorted(set(np.asarray(r.code).tolist())),
                          fsum=float(np.sum(r.f)))), flush=True)


t0 = time.perf_counter()
variants = (None,) if name == "main" else (True, False)
if mode == "compile":
    launch(4, 32, variants[0])
    print(f"{name} compiled+first launch {time.perf_counter() - t0:.0f} s", flush=True)
else:
    for v in variants:
        launch(4, 32, v)
    for B, lanes, reps in ((1000, 32, 3), (132, 32, 2), (1000, 1, 1)):
        for _ in range(reps):
            for v in variants:
                launch(B, lanes, v)
