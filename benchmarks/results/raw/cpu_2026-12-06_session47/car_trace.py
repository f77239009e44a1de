import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import caspar_backend.kkt.refinement as R
import caspar_backend.kkt.augmented as A
log = []
orig = R.refine
def traced(xp, b, x, residual, correct, max_steps, ratio_max, regularized):
    seq = []
    def res2(xx):
        r = residual(xx)
        seq.append((float(np.abs(r).max()), float(np.abs(xx).max())))
        return r
    out = orig(xp, b, x, res2, correct, max_steps, ratio_max, regularized)
    log.append((seq, out))
    return out
A.refine = traced
from tests.solver.test_restoration import _car
import caspar_backend as cb
r = cb.from_pyomo(_car()).solve(tol=1e-8, print_level=0, max_iter=1)
for seq, out in log[:12]:
    print(out, " ".join(f"{a:.1e}/{b:.1e}" for a, b in seq))
