"""VdP B=1000 / IK 4096 CPU solve_batch under batch_cpu variants (monkeypatched): default,
one parallel call (SHARES huge), static schedule.  Run from a tree root."""
import os, sys, time, contextlib
sys.path.insert(0, os.getcwd())
import numpy as np, numba
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import vdp_workload, ik_workload
from caspar_backend.compiled import batch_cpu
variant = sys.argv[1]
if variant == "onecall":
    batch_cpu.SHARES_PER_CALL = 10**6
elif variant == "static" and hasattr(batch_cpu, "_kernel_on"):
    orig = batch_cpu._kernel_on
    @contextlib.contextmanager
    def _k(threads):
        with orig(threads):
            with numba.parallel_chunksize(0):
                yield
    batch_cpu._kernel_on = _k
for name, work in (("vdp", vdp_workload(1000)), ("ik4096", ik_workload(4096, seed=2))):
    P, _ = bm.compile_caspar(work, "cpu")
    P.solve_batch(p=work.params[:64], print_level=0, tol=1e-8)
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        r = P.solve_batch(p=work.params, print_level=0, tol=1e-8)
        ts.append(time.perf_counter() - t)
    print(os.path.basename(os.getcwd()), variant, name, "median %.3f s" % np.median(ts), [round(x, 3) for x in ts], set(r.path), flush=True)
