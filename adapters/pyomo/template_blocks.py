"""Row groups of the template reader -> :class:`~caspar_backend.blocks.TemplateBlock`.

The reader (:mod:`.templates`) groups rows by their *key*, a per-row spelling of the
row's operations over local slots.  This module turns those groups into the pattern
groups the per-instance path would have made, with array operations on the tables
and Python work per group and per structural variant (never per row):

1. **Build** each key's template once (:func:`build_template`); every item is one
   node (the reader applied the value-dependent rules), and a key whose template has
   no variable left is **refused**: a "trivial" row the front-end checks itself, so
   its rows are walked per instance.
2. **Variants** (:mod:`.template_variants`): rows of one key whose equal constants make
   a subexpression one node get the template with those data slots as one; a wide
   sum is split into one instance per term where
   :func:`caspar_backend.patterns.constraint_instances` would split that row, each
   adding into the row, and a ``lincomb`` pair ``c_k * x_k`` takes the shape its value
   gives it (``x``, ``-x`` or ``c*x``).
3. **Canonicalize** each instance template (:func:`canonical_key`: slots renumbered by
   first use, as :func:`caspar_backend.patterns.shape_key` numbers them, unused slots
   dropped) and merge equal ones: keys that differ only in slot order, a removed term
   or a term position give one block.  Instances are in the per-instance path's order
   (row, then position in the row), blocks in the order of their first instance, which
   is the per-instance path's first-seen order of groups.

Table formats are those of :class:`~caspar_backend.blocks.TemplateBlock`:
``var_table`` int64 (k, N), ``param_table`` int64 (q, N), ``data_table`` float64
(r, N), ``rows`` int64 (N,).  A key group holds the flat per-row lists ``vars``
(N*k global x indices, row-major), ``params`` (N*q) and ``data`` (N*r).
"""

from __future__ import annotations

import numpy as np

from caspar_backend.expr import Graph, topo_order

from .template_variants import instances, sharing_patterns


def make_blocks(groups) -> tuple[list, list]:
    """``(blocks, refused)`` from the reader's key groups (see the module docstring);
    ``refused``: rows to walk per instance."""
    from caspar_backend.blocks import TemplateBlock

    merged: dict = {}
    refused: list = []
    for grp in groups:
        g, root = build_template(grp.key)
        if not _has_var(root):
            refused.extend(grp.rows)
            continue
        N = len(grp.rows)
        _items, _root, k, q, r = grp.key
        data = np.array(grp.data, dtype=np.float64).reshape(N, r).T
        vt = np.array(grp.vars, dtype=np.int64).reshape(N, k).T
        pt = np.array(grp.params, dtype=np.int64).reshape(N, q).T
        rows = np.array(grp.rows, dtype=np.int64)
        for rep, cols in sharing_patterns(grp.key, data):
            tg, troot = (g, root) if rep is None else build_template(grp.key, rep)
            sub = data if cols is None else data[:, cols]
            for node, keep, term in instances(tg, troot, sub):
                sel = _selection(cols, keep)
                ckey, vperm, pperm, dsrc = canonical_key(node)
                rs = rows[sel]
                part = (vt[vperm][:, sel], pt[pperm][:, sel], data[dsrc][:, sel], rs,
                        np.full(rs.size, term, dtype=np.int64))
                entry = merged.get(ckey)
                if entry is None:
                    merged[ckey] = entry = (grp.owner, [])
                entry[1].append(part)
    out = []
    for ckey, (owner, parts) in merged.items():
        vt, pt, dt, rows, terms = (np.concatenate([p[i] for p in parts], axis=-1)
                                   for i in range(5))
        order = np.lexsort((terms, rows))
        g, root = build_template(ckey)
        out.append((int(rows[order[0]]), int(terms[order[0]]),
                    TemplateBlock(g, root, vt[:, order], pt[:, order], dt[:, order],
                                  rows[order], name=_name(owner), placed_by_row=True)))
    out.sort(key=lambda e: e[:2])
    return [b for _r, _t, b in out], refused


def _selection(cols, keep):
    """The instances (columns of the key's tables) of ``keep`` (bool over ``cols``, or
    None for all of them) within ``cols`` (indices, or None for all)."""
    if keep is None:
        return slice(None) if cols is None else cols
    idx = np.flatnonzero(keep)
    return idx if cols is None else cols[idx]


def canonical_key(root):
    """``(key, vperm, pperm, dsrc)`` of a built template: its key (in the reader's
    spelling, :func:`build_template`) renumbered as
    :func:`caspar_backend.patterns.shape_key` numbers a row's DAG: variable and
    parameter slots by first use (arguments left to right, each shared node once),
    and one data slot per edge into a number.  ``vperm[j]`` is the old slot of new
    variable slot j (likewise ``pperm``), so ``old_table[vperm]`` is the new table;
    new data slot j is old data row ``dsrc[j]`` (int64 arrays)."""
    slots = {"var": {}, "param": {}}
    tag = {"var": 0, "param": 1}
    dsrc: list = []
    local: dict = {}
    items: list = []

    def leaf(n):
        op = n.op
        if op == "data":
            dsrc.append(n.attr)
            return 4 * len(dsrc) - 2
        if op == "const":     # the reader leaves every number to a data slot
            raise AssertionError(f"template reader: a constant {n.attr!r} in a template")
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
    return key, vperm, pperm, np.array(dsrc, dtype=np.int64)


def build_template(key, data_map=None):
    """The template of a key ``(items, root ref, k, q, r)``, in a fresh graph:
    ``(graph, root)``.  Items are ``(op, attr, *refs)`` in post-order; a ref is
    ``4j`` (variable slot j), ``4j+1`` (parameter slot j), ``4j+2`` (data slot j) or
    ``4i+3`` (item i).  ``data_map`` (int array): data slot j is built as
    ``data(data_map[j])``."""
    items, root_ref, *_ = key
    g = Graph()
    built: list = []
    data = g.data if data_map is None else (lambda j: g.data(int(data_map[j])))
    leaf = (g.var, g.param, data)

    def ref(r):
        j, t = divmod(r, 4)
        return built[j] if t == 3 else leaf[t](j)

    for op, attr, *refs in items:
        built.append(g.apply(op, *[ref(r) for r in refs], attr=attr))
    return g, ref(root_ref)


def _has_var(root) -> bool:
    return any(n.op == "var" for n in topo_order([root]))


def _name(owner) -> str:
    try:
        return owner.name
    except AttributeError:
        return "constraint"
