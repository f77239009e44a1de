"""Rare constraint templates split into their terms: fewer pattern groups.

A model whose rows differ in shape -- the power balance of a bus with one branch, two
branches, a shunt, a generator, ... -- makes one pattern group per shape when its rows
are kept whole (short sums are, :data:`~caspar_backend.patterns.SPLIT_MIN_TERMS`):
hundreds of templates, each derived, generated, compiled and launched on its own,
most with a handful of instances.  Their *terms* are few shapes (a flow, a quadratic,
a variable, a constant).  This pass splits such templates into their additive terms
and groups the terms with every template of the same shape:

    the N_G rows of a group,
    root = t_1 + t_2 - t_3 (add / sub / neg / sum / lincomb spine of the template)
        ->  instances t_1, t_2, -t_3 of the term templates, each adding into its row.

It runs on the template level, after grouping and before derivation, so it applies
alike to groups made from expressions and from template blocks (the bulk readers):
one template walk per group, the instance tables permuted with array indexing.

Rules:

* nothing changes in a problem of fewer than :data:`MIN_GROUPS` constraint groups --
  small models keep their rows whole (their evaluation and rounding unchanged);
* a group is split when its template's spine has at least two terms that share
  little (:func:`~caspar_backend.patterns.split_terms`' rule, as for a wide sum) and
  every term's shape is also the shape of another group's instances (whole, or
  terms of a group split likewise): the split then adds no template, it only
  removes one -- a group whose template is its own (a thermal limit
  ``p^2 + q^2``) stays whole;
* nothing changes unless the number of constraint groups drops.

Groups are then merged by template shape (:func:`term_key`) in first-seen order;
a merged group's instances are its parts' instances in group order.  Each row's
value is the sum of its terms' values, rounded in a different order than the whole
template's (as any split sum is).
"""

from __future__ import annotations

import numpy as np

from .expr import Graph, Node
from .patterns import PatternGroup, _op_count, post_order_items, sharing_limit

#: the pass runs on problems with at least this many constraint groups
MIN_GROUPS = 32


def additive_terms(root: Node) -> list[tuple[Node, bool]]:
    """``[(node, negated)]``: the terms of ``root``'s additive spine in order (``add``,
    ``sub``, ``neg``, ``sum``; a ``lincomb`` pair ``a_k * b_k`` as the pair's node
    tuple); ``[(root, False)]`` when ``root`` is not a spine node."""
    out = []
    stack = [(root, False)]
    while stack:
        n, neg = stack.pop()
        op = n.op
        if op == "add":
            stack += [(n.args[1], neg), (n.args[0], neg)]
        elif op == "sub":
            stack += [(n.args[1], not neg), (n.args[0], neg)]
        elif op == "neg":
            stack.append((n.args[0], not neg))
        elif op == "sum":
            stack += [(a, neg) for a in reversed(n.args)]
        elif op == "lincomb":
            a = n.args
            out += [((a[k], a[k + 1]), neg) for k in range(0, len(a), 2)]
        else:
            out.append((n, neg))
    return out


def term_key(term, negated: bool):
    """``(key, vmap, pmap, dmap)`` of one term of a template: ``key`` as
    :func:`~caspar_backend.patterns.shape_key`'s (equal exactly for equal shapes) with
    the term's own slots numbered by first use; ``vmap[k]`` (``pmap``, ``dmap``) the
    template's variable (parameter, data) slot of the term's slot k, int64.  ``term``
    is a node or a lincomb pair ``(a, b)`` (the product ``a * b``); ``negated`` wraps
    it in ``neg``.  A template constant is the leaf ``("k", value)``."""
    local: dict[int, int] = {}
    slots = {"v": {}, "p": {}, "c": {}}
    items: list = []
    kinds = {"var": "v", "param": "p", "data": "c"}

    def leaf_ref(a):
        kind = kinds.get(a.op)
        if kind is None:
            return ("k", a.attr)                    # a template constant
        s = slots[kind]
        k = s.get(a.attr)
        if k is None:
            k = s[a.attr] = len(s)
        return (kind, k)

    def ref(a):
        return post_order_items(a, local, items, leaf_ref) if a.args else leaf_ref(a)

    if isinstance(term, tuple):
        items.append(("mul", None, (ref(term[0]), ref(term[1]))))
        root = len(items) - 1
    else:
        root = ref(term)
    if negated:
        items.append(("neg", None, (root,)))
        root = len(items) - 1
    maps = [np.fromiter(slots[k], np.int64, len(slots[k])) for k in "vpc"]
    key = (tuple(items), root, len(slots["v"]), len(slots["p"]), len(slots["c"]))
    return (key, *maps)


def build_term(key) -> tuple[Graph, Node]:
    """The template of a :func:`term_key` key, in a fresh graph."""
    items, root_ref, *_ = key
    g = Graph()
    built: list[Node] = []
    leaves = {"v": g.var, "p": g.param, "c": g.data, "k": g.const}

    def node(r):
        return built[r] if isinstance(r, int) else leaves[r[0]](r[1])

    for op, attr, args in items:
        built.append(g.apply_nodes(op, tuple([node(r) for r in args]), attr))
    return g, node(root_ref)


def _splittable(grp: PatternGroup):
    """The template's terms when its root is a sum of at least two terms that share
    little (:func:`~caspar_backend.patterns.split_terms`' rule), else None."""
    terms = additive_terms(grp.root)
    if len(terms) < 2:
        return None
    limit = sharing_limit(_op_count([grp.root], float("inf")), len(terms))
    total = 0
    for t in {(tuple(a.id for a in n) if isinstance(n, tuple) else n.id): n
              for n, _ in terms}.values():
        total += _op_count(list(t), float("inf")) + 1 if isinstance(t, tuple) \
            else _op_count([t], float("inf"))
        if total > limit:
            return None
    return terms


def split_rare_sums(groups: list[PatternGroup]) -> list[PatternGroup]:
    """``groups`` (constraint groups, not yet derived) with the sums whose terms are
    all shapes of other groups split into them, and equal shapes merged (module doc);
    the same list when no rule applies."""
    if len(groups) < MIN_GROUPS:
        return groups
    # per group: its terms' keys when it can split, else None; a group's whole key is
    # needed only where it does not split (it counts as one shape, and stays whole)
    split_keys = []
    for grp in groups:
        terms = _splittable(grp)
        split_keys.append(None if terms is None else [term_key(t, neg) for t, neg in terms])
    whole: dict = {}

    def whole_key(i):
        if i not in whole:
            whole[i] = [term_key(groups[i].root, False)]
        return whole[i]

    # a shape's groups: the whole shape of a group that cannot split, each term's shape
    # of one that can
    count: dict = {}
    for i, split in enumerate(split_keys):
        for key in {k[0] for k in (split if split is not None else whole_key(i))}:
            count[key] = count.get(key, 0) + 1
    merged: dict = {}
    n_split = 0
    for i, (grp, split) in enumerate(zip(groups, split_keys)):
        take = split is not None and all(count[k[0]] > 1 for k in split)
        n_split += take
        for key, vm, pm, dm in (split if take else whole_key(i)):
            merged.setdefault(key, []).append((grp, vm, pm, dm, not take))
    if not n_split or len(merged) >= len(groups):
        return groups
    out = []
    for key, members in merged.items():
        if len(members) == 1 and members[0][4]:
            out.append(members[0][0])                      # a whole group, as it was
            continue
        g, root = build_term(key)
        out.append(PatternGroup(
            kind="constraints", size=sum(m[0].size for m in members), graph=g, root=root,
            var_table=np.concatenate([m[0].var_table[m[1]] for m in members], axis=1),
            param_table=np.concatenate([m[0].param_table[m[2]] for m in members], axis=1),
            data_table=np.concatenate([m[0].data_table[m[3]] for m in members], axis=1),
            rows=np.concatenate([m[0].rows for m in members])))
    return out
