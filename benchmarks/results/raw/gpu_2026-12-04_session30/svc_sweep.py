import os, sys, time
sys.path.insert(0, os.getcwd())
import numpy as np
from benchmarks import bench_service
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import ik_workload
# solve_batch alone: ms per call by B and kernel threads
work = ik_workload(4096, seed=2)
P, _ = bm.compile_caspar(ik_workload(2), "cpu")
for th in (None, 1, 4):
    for B in (1, 8, 19, 32, 64, 256):
        p = work.params[:B]
        kw = {} if th is None else {"threads": th}
        for _ in range(5): P.solve_batch(p=p, print_level=0, tol=1e-8, **kw)
        ts = []
        for _ in range(30):
            t = time.perf_counter(); P.solve_batch(p=p, print_level=0, tol=1e-8, **kw); ts.append(time.perf_counter() - t)
        print(f"SB threads={th} B={B} {np.median(ts)*1e3:.3f} ms {np.median(ts)/B*1e6:.1f} us/inst", flush=True)
cfgs = [[], ["--stub"], ["--max-wait", "0.001"], ["--max-wait", "0.0005"],
        ["--workers", "4", "--threads", "1", "--max-wait", "0.001"],
        ["--workers", "8", "--threads", "1", "--max-wait", "0.001"],
        ["--workers", "8", "--threads", "1", "--max-wait", "0.0005"],
        ["--workers", "16", "--threads", "1", "--max-wait", "0.0005"],
        ["--workers", "4", "--threads", "4", "--max-wait", "0.001"],
        ["--workers", "2", "--threads", "8", "--max-wait", "0.001"]]
for c in cfgs:
    print("CFG", " ".join(c), flush=True)
    t = time.perf_counter()
    bench_service.main(["--repeat", "2", "--requests", "10000"] + c)
    print(f"   ({time.perf_counter() - t:.1f} s)", flush=True)
