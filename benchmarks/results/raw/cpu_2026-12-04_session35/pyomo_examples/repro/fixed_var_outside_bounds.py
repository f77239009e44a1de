"""perf/opf_662bus / opf_6620bus pattern: a fixed Var whose fixed value lies outside its
bounds.  Pyomo's NL writer (what SolverFactory('ipopt') and the reference use) refuses the
model (InfeasibleConstraintException); caspar solves it silently (no warning)."""
import sys
import pyomo.environ as pyo
import caspar_backend
sys.path.insert(0, "/work/main")
from tests.support.pyomo_ipopt_reference import solve_reference

def build():
    m = pyo.ConcreteModel()
    m.b = pyo.Var(bounds=(0, 0), initialize=0.12)   # opf: bus_b_shunt, bounds (b_shunt_min, b_shunt_max)
    m.b.fix()                                        # opf: fixed when b_dispatch == 0
    m.y = pyo.Var(initialize=1.0)
    m.o = pyo.Objective(expr=(m.y - m.b) ** 2 + pyo.sin(m.y))
    return m

m = build()
res = pyo.SolverFactory("caspar").solve(m)
print("caspar:", res.solver.termination_condition, res.solver.status, "y =", pyo.value(m.y))
try:
    ref = solve_reference(build())
    print("IPOPT :", ref.status, ref.objective)
except Exception as e:
    print("IPOPT reference (Pyomo NL writer):", type(e).__name__, e)
