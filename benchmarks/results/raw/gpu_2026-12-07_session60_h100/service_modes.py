"""On the device: the SolverService with 64 clients x 10,000 IK requests on device
'auto' and 'cpu' with 1, 2, 3 workers, and the CPU service with its Python on core 0
(split_cores, 1 and 2 workers), two rounds interleaved.  One JSON line per run.
The CPU kernels are compiled first (``warmup``: with CASPAR_BACKGROUND_COMPILE=0 a CPU
batch never compiles them itself and stays on the lockstep path -- session 59's first two
runs), and the body runs under ``__main__`` only (the split run's spawned child imports
this file: unguarded, it re-ran the whole script beside the parent's -- the third run)."""
import json
import sys
import time

sys.path.insert(0, ".")
from benchmarks import batch_measure as bm  # noqa: E402
from benchmarks.bench_batch import ik_workload  # noqa: E402

work = ik_workload(10000, seed=2)


def say(mode, w, o, t):
    x = o.extra
    print(json.dumps(dict(mode=mode, workers=w, per_s=round(work.size / o.total_s),
                          p50_ms=round(x["p50_ms"], 2), p99_ms=round(x["p99_ms"], 2),
                          mean_batch=round(x["mean_batch"], 1), solve_ms=round(x["solve_ms"], 2),
                          wall=round(time.perf_counter() - t, 1))), flush=True)


if __name__ == "__main__":
    from caspar_backend.compiled.solve import warmup

    t = time.perf_counter()
    warmup()
    P, _ = bm.compile_caspar(ik_workload(2), "cuda")
    bm.caspar_batch(P, ik_workload(256, seed=1), "cuda", 1e-8)
    print(bm.caspar_batch(P, ik_workload(256, seed=1), "cpu", 1e-8).extra, "CPU kernels in",
          round(time.perf_counter() - t, 1), "s", flush=True)
    bm.caspar_service(P, work.head(2000), "auto", 1e-8, 64, 1024, 0.002, workers=1)
    for r in range(2):
        for dev in ("auto", "cpu"):
            for w in (1, 2, 3):
                t = time.perf_counter()
                say(dev, w, bm.caspar_service(P, work, dev, 1e-8, 64, 1024, 0.002, workers=w), t)
        for w in (1, 2):
            t = time.perf_counter()
            say("cpu-split0", w, bm.caspar_service_split(
                ("benchmarks.bench_batch", "ik_workload", (10000, 2)), 1e-8, 64, 1024, 0.002,
                "0", workers=w), t)
