"""session 45 call C: the IK GPU batch (10^4 targets) with the small K's Bunch-Kaufman in the CUDA kernel."""
import time, numpy as np
from caspar_backend import from_casadi
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
nlp, bounds = arm_ik()
P = from_casadi(nlp, **bounds)
T = np.asarray(arm_targets(10000))
X0 = np.tile([0.1, 0.2, 0.3], (len(T), 1))
for dev in ("cuda", "cpu"):
    r = P.solve_batch(x0=X0[:64], p=T[:64], device=dev, print_level=0)     # warm-up
    ts = []
    for _ in range(3):
        t = time.perf_counter(); r = P.solve_batch(x0=X0, p=T, device=dev, print_level=0); ts.append(time.perf_counter() - t)
    st = list(r.status)
    print(dev, "median s", round(float(np.median(ts)), 4), "solved", sum(s == "Solve_Succeeded" for s in st), "of", len(st),
          "paths", sorted(set(r.path)), "iters median", int(np.median(r.iterations)))
