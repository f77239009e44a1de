"""More Hock-Schittkowski problems (not in :mod:`problem_bank`) as CasADi SX expressions.

Written from the published formulations (W. Hock, K. Schittkowski, "Test Examples for
Nonlinear Programming Codes", LNEMS 187, 1981, and Schittkowski's 1987 collection):
objective, constraints, bounds, the standard start point and the published optimal
objective.  Same :class:`problem_bank.BankProblem` format as the main bank; ``f_opt`` is
left ``None`` (with a ``note``) where the standard start leads IPOPT to a different local
solution than the published one.
"""

from __future__ import annotations

import math

import casadi as cs

from problem_bank import INF, BankProblem, _nlp, _x

HS_EXTRA: list = []


def problem(name, kind="optimal", f_opt=None, slow=False, note="", options=()):
    def deco(fn):
        HS_EXTRA.append(BankProblem(name, fn, kind, f_opt, slow, note, tuple(options)))
        return fn
    return deco


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
