"""A class representative built into a scratch graph as the per-node reader builds it.

:mod:`.sxgroup` builds one representative per (bucket, pattern) class with its
constants replaced by *tags* (a distinct value per coincidence class) to read the
per-node template's key, slot order and which position fills each data slot, and
with its real constants where :func:`tags_decide` cannot show that the real build
gives the same key (that build's key is the per-node template's).  All
classes of a bucket have one tree shape -- the same ops and leaf kinds at every
position (:func:`.sxgroup._mismatch`) -- so what depends only on the shape (each
position's arguments, which positions are links of an addition chain) is a
:class:`Plan`, made once per bucket; a build then reads only the class's leaves,
constants, single-use flags and wrap.
"""

from __future__ import annotations

from caspar_backend.expr import _OPS, _SIMPLIFY, Graph, Node

from . import optable as T
from .sxdag import LEAF_CONST, LEAF_PAR, LEAF_VAR, NOT_LEAF
from .sxterms import DIV, MUL, NEG, NEG_DIV, NEG_MUL

_ADD, _SUB = T.CODES["OP_ADD"], T.CODES["OP_SUB"]


class Plan:
    """The shape of a bucket's position program (``ops``, ``leaves``: per position,
    its op code and leaf kind; ``parent``, ``arg``: :func:`.sxgroup._program`'s)."""

    __slots__ = ("ops", "leaves", "kids", "link", "order", "make")

    def __init__(self, ops, leaves, parent, arg):
        L = len(parent)
        kids: list = [[] for _ in range(L)]
        for p in range(1, L):
            kids[parent[p]].append(p)
        for k in kids:
            k.sort(key=lambda q: arg[q])
        chain = (_ADD, _SUB)
        self.ops, self.leaves = ops, leaves
        self.kids = [tuple(k) for k in kids]
        # a chain link: an addition whose user is an addition; with one use in the
        # program it is fused into its user's ``sum`` (:func:`.program._fuse_sums`)
        self.link = [p > 0 and ops[p] in chain and ops[parent[p]] in chain
                     for p in range(L)]
        self.order = list(reversed(range(L)))
        self.make = [_maker(ops[p]) if leaves[p] == NOT_LEAF else None for p in range(L)]

    def build(self, g: Graph, attrs, consts: dict, wrap: int, c, single):
        """The representative in graph ``g``: ``attrs[p]`` the variable or parameter
        index of leaf position p, ``consts[p]`` the value of constant position p (real
        or tag), ``single[p]`` whether position p's node has one use in the program;
        then wrapped (``wrap``, factor ``c``)."""
        ops, leaves, kids = self.ops, self.leaves, self.kids
        fused = [lk and s for lk, s in zip(self.link, single)]
        built: list = [None] * len(ops)
        for p in self.order:
            lf = leaves[p]
            if lf == LEAF_VAR:
                built[p] = g.var(attrs[p])
            elif lf == LEAF_PAR:
                built[p] = g.param(attrs[p])
            elif lf == LEAF_CONST:
                built[p] = g.const(consts[p])
            elif fused[p]:
                continue                             # folded into its user's sum
            else:
                a = kids[p]
                if (ops[p] == _ADD or ops[p] == _SUB) and (fused[a[0]] or fused[a[1]]):
                    built[p] = g.sum([g.neg(built[q]) if ng else built[q]
                                      for q, ng in _chain_terms(ops, kids, fused, p, False)])
                    continue
                built[p] = self.make[p](g, *[built[q] for q in a])
        t = built[0]
        if wrap in (MUL, NEG_MUL):
            t = g.mul(g.const(c), t)
        elif wrap in (DIV, NEG_DIV):
            t = g.div(t, g.const(c))
        if wrap in (NEG, NEG_MUL, NEG_DIV):
            t = g.neg(t)
        return t


def _chain_terms(ops, kids, fused, p, neg) -> list:
    """``[(position, negated)]``: the terms of the fused chain under position ``p``, in
    order (a module function, not a closure: a recursive closure is a reference cycle
    per build, left to the cycle collector)."""
    a, b = kids[p]
    nb = neg ^ (ops[p] == _SUB)
    return (_chain_terms(ops, kids, fused, a, neg) if fused[a] else [(a, neg)]) + \
        (_chain_terms(ops, kids, fused, b, nb) if fused[b] else [(b, nb)])


def _maker(code: int):
    """``f(g, *args)``: what ``optable.build_op(g, code, *args)`` builds, without its
    look-ups per call (:meth:`~caspar_backend.expr.Graph.apply_nodes`: the arguments
    are nodes of ``g``, as many as the op takes)."""
    name = T.DIRECT.get(T.NAMES[code])
    if name is None:
        return T.COMPOSED[T.NAMES[code]][1]
    if name not in _OPS or name == "powi":
        return lambda g, *args: g.apply(name, *args)      # apply's error, powi's attr
    special = _SIMPLIFY.get(name)
    if special is not None:
        return special

    def make(g, *args):
        return g.apply_nodes(name, args)
    return make


#: the tag of a class's constants in the tag build: TAG0 + its number; the wrap's
#: factor's: TAG_WRAP (values no builder uses, no real constant is expected to take)
TAG0, TAG_WRAP = 1.0e6 + 0.125, 3.0e6 + 0.375
#: magnitudes of the constants the builders compare with (``_is`` tests: 0, 1, -1)
#: or make themselves (optable's composed ops: 0, 1, 2)
_BUILDER_MAGNITUDES = frozenset((0.0, 1.0, 2.0))


class TagGraph(Graph):
    """A scratch graph for the tag build that notes the steps whose result depends
    on constants' values beyond equality and the builders' comparisons with 0 and
    +-1: an op folded on constant arguments (``folded``), a sum gathering two or more
    constant terms (``gathered``; the only sums are :meth:`Plan.build`'s), and a
    negated tag (``negated``: a constant at or below -TAG0)."""

    folded = gathered = negated = False

    def const(self, value) -> Node:
        if value <= -TAG0:
            self.negated = True
        return Graph.const(self, value)

    def _fold(self, op, args, attr=None):
        for a in args:
            if a.op != "const":
                return None
        self.folded = True
        return Graph._fold(self, op, args, attr)

    def sum(self, terms) -> Node:
        terms = list(terms)
        n = 0
        for a in terms:
            for t in (a.args if a.op == "sum" else (a,)):
                n += t.op == "const"
        if n > 1:
            self.gathered = True
        return Graph.sum(self, terms)


def tags_decide(g: TagGraph, reals, exponents, factor) -> bool:
    """True when the build with real constants gives the tag build's key, slot order
    and structure, so it need not be made.  ``g``: the tag build's graph (tags from
    TAG0 up, TAG_WRAP); ``reals``: the real value of each coincidence class's tag
    (distinct: the classes are of equal values); ``exponents``: the constants kept in
    the shape (real in both builds); ``factor``: the wrap's real factor (None without
    one).

    The builders (:mod:`caspar_backend.expr`'s simplifications, :func:`_maker`'s ops,
    :meth:`Plan.build`) read a constant's value only through (a) comparisons with 0
    and +-1 and the nonzero tests of a sum's one gathered constant and of an
    ``if_else`` condition, (b) equality (interning makes one node per value; identity
    tests such as ``x - x``), (c) arithmetic: a fold, a sum of several constants, a
    negation.  Map each tag to its real value (the factor's to the factor), a negated
    tag to the negated value, and the exponents and the constants builders make
    themselves (0, 1, 2) to themselves.  When the tag build folded nothing and
    gathered no two constants, its only arithmetic is negation, and every constant
    either build makes is the other's image under that map.  The map keeps (a) when
    no real magnitude is 0, 1 or 2, and (b) when it is one to one: the reals and the
    factor distinct from each other and from the exponents (and, where a tag was
    negated, their magnitudes).  Then, step by step, both builds make the same nodes
    but for the constants' values, and shape_key reads the same key and slot order."""
    if g.folded or g.gathered:
        return False
    vals = list(reals) if factor is None else [*reals, factor]
    if any(abs(v) in _BUILDER_MAGNITUDES for v in vals):
        return False
    mags = [abs(v) for v in vals] if g.negated else vals
    seen = set(mags)
    if len(seen) < len(mags):
        return False
    exps = {abs(e) for e in exponents} if g.negated else set(exponents)
    return not (exps & seen) and all(abs(e) < TAG0 for e in exponents)
