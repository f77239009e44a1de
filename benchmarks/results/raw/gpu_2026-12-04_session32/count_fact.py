import sys, os, time
sys.path.insert(0, os.getcwd())
from caspar_backend.linsolve import qdldl as Q
n = [0, 0]
_orig = Q.QDLDLSolver.factorize
def fact(self, values):
    r = _orig(self, values)
    n[0] += 1
    n[1] += (not r.ok)
    return r
Q.QDLDLSolver.factorize = fact
import caspar_backend as cb
from benchmarks.cases import acopf_cases
for name in sys.argv[1:]:
    case = next(acopf_cases(20000, names={name}))
    kind, nlp, args, extra = case.build()
    P = cb.from_casadi(nlp, **args)
    n[:] = [0, 0]
    t = time.perf_counter()
    r = P.solve(tol=1e-6, print_level=0, device="cpu")
    print(name, r.status, r.iterations, "factorizations", n[0], "per it %.2f" % (n[0] / max(r.iterations, 1)), "failed", n[1], "%.1f s" % (time.perf_counter() - t), flush=True)
