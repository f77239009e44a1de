"""Where the rows of one key still differ in structure: equal constants, wide sums.

A key of the template reader (:mod:`.templates`) fixes a row's operations, its variable
pattern and where its constants are (data slots).  Two rules of the per-instance path
also look at the *values* of a row's constants, so rows of one key can have different
DAGs there; this module finds, with array operations on a key's data table ``D``
(float64 (r, N), slot j of instance i in ``D[j, i]``), which instances have which:

1. **Sharing** (:func:`sharing_patterns`).  A row's DAG is hash-consed: two
   subexpressions equal in that row -- same operations, variables and constant
   values -- are one node (``th[i] - th[j]`` written inside both ``cos`` and ``sin``).
   In the template they are two items with their own data slots.  Only slots under
   *twin* items matter: items that become one node when every data slot is the same
   (a necessary condition for being one node in some row).  For each instance i the
   relevant slots are partitioned by value, ``rep[j] = min{j' : D[j', i] = D[j, i]}``;
   the instances of one partition get the template built with the slots of each class
   as one.  A partition that merges nothing structurally gives the same canonical
   template as another, and the blocks merge again (:func:`.template_blocks.make_blocks`).
2. **Splitting** (:func:`instances`).  :func:`caspar_backend.patterns.split_terms`
   splits a wide sum into its terms when their operation counts total at most
   ``SPLIT_MAX_SHARING * (ops(body) + n_terms)``.  A ``lincomb`` pair ``c*x`` is, on the
   per-instance path, ``x`` (``c = 1``, no operation), ``-x`` or ``c*x`` (one), so an
   instance's total is ``S + #{pairs p : D[c_p, i] != 1}`` with ``S`` the rest, a
   structural count; each instance is split or kept whole by its own total, and a
   split pair takes the shape its coefficient gives it.
"""

from __future__ import annotations

import math

import numpy as np

from caspar_backend.expr import Graph
from caspar_backend.patterns import (SPLIT_MAX_SHARING, SPLIT_MIN_TERMS, _op_count,
                                     sum_terms)


def sharing_patterns(key, data) -> list:
    """``[(rep, cols)]``: the instances ``cols`` (int64 indices, ``None`` for all) whose
    rows share subexpressions as the template built with ``data_map=rep`` does
    (:func:`.template_blocks.build_template`; ``rep`` int64 (r,), ``None`` when no
    slots are merged).  ``data``: the key's data table (r, N)."""
    r, N = data.shape
    relevant = _twin_slots(key) if r > 1 and N else []
    if len(relevant) < 2:
        return [(None, None)]
    sub = _first_equal(data[relevant])              # (len(relevant), N) local indices
    ident = np.arange(len(relevant))
    if (sub == sub[:, :1]).all():
        pats, inv = sub[:, :1].T, None
    else:
        pats, inv = np.unique(sub.T, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
    out = []
    for p, local in enumerate(pats):
        cols = None if inv is None else np.flatnonzero(inv == p)
        if (local == ident).all():
            out.append((None, cols))
            continue
        rep = np.arange(r)
        rep[relevant] = np.asarray(relevant)[local]
        out.append((rep, cols))
    return out


def _first_equal(d):
    """For each column of ``d`` (s, N): ``out[j, i]`` = the smallest row index whose
    value equals ``d[j, i]`` (stable sort per column, then each run's first index)."""
    s, N = d.shape
    order = np.argsort(d, axis=0, kind="stable")
    sv = np.take_along_axis(d, order, axis=0)
    start = np.ones((s, N), dtype=bool)
    start[1:] = sv[1:] != sv[:-1]
    pos = np.where(start, np.arange(s)[:, None], 0)
    np.maximum.accumulate(pos, axis=0, out=pos)
    out = np.empty_like(order)
    np.put_along_axis(out, order, np.take_along_axis(order, pos, axis=0), axis=0)
    return out


def _twin_slots(key) -> list:
    """Data slots under items that are one node when all data slots are one (sorted)."""
    items = key[0]
    g = Graph()
    d0 = g.data(0)
    built, under = [], []
    first: dict = {}                 # node id -> first item built as it
    twins: set = set()
    for i, (op, attr, *refs) in enumerate(items):
        args, slots = [], set()
        for ref in refs:
            j, t = divmod(ref, 4)
            if t == 3:
                args.append(built[j])
                slots |= under[j]
            elif t == 2:
                args.append(d0)
                slots.add(j)
            else:
                args.append(g.var(j) if t == 0 else g.param(j))
        node = g.apply(op, *args, attr=attr)
        built.append(node)
        under.append(slots)
        f = first.setdefault(node.id, i)
        if f != i:
            twins.update((f, i))
    out: set = set()
    for i in twins:
        out |= under[i]
    return sorted(out)


def instances(g, root, data) -> list:
    """``[(node, keep, term)]``: the instances of a template with root ``root`` in graph
    ``g`` as :func:`caspar_backend.patterns.constraint_instances` makes them from each
    row: ``node`` the instance template, ``keep`` bool (N,) the rows that have it, or
    ``None`` for all, ``term`` its position among the row's instances.  ``data``: the
    data table (r, N) of these rows."""
    width = len(root.args) // 2 if root.op == "lincomb" else len(root.args)
    if root.op not in ("sum", "lincomb") or width < SPLIT_MIN_TERMS:
        return [(root, None, 0)]
    terms = sum_terms(root)      # lincomb pairs as (coefficient, term) tuples
    if len(terms) < 2:
        return [(root, None, 0)]
    limit = SPLIT_MAX_SHARING * (_op_count([root], math.inf) + len(terms))
    fixed, coef = 0, []
    for t in terms:
        if t.__class__ is tuple:
            a, b = t
            if a.op == "data":
                fixed += _op_count([b], math.inf)
                coef.append(a.attr)
                continue
            t = g.mul(a, b)
        fixed += _op_count([t], math.inf)
    total = fixed + ((data[coef] != 1.0).sum(axis=0) if coef else 0)
    split = np.broadcast_to(total <= limit, (data.shape[1],))
    if not split.any():
        return [(root, None, 0)]
    out = [] if split.all() else [(root, ~split, 0)]
    every = None if split.all() else split
    for k, t in enumerate(terms):
        if t.__class__ is not tuple:
            out.append((t, every, k))
            continue
        a, b = t
        if a.op != "data":
            out.append((g.mul(a, b), every, k))
            continue
        col = data[a.attr]
        one, minus = col == 1.0, col == -1.0
        for node, keep in ((b, one), (g.neg(b), minus), (g.mul(a, b), ~(one | minus))):
            keep = keep & split
            if keep.any():
                out.append((node, keep, k))
    return out
