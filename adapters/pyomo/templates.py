"""Constraint rows read as template instances: one pass per row, no DAG per row.

The per-instance path (:mod:`.walker`) builds every row's expression in one
hash-consed :class:`~caspar_backend.expr.Graph`, and :class:`~caspar_backend.problem.Problem`
then hashes each row again to find its pattern group.  Large Pyomo models are a few
rules applied over index sets, so most of that work is repeated.  This reader makes
one pass over a row's Pyomo expression tree and returns its *structural key* and its
instance tables directly:

* ``key``: ``(items, root ref, k, q, r)``, the post-order list of the row's
  operations ``(op, attr, *refs)`` with its leaves replaced by local slots; a ref is
  an earlier item or a leaf: local variable slot j, parameter slot j or data slot j
  (encoding: :func:`.template_blocks.build_template`);
* ``vars``: the global x index of each of the k local variable slots (first
  occurrence), ``params``: the global p index of each of the q parameter slots,
  ``data``: the r data values;
* ``shift``: the constant of the body's top-level sum (moved into the bounds, as the
  per-instance path and the NL writer do).

Rows with equal keys are instances of one template, which is built once from the key;
:mod:`.template_blocks` turns the groups into
:class:`~caspar_backend.blocks.TemplateBlock` s (one pattern group each; the tables are
arrays made from the collected lists).

Why the template of a key *is* each of its rows (the rule that makes a wrong or
differently rounded template impossible, not just unlikely): the pass applies the
Graph's value-dependent construction rules itself (:mod:`.template_rules`: constants
folded, a sum's constants gathered into one, ``0``/``1``/``-1`` factors, ``-(-a)``,
numeric exponents), so the numbers left in a row are exactly the constants of the
walker's row, each a data slot; the template computes with them symbolically and no
rule of the Graph applies to a data slot.  Variables are slots by first occurrence, so
two rows share a key only when their variables repeat in the same pattern.  The
translation of each Pyomo class follows :mod:`.walker` (the same flattened sums with
their ``lincomb`` of linear terms, the same shared subexpressions, the same leaf order,
so x and p come out in the same order as on the per-instance path).

Rows this reader does not take (the caller walks them per instance instead):
``Expr_if``, ``max``/``min``, relational and logical expressions, external functions,
any class it does not know, a leaf the walker would reject, a non-finite number,
expressions nested deeper than :data:`MAX_DEPTH`, rows with no free variable; and,
decided per group after the pass (:func:`.template_blocks.make_blocks`), templates with
no variable left.
"""

from __future__ import annotations

from typing import final

from .functions import UNARY
from .template_blocks import make_blocks
from .template_rules import NotTemplatable, const, make_rules
from .walker import _CONST, _EXPR, _LOGICAL_CONST, _NATIVE, _PARAM, _VAR

#: expression levels this reader follows before leaving a row to the walker
MAX_DEPTH = 100
#: nesting of sums / negations flattened into one sum (as in the walker)
_FLATTEN_DEPTH = 32

@final
class TemplateGroup:
    """Rows of one key (a plain accumulator)."""

    __slots__ = ("key", "rows", "vars", "params", "data", "owner")

    def __init__(self, key, owner):
        self.key = key
        self.owner = owner
        self.rows: list = []
        self.vars: list = []
        self.params: list = []
        self.data: list = []


@final
class TemplateReader:
    """One pass per row; rows grouped by key (see the module docstring).

    Shares the :class:`~.walker.ExpressionWalker`'s leaf memo, so a VarData or Param
    has one index in x or p whichever reader meets it first.
    """

    def __init__(self, walker):
        self.groups: dict = {}
        ps = _RowPass(walker, self.groups)
        #: ``read(body, row, owner) -> shift or None``: add ``body`` as row ``row`` to
        #: its group and return its shift; ``None`` when the row is not templatable
        #: (nothing recorded; the caller walks it)
        self.read = ps.read
        #: ``read_difference(lhs, rhs, row, owner)``: :attr:`read` of the body ``lhs -
        #: rhs`` without building it (Pyomo's ``to_bounded_expression`` builds that sum
        #: for a relation with variables on both sides): the same key, tables and
        #: shift.  The caller passes a relation whose ``rhs`` is an expression, not a
        #: bare variable (Pyomo turns ``-x`` into the monomial ``-1*x``, which a fixed
        #: ``x`` would make a parameter term here).
        self.read_difference = ps.read_difference

    def blocks(self):
        """``(blocks, refused)``: the groups as TemplateBlocks, and the rows to walk
        per instance after all (:func:`.template_blocks.make_blocks`)."""
        return make_blocks(self.groups.values())


@final
class _RowPass:
    """The per-row pass, as closures over the row's state (this is the hot loop of
    extraction, so it avoids attribute look-ups, method calls and small tuples per
    node).

    ``read`` and ``read_difference`` (:class:`TemplateReader`'s) make the pass, then
    add the row to ``groups`` under its key: ``items`` (the post-order operations
    ``(op, attr, *refs)``), ``vslot`` / ``pslot`` (global index -> local slot, in slot
    order) and ``data`` (data slot values) describe the row meanwhile.  A handler
    returns a reference of :mod:`.template_rules` (a symbolic int, a pending constant
    or a pending sum) and builds through that module's rules.  Inside the pass,
    :class:`NotTemplatable` marks a row the walker must take.
    """

    def __init__(self, walker, groups: dict):
        from pyomo.common.numeric_types import native_numeric_types as native

        from .walker import _pyomo_classes

        ne, _re, _le = _pyomo_classes()
        memo, kinds, classify, new_leaf, keep_alive = walker.shared_state()
        items, vslot, pslot, data, shared = [], {}, {}, [], {}
        put, put_datum = items.append, data.append
        mat, neg, apply, sum_of, lincomb, top, reset = make_rules(items, data)
        mono = ne.MonomialTermExpression
        # class -> handler(e, depth) of an expression class, or the leaf kind (an int;
        # _NATIVE for numbers), filled on first sight of each class
        disp: dict = {}
        leaf_kinds = (_VAR, _PARAM, _CONST, _NATIVE, _LOGICAL_CONST)

        def leaf(e, kind):
            n = memo.get(id(e))
            if n is None:
                if kind not in leaf_kinds:
                    raise NotTemplatable   # the walker names the bad leaf
                n = new_leaf(e, kind)
            op = n.op
            if op == "var":
                s = vslot.get(n.attr)
                if s is None:
                    s = vslot[n.attr] = len(vslot)
                return 4 * s
            if op == "param":
                s = pslot.get(n.attr)
                if s is None:
                    s = pslot[n.attr] = len(pslot)
                return 4 * s + 1
            return n.attr                  # a constant: pending

        def resolve(e):
            cls = e.__class__
            if cls in native:
                h = _NATIVE
            else:
                h = kinds.get(cls)
                if h is None:
                    h = classify(cls, e)
                if h == _EXPR:
                    if e.is_named_expression_type():
                        h = h_named
                    else:
                        h = next((fn for base, fn in bases if isinstance(e, base)), h_refuse)
            disp[cls] = h
            return h

        def ref(e, depth):
            h = disp.get(e.__class__)
            if h is None:
                h = resolve(e)
            if h.__class__ is int:             # a leaf
                if h == _NATIVE:               # a number: pending (template_rules.const)
                    v = float(e)
                    if v - v != 0.0:
                        raise NotTemplatable
                    return v if v != 0.0 else 0.0
                n = memo.get(id(e))
                if n is not None and n.op == "var":   # the common leaf, no call
                    s = vslot.get(n.attr)
                    if s is None:
                        s = vslot[n.attr] = len(vslot)
                    return 4 * s
                return leaf(e, h)
            # an object used twice in one row is one node (as the walker's memo
            # makes it), so the template computes it once
            i = id(e)
            r = shared.get(i)
            if r is None:
                if depth > MAX_DEPTH:
                    raise NotTemplatable
                r = shared[i] = h(e, depth + 1)
            return r

        def h_mul(e, d):
            a, b = e._args_
            ra = ref(a, d)
            rb = ref(b, d)
            ca, cb = ra.__class__, rb.__class__
            # the common cases inline (template_rules.make_rules' apply, "mul")
            if ca is int:
                if cb is int:
                    put(("mul", None, ra, rb))
                    return 4 * len(items) - 1
                if cb is float and rb != 0.0 and rb != 1.0 and rb != -1.0:
                    put_datum(rb)
                    put(("mul", None, ra, 4 * len(data) - 2))
                    return 4 * len(items) - 1
            elif ca is float and cb is int and ra != 0.0 and ra != 1.0 and ra != -1.0:
                put_datum(ra)
                put(("mul", None, 4 * len(data) - 2, rb))
                return 4 * len(items) - 1
            return apply("mul", None, ra, rb)

        def h_pow(e, d):
            a, b = e._args_
            ra = ref(a, d)
            rb = ref(b, d)
            if ra.__class__ is int:
                if rb.__class__ is int:
                    put(("pow", None, ra, rb))
                    return 4 * len(items) - 1
                if rb == 2.0:                  # the common square (template_rules)
                    put(("powi", 2, ra))
                    return 4 * len(items) - 1
            return apply("pow", None, ra, rb)

        def h_div(e, d):
            a, b = e._args_
            ra = ref(a, d)
            rb = ref(b, d)
            if ra.__class__ is int and rb.__class__ is int:
                put(("div", None, ra, rb))
                return 4 * len(items) - 1
            return apply("div", None, ra, rb)

        def h_neg(e, d):
            return neg(ref(e._args_[0], d))

        def h_unary(e, d):
            op = UNARY.get(e._name)
            if op is None:
                raise NotTemplatable
            r = ref(e._args_[0], d)
            if r.__class__ is int:
                put((op, None, r))
                return 4 * len(items) - 1
            return apply(op, None, r)

        def h_named(e, d):
            inner = e.expr
            if inner is None:
                raise NotTemplatable
            return ref(inner, d)

        def h_refuse(e, d):
            raise NotTemplatable

        def h_sum(e, d):
            flat, todo = [], []
            return assemble(flat, todo, collect(e.args, 1.0, flat, todo, d, 0), d)

        bases = [(ne.SumExpression, h_sum), (ne.NegationExpression, h_neg),
                 (ne.ProductExpression, h_mul), (ne.DivisionExpression, h_div),
                 (ne.PowExpression, h_pow), (ne.UnaryFunctionExpression, h_unary)]

        def assemble(flat, todo, c, d):
            # the walker's _sum_of: lincomb(linear terms) + sum(sign * others) + c
            lin = lincomb(flat) if flat else None
            if not todo and not c and lin is not None:
                return lin
            parts = [] if lin is None else [lin]
            for k in range(0, len(todo), 2):
                r = ref(todo[k], d)
                parts.append(r if todo[k + 1] > 0 else neg(r))
            if c:
                parts.append(const(c))
            return sum_of(parts)

        def collect(args, s, flat, todo, d, nest):
            # the walker's _collect: s * args into flat as (coefficient, variable
            # ref) pairs, a numeric coefficient as a float; other terms into todo as
            # (term, sign) pairs; returns the constant
            c = 0.0
            for a in args:
                cls = a.__class__
                if cls is mono:
                    k, v = a._args_
                    n = memo.get(id(v))
                    if n is not None and n.op == "var" and k.__class__ in native:
                        # the common linear term c*x, x met before: no calls
                        sl = vslot.get(n.attr)
                        if sl is None:
                            sl = vslot[n.attr] = len(vslot)
                        flat.append(float(s * k))
                        flat.append(4 * sl)
                        continue
                    if k.__class__ in native:
                        flat.append(float(s * k))
                    else:
                        rk = ref(k, d)
                        flat.append(rk if s > 0 else neg(rk))
                    flat.append(ref(v, d))
                    continue
                h = disp.get(cls)
                if h is None:
                    h = resolve(a)
                if h.__class__ is int:         # a leaf
                    if h == _NATIVE:
                        c += s * a
                    elif h == _VAR:
                        n = memo.get(id(a))
                        if n is not None and n.op == "var":   # met before: no call
                            sl = vslot.get(n.attr)
                            if sl is None:
                                sl = vslot[n.attr] = len(vslot)
                            flat.append(s)
                            flat.append(4 * sl)
                            continue
                        r = leaf(a, h)
                        if r & 3 == 0:
                            flat.append(s)
                            flat.append(r)
                        else:          # a fixed Var: a parameter term
                            todo.append(a)
                            todo.append(s)
                    elif h == _LOGICAL_CONST:
                        c += s * float(a)
                    else:
                        todo.append(a)
                        todo.append(s)
                    continue
                if h is h_sum and nest < _FLATTEN_DEPTH:
                    c += collect(a.args, s, flat, todo, d, nest + 1)
                elif h is h_neg and nest < _FLATTEN_DEPTH:
                    c += collect(a.args, -s, flat, todo, d, nest + 1)
                else:
                    todo.append(a)
                    todo.append(s)
            return c

        def start():
            items.clear()
            vslot.clear()
            pslot.clear()
            data.clear()
            shared.clear()
            reset()

        def add(r, row, owner):
            # the row into its key's group; None for a row without a free variable
            # (a trivial row: the walker's)
            if not vslot:
                return None
            root, shift = top(r)
            key = (tuple(items), root, len(vslot), len(pslot), len(data))
            grp = groups.get(key)
            if grp is None:
                grp = groups[key] = TemplateGroup(key, owner)
            grp.rows.append(row)
            grp.vars.extend(vslot)
            grp.params.extend(pslot)
            grp.data.extend(data)
            return shift

        def read(body, row, owner):
            # the leaf memo is keyed by id: keep the body (which to_bounded_expression
            # may have made just now) alive as long as the walker keeps its own roots
            keep_alive(body)
            start()
            try:
                return add(ref(body, 0), row, owner)
            except NotTemplatable:
                return None

        def read_difference(lhs, rhs, row, owner):
            # the row lhs - rhs, as the walker reads Pyomo's lhs - rhs: that is a sum
            # of lhs's terms (lhs itself or, a sum, its arguments) and -rhs (a negated
            # sum, or a monomial with the negated coefficient), which collect
            # flattens into the same terms, signs and constants (lhs's constants
            # gathered from 0, then rhs's, as the walker's nested collect gathers
            # them).  (lhs and rhs belong to the constraint's expression, alive with
            # the model.)
            start()
            flat, todo = [], []
            try:
                c = collect((lhs,), 1.0, flat, todo, 0, 0)
                c += collect((rhs,), -1.0, flat, todo, 0, 0)
                return add(assemble(flat, todo, c, 0), row, owner)
            except NotTemplatable:
                return None

        self.read, self.read_difference = read, read_difference
