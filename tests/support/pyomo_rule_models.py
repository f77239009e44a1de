"""Pyomo models that exercise every value-dependent construction rule of the Graph.

The per-instance walker builds each row in a hash-consed Graph whose constructors look
at the values of constants (folding, a sum's constants gathered, ``0``/``1``/``-1``
factors, ``a/1``, ``0/b``, numeric exponents, zero ``lincomb`` coefficients, equal
constants making equal nodes, wide sums split by their operation count).  The template
reader must produce the same rows (tests/adapters/test_pyomo_template_equivalence.py),
so each model here has indexed components whose rows hit a rule in some rows and not in
others (the numbers cycle through the special values), plus expression trees written
with Pyomo's classes directly where Pyomo's own operators would fold the constants
away first (immutable Param and NumericConstant leaves).

``RULE_MODELS`` maps a name to a builder (a fresh model each call).  Every model is
evaluable near its initial point (no domain errors).
"""

from __future__ import annotations

import math

import pyomo.environ as pyo
from pyomo.core.expr import numeric_expr as ne
from pyomo.core.expr.numvalue import NumericConstant

RULE_MODELS: dict = {}

#: the values the rules treat specially, and ordinary ones
SPECIAL = (0.0, 1.0, -1.0, 2.5, 0.5, -0.0, 3.0, -2.0)


def rule_model(fn):
    RULE_MODELS[fn.__name__] = fn
    return fn


def _base(n: int = 40):
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(n)
    m.x = pyo.Var(m.I, bounds=(0.5, 2.0), initialize=lambda _, i: 1.0 + 0.013 * i)
    m.y = pyo.Var(m.I, bounds=(-1.0, 1.0), initialize=lambda _, i: 0.1 + 0.01 * (i % 7))
    m.obj = pyo.Objective(expr=sum((m.x[i] - 1.2) ** 2 + m.y[i] ** 2 for i in m.I))
    return m


def _k(i: int, shift: int = 0) -> float:
    return SPECIAL[(i + shift) % len(SPECIAL)]


def _nxt(m, i):
    return i % len(m.I) + 1


@rule_model
def sum_constants():
    """Several constants in one sum: natives, a named Expression that ends in a
    constant (summed twice, as COPS glider's ``ay[k] + ay[k-1]``), constants of
    immutable Params and NumericConstants, constants inside nested sums, a body that is
    a named Expression, a constant-only sum inside a product."""
    m = _base()
    q = m.q = pyo.Param(initialize=0.1)               # immutable scalar: a ParamData leaf
    m.e = pyo.Expression(m.I, rule=lambda m, i: m.x[i] * m.y[i] / 100.0 - 9.81 * _k(i))
    m.a = pyo.Constraint(m.I, rule=lambda m, i: m.y[i] == m.y[_nxt(m, i)]
                         + 0.5 * m.x[1] * (m.e[i] + m.e[_nxt(m, i)]))
    m.b = pyo.Constraint(m.I, rule=lambda m, i: (
        -10, ne.SumExpression([m.x[i] ** 2, 0.1, q, NumericConstant(0.2), _k(i),
                               ne.SumExpression([m.y[i], 0.3, _k(i, 1)])]), 10))
    m.body_named = pyo.Expression(m.I, rule=lambda m, i: m.x[i] ** 3 + 1.5 + _k(i, 2))
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.body_named[i] <= 20)
    m.d = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] * ne.SumExpression(
        [q, _k(i), 0.7]) + m.y[i] ** 2 <= 5)
    m.f = pyo.Constraint(m.I, rule=lambda m, i: ne.SumExpression(
        [m.x[i] * m.y[i], _k(i), ne.NegationExpression((ne.SumExpression(
            [m.y[i] ** 2, _k(i, 3), 1e-17]),))]) <= 3)
    return m


@rule_model
def products():
    """Constant factors 0, 1, -1 and others on either side of a product, products of
    constants only, constant times a sum, a sum that is a constant times a variable."""
    m = _base()
    q = m.q = pyo.Param(initialize=2.0)
    m.a = pyo.Constraint(m.I, rule=lambda m, i: ne.ProductExpression(
        (_k(i), m.x[i] * m.y[i])) + ne.ProductExpression((m.x[i] ** 2, _k(i, 1))) <= 4)
    m.b = pyo.Constraint(m.I, rule=lambda m, i: ne.ProductExpression(
        (ne.ProductExpression((q, _k(i))), m.x[i] * m.y[_nxt(m, i)])) >= -4)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: _k(i) * (m.x[i] + m.y[i] + 1.0)
                         * m.x[_nxt(m, i)] <= 6)
    m.d = pyo.Constraint(m.I, rule=lambda m, i: ne.ProductExpression(
        (ne.SumExpression([_k(i), 0.5 * _k(i, 1)]), m.x[i] ** 2)) + m.y[i] <= 9)
    m.e = pyo.Constraint(m.I, rule=lambda m, i: ne.ProductExpression(
        (ne.ProductExpression((m.x[i], 0.0)), m.y[i])) + m.x[i] * m.y[i] >= -5)
    return m


@rule_model
def negations():
    """``-(c)``, ``-(-a)``, negated sums and products, every subtraction form of a
    relation with variables on both sides (rhs a sum with constants, a product, a
    monomial, a named Expression, a negation), negated mutable-Param coefficients."""
    m = _base()
    m.p = pyo.Param(m.I, initialize=lambda _, i: _k(i), mutable=True)
    m.e = pyo.Expression(m.I, rule=lambda m, i: m.y[i] ** 2 + _k(i) + 0.25)
    m.a = pyo.Constraint(m.I, rule=lambda m, i: ne.NegationExpression(
        (ne.NegationExpression((m.x[i] * m.y[i],)),)) + ne.NegationExpression(
        (NumericConstant(_k(i)),)) <= 3)
    m.b = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** 2 + 0.5 + _k(i)
                         == m.y[i] * m.x[_nxt(m, i)] + 0.25 + _k(i, 1))
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] * m.y[i] == _k(i) * m.y[_nxt(m, i)])
    m.d = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] + 1.0 + _k(i) >= m.e[_nxt(m, i)])
    m.f = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** 2 == -(m.y[i] * m.x[i]) + _k(i))
    m.g = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] - m.p[i] * m.y[i]
                         - (m.x[_nxt(m, i)] + _k(i)) <= 2)
    m.h = pyo.Constraint(m.I, rule=lambda m, i: m.e[i] - (m.x[i] + 0.1 + _k(i, 2)) <= 4)
    return m


@rule_model
def powers():
    """Exponents 0, 1, 2, 3, 0.5, -1, 1.5, -2 (native and folded from constants), a
    constant base, a mutable-Param exponent, nested powers, a constant to a constant."""
    m = _base()
    q = m.q = pyo.Param(initialize=0.5)
    m.p = pyo.Param(m.I, initialize=lambda _, i: 1.0 + 0.1 * (i % 3), mutable=True)
    ex = (0, 1, 2, 3, 0.5, -1, 1.5, -2.0)
    m.a = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** ex[i % 8] + m.y[i] <= 8)
    m.b = pyo.Constraint(m.I, rule=lambda m, i: ne.PowExpression(
        (m.x[i], ne.ProductExpression((q, ex[i % 8])))) + m.y[i] ** 2 <= 9)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: (1.0 + 0.5 * _k(i) ** 2) ** m.y[i]
                         + m.x[i] ** m.p[i] <= 12)
    m.d = pyo.Constraint(m.I, rule=lambda m, i: (m.x[i] ** 2) ** ex[(i + 3) % 8]
                         + ne.PowExpression((2.0, NumericConstant(_k(i)))) * m.y[i] <= 30)
    m.f = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** 0 + m.y[i] + 3.0 >= -1)
    return m


@rule_model
def divisions():
    """``a/1``, ``0/b``, ``a/c``, ``c/b``, quotients of constants."""
    m = _base()
    q = m.q = pyo.Param(initialize=4.0)
    dv = (1.0, 2.0, 0.5, -1.0, 3.0)
    m.a = pyo.Constraint(m.I, rule=lambda m, i: ne.DivisionExpression(
        (m.x[i] * m.y[i], dv[i % 5])) + m.x[i] <= 6)
    m.b = pyo.Constraint(m.I, rule=lambda m, i: ne.DivisionExpression(
        (_k(i), m.x[i])) + m.y[i] ** 2 <= 6)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: ne.DivisionExpression(
        (m.x[i] ** 2, ne.DivisionExpression((q, dv[(i + 1) % 5])))) - m.y[i] <= 7)
    m.d = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] / (m.x[_nxt(m, i)] * dv[i % 5])
                         + m.y[i] / m.x[i] <= 5)
    return m


@rule_model
def unary_of_constants():
    """Intrinsic functions of constants (folded), of an immutable Param, and of sums
    that hold constants."""
    m = _base()
    q = m.q = pyo.Param(initialize=0.3)
    m.a = pyo.Constraint(m.I, rule=lambda m, i: ne.UnaryFunctionExpression(
        (ne.SumExpression([q, _k(i)]),), "sin", math.sin) * m.x[i] + pyo.exp(m.y[i]) <= 9)
    m.b = pyo.Constraint(m.I, rule=lambda m, i: pyo.cos(m.x[i] - _k(i)) + pyo.sqrt(
        m.x[i] + 0.1 + abs(_k(i, 1))) + abs(m.y[i] - _k(i, 2)) <= 6)
    return m


@rule_model
def fixed_vars_and_params():
    """Fixed Vars (values 0, 1, -1, others) and mutable Params (the same values, which
    stay symbolic) in sums, monomials, products, exponents and on the right of a
    relation; immutable Params with those values (folded)."""
    m = _base()
    m.z = pyo.Var(m.I, initialize=lambda _, i: _k(i))
    m.z.fix()
    m.p = pyo.Param(m.I, initialize=lambda _, i: _k(i, 1), mutable=True)
    m.c = pyo.Param(m.I, initialize=lambda _, i: _k(i, 2))
    m.w = pyo.Var(initialize=2.0)
    m.w.fix()
    m.a = pyo.Constraint(m.I, rule=lambda m, i: m.z[i] * m.x[i] + m.p[i] * m.y[i]
                         + m.c[i] * m.x[_nxt(m, i)] + m.z[i] + m.p[i] + m.c[i] <= 10)
    m.b = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** m.w + m.z[i] * m.x[i] * m.y[i]
                         == m.z[_nxt(m, i)] + m.p[i] * m.x[_nxt(m, i)])
    m.d = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** 2 - m.w <= m.z[i] ** 2 + 4)
    m.e = pyo.Constraint(m.I, rule=lambda m, i: (m.p[i] + 1.0 + _k(i)) * m.x[i]
                         - (m.p[i] * 2.0) * m.y[i] ** 2 <= 7)
    return m


@rule_model
def linear_forms():
    """Linear sums whose coefficients are 0, 1, -1 or others by row (zero coefficients
    dropped, one term left, none left), Param and NPV coefficients."""
    m = _base()
    m.p = pyo.Param(m.I, initialize=lambda _, i: 0.5 + _k(i), mutable=True)
    m.a = pyo.Constraint(m.I, rule=lambda m, i: ne.LinearExpression(
        [ne.MonomialTermExpression((_k(i), m.x[i])),
         ne.MonomialTermExpression((_k(i, 1), m.y[i])),
         ne.MonomialTermExpression((_k(i, 2), m.x[_nxt(m, i)])), 0.5]) + m.y[i] ** 2 <= 8)
    m.b = pyo.Constraint(m.I, rule=lambda m, i: ne.LinearExpression(
        [ne.MonomialTermExpression((0.0, m.x[i])),
         ne.MonomialTermExpression((_k(i), m.y[i]))]) + m.x[i] * m.y[i] <= 8)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.p[i] * m.x[i] + (2 * m.p[i]) * m.y[i]
                         - m.p[i] * m.x[_nxt(m, i)] + m.x[i] ** 2 <= 9)
    return m


@rule_model
def shared_constants():
    """Subexpressions written twice whose constants are equal in some rows only (one
    node there), equal in every row, or never equal."""
    m = _base()
    a = lambda i: _k(i)            # noqa: E731
    b = lambda i: _k(i // 2)       # noqa: E731  equal to a(i) in some rows
    m.s = pyo.Constraint(m.I, rule=lambda m, i: pyo.sin(m.x[i] * a(i) + m.y[i])
                         + pyo.cos(m.x[i] * b(i) + m.y[i]) <= 3)
    m.t = pyo.Constraint(m.I, rule=lambda m, i: (m.x[i] - 2.5 * m.y[i]) * pyo.exp(
        m.x[i] - 2.5 * m.y[i]) + (m.x[i] + _k(i) * m.y[i]) ** 2 <= 30)
    m.u = pyo.Constraint(m.I, rule=lambda m, i: (m.x[i] * 1.5) ** 2 + (m.x[i] * (1.0 + 0.5 * (
        i % 2))) ** 3 <= 40)
    return m


@rule_model
def wide_sums():
    """Wide sums: linear ones with coefficients +-1 and others; one whose terms share a
    subexpression so that the split decision turns on how many of its four linear
    coefficients are not 1 (split in some rows, whole in others)."""
    m = _base(48)
    m.v = pyo.Var(range(12), bounds=(-1, 1), initialize=lambda _, j: 0.05 * j)
    m.a = pyo.Constraint(m.I, rule=lambda m, i: sum(
        _k(i, j) * m.x[(i + j) % 48 + 1] for j in range(10)) + 0.25 <= 9)

    def shared(m, i):
        s = pyo.sin(m.x[i] * m.y[i]) * pyo.cos(m.x[i]) + pyo.exp(m.y[i])   # 6 operations
        coef = [1.0 if (i >> b) & 1 else 2.0 for b in range(4)]
        return (sum(s * m.v[j] for j in range(7))
                + sum(c * m.v[7 + j] for j, c in enumerate(coef)) <= 20)
    m.b = pyo.Constraint(m.I, rule=shared)
    return m


@rule_model
def deep_sums():
    """Sums and negations nested deeper than the flattening depth, with constants at
    every level."""
    m = _base(33)

    def deep(m, i):
        e = m.x[i] ** 2 + 0.5
        for k in range(40):
            e = ne.SumExpression([e, _k(i + k), m.y[i] * 0.01])
            if k % 3 == 0:
                e = ne.NegationExpression((e,))
        return e <= 50
    m.a = pyo.Constraint(m.I, rule=deep)
    return m


def random_rows(seed: int, n: int = 24, depth: int = 4):
    """A model of ``n``-row indexed components, each row one random expression tree of
    Pyomo's classes (sums of 1-4 terms nested, negations, products, quotients, powers,
    intrinsic functions, named Expressions) over variables, monomials, fixed Vars,
    mutable and immutable Params, NumericConstants and numbers.  The tree's shape is drawn once per
    component; its numbers are drawn per row from :data:`SPECIAL` and a few others, so
    the rows of a component meet the value-dependent rules in different places."""
    import random

    m = _base(n)
    m.z = pyo.Var(m.I, initialize=lambda _, i: _k(i, 3))
    m.z.fix()
    m.p = pyo.Param(m.I, initialize=lambda _, i: 0.25 + 0.5 * (i % 3), mutable=True)
    m.q = pyo.Param(initialize=1.5)
    numbers = SPECIAL + (0.1, 1e-3, 7.0)
    shapes = random.Random(seed)

    def shape(d):
        # a tree of (kind, children) with holes for leaves; numbers drawn per row
        r = shapes.random()
        if d == 0 or r < 0.25:
            return ("leaf", shapes.choice(("x", "y", "x2", "z", "p", "q", "num", "num",
                                           "nc", "mono", "mono", "pmono")))
        kind = shapes.choice(("sum", "sum", "neg", "mul", "mul", "div", "pow", "fn",
                              "named"))
        if kind == "sum":
            return (kind, [shape(d - 1) for _ in range(shapes.randint(1, 4))])
        if kind in ("neg", "fn", "named"):
            return (kind, [shape(d - 1)], shapes.choice(("sin", "cos", "exp")))
        if kind == "pow":
            return (kind, [shape(d - 1), ("leaf", shapes.choice(("num", "num", "p")))])
        return (kind, [shape(d - 1), shape(d - 1)])

    def build(t, i, draw):
        kind = t[0]
        if kind == "leaf":
            leaf = t[1]
            if leaf == "x":
                return m.x[i]
            if leaf == "y":
                return m.y[i]
            if leaf == "x2":
                return m.x[i % n + 1]
            if leaf == "z":
                return m.z[i]
            if leaf == "p":
                return m.p[i]
            if leaf == "q":
                return m.q
            if leaf == "mono":              # Pyomo's own c*y: a monomial (or y for c = 1)
                return draw.choice(numbers) * m.y[i]
            if leaf == "pmono":
                return m.p[i] * m.x[i % n + 1]
            v = draw.choice(numbers)
            return NumericConstant(v) if leaf == "nc" else v
        args = [build(c, i, draw) for c in t[1]]
        if kind == "sum":
            return ne.SumExpression(args)
        if kind == "neg":
            return ne.NegationExpression((args[0],))
        if kind == "mul":
            return ne.ProductExpression((args[0], args[1]))
        if kind == "div":
            return ne.DivisionExpression((args[0], args[1]))
        if kind == "pow":
            return ne.PowExpression((args[0], args[1]))
        if kind == "fn":
            fn = {"sin": math.sin, "cos": math.cos, "exp": math.exp}[t[2]]
            return ne.UnaryFunctionExpression((args[0],), t[2], fn)
        e = pyo.Expression(expr=args[0])
        e.construct()
        return e

    for c in range(3):
        tree = ("sum", [shape(depth), ("leaf", "x"), shape(depth)])
        draws = random.Random(seed * 1000 + c)

        def rule(m, i, tree=tree, draws=draws):
            return (-1e6, build(tree, i, draws), 1e6)
        setattr(m, f"c{c}", pyo.Constraint(m.I, rule=rule))
    return m
