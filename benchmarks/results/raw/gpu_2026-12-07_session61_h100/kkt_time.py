"""cuDSS on case9241's augmented KKT matrix against the same with the slacks eliminated
(kkt_pair.py): analysis, factorization and solve times, inertia, residual.
python kkt_time.py kkt9241.npz"""
import sys, time
import numpy as np
sys.path.insert(0, ".")
import cupy as cp
from caspar_backend.linsolve.base import SparseStructure
from caspar_backend.linsolve.cudss import CudssSolver
z = np.load(sys.argv[1])
rows = []
for rep in range(2):
    for name in ("full", "reduced"):
        n = int(z[name + "_n"])
        S = SparseStructure(n, z[name + "_indptr"].astype(np.int64), z[name + "_indices"].astype(np.int64))
        vals = cp.asarray(z[name + "_data"])
        s = CudssSolver()
        t = time.perf_counter(); s.analyse(S); f = s.factorize(vals); cp.cuda.Device().synchronize()
        first = time.perf_counter() - t
        fac, sol = [], []
        b = cp.asarray(np.random.default_rng(0).standard_normal(n))
        for k in range(7):
            t = time.perf_counter(); f = s.factorize(vals); cp.cuda.Device().synchronize(); fac.append(time.perf_counter() - t)
            t = time.perf_counter(); x = s.solve(b); cp.cuda.Device().synchronize(); sol.append(time.perf_counter() - t)
        r = s.matvec(x) - b
        rel = float(cp.abs(r).max() / cp.abs(b).max())
        print(f"{rep} {name:8s} N={n:7d} nnz={S.nnz:8d} analysis {s.plan_seconds:.3f} s (first factorize "
              f"{first:.3f}) factor {1e3*np.median(fac):.2f} ms solve {1e3*np.median(sol):.2f} ms "
              f"inertia {f.inertia} (expect pos {int(z['n_pos_' + ('full' if name == 'full' else 'red')])}) resid {rel:.1e}", flush=True)
        s.free()
