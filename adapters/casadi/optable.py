"""CasADi's ``OP_*`` codes and what each becomes in caspar's DAG.

CasADi's SX virtual machine runs *scalar atomic* instructions ``w[o] =
op(w[i1], w[i2])``.  Every code casadi defines lands in exactly one of these
tables (a test checks the union is every ``casadi.OP_*`` name, so a new casadi
release that adds an op fails the test instead of failing a user):

``DIRECT``      a caspar op of the same arity and meaning (``OP_FABS -> abs``).
``COMPOSED``    a short expression of caspar ops (``OP_SQ -> powi(x, 2)``,
                ``OP_FMOD(x, y) -> x - y*trunc(x/y)``).
``ALIAS``       the value of the first argument (``OP_ASSIGN``; ``OP_PRINTME`` and
                ``OP_LIFT`` are identities whose side effect / initial guess is
                meaningless here).  Resolved at compile time: no node is built.
``STRUCTURAL``  the program's plumbing, handled by :mod:`.program`: inputs,
                outputs, constants, calls of other Functions.
``REFUSED``     a clear :class:`~caspar_backend.errors.UnsupportedOpError` (or,
                for ``OP_PARAMETER``, a :class:`~caspar_backend.errors.ModelError`
                about free symbols) naming the op.
``MATRIX``      MX (matrix) nodes.  They never occur in an SX program: caspar
                lowers MX through ``Function.expand()``; met in an SX program
                they are refused like ``REFUSED``.

Derivative conventions are caspar's (:mod:`caspar_backend.ops`), which agree
with CasADi's AD everywhere except one documented place: casadi differentiates
``copysign(x, y)`` as ``copysign(1, y)`` even for ``x < 0``; caspar's
composition gives the true derivative ``sign(x) * copysign(1, y)``.
"""

from __future__ import annotations

import weakref
from functools import partial

import casadi as _ca

from caspar_backend.errors import ModelError, UnsupportedOpError

#: every casadi op name -> its integer code, e.g. ``'OP_ADD' -> 1``
CODES: dict[str, int] = {k: int(getattr(_ca, k)) for k in dir(_ca) if k.startswith("OP_")}
#: code -> name
NAMES: dict[int, str] = {v: k for k, v in CODES.items()}

#: casadi op -> caspar op with the same arity
DIRECT: dict[str, str] = {
    "OP_ADD": "add", "OP_SUB": "sub", "OP_MUL": "mul", "OP_DIV": "div", "OP_NEG": "neg",
    "OP_EXP": "exp", "OP_LOG": "log", "OP_POW": "pow", "OP_SQRT": "sqrt",
    # the exponent of OP_CONSTPOW sits in a slot filled by an OP_CONST, so it arrives
    # as a constant node and Graph.pow turns integer exponents into powi, 0.5 into sqrt
    "OP_CONSTPOW": "pow",
    "OP_SIN": "sin", "OP_COS": "cos", "OP_TAN": "tan", "OP_ASIN": "asin",
    "OP_ACOS": "acos", "OP_ATAN": "atan", "OP_SINH": "sinh", "OP_COSH": "cosh",
    "OP_TANH": "tanh", "OP_ASINH": "asinh", "OP_ACOSH": "acosh", "OP_ATANH": "atanh",
    "OP_ERF": "erf", "OP_LOG1P": "log1p", "OP_EXPM1": "expm1",
    "OP_ATAN2": "atan2", "OP_HYPOT": "hypot", "OP_FMIN": "fmin", "OP_FMAX": "fmax",
    "OP_FABS": "abs", "OP_SIGN": "sign", "OP_FLOOR": "floor", "OP_CEIL": "ceil",
    # casadi has no GT/GE: x > y arrives as OP_LT(y, x)
    "OP_LT": "lt", "OP_LE": "le", "OP_EQ": "eq", "OP_NE": "ne",
    "OP_NOT": "not", "OP_AND": "and", "OP_OR": "or",
}


def _sq(g, a):
    return g.powi(a, 2)


def _twice(g, a):
    return g.mul(g.const(2.0), a)


def _inv(g, a):
    return g.div(g.const(1.0), a)


def _if_else_zero(g, c, a):
    # casadi: c ? a : 0, with 0 even when a is NaN/Inf -- np.where semantics agree
    return g.if_else(c, a, g.const(0.0))


def _trunc(g, q):
    return g.if_else(g.cmp("lt", q, g.const(0.0)), g.ceil(q), g.floor(q))


def _fmod(g, a, b):
    # C fmod: a - b*trunc(a/b).  trunc has zero derivative, so d/da = 1 and
    # d/db = -trunc(a/b) = (fmod - a)/b, exactly casadi's rule.  The value is
    # rounded once more than C's exact fmod (a/b is rounded before trunc).
    return g.sub(a, g.mul(b, _trunc(g, g.div(a, b))))


def _copysign(g, a, b):
    # |a| with the sign of b (b = -0.0 counts as positive here: caspar has no
    # sign-bit test; the two differ only there)
    m = g.abs(a)
    return g.if_else(g.cmp("lt", b, g.const(0.0)), g.neg(m), m)


#: casadi op -> (arity, builder(g, *args) -> Node)
COMPOSED: dict[str, tuple] = {
    "OP_SQ": (1, _sq),
    "OP_TWICE": (1, _twice),
    "OP_INV": (1, _inv),
    "OP_IF_ELSE_ZERO": (2, _if_else_zero),
    "OP_FMOD": (2, _fmod),
    "OP_COPYSIGN": (2, _copysign),
}

#: casadi op -> arity; the result is the first argument
ALIAS: dict[str, int] = {"OP_ASSIGN": 1, "OP_PRINTME": 2, "OP_LIFT": 2}

#: plumbing handled by the program compiler
STRUCTURAL = ("OP_INPUT", "OP_OUTPUT", "OP_CONST", "OP_CALL")

#: scalar ops caspar cannot represent -> why
REFUSED: dict[str, str] = {
    "OP_PARAMETER": "a free symbol (declare it in 'x' or 'p')",
    "OP_REMAINDER": "IEEE remainder (round-half-even quotient) has no caspar op",
    "OP_ERFINV": "the inverse error function has no caspar op",
}

#: MX-only (matrix) nodes: lowered by casadi's expand(), never SX instructions
MATRIX = (
    "OP_FIND", "OP_LOW", "OP_MAP", "OP_MTIMES", "OP_SOLVE", "OP_TRANSPOSE",
    "OP_DETERMINANT", "OP_INVERSE", "OP_DOT", "OP_BILIN", "OP_RANK1", "OP_HORZCAT",
    "OP_VERTCAT", "OP_DIAGCAT", "OP_HORZSPLIT", "OP_VERTSPLIT", "OP_DIAGSPLIT",
    "OP_RESHAPE", "OP_SUBREF", "OP_SUBASSIGN", "OP_GETNONZEROS", "OP_GETNONZEROS_PARAM",
    "OP_ADDNONZEROS", "OP_ADDNONZEROS_PARAM", "OP_SETNONZEROS", "OP_SETNONZEROS_PARAM",
    "OP_PROJECT", "OP_ASSERTION", "OP_MONITOR", "OP_NORM2", "OP_NORM1", "OP_NORMINF",
    "OP_NORMF", "OP_MMIN", "OP_MMAX", "OP_HORZREPMAT", "OP_HORZREPSUM", "OP_EINSTEIN",
    "OP_BSPLINE", "OP_CONVEXIFY", "OP_SPARSITY_CAST", "OP_LOGSUMEXP", "OP_DUMP",
    "OP_KRON", "OP_KRON_CONTRACT",
)

_ARITY2 = {"add", "sub", "mul", "div", "pow", "atan2", "hypot", "fmin", "fmax",
           "lt", "le", "eq", "ne", "and", "or"}

# --------------------------------------------------------------- dispatch kinds
#: per code: how the compiler treats an instruction
K_REFUSED, K_UNARY, K_BINARY, K_ALIAS, K_INPUT, K_OUTPUT, K_CONST, K_CALL = range(8)
_NCODE = max(CODES.values()) + 1

KIND: list[int] = [K_REFUSED] * _NCODE
for _k, _v in DIRECT.items():
    KIND[CODES[_k]] = K_BINARY if _v in _ARITY2 else K_UNARY
for _k, (_ar, _f) in COMPOSED.items():
    KIND[CODES[_k]] = K_BINARY if _ar == 2 else K_UNARY
for _k in ALIAS:
    KIND[CODES[_k]] = K_ALIAS
KIND[CODES["OP_INPUT"]] = K_INPUT
KIND[CODES["OP_OUTPUT"]] = K_OUTPUT
KIND[CODES["OP_CONST"]] = K_CONST
KIND[CODES["OP_CALL"]] = K_CALL


def kind_of(code: int) -> int:
    """The dispatch kind of casadi op ``code`` (unknown codes are refused)."""
    return KIND[code] if 0 <= code < _NCODE else K_REFUSED


_BOUND: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def bind(g) -> tuple[list, list]:
    """Builders bound to graph ``g``: ``(unary, binary)`` lists indexed by op code,
    ``unary[c](a) -> Node`` and ``binary[c](a, b) -> Node``.

    ``functools.partial(g.apply, name)`` keeps the per-instruction cost at one
    call into the graph (the compiler's inner loop is a list index and a call).
    Cached per graph: a program replayed at 10^4 call sites binds once.
    """
    hit = _BOUND.get(g)
    if hit is None:
        hit = _BOUND[g] = _bind(g)
    return hit


def _bind(g) -> tuple[list, list]:
    un: list = [None] * _NCODE
    bi: list = [None] * _NCODE
    for k, v in DIRECT.items():
        c = CODES[k]
        if v in _ARITY2:
            bi[c] = partial(g.apply, v)
        else:
            un[c] = partial(g.apply, v)
    for k, (ar, f) in COMPOSED.items():
        (bi if ar == 2 else un)[CODES[k]] = partial(f, g)
    return un, bi


def build_op(g, code: int, *args):
    """``op(*args)`` in graph ``g`` for casadi op ``code`` (a direct op or a composed
    expression), without binding the whole table (:func:`bind`): for the few
    instructions of a representative term built in a fresh graph."""
    name = DIRECT.get(NAMES[code])
    if name is not None:
        return g.apply(name, *args)
    return COMPOSED[NAMES[code]][1](g, *args)


def refuse(code: int, where: str = "", expr: str = "") -> Exception:
    """The error for an instruction caspar cannot convert (returned, not raised)."""
    name = NAMES.get(code, f"unknown op code {code}")
    loc = f" in {where}" if where else ""
    txt = f": {expr}" if expr else ""
    if name == "OP_PARAMETER":
        return ModelError(f"casadi {name}{loc}{txt}: {REFUSED[name]}")
    if name in REFUSED:
        why = REFUSED[name]
    elif name in MATRIX:
        why = ("a matrix (MX) operation, which caspar lowers with expand(); it cannot "
               "appear in an SX instruction program")
    else:
        why = "not known to caspar's casadi adapter"
    return UnsupportedOpError(f"unsupported casadi operation {name}{loc}{txt} ({why})")
