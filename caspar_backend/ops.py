"""The op table: the single source of truth for every operation caspar knows.

Each :class:`Op` carries

* ``arity``  -- number of arguments, or ``None`` for n-ary ops;
* ``fold``   -- a pure-Python evaluation on floats (used for constant folding
  and as an independent scalar reference in tests);
* ``numpy``  -- ``f(args: list[str], attr) -> str``: a vectorized NumPy
  expression over arrays of instances (names resolved in
  :data:`caspar_backend.codegen_numpy.NAMESPACE`);
* ``cuda``   -- ``f(args: list[str], attr) -> str``: a CUDA C double
  expression (device helpers in ``kernels/caspar_device.cuh``);
* ``d1``     -- ``f(g, node, i) -> Node``: the partial derivative of ``node``
  with respect to its ``i``-th argument, built in graph ``g``;
* ``d2``     -- ``f(g, node) -> dict[(i, j), Node]`` with ``i >= j``: the
  non-zero second partials with respect to arguments ``i`` and ``j``.
  Entries absent from the dict are structurally zero; that is what makes the
  Lagrangian Hessian exactly sparse (see :mod:`caspar_backend.derivatives`).

Non-smooth ops follow CasADi's one-sided conventions: ``abs'(0) = 0``
(``sign``), ``fmin``/``fmax`` split a tie 1/2 : 1/2, ``floor``, ``ceil``,
``sign``, comparisons and logical ops have zero derivatives, and ``if_else``
differentiates the taken branch only.

Leaf kinds (``const``, ``var``, ``param``, ``data``) are listed in
:data:`LEAVES`; they have no derivative rules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .errors import UnsupportedOpError

LEAVES = ("const", "var", "param", "data")

_SQRT_PI_2 = 2.0 / math.sqrt(math.pi)
_LN10 = math.log(10.0)


@dataclass(frozen=True)
class Op:
    """One row of the op table (final)."""

    name: str
    arity: int | None
    fold: Callable
    numpy: Callable[[list, object], str]
    cuda: Callable[[list, object], str]
    d1: Callable
    d2: Callable
    smooth: bool = True


OPS: dict[str, Op] = {}


def _reg(name, arity, fold, numpy, cuda, d1, d2, smooth=True):
    OPS[name] = Op(name, arity, fold, numpy, cuda, d1, d2, smooth)


def _none2(g, n):
    return {}


def _zero1(g, n, i):
    return g.const(0.0)


def _unary(name, fold, np_name, cu_name, d1, d2, smooth=True):
    """Register ``name(x)`` with d1 = d1(g, x, node), d2 = d2(g, x, node)."""
    _reg(
        name, 1, fold,
        lambda a, _t, s=np_name: f"{s}({a[0]})",
        lambda a, _t, s=cu_name: f"{s}({a[0]})",
        lambda g, n, i: d1(g, n.args[0], n),
        (lambda g, n: {(0, 0): d2(g, n.args[0], n)}) if d2 is not None else _none2,
        smooth,
    )


def _safe(f):
    def wrapped(*a):
        try:
            return f(*a)
        except (ValueError, ZeroDivisionError, OverflowError):
            return math.nan
    return wrapped


# ----------------------------------------------------------------- arithmetic
_reg("add", 2, lambda a, b: a + b,
     lambda a, _t: f"({a[0]} + {a[1]})", lambda a, _t: f"({a[0]} + {a[1]})",
     lambda g, n, i: g.const(1.0), _none2)
_reg("sub", 2, lambda a, b: a - b,
     lambda a, _t: f"({a[0]} - {a[1]})", lambda a, _t: f"({a[0]} - {a[1]})",
     lambda g, n, i: g.const(1.0 if i == 0 else -1.0), _none2)
_reg("mul", 2, lambda a, b: a * b,
     lambda a, _t: f"({a[0]} * {a[1]})", lambda a, _t: f"({a[0]} * {a[1]})",
     lambda g, n, i: n.args[1 - i],
     lambda g, n: {(1, 0): g.const(1.0)})
_reg("div", 2, _safe(lambda a, b: a / b),
     lambda a, _t: f"({a[0]} / {a[1]})", lambda a, _t: f"({a[0]} / {a[1]})",
     lambda g, n, i: (g.div(g.const(1.0), n.args[1]) if i == 0
                      else g.neg(g.div(n, n.args[1]))),
     # d2/db2 (a/b) = 2a/b^3 = 2 n / b^2 ;  d2/dadb = -1/b^2
     lambda g, n: {(1, 0): g.neg(g.div(g.const(1.0), g.powi(n.args[1], 2))),
                   (1, 1): g.div(g.mul(g.const(2.0), n), g.powi(n.args[1], 2))})
_reg("neg", 1, lambda a: -a,
     lambda a, _t: f"(-{a[0]})", lambda a, _t: f"(-{a[0]})",
     lambda g, n, i: g.const(-1.0), _none2)
_reg("sum", None, lambda *a: math.fsum(a),
     lambda a, _t: "(" + " + ".join(a) + ")", lambda a, _t: "(" + " + ".join(a) + ")",
     lambda g, n, i: g.const(1.0), _none2)


def _lincomb_d2(g, n):
    # sum_k a_k b_k : the only second partials are d2/(da_k db_k) = 1
    return {(2 * k + 1, 2 * k): g.const(1.0) for k in range(len(n.args) // 2)}


def _pairs(a):
    return " + ".join(f"{a[k]} * {a[k + 1]}" for k in range(0, len(a), 2))


_reg("lincomb", None, lambda *a: math.fsum(a[k] * a[k + 1] for k in range(0, len(a), 2)),
     lambda a, _t: f"({_pairs(a)})", lambda a, _t: f"({_pairs(a)})",
     lambda g, n, i: n.args[i + 1 if i % 2 == 0 else i - 1], _lincomb_d2)


def _powi_np(a, n):
    # small integer powers as products: np.power takes glibc's slow path for
    # negative bases (~90x slower than a product chain)
    if 1 <= abs(n) <= 8:
        chain = " * ".join([a[0]] * abs(n))
        return f"({chain})" if n > 0 else f"(1.0 / ({chain}))"
    return f"np.power({a[0]}, {float(n)!r})"


def _powi_cu(a, n):
    if n == 2:
        return f"({a[0]} * {a[0]})"
    if n == -1:
        return f"(1.0 / {a[0]})"
    return f"caspar_powi({a[0]}, {int(n)})"


# powi: x ** n with an integer exponent n kept in the node's attr (part of the
# template, so x**2 and x**3 are different shapes with exact derivatives).
_reg("powi", 1, _safe(lambda a, n: float(a) ** n), _powi_np, _powi_cu,
     lambda g, n, i: g.mul(g.const(float(n.attr)), g.powi(n.args[0], n.attr - 1)),
     lambda g, n: ({(0, 0): g.mul(g.const(float(n.attr * (n.attr - 1))),
                                  g.powi(n.args[0], n.attr - 2))}
                   if n.attr not in (0, 1) else {}))


def _pow_d1(g, n, i):
    a, b = n.args
    if i == 0:  # b * a^(b-1)
        return g.mul(b, g.pow(a, g.sub(b, g.const(1.0))))
    return g.mul(g.log(a), n)  # a^b log a


def _pow_d2(g, n):
    a, b = n.args
    la = g.log(a)
    return {
        (0, 0): g.mul(g.mul(b, g.sub(b, g.const(1.0))), g.pow(a, g.sub(b, g.const(2.0)))),
        # d/db [b a^(b-1)] = a^(b-1) (1 + b log a)
        (1, 0): g.mul(g.pow(a, g.sub(b, g.const(1.0))), g.add(g.const(1.0), g.mul(b, la))),
        (1, 1): g.mul(n, g.mul(la, la)),
    }


def _fold_pow(a, b):
    try:
        r = math.pow(a, b)
    except (ValueError, ZeroDivisionError, OverflowError):
        return math.nan
    return r


_reg("pow", 2, _fold_pow,
     lambda a, _t: f"np.power({a[0]}, {a[1]})", lambda a, _t: f"pow({a[0]}, {a[1]})",
     _pow_d1, _pow_d2)

# ---------------------------------------------------------------- elementary
C = lambda g, v: g.const(v)  # noqa: E731

_unary("exp", _safe(math.exp), "np.exp", "exp",
       lambda g, x, n: n, lambda g, x, n: n)
_unary("log", _safe(math.log), "np.log", "log",
       lambda g, x, n: g.div(C(g, 1.0), x),
       lambda g, x, n: g.neg(g.div(C(g, 1.0), g.powi(x, 2))))
_unary("log10", _safe(math.log10), "np.log10", "log10",
       lambda g, x, n: g.div(C(g, 1.0 / _LN10), x),
       lambda g, x, n: g.neg(g.div(C(g, 1.0 / _LN10), g.powi(x, 2))))
_unary("sqrt", _safe(math.sqrt), "np.sqrt", "sqrt",
       lambda g, x, n: g.div(C(g, 0.5), n),
       lambda g, x, n: g.div(C(g, -0.25), g.mul(x, n)))
_unary("sin", _safe(math.sin), "np.sin", "sin",
       lambda g, x, n: g.cos(x), lambda g, x, n: g.neg(n))
_unary("cos", _safe(math.cos), "np.cos", "cos",
       lambda g, x, n: g.neg(g.sin(x)), lambda g, x, n: g.neg(n))
_unary("tan", _safe(math.tan), "np.tan", "tan",
       lambda g, x, n: g.add(C(g, 1.0), g.powi(n, 2)),
       lambda g, x, n: g.mul(g.mul(C(g, 2.0), n), g.add(C(g, 1.0), g.powi(n, 2))))
_unary("asin", _safe(math.asin), "np.arcsin", "asin",
       lambda g, x, n: g.div(C(g, 1.0), g.sqrt(g.sub(C(g, 1.0), g.powi(x, 2)))),
       lambda g, x, n: g.div(x, g.powi(g.sqrt(g.sub(C(g, 1.0), g.powi(x, 2))), 3)))
_unary("acos", _safe(math.acos), "np.arccos", "acos",
       lambda g, x, n: g.div(C(g, -1.0), g.sqrt(g.sub(C(g, 1.0), g.powi(x, 2)))),
       lambda g, x, n: g.neg(g.div(x, g.powi(g.sqrt(g.sub(C(g, 1.0), g.powi(x, 2))), 3))))
_unary("atan", _safe(math.atan), "np.arctan", "atan",
       lambda g, x, n: g.div(C(g, 1.0), g.add(C(g, 1.0), g.powi(x, 2))),
       lambda g, x, n: g.div(g.mul(C(g, -2.0), x), g.powi(g.add(C(g, 1.0), g.powi(x, 2)), 2)))
_unary("sinh", _safe(math.sinh), "np.sinh", "sinh",
       lambda g, x, n: g.cosh(x), lambda g, x, n: n)
_unary("cosh", _safe(math.cosh), "np.cosh", "cosh",
       lambda g, x, n: g.sinh(x), lambda g, x, n: n)
_unary("tanh", _safe(math.tanh), "np.tanh", "tanh",
       lambda g, x, n: g.sub(C(g, 1.0), g.powi(n, 2)),
       lambda g, x, n: g.mul(g.mul(C(g, -2.0), n), g.sub(C(g, 1.0), g.powi(n, 2))))
_unary("asinh", _safe(math.asinh), "np.arcsinh", "asinh",
       lambda g, x, n: g.div(C(g, 1.0), g.sqrt(g.add(C(g, 1.0), g.powi(x, 2)))),
       lambda g, x, n: g.neg(g.div(x, g.powi(g.sqrt(g.add(C(g, 1.0), g.powi(x, 2))), 3))))
_unary("acosh", _safe(math.acosh), "np.arccosh", "acosh",
       lambda g, x, n: g.div(C(g, 1.0), g.sqrt(g.sub(g.powi(x, 2), C(g, 1.0)))),
       lambda g, x, n: g.neg(g.div(x, g.powi(g.sqrt(g.sub(g.powi(x, 2), C(g, 1.0))), 3))))
_unary("atanh", _safe(math.atanh), "np.arctanh", "atanh",
       lambda g, x, n: g.div(C(g, 1.0), g.sub(C(g, 1.0), g.powi(x, 2))),
       lambda g, x, n: g.div(g.mul(C(g, 2.0), x), g.powi(g.sub(C(g, 1.0), g.powi(x, 2)), 2)))
_unary("erf", _safe(math.erf), "erf", "erf",
       lambda g, x, n: g.mul(C(g, _SQRT_PI_2), g.exp(g.neg(g.powi(x, 2)))),
       lambda g, x, n: g.mul(g.mul(C(g, -2.0 * _SQRT_PI_2), x), g.exp(g.neg(g.powi(x, 2)))))
_unary("expm1", _safe(math.expm1), "np.expm1", "expm1",
       lambda g, x, n: g.exp(x), lambda g, x, n: g.exp(x))
_unary("log1p", _safe(math.log1p), "np.log1p", "log1p",
       lambda g, x, n: g.div(C(g, 1.0), g.add(C(g, 1.0), x)),
       lambda g, x, n: g.neg(g.div(C(g, 1.0), g.powi(g.add(C(g, 1.0), x), 2))))


def _atan2_d1(g, n, i):
    y, x = n.args
    r2 = g.add(g.powi(x, 2), g.powi(y, 2))
    return g.div(x, r2) if i == 0 else g.neg(g.div(y, r2))


def _atan2_d2(g, n):
    y, x = n.args
    r4 = g.powi(g.add(g.powi(x, 2), g.powi(y, 2)), 2)
    two_xy = g.mul(C(g, 2.0), g.mul(x, y))
    return {(0, 0): g.neg(g.div(two_xy, r4)),
            (1, 0): g.div(g.sub(g.powi(y, 2), g.powi(x, 2)), r4),
            (1, 1): g.div(two_xy, r4)}


_reg("atan2", 2, _safe(math.atan2),
     lambda a, _t: f"np.arctan2({a[0]}, {a[1]})", lambda a, _t: f"atan2({a[0]}, {a[1]})",
     _atan2_d1, _atan2_d2)


def _hypot_d1(g, n, i):
    return g.div(n.args[i], n)


def _hypot_d2(g, n):
    x, y = n.args
    n3 = g.powi(n, 3)
    return {(0, 0): g.div(g.powi(y, 2), n3), (1, 0): g.neg(g.div(g.mul(x, y), n3)),
            (1, 1): g.div(g.powi(x, 2), n3)}


_reg("hypot", 2, _safe(math.hypot),
     lambda a, _t: f"np.hypot({a[0]}, {a[1]})", lambda a, _t: f"hypot({a[0]}, {a[1]})",
     _hypot_d1, _hypot_d2)

# ---------------------------------------------------------------- non-smooth


def _sign(v):
    return float(v > 0) - float(v < 0) if v == v else math.nan


_unary("abs", abs, "np.abs", "fabs", lambda g, x, n: g.sign(x), None, smooth=False)
_unary("sign", _sign, "np.sign", "caspar_sign", lambda g, x, n: C(g, 0.0), None, smooth=False)
_unary("floor", math.floor, "np.floor", "floor", lambda g, x, n: C(g, 0.0), None, smooth=False)
_unary("ceil", math.ceil, "np.ceil", "ceil", lambda g, x, n: C(g, 0.0), None, smooth=False)


def _fminmax_d1(le):
    # CasADi: d/dx fmin(x, y) = [x<=y] / ([x<=y] + [y<=x]), so a tie splits 1/2:1/2
    def d1(g, n, i):
        a, b = n.args if i == 0 else n.args[::-1]
        w = g.cmp(le, a, b)
        return g.div(w, g.add(w, g.cmp(le, b, a)))
    return d1


_reg("fmin", 2, min, lambda a, _t: f"np.fmin({a[0]}, {a[1]})",
     lambda a, _t: f"fmin({a[0]}, {a[1]})", _fminmax_d1("le"), _none2, smooth=False)
_reg("fmax", 2, max, lambda a, _t: f"np.fmax({a[0]}, {a[1]})",
     lambda a, _t: f"fmax({a[0]}, {a[1]})", _fminmax_d1("ge"), _none2, smooth=False)

# ----------------------------------------------------- comparisons and logic
# Values are 1.0 (true) and 0.0 (false); derivatives are zero everywhere.
_CMP = {"lt": "<", "le": "<=", "eq": "==", "ne": "!=", "ge": ">=", "gt": ">"}
_CMP_FOLD = {"lt": lambda a, b: float(a < b), "le": lambda a, b: float(a <= b),
             "eq": lambda a, b: float(a == b), "ne": lambda a, b: float(a != b),
             "ge": lambda a, b: float(a >= b), "gt": lambda a, b: float(a > b)}
for _name, _sym in _CMP.items():
    _reg(_name, 2, _CMP_FOLD[_name],
         lambda a, _t, s=_sym: f"np.where({a[0]} {s} {a[1]}, 1.0, 0.0)",
         lambda a, _t, s=_sym: f"(({a[0]} {s} {a[1]}) ? 1.0 : 0.0)",
         _zero1, _none2, smooth=False)

_reg("and", 2, lambda a, b: float(bool(a) and bool(b)),
     lambda a, _t: f"np.where(({a[0]} != 0) & ({a[1]} != 0), 1.0, 0.0)",
     lambda a, _t: f"((({a[0]}) != 0.0 && ({a[1]}) != 0.0) ? 1.0 : 0.0)",
     _zero1, _none2, smooth=False)
_reg("or", 2, lambda a, b: float(bool(a) or bool(b)),
     lambda a, _t: f"np.where(({a[0]} != 0) | ({a[1]} != 0), 1.0, 0.0)",
     lambda a, _t: f"((({a[0]}) != 0.0 || ({a[1]}) != 0.0) ? 1.0 : 0.0)",
     _zero1, _none2, smooth=False)
_reg("not", 1, lambda a: float(not a),
     lambda a, _t: f"np.where({a[0]} == 0, 1.0, 0.0)",
     lambda a, _t: f"((({a[0]}) == 0.0) ? 1.0 : 0.0)",
     _zero1, _none2, smooth=False)


def _if_else_d1(g, n, i):
    c = n.args[0]
    if i == 0:
        return C(g, 0.0)
    return g.cmp("ne", c, C(g, 0.0)) if i == 1 else g.cmp("eq", c, C(g, 0.0))


# if_else(c, a, b) is linear in (a, b) for fixed c: no second partials.
_reg("if_else", 3, lambda c, a, b: a if c else b,
     lambda a, _t: f"np.where({a[0]} != 0, {a[1]}, {a[2]})",
     lambda a, _t: f"((({a[0]}) != 0.0) ? ({a[1]}) : ({a[2]}))",
     _if_else_d1, _none2, smooth=False)

#: unary ops that take one argument and map a float to a float
UNARY = tuple(k for k, v in OPS.items() if v.arity == 1 and k not in ("powi",))
#: binary ops
BINARY = tuple(k for k, v in OPS.items() if v.arity == 2)
COMPARISONS = tuple(_CMP)
LOGICAL = ("and", "or", "not")


def get(name: str) -> Op:
    """The op named ``name``; a clear error for anything else."""
    try:
        return OPS[name]
    except KeyError:
        raise UnsupportedOpError(
            f"unsupported operation {name!r}; caspar supports: {', '.join(sorted(OPS))}"
        ) from None
