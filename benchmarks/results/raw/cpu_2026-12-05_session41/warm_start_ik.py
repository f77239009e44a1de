"""Warm-started IK through CasADi's nlpsol: caspar (compiled path from the start, and
the general path alone) against IPOPT, 200 targets, each solve warm-started from the
previous target's solution (x, lam_g, lam_x); medians of the per-solve times."""
import time
import numpy as np
import casadi as ca
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from caspar_backend.casadi import nlpsol
from caspar_backend.compiled import dispatch

dispatch.kernels_ready(wait=True)
nlp, bounds = arm_ik()
T = arm_targets(201)
warm = {"warm_start_init_point": "yes", "warm_start_bound_push": 1e-6,
        "warm_start_mult_bound_push": 1e-6}
solvers = {
    "caspar": nlpsol("S", "caspar", nlp, {"caspar": dict(print_level=0, **warm),
                                           "print_time": False}),
    "caspar general": nlpsol("S", "caspar", nlp, {"caspar": dict(print_level=0,
                                                                  compiled_path="no", **warm),
                                                   "print_time": False}),
    "ipopt": ca.nlpsol("S", "ipopt", nlp, {"ipopt": dict(print_level=0, sb="yes", **warm),
                                            "print_time": False}),
}
for name, S in solvers.items():
    for rep in range(2):
        a = S(x0=[0.1, 0.2, 0.3], p=T[0], **bounds)
        ts, its = [], []
        for t in T[1:]:
            t0 = time.perf_counter()
            a = S(x0=a["x"], p=t, lam_g0=a["lam_g"], lam_x0=a["lam_x"], **bounds)
            ts.append(time.perf_counter() - t0)
            its.append(S.stats()["iter_count"])
    print(f"{name:15s} median {1e3 * np.median(ts):7.3f} ms  p99 {1e3 * np.percentile(ts, 99):7.3f} ms"
          f"  iterations median {np.median(its):.0f}  f_last {float(a['f']):.12g}")
