"""Which CuPy kernels a large problem's first GPU solve compiles after caspar warmup's GPU
step: CuPy's cache in a fresh folder, its sources saved (CUPY_CACHE_SAVE_CUDA_SOURCE=1);
the files added by the warmup and by case9241's first solve are listed with their kernels'
names."""
import os, sys, time, glob, re
sys.path.insert(0, '.')
cache = os.environ["CUPY_CACHE_DIR"]
def files():
    return set(glob.glob(os.path.join(cache, "*")))
import cupy
cupy.zeros(1).sum()
f0 = files()
from caspar_backend.gpu_warmup import general_path
print("warmup", round(general_path(), 2), "s; new cache files", len(files() - f0))
f1 = files()
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
import caspar_backend as cb
nlp, args = acopf_casadi(acopf_data(load_pglib(sys.argv[1] if len(sys.argv) > 1 else "case9241_pegase"))); args.pop("data", None)
P = cb.from_casadi(nlp, **args); P.evaluator("cuda")
f2 = files()
t = time.perf_counter(); r = P.solve(tol=1e-6, print_level=0, device="cuda")
print("first solve", round(time.perf_counter() - t, 2), "s", r.iterations, {k: round(v, 3) for k, v in r.timings.items()})
new = sorted(files() - f2)
print("new cache files during the first solve:", len(new))
for f in new:
    if f.endswith(".cu"):
        src = open(f).read()
        names = re.findall(r'__global__\s+void\s+(\w+)', src)
        print(" ", os.path.basename(f)[:16], names[:4], len(src))
t = time.perf_counter(); r = P.solve(tol=1e-6, print_level=0, device="cuda")
print("re-solve", round(time.perf_counter() - t, 2), "s")
