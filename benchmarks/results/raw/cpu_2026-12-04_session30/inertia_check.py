import sys, os, time
sys.path.insert(0, os.getcwd())
import numpy as np, scipy.sparse as sp
from caspar_backend.linsolve import qdldl as Q
saved = []
_orig = Q.QDLDLSolver.factorize
def fact(self, values):
    r = _orig(self, values)
    saved.append((self._matrix.copy(), r))
    return r
Q.QDLDLSolver.factorize = fact
import caspar_backend as cb
from benchmarks.cases import acopf_cases
case = next(acopf_cases(100000, names={sys.argv[1]}))
kind, nlp, args, extra = case.build()
P = cb.from_casadi(nlp, **args)
r = P.solve(tol=1e-6, print_level=5, device="cpu", max_iter=int(sys.argv[2]))
import qdldl
rng = np.random.default_rng(0)
for k, (A, f) in enumerate(saved):
    n = A.shape[0]
    full = (A + sp.triu(A, 1).T).tocsc()
    outs = []
    for trial in range(2):
        p = rng.permutation(n)
        B = sp.triu(full[p][:, p]).tocsc()
        try:
            s = qdldl.Solver(B, upper=True)
            d = s.factors()[1]
            outs.append((int((d > 0).sum()), int((d < 0).sum()), float(np.abs(d).min())))
        except Exception as e:
            outs.append(str(e)[:40])
    print(f"fact {k}: caspar pos/neg/zero {f.n_pos}/{f.n_neg}/{f.n_zero}; permuted {outs}", flush=True)
