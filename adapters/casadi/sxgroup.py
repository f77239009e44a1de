"""Terms of equal shape as :class:`~caspar_backend.blocks.TemplateBlock` s.

Given the terms ``root_r += coef * T`` (:mod:`.sxterms`) and their shape hashes
(:mod:`.sxhash`), each set of terms with one hash and one *sign class* of
``coef`` (+1, -1, anything else) becomes template blocks:

1. one representative's tree is read in Python (it is small: at most
   :data:`~.sxhash.MAX_LEAVES` leaves) into a *position program*: position 0 the
   term, position p the argument ``arg[p]`` of position ``parent[p]``, in
   preorder;
2. the program is replayed on all N instances at once: ``M[p] =
   arg_{arg[p]}(M[parent[p]])``, an (L, N) matrix of node ids, one NumPy gather
   per position;
3. every instance is checked position by position against the representative
   (op, leaf kind, baked exponent); instances that differ (a hash collision)
   are split off and grouped again with a representative of their own, so a
   block never holds an instance of another shape;
4. the variables at the leaf positions, (Lv, N), give each instance's *slot
   pattern* -- which positions name the same variable (first occurrence) --
   and instances are split by pattern: a variable used twice is one slot, as
   in the per-node reader's :func:`~caspar_backend.patterns.shape_key`;
5. each (shape, sign class, pattern) is one template, built once from the
   representative with caspar's graph builders (:func:`.optable.bind`, the
   ones the per-node reader uses): variable slots by first occurrence,
   parameters and non-exponent constants one slot per position (data slots),
   and the factor as ``neg`` (-1) or a trailing data slot (other values).

Tables: ``var_table`` int64 (k, N), ``param_table`` int64 (q, N), ``data_table``
float64 (r, N), ``rows`` int64 (N,): the root each instance adds into.
"""

from __future__ import annotations

import numpy as np

from caspar_backend.blocks import TemplateBlock
from caspar_backend.expr import Graph

from . import optable as T
from .sxdag import LEAF_CONST, LEAF_PAR, LEAF_VAR, NOT_LEAF, SXDag
from .sxhash import baked

_CLASS_MUL = np.uint64(0xD6E8FEB86659FD93)


def sign_class(coef: np.ndarray) -> np.ndarray:
    """0 for +1, 1 for -1, 2 for any other factor (int64)."""
    return np.where(coef == 1.0, 0, np.where(coef == -1.0, 1, 2)).astype(np.int64)


def _program(dag: SXDag, node: int):
    """``(nodes, parent, arg)`` lists: the tree under ``node`` in preorder, the
    first argument's subtree before the second's (parents before children)."""
    nodes, parent, arg = [], [], []
    a0, a1, leaf = dag.arg0, dag.arg1, dag.leaf
    stack = [(node, -1, -1)]
    while stack:
        n, q, i = stack.pop()
        p = len(nodes)
        nodes.append(n)
        parent.append(q)
        arg.append(i)
        if leaf[n] == NOT_LEAF:
            if a1[n] >= 0:
                stack.append((int(a1[n]), p, 1))
            stack.append((int(a0[n]), p, 0))
    return nodes, parent, arg


def _gather(dag: SXDag, parent, arg, first: np.ndarray) -> np.ndarray:
    """(L, N) node ids of every position for instances with term nodes ``first``."""
    M = np.empty((len(parent), first.size), np.int64)
    M[0] = first
    for p in range(1, len(parent)):
        src = dag.arg0 if arg[p] == 0 else dag.arg1
        M[p] = src[M[parent[p]]]
    return M


def _mismatch(dag: SXDag, rep_nodes, M, bake) -> np.ndarray:
    """bool (N,): instances whose tree differs from the representative's."""
    bad = np.zeros(M.shape[1], bool)
    for p, r in enumerate(rep_nodes):
        col = M[p]
        bad |= col < 0
        bad |= dag.op[col] != dag.op[r]
        bad |= dag.leaf[col] != dag.leaf[r]
        if bake[r]:
            e = dag.arg1
            bad |= dag.value[e[col]] != dag.value[e[r]]
    return bad


def _first_occurrence(V: np.ndarray) -> np.ndarray:
    """(Lv, N) int64: for each position, the first position naming the same
    variable in that instance."""
    Lv, N = V.shape
    if Lv < 2:
        return np.zeros((Lv, N), np.int64)
    order = np.argsort(V, axis=0, kind="stable")
    S = np.take_along_axis(V, order, axis=0)
    start = np.ones((Lv, N), bool)
    start[1:] = S[1:] != S[:-1]
    idx = np.where(start, np.arange(Lv)[:, None], 0)
    idx = np.maximum.accumulate(idx, axis=0)
    F = np.empty((Lv, N), np.int64)
    np.put_along_axis(F, order, np.take_along_axis(order, idx, axis=0), axis=0)
    return F


def _patterns(F: np.ndarray):
    """``(patterns (P, Lv), inverse (N,))``: the distinct columns of ``F``; the common
    case, one pattern, without sorting."""
    N = F.shape[1]
    if not F.shape[0] or np.all(F == F[:, :1]):
        return F[:, :1].T, np.zeros(N, np.int64)
    code = np.zeros(N, np.int64)
    for row in F:           # Lv < 2^8 slots: exact positional code in base 256, folded
        code = code * 257 + row + 1
    _, first, inv = np.unique(code, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    pats = F[:, first].T
    if not np.array_equal(pats[inv].T, F):     # a folded code collided: sort exactly
        pats, inv = np.unique(F.T, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
    return pats, inv


def group_terms(dag: SXDag, node, root, coef, h, name: str) -> list:
    """TemplateBlocks for terms ``(node, root, coef)`` with shape hashes ``h``
    (module docstring); each block's ``rows`` are root indices."""
    cls = sign_class(coef)
    key = h ^ (cls.astype(np.uint64) * _CLASS_MUL)
    _, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.flatnonzero(np.r_[True, inv[order][1:] != inv[order][:-1], True])
    queue = [order[bounds[i]:bounds[i + 1]] for i in range(bounds.size - 1)]
    bake = baked(dag)
    builders = {}
    blocks = []
    while queue:
        inst = queue.pop()
        rep_nodes, parent, arg = _program(dag, int(node[inst[0]]))
        M = _gather(dag, parent, arg, node[inst])
        bad = _mismatch(dag, rep_nodes, M, bake) | (cls[inst] != cls[inst[0]])
        if bad.any():
            queue.append(inst[bad])
            inst, M = inst[~bad], M[:, ~bad]
        blocks += _blocks(dag, rep_nodes, parent, arg, M, inst, root, coef, cls[inst[0]],
                          bake, builders, name)
    return blocks


def _blocks(dag, rep_nodes, parent, arg, M, inst, root, coef, cls, bake, builders,
            name) -> list:
    leaf = dag.leaf
    kinds = [int(leaf[r]) for r in rep_nodes]
    exp_pos = {p for p in range(1, len(parent))
               if arg[p] == 1 and bake[rep_nodes[parent[p]]]}
    pv = [p for p, k in enumerate(kinds) if k == LEAF_VAR]
    pp = [p for p, k in enumerate(kinds) if k == LEAF_PAR]
    pc = [p for p, k in enumerate(kinds) if k == LEAF_CONST and p not in exp_pos]
    V = dag.attr[M[pv]] if pv else np.zeros((0, inst.size), np.int64)
    F = _first_occurrence(V)
    pats, pinv = _patterns(F)
    out = []
    for k in range(pats.shape[0]):
        sel = np.flatnonzero(pinv == k)
        firsts = sorted(set(pats[k].tolist()))
        slot = {f: s for s, f in enumerate(firsts)}
        var_slot = {p: slot[int(pats[k][j])] for j, p in enumerate(pv)}
        g = Graph()
        un, bi = T.bind(g)
        built: dict = {}
        par_slot = {p: j for j, p in enumerate(pp)}
        data_slot = {p: j for j, p in enumerate(pc)}
        for p in reversed(range(len(parent))):
            r = rep_nodes[p]
            kd = kinds[p]
            if kd == LEAF_VAR:
                built[p] = g.var(var_slot[p])
            elif kd == LEAF_PAR:
                built[p] = g.param(par_slot[p])
            elif kd == LEAF_CONST:
                built[p] = g.const(float(dag.value[r])) if p in exp_pos else \
                    g.data(data_slot[p])
            else:
                kids = sorted((arg[c], c) for c in _children(parent, p))
                op = int(dag.op[r])
                a = [built[c] for _i, c in kids]
                built[p] = bi[op](*a) if len(a) == 2 else un[op](*a)
        top = built[0]
        cols = sel
        dt = np.vstack([dag.value[M[pc][:, cols]]]) if pc else np.zeros((0, cols.size))
        if cls == 1:
            top = g.neg(top)
        elif cls == 2:
            top = g.mul(g.data(len(pc)), top)
            dt = np.vstack([dt, coef[inst[cols]][None, :]])
        vt = V[firsts][:, cols] if firsts else \
            np.zeros((0, cols.size), np.int64)
        pt = dag.attr[M[pp][:, cols]] if pp else np.zeros((0, cols.size), np.int64)
        out.append(TemplateBlock(g, top, vt, pt, dt, rows=root[inst[cols]],
                                 name=f"{name}[{len(rep_nodes)}]"))
    return out


def _children(parent, p):
    return [c for c in range(p + 1, len(parent)) if parent[c] == p]
