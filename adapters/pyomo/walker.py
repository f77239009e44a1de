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

* **Iterative**, with an explicit stack, so a chain nested 10^5 deep does not
  hit Python's recursion limit.
* **Each object is walked once**: every interior object and every leaf is
  memoized by ``id``.  Shared subexpressions and named Expressions become one
  shared subgraph (the Graph's hash-consing would merge them anyway; the memo
  avoids walking them again).  ``id`` is only a safe key while the object is
  alive, so the walker keeps every root it was given (which keeps the whole
  tree alive) until it is discarded.
* **Linear fast path**: the linear terms of a sum (``MonomialTermExpression``
  and bare variables, which is everything in a ``LinearExpression``) never
  go on the stack; they are gathered straight into one ``lincomb`` node.
* Dispatch is a dict from the object's class to a small integer kind or a
  builder, filled on first sight of each class, so the hot loop does no
  ``isinstance`` chains.
"""

from __future__ import annotations

from typing import final

from caspar_backend.errors import ModelError, UnsupportedOpError

from .functions import COMPARISON, LOGICAL, UNARY

# Leaf kinds (the dispatch table's values for non-expression classes).
_NATIVE, _LOGICAL_CONST, _VAR, _PARAM, _CONST, _EXPR, _BAD = range(7)


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

    def __init__(self, graph):
        from pyomo.common.numeric_types import native_logical_types, native_numeric_types

        self.g = graph
        self.x_vars: list = []
        self.p_objs: list = []
        self.context = None
        self._memo: dict[int, object] = {}
        self._alive: list = []
        self._native = native_numeric_types
        self._logical = native_logical_types
        self._kinds: dict[type, int] = {}
        self._builders: dict[type, object] = {}
        ne, re, le = _pyomo_classes()
        self._sum_classes = ne.SumExpression
        self._monomial = ne.MonomialTermExpression
        self._negation = ne.NegationExpression
        b = self._by_base = {}
        b[ne.SumExpression] = None  # handled by the sum frame
        b[ne.NegationExpression] = lambda e, a: graph.neg(a[0])
        b[ne.ProductExpression] = lambda e, a: graph.mul(a[0], a[1])
        b[ne.DivisionExpression] = lambda e, a: graph.div(a[0], a[1])
        b[ne.PowExpression] = lambda e, a: graph.pow(a[0], a[1])
        b[ne.UnaryFunctionExpression] = self._unary
        b[ne.Expr_ifExpression] = lambda e, a: graph.if_else(a[0], a[1], a[2])
        b[ne.MaxExpression] = lambda e, a: self._fold("fmax", a)
        b[ne.MinExpression] = lambda e, a: self._fold("fmin", a)
        b[ne.ExternalFunctionExpression] = _EXTERNAL
        b[re.InequalityExpression] = lambda e, a: graph.cmp(
            COMPARISON["InequalityExpression", bool(e.strict)], a[0], a[1])
        b[re.EqualityExpression] = lambda e, a: graph.cmp("eq", a[0], a[1])
        b[re.NotEqualExpression] = lambda e, a: graph.cmp("ne", a[0], a[1])
        b[re.RangedExpression] = self._ranged
        b[le.AndExpression] = lambda e, a: self._fold(LOGICAL["AndExpression"], a)
        b[le.OrExpression] = lambda e, a: self._fold(LOGICAL["OrExpression"], a)
        b[le.NotExpression] = lambda e, a: graph.apply(LOGICAL["NotExpression"], a[0])

    # ------------------------------------------------------------------ public
    def walk(self, expr):
        """The node of ``expr`` (a Pyomo expression, leaf or number)."""
        self._alive.append(expr)
        return self._walk(expr)

    def release(self) -> None:
        """Forget the memo and the objects kept alive for it."""
        self._memo.clear()
        self._alive.clear()

    # ------------------------------------------------------------- the loop
    def _walk(self, root):
        node = self._quick(root)
        if node is not None:
            return node
        memo, kinds, native = self._memo, self._kinds, self._native
        stack = [self._frame(root)]
        while True:
            frame = stack[-1]
            todo, res = frame[2], frame[3]
            i = len(res)
            if i < len(todo):
                child = todo[i]
                cls = child.__class__
                if cls in native:
                    res.append(self.g.const(child))
                    continue
                node = memo.get(id(child))
                if node is not None:
                    res.append(node)
                    continue
                kind = kinds.get(cls)
                if kind is None:
                    kind = self._classify(cls, child)
                if kind == _EXPR:
                    stack.append(self._frame(child))
                else:
                    res.append(self._leaf(child, kind))
                continue
            stack.pop()
            node = frame[1](frame[0], res) if frame[4] is None else self._build_sum(frame)
            memo[id(frame[0])] = node
            if not stack:
                return node
            stack[-1][3].append(node)

    def _quick(self, obj):
        """The node of ``obj`` if it needs no walking (number, leaf, memo hit)."""
        cls = obj.__class__
        if cls in self._native:
            return self.g.const(obj)
        node = self._memo.get(id(obj))
        if node is not None:
            return node
        kind = self._kinds.get(cls)
        if kind is None:
            kind = self._classify(cls, obj)
        return None if kind == _EXPR else self._leaf(obj, kind)

    def _frame(self, e):
        """``[expr, builder, children to walk, their nodes, sum data or None]``."""
        cls = e.__class__
        build = self._builders.get(cls)
        if build is None:
            build = self._resolve(cls, e)
        if build is _SUM:
            return self._sum_frame(e)
        if build is _EXTERNAL:
            self._external(e)
        if build is _NAMED:
            inner = e.expr
            if inner is None:
                raise ModelError(f"named expression {e.name} has no expression "
                                 f"(used in {self._where()})")
            return [e, _first, [inner], [], None]
        return [e, build, e.args, [], None]

    # ------------------------------------------------------------------ sums
    def _sum_frame(self, e):
        """Split a sum into constant + linear part (no stack) + other terms.

        Negations and sums nested inside the sum are flattened with a sign, so
        Pyomo's ``lhs - rhs`` bodies (``sum(lhs..., neg(sum(rhs...)))``) give
        one ``lincomb`` and one constant, as the NL writer's linear repn does.
        """
        coefs, terms, todo, signs = [], [], [], []
        const = 0.0
        native, memo, kinds, mono = self._native, self._memo, self._kinds, self._monomial
        builders, neg_cls = self._builders, self._negation
        stack = [(iter(e.args), 1.0)]
        while stack:
            it, s = stack[-1]
            a = next(it, _END)
            if a is _END:
                stack.pop()
                continue
            cls = a.__class__
            if cls in native:
                const += s * a
                continue
            if cls is mono:
                k, v = a._args_
                if k.__class__ in native:
                    coefs.append(s * k)
                else:
                    kn = self._walk(k)
                    coefs.append(kn if s > 0 else self.g.neg(kn))
                node = memo.get(id(v))
                terms.append(node if node is not None else self._walk(v))
                continue
            node = memo.get(id(a))
            kind = kinds.get(cls)
            if kind is None:
                kind = self._classify(cls, a)
            if kind == _VAR:
                coefs.append(s)
                terms.append(node if node is not None else self._leaf(a, kind))
            elif kind == _LOGICAL_CONST:
                const += s * float(a)
            elif kind == _EXPR and node is None:
                build = builders.get(cls)
                if build is None:
                    build = self._resolve(cls, a)
                if build is _SUM:
                    stack.append((iter(a.args), s))
                elif issubclass(cls, neg_cls):
                    stack.append((iter(a.args), -s))
                else:
                    todo.append(a)
                    signs.append(s)
            else:
                todo.append(a)
                signs.append(s)
        return [e, None, todo, [], (coefs, terms, const, signs)]

    def _build_sum(self, frame):
        coefs, terms, const, signs = frame[4]
        g = self.g
        parts = [g.lincomb(coefs, terms)] if terms else []
        for node, s in zip(frame[3], signs):
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
        if kind == _NATIVE or kind == _LOGICAL_CONST:
            return g.const(float(obj))
        if kind == _VAR:
            if obj.fixed:
                self.p_objs.append(obj)
                return g.param(len(self.p_objs) - 1)
            self.x_vars.append(obj)
            return g.var(len(self.x_vars) - 1)
        if kind == _PARAM and not obj.is_constant():
            self.p_objs.append(obj)
            return g.param(len(self.p_objs) - 1)
        if kind in (_PARAM, _CONST):
            v = obj.value if kind == _PARAM else obj()
            if v is None:
                raise ModelError(f"{_name(obj)} has no value (used in {self._where()})")
            try:
                return g.const(float(v))
            except (TypeError, ValueError) as exc:
                raise ModelError(f"{_name(obj)} has the non-numeric value {v!r} "
                                 f"(used in {self._where()})") from exc
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
        elif obj.is_numeric_type() and obj.is_constant():
            kind = _CONST
        else:
            kind = _BAD
        self._kinds[cls] = kind
        return kind

    # ------------------------------------------------------------- builders
    def _resolve(self, cls, e):
        """Find the builder of an expression class through its MRO (once)."""
        if e.is_named_expression_type():
            build = _NAMED
        else:
            build = None
            for base in cls.__mro__:
                if base in self._by_base:
                    build = self._by_base[base]
                    if base is self._sum_classes:
                        build = _SUM
                    break
            if build is None:
                raise UnsupportedOpError(
                    f"unsupported Pyomo expression {type(e).__name__} "
                    f"({_short(e)}) in {self._where()}")
        self._builders[cls] = build
        return build

    def _unary(self, e, a):
        name = e.getname()
        op = UNARY.get(name)
        if op is None:
            raise UnsupportedOpError(
                f"unsupported Pyomo function {name!r} in {self._where()}: {_short(e)}")
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

    def _external(self, e):
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
_END = object()


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
