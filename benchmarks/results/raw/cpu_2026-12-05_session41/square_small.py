"""Square problems (tests/solver/test_square_problems.py's three) through CasADi's nlpsol:
caspar with the kernels' feasibility multipliers, caspar's general path, IPOPT; each from
50 perturbed starts, median time per solve (after a warm-up solve)."""
import time

import casadi as ca
import numpy as np

from caspar_backend.casadi import nlpsol
from caspar_backend.compiled import dispatch
from tests.solver.test_square_problems import _cases

dispatch.kernels_ready(wait=True)
rng = np.random.default_rng(1)
for name, nlp, args in _cases():
    starts = [np.asarray(args["x0"], float) * (1 + 0.1 * rng.standard_normal(len(args["x0"])))
              for _ in range(50)]
    bounds = {k: v for k, v in args.items() if k != "x0"}
    row = {}
    for label, S in (("caspar", nlpsol("S", "caspar", nlp, {"caspar": {"print_level": 0},
                                                             "print_time": False})),
                     ("caspar general", nlpsol("S", "caspar", nlp, {
                         "caspar": {"print_level": 0, "compiled_path": "no"},
                         "print_time": False})),
                     ("ipopt", ca.nlpsol("S", "ipopt", nlp, {"ipopt": {"print_level": 0,
                                                                        "sb": "yes"},
                                                              "print_time": False}))):
        S(x0=starts[0], **bounds)
        ts, its = [], []
        for x0 in starts:
            t = time.perf_counter()
            S(x0=x0, **bounds)
            ts.append(time.perf_counter() - t)
            its.append(S.stats()["iter_count"])
        row[label] = (np.median(ts) * 1e3, int(np.median(its)))
    print(name, "  ".join(f"{k}: {v[0]:.3f} ms ({v[1]} it)" for k, v in row.items()),
          f" caspar/ipopt {row['caspar'][0] / row['ipopt'][0]:.2f}")
