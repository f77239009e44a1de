"""Trace iterative refinement's residual ratios per solve (general path) for one model."""
import sys, json
sys.path.insert(0, '/work/main')
import numpy as np
import caspar_backend.kkt.refinement as R
import caspar_backend.kkt.augmented as A
from benchmarks.cases import cops_cases, ocp_cases
import caspar_backend as cb
log = []
orig = R.refine
def traced(xp, b, x, residual, correct, max_steps, ratio_max, regularized):
    seq = []
    def res2(xx):
        r = residual(xx)
        seq.append(float(np.abs(r).max()) / (1 + float(np.abs(b).max()) + min(float(np.abs(xx).max()), 1e6 * float(np.abs(b).max()))))
        return r
    out = orig(xp, b, x, res2, correct, max_steps, ratio_max, regularized)
    log.append(seq)
    return out
A.refine = traced
name, size = sys.argv[1], sys.argv[2]
opts = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
cases = list(cops_cases("1", {name})) if name != "vanderpol_colloc" else list(ocp_cases([int(size)], {name}))
built = cases[0].build()
P = cb.from_pyomo(built[1]) if built[0] == "pyomo" else cb.from_casadi(built[1], **built[2])
r = P.solve(tol=1e-6, print_level=0, compiled_path="no", **opts)
print(r.iterations, r.f, len(log))
for s in log[:int(sys.argv[4]) if len(sys.argv) > 4 else 12]:
    print(" ".join(f"{v:.1e}" for v in s))
