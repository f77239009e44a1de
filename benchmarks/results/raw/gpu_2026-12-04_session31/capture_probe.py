"""Can cuDSS's FACTORIZATION / SOLVE be captured into a CUDA graph (CuPy stream capture) and
replayed with new values / right-hand sides?  Eager results as the reference."""
import time, traceback
import numpy as np, cupy as cp, scipy.sparse as sp
from caspar_backend.linsolve import cudss_handle as ch
from caspar_backend.linsolve.cudss import _import_nvmath, _workspace_pool

print("cuDSS", _import_nvmath())
rng = np.random.default_rng(0)
nx, nc = 30000, 12000
H = sp.random(nx, nx, density=4 / nx, random_state=1); H = H + H.T + sp.eye(nx) * 10
J = sp.random(nc, nx, density=5 / nx, random_state=2) + sp.eye(nc, nx)
K = sp.bmat([[H, J.T], [J, -1e-8 * sp.eye(nc)]]).tocsr()
L = sp.tril(K).tocsr(); L.sort_indices()
N = K.shape[0]
ip = cp.asarray(L.indptr.astype(np.int32)); ix = cp.asarray(L.indices.astype(np.int32))
vals = cp.asarray(L.data); b = cp.zeros(N); x = cp.zeros(N)
h = ch.CudssHandle(ip, ix, vals, b, x, pivoting=True, workspace_pool=_workspace_pool(cp))
s = cp.cuda.Stream(non_blocking=True)
rhs = cp.asarray(rng.standard_normal(N))

def eager(v, r):
    vals[...] = v; h.factorize(s.ptr); b[...] = r; h.solve(s.ptr); s.synchronize()
    return x.copy(), h.info_inertia()

with s:
    h.analyse(s.ptr); s.synchronize()
    v0 = cp.asarray(L.data)
    x0, in0 = eager(v0, rhs)
    print("eager inertia", in0, "residual", float(cp.linalg.norm(cp.asarray(K @ cp.asnumpy(x0)) - rhs)))
    # host cost of eager calls
    for name, fn in (("factorize", lambda: h.factorize(s.ptr)), ("solve", lambda: h.solve(s.ptr))):
        s.synchronize(); t = time.perf_counter()
        for _ in range(20): fn()
        th = (time.perf_counter() - t) / 20; s.synchronize(); tw = (time.perf_counter() - t) / 20
        print(f"eager {name}: host {th*1e6:.1f} us/call, wall {tw*1e6:.1f} us/call")
    for label, body in (("solve", lambda: h.solve(s.ptr)),
                        ("factorize", lambda: h.factorize(s.ptr)),
                        ("factorize+solve", lambda: (h.factorize(s.ptr), h.solve(s.ptr)))):
        try:
            s.synchronize()
            s.begin_capture()
            try:
                body()
            finally:
                g = s.end_capture()
            # new data: scaled values and a new rhs
            v1 = v0 * 1.5; r1 = cp.asarray(rng.standard_normal(N))
            x1, in1 = eager(v1, r1)       # reference
            vals[...] = v0 * 1.5 if "factorize" in label else v1
            if label == "solve":
                h.factorize(s.ptr)
            b[...] = r1
            g.launch(s)
            if label == "factorize":
                h.solve(s.ptr)
            s.synchronize()
            err = float(cp.abs(x - x1).max()); inn = h.info_inertia()
            t = time.perf_counter()
            for _ in range(20): g.launch(s)
            th = (time.perf_counter() - t) / 20; s.synchronize(); tw = (time.perf_counter() - t) / 20
            print(f"capture {label}: OK, max|x - eager| {err:.2e}, inertia {inn} vs {in1}; "
                  f"replay host {th*1e6:.1f} us, wall {tw*1e6:.1f} us")
        except Exception as e:
            print(f"capture {label}: FAILED {type(e).__name__}: {e}")
            traceback.print_exc(limit=3)
            try:
                s.synchronize()
            except Exception as e2:
                print("  stream after:", e2)
