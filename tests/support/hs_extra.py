"""More Hock-Schittkowski problems (not in :mod:`.problem_bank`) as CasADi SX expressions.

Written from the published formulations (W. Hock, K. Schittkowski, "Test Examples for
Nonlinear Programming Codes", LNEMS 187, 1981, and Schittkowski's 1987 collection):
objective, constraints, bounds, the standard start point and the published optimal
objective.  Same :class:`.problem_bank.BankProblem` format as the main bank; ``f_opt`` is
left ``None`` (with a ``note``) where the standard start leads IPOPT to a different local
solution than the published one.
"""

from __future__ import annotations

import math

import casadi as cs

from tests.support.problem_bank import INF, _nlp, _x, registrar

HS_EXTRA: list = []
problem = registrar(HS_EXTRA)


def hs_extra(include_slow=True):
    return [p for p in HS_EXTRA if include_slow or not p.slow]


def _sum(terms):
    out = 0
    for t in terms:
        out = out + t
    return out


# --------------------------------------------------------------------------- 1-20
@problem("hs013", f_opt=None,
         note="published optimum f = 1 at the cusp (1, 0) where the constraint qualification "
              "fails; both solvers stop slightly infeasible below f = 1")
def hs013():
    x = _x(2)
    f = (x[0] - 2) ** 2 + x[1] ** 2
    g = (1 - x[0]) ** 3 - x[1]
    return _nlp(x, f, g, x0=[-2, -2], lbx=[0, 0], ubg=[INF])


@problem("hs020", f_opt=None,
         note="published optimum 81.5 - 25 sqrt(3) = 38.1987 at (0.5, sqrt(3)/2); from the "
              "standard start IPOPT and caspar end at the local minimum (-0.5, sqrt(3)/2), "
              "f = 40.1987")
def hs020():
    x = _x(2)
    f = 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
    g = cs.vertcat(x[0] + x[1] ** 2, x[0] ** 2 + x[1], x[0] ** 2 + x[1] ** 2 - 1)
    return _nlp(x, f, g, x0=[-2, 1], lbx=[-0.5, -INF], ubx=[0.5, INF], ubg=[INF] * 3)


# -------------------------------------------------------------------------- 21-40
@problem("hs025", f_opt=0.0)
def hs025():
    x = _x(3)
    terms = []
    for i in range(1, 100):
        u = 25 + (-50 * math.log(0.01 * i)) ** (2.0 / 3.0)
        terms.append((-0.01 * i + cs.exp(-1 / x[0] * (u - x[1]) ** x[2])) ** 2)
    return _nlp(x, _sum(terms), x0=[100, 12.5, 3], lbx=[0.1, 0, 0], ubx=[100, 25.6, 5])


@problem("hs026", f_opt=0.0)
def hs026():
    x = _x(3)
    f = (x[0] - x[1]) ** 2 + (x[1] - x[2]) ** 4
    g = (1 + x[1] ** 2) * x[0] + x[2] ** 4 - 3
    return _nlp(x, f, g, x0=[-2.6, 2, 2])


# -------------------------------------------------------------------------- 41-60
@problem("hs041", f_opt=52.0 / 27.0)
def hs041():
    x = _x(4)
    f = 2 - x[0] * x[1] * x[2]
    g = x[0] + 2 * x[1] + 2 * x[2] - x[3]
    return _nlp(x, f, g, x0=[2, 2, 2, 2], lbx=0, ubx=[1, 1, 1, 2])


@problem("hs044", f_opt=None,
         note="published global optimum -15; IPOPT and caspar reach the local vertex f = -13")
def hs044():
    x = _x(4)
    f = (x[0] - x[1] - x[2] - x[0] * x[2] + x[0] * x[3] + x[1] * x[2] - x[1] * x[3])
    g = cs.vertcat(x[0] + 2 * x[1], 4 * x[0] + x[1], 3 * x[0] + 4 * x[1],
                   2 * x[2] + x[3], x[2] + 2 * x[3], x[2] + x[3])
    return _nlp(x, f, g, x0=[0, 0, 0, 0], lbx=0, lbg=-INF, ubg=[8, 12, 12, 8, 8, 5])


@problem("hs045", f_opt=1.0)
def hs045():
    x = _x(5)
    f = 2 - x[0] * x[1] * x[2] * x[3] * x[4] / 120
    return _nlp(x, f, x0=[2] * 5, lbx=0, ubx=[1, 2, 3, 4, 5])


@problem("hs046", f_opt=0.0)
def hs046():
    x = _x(5)
    f = (x[0] - x[1]) ** 2 + (x[2] - 1) ** 2 + (x[3] - 1) ** 4 + (x[4] - 1) ** 6
    g = cs.vertcat(x[0] ** 2 * x[3] + cs.sin(x[3] - x[4]) - 1,
                   x[1] + x[2] ** 4 * x[3] ** 2 - 2)
    return _nlp(x, f, g, x0=[0.5 * math.sqrt(2), 1.75, 0.5, 2, 2])


@problem("hs047", f_opt=0.0)
def hs047():
    x = _x(5)
    f = ((x[0] - x[1]) ** 2 + (x[1] - x[2]) ** 3 + (x[2] - x[3]) ** 4
         + (x[3] - x[4]) ** 4)
    g = cs.vertcat(x[0] + x[1] ** 2 + x[2] ** 3 - 3,
                   x[1] - x[2] ** 2 + x[3] - 1,
                   x[0] * x[4] - 1)
    return _nlp(x, f, g, x0=[2, math.sqrt(2), -1, 2 - math.sqrt(2), 0.5])


@problem("hs049", f_opt=0.0)
def hs049():
    x = _x(5)
    f = (x[0] - x[1]) ** 2 + (x[2] - 1) ** 2 + (x[3] - 1) ** 4 + (x[4] - 1) ** 6
    g = cs.vertcat(x[0] + x[1] + x[2] + 4 * x[3] - 7, x[2] + 5 * x[4] - 6)
    return _nlp(x, f, g, x0=[10, 7, 2, -3, 0.8])


@problem("hs050", f_opt=0.0)
def hs050():
    x = _x(5)
    f = ((x[0] - x[1]) ** 2 + (x[1] - x[2]) ** 2 + (x[2] - x[3]) ** 4
         + (x[3] - x[4]) ** 2)
    g = cs.vertcat(x[0] + 2 * x[1] + 3 * x[2] - 6,
                   x[1] + 2 * x[2] + 3 * x[3] - 6,
                   x[2] + 2 * x[3] + 3 * x[4] - 6)
    return _nlp(x, f, g, x0=[35, -31, 11, 5, -5])


@problem("hs053", f_opt=176.0 / 43.0)
def hs053():
    x = _x(5)
    f = (x[0] - x[1]) ** 2 + (x[1] + x[2] - 2) ** 2 + (x[3] - 1) ** 2 + (x[4] - 1) ** 2
    g = cs.vertcat(x[0] + 3 * x[1], x[2] + x[3] - 2 * x[4], x[1] - x[4])
    return _nlp(x, f, g, x0=[2] * 5, lbx=-10, ubx=10)


@problem("hs054", f_opt=-math.exp(-27.0 / 280.0))
def hs054():
    x = _x(6)
    h = (((x[0] - 1e4) ** 2 / 6.4e7 + (x[0] - 1e4) * (x[1] - 1) / 2e4 + (x[1] - 1) ** 2) / 0.96
         + (x[2] - 2e6) ** 2 / 4.9e13 + (x[3] - 10) ** 2 / 2500 + (x[4] - 1e-3) ** 2 / 2.5e-3
         + (x[5] - 1e8) ** 2 / 2.5e17)
    g = x[0] + 4000 * x[1] - 17600
    return _nlp(x, -cs.exp(-h / 2), g, x0=[6e3, 1.5, 4e6, 2, 3e-3, 5e7],
                lbx=[0, -10, 0, 0, -1, 0], ubx=[2e4, 10, 1e7, 20, 1, 2e8])


@problem("hs055", f_opt=None,
         note="six linear equalities of rank five (one is redundant); published optimum "
              "19/3 at (0, 4/3, 5/3, 1, 2/3, 1/3); IPOPT and caspar reach the local vertex "
              "(1, 5/3, 1/3, 0, 1/3, 5/3), f = 20/3")
def hs055():
    x = _x(6)
    f = x[0] + 2 * x[1] + 4 * x[4] + cs.exp(x[0] * x[3])
    g = cs.vertcat(x[0] + 2 * x[1] + 5 * x[4] - 6,
                   x[0] + x[1] + x[2] - 3,
                   x[3] + x[4] + x[5] - 2,
                   x[0] + x[3] - 1,
                   x[1] + x[4] - 2,
                   x[2] + x[5] - 2)
    return _nlp(x, f, g, x0=[1, 2, 0, 0, 0, 2], lbx=0, ubx=[1, INF, INF, 1, INF, INF])


@problem("hs056", f_opt=-3.456)
def hs056():
    x = _x(7)
    f = -x[0] * x[1] * x[2]
    s2 = lambda v: cs.sin(v) ** 2  # noqa: E731
    g = cs.vertcat(x[0] - 4.2 * s2(x[3]), x[1] - 4.2 * s2(x[4]), x[2] - 4.2 * s2(x[5]),
                   x[0] + 2 * x[1] + 2 * x[2] - 7.2 * s2(x[6]))
    a = math.asin(math.sqrt(1 / 4.2))
    b = math.asin(math.sqrt(5 / 7.2))
    return _nlp(x, f, g, x0=[1, 1, 1, a, a, a, b])


_HS057_A = [8, 8, 10, 10, 10, 10, 12, 12, 12, 12, 14, 14, 14, 16, 16, 16, 18, 18, 20, 20,
            20, 22, 22, 22, 24, 24, 24, 26, 26, 26, 28, 28, 30, 30, 30, 32, 32, 34, 36, 36,
            38, 38, 40, 42]
_HS057_B = [0.49, 0.49, 0.48, 0.47, 0.48, 0.47, 0.46, 0.46, 0.45, 0.43, 0.45, 0.43, 0.43,
            0.44, 0.43, 0.43, 0.46, 0.45, 0.42, 0.42, 0.43, 0.41, 0.41, 0.40, 0.42, 0.40,
            0.40, 0.41, 0.40, 0.41, 0.41, 0.40, 0.40, 0.40, 0.38, 0.41, 0.40, 0.40, 0.41,
            0.38, 0.40, 0.40, 0.39, 0.39]


@problem("hs057", f_opt=None,
         note="published optimum 0.02845966972 at (0.41995, 1.28485) (this formulation gives "
              "0.0284597 there); IPOPT and caspar run off along x2 -> ~1.9e5, f = 0.0306476")
def hs057():
    x = _x(2)
    f = _sum((b - x[0] - (0.49 - x[0]) * cs.exp(-x[1] * (a - 8))) ** 2
             for a, b in zip(_HS057_A, _HS057_B))
    g = 0.49 * x[1] - x[0] * x[1] - 0.09
    return _nlp(x, f, g, x0=[0.42, 5], lbx=[0.4, -4], ubg=[INF])


@problem("hs059", f_opt=None,
         note="published f* = -7.804226324 at (13.55010424, 51.66018129), but the published "
              "formula gives -7.8027799 there; IPOPT and caspar reach the same vertex, "
              "f = -7.80278947")
def hs059():
    x = _x(2)
    u, v = x[0], x[1]
    f = (-75.196 + 3.8112 * u + 0.0020567 * u ** 3 - 1.0345e-5 * u ** 4 + 6.8306 * v
         - 0.030234 * u * v + 1.28134e-3 * v * u ** 2 + 2.266e-7 * u ** 4 * v
         - 0.25645 * v ** 2 + 0.0034604 * v ** 3 - 1.3514e-5 * v ** 4 + 28.106 / (v + 1)
         + 5.2375e-6 * u ** 2 * v ** 2 + 6.3e-8 * u ** 3 * v ** 2 - 7e-10 * u ** 3 * v ** 3
         - 3.405e-4 * u * v ** 2 + 1.6638e-6 * u * v ** 3 + 2.8673 * cs.exp(0.0005 * u * v)
         - 3.5256e-5 * u ** 3 * v - 0.12694 * u ** 2)
    g = cs.vertcat(u * v - 700, v - u ** 2 / 125, (v - 50) ** 2 - 5 * (u - 55))
    return _nlp(x, f, g, x0=[90, 10], lbx=0, ubx=[75, 65], ubg=[INF] * 3)


@problem("hs060", f_opt=0.03256820025)
def hs060():
    x = _x(3)
    f = (x[0] - 1) ** 2 + (x[0] - x[1]) ** 2 + (x[1] - x[2]) ** 4
    g = x[0] * (1 + x[1] ** 2) + x[2] ** 4 - 4 - 3 * math.sqrt(2)
    return _nlp(x, f, g, x0=[2, 2, 2], lbx=-10, ubx=10)


# -------------------------------------------------------------------------- 61-80
@problem("hs061", f_opt=-143.6461422)
def hs061():
    x = _x(3)
    f = 4 * x[0] ** 2 + 2 * x[1] ** 2 + 2 * x[2] ** 2 - 33 * x[0] + 16 * x[1] - 24 * x[2]
    g = cs.vertcat(3 * x[0] - 2 * x[1] ** 2 - 7, 4 * x[0] - x[2] ** 2 - 11)
    return _nlp(x, f, g, x0=[0, 0, 0])


@problem("hs062", f_opt=-26272.51448)
def hs062():
    x = _x(3)
    f = -32.174 * (255 * cs.log((x[0] + x[1] + x[2] + 0.03)
                                / (0.09 * x[0] + x[1] + x[2] + 0.03))
                   + 280 * cs.log((x[1] + x[2] + 0.03) / (0.07 * x[1] + x[2] + 0.03))
                   + 290 * cs.log((x[2] + 0.03) / (0.13 * x[2] + 0.03)))
    g = x[0] + x[1] + x[2] - 1
    return _nlp(x, f, g, x0=[0.7, 0.2, 0.1], lbx=0, ubx=1)


@problem("hs063", f_opt=961.7151721)
def hs063():
    x = _x(3)
    f = 1000 - x[0] ** 2 - 2 * x[1] ** 2 - x[2] ** 2 - x[0] * x[1] - x[0] * x[2]
    g = cs.vertcat(8 * x[0] + 14 * x[1] + 7 * x[2] - 56,
                   x[0] ** 2 + x[1] ** 2 + x[2] ** 2 - 25)
    return _nlp(x, f, g, x0=[2, 2, 2], lbx=0)


@problem("hs064", f_opt=6299.842428)
def hs064():
    x = _x(3)
    f = (5 * x[0] + 50000 / x[0] + 20 * x[1] + 72000 / x[1] + 10 * x[2]
         + 144000 / x[2])
    g = 1 - 4 / x[0] - 32 / x[1] - 120 / x[2]
    return _nlp(x, f, g, x0=[1, 1, 1], lbx=1e-5, ubg=[INF])


@problem("hs066", f_opt=0.5181632741)
def hs066():
    x = _x(3)
    f = 0.2 * x[2] - 0.8 * x[0]
    g = cs.vertcat(x[1] - cs.exp(x[0]), x[2] - cs.exp(x[1]))
    return _nlp(x, f, g, x0=[0, 1.05, 2.9], lbx=0, ubx=[100, 100, 10], ubg=[INF] * 2)


def _hs068_069(a, b, d, n):
    x = _x(4)
    phi = lambda t: 0.5 * (1 + cs.erf(t / math.sqrt(2)))  # noqa: E731  (normal cdf)
    e1 = cs.exp(x[0]) - 1
    f = (a * n - (b * e1 - x[2]) * x[3] / (e1 + x[3])) / x[0]
    s = d * math.sqrt(n)
    g = cs.vertcat(x[2] - 2 * phi(-x[1]), x[3] - phi(-x[1] + s) - phi(-x[1] - s))
    return _nlp(x, f, g, x0=[1, 1, 1, 1], lbx=[1e-4, 0, 0, 0], ubx=[100, 100, 2, 2])


@problem("hs068", f_opt=-0.920425026)
def hs068():
    return _hs068_069(1e-4, 1.0, 1.0, 24)


@problem("hs069", f_opt=-956.71288)
def hs069():
    return _hs068_069(0.1, 1000.0, 1.0, 4)


@problem("hs072", f_opt=727.67937)
def hs072():
    x = _x(4)
    f = 1 + x[0] + x[1] + x[2] + x[3]
    g = cs.vertcat(0.0401 - 4 / x[0] - 2.25 / x[1] - 1 / x[2] - 0.25 / x[3],
                   0.010085 - 0.16 / x[0] - 0.36 / x[1] - 0.64 / x[2] - 0.64 / x[3])
    return _nlp(x, f, g, x0=[1] * 4, lbx=0.001, ubx=[4e5, 3e5, 2e5, 1e5], ubg=[INF] * 2)


@problem("hs073", f_opt=29.894378)
def hs073():
    x = _x(4)
    f = 24.55 * x[0] + 26.75 * x[1] + 39 * x[2] + 40.5 * x[3]
    g = cs.vertcat(2.3 * x[0] + 5.6 * x[1] + 11.1 * x[2] + 1.3 * x[3] - 5,
                   12 * x[0] + 11.9 * x[1] + 41.8 * x[2] + 52.1 * x[3] - 21
                   - 1.645 * cs.sqrt(0.28 * x[0] ** 2 + 0.19 * x[1] ** 2
                                     + 20.5 * x[2] ** 2 + 0.62 * x[3] ** 2),
                   x[0] + x[1] + x[2] + x[3] - 1)
    return _nlp(x, f, g, x0=[1] * 4, lbx=0, lbg=[0, 0, 0], ubg=[INF, INF, 0])


def _hs074_075(a):
    x = _x(4)
    f = 3 * x[0] + 1e-6 * x[0] ** 3 + 2 * x[1] + (2e-6 / 3) * x[1] ** 3
    g = cs.vertcat(x[3] - x[2] + a, x[2] - x[3] + a,
                   1000 * cs.sin(-x[2] - 0.25) + 1000 * cs.sin(-x[3] - 0.25) + 894.8 - x[0],
                   1000 * cs.sin(x[2] - 0.25) + 1000 * cs.sin(x[2] - x[3] - 0.25) + 894.8
                   - x[1],
                   1000 * cs.sin(x[3] - 0.25) + 1000 * cs.sin(x[3] - x[2] - 0.25) + 1294.8)
    return _nlp(x, f, g, x0=[0] * 4, lbx=[0, 0, -a, -a], ubx=[1200, 1200, a, a],
                lbg=0, ubg=[INF, INF, 0, 0, 0])


@problem("hs074", f_opt=5126.4981)
def hs074():
    return _hs074_075(0.55)


@problem("hs075", f_opt=5174.4129)
def hs075():
    return _hs074_075(0.48)


@problem("hs077", f_opt=0.24150513)
def hs077():
    x = _x(5)
    f = ((x[0] - 1) ** 2 + (x[0] - x[1]) ** 2 + (x[2] - 1) ** 2 + (x[3] - 1) ** 4
         + (x[4] - 1) ** 6)
    g = cs.vertcat(x[0] ** 2 * x[3] + cs.sin(x[3] - x[4]) - 2 * math.sqrt(2),
                   x[1] + x[2] ** 4 * x[3] ** 2 - 8 - math.sqrt(2))
    return _nlp(x, f, g, x0=[2] * 5)


def _hs080_081_g(x):
    return cs.vertcat(cs.sumsqr(x) - 10, x[1] * x[2] - 5 * x[3] * x[4],
                      x[0] ** 3 + x[1] ** 3 + 1)


@problem("hs080", f_opt=0.0539498478)
def hs080():
    x = _x(5)
    f = cs.exp(x[0] * x[1] * x[2] * x[3] * x[4])
    return _nlp(x, f, _hs080_081_g(x), x0=[-2, 2, 2, -1, -1],
                lbx=[-2.3, -2.3, -3.2, -3.2, -3.2], ubx=[2.3, 2.3, 3.2, 3.2, 3.2])


@problem("hs081", f_opt=0.0539498478)
def hs081():
    x = _x(5)
    f = (cs.exp(x[0] * x[1] * x[2] * x[3] * x[4])
         - 0.5 * (x[0] ** 3 + x[1] ** 3 + 1) ** 2)
    return _nlp(x, f, _hs080_081_g(x), x0=[-2, 2, 2, -1, -1],
                lbx=[-2.3, -2.3, -3.2, -3.2, -3.2], ubx=[2.3, 2.3, 3.2, 3.2, 3.2])


# ------------------------------------------------------------------------- 81-119
@problem("hs083", f_opt=-30665.53867)
def hs083():
    x = _x(5)
    f = (5.3578547 * x[2] ** 2 + 0.8356891 * x[0] * x[4] + 37.293239 * x[0]
         - 40792.141)
    g = cs.vertcat(
        85.334407 + 0.0056858 * x[1] * x[4] + 0.0006262 * x[0] * x[3]
        - 0.0022053 * x[2] * x[4],
        80.51249 + 0.0071317 * x[1] * x[4] + 0.0029955 * x[0] * x[1]
        + 0.0021813 * x[2] ** 2,
        9.300961 + 0.0047026 * x[2] * x[4] + 0.0012547 * x[0] * x[2]
        + 0.0019085 * x[2] * x[3])
    return _nlp(x, f, g, x0=[78, 33, 27, 27, 27], lbx=[78, 33, 27, 27, 27],
                ubx=[102, 45, 45, 45, 45], lbg=[0, 90, 20], ubg=[92, 110, 25])


_HS084_A = [-24345, -8720288.849, 150512.5253, -156.6950325, 476470.3222, 729482.8271,
            -145421.402, 2931.1506, -40.427932, 5106.192, 15711.36, -155011.1084, 4360.53352,
            12.9492344, 10236.884, 13176.786, -326669.5104, 7390.68412, -27.8986976, 16643.076,
            30988.146]


@problem("hs084", f_opt=-5280335.133)
def hs084():
    x = _x(5)
    a = _HS084_A

    def lin(k):  # a_k x1 + a_{k+1} x1 x2 + ... + a_{k+4} x1 x5  (k 0-based)
        return x[0] * (a[k] + a[k + 1] * x[1] + a[k + 2] * x[2] + a[k + 3] * x[3]
                       + a[k + 4] * x[4])

    f = -a[0] - lin(1)
    g = cs.vertcat(lin(6), lin(11), lin(16))
    return _nlp(x, f, g, x0=[2.52, 2, 37.5, 9.25, 6.8], lbx=[0, 1.2, 20, 9, 6.5],
                ubx=[1000, 2.4, 60, 9.3, 7], lbg=0, ubg=[294000, 294000, 277200])


_HS086_A = [[-16, 2, 0, 1, 0], [0, -2, 0, 4, 2], [-3.5, 0, 2, 0, 0], [0, -2, 0, -4, -1],
            [0, -9, -2, 1, -2.8], [2, 0, -4, 0, 0], [-1, -1, -1, -1, -1],
            [-1, -2, -3, -2, -1], [1, 2, 3, 4, 5], [1, 1, 1, 1, 1]]
_HS086_B = [-40, -2, -0.25, -4, -4, -1, -40, -60, 5, 1]
_HS086_C = [[30, -20, -10, 32, -10], [-20, 39, -6, -31, 32], [-10, -6, 10, -6, -10],
            [32, -31, -6, 39, -20], [-10, 32, -10, -20, 30]]
_HS086_D = [4, 8, 10, 6, 2]
_HS086_E = [-15, -27, -36, -18, -12]


@problem("hs086", f_opt=-32.34867897)
def hs086():
    x = _x(5)
    f = (_sum(_HS086_E[j] * x[j] + _HS086_D[j] * x[j] ** 3 for j in range(5))
         + _sum(_HS086_C[i][j] * x[i] * x[j] for i in range(5) for j in range(5)))
    g = cs.vertcat(*[_sum(a[j] * x[j] for j in range(5)) - b
                     for a, b in zip(_HS086_A, _HS086_B)])
    return _nlp(x, f, g, x0=[0, 0, 0, 0, 1], lbx=0, ubg=[INF] * 10)


@problem("hs093", f_opt=135.075961)
def hs093():
    x = _x(6)
    p = x[0] * x[3] * (x[0] + x[1] + x[2])
    q = x[1] * x[2] * (x[0] + 1.57 * x[1] + x[3])
    f = 0.0204 * p + 0.0187 * q + 0.0607 * p * x[4] ** 2 + 0.0437 * q * x[5] ** 2
    g = cs.vertcat(0.001 * x[0] * x[1] * x[2] * x[3] * x[4] * x[5] - 2.07,
                   1 - 0.00062 * p * x[4] ** 2 - 0.00058 * q * x[5] ** 2)
    return _nlp(x, f, g, x0=[5.54, 4.4, 12.02, 11.82, 0.702, 0.852], lbx=0, ubg=[INF] * 2)


def _hs095_098(b):
    x = _x(6)
    f = 4.3 * x[0] + 31.8 * x[1] + 63.3 * x[2] + 15.8 * x[3] + 68.5 * x[4] + 4.7 * x[5]
    g = cs.vertcat(
        17.1 * x[0] + 38.2 * x[1] + 204.2 * x[2] + 212.3 * x[3] + 623.4 * x[4]
        + 1495.5 * x[5] - 169 * x[0] * x[2] - 3580 * x[2] * x[4] - 3810 * x[3] * x[4]
        - 18500 * x[3] * x[5] - 24300 * x[4] * x[5],
        17.9 * x[0] + 36.8 * x[1] + 113.9 * x[2] + 169.7 * x[3] + 337.8 * x[4]
        + 1385.2 * x[5] - 139 * x[0] * x[2] - 2450 * x[3] * x[4] - 16600 * x[3] * x[5]
        - 17200 * x[4] * x[5],
        -273 * x[1] - 70 * x[3] - 819 * x[4] + 26000 * x[3] * x[4],
        159.9 * x[0] - 311 * x[1] + 587 * x[3] + 391 * x[4] + 2198 * x[5]
        - 14000 * x[0] * x[5])
    return _nlp(x, f, g, x0=[0] * 6, lbx=0, ubx=[0.31, 0.046, 0.068, 0.042, 0.028, 0.0134],
                lbg=b, ubg=[INF] * 4)


@problem("hs095", f_opt=None,
         note="published f* = 0.015619514 with x1..x5 at their lower bounds 0; the default "
              "bound relaxation (1e-8) of both solvers puts them at -1e-8 and f = 0.01561773, "
              "1.8e-6 below (with bound_relax_factor 0 IPOPT gives 0.01561954)")
def hs095():
    return _hs095_098([4.97, -1.88, -29.08, -78.02])


@problem("hs096", f_opt=None,
         note="as hs095: published f* = 0.015619514; default bound relaxation gives "
              "f = 0.01561773 in both solvers")
def hs096():
    return _hs095_098([4.97, -1.88, -69.08, -118.02])


@problem("hs097", f_opt=None,
         note="published f* = 3.1358091 with x5, x6 at their upper bounds; the default bound "
              "relaxation (1e-8) of both solvers gives f = 3.13580576, 3.4e-6 below (with "
              "bound_relax_factor 0 IPOPT gives 3.13580913)")
def hs097():
    return _hs095_098([32.97, 25.12, -29.08, -78.02])


@problem("hs098", f_opt=None,
         note="as hs097: published f* = 3.1358091; default bound relaxation gives "
              "f = 3.13580576 in both solvers")
def hs098():
    return _hs095_098([32.97, 25.12, -124.08, -173.02])


@problem("hs099", f_opt=-0.831079892e9)
def hs099():
    x = _x(7)
    a = [0, 50, 50, 75, 75, 75, 100, 100]
    t = [0, 25, 50, 100, 150, 200, 290, 380]
    r = s = q = 0
    for i in range(1, 8):
        dt = t[i] - t[i - 1]
        acc = a[i] * cs.sin(x[i - 1]) - 32
        r = r + a[i] * dt * cs.cos(x[i - 1])
        q = q + 0.5 * dt ** 2 * acc + dt * s
        s = s + dt * acc
    g = cs.vertcat(q - 1e5, s - 1e3)
    return _nlp(x, -r ** 2, g, x0=[0.5] * 7, lbx=0, ubx=1.58)


@problem("hs100", f_opt=680.6300573)
def hs100():
    x = _x(7)
    f = ((x[0] - 10) ** 2 + 5 * (x[1] - 12) ** 2 + x[2] ** 4 + 3 * (x[3] - 11) ** 2
         + 10 * x[4] ** 6 + 7 * x[5] ** 2 + x[6] ** 4 - 4 * x[5] * x[6] - 10 * x[5]
         - 8 * x[6])
    g = cs.vertcat(
        127 - 2 * x[0] ** 2 - 3 * x[1] ** 4 - x[2] - 4 * x[3] ** 2 - 5 * x[4],
        282 - 7 * x[0] - 3 * x[1] - 10 * x[2] ** 2 - x[3] + x[4],
        196 - 23 * x[0] - x[1] ** 2 - 6 * x[5] ** 2 + 8 * x[6],
        -4 * x[0] ** 2 - x[1] ** 2 + 3 * x[0] * x[1] - 2 * x[2] ** 2 - 5 * x[5]
        + 11 * x[6])
    return _nlp(x, f, g, x0=[1, 2, 0, 4, 0, 1, 1], ubg=[INF] * 4)


def _mono(x, coef, exps):
    out = coef
    for xi, e in zip(x, exps):
        if e != 0:
            out = out * (xi if e == 1 else xi ** e)
    return out


def _hs101_103(a):
    x = _x(7)
    xs = [x[i] for i in range(7)]
    f = (_mono(xs, 10, [1, -1, 0, 2, 0, -3, a]) + _mono(xs, 15, [-1, -2, 1, 1, -1, 0, -0.5])
         + _mono(xs, 20, [-2, 1, 0, -1, -2, 1, 0]) + _mono(xs, 25, [2, 2, -1, 0, 0.5, -2, 1]))
    g = cs.vertcat(
        1 - _mono(xs, 0.5, [0.5, 0, -1, 0, 0, -2, 1]) - _mono(xs, 0.7, [3, 1, -2, 0, 0, 1, 0.5])
        - _mono(xs, 0.2, [0, -1, 1, -0.5, 0, 2 / 3, 0.25]),
        1 - _mono(xs, 1.3, [-0.5, 1, -1, 0, -1, 1, 0]) - _mono(xs, 0.8, [0, 0, 1, -1, -1, 2, 0])
        - _mono(xs, 3.1, [-1, 0.5, 0, -2, -1, 1 / 3, 0]),
        1 - _mono(xs, 2, [1, 0, -1.5, 0, 1, -1, 1 / 3])
        - _mono(xs, 0.1, [0, 1, -0.5, 0, 1, -1, -0.5]) - _mono(xs, 1, [-1, 1, 0.5, 0, 1, 0, 0])
        - _mono(xs, 0.65, [0, -2, 1, 0, 1, -1, 1]),
        1 - _mono(xs, 0.2, [-2, 1, 0, -1, 0.5, 0, 1 / 3])
        - _mono(xs, 0.3, [0.5, 2, 1, 1 / 3, -2 / 3, 0, 0.25])
        - _mono(xs, 0.4, [-3, -2, 1, 0, 1, 0, 0.75]) - _mono(xs, 0.5, [0, 0, -2, 1, 0, 0, 0.5]),
        f)
    return _nlp(x, f, g, x0=[6] * 7, lbx=[0.1] * 6 + [0.01], ubx=10,
                lbg=[0, 0, 0, 0, 100], ubg=[INF, INF, INF, INF, 3000])


@problem("hs101", f_opt=1809.76476)
def hs101():
    return _hs101_103(-0.25)


@problem("hs102", f_opt=911.880571)
def hs102():
    return _hs101_103(0.125)


@problem("hs103", f_opt=543.667958)
def hs103():
    return _hs101_103(0.5)


@problem("hs104", f_opt=3.9511634396)
def hs104():
    x = _x(8)
    f = (0.4 * x[0] ** 0.67 * x[6] ** -0.67 + 0.4 * x[1] ** 0.67 * x[7] ** -0.67 + 10
         - x[0] - x[1])
    g = cs.vertcat(
        1 - 0.0588 * x[4] * x[6] - 0.1 * x[0],
        1 - 0.0588 * x[5] * x[7] - 0.1 * x[0] - 0.1 * x[1],
        1 - 4 * x[2] / x[4] - 2 / (x[2] ** 0.71 * x[4]) - 0.0588 * x[6] / x[2] ** 1.3,
        1 - 4 * x[3] / x[5] - 2 / (x[3] ** 0.71 * x[5]) - 0.0588 * x[7] / x[3] ** 1.3,
        f)
    return _nlp(x, f, g, x0=[6, 3, 0.4, 0.2, 6, 6, 1, 0.5], lbx=0.1, ubx=10,
                lbg=[0, 0, 0, 0, 0.1], ubg=[INF, INF, INF, INF, 4.2])


@problem("hs106", f_opt=7049.24802, note="badly scaled heat-exchanger design")
def hs106():
    x = _x(8)
    f = x[0] + x[1] + x[2]
    g = cs.vertcat(
        1 - 0.0025 * (x[3] + x[5]),
        1 - 0.0025 * (x[4] + x[6] - x[3]),
        1 - 0.01 * (x[7] - x[4]),
        x[0] * x[5] - 833.33252 * x[3] - 100 * x[0] + 83333.333,
        x[1] * x[6] - 1250 * x[4] - x[1] * x[3] + 1250 * x[3],
        x[2] * x[7] - 1250000 - x[2] * x[4] + 2500 * x[4])
    return _nlp(x, f, g, x0=[5000, 5000, 5000, 200, 350, 150, 225, 425],
                lbx=[100, 1000, 1000, 10, 10, 10, 10, 10],
                ubx=[10000, 10000, 10000, 1000, 1000, 1000, 1000, 1000], ubg=[INF] * 6)


@problem("hs107", f_opt=5055.01180)
def hs107():
    x = _x(9)
    c = 48.4 / 50.176 * math.sin(0.25)
    d = 48.4 / 50.176 * math.cos(0.25)
    y1, y2 = cs.sin(x[7]), cs.cos(x[7])
    y3, y4 = cs.sin(x[8]), cs.cos(x[8])
    y5, y6 = cs.sin(x[7] - x[8]), cs.cos(x[7] - x[8])
    v5, v6, v7 = x[4], x[5], x[6]
    f = 3000 * x[0] + 1000 * x[0] ** 3 + 2000 * x[1] + 666.667 * x[1] ** 3
    g = cs.vertcat(
        0.4 - x[0] + 2 * c * v5 ** 2 - v5 * v6 * (d * y1 + c * y2) - v5 * v7 * (d * y3 + c * y4),
        0.4 - x[1] + 2 * c * v6 ** 2 + v5 * v6 * (d * y1 - c * y2) + v6 * v7 * (d * y5 - c * y6),
        0.8 + 2 * c * v7 ** 2 + v5 * v7 * (d * y3 - c * y4) - v6 * v7 * (d * y5 + c * y6),
        0.2 - x[2] + 2 * d * v5 ** 2 + v5 * v6 * (c * y1 - d * y2) + v5 * v7 * (c * y3 - d * y4),
        0.2 - x[3] + 2 * d * v6 ** 2 - v5 * v6 * (c * y1 + d * y2) - v6 * v7 * (c * y5 + d * y6),
        -0.337 + 2 * d * v7 ** 2 - v5 * v7 * (c * y3 + d * y4) + v6 * v7 * (c * y5 - d * y6))
    return _nlp(x, f, g, x0=[0.8, 0.8, 0.2, 0.2, 1.0454, 1.0454, 1.0454, 0, 0],
                lbx=[0, 0, -INF, -INF, 0.90909, 0.90909, 0.90909, -INF, -INF],
                ubx=[INF, INF, INF, INF, 1.0909, 1.0909, 1.0909, INF, INF])


@problem("hs108", f_opt=None,
         note="published optimum -sqrt(3)/2; from x0 = 1 IPOPT and caspar reach a local "
              "solution f = -0.674981")
def hs108():
    x = _x(9)
    f = -0.5 * (x[0] * x[3] - x[1] * x[2] + x[2] * x[8] - x[4] * x[8] + x[4] * x[7]
                - x[5] * x[6])
    g = cs.vertcat(
        1 - x[2] ** 2 - x[3] ** 2,
        1 - x[8] ** 2,
        1 - x[4] ** 2 - x[5] ** 2,
        1 - x[0] ** 2 - (x[1] - x[8]) ** 2,
        1 - (x[0] - x[4]) ** 2 - (x[1] - x[5]) ** 2,
        1 - (x[0] - x[6]) ** 2 - (x[1] - x[7]) ** 2,
        1 - (x[2] - x[4]) ** 2 - (x[3] - x[5]) ** 2,
        1 - (x[2] - x[6]) ** 2 - (x[3] - x[7]) ** 2,
        1 - x[6] ** 2 - (x[7] - x[8]) ** 2,
        x[0] * x[3] - x[1] * x[2],
        x[2] * x[8],
        -x[4] * x[8],
        x[4] * x[7] - x[5] * x[6])
    return _nlp(x, f, g, x0=[1] * 9, lbx=[-INF] * 8 + [0], ubg=[INF] * 13)


@problem("hs109", f_opt=None,
         note="published f* = 5362.06928, but the published x* violates the last equality "
              "(residual 2.3e3) of this formulation (as in the CUTE AMPL and JSO versions); "
              "IPOPT and caspar reach a feasible point with f = 5326.85131")
def hs109():
    x = _x(9)
    a = 50.176
    b, c = math.sin(0.25), math.cos(0.25)
    v5, v6, v7 = x[4], x[5], x[6]
    f = 3 * x[0] + 1e-6 * x[0] ** 3 + 2 * x[1] + 0.522074e-6 * x[1] ** 3
    g = cs.vertcat(
        x[3] - x[2] + 0.55,
        x[2] - x[3] + 0.55,
        2250000 - x[0] ** 2 - x[7] ** 2,
        2250000 - x[1] ** 2 - x[8] ** 2,
        v5 * v6 * cs.sin(-x[2] - 0.25) + v5 * v7 * cs.sin(-x[3] - 0.25) + 2 * b * v5 ** 2
        - a * x[0] + 400 * a,
        v5 * v6 * cs.sin(x[2] - 0.25) + v6 * v7 * cs.sin(x[2] - x[3] - 0.25) + 2 * b * v6 ** 2
        - a * x[1] + 400 * a,
        v5 * v7 * cs.sin(x[3] - 0.25) + v6 * v7 * cs.sin(x[3] - x[2] - 0.25) + 2 * b * v7 ** 2
        + 881.779 * a,
        a * x[7] + v5 * v6 * cs.cos(-x[2] - 0.25) + v5 * v7 * cs.cos(-x[3] - 0.25) - 200 * a
        - 2 * c * v5 ** 2 + 0.7533e-3 * a * v5 ** 2,
        a * x[8] + v5 * v6 * cs.cos(x[2] - 0.25) + v6 * v7 * cs.cos(x[2] - x[3] - 0.25)
        - 2 * c * v6 ** 2 + 0.7533e-3 * a * v6 ** 2 - 200 * a,
        v5 * v7 * cs.cos(x[3] - 0.25) + v6 * v7 * cs.cos(x[3] - x[2] - 0.25) - 2 * c * v7 ** 2
        + 22.938 * a + 0.7533e-3 * a * v7 ** 2)
    return _nlp(x, f, g, x0=[0] * 9, lbx=[0, 0, -0.55, -0.55, 196, 196, 196, -400, -400],
                ubx=[INF, INF, 0.55, 0.55, 252, 252, 252, 800, 800],
                lbg=0, ubg=[INF] * 4 + [0] * 6)


@problem("hs110", f_opt=-45.77846971)
def hs110():
    x = _x(10)
    prod = x[0]
    for i in range(1, 10):
        prod = prod * x[i]
    f = _sum(cs.log(x[i] - 2) ** 2 + cs.log(10 - x[i]) ** 2 for i in range(10)) - prod ** 0.2
    return _nlp(x, f, x0=[9] * 10, lbx=2.001, ubx=9.999)


_HS111_C = [-6.089, -17.164, -34.054, -5.914, -24.721, -14.986, -24.100, -10.708, -26.662,
            -22.179]


@problem("hs111", f_opt=-47.76109026)
def hs111():
    x = _x(10)
    e = [cs.exp(x[j]) for j in range(10)]
    lse = cs.log(_sum(e))
    f = _sum(e[j] * (_HS111_C[j] + x[j] - lse) for j in range(10))
    g = cs.vertcat(e[0] + 2 * e[1] + 2 * e[2] + e[5] + e[9] - 2,
                   e[3] + 2 * e[4] + e[5] + e[6] - 1,
                   e[2] + e[6] + e[7] + 2 * e[8] + e[9] - 1)
    return _nlp(x, f, g, x0=[-2.3] * 10, lbx=-100, ubx=100)


@problem("hs112", f_opt=-47.76109026)
def hs112():
    x = _x(10)
    s = _sum(x[j] for j in range(10))
    f = _sum(x[j] * (_HS111_C[j] + cs.log(x[j] / s)) for j in range(10))
    g = cs.vertcat(x[0] + 2 * x[1] + 2 * x[2] + x[5] + x[9] - 2,
                   x[3] + 2 * x[4] + x[5] + x[6] - 1,
                   x[2] + x[6] + x[7] + 2 * x[8] + x[9] - 1)
    return _nlp(x, f, g, x0=[0.1] * 10, lbx=1e-6)


@problem("hs113", f_opt=24.3062091)
def hs113():
    x = _x(10)
    f = (x[0] ** 2 + x[1] ** 2 + x[0] * x[1] - 14 * x[0] - 16 * x[1] + (x[2] - 10) ** 2
         + 4 * (x[3] - 5) ** 2 + (x[4] - 3) ** 2 + 2 * (x[5] - 1) ** 2 + 5 * x[6] ** 2
         + 7 * (x[7] - 11) ** 2 + 2 * (x[8] - 10) ** 2 + (x[9] - 7) ** 2 + 45)
    g = cs.vertcat(
        105 - 4 * x[0] - 5 * x[1] + 3 * x[6] - 9 * x[7],
        -10 * x[0] + 8 * x[1] + 17 * x[6] - 2 * x[7],
        8 * x[0] - 2 * x[1] - 5 * x[8] + 2 * x[9] + 12,
        -3 * (x[0] - 2) ** 2 - 4 * (x[1] - 3) ** 2 - 2 * x[2] ** 2 + 7 * x[3] + 120,
        -5 * x[0] ** 2 - 8 * x[1] - (x[2] - 6) ** 2 + 2 * x[3] + 40,
        -0.5 * (x[0] - 8) ** 2 - 2 * (x[1] - 4) ** 2 - 3 * x[4] ** 2 + x[5] + 30,
        -x[0] ** 2 - 2 * (x[1] - 2) ** 2 + 2 * x[0] * x[1] - 14 * x[4] + 6 * x[5],
        3 * x[0] - 6 * x[1] - 12 * (x[8] - 8) ** 2 + 7 * x[9])
    return _nlp(x, f, g, x0=[2, 3, 5, 5, 1, 2, 7, 3, 6, 10], ubg=[INF] * 8)


@problem("hs114", f_opt=-1768.80696)
def hs114():
    x = _x(10)
    a, b = 0.99, 0.9
    g1 = 35.82 - 0.222 * x[9] - b * x[8]
    g2 = -133 + 3 * x[6] - a * x[9]
    g5 = 1.12 * x[0] + 0.13167 * x[0] * x[7] - 0.00667 * x[0] * x[7] ** 2 - a * x[3]
    g6 = 57.425 + 1.098 * x[7] - 0.038 * x[7] ** 2 + 0.325 * x[5] - a * x[6]
    f = 5.04 * x[0] + 0.035 * x[1] + 10 * x[2] + 3.36 * x[4] - 0.063 * x[3] * x[6]
    g = cs.vertcat(g1, g2, -g1 + (1 / b - b) * x[8], -g2 + (1 / a - a) * x[9], g5, g6,
                   -g5 + (1 / a - a) * x[3], -g6 + (1 / a - a) * x[6],
                   1.22 * x[3] - x[0] - x[4],
                   98000 * x[2] / (x[3] * x[8] + 1000 * x[2]) - x[5],
                   (x[1] + x[4]) / x[0] - x[7])
    return _nlp(x, f, g, x0=[1745, 12000, 110, 3048, 1974, 89.2, 92.8, 8, 3.6, 145],
                lbx=[1e-5] * 5 + [85, 90, 3, 1.2, 145],
                ubx=[2000, 16000, 120, 5000, 2000, 93, 95, 12, 4, 162], ubg=[INF] * 8 + [0] * 3)


@problem("hs116", f_opt=None,
         note="published f* = 97.588409, while the published x* gives x11 + x12 + x13 = "
              "97.58743; IPOPT and caspar reach f = 97.5874732 (9.4e-4 below the published "
              "value)")
def hs116():
    x = _x(13)
    a, b, c = 0.002, 1.262626, 1.231059
    d, e, h = 0.03475, 0.975, 0.00975
    s = x[10] + x[11] + x[12]
    g = cs.vertcat(
        x[2] - x[1],
        x[1] - x[0],
        1 - a * x[6] + a * x[7],
        s,
        x[12] - b * x[9] + c * x[2] * x[9],
        x[4] - d * x[1] - e * x[1] * x[4] + h * x[1] ** 2,
        x[5] - d * x[2] - e * x[2] * x[5] + h * x[2] ** 2,
        x[3] - d * x[0] - e * x[0] * x[3] + h * x[0] ** 2,
        x[11] - b * x[8] + c * x[1] * x[8],
        x[10] - b * x[7] + c * x[0] * x[7],
        x[4] * x[6] - x[0] * x[7] - x[3] * x[6] + x[3] * x[7],
        1 - a * (x[1] * x[8] + x[4] * x[7] - x[0] * x[7] - x[5] * x[8]) - x[4] - x[5],
        x[1] * x[8] - x[2] * x[9] - x[5] * x[8] - 500 * x[1] + 500 * x[5] + x[1] * x[9],
        x[1] - 0.9 - a * (x[1] * x[9] - x[2] * x[9]))
    lbg = [0] * 14
    lbg[3] = 50
    ubg = [INF] * 14
    ubg[3] = 250
    return _nlp(x, s, g, x0=[0.5, 0.8, 0.9, 0.1, 0.14, 0.5, 489, 80, 650, 450, 150, 150, 150],
                lbx=[0.1, 0.1, 0.1, 1e-4, 0.1, 0.1, 0.1, 0.1, 500, 0.1, 1, 1e-4, 1e-4],
                ubx=[1, 1, 1, 0.1, 0.9, 0.9, 1000, 1000, 1000, 500, 150, 150, 150],
                lbg=lbg, ubg=ubg)


@problem("hs117", f_opt=32.34867897)
def hs117():
    x = _x(15)
    y = [x[10 + j] for j in range(5)]
    A, C, D = _HS086_A, _HS086_C, _HS086_D
    f = (-_sum(_HS086_B[k] * x[k] for k in range(10))
         + _sum(C[k][j] * y[k] * y[j] for k in range(5) for j in range(5))
         + _sum(2 * D[j] * y[j] ** 3 for j in range(5)))
    g = cs.vertcat(*[
        _sum(2 * C[k][j] * y[k] for k in range(5)) + 3 * D[j] * y[j] ** 2 + _HS086_E[j]
        - _sum(A[k][j] * x[k] for k in range(10)) for j in range(5)])
    x0 = [0.001] * 15
    x0[6] = 60
    return _nlp(x, f, g, x0=x0, lbx=0, ubg=[INF] * 5)


@problem("hs118", f_opt=664.8204500)
def hs118():
    x = _x(15)
    f = _sum(2.3 * x[3 * k] + 1e-4 * x[3 * k] ** 2 + 1.7 * x[3 * k + 1]
             + 1e-4 * x[3 * k + 1] ** 2 + 2.2 * x[3 * k + 2] + 1.5e-4 * x[3 * k + 2] ** 2
             for k in range(5))
    rows, ub = [], []
    for j in range(1, 5):
        for i, u in ((0, 13), (1, 14), (2, 13)):
            rows.append(x[3 * j + i] - x[3 * j + i - 3] + 7)
            ub.append(u)
    rows += [x[0] + x[1] + x[2], x[3] + x[4] + x[5], x[6] + x[7] + x[8],
             x[9] + x[10] + x[11], x[12] + x[13] + x[14]]
    lbg = [0] * 12 + [60, 50, 70, 85, 100]
    return _nlp(x, f, cs.vertcat(*rows),
                x0=[20, 55, 15, 20, 60, 20, 20, 60, 20, 20, 60, 20, 20, 60, 20],
                lbx=[8, 43, 3] + [0] * 12, ubx=[21, 57, 16] + [90, 120, 60] * 4,
                lbg=lbg, ubg=ub + [INF] * 5)


_HS119_A = [(0, 3), (0, 6), (0, 7), (0, 15), (1, 2), (1, 6), (1, 9), (2, 6), (2, 8), (2, 9),
            (2, 13), (3, 6), (3, 10), (3, 14), (4, 5), (4, 9), (4, 11), (4, 15), (5, 7),
            (5, 14), (6, 10), (6, 12), (7, 9), (7, 14), (8, 11), (8, 15), (9, 13), (10, 12),
            (11, 13), (12, 13)]  # off-diagonal ones of the upper triangle; a_ii = 1
_HS119_B = [
    [0.22, 0.20, 0.19, 0.25, 0.15, 0.11, 0.12, 0.13, 1, 0, 0, 0, 0, 0, 0, 0],
    [-1.46, 0, -1.30, 1.82, -1.15, 0, 0.80, 0, 0, 1, 0, 0, 0, 0, 0, 0],
    [1.29, -0.89, 0, 0, -1.16, -0.96, 0, -0.49, 0, 0, 1, 0, 0, 0, 0, 0],
    [-1.10, -1.06, 0.95, -0.54, 0, -1.78, -0.41, 0, 0, 0, 0, 1, 0, 0, 0, 0],
    [0, 0, 0, -1.43, 1.51, 0.59, -0.33, -0.43, 0, 0, 0, 0, 1, 0, 0, 0],
    [0, -1.72, -0.33, 0, 1.62, 1.24, 0.21, -0.26, 0, 0, 0, 0, 0, 1, 0, 0],
    [1.12, 0, 0, 0.31, 0, 0, 1.12, 0, -0.36, 0, 0, 0, 0, 0, 1, 0],
    [0, 0.45, 0.26, -1.10, 0.58, 0, -1.03, 0.10, 0, 0, 0, 0, 0, 0, 0, 1]]
_HS119_C = [2.5, 1.1, -3.1, -3.5, 1.3, 2.1, 2.3, -1.5]


@problem("hs119", f_opt=244.899698)
def hs119():
    x = _x(16)
    p = [x[i] ** 2 + x[i] + 1 for i in range(16)]
    f = _sum(p[i] ** 2 for i in range(16)) + _sum(p[i] * p[j] for i, j in _HS119_A)
    g = cs.vertcat(*[_sum(b * x[j] for j, b in enumerate(row) if b != 0) - c
                     for row, c in zip(_HS119_B, _HS119_C)])
    return _nlp(x, f, g, x0=[10] * 16, lbx=0, ubx=5)
