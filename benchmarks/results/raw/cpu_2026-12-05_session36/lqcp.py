"""perf/lqcp (examples/performance/jump/lqcp.py, with n = m = N instead of 1000):
a convex QP; caspar's objective differs from IPOPT's by ~5e-4 relative at default tol,
caspar's inf_pr stays ~1e-5 after full steps (alpha_pr = 1) on linear constraints and it
enters restoration at iteration 26."""
import sys
import pyomo.environ as pyo
import caspar_backend
sys.path.insert(0, "/work/main")
from tests.support.pyomo_ipopt_reference import solve_reference

def build(N=100):
    model = pyo.ConcreteModel()
    model.n = N; model.m = N
    model.dx = 1.0 / model.n; model.T = 1.58; model.dt = model.T / model.n
    model.h2 = model.dx**2; model.a = 0.001
    model.ns = pyo.RangeSet(0, model.n); model.ms = pyo.RangeSet(0, model.n)
    model.y = pyo.Var(model.ms, model.ns, bounds=(0.0, 1.0))
    model.u = pyo.Var(model.ms, bounds=(-1.0, 1.0))
    yt = lambda j, dx: 0.5 * (1 - (j * dx) * (j * dx))
    model.obj = pyo.Objective(expr=0.25 * model.dx * (
        (model.y[model.m, 0] - yt(0, model.dx)) ** 2
        + 2 * sum((model.y[model.m, j] - yt(j, model.dx)) ** 2 for j in range(1, model.n))
        + (model.y[model.m, model.n] - yt(model.n, model.dx)) ** 2)
        + 0.25 * model.a * model.dt * (2 * sum(model.u[i] ** 2 for i in range(1, model.m)) + model.u[model.m] ** 2))
    model.pde = pyo.Constraint(pyo.RangeSet(0, model.n - 1), pyo.RangeSet(1, model.n - 1),
        rule=lambda M, i, j: (M.y[i + 1, j] - M.y[i, j]) / M.dt == 0.5 * (
            M.y[i, j - 1] - 2 * M.y[i, j] + M.y[i, j + 1] + M.y[i + 1, j - 1]
            - 2 * M.y[i + 1, j] + M.y[i + 1, j + 1]) / M.h2)
    model.ic = pyo.Constraint(model.ns, rule=lambda M, j: M.y[0, j] == 0)
    model.bc1 = pyo.Constraint(pyo.RangeSet(1, model.n),
        rule=lambda M, i: M.y[i, 2] - 4 * M.y[i, 1] + 3 * M.y[i, 0] == 0)
    model.bc2 = pyo.Constraint(pyo.RangeSet(1, model.n),
        rule=lambda M, i: M.y[i, M.n - 2] - 4 * M.y[i, M.n - 1] + 3 * M.y[i, M.n]
        == (2 * M.dx) * (M.u[i] - M.y[i, M.n]))
    return model

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
m = build(N)
import os
opts = {"linear_solver": os.environ["LS"]} if os.environ.get("LS") else {}
res = pyo.SolverFactory("caspar").solve(m, tee="--tee" in sys.argv, options=opts)
print("caspar:", res.solver.termination_condition, res.solver.statistics.black_box.number_of_iterations,
      "obj", repr(pyo.value(m.obj)))
ref = solve_reference(build(N))
print("IPOPT :", ref.status, ref.iterations, "obj", repr(ref.objective))
tight = solve_reference(build(N), {"tol": 1e-12})
print("IPOPT tol=1e-12:", tight.status, tight.iterations, "obj", repr(tight.objective))
print("rel diff caspar vs IPOPT:", abs(pyo.value(m.obj) - ref.objective) / abs(ref.objective))
