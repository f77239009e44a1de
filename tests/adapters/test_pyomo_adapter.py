"""Pyomo adapter: differential tests against Pyomo's own evaluation and derivatives,
structure (names, References, groups, bounds), bad input and re-solve data.

Reference values come from ``pyo.value``; reference first and second derivatives
from ``pyomo.core.expr.calculus.derivatives.differentiate`` (reverse_symbolic for
the gradient expressions, reverse_numeric on those for the Hessian).  For the
ops Pyomo's differentiator lacks (hyperbolic functions, floor/ceil, Expr_if,
max/min) the reference expression is rewritten at the sample point into an
equivalent one it can differentiate (``_differentiable``).
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ")

from pyomo.core.expr import numeric_expr as ne  # noqa: E402
from pyomo.core.expr.calculus.derivatives import Modes, differentiate  # noqa: E402

from caspar_backend.adapters.pyomo import (  # noqa: E402
    PyomoMapping, from_pyomo, pyomo_to_model)
from caspar_backend.adapters.pyomo.functions import UNARY, UNSUPPORTED_UNARY  # noqa: E402
from caspar_backend.errors import ModelError, NonFiniteError, UnsupportedOpError  # noqa: E402
from caspar_backend.expr import evaluate, to_str  # noqa: E402

from tests.support.assertions import close  # noqa: E402
from tests.support.pyomo_corpus import CORPUS, SAMPLE_BOX  # noqa: E402

VAL_TOL, DER_TOL = 1e-10, 1e-8


# ----------------------------------------------------------------- references
def _differentiable(e):
    """``e`` rewritten, at the current point, with only ops Pyomo differentiates."""
    if e.__class__ in ne.native_types or not e.is_expression_type():
        return e
    if e.is_named_expression_type():
        return _differentiable(e.expr)
    if isinstance(e, ne.Expr_ifExpression):  # the taken branch (conditions are not walked)
        return _differentiable(e.args[1] if pyo.value(e.args[0]) else e.args[2])
    a = [_differentiable(c) for c in e.args]
    if isinstance(e, ne.SumExpression):
        return sum(a[1:], a[0]) if a else 0
    if isinstance(e, ne.ProductExpression):
        return a[0] * a[1]
    if isinstance(e, ne.DivisionExpression):
        return a[0] / a[1]
    if isinstance(e, ne.PowExpression):
        return a[0] ** a[1]
    if isinstance(e, ne.NegationExpression):
        return -a[0]
    if isinstance(e, (ne.MaxExpression, ne.MinExpression)):
        vals = [pyo.value(c) for c in e.args]
        pick = max if isinstance(e, ne.MaxExpression) else min
        return a[vals.index(pick(vals))]
    if isinstance(e, ne.UnaryFunctionExpression):
        x, name = a[0], e.getname()
        rewrites = {
            "sinh": lambda: (pyo.exp(x) - pyo.exp(-x)) / 2,
            "cosh": lambda: (pyo.exp(x) + pyo.exp(-x)) / 2,
            "tanh": lambda: (pyo.exp(2 * x) - 1) / (pyo.exp(2 * x) + 1),
            "asinh": lambda: pyo.log(x + pyo.sqrt(x ** 2 + 1)),
            "acosh": lambda: pyo.log(x + pyo.sqrt(x ** 2 - 1)),
            "atanh": lambda: 0.5 * pyo.log((1 + x) / (1 - x)),
            "floor": lambda: math.floor(pyo.value(x)),
            "ceil": lambda: math.ceil(pyo.value(x)),
            "abs": lambda: abs(x),
        }
        if name in rewrites:
            return rewrites[name]()
        return getattr(pyo, name)(x)
    raise AssertionError(f"no reference rewrite for {type(e).__name__}")


def _grad_hess(expr, xvars):
    """Pyomo's gradient and Hessian of ``expr`` with respect to ``xvars``."""
    n = len(xvars)
    if expr.__class__ in ne.native_types or not expr.is_potentially_variable():
        return np.zeros(n), np.zeros((n, n))
    try:
        d = differentiate(expr, wrt_list=xvars, mode=Modes.reverse_symbolic)
    except Exception:  # an op Pyomo's differentiator does not know
        d = differentiate(_differentiable(expr), wrt_list=xvars, mode=Modes.reverse_symbolic)
    grad = np.array([pyo.value(di) for di in d], dtype=float)
    hess = np.zeros((n, n))
    for i, di in enumerate(d):
        if di.__class__ in ne.native_types or not di.is_potentially_variable():
            continue
        hess[i] = differentiate(di, wrt_list=xvars, mode=Modes.reverse_numeric)
    return grad, hess


def _sample(m, mapping: PyomoMapping, rng):
    box = getattr(m, "_sample_box", SAMPLE_BOX)
    lbx, ubx = mapping.var_bounds()
    lo, hi = np.maximum(lbx, box[0]), np.minimum(ubx, box[1])
    return lo + (hi - lo) * rng.uniform(0.05, 0.95, size=lo.size)


def _check_at(m, nlp, ev, x, rng):
    mp: PyomoMapping = nlp.meta["pyomo"]
    mp.load_x(x)
    xvars, sense = mp.x_vars, mp.sense
    # values
    f_ref = pyo.value(mp.objective.expr) if mp.objective is not None else 0.0
    close(sense * ev.obj(x), f_ref, VAL_TOL)
    bodies = [pyo.value(c.body) for c in mp.constraints]
    close(mp.body_values(ev.cons(x)), bodies, VAL_TOL)
    # derivatives
    lam = rng.normal(size=nlp.m)
    sigma = float(rng.uniform(0.5, 2.0))
    if mp.objective is not None:
        gf, hf = _grad_hess(mp.objective.expr, xvars)
    else:
        gf, hf = np.zeros(nlp.n), np.zeros((nlp.n, nlp.n))
    close(sense * ev.grad(x), gf, DER_TOL)
    jac = np.zeros((nlp.m, nlp.n))
    h = sigma * sense * hf
    for j, c in enumerate(mp.constraints):
        jac[j], hj = _grad_hess(c.body, xvars)
        h += lam[j] * hj
    close(ev.jac(x).toarray(), jac, DER_TOL)
    close(ev.hess(x, lam, obj_factor=sigma).toarray(), h, DER_TOL)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_agrees_with_pyomo(name):
    m = CORPUS[name]()
    nlp = pyomo_to_model(m)
    ev = from_pyomo_model(nlp).evaluator()
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(3):
        _check_at(m, nlp, ev, _sample(m, nlp.meta["pyomo"], rng), rng)


def from_pyomo_model(nlp):
    from caspar_backend.problem import Problem

    return Problem(nlp)


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_iterative_engine_builds_the_same_graph(name):
    """depth_limit=0 sends every expression through the explicit-stack engine."""
    m = CORPUS[name]()
    a, b = pyomo_to_model(m), pyomo_to_model(m, depth_limit=0)
    assert to_str(a.objective) == to_str(b.objective)
    assert [to_str(r) for r in a.constraints] == [to_str(r) for r in b.constraints]
    assert len(a.graph) == len(b.graph)


def test_public_entry_point():
    import caspar_backend

    assert caspar_backend.from_pyomo is from_pyomo
    prob = caspar_backend.from_pyomo(CORPUS["hs071"]())
    assert (prob.n, prob.m) == (4, 2)


# ------------------------------------------------------------------ tables
def _pyomo_intrinsics():
    """Names of every intrinsic function Pyomo's expression system offers."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    names = set()
    for attr in dir(ne):
        fn = getattr(ne, attr)
        if not callable(fn) or isinstance(fn, type) or attr.startswith("_"):
            continue
        try:
            e = fn(m.x)
        except Exception:
            continue
        if isinstance(e, ne.UnaryFunctionExpression):
            names.add(e.getname())
    names.add(abs(m.x).getname())
    return names


def test_every_pyomo_intrinsic_is_in_the_table():
    names = _pyomo_intrinsics()
    assert {"exp", "log", "sin", "acosh", "floor", "abs"} <= names
    missing = names - set(UNARY) - set(UNSUPPORTED_UNARY)
    assert not missing, f"Pyomo intrinsics without a mapping: {sorted(missing)}"
    from caspar_backend.ops import OPS

    assert set(UNARY.values()) <= set(OPS)


def test_every_intrinsic_translates():
    """Each table entry, walked from a real Pyomo expression, evaluates like Pyomo."""
    for name in sorted(UNARY):
        m = pyo.ConcreteModel()
        m.x = pyo.Var(bounds=(1.1, 1.9), initialize=1.37)
        fn = abs if name == "abs" else getattr(pyo, name)
        arg = m.x - 1.0 if name in ("atanh", "asin", "acos") else m.x
        m.c = pyo.Constraint(expr=fn(arg) <= 100)
        nlp = pyomo_to_model(m)
        got = evaluate(nlp.constraints, nlp.x0)[0] + nlp.meta["pyomo"].shift[0]
        assert abs(got - pyo.value(m.c.body)) <= VAL_TOL * max(1, abs(got)), name


# --------------------------------------------------------------- structure
def test_names_references_and_used_vars_only():
    m = CORPUS["blocks_and_references"]()
    nlp = pyomo_to_model(m)
    assert nlp.m == 5  # b.c, b.inner.c, blk[1..3].c; the Reference adds nothing
    assert list(nlp.con_names) == ["b.c", "b.inner.c", "blk[1].c", "blk[2].c", "blk[3].c"]
    assert "unused" not in nlp.var_names and nlp.n == 6
    mm = CORPUS["multi_index"]()
    names = list(pyomo_to_model(mm).var_names)
    assert "flow[3,a]" in names and "flow[1,b]" in names
    assert str(mm.flow[3, "a"].name) == "flow[3,a]"


def test_bounds_domains_and_initial_point():
    m = CORPUS["domains"]()
    nlp = pyomo_to_model(m)
    mp = nlp.meta["pyomo"]
    got = {v.name: (nlp.lbx[i], nlp.ubx[i], nlp.x0[i]) for i, v in enumerate(mp.x_vars)}
    inf = math.inf
    assert got["a"] == (0, inf, 0)
    assert got["b"] == (-inf, 0, 0)
    assert got["c"][1] == 3 and got["d"][0] == -3
    assert got["e"] == (0, 1, 0) and got["f"] == (0, 1, 0)
    assert got["g"] == (0.25, 2, 0.25)  # None -> 0 projected into [0.25, 2]
    assert got["h"] == (0, 1, 0)        # domain and bounds intersected
    assert m.g.value is None            # the model itself is untouched


def test_constant_moved_into_bounds_and_sides():
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2])
    m.eq = pyo.Constraint(expr=m.x[1] + 3 == m.x[2] - 2)
    m.le = pyo.Constraint(expr=m.x[1] ** 2 + 4 <= 10)
    m.ge = pyo.Constraint(expr=2 <= m.x[1] * m.x[2] - 1)
    m.rng = pyo.Constraint(expr=pyo.inequality(1, pyo.exp(m.x[1]) + 1, 5))
    m.none = pyo.Constraint(expr=m.x[1] <= math.inf)
    nlp = pyomo_to_model(m)
    mp = nlp.meta["pyomo"]
    assert [c.name for c in mp.skipped] == ["none"]
    np.testing.assert_allclose(nlp.lbg, [-5, -np.inf, 3, 0])
    np.testing.assert_allclose(nlp.ubg, [-5, 6, np.inf, 4])
    np.testing.assert_allclose(mp.shift, [5, 4, -1, 1])
    assert all(r.op != "sum" or r.args[-1].op != "const" for r in nlp.constraints)


def test_maximize_and_feasibility_and_objective_count():
    nlp = pyomo_to_model(CORPUS["maximize"]())
    assert nlp.sense == -1 and nlp.meta["pyomo"].sense == -1
    m = pyo.ConcreteModel()  # a maximized sum still splits into per-term groups
    m.I = pyo.RangeSet(200)
    m.x = pyo.Var(m.I, bounds=(0.5, 2))
    m.o = pyo.Objective(expr=sum(pyo.log(m.x[i]) + 0.5 * i * m.x[i] for i in m.I) + 3,
                        sense=pyo.maximize)
    prob = from_pyomo(m)
    assert max(grp.size for grp in prob.objective_groups) >= 200
    x = np.linspace(0.6, 1.9, 200)
    m_val = sum(math.log(x[i - 1]) + 0.5 * i * x[i - 1] for i in range(1, 201)) + 3
    assert abs(-prob.evaluator().obj(x) - m_val) <= 1e-10 * abs(m_val)
    nlp = pyomo_to_model(CORPUS["feasibility"]())
    assert nlp.objective.op == "const" and nlp.objective.attr == 0.0
    m = CORPUS["hs071"]()
    m.o2 = pyo.Objective(expr=m.x[1])
    with pytest.raises(ModelError, match="2 active objectives.*obj.*o2"):
        pyomo_to_model(m)
    m.o2.deactivate()
    assert pyomo_to_model(m).meta["pyomo"].objective is m.obj


def test_indexed_constraint_is_one_pattern_group():
    m = pyo.ConcreteModel()
    N = 10_000
    m.I = pyo.RangeSet(N)
    m.x = pyo.Var(m.I, bounds=(-1, 1), initialize=0.3)
    # (coefficients avoid 1.0: Pyomo and the Graph both simplify 1*e to e,
    # which is a different shape)
    m.a = pyo.Param(m.I, initialize=lambda m, i: 1.5 + (i % 7) * 0.1)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.a[i] * m.x[i] ** 2 + pyo.sin(m.x[i % N + 1]) <= i)
    prob = from_pyomo(m)
    assert prob.m == N
    assert len(prob.constraint_groups) == 1 and prob.constraint_groups[0].size == N
    blocks = prob.model.meta["pyomo"].blocks
    assert [(b[0].name, b[1], b[2]) for b in blocks] == [("c", 0, N)]


def test_deep_sum_and_nesting_do_not_recurse():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(50_000), initialize=0.5)
    e = m.x[0]
    for i in range(1, 20_000):  # 20k-deep chain of products and sums
        e = 0.999 * e * m.x[i % 7] + m.x[i]
    m.c = pyo.Constraint(expr=e <= 10)
    m.s = pyo.Constraint(expr=sum(m.x[i] ** 2 for i in range(50_000)) <= 1)
    nlp = pyomo_to_model(m)
    got = evaluate(nlp.constraints, nlp.x0)
    assert abs(got[0] + nlp.meta["pyomo"].shift[0] - pyo.value(m.c.body)) <= 1e-9
    assert abs(got[1] - pyo.value(m.s.body)) <= 1e-9 * 12500


# ------------------------------------------------------- parameters / refresh
def test_params_refresh_without_recompiling():
    m = CORPUS["params_and_fixed"]()
    nlp = pyomo_to_model(m)
    mp = nlp.meta["pyomo"]
    assert {o.name for o in mp.p_objs} == {"p[1]", "p[2]", "z"}  # cap only in bounds
    assert sorted(v.name for v in mp.x_vars) == ["x[1]", "x[2]", "x[3]"]
    prob = from_pyomo_model(nlp)
    m.p[1] = -0.75
    m.p[2] = 0.4
    m.cap = 2.5
    m.z.fix(1.3)
    mp.check_structure()
    data = mp.refresh()
    ev = prob.evaluator()
    ev.set_params(data.p)
    rng = np.random.default_rng(3)
    x = _sample(m, mp, rng)
    _check_at(m, nlp, ev, x, rng)
    # bounds that are Param expressions were re-read, constants moved consistently
    lo, hi = data.lbg + mp.shift, data.ubg + mp.shift
    assert hi[0] == 2.5 and lo[1] == hi[1] == 3.5 and (lo[2], hi[2]) == (0.4, 2.5)
    m.z.unfix()
    with pytest.raises(ModelError, match="z was unfixed"):
        mp.check_structure()


def test_fixed_var_without_value_and_param_without_value():
    m = pyo.ConcreteModel()
    m.x = pyo.Var()
    m.z = pyo.Var()
    m.z.fix(None)
    m.c = pyo.Constraint(expr=m.x * m.z <= 1)
    with pytest.raises(ModelError, match="z has no value"):
        pyomo_to_model(m)


# --------------------------------------------------------------- bad input
def _snapshot(m):
    def bounds(v):
        try:
            return v.bounds
        except ValueError as exc:  # a NaN bound: Pyomo refuses to evaluate it
            return str(exc)

    return [(v.name, v.value, v.fixed, v.domain, bounds(v))
            for v in m.component_data_objects(pyo.Var)]


def _bad_integer():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.n = pyo.Var([1, 2], domain=pyo.Integers, initialize=2)
    m.c = pyo.Constraint(expr=m.x + m.n[1] * m.n[2] <= 4)
    return m, ModelError, r"discrete variable.*n\[1\].*n\[2\]"


def _bad_binary():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.on = pyo.Var(domain=pyo.Binary)
    m.o = pyo.Objective(expr=m.x ** 2 + m.on)
    return m, ModelError, r"discrete.*on \(Binary\)"


def _bad_external_ampl():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.f = pyo.ExternalFunction(library="does_not_exist.so", function="bar")
    m.cx = pyo.Constraint(expr=m.x + m.f(m.x) <= 1)
    return m, UnsupportedOpError, r"external function 'f' in cx"


def _bad_external_python():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.sq = pyo.ExternalFunction(lambda a: a ** 2)
    m.o = pyo.Objective(expr=m.sq(m.x))
    return m, UnsupportedOpError, r"external function 'sq' in o"


def _bad_nonfinite_con_bound():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.cnan = pyo.Constraint(expr=m.x <= float("nan"))
    return m, NonFiniteError, r"constraint cnan has a non-finite bound"


def _bad_inf_wrong_side():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.cinf = pyo.Constraint(expr=m.x >= float("inf"))
    return m, NonFiniteError, r"constraint cinf has a non-finite bound"


def _bad_nonfinite_var_bound():
    m = pyo.ConcreteModel()
    m.lo = pyo.Param(mutable=True, initialize=0.0, within=pyo.Any)
    m.xb = pyo.Var(bounds=(m.lo, 1), initialize=0.5)
    m.o = pyo.Objective(expr=m.xb ** 2)
    m.lo = float("nan")
    return m, NonFiniteError, r"xb"


def _bad_var_lb_gt_ub():
    m = pyo.ConcreteModel()
    m.y = pyo.Var(bounds=(2, 1), initialize=1.5)
    m.o = pyo.Objective(expr=m.y ** 2)
    return m, ModelError, r"variable y has lower bound 2.* > upper bound 1"


def _bad_con_lb_gt_ub():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.lo = pyo.Param(mutable=True, initialize=3.0)  # Pyomo rejects constant 3 <= e <= 1
    m.hi = pyo.Param(mutable=True, initialize=1.0)
    m.crange = pyo.Constraint(expr=pyo.inequality(m.lo, m.x ** 2, m.hi))
    return m, ModelError, r"constraint crange has lower bound 3.* > upper bound 1"


def _bad_param_nan():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.pn = pyo.Param(mutable=True, initialize=float("nan"), within=pyo.Any)
    m.o = pyo.Objective(expr=m.pn * m.x ** 2)
    return m, NonFiniteError, r"parameter pn has the non-finite value"


def _bad_variable_range_bound():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.y = pyo.Var(initialize=0.5)
    m.cvr = pyo.Constraint(expr=pyo.inequality(m.y, m.x, 2))
    return m, ModelError, r"constraint cvr"


BAD = {f.__name__[5:]: f for f in (
    _bad_integer, _bad_binary, _bad_external_ampl, _bad_external_python,
    _bad_nonfinite_con_bound, _bad_inf_wrong_side, _bad_nonfinite_var_bound,
    _bad_var_lb_gt_ub, _bad_con_lb_gt_ub, _bad_param_nan, _bad_variable_range_bound)}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_a_clear_error_and_model_untouched(case):
    m, exc, pattern = BAD[case]()
    before = _snapshot(m)
    with pytest.raises(exc, match=pattern):
        pyomo_to_model(m)
    assert _snapshot(m) == before


def test_unsupported_expression_class_names_it():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.0)
    m.b = pyo.BooleanVar()
    m.cb = pyo.Constraint(expr=pyo.Expr_if(IF=m.b, THEN=m.x, ELSE=0) <= 1)
    with pytest.raises(UnsupportedOpError, match="cb"):
        pyomo_to_model(m)


def test_import_stays_cheap():
    code = ("import sys, caspar_backend, caspar_backend.adapters.pyomo as a; "
            "print('pyomo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_rows_of_one_component_share_a_shape():
    """A fixed Var seen first or from the memo gives the same row structure."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(50)
    m.x = pyo.Var(m.I, bounds=(-1, 1))
    m.z = pyo.Var(initialize=2.0)
    m.z.fix()
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + m.z + 2.5 * m.x[i] ** 2 <= i)
    m.d = pyo.Constraint(expr=m.z + m.x[1] >= -3)  # z again, bare: still one parameter
    s = m.x[2] + m.x[3]
    m.e = pyo.Constraint(expr=pyo.exp(s) + s <= 4)  # s walked alone, then flattened
    m.f = pyo.Constraint(expr=m.x[4] ** 2 + s <= 4)
    from caspar_backend.problem import Problem

    for templates in (True, False):      # the template reader and the walker alike
        prob = Problem(pyomo_to_model(m, templates=templates))
        assert prob.n_params == 1
        assert [g.size for g in prob.constraint_groups] == [50, 1, 1, 1]
    # (the walker's rows are expressions in model.constraints)
    assert to_str(prob.model.constraints[-1]) == "1*x[2] + 1*x[3] + x[4]**2"
