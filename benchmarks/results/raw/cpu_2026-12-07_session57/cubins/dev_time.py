"""On the device: a VM-built cubin of one tree's batch kernel (vm_build.py) timed alone on
that tree's pickled Van der Pol layout, as k55.py times it (B = 1,000 x3 and 132 x2 at 32
lanes, 1,000 at one lane; 4 first), through the tree's own ``solve_on_device``
(fake_kernel.py: no compile on the device).  ``shared`` True/False interleaved where the
tree's solve_on_device takes it.  argv: tree root, name, cubin, pickle."""
import inspect
import json
import lzma
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

tree, name, cubin, pkl = Path(sys.argv[1]).resolve(), sys.argv[2], Path(sys.argv[3]), \
    sys.argv[4]
sys.path.insert(0, str(tree))
sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))
import fake_kernel  # noqa: E402
from caspar_backend.compiled.cuda import launch  # noqa: E402
from caspar_backend.compiled.cuda.group import COLUMNS  # noqa: E402
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces  # noqa: E402

meta = json.loads(cubin.with_suffix(".json").read_text())
t0 = time.perf_counter()
fake_kernel.install(launch, cubin, meta)
load_s = time.perf_counter() - t0
d = pickle.loads(lzma.decompress(open(pkl, "rb").read()))
assert not COLUMNS
variants = ((True, False) if "shared" in inspect.signature(launch.solve_on_device).parameters
            else (None,))
print(json.dumps(dict(event="loaded", name=name, s=round(load_s, 2), **meta)), flush=True)


def run(B, lanes, shared):
    ws = DeviceWorkspaces(d["lay"], d["x0"][:B], d["p"][:B], d["lbx"][:B], d["ubx"][:B],
                          d["lbg"][:B], d["ubg"][:B], interleaved=False,
                          shared_structure=True)
    kw = {} if shared is None else dict(shared=shared)
    t = time.perf_counter()
    r = launch.solve_on_device(ws, d["O"], lanes=lanes, **kw)
    ms = 1e3 * (time.perf_counter() - t)
    it = np.asarray(r.iters)
    print(json.dumps(dict(tree=name, shared=shared, B=B, lanes=lanes, ms=round(ms, 2),
                          iters=int(it.sum()), max_iters=int(it.max()),
                          codes=sorted(set(np.asarray(r.code).tolist())),
                          fsum=float(np.sum(r.f)))), flush=True)


for v in variants:
    run(4, 32, v)
for B, lanes, reps in ((1000, 32, 3), (132, 32, 2), (1000, 1, 1)):
    for _ in range(reps):
        for v in variants:
            run(B, lanes, v)
