"""Two processes, one per CUDA build (CASPAR_CUDA_BATCHED_LOADS 0 / 1), taking turns on
the GPU through a turn file: each loads (or compiles) its kernel once, then times Van der
Pol 1,000 and IK 10^4 with bench_kernel_latency.main when its turn comes.
Usage: python ab_latency.py ROLE(A|B) TURNFILE REPS"""
import contextlib
import io
import os
import sys
import time

sys.path.insert(0, os.getcwd())
from benchmarks import bench_kernel_latency as bkl  # noqa: E402

role, turn, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
other = "B" if role == "A" else "A"
t0 = time.time()
with contextlib.redirect_stdout(io.StringIO()):
    bkl.main(["--case", "ik", "--sizes", "4", "--repeats", "1"])
print(f"# {role} kernel ready after {time.time() - t0:.1f}s", file=sys.stderr, flush=True)
open(f"{turn}.{role}", "w").write("ready")
if role == "A":
    while not os.path.exists(f"{turn}.B"):
        time.sleep(0.2)
    open(turn, "w").write("A1")


def wait(tok):
    while True:
        try:
            if open(turn).read().strip() == tok:
                return
        except OSError:
            pass
        time.sleep(0.2)


for rep in range(1, reps + 1):
    wait(f"{role}{rep}")
    bkl.main(["--case", "vdp", "--sizes", "1000", "--repeats", "3"])
    bkl.main(["--case", "ik", "--sizes", "10000", "--repeats", "3"])
    nxt = f"B{rep}" if role == "A" else f"A{rep + 1}"
    open(turn, "w").write(nxt)
print(f"# {role} done after {time.time() - t0:.1f}s", file=sys.stderr, flush=True)
