"""Does work in a second thread let this thread's Python run?  (1) `import nvmath.bindings.cudss`
(nvmath's package init: big CUDA libraries dlopened), (2) cuDSS's ANALYSIS of a 2-D Laplacian
N = 250,000 through caspar's CudssSolver.  For each: the main thread's loop rate while the work
runs in a thread against the rate alone, and the work's own seconds."""
import sys, threading, time
sys.path.insert(0, ".")


def rate(seconds):
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        n += 1
    return n / seconds


def probe(name, work):
    done, box = threading.Event(), {}

    def run():
        t = time.perf_counter(); work(); box["s"] = time.perf_counter() - t; done.set()

    th = threading.Thread(target=run); t0 = time.perf_counter(); th.start()
    n = 0
    while not done.is_set():
        n += 1
    wall = time.perf_counter() - t0; th.join()
    print(f"{name}: work {box['s']:.3f} s in a thread; main loop {n / wall:,.0f}/s beside it "
          f"(alone {alone:,.0f}/s: {n / wall / alone:.0%})", flush=True)


alone = rate(0.5)
import cupy as cp  # noqa: E402  (caspar's own import of CuPy precedes nvmath's)
cp.zeros(1)
t = time.perf_counter(); alone = rate(0.5)
probe("import nvmath.bindings.cudss", lambda: __import__("nvmath.bindings.cudss"))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from caspar_backend.linsolve.base import SparseStructure  # noqa: E402
from caspar_backend.linsolve.cudss import CudssSolver  # noqa: E402

k = 500
T = sp.diags([-1, 4, -1], [-1, 0, 1], shape=(k, k))
A = sp.kronsum(T, T).tocsc()
A = sp.triu(A).tocsc(); A.sort_indices()
S = SparseStructure(A.shape[0], A.indptr.astype(np.int64), A.indices.astype(np.int64))
vals = cp.asarray(A.data)


def analysis():
    s = CudssSolver()
    s.analyse(S)
    s.factorize(vals)
    s.free()


analysis()  # warm: the library, the kernels
alone = rate(0.5)
probe("cuDSS analysis + factorization N=250,000", analysis)
