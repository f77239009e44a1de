"""Host time per launch of fused ops at a tiny size (device time ~2 us, so the host's
time per launch is what the loop measures): the driver path (arrays/launcher.py) against
CuPy's Function call, interleaved, three rounds."""
import time
import cupy as cp
from caspar_backend.arrays import fused, fused_cuda
m = fused_cuda.module(cp, fused.SPECS)
lau = m.launcher
print("launcher on:", lau is not None, flush=True)
n = 64
a, b, c = cp.ones(n), cp.ones(n), cp.ones(n)
idx = cp.arange(n, dtype=cp.int64)
ops = {
    "bound_mult_step (elementwise, 6 args)": lambda: fused.call(cp, "bound_mult_step", 0.1, a, b, c, idx, 1.0),
    "optimality_norms (11 columns, 9 args)": lambda: fused.call(cp, "optimality_norms", a, b, c, a, b, c, a, b, 0.1),
    "all_finite2 (reduction)": lambda: fused.call(cp, "all_finite2", a, b),
    "amax_abs (reduction)": lambda: fused.call(cp, "amax_abs", a),
}
def per_launch(f, k=4000):
    for _ in range(100):
        f()
    cp.cuda.Stream.null.synchronize()
    t = time.perf_counter()
    for j in range(k):
        f()
        if j % 200 == 199:          # keep the launch queue short: host time, not a full queue
            cp.cuda.Stream.null.synchronize()
    cp.cuda.Stream.null.synchronize()
    return (time.perf_counter() - t) / k * 1e6
res = {}
for rnd in range(3):
    for mode in ("driver", "cupy"):
        m.launcher = lau if mode == "driver" else None
        for name, f in ops.items():
            res.setdefault((name, mode), []).append(per_launch(f))
for name in ops:
    d, c_ = res[(name, "driver")], res[(name, "cupy")]
    print(f"{name:40s} driver {min(d):6.2f} us (rounds {', '.join(f'{x:.2f}' for x in d)})  "
          f"CuPy {min(c_):6.2f} us (rounds {', '.join(f'{x:.2f}' for x in c_)})")
