"""On the device: does cuDSS's ANALYSIS (through caspar's CudssSolver) let other Python
threads run?  A 2-D grid Laplacian (N = 500^2, upper CSC) analysed and factorized once in
the main thread, then again (a fresh solver) in a thread on its own stream while the main
thread counts a pure-Python loop; the loop's rate against its rate alone says how much of
the analysis held the GIL."""
import json
import sys
import threading
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, ".")
import cupy as cp  # noqa: E402
from caspar_backend.linsolve.base import SparseStructure  # noqa: E402
from caspar_backend.linsolve.cudss import CudssSolver  # noqa: E402

k = 500
T = sp.diags([-np.ones(k - 1), 4.001 * np.ones(k), -np.ones(k - 1)], [-1, 0, 1])
A = (sp.kron(sp.eye(k), T) + sp.kron(sp.diags([-np.ones(k - 1), -np.ones(k - 1)], [-1, 1]),
                                      sp.eye(k)))
U = sp.triu(A).tocsc()
U.sort_indices()
S = SparseStructure(U.shape[0], U.indptr.astype(np.int64), U.indices.astype(np.int64))
vals = cp.asarray(U.data)


def spin(stop):
    n, t = 0, time.perf_counter()
    while not stop():
        n += 1
    return n / (time.perf_counter() - t)


def factor_once():
    s = CudssSolver()
    s.analyse(S)
    t = time.perf_counter()
    f = s.factorize(vals)
    return time.perf_counter() - t, s.plan_seconds, f


alone = factor_once()
t0 = time.perf_counter()
rate_alone = spin(lambda: time.perf_counter() - t0 > 0.5)
box = {}


def work():
    with cp.cuda.Stream(non_blocking=True):
        box["r"] = factor_once()


th = threading.Thread(target=work)
th.start()
rate_threaded = spin(lambda: not th.is_alive())
th.join()
print(json.dumps(dict(N=S.n, nnz=S.nnz, alone_s=round(alone[0], 4),
                      alone_analysis_s=round(alone[1], 4),
                      thread_s=round(box["r"][0], 4), thread_analysis_s=round(box["r"][1], 4),
                      spin_rate_alone=round(rate_alone), spin_rate_during=round(rate_threaded),
                      ratio=round(rate_threaded / rate_alone, 3),
                      inertia=[box["r"][2].n_pos, box["r"][2].n_neg])), flush=True)
