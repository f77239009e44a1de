"""``solve_scenarios``: one Pyomo model, many values of its mutable Params, one batched
solve (both interfaces).

* every scenario equals a separate ``SolverFactory('caspar').solve`` of the model with
  those Param values (objective, variables, duals to 1e-10; status; iterations), with
  Params in the objective, a constraint body, a variable bound and a constraint bound;
* one ``Problem.solve_batch`` call (a spy) for all scenarios;
* the model is untouched (values, Params, stale flags, Suffixes) unless a scenario is
  loaded, and loading writes what a normal solve writes;
* bad keys and values raise a ModelError naming the scenario and the component, before
  anything is solved; a violated constant row decides its scenario without solving.
"""

from __future__ import annotations

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ")

import caspar_backend  # noqa: E402,F401  (registers SolverFactory('caspar'))
from caspar_backend.errors import ModelError, NonFiniteError  # noqa: E402
from pyomo.common.collections import ComponentMap  # noqa: E402
from pyomo.contrib.solver.common.factory import SolverFactory as ContribFactory  # noqa: E402
from pyomo.contrib.solver.common.results import (SolutionStatus,  # noqa: E402
                                                 TerminationCondition as ContribTC)
from pyomo.opt import TerminationCondition  # noqa: E402

from tests.support.assertions import close  # noqa: E402

QUIET = {"print_level": 0}


def build():
    """Params p (scalar) and q[1], q[2] in the objective, a constraint body, a variable
    bound (x[1] <= q[1]) and a constraint bound (x[1] - x[2] >= -p); a fixed Var; an
    immutable Param; the 'dual' Suffix."""
    m = pyo.ConcreteModel("scen")
    m.p = pyo.Param(mutable=True, initialize=1.0, within=pyo.NonNegativeReals)
    m.q = pyo.Param([1, 2], mutable=True, initialize={1: 2.0, 2: 0.5})
    m.k = pyo.Param(initialize=2.0)                   # immutable
    m.unused = pyo.Param(mutable=True, initialize=0.0)
    m.x = pyo.Var([1, 2], initialize=0.0, bounds=(-5, m.q[1]))
    m.z = pyo.Var(initialize=0.3)
    m.z.fix()
    m.obj = pyo.Objective(expr=(m.x[1] - m.p) ** 2 + (m.x[2] - m.k) ** 2
                          + m.q[2] * m.x[1] * m.x[2] + m.z * m.x[2])
    m.c = pyo.Constraint(expr=m.x[1] + m.x[2] ** 2 <= 2 * m.p + 1)
    m.d = pyo.Constraint(expr=m.x[1] - m.x[2] >= -m.p)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def scenarios(m):
    """Four scenarios in the accepted forms: a ComponentMap, (key, value) pairs, a dict
    keyed by name, a dict keyed by the indexed Param."""
    return [ComponentMap([(m.p, 1.0)]),
            [(m.p, 2.0), (m.q[2], 0.1)],
            {"q[1]": 0.5, "p": 3.0},                      # q[1] moves x[1]'s bound
            {m.q: {1: 3.0, 2: 0.0}}]


def apply(model, scen):
    """Set a scenario's values on ``model`` (a clone: keys are found by name)."""
    pairs = scen.items() if hasattr(scen, "items") else scen
    for key, value in pairs:
        comp = model.find_component(key if isinstance(key, str) else key.name)
        if isinstance(value, dict):
            for i, v in value.items():
                comp[i] = v
        else:
            comp.set_value(value)



def snapshot(m):
    """Everything solve_scenarios must not change."""
    vs = [(v.name, v.value, v.stale, v.fixed) for v in m.component_data_objects(pyo.Var)]
    ps = [(p.name, p._value) for p in m.component_data_objects(pyo.Param)]
    return vs, ps, dict(m.dual.items())


def test_scenarios_equal_separate_solves_in_one_batched_solve(spy):
    m = build()
    scen = scenarios(m)
    before = snapshot(m)
    res = pyo.SolverFactory("caspar").solve_scenarios(m, scen, print_level=0)
    assert spy == [len(scen)]
    assert snapshot(m) == before
    assert len(res) == len(scen) and all(r.success for r in res)
    for b, r in enumerate(res):
        ref = m.clone()
        apply(ref, scen[b])
        out = pyo.SolverFactory("caspar").solve(ref, options=QUIET)
        assert r.termination_condition == out.solver.termination_condition
        assert r.solver_status == out.solver.status
        assert r.iterations == out.solver.statistics.black_box.number_of_iterations
        close(r.objective, pyo.value(ref.obj), rtol=1e-10, atol=1e-10)
        for v in ref.x.values():
            close(r.value(m.find_component(v.name)), v.value, rtol=1e-10, atol=1e-10)
            assert r.value(v.name) == r.values[m.find_component(v.name)]
        for c in (ref.c, ref.d):
            close(r.duals[m.find_component(c.name)], ref.dual[c], rtol=1e-10, atol=1e-10)
    # the scenarios differ, including the one that moves a bound to where it is active
    assert len(set(np.round(res.objectives, 8))) == len(scen)
    assert res[2].value(m.x[1]) == pytest.approx(0.5, abs=1e-7)
    assert res[1].params[m.q[2]] == 0.1 and m.q[2] not in res[0].params
    assert spy == [len(scen)]      # the reference solves are single solves


def test_load_writes_what_a_solve_writes(spy):
    m = build()
    scen = scenarios(m)
    res = pyo.SolverFactory("caspar").solve_scenarios(m, scen, load=1, print_level=0)
    assert m.p.value == 2.0 and m.q[2].value == 0.1 and m.q[1].value == 2.0
    # (stale flags are global: read them before another solve marks everything stale)
    assert [v.stale for v in m.x.values()] == [False, False] and m.z.stale
    ref = build()         # m is now what solving scenario 1 leaves
    apply(ref, scen[1])
    pyo.SolverFactory("caspar").solve(ref, options=QUIET)
    assert [v.stale for v in ref.x.values()] == [False, False] and ref.z.stale
    for v in m.x.values():
        close(v.value, ref.find_component(v.name).value, rtol=1e-10, atol=1e-10)
    close(m.dual[m.c], ref.dual[ref.c], rtol=1e-10, atol=1e-10)
    # later, and without the Params
    res[3].load(params=False)
    assert m.q[1].value == 2.0 and m.x[1].value == res[3].value(m.x[1])
    res.load(0)
    assert m.p.value == 1.0 and m.x[2].value == res[0].value(m.x[2])
    with pytest.raises(ValueError, match="load=7"):
        pyo.SolverFactory("caspar").solve_scenarios(m, scen, load=7)


def test_contrib_interface():
    m = build()
    before = snapshot(m)
    opt = ContribFactory("caspar")
    res = opt.solve_scenarios(m, scenarios(m), solver_options=QUIET)
    assert snapshot(m) == before
    assert [r.termination_condition for r in res] == \
        [ContribTC.convergenceCriteriaSatisfied] * 4
    assert [r.solution_status for r in res] == [SolutionStatus.optimal] * 4
    ref = m.clone()
    apply(ref, scenarios(m)[3])
    out = ContribFactory("caspar").solve(ref, solver_options=QUIET)
    close(res[3].objective, out.incumbent_objective, rtol=1e-10, atol=1e-10)
    res[3].load()
    assert m.q[1].value == 3.0
    close(m.x[2].value, ref.x[2].value, rtol=1e-10, atol=1e-10)
    close(m.dual[m.d], ref.dual[ref.d], rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("scen, err, match", [
    (lambda m: ComponentMap([(m.x[1], 1.0)]), ModelError, r"scenario 1: x\[1\] is a variable"),
    (lambda m: {"k": 1.0}, ModelError, r"scenario 1: parameter k is not mutable"),
    (lambda m: {"unused": 1.0}, ModelError, "unused does not appear"),
    (lambda m: {"nope": 1.0}, ModelError, "no component named 'nope'"),
    (lambda m: {"p": "one"}, ModelError, "parameter p needs a real number"),
    (lambda m: {"p": -1.0}, ModelError, "value -1.0 of parameter p is not in its domain"),
    (lambda m: {"p": float("nan")}, NonFiniteError, "parameter p has the non-finite"),
    (lambda m: {m.q: 1.0}, ModelError, "parameter q is indexed"),
    (lambda m: {m.q: {3: 1.0}}, ModelError, "parameter q has no index 3"),
    (lambda m: build().p, ModelError, "expected a ComponentMap"),
    (lambda m: [(build().p, 1.0)], ModelError, r"parameter p does not appear .* model scen"),
    (lambda m: {"q[1]": -6.0}, ModelError, r"scenario 1: variable x\[1\] has lower bound"),
])
def test_bad_scenarios_name_the_component_and_solve_nothing(spy, scen, err, match):
    m = build()
    before = snapshot(m)
    good = ComponentMap([(m.p, 1.0)])
    with pytest.raises(err, match=match):
        pyo.SolverFactory("caspar").solve_scenarios(m, [good, scen(m)], print_level=0)
    assert spy == []
    assert snapshot(m) == before


def test_constant_row_and_maximize():
    """A row with no free variable, violated in one scenario: that scenario is
    infeasible without solving (as solve), the others are solved; maximization
    signs."""
    m = pyo.ConcreteModel("mx")
    m.p = pyo.Param(mutable=True, initialize=1.0)
    m.x = pyo.Var(initialize=0.0, bounds=(-3, 3))
    m.obj = pyo.Objective(expr=-(m.x - m.p) ** 2 + m.p * m.x, sense=pyo.maximize)
    m.t = pyo.Constraint(expr=m.p <= 2)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    res = pyo.SolverFactory("caspar").solve_scenarios(m, [{"p": 1.0}, {"p": 5.0},
                                                          {"p": -1.5}], print_level=0)
    for b, p in enumerate((1.0, 5.0, -1.5)):
        ref = m.clone()
        ref.p = p
        out = pyo.SolverFactory("caspar").solve(ref, options=QUIET, load_solutions=False)
        assert res[b].termination_condition == out.solver.termination_condition
        if b != 1:
            ref.solutions.load_from(out)
            close(res[b].objective, pyo.value(ref.obj), rtol=1e-10, atol=1e-10)
            close(res[b].value(m.x), ref.x.value, rtol=1e-10, atol=1e-10)
    assert res[1].termination_condition == TerminationCondition.infeasible
    assert res[1].objective is None and "trivially infeasible" in res[1].message
    assert np.isnan(res.objectives[1])
    with pytest.raises(ValueError, match="scenario 1 has no solution"):
        res[1].load()
    assert len(res.batch) == 2


def test_pyomo_kernel_block(spy):
    """pyomo.kernel: parameters as keys (a bound too), names, loading."""
    pmo = pytest.importorskip("pyomo.kernel")

    def kernel(p):
        b = pmo.block()
        b.p = pmo.parameter(p)
        b.x = pmo.variable(value=0.0, lb=-5, ub=b.p)
        b.y = pmo.variable(value=0.0)
        b.o = pmo.objective((b.x - 2 * b.p) ** 2 + (b.y - b.p) ** 2 + b.x * b.y)
        b.c = pmo.constraint(b.x + b.y <= 3)
        b.dual = pmo.suffix(direction=pmo.suffix.IMPORT)
        return b

    b = kernel(1.0)
    res = pyo.SolverFactory("caspar").solve_scenarios(
        b, [ComponentMap([(b.p, 0.5)]), {"p": 2.0}], print_level=0)
    assert spy == [2] and b.p.value == 1.0 and b.x.value == 0.0
    for r, p in zip(res, (0.5, 2.0)):
        ref = kernel(p)
        pyo.SolverFactory("caspar").solve(ref, options=QUIET)
        close(r.objective, pmo.value(ref.o), rtol=1e-10, atol=1e-10)
        close(r.value("x"), ref.x.value, rtol=1e-10, atol=1e-10)
        close(r.duals[b.c], ref.dual[ref.c], rtol=1e-10, atol=1e-10)
    res[1].load()
    assert b.p.value == 2.0 and b.x.value == res[1].value(b.x)
    close(b.dual[b.c], res[1].duals[b.c], rtol=0, atol=0)
