"""Square systems (tests/solver/test_square_problems.py's three) from 60 random starts
each (x0 + U(-2, 2)), caspar against IPOPT (casadi's nlpsol): status, iterations and x.

    PYTHONPATH=. python benchmarks/results/raw/cpu_2026-12-05_session42/square_random.py \
        [compiled_path] [options dict] [starts]
"""
import sys
from collections import Counter

import casadi as ca
import numpy as np

from caspar_backend.casadi import nlpsol
from tests.solver.test_square_problems import _cases

rng = np.random.default_rng(0)
path = sys.argv[1] if len(sys.argv) > 1 else "no"
extra = eval(sys.argv[2]) if len(sys.argv) > 2 else {}
nst = int(sys.argv[3]) if len(sys.argv) > 3 else 60
cnt = Counter()
bad = tot = 0
for name, nlp, args in _cases():
    bounds = {k: v for k, v in args.items() if k != "x0"}
    S = nlpsol("S", "caspar", nlp, {"caspar": {"print_level": 0, "compiled_path": path,
                                               **extra}, "print_time": False})
    R = ca.nlpsol("R", "ipopt", nlp, {"ipopt": {"print_level": 0, "sb": "yes", **extra},
                                      "print_time": False})
    for k in range(nst):
        x0 = np.asarray(args["x0"]) + rng.uniform(-2, 2, len(args["x0"]))
        a = S(x0=x0, **bounds)
        sa = S.stats()
        b = R(x0=x0, **bounds)
        sb = R.stats()
        tot += 1
        cnt[(sb["return_status"], sa["return_status"])] += 1
        if ((sa["return_status"], sa["iter_count"]) != (sb["return_status"], sb["iter_count"])
                or not np.allclose(a["x"], b["x"], atol=1e-6)):
            bad += 1
            print(name, k, list(np.round(x0, 4)), sa["return_status"], sa["iter_count"],
                  sb["return_status"], sb["iter_count"], float(ca.norm_inf(a["x"] - b["x"])))
print("mismatch", bad, "of", tot, dict(cnt))
