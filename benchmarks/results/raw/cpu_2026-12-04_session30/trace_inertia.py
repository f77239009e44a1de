import sys, os
sys.path.insert(0, os.getcwd())
from caspar_backend.solver import inertia as I
_f = I.InertiaCorrection.factor if hasattr(I, "InertiaCorrection") else None
cls = [c for c in vars(I).values() if isinstance(c, type) and hasattr(c, "factor") and hasattr(c, "direction")][0]
_orig = cls.factor
def factor(self):
    k = self.kkt
    fact, ok = _orig(self)
    print(f"  factor: delta_w={getattr(k,'delta_w',None)!r} delta_c={getattr(k,'delta_c',None)!r} eps={getattr(k,'static_regularization',None)!r} -> {fact} ok={ok}", flush=True)
    return fact, ok
cls.factor = factor
import caspar_backend as cb
from benchmarks.cases import acopf_cases
case = next(acopf_cases(100000, names={sys.argv[1]}))
kind, nlp, args, extra = case.build()
P = cb.from_casadi(nlp, **args)
r = P.solve(tol=1e-6, print_level=5, device="cpu", max_iter=int(sys.argv[2]))
