"""The switched-to PARDISO mode with IPOPT's reading of perturbed pivots ('no', monkeypatched) on the PGLib cases that switch today."""
import sys, time
sys.path.insert(0, '/work/main')
import caspar_backend as cb
import caspar_backend.linsolve.pardiso_mkl as PM
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
mode = sys.argv[1]
if mode == "no":
    orig = PM.PardisoMKLSolver.__init__
    def init(self, *a, **k):
        k["perturbation_means_singular"] = False
        orig(self, *a, **k)
    PM.PardisoMKLSolver.__init__ = init
for case in sys.argv[2:]:
    nlp, args = acopf_casadi(acopf_data(load_pglib(case))); args.pop("data", None)
    P = cb.from_casadi(nlp, **args)
    t = time.perf_counter()
    r = P.solve(tol=1e-6, print_level=0, max_wall_time=200)
    print(case, mode, r.status, r.iterations, repr(float(r.f)), f"{time.perf_counter()-t:.1f}s", flush=True)
