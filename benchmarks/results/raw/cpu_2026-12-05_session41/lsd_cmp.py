"""The bank against IPOPT (casadi nlpsol) with least_square_init_duals: argv[1] IPOPT's value,
argv[2] caspar's (default the same); counts problems with IPOPT's status and iterations."""
import sys
import numpy as np, casadi as ca
from tests.support.problem_bank import bank
from tests.support.solver_harness import _nlp
from caspar_backend import from_casadi
flag = sys.argv[1] if len(sys.argv) > 1 else "yes"
same = diff = 0; rows = []
for bp in bank(include_slow=False):
    d = bp.build(); nlp = _nlp(d)
    args = {k: d[k] for k in ("x0", "lbx", "ubx", "lbg", "ubg")}
    io = {k: ("yes" if v is True else "no" if v is False else v) for k, v in dict(bp.options).items()}
    S = ca.nlpsol("S", "ipopt", nlp, {"print_time": False, "ipopt": {"print_level": 0, "sb": "yes", "least_square_init_duals": flag, **io}})
    r = S(**args); st = S.stats()
    P = from_casadi(nlp)
    c = P.solve(d["x0"], lbx=d["lbx"], ubx=d["ubx"], lbg=d["lbg"], ubg=d["ubg"], print_level=0, least_square_init_duals=(sys.argv[2] if len(sys.argv) > 2 else flag) == "yes", **dict(bp.options))
    ok = st["iter_count"] == c.iterations and st["return_status"] == c.status
    same += ok; diff += not ok
    if not ok:
        rows.append((bp.name, st["return_status"], st["iter_count"], c.status, c.iterations, float(r["f"]), c.f))
print(flag, "same", same, "diff", diff)
for r in rows: print(r)
