"""Where a GPU solve_batch call's time goes outside the kernel: Van der Pol N = 50, B =
1,000 and the IK 10^4, three calls each; wrappers time the workspaces' construction, the
kernel (solve_on_device, whose end reads the codes back), and the rest (inputs, plan,
results).  argv: shared (0/1)."""
import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())
import cupy as cp  # noqa: E402

from benchmarks import batch_measure as bm  # noqa: E402
from benchmarks.bench_batch import ik_workload, vdp_workload  # noqa: E402
from caspar_backend.compiled.cuda import launch  # noqa: E402

shared = bool(int(sys.argv[1])) if len(sys.argv) > 1 else False
d = list(launch.solve_on_device.__defaults__)
d[-1] = shared
launch.solve_on_device.__defaults__ = tuple(d)
T = {}


def timed(name, fn):
    def wrapper(*a, **k):
        cp.cuda.runtime.deviceSynchronize()
        t = time.perf_counter()
        out = fn(*a, **k)
        cp.cuda.runtime.deviceSynchronize()
        T[name] = T.get(name, 0.0) + time.perf_counter() - t
        return out
    return wrapper


import caspar_backend.compiled.cuda.workspaces as W  # noqa: E402
W.DeviceWorkspaces = timed("workspaces", W.DeviceWorkspaces)
launch.solve_on_device = timed("kernel", launch.solve_on_device)
for work in (vdp_workload(1000), ik_workload(10000)):
    P, build = bm.compile_caspar(work, "cuda")
    for rep in range(3):
        T.clear()
        t = time.perf_counter()
        r = P.solve_batch(p=work.params, print_level=0, tol=1e-8, device="cuda")
        tot = time.perf_counter() - t
        print(json.dumps(dict(case=work.name, rep=rep, shared=shared,
                              total_ms=round(1e3 * tot, 2),
                              **{k + "_ms": round(1e3 * v, 2) for k, v in T.items()},
                              rest_ms=round(1e3 * (tot - sum(T.values())), 2),
                              paths=sorted(set(r.path)),
                              iters=int(sum(r.iterations)))), flush=True)
