"""Solvable Pyomo NLPs for the front-end tests (each builder returns a fresh model).

``NLP_MODELS`` maps a name to a builder.  Hock-Schittkowski problems are written
as in the HS collection (W. Hock, K. Schittkowski, *Test Examples for Nonlinear
Programming Codes*, 1981), with their standard starting points; ``KNOWN_OPTIMA``
holds the published optimal values.  The rest cover what the front-end must
map: maximization with ``>=`` rows written right-to-left, ranged rows of every
Pyomo spelling, indexed and nested Blocks, a polar AC optimal power flow with a
fixed angle, and mutable Params.
"""

from __future__ import annotations

import math

import pyomo.environ as pyo

from tests.support import problems

NLP_MODELS: dict = {}
KNOWN_OPTIMA: dict = {}


def nlp(optimum=None):
    def deco(fn):
        NLP_MODELS[fn.__name__] = fn
        if optimum is not None:
            KNOWN_OPTIMA[fn.__name__] = optimum
        return fn
    return deco


@nlp(optimum=0.0)
def hs006():
    """min (1 - x1)^2  s.t.  10 (x2 - x1^2) = 0."""
    m = pyo.ConcreteModel()
    m.x1 = pyo.Var(initialize=-1.2)
    m.x2 = pyo.Var(initialize=1.0)
    m.c = pyo.Constraint(expr=10 * (m.x2 - m.x1 ** 2) == 0)
    m.obj = pyo.Objective(expr=(1 - m.x1) ** 2)
    return m


@nlp(optimum=1.0 / 9.0)
def hs035():
    """Convex QP with one linear <= row and x >= 0."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(0, None), initialize=0.5)
    x = m.x
    m.c = pyo.Constraint(expr=x[1] + x[2] + 2 * x[3] <= 3)
    m.obj = pyo.Objective(expr=9 - 8 * x[1] - 6 * x[2] - 4 * x[3] + 2 * x[1] ** 2
                          + 2 * x[2] ** 2 + x[3] ** 2 + 2 * x[1] * x[2] + 2 * x[1] * x[3])
    return m


@nlp(optimum=-1.0 / 9.0)
def hs035_max():
    """hs035 as a maximization of -f, its row written ``3 >= ...``."""
    m = hs035()
    expr = m.obj.expr
    m.del_component(m.obj)
    m.del_component(m.c)
    x = m.x
    m.c = pyo.Constraint(expr=3 >= x[1] + x[2] + 2 * x[3])
    m.obj = pyo.Objective(expr=-expr, sense=pyo.maximize)
    return m


@nlp(optimum=-0.25)
def hs040():
    """Three nonlinear equalities, product objective."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3, 4], initialize=0.8)
    x = m.x
    m.c1 = pyo.Constraint(expr=x[1] ** 3 + x[2] ** 2 == 1)
    m.c2 = pyo.Constraint(expr=x[1] ** 2 * x[4] - x[3] == 0)
    m.c3 = pyo.Constraint(expr=x[4] ** 2 - x[2] == 0)
    m.obj = pyo.Objective(expr=-x[1] * x[2] * x[3] * x[4])
    return m


@nlp(optimum=-44.0)
def hs043():
    """Rosen-Suzuki: three convex quadratic >= rows."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3, 4], initialize=0.0)
    x = m.x
    m.c1 = pyo.Constraint(expr=8 - x[1] ** 2 - x[2] ** 2 - x[3] ** 2 - x[4] ** 2
                          - x[1] + x[2] - x[3] + x[4] >= 0)
    m.c2 = pyo.Constraint(expr=10 - x[1] ** 2 - 2 * x[2] ** 2 - x[3] ** 2 - 2 * x[4] ** 2
                          + x[1] + x[4] >= 0)
    m.c3 = pyo.Constraint(expr=5 - 2 * x[1] ** 2 - x[2] ** 2 - x[3] ** 2 - 2 * x[1]
                          + x[2] + x[4] >= 0)
    m.obj = pyo.Objective(expr=x[1] ** 2 + x[2] ** 2 + 2 * x[3] ** 2 + x[4] ** 2
                          - 5 * x[1] - 5 * x[2] - 21 * x[3] + 7 * x[4])
    return m


@nlp(optimum=-4.681818181818)
def hs076():
    """QP with <= and >= linear rows and x >= 0 (some bounds active)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3, 4], bounds=(0, None), initialize=0.5)
    x = m.x
    m.c1 = pyo.Constraint(expr=x[1] + 2 * x[2] + x[3] + x[4] <= 5)
    m.c2 = pyo.Constraint(expr=3 * x[1] + x[2] + 2 * x[3] - x[4] <= 4)
    m.c3 = pyo.Constraint(expr=x[2] + 4 * x[3] >= 1.5)
    m.obj = pyo.Objective(expr=x[1] ** 2 + 0.5 * x[2] ** 2 + x[3] ** 2 + 0.5 * x[4] ** 2
                          - x[1] * x[3] + x[3] * x[4] - x[1] - 3 * x[2] + x[3] - x[4])
    return m


@nlp()
def ranged_rows():
    """Ranged rows in each Pyomo spelling, one active at its upper side, one at its
    lower side, one inactive; a variable at an upper bound."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], initialize=0.0)
    m.x[3].setub(0.5)
    x = m.x
    m.r_up = pyo.Constraint(expr=pyo.inequality(0.0, x[1] + x[2], 0.5))
    m.r_lo = pyo.Constraint(expr=(1.0, x[2] - x[3], 4.0))
    m.r_in = pyo.Constraint(expr=pyo.inequality(-10.0, x[1] * x[3], 10.0))
    m.obj = pyo.Objective(expr=(x[1] - 3) ** 2 + (x[2] + 2) ** 2 + (x[3] - 1) ** 2)
    return m


@nlp()
def indexed_blocks():
    """An indexed Block (a nested sub-Block in each) linked by a top-level row."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(3)

    def unit(b, i):
        b.x = pyo.Var(bounds=(0, 4), initialize=1.0)
        b.y = pyo.Var(initialize=1.0)
        b.curve = pyo.Constraint(expr=b.y >= b.x ** 2 - i)
        b.sub = pyo.Block()
        b.sub.z = pyo.Var(bounds=(-1, 1), initialize=0.0)
        b.sub.tie = pyo.Constraint(expr=b.sub.z == 0.1 * i * b.x)
    m.unit = pyo.Block(m.I, rule=unit)
    m.link = pyo.Constraint(expr=sum(m.unit[i].x for i in m.I) == 4)
    m.obj = pyo.Objective(expr=sum(i * m.unit[i].y + (m.unit[i].sub.z - 0.2) ** 2
                                   for i in m.I))
    return m


@nlp()
def acopf_3bus():
    """Polar AC optimal power flow, 3 buses, 2 generators, 3 lines; the reference
    angle is a fixed Var (a parameter, left untouched by the solve)."""
    m = pyo.ConcreteModel()
    buses = [1, 2, 3]
    lines = {(1, 2): (0.01, 0.10), (2, 3): (0.02, 0.15), (1, 3): (0.015, 0.12)}
    pd = {1: 0.0, 2: 0.9, 3: 0.5}
    qd = {1: 0.0, 2: 0.3, 3: 0.1}
    gens = {1: (0.1, 2.0), 3: (0.15, 2.5)}            # bus: (c2, c1)
    g = {(i, j): 0.0 for i in buses for j in buses}
    b = dict(g)
    for (i, j), (r, x) in lines.items():
        z2 = r * r + x * x
        gij, bij = r / z2, -x / z2
        g[i, j] -= gij
        g[j, i] -= gij
        b[i, j] -= bij
        b[j, i] -= bij
        g[i, i] += gij
        g[j, j] += gij
        b[i, i] += bij
        b[j, j] += bij
    m.B = pyo.Set(initialize=buses)
    m.G = pyo.Set(initialize=list(gens))
    m.vm = pyo.Var(m.B, bounds=(0.9, 1.1), initialize=1.0)
    m.va = pyo.Var(m.B, bounds=(-math.pi / 4, math.pi / 4), initialize=0.0)
    m.va[1].fix(0.0)
    m.pg = pyo.Var(m.G, bounds=(0.0, 2.0), initialize=0.7)
    m.qg = pyo.Var(m.G, bounds=(-1.0, 1.0), initialize=0.1)

    def flow(i, kind):
        terms = []
        for j in buses:
            if g[i, j] == 0.0 and b[i, j] == 0.0:
                continue
            d = m.va[i] - m.va[j]
            if kind == "p":
                terms.append(m.vm[i] * m.vm[j] * (g[i, j] * pyo.cos(d) + b[i, j] * pyo.sin(d)))
            else:
                terms.append(m.vm[i] * m.vm[j] * (g[i, j] * pyo.sin(d) - b[i, j] * pyo.cos(d)))
        return sum(terms)

    m.p_bal = pyo.Constraint(m.B, rule=lambda m, i: (m.pg[i] if i in gens else 0.0)
                             - pd[i] == flow(i, "p"))
    m.q_bal = pyo.Constraint(m.B, rule=lambda m, i: (m.qg[i] if i in gens else 0.0)
                             - qd[i] == flow(i, "q"))
    m.obj = pyo.Objective(expr=sum(c2 * m.pg[k] ** 2 + c1 * m.pg[k]
                                   for k, (c2, c1) in gens.items()))
    return m


@nlp()
def param_qp():
    """Mutable Params in the objective, a row's right-hand side and a variable
    bound (re-solved with new values without recompiling)."""
    m = pyo.ConcreteModel()
    m.a = pyo.Param(initialize=1.0, mutable=True)
    m.cap = pyo.Param(initialize=2.0, mutable=True)
    m.lo = pyo.Param(initialize=0.2, mutable=True)
    m.x = pyo.Var(bounds=(m.lo, None), initialize=1.0)
    m.y = pyo.Var(initialize=1.0)
    m.cap_row = pyo.Constraint(expr=m.x + m.y <= m.cap)
    m.obj = pyo.Objective(expr=(m.x - m.a) ** 2 + (m.y - 2 * m.a) ** 2 + 0.1 * m.x * m.y)
    return m


@nlp()
def unused_and_fixed():
    """A fixed Var inside the rows and a Var that appears nowhere (both must keep
    their values)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2], initialize=0.3)
    m.k = pyo.Var(initialize=2.0)
    m.k.fix()
    m.unused = pyo.Var(initialize=7.0)
    m.c = pyo.Constraint(expr=m.k * m.x[1] + m.x[2] >= 1)
    m.obj = pyo.Objective(expr=m.x[1] ** 2 + m.x[2] ** 2)
    return m


# --------------------------------------------------------- status-case models
def infeasible():
    """x^2 + y^2 <= 1 and x + y >= 3: IPOPT converges to a point of local
    infeasibility."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=0.5)
    m.y = pyo.Var(initialize=0.5)
    m.disk = pyo.Constraint(expr=m.x ** 2 + m.y ** 2 <= 1)
    m.far = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=m.x + 2 * m.y)
    return m


rosenbrock = problems.rosenbrock_pyomo


def invalid_start():
    """log and sqrt of a negative starting point: Invalid_Number_Detected."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=-1.0)
    m.obj = pyo.Objective(expr=pyo.sqrt(m.x) + pyo.log(m.x))
    return m


def overdetermined():
    """Two equalities in one variable: too few degrees of freedom."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.0)
    m.c1 = pyo.Constraint(expr=m.x ** 2 == 1)
    m.c2 = pyo.Constraint(expr=m.x ** 3 == 1)
    m.obj = pyo.Objective(expr=m.x)
    return m


# not one of NLP_MODELS (no decorator): a helper of the option tests
def one_variable():
    """min (x - 2)^2 from x = 1.5: the least model a solver option test needs."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=1.5)
    m.o = pyo.Objective(expr=(m.x - 2) ** 2)
    return m
