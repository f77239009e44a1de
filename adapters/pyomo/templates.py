"""Constraint rows read as template instances: one pass per row, no DAG per row.

The per-instance path (:mod:`.walker`) builds every row's expression in one
hash-consed :class:`~caspar_backend.expr.Graph`, and :class:`~caspar_backend.problem.Problem`
then hashes each row again to find its pattern group.  Large Pyomo models are a few
rules applied over index sets, so most of that work is repeated.  This reader makes
one pass over a row's Pyomo expression tree and returns its *structural key* and its
instance tables directly:

* ``key``: the post-order list of operations ``(op, attr, refs)`` of the row with its
  leaves replaced by local slots, ``refs`` being earlier items (int) or leaf refs
  ``('v', j)`` (local variable slot j), ``('p', j)`` (local parameter slot j),
  ``('c', j)`` (data slot j) or ``('k', value)`` (a literal constant);
* ``vars``: the global x index of each local variable slot (first occurrence),
  ``params``: the global p index of each parameter slot, ``data``: each data value;
* ``shift``: the numeric constant of the body's top-level sum (moved into the bounds,
  as the per-instance path and the NL writer do).

Rows with equal keys are instances of one template; the template is built once from
the key (:func:`build_template`) and the rows become one
:class:`~caspar_backend.blocks.TemplateBlock`, i.e. one pattern group whose tables are
arrays made from the collected lists.

Why the key determines the template exactly (the rule that makes a wrong template
impossible, not just unlikely): every number of a row is either a data slot (its value
is a table entry, the template computes with it symbolically) or a literal in the key
(its value is part of the key, so only rows with that same value share the template).
Literals are the values the Graph's construction rules treat specially, so that the
template simplifies as each row's own expression would:

* ``0``, ``1``, ``-1`` anywhere (``x*0 -> 0`` is a structural zero: no Jacobian entry;
  ``x*1 -> x``);
* the exponent of a power when it is a number (``x**2 -> powi(x, 2)``, ``x**0.5 ->
  sqrt(x)``).

Every other number is data, including values of immutable Params and constants the
per-instance path would fold together (``g/tau**2`` of two immutable Params): the
template then computes the fold at evaluation time, the same function.  Variables are
slots by first occurrence, so two rows share a key only when their variables repeat in
the same pattern.  The translation of each Pyomo class follows :mod:`.walker` (the same
flattened sums with their ``lincomb`` of linear terms, the same leaf order, so x and p
come out in the same order as on the per-instance path).

Rows this reader does not take (the caller walks them per instance instead):
``Expr_if``, ``max``/``min``, relational and logical expressions, external functions,
any class it does not know, expressions nested deeper than :data:`MAX_DEPTH`, and
(decided per group, after the pass) templates with no variable left (trivial rows),
wide sums (at least :data:`~caspar_backend.patterns.SPLIT_MIN_TERMS` terms, which the
per-instance path splits into terms) and groups with a non-finite number.
"""

from __future__ import annotations

from typing import final

import numpy as np

from caspar_backend.expr import Graph, topo_order
from caspar_backend.patterns import SPLIT_MIN_TERMS

from .functions import UNARY
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
        self.walker = walker
        self.groups: dict = {}
        self._pass = _RowPass(walker)

    def read(self, body, row: int, owner) -> float | None:
        """Add ``body`` as row ``row`` to its group and return its shift; ``None``
        when the row is not templatable (nothing recorded; the caller walks it)."""
        # the leaf memo is keyed by id: keep the body (which to_bounded_expression may
        # have made just now) alive as long as the walker keeps its own roots
        self.walker._alive.append(body)
        ps = self._pass
        try:
            root, shift = ps.row(body)
        except NotTemplatable:
            return None
        vslot = ps.vslot
        if not vslot:
            return None            # no free variable: a trivial row, the walker's
        key = (tuple(ps.items), root, len(vslot), len(ps.pslot), len(ps.data))
        grp = self.groups.get(key)
        if grp is None:
            grp = self.groups[key] = TemplateGroup(key, owner)
        grp.rows.append(row)
        grp.vars.extend(vslot)
        grp.params.extend(ps.pslot)
        grp.data.extend(ps.data)
        return shift

    def blocks(self):
        """``(blocks, refused)``: one :class:`~caspar_backend.blocks.TemplateBlock`
        per distinct template, and the rows of groups refused after the pass (walk
        them per instance): no variable left in the template, a wide sum, or a
        non-finite number.

        Keys are per-row spellings; two keys can build the same template (a literal 0
        removed a term, so the slots first met differ).  Each key's template is
        renumbered canonically (:func:`canonical_key`: slots by first use in the
        built template, unused slots dropped) and keys with one canonical form share
        one block, instances in row order."""
        from caspar_backend.blocks import TemplateBlock

        merged: dict = {}
        refused: list = []
        for grp in self.groups.values():
            g, root = build_template(grp.key)
            N = len(grp.rows)
            _items, _root, k, q, r = grp.key
            data = np.array(grp.data, dtype=np.float64).reshape(N, r).T
            if (not _has_var(root) or _wide(root)
                    or (r and not np.isfinite(data).all())):
                refused.extend(grp.rows)
                continue
            ckey, vperm, pperm, dperm = canonical_key(root)
            tables = (np.array(grp.vars, dtype=np.int64).reshape(N, k).T[vperm],
                      np.array(grp.params, dtype=np.int64).reshape(N, q).T[pperm],
                      data[dperm], np.array(grp.rows, dtype=np.int64))
            entry = merged.get(ckey)
            if entry is None:
                merged[ckey] = entry = (grp.owner, [])
            entry[1].append(tables)
        out = []
        for ckey, (owner, parts) in merged.items():
            vt, pt, dt, rows = (np.concatenate([p[i] for p in parts], axis=-1)
                                for i in range(4))
            order = np.argsort(rows, kind="stable")
            g, root = build_template(ckey)
            out.append(TemplateBlock(g, root, vt[:, order], pt[:, order], dt[:, order],
                                     rows[order], name=_name(owner)))
        out.sort(key=lambda b: int(b.rows[0]))
        return out, refused


@final
class _RowPass:
    """The per-row pass, as closures over the row's state (this is the hot loop of
    extraction, so it avoids attribute look-ups, method calls and small tuples per
    node).

    After ``row(body)`` returned ``(root ref, shift)``: ``items`` (the post-order
    operations ``(op, attr, *refs)``), ``vslot`` / ``pslot`` (global index -> local
    slot, in slot order) and ``data`` (data slot values) describe the row.  Refs are
    ints (:func:`_var_ref` and friends) or literal tuples ``('k', value)``.  ``row``
    raises :class:`NotTemplatable` for a row the walker must take.
    """

    def __init__(self, walker):
        from pyomo.common.numeric_types import native_numeric_types as native

        from .walker import _pyomo_classes

        ne, _re, _le = _pyomo_classes()
        memo, kinds, classify, new_leaf = (walker._memo, walker._kinds, walker._classify,
                                           walker._leaf)
        items, vslot, pslot, data, shared = [], {}, {}, [], {}
        self.items, self.vslot, self.pslot, self.data = items, vslot, pslot, data
        put, put_datum = items.append, data.append
        mono = ne.MonomialTermExpression
        exprh: dict = {}                     # expression class -> handler(e, depth)
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

        def handler(cls, e):
            if e.is_named_expression_type():
                h = h_named
            else:
                h = next((fn for base, fn in bases if isinstance(e, base)), h_refuse)
            exprh[cls] = h
            return h

        def ref(e, depth):
            cls = e.__class__
            if cls in native:
                return num(e)
            h = exprh.get(cls)
            if h is None:
                kind = kinds.get(cls)
                if kind is None:
                    kind = classify(cls, e)
                if kind != _EXPR:
                    return leaf(e, kind)
                h = handler(cls, e)
            # an object used twice in one row is one node (as the walker's memo
            # makes it), so the template computes it once
            r = shared.get(id(e))
            if r is None:
                if depth > MAX_DEPTH:
                    raise NotTemplatable
                r = shared[id(e)] = h(e, depth + 1)
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
            # the walker's _sum_of: lincomb(linear terms) + sum(sign * others) + const;
            # at the top of a row the constant is the shift instead
            flat, todo = [], []
            const = collect(e.args, 1.0, flat, todo, d, 0)
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
                if cls in native:
                    const += s * a
                    continue
                h = exprh.get(cls)
                if h is None:
                    kind = kinds.get(cls)
                    if kind is None:
                        kind = classify(cls, a)
                    if kind == _VAR:
                        r = leaf(a, kind)
                        if r & 3 == 0:
                            flat.append(s)
                            flat.append(r)
                        else:          # a fixed Var: a parameter term
                            todo.append(a)
                            todo.append(s)
                        continue
                    if kind == _LOGICAL_CONST:
                        const += s * float(a)
                        continue
                    if kind != _EXPR:
                        todo.append(a)
                        todo.append(s)
                        continue
                    h = handler(cls, a)
                if h is h_sum and nest < _FLATTEN_DEPTH:
                    const += collect(a.args, s, flat, todo, d, nest + 1)
                elif h is h_neg and nest < _FLATTEN_DEPTH:
                    const += collect(a.args, -s, flat, todo, d, nest + 1)
                else:
                    todo.append(a)
                    todo.append(s)
            return const

        def row(body):
            items.clear()
            vslot.clear()
            pslot.clear()
            data.clear()
            shared.clear()
            cls = body.__class__
            if cls in native:
                raise NotTemplatable
            h = exprh.get(cls)
            if h is None:
                kind = kinds.get(cls)
                if kind is None:
                    kind = classify(cls, body)
                if kind == _EXPR:
                    h = handler(cls, body)
            if h is h_sum:
                return sum_(body, 0, True)
            return ref(body, 0), 0.0

        self.row = row


def canonical_key(root):
    """``(key, vperm, pperm, dperm)`` of a built template: the key (as
    :meth:`TemplateReader.read` spells it) with variable, parameter and data slots
    renumbered by first use in the order :func:`caspar_backend.patterns.shape_key`
    meets leaves (arguments left to right, each shared node once); ``vperm[j]`` is
    the old slot of new slot j (likewise ``pperm``, ``dperm``; int64), so
    ``old_table[vperm]`` is the new table."""
    slots = {"var": {}, "param": {}, "data": {}}
    tag = {"var": 0, "param": 1, "data": 2}
    local: dict = {}
    items: list = []

    def leaf(n):
        op = n.op
        if op == "const":
            return ("k", n.attr)
        table = slots[op]
        s = table.get(n.attr)
        if s is None:
            s = table[n.attr] = len(table)
        return 4 * s + tag[op]

    def visit(n):
        refs = []
        for a in n.args:
            if a.args:
                r = local.get(a.id)
                refs.append(visit(a) if r is None else r)
            else:
                refs.append(leaf(a))
        items.append((n.op, n.attr, *refs))
        local[n.id] = r = 4 * len(items) - 1
        return r

    root_ref = visit(root) if root.args else leaf(root)
    perms = [np.fromiter(slots[k], dtype=np.int64, count=len(slots[k]))
             for k in ("var", "param", "data")]
    key = (tuple(items), root_ref, *(len(p) for p in perms))
    return (key, *perms)


def build_template(key):
    """The template of a key, in a fresh graph: ``(graph, root)``.  Refs: ``4j``
    variable slot j, ``4j+1`` parameter slot j, ``4j+2`` data slot j, ``4i+3`` item
    i, ``('k', value)`` the constant value."""
    items, root_ref, *_ = key
    g = Graph()
    built: list = []
    leaf = (g.var, g.param, g.data)

    def ref(r):
        if r.__class__ is tuple:
            return g.const(r[1])
        j, t = divmod(r, 4)
        return built[j] if t == 3 else leaf[t](j)

    for op, attr, *refs in items:
        built.append(g.apply(op, *[ref(r) for r in refs], attr=attr))
    return g, ref(root_ref)


def _has_var(root) -> bool:
    return any(n.op == "var" for n in topo_order([root]))


def _wide(root) -> bool:
    """A sum the per-instance path would split into terms (patterns.constraint_instances)."""
    width = len(root.args) // 2 if root.op == "lincomb" else len(root.args)
    return root.op in ("sum", "lincomb") and width >= SPLIT_MIN_TERMS


def _name(owner) -> str:
    try:
        return owner.name
    except AttributeError:
        return "constraint"
