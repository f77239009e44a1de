"""case1888_rte, caspar CPU: for each QDLDL factorization the verdict and min|d| / max|d|,
interleaved with the iteration log (print_level 5 lines of the iterations)."""
import sys, os
sys.path.insert(0, os.getcwd())
import numpy as np
from caspar_backend.linsolve import qdldl as Q
_orig = Q.QDLDLSolver.factorize
def fact(self, values):
    r = _orig(self, values)
    if self._solver is not None and not self.pivoting:
        d = np.abs(self._solver.factors()[1])
        print(f"      fact {r.n_pos}/{r.n_neg}/{r.n_zero} min|d| {d.min():.2e} max|d| {d.max():.2e} ratio {d.min() / d.max():.2e}", flush=True)
    else:
        print(f"      fact {r.n_pos}/{r.n_neg}/{r.n_zero} (zero pivot)", flush=True)
    return r
Q.QDLDLSolver.factorize = fact
import caspar_backend as cb
from benchmarks.cases import acopf_cases
case = next(acopf_cases(2000, names={sys.argv[2] if len(sys.argv) > 2 else "case1888_rte"}))
kind, nlp, args, extra = case.build()
P = cb.from_casadi(nlp, **args)
r = P.solve(tol=1e-6, print_level=5, device="cpu", max_iter=int(sys.argv[1]))
