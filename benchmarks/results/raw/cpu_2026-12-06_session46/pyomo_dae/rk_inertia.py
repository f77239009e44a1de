import sys
sys.path.insert(0, '/tmp/pyodae')
import caspar_backend
from caspar_backend.kkt import augmented
from driver_logs import build
import pyomo.environ as pyo
real = augmented.AugmentedKKT.factorize if hasattr(augmented, "AugmentedKKT") else None
cls = augmented.AugmentedKKT
real = cls.factorize
log = []
def spy(self):
    fact, ok = real(self)
    log.append((fact.inertia, self.expected_inertia(), self.delta_w, self.delta_c, ok, self.nw, self.m, type(self.solver).__name__))
    return fact, ok
cls.factorize = spy
m = build("rk_optimization")
pyo.SolverFactory('caspar').solve(m, options=dict(print_level=0, max_iter=1, compiled_path="no"), load_solutions=False)
for l in log[:8]: print(l)
