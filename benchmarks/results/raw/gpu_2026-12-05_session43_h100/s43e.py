"""Session 43: can the device iteration's sequences be CUDA graphs?  (1) twelve fused ops
on preallocated arrays of case9241's KKT size: host time per op eager vs one graph
launch, and the same answer; (2) a reduction whose output CuPy allocates inside the
capture; (3) cuDSS's SOLVE (copy in, solve, copy out) inside a capture, replayed with a
new right-hand side against the eager solve."""
import os, sys, time
import numpy as np
sys.path.insert(0, os.getcwd())
import cupy as cp
from caspar_backend.arrays import fused

n = 264541
rng = np.random.default_rng(0)
A = lambda lo=0.0: cp.asarray(rng.random(n) + lo)
w, d, out, z, s, v, y = A(), A(), A(), A(1.0), A(1.0), A(), A()
idx = cp.arange(n, dtype=cp.int64)


def seq(xp=cp):
    fused.call(xp, "axpy", 0.5, d, w)
    fused.call(xp, "axpy_into", w, 0.25, d, out)
    fused.call(xp, "add_scaled", idx, -1.0, z, out)
    fused.call(xp, "clip_ratio", s, 0.1, 1e10, z)
    fused.call(xp, "gather_mul", v, y, idx, out)
    fused.call(xp, "scale_add", 0.5, d, out)
    fused.call(xp, "axpy", -0.5, d, w)
    fused.call(xp, "add_scaled", idx, 1.0, z, out)
    fused.call(xp, "scaled_shift", d, v, y, out)
    fused.call(xp, "axpy", 1e-3, out, v)
    fused.call(xp, "scale_add", 0.999, d, v)
    fused.call(xp, "add_ratio", idx, z, s, y)


st = cp.cuda.Stream(non_blocking=True)
with st:
    seq(); st.synchronize()
    snap = [a.copy() for a in (w, out, z, v, y)]
    K = 200
    t = time.perf_counter()
    for _ in range(K):
        seq()
    th = time.perf_counter() - t
    st.synchronize()
    te = time.perf_counter() - t
    print(f"eager: host {1e6 * th / K / 12:.1f} us/op, wall {1e3 * te / K:.3f} ms/seq", flush=True)
    # the same start, K eager sequences, for the comparison
    for a, b in zip((w, out, z, v, y), snap):
        a[...] = b
    for _ in range(3):
        seq()
    st.synchronize()
    ref = [a.copy() for a in (w, out, z, v, y)]
    for a, b in zip((w, out, z, v, y), snap):
        a[...] = b
    st.synchronize()
    try:
        st.begin_capture()
        seq()
        g = st.end_capture()
        g.upload(st) if hasattr(g, "upload") else None
        for _ in range(3):
            g.launch(st)
        st.synchronize()
        same = all(bool(cp.array_equal(a, b)) for a, b in zip((w, out, z, v, y), ref))
        print("graph replay equals eager:", same, flush=True)
        t = time.perf_counter()
        for _ in range(K):
            g.launch(st)
        th = time.perf_counter() - t
        st.synchronize()
        te = time.perf_counter() - t
        print(f"graph: host {1e6 * th / K:.1f} us/launch (12 ops), wall {1e3 * te / K:.3f} ms/seq", flush=True)
    except Exception as e:
        print("capture failed:", repr(e), flush=True)
    # (2) a reduction allocating its output inside the capture
    try:
        st.begin_capture()
        r = fused.call(cp, "barrier_sums", s, idx, z, idx)
        g2 = st.end_capture()
        g2.launch(st); st.synchronize()
        eager = fused.call(cp, "barrier_sums", s, idx, z, idx)
        print("reduction in capture:", [float(a) for a in r], "eager", [float(a) for a in eager], flush=True)
    except Exception as e:
        print("reduction capture failed:", repr(e), flush=True)
        try:
            st.end_capture()
        except Exception:
            pass

# (3) cuDSS SOLVE in a capture
try:
    import scipy.sparse as sp
    from caspar_backend.linsolve import cudss_handle as H
    k = 200
    T = sp.diags([-1, 4, -1], [-1, 0, 1], shape=(k, k))
    L2 = (sp.kron(sp.eye(k), T) + sp.kron(sp.diags([-1, -1], [-1, 1], shape=(k, k)), sp.eye(k))).tocsr()
    low = sp.tril(L2).tocsr()
    N = low.shape[0]
    ip, ix, vv = (cp.asarray(low.indptr.astype(np.int32)), cp.asarray(low.indices.astype(np.int32)),
                  cp.asarray(low.data))
    b, x = cp.zeros(N), cp.zeros(N)
    h = H.CudssHandle(ip, ix, vv, b, x, pivoting=True)
    st2 = cp.cuda.Stream(non_blocking=True)
    with st2:
        h.analyse(st2.ptr); h.factorize(st2.ptr); st2.synchronize()
        rhs = cp.asarray(rng.random(N)); res = cp.zeros(N)
        cp.copyto(b, rhs); h.solve(st2.ptr); st2.synchronize(); x_eager = x.copy()
        x[...] = 0; st2.synchronize()
        st2.begin_capture()
        cp.copyto(b, rhs)
        h.solve(st2.ptr)
        cp.copyto(res, x)
        g3 = st2.end_capture()
        g3.launch(st2); st2.synchronize()
        err = float(cp.abs(res - x_eager).max())
        print("cuDSS SOLVE captured: max |x_graph - x_eager| =", err, flush=True)
        rhs[...] = cp.asarray(rng.random(N)); g3.launch(st2); st2.synchronize()
        cp.copyto(b, rhs); h.solve(st2.ptr); st2.synchronize()
        print("  with a new rhs in the same buffer:", float(cp.abs(res - x).max()), flush=True)
        t = time.perf_counter()
        for _ in range(50):
            h.solve(st2.ptr)
        th = time.perf_counter() - t; st2.synchronize(); te = time.perf_counter() - t
        t = time.perf_counter()
        for _ in range(50):
            g3.launch(st2)
        th2 = time.perf_counter() - t; st2.synchronize(); te2 = time.perf_counter() - t
        print(f"  solve eager host {1e6*th/50:.1f} us wall {1e3*te/50:.3f} ms; graph host {1e6*th2/50:.1f} us wall {1e3*te2/50:.3f} ms", flush=True)
    # factorization captured
    with st2:
        try:
            st2.begin_capture()
            h.factorize(st2.ptr)
            g4 = st2.end_capture()
            g4.launch(st2); st2.synchronize()
            print("cuDSS FACTORIZATION captured: info/inertia", h.info_inertia(), flush=True)
        except Exception as e:
            print("FACTORIZATION capture failed:", repr(e), flush=True)
except Exception as e:
    print("cuDSS capture failed:", repr(e), flush=True)
