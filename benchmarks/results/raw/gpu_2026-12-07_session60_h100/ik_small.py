"""On the device (a tree with the pattern kernels): solve_batch of 1, 32 and 256 IK targets
on the GPU with the pattern kernel off and on (CASPAR_CUDA_PATTERNS 0/1), interleaved,
five calls each: ms per call (a GPU service's batches are this size: their latency is
one instance's whole solve in one thread), and whether statuses, iterations and x agree
bit for bit between the two kernels."""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, ".")
from benchmarks import batch_measure as bm  # noqa: E402
from benchmarks.bench_batch import ik_workload  # noqa: E402

if __name__ == "__main__":
    P, _ = bm.compile_caspar(ik_workload(2), "cuda")
    os.environ["CASPAR_CUDA_PATTERNS"] = "1"
    bm.caspar_batch(P, ik_workload(64, seed=4), "cuda", 1e-8)       # the pattern built
    for B in (1, 32, 256):
        w = ik_workload(B, seed=5)
        out = {}
        for rep in range(5):
            for mode in ("0", "1"):
                os.environ["CASPAR_CUDA_PATTERNS"] = mode
                t = time.perf_counter()
                r = P.solve_batch(p=w.params, print_level=0, tol=1e-8, device="cuda")
                out.setdefault(mode, []).append(1e3 * (time.perf_counter() - t))
                out["r" + mode] = r
        a, b = out["r0"], out["r1"]
        same = all(np.array_equal(np.asarray(getattr(a, f)), np.asarray(getattr(b, f)))
                   for f in ("status", "iterations", "x"))
        print(json.dumps(dict(B=B, loops_ms=[round(v, 2) for v in out["0"]],
                              pattern_ms=[round(v, 2) for v in out["1"]],
                              paths=sorted(set(b.path)), bits_equal=bool(same))), flush=True)
