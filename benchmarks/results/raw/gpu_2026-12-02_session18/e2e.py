"""Issue 20: end to end (nlpsol construction + solve) of the SX polar AC-OPF, caspar on
the GPU against IPOPT (casadi's nlpsol, MUMPS) on the same host; tol IPOPT's default."""
import json, sys, time
import casadi as ca
from caspar_backend.casadi import nlpsol
from benchmarks.models.acopf import acopf_casadi_polar
case = sys.argv[1]
nlp, a = acopf_casadi_polar(case)
call = dict(x0=a["x0"], lbx=a["lbx"], ubx=a["ubx"], lbg=a["lbg"], ubg=a["ubg"])
out = dict(case=case)
for who in sys.argv[2:]:
    t0 = time.perf_counter()
    if who == "caspar":
        S = nlpsol("S", "caspar", nlp, {"caspar": {"device": "cuda", "print_level": 0}})
    else:
        S = ca.nlpsol("S", "ipopt", nlp, {"ipopt": {"print_level": 0, "sb": "yes"},
                                            "print_time": False})
    t1 = time.perf_counter()
    r = S(**call)
    t2 = time.perf_counter()
    st = S.stats()
    out[who] = dict(construct=t1 - t0, solve=t2 - t1, total=t2 - t0,
                    status=st["return_status"], iter=st["iter_count"], f=float(r["f"]))
    print(json.dumps(out), flush=True)
