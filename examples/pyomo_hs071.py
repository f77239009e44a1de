"""Hock–Schittkowski 71 in Pyomo, solved by caspar exactly as one would with IPOPT.

    python examples/pyomo_hs071.py
"""

import pyomo.environ as pyo

import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))

m = pyo.ConcreteModel()
m.x = pyo.Var(range(4), bounds=(1, 5), initialize={0: 1, 1: 5, 2: 5, 3: 1})
m.obj = pyo.Objective(expr=m.x[0] * m.x[3] * (m.x[0] + m.x[1] + m.x[2]) + m.x[2])
m.prod = pyo.Constraint(expr=m.x[0] * m.x[1] * m.x[2] * m.x[3] >= 25)
m.norm = pyo.Constraint(expr=sum(m.x[i] ** 2 for i in range(4)) == 40)
m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)

opt = pyo.SolverFactory("caspar")
opt.options["tol"] = 1e-8
res = opt.solve(m, tee=True)
print(res.solver.termination_condition, pyo.value(m.obj))   # optimal 17.0140173
print({i: round(pyo.value(m.x[i]), 6) for i in range(4)}, "dual(norm) =", m.dual[m.norm])
