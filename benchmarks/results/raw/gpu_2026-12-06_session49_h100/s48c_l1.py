"""IK batch on the CUDA kernel: is the 9af6051 slowdown an L1 cliff (local-memory
footprint per SM)?  Per size: ms per slowest-instance iteration with the default
carveout, then with the L1 carveout maximal (shared memory 0), rows and columns."""
import json
import os
import sys
import time

sys.path.insert(0, os.getcwd())
import numpy as np  # noqa: E402

from benchmarks.bench_kernel_latency import kernel_alone, workload  # noqa: E402
from benchmarks import batch_measure as bm  # noqa: E402
from caspar_backend.compiled.cuda import launch  # noqa: E402

case = sys.argv[1]
sizes = [int(s) for s in sys.argv[2].split(",")]
modes = sys.argv[3].split(",")          # rows, columns, rows_l1, columns_l1
pool = workload(case, max(sizes)).params
P, _ = bm.compile_caspar(workload(case, 2), "cuda")


def set_l1(columns):
    k = launch.kernel(columns)
    for ov in k.overloads.values():
        f = ov._codelibrary.get_cufunc()
        try:
            f.set_shared_memory_carveout(0)
        except Exception as e:  # noqa: BLE001
            print("carveout", type(e).__name__, e)
            f.cache_config(prefer_cache=True)
        print("attrs", f.attrs, flush=True)


for mode in modes:
    columns = mode.startswith("columns")
    only = [int(mode.split("_")[1])] if mode.startswith("columns_") and mode[8:].isdigit() else None
    reps = 1 if mode == "rows1" else 3
    if mode.endswith("_l1"):
        kernel_alone(P, pool[:2], 1, None, columns)   # load it
        set_l1(columns)
    for B in only or sizes:
        ms, k = kernel_alone(P, pool[:B], reps, None, columns)
        it = k.iters
        print(json.dumps(dict(case=case, mode=mode, B=B, kernel_ms=round(ms, 2),
                              iterations=int(it.sum()), max_it=int(it.max()),
                              ms_per_max_it=round(ms / max(1, int(it.max())), 3),
                              fsum=float(np.sum(k.f)))), flush=True)
