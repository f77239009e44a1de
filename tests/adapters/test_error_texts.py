"""Error texts point at the model (issue "Drop-in fidelity").

Rule: bad input raises a clear error naming the component (variable, constraint,
Param, expression) with the offending value written as a plain number -- never a
numpy repr -- and leaves the user's model as it was.  One table: how the input is
built and solved -> exception type, substrings the message must contain, substrings
it must not contain.  Low-level ``solve_nlp`` keeps IPOPT's status answer
(Invalid_Problem_Definition, as IPOPT's C interface); every model-level entry point
raises, as CasADi's nlpsol does for lbx > ubx.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ")
ca = pytest.importorskip("casadi")

from caspar_backend import Graph, NLPModel, Problem  # noqa: E402
from caspar_backend.casadi import nlpsol  # noqa: E402
from caspar_backend.errors import ModelError, NonFiniteError  # noqa: E402

NAN, INF = math.nan, math.inf
NUMPY_REPR = ("np.float64", "array(")


# ------------------------------------------------------------------ core
def _core():
    g = Graph()
    x, y = g.var(0), g.var(1)
    return Problem(NLPModel(g, (x - 1) ** 2 + y * y, [x + y], lbx=[-5, -5], ubx=[5, 5],
                            lbg=[-1], ubg=[1], x0=[0.5, 0.5],
                            var_names=["x[0]", "x[3]"], con_names=["balance"]))


def _core_solve(**kw):
    pr = _core()
    before = (pr.lbx.copy(), pr.ubx.copy(), pr.x0.copy())
    try:
        pr.solve(print_level=0, **kw)
    finally:  # the model keeps its own bounds and start
        for a, b in zip(before, (pr.lbx, pr.ubx, pr.x0)):
            assert np.array_equal(a, b)


CORE = [
    (dict(lbx=[0, 2], ubx=[1, 1]), ModelError,
     ["variable x[3]", "lower bound above upper bound", "lbx[1]=2.0", "ubx[1]=1.0"], []),
    (dict(lbx=[3, 2], ubx=[1, 1]), ModelError, ["variable x[0]", "variable x[3]"], []),
    (dict(lbx=np.array([NAN, 0.0])), NonFiniteError, ["variable x[0]", "NaN bound",
                                                      "lbx[0]=nan"], []),
    (dict(lbg=[2.0], ubg=[np.float64(0.6)]), ModelError, ["constraint balance", "ubg[0]=0.6"],
     []),
    (dict(x0=[0.0, INF]), NonFiniteError, ["variable x[3]", "initial value inf", "x0[1]"], []),
    (dict(x0=np.array([NAN, 0.0])), NonFiniteError, ["variable x[0]", "initial value nan"],
     []),
    (dict(ubx=[INF, -INF]), NonFiniteError, ["variable x[3]", "infinite bound on the wrong"],
     []),
]


@pytest.mark.parametrize("kw,err,has,hasnt", CORE)
def test_core_solve_inputs(kw, err, has, hasnt):
    with pytest.raises(err) as info:
        _core_solve(**kw)
    _check(info.value, has, hasnt)


def test_core_solve_still_solves():
    assert _core().solve(print_level=0).status == "Solve_Succeeded"


# ------------------------------------------------------------------ Pyomo
def _pyomo(kind):
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], initialize=0.6, bounds=(0, 2))
    m.o = pyo.Objective(expr=(m.x[1] - 1) ** 2 + m.x[2] ** 2)
    if kind == "nan_in_constraint":
        m.c = pyo.Constraint(expr=m.x[1] * NAN + m.x[2] <= 3)
    elif kind == "inf_in_objective":
        m.o.deactivate()
        m.o2 = pyo.Objective(expr=m.x[1] ** 2 + INF * m.x[2])
    elif kind == "nan_in_expression":
        m.e = pyo.Expression(expr=m.x[1] * NAN + 1)
        m.c = pyo.Constraint(expr=m.e + m.x[2] <= 3)
    elif kind == "nan_mutable_param":
        m.q = pyo.Param(initialize=np.float64(NAN), mutable=True, within=pyo.Any)
        m.c = pyo.Constraint(expr=m.x[1] * m.q <= 3)
    elif kind == "lb_above_ub":
        m.x[2].setlb(np.float64(1.5))
        m.x[2].setub(np.float64(0.6))
    elif kind == "nan_start":
        m.x[1].set_value(np.float64(NAN), skip_validation=True)
    elif kind == "nan_con_bound":
        m.p = pyo.Param(initialize=NAN, mutable=True, within=pyo.Any)
        m.c = pyo.Constraint(expr=m.x[1] >= m.p)
    elif kind == "all_fixed":
        m.x.fix(0.5)
        m.c = pyo.Constraint(expr=m.x[1] + m.x[2] <= 3)
    return m


def _state(m):
    return [(v.name, v.value, v.fixed, v.lb, v.ub)
            for v in m.component_data_objects(pyo.Var)]


PYOMO = [
    ("nan_in_constraint", NonFiniteError, ["non-finite constant nan", "constraint c"],
     ["in an expression"]),
    ("inf_in_objective", NonFiniteError, ["non-finite constant inf", "objective o2"], []),
    ("nan_in_expression", NonFiniteError, ["expression e", "used in constraint c"], []),
    ("nan_mutable_param", NonFiniteError, ["q", "non-finite value nan"], []),
    ("lb_above_ub", ModelError, ["variable x[2]", "1.5", "0.6"], []),
    ("nan_start", NonFiniteError, ["variable x[1]", "nan"], []),
    ("nan_con_bound", NonFiniteError, ["constraint c", "nan"], []),
    ("all_fixed", ModelError, ["No variables appear", "every variable is fixed", "x[1]",
                               "x[2]"], []),
]


@pytest.mark.parametrize("kind,err,has,hasnt", PYOMO)
def test_pyomo_errors(kind, err, has, hasnt):
    m = _pyomo(kind)
    before = _state(m)
    with pytest.raises(err) as info:
        pyo.SolverFactory("caspar").solve(m)
    _check(info.value, has, hasnt)
    after = _state(m)
    assert len(before) == len(after)
    for b, a in zip(before, after):  # values (NaN compared as NaN), fixed flags, bounds
        assert b[0] == a[0] and b[2:] == a[2:]
        assert b[1] == a[1] or (b[1] != b[1] and a[1] != a[1])


def test_all_fixed_is_still_a_value_error():
    """SolverFactory('ipopt') raises ValueError from Pyomo's NL writer for this model;
    ModelError is one, so code written for ipopt keeps working."""
    with pytest.raises(ValueError):
        pyo.SolverFactory("caspar").solve(_pyomo("all_fixed"))


# ------------------------------------------------------------------ CasADi
def _casadi_solve(call):
    x = ca.SX.sym("x", 2)
    S = nlpsol("S", "caspar", {"x": x, "f": ca.sumsqr(x), "g": x[0] + x[1]},
               {"print_time": False, "caspar": {"print_level": 0}})
    S(**call)


CASADI = [
    (dict(lbx=[0, 2], ubx=[1, 1]), ModelError, ["variable x_1", "2.0", "1.0"], []),
    (dict(lbx=[0, np.float64(2)], ubx=np.array([1, 1.0])), ModelError, ["x_1"], []),
    (dict(x0=[0, NAN]), NonFiniteError, ["variable x_1", "nan"], []),
    (dict(lbg=np.float64(NAN)), NonFiniteError, ["constraint", "NaN"], []),
]


@pytest.mark.parametrize("call,err,has,hasnt", CASADI)
def test_casadi_errors(call, err, has, hasnt):
    with pytest.raises(err) as info:
        _casadi_solve(call)
    _check(info.value, has, hasnt)


@pytest.mark.parametrize("sym", [ca.SX, ca.MX])
@pytest.mark.parametrize("build,has", [
    (lambda x: {"f": ca.sumsqr(x), "g": ca.vertcat(x[0], x[1] * NAN)},
     ["non-finite constant nan", "constraint g[1]"]),
    (lambda x: {"f": ca.sumsqr(x) * INF, "g": x[0]}, ["inf", "the objective"]),
])
def test_casadi_non_finite_constant_names_the_output(sym, build, has):
    x = sym.sym("x", 2)
    with pytest.raises(NonFiniteError) as info:
        nlpsol("S", "caspar", {"x": x, **build(x)}, {"print_time": False})
    _check(info.value, has, ["in an expression"])


# ------------------------------------------------------------------ helper
def _check(exc, has, hasnt):
    text = str(exc)
    for s in has:
        assert s in text, f"{s!r} missing from: {text}"
    for s in list(hasnt) + list(NUMPY_REPR):
        assert s not in text, f"{s!r} must not be in: {text}"
