"""The restoration phase's barrier parameter and proximity weight, as IPOPT's.

A minimum-time car (Pyomo's pyomo.dae car example: time scaled to [0, 1] by the free
final time tf, drag R v^2, backward finite differences) starts at tf = v = 0, where the
dynamics' Jacobian with respect to tf and v vanishes: the first line search fails and the
restoration phase starts at a stationary point of the infeasibility.  IPOPT keeps mu at
its first restoration iteration (MonotoneMuUpdate's first_iter_resto_) and weighs the
proximity term by sqrt(mu) at the current mu (RestoIpoptNLP's Eta(mu)); with mu lowered at
once and the weight frozen at its starting value, caspar's restoration converged back to
tf = 0 and reported a local infeasibility where IPOPT finds tf = 16.556."""

from __future__ import annotations

import pytest

pyo = pytest.importorskip("pyomo.environ")
dae = pytest.importorskip("pyomo.dae")
pytest.importorskip("casadi")


def _car(nfe=15):
    m = pyo.ConcreteModel()
    m.tau = dae.ContinuousSet(bounds=(0, 1))
    m.time = pyo.Var(m.tau)
    m.tf = pyo.Var()
    m.x = pyo.Var(m.tau, bounds=(0, 150.0))
    m.v = pyo.Var(m.tau, bounds=(0, None))
    m.a = pyo.Var(m.tau, bounds=(-3.0, 1.0), initialize=0)
    m.dtime, m.dx, m.dv = (dae.DerivativeVar(m.time), dae.DerivativeVar(m.x),
                           dae.DerivativeVar(m.v))
    m.obj = pyo.Objective(expr=m.tf)
    def ode(expr):      # indexed by the ContinuousSet (expanded by the discretization)
        return pyo.Constraint(m.tau, rule=lambda m, t: pyo.Constraint.Skip if t == 0
                              else expr(m, t))

    m.ode_x = ode(lambda m, t: m.dx[t] == m.tf * m.v[t])
    m.ode_v = ode(lambda m, t: m.dv[t] == m.tf * (m.a[t] - 1e-3 * m.v[t] ** 2))
    m.ode_t = ode(lambda m, t: m.dtime[t] == m.tf)
    m.ends = pyo.ConstraintList()
    for con in (m.x[0] == 0, m.x[1] == 100.0, m.v[0] == 0, m.v[1] == 0, m.time[0] == 0):
        m.ends.add(con)
    pyo.TransformationFactory("dae.finite_difference").apply_to(m, nfe=nfe, scheme="BACKWARD")
    return m


def test_car_restoration_reaches_ipopts_optimum():
    import caspar_backend  # noqa: F401  (registers the solver)
    from tests.support.pyomo_ipopt_reference import solve_reference

    ref = solve_reference(_car(), {"tol": 1e-8})
    m = _car()
    res = pyo.SolverFactory("caspar").solve(m, options={"tol": 1e-8})
    assert ref.success
    assert str(res.solver.termination_condition) == "optimal", res.solver.termination_condition
    assert abs(pyo.value(m.tf) - ref.objective) <= 1e-6 * abs(ref.objective), \
        (pyo.value(m.tf), ref.objective)
