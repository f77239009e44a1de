"""Error texts point at the model (issue "Drop-in fidelity"): the table of bad inputs.

Rule: bad input raises a clear error naming the component (variable, constraint,
Param, expression) with the offending value written as a plain number -- never a
numpy repr -- and leaves the user's model as it was; an evaluation error during a solve
is logged as IPOPT logs it ("Warning: Cutting back alpha due to evaluation error") with
the component and the expression that failed, and a solve ending on one
(``Invalid_Number_Detected``) says which, and at which iteration.

One table per API (core ``Problem``, Pyomo, CasADi ``nlpsol``): how the input is built
and solved -> exception type (or the log / status text), substrings the message must
contain, substrings it must not contain.  :data:`COMPLETENESS` lists each bad input of
the issue against the three APIs: the table row that covers it, or why it does not
apply; ``test_every_bad_input_has_a_row_in_every_api`` checks every entry.  Low-level
``solve_nlp`` keeps IPOPT's status answer (Invalid_Problem_Definition, as IPOPT's C
interface); every model-level entry point raises, as CasADi's nlpsol does for lbx > ubx.
"""

from __future__ import annotations

import contextlib
import io
import math
import re

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ")
ca = pytest.importorskip("casadi")

from caspar_backend import Graph, NLPModel, Problem, from_casadi  # noqa: E402
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
    pytest.param(dict(lbx=[0, 2], ubx=[1, 1]), ModelError,
                 ["variable x[3]", "lower bound above upper bound", "lbx[1]=2.0",
                  "ubx[1]=1.0"], [], id="lb_above_ub"),
    pytest.param(dict(lbx=[3, 2], ubx=[1, 1]), ModelError, ["variable x[0]", "variable x[3]"],
                 [], id="lb_above_ub_twice"),
    pytest.param(dict(lbx=np.array([NAN, 0.0])), NonFiniteError,
                 ["variable x[0]", "NaN bound", "lbx[0]=nan"], [], id="nan_bound"),
    pytest.param(dict(lbg=[2.0], ubg=[np.float64(0.6)]), ModelError,
                 ["constraint balance", "ubg[0]=0.6"], [], id="lbg_above_ubg"),
    pytest.param(dict(x0=[0.0, INF]), NonFiniteError,
                 ["variable x[3]", "initial value inf", "x0[1]"], [], id="inf_start"),
    pytest.param(dict(x0=np.array([NAN, 0.0])), NonFiniteError,
                 ["variable x[0]", "initial value nan"], [], id="nan_start"),
    pytest.param(dict(ubx=[INF, -INF]), NonFiniteError,
                 ["variable x[3]", "infinite bound on the wrong"], [], id="wrong_side_inf"),
]


@pytest.mark.parametrize("kw,err,has,hasnt", CORE)
def test_core_solve_inputs(kw, err, has, hasnt):
    with pytest.raises(err) as info:
        _core_solve(**kw)
    _check(info.value, has, hasnt)


def test_core_solve_still_solves():
    assert _core().solve(print_level=0).status == "Solve_Succeeded"


def test_core_non_finite_constant_raises_where_it_is_built():
    """The core's expressions are the user's own Python: a NaN constant raises at the
    operation that brings it into the graph (the traceback's line is the user's), before
    any constraint exists to be named."""
    g = Graph()
    x = g.var(0)
    with pytest.raises(NonFiniteError, match="non-finite constant nan") as info:
        x * np.float64(NAN)
    _check(info.value, [], [])


def test_core_all_fixed_solves_as_ipopt():
    """Every variable fixed by its bounds is not an error for IPOPT's C interface (nor
    CasADi's): the constraint is evaluated and the solve succeeds."""
    r = _core().solve(lbx=[0.2, 0.3], ubx=[0.2, 0.3], print_level=0)
    assert r.status == "Solve_Succeeded" and list(r.x) == [0.2, 0.3]


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
    elif kind == "fixed_outside_bounds":
        m.b = pyo.Var(bounds=(0, 0))
        m.b.set_value(0.12, skip_validation=True)
        m.b.fix()
        m.c = pyo.Constraint(expr=m.x[1] + m.b <= 3)
    return m


def _state(m):
    return [(v.name, v.value, v.fixed, v.lb, v.ub)
            for v in m.component_data_objects(pyo.Var)]


PYOMO = [pytest.param(*row, id=row[0]) for row in [
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
    ("fixed_outside_bounds", ModelError, ["trivially infeasible variable 'b'", "0.12",
                                          "[0, 0]"], []),
]]


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


def test_fixed_outside_bounds_as_pyomos_nl_writer():
    """SolverFactory('ipopt') never runs on a model with a fixed Var outside its bounds:
    Pyomo's NL writer raises InfeasibleConstraintException.  caspar raises the same type
    (also a ModelError) with the writer's words; within the writer's tolerance, and once
    the value is inside, it solves."""
    from pyomo.common.errors import InfeasibleConstraintException
    from pyomo.repn.plugins.nl_writer import NLWriter

    m = _pyomo("fixed_outside_bounds")
    with pytest.raises(InfeasibleConstraintException) as ref:
        NLWriter().write(m, io.StringIO(), io.StringIO())
    with pytest.raises(InfeasibleConstraintException) as ours:
        pyo.SolverFactory("caspar").solve(m)
    assert str(ours.value) == str(ref.value)
    m.b.set_value(5e-9, skip_validation=True)           # within the writer's 1e-8
    NLWriter().write(m, io.StringIO(), io.StringIO())
    assert pyo.SolverFactory("caspar").solve(m).solver.termination_condition == "optimal"
    m.b.set_value(0.12, skip_validation=True)           # a re-solve reads it again
    with pytest.raises(InfeasibleConstraintException):
        pyo.SolverFactory("caspar").solve(m)


# ------------------------------------------------------------------ CasADi
def _casadi_solve(call):
    x = ca.SX.sym("x", 2)
    S = nlpsol("S", "caspar", {"x": x, "f": ca.sumsqr(x), "g": x[0] + x[1]},
               {"print_time": False, "caspar": {"print_level": 0}})
    S(**call)


CASADI = [
    pytest.param(dict(lbx=[0, 2], ubx=[1, 1]), ModelError, ["variable x_1", "2.0", "1.0"], [],
                 id="lb_above_ub"),
    pytest.param(dict(lbx=[0, np.float64(2)], ubx=np.array([1, 1.0])), ModelError, ["x_1"],
                 [], id="lb_above_ub_numpy"),
    pytest.param(dict(x0=[0, NAN]), NonFiniteError, ["variable x_1", "nan"], [],
                 id="nan_start"),
    pytest.param(dict(lbg=np.float64(NAN)), NonFiniteError, ["constraint", "NaN"], [],
                 id="nan_con_bound"),
]


@pytest.mark.parametrize("call,err,has,hasnt", CASADI)
def test_casadi_errors(call, err, has, hasnt):
    with pytest.raises(err) as info:
        _casadi_solve(call)
    _check(info.value, has, hasnt)


@pytest.mark.parametrize("sym", [ca.SX, ca.MX])
@pytest.mark.parametrize("build,has", [
    pytest.param(lambda x: {"f": ca.sumsqr(x), "g": ca.vertcat(x[0], x[1] * NAN)},
                 ["non-finite constant nan", "constraint g[1]"], id="nan_in_constraint"),
    pytest.param(lambda x: {"f": ca.sumsqr(x) * INF, "g": x[0]}, ["inf", "the objective"],
                 id="inf_in_objective"),
])
def test_casadi_non_finite_constant_names_the_output(sym, build, has):
    x = sym.sym("x", 2)
    with pytest.raises(NonFiniteError) as info:
        nlpsol("S", "caspar", {"x": x, **build(x)}, {"print_time": False})
    _check(info.value, has, ["in an expression"])


def test_casadi_all_fixed_solves_as_ipopt():
    """As IPOPT's nlpsol: every variable fixed by lbx == ubx solves (Solve_Succeeded)."""
    x = ca.SX.sym("x", 2)
    S = nlpsol("S", "caspar", {"x": x, "f": ca.sumsqr(x - 1), "g": x[0] + x[1]},
               {"print_time": False, "caspar": {"print_level": 0}})
    r = S(x0=[0, 0], lbx=[0.2, 0.3], ubx=[0.2, 0.3], lbg=-1, ubg=1)
    assert S.stats()["return_status"] == "Solve_Succeeded"
    assert list(np.array(r["x"]).ravel()) == [0.2, 0.3]


@pytest.mark.parametrize("lbg, ubg", [([0, -10], [0, 10]),     # equality violated
                                      ([0, -10], [5, 10]),     # inequality violated
                                      ([-10, 1], [10, 1])])    # equality holds
def test_all_fixed_decided_by_the_constraints_as_ipopt(lbg, ubg):
    """IPOPT with every variable fixed: no iteration; Solve_Succeeded when the fixed
    point satisfies the constraints to tol, else Infeasible_Problem_Detected (its
    TNLPAdapter); x, f and g at the fixed point, multipliers 0 -- in the core, through
    nlpsol and in a batch."""
    x = ca.SX.sym("x", 2)
    nlp = {"x": x, "f": (x[0] - 1) ** 2 + x[1] ** 2, "g": ca.vertcat(x[0] + x[1] - 3,
                                                                     x[0] * x[1])}
    fixed = dict(lbx=[1, 1], ubx=[1, 1], lbg=lbg, ubg=ubg)
    ref = ca.nlpsol("R", "ipopt", nlp, {"ipopt.print_level": 0, "ipopt.sb": "yes",
                                        "print_time": False})
    r_ref = ref(x0=[0, 0], **fixed)
    want = ref.stats()["return_status"]
    r = from_casadi(nlp).solve(x0=[0, 0], print_level=0, **fixed)
    assert (r.status, r.iterations) == (want, 0)
    assert r.f == float(r_ref["f"]) and list(r.x) == [1.0, 1.0]
    np.testing.assert_array_equal(r.g, np.array(r_ref["g"]).ravel())
    assert not r.lam_g.any() and not r.lam_x.any()
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {"print_level": 0}})
    S(x0=[0, 0], **fixed)
    assert S.stats()["return_status"] == want
    batch = from_casadi(nlp).solve_batch(x0=[[0, 0], [0.5, 0.5]], print_level=0,
                                         device="cpu", **fixed)
    assert list(batch.status) == [want, want]


# ------------------------------------------------------------------ evaluation errors
# At a trial point outside a function's domain IPOPT cuts the step back and logs it; at
# the start point (no step to cut) the solve ends Invalid_Number_Detected.  caspar names
# the row and the expression in both, in every API.
CUT_BACK = "Warning: Cutting back alpha due to evaluation error: NaN or Inf in constraint "
INVALID = re.compile(r"NaN or Inf in a function evaluation at iteration 0: "
                     r"constraint (\S+): log\((\S+)\)")


def _run_eval_error(api: str, kind: str) -> str:
    """The text an ``api`` user sees for an evaluation error: the log of a solve with
    cut-backs (``kind='cut_back'``: min (x+1)^2 s.t. 0 <= sqrt(x) <= 10 from x = 4), or
    the final message of one ending on a NaN at the start (``'invalid'``: log(x) at
    x = -1)."""
    cut = kind == "cut_back"
    x0 = 4.0 if cut else -1.0
    if api == "core":
        g = Graph()
        x = g.var(0)
        con = g.sqrt(x) if cut else g.log(x)
        pr = Problem(NLPModel(g, (x + 1) ** 2 if cut else (x - 2) ** 2, [con], lbx=[-INF],
                              ubx=[INF], lbg=[0.0 if cut else -10.0], ubg=[10.0], x0=[x0],
                              var_names=["x"], con_names=["c"]))
        log = io.StringIO()
        r = pr.solve(stream=log) if cut else pr.solve(print_level=0)
        return log.getvalue() if cut else r.message
    if api == "pyomo":
        m = pyo.ConcreteModel()
        m.x = pyo.Var(initialize=x0)
        m.o = pyo.Objective(expr=(m.x + 1) ** 2 if cut else (m.x - 2) ** 2)
        m.c = pyo.Constraint(expr=pyo.inequality(0 if cut else -10,
                                                 pyo.sqrt(m.x) if cut else pyo.log(m.x), 10))
        opt = pyo.SolverFactory("caspar")
        res = opt.solve(m, load_solutions=False)
        return opt._log if cut else str(res.solver.message).replace("\\x3a", ":")
    x = ca.SX.sym("x")
    S = nlpsol("S", "caspar", {"x": x, "f": (x + 1) ** 2 if cut else (x - 2) ** 2,
                               "g": ca.sqrt(x) if cut else ca.log(x)},
               {"print_time": False, "caspar": {"print_level": 5 if cut else 0}})
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        S(x0=x0, lbg=0 if cut else -10, ubg=10)
    return out.getvalue() if cut else S.stats()["caspar"]["message"]


EVAL_ERRORS = [
    pytest.param("core", "cut_back", "c: sqrt(x)", id="core-cut_back"),
    pytest.param("pyomo", "cut_back", "c: sqrt(x)", id="pyomo-cut_back"),
    pytest.param("casadi", "cut_back", "g[0]: sqrt(x)", id="casadi-cut_back"),
    pytest.param("core", "invalid", ("c", "x"), id="core-invalid"),
    pytest.param("pyomo", "invalid", ("c", "x"), id="pyomo-invalid"),
    pytest.param("casadi", "invalid", ("g[0]", "x"), id="casadi-invalid"),
]


@pytest.mark.parametrize("api,kind,names", EVAL_ERRORS)
def test_evaluation_errors_name_the_expression(api, kind, names, capfd):
    text = _run_eval_error(api, kind)
    text += capfd.readouterr().out
    if kind == "cut_back":
        lines = [ln for ln in text.splitlines() if ln.startswith(CUT_BACK[:40])]
        assert lines and all(ln == CUT_BACK + names for ln in lines), text
    else:
        found = INVALID.search(text)
        assert found and found.groups() == names, text
    for bad in NUMPY_REPR:
        assert bad not in text


# ------------------------------------------------------------------ completeness
#: the bad inputs of the issue ("Errors and logs that do not point at the model") x API:
#: "<test>[<row id>]" of this module, or "n/a: <why>"
COMPLETENESS = {
    ("nan_constant", "core"): "test_core_non_finite_constant_raises_where_it_is_built",
    ("nan_constant", "pyomo"): "test_pyomo_errors[nan_in_constraint]",
    ("nan_constant", "casadi"): "test_casadi_non_finite_constant_names_the_output"
                                "[nan_in_constraint-SX]",
    ("nan_param", "core"): "n/a: the core has no named Params (p values are checked: "
                           "test_core_solve_inputs)",
    ("nan_param", "pyomo"): "test_pyomo_errors[nan_mutable_param]",
    ("nan_param", "casadi"): "test_casadi_errors[nan_con_bound]",
    ("numpy_repr", "core"): "test_core_solve_inputs[lbg_above_ubg]",
    ("numpy_repr", "pyomo"): "test_pyomo_errors[lb_above_ub]",
    ("numpy_repr", "casadi"): "test_casadi_errors[lb_above_ub_numpy]",
    ("all_fixed", "core"): "test_core_all_fixed_solves_as_ipopt",
    ("all_fixed", "pyomo"): "test_pyomo_errors[all_fixed]",
    ("all_fixed", "casadi"): "test_casadi_all_fixed_solves_as_ipopt",
    ("lb_above_ub", "core"): "test_core_solve_inputs[lb_above_ub]",
    ("lb_above_ub", "pyomo"): "test_pyomo_errors[lb_above_ub]",
    ("lb_above_ub", "casadi"): "test_casadi_errors[lb_above_ub]",
    ("nan_x0", "core"): "test_core_solve_inputs[nan_start]",
    ("nan_x0", "pyomo"): "test_pyomo_errors[nan_start]",
    ("nan_x0", "casadi"): "test_casadi_errors[nan_start]",
    ("cut_back_logged", "core"): "test_evaluation_errors_name_the_expression[core-cut_back]",
    ("cut_back_logged", "pyomo"): "test_evaluation_errors_name_the_expression"
                                  "[pyomo-cut_back]",
    ("cut_back_logged", "casadi"): "test_evaluation_errors_name_the_expression"
                                   "[casadi-cut_back]",
    ("invalid_number_named", "core"): "test_evaluation_errors_name_the_expression"
                                      "[core-invalid]",
    ("invalid_number_named", "pyomo"): "test_evaluation_errors_name_the_expression"
                                       "[pyomo-invalid]",
    ("invalid_number_named", "casadi"): "test_evaluation_errors_name_the_expression"
                                        "[casadi-invalid]",
}
BAD_INPUTS = ("nan_constant", "nan_param", "numpy_repr", "all_fixed", "lb_above_ub",
              "nan_x0", "cut_back_logged", "invalid_number_named")
APIS = ("core", "pyomo", "casadi")


def test_every_bad_input_has_a_row_in_every_api():
    """Each (bad input, API) names an existing test of this module (and its row id), or
    says why it does not apply."""
    own = {name for name, obj in globals().items() if name.startswith("test_")}
    ids = {"test_core_solve_inputs": _ids(CORE), "test_pyomo_errors": _ids(PYOMO),
           "test_casadi_errors": _ids(CASADI),
           "test_evaluation_errors_name_the_expression": _ids(EVAL_ERRORS),
           "test_casadi_non_finite_constant_names_the_output":
               {f"{b}-{s}" for b in ("nan_in_constraint", "inf_in_objective")
                for s in ("SX", "MX")}}
    assert set(COMPLETENESS) == {(b, a) for b in BAD_INPUTS for a in APIS}
    for key, ref in COMPLETENESS.items():
        if ref.startswith("n/a: "):
            assert len(ref) > 20, key
            continue
        name, _, row = ref.partition("[")
        assert name in own, (key, ref)
        if row:
            assert row[:-1] in ids[name], (key, ref)


def _ids(table) -> set:
    return {p.id for p in table}


# ------------------------------------------------------------------ helper
def _check(exc, has, hasnt):
    text = str(exc)
    for s in has:
        assert s in text, f"{s!r} missing from: {text}"
    for s in list(hasnt) + list(NUMPY_REPR):
        assert s not in text, f"{s!r} must not be in: {text}"
