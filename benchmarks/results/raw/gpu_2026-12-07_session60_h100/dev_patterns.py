"""On the device (branch straight-ldl; CASPAR_CACHE_DIR holding build_patterns.py's
output): Van der Pol N = 50 solved by the loops kernel (launch.kernel, prebuilt) and by
the kernel linked with its pattern's generated chains (patterns.kernel_for), interleaved:
ms per launch, and codes, iterations, f and x compared bit for bit.  argv: pickle."""
import json
import lzma
import pickle
import sys
import time

import numpy as np

from caspar_backend.compiled.cuda import launch, patterns
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces

d = pickle.loads(lzma.decompress(open(sys.argv[1], "rb").read()))
t = time.perf_counter()
loops = launch.kernel(False)
gen = patterns.kernel_for(d["lay"], (9, 0))
print(json.dumps(dict(event="loaded", s=round(time.perf_counter() - t, 2))), flush=True)
kernel = launch.kernel


def run(name, B, lanes):
    launch.kernel = (lambda columns: loops) if name == "loops" else (lambda columns: gen)
    ws = DeviceWorkspaces(d["lay"], d["x0"][:B], d["p"][:B], d["lbx"][:B], d["ubx"][:B],
                          d["lbg"][:B], d["ubg"][:B], interleaved=False,
                          shared_structure=True)
    t = time.perf_counter()
    r = launch.solve_on_device(ws, d["O"], lanes=lanes, shared=False)
    ms = 1e3 * (time.perf_counter() - t)
    launch.kernel = kernel
    return ms, r


for B, lanes, reps in ((4, 32, 1), (1000, 32, 3), (132, 32, 2), (1000, 1, 1)):
    for _ in range(reps):
        out = {}
        for name in ("loops", "gen"):
            out[name] = run(name, B, lanes)
        (ma, a), (mb, b) = out["loops"], out["gen"]
        same = all(np.array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)),
                                  equal_nan=True) for f in ("code", "iters", "f", "x"))
        print(json.dumps(dict(B=B, lanes=lanes, loops_ms=round(ma, 2), gen_ms=round(mb, 2),
                              iters=int(np.sum(a.iters)), bits_equal=bool(same),
                              max_dx=float(np.nanmax(np.abs(np.asarray(a.x) -
                                                            np.asarray(b.x)))))),
              flush=True)
