"""Prototype (not on main): after the ratio test, more refinement steps while the
constraint rows' residual exceeds ratio_max (1 + |b_c|)."""
import numpy as np
import caspar_backend.kkt.augmented as AUG
from caspar_backend.arrays import fused
osolve = AUG.AugmentedKKT.solve
def solve(self, rhs_w, rhs_c):
    dw, dy = osolve(self, rhs_w, rhs_c)
    nw, m, xp = self.nw, self.m, self.xp
    if m == 0 or self.static_regularization == 0:
        return dw, dy
    b = self._rhs
    x = np.concatenate([dw, dy, np.zeros(len(b) - nw - m)]) if len(b) > nw + m else np.concatenate([dw, dy])
    def residual(v):
        return fused.call(xp, "residual_static", b, self.solver.matvec(v, self._kv), self._dstat, v)
    bc = float(np.max(np.abs(b[nw:nw + m]))) if m else 0.0
    for _ in range(10):
        r = residual(x)
        rc = float(np.max(np.abs(r[nw:nw + m])))
        if rc <= self.residual_ratio_max * (1.0 + bc):
            break
        self.solver.solve_add(r, x)
    return x[:nw], x[nw:nw + m]
AUG.AugmentedKKT.solve = solve
