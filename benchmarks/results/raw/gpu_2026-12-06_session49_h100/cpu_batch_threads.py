"""The CPU batch by kernel threads on the host: Van der Pol N = 50 (B = 1,000) and IK
(B = 10^4), best of 3 warm solve_batch calls per thread count (RESULTS.md: Van der Pol
0.548 s on 16 cores where one core's per-instance cost predicts ~0.1-0.2 s)."""
import os
import sys
import time

sys.path.insert(0, os.getcwd())
import numpy as np  # noqa: E402

from benchmarks import batch_measure as bm  # noqa: E402
from benchmarks.bench_batch import ik_workload, vdp_workload  # noqa: E402

for case, wl in (("vdp", vdp_workload(1000)), ("ik", ik_workload(10000, seed=2))):
    P, _ = bm.compile_caspar(vdp_workload(2) if case == "vdp" else ik_workload(2), "cpu")
    P.solve_batch(p=wl.params, print_level=0, tol=1e-8, device="cpu")
    for th in (1, 2, 4, 8, 16):
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            r = P.solve_batch(p=wl.params, print_level=0, tol=1e-8, device="cpu", threads=th)
            best = min(best, time.perf_counter() - t)
        print(f"{case} B={len(wl.params)} threads={th}: {best:.3f} s "
              f"({int(np.sum(r.iterations))} iterations)", flush=True)
