"""The expression DAG: hash-consing, exact simplifications, errors, printing, and
NLPModel validation.

Simplifications are checked twice: structurally (the result is the expected
node) and semantically (the simplified node evaluates, with the ops' ``fold``
rules, to the same number as the plain Python arithmetic it stands for).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from caspar_backend import ops
from caspar_backend.errors import (CasparError, IndexOutOfRangeError, ModelError,
                                   NonFiniteError, UnsupportedOpError)
from caspar_backend.expr import Graph, evaluate, to_str, topo_order, variables
from caspar_backend.model import NLPModel
from tests.support.exprgen import ExprGen, sample_point


@pytest.fixture
def g():
    return Graph()


@pytest.fixture
def xyz(g):
    return g.var(0), g.var(1), g.var(2)


PT = [0.7, -1.3, 2.1]


def val(e, x=PT, p=()):
    return evaluate([e], x, p)[0]


# ------------------------------------------------------------------ hash-consing
def test_same_structure_is_the_same_object(g, xyz):
    x, y, z = xyz
    assert g.var(0) is x
    assert g.param(3) is g.param(3)
    assert g.param(0) is not x            # var 0 and param 0 are different leaves
    assert g.const(2) is g.const(2.0)
    assert g.const(-0.0) is g.const(0.0)
    e1 = g.sin((x + y) * z)
    e2 = g.sin((g.var(0) + g.var(1)) * g.var(2))
    assert e1 is e2
    assert g.atan2(x, y) is g.atan2(x, y)
    assert g.atan2(x, y) is not g.atan2(y, x)
    assert g.powi(x, 3) is g.powi(x, 3)
    assert g.powi(x, 3) is not g.powi(x, 4)       # the exponent is part of the node
    assert x - y is not y - x
    assert g.sum([x, y, z]) is g.sum([x, y, z])
    n = len(g)
    _ = g.sin((x + y) * z)
    assert len(g) == n, "rebuilding an existing expression must not add nodes"


def test_dag_shares_subexpressions(g, xyz):
    x, y, _ = xyz
    s = g.exp(x * y)
    e = s * s + g.sin(s)
    order = topo_order([e])
    assert sum(1 for n in order if n.op == "exp") == 1
    assert sum(1 for n in order if n.op == "mul") == 2   # x*y and s*s
    assert variables(e) == [0, 1]


# ---------------------------------------------------------------- simplifications
def test_identity_simplifications(g, xyz):
    x, y, _ = xyz
    assert x * 1 is x and 1 * x is x
    assert x + 0 is x and 0 + x is x
    assert x - 0 is x
    assert x / 1 is x
    assert (x * 0).op == "const" and (x * 0).attr == 0.0
    assert (0 * g.exp(y)).attr == 0.0
    assert (0 / x).op == "const" and (0 / x).attr == 0.0
    assert (0 - x) is -x
    assert x * -1 is -x
    assert -(-x) is x
    assert (x - x).op == "const" and (x - x).attr == 0.0
    s = g.sin(y)
    assert (s - g.sin(y)).attr == 0.0     # structurally equal subtrees cancel


def test_constant_folding(g, xyz):
    x, _, _ = xyz
    assert (g.const(2) + 3).attr == 5.0
    assert (g.const(2) * g.const(3.5)).attr == 7.0
    assert g.sin(g.const(0.3)).attr == math.sin(0.3)
    assert g.atan2(g.const(1.0), g.const(-2.0)).attr == math.atan2(1.0, -2.0)
    assert g.powi(g.const(3.0), -2).attr == 3.0 ** -2
    assert g.sum([g.const(1), x, g.const(2)]).args[-1].attr == 3.0
    assert g.if_else(g.cmp("lt", g.const(1), g.const(2)), x, g.exp(x)) is x
    # a result that would not be finite is not folded (no NonFiniteError either)
    for e in (g.log(g.const(0.0)), g.div(g.const(1.0), g.const(0.0)),
              g.exp(g.const(1000.0)), g.sqrt(g.const(-1.0))):
        assert e.op != "const"
        assert not math.isfinite(val(e))


def test_pow_rewrites(g, xyz):
    x, y, _ = xyz
    assert (x ** 0.5).op == "sqrt"
    assert (x ** 2).op == "powi" and (x ** 2).attr == 2
    assert (x ** 2.0) is (x ** 2)
    assert (x ** -1).op == "powi" and (x ** -1).attr == -1
    assert (x ** 1) is x
    assert (x ** 0).op == "const" and (x ** 0).attr == 1.0
    assert (x ** 2.5).op == "pow"
    assert (x ** y).op == "pow"
    assert g.powi(g.powi(x, 2), 3) is g.powi(x, 6)
    # semantics of every rewrite at a positive point
    for e, want in (((x ** 0.5), 0.7 ** 0.5), ((x ** 2), 0.7 ** 2), ((x ** -1), 1 / 0.7),
                    ((x ** 2.5), 0.7 ** 2.5), (g.powi(g.powi(x, 2), 3), 0.7 ** 6),
                    (g.powi(g.powi(x, -1), 2), 0.7 ** -2), (g.powi(-x, 3), -(0.7 ** 3))):
        assert val(e) == pytest.approx(want, rel=1e-15)


def test_if_else_simplifications(g, xyz):
    x, y, _ = xyz
    assert g.if_else(g.const(1.0), x, y) is x
    assert g.if_else(g.const(0.0), x, y) is y
    assert g.if_else(g.const(-2.0), x, y) is x
    assert g.if_else(x < y, y, y) is y
    e = g.if_else(x < y, x, y)
    assert e.op == "if_else"
    assert val(e) == min(PT[0], PT[1])


def test_sum_flattening_and_constants(g, xyz):
    x, y, z = xyz
    inner = g.sum([x, y])
    e = g.sum([inner, z])
    assert e.op == "sum" and e.args == (x, y, z)
    e2 = g.sum([g.sum([x, g.const(1.0)]), y, g.const(2.0)])
    assert e2.op == "sum"
    assert [a for a in e2.args if a.op == "const"] == [g.const(3.0)]
    assert val(e2) == pytest.approx(PT[0] + PT[1] + 3.0, rel=1e-15)
    assert g.sum([]).attr == 0.0
    assert g.sum([x]) is x
    assert g.sum([x, g.const(0.0)]) is x
    assert g.sum([g.const(1), g.const(2)]).attr == 3.0
    # gathering constants that overflow keeps the terms (like add), no NonFiniteError
    big = g.sum([g.const(1e308), x, g.const(1e308)])
    assert not math.isfinite(val(big))
    assert g.lincomb([1e308, 1e308], [g.const(10.0), x]).op == "lincomb"


def test_sum_constant_overflow_keeps_every_term(g, xyz):
    x, _, _ = xyz
    e = g.sum([g.sum([x, g.const(1e308)]), g.const(1e308)])
    consts = [a.attr for a in e.args if a.op == "const"]
    assert sum(c / 1e308 for c in consts) == 2.0, to_str(e)


def test_lincomb(g, xyz):
    x, y, z = xyz
    e = g.lincomb([2.0, -3.0], [x, y])
    assert e.op == "lincomb"
    assert e.args == (g.const(2.0), x, g.const(-3.0), y)
    assert val(e) == pytest.approx(2 * PT[0] - 3 * PT[1], rel=1e-15)
    assert g.lincomb([0.0, 4.0], [x, y]).op == "mul"           # one term left -> a product
    assert g.lincomb([0.0, 0.0], [x, y]).attr == 0.0
    e3 = g.lincomb([2.0, 3.0, 5.0], [x, g.const(4.0), z])       # 3*4 gathered as a constant
    assert val(e3) == pytest.approx(2 * PT[0] + 12 + 5 * PT[2], rel=1e-15)
    assert len([a for a in e3.args if a.op == "var"]) == 2
    p = g.param(0)
    e4 = g.lincomb([p, 2.0], [x, g.sin(y)])                    # non-constant coefficients
    assert evaluate([e4], PT, [1.5])[0] == pytest.approx(1.5 * PT[0] + 2 * math.sin(PT[1]))
    with pytest.raises(ModelError):
        g.lincomb([1.0], [x, y])


def test_comparisons_and_logic_values(g, xyz):
    x, y, _ = xyz
    for op, f in (("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b),
                  ("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b),
                  ("ge", lambda a, b: a >= b), ("gt", lambda a, b: a > b)):
        for pt in ([1.0, 2.0, 0], [2.0, 1.0, 0], [1.5, 1.5, 0]):
            assert val(g.cmp(op, x, y), pt) == float(f(pt[0], pt[1])), (op, pt)
    c = g.apply("and", x < y, g.apply("not", y > 3.0))
    assert val(c, [1, 2, 0]) == 1.0 and val(c, [1, 4, 0]) == 0.0
    o = g.apply("or", x < 0.0, y < 0.0)
    assert val(o, [1, 2, 0]) == 0.0 and val(o, [1, -2, 0]) == 1.0
    assert (x < y).op == "lt" and (x <= y).op == "le"
    assert (x > y).op == "gt" and (x >= y).op == "ge"


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_non_finite_constants_raise(g, xyz, bad):
    x, _, _ = xyz
    with pytest.raises(NonFiniteError):
        g.const(bad)
    with pytest.raises(NonFiniteError):
        _ = x + bad
    with pytest.raises(NonFiniteError):
        g.lincomb([bad], [x])
    assert issubclass(NonFiniteError, CasparError)


def test_unsupported_op_names_the_op(g, xyz):
    x, _, _ = xyz
    with pytest.raises(UnsupportedOpError, match="erfcx"):
        g.apply("erfcx", x)
    with pytest.raises(UnsupportedOpError, match="approx"):
        g.cmp("approx", x, x)
    with pytest.raises(AttributeError):
        g.frobnicate(x)


@pytest.mark.parametrize("op,nargs", [("sin", 2), ("atan2", 1), ("if_else", 2), ("neg", 0),
                                      ("mul", 3), ("not", 2)])
def test_wrong_arity_raises(g, op, nargs):
    with pytest.raises(ModelError, match=op):
        g.apply(op, *[g.var(i) for i in range(nargs)])


def test_other_bad_construction(g, xyz):
    x, _, _ = xyz
    with pytest.raises(ModelError):
        g.apply("lincomb", x, x, x)          # odd number of args
    with pytest.raises(ModelError):
        g.apply("powi", x)                   # no exponent
    with pytest.raises(ModelError):
        _ = x + "a"
    with pytest.raises(ModelError):
        _ = x * object()


def test_mixing_graphs_raises(g, xyz):
    x, _, _ = xyz
    h = Graph()
    u = h.var(0)
    with pytest.raises(ModelError):
        _ = x + u
    with pytest.raises(ModelError):
        g.sin(u)
    with pytest.raises(ModelError):
        g.sum([x, u])
    with pytest.raises(ModelError):
        NLPModel(g, x, [u], [0.0], [1.0], [0.0], [1.0])
    with pytest.raises(ModelError):
        NLPModel(g, u, [], [0.0], [1.0], [], [])


# -------------------------------------------------------------------- printing
def test_printing_readable():
    g = Graph()
    x, y, z = g.var(0), g.var(1), g.var(2)
    cases = [
        (x * y + g.sin(z), "x[0] * x[1] + sin(x[2])"),
        ((x + y) * z, "(x[0] + x[1]) * x[2]"),
        (x - (y - z), "x[0] - (x[1] - x[2])"),
        (x / (y * z), "x[0] / (x[1] * x[2])"),
        ((x + y) ** 2, "(x[0] + x[1])**2"),
        (x ** y, "x[0]**x[1]"),
        (g.atan2(x, y), "atan2(x[0], x[1])"),
        (g.sum([x, y, z, g.const(2.0)]), "x[0] + x[1] + x[2] + 2"),
        (-(x * y), "-(x[0] * x[1])"),
        (2.5 * x, "2.5 * x[0]"),
        (g.cmp("le", x, 1.0), "(x[0] <= 1)"),
        (g.if_else(x < y, x, g.exp(y)), "if_else((x[0] < x[1]), x[0], exp(x[1]))"),
        (g.param(0) * x, "p[0] * x[0]"),
    ]
    for e, want in cases:
        assert to_str(e) == want
        assert str(e) == want
        assert want in repr(e)


def test_printing_uses_names():
    g = Graph(var_names=["flow", "head"], param_names=lambda k: f"demand_{k}")
    e = g.var(0) * g.sqrt(g.var(1)) - g.param(3)
    assert to_str(e) == "flow * sqrt(head) - demand_3"
    # names via NLPModel
    h = Graph()
    m = NLPModel(h, h.var(0) ** 2, [h.exp(h.var(1)) + h.param(0)], [0, 0], [1, 1], [0], [1],
                 p=[1.0], var_names=["a", "b"], param_names=["rho"])
    assert m.describe(0) == "g[0]: exp(b) + rho"


def test_printing_is_bounded():
    g = Graph()
    long = g.sum([g.var(i) * g.var(i + 1) for i in range(1000)])
    s = to_str(long, max_len=60)
    assert len(s) <= 70 and s.endswith("...")
    deep = g.var(0)
    for _ in range(5000):
        deep = g.sin(deep)
    s = to_str(deep, max_len=500)              # no RecursionError
    assert s.startswith("sin(sin(") and len(s) <= 510
    assert len(topo_order([deep])) == 5001
    assert val(deep, [0.3]) == pytest.approx(_nest_sin(0.3, 5000), rel=1e-12)


def _nest_sin(v, k):
    for _ in range(k):
        v = math.sin(v)
    return v


def _py_namespace(x, p):
    ns = {k: getattr(math, k) for k in ("exp", "log", "log10", "sqrt", "sin", "cos", "tan",
                                          "asin", "acos", "atan", "atan2", "sinh", "cosh",
                                          "tanh", "asinh", "acosh", "atanh", "erf", "expm1",
                                          "log1p", "hypot", "floor", "ceil")}
    ns.update(x=[float(v) for v in x], p=[float(v) for v in p], abs=abs, fmin=min, fmax=max,
              sign=lambda v: float((v > 0) - (v < 0)),
              if_else=lambda c, a, b: a if c else b,
              and_=lambda a, b: float(bool(a) and bool(b)),
              or_=lambda a, b: float(bool(a) or bool(b)))
    return ns


def _print_and_eval(e, x, p):
    text = to_str(e, max_len=10**6)
    # 'and(' / 'or(' are Python keywords; everything else is Python syntax already
    text_py = re.sub(r"\b(and|or)\(", r"\1_(", text)
    return text, float(eval(text_py, _py_namespace(x, p)))  # noqa: S307 - our own text


def test_printed_random_expressions_evaluate_like_the_graph():
    """Printing is faithful: the printed text, read back as Python, has the
    graph's value (checks precedence and parenthesization on 400 random
    expressions covering every op)."""
    rng = np.random.default_rng(7)
    g = Graph()
    p = np.array([0.9, 1.2])
    bad = []
    names = sorted(ops.OPS)
    for k in range(400):
        gen = ExprGen(g, rng, [0, 1, 2], [0, 1])
        e = gen.expr_with(4, names[k % len(names)])
        x = sample_point(rng, [e], 3, p, tries=50)
        if x is None:
            continue
        text, got = _print_and_eval(e, x, p)
        want = val(e, x, p)
        if not got == pytest.approx(want, rel=1e-9, abs=1e-12):
            bad.append(f"{text}  ->  {got} (graph: {want})")
    assert not bad, f"{len(bad)} printed expressions read back wrong, e.g.\n" + "\n".join(bad[:5])


@pytest.mark.parametrize("build", [lambda g, x, y: g.powi(-x, 2),
                                   lambda g, x, y: g.powi(g.powi(x, -1), 2),
                                   lambda g, x, y: g.pow(g.pow(x, y), x),
                                   lambda g, x, y: g.pow(g.const(-2.0), y) + x,
                                   lambda g, x, y: -g.powi(x, 2) + g.powi(-y, 3)])
def test_printing_power_bases(build):
    g = Graph()
    x, y = g.var(0), g.var(1)
    e = build(g, x, y)
    text, got = _print_and_eval(e, [1.7, 3.0], [])
    assert got == pytest.approx(val(e, [1.7, 3.0]), rel=1e-12), text


def test_printing_other_precedences_read_back():
    """The parts of printing that are right today, read back as Python."""
    g = Graph()
    x, y, z = g.var(0), g.var(1), g.var(2)
    pt = [0.7, -1.3, 2.1]
    for e in [x - (y - z), x / (y / z), x / (y * z), (x - y) * (x + z), -(x + y) * z,
              x - (-y), x * -y, g.sum([x, -y, z * z]) / (x - z), (x * x + y) ** 3,
              g.lincomb([-2.0, 3.0], [x, y * z]) - x, -g.sum([x, y]),
              g.if_else(x < y, -x, y - z) * 2, g.powi(x + y, -3), (x * x) ** z]:
        text, got = _print_and_eval(e, pt, [])
        assert got == pytest.approx(val(e, pt), rel=1e-12), text


# ---------------------------------------------------------------- NLPModel
def _model(g, **kw):
    x, y = g.var(0), g.var(1)
    args = dict(graph=g, objective=x * x + y, constraints=[g.exp(x) + y, x - y],
                lbx=[-1.0, -1.0], ubx=[1.0, 1.0], lbg=[0.0, -1.0], ubg=[2.0, 1.0])
    args.update(kw)
    return NLPModel(**args)


def test_model_ok_and_defaults(g):
    m = _model(g)
    assert (m.n, m.m, m.n_params) == (2, 2, 0)
    assert m.var_names == ["x[0]", "x[1]"] and m.con_names == ["g[0]", "g[1]"]
    np.testing.assert_array_equal(m.x0, [0.0, 0.0])
    m2 = _model(Graph(), ubx=5.0)             # a scalar bound broadcasts
    np.testing.assert_array_equal(m2.ubx, [5.0, 5.0])


def test_model_lb_gt_ub_names_the_variable(g):
    with pytest.raises(ModelError, match=r"flow.*lower bound 2\.0.*upper bound 1\.0"):
        _model(g, lbx=[-1.0, 2.0], var_names=["head", "flow"])


def test_model_lbg_gt_ubg_names_the_constraint(g):
    with pytest.raises(ModelError, match="balance"):
        _model(g, lbg=[0.0, 3.0], con_names=["c0", "balance"])


def test_model_nan_bound(g):
    with pytest.raises(NonFiniteError, match=r"x\[1\]"):
        _model(g, ubx=[1.0, math.nan])
    with pytest.raises(NonFiniteError, match=r"g\[0\]"):
        _model(g, lbg=[math.nan, 0.0])


def test_model_infinite_bound_on_wrong_side(g):
    with pytest.raises(NonFiniteError):
        _model(g, lbx=[math.inf, 0.0], ubx=[math.inf, 1.0])


def test_model_non_finite_x0_and_p(g):
    with pytest.raises(NonFiniteError, match=r"x\[0\]"):
        _model(g, x0=[math.inf, 0.0])
    with pytest.raises(NonFiniteError):
        _model(g, p=[1.0, math.nan])


def test_model_variable_index_out_of_range_names_the_expression(g):
    x = g.var(0)
    bad = g.sin(g.var(7)) * x
    with pytest.raises(IndexOutOfRangeError) as ei:
        _model(g, constraints=[g.exp(x), bad], con_names=["ok", "heat"])
    msg = str(ei.value)
    assert "heat" in msg and "7" in msg and "sin(x[7]) * x[0]" in msg
    assert isinstance(ei.value, ModelError) and isinstance(ei.value, IndexError)
    with pytest.raises(IndexOutOfRangeError, match="objective"):
        _model(g, objective=g.var(2))
    with pytest.raises(IndexOutOfRangeError, match=r"p\[0\]|parameter"):
        _model(g, constraints=[x * g.param(0), x])


def test_model_wrong_sizes(g):
    with pytest.raises(ModelError, match="ubx"):
        _model(g, ubx=[1.0, 1.0, 1.0])
    with pytest.raises(ModelError, match="lbg"):
        _model(g, lbg=[0.0, 0.0, 0.0])
    with pytest.raises(ModelError, match="ubg"):
        _model(g, ubg=[0.0, 1.0, 2.0])
    with pytest.raises(ModelError, match="x0"):
        _model(g, x0=[0.0, 0.0, 0.0])


def test_model_scalar_lbx_is_a_model_error(g):
    with pytest.raises(ModelError, match="lbx"):
        _model(g, lbx=0.0)


def test_model_rejects_non_nodes_and_data_leaves(g):
    with pytest.raises(ModelError):
        _model(g, constraints=[1.0, g.var(0)])
    with pytest.raises(ModelError, match="data"):
        _model(g, constraints=[g.data(0) * g.var(0), g.var(1)])
