"""Setup of the SX polar AC-OPF through nlpsol(..., 'caspar') on the GPU: construction
and first call (max_iter 1: kernels compiled/loaded), then a full solve (tol 1e-6)."""
import json, sys, time
import casadi as ca
from caspar_backend.casadi import nlpsol
from benchmarks.models.acopf import acopf_casadi_polar
case = sys.argv[1]
nlp, a = acopf_casadi_polar(case)
t0 = time.perf_counter()
S = nlpsol("S", "caspar", nlp, {"caspar": {"device": "cuda", "max_iter": 1, "print_level": 0}})
t1 = time.perf_counter()
S(x0=a["x0"], lbx=a["lbx"], ubx=a["ubx"], lbg=a["lbg"], ubg=a["ubg"])
t2 = time.perf_counter()
print(json.dumps(dict(case=case, phase=sys.argv[2], construct=t1 - t0, first_call=t2 - t1,
                      setup=t2 - t0)), flush=True)
