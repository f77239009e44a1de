"""Build case9241_pegase's augmented KKT matrix (w = [x; s], then y) and the same matrix with
the slack columns eliminated (each inequality row's dual diagonal takes -1/Sigma_s), both as
upper CSC, values at the starting point (W = Hessian + 1, Sigma_s = 1, delta_c = 1e-8).
python kkt_pair.py CASE OUT.npz"""
import sys, time
import numpy as np, scipy.sparse as sp
sys.path.insert(0, ".")
import caspar_backend as cb
from benchmarks.cases import acopf_cases
case, out = sys.argv[1], sys.argv[2]
built = list(acopf_cases(10 ** 6, {case}))[0].build()
P = cb.from_casadi(built[1], **built[2])
ev = P.evaluator("cpu")
n, m = P.n, P.m
x0 = np.clip(np.asarray(P.x0, float), P.lbx, P.ubx)
J = ev.jac(x0).tocoo()
H = ev.hess(x0, np.full(m, 0.1))
W = (H + sp.identity(n)).tocsc()
ineq = np.flatnonzero(np.asarray(P.lbg) != np.asarray(P.ubg))
ns = ineq.size
E = sp.csr_matrix((-np.ones(ns), (ineq, np.arange(ns))), shape=(m, ns))
dc = 1e-8
full = sp.bmat([[W, None, J.T.tocsc()],
                [None, sp.identity(ns), E.T],
                [J, E, -dc * sp.identity(m)]], format="csc")
D = np.full(m, -dc); D[ineq] -= 1.0
red = sp.bmat([[W, J.T.tocsc()], [J, sp.diags(D)]], format="csc")
res = {}
for name, A in (("full", full), ("reduced", red)):
    U = sp.triu(A, format="csc"); U.sum_duplicates(); U.sort_indices()
    # keep structural zeros of the pattern: every stored entry stays
    res[name + "_indptr"], res[name + "_indices"], res[name + "_data"] = U.indptr, U.indices, U.data
    res[name + "_n"] = np.int64(U.shape[0])
    print(name, U.shape[0], U.nnz, flush=True)
res["n_pos_full"] = np.int64(n + ns); res["n_pos_red"] = np.int64(n)
np.savez_compressed(out, **res)
