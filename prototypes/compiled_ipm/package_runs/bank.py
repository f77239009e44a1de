# package solve_compiled on the bank (not slow), vs Problem.solve; prints each fate
import sys, time
import numpy as np
sys.path.insert(0, "/work/wt_compiled")
from tests.support.problem_bank import bank
from tests.support.solver_harness import _nlp
from caspar_backend.adapters.casadi import from_casadi
from caspar_backend.compiled import solve_compiled
from collections import Counter
fates = Counter(); worst = 0.0
for bp in bank(include_slow=False):
    d = bp.build()
    pr = from_casadi(_nlp(d))
    opts = dict(bp.options)
    bounds = {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}
    x0 = np.asarray(d["x0"], float)
    r = solve_compiled(pr, x0, None, **bounds, print_level=0, **opts)
    e = pr.solve(x0, **bounds, print_level=0, **opts)
    if r is None:
        fates["None"] += 1
        print(f"{bp.name:30s} None   (general: {e.status} it {e.iterations}) opts {opts}")
        continue
    same = r.status == e.status and r.iterations == e.iterations
    bit = r.f == e.f and np.array_equal(r.x, e.x)
    rel = abs(r.f - e.f) / max(1.0, abs(e.f)); worst = max(worst, rel)
    lg = np.max(np.abs(r.lam_g - e.lam_g), initial=0.0); lx = np.max(np.abs(r.lam_x - e.lam_x), initial=0.0)
    fates["same" if same else "DIFF"] += 1; fates["bit" if bit else "notbit"] += 1
    print(f"{bp.name:30s} {r.status:28s} it {r.iterations:4d}/{e.iterations:4d} bit {bit} rel f {rel:.1e} dlam_g {lg:.1e} dlam_x {lx:.1e}")
print(dict(fates), "worst rel f", worst)
