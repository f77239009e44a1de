"""The Graph's construction rules, applied to a row's references while the template
reader (:mod:`.templates`) reads it.

The per-instance walker builds each row in a hash-consed
:class:`~caspar_backend.expr.Graph`, whose constructors simplify by value
(:mod:`caspar_backend.expr`): an operation on constants only is folded, a sum gathers
its constants into one trailing constant (flattening nested sums), ``0*a -> 0``,
``1*a -> a``, ``-1*a -> -a``, ``a/1 -> a``, ``0/b -> 0``, ``-(c) -> const(-c)``,
``-(-a) -> a``, ``a**0.5 -> sqrt(a)``, ``a**n -> powi(a, n)``, a ``lincomb`` drops its
zero coefficients.  The template reader must produce the *same* row, yet it writes a
row's numbers into data slots that the template computes with symbolically.  It
therefore applies every value-dependent rule itself, on references of three kinds:

* ``int``: a symbolic reference, coded as in
  :func:`.template_blocks.build_template` (``4j`` variable slot j, ``4j+1``
  parameter slot j, ``4j+2`` data slot j, ``4i+3`` item i);
* ``float``: a *pending constant* -- the value ``v`` of the node ``const(v)`` the walker
  would hold there (finite, ``-0.0`` read as ``0.0``, as ``Graph.const`` stores it);
* :class:`PendingSum`: a sum ``p_1 + ... + p_n + t_1 + ... + t_m`` of symbolic parts
  and its trailing constants, not yet an item (an enclosing sum flattens it and
  gathers its constants, as ``Graph.sum`` flattens a sum node; a row's top-level
  sum gives its constant to the bounds).

A pending constant becomes a data slot only where it ends up as an argument of a node
that stays (:func:`make_rules`' ``mat``), so the data a template reads are exactly the
constants of the walker's row, and every item builds exactly one node of the template
(data never trigger a rule there).  Hence, for every row, the template with its data
slots replaced by their values is the walker's row: same operations, same operand
order, same constants bit for bit.  Where a rule would not give a finite constant
(overflow while gathering a sum, a non-finite number), :class:`NotTemplatable` leaves
the row to the walker, which reports it as it always did.
"""

from __future__ import annotations

import math
from typing import final

from caspar_backend.expr import Graph

#: nodes the scratch graph (constant folding, below) holds before it is renewed
_SCRATCH_NODES = 1 << 16


class NotTemplatable(Exception):
    """Raised inside a row's pass: this row goes the per-instance way."""


@final
class PendingSum:
    """``sum(parts) + sum(tail)``: symbolic parts (ints, none of them a sum) and the
    trailing constants the Graph would append (at most one: overflow is refused).
    ``ref`` is its item once materialized (at most once per row)."""

    __slots__ = ("parts", "tail", "ref")

    def __init__(self, parts, tail):
        self.parts = parts
        self.tail = tail
        self.ref = None


def const(v) -> float:
    """The value ``Graph.const(v)`` stores (a float, ``-0.0 -> 0.0``); a non-finite
    value leaves the row to the walker (which names it)."""
    v = float(v)
    if v - v != 0.0:            # inf or nan
        raise NotTemplatable
    return 0.0 if v == 0.0 else v


def make_rules(items: list, data: list):
    """Closures over one reader's row state (``items``, ``data``, cleared per row by
    the reader): ``(mat, neg, apply, sum_, lincomb, top, reset)``.

    * ``mat(r) -> int``: ``r`` as a symbolic reference (a pending constant becomes a
      data slot, a pending sum its item);
    * ``neg(r)``: ``-r`` (``Graph.neg``);
    * ``apply(op, attr, *refs)``: ``op(refs)`` for every other operation
      (``Graph.apply``);
    * ``sum_(refs)``: ``Graph.sum`` of the references, in order;
    * ``lincomb(flat)``: the walker's linear part of a sum, ``flat = [c_0, t_0, c_1,
      t_1, ...]`` with each coefficient a float (a number) or a reference, each term a
      variable or parameter slot;
    * ``top(r) -> (ref, shift)``: a row body's reference and the constant of its
      top-level sum, which moves into the bounds (the walker's ``_walk_row``);
    * ``reset()``: forget the row (call it with ``items`` and ``data`` cleared).
    """
    put, put_datum = items.append, data.append
    negated: dict = {}            # item ref of neg(a) -> a, unmaterialized (-(-a) -> a)
    scratch = [Graph()]

    def mat(r):
        cls = r.__class__
        if cls is int:
            return r
        if cls is float:
            put_datum(r)
            return 4 * len(data) - 2
        if r.ref is None:
            parts = r.parts + [mat(t) for t in r.tail]
            put(("sum", None, *parts))
            r.ref = 4 * len(items) - 1
        return r.ref

    def neg(r):
        cls = r.__class__
        if cls is float:
            return -r if r != 0.0 else 0.0
        if cls is int:
            a = negated.get(r)
            if a is not None:
                return a
        m = mat(r)
        put(("neg", None, m))
        ref = 4 * len(items) - 1
        negated[ref] = r
        return ref

    def emit(op, attr, refs):
        # an item of ``op`` over references no rule applies to any more
        if op == "neg":
            return neg(refs[0])
        if len(refs) == 2:
            a = refs[0] if refs[0].__class__ is int else mat(refs[0])
            b = refs[1] if refs[1].__class__ is int else mat(refs[1])
            put((op, attr, a, b))
        else:
            put((op, attr, *[mat(r) for r in refs]))
        return 4 * len(items) - 1

    def apply(op, attr, *refs):
        if len(refs) != 2:
            if refs[0].__class__ is float:
                return _by_graph(op, attr, refs)
            return emit(op, attr, refs)
        # the common binary cases spelled out (the Graph's rules, see _s_mul, _s_div,
        # _s_pow); anything else is built by the Graph itself
        a, b = refs
        fa, fb = a.__class__ is float, b.__class__ is float
        if not (fa or fb):                  # no constant operand: no rule applies
            return emit(op, attr, refs)
        if fa and fb:
            return _by_graph(op, attr, refs)
        if op == "mul":                     # c * a, a * c: c not 0, 1 or -1
            c = a if fa else b
            if c != 0.0 and c != 1.0 and c != -1.0:
                return emit(op, attr, refs)
        elif op == "div":                   # a / c, c not 1; c / b, c not 0
            if (b != 1.0) if fb else (a != 0.0):
                return emit(op, attr, refs)
        elif op == "pow" and fb:            # a ** c: sqrt, powi (not 0 or 1) or pow
            if b == 0.5:
                return emit("sqrt", None, (a,))
            if b == int(b) and abs(b) <= 1 << 30:
                n = int(b)
                if n == 0:
                    return 1.0
                if n == 1:
                    return a
                return emit("powi", n, (a,))
            return emit(op, attr, refs)
        return _by_graph(op, attr, refs)

    def _by_graph(op, attr, refs):
        # op(refs) built in a scratch Graph with constants as constants and the other
        # operands as placeholder variables: the Graph's own rules decide, and the
        # result is read back as references
        g = scratch[0]
        if len(g.nodes) > _SCRATCH_NODES:
            g = scratch[0] = Graph()
        sym, args = [], []
        for r in refs:
            if r.__class__ is float:
                args.append(g.const(r))
            else:
                args.append(g.var(len(sym)))
                sym.append(r)
        try:
            node = g.apply(op, *args, attr=attr)
        except Exception:                   # the walker raises it, naming the row
            raise NotTemplatable from None
        return _back(node, sym)

    def _back(node, sym):
        op = node.op
        if op == "const":
            return node.attr
        if op == "var":
            return sym[node.attr]
        return emit(op, node.attr, [_back(a, sym) for a in node.args])

    def sum_(refs):
        flat, c = [], 0.0
        for r in refs:
            cls = r.__class__
            if cls is float:
                c += r
            elif cls is PendingSum:
                flat.extend(r.parts)
                for t in r.tail:
                    c += t
            else:
                flat.append(r)
        if c != 0.0:
            if c - c != 0.0:                # overflow: the walker keeps them apart
                raise NotTemplatable
            if not flat:
                return c
            return PendingSum(flat, [c])
        if not flat:
            return 0.0
        if len(flat) == 1:
            return flat[0]
        return PendingSum(flat, [])

    def lincomb(flat):
        # the walker's _sum_of: one pair is c*t (t when c is 1); more pairs are a
        # lincomb, which drops zero coefficients and is c*t when one pair is left
        if len(flat) == 2:
            c, t = flat
            if c.__class__ is float:
                c = const(c)
                if c == 1.0:
                    return t
            return apply("mul", None, c, t)
        refs, first = [], None
        for k in range(0, len(flat), 2):
            c = flat[k]
            if c.__class__ is float:
                if c == 0.0:
                    continue
                if c - c != 0.0:
                    raise NotTemplatable
                if first is None:
                    first = (c, flat[k + 1])
                put_datum(c)
                refs.append(4 * len(data) - 2)
            else:
                if first is None:
                    first = (c, flat[k + 1])
                refs.append(mat(c))
            refs.append(flat[k + 1])
        if len(refs) > 2:
            put(("lincomb", None, *refs))
            return 4 * len(items) - 1
        if not refs:
            return 0.0
        if first[0].__class__ is float:     # its datum is not used
            data.pop()
        return apply("mul", None, first[0], first[1])

    def top(r):
        if r.__class__ is float:            # no variable: a trivial row, the walker's
            raise NotTemplatable
        shift = 0.0
        if r.__class__ is PendingSum and r.tail:
            shift = r.tail[-1]
            rest = r.parts + r.tail[:-1]
            r = rest[0] if len(rest) == 1 else PendingSum(rest, [])
        return mat(r), shift

    def reset():
        negated.clear()

    return mat, neg, apply, sum_, lincomb, top, reset
