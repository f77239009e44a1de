"""The service's batches on this host, split: solve_batch's Python before its first kernel
call (pre), the kernel calls, the Python after them (post), per batch, under 64 clients
(session 49: on the 2-core VM pre 1.37 ms -- ~0.3 ms of it solve_batch's own Python, the
rest waiting on the GIL for the other cohort's clients -- kernel 1.32, post 0.16 for ~30
requests).  python svc_lead.py [kernel threads] [workers] [LEAD]: as svc_breakdown.py, with
batch/answer.py's LEAD (blocked clients an answered batch wakes at once; 2, tuned on the
2-core VM) set to the third argument -- whether a 16-core host wants more wake-ups in
flight (each woken client wakes the next as it leaves; a wake-up across cores is slower)."""
import sys, os, time, numpy as np, threading
sys.path.insert(0, os.getcwd())
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import ik_workload
import caspar_backend.compiled.kernels.solve_many as sm
import caspar_backend.batch.answer as answer
if len(sys.argv) > 3:
    answer.LEAD = int(sys.argv[3])
work = ik_workload(10000, seed=2)
P, _ = bm.compile_caspar(ik_workload(2), "cpu")
# argv: kernel threads (default: the service's), workers (default 1)
threads = int(sys.argv[1]) if len(sys.argv) > 1 else None
workers = int(sys.argv[2]) if len(sys.argv) > 2 else None
acc = {"pre": 0, "kern": 0, "post": 0, "n": 0, "calls": 0}
cur = {}
for name in ("solve_rows", "solve_rows_parallel"):
    f = getattr(sm, name)
    def g(*a, _f=f):
        t = time.perf_counter(); cur.setdefault("k0", t)
        _f(*a)
        cur["k1"] = time.perf_counter(); acc["kern"] += cur["k1"] - t; acc["calls"] += 1
    setattr(sm, name, g)
orig_sb = P.solve_batch
def sb(**kw):
    cur.clear()
    t = time.perf_counter(); r = orig_sb(**kw); t2 = time.perf_counter()
    acc["pre"] += cur["k0"] - t; acc["post"] += t2 - cur["k1"]; acc["n"] += 1
    return r
P.solve_batch = sb
bm.caspar_service(P, ik_workload(2000, seed=5), "cpu", 1e-8, 64, 1024, 0.002, workers, threads)
for k in acc: acc[k] = 0
out = bm.caspar_service(P, work, "cpu", 1e-8, 64, 1024, 0.002, workers, threads)
n = acc["n"]
print(f"lead {answer.LEAD} threads {threads} workers {workers} per_s {10000/out.total_s:.0f} batches {n} calls {acc['calls']} mean batch {out.extra['mean_batch']:.1f} p50 {out.extra['p50_ms']:.2f} p99 {out.extra['p99_ms']:.2f}; per batch ms: pre {1e3*acc['pre']/n:.3f} kernel {1e3*acc['kern']/n:.3f} post {1e3*acc['post']/n:.3f}")
