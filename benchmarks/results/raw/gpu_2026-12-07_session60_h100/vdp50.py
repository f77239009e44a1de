"""On the device (branch straight-ldl): Van der Pol N = 50, B = 1,000 (bench_batch's
vdp_colloc workload) -- IPOPT once per instance (casadi's nlpsol, sequential) against
solve_batch on the GPU with the loops kernel (CASPAR_CUDA_PATTERNS=0) and with the
pattern's kernel (=1), interleaved; the pattern kernel built in-process on first use.
One JSON line per run: seconds, speedup over IPOPT, statuses/iterations equal to IPOPT's,
largest relative f difference."""
import json
import os
import sys
import time

sys.path.insert(0, ".")
from benchmarks import batch_measure as bm  # noqa: E402
from benchmarks.bench_batch import vdp_workload  # noqa: E402

B = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
work = vdp_workload(B, 50)
ip = bm.ipopt_sequential(work, 1e-8)
print(json.dumps(dict(solver="ipopt_seq", s=round(ip.total_s, 3))), flush=True)
P, build = bm.compile_caspar(work, "cuda")
t = time.perf_counter()
os.environ["CASPAR_CUDA_PATTERNS"] = "1"
bm.caspar_batch(P, work.head(64), "cuda", 1e-8)
print(json.dumps(dict(event="pattern kernel built", s=round(time.perf_counter() - t, 2))),
      flush=True)
for r in range(3):
    for mode in ("0", "1"):
        os.environ["CASPAR_CUDA_PATTERNS"] = mode
        o = bm.caspar_batch(P, work, "cuda", 1e-8)
        c = bm.compare(o, ip)
        print(json.dumps(dict(round=r, patterns=mode, s=round(o.total_s, 4),
                              speedup=round(ip.total_s / o.total_s, 1),
                              note=o.extra.get("note"), **c)), flush=True)
