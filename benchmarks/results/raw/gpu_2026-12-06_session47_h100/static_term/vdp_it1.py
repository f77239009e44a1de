"""Van der Pol collocation N=10000: the first iterate on the GPU under several options against IPOPT's (max_iter 1)."""
import os, sys, json
sys.path.insert(0, os.getcwd())
import numpy as np
import casadi as ca
import caspar_backend as cb
from caspar_backend.adapters.casadi.models import vanderpol_collocation
nlp, args = vanderpol_collocation(10000)
S = ca.nlpsol("s", "ipopt", nlp, {"ipopt.tol": 1e-6, "ipopt.print_level": 0, "ipopt.max_iter": 1, "print_time": False})
xi = np.array(S(**args)["x"]).ravel()
P = cb.from_casadi(nlp, **args)
for dev, o in [("cuda", {}), ("cpu", {}), ("cuda", {"residual_ratio_max": 1e-14}), ("cuda", {"kkt_static_regularization": 0.0}),
               ("cuda", {"refinement_contraction_max": 0.01}), ("cuda", {"kkt_system": "augmented"})]:
    try:
        r = P.solve(tol=1e-6, print_level=0, max_iter=1, device=dev, **o)
        x = np.asarray(r.x).ravel()
        print(dev, json.dumps(o), r.iterations, "max rel diff", float((np.abs(x - xi) / np.maximum(1, np.abs(xi))).max()), flush=True)
    except Exception as e:
        print(dev, json.dumps(o), "ERROR", type(e).__name__, str(e)[:200], flush=True)
