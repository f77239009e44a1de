"""Row groups of the template reader -> :class:`~caspar_backend.blocks.TemplateBlock`.

The reader (:mod:`.templates`) groups rows by their *key*, a per-row spelling of the
row's operations over local slots.  This module turns those groups into the pattern
groups the per-instance path would have made, with array operations on the tables
and Python work per group (never per row):

1. **Build** each key's template once (:func:`build_template`, through the Graph's
   construction rules, so literal ``0``/``1``/``-1`` simplify as in a row's own DAG).
2. **Refuse** groups the per-instance path must take: a template with no variable
   left when it is a whole row (a "trivial" row the front-end checks itself) or a
   non-finite number in the data (the walker then names the offending component).
3. **Split wide sums** as :func:`caspar_backend.patterns.constraint_instances` does:
   a template that is a sum of at least ``SPLIT_MIN_TERMS`` terms sharing little
   (:func:`~caspar_backend.patterns.split_terms`) becomes one instance per term, each
   adding into the row.  A ``lincomb`` pair ``c_k * x_k`` is a term; on the
   per-instance path its value decides its shape (``1*x -> x``, ``-1*x -> -x``), so
   here the instances are partitioned by that coefficient's data column.
4. **Canonicalize** each template (:func:`canonical_key`: slots renumbered by first
   use, as :func:`caspar_backend.patterns.shape_key` numbers them, unused slots
   dropped) and merge equal ones: keys that differ only in slot order, a removed term
   or a term position give one block.  Instances are in row order (term order within
   a row), blocks in the order of their first row, which is the per-instance path's
   first-seen order.

Table formats are those of :class:`~caspar_backend.blocks.TemplateBlock`:
``var_table`` int64 (k, N), ``param_table`` int64 (q, N), ``data_table`` float64
(r, N), ``rows`` int64 (N,).  A key group holds the flat per-row lists ``vars``
(N*k global x indices, row-major), ``params`` (N*q) and ``data`` (N*r).
"""

from __future__ import annotations

import numpy as np

from caspar_backend.expr import Graph, topo_order
from caspar_backend.patterns import SPLIT_MIN_TERMS, split_terms


def make_blocks(groups) -> tuple[list, list]:
    """``(blocks, refused)`` from the reader's key groups (see the module docstring);
    ``refused``: rows to walk per instance."""
    from caspar_backend.blocks import TemplateBlock

    merged: dict = {}
    refused: list = []
    for grp in groups:
        g, root = build_template(grp.key)
        N = len(grp.rows)
        _items, _root, k, q, r = grp.key
        data = np.array(grp.data, dtype=np.float64).reshape(N, r).T
        if not _has_var(root) or (r and not np.isfinite(data).all()):
            refused.extend(grp.rows)
            continue
        same = _equal_data_slots(data)
        if same is not None:
            g, root = build_template(grp.key, same)
        vt = np.array(grp.vars, dtype=np.int64).reshape(N, k).T
        pt = np.array(grp.params, dtype=np.int64).reshape(N, q).T
        rows = np.array(grp.rows, dtype=np.int64)
        for node, keep in _instances(g, root, data):
            ckey, vperm, pperm, dsrc, dconst = canonical_key(node)
            cols = slice(None) if keep is None else keep
            part = (vt[vperm][:, cols], pt[pperm][:, cols],
                    _data_table(data, dsrc, dconst, cols), rows[cols])
            entry = merged.get(ckey)
            if entry is None:
                merged[ckey] = entry = (grp.owner, [])
            entry[1].append(part)
    out = []
    for ckey, (owner, parts) in merged.items():
        vt, pt, dt, rows = (np.concatenate([p[i] for p in parts], axis=-1) for i in range(4))
        if not rows.size:
            continue
        order = np.argsort(rows, kind="stable")
        g, root = build_template(ckey)
        out.append(TemplateBlock(g, root, vt[:, order], pt[:, order], dt[:, order],
                                 rows[order], name=_name(owner), placed_by_row=True))
    out.sort(key=lambda b: int(b.rows[0]))
    return out, refused


def _instances(g, root, data):
    """``[(template node, instance mask or None)]``: the whole row, or the terms of a
    wide sum that :func:`~caspar_backend.patterns.split_terms` would split."""
    width = len(root.args) // 2 if root.op == "lincomb" else len(root.args)
    if root.op not in ("sum", "lincomb") or width < SPLIT_MIN_TERMS:
        return [(root, None)]
    if len(split_terms(root)) < 2:
        return [(root, None)]
    out = []
    for term in _terms(root):
        if term.__class__ is not tuple:
            out.append((term, None))
            continue
        a, b = term                    # a lincomb pair a * b
        if a.op != "data":
            out.append((g.mul(a, b), None))
            continue
        col = data[a.attr]
        one, minus = col == 1.0, col == -1.0
        for node, keep in ((b, one), (g.neg(b), minus), (g.mul(a, b), ~(one | minus))):
            if keep.any():
                out.append((node, keep))
    return out


def _terms(node) -> list:
    """:func:`caspar_backend.patterns.objective_terms` with each lincomb pair left as
    the tuple ``(coefficient node, term node)``."""
    if node.op == "sum":
        out = []
        for t in node.args:
            out.extend(_terms(t) if t.op in ("sum", "lincomb") else [t])
        return out
    if node.op == "lincomb":
        a = node.args
        return [(a[k], a[k + 1]) for k in range(0, len(a), 2)]
    return [node]


def canonical_key(root):
    """``(key, vperm, pperm, dsrc, dconst)`` of a built template: its key (in the
    reader's spelling, :func:`build_template`) renumbered as
    :func:`caspar_backend.patterns.shape_key` numbers a row's DAG: variable and
    parameter slots by first use (arguments left to right, each shared node once),
    and one data slot per edge into a number.  Numbers the template kept as literals
    (a ``1`` or an exponent that did not simplify) become data there too, as they
    are on the per-instance path.  ``vperm[j]`` is the old slot of new variable slot j
    (likewise ``pperm``), so ``old_table[vperm]`` is the new table; new data slot j is
    old data row ``dsrc[j]``, or the constant ``dconst[j]`` where ``dsrc[j] == -1``
    (int64 / float64 arrays)."""
    slots = {"var": {}, "param": {}}
    tag = {"var": 0, "param": 1}
    dsrc: list = []
    dconst: list = []
    local: dict = {}
    items: list = []

    def leaf(n):
        op = n.op
        if op == "data" or op == "const":
            dsrc.append(n.attr if op == "data" else -1)
            dconst.append(0.0 if op == "data" else n.attr)
            return 4 * len(dsrc) - 2
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
    vperm, pperm = (np.fromiter(slots[k], dtype=np.int64, count=len(slots[k]))
                    for k in ("var", "param"))
    key = (tuple(items), root_ref, len(vperm), len(pperm), len(dsrc))
    return key, vperm, pperm, np.array(dsrc, dtype=np.int64), np.array(dconst, dtype=float)


def _data_table(data, dsrc, dconst, cols):
    """The new data table (r', N') of :func:`canonical_key`'s ``dsrc``/``dconst`` from
    the old ``data`` (r, N), restricted to instances ``cols``."""
    lit = dsrc < 0
    if not lit.any():
        return data[dsrc][:, cols]
    n_cols = data[:, cols].shape[1]
    out = np.empty((dsrc.size, n_cols))
    out[lit] = dconst[lit, None]
    out[~lit] = data[dsrc[~lit]][:, cols]
    return out


def build_template(key, data_map=None):
    """The template of a key ``(items, root ref, k, q, r)``, in a fresh graph:
    ``(graph, root)``.  Items are ``(op, attr, *refs)`` in post-order; a ref is
    ``4j`` (variable slot j), ``4j+1`` (parameter slot j), ``4j+2`` (data slot j),
    ``4i+3`` (item i) or ``('k', value)`` (the constant value).  ``data_map``
    (int array): data slot j is built as ``data(data_map[j])``."""
    items, root_ref, *_ = key
    g = Graph()
    built: list = []
    data = g.data if data_map is None else (lambda j: g.data(int(data_map[j])))
    leaf = (g.var, g.param, data)

    def ref(r):
        if r.__class__ is tuple:
            return g.const(r[1])
        j, t = divmod(r, 4)
        return built[j] if t == 3 else leaf[t](j)

    for op, attr, *refs in items:
        built.append(g.apply(op, *[ref(r) for r in refs], attr=attr))
    return g, ref(root_ref)


def _equal_data_slots(data):
    """For data slots equal in every instance (rows of ``data`` (r, N)), the first
    such slot of each (int64 (r,)); None when all differ.  A row's own DAG shares a
    subexpression written twice with equal numbers (``th[i] - th[j]`` in both
    ``cos`` and ``sin``: equal constants make equal hash-consed nodes); building the
    template with such slots as one gives it the same sharing.  Equal in every
    instance means equal in each, so this shares exactly what each row's DAG
    shares (a coincidence in only some rows does not change the template)."""
    r = data.shape[0]
    if r < 2:
        return None
    rep = np.arange(r)
    buckets: dict = {}                  # a few leading values -> slots seen with them
    for j in range(r):
        head = data[j, :4].tobytes()
        for i in buckets.get(head, ()):
            if np.array_equal(data[i], data[j]):
                rep[j] = i
                break
        else:
            buckets.setdefault(head, []).append(j)
    return rep if (rep != np.arange(r)).any() else None


def _has_var(root) -> bool:
    return any(n.op == "var" for n in topo_order([root]))


def _name(owner) -> str:
    try:
        return owner.name
    except AttributeError:
        return "constraint"
