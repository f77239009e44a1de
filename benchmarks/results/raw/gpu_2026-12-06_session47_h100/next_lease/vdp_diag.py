"""Van der Pol collocation N=10000: caspar on the GPU and CPU against IPOPT, iteration logs and final-point checks."""
import os, sys, time, io, contextlib
sys.path.insert(0, os.getcwd())
import numpy as np
import casadi as ca
import caspar_backend as cb
from caspar_backend.adapters.casadi.models import vanderpol_collocation

out = os.environ["OUT"]
N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
nlp, args = vanderpol_collocation(N)
S = ca.nlpsol("s", "ipopt", nlp, {"ipopt.tol": 1e-6, "ipopt.print_level": 5, "print_time": False})
r = S(**{k: v for k, v in args.items()})
xi = np.array(r["x"]).ravel(); fi = float(r["f"])
g = ca.Function("g", [nlp["x"]] + ([nlp["p"]] if "p" in nlp else []), [nlp["g"], nlp["f"]])
def check(x):
    gv, fv = g(x) if "p" not in nlp else g(x, args["p"])
    gv = np.array(gv).ravel()
    lbg = np.broadcast_to(np.array(args.get("lbg", 0.0), float).ravel(), gv.shape)
    ubg = np.broadcast_to(np.array(args.get("ubg", 0.0), float).ravel(), gv.shape)
    viol = np.maximum(np.maximum(lbg - gv, gv - ubg), 0).max()
    return float(fv), float(viol)
print("ipopt", S.stats()["return_status"], S.stats()["iter_count"], repr(fi), check(xi))
for device in (sys.argv[2].split(",") if len(sys.argv) > 2 else ("cuda", "cpu")):
    P = cb.from_casadi(nlp, **args)
    P.evaluator(device)
    for pl in (5, 0):
        t = time.perf_counter()
        res = P.solve(tol=1e-6, print_level=pl, device=device,
                      output_file=f"{out}/caspar_{device}_N{N}_pl{pl}.log" if pl else "")
        x = np.asarray(res.x).ravel()
        print(device, pl, res.status, res.iterations, repr(float(res.f)), check(x),
              "max|x-x_ipopt|", float(np.abs(x - xi).max()), f"{time.perf_counter()-t:.3f}s")
