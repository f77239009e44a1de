"""A bank of NLP test problems as CasADi SX expressions.

Each :class:`BankProblem` has a ``name``, a ``build()`` returning
``dict(x, f, g, x0, lbx, ubx, lbg, ubg)`` (``x`` an SX column, ``g`` an SX column or None,
bounds as lists/arrays, +-inf allowed), the expected status class (``optimal``,
``infeasible``, ``unbounded``; see :mod:`caspar_backend.solver.status`), the published
optimal objective where one is known (Hock & Schittkowski 1981, "Test Examples for Nonlinear
Programming Codes"), and ``slow`` for the large instances.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import casadi as cs
import numpy as np

from tests.support import problems

INF = np.inf


@dataclass(frozen=True)
class BankProblem:
    name: str
    build: Callable[[], dict]
    kind: str = "optimal"
    f_opt: Optional[float] = None
    slow: bool = False
    note: str = ""
    options: tuple = ()        # (name, value) pairs given to both solvers


def registrar(catalog: list):
    """The ``@problem(name, ...)`` decorator that appends a :class:`BankProblem` to
    ``catalog``."""
    def problem(name, kind="optimal", f_opt=None, slow=False, note="", options=()):
        def deco(fn):
            catalog.append(BankProblem(name, fn, kind, f_opt, slow, note, tuple(options)))
            return fn
        return deco
    return problem


BANK: list = []
problem = registrar(BANK)


def _nlp(x, f, g=None, x0=None, lbx=None, ubx=None, lbg=None, ubg=None):
    n = x.numel()
    m = 0 if g is None else cs.vec(g).numel()
    return dict(x=x, f=f, g=g, x0=np.asarray(x0, float),
                lbx=np.full(n, -INF) if lbx is None else np.broadcast_to(np.asarray(lbx, float), (n,)).copy(),
                ubx=np.full(n, INF) if ubx is None else np.broadcast_to(np.asarray(ubx, float), (n,)).copy(),
                lbg=np.zeros(m) if lbg is None else np.broadcast_to(np.asarray(lbg, float), (m,)).copy(),
                ubg=np.zeros(m) if ubg is None else np.broadcast_to(np.asarray(ubg, float), (m,)).copy())


def _x(n):
    return cs.SX.sym("x", n)


_rosen = problems.rosenbrock_f


# ----------------------------------------------------------------- Hock-Schittkowski
@problem("hs001", f_opt=0.0)
def hs001():
    x = _x(2)
    return _nlp(x, _rosen(x), x0=[-2, 1], lbx=[-INF, -1.5])


@problem("hs002", f_opt=None, note="IPOPT and caspar both reach the local minimum f = 4.94 from the standard start")
def hs002():
    x = _x(2)
    return _nlp(x, _rosen(x), x0=[-2, 1], lbx=[-INF, 1.5])


@problem("hs003", f_opt=0.0)
def hs003():
    x = _x(2)
    return _nlp(x, x[1] + 1e-5 * (x[1] - x[0]) ** 2, x0=[10, 1], lbx=[-INF, 0])


@problem("hs004", f_opt=8.0 / 3.0)
def hs004():
    x = _x(2)
    return _nlp(x, (x[0] + 1) ** 3 / 3 + x[1], x0=[1.125, 0.125], lbx=[1, 0])


@problem("hs005", f_opt=-math.sqrt(3) / 2 - math.pi / 3)
def hs005():
    x = _x(2)
    f = cs.sin(x[0] + x[1]) + (x[0] - x[1]) ** 2 - 1.5 * x[0] + 2.5 * x[1] + 1
    return _nlp(x, f, x0=[0, 0], lbx=[-1.5, -3], ubx=[4, 3])


@problem("hs006", f_opt=0.0)
def hs006():
    x = _x(2)
    return _nlp(x, (1 - x[0]) ** 2, 10 * (x[1] - x[0] ** 2), x0=[-1.2, 1])


@problem("hs007", f_opt=-math.sqrt(3))
def hs007():
    x = _x(2)
    return _nlp(x, cs.log(1 + x[0] ** 2) - x[1], (1 + x[0] ** 2) ** 2 + x[1] ** 2 - 4,
                x0=[2, 2])


@problem("hs008", f_opt=-1.0)
def hs008():
    x = _x(2)
    g = cs.vertcat(x[0] ** 2 + x[1] ** 2 - 25, x[0] * x[1] - 9)
    return _nlp(x, -1 + 0 * x[0], g, x0=[2, 1])


@problem("hs009", f_opt=-0.5)
def hs009():
    x = _x(2)
    f = cs.sin(math.pi * x[0] / 12) * cs.cos(math.pi * x[1] / 16)
    return _nlp(x, f, 4 * x[0] - 3 * x[1], x0=[0, 0])


@problem("hs010", f_opt=-1.0)
def hs010():
    x = _x(2)
    g = -3 * x[0] ** 2 + 2 * x[0] * x[1] - x[1] ** 2 + 1
    return _nlp(x, x[0] - x[1], g, x0=[-10, 10], lbg=0, ubg=INF)


@problem("hs011", f_opt=-8.498464223)
def hs011():
    x = _x(2)
    return _nlp(x, (x[0] - 5) ** 2 + x[1] ** 2 - 25, -x[0] ** 2 + x[1], x0=[4.9, 0.1],
                lbg=0, ubg=INF)


@problem("hs012", f_opt=-30.0)
def hs012():
    x = _x(2)
    f = 0.5 * x[0] ** 2 + x[1] ** 2 - x[0] * x[1] - 7 * x[0] - 7 * x[1]
    return _nlp(x, f, 25 - 4 * x[0] ** 2 - x[1] ** 2, x0=[0, 0], lbg=0, ubg=INF)


@problem("hs014", f_opt=9 - 23 * math.sqrt(7) / 8)
def hs014():
    x = _x(2)
    g = cs.vertcat(x[0] - 2 * x[1] + 1, -x[0] ** 2 / 4 - x[1] ** 2 + 1)
    return _nlp(x, (x[0] - 2) ** 2 + (x[1] - 1) ** 2, g, x0=[2, 2], lbg=[0, 0],
                ubg=[0, INF])


@problem("hs015", f_opt=306.5)
def hs015():
    x = _x(2)
    g = cs.vertcat(x[0] * x[1] - 1, x[0] + x[1] ** 2)
    return _nlp(x, _rosen(x), g, x0=[-2, 1], ubx=[0.5, INF], lbg=0, ubg=INF)


@problem("hs016", f_opt=0.25)
def hs016():
    x = _x(2)
    g = cs.vertcat(x[0] + x[1] ** 2, x[0] ** 2 + x[1])
    return _nlp(x, _rosen(x), g, x0=[-2, 1], lbx=[-0.5, -INF], ubx=[0.5, 1], lbg=0,
                ubg=INF)


@problem("hs017", f_opt=1.0)
def hs017():
    x = _x(2)
    g = cs.vertcat(x[1] ** 2 - x[0], x[0] ** 2 - x[1])
    return _nlp(x, _rosen(x), g, x0=[-2, 1], lbx=[-0.5, -INF], ubx=[0.5, 1], lbg=0,
                ubg=INF)


@problem("hs018", f_opt=5.0)
def hs018():
    x = _x(2)
    g = cs.vertcat(x[0] * x[1] - 25, x[0] ** 2 + x[1] ** 2 - 25)
    return _nlp(x, 0.01 * x[0] ** 2 + x[1] ** 2, g, x0=[2, 2], lbx=[2, 0], ubx=[50, 50],
                lbg=0, ubg=INF)


@problem("hs019", f_opt=-6961.81381)
def hs019():
    x = _x(2)
    g = cs.vertcat((x[0] - 5) ** 2 + (x[1] - 5) ** 2 - 100,
                   -(x[1] - 5) ** 2 - (x[0] - 6) ** 2 + 82.81)
    return _nlp(x, (x[0] - 10) ** 3 + (x[1] - 20) ** 3, g, x0=[20.1, 5.84], lbx=[13, 0],
                ubx=[100, 100], lbg=0, ubg=INF)


@problem("hs021", f_opt=-99.96)
def hs021():
    x = _x(2)
    return _nlp(x, 0.01 * x[0] ** 2 + x[1] ** 2 - 100, 10 * x[0] - x[1] - 10, x0=[-1, -1],
                lbx=[2, -50], ubx=[50, 50], lbg=0, ubg=INF)


@problem("hs022", f_opt=1.0)
def hs022():
    x = _x(2)
    g = cs.vertcat(-x[0] - x[1] + 2, -x[0] ** 2 + x[1])
    return _nlp(x, (x[0] - 2) ** 2 + (x[1] - 1) ** 2, g, x0=[2, 2], lbg=0, ubg=INF)


@problem("hs023", f_opt=2.0)
def hs023():
    x = _x(2)
    g = cs.vertcat(x[0] + x[1] - 1, x[0] ** 2 + x[1] ** 2 - 1, 9 * x[0] ** 2 + x[1] ** 2 - 9,
                   x[0] ** 2 - x[1], x[1] ** 2 - x[0])
    return _nlp(x, x[0] ** 2 + x[1] ** 2, g, x0=[3, 1], lbx=-50, ubx=50, lbg=0, ubg=INF)


@problem("hs024", f_opt=-1.0)
def hs024():
    x = _x(2)
    s3 = math.sqrt(3)
    g = cs.vertcat(x[0] / s3 - x[1], x[0] + s3 * x[1], -x[0] - s3 * x[1] + 6)
    f = ((x[0] - 3) ** 2 - 9) * x[1] ** 3 / (27 * s3)
    return _nlp(x, f, g, x0=[1, 0.5], lbx=0, lbg=0, ubg=INF)


@problem("hs027", f_opt=0.04)
def hs027():
    x = _x(3)
    return _nlp(x, 0.01 * (x[0] - 1) ** 2 + (x[1] - x[0] ** 2) ** 2, x[0] + x[2] ** 2 + 1,
                x0=[2, 2, 2])


@problem("hs028", f_opt=0.0)
def hs028():
    x = _x(3)
    return _nlp(x, (x[0] + x[1]) ** 2 + (x[1] + x[2]) ** 2, x[0] + 2 * x[1] + 3 * x[2] - 1,
                x0=[-4, 1, 1])


@problem("hs029", f_opt=-16 * math.sqrt(2))
def hs029():
    x = _x(3)
    return _nlp(x, -x[0] * x[1] * x[2], -x[0] ** 2 - 2 * x[1] ** 2 - 4 * x[2] ** 2 + 48,
                x0=[1, 1, 1], lbg=0, ubg=INF)


@problem("hs030", f_opt=1.0)
def hs030():
    x = _x(3)
    return _nlp(x, cs.sumsqr(x), x[0] ** 2 + x[1] ** 2 - 1, x0=[1, 1, 1],
                lbx=[1, -10, -10], ubx=10, lbg=0, ubg=INF)


@problem("hs031", f_opt=6.0)
def hs031():
    x = _x(3)
    return _nlp(x, 9 * x[0] ** 2 + x[1] ** 2 + 9 * x[2] ** 2, x[0] * x[1] - 1, x0=[1, 1, 1],
                lbx=[-10, 1, -10], ubx=[10, 10, 1], lbg=0, ubg=INF)


@problem("hs032", f_opt=1.0)
def hs032():
    x = _x(3)
    g = cs.vertcat(6 * x[1] + 4 * x[2] - x[0] ** 3 - 3, 1 - x[0] - x[1] - x[2])
    return _nlp(x, (x[0] + 3 * x[1] + x[2]) ** 2 + 4 * (x[0] - x[1]) ** 2, g,
                x0=[0.1, 0.7, 0.2], lbx=0, lbg=[0, 0], ubg=[INF, 0])


@problem("hs033", f_opt=math.sqrt(2) - 6)
def hs033():
    x = _x(3)
    g = cs.vertcat(x[2] ** 2 - x[0] ** 2 - x[1] ** 2, cs.sumsqr(x) - 4)
    return _nlp(x, (x[0] - 1) * (x[0] - 2) * (x[0] - 3) + x[2], g, x0=[0, 0, 3], lbx=0,
                ubx=[INF, INF, 5], lbg=0, ubg=INF)


@problem("hs034", f_opt=-math.log(math.log(10)))
def hs034():
    x = _x(3)
    g = cs.vertcat(x[1] - cs.exp(x[0]), x[2] - cs.exp(x[1]))
    return _nlp(x, -x[0], g, x0=[0, 1.05, 2.9], lbx=0, ubx=[100, 100, 10], lbg=0, ubg=INF)


@problem("hs035", f_opt=1.0 / 9.0)
def hs035():
    x = _x(3)
    f = (9 - 8 * x[0] - 6 * x[1] - 4 * x[2] + 2 * x[0] ** 2 + 2 * x[1] ** 2 + x[2] ** 2
         + 2 * x[0] * x[1] + 2 * x[0] * x[2])
    return _nlp(x, f, 3 - x[0] - x[1] - 2 * x[2], x0=[0.5, 0.5, 0.5], lbx=0, lbg=0, ubg=INF)


@problem("hs036", f_opt=-3300.0)
def hs036():
    x = _x(3)
    return _nlp(x, -x[0] * x[1] * x[2], 72 - x[0] - 2 * x[1] - 2 * x[2], x0=[10, 10, 10],
                lbx=0, ubx=[20, 11, 42], lbg=0, ubg=INF)


@problem("hs037", f_opt=-3456.0)
def hs037():
    x = _x(3)
    g = cs.vertcat(72 - x[0] - 2 * x[1] - 2 * x[2], x[0] + 2 * x[1] + 2 * x[2])
    return _nlp(x, -x[0] * x[1] * x[2], g, x0=[10, 10, 10], lbx=0, ubx=42, lbg=0, ubg=INF)


@problem("hs038", f_opt=0.0)
def hs038():
    x = _x(4)
    f = (100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2 + 90 * (x[3] - x[2] ** 2) ** 2
         + (1 - x[2]) ** 2 + 10.1 * ((x[1] - 1) ** 2 + (x[3] - 1) ** 2)
         + 19.8 * (x[1] - 1) * (x[3] - 1))
    return _nlp(x, f, x0=[-3, -1, -3, -1], lbx=-10, ubx=10)


@problem("hs039", f_opt=-1.0)
def hs039():
    x = _x(4)
    g = cs.vertcat(x[1] - x[0] ** 3 - x[2] ** 2, x[0] ** 2 - x[1] - x[3] ** 2)
    return _nlp(x, -x[0], g, x0=[2, 2, 2, 2])


@problem("hs040", f_opt=-0.25)
def hs040():
    x = _x(4)
    g = cs.vertcat(x[0] ** 3 + x[1] ** 2 - 1, x[0] ** 2 * x[3] - x[2], x[3] ** 2 - x[1])
    return _nlp(x, -x[0] * x[1] * x[2] * x[3], g, x0=[0.8] * 4)


@problem("hs042", f_opt=28 - 10 * math.sqrt(2))
def hs042():
    x = _x(4)
    f = (x[0] - 1) ** 2 + (x[1] - 2) ** 2 + (x[2] - 3) ** 2 + (x[3] - 4) ** 2
    return _nlp(x, f, cs.vertcat(x[0] - 2, x[2] ** 2 + x[3] ** 2 - 2), x0=[1, 1, 1, 1])


@problem("hs043", f_opt=-44.0)
def hs043():
    x = _x(4)
    f = (x[0] ** 2 + x[1] ** 2 + 2 * x[2] ** 2 + x[3] ** 2 - 5 * x[0] - 5 * x[1]
         - 21 * x[2] + 7 * x[3])
    g = cs.vertcat(8 - cs.sumsqr(x) - x[0] + x[1] - x[2] + x[3],
                   10 - x[0] ** 2 - 2 * x[1] ** 2 - x[2] ** 2 - 2 * x[3] ** 2 + x[0] + x[3],
                   5 - 2 * x[0] ** 2 - x[1] ** 2 - x[2] ** 2 - 2 * x[0] + x[1] + x[3])
    return _nlp(x, f, g, x0=[0, 0, 0, 0], lbg=0, ubg=INF)


@problem("hs048", f_opt=0.0)
def hs048():
    x = _x(5)
    f = (x[0] - 1) ** 2 + (x[1] - x[2]) ** 2 + (x[3] - x[4]) ** 2
    g = cs.vertcat(cs.sum1(x) - 5, x[2] - 2 * (x[3] + x[4]) + 3)
    return _nlp(x, f, g, x0=[3, 5, -3, 2, -2])


@problem("hs051", f_opt=0.0)
def hs051():
    x = _x(5)
    f = (x[0] - x[1]) ** 2 + (x[1] + x[2] - 2) ** 2 + (x[3] - 1) ** 2 + (x[4] - 1) ** 2
    g = cs.vertcat(x[0] + 3 * x[1] - 4, x[2] + x[3] - 2 * x[4], x[1] - x[4])
    return _nlp(x, f, g, x0=[2.5, 0.5, 2, -1, 0.5])


@problem("hs052", f_opt=1859.0 / 349.0)
def hs052():
    x = _x(5)
    f = (4 * x[0] - x[1]) ** 2 + (x[1] + x[2] - 2) ** 2 + (x[3] - 1) ** 2 + (x[4] - 1) ** 2
    g = cs.vertcat(x[0] + 3 * x[1], x[2] + x[3] - 2 * x[4], x[1] - x[4])
    return _nlp(x, f, g, x0=[2, 2, 2, 2, 2])


@problem("hs065", f_opt=0.9535288567)
def hs065():
    x = _x(3)
    f = (x[0] - x[1]) ** 2 + (x[0] + x[1] - 10) ** 2 / 9 + (x[2] - 5) ** 2
    return _nlp(x, f, 48 - cs.sumsqr(x), x0=[-5, 5, 0], lbx=[-4.5, -4.5, -5],
                ubx=[4.5, 4.5, 5], lbg=0, ubg=INF)


@problem("hs071", f_opt=problems.HS071_F_OPT)
def hs071():
    nlp, args = problems.hs071()
    return _nlp(nlp["x"], nlp["f"], nlp["g"], **args)


@problem("hs076", f_opt=-4.681818181)
def hs076():
    x = _x(4)
    f = (x[0] ** 2 + 0.5 * x[1] ** 2 + x[2] ** 2 + 0.5 * x[3] ** 2 - x[0] * x[2]
         + x[2] * x[3] - x[0] - 3 * x[1] + x[2] - x[3])
    g = cs.vertcat(5 - x[0] - 2 * x[1] - x[2] - x[3], 4 - 3 * x[0] - x[1] - 2 * x[2] + x[3],
                   x[1] + 4 * x[2] - 1.5)
    return _nlp(x, f, g, x0=[0.5] * 4, lbx=0, lbg=0, ubg=INF)


@problem("hs078", f_opt=-2.91970041)
def hs078():
    x = _x(5)
    g = cs.vertcat(cs.sumsqr(x) - 10, x[1] * x[2] - 5 * x[3] * x[4], x[0] ** 3 + x[1] ** 3 + 1)
    return _nlp(x, x[0] * x[1] * x[2] * x[3] * x[4], g, x0=[-2, 1.5, 2, -1, -1])


@problem("hs079", f_opt=0.0787768209)
def hs079():
    x = _x(5)
    s2 = math.sqrt(2)
    f = ((x[0] - 1) ** 2 + (x[0] - x[1]) ** 2 + (x[1] - x[2]) ** 2 + (x[2] - x[3]) ** 4
         + (x[3] - x[4]) ** 4)
    g = cs.vertcat(x[0] + x[1] ** 2 + x[2] ** 3 - 2 - 3 * s2, x[1] - x[2] ** 2 + x[3] + 2 - 2 * s2,
                   x[0] * x[4] - 2)
    return _nlp(x, f, g, x0=[2] * 5)


# ----------------------------------------------------------------- Rosenbrock family
@problem("rosenbrock", f_opt=0.0)
def rosenbrock():
    nlp, args = problems.rosenbrock()
    return _nlp(nlp["x"], nlp["f"], **args)


def _chained(n, x0=None):
    x = _x(n)
    f = problems.chained_rosenbrock_f(x)
    if x0 is None:
        x0 = np.where(np.arange(n) % 2 == 0, -1.2, 1.0)
    return _nlp(x, f, x0=x0)


def _extended(n):
    x = _x(n)
    xo, xe = x[0::2], x[1::2]
    f = cs.sum1(100 * (xe - xo ** 2) ** 2 + (1 - xo) ** 2)
    x0 = np.where(np.arange(n) % 2 == 0, -1.2, 1.0)
    return _nlp(x, f, x0=x0)


for _n in (10, 100, 1000):
    problem(f"chained_rosenbrock_{_n}", note="local minimum 3.98662 from this start")(lambda n=_n: _chained(n))
# from the alternating start Newton needs O(n) iterations (IPOPT: > 3000 at n = 10^4),
# so the largest instance starts at 0.8 to test size, not patience
problem("chained_rosenbrock_10000", f_opt=0.0, slow=True)(
    lambda: _chained(10000, np.full(10000, 0.8)))
problem("extended_rosenbrock_1000", f_opt=0.0)(lambda: _extended(1000))
problem("extended_rosenbrock_10000", f_opt=0.0, slow=True)(lambda: _extended(10000))


# ----------------------------------------------------------------- structured cases
@problem("equality_only_min_norm", note="min ||x||^2 s.t. A x = b, 50 variables")
def equality_only():
    n, m = 50, 10
    rng = np.random.default_rng(1)
    A = rng.standard_normal((m, n))
    b = rng.standard_normal(m)
    x = _x(n)
    return _nlp(x, cs.sumsqr(x) + cs.sum1(x ** 4) / 4, cs.mtimes(cs.DM(A), x) - cs.DM(b),
                x0=np.zeros(n))


@problem("bound_only_quadratic", note="box-constrained convex quadratic, half the "
         "bounds active")
def bound_only():
    n = 40
    x = _x(n)
    c = np.linspace(-2, 2, n)
    return _nlp(x, cs.sumsqr(x - cs.DM(c)) + 0.1 * cs.sumsqr(x[1:] - x[:-1]),
                x0=np.zeros(n), lbx=-1, ubx=1)


@problem("bound_only_nonconvex", note="nonconvex quartic with bounds")
def bound_only_nonconvex():
    n = 20
    x = _x(n)
    f = cs.sum1(x ** 4 - 3 * x ** 2 + 0.5 * x)
    return _nlp(x, f, x0=np.full(n, 0.3), lbx=-1.5, ubx=1.0)


@problem("degenerate_duplicate_constraints", f_opt=0.5,
         note="linearly dependent equality constraints (LICQ fails everywhere)")
def degenerate_dup():
    x = _x(2)
    g = cs.vertcat(x[0] + x[1] - 1, 2 * x[0] + 2 * x[1] - 2)
    return _nlp(x, cs.sumsqr(x), g, x0=[3, -1])


@problem("fixed_variables", f_opt=None, note="lbx == ubx for two variables")
def fixed_vars():
    x = _x(4)
    f = cs.sumsqr(x - cs.DM([1, 2, 3, 4])) + x[0] * x[1]
    g = x[0] + x[1] + x[2] + x[3]
    return _nlp(x, f, g, x0=[0, 0, 0, 0], lbx=[-INF, 0.5, -INF, 2], ubx=[INF, 0.5, INF, 2],
                lbg=-INF, ubg=6)


@problem("restoration_to_local_infeasibility_wb", kind="infeasible",
         note="Waechter & Biegler (2000) example from x0 = (-2, 1, 1): the restoration "
              "phase ends at the local infeasibility minimizer x1 = -1 (IPOPT 3.14 too)")
def wb_example():
    x = _x(3)
    g = cs.vertcat(x[0] ** 2 - x[1] - 1, x[0] - x[2] - 0.5)
    return _nlp(x, x[0], g, x0=[-2, 1, 1], lbx=[-INF, 0, 0])


@problem("needs_restoration_circle", f_opt=-math.sqrt(2),
         note="min x1 + x2 on the unit circle from (0.1, -3), through the restoration "
              "phase (start_with_resto, as in IPOPT)", options=[("start_with_resto", True)])
def resto_circle():
    x = _x(2)
    return _nlp(x, x[0] + x[1], x[0] ** 2 + x[1] ** 2 - 1, x0=[0.1, -3])


@problem("needs_restoration_exp", note="exp(x1) - x2 = 5, x2 = x3 >= 0 from (-5, 5, 5)",
         options=[("start_with_resto", True)])
def resto_exp():
    x = _x(3)
    g = cs.vertcat(cs.exp(x[0]) - x[1] - 5, x[1] - x[2])
    return _nlp(x, x[0] ** 2 + x[1] ** 2, g, x0=[-5, 5, 5], lbx=[-INF, 0, 0])


@problem("nonconvex_sin_equalities", note="sin(x1) + x2^2 = 1.5, x1 x3 = 2 from (-3, 0, -3)")
def sin_equalities():
    x = _x(3)
    g = cs.vertcat(cs.sin(x[0]) + x[1] ** 2 - 1.5, x[0] * x[2] - 2)
    return _nlp(x, cs.sumsqr(x - 1), g, x0=[-3, 0, -3])


@problem("infeasible_disc_halfplane", kind="infeasible",
         note="x1 + x2 >= 3 and x1^2 + x2^2 <= 1 cannot both hold")
def infeasible():
    x = _x(2)
    g = cs.vertcat(x[0] + x[1], x[0] ** 2 + x[1] ** 2)
    return _nlp(x, cs.sumsqr(x), g, x0=[0.5, 0.5], lbg=[3, -INF], ubg=[INF, 1])


@problem("unbounded_linear", kind="unbounded", note="min -x1 - x2 with x2 <= 1")
def unbounded():
    x = _x(2)
    return _nlp(x, -x[0] - x[1] + 0.01 * x[1] ** 2, x0=[0, 0], ubx=[INF, 1])


@problem("undefined_outside_log_barrier", note="f = -log(1 - x1^2 - x2^2) + linear: NaN "
         "outside the unit disc, no bounds keep the iterates inside")
def undefined_log():
    x = _x(2)
    f = -cs.log(1 - x[0] ** 2 - x[1] ** 2) - 3 * x[0] - 2 * x[1]
    return _nlp(x, f, x0=[0, 0])


@problem("undefined_outside_sqrt", note="sqrt of a quantity that must stay positive")
def undefined_sqrt():
    x = _x(2)
    f = (x[0] - 3) ** 2 + (x[1] - 3) ** 2 - cs.sqrt(4 - x[0] ** 2 - x[1] ** 2) * 10
    return _nlp(x, f, x0=[0.1, 0.1])


@problem("maratos", f_opt=-1.0, note="Maratos effect: needs second-order corrections")
def maratos():
    x = _x(2)
    f = 2 * (x[0] ** 2 + x[1] ** 2 - 1) - x[0]
    return _nlp(x, f, x[0] ** 2 + x[1] ** 2 - 1, x0=[0.6, 0.8])


@problem("optimal_control_200", note="discretized control of x' = x^2 - u, 200 steps")
def optimal_control():
    N, h = 200, 1.0 / 200
    x = _x(N + 1)
    u = cs.SX.sym("u", N)
    f = h * (cs.sumsqr(u) + cs.sumsqr(x[1:] - 1))
    g = cs.vertcat(x[0] - 0.5, x[1:] - x[:-1] - h * (x[:-1] ** 2 - u))
    z = cs.vertcat(x, u)
    return _nlp(z, f, g, x0=np.zeros(2 * N + 1), lbx=np.r_[np.full(N + 1, -INF),
                np.full(N, -2.0)], ubx=np.r_[np.full(N + 1, INF), np.full(N, 2.0)])


@problem("ring_inequalities", note="many inequalities with both sides")
def ring():
    n = 30
    x = _x(n)
    g = x[1:] ** 2 + x[:-1] ** 2
    f = cs.sum1((x - 2) ** 2) + cs.sum1(x[1:] * x[:-1])
    return _nlp(x, f, g, x0=np.full(n, 0.5), lbg=0.5, ubg=2.0)


def bank(include_slow=True):
    return [p for p in BANK if include_slow or not p.slow]
