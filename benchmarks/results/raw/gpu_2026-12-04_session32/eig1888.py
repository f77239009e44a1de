"""case1888_rte, caspar CPU: the KKT matrices QDLDL factorizes in iterations a..b, and the
eigenvalues of each nearest 0 (shift-invert Lanczos on SuperLU: pivoted, independent of
QDLDL) at delta_w = 0 and with 1e-4 added to the primal block (IPOPT's first choice)."""
import sys, os, time
sys.path.insert(0, os.getcwd())
import numpy as np, scipy.sparse as sp, scipy.sparse.linalg as sla
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
case = next(acopf_cases(2000, names={"case1888_rte"}))
kind, nlp, args, extra = case.build()
P = cb.from_casadi(nlp, **args)
last = int(sys.argv[1])
r = P.solve(tol=1e-6, print_level=0, device="cpu", max_iter=last)
print("saved", len(saved), "factorizations", flush=True)
nw = None
for k, (A, f) in list(enumerate(saved))[-int(sys.argv[2]):]:
    n = A.shape[0]
    full = (A + sp.triu(A, 1).T).tocsc()
    npos, nneg = f.n_pos, f.n_neg
    out = []
    for dw in (0.0, 1e-4):
        M = full.copy()
        if dw:
            d = np.zeros(n); d[:npos] = dw      # primal block first (n_w rows)
            M = (M + sp.diags(d)).tocsc()
        t = time.perf_counter()
        vals = sla.eigsh(M, k=12, sigma=0.0, which="LM", return_eigenvectors=False, tol=1e-10)
        vals = np.sort(vals)
        out.append((dw, int((vals < 0).sum()), vals[np.argsort(np.abs(vals))][:6], time.perf_counter() - t))
    print(f"fact {k}: n={n} qdldl pos/neg/zero {npos}/{nneg}/{f.n_zero}", flush=True)
    for dw, nn, v, tt in out:
        print(f"   delta_w={dw:g}: {nn} of the 12 nearest 0 negative; nearest: {' '.join('%.3e' % x for x in v)} ({tt:.1f}s)", flush=True)
