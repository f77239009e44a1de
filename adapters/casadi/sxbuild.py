"""A class representative built into a scratch graph as the per-node reader builds it.

:mod:`.sxgroup` builds one representative per (bucket, pattern) class twice (real
constants, then tags) to read the per-node template's key and slot order.  All
classes of a bucket have one tree shape -- the same ops and leaf kinds at every
position (:func:`.sxgroup._mismatch`) -- so what depends only on the shape (each
position's arguments, which positions are links of an addition chain) is a
:class:`Plan`, made once per bucket; a build then reads only the class's leaves,
constants, single-use flags and wrap.
"""

from __future__ import annotations

from caspar_backend.expr import _OPS, _SIMPLIFY, Graph

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
