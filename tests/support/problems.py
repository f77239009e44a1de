"""Reference problems that several catalogs share, one definition each (per modeling
layer: CasADi SX and Pyomo), from Hock & Schittkowski 1981 ("Test Examples for Nonlinear
Programming Codes") and Rosenbrock's function.

The catalogs register these rather than restating them: the solver bank
(:mod:`.problem_bank`: ``hs071``, ``rosenbrock``, the chained family), the CasADi adapter
corpus (:mod:`.casadi_corpus`: ``sx_hs071``, ``sx_rosenbrock``), the Pyomo corpus
(:mod:`.pyomo_corpus`: ``hs071``) and the Pyomo solver models
(:mod:`.pyomo_nlp_models`: ``rosenbrock``).  The CasADi forms return ``(nlp, args)``:
the nlp dict and the start and bounds as published (scalars where the problem has one
bound for all)."""

from __future__ import annotations

import numpy as np

INF = np.inf

#: HS071's published optimum
HS071_F_OPT = 17.0140173


def hs071():
    """HS071 (IPOPT's example): min x1 x4 (x1 + x2 + x3) + x3  s.t.  x1 x2 x3 x4 >= 25,
    |x|^2 = 40,  1 <= x <= 5, from (1, 5, 5, 1)."""
    import casadi as cs

    x = cs.SX.sym("x", 4)
    f = x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2]
    g = cs.vertcat(x[0] * x[1] * x[2] * x[3], cs.sumsqr(x))
    return ({"x": x, "f": f, "g": g},
            dict(x0=[1, 5, 5, 1], lbx=1, ubx=5, lbg=[25, 40], ubg=[INF, 40]))


def hs071_pyomo():
    """HS071 as a Pyomo model (indices 1..4, the same start and bounds)."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(pyo.RangeSet(4), bounds=(1, 5), initialize={1: 1, 2: 5, 3: 5, 4: 1})
    x = m.x
    m.obj = pyo.Objective(expr=x[1] * x[4] * (x[1] + x[2] + x[3]) + x[3])
    m.ineq = pyo.Constraint(expr=x[1] * x[2] * x[3] * x[4] >= 25)
    m.eq = pyo.Constraint(expr=sum(x[i] ** 2 for i in x) == 40)
    return m


def rosenbrock_f(x):
    """Rosenbrock's function of the first two entries of ``x``."""
    return 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2


def chained_rosenbrock_f(x):
    """The chained Rosenbrock function sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2 of an
    SX column."""
    import casadi as cs

    return cs.sum1(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock():
    """Unconstrained Rosenbrock from (-1.2, 1) (optimum 0 at (1, 1))."""
    import casadi as cs

    x = cs.SX.sym("x", 2)
    return {"x": x, "f": rosenbrock_f(x)}, dict(x0=[-1.2, 1])


def rosenbrock_pyomo():
    """Unconstrained Rosenbrock from (-1.2, 1) as a Pyomo model: needs ~20 iterations."""
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=-1.2)
    m.y = pyo.Var(initialize=1.0)
    m.obj = pyo.Objective(expr=rosenbrock_f([m.x, m.y]))
    return m
