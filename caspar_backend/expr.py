"""The expression DAG: hash-consed nodes built through a :class:`Graph`.

A :class:`Node` is immutable: ``op`` (a name in :data:`caspar_backend.ops.OPS`
or a leaf kind in :data:`caspar_backend.ops.LEAVES`), ``args`` (a tuple of
nodes) and ``attr``:

=========  ===============================================
op         attr
=========  ===============================================
const      the float value (always finite)
var        the variable's 0-based index in x
param      the parameter's 0-based index in p
data       the column of a pattern group's per-instance data table
powi       the integer exponent
other ops  ``None``
=========  ===============================================

Hash-consing: a graph interns every node under ``(op, attr, arg ids)``, so
structurally identical subexpressions built twice are the same object and
``a is b`` is structural equality.  Exact simplifications happen at
construction: constant folding (when the result is finite), ``x + 0``,
``x * 1``, ``x * 0 -> 0`` (the structural-zero convention of CasADi and AMPL,
which is what makes derivative sparsity exact), ``x ** 0.5 -> sqrt(x)``,
integer exponents to ``powi``, ``--x -> x``, ``x - x -> 0``, ``if_else`` with
a constant condition.

Nodes overload Python's arithmetic and comparison operators, so tests and
adapters can write ``g.var(0) * 2 + g.sin(g.var(1))``.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

from . import ops as _ops
from .errors import ModelError, NonFiniteError, UnsupportedOpError, num

_OPS = _ops.OPS

Number = (int, float)


class Node:
    """One vertex of the expression DAG (final; build through :class:`Graph`)."""

    __slots__ = ("graph", "op", "args", "attr", "id")

    def __init__(self, graph, op, args, attr, nid):
        self.graph = graph
        self.op = op
        self.args = args
        self.attr = attr
        self.id = nid

    # -- predicates ---------------------------------------------------------
    @property
    def is_const(self) -> bool:
        return self.op == "const"

    @property
    def is_leaf(self) -> bool:
        return not self.args

    def __repr__(self) -> str:
        return f"<Node {to_str(self, max_len=80)}>"

    def __str__(self) -> str:
        return to_str(self)

    __hash__ = object.__hash__

    # -- operators ----------------------------------------------------------
    def _c(self, other):
        return self.graph.as_node(other)

    def __add__(self, o):
        return self.graph.add(self, o)

    def __radd__(self, o):
        return self.graph.add(o, self)

    def __sub__(self, o):
        return self.graph.sub(self, o)

    def __rsub__(self, o):
        return self.graph.sub(o, self)

    def __mul__(self, o):
        return self.graph.mul(self, o)

    def __rmul__(self, o):
        return self.graph.mul(o, self)

    def __truediv__(self, o):
        return self.graph.div(self, o)

    def __rtruediv__(self, o):
        return self.graph.div(o, self)

    def __pow__(self, o):
        return self.graph.pow(self, o)

    def __rpow__(self, o):
        return self.graph.pow(o, self)

    def __neg__(self):
        return self.graph.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return self.graph.apply("abs", self)

    def __lt__(self, o):
        return self.graph.cmp("lt", self, self._c(o))

    def __le__(self, o):
        return self.graph.cmp("le", self, self._c(o))

    def __gt__(self, o):
        return self.graph.cmp("gt", self, self._c(o))

    def __ge__(self, o):
        return self.graph.cmp("ge", self, self._c(o))

    # == and != stay identity-based so nodes work as dict keys; use g.cmp.


class Graph:
    """Owns and interns the nodes of one expression DAG (final).

    ``var_names``/``param_names`` (optional, callables or sequences mapping an
    index to a name) are used only for printing.
    """

    def __init__(self, var_names=None, param_names=None):
        self._table: dict = {}
        self.nodes: list[Node] = []
        self.var_names = var_names
        self.param_names = param_names
        # leaf index ranges seen so far: lets a model skip the full validation walk
        self.max_var_index = self.max_param_index = self.max_data_index = -1
        self.leaf_range_ok = True   # no negative index was ever created
        self._zero = self.const(0.0)
        self._one = self.const(1.0)

    def __len__(self) -> int:
        return len(self.nodes)

    # -- construction ----------------------------------------------------------
    def _intern(self, op, args, attr=None) -> Node:
        # Nodes hash and compare by identity, so the args tuple itself is the key.
        key = (op, attr, args)
        node = self._table.get(key)
        if node is None:
            node = Node(self, op, args, attr, len(self.nodes))
            self.nodes.append(node)
            self._table[key] = node
        return node

    def const(self, value) -> Node:
        if type(value) is float or type(value) is int:  # fast path: already interned
            node = self._table.get(("const", value, ()))
            if node is not None:
                return node
        v = float(value)
        if not math.isfinite(v):
            raise NonFiniteError(f"non-finite constant {num(value)} in an expression")
        if v == 0.0:
            v = 0.0  # -0.0 and 0.0 are one constant
        key = ("const", v, ())
        node = self._table.get(key)
        if node is None:
            node = Node(self, "const", (), v, len(self.nodes))
            self.nodes.append(node)
            self._table[key] = node
        return node

    def var(self, index: int) -> Node:
        i = int(index)
        if not 0 <= i <= self.max_var_index:
            self.leaf_range_ok = self.leaf_range_ok and i >= 0
            self.max_var_index = max(self.max_var_index, i)
        return self._intern("var", (), i)

    def param(self, index: int) -> Node:
        i = int(index)
        if not 0 <= i <= self.max_param_index:
            self.leaf_range_ok = self.leaf_range_ok and i >= 0
            self.max_param_index = max(self.max_param_index, i)
        return self._intern("param", (), i)

    def data(self, index: int) -> Node:
        i = int(index)
        if not 0 <= i <= self.max_data_index:
            self.leaf_range_ok = self.leaf_range_ok and i >= 0
            self.max_data_index = max(self.max_data_index, i)
        return self._intern("data", (), i)

    max_data_index = math.inf   # a graph pickled before it was kept: not known

    def as_node(self, v) -> Node:
        if isinstance(v, Node):
            if v.graph is not self:
                raise ModelError("expression nodes from two different graphs were combined")
            return v
        if isinstance(v, Number) or hasattr(v, "__float__"):
            return self.const(v)
        raise ModelError(f"cannot use {v!r} of type {type(v).__name__} in an expression")

    def _fold(self, op, args, attr=None):
        """Constant-fold ``op(args)`` if every arg is constant and the result finite."""
        for a in args:
            if a.op != "const":
                return None
        f = _OPS[op].fold
        try:
            v = f(*(a.attr for a in args), attr) if op == "powi" else f(*(a.attr for a in args))
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            return None
        if v is not None and math.isfinite(v):
            return self.const(v)
        return None

    def apply(self, op: str, *args, attr=None) -> Node:
        """Build ``op(*args)`` with the simplifications of the module docstring."""
        spec = _OPS.get(op) or _ops.get(op)  # the latter raises a clear error
        args = tuple([a if type(a) is Node and a.graph is self else self.as_node(a)
                      for a in args])
        if spec.arity is not None and len(args) != spec.arity:
            raise ModelError(f"{op} takes {spec.arity} arguments, got {len(args)}")
        return self.apply_nodes(op, args, attr)

    def apply_nodes(self, op: str, args: tuple, attr=None) -> Node:
        """:meth:`apply` for ``args`` already nodes of this graph, as many as the known
        op ``op`` takes: its simplifications, folding and interning, not its checks."""
        special = _SIMPLIFY.get(op)
        if special is not None:
            return special(self, *args) if op != "powi" else special(self, args[0], attr)
        folded = self._fold(op, args, attr)
        if folded is not None:
            return folded
        return self._intern(op, args, attr)

    def release(self) -> None:
        """Drop every node of a scratch graph no longer used: nodes and graph refer to
        each other, so they are then freed at once, not left for the cycle collector."""
        self._table.clear()
        self.nodes.clear()
        self._zero = self._one = None

    # convenient names ------------------------------------------------------
    def _n(self, a) -> Node:
        return a if type(a) is Node and a.graph is self else self.as_node(a)

    def add(self, a, b):
        return _s_add(self, self._n(a), self._n(b))

    def sub(self, a, b):
        return _s_sub(self, self._n(a), self._n(b))

    def mul(self, a, b):
        return _s_mul(self, self._n(a), self._n(b))

    def div(self, a, b):
        return _s_div(self, self._n(a), self._n(b))

    def neg(self, a):
        return _s_neg(self, self._n(a))

    def pow(self, a, b):
        return _s_pow(self, self._n(a), self._n(b))

    def powi(self, a, n: int):
        return _s_powi(self, self._n(a), int(n))

    def cmp(self, op: str, a, b):
        if op not in _ops.COMPARISONS:
            raise UnsupportedOpError(f"unknown comparison {op!r}")
        return self.apply(op, a, b)

    def if_else(self, c, a, b):
        return self.apply("if_else", c, a, b)

    def sum(self, terms: Iterable) -> Node:
        """n-ary sum; nested sums are flattened and constants gathered."""
        return self.apply("sum", *terms)

    def lincomb(self, coefs: Sequence, terms: Sequence) -> Node:
        """``sum_k coefs[k] * terms[k]`` as one linear-combination node."""
        if len(coefs) != len(terms):
            raise ModelError(
                f"lincomb: {len(coefs)} coefficients for {len(terms)} terms")
        flat = []
        for c, t in zip(coefs, terms):
            flat += [c, t]
        return self.apply("lincomb", *flat)

    def __setstate__(self, state: dict) -> None:
        # defined, so that unpickling a graph never looks it up through __getattr__ (a
        # raised AttributeError per graph: a saved problem holds hundreds)
        self.__dict__.update(state)

    def __getattr__(self, name):
        # g.sin(x), g.exp(x), g.atan2(y, x), ... for every op in the table
        if name in _ops.OPS:
            return lambda *a, **k: self.apply(name, *a, **k)
        raise AttributeError(name)


# ------------------------------------------------------------ simplifications
def _is(n: Node, v: float) -> bool:
    return n.op == "const" and n.attr == v


def _s_add(g, a, b):
    if _is(a, 0.0):
        return b
    if _is(b, 0.0):
        return a
    return g._fold("add", (a, b)) or g._intern("add", (a, b))


def _s_sub(g, a, b):
    if _is(b, 0.0):
        return a
    if _is(a, 0.0):
        return g.neg(b)
    if a is b:
        return g._zero
    return g._fold("sub", (a, b)) or g._intern("sub", (a, b))


def _s_mul(g, a, b):
    if _is(a, 0.0) or _is(b, 0.0):
        return g._zero
    if _is(a, 1.0):
        return b
    if _is(b, 1.0):
        return a
    if _is(a, -1.0):
        return g.neg(b)
    if _is(b, -1.0):
        return g.neg(a)
    return g._fold("mul", (a, b)) or g._intern("mul", (a, b))


def _s_div(g, a, b):
    if _is(b, 1.0):
        return a
    if _is(a, 0.0) and not _is(b, 0.0):
        return g._zero
    return g._fold("div", (a, b)) or g._intern("div", (a, b))


def _s_neg(g, a):
    if a.op == "neg":
        return a.args[0]
    if a.op == "const":
        return g.const(-a.attr)
    return g._intern("neg", (a,))


def _s_pow(g, a, b):
    if b.op == "const":
        e = b.attr
        if e == 0.5:
            return g.apply("sqrt", a)
        if e == int(e) and abs(e) <= 1 << 30:
            return _s_powi(g, a, int(e))
    return g._fold("pow", (a, b)) or g._intern("pow", (a, b))


def _s_powi(g, a, n):
    if n is None:
        raise ModelError("powi needs an integer exponent")
    if n == 0:
        return g._one
    if n == 1:
        return a
    if a.op == "powi" and n > 0 and a.attr > 0:
        return _s_powi(g, a.args[0], a.attr * n)
    return g._fold("powi", (a,), n) or g._intern("powi", (a,), n)


def _s_sum(g, *args):
    flat, c = [], 0.0
    consts = []
    for a in args:
        for t in (a.args if a.op == "sum" else (a,)):
            if t.op == "const":
                c += t.attr
                consts.append(t)
            else:
                flat.append(t)
    if c != 0.0:
        if math.isfinite(c):
            flat.append(g.const(c))
        else:  # overflow while gathering: keep the constants as they were
            flat += consts
    if not flat:
        return g._zero
    if len(flat) == 1:
        return flat[0]
    return g._intern("sum", tuple(flat))


def _s_lincomb(g, *args):
    if len(args) % 2:
        raise ModelError("lincomb needs (coefficient, term) pairs")
    keep, c = [], 0.0
    for k in range(0, len(args), 2):
        a, t = args[k], args[k + 1]
        if _is(a, 0.0) or _is(t, 0.0):
            continue
        if a.op == "const" and t.op == "const" and math.isfinite(c + a.attr * t.attr):
            c += a.attr * t.attr
            continue
        keep += [a, t]
    if c != 0.0:
        keep += [g._one, g.const(c)]
    if not keep:
        return g._zero
    if len(keep) == 2:
        return _s_mul(g, keep[0], keep[1])
    return g._intern("lincomb", tuple(keep))


def _s_if_else(g, c, a, b):
    if c.op == "const":
        return a if c.attr != 0.0 else b
    if a is b:
        return a
    return g._intern("if_else", (c, a, b))


_SIMPLIFY = {"add": _s_add, "sub": _s_sub, "mul": _s_mul, "div": _s_div,
             "neg": _s_neg, "pow": _s_pow, "powi": _s_powi, "sum": _s_sum,
             "lincomb": _s_lincomb, "if_else": _s_if_else}


# ------------------------------------------------------------------ traversal
def topo_order(roots: Iterable[Node]) -> list[Node]:
    """All nodes reachable from ``roots``, each once, arguments before users."""
    seen: set[int] = set()
    order: list[Node] = []
    for r in roots:
        if r.id in seen:
            continue
        stack = [(r, False)]
        while stack:
            n, done = stack.pop()
            if done:
                order.append(n)
                continue
            if n.id in seen:
                continue
            seen.add(n.id)
            stack.append((n, True))
            for a in reversed(n.args):
                if a.id not in seen:
                    stack.append((a, False))
    return order


def variables(root: Node) -> list[int]:
    """Sorted variable indices ``root`` depends on."""
    return sorted({n.attr for n in topo_order([root]) if n.op == "var"})


# printing lives in its own module; re-exported here because to_str is part of the
# expression API (error messages, __repr__)
from .printing import to_str  # noqa: E402


def evaluate(roots: Sequence[Node], x=(), p=(), data=()) -> list[float]:
    """Scalar reference evaluation of ``roots`` at ``x``/``p`` with the ops'
    pure-Python ``fold`` rules (slow; for tests, diagnostics and checks)."""
    val: dict[int, float] = {}
    for n in topo_order(roots):
        op = n.op
        if op == "const":
            v = n.attr
        elif op == "var":
            v = float(x[n.attr])
        elif op == "param":
            v = float(p[n.attr])
        elif op == "data":
            v = float(data[n.attr])
        else:
            a = [val[c.id] for c in n.args]
            f = _ops.OPS[op].fold
            try:
                v = f(*a, n.attr) if op == "powi" else f(*a)
            except (ValueError, ZeroDivisionError, OverflowError):
                v = math.nan
        val[n.id] = float(v)
    return [val[r.id] for r in roots]
