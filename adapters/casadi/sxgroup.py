"""Instances of equal per-node template as :class:`~caspar_backend.blocks.TemplateBlock` s.

The per-node reader groups instances by :func:`caspar_backend.patterns.shape_key` of
their expression in caspar's hash-consed graph.  This module finds the same groups,
in the same order, with the same templates and tables, without building every
instance:

1. instances (:mod:`.sxterms`) are bucketed by shape hash and wrap (:mod:`.sxhash`);
   one representative's tree is read into a *position program* (position 0 the
   term, position p the argument ``arg[p]`` of position ``parent[p]``, preorder) and
   replayed on all instances at once, an (L, N) matrix of node ids; instances whose
   tree differs from the representative's (a hash collision) are bucketed again;
2. the *coincidence pattern* of an instance: for each position, the first position
   holding an equal subtree (value hashes: variables, parameters and constants by
   identity).  It decides what caspar's graph shares inside the instance (equal
   subtrees are one node, a variable is one slot), so instances of one bucket and
   one pattern have one per-node template.  Every claimed equality is checked
   against the ops and arguments (an equal hash is a proposal, not a proof);
3. per (bucket, pattern) *class*, the representative is built into a scratch graph
   with the per-node reader's builders (:func:`.optable.bind`) and wrapped as
   :func:`~.sums.flatten_sums` wraps it, every constant replaced by a *tag* (a
   distinct value per coincidence class): :func:`~caspar_backend.patterns.shape_key`
   gives the key and slot order, and the tags say which position (or the wrap's
   factor) fills each data slot; constants the builders add themselves (the 2 of
   OP_TWICE) are fixed columns.  The per-node key is the build's with the real
   constants: where :func:`.sxbuild.tags_decide` cannot show that it is the tag
   build's, that build is made too and must give the same key, else None (the
   caller reads per node);
4. classes with one key are one group; groups are ordered by their first instance
   and instances by position, as :func:`~caspar_backend.patterns.group_expressions`
   orders them.

Python runs once per class (a few dozen positions), NumPy over the instances.
"""

from __future__ import annotations

import numpy as np

from caspar_backend.arrays.segments import distinct
from caspar_backend.blocks import TemplateBlock
from caspar_backend.expr import Graph
from caspar_backend.patterns import build_template, shape_key

from . import optable as T
from .sxdag import LEAF_CONST, LEAF_PAR, LEAF_VAR, NOT_LEAF, SXDag, native, walks
from .mix64 import fmix as _fmix
from .sxbuild import TAG0 as _TAG0, TAG_WRAP as _TAG_WRAP, Plan, TagGraph, tags_decide
from .sxhash import baked
from .sxchains import program_uses
from .sxsharing import WRAP_MUL as _WRAP_MUL, sharing_allows
from .sxterms import CONST, DIV, MUL, NEG_DIV, NEG_MUL, Instances

_ADD, _SUB = T.CODES["OP_ADD"], T.CODES["OP_SUB"]
#: the wraps with a factor
_FACTOR_WRAPS = (MUL, NEG_MUL, DIV, NEG_DIV)



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
    rep = np.asarray(rep_nodes, np.int64)
    col = np.maximum(M, 0)
    bad = (M < 0).any(axis=0)
    bad |= (dag.op[col] != dag.op[rep][:, None]).any(axis=0)
    bad |= (dag.leaf[col] != dag.leaf[rep][:, None]).any(axis=0)
    return bad | _exponent_mismatch(dag, rep, M, bake)


def _exponent_mismatch(dag: SXDag, rep, M, bake) -> np.ndarray:
    """bool (N,): instances whose exponent (a constant kept in the shape) differs from
    the representative's at one of its ``pow`` positions."""
    bp = np.flatnonzero(bake[rep])
    if not bp.size:
        return np.zeros(M.shape[1], bool)
    e = dag.arg1
    col = np.maximum(M[bp], 0)
    return (dag.value[e[col]] != dag.value[e[rep[bp]]][:, None]).any(axis=0)


def _positions(dag: SXDag, rep_nodes, parent, arg, first, bake):
    """``(M, bad)``: :func:`_gather` and :func:`_mismatch` (by the C++ loop where it
    can be had; a column found bad may hold other node ids there, it is not read)."""
    nat = native("kernels")
    if nat is None:
        M = _gather(dag, parent, arg, first)
        return M, _mismatch(dag, rep_nodes, M, bake)
    rep = np.asarray(rep_nodes, np.int64)
    M, bad = nat.gather_positions(parent, arg, rep, dag.arg0, dag.arg1, dag.op, dag.leaf,
                                  first)
    return M, bad | _exponent_mismatch(dag, rep, M, bake)


def _first_occurrence(V: np.ndarray) -> np.ndarray:
    """(L, N) int64: for each position, the first position with an equal value of
    ``V`` in that instance."""
    L, N = V.shape
    if L < 2:
        return np.zeros((L, N), np.int64)
    order = np.argsort(V, axis=0, kind="stable")
    S = np.take_along_axis(V, order, axis=0)
    start = np.ones((L, N), bool)
    start[1:] = S[1:] != S[:-1]
    idx = np.where(start, np.arange(L)[:, None], 0)
    idx = np.maximum.accumulate(idx, axis=0)
    F = np.empty((L, N), np.int64)
    np.put_along_axis(F, order, np.take_along_axis(order, idx, axis=0), axis=0)
    return F


def _coincidences(M: np.ndarray, vh: np.ndarray):
    """``(F, cols)``: ``F`` :func:`_first_occurrence` of ``V = vh[M]`` (L, N); ``cols``:
    the first column and those that differ from it -- every other column is the first.

    By the C++ loop (:func:`.sxkernels_native.first_occurrence_of`, every column) where it
    can be had; else taking the first instance's pattern ``F0`` for every instance
    where it holds: ``V[p] == V[F0[p]]`` at each claimed position and as many distinct
    values at F0's first positions as there are of them (then F's column is F0: each
    class of equal values is one of F0's), the rest computed in full."""
    nat = native("kernels")
    if nat is not None:
        F, differs = nat.first_occurrence_of(M, vh)
        return F, np.r_[0, np.flatnonzero(differs[1:]) + 1]
    V = vh[M]
    L, N = V.shape
    F0 = _first_occurrence(V[:, :1])[:, 0]
    ok = np.ones(N, bool)
    for p in np.flatnonzero(F0 != np.arange(L)).tolist():
        ok &= V[p] == V[F0[p]]
    fp = np.flatnonzero(F0 == np.arange(L))
    if fp.size > 1:
        S = np.sort(V[fp].T, axis=1)
        ok &= (S[:, 1:] != S[:, :-1]).sum(axis=1) == fp.size - 1
    F = np.repeat(F0[:, None], N, axis=1)
    slow = np.flatnonzero(~ok)
    if slow.size:
        F[:, slow] = _first_occurrence(V[:, slow])
    return F, np.r_[0, slow[slow > 0]]


def _patterns(F: np.ndarray):
    """``(patterns (P, L), inverse (N,))``: the distinct columns of ``F`` (by the C++
    loop in order of first occurrence, else by NumPy in order of a hash; the order of
    a bucket's classes is no part of the result: :func:`_blocks` merges classes by key
    and orders blocks and their instances by instance)."""
    N = F.shape[1]
    if not F.shape[0] or np.all(F == F[:, :1]):
        return F[:, :1].T, np.zeros(N, np.int64)
    nat = native("kernels")
    if nat is not None:                    # in order of first occurrence
        first, inv = nat.distinct_columns(F)
        return F[:, first].T, inv
    # one 64-bit code per column, then exactness checked: a collision (never seen)
    # takes NumPy's row-wise unique
    L = F.shape[0]
    mult = _fmix(np.arange(1, L + 1, dtype=np.uint64)) | np.uint64(1)
    with np.errstate(over="ignore"):
        code = _fmix((F.astype(np.uint64) * mult[:, None]).sum(axis=0, dtype=np.uint64))
    _, first, inv = np.unique(code, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    pats = F[:, first].T
    if not np.array_equal(F, pats[inv].T):
        pats, inv = np.unique(F.T, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
    return pats, inv


def _claims_hold(dag: SXDag, M: np.ndarray, F: np.ndarray, vh, kinds, cols) -> bool:
    """Every equality ``F`` claims is one of op, leaf identity and argument hashes
    (:func:`.sxwalks.claims_hold`); ``kinds`` the positions' leaf kinds (every
    instance's, :func:`_mismatch`).  Two claims hold without a look: a position's on
    itself, and a leaf's on a leaf of its kind (a leaf's value hash is a bijection of
    its identity within a kind: :func:`.sxhash.term_hashes`).  The positions making
    another claim, and those they claim, are checked.  Which positions claim what is
    read from the columns ``cols`` of F (every other column is one of them: the
    distinct patterns), the check itself runs on every instance."""
    L = F.shape[0]
    kinds = np.asarray(kinds)
    leaf = (kinds != NOT_LEAF)[:, None]
    Fd = F[:, cols]
    free = (Fd == np.arange(L)[:, None]) | (leaf & (kinds[Fd] == kinds[:, None]))
    claiming = np.flatnonzero(~free.all(axis=1))
    if not claiming.size:
        return True
    # the claimed positions are first occurrences (their own claim is themselves)
    U = distinct(np.concatenate([claiming, Fd[claiming].ravel()]))
    Fu = np.searchsorted(U, np.arange(L))[F[U]]         # searchsorted(U, F[U]), by table
    return bool(walks(dag.compiled).claims_hold(dag.op, dag.leaf, dag.attr, dag.value_bits,
                                                dag.arg0, dag.arg1, vh,
                                                np.ascontiguousarray(M[U]), Fu))


class _Class:
    """One (bucket, pattern) class: its per-node key and how to gather its tables."""

    __slots__ = ("key", "inst", "var_pos", "par_pos", "data_src", "ops", "first_nl")


def _classify(dag, rep_nodes, parent, arg, M, inst, wrap, wc, vh, bake, uses):
    """The classes of one bucket (instances ``inst`` with position matrix M)."""
    L = len(parent)
    kinds = dag.leaf[np.asarray(rep_nodes)].tolist()
    exp_pos = {p for p in range(1, L) if arg[p] == 1 and bake[rep_nodes[parent[p]]]}
    F, cols = _coincidences(M, vh)
    if not _claims_hold(dag, M, F, vh, kinds, cols):
        return None
    # single use matters where the per-node program fuses chains: ADD/SUB positions.
    # A class is a distinct column of (F, single), kept as F + L * single (F < L)
    ops = dag.op[np.asarray(rep_nodes)].tolist()
    chain_pos = [p for p in range(L) if ops[p] in (_ADD, _SUB)]
    if chain_pos:
        F[chain_pos] += L * (uses[M[chain_pos]] == 1)
    pats, pinv = _patterns(F)
    # what the bucket's shape decides, once: the build plan and the leaf positions
    plan = Plan(ops, kinds, parent, arg)
    const_pos = [p for p in range(L) if kinds[p] == LEAF_CONST]
    var_pos = [p for p in range(L) if kinds[p] == LEAF_VAR]
    par_pos = [p for p in range(L) if kinds[p] == LEAF_PAR]
    nonleaf = [p for p in range(L) if kinds[p] == NOT_LEAF]
    out = []
    for k in range(pats.shape[0]):
        sel = np.flatnonzero(pinv == k) if pats.shape[0] > 1 else None
        i0 = 0 if sel is None else int(sel[0])
        col = M[:, i0]
        attrs = dag.attr[col].tolist()
        values = dag.value[col].tolist()
        one = (pats[k] >= L).tolist()            # single use (chain positions)
        pat = (pats[k] % L).tolist()
        w, c = int(wrap[inst[i0]]), float(wc[inst[i0]])
        real = {p: values[p] for p in const_pos}
        tag, tag_pos, cls_tag = {}, {}, {}
        for p in const_pos:
            if p in exp_pos:
                tag[p] = real[p]             # an exponent is part of the shape
                continue
            q = pat[p]                       # the first position of an equal value (< L)
            if q not in cls_tag:
                cls_tag[q] = _TAG0 + len(cls_tag)
                tag_pos[cls_tag[q]] = p
            tag[p] = cls_tag[q]
        g2 = TagGraph()
        t2 = plan.build(g2, attrs, tag, w, _TAG_WRAP, one)
        key2, vidx, pidx, data2 = shape_key(t2)
        del t2
        g2.release()        # scratch graphs: freed now (no cyclic garbage for the gc)
        if not tags_decide(g2, [real[p] for p in tag_pos.values()],
                           [real[p] for p in const_pos if p in exp_pos],
                           c if w in _FACTOR_WRAPS else None):
            g1 = Graph()
            key1, vidx, pidx, _ = shape_key(plan.build(g1, attrs, real, w, c, one))
            g1.release()
            if key1 != key2:
                return None
        pos_of_var = {}
        pos_of_par = {}
        for p in var_pos:
            pos_of_var.setdefault(attrs[p], p)
        for p in par_pos:
            pos_of_par.setdefault(attrs[p], p)
        cl = _Class()
        cl.key = key2
        cl.inst = inst if sel is None else inst[sel]
        cl.var_pos = [pos_of_var[v] for v in vidx]
        cl.par_pos = [pos_of_par[v] for v in pidx]
        # data slot -> ("pos", p) | ("wrap",) | ("fixed", value)
        # a tag comes back as itself or negated (a constant term of a fused chain)
        cl.data_src = [("pos", tag_pos[d]) if d in tag_pos else
                       ("-pos", tag_pos[-d]) if -d in tag_pos else
                       ("wrap",) if d == _TAG_WRAP else ("fixed", d) for d in data2]
        # the per-node op count: shape_key has one item per distinct non-leaf node
        cl.ops = len(key2[0])
        # non-leaf positions first of their value: the instance's own distinct nodes
        cl.first_nl = [p for p in nonleaf if pat[p] == p]
        out.append((cl, M if sel is None else M[:, sel]))
    return out


def group_instances(dag: SXDag, ins: Instances, h, ok, vh, nf: int, name: str = "sx"):
    """``(objective blocks, constraint blocks)`` of the instances (module docstring),
    or None where the per-node reader's groups cannot be reproduced."""
    I = ins.root.size
    bake = baked(dag)
    uses = program_uses(dag)
    is_c = ins.wrap == CONST
    if np.any(~ok[~is_c]):
        return None
    # buckets: shape hash and wrap (constants: one bucket)
    key = np.where(is_c, np.uint64(0), h ^ (ins.wrap.astype(np.uint64) + np.uint64(1))
                   * _WRAP_MUL)
    _, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bnd = np.flatnonzero(np.r_[True, inv[order][1:] != inv[order][:-1], True])
    queue = [order[bnd[i]:bnd[i + 1]] for i in range(bnd.size - 1)]
    queue = [q[~is_c[q]] for q in queue if (~is_c[q]).any()]
    if is_c.any():
        queue.append(np.flatnonzero(is_c))
    classes = []
    ops_of = np.zeros(I, np.int64)                # per instance: per-node op count
    first_nl = np.zeros(I, np.int64)              # per instance: distinct non-leaf positions
    while queue:
        inst = queue.pop()
        if is_c[inst[0]]:
            g = Graph()
            k, _, _, _ = shape_key(g.const(1.5))
            g.release()
            cl = _Class()
            cl.key, cl.inst, cl.var_pos, cl.par_pos = k, inst, [], []
            cl.data_src, cl.ops, cl.first_nl = [("wrap",)], 0, []
            classes.append((cl, np.zeros((0, inst.size), np.int64)))
            continue
        rep_nodes, parent, arg = _program(dag, int(ins.node[inst[0]]))
        M, bad = _positions(dag, rep_nodes, parent, arg, ins.node[inst], bake)
        if bad.any():
            queue.append(inst[bad])
            inst, M = inst[~bad], M[:, ~bad]
        got = _classify(dag, rep_nodes, parent, arg, M, inst, ins.wrap, ins.c, vh, bake,
                        uses)
        if got is None:
            return None
        for cl, Mc in got:
            classes.append((cl, Mc))
            ops_of[cl.inst] = cl.ops
            first_nl[cl.inst] = len(cl.first_nl) + (ins.wrap[cl.inst] != 0)
    if not sharing_allows(ins, ops_of, first_nl, classes, vh, dag.compiled):
        return None
    return _blocks(dag, ins, classes, nf, name)


def _blocks(dag: SXDag, ins: Instances, classes, nf: int, name: str):
    """Classes merged by (objective or not, key) into TemplateBlocks, ordered."""
    merged: dict = {}
    for cl, Mc in classes:
        obj_part = ins.root[cl.inst] < nf
        if obj_part.any() and not obj_part.all():      # one shape in f and in g
            for part in (obj_part, ~obj_part):
                sub = _Class()
                sub.key, sub.var_pos, sub.par_pos = cl.key, cl.var_pos, cl.par_pos
                sub.data_src, sub.ops, sub.inst = cl.data_src, cl.ops, cl.inst[part]
                sub.first_nl = cl.first_nl
                classes.append((sub, Mc[:, part]))
            continue
        is_obj = bool(obj_part[0])
        # slot j's indices: the leaf at position var_pos[j] of each instance
        vt = dag.attr[Mc[cl.var_pos]] if cl.var_pos else np.zeros((0, cl.inst.size), np.int64)
        pt = dag.attr[Mc[cl.par_pos]] if cl.par_pos else np.zeros((0, cl.inst.size), np.int64)
        rows = []
        for src in cl.data_src:
            if src[0] == "pos":
                rows.append(dag.value[Mc[src[1]]] + 0.0)
            elif src[0] == "-pos":
                rows.append(-dag.value[Mc[src[1]]] + 0.0)
            elif src[0] == "wrap":
                rows.append(ins.c[cl.inst] + 0.0)
            else:
                rows.append(np.full(cl.inst.size, src[1]))
        dt = np.stack(rows) if rows else np.zeros((0, cl.inst.size))
        merged.setdefault((is_obj, cl.key), []).append((cl.inst, vt, pt, dt))
    obj, con = [], []
    firsts = []
    for (is_obj, key), parts in merged.items():
        if len(parts) == 1 and not (np.diff(parts[0][0]) < 0).any():
            inst, vt, pt, dt = parts[0]     # one class in instance order: nothing to sort
        else:
            inst = np.concatenate([p[0] for p in parts])
            o = np.argsort(inst, kind="stable")
            vt, pt, dt = (np.concatenate([p[j] for p in parts], axis=1)[:, o]
                          for j in (1, 2, 3))
            inst = inst[o]
        g, root = build_template(key)
        rows = None if is_obj else ins.root[inst] - nf
        blk = TemplateBlock(g, root, vt, pt, dt, rows=rows, name=f"{name}[{vt.shape[0]}]")
        firsts.append((int(inst[0]), is_obj, blk))
    for _, is_obj, blk in sorted(firsts, key=lambda t: t[0]):
        (obj if is_obj else con).append(blk)
    return obj, con

