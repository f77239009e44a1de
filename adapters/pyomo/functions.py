"""Tables from Pyomo's expression vocabulary to caspar's op names.

These are the things that are easy to forget, so they are tables, and
``tests/adapters/test_pyomo_adapter.py`` checks them against what the installed Pyomo
actually produces (every intrinsic function Pyomo offers must appear in
:data:`UNARY`, or be listed in :data:`UNSUPPORTED_UNARY` with a reason).

* :data:`UNARY` -- ``UnaryFunctionExpression.getname()`` -> caspar op.
  Pyomo's ``abs()`` is an ``AbsExpression`` (a ``UnaryFunctionExpression``
  named ``'abs'``), so it goes through the same table.
* :data:`COMPARISON` -- the relational classes used as ``Expr_if``
  conditions, keyed by ``(class name, strict)`` -> caspar comparison op.
  ``lhs <= rhs`` is ``le(lhs, rhs)``; a ranged ``lb <= body <= ub`` is
  ``and(le(lb, body), le(body, ub))``.
* :data:`LOGICAL` -- Boolean connectives (``land``, ``lor``, ``lnot``) of the
  logical expression system -> caspar's ``and``/``or``/``not``.
"""

from __future__ import annotations

#: Pyomo intrinsic function name -> caspar op (same maths, same domain).
UNARY: dict[str, str] = {
    "exp": "exp",
    "log": "log",
    "log10": "log10",
    "sqrt": "sqrt",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "asinh": "asinh",
    "acosh": "acosh",
    "atanh": "atanh",
    "ceil": "ceil",
    "floor": "floor",
    "abs": "abs",
}

#: Intrinsics Pyomo offers that caspar deliberately does not map (none today).
UNSUPPORTED_UNARY: dict[str, str] = {}

#: (relational class name, strict) -> caspar comparison op of (arg0, arg1).
COMPARISON: dict[tuple[str, bool], str] = {
    ("InequalityExpression", False): "le",
    ("InequalityExpression", True): "lt",
    ("EqualityExpression", False): "eq",
    ("NotEqualExpression", False): "ne",
}

#: logical-expression class name -> caspar op (binary and/or, unary not).
#: Pyomo's And/Or are n-ary; they fold left into caspar's binary ops.
LOGICAL: dict[str, str] = {
    "AndExpression": "and",
    "OrExpression": "or",
    "NotExpression": "not",
}
