"""Constraint rows read as template instances: one pass per row, no DAG per row.

The per-instance path (:mod:`.walker`) builds every row's expression in one
hash-consed :class:`~caspar_backend.expr.Graph`, and :class:`~caspar_backend.problem.Problem`
then hashes each row again to find its pattern group.  Large Pyomo models are a few
rules applied over index sets, so most of that work is repeated.  This reader makes
one pass over a row's Pyomo expression tree and returns its *structural key* and its
instance tables directly:

* ``key``: ``(items, root ref, k, q, r)``, the post-order list of the row's
  operations ``(op, attr, *refs)`` with its leaves replaced by local slots; a ref is
  an earlier item or a leaf: local variable slot j, parameter slot j, data slot j, or
  a literal constant (encoding: :func:`.template_blocks.build_template`);
* ``vars``: the global x index of each of the k local variable slots (first
  occurrence), ``params``: the global p index of each of the q parameter slots,
  ``data``: the r data values;
* ``shift``: the numeric constant of the body's top-level sum (moved into the bounds,
  as the per-instance path and the NL writer do).

Rows with equal keys are instances of one template, which is built once from the key;
:mod:`.template_blocks` turns the groups into
:class:`~caspar_backend.blocks.TemplateBlock` s (one pattern group each; the tables are
arrays made from the collected lists).

Why the key determines the template exactly (the rule that makes a wrong template
impossible, not just unlikely): every number of a row is either a data slot (its value
is a table entry, the template computes with it symbolically) or a literal in the key
(its value is part of the key, so only rows with that same value share the template).
Literals are the values the Graph's construction rules treat specially, so that the
template simplifies as each row's own expression would:

* ``0``, ``1``, ``-1`` anywhere (``x*0 -> 0`` is a structural zero: no Jacobian entry;
  ``x*1 -> x``), except ``lincomb`` coefficients, where only ``0`` is special;
* the exponent of a power when it is a number (``x**2 -> powi(x, 2)``, ``x**0.5 ->
  sqrt(x)``).

Every other number is data, including values of immutable Params and constants the
per-instance path would fold together (``g/tau**2`` of two immutable Params): the
template then computes the fold at evaluation time, the same function.  Variables are
slots by first occurrence, so two rows share a key only when their variables repeat in
the same pattern.  The translation of each Pyomo class follows :mod:`.walker` (the same
flattened sums with their ``lincomb`` of linear terms, the same shared subexpressions,
the same leaf order, so x and p come out in the same order as on the per-instance path).

Rows this reader does not take (the caller walks them per instance instead):
``Expr_if``, ``max``/``min``, relational and logical expressions, external functions,
any class it does not know, a leaf the walker would reject, expressions nested deeper
than :data:`MAX_DEPTH`, rows with no free variable; and, decided per group after the
pass (:func:`.template_blocks.make_blocks`), templates with no variable left and groups
with a non-finite number.
"""

from __future__ import annotations

from typing import final

from .functions import UNARY
from .template_blocks import make_blocks
from .walker import _CONST, _EXPR, _LOGICAL_CONST, _NATIVE, _PARAM, _VAR

#: expression levels this reader follows before leaving a row to the walker
MAX_DEPTH = 100
#: nesting of sums / negations flattened into one sum (as in the walker)
_FLATTEN_DEPTH = 32
_ONE, _MINUS_ONE, _ZERO = ("k", 1.0), ("k", -1.0), ("k", 0.0)


class NotTemplatable(Exception):
    """Raised inside a row's pass: this row goes the per-instance way."""


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
    order) and ``data`` (data slot values) describe the row meanwhile.  Refs are
    coded as in :func:`.template_blocks.build_template`.  Inside the pass,
    :class:`NotTemplatable` marks a row the walker must take.
    """

    def __init__(self, walker, groups: dict):
        from pyomo.common.numeric_types import native_numeric_types as native

        from .walker import _pyomo_classes

        ne, _re, _le = _pyomo_classes()
        memo, kinds, classify, new_leaf, keep_alive = walker.shared_state()
        items, vslot, pslot, data, shared = [], {}, {}, [], {}
        put, put_datum = items.append, data.append
        mono = ne.MonomialTermExpression
        # class -> handler(e, depth) of an expression class, or the leaf kind (an int;
        # _NATIVE for numbers), filled on first sight of each class
        disp: dict = {}
        leaf_kinds = (_VAR, _PARAM, _CONST, _NATIVE, _LOGICAL_CONST)

        def num(v):
            # a literal when the Graph treats the value specially, else data
            if v == 0.0:
                return _ZERO
            if v == 1.0:
                return _ONE
            if v == -1.0:
                return _MINUS_ONE
            put_datum(v)
            return 4 * len(data) - 2

        def datum(v):
            put_datum(v)
            return 4 * len(data) - 2

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
            return num(n.attr)

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
                if h == _NATIVE:
                    return num(e)
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

        def op1(name):
            def h(e, d):
                put((name, None, ref(e._args_[0], d)))
                return 4 * len(items) - 1
            return h

        def op2(name):
            def h(e, d):
                a, b = e._args_
                ra = ref(a, d)
                put((name, None, ra, ref(b, d)))
                return 4 * len(items) - 1
            return h

        def h_pow(e, d):
            a, b = e._args_
            ra = ref(a, d)
            rb = ref(b, d)
            if rb.__class__ is int and rb & 3 == 2:   # a numeric exponent is structure
                rb = ("k", data.pop())
            put(("pow", None, ra, rb))
            return 4 * len(items) - 1

        def h_unary(e, d):
            op = UNARY.get(e._name)
            if op is None:
                raise NotTemplatable
            put((op, None, ref(e._args_[0], d)))
            return 4 * len(items) - 1

        def h_named(e, d):
            inner = e.expr
            if inner is None:
                raise NotTemplatable
            return ref(inner, d)

        def h_refuse(e, d):
            raise NotTemplatable

        def h_sum(e, d):
            return sum_(e, d, False)[0]

        h_neg = op1("neg")
        bases = [(ne.SumExpression, h_sum), (ne.NegationExpression, h_neg),
                 (ne.ProductExpression, op2("mul")), (ne.DivisionExpression, op2("div")),
                 (ne.PowExpression, h_pow), (ne.UnaryFunctionExpression, h_unary)]

        def sum_(e, d, top):
            flat, todo = [], []
            return assemble(flat, todo, collect(e.args, 1.0, flat, todo, d, 0), d, top)

        def assemble(flat, todo, const, d, top):
            # the walker's _sum_of: lincomb(linear terms) + sum(sign * others) + const;
            # at the top of a row the constant is the shift instead
            parts = []
            if len(flat) == 2:     # one linear term: c*x (1*x -> x, -1*x -> -x, 0*x -> 0)
                c = flat[0]
                if c.__class__ is float:
                    c = num(c)
                if c == _ONE:
                    parts.append(flat[1])
                else:
                    put(("mul", None, c, flat[1]))
                    parts.append(4 * len(items) - 1)
            elif flat:             # lincomb drops zero coefficients; others are data
                for k in range(0, len(flat), 2):
                    c = flat[k]
                    if c.__class__ is float:
                        if c == 0.0:
                            flat[k] = _ZERO
                        else:
                            put_datum(c)
                            flat[k] = 4 * len(data) - 2
                put(("lincomb", None, *flat))
                parts.append(4 * len(items) - 1)
            for k in range(0, len(todo), 2):
                r = ref(todo[k], d)
                if todo[k + 1] > 0:
                    parts.append(r)
                else:
                    put(("neg", None, r))
                    parts.append(4 * len(items) - 1)
            shift = 0.0
            if top:
                shift = const
            elif const:
                parts.append(num(const))
            if not parts:
                return _ZERO, shift
            if len(parts) == 1:
                return parts[0], shift
            put(("sum", None, *parts))
            return 4 * len(items) - 1, shift

        def collect(args, s, flat, todo, d, nest):
            # the walker's _collect: s * args into flat as (coefficient, variable
            # ref) pairs, a numeric coefficient as a float; other terms into todo as
            # (term, sign) pairs; returns the constant
            const = 0.0
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
                        if s < 0:
                            put(("neg", None, rk))
                            rk = 4 * len(items) - 1
                        flat.append(rk)
                    flat.append(ref(v, d))
                    continue
                h = disp.get(cls)
                if h is None:
                    h = resolve(a)
                if h.__class__ is int:         # a leaf
                    if h == _NATIVE:
                        const += s * a
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
                        const += s * float(a)
                    else:
                        todo.append(a)
                        todo.append(s)
                    continue
                if h is h_sum and nest < _FLATTEN_DEPTH:
                    const += collect(a.args, s, flat, todo, d, nest + 1)
                elif h is h_neg and nest < _FLATTEN_DEPTH:
                    const += collect(a.args, -s, flat, todo, d, nest + 1)
                else:
                    todo.append(a)
                    todo.append(s)
            return const

        def add(root, shift, row, owner):
            # the row into its key's group; None for a row without a free variable
            # (a trivial row: the walker's)
            if not vslot:
                return None
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
            try:
                root, shift = row_(body)
            except NotTemplatable:
                return None
            return add(root, shift, row, owner)

        def read_difference(lhs, rhs, row, owner):
            # the row lhs - rhs, as row_() reads Pyomo's lhs - rhs: that is a sum of
            # lhs's terms (lhs itself or, a sum, its arguments) and -rhs (a negated
            # sum, or a monomial with the negated coefficient), which collect
            # flattens into the same terms, signs and constants.  (lhs and rhs belong
            # to the constraint's expression, alive with the model.)
            items.clear()
            vslot.clear()
            pslot.clear()
            data.clear()
            shared.clear()
            flat, todo = [], []
            try:
                const = collect((lhs,), 1.0, flat, todo, 0, 0)
                const += collect((rhs,), -1.0, flat, todo, 0, 0)
                root, shift = assemble(flat, todo, const, 0, True)
            except NotTemplatable:
                return None
            return add(root, shift, row, owner)

        def row_(body):
            items.clear()
            vslot.clear()
            pslot.clear()
            data.clear()
            shared.clear()
            h = disp.get(body.__class__)
            if h is None:
                h = resolve(body)
            if h == _NATIVE:
                raise NotTemplatable
            if h is h_sum:
                return sum_(body, 0, True)
            return ref(body, 0), 0.0

        self.read, self.read_difference = read, read_difference
