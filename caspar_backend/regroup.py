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


#: a template leaf's slot kind: var, param, data (a const is its own ``("k", value)``)
_SLOT_KIND = {"var": 0, "param": 1, "data": 2}
_SLOT_TAG = ("v", "p", "c")


def term_key(term, negated: bool):
    """:func:`_term`'s key and maps."""
    return _term(term, negated)[0]


def _term(term, negated: bool):
    """``((key, vmap, pmap, dmap), ops)`` of one term of a template: ``key`` as
    :func:`~caspar_backend.patterns.shape_key`'s (equal exactly for equal shapes) with
    the term's own slots numbered by first use; ``vmap[k]`` (``pmap``, ``dmap``) the
    template's variable (parameter, data) slot of the term's slot k, a tuple of ints.
    ``term`` is a node or a lincomb pair ``(a, b)`` (the product ``a * b``);
    ``negated`` wraps it in ``neg``.  A template constant is the leaf ``("k", value)``.

    The walk is :func:`~caspar_backend.patterns.post_order_items`' order (a node's
    operation arguments first, left to right, then its leaves numbered, in argument
    order), written recursively for speed; deeper than 200 it continues with
    ``post_order_items`` itself.  The key's items are one per distinct operation node
    (and one for the lincomb pair's product, one for the negation):
    :func:`_term_ops` reads the term's operation count from them.  ``ops`` holds the
    ids of the term's operation nodes (as its keys)."""
    local: dict[int, int] = {}
    slots: tuple[dict, dict, dict] = ({}, {}, {})
    items: list = []

    def leaf_ref(a):
        kind = _SLOT_KIND.get(a.op)
        if kind is None:
            return ("k", a.attr)                    # a template constant
        s = slots[kind]
        k = s.get(a.attr)
        if k is None:
            k = s[a.attr] = len(s)
        return (_SLOT_TAG[kind], k)

    def visit(n, depth):
        if depth > 200:
            return post_order_items(n, local, items, leaf_ref)
        for a in n.args:
            if a.args and a.id not in local:
                visit(a, depth + 1)
        local[n.id] = k = len(items)
        items.append((n.op, n.attr,
                      tuple([local[a.id] if a.args else leaf_ref(a) for a in n.args])))
        return k

    def ref(a):
        if not a.args:
            return leaf_ref(a)
        r = local.get(a.id)         # a pair's second factor may be under its first
        return visit(a, 0) if r is None else r

    if isinstance(term, tuple):
        items.append(("mul", None, (ref(term[0]), ref(term[1]))))
        root = len(items) - 1
    else:
        root = ref(term)
    visit = ref = None  # a recursive closure is a reference cycle: freed now, not by gc
    if negated:
        items.append(("neg", None, (root,)))
        root = len(items) - 1
    key = (tuple(items), root, len(slots[0]), len(slots[1]), len(slots[2]))
    return (key, tuple(slots[0]), tuple(slots[1]), tuple(slots[2])), local


def _term_ops(key, negated: bool) -> int:
    """A term's operation count from its :func:`term_key` ``key``: one item per distinct
    operation node (a lincomb pair's product counted, as the ``a * b`` it stands for),
    less the negation's item (the ``neg`` is the spine's, not the term's)."""
    return len(key[0]) - negated


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


def _split_keys(grp: PatternGroup):
    """The :func:`term_key` s of the template's terms when its root is a sum of at least
    two terms that share little (:func:`~caspar_backend.patterns.split_terms`' rule: the
    distinct terms' operation counts add up to at most :func:`sharing_limit` of the
    root's), else None.

    One walk per term gives both its key and its operation count.  The root's count
    (a walk of the whole template) is needed only when the terms' total exceeds the
    limit of its lower bound: the distinct operation nodes of the terms walked so far,
    plus the root.  The rule is checked after each distinct term, so a sum whose terms
    share a long prefix stops after a few terms (the walks stay linear in the
    template)."""
    terms = additive_terms(grp.root)
    n = len(terms)
    if n < 2:
        return None
    limit = None
    total = 0
    counted = set()         # a term written twice (one node) counts once
    ops: set = set()        # the operation nodes of the terms walked so far
    keys = []
    for t, neg in terms:
        tk, t_ops = _term(t, neg)
        ident = tuple(a.id for a in t) if isinstance(t, tuple) else t.id
        if ident not in counted:
            counted.add(ident)
            total += _term_ops(tk[0], neg)
            ops.update(t_ops)
            if total > sharing_limit(len(ops) + 1, n):
                if limit is None:
                    limit = sharing_limit(_op_count([grp.root], float("inf")), n)
                if total > limit:
                    return None
        keys.append(tk)
    return keys


class _Flat:
    """One kind of table (var, param, data, rows) of all the groups, raveled one after
    the other: slot ``j`` of group ``g``'s table starts at ``offset[g] + j * size[g]``
    and its ``size[g]`` instances follow.  Lets :meth:`gather` assemble a merged group's
    table from any members in a few array operations."""

    def __init__(self, tables: list[np.ndarray]):
        self.flat = np.concatenate([t.ravel() for t in tables])
        self.offset = np.cumsum([0] + [t.size for t in tables[:-1]]).astype(np.int64)

    def gather(self, gi: np.ndarray, n: np.ndarray, maps: np.ndarray) -> np.ndarray:
        """``np.concatenate([table[g][maps[i]] for i, g in enumerate(gi)], axis=1)``
        where group ``gi[i]`` has ``n[i]`` instances and ``maps`` is (members, k): the
        members' slots side by side, without one array indexing per member (most groups
        of a bulk-read model have one or two instances)."""
        base = (self.offset[gi][:, None] + maps * n[:, None]).T        # (k, members)
        within = np.arange(int(n.sum()), dtype=np.int64) - np.repeat(np.cumsum(n) - n, n)
        return self.flat[np.repeat(base, n, axis=1) + within]


def split_rare_sums(groups: list[PatternGroup]) -> list[PatternGroup]:
    """``groups`` (constraint groups, not yet derived) with the sums whose terms are
    all shapes of other groups split into them, and equal shapes merged (module doc);
    the same list when no rule applies."""
    if len(groups) < MIN_GROUPS:
        return groups
    # shapes by number (first-seen order): a key is a long tuple, hashed once here
    shape_ids: dict = {}
    shapes: list = []

    def shape_of(tk):
        sid = shape_ids.setdefault(tk[0], len(shape_ids))
        if sid == len(shapes):
            shapes.append(tk[0])
        return (sid, *tk[1:])

    # per group: its terms' (shape, maps) when it can split, else None; a group's whole
    # key is needed only where it does not split (it counts as one shape, stays whole)
    split_keys = []
    for grp in groups:
        keys = _split_keys(grp)
        split_keys.append(None if keys is None else [shape_of(tk) for tk in keys])
    whole: dict = {}

    def whole_key(i):
        if i not in whole:
            whole[i] = [shape_of(term_key(groups[i].root, False))]
        return whole[i]

    # a shape's groups: the whole shape of a group that cannot split, each term's shape
    # of one that can
    count: dict = {}
    for i, split in enumerate(split_keys):
        for sid in {k[0] for k in (split if split is not None else whole_key(i))}:
            count[sid] = count.get(sid, 0) + 1
    merged: dict = {}
    n_split = 0
    for i, split in enumerate(split_keys):
        take = split is not None and all(count[k[0]] > 1 for k in split)
        n_split += take
        for sid, vm, pm, dm in (split if take else whole_key(i)):
            merged.setdefault(sid, []).append((i, vm, pm, dm, not take))
    if not n_split or len(merged) >= len(groups):
        return groups
    return _merged_groups(groups, shapes, merged)


def _merged_groups(groups: list[PatternGroup], shapes: list, merged: dict) -> list:
    """The groups of the merged shapes (``merged``: shape number -> its members
    ``(group index, vmap, pmap, dmap, whole)`` in group order), in first-seen order;
    a shape whose one member is a whole group is that group, as it was."""
    flats = [_Flat([getattr(g, t) for g in groups])
             for t in ("var_table", "param_table", "data_table")]
    rows = _Flat([g.rows[None, :] for g in groups])
    sizes = np.array([g.size for g in groups], dtype=np.int64)
    out = []
    for sid, members in merged.items():
        if len(members) == 1 and members[0][4]:
            out.append(groups[members[0][0]])               # a whole group, as it was
            continue
        gi = np.array([m[0] for m in members], dtype=np.int64)
        n = sizes[gi]
        # (members, k) slot maps: equal shapes have equal slot counts
        vt, pt, dt = (flat.gather(gi, n, np.array([m[j] for m in members], np.int64))
                      for j, flat in zip((1, 2, 3), flats))
        g, root = build_term(shapes[sid])
        out.append(PatternGroup(
            kind="constraints", size=int(n.sum()), graph=g, root=root, var_table=vt,
            param_table=pt, data_table=dt,
            rows=rows.gather(gi, n, np.zeros((len(members), 1), np.int64))[0]))
    return out
