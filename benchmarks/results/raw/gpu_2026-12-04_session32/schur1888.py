"""case1888_rte: inertia of the KKT matrices QDLDL accepted, by Sylvester's law:
K = [[H, J^T], [J, -D]] with D > 0 diagonal has inertia (nw, m, 0) iff
S = H + J^T D^-1 J is positive definite; S's eigenvalues nearest 0 by shift-invert
Lanczos on SuperLU (pivoted)."""
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
case = next(acopf_cases(2000, names={sys.argv[3] if len(sys.argv) > 3 else "case1888_rte"}))
kind, nlp, args, extra = case.build()
P = cb.from_casadi(nlp, **args)
r = P.solve(tol=1e-6, print_level=0, device="cpu", max_iter=int(sys.argv[1]))
ks = [int(s) for s in sys.argv[2].split(",")]
for k in ks:
    A, f = saved[k]
    if f.n_zero:
        continue
    full = (A + sp.triu(A, 1).T).tocsc()
    nw = f.n_pos
    H, J, C = full[:nw, :nw], full[nw:, :nw], full[nw:, nw:]
    Cd = C.diagonal()
    offC = abs(C - sp.diags(Cd)).max()
    S = (H + J.T @ sp.diags(-1.0 / Cd) @ J).tocsc()
    t = time.perf_counter()
    v = np.sort(sla.eigsh(S, k=8, sigma=0.0, which="LM", return_eigenvectors=False, tol=1e-12))
    hn = abs(H).max()
    # an LDL^T of S by SuperLU without row pivoting in a symmetric order: U = D L^T, so
    # the signs of U's diagonal are S's inertia (an SPD S has only positive pivots)
    lu = sla.splu(S, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                  options=dict(SymmetricMode=True))
    d = lu.U.diagonal()
    sym = bool((lu.perm_r == lu.perm_c).all())
    print(f"   S = LDL^T (symmetric order {sym}): {int((d > 0).sum())} positive, {int((d < 0).sum())} negative, "
          f"{int((d == 0).sum())} zero pivots; min pivot {d.min():.3e}, max {d.max():.3e}", flush=True)
    print(f"fact {k}: nw={nw} m={J.shape[0]} dual block diag {(-Cd).min():.2e}..{(-Cd).max():.2e} (off-diagonal {offC:.1e}); |H|max {hn:.2e}; "
          f"S eigenvalues nearest 0: {' '.join('%.3e' % x for x in v)} ({time.perf_counter() - t:.1f}s)", flush=True)
