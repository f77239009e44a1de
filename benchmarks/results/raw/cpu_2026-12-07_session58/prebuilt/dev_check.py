"""On the device: the library's own launch path (``launch.solve_on_device``, no fake
launcher) on Van der Pol's pickled layout with the kernels prebuilt on the VM
(``python -m caspar_backend.compiled --cuda-prebuild 90`` into the CASPAR_CACHE_DIR this
runs with; ``launch.kernel`` loads them instead of compiling); prints the lines
dev_time.py prints (tree "prebuilt"), so that iterations, codes and the sum of f can be
compared with the VM-built cubin's.  argv: pickle."""
import json
import lzma
import pickle
import sys
import time

import numpy as np

t0 = time.perf_counter()
from caspar_backend.compiled.cuda import launch  # noqa: E402
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces  # noqa: E402

from caspar_backend.compiled.cuda import cache  # noqa: E402

cache.install = lambda: sys.exit("no prebuilt kernel: it would compile")
launch.kernel(False)
launch.kernel(True)
print(json.dumps(dict(event="loaded", name="prebuilt", s=round(time.perf_counter() - t0, 2))),
      flush=True)
d = pickle.loads(lzma.decompress(open(sys.argv[1], "rb").read()))


def run(B, lanes, shared):
    ws = DeviceWorkspaces(d["lay"], d["x0"][:B], d["p"][:B], d["lbx"][:B], d["ubx"][:B],
                          d["lbg"][:B], d["ubg"][:B], interleaved=False,
                          shared_structure=True)
    t = time.perf_counter()
    r = launch.solve_on_device(ws, d["O"], lanes=lanes, shared=shared)
    ms = 1e3 * (time.perf_counter() - t)
    it = np.asarray(r.iters)
    print(json.dumps(dict(tree="prebuilt", shared=shared, B=B, lanes=lanes, ms=round(ms, 2),
                          iters=int(it.sum()), max_iters=int(it.max()),
                          codes=sorted(set(np.asarray(r.code).tolist())),
                          fsum=float(np.sum(r.f)))), flush=True)


for B, lanes, reps in ((4, 32, 1), (1000, 32, 2), (132, 32, 1), (1000, 1, 1)):
    for _ in range(reps):
        for v in (True, False):
            run(B, lanes, v)
