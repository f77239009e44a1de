import os
import sys
import time

import casadi as ca
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../.."))
from caspar_backend.casadi import nlpsol
from tests.support.problem_bank import bank
from tests.support.solver_harness import _nlp
rows = []
for p in bank(include_slow=False)[:40]:
    d = dict(p.build(), options=p.options); opts = dict(p.options); nlp = _nlp(d)
    args = dict(x0=d["x0"], lbx=d["lbx"], ubx=d["ubx"])
    if d["g"] is not None: args.update(lbg=d["lbg"], ubg=d["ubg"])
    t0 = time.perf_counter()
    S = nlpsol("S", "caspar", nlp, {"caspar": {"print_level": 0, **opts}, "print_time": False, "error_on_fail": False})
    tb = time.perf_counter() - t0
    ts = []
    for k in range(3):
        t0 = time.perf_counter(); S(**args); ts.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    I = ca.nlpsol("S", "ipopt", nlp, {"ipopt": {"print_level": 0, "sb": "yes", **{k: ("yes" if v is True else "no" if v is False else v) for k, v in opts.items()}}, "print_time": False, "error_on_fail": False})
    ib = time.perf_counter() - t0
    ti = []
    for k in range(3):
        t0 = time.perf_counter(); I(**args); ti.append(time.perf_counter() - t0)
    rows.append((p.name, tb, *ts, ib, *ti))
a = np.array([r[1:] for r in rows]) * 1e3
print("median ms: caspar build %.2f first %.2f second %.2f third %.2f | ipopt build %.2f first %.2f second %.2f third %.2f" % tuple(np.median(a, axis=0)))
for r in rows[:12]: print("%-28s" % r[0], " ".join("%7.2f" % (1e3 * v) for v in r[1:]))
