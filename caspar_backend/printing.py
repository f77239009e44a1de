"""Readable infix printing of expression DAGs (used in error messages and logs).

``to_str(node)`` prints the DAG as a tree with Python's operator precedences, so
the text reads as math and, with ``and(``/``or(`` renamed, evaluates back to the
node's value (tests/compiler/test_expr.py checks this on random expressions).  Leaves use
the graph's ``var_names``/``param_names`` when given.  Output is cut at
``max_len`` characters and at depth 100, so printing is bounded on huge DAGs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: expr imports this module
    from .expr import Node

_INFIX = {"add": ("+", 1), "sub": ("-", 1), "mul": ("*", 2), "div": ("/", 2)}
_CMP_SYM = {"lt": "<", "le": "<=", "eq": "==", "ne": "!=", "ge": ">=", "gt": ">"}


def _leaf_name(n: Node) -> str:
    names = n.graph.var_names if n.op == "var" else n.graph.param_names
    if n.op in ("var", "param") and names is not None:
        try:
            return str(names(n.attr) if callable(names) else names[n.attr])
        except (IndexError, KeyError, TypeError):
            pass
    return {"var": "x", "param": "p", "data": "c"}[n.op] + f"[{n.attr}]"


def _fmt_const(v: float) -> str:
    return repr(int(v)) if v == int(v) and abs(v) < 1e15 else repr(v)


def to_str(node: Node, max_len: int = 2000) -> str:
    """Readable infix text of ``node`` (a tree view of the DAG), cut at ``max_len``."""
    out: list[str] = []
    budget = [max_len]

    def emit(s):
        out.append(s)
        budget[0] -= len(s)

    def rec(n: Node, parent_prec: int, depth: int = 0):
        if budget[0] <= 0:
            return
        if depth > 100:  # deep chains: keep the recursion bounded
            emit("...")
            return
        depth += 1
        op = n.op
        if op == "const":
            neg = n.attr < 0 and parent_prec >= 3
            emit(f"({_fmt_const(n.attr)})" if neg else _fmt_const(n.attr))
        elif op in ("var", "param", "data"):
            emit(_leaf_name(n))
        elif op in _INFIX:
            sym, prec = _INFIX[op]
            if prec < parent_prec:
                emit("(")
            rec(n.args[0], prec, depth)
            emit(f" {sym} ")
            rec(n.args[1], prec + 1, depth)
            if prec < parent_prec:
                emit(")")
        elif op in ("sum", "lincomb"):
            if parent_prec > 1:
                emit("(")
            if op == "sum":
                for k, a in enumerate(n.args):
                    if k:
                        emit(" + ")
                    rec(a, 1, depth)
            else:
                for k in range(0, len(n.args), 2):
                    if k:
                        emit(" + ")
                    rec(n.args[k], 2, depth)
                    emit("*")
                    rec(n.args[k + 1], 3, depth)
            if parent_prec > 1:
                emit(")")
        elif op == "neg":
            if parent_prec >= 3:
                emit("(")
            emit("-")
            rec(n.args[0], 3, depth)
            if parent_prec >= 3:
                emit(")")
        elif op in ("powi", "pow"):
            # ** is right-associative and binds tighter than unary minus: the base
            # needs parentheses when it is itself a power, a negation or negative
            if parent_prec >= 5:
                emit("(")
            rec(n.args[0], 5, depth)
            if op == "powi":
                emit(f"**{n.attr}")
            else:
                emit("**")
                rec(n.args[1], 4, depth)
            if parent_prec >= 5:
                emit(")")
        elif op in _CMP_SYM:
            emit("(")
            rec(n.args[0], 0, depth)
            emit(f" {_CMP_SYM[op]} ")
            rec(n.args[1], 0, depth)
            emit(")")
        else:
            emit(f"{op}(")
            for k, a in enumerate(n.args):
                if k:
                    emit(", ")
                rec(a, 0, depth)
            emit(")")

    rec(node, 0)
    s = "".join(out)
    return s if budget[0] > 0 else s[:max_len] + " ..."
