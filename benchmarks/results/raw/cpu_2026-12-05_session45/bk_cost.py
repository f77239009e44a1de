"""Time per factorization and per solve through the kernels: dense Bunch-Kaufman against
QDLDL on a sparse KKT matrix of N rows (60 % primal), 2,000 repetitions each.

    python bk_cost.py"""
import numpy as np, scipy.sparse as sp, time, sys
sys.path.insert(0, '/work/main')
from caspar_backend.linsolve.base import SparseStructure
from caspar_backend.compiled.ldl import LDLTables, KernelLDL
def kkt(nw, m, rng):
    H = sp.diags([rng.random(nw) + 1, 0.1 * rng.random(nw - 1)], [0, 1], shape=(nw, nw))
    J = sp.random(m, nw, density=min(1, 3 / nw), random_state=1) + sp.eye(m, nw)
    K = sp.bmat([[H + H.T, J.T], [J, -1e-9 * sp.eye(m)]]).tocsc()
    U = sp.triu(K).tocsc(); U.sort_indices(); return U
rng = np.random.default_rng(0)
for N in (8, 16, 24, 32, 48, 64, 96):
    nw = int(N * 0.6); m = N - nw
    U = kkt(nw, m, rng)
    st = SparseStructure(N, U.indptr.astype(np.int64), U.indices.astype(np.int64))
    res = {}
    for mode in ('bk', 'qdldl'):
        t = KernelLDL(LDLTables(st, dense=(mode == 'bk')))
        v = U.data.copy(); b = rng.standard_normal(N)
        t.factorize(v); t.solve(b)
        reps = 2000
        t0 = time.perf_counter()
        for _ in range(reps): t.factorize(v)
        tf = (time.perf_counter() - t0) / reps
        t0 = time.perf_counter()
        for _ in range(reps): t.solve(b)
        ts = (time.perf_counter() - t0) / reps
        res[mode] = (tf * 1e6, ts * 1e6)
    print(f"N={N:3d} nnz={U.nnz:4d}  BK fact {res['bk'][0]:7.2f} us solve {res['bk'][1]:6.2f} | QDLDL fact {res['qdldl'][0]:6.2f} solve {res['qdldl'][1]:6.2f}")
