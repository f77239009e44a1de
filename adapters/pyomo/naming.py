"""Naming the Pyomo component in an error raised while walking its expression.

Rule: an error from bad data names the component it came from.  The expression
graph raises ``non-finite constant nan in an expression`` (it knows no Pyomo
component); the walker re-raises it through :func:`located` with the named
Expression (when the constant is inside one) and the constraint or objective
being walked.
"""

from __future__ import annotations

from caspar_backend.errors import NonFiniteError

#: the tail of the graph's message for a NaN/Inf constant, which names no component
ANON = " in an expression"


def kind_of(obj) -> str:
    """'constraint', 'objective', 'param', ... from the Pyomo component type."""
    ctype = getattr(obj, "ctype", None)
    return getattr(ctype, "__name__", type(obj).__name__).lower()


def describe(obj) -> str:
    """'constraint c1', 'objective o', or 'an expression' without a component."""
    if obj is None:
        return "an expression"
    return f"{kind_of(obj)} {getattr(obj, 'name', obj)}"


def located(exc: NonFiniteError, where: str, *, expression: bool = False):
    """``exc`` naming ``where``: replaces the anonymous tail, or (for an error already
    naming a named Expression) adds the component that uses it.  Anything else is
    returned unchanged."""
    msg = str(exc)
    if msg.endswith(ANON):
        err = NonFiniteError(f"{msg[:-len(ANON)]} in {where}")
        err.caspar_via_expression = expression  # the user of the expression comes next
        return err
    if getattr(exc, "caspar_via_expression", False) and not expression:
        return NonFiniteError(f"{msg} (used in {where})")
    return exc
