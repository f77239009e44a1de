import sys, os, time
sys.path.insert(0, os.getcwd())
import numpy as np, scipy.sparse as sp, scipy.sparse.linalg as spla
from scipy.sparse.csgraph import structural_rank
import casadi as ca
from benchmarks.cases import acopf_cases
case = next(acopf_cases(100000, names={"case13659_pegase"}))
kind, nlp, args, extra = case.build()
x, g = nlp["x"], nlp["g"]
t = time.time()
J = ca.Function("J", [x] + ([nlp["p"]] if "p" in nlp else []), [ca.jacobian(g, x)])
x0 = np.asarray(args["x0"], float).ravel()
Jv = J(x0, *([args["p"]] if "p" in nlp else []))
Js = Jv.sparsity(); r, c = Js.get_triplet()
A = sp.csr_matrix((np.asarray(Jv.nonzeros()).ravel(), (r, c)), shape=Jv.shape)
lbg, ubg = np.asarray(args["lbg"], float).ravel(), np.asarray(args["ubg"], float).ravel()
eq = lbg == ubg
Aeq = A[eq]
print("J", A.shape, "eq rows", Aeq.shape, "built", round(time.time() - t, 1), "s", flush=True)
print("structural rank of J_eq:", structural_rank(Aeq.tocsr()), "of", Aeq.shape[0], flush=True)
m = Aeq.shape[0]; n = Aeq.shape[1]
K = sp.bmat([[sp.identity(n), Aeq.T], [Aeq, None]]).tocsc()
t = time.time()
lu = spla.splu(K, permc_spec="COLAMD", diag_pivot_thresh=1.0)
u = np.abs(lu.U.diagonal())
print("splu", round(time.time() - t, 1), "s; |U_ii| smallest:", np.sort(u)[:8], "max", u.max(), flush=True)
print("count |U_ii| < 1e-10 max:", int((u < 1e-10 * u.max()).sum()), "< 1e-13 max:", int((u < 1e-13 * u.max()).sum()))
