"""Pyomo models written for the adapter tests: every construct the adapter supports.

``CORPUS`` maps a name to a builder returning a fresh ``ConcreteModel``.  Each
model keeps every function inside its domain through variable bounds, so a
point drawn uniformly inside the bounds (clipped to ``SAMPLE_BOX`` where a side
is unbounded, or to the model's own ``_sample_box``) is a valid test point.
Non-smooth pieces (abs, floor, ceil, Expr_if, max/min) are differentiable
almost everywhere, which is where random points land.
"""

from __future__ import annotations

import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import MaxExpression, MinExpression

from tests.support import problems

SAMPLE_BOX = (-2.0, 2.0)
CORPUS: dict = {}


def model(fn):
    CORPUS[fn.__name__] = fn
    return fn


@model
def linear_forms():
    """LinearExpression sums, equality / inequality / ranged rows, constants on
    both sides, a constant in the objective."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(6)
    m.x = pyo.Var(m.I, bounds=(-3, 3))
    m.a = pyo.Param(m.I, initialize=lambda m, i: 0.5 * i - 1)  # immutable
    m.sum1 = pyo.Constraint(expr=sum(m.x[i] for i in m.I) == 1)
    m.wsum = pyo.Constraint(expr=sum(m.a[i] * m.x[i] for i in m.I) + 4 <= 7)
    m.rng = pyo.Constraint(expr=pyo.inequality(-1, m.x[1] - 2 * m.x[2] + 0.5, 2))
    m.both = pyo.Constraint(expr=m.x[3] + 2 * m.x[4] - 1 >= m.x[5] - 3 * m.x[6] + 2)
    m.rev = pyo.Constraint(expr=5 >= m.x[1] + m.x[6])
    m.obj = pyo.Objective(expr=sum(i * m.x[i] for i in m.I) + 3.5)
    return m


@model
def quadratic():
    """Products, squares, cross terms, monomials with Param coefficients."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(4)
    m.x = pyo.Var(m.I)
    m.q = pyo.Param(m.I, initialize=lambda m, i: 1.0 + i, mutable=True)
    m.c1 = pyo.Constraint(expr=m.x[1] * m.x[2] + m.x[3] ** 2 <= 4)
    m.c2 = pyo.Constraint(expr=m.q[1] * m.x[1] * m.x[4] - m.q[2] * m.x[2] == 0.3)
    m.c3 = pyo.Constraint(expr=(m.x[1] + m.x[2]) * (m.x[3] - 2 * m.x[4]) >= -10)
    m.obj = pyo.Objective(expr=sum(m.q[i] * m.x[i] ** 2 for i in m.I) + m.x[1] * m.x[3])
    return m


@model
def division():
    """x/y, c/x, p/x, x/p, nested quotients."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(0.5, 3))
    m.p = pyo.Param(initialize=2.5, mutable=True)
    m.c1 = pyo.Constraint(expr=m.x[1] / m.x[2] + 3 / m.x[3] <= 10)
    m.c2 = pyo.Constraint(expr=m.p / m.x[1] - m.x[2] / m.p == 0.1)
    m.c3 = pyo.Constraint(expr=(m.x[1] + m.x[2]) / (m.x[3] * m.x[1] + 1) >= 0)
    m.obj = pyo.Objective(expr=m.x[1] / (1 + m.x[2] / m.x[3]))
    return m


@model
def powers():
    """Integer, negative, fractional and variable exponents; Param exponent."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(0.2, 2.5))
    m.e = pyo.Param(initialize=1.7, mutable=True)
    m.c1 = pyo.Constraint(expr=m.x[1] ** 3 + m.x[2] ** -1 + m.x[3] ** 0.5 <= 20)
    m.c2 = pyo.Constraint(expr=m.x[1] ** 1.5 - m.x[2] ** m.x[3] == 0)
    m.c3 = pyo.Constraint(expr=2 ** m.x[1] + m.x[2] ** m.e >= 0)
    m.c4 = pyo.Constraint(expr=(m.x[1] * m.x[2]) ** 2 + (m.x[3] - 1) ** 4 <= 50)
    m.obj = pyo.Objective(expr=m.x[1] ** -2 + m.x[3] ** 2.5)
    return m


@model
def trig():
    """sin, cos, tan, asin, acos, atan."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(-0.9, 0.9))
    m.c1 = pyo.Constraint(expr=pyo.sin(m.x[1]) * pyo.cos(m.x[2]) + pyo.tan(m.x[3]) <= 1)
    m.c2 = pyo.Constraint(expr=pyo.asin(m.x[1]) + pyo.acos(m.x[2]) == 1)
    m.c3 = pyo.Constraint(expr=pyo.atan(m.x[1] * m.x[3]) >= -1)
    m.obj = pyo.Objective(expr=pyo.cos(m.x[1] + m.x[2]) ** 2 + pyo.sin(m.x[3]))
    return m


@model
def hyperbolic():
    """sinh, cosh, tanh, asinh, acosh, atanh."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(-0.8, 0.8))
    m.y = pyo.Var(bounds=(1.2, 3.0))
    m.c1 = pyo.Constraint(expr=pyo.sinh(m.x) + pyo.cosh(m.x) * pyo.tanh(m.y) <= 5)
    m.c2 = pyo.Constraint(expr=pyo.asinh(m.x * m.y) + pyo.acosh(m.y) == 1)
    m.c3 = pyo.Constraint(expr=pyo.atanh(m.x) >= -2)
    m.obj = pyo.Objective(expr=pyo.cosh(m.x * m.y))
    return m


@model
def exp_log():
    """exp, log, log10, sqrt."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], bounds=(0.1, 4))
    m.c1 = pyo.Constraint(expr=pyo.exp(m.x[1]) - pyo.log(m.x[2]) <= 30)
    m.c2 = pyo.Constraint(expr=pyo.log10(m.x[1] * m.x[2]) + pyo.sqrt(m.x[1] + m.x[2]) == 1)
    m.obj = pyo.Objective(expr=pyo.exp(-m.x[1] * m.x[2]) + pyo.log(1 + m.x[1] ** 2))
    return m


@model
def nonsmooth():
    """abs, floor, ceil (zero derivatives away from their kinks)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(-3, 3))
    m.c1 = pyo.Constraint(expr=abs(m.x[1]) + abs(m.x[2] - m.x[3]) <= 4)
    m.c2 = pyo.Constraint(expr=pyo.floor(m.x[1]) + m.x[2] * pyo.ceil(m.x[3]) >= -20)
    m.obj = pyo.Objective(expr=abs(m.x[1] * m.x[2]) + m.x[3] ** 2)
    return m


@model
def expr_if():
    """Expr_if with <=, <, >=, ==, ranged, logical and/or/not and numeric conditions."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(-2, 2))
    x = m.x
    m.c1 = pyo.Constraint(expr=pyo.Expr_if(IF=x[1] <= x[2], THEN=x[1] ** 2, ELSE=x[2] ** 3) <= 5)
    m.c2 = pyo.Constraint(expr=pyo.Expr_if(IF=x[1] < 0.3, THEN=pyo.sin(x[3]), ELSE=x[3]) >= -3)
    m.c3 = pyo.Constraint(expr=pyo.Expr_if(IF=pyo.inequality(-1, x[2], 1), THEN=x[1] * x[2],
                                           ELSE=-x[1]) <= 4)
    m.c4 = pyo.Constraint(expr=pyo.Expr_if(IF=pyo.land(x[1] >= -1, x[3] <= 1),
                                           THEN=x[3] ** 2, ELSE=x[1] + x[3]) <= 6)
    m.c5 = pyo.Constraint(expr=pyo.Expr_if(IF=pyo.lor(x[1] >= 1, pyo.lnot(x[2] >= 0)),
                                           THEN=pyo.exp(x[2]), ELSE=x[2]) <= 8)
    m.c6 = pyo.Constraint(expr=pyo.Expr_if(IF=x[1] == x[1], THEN=x[1] * x[3],
                                           ELSE=0) + pyo.Expr_if(IF=x[2], THEN=x[2], ELSE=1) <= 9)
    m.obj = pyo.Objective(expr=pyo.Expr_if(IF=x[3] >= 0, THEN=x[3] ** 2, ELSE=-x[3]))
    return m


@model
def min_max():
    """MaxExpression / MinExpression (n-ary, folded into fmax / fmin)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(-2, 2))
    x = m.x
    m.c1 = pyo.Constraint(expr=MaxExpression((x[1], x[2] ** 2, x[3] * x[1])) <= 5)
    m.c2 = pyo.Constraint(expr=MinExpression((x[1] + x[2], pyo.sin(x[3]))) >= -5)
    m.obj = pyo.Objective(expr=MaxExpression((x[1] * x[2], x[3])) + x[1] ** 2)
    return m


@model
def named_expressions():
    """Scalar and indexed Expression components, nested and used many times."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(4)
    m.x = pyo.Var(m.I, bounds=(-1.5, 1.5))
    m.sq = pyo.Expression(m.I, rule=lambda m, i: m.x[i] ** 2)
    m.tot = pyo.Expression(expr=sum(m.sq[i] for i in m.I))
    m.mix = pyo.Expression(expr=pyo.exp(m.tot / 4) * m.x[1])
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.sq[i] + m.tot * m.x[i] <= 10)
    m.c2 = pyo.Constraint(expr=m.mix + m.tot == 1)
    m.obj = pyo.Objective(expr=m.tot + m.mix ** 2)
    return m


@model
def params_and_fixed():
    """Mutable Params (coefficients, nonlinear, bounds) and fixed Vars as parameters."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(-2, 2))
    m.z = pyo.Var(initialize=0.7)
    m.z.fix()
    m.p = pyo.Param([1, 2], initialize={1: 1.5, 2: -0.5}, mutable=True)
    m.cap = pyo.Param(initialize=3.0, mutable=True)
    m.c1 = pyo.Constraint(expr=m.p[1] * m.x[1] + m.z * m.x[2] ** 2 <= m.cap)
    m.c2 = pyo.Constraint(expr=pyo.exp(m.p[2] * m.x[3]) + m.z == m.cap + 1)
    m.c3 = pyo.Constraint(expr=pyo.inequality(m.p[2], m.x[1] * m.x[2] + m.p[1], m.cap))
    m.obj = pyo.Objective(expr=(m.x[1] - m.p[1]) ** 2 + m.z * m.x[3] ** 2 + m.p[2] * m.x[2])
    return m


@model
def blocks_and_references():
    """Nested / indexed Blocks, a deactivated Block and Constraint, a Reference."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], bounds=(-2, 2))
    m.b = pyo.Block()
    m.b.y = pyo.Var(bounds=(-1, 1))
    m.b.c = pyo.Constraint(expr=m.b.y * m.x[1] + m.x[2] <= 1)
    m.b.inner = pyo.Block()
    m.b.inner.c = pyo.Constraint(expr=pyo.sin(m.b.y) + m.x[1] ** 2 >= -1)
    m.blk = pyo.Block([1, 2, 3])
    for i in (1, 2, 3):
        m.blk[i].v = pyo.Var(bounds=(-1, 1))
        m.blk[i].c = pyo.Constraint(expr=m.blk[i].v ** 2 + i * m.x[1] <= 5)
    m.off = pyo.Block()
    m.off.c = pyo.Constraint(expr=m.x[1] ** 3 >= 100)
    m.off.deactivate()
    m.dead = pyo.Constraint(expr=m.x[2] ** 3 >= 100)
    m.dead.deactivate()
    m.ref = pyo.Reference(m.blk[:].c)  # the same ConstraintData seen twice
    m.unused = pyo.Var(initialize=5)
    m.obj = pyo.Objective(expr=m.b.y ** 2 + sum(m.blk[i].v for i in (1, 2, 3)))
    return m


@model
def multi_index():
    """Two-dimensional and string indices (names like flow[3,'a'])."""
    m = pyo.ConcreteModel()
    m.N = pyo.RangeSet(3)
    m.K = pyo.Set(initialize=["a", "b"])
    m.flow = pyo.Var(m.N, m.K, bounds=(0, 4))
    m.bal = pyo.Constraint(m.N, rule=lambda m, n: m.flow[n, "a"] - m.flow[n, "b"] ** 2 == 0.5)
    m.cap = pyo.Constraint(m.K, rule=lambda m, k: sum(m.flow[n, k] for n in m.N) <= 9)
    m.obj = pyo.Objective(expr=sum(m.flow[n, k] ** 2 * (1 + (k == "a")) for n in m.N for k in m.K))
    return m


@model
def maximize():
    """A maximized nonlinear objective (stored as -f, sense -1)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], bounds=(0.1, 3))
    m.c = pyo.Constraint(expr=m.x[1] ** 2 + m.x[2] ** 2 <= 4)
    m.obj = pyo.Objective(expr=pyo.log(m.x[1]) + m.x[1] * m.x[2], sense=pyo.maximize)
    return m


@model
def feasibility():
    """No objective: f = 0."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2])
    m.c1 = pyo.Constraint(expr=m.x[1] ** 2 + m.x[2] ** 2 == 1)
    m.c2 = pyo.Constraint(expr=m.x[1] - m.x[2] ** 3 >= 0)
    return m


@model
def negations():
    """Nested negations and subtractions of sums, constants on both sides."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(-2, 2))
    x = m.x
    m.c1 = pyo.Constraint(expr=-(x[1] - (x[2] - x[3] * x[1])) + 3 == -(-x[3] + 2))
    m.c2 = pyo.Constraint(expr=x[1] * x[2] - (x[2] + 1) - (-(x[3] ** 2 - 4)) <= 7 - x[1])
    m.c3 = pyo.Constraint(expr=-pyo.sin(x[1]) - -pyo.cos(x[2]) >= -x[3] - 5)
    m.obj = pyo.Objective(expr=-(-(x[1] ** 2)) - (x[2] - x[3] ** 2))
    return m


@model
def rosenbrock_chain():
    """Chained Rosenbrock over an indexed Var (one objective pattern)."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(8)
    m.x = pyo.Var(m.I, initialize=-1.2)
    m.obj = pyo.Objective(expr=sum(100 * (m.x[i + 1] - m.x[i] ** 2) ** 2 + (1 - m.x[i]) ** 2
                                   for i in m.I if i < 8))
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** 2 <= 4)
    return m


@model
def domains():
    """Domains become bounds; bounds given by mutable Params; initial values None."""
    m = pyo.ConcreteModel()
    m.lo = pyo.Param(initialize=0.25, mutable=True)
    m.a = pyo.Var(domain=pyo.NonNegativeReals)
    m.b = pyo.Var(domain=pyo.NonPositiveReals)
    m.c = pyo.Var(domain=pyo.PositiveReals, bounds=(None, 3))
    m.d = pyo.Var(domain=pyo.NegativeReals, bounds=(-3, None))
    m.e = pyo.Var(domain=pyo.UnitInterval)
    m.f = pyo.Var(domain=pyo.PercentFraction)
    m.g = pyo.Var(bounds=(m.lo, 2))
    m.h = pyo.Var(domain=pyo.NonNegativeReals, bounds=(-5, 1))
    m.c1 = pyo.Constraint(expr=m.a + m.b * m.c + m.d ** 2 + m.e * m.f + pyo.log(m.g) + m.h <= 40)
    m.obj = pyo.Objective(expr=m.a ** 2 + m.b ** 2 + m.g ** 2 + m.h)
    m._sample_box = (-3.0, 3.0)
    return m


@model
def shared_subexpressions():
    """One Python expression object used in several constraints and the objective."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(-1, 1))
    s = pyo.sin(m.x[1] * m.x[2]) + m.x[3] ** 2
    m.c1 = pyo.Constraint(expr=s * m.x[1] <= 1)
    m.c2 = pyo.Constraint(expr=s + pyo.exp(s) >= 0)
    m.c3 = pyo.Constraint(expr=s ** 2 == 0.5)
    m.obj = pyo.Objective(expr=s * s)
    return m


CORPUS["hs071"] = problems.hs071_pyomo      # Hock-Schittkowski 71 (IPOPT's example)


@model
def acopf_like():
    """Polar power-flow shaped rows: products with cos/sin of angle differences."""
    m = pyo.ConcreteModel()
    m.B = pyo.RangeSet(4)
    lines = [(1, 2), (2, 3), (3, 4), (4, 1), (1, 3)]
    m.L = pyo.Set(initialize=lines, dimen=2)
    m.v = pyo.Var(m.B, bounds=(0.9, 1.1))
    m.th = pyo.Var(m.B, bounds=(-0.5, 0.5))
    m.g = pyo.Param(m.L, initialize=lambda m, i, j: 1.0 + 0.1 * i, mutable=True)
    m.b = pyo.Param(m.L, initialize=lambda m, i, j: -5.0 + 0.3 * j)
    m.pf = pyo.Expression(m.L, rule=lambda m, i, j: m.g[i, j] * m.v[i] ** 2 - m.v[i] * m.v[j] * (
        m.g[i, j] * pyo.cos(m.th[i] - m.th[j]) + m.b[i, j] * pyo.sin(m.th[i] - m.th[j])))
    m.lim = pyo.Constraint(m.L, rule=lambda m, i, j: m.pf[i, j] ** 2 <= 4)
    m.bal = pyo.Constraint(m.B, rule=lambda m, k: sum(m.pf[i, j] for (i, j) in m.L if i == k)
                           - sum(m.pf[i, j] for (i, j) in m.L if j == k) == 0.1 * k)
    m.obj = pyo.Objective(expr=sum(m.pf[i, j] for (i, j) in m.L) + sum(m.v[k] ** 2 for k in m.B))
    return m


@model
def immutable_params():
    """Immutable scalar and indexed Params become constants."""
    m = pyo.ConcreteModel()
    m.s = pyo.Param(initialize=2.0)
    m.t = pyo.Param([1, 2], initialize={1: 3.0, 2: -1.0})
    m.x = pyo.Var([1, 2], bounds=(-2, 2))
    m.c = pyo.Constraint(expr=m.s * m.x[1] ** 2 + m.t[2] * m.x[2] <= m.t[1])
    m.obj = pyo.Objective(expr=m.s * pyo.exp(m.t[2] * m.x[1]) + m.x[2] ** m.s)
    return m


@model
def deep_nesting():
    """A 25-level nested chain (the 20k-deep case is in the tests; Pyomo's symbolic
    Hessian of a deep chain, the reference here, grows quadratically)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], bounds=(-1, 1))
    e = m.x[1]
    for k in range(25):
        e = 0.5 * pyo.sin(e) + 0.001 * m.x[2] * (k % 3)
    m.c = pyo.Constraint(expr=e <= 1)
    m.obj = pyo.Objective(expr=m.x[1] ** 2)
    return m


@model
def single_group_indexed():
    """An IndexedConstraint of many rows with per-row constants (one pattern)."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(30)
    m.x = pyo.Var(m.I, bounds=(-1, 1))
    m.w = pyo.Param(m.I, initialize=lambda m, i: 1.0 + 0.01 * i)
    m.c = pyo.Constraint(m.I, rule=lambda m, i: m.w[i] * m.x[i] ** 2 + pyo.exp(
        m.x[i % 30 + 1]) <= 2 + i)
    m.obj = pyo.Objective(expr=sum((m.x[i] - 0.1 * i) ** 2 for i in m.I))
    return m
