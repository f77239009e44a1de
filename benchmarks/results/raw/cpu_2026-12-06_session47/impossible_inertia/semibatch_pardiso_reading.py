import sys, json, time
sys.path.insert(0, '/work/main')
import caspar_backend as cb
import caspar_backend.linsolve.pardiso_mkl as PM
from pyomo.contrib.parmest.examples.semibatch.semibatch import SemiBatchExperiment
mode = sys.argv[1]
if mode == "no":
    orig = PM.PardisoMKLSolver.__init__
    def init(self, *a, **k):
        k["perturbation_means_singular"] = False
        orig(self, *a, **k)
    PM.PardisoMKLSolver.__init__ = init
for i in range(10):
    data = json.load(open(f"/tmp/helperA/scratch/data/exp{i+1}.out"))
    m = SemiBatchExperiment(data).get_labeled_model()
    t = time.perf_counter()
    r = cb.from_pyomo(m).solve(tol=1e-8, print_level=0, compiled_path="no", max_wall_time=120)
    print(f"exp{i+1} {mode} {r.status[:20]:20s} {r.iterations:4d} {r.f!r} {time.perf_counter()-t:.1f}s", flush=True)
