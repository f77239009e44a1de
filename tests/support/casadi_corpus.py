"""A corpus of CasADi NLPs for the adapter's differential tests.

Each :class:`Case` is an ``nlpsol`` problem dict plus the box random test
points are drawn from (strictly inside every op's domain, away from kinks where
the op set makes that easy), bounds and parameter values.  Together the cases
use every scalar casadi op the adapter supports (a test checks that against
the op table) and the constructs real models use: SX and MX, parameters,
``Function.map`` (serial, thread, unrolled, with reduced inputs/outputs,
nested, chained), SX call nodes, ``if_else``, sparse ``g``, missing ``f``/``g``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from tests.support import problems


@dataclass
class Case:
    name: str
    nlp: dict
    box: tuple                  # (lo, hi) for x: scalars or arrays
    pbox: tuple = (0.5, 1.5)    # (lo, hi) for p
    kw: dict = field(default_factory=dict)   # extra casadi_to_model keywords
    groups: int | None = None   # expected constraint-group count, if asserted

    def sample(self, rng):
        n = int(self.nlp["x"].nnz())
        q = int(self.nlp["p"].nnz()) if "p" in self.nlp else 0
        x = rng.uniform(*np.broadcast_arrays(*self.box, np.zeros(n))[:2])
        p = rng.uniform(*np.broadcast_arrays(*self.pbox, np.zeros(q))[:2])
        return x, p


CASES: dict = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# ------------------------------------------------------------------- SX cases
@case
def sx_arith():
    x = ca.SX.sym("x", 4)
    f = x[0] * x[1] - x[2] / x[3] + (-x[0]) + x[1] * x[1] + 2 * x[2] + 1 / x[3] + 3.5
    g = ca.vertcat(x[0] + x[1] - 1, x[2] - x[3] * 4, x[0] / (x[1] + 3), x[3] + x[3])
    return Case("sx_arith", {"x": x, "f": f, "g": g}, (0.5, 2.0),
                kw=dict(lbg=[0, -1, -2, 0], ubg=[0, 1, 2, 5]))


@case
def sx_exp_log():
    x = ca.SX.sym("x", 3)
    f = ca.exp(x[0]) * ca.log(x[1]) + ca.sqrt(x[2]) + ca.log1p(x[0]) + ca.expm1(x[1])
    g = ca.vertcat(ca.log10(x[0] * x[2]), ca.exp(-x[1] ** 2), ca.sqrt(x[0] + x[1]))
    return Case("sx_exp_log", {"x": x, "f": f, "g": g}, (0.3, 2.0))


@case
def sx_trig():
    x = ca.SX.sym("x", 3)
    f = ca.sin(x[0]) * ca.cos(x[1]) + ca.tan(x[2])
    g = ca.vertcat(ca.asin(x[0]), ca.acos(x[1]), ca.atan(x[2] * x[0]), ca.sin(x[0] * x[1]))
    return Case("sx_trig", {"x": x, "f": f, "g": g}, (-0.8, 0.8))


@case
def sx_hyperbolic():
    x = ca.SX.sym("x", 3)
    f = ca.sinh(x[0]) + ca.cosh(x[1]) * ca.tanh(x[2])
    g = ca.vertcat(ca.asinh(x[0] * x[1]), ca.acosh(1.5 + x[1] ** 2), ca.atanh(x[2] / 2))
    return Case("sx_hyperbolic", {"x": x, "f": f, "g": g}, (-0.9, 0.9))


@case
def sx_pow():
    x = ca.SX.sym("x", 3)
    f = x[0] ** x[1] + x[2] ** 3.5 + x[0] ** 3 + x[1] ** -2 + x[2] ** 0.5 + x[0] ** (-1.5)
    g = ca.vertcat(ca.power(x[1], x[2]), x[0] ** 2 * x[1], ca.constpow(x[2], 2.25),
                   2 ** x[0])
    return Case("sx_pow", {"x": x, "f": f, "g": g}, (0.5, 2.0))


@case
def sx_binary():
    x = ca.SX.sym("x", 4)
    f = ca.atan2(x[0], x[1]) + ca.hypot(x[2], x[3])
    g = ca.vertcat(ca.fmin(x[0], x[1]), ca.fmax(x[2], x[3]), ca.fmin(x[0] * x[2], 0.1),
                   ca.fmax(x[1] ** 2, x[3]))
    return Case("sx_binary", {"x": x, "f": f, "g": g},
                (np.array([-1.0, 0.3, -1.0, 1.2]), np.array([-0.5, 1.0, 1.0, 2.0])))


@case
def sx_nonsmooth():
    x = ca.SX.sym("x", 4)
    f = ca.fabs(x[0]) * x[1] + ca.sign(x[2]) * x[3] + ca.floor(x[1]) + ca.ceil(x[3])
    # copysign: x[1] > 0 where casadi's derivative rule is the true derivative
    g = ca.vertcat(ca.fmod(x[3], x[1]), ca.copysign(x[1], x[0]), ca.copysign(x[1], x[2]),
                   ca.fabs(x[0] * x[2]))
    return Case("sx_nonsmooth", {"x": x, "f": f, "g": g},
                (np.array([-2.0, 0.35, 0.2, 1.1]), np.array([-0.1, 0.45, 2.0, 1.9])))


@case
def sx_if_else():
    x = ca.SX.sym("x", 3)
    f = (ca.if_else(x[0] > x[1], x[0] ** 2, ca.sin(x[1]))
         + ca.if_else(x[2] >= 0, x[2] * x[0], -x[2])
         + ca.if_else(ca.logic_and(x[0] < 0.5, x[1] <= 0.2), x[1] ** 3, x[0]))
    g = ca.vertcat(ca.if_else(ca.logic_or(x[0] == 0.25, x[1] != 0.3), ca.exp(x[2]), x[2]),
                   ca.if_else(ca.logic_not(x[2] > 0.1), x[0] * x[1], x[0] + x[1]),
                   ca.if_else(x[0] < x[2], x[1], 0))
    return Case("sx_if_else", {"x": x, "f": f, "g": g}, (-1.0, 1.0))


@case
def sx_erf():
    x = ca.SX.sym("x", 2)
    f = ca.erf(x[0] * x[1]) + ca.erf(x[0]) ** 2
    g = ca.vertcat(ca.erf(x[1]) - 0.5)
    return Case("sx_erf", {"x": x, "f": f, "g": g}, (-1.5, 1.5), kw=dict(lbg=-1, ubg=1))


@case
def sx_params():
    x = ca.SX.sym("x", 3)
    p = ca.SX.sym("p", 2)
    f = p[0] * (x[0] - p[1]) ** 2 + ca.exp(p[1] * x[1]) + x[2] * p[0] * p[1]
    g = ca.vertcat(x[0] * p[0] + x[1], ca.sin(p[1] * x[2]), p[0] ** 2 * x[1] * x[2])
    return Case("sx_params", {"x": x, "f": f, "g": g, "p": p}, (-1.0, 1.0),
                kw=dict(p=[1.0, 2.0], lbg=0, ubg=[1, 1, 1]))


@case
def sx_rosenbrock():
    x = ca.SX.sym("x", 20)
    return Case("sx_rosenbrock", {"x": x, "f": problems.chained_rosenbrock_f(x)}, (-2.0, 2.0))


@case
def sx_hs071():
    nlp, args = problems.hs071()
    return Case("sx_hs071", nlp, (1.0, 5.0), kw=args)


@case
def sx_matrix():
    x = ca.SX.sym("x", 3, 2)
    A = ca.DM([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0]])
    y = ca.mtimes(A, x)
    f = ca.sumsqr(y) + ca.dot(x[:, 0], x[:, 1]) + ca.norm_2(ca.vec(x)) + ca.trace(y)
    g = ca.vertcat(ca.vec(ca.mtimes(x.T, x)), ca.det(y), ca.logsumexp(ca.vec(x)))
    return Case("sx_matrix", {"x": x, "f": f, "g": g}, (0.2, 1.2))


@case
def sx_call():
    # never_inline keeps an OP_CALL node inside the SX graph
    z = ca.SX.sym("z", 2)
    w = ca.SX.sym("w")
    H = ca.Function("H", [z, w], [ca.sin(z[0]) * w + z[1] ** 2, z[0] * z[1] * w],
                    {"never_inline": True})
    x = ca.SX.sym("x", 5)
    o1, o2 = H(x[:2], x[2])
    q1, q2 = H(x[2:4], x[4])
    f = o1 + q1 * o2
    g = ca.vertcat(o2 - q2, q1 + x[0], o1 * q2)
    return Case("sx_call", {"x": x, "f": f, "g": g}, (-1.0, 1.0))


@case
def sx_printme_sparse_g():
    # printme is the identity in its first argument; g with structural zeros
    x = ca.SX.sym("x", 3)
    g = ca.SX(4, 1)
    g[0] = x[0].printme(0) * x[1]
    g[2] = ca.exp(x[2])
    f = ca.sumsqr(x)
    return Case("sx_printme_sparse_g", {"x": x, "f": f, "g": g}, (-1.0, 1.0))


@case
def sx_feasibility():
    # no objective: f = 0
    x = ca.SX.sym("x", 2)
    g = ca.vertcat(x[0] ** 2 + x[1] ** 2 - 1, x[0] - x[1])
    return Case("sx_feasibility", {"x": x, "g": g}, (-1.0, 1.0), kw=dict(lbg=0, ubg=0))


# ------------------------------------------------------------------- MX cases
def _dyn():
    """A small RK-like step F(x[2], u, p) -> x_next[2], in SX."""
    xs = ca.SX.sym("xs", 2)
    u = ca.SX.sym("u")
    h = ca.SX.sym("h")
    k1 = ca.vertcat(xs[1], -ca.sin(xs[0]) + u)
    k2 = ca.vertcat(xs[1] + h / 2 * k1[1], -ca.sin(xs[0] + h / 2 * k1[0]) + u)
    return ca.Function("F", [xs, u, h], [xs + h * k2])


@case
def mx_basic():
    X = ca.MX.sym("X", 3, 2)
    p = ca.MX.sym("p", 2)
    A = ca.DM([[2.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    y = ca.mtimes(A, X)
    f = ca.sumsqr(y - p[0]) + ca.dot(X[:, 0], X[:, 1]) + ca.norm_2(ca.vec(X)) * p[1]
    g = ca.vertcat(ca.vec(y.T), ca.reshape(X, 6, 1)[1:4] * p[0], ca.mmax(ca.vec(X)),
                   ca.norm_1(X[:, 1]), ca.if_else(X[0, 0] > 0.5, X[1, 1], X[2, 1] ** 2))
    return Case("mx_basic", {"x": X, "f": f, "g": g, "p": p},
                (0.1, 1.0), kw=dict(p=[0.5, 2.0]))


@case
def mx_map():
    N = 12
    F = _dyn()
    X = ca.MX.sym("X", 2, N + 1)
    U = ca.MX.sym("U", 1, N)
    h = ca.MX.sym("h")
    g = ca.vec(F.map(N)(X[:, :-1], U, ca.repmat(h, 1, N)) - X[:, 1:])
    f = ca.sumsqr(U) + ca.sumsqr(X[:, -1])
    return Case("mx_map", {"x": ca.veccat(X, U), "f": f, "g": g, "p": h}, (-1.0, 1.0),
                pbox=(0.05, 0.2), kw=dict(p=0.1, lbg=0, ubg=0), groups=2)


@case
def mx_map_mx_inner():
    N = 8
    xs = ca.MX.sym("xs", 2)
    u = ca.MX.sym("u")
    G = ca.Function("G", [xs, u], [ca.vertcat(ca.mtimes(xs.T, xs) * u, ca.exp(xs[0]) - u)])
    X = ca.MX.sym("X", 2, N)
    U = ca.MX.sym("U", 1, N)
    out = G.map(N)(X, U)
    return Case("mx_map_mx_inner", {"x": ca.veccat(X, U), "f": ca.sum2(out[0, :]),
                                    "g": ca.vec(out[1, :])}, (-1.0, 1.0), groups=1)


@case
def mx_map_reduce():
    # reduce_in (shared input) and reduce_out (summed output): an MXFunction
    # wrapping a Map call
    N = 6
    z = ca.SX.sym("z", 2)
    c = ca.SX.sym("c")
    K = ca.Function("K", [z, c], [ca.sin(z[0]) * c + z[1] ** 2, z[0] * z[1] - c])
    Km = K.map("Km", "serial", N, [1], [0])
    Z = ca.MX.sym("Z", 2, N)
    cc = ca.MX.sym("cc")
    s, r = Km(Z, cc)
    return Case("mx_map_reduce", {"x": ca.veccat(Z, cc), "f": s, "g": r.T}, (-1.0, 1.0))


@case
def mx_unrolled_calls():
    N = 5
    F = _dyn()
    X = ca.MX.sym("X", 2, N + 1)
    U = ca.MX.sym("U", N)
    gs = [F(X[:, k], U[k], 0.1) - X[:, k + 1] for k in range(N)]
    Fu = F.map(N, "unroll")
    gu = Fu(X[:, :-1], U.T, 0.1) - X[:, 1:]
    return Case("mx_unrolled_calls", {"x": ca.veccat(X, U), "f": ca.sumsqr(U),
                                      "g": ca.vertcat(*gs, ca.vec(gu))}, (-1.0, 1.0))


@case
def mx_thread_map():
    N = 7
    F = _dyn()
    X = ca.MX.sym("X", 2, N + 1)
    U = ca.MX.sym("U", 1, N)
    Ft = F.map("Ft", "thread", N, [], [])
    g = ca.vec(Ft(X[:, :-1], U, 0.2) - X[:, 1:])
    return Case("mx_thread_map", {"x": ca.veccat(X, U), "f": ca.sumsqr(X), "g": g},
                (-1.0, 1.0), groups=2)


@case
def mx_nested_map():
    # a mapped Function whose body maps another Function
    M, N = 3, 4
    a = ca.SX.sym("a")
    b = ca.SX.sym("b")
    leaf = ca.Function("leaf", [a, b], [ca.exp(a * b) - a])
    row = ca.MX.sym("row", 1, M)
    s = ca.MX.sym("s")
    inner = ca.Function("inner", [row, s], [ca.sum2(leaf.map(M)(row, ca.repmat(s, 1, M)))])
    R = ca.MX.sym("R", 1, M * N)
    S = ca.MX.sym("S", 1, N)
    out = inner.map(N)(R, S)
    return Case("mx_nested_map", {"x": ca.veccat(R, S), "f": ca.sumsqr(R),
                                  "g": out.T}, (-0.7, 0.7))


@case
def mx_chained_maps():
    # the second map consumes the first one's output; a parameter enters both
    N = 9
    a = ca.SX.sym("a")
    b = ca.SX.sym("b")
    q = ca.SX.sym("q")
    F1 = ca.Function("F1", [a, q], [ca.tanh(a) * q])
    F2 = ca.Function("F2", [a, b], [a * b + ca.cos(b)])
    X = ca.MX.sym("X", 1, N)
    P = ca.MX.sym("P")
    y = F1.map(N)(X, ca.repmat(P, 1, N))
    z = F2.map(N)(y, X)
    return Case("mx_chained_maps", {"x": X, "p": P, "f": ca.sum2(z * y),
                                    "g": ca.vertcat(z.T, y.T)},
                (-1.0, 1.0), kw=dict(p=0.7), groups=2)


@case
def mx_map_unused_output():
    # a two-output mapped Function whose second output is never used
    N = 5
    a = ca.SX.sym("a", 2)
    F = ca.Function("F2out", [a], [a[0] * ca.cos(a[1]), ca.exp(a[0] - a[1])])
    X = ca.MX.sym("X", 2, N)
    used, _unused = F.map(N)(X)
    # and a plain (non-map) call beside the map: inlined by expand()
    H = ca.Function("H", [a], [ca.sumsqr(a) * a[0]])
    return Case("mx_map_unused_output", {"x": X, "f": ca.sumsqr(X) + H(X[:, 0]),
                                         "g": used.T}, (-1.0, 1.0), groups=1)


@case
def mx_call_and_logic():
    x = ca.MX.sym("x", 3)
    p = ca.MX.sym("p")
    H = ca.Function("H", [x], [ca.vertcat(ca.fmin(x[0], x[1]), ca.atan2(x[2], x[0]))])
    h = H(x)
    f = ca.if_else(h[0] > 0, h[0] ** 2, -h[0]) + h[1] * p + ca.hypot(x[1], x[2])
    g = ca.vertcat(ca.fmax(x[0], p), h, ca.erf(x[2]) * ca.log(x[1] + 2))
    return Case("mx_call_and_logic", {"x": x, "p": p, "f": f, "g": g},
                (np.array([0.2, -1.0, -1.0]), np.array([1.0, 1.0, 1.0])),
                pbox=(1.2, 1.5), kw=dict(p=1.3))


def build(name: str) -> Case:
    return CASES[name]()


def all_cases() -> list:
    return [fn() for fn in CASES.values()]
