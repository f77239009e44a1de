"""Pyomo expression trees -> nodes of one caspar :class:`~caspar_backend.expr.Graph`.

A Pyomo expression is a tree of Python objects whose leaves are numbers,
``VarData``, ``ParamData`` and named ``Expression`` components.  The walker
maps each object ``e`` to a node ``N(e)``:

=====================================  =========================================
Pyomo                                  caspar
=====================================  =========================================
int / float / bool / numpy scalar      ``const(v)``
free ``VarData``                       ``var(i)``, ``i`` its position in x
fixed ``VarData``, mutable ``Param``   ``param(k)``, ``k`` its position in p
kernel ``parameter``                   ``param(k)`` (a mutable Param by another name)
immutable Param, ``NumericConstant``   ``const(value)``
named ``Expression``                   ``N(e.expr)``, walked once (memo by id)
``c0 + sum_k a_k x_k + sum_j t_j``     ``sum(lincomb(a, x), N(t_j)..., c0)``
``-a``, ``a*b``, ``a/b``, ``a**b``     ``neg``, ``mul``, ``div``, ``pow``
intrinsic ``f(a)``, ``abs(a)``         ``f`` via :data:`.functions.UNARY`
``Expr_if(c, a, b)``                   ``if_else(N(c), N(a), N(b))``
``max(...)``, ``min(...)``             folded ``fmax``, ``fmin``
relational / logical (in ``Expr_if``)  ``le lt eq ne``, ``and or not``
``ExternalFunction``                   :class:`UnsupportedOpError`
=====================================  =========================================

Why it is shaped like this:

* **Two engines, one result.**  Recursive descent with one small handler per
  Pyomo class is the fastest way to walk in CPython, but a chain nested
  10^5 deep would hit the recursion limit; so below ``depth_limit`` levels
  the walker recurses, and a subtree deeper than that is handed to an
  explicit-stack engine (:meth:`ExpressionWalker._walk_iterative`).  Both
  share the memo and the builders, so they build identical nodes.
* **Each object is walked once**: every interior object and every leaf is
  memoized by ``id``.  Shared subexpressions and named Expressions become one
  shared subgraph (the Graph's hash-consing would merge them anyway; the memo
  avoids walking them again).  ``id`` is only a safe key while the object is
  alive, so the walker keeps every root it was given (which keeps the whole
  tree alive) until :meth:`~ExpressionWalker.release`.
* **Linear fast path**: the linear terms of a sum (``MonomialTermExpression``
  and bare variables, which is everything in a ``LinearExpression``) are
  gathered straight into one ``lincomb`` node, never walked one by one;
  negated and nested sums are flattened with a sign.
* Dispatch is a dict from the object's class to a handler or a leaf kind,
  filled on first sight of each class, so the hot path does no
  ``isinstance`` chains.
"""

from __future__ import annotations

import math
from typing import final

from caspar_backend.errors import ModelError, NonFiniteError, UnsupportedOpError

from .functions import COMPARISON, LOGICAL, UNARY
from .naming import describe, kind_of, located

# Leaf kinds (the dispatch table's values for non-expression classes).
_NATIVE, _LOGICAL_CONST, _VAR, _PARAM, _CONST, _EXPR, _BAD = range(7)

#: expression levels walked recursively before switching to the explicit stack
#: (each level is two Python frames; CPython's default limit is 1000 frames)
DEPTH_LIMIT = 150


def _pyomo_classes():
    """The expression classes the walker dispatches on, imported lazily."""
    from pyomo.core.expr import logical_expr as le
    from pyomo.core.expr import numeric_expr as ne
    from pyomo.core.expr import relational_expr as re

    return ne, re, le


@final
class ExpressionWalker:
    """Translate Pyomo expressions into one graph; collect x and p leaves.

    After walking, ``x_vars`` lists the free ``VarData`` in order of first
    appearance (``var(i)`` is ``x_vars[i]``) and ``p_objs`` the mutable
    ``ParamData`` and fixed ``VarData`` (``param(k)`` is ``p_objs[k]``).
    ``context`` names the component being walked, for error messages.
    """

    def __init__(self, graph, depth_limit: int = DEPTH_LIMIT):
        from pyomo.common.numeric_types import native_logical_types, native_numeric_types

        self.g = graph
        self.x_vars: list = []
        self.p_objs: list = []
        self.context = None
        self.depth_limit = depth_limit
        self._memo: dict[int, object] = {}
        self._alive: list = []
        self._native = native_numeric_types
        self._logical = native_logical_types
        self._kinds: dict[type, int] = {}
        self._handlers: dict[type, object] = {}   # class -> handler(e, depth) -> Node
        self._builders: dict[type, object] = {}   # class -> build(e, child nodes) -> Node
        ne, re, le = _pyomo_classes()
        self._monomial = ne.MonomialTermExpression
        self._coef: dict[float, object] = {}  # coefficient value -> const node
        self._one = self._coef[1.0] = graph.const(1.0)
        self._minus_one = self._coef[-1.0] = graph.const(-1.0)
        g, node, memo_get = graph, self._node, self._memo.get

        # (the handlers try the memo before calling _node: most children are
        # leaves seen before, and a dict lookup is cheaper than a call)
        def unary_op(build):
            def handler(e, d):
                a = e._args_[0]
                return build(e, (memo_get(id(a)) or node(a, d),))
            return handler, build

        def binary_op(fn):
            def handler(e, d):
                a, b = e._args_
                return fn(memo_get(id(a)) or node(a, d), memo_get(id(b)) or node(b, d))
            return handler, (lambda e, a: fn(a[0], a[1]))

        def n_ary(build):
            return (lambda e, d: build(e, [node(c, d) for c in e.args])), build

        neg = unary_op(lambda e, a: g.neg(a[0]))
        self._neg_builder = neg[1]
        # base class -> (recursive handler, iterative builder); subclasses (NPV_*,
        # MonomialTermExpression, LinearExpression, AbsExpression...) resolve
        # through their MRO on first sight.
        self._by_base = {
            ne.SumExpression: (self._h_sum, _SUM),
            ne.NegationExpression: neg,
            ne.ProductExpression: binary_op(g.mul),
            ne.DivisionExpression: binary_op(g.div),
            ne.PowExpression: binary_op(g.pow),
            ne.UnaryFunctionExpression: unary_op(self._unary),
            ne.Expr_ifExpression: n_ary(lambda e, a: g.if_else(a[0], a[1], a[2])),
            ne.MaxExpression: n_ary(lambda e, a: self._fold("fmax", a)),
            ne.MinExpression: n_ary(lambda e, a: self._fold("fmin", a)),
            ne.ExternalFunctionExpression: (self._external, _EXTERNAL),
            re.InequalityExpression: n_ary(lambda e, a: g.cmp(
                COMPARISON["InequalityExpression", bool(e.strict)], a[0], a[1])),
            re.EqualityExpression: n_ary(lambda e, a: g.cmp("eq", a[0], a[1])),
            re.NotEqualExpression: n_ary(lambda e, a: g.cmp("ne", a[0], a[1])),
            re.RangedExpression: n_ary(self._ranged),
            le.AndExpression: n_ary(lambda e, a: self._fold(LOGICAL["AndExpression"], a)),
            le.OrExpression: n_ary(lambda e, a: self._fold(LOGICAL["OrExpression"], a)),
            le.NotExpression: n_ary(lambda e, a: g.apply(LOGICAL["NotExpression"], a[0])),
        }

    # ------------------------------------------------------------------ public
    def walk(self, expr):
        """The node of ``expr`` (a Pyomo expression, leaf or number)."""
        self._alive.append(expr)
        try:
            return self._node(expr, 0)
        except NonFiniteError as exc:  # name the component being walked
            raise located(exc, describe(self.context)) from None

    def shared_state(self):
        """What the template reader (:mod:`.templates`) shares with this walker, so a
        leaf has one index in x or p whichever of the two meets it first:
        ``(memo, kinds, classify, leaf, keep_alive)`` -- the id -> node memo, the
        class -> kind table, ``classify(cls, obj) -> kind``, ``leaf(obj, kind) ->
        node`` (registers a new x or p entry, raises for a bad leaf naming it), and
        ``keep_alive(obj)``, which keeps an object alive as long as the memo (whose
        keys are ids)."""
        return self._memo, self._kinds, self._classify, self._leaf, self._alive.append

    def release(self) -> None:
        """Forget the memo and the objects kept alive for it."""
        self._memo.clear()
        self._alive.clear()

    # ------------------------------------------------------ recursive engine
    def _node(self, e, depth):
        cls = e.__class__
        if cls in self._native:
            return self.g.const(e)
        memo = self._memo
        n = memo.get(id(e))
        if n is not None:
            return n
        h = self._handlers.get(cls)
        if h is None:
            kind = self._kinds.get(cls)
            if kind is None:
                kind = self._classify(cls, e)
            if kind != _EXPR:
                return self._leaf(e, kind)
            h = self._resolve(cls, e)[0]
        n = h(e, depth + 1) if depth < self.depth_limit else self._walk_iterative(e)
        memo[id(e)] = n
        return n

    def _h_sum(self, e, depth):
        flat, todo, signs = [], [], []
        const = self._collect(e.args, 1.0, flat, todo, signs, depth, 0)
        node, memo_get = self._node, self._memo.get
        return self._sum_of(flat, [memo_get(id(t)) or node(t, depth) for t in todo],
                            signs, const)

    def _h_named(self, e, depth):
        try:
            return self._node(self._named_inner(e), depth)
        except NonFiniteError as exc:
            raise located(exc, f"expression {e.name}", expression=True) from None

    # ------------------------------------------------------ iterative engine
    def _walk_iterative(self, root):
        """Explicit-stack post-order walk (any depth); frames are
        ``[expr, builder, children to walk, their nodes, sum data or None]``."""
        memo, kinds, native, const = self._memo, self._kinds, self._native, self.g.const
        stack = []
        frame = self._frame(root)
        while True:
            # resolve every child that needs no frame of its own in one tight loop
            todo, res = frame[2], frame[3]
            i, n = len(res), len(todo)
            while i < n:
                child = todo[i]
                cls = child.__class__
                if cls in native:
                    res.append(const(child))
                else:
                    node = memo.get(id(child))
                    if node is None:
                        kind = kinds.get(cls)
                        if kind is None:
                            kind = self._classify(cls, child)
                        if kind == _EXPR:
                            break
                        node = self._leaf(child, kind)
                    res.append(node)
                i += 1
            if i < n:  # descend into the first child that is an expression
                stack.append(frame)
                frame = self._frame(todo[i])
                continue
            node = frame[1](frame[0], res) if frame[4] is None else self._build_sum(frame)
            memo[id(frame[0])] = node
            if not stack:
                return node
            frame = stack.pop()
            frame[3].append(node)

    def _frame(self, e):
        cls = e.__class__
        build = self._builders.get(cls)
        if build is None:
            build = self._resolve(cls, e)[1]
        if build is _SUM:
            return self._sum_frame(e, self.depth_limit)
        if build is _EXTERNAL:
            self._external(e, 0)
        if build is _NAMED:
            return [e, _first, [self._named_inner(e)], [], None]
        return [e, build, e.args, [], None]

    # ------------------------------------------------------------------ sums
    def _sum_frame(self, e, depth):
        """Split a sum into constant + linear part + other terms (to walk).

        Negations and sums nested inside the sum are flattened with a sign, so
        Pyomo's ``lhs - rhs`` bodies (``sum(lhs..., neg(sum(rhs...)))``) give
        one ``lincomb`` and one constant, as the NL writer's linear repn does.
        Frame layout as in :meth:`_walk_iterative`; the sum data is
        ``(lincomb args [c0, x0, c1, x1, ...], constant, signs of the terms)``.
        """
        flat, todo, signs = [], [], []
        const = self._collect(e.args, 1.0, flat, todo, signs, depth, 0)
        return [e, None, todo, [], (flat, const, signs)]

    def _collect(self, args, s, flat, todo, signs, depth, nest):
        """Append ``s * args`` to the sum data; return their constant part."""
        native, memo, kinds, mono = self._native, self._memo, self._kinds, self._monomial
        coef = self._coef
        unit = self._one if s > 0 else self._minus_one  # coefficient of a bare Var
        const = 0.0
        for a in args:
            cls = a.__class__
            if cls is mono:
                k, v = a._args_
                if k.__class__ in native:
                    c = s * k
                    flat.append(coef.get(c) or self._new_coef(c))
                else:
                    kn = self._node(k, depth)
                    flat.append(kn if s > 0 else self.g.neg(kn))
                n = memo.get(id(v))
                flat.append(n if n is not None else self._node(v, depth))
                continue
            if cls in native:
                const += s * a
                continue
            n = memo.get(id(a))
            if n is not None and n.op == "var":
                flat.append(unit)
                flat.append(n)
                continue
            # (a memo hit that is a sum or negation is still flattened below, so
            # a row's shape never depends on what was walked before it)
            kind = kinds.get(cls)
            if kind is None:
                kind = self._classify(cls, a)
            if kind == _VAR:
                if n is None:
                    n = self._leaf(a, kind)
                if n.op == "var":
                    flat.append(unit)
                    flat.append(n)
                else:  # a fixed Var: a parameter term, as on a memo hit above
                    todo.append(a)
                    signs.append(s)
            elif kind == _EXPR and nest < _FLATTEN_DEPTH:
                build = self._builders.get(cls)
                if build is None:
                    build = self._resolve(cls, a)[1]
                if build is _SUM:
                    const += self._collect(a.args, s, flat, todo, signs, depth, nest + 1)
                elif build is self._neg_builder:
                    const += self._collect(a.args, -s, flat, todo, signs, depth, nest + 1)
                else:
                    todo.append(a)
                    signs.append(s)
            elif kind == _LOGICAL_CONST:
                const += s * float(a)
            else:
                todo.append(a)
                signs.append(s)
        return const

    def _new_coef(self, c):
        node = self._coef[c] = self.g.const(c)
        return node

    def _build_sum(self, frame):
        flat, const, signs = frame[4]
        return self._sum_of(flat, frame[3], signs, const)

    def _sum_of(self, flat, res, signs, const):
        """``lincomb(flat) + sum(sign * res) + const`` (the Graph simplifies)."""
        g = self.g
        if len(flat) == 2:  # one linear term: what lincomb would reduce it to
            lin = flat[1] if flat[0] is self._one else g.mul(flat[0], flat[1])
        else:
            lin = g.apply("lincomb", *flat) if flat else None
        if not res and not const and lin is not None:  # purely linear
            return lin
        parts = [lin] if lin is not None else []
        for node, s in zip(res, signs):
            parts.append(node if s > 0 else g.neg(node))
        if const:
            parts.append(g.const(const))
        return g.sum(parts)

    # ---------------------------------------------------------------- leaves
    def _leaf(self, obj, kind):
        g = self._g_leaf(obj, kind)
        self._memo[id(obj)] = g
        return g

    def _g_leaf(self, obj, kind):
        g = self.g
        if kind == _VAR:
            if obj.fixed:
                self.p_objs.append(obj)
                return g.param(len(self.p_objs) - 1)
            self.x_vars.append(obj)
            return g.var(len(self.x_vars) - 1)
        if kind == _NATIVE or kind == _LOGICAL_CONST:
            return g.const(float(obj))
        if kind == _PARAM and not obj.is_constant():
            self.p_objs.append(obj)
            return g.param(len(self.p_objs) - 1)
        if kind in (_PARAM, _CONST):
            v = obj.value if kind == _PARAM else obj()
            if v is None:
                raise ModelError(f"{_name(obj)} has no value (used in {self._where()})")
            try:
                fv = float(v)
            except (TypeError, ValueError) as exc:
                raise ModelError(f"{_name(obj)} has the non-numeric value {v!r} "
                                 f"(used in {self._where()})") from exc
            if not math.isfinite(fv):  # name the Param, not only the constraint
                raise NonFiniteError(f"{kind_of(obj)} {_name(obj)} has the non-finite "
                                     f"value {fv!r} (used in {describe(self.context)})")
            return g.const(fv)
        raise UnsupportedOpError(
            f"cannot use {_name(obj)} of type {type(obj).__name__} in an NLP expression "
            f"(in {self._where()}); caspar accepts continuous Vars, Params, numbers and "
            "numeric expressions")

    def _classify(self, cls, obj) -> int:
        if cls in self._native:
            kind = _NATIVE
        elif cls in self._logical:
            kind = _LOGICAL_CONST
        elif not hasattr(obj, "is_expression_type"):
            kind = _BAD
        elif obj.is_expression_type():
            kind = _EXPR
        elif obj.is_variable_type():
            kind = _VAR if obj.is_numeric_type() else _BAD
        elif obj.is_parameter_type():
            kind = _PARAM
        elif (obj.is_numeric_type() and obj.is_fixed() and not obj.is_constant()
              and not obj.is_potentially_variable() and hasattr(obj, "value")):
            # pyomo.kernel's parameter is not a "parameter type" (that name is
            # the AML's ParamData) but it is what a mutable Param is: fixed
            # data with a value the user may change between solves
            kind = _PARAM
        elif obj.is_numeric_type() and obj.is_constant():
            kind = _CONST
        else:
            kind = _BAD
        self._kinds[cls] = kind
        return kind

    # ------------------------------------------------------------- builders
    def _resolve(self, cls, e):
        """``(handler, builder)`` of an expression class, found through its MRO once."""
        if e.is_named_expression_type():
            pair = (self._h_named, _NAMED)
        else:
            pair = next((self._by_base[b] for b in cls.__mro__ if b in self._by_base), None)
            if pair is None:
                raise UnsupportedOpError(
                    f"unsupported Pyomo expression {type(e).__name__} "
                    f"({_short(e)}) in {self._where()}")
        self._handlers[cls], self._builders[cls] = pair
        return pair

    def _named_inner(self, e):
        inner = e.expr
        if inner is None:
            raise ModelError(f"named expression {e.name} has no expression "
                             f"(used in {self._where()})")
        return inner

    def _unary(self, e, a):
        op = UNARY.get(e._name)
        if op is None:
            raise UnsupportedOpError(
                f"unsupported Pyomo function {e.getname()!r} in {self._where()}: "
                f"{_short(e)}")
        return self.g.apply(op, a[0])

    def _fold(self, op, a):
        out = a[0]
        for b in a[1:]:
            out = self.g.apply(op, out, b)
        return out

    def _ranged(self, e, a):
        lo, hi = e.strict
        first = self.g.cmp("lt" if lo else "le", a[0], a[1])
        second = self.g.cmp("lt" if hi else "le", a[1], a[2])
        return self.g.apply("and", first, second)

    def _external(self, e, depth):
        fcn = getattr(e, "_fcn", None)
        label = getattr(fcn, "name", None) or e.getname()
        raise UnsupportedOpError(
            f"external function {label!r} in {self._where()} is not supported: caspar "
            "needs the function's expression to compile and differentiate it")

    def _where(self) -> str:
        return _name(self.context) if self.context is not None else "an expression"


_SUM = object()
_NAMED = object()
_EXTERNAL = object()
#: nesting of sums / negations flattened into one sum (deeper ones are walked)
_FLATTEN_DEPTH = 32


def _first(e, a):
    return a[0]


def _name(obj) -> str:
    try:
        return obj.name
    except AttributeError:
        return repr(obj)


def _short(e, n: int = 200) -> str:
    try:
        s = str(e)
    except Exception:  # printing a broken expression must not hide the real error
        s = type(e).__name__
    return s if len(s) <= n else s[:n] + " ..."
