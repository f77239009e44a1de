"""records caspar's final KKT residual ratio (after refinement) and the contraction of every augmented-system solve
(general path, compiled_path='no'); prints the max per group of consecutive solves between factorizations"""
import sys, runpy, numpy as np
import caspar_backend.kkt.augmented as A
rec = []

cls = A.AugmentedKKT
o_s, o_f = cls.solve, cls.factorize
def s(self, *a, **k):
    r = o_s(self, *a, **k); rec[-1].append(float(self.last_residual_ratio)); return r
def f(self, *a, **k):
    rec.append([]); return o_f(self, *a, **k)
cls.solve, cls.factorize = s, f
sys.argv = ["race_car.py", "caspar", "/dev/null", "print_level=0", "compiled_path='no'"] + sys.argv[1:]
runpy.run_path("race_car.py", run_name="__main__")
g = [max(x) for x in rec if x]
print("factorizations with solves:", len(g))
print("max final residual ratio per factorization (first 40):", " ".join(f"{v:.0e}" for v in g[:40]))
