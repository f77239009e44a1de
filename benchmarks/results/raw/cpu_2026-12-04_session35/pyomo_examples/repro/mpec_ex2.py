"""pyomobook/mpec-ch/ex2.py after mpec.simple_nonlinear: both solvers 'optimal', objectives
-1.0000999e-4 (caspar) vs -1.0001318e-4 (IPOPT): rel. diff 3.2e-5 (absolute 3e-9)."""
import sys
import pyomo.environ as pyo
from pyomo.mpec import Complementarity, complements
import caspar_backend
sys.path.insert(0, "/work/main")
from tests.support.pyomo_ipopt_reference import solve_reference

def build():
    model = pyo.ConcreteModel()
    model.x = pyo.Var(within=pyo.NonNegativeReals)
    model.y = pyo.Var(within=pyo.NonNegativeReals)
    model.f1 = pyo.Objective(expr=2 * model.x - model.y)
    model.compl = Complementarity(expr=complements(0 <= model.y, model.y >= model.x))
    return pyo.TransformationFactory("mpec.simple_nonlinear").create_using(model)

m = build()
res = pyo.SolverFactory("caspar").solve(m)
print("caspar:", res.solver.termination_condition, res.solver.statistics.black_box.number_of_iterations,
      "obj", repr(pyo.value(m.f1)), "x,y", pyo.value(m.x), pyo.value(m.y))
ref = solve_reference(build())
print("IPOPT :", ref.status, ref.iterations, "obj", repr(ref.objective))
