"""Session 43: the host cost of one device operation, by how it is issued (H100)."""
import os, sys, time
import numpy as np
sys.path.insert(0, os.getcwd())
import cupy as cp
from caspar_backend.arrays import fused, fused_cuda
from caspar_backend.arrays.xp import copy_into

n = 264541
x, y, z = cp.ones(n), cp.ones(n), cp.ones(n)
idx = cp.arange(n, dtype=cp.int64)
m = fused_cuda.module(cp, fused.SPECS)
k = m.kernels["axpy"]
blocks = min(-(-n // 256), 8192)
args = (np.float64(0.5), x, y, np.int64(n))
st = cp.cuda.get_current_stream()
R = 2000


def bench(label, f):
    f(); st.synchronize()
    t = time.perf_counter()
    for _ in range(R):
        f()
    th = time.perf_counter() - t
    st.synchronize()
    print(f"{label:48s} host {1e6 * th / R:6.2f} us", flush=True)


bench("fused.call axpy", lambda: fused.call(cp, "axpy", 0.5, x, y))
bench("module.launch axpy", lambda: m.launch("axpy", (0.5, x, y)))
bench("RawKernel call, args prepared", lambda: k((blocks,), (256,), args))
bench("RawKernel call, args built", lambda: k((blocks,), (256,), (np.float64(0.5), x, y, np.int64(n))))
bench("fused.call add_scaled (idx)", lambda: fused.call(cp, "add_scaled", idx, -1.0, x, y))
bench("fused.call barrier_sums (reduction, 5 cols)", lambda: fused.call(cp, "barrier_sums", x, idx, y, idx))
bench("fused.call amax_abs (reduction)", lambda: fused.call(cp, "amax_abs", x))
bench("cp.copyto(y, x)", lambda: cp.copyto(y, x))
bench("copy_into(cp, y, x)", lambda: copy_into(cp, y, x))
bench("y[...] = x", lambda: y.__setitem__(Ellipsis, x))
bench("memcpyAsync D2D", lambda: cp.cuda.runtime.memcpyAsync(y.data.ptr, x.data.ptr, y.nbytes, 3, st.ptr))
bench("x.copy()", lambda: x.copy())
bench("cp.empty(n)", lambda: cp.empty(n))
bench("y.fill(0.0)", lambda: y.fill(0.0))
bench("y[100:] = 0.0", lambda: y[100:].fill(0.0))
bench("memsetAsync", lambda: cp.cuda.runtime.memsetAsync(y.data.ptr, 0, y.nbytes, st.ptr))
bench("cp.multiply(x, y, out=z)", lambda: cp.multiply(x, y, out=z))
bench("x + y", lambda: x + y)
bench("-x", lambda: -x)
bench("x.sum()", lambda: x.sum())
bench("cp.asarray(x, dtype=float64)", lambda: cp.asarray(x, dtype=cp.float64))
bench("cp.ascontiguousarray(cp.asarray(x))", lambda: cp.ascontiguousarray(cp.asarray(x, dtype=cp.float64)))
v = fused.call(cp, "barrier_sums", x, idx, y, idx)
from caspar_backend.arrays.xp import scalars
bench("scalars(5 values) (pack + get)", lambda: scalars(cp, *v))
bench("stream.synchronize() (idle)", lambda: st.synchronize())
