"""CPU general path (compiled_path='no'): qdldl's rows' static term scaled by F."""
import sys, os, time
sys.path.insert(0, "/work/main")
import numpy as np
from caspar_backend.linsolve.qdldl import QDLDLSolver
F = float(sys.argv[1]); what = sys.argv[2]
QDLDLSolver.row_static_factor = F
if what == "bank":
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import run_caspar
    for p in bank(include_slow=False):
        d = dict(p.build(), options=p.options)
        try:
            r = run_caspar(d, dict(compiled_path="no", max_wall_time=30), public=True)
            print("bank", p.name, r.status, r.iterations, repr(float(r.f)), flush=True)
        except Exception as e:
            print("bank", p.name, "ERROR", type(e).__name__, flush=True)
else:
    import caspar_backend as cb
    from caspar_backend.adapters.casadi.models import vanderpol_collocation
    nlp, args = vanderpol_collocation(int(what))
    P = cb.from_casadi(nlp, **args)
    r = P.solve(tol=1e-6, print_level=0, device="cpu", compiled_path="no")
    print("vdp", what, F, r.status, r.iterations, repr(float(r.f)), flush=True)
