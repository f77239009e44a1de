"""The instances of an :class:`~.sxdag.SXDag`'s roots, as the per-node reader makes them.

The per-node reader builds every root into caspar's graph, rebuilds long additive
spines as n-ary sums (:func:`~.sums.flatten_sums`) and lets
:class:`~caspar_backend.problem.Problem` split wide sums into their terms
(:func:`~caspar_backend.patterns.split_terms`, :func:`~caspar_backend.patterns.
constraint_instances`).  This module computes the same *instances* on arrays, so the
bulk reader's pattern groups -- and with them every evaluation and derivative -- are
those of the per-node reader, bit for bit:

* the *spine* of a root: ADD, SUB, NEG nodes reached from it through their arguments
  (every argument of ADD/SUB, the one of NEG); its *terms* are the non-spine
  arguments met, in depth-first order, first argument first, each with the parity
  of the NEG/SUB-subtrahend edges on its way (:func:`.sxtour.dfs_order`: an Euler
  tour of the spine forest, ranked);
* what caspar's own graph changes is followed too: an output or a node shared by two
  spines is an item (its reference count), a chain of single-use additions is one
  ``sum`` whose constant goes to its end (:func:`sum_chains`), equal partial sums
  of at least :data:`~.sums.SHARED_MIN_TERMS` non-constant terms are one node, an
  item of its users (:mod:`.sxmerge`: where that could change a split, None; a
  shorter one is copied into its users there, as this split does);
* a term ``c * S``, ``S * c``, ``2 * S`` (OP_TWICE) or ``S / c`` with ``S`` a spine of
  at least :data:`~.sums.SCALE_MIN_TERMS` terms is distributed: its terms become
  ``c * t`` (``t / c``), negated where the two parities differ;
* a root whose spine (after distribution) has fewer than ``max(min_terms, 3)``
  terms is one instance, the root itself (min_terms 3 for the objective, 8 for a
  constraint); otherwise its terms are gathered as ``caspar.Graph.sum`` does:
  constant terms are summed left to right into one constant placed last (dropped
  when 0), and the rest keep their order;
* a constraint so gathered with at least :data:`~caspar_backend.patterns.
  SPLIT_MIN_TERMS` terms, and the objective with at least 2, is split into them
  when they share little (:data:`~caspar_backend.patterns.SPLIT_MAX_SHARING`; the
  operation counts come from the instances' trees, :mod:`.sxgroup`).

:class:`Instances` (arrays of length I, roots in order and each root's instances in
order): ``root`` int64, ``node`` int64 (the term's DAG node; -1 for a constant
instance), ``wrap`` int8 (:data:`PLAIN`, :data:`NEG`, :data:`MUL`, :data:`NEG_MUL`,
:data:`DIV`, :data:`NEG_DIV`, :data:`CONST`), ``c`` float64 (the factor of MUL/DIV
wraps, the value of a CONST instance), ``split`` bool (the instance is a term of a
rebuilt sum: subject to the sharing rule), ``hashes`` the
:func:`~.sxhash.term_hashes` of the trees under the roots and the spines' items.

Where the per-node reader would do something these arrays do not describe -- a spine
node or scaled spine reached by two spine edges (a shared partial sum, cumulative
sums), long partial sums caspar's graph may merge inside a rebuilt root, a rebuilt sum
whose instance would be the sum node itself (fewer than SPLIT_MIN_TERMS terms once
constants are gathered, no terms at all, a non-finite constant sum) --
:func:`split_instances` returns None and the caller reads the program per node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from caspar_backend.patterns import SPLIT_MIN_TERMS

from . import optable as T
from .sums import SCALE_MIN_TERMS, SHARED_MIN_TERMS
from .sxdag import LEAF_CONST, SXDag, native
from .sxchains import sum_chains
from .sxhash import term_hashes
from .sxmerge import merge_candidates
from .sxtour import dfs_order

PLAIN, NEG, MUL, NEG_MUL, DIV, NEG_DIV, CONST = range(7)
#: the per-node reader's minimum spine length for a rebuilt root (objective, constraint)
OBJ_MIN_TERMS, CON_MIN_TERMS = 3, 8
#: the reach of the spine trees is widened at most this many levels (else None)
_MAX_ROUNDS = 64
#: constant terms of roots summed one position at a time (all roots at once) up to this
#: many; a root with more is summed on its own
MAX_CONST_TERMS = 64

_ADD, _SUB, _NEG, _TWICE, _MUL, _DIV = (T.CODES[k] for k in (
    "OP_ADD", "OP_SUB", "OP_NEG", "OP_TWICE", "OP_MUL", "OP_DIV"))


@dataclass(eq=False)
class Instances:
    """The roots' instances in the per-node reader's order (final; module doc)."""

    root: np.ndarray
    node: np.ndarray
    wrap: np.ndarray
    c: np.ndarray
    split: np.ndarray
    #: :func:`~.sxhash.term_hashes` of the trees under the roots and the spines' items
    hashes: tuple = None
    #: int64: heads of the fused chains whose constants the split gathered (in rebuilt
    #: roots); a chain elsewhere with several constants is in a template
    gathered: np.ndarray = None


def _scaled(dag: SXDag, spine: np.ndarray):
    """``(is_scaled, S, c, divide)``: nodes ``c * S``, ``S * c``, ``2 * S``, ``S / c``
    with ``S`` a spine node and ``c`` a constant (arrays over the K nodes; only MUL,
    TWICE and DIV nodes are looked at)."""
    op, a0, a1 = dag.op, dag.arg0, dag.arg1
    if native() is not None:                     # the same rules in one C++ pass
        return native().scaled(op, a0, a1, dag.leaf, LEAF_CONST, dag.value, spine,
                               np.array([_MUL, _TWICE, _DIV], np.int64))
    K = op.size
    k = np.flatnonzero((op == _MUL) | (op == _TWICE) | (op == _DIV))
    o, b0, b1 = op[k], a0[k], a1[k]
    c0 = (b0 >= 0) & (dag.leaf[np.maximum(b0, 0)] == LEAF_CONST)
    c1 = (b1 >= 0) & (dag.leaf[np.maximum(b1, 0)] == LEAF_CONST)
    s0 = (b0 >= 0) & spine[np.maximum(b0, 0)]
    s1 = (b1 >= 0) & spine[np.maximum(b1, 0)]
    mul_a = (o == _MUL) & c0 & s1          # casadi's first argument constant
    mul_b = (o == _MUL) & c1 & s0 & ~mul_a
    twice = (o == _TWICE) & s0
    div = (o == _DIV) & c1 & s0
    S = np.full(K, -1, np.int64)
    c = np.zeros(K)
    for sel, s_arg, c_arg in ((mul_a, b1, b0), (mul_b, b0, b1), (div, b0, b1)):
        S[k[sel]] = s_arg[sel]
        c[k[sel]] = dag.value[c_arg[sel]]
    S[k[twice]], c[k[twice]] = b0[twice], 2.0
    is_scaled = np.zeros(K, bool)
    is_scaled[k[mul_a | mul_b | twice | div]] = True
    divide = np.zeros(K, bool)
    divide[k[div]] = True
    return is_scaled, S, c, divide


def _sequential_sums(seg: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Running sums of ``v`` within runs of equal ``seg`` (sorted), each added left to
    right from 0.0 as ``Graph.sum`` adds constants: float64 (n,), the last of a run its
    sum.  One NumPy step per position for runs up to MAX_CONST_TERMS (all runs at
    once), ``np.add.accumulate`` (sequential) for a longer run."""
    n = v.size
    out = np.zeros(n)
    if not n:
        return out
    start = np.r_[True, seg[1:] != seg[:-1]]
    begin = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    k = np.arange(n) - begin
    long_runs = np.unique(begin[k >= MAX_CONST_TERMS])
    short = ~np.isin(begin, long_runs)
    for j in range(min(int(k.max()) + 1, MAX_CONST_TERMS)):
        s = short & (k == j)
        prev = np.where(j > 0, out[np.maximum(np.flatnonzero(s) - 1, 0)], 0.0)
        out[s] = prev + v[s]
    for b in long_runs.tolist():
        e = b + int(np.argmax(begin[b:] != b)) if np.any(begin[b:] != b) else n
        out[b:e] = np.add.accumulate(v[b:e])
    return out


def scaled_nodes(dag: SXDag) -> np.ndarray:
    """bool (K,): the scaled spines ``c * S``, ``S * c``, ``2 * S``, ``S / c``."""
    spine = ((dag.op == _ADD) | (dag.op == _SUB) | (dag.op == _NEG)) & (dag.leaf < 0)
    return _scaled(dag, spine)[0]


def _spine_refs(dag: SXDag, spine, scaled, S_of, sc):
    """``(dref, from_spine, is_root, tree, toured, tops)``: how many spine edges read
    each node (``from_spine``; ``dref`` also the scaled nodes' S), the roots, the spine
    trees' inner nodes, the spine nodes toured, and the tops of the tour (one C++ pass
    where it can be had)."""
    op, a0, a1, roots = dag.op, dag.arg0, dag.arg1, dag.out
    if native() is not None:
        return native().spine_refs(op, a0, a1, spine, scaled, S_of, roots, _ADD, _SUB)
    K = op.size
    # spine parents of every node in the program: from spine nodes and scaled nodes
    sp = np.flatnonzero(spine)
    two = (op[sp] == _ADD) | (op[sp] == _SUB)
    dref = np.bincount(a0[sp], minlength=K) + np.bincount(a1[sp][two], minlength=K)
    from_spine = dref.copy()
    dref += np.bincount(S_of[sc], minlength=K)
    # a spine node with one spine parent is a subtree of it; with more it is an item of
    # each (and the top of its own tree)
    is_root = np.zeros(K, bool)
    is_root[roots] = True
    # (an output counts as a reference too: a root inside another spine is an item)
    tree = spine & (dref == 1) & (from_spine == 1) & ~is_root
    # a spine node no spine, scaled spine or output refers to is out of every root's
    # reach (``va_i - va_j`` under a cos): left out of the tour, with its items
    toured = spine & ~((dref == 0) & ~is_root)
    return dref, from_spine, is_root, tree, toured, np.flatnonzero(toured & ~tree)


def _walked(dag: SXDag, spine, scaled, S_of, sc, top_of, top_id, t_node, is_root, tree,
            from_spine, dref):
    """bool (K,): the nodes caspar's ``flatten_sums`` walks from the roots -- the spine
    nodes of the trees reached (a root's tree; from a reached tree's items, the trees
    of shared spine items and of scaled items' S; the trees of scaled roots' S) and the
    scaled nodes that are roots or items of them -- or None where the split gives way
    (module docstring).  One C++ pass where it can be had."""
    roots = dag.out
    if native() is not None:
        return native().spine_reach(spine, scaled, S_of, top_of, roots, top_id, t_node,
                                    is_root, tree, from_spine, dref, _MAX_ROUNDS)
    K = spine.size
    # reachable from the roots through spine edges (caspar's flatten_sums walks these):
    # the roots' trees, and the trees of the S of every scaled item or shared item met
    reach = np.zeros(K, bool)                       # by top
    reach[top_of[roots[spine[roots]]]] = True
    item_reach = np.zeros(top_id.size, bool)
    for _ in range(_MAX_ROUNDS):
        item_reach = reach[top_id]
        into = t_node[item_reach]
        new_tops = np.concatenate([
            top_of[into[spine[into]]],                         # shared spine items
            top_of[S_of[into[scaled[into]]]],                  # scaled items' S
            top_of[S_of[roots[scaled[roots]]]]])
        new_tops = new_tops[new_tops >= 0]
        if reach[new_tops].all():
            break
        reach[new_tops] = True
    else:
        return None
    walked = (spine & (top_of >= 0) & reach[np.maximum(top_of, 0)])
    item_at = np.zeros(K, bool)
    item_at[t_node[item_reach]] = True
    walked |= scaled & (item_at | is_root)
    occ = np.bincount(t_node[item_reach], minlength=K) + np.bincount(roots, minlength=K)
    # a partial sum shared by several spines of the program (cumulative sums): caspar
    # counts its references per node of its own graph, which this split does not model
    if np.any(spine & ~tree & (from_spine > 0) & walked):
        return None
    if np.any(occ[scaled] > 1) or np.any(dref[S_of[sc]] > 1):
        return None           # a scaled spine used twice
    return walked


def _expand(lvl, dist_item, S_of, count, top_id, items, div_of, c_of):
    """The rows of :func:`split_instances`' second level, ``(node, par, wrap, cc, k1,
    k2, host, root, outer)``: the first-level items ``lvl`` = (root, node, par, k1,
    host) in order, a distributed scaled item (``dist_item``) replaced by the items
    of its S (``items`` = the tour's (node, par, dist, host), grouped by ``top_id``)
    wrapped by its factor.  One C++ loop where it can be had, else NumPy passes."""
    lvl_root, lvl_node, lvl_par, lvl_k1, lvl_host = lvl
    t_node, t_par, t_dist, t_host = items
    s_sorted = np.argsort(top_id, kind="stable")      # S -> its terms, grouped
    starts = np.searchsorted(top_id[s_sorted], S_of[lvl_node[dist_item]])
    n_in = count[S_of[lvl_node[dist_item]]]
    nat = native("kernels")
    if nat is not None:
        return nat.expand_items(lvl, dist_item, starts, n_in, s_sorted, items, div_of, c_of,
                                MUL, DIV)
    rep = np.ones(lvl_node.size, np.int64)
    rep[dist_item] = n_in
    item_of = np.repeat(np.arange(lvl_node.size), rep)
    sub = np.arange(item_of.size) - np.repeat(np.cumsum(rep) - rep, rep)
    node = lvl_node[item_of].copy()
    par = lvl_par[item_of].copy()
    wrap = np.zeros(item_of.size, np.int8)
    cc = np.zeros(item_of.size)
    # each item's place in caspar's out list: (tour key in the root's spine, tour key
    # in a distributed S's spine), and the spine node holding it
    k1, k2, host = lvl_k1[item_of], np.zeros(item_of.size, np.int64), lvl_host[item_of]
    d_rows = np.flatnonzero(dist_item[item_of])
    if d_rows.size:
        it = item_of[d_rows]
        which = np.searchsorted(np.flatnonzero(dist_item), it)
        src = s_sorted[starts[which] + sub[d_rows]]
        scn = lvl_node[it]
        node[d_rows] = t_node[src]
        par[d_rows] = lvl_par[it] ^ t_par[src]
        k2[d_rows] = -t_dist[src]
        host[d_rows] = t_host[src]
        divide = div_of[scn]
        wrap[d_rows] = np.where(divide, DIV, MUL)
        cc[d_rows] = c_of[scn]
    root = lvl_root[item_of]
    outer = np.zeros(item_of.size, bool)            # a distributed item's outer parity
    outer[d_rows] = lvl_par[item_of[d_rows]]
    return node, par, wrap, cc, k1, k2, host, root, outer


def split_instances(dag: SXDag, nf: int) -> Instances | None:
    """The per-node reader's instances of the roots ``dag.out`` (``nf`` objective
    roots first, then the constraints), or None (module docstring)."""
    op = dag.op
    K = op.size
    roots = dag.out
    R = roots.size
    spine = (op == _ADD) | (op == _SUB) | (op == _NEG)
    spine &= dag.leaf < 0
    scaled, S_of, c_of, div_of = _scaled(dag, spine)
    sc = np.flatnonzero(scaled)
    dref, from_spine, is_root, tree, toured, all_tops = _spine_refs(dag, spine, scaled,
                                                                     S_of, sc)
    top_id, t_node, t_par, top_of, span, t_dist, t_host = dfs_order(dag, toured, tree,
                                                                      all_tops)
    walked = _walked(dag, spine, scaled, S_of, sc, top_of, top_id, t_node, is_root, tree,
                     from_spine, dref)
    if walked is None:
        return None
    # value hashes of every tree below the roots and the items
    hashes = term_hashes(dag, np.concatenate([roots, t_node]))
    # caspar's graph merges equal subtrees (hash-consing): a partial sum that equals
    # another one is one node referenced twice, an item where this split flattens it
    merge, n_items = merge_candidates(dag, hashes, walked, spine, scaled, S_of, c_of,
                                      top_id, t_node, t_par, t_dist, top_of, span)
    m_sp = np.flatnonzero(merge & spine & (n_items >= SHARED_MIN_TERMS))
    item_top = top_id[np.isin(t_node, np.flatnonzero(merge & scaled))]
    merge_top = np.concatenate([top_of[m_sp], item_top])
    tops = np.concatenate([roots[spine[roots]], S_of[sc]])
    tops = tops[(tops >= 0)]
    used = np.zeros(K, bool)
    used[tops] = True
    # a top used twice (a mask's count: NumPy's hashing unique took 0.66 s on 10^6 tops)
    if np.count_nonzero(used) < tops.size:
        return None
    sel = (top_id >= 0) & used[np.maximum(top_id, 0)]
    if not sel.all():                                  # (a single sum's: all of them)
        top_id, t_node, t_par = top_id[sel], t_node[sel], t_par[sel]
        t_dist, t_host = t_dist[sel], t_host[sel]
    root_sp = roots[spine[roots]]
    count = np.bincount(top_id, minlength=K).astype(np.int64, copy=False)  # items per top
    # a scaled term is distributed when its S has enough terms
    dist_ok = np.zeros(K, bool)
    dist_ok[sc] = count[S_of[sc]] >= SCALE_MIN_TERMS
    # first level: each root's items (its spine's terms, or the root itself)
    r_of_top = np.full(K, -1, np.int32 if R < 2 ** 31 else np.int64)
    r_of_top[root_sp] = np.flatnonzero(spine[roots])
    r_item = r_of_top[top_id]
    is_top_item = r_item >= 0
    lvl_root = np.concatenate([r_item[is_top_item], np.flatnonzero(~spine[roots])])
    lvl_node = np.concatenate([t_node[is_top_item], roots[~spine[roots]]])
    lvl_par = np.concatenate([t_par[is_top_item], np.zeros(int((~spine[roots]).sum()), bool)])
    n_leafroot = int((~spine[roots]).sum())
    lvl_seq = np.concatenate([np.arange(int(is_top_item.sum())), np.zeros(n_leafroot, np.int64)])
    lvl_k1 = np.concatenate([-t_dist[is_top_item], np.zeros(n_leafroot, np.int64)])
    lvl_host = np.concatenate([t_host[is_top_item], np.full(n_leafroot, -1, np.int64)])
    o = np.lexsort((lvl_seq, lvl_root))
    lvl_root, lvl_node, lvl_par = lvl_root[o], lvl_node[o], lvl_par[o]
    lvl_k1, lvl_host = lvl_k1[o], lvl_host[o]
    # second level: distributed scaled items expand into S's terms
    dist_item = dist_ok[lvl_node]
    node, par, wrap, cc, k1, k2, host, root, outer = _expand(
        (lvl_root, lvl_node, lvl_par, lvl_k1, lvl_host), dist_item, S_of, count, top_id,
        (t_node, t_par, t_dist, t_host), div_of, c_of)
    # constant items.  caspar's program fuses a chain of single-use additions into one
    # sum (program._fuse_sums) whose constants Graph.sum adds up, in chain order, into
    # one placed at the chain's end (dropped when 0); flatten_sums then meets that one
    # constant there, folds a distributed factor into it and negates it by its parity
    is_c = dag.leaf[node] == LEAF_CONST
    ci = np.flatnonzero(is_c)
    head, in_sum = sum_chains(dag)
    hc = np.maximum(host[ci], 0)
    chained = (host[ci] >= 0) & in_sum[hc]
    H = np.where(chained, head[hc], -1)
    Hc = np.maximum(H, 0)
    p_H = outer[ci] ^ (span[Hc, 2] > 0)              # the chain's constant, from the root
    rel = par[ci] ^ p_H                              # a constant's sign inside its chain
    raw = dag.value[node[ci]]
    e_val = raw.copy()                               # standalone: folded as an item
    sw = wrap[ci]
    e_val = np.where(sw == MUL, cc[ci] * e_val, e_val)
    with np.errstate(divide="ignore", invalid="ignore"):
        e_val = np.where(sw == DIV, e_val / np.where(cc[ci] == 0, 1.0, cc[ci]), e_val)
    e_val = np.where(par[ci], -e_val, e_val)
    lvl2 = k2[ci] != 0
    e_k1 = np.where(chained & ~lvl2, -span[Hc, 1], k1[ci])
    e_k2 = np.where(chained & lvl2, -span[Hc, 1], k2[ci])
    e_on = np.ones(ci.size, bool)                    # the entry counts (an item of out)
    ch = np.flatnonzero(chained)
    if ch.size:
        o = ch[np.lexsort((k2[ci[ch]], k1[ci[ch]], H[ch]))]
        c_H = _sequential_sums(H[o], np.where(rel[o], -raw[o], raw[o]))
        first = np.r_[True, H[o][1:] != H[o][:-1]]
        last = np.r_[first[1:], True]
        lead = o[first]                              # one entry per chain: its first
        e_on[ch] = False
        cH = c_H[last]                               # a run's sum is at its end
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            f = np.where(sw[lead] == MUL, cc[ci[lead]] * cH,
                         np.where(sw[lead] == DIV,
                                  cH / np.where(cc[ci[lead]] == 0, 1.0, cc[ci[lead]]), cH))
        e_val[lead] = np.where(p_H[lead], -f, f)
        e_on[lead] = cH != 0.0                       # a chain's constant 0 is dropped
    n_out = np.bincount(root[~is_c], minlength=R) + np.bincount(root[ci[e_on]], minlength=R)
    min_terms = np.full(R, CON_MIN_TERMS)
    min_terms[:nf] = OBJ_MIN_TERMS
    rebuilt = n_out >= np.maximum(min_terms, 3)
    if merge_top.size:
        # where a merge could change caspar's split: a root spine it would rebuild, or
        # the spine of a scaled item (conservatively)
        r_of = np.full(K, -1, np.int64)
        r_of[roots] = np.arange(R)
        mr = r_of[merge_top]
        if np.any(mr < 0) or np.any(rebuilt[mr[mr >= 0]]):
            return None
    # chains whose constants this gathers (inside rebuilt roots); others are in templates
    gathered = np.zeros(K, bool)                       # sorted and distinct, as a mask
    gathered[H[chained & rebuilt[root[ci]]]] = True
    gathered = np.flatnonzero(gathered)
    # the rebuilt roots' constant: their entries summed in caspar's order
    csum = np.zeros(R)
    take = e_on & rebuilt[root[ci]]
    if take.any():
        o = np.flatnonzero(take)
        o = o[np.lexsort((e_k2[o], e_k1[o], root[ci[o]]))]
        csum_r = _sequential_sums(root[ci[o]], e_val[o])
        last = np.r_[root[ci[o]][1:] != root[ci[o]][:-1], True]
        csum[root[ci[o]][last]] = csum_r[last]
    if not np.all(np.isfinite(csum)):
        return None
    # a root kept whole is one PLAIN instance: the root node itself
    whole = np.flatnonzero(~rebuilt)
    keep = rebuilt[root]
    if not keep.all():
        root, node, par, wrap, cc = root[keep], node[keep], par[keep], wrap[keep], cc[keep]
        is_c = is_c[keep]
    wrap = np.where(par, wrap + 1, wrap).astype(np.int8)   # PLAIN->NEG, MUL->NEG_MUL, ...
    nonc = ~is_c
    width = np.bincount(root[nonc], minlength=R) + (csum != 0.0)
    reb = np.flatnonzero(rebuilt)
    if np.any(width[reb] == 0):
        return None
    min_split = np.full(R, SPLIT_MIN_TERMS)
    min_split[:nf] = 2
    if np.any((width[reb] < min_split[reb]) & (width[reb] > 1)):
        return None               # the instance would be the sum node itself
    # assemble: whole roots, then rebuilt roots' terms and their constant, in root order
    cr_ = np.flatnonzero(rebuilt & (csum != 0.0))
    parts_root = [whole, root[nonc], cr_]
    parts_node = [roots[whole], node[nonc], np.full(cr_.size, -1, np.int64)]
    parts_wrap = [np.zeros(whole.size, np.int8), wrap[nonc], np.full(cr_.size, CONST, np.int8)]
    parts_c = [np.zeros(whole.size), cc[nonc], csum[cr_]]
    parts_seq = [np.zeros(whole.size, np.int64), np.arange(int(nonc.sum())),
                 np.full(cr_.size, K + root.size, np.int64)]
    r_all = np.concatenate(parts_root)
    # in (root, seq) order; where the roots already ascend the parts are in it (a
    # root's entries then come in seq order: its terms, then its constant)
    o = slice(None) if np.all(r_all[1:] >= r_all[:-1]) else \
        np.lexsort((np.concatenate(parts_seq), r_all))
    node_all = np.concatenate(parts_node)[o]
    wrap_all = np.concatenate(parts_wrap)[o]
    # a whole root that is a constant leaf is a CONST instance of its value
    wl = (wrap_all == PLAIN) & (node_all >= 0)
    wl &= dag.leaf[np.maximum(node_all, 0)] == LEAF_CONST
    c_all = np.concatenate(parts_c)[o]
    c_all[wl] = dag.value[node_all[wl]]
    wrap_all[wl] = CONST
    node_all[wl] = -1
    r_all = r_all[o]
    split = (width[r_all] > 1) & rebuilt[r_all]
    return Instances(r_all.astype(np.int64), node_all.astype(np.int64), wrap_all,
                     c_all.astype(np.float64), split, hashes, gathered)
